// vectorize/vmap: the batching driver (one pass over the graph, batch axis kept at 0) and its public entry.
#include "evoxc/core/flat_table.h"
#include "evoxc/core/small_vector.h"
#include "evoxc/passes/passes.h"
#include "evoxc/transforms/transforms.h"
#include "transforms/driver.h"
#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

class Vectorizer final : public BatchContext {
 public:
  Vectorizer(TraceContext& ctx, DimExpr size) : ctx_(ctx), size_(std::move(size)) {}

  const DimExpr& size() const override { return size_; }

  void bind(const Value* old, BatchArg a) { map_[old] = std::move(a); }

  BatchArg lookup(const Value* v) const override {
    const BatchArg* a = map_.find(v);
    if (a == nullptr) throw InternalError("vmap: a value is used before it is defined");
    return *a;
  }

  std::vector<BatchArg> batch_block(const Block& block, std::span<const BatchArg> args) override {
    if (args.size() != block.num_arguments()) throw InternalError("vmap: block argument count mismatch");
    map_.reserve(map_.size() + block.num_arguments() + block.num_operations());
    for (size_t i = 0; i < args.size(); ++i) bind(block.argument(i), args[i]);
    for (const auto& op : block.operations())
      if (!op->is_terminator()) process(*op);
    std::vector<BatchArg> out;
    for (const Value* v : block.terminator()->operands()) out.push_back(lookup(v));
    return out;
  }

  std::vector<bool> batched_returns(const Block& block, const std::vector<bool>& args_batched) override {
    PtrSet batched;
    for (size_t i = 0; i < args_batched.size(); ++i)
      if (args_batched[i]) batched.insert(block.argument(i));
    auto is_b = [&](const Value* v) {
      if (batched.contains(v)) return true;
      const BatchArg* a = map_.find(v);  // a capture from an enclosing scope
      return a != nullptr && a->batched;
    };
    for (const auto& op : block.operations()) {
      if (op->is_terminator()) continue;
      bool any = false;
      for (const Value* v : op->operands()) any = any || is_b(v);
      if (!op->regions().empty())
        for (const Value* v : captured_values(*op)) any = any || is_b(v);
      if (any)
        for (const auto& r : op->results()) batched.insert(r.get());
    }
    std::vector<bool> out;
    for (const Value* v : block.terminator()->operands()) out.push_back(is_b(v));
    return out;
  }

  void process(const Operation& op) {
    SmallVector<BatchArg, 4> args;
    bool any = false;
    for (const Value* v : op.operands()) {
      args.push_back(lookup(v));
      any = any || args.back().batched;
    }
    if (!op.regions().empty())
      for (const Value* v : captured_values(op)) any = any || lookup(v).batched;
    LocationScope scope(ctx_, op.location());
    if (!any) {
      // Nothing here depends on the batch: the op is emitted once, as it was.
      SmallVector<SymbolicTensor, 4> vals;
      for (const auto& a : args) vals.push_back(a.v);
      std::vector<SymbolicTensor> outs = clone_unbatched(op, vals);
      for (size_t i = 0; i < outs.size(); ++i) bind(op.result(i), {outs[i], false});
      return;
    }
    const BatchRule& rule = batch_rules().get(op);
    std::vector<BatchArg> outs = rule(*this, op, args);
    if (outs.size() != op.num_results())
      throw InternalError("vmap rule of evoxc." + op.name() + " returned " + std::to_string(outs.size()) +
                          " results, expected " + std::to_string(op.num_results()));
    for (size_t i = 0; i < outs.size(); ++i) {
      const TensorType& want = op.result(i)->type();
      const TensorType& have = outs[i].v.type();
      bool ok = have.dtype == want.dtype && have.rank() == want.rank() + (outs[i].batched ? 1 : 0);
      if (!ok)
        throw InternalError("vmap rule of evoxc." + op.name() + " at " + op.location().to_string() + ": result " +
                            std::to_string(i) + " is " + have.to_string() + " for " + want.to_string());
      // A result may stay unbatched (a loop counter of a vectorized while_loop): the dry run
      // (batched_returns) calls every result of such an op batched, a superset, and region
      // builders materialize to what it predicted.
      bind(op.result(i), outs[i]);
    }
  }

  // Clones an op none of whose inputs is batched (regions included, captures remapped).
  std::vector<SymbolicTensor> clone_unbatched(const Operation& op, std::span<const SymbolicTensor> vals) {
    return clone_with_captures(op, vals, [this](const Value* v) { return lookup(v).v; });
  }

 private:
  TraceContext& ctx_;
  DimExpr size_;
  PtrMap<const Value*, BatchArg> map_;  // flat: every value of the program is bound once
};

