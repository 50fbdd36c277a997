// xla::Program: a StableHLO module from outside evoxc (a JAX export) as a graph of one stablehlo_call, which saves,
// loads and compiles like any graph.
#include <string>
#include <utility>
#include <vector>

#include "evoxc/backends/xla.h"
#include "evoxc/ops/extension.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/trace/extension.h"
#include "evoxc/trace/trace.h"

namespace evoxc::xla {

Program Program::from_text(std::string module_text, bool single_output) {
  StablehloSignature sig = parse_stablehlo_signature(module_text, "xla::Program");
  if (single_output && sig.outputs.size() != 1)
    throw ValidationError("xla::Program: single_output asks for one result, but the module's @main has " +
                          std::to_string(sig.outputs.size()));
  std::vector<TraceArg> args;
  for (const TensorType& t : sig.inputs) args.push_back(arg_leaf(TensorSpec(t.shape, t.dtype)));
  auto fn = [&](const std::vector<TracedArg>& traced) {
    std::vector<SymbolicTensor> xs;
    for (const TracedArg& a : traced) xs.push_back(std::get<SymbolicTensor>(a.leaf()));
    std::vector<SymbolicTensor> r = stablehlo_call(module_text, xs);
    if (single_output) return Tree<SymbolicTensor>(r.front());
    std::vector<Tree<SymbolicTensor>> leaves(r.begin(), r.end());
    return Tree<SymbolicTensor>::tuple(std::move(leaves));
  };
  return Program(trace_dynamic(fn, args));
}

Program Program::from_graph(Graph graph) {
  const Block& entry = graph.main().entry();
  auto fail = [](const std::string& why) -> Program {
    throw BackendError("xla::Program: the graph is not one stablehlo_call of its inputs (" + why +
                       "); make it with xla::Program::from_text or evoxc.xla.lower_jax");
  };
  if (entry.num_operations() != 2) return fail(std::to_string(entry.num_operations()) + " ops in main");
  const Operation& call = *entry.operations()[0];
  const Operation& ret = *entry.terminator();
  static const OpInfo& stablehlo_call_op = get_op("stablehlo_call");
  if (&call.info() != &stablehlo_call_op) return fail("its op is evoxc." + call.name());
  if (call.operands().size() != entry.num_arguments()) return fail("the call does not take every input");
  for (size_t i = 0; i < entry.num_arguments(); ++i)
    if (call.operand(i) != entry.argument(i))
      return fail("operand " + std::to_string(i) + " is not input " + std::to_string(i));
  if (ret.operands().size() != call.results().size()) return fail("the outputs are not the call's results");
  for (size_t i = 0; i < ret.operands().size(); ++i)
    if (ret.operand(i) != call.result(i)) return fail("output " + std::to_string(i) + " is not the call's result");
  return Program(std::move(graph));
}

const std::string& Program::text() const {
  return attr_string(graph_.main().entry().operations()[0]->attributes(), "module", "stablehlo_call");
}

Program Program::load(const std::string& path) { return from_graph(Graph::load(path)); }

Executable Program::compile(Device device, const CompileOptions& options) const {
  return evoxc::load(evoxc::compile(lower(graph_, "xla"), options), device);
}

}  // namespace evoxc::xla
