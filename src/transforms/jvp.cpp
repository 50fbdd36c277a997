// jvp: the forward-mode driver (primal and tangent computed in one pass, symbolic zeros emit nothing) and its entry.
#include "evoxc/core/flat_table.h"
#include "evoxc/core/small_vector.h"
#include "evoxc/passes/passes.h"
#include "evoxc/transforms/transforms.h"
#include "transforms/driver.h"
#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

class Jvper final : public JvpContext {
 public:
  Jvper(TraceContext& ctx, bool linearize) : ctx_(ctx), linearize_(linearize) {}

  bool linearize() const override { return linearize_; }

  void bind(const Value* old, const SymbolicTensor& p, const SymbolicTensor& t) {
    primal_[old] = p;
    if (t.defined()) {
      tangent_[old] = t;
      tangent_values_.insert(t.value());
    } else if (SymbolicTensor* had = tangent_.find(old)) {
      *had = SymbolicTensor();  // a symbolic zero: no tangent
    }
  }
  SymbolicTensor primal_of(const Value* v) const override {
    const SymbolicTensor* p = primal_.find(v);
    if (p == nullptr) throw InternalError("jvp: a value is used before it is defined");
    return *p;
  }
  bool is_tangent(const Value* v) const override { return tangent_values_.contains(v); }
  SymbolicTensor tangent_of(const Value* v) const override {
    const SymbolicTensor* t = tangent_.find(v);
    return t == nullptr ? SymbolicTensor() : *t;
  }

  std::pair<std::vector<SymbolicTensor>, std::vector<SymbolicTensor>> jvp_block(
      const Block& block, std::span<const SymbolicTensor> primals, std::span<const SymbolicTensor> tangents) override {
    // Sized once for the block's values (each op has about one result).
    const size_t values = block.num_arguments() + block.num_operations();
    primal_.reserve(primal_.size() + values);
    tangent_.reserve(tangent_.size() + values);
    tangent_values_.reserve(values);
    for (size_t i = 0; i < block.num_arguments(); ++i) bind(block.argument(i), primals[i], tangents[i]);
    for (const auto& op : block.operations())
      if (!op->is_terminator()) process(*op);
    std::pair<std::vector<SymbolicTensor>, std::vector<SymbolicTensor>> out;
    for (const Value* v : block.terminator()->operands()) {
      out.first.push_back(primal_of(v));
      out.second.push_back(tangent_of(v));
    }
    return out;
  }

  std::vector<bool> nonzero_returns(const Block& block, const std::vector<bool>& args_nonzero) override {
    PtrSet nz;
    for (size_t i = 0; i < args_nonzero.size(); ++i)
      if (args_nonzero[i]) nz.insert(block.argument(i));
    auto is_nz = [&](const Value* v) { return nz.contains(v) || tangent_of(v).defined(); };
    for (const auto& op : block.operations()) {
      if (op->is_terminator()) continue;
      bool any = false;
      for (const Value* v : op->operands()) any = any || is_nz(v);
      if (!op->regions().empty())
        for (const Value* v : captured_values(*op)) any = any || is_nz(v);
      if (any)
        for (const auto& r : op->results())
          if (has_tangent(r->dtype())) nz.insert(r.get());
    }
    std::vector<bool> out;
    for (const Value* v : block.terminator()->operands()) out.push_back(is_nz(v));
    return out;
  }

  void process(const Operation& op) {
    SmallVector<SymbolicTensor, 4> ps, ts;
    bool any = false;
    for (const Value* v : op.operands()) {
      ps.push_back(primal_of(v));
      ts.push_back(tangent_of(v));
      any = any || ts.back().defined();
    }
    if (!op.regions().empty())
      for (const Value* v : captured_values(op)) any = any || tangent_of(v).defined();
    bool float_out = false;
    for (const auto& r : op.results()) float_out = float_out || has_tangent(r->dtype());
    LocationScope scope(ctx_, op.location());
    if (!any || !float_out) {
      // No tangent flows in, or none can flow out (integer/bool results): the primal only.
      std::vector<SymbolicTensor> outs = clone_primal(op, ps);
      for (size_t i = 0; i < outs.size(); ++i) bind(op.result(i), outs[i], {});
      return;
    }
    const JvpRule& rule = jvp_rules().get(op);
    JvpResult r = rule(*this, op, ps, ts);
    if (r.primals.size() != op.num_results() || r.tangents.size() != op.num_results())
      throw InternalError("jvp rule of evoxc." + op.name() + " returned the wrong number of results");
    for (size_t i = 0; i < op.num_results(); ++i) {
      const TensorType& want = op.result(i)->type();
      if (r.primals[i].type() != want && !(r.primals[i].dtype() == want.dtype && r.primals[i].rank() == want.rank()))
        throw InternalError("jvp rule of evoxc." + op.name() + ": primal " + std::to_string(i) + " is " +
                            r.primals[i].type().to_string() + " for " + want.to_string());
      SymbolicTensor t = has_tangent(want.dtype) ? r.tangents[i] : SymbolicTensor();
      if (t.defined() && (t.dtype() != want.dtype || t.rank() != want.rank()))
        throw InternalError("jvp rule of evoxc." + op.name() + " at " + op.location().to_string() + ": tangent " +
                            std::to_string(i) + " is " + t.type().to_string() + " for " + want.to_string());
      bind(op.result(i), r.primals[i], t);
    }
  }

