// The type-erased build and evaluate over trace_dynamic, for bindings.
#include "evoxc/pipeline/pipeline.h"

namespace evoxc {
namespace {

// The trace argument of an evaluate argument: Tensors become the specs of their shape and dtype.
TraceArg spec_tree(const EvalArg& a) {
  if (a.is_none()) return TraceArg();
  if (a.is_leaf()) {
    return std::visit(
        [](const auto& v) -> TraceArg {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, Tensor>) {
            return arg_leaf(pipeline_detail::spec_of(v));
          } else {
            return arg_leaf(v);
          }
        },
        a.leaf());
  }
  std::vector<TraceArg> kids;
  kids.reserve(a.size());
  for (const auto& c : a.children()) kids.push_back(spec_tree(c));
  return TraceArg::from_parts(a.kind(), std::move(kids), a.keys());
}

// The run input of an evaluate argument: its Tensors, with statics as None (the graph's input tree).
Tree<Tensor> tensor_tree(const EvalArg& a) {
  if (a.is_none()) return Tree<Tensor>();
  if (a.is_leaf()) {
    const Tensor* t = std::get_if<Tensor>(&a.leaf());
    return t ? Tree<Tensor>(*t) : Tree<Tensor>();
  }
  std::vector<Tree<Tensor>> kids;
  kids.reserve(a.size());
  for (const auto& c : a.children()) kids.push_back(tensor_tree(c));
  return Tree<Tensor>::from_parts(a.kind(), std::move(kids), a.keys());
}

}  // namespace

Executable build_dynamic(const TraceFunction& fn, const std::vector<TraceArg>& args, const BuildOptions& options) {
  return build_graph(trace_dynamic(fn, args), options);
}

Tree<Tensor> evaluate_dynamic(const TraceFunction& fn, const std::vector<EvalArg>& args, const BuildOptions& options,
                              const RunOptions& run_options) {
  std::vector<TraceArg> specs;
  std::vector<Tree<Tensor>> inputs;
  specs.reserve(args.size());
  inputs.reserve(args.size());
  for (const auto& a : args) {
    specs.push_back(spec_tree(a));
    inputs.push_back(tensor_tree(a));
  }
  return build_dynamic(fn, specs, options).run(Tree<Tensor>::tuple(std::move(inputs)), run_options);
}

}  // namespace evoxc
