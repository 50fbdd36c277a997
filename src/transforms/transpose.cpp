// Reverse mode: transposition of the linear part of a jvp graph (JAX's design), and vjp, grad, value_and_grad on it.
#include <unordered_map>

#include "evoxc/core/flat_table.h"
#include "evoxc/core/small_vector.h"
#include "evoxc/passes/passes.h"
#include "evoxc/transforms/transforms.h"
#include "transforms/driver.h"
#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

std::string operand_list(const std::vector<int>& v) {
  std::string s;
  for (int i : v) s += (s.empty() ? "" : ", ") + std::to_string(i);
  return s;
}

class Transposer final : public TransposeContext {
 public:
  explicit Transposer(TraceContext& ctx) : ctx_(ctx) {}

  bool is_linear(const Value* v) const override { return linear_.contains(v); }
  SymbolicTensor forward_of(const Value* v) const override {
    const SymbolicTensor* f = fwd_.find(v);
    if (f == nullptr) throw InternalError("transpose: a non-linear value has no forward value");
    return *f;
  }

  std::vector<SymbolicTensor> transpose_block(const Block& block, const std::vector<bool>& linear,
                                              std::span<const SymbolicTensor> args, std::span<const SymbolicTensor> cts,
                                              std::unordered_map<const Value*, SymbolicTensor>& captured_cts) override {
    PtrSet local;
    // Sized once for the block's values (each op has about one result).
    const size_t values = block.num_arguments() + block.num_operations();
    local.reserve(values);
    linear_.reserve(linear_.size() + values);
    fwd_.reserve(fwd_.size() + values);
    for (size_t i = 0; i < block.num_arguments(); ++i) {
      local.insert(block.argument(i));
      if (linear[i])
        linear_.insert(block.argument(i));
      else
        fwd_[block.argument(i)] = args[i];
    }
    // Forward: the non-linear ops, in order; the linear ones are only marked.
    std::vector<const Operation*> lin_ops;
    for (const auto& op : block.operations()) {
      if (op->is_terminator()) continue;
      for (const auto& r : op->results()) local.insert(r.get());
      bool lin = false;
      for (const Value* v : op->operands()) lin = lin || is_linear(v);
      if (!op->regions().empty())
        for (const Value* v : captured_values(*op)) lin = lin || is_linear(v);
      if (lin) {
        for (const auto& r : op->results()) linear_.insert(r.get());
        lin_ops.push_back(op.get());
        continue;
      }
      LocationScope scope(ctx_, op->location());
      SmallVector<SymbolicTensor, 4> vals;
      for (const Value* v : op->operands()) vals.push_back(forward_of(v));
      std::vector<SymbolicTensor> outs = clone_forward(*op, vals);
      for (size_t i = 0; i < outs.size(); ++i) fwd_[op->result(i)] = outs[i];
    }
    PtrMap<const Value*, SymbolicTensor> ct;
    ct.reserve(values);
    std::function<void(const Value*, const SymbolicTensor&)> accumulate = [&](const Value* v, const SymbolicTensor& c) {
      if (!c.defined()) return;
      if (c.type() != v->type())
        throw InternalError("transpose: a cotangent of type " + c.type().to_string() + " for a value of type " +
                            v->type().to_string());
      auto& slot = local.contains(v) ? ct[v] : captured_cts[v];
      slot = add_tangents(slot, c);
    };
    // Control-flow rules add cotangents for values their regions capture through add_cotangent.
    auto* outer_acc = acc_;
    acc_ = &accumulate;
    const Operation* term = block.terminator();
    for (size_t j = 0; j < term->num_operands(); ++j)
      if (is_linear(term->operand(j))) accumulate(term->operand(j), cts[j]);
    // Backward: the linear ops in reverse.
    for (auto it = lin_ops.rbegin(); it != lin_ops.rend(); ++it) {
      const Operation& op = **it;
      SmallVector<SymbolicTensor, 4> out_cts;
      bool any = false;
      for (const auto& r : op.results()) {
        const SymbolicTensor* f = ct.find(r.get());
        out_cts.push_back(f == nullptr ? SymbolicTensor() : *f);
        any = any || out_cts.back().defined();
      }
      if (!any) continue;
      SmallVector<SymbolicTensor, 4> vals;
      std::vector<bool> lin_flags;
      std::vector<int> lin_idx;
      for (size_t i = 0; i < op.num_operands(); ++i) {
        bool l = is_linear(op.operand(i));
        lin_flags.push_back(l);
        vals.push_back(l ? SymbolicTensor() : forward_of(op.operand(i)));
        if (l) lin_idx.push_back(static_cast<int>(i));
      }
      check_linear(op, lin_idx);
      LocationScope scope(ctx_, op.location());
      const TransposeRule& rule = transpose_rules().get(op);
      std::vector<SymbolicTensor> in_cts = rule(*this, op, vals, lin_flags, out_cts);
      if (in_cts.size() != op.num_operands())
        throw InternalError("transpose rule of evoxc." + op.name() + " returned the wrong number of cotangents");
      for (size_t i = 0; i < op.num_operands(); ++i)
        if (lin_flags[i]) accumulate(op.operand(i), in_cts[i]);
    }
    acc_ = outer_acc;
    std::vector<SymbolicTensor> out;
    for (size_t i = 0; i < block.num_arguments(); ++i) {
      const SymbolicTensor* f = ct.find(block.argument(i));
      out.push_back(linear[i] && f != nullptr ? *f : SymbolicTensor());
    }
    return out;
  }