// The symbols the graph's inputs use, so a fresh batch symbol does not collide.
DimExpr fresh_batch_symbol(const Graph& g) {
  std::vector<std::string> used;
  for (const TensorSpec& s : g.input_specs())
    for (const DimExpr& d : s.shape) d.collect_symbols(used);
  std::string sym = "B";
  for (int k = 1; std::find(used.begin(), used.end(), sym) != used.end(); ++k) sym = "B" + std::to_string(k);
  return DimExpr::symbol(sym);
}

}  // namespace

std::vector<std::optional<int64_t>> broadcast_axes(const AxisTree& axes, const TreeDef& tree, const char* what) {
  std::vector<std::optional<int64_t>> out;
  std::function<void(const AxisTree&, const TreeDef&, const std::string&)> walk =
      [&](const AxisTree& a, const TreeDef& t, const std::string& path) {
        if (a.is_leaf() || a.is_none()) {
          std::optional<int64_t> ax = a.is_leaf() ? std::optional<int64_t>(a.leaf()) : std::nullopt;
          for (size_t i = 0; i < t.num_leaves(); ++i) out.push_back(ax);
          return;
        }
        if (t.is_leaf() || t.kind() != a.kind() || t.size() != a.size() || t.keys() != a.keys())
          throw TransformError(std::string(what) + ": the axes tree " + a.structure_string() + " at " +
                               (path.empty() ? "the root" : path) + " does not match the structure " +
                               t.structure_string());
        for (size_t i = 0; i < a.size(); ++i)
          walk(a.children()[i], t.children()[i],
               path + (t.kind() == TreeKind::Dict ? "['" + t.keys()[i] + "']" : "[" + std::to_string(i) + "]"));
      };
  walk(axes, tree, "");
  return out;
}

Graph vectorize_impl(const Graph& graph, const AxisTree& in_axes, const AxisTree& out_axes,
                     std::optional<DimExpr> axis_size) {
  verify(graph);
  DimExpr size = axis_size ? *axis_size : fresh_batch_symbol(graph);
  std::vector<TensorSpec> in_specs = graph.input_specs();
  std::vector<std::optional<int64_t>> in_ax = broadcast_axes(in_axes, graph.input_tree(), "vectorize in_axes");
  std::vector<std::optional<int64_t>> out_ax = broadcast_axes(out_axes, graph.output_tree(), "vectorize out_axes");
  std::vector<std::string> in_paths = graph.input_paths(), out_paths = graph.output_paths();

  trace_detail::Tracer tracer;
  TraceContext& ctx = tracer.context();
  Vectorizer vz(ctx, size);
  const Block& entry = graph.main().entry();
  std::vector<BatchArg> args;
  for (size_t i = 0; i < in_specs.size(); ++i) {
    TensorSpec s = in_specs[i];
    if (!in_ax[i]) {
      args.push_back({tracer.input(s), false});
      continue;
    }
    auto r = static_cast<int64_t>(s.shape.rank()) + 1;
    int64_t ax = *in_ax[i];
    int64_t a = ax < 0 ? ax + r : ax;
    if (a < 0 || a >= r)
      throw TransformError("vectorize: in_axes " + std::to_string(ax) + " for input " + in_paths[i] + " (" +
                           s.to_string() + ") is out of range for the batched rank " + std::to_string(r));
    s.shape.dims().insert(s.shape.dims().begin() + a, size);
    SymbolicTensor x = tracer.input(s);
    args.push_back({moveaxis(x, a, 0), true});
  }
  std::vector<BatchArg> outs = vz.batch_block(entry, args);
  std::vector<SymbolicTensor> results;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!out_ax[i]) {
      if (outs[i].batched)
        throw TransformError("vectorize: output " + out_paths[i] +
                             " depends on the batch, but its out_axes is None (give it an axis)");
      results.push_back(outs[i].v);
      continue;
    }
    SymbolicTensor v = vz.materialize(outs[i]);
    auto r = static_cast<int64_t>(v.rank());
    int64_t ax = *out_ax[i];
    int64_t a = ax < 0 ? ax + r : ax;
    if (a < 0 || a >= r)
      throw TransformError("vectorize: out_axes " + std::to_string(ax) + " for output " + out_paths[i] +
                           " is out of range for the batched rank " + std::to_string(r));
    results.push_back(moveaxis(v, 0, a));
  }
  Graph g = tracer.finish(graph.output_tree().unflatten(results), graph.input_tree());
  return finish_transform(g, graph.static_values());
}

}  // namespace evoxc::transforms

namespace evoxc {
Graph vectorize(const Graph& graph, const AxisTree& in_axes, const AxisTree& out_axes,
                std::optional<DimExpr> axis_size) {
  return transforms::vectorize_impl(graph, in_axes, out_axes, std::move(axis_size));
}
}  // namespace evoxc
