// The trace entries: binding arguments (compile-time and type-erased), snapshotting statics, finishing the Graph.
#include "evoxc/trace/trace.h"

#include "evoxc/core/error.h"

namespace evoxc {

namespace trace_detail {

SymbolicTensor ArgBinder::bind(const Tensor& t, TreeDef&, size_t k) {
  throw TraceError("trace: argument " + arg_path(k) + " is a Tensor " + t.repr() +
                   "; trace takes TensorSpecs (and static values). Use TensorSpec(shape, dtype), "
                   "or evoxc::evaluate(fn, tensors...) to trace and run in one call.");
}

Tree<SymbolicTensor> to_tree(const Tensor& t) {
  throw TraceError("the traced function returned a Tensor " + t.repr() +
                   "; return SymbolicTensors (embed host data with evoxc::constant)");
}

Graph Tracer::finish(const Tree<SymbolicTensor>& outputs, TreeDef inputs) {
  std::vector<Value*> values;
  std::vector<TensorType>& types = ctx_.main().result_types();
  auto add = [&](const SymbolicTensor& l) {
    if (!l.defined()) throw TraceError("the traced function returned an undefined SymbolicTensor");
    if (l.generation() != ctx_.generation())
      throw TraceError(
          "the traced function returned a SymbolicTensor of another trace (one that has ended, or an "
          "enclosing trace); return values computed in this trace");
    Value* v = l.value();  // checked: this trace is the innermost one
    values.push_back(v);
    types.push_back(v->type());
  };
  if (outputs.is_leaf()) {
    add(outputs.leaf());
  } else {
    std::vector<SymbolicTensor> leaves = outputs.flatten();
    values.reserve(leaves.size());
    types.reserve(leaves.size());
    for (const SymbolicTensor& l : leaves) add(l);
  }
  ctx_.set_location({});
  ctx_.builder().create_return(std::move(values));
  return Graph(ctx_.module_ptr(), std::move(inputs), tree_structure(outputs), std::move(statics_));
}

}  // namespace trace_detail

namespace {

// Binds one argument tree: inputs for specs, snapshots for statics; `tree` receives the
// graph's input structure (statics become None).
TracedArg bind(trace_detail::Tracer& tracer, const TraceArg& arg, std::string& path, TreeDef& tree) {
  switch (arg.kind()) {
    case TreeKind::None: tree = TreeDef(); return TracedArg();
    case TreeKind::Leaf: {
      const ArgLeaf& leaf = arg.leaf();
      if (const TensorSpec* s = std::get_if<TensorSpec>(&leaf)) {
        tree = TreeDef(LeafMark{});
        return TracedArg(TracedLeaf(tracer.input(*s)));
      }
      tree = TreeDef();
      return std::visit(
          [&](const auto& v) -> TracedArg {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, TensorSpec>) {
              throw InternalError("trace_dynamic: unreachable");
            } else {
              tracer.snapshot(path, v);
              return TracedArg(TracedLeaf(v));
            }
          },
          leaf);
    }
    default: break;
  }
  std::vector<TracedArg> kids;
  std::vector<TreeDef> trees(arg.size());
  kids.reserve(arg.size());
  size_t base = path.size();
  for (size_t i = 0; i < arg.size(); ++i) {
    path += arg.kind() == TreeKind::Dict ? "['" + arg.keys()[i] + "']" : "[" + std::to_string(i) + "]";
    kids.push_back(bind(tracer, arg.children()[i], path, trees[i]));
    path.resize(base);
  }
  tree = TreeDef::from_parts(arg.kind(), std::move(trees), arg.keys());
  return TracedArg::from_parts(arg.kind(), std::move(kids), arg.keys());
}

}  // namespace

Graph trace_dynamic(const TraceFunction& fn, const std::vector<TraceArg>& args) {
  if (!fn) throw TraceError("trace_dynamic: the function is empty");
  trace_detail::Tracer tracer;
  std::vector<TracedArg> traced;
  std::vector<TreeDef> trees(args.size());
  traced.reserve(args.size());
  std::string path;
  for (size_t i = 0; i < args.size(); ++i) {
    path = trace_detail::arg_path(i);
    traced.push_back(bind(tracer, args[i], path, trees[i]));
  }
  Tree<SymbolicTensor> out = fn(traced);
  return tracer.finish(out, TreeDef::tuple(std::move(trees)));
}

}  // namespace evoxc