 private:
  // A linear op must be linear in exactly the operands that carry tangents (its OpDef's
  // traits): a jvp rule that feeds a tangent anywhere else is a bug the transposition
  // would turn into a wrong gradient.
  static void check_linear(const Operation& op, const std::vector<int>& lin_idx) {
    if (!op.regions().empty()) return;  // control flow: its transpose rule checks its regions
    const OpDef& d = op_def(op);
    bool ok = true;
    if (const LinearityFn* f = linearity_rules().find(op.op_id()))
      ok = (*f)(op, lin_idx);
    else if (lin_idx.size() == 1)
      ok = linear_in(d.linear_each, lin_idx[0]) || linear_in(d.linear_operands, lin_idx[0]);
    else
      for (int i : lin_idx) ok = ok && linear_in(d.linear_operands, i);
    if (!ok) {
      // A control-flow op with a tangent-carrying operand marks all its results linear, its primal results
      // included; when it cannot be transposed (a while_loop of data-dependent trip count) a nonlinear use of a
      // primal result comes here first: report the control-flow op's own reason.
      for (int i : lin_idx) {
        const Operation* def = op.operand(static_cast<size_t>(i))->defining_op();
        if (def != nullptr && !def->regions().empty() && !transpose_rules().find(def->op_id()))
          transpose_rules().get(*def);
      }
      throw InternalError("transpose: evoxc." + op.name() + " at " + op.location().to_string() +
                          " is applied to tangents in operands " + operand_list(lin_idx) +
                          ", in which it is not linear (a jvp rule bug)");
    }
  }

  std::vector<SymbolicTensor> clone_forward(const Operation& op, std::span<const SymbolicTensor> vals) {
    return clone_with_captures(op, vals, [this](const Value* v) { return forward_of(v); });
  }

  void add_cotangent(const Value* v, const SymbolicTensor& c) override {
    if (!acc_) throw InternalError("transpose: add_cotangent outside a block");
    (*acc_)(v, c);
  }

  TraceContext& ctx_;
  std::function<void(const Value*, const SymbolicTensor&)>* acc_ = nullptr;
  PtrSet linear_;
  PtrMap<const Value*, SymbolicTensor> fwd_;
};

// The primal inputs, primal outputs and input cotangents of a vjp built in a tracer.
struct VjpParts {
  std::vector<SymbolicTensor> outputs;    // the primal outputs, one per output leaf
  std::vector<SymbolicTensor> input_cts;  // one per input leaf; undefined where zero or not float
};

// Builds, in `tracer`, the forward part and the transposed linear part of jvp(graph).
// `primals` are the new graph's values for the inputs; `seeds` one cotangent per output leaf
// (undefined where zero; ignored for non-float outputs).
VjpParts build_vjp_parts(const Graph& graph, trace_detail::Tracer& tracer, const std::vector<SymbolicTensor>& primals,
                         const std::vector<SymbolicTensor>& seeds) {
  Graph lin = jvp_raw(graph, nullptr, /*linearize=*/true);
  const Block& entry = lin.main().entry();
  size_t n_in = graph.num_inputs(), n_out = graph.num_outputs();
  std::vector<bool> in_t = float_leaves(graph.input_specs());
  std::vector<bool> out_t = float_leaves(graph.output_specs());
  std::vector<bool> linear(entry.num_arguments(), false);
  std::vector<SymbolicTensor> args(entry.num_arguments());
  for (size_t i = 0; i < n_in; ++i) args[i] = primals[i];
  for (size_t i = n_in; i < entry.num_arguments(); ++i) linear[i] = true;
  // lin returns (outputs..., tangents of the float outputs...).
  const Operation* term = entry.terminator();
  std::vector<SymbolicTensor> cts(term->num_operands());
  size_t k = n_out;
  for (size_t j = 0; j < n_out; ++j)
    if (out_t[j]) cts[k++] = seeds[j];
  Transposer tp(tracer.context());
  std::unordered_map<const Value*, SymbolicTensor> captured;
  std::vector<SymbolicTensor> arg_cts = tp.transpose_block(entry, linear, args, cts, captured);
  VjpParts parts;
  for (size_t j = 0; j < n_out; ++j) {
    const Value* v = term->operand(j);
    if (tp.is_linear(v)) throw InternalError("vjp: a primal output depends on a tangent (a jvp rule bug)");
    parts.outputs.push_back(tp.forward_of(v));
  }
  size_t t = n_in;
  for (size_t i = 0; i < n_in; ++i) parts.input_cts.push_back(in_t[i] ? arg_cts[t++] : SymbolicTensor());
  return parts;
}

