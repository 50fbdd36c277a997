// call(): inlines a Graph's main into the current trace after checking the inputs against its signature.
#include "evoxc/trace/call.h"

#include <string>
#include <vector>

namespace evoxc {

Tree<SymbolicTensor> call(const Graph& graph, const Tree<SymbolicTensor>& inputs) {
  std::string why;
  if (auto path = graph.input_tree().first_mismatch(inputs, &why))
    throw TraceError("call: the inputs do not match the graph's input tree " + graph.input_tree().structure_string() +
                     " at " + *path + ": " + why);
  std::vector<SymbolicTensor> leaves = inputs.flatten();
  std::vector<TensorSpec> specs = graph.input_specs();
  std::vector<std::string> paths = graph.input_paths();
  if (leaves.empty() && TraceContext::current_or_null() == nullptr)
    throw TraceError("call: a graph can only be called inside a trace");
  // A leaf's context() and value() check it belongs to the innermost live trace (TraceError otherwise).
  TraceContext& ctx = leaves.empty() ? TraceContext::current() : *leaves.front().context();
  std::vector<Value*> vals;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const TensorType& t = leaves[i].type();
    if (t.dtype != specs[i].dtype || t.shape != specs[i].shape)
      throw TraceError("call: input " + paths[i] + " is " + t.to_string() + " but the graph takes " +
                       specs[i].to_string());
    vals.push_back(leaves[i].value());
  }
  ValueMap map;
  std::vector<Value*> outs = inline_block(ctx.builder(), graph.main().entry(), vals, map);
  std::vector<SymbolicTensor> results;
  results.reserve(outs.size());
  for (Value* v : outs) results.push_back(ctx.wrap(v));
  return graph.output_tree().unflatten(results);
}

}  // namespace evoxc