  std::vector<SymbolicTensor> primal(const Operation& op, std::span<const SymbolicTensor> ps) override {
    return clone_primal(op, ps);
  }

  std::vector<SymbolicTensor> clone_primal(const Operation& op, std::span<const SymbolicTensor> ps) {
    return clone_with_captures(op, ps, [this](const Value* v) { return primal_of(v); });
  }

 private:
  TraceContext& ctx_;
  bool linearize_;
  // Flat maps: every value of the program is bound once (node-based maps were a tenth of vjp).
  PtrMap<const Value*, SymbolicTensor> primal_;
  PtrMap<const Value*, SymbolicTensor> tangent_;
  PtrSet tangent_values_;
};

}  // namespace

TreeDef mask_tree(const TreeDef& tree, const std::vector<bool>& keep) {
  size_t pos = 0;
  std::function<TreeDef(const TreeDef&)> walk = [&](const TreeDef& t) -> TreeDef {
    if (t.is_leaf()) return keep.at(pos++) ? t : TreeDef::none();
    if (t.is_none()) return t;
    std::vector<TreeDef> kids;
    for (const auto& c : t.children()) kids.push_back(walk(c));
    return TreeDef::from_parts(t.kind(), std::move(kids), t.keys());
  };
  return walk(tree);
}

std::vector<bool> float_leaves(const std::vector<TensorSpec>& specs) {
  std::vector<bool> out;
  for (const auto& s : specs) out.push_back(has_tangent(s.dtype));
  return out;
}

std::vector<SymbolicTensor> clone_with_captures(const Operation& op, std::span<const SymbolicTensor> operands,
                                                const std::function<SymbolicTensor(const Value*)>& captured) {
  if (op.regions().empty()) return emit_like(op, operands);
  TraceContext& ctx = TraceContext::current();
  ValueMap m;
  for (size_t i = 0; i < operands.size(); ++i) m.map(op.operand(i), operands[i].value());
  for (const Value* v : captured_values(op)) m.map(v, captured(v).value());
  Operation* n = clone_op(ctx.builder(), op, m);
  std::vector<SymbolicTensor> outs;
  for (const auto& r : n->results()) outs.push_back(ctx.wrap(r.get()));
  return outs;
}

AttrMap prefix_statics(const AttrMap& statics, const std::string& prefix) {
  AttrMap out;
  for (const auto& [path, v] : statics) out.emplace(prefix + path, v);
  return out;
}

Graph finish_transform(const Graph& g, const AttrMap& statics) {
  Graph with(g.module_ptr(), g.input_tree(), g.output_tree(), statics);
  Graph out = dce_cse(with);
  try {
    verify(out);
  } catch (const VerifyError& e) {
    throw InternalError(std::string("a transform built an invalid graph (a rule bug): ") + e.what());
  }
  return out;
}

Graph jvp_raw(const Graph& graph, const std::vector<bool>* tangent_mask, bool linearize) {
  // Callers verify the graph first (jvp, vjp, grad, jacfwd): no second check here.
  std::vector<TensorSpec> specs = graph.input_specs();
  std::vector<bool> has_t = float_leaves(specs);
  if (tangent_mask)
    for (size_t i = 0; i < has_t.size(); ++i) has_t[i] = has_t[i] && (*tangent_mask)[i];
  trace_detail::Tracer tracer;
  TraceContext& ctx = tracer.context();
  std::vector<SymbolicTensor> ps, ts;
  for (const auto& s : specs) ps.push_back(tracer.input(s));
  for (size_t i = 0; i < specs.size(); ++i) ts.push_back(has_t[i] ? tracer.input(specs[i]) : SymbolicTensor());
  Jvper j(ctx, linearize);
  auto [outs, touts] = j.jvp_block(graph.main().entry(), ps, ts);
  std::vector<TensorSpec> out_specs = graph.output_specs();
  std::vector<bool> out_t = float_leaves(out_specs);
  std::vector<SymbolicTensor> leaves = outs;
  for (size_t i = 0; i < touts.size(); ++i) {
    if (!out_t[i]) continue;
    const Value* old = graph.main().entry().terminator()->operand(i);
    leaves.push_back(JvpContext::instantiate(touts[i], old->type()));
  }
  TreeDef in_tree = TreeDef::tuple({graph.input_tree(), mask_tree(graph.input_tree(), has_t)});
  TreeDef out_tree = TreeDef::tuple({graph.output_tree(), mask_tree(graph.output_tree(), out_t)});
  std::vector<SymbolicTensor> flat = leaves;
  Tree<SymbolicTensor> out_values = out_tree.unflatten(flat);
  return tracer.finish(out_values, in_tree);
}

}  // namespace evoxc::transforms

namespace evoxc {
Graph jvp(const Graph& graph) {
  verify(graph);
  Graph raw = transforms::jvp_raw(graph);
  return transforms::finish_transform(raw, transforms::prefix_statics(graph.static_values(), "[0]"));
}
}  // namespace evoxc