// build_vjp_parts, with a missing rule reported as a reverse-mode error: the user asked for
// `what` (grad, vjp, ...), not for the jvp or transpose step that failed inside it.
VjpParts build_vjp(const Graph& graph, trace_detail::Tracer& tracer, const std::vector<SymbolicTensor>& primals,
                   const std::vector<SymbolicTensor>& seeds, const char* what) {
  try {
    return build_vjp_parts(graph, tracer, primals, seeds);
  } catch (const TransformError& e) {
    throw TransformError(std::string(what) + " (reverse mode = jvp, then transpose): " + e.what());
  }
}

// The argument subtrees of the graph's input tuple named by argnums, checked.
std::vector<size_t> leaf_offsets(const Graph& g) {
  std::vector<size_t> off{0};
  const TreeDef& in = g.input_tree();
  if (in.kind() != TreeKind::Tuple)
    throw TransformError("grad: the graph's input tree is not a tuple of arguments (" + in.structure_string() + ")");
  for (const auto& c : in.children()) off.push_back(off.back() + c.num_leaves());
  return off;
}

size_t checked_argnum(int64_t a, size_t n) {
  int64_t r = a < 0 ? a + static_cast<int64_t>(n) : a;
  if (r < 0 || r >= static_cast<int64_t>(n))
    throw TransformError("grad: argnums " + std::to_string(a) + " is out of range for a graph of " + std::to_string(n) +
                         " arguments");
  return static_cast<size_t>(r);
}

// The gradient subtrees for argnums, from per-leaf cotangents (zeros where undefined).
Tree<SymbolicTensor> gradient_tree(const Graph& g, const ArgNums& argnums, const std::vector<SymbolicTensor>& cts,
                                   const std::vector<SymbolicTensor>& primals) {
  std::vector<size_t> off = leaf_offsets(g);
  size_t nargs = off.size() - 1;
  std::vector<std::string> paths = g.input_paths();
  std::vector<Tree<SymbolicTensor>> trees;
  for (int64_t a : argnums.nums) {
    size_t arg = checked_argnum(a, nargs);
    std::vector<SymbolicTensor> leaves;
    for (size_t i = off[arg]; i < off[arg + 1]; ++i) {
      if (!has_tangent(primals[i].dtype()))
        throw TransformError("grad: input " + paths[i] + " is " + primals[i].type().to_string() +
                             "; gradients exist only for float inputs (take it out of argnums)");
      leaves.push_back(JvpContext::instantiate(cts[i], primals[i].type()));
    }
    trees.push_back(g.input_tree().children()[arg].unflatten(leaves));
  }
  if (argnums.single) return trees.front();
  return Tree<SymbolicTensor>::tuple(std::move(trees));
}

Graph grad_impl(const Graph& graph, const ArgNums& argnums, bool has_aux, bool with_value) {
  verify(graph);
  if (argnums.nums.empty()) throw TransformError("grad: argnums is empty");
  const TreeDef& out = graph.output_tree();
  std::vector<TensorSpec> out_specs = graph.output_specs();
  size_t loss_leaf = 0;
  if (has_aux) {
    if (out.kind() != TreeKind::Tuple || out.size() != 2 || !out.children()[0].is_leaf())
      throw TransformError("grad: with has_aux the graph must return (loss, aux), got " + out.structure_string());
  } else if (!out.is_leaf()) {
    throw TransformError("grad: the graph must return one scalar (the loss), got " + out.structure_string() +
                         " (use has_aux=true to return (loss, aux), or vjp/jacrev for several outputs)");
  }
  const TensorSpec& ls = out_specs[loss_leaf];
  if (ls.shape.rank() != 0 || !has_tangent(ls.dtype))
    throw TransformError("grad: the loss must be a rank-0 float, got " + ls.to_string());
  trace_detail::Tracer tracer;
  std::vector<SymbolicTensor> primals;
  for (const auto& s : graph.input_specs()) primals.push_back(tracer.input(s));
  std::vector<SymbolicTensor> seeds(graph.num_outputs());
  seeds[loss_leaf] = scalar_like(1.0, ls.dtype);
  VjpParts parts = build_vjp(graph, tracer, primals, seeds, with_value ? "value_and_grad" : "grad");
  Tree<SymbolicTensor> grads = gradient_tree(graph, argnums, parts.input_cts, primals);
  Tree<SymbolicTensor> result;
  if (has_aux) {
    Tree<SymbolicTensor> aux =
        out.children()[1].unflatten(std::vector<SymbolicTensor>(parts.outputs.begin() + 1, parts.outputs.end()));
    Tree<SymbolicTensor> value = with_value ? Tree<SymbolicTensor>::tuple({parts.outputs[0], aux}) : aux;
    result = with_value ? Tree<SymbolicTensor>::tuple({value, grads}) : Tree<SymbolicTensor>::tuple({grads, aux});
  } else {
    result = with_value ? Tree<SymbolicTensor>::tuple({parts.outputs[0], grads}) : grads;
  }
  Graph g = tracer.finish(result, graph.input_tree());
  return finish_transform(g, graph.static_values());
}

}  // namespace

Graph vjp_graph(const Graph& graph) {
  verify(graph);
  trace_detail::Tracer tracer;
  std::vector<SymbolicTensor> primals, seeds;
  for (const auto& s : graph.input_specs()) primals.push_back(tracer.input(s));
  std::vector<TensorSpec> out_specs = graph.output_specs();
  std::vector<bool> out_t = float_leaves(out_specs);
  for (size_t j = 0; j < out_specs.size(); ++j)
    seeds.push_back(out_t[j] ? tracer.input(out_specs[j]) : SymbolicTensor());
  VjpParts parts = build_vjp(graph, tracer, primals, seeds, "vjp");
  std::vector<bool> in_t = float_leaves(graph.input_specs());
  std::vector<SymbolicTensor> leaves = parts.outputs;
  for (size_t i = 0; i < parts.input_cts.size(); ++i)
    if (in_t[i]) leaves.push_back(JvpContext::instantiate(parts.input_cts[i], primals[i].type()));
  TreeDef in_tree = TreeDef::tuple({graph.input_tree(), mask_tree(graph.output_tree(), out_t)});
  TreeDef out_tree = TreeDef::tuple({graph.output_tree(), mask_tree(graph.input_tree(), in_t)});
  Graph g = tracer.finish(out_tree.unflatten(leaves), in_tree);
  return finish_transform(g, prefix_statics(graph.static_values(), "[0]"));
}

Graph vjp_seeded(const Graph& graph, const std::vector<bool>& seeded) {
  trace_detail::Tracer tracer;
  std::vector<SymbolicTensor> primals, seeds, leaves;
  for (const auto& s : graph.input_specs()) primals.push_back(tracer.input(s));
  std::vector<TensorSpec> out_specs = graph.output_specs();
  for (size_t j = 0; j < out_specs.size(); ++j)
    seeds.push_back(seeded[j] && has_tangent(out_specs[j].dtype) ? tracer.input(out_specs[j]) : SymbolicTensor());
  VjpParts parts = build_vjp(graph, tracer, primals, seeds, "jacrev");
  std::vector<TreeDef> kids;
  for (size_t i = 0; i < parts.input_cts.size(); ++i)
    if (has_tangent(primals[i].dtype())) {
      leaves.push_back(JvpContext::instantiate(parts.input_cts[i], primals[i].type()));
      kids.emplace_back(LeafMark{});
    }
  std::vector<TreeDef> in_kids(primals.size() + (seeds.size()), TreeDef(LeafMark{}));
  size_t n_in = primals.size();
  for (size_t j = 0; j < seeds.size(); ++j)
    if (!seeds[j].defined()) in_kids[n_in + j] = TreeDef::none();
  Graph g = tracer.finish(TreeDef::tuple(std::move(kids)).unflatten(leaves), TreeDef::tuple(std::move(in_kids)));
  return finish_transform(g, {});
}

std::vector<SymbolicTensor> inline_graph(const Graph& g, const std::vector<SymbolicTensor>& args) {
  TraceContext& ctx = TraceContext::current();
  std::vector<Value*> vals;
  for (const auto& a : args) vals.push_back(a.value());
  ValueMap m;
  std::vector<Value*> outs = inline_block(ctx.builder(), g.main().entry(), vals, m);
  std::vector<SymbolicTensor> r;
  for (Value* v : outs) r.push_back(ctx.wrap(v));
  return r;
}

}  // namespace evoxc::transforms

namespace evoxc {
Graph vjp(const Graph& graph) { return transforms::vjp_graph(graph); }
Graph grad(const Graph& graph, const ArgNums& argnums, bool has_aux) {
  return transforms::grad_impl(graph, argnums, has_aux, false);
}
Graph value_and_grad(const Graph& graph, const ArgNums& argnums, bool has_aux) {
  return transforms::grad_impl(graph, argnums, has_aux, true);
}
}  // namespace evoxc
