// Transform rules of control flow (cond, while_loop, scan): batching through regions, jvp with the primal and
// tangent parts split into two ops (so reverse mode can transpose the tangent part), and the transposes.
#include <unordered_map>
#include <unordered_set>

#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

using ST = SymbolicTensor;

// Pops the pushed region block on every exit path.
class BlockScope {
 public:
  BlockScope(TraceContext& tc, Block& b) : tc_(tc) { tc_.push_block(b); }
  ~BlockScope() { tc_.pop_block(); }
  BlockScope(const BlockScope&) = delete;
  BlockScope& operator=(const BlockScope&) = delete;

 private:
  TraceContext& tc_;
};

using RegionFill = std::function<std::vector<ST>(size_t region, const std::vector<ST>& args)>;

// A detached op with `arg_types[r]` block arguments in region r, each region filled by `fill`
// (which returns what the region returns).
OpPtr build_detached(const OpDef& def, const std::vector<ST>& operands, const AttrMap& attrs,
                     const std::vector<std::vector<TensorType>>& arg_types, const RegionFill& fill) {
  TraceContext& tc = TraceContext::current();
  tc.locate(std::source_location::current());
  std::vector<Value*> vals;
  for (const ST& o : operands) vals.push_back(o.value());
  OpPtr op = tc.builder().create_detached(def, vals, attrs, arg_types.size());
  for (size_t r = 0; r < arg_types.size(); ++r) {
    Block& b = op->region(r).block();
    BlockScope scope(tc, b);
    std::vector<ST> args;
    for (const TensorType& t : arg_types[r]) args.push_back(tc.wrap(b.add_argument(t)));
    std::vector<ST> outs = fill(r, args);
    std::vector<Value*> rv;
    for (const ST& o : outs) rv.push_back(o.value());
    tc.builder().create_return(std::move(rv));
  }
  return op;
}

std::vector<ST> build_region_op(const OpDef& def, const std::vector<ST>& operands, const AttrMap& attrs,
                                const std::vector<std::vector<TensorType>>& arg_types, const RegionFill& fill) {
  TraceContext& tc = TraceContext::current();
  OpPtr op = build_detached(def, operands, attrs, arg_types, fill);
  Operation* n = tc.builder().insert(std::move(op));
  std::vector<ST> outs;
  for (const auto& r : n->results()) outs.push_back(tc.wrap(r.get()));
  return outs;
}

std::vector<TensorType> types_of(const std::vector<ST>& v) {
  std::vector<TensorType> t;
  for (const ST& x : v) t.push_back(x.type());
  return t;
}

// The type of one slice along axis 0.
TensorType slice_type(const TensorType& t) {
  std::vector<DimExpr> d(t.shape.begin() + 1, t.shape.end());
  return TensorType(t.dtype, Shape(std::move(d)));
}

// ---------------------------------------------------------------- splitting a jvp region

// The ops of a jvp'd region split into the primal part (no tangent flows in) and the linear
// part, with the residuals: values of the region the linear part uses but does not compute.
struct Split {
  std::vector<const Operation*> primal_ops, linear_ops;
  std::vector<const Value*> residuals;
};

Split split_block(const JvpContext& ctx, const Block& b, const std::vector<bool>& linear_args,
                  const std::vector<size_t>& tangent_returns) {
  std::unordered_set<const Value*> lin, local;
  for (size_t i = 0; i < b.num_arguments(); ++i) {
    local.insert(b.argument(i));
    if (linear_args[i]) lin.insert(b.argument(i));
  }
  Split s;
  std::unordered_set<const Value*> seen;
  // A value of an enclosing scope is linear when it is a tangent there.
  auto is_lin = [&](const Value* v) { return lin.count(v) != 0 || (!local.count(v) && ctx.is_tangent(v)); };
  auto need = [&](const Value* v) {
    if (!lin.count(v) && local.count(v) && seen.insert(v).second) s.residuals.push_back(v);
  };
  for (const auto& op : b.operations()) {
    if (op->is_terminator()) continue;
    std::vector<const Value*> uses(op->operands().begin(), op->operands().end());
    if (!op->regions().empty())
      for (const Value* v : captured_values(*op)) uses.push_back(v);
    bool l = false;
    for (const Value* v : uses) l = l || is_lin(v);
    for (const auto& r : op->results()) local.insert(r.get());
    if (l) {
      for (const auto& r : op->results()) lin.insert(r.get());
      s.linear_ops.push_back(op.get());
      for (const Value* v : uses) need(v);
    } else {
      s.primal_ops.push_back(op.get());
    }
  }
  const Operation* term = b.terminator();
  for (size_t j : tangent_returns) need(term->operand(j));
  return s;
}

// Clones `ops` into the current block with `map`, returns nothing (results go into map).
void clone_ops(const std::vector<const Operation*>& ops, ValueMap& map) {
  TraceContext& tc = TraceContext::current();
  for (const Operation* op : ops) clone_op(tc.builder(), *op, map);
}

std::vector<ST> mapped(const std::vector<const Value*>& vs, const ValueMap& map) {
  TraceContext& tc = TraceContext::current();
  std::vector<ST> out;
  for (const Value* v : vs) out.push_back(tc.wrap(map.lookup_or_self(v)));
  return out;
}

// Forward mode: the joint op itself, inserted.
std::vector<ST> insert_joint(OpPtr joint) {
  TraceContext& tc = TraceContext::current();
  Operation* n = tc.builder().insert(std::move(joint));
  std::vector<ST> outs;
  for (const auto& r : n->results()) outs.push_back(tc.wrap(r.get()));
  return outs;
}

// A joint cond's results (primals, then the non-zero tangents) as a JvpResult.
JvpResult split_outputs(const std::vector<ST>& outs, size_t n_out, const std::vector<bool>& out_nz) {
  JvpResult r;
  r.primals.assign(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(n_out));
  size_t k = n_out;
  for (size_t i = 0; i < n_out; ++i) r.tangents.push_back(out_nz[i] ? outs[k++] : ST());
  return r;
}

// ---------------------------------------------------------------- cond

std::vector<BatchArg> cond_batch(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  size_t R = op.regions().size();
  std::vector<BatchArg> inner(args.begin() + 1, args.end());
  if (!args[0].batched) {
    std::vector<bool> st;
    for (const auto& a : inner) st.push_back(a.batched);
    std::vector<bool> out_st(op.num_results(), false);
    for (size_t r = 0; r < R; ++r) {
      std::vector<bool> b = ctx.batched_returns(op.region(r).block(), st);
      for (size_t i = 0; i < b.size(); ++i) out_st[i] = out_st[i] || b[i];
    }
    std::vector<ST> operands{args[0].v};
    for (const auto& a : inner) operands.push_back(a.v);
    std::vector<std::vector<TensorType>> at(R, types_of(std::vector<ST>(operands.begin() + 1, operands.end())));
    std::vector<ST> outs = build_region_op(op_def(op), operands, op.attributes(), at, [&](size_t r, const auto& a) {
      std::vector<BatchArg> ba;
      for (size_t i = 0; i < a.size(); ++i) ba.push_back({a[i], inner[i].batched});
      std::vector<BatchArg> res = ctx.batch_block(op.region(r).block(), ba);
      std::vector<ST> vals;
      for (size_t i = 0; i < res.size(); ++i) vals.push_back(out_st[i] ? ctx.materialize(res[i]) : res[i].v);
      return vals;
    });
    std::vector<BatchArg> r;
    for (size_t i = 0; i < outs.size(); ++i) r.push_back({outs[i], out_st[i]});
    return r;
  }
  // A batched predicate: every branch runs on the whole batch, then each lane selects its own.
  std::vector<std::vector<ST>> outs(R);
  for (size_t r = 0; r < R; ++r)
    for (const BatchArg& v : ctx.batch_block(op.region(r).block(), inner)) outs[r].push_back(ctx.materialize(v));
  const ST& p = args[0].v;
  std::vector<BatchArg> res;
  for (size_t i = 0; i < op.num_results(); ++i) {
    size_t rank = op.result(i)->type().rank();
    ST lane = ctx.align_rank({p, true}, rank);
    ST v;
    if (p.dtype() == DType::Bool) {
      v = select(lane, outs[0][i], outs[1][i]);
    } else {
      // Index predicates are clamped into range, as the op does.
      ST idx = clamp(lane, 0, static_cast<int64_t>(R) - 1);
      v = outs[R - 1][i];
      for (size_t k = R - 1; k-- > 0;) v = select(equal(idx, static_cast<int64_t>(k)), outs[k][i], v);
    }
    res.push_back({v, true});
  }
  return res;
}

JvpResult cond_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  size_t R = op.regions().size(), n = op.num_operands() - 1;
  std::vector<bool> arg_nz;
  for (size_t i = 0; i < n; ++i) arg_nz.push_back(t[i + 1].defined());
  std::vector<bool> out_nz(op.num_results(), false);
  for (size_t r = 0; r < R; ++r) {
    std::vector<bool> z = ctx.nonzero_returns(op.region(r).block(), arg_nz);
    for (size_t i = 0; i < z.size(); ++i) out_nz[i] = out_nz[i] || (z[i] && has_tangent(op.result(i)->dtype()));
  }
  bool any = false;
  for (bool b : out_nz) any = any || b;
  if (!any) return JvpResult{ctx.primal(op, p), std::vector<ST>(op.num_results())};
  // The joint op: primal and tangent computed together in every branch. It is never
  // inserted: the primal cond and the tangent cond below are cloned from its regions.
  std::vector<ST> operands(p.begin(), p.end());
  std::vector<size_t> tan_args;  // which operands (0-based among the n) have tangents
  for (size_t i = 0; i < n; ++i)
    if (arg_nz[i]) {
      operands.push_back(t[i + 1]);
      tan_args.push_back(i);
    }
  std::vector<std::vector<TensorType>> at(R, types_of(std::vector<ST>(operands.begin() + 1, operands.end())));
  OpPtr joint = build_detached(op_def(op), operands, op.attributes(), at, [&](size_t r, const std::vector<ST>& a) {
    std::vector<ST> ps(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n)), ts(n);
    for (size_t k = 0; k < tan_args.size(); ++k) ts[tan_args[k]] = a[n + k];
    auto [po, to] = ctx.jvp_block(op.region(r).block(), ps, ts);
    std::vector<ST> ret = po;
    for (size_t i = 0; i < to.size(); ++i)
      if (out_nz[i]) ret.push_back(JvpContext::instantiate(to[i], op.result(i)->type()));
    return ret;
  });
  size_t n_out = op.num_results();
  if (!ctx.linearize()) return split_outputs(insert_joint(std::move(joint)), n_out, out_nz);
  std::vector<Split> splits;
  std::vector<bool> lin_args(n + tan_args.size(), false);
  for (size_t k = n; k < lin_args.size(); ++k) lin_args[k] = true;
  std::vector<size_t> tan_returns;
  for (size_t j = n_out; j < joint->region(0).block().terminator()->num_operands(); ++j) tan_returns.push_back(j);
  for (size_t r = 0; r < R; ++r) splits.push_back(split_block(ctx, joint->region(r).block(), lin_args, tan_returns));
  // Residual types, region by region; region r returns its own and zeros for the others'.
  std::vector<TensorType> res_types;
  std::vector<size_t> res_begin;
  for (const Split& s : splits) {
    res_begin.push_back(res_types.size());
    for (const Value* v : s.residuals) res_types.push_back(v->type());
  }
  std::vector<ST> pops(p.begin(), p.end());
  std::vector<std::vector<TensorType>> pat(R, types_of(std::vector<ST>(pops.begin() + 1, pops.end())));
  std::vector<ST> prim = build_region_op(op_def(op), pops, op.attributes(), pat, [&](size_t r, const auto& a) {
    const Block& jb = joint->region(r).block();
    ValueMap m;
    for (size_t i = 0; i < n; ++i) m.map(jb.argument(i), a[i].value());
    clone_ops(splits[r].primal_ops, m);
    std::vector<ST> ret;
    for (size_t i = 0; i < n_out; ++i)
      ret.push_back(TraceContext::current().wrap(m.lookup_or_self(jb.terminator()->operand(i))));
    for (size_t q = 0; q < R; ++q) {
      if (q == r) {
        for (const ST& v : mapped(splits[r].residuals, m)) ret.push_back(v);
      } else {
        for (const Value* v : splits[q].residuals) ret.push_back(zeros(v->type()));
      }
    }
    return ret;
  });
  // The tangent cond: linear in the tangents, the residuals are constants to it.
  std::vector<ST> tops{p[0]};
  tops.insert(tops.end(), prim.begin() + static_cast<std::ptrdiff_t>(n_out), prim.end());
  for (size_t k = 0; k < tan_args.size(); ++k) tops.push_back(t[tan_args[k] + 1]);
  std::vector<std::vector<TensorType>> tat(R, types_of(std::vector<ST>(tops.begin() + 1, tops.end())));
  std::vector<ST> tans = build_region_op(op_def(op), tops, op.attributes(), tat, [&](size_t r, const auto& a) {
    const Block& jb = joint->region(r).block();
    ValueMap m;
    for (size_t k = 0; k < splits[r].residuals.size(); ++k) m.map(splits[r].residuals[k], a[res_begin[r] + k].value());
    for (size_t k = 0; k < tan_args.size(); ++k) m.map(jb.argument(n + k), a[res_types.size() + k].value());
    clone_ops(splits[r].linear_ops, m);
    std::vector<ST> ret;
    for (size_t j = n_out; j < jb.terminator()->num_operands(); ++j)
      ret.push_back(TraceContext::current().wrap(m.lookup_or_self(jb.terminator()->operand(j))));
    return ret;
  });
  JvpResult out;
  out.primals.assign(prim.begin(), prim.begin() + static_cast<std::ptrdiff_t>(n_out));
  size_t k = 0;
  for (size_t i = 0; i < n_out; ++i) out.tangents.push_back(out_nz[i] ? tans[k++] : ST());
  return out;
}

// The linear values of enclosing scopes that an op's regions capture, in first-use order.
std::vector<const Value*> captured_linear(TransposeContext& ctx, const Operation& op) {
  std::vector<const Value*> out;
  for (const Value* v : captured_values(op))
    if (ctx.is_linear(v)) out.push_back(v);
  return out;
}

std::vector<ST> cond_transpose(TransposeContext& ctx, const Operation& op, std::span<const ST> vals,
                               const std::vector<bool>& lin, std::span<const ST> cts) {
  if (lin[0]) throw InternalError("transpose: a cond predicate is linear");
  size_t R = op.regions().size(), n = op.num_operands() - 1;
  std::vector<const Value*> caps = captured_linear(ctx, op);
  // Operands: the predicate, the non-linear operands, then the result cotangents.
  std::vector<ST> operands{vals[0]};
  std::vector<size_t> nonlin;
  for (size_t i = 0; i < n; ++i)
    if (!lin[i + 1]) {
      operands.push_back(vals[i + 1]);
      nonlin.push_back(i);
    }
  for (size_t j = 0; j < op.num_results(); ++j)
    operands.push_back(JvpContext::instantiate(cts[j], op.result(j)->type()));
  std::vector<std::vector<TensorType>> at(R, types_of(std::vector<ST>(operands.begin() + 1, operands.end())));
  std::vector<ST> outs = build_region_op(op_def(op), operands, op.attributes(), at, [&](size_t r, const auto& a) {
    const Block& b = op.region(r).block();
    std::vector<bool> l(n);
    std::vector<ST> args(n);
    for (size_t i = 0; i < n; ++i) l[i] = lin[i + 1];
    for (size_t k = 0; k < nonlin.size(); ++k) args[nonlin[k]] = a[k];
    std::vector<ST> rc(a.begin() + static_cast<std::ptrdiff_t>(nonlin.size()), a.end());
    std::unordered_map<const Value*, ST> captured;
    std::vector<ST> arg_cts = ctx.transpose_block(b, l, args, rc, captured);
    std::vector<ST> ret;
    for (size_t i = 0; i < n; ++i)
      if (lin[i + 1]) ret.push_back(JvpContext::instantiate(arg_cts[i], op.operand(i + 1)->type()));
    for (const Value* c : caps) {
      auto f = captured.find(c);
      ret.push_back(f == captured.end() ? zeros(c->type()) : f->second);
    }
    return ret;
  });
  std::vector<ST> res(op.num_operands());
  size_t k = 0;
  for (size_t i = 0; i < n; ++i)
    if (lin[i + 1]) res[i + 1] = outs[k++];
  for (const Value* c : caps) ctx.add_cotangent(c, outs[k++]);
  return res;
}

// ---------------------------------------------------------------- while_loop

std::vector<BatchArg> while_batch(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  const Block& cb = op.region(0).block();
  const Block& bb = op.region(1).block();
  std::vector<bool> st;
  for (const auto& a : args) st.push_back(a.batched);
  bool pred_batched = false;
  for (;;) {
    pred_batched = ctx.batched_returns(cb, st)[0];
    std::vector<bool> next = ctx.batched_returns(bb, st);
    bool changed = false;
    for (size_t i = 0; i < st.size(); ++i) {
      bool b = st[i] || next[i] || pred_batched;
      changed = changed || b != st[i];
      st[i] = b;
    }
    if (!changed) break;
  }
  std::vector<ST> operands;
  for (size_t i = 0; i < args.size(); ++i) operands.push_back(st[i] ? ctx.materialize(args[i]) : args[i].v);
  std::vector<std::vector<TensorType>> at(2, types_of(operands));
  auto bind = [&](const std::vector<ST>& a) {
    std::vector<BatchArg> ba;
    for (size_t i = 0; i < a.size(); ++i) ba.push_back({a[i], st[i]});
    return ba;
  };
  std::vector<ST> outs = build_region_op(op_def(op), operands, op.attributes(), at, [&](size_t r, const auto& a) {
    std::vector<BatchArg> ba = bind(a);
    if (r == 0) {
      BatchArg p = ctx.batch_block(cb, ba)[0];
      // A batched predicate: loop while any lane is still running.
      return std::vector<ST>{p.batched ? any(p.v) : p.v};
    }
    std::vector<BatchArg> next = ctx.batch_block(bb, ba);
    std::vector<ST> ret;
    if (!pred_batched) {
      for (size_t i = 0; i < next.size(); ++i) ret.push_back(st[i] ? ctx.materialize(next[i]) : next[i].v);
      return ret;
    }
    // Finished lanes keep their carry: each lane steps only while its own predicate holds.
    ST active = ctx.materialize(ctx.batch_block(cb, ba)[0]);
    for (size_t i = 0; i < next.size(); ++i) {
      ST lane = ctx.align_rank({active, true}, op.result(i)->type().rank());
      ret.push_back(select(lane, ctx.materialize(next[i]), a[i]));
    }
    return ret;
  });
  std::vector<BatchArg> r;
  for (size_t i = 0; i < outs.size(); ++i) r.push_back({outs[i], st[i]});
  return r;
}

// Forward mode only: the tangent is carried beside the primal (reverse mode through a
// while_loop needs its trip count; see the transpose deferral).
JvpResult while_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  const Block& cb = op.region(0).block();
  const Block& bb = op.region(1).block();
  size_t n = op.num_operands();
  std::vector<bool> nz;
  for (size_t i = 0; i < n; ++i) nz.push_back(t[i].defined() && has_tangent(op.operand(i)->dtype()));
  for (;;) {
    std::vector<bool> next = ctx.nonzero_returns(bb, nz);
    bool changed = false;
    for (size_t i = 0; i < n; ++i) {
      bool b = nz[i] || (next[i] && has_tangent(op.operand(i)->dtype()));
      changed = changed || b != nz[i];
      nz[i] = b;
    }
    if (!changed) break;
  }
  std::vector<ST> operands(p.begin(), p.end());
  std::vector<size_t> tan;
  for (size_t i = 0; i < n; ++i)
    if (nz[i]) {
      operands.push_back(JvpContext::instantiate(t[i], op.operand(i)->type()));
      tan.push_back(i);
    }
  std::vector<std::vector<TensorType>> at(2, types_of(operands));
  std::vector<ST> outs = build_region_op(op_def(op), operands, op.attributes(), at, [&](size_t r, const auto& a) {
    std::vector<ST> ps(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n)), ts(n);
    for (size_t k = 0; k < tan.size(); ++k) ts[tan[k]] = a[n + k];
    if (r == 0) return std::vector<ST>{ctx.jvp_block(cb, ps, ts).first[0]};
    auto [po, to] = ctx.jvp_block(bb, ps, ts);
    std::vector<ST> ret = po;
    for (size_t k = 0; k < tan.size(); ++k)
      ret.push_back(JvpContext::instantiate(to[tan[k]], op.operand(tan[k])->type()));
    return ret;
  });
  JvpResult res;
  res.primals.assign(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(n));
  res.tangents.resize(n);
  for (size_t k = 0; k < tan.size(); ++k) res.tangents[tan[k]] = outs[n + k];
  return res;
}

// ---------------------------------------------------------------- scan

struct ScanShape {
  size_t nc, nx, ny;
};
ScanShape scan_shape(const Operation& op) {
  auto nc = static_cast<size_t>(attr_int(op, "num_carry"));
  return {nc, op.num_operands() - nc, op.num_results() - nc};
}

AttrMap with_carry(const Operation& op, size_t nc, std::optional<bool> reverse = std::nullopt) {
  AttrMap a = op.attributes();
  a["num_carry"] = static_cast<int64_t>(nc);
  if (reverse) a["reverse"] = *reverse;
  return a;
}

std::vector<BatchArg> scan_batch(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  auto [nc, nx, ny] = scan_shape(op);
  const Block& b = op.region(0).block();
  std::vector<bool> st;
  for (const auto& a : args) st.push_back(a.batched);
  std::vector<bool> ret;
  for (;;) {
    ret = ctx.batched_returns(b, st);
    bool changed = false;
    for (size_t i = 0; i < nc; ++i) {
      bool x = st[i] || ret[i];
      changed = changed || x != st[i];
      st[i] = x;
    }
    if (!changed) break;
  }
  std::vector<ST> operands;
  std::vector<TensorType> at;
  for (size_t i = 0; i < nc; ++i) {
    operands.push_back(st[i] ? ctx.materialize(args[i]) : args[i].v);
    at.push_back(operands.back().type());
  }
  // A batched xs is scanned along its axis 1 (axis 0 is the batch): move the scan axis first.
  for (size_t i = nc; i < args.size(); ++i) {
    operands.push_back(st[i] ? moveaxis(args[i].v, 1, 0) : args[i].v);
    at.push_back(slice_type(operands.back().type()));
  }
  std::vector<ST> outs = build_region_op(op_def(op), operands, op.attributes(), {at}, [&](size_t, const auto& a) {
    std::vector<BatchArg> ba;
    for (size_t i = 0; i < a.size(); ++i) ba.push_back({a[i], st[i]});
    std::vector<BatchArg> res = ctx.batch_block(b, ba);
    std::vector<ST> vals;
    for (size_t i = 0; i < res.size(); ++i) {
      bool want = i < nc ? st[i] : ret[i];
      vals.push_back(want ? ctx.materialize(res[i]) : res[i].v);
    }
    return vals;
  });
  std::vector<BatchArg> r;
  for (size_t i = 0; i < nc; ++i) r.push_back({outs[i], st[i]});
  for (size_t j = 0; j < ny; ++j) {
    const ST& y = outs[nc + j];
    r.push_back(ret[nc + j] ? BatchArg{moveaxis(y, 1, 0), true} : BatchArg{y, false});
  }
  return r;
}

JvpResult scan_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  auto [nc, nx, ny] = scan_shape(op);
  const Block& b = op.region(0).block();
  std::vector<bool> nz;
  for (size_t i = 0; i < p.size(); ++i) nz.push_back(t[i].defined() && has_tangent(op.operand(i)->dtype()));
  std::vector<bool> ret;
  for (;;) {
    ret = ctx.nonzero_returns(b, nz);
    bool changed = false;
    for (size_t i = 0; i < nc; ++i) {
      bool x = nz[i] || (ret[i] && has_tangent(op.operand(i)->dtype()));
      changed = changed || x != nz[i];
      nz[i] = x;
    }
    if (!changed) break;
  }
  std::vector<size_t> tc, tx, ty;  // carries, xs and ys with tangents
  for (size_t i = 0; i < nc; ++i)
    if (nz[i]) tc.push_back(i);
  for (size_t i = nc; i < p.size(); ++i)
    if (nz[i]) tx.push_back(i);
  for (size_t j = 0; j < ny; ++j)
    if (ret[nc + j] && has_tangent(op.result(nc + j)->dtype())) ty.push_back(j);
  bool any = !tc.empty() || !ty.empty();
  if (!any) return JvpResult{ctx.primal(op, p), std::vector<ST>(op.num_results())};
  // The joint scan: carry (primal carry, tangent carry), xs (primal xs, tangent xs).
  std::vector<ST> operands(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(nc));
  for (size_t i : tc) operands.push_back(JvpContext::instantiate(t[i], op.operand(i)->type()));
  for (size_t i = nc; i < p.size(); ++i) operands.push_back(p[i]);
  for (size_t i : tx) operands.push_back(t[i]);
  std::vector<TensorType> at;
  for (size_t i = 0; i < nc + tc.size(); ++i) at.push_back(operands[i].type());
  for (size_t i = nc + tc.size(); i < operands.size(); ++i) at.push_back(slice_type(operands[i].type()));
  size_t ncj = nc + tc.size();
  OpPtr joint = build_detached(op_def(op), operands, with_carry(op, ncj), {at}, [&](size_t, const std::vector<ST>& a) {
    std::vector<ST> ps(p.size()), ts(p.size());
    for (size_t i = 0; i < nc; ++i) ps[i] = a[i];
    for (size_t k = 0; k < tc.size(); ++k) ts[tc[k]] = a[nc + k];
    for (size_t i = 0; i < nx; ++i) ps[nc + i] = a[ncj + i];
    for (size_t k = 0; k < tx.size(); ++k) ts[tx[k]] = a[ncj + nx + k];
    auto [po, to] = ctx.jvp_block(b, ps, ts);
    std::vector<ST> r(po.begin(), po.begin() + static_cast<std::ptrdiff_t>(nc));
    for (size_t i : tc) r.push_back(JvpContext::instantiate(to[i], op.operand(i)->type()));
    for (size_t j = 0; j < ny; ++j) r.push_back(po[nc + j]);
    for (size_t j : ty) r.push_back(JvpContext::instantiate(to[nc + j], slice_type(op.result(nc + j)->type())));
    return r;
  });
  if (!ctx.linearize()) {
    // Forward mode: the joint scan carries the tangent beside the primal.
    std::vector<ST> outs = insert_joint(std::move(joint));
    JvpResult res;
    res.primals.assign(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(nc));
    res.tangents.resize(nc + ny);
    for (size_t k = 0; k < tc.size(); ++k) res.tangents[tc[k]] = outs[nc + k];
    for (size_t j = 0; j < ny; ++j) res.primals.push_back(outs[ncj + j]);
    for (size_t k = 0; k < ty.size(); ++k) res.tangents[nc + ty[k]] = outs[ncj + ny + k];
    return res;
  }
  const Block& jb = joint->region(0).block();
  std::vector<bool> lin(jb.num_arguments(), false);
  for (size_t k = 0; k < tc.size(); ++k) lin[nc + k] = true;
  for (size_t k = 0; k < tx.size(); ++k) lin[ncj + nx + k] = true;
  // The joint returns (primal carry, tangent carry, primal ys, tangent ys).
  std::vector<size_t> tan_returns;
  for (size_t k = 0; k < tc.size(); ++k) tan_returns.push_back(nc + k);
  for (size_t k = 0; k < ty.size(); ++k) tan_returns.push_back(ncj + ny + k);
  Split s = split_block(ctx, jb, lin, tan_returns);
  // Primal scan: (primal carry; primal xs) -> (primal carry; primal ys, residuals as ys).
  std::vector<ST> pops(p.begin(), p.end());
  std::vector<TensorType> pat;
  for (size_t i = 0; i < nc; ++i) pat.push_back(p[i].type());
  for (size_t i = nc; i < p.size(); ++i) pat.push_back(slice_type(p[i].type()));
  std::vector<ST> prim = build_region_op(op_def(op), pops, op.attributes(), {pat}, [&](size_t, const auto& a) {
    ValueMap m;
    for (size_t i = 0; i < nc; ++i) m.map(jb.argument(i), a[i].value());
    for (size_t i = 0; i < nx; ++i) m.map(jb.argument(ncj + i), a[nc + i].value());
    clone_ops(s.primal_ops, m);
    TraceContext& tc2 = TraceContext::current();
    std::vector<ST> r;
    for (size_t i = 0; i < nc; ++i) r.push_back(tc2.wrap(m.lookup_or_self(jb.terminator()->operand(i))));
    for (size_t j = 0; j < ny; ++j) r.push_back(tc2.wrap(m.lookup_or_self(jb.terminator()->operand(ncj + j))));
    for (const ST& v : mapped(s.residuals, m)) r.push_back(v);
    return r;
  });
  // Tangent scan: (tangent carry; residual slices, tangent xs) -> (tangent carry; tangent ys).
  size_t nres = s.residuals.size();
  std::vector<ST> tops;
  for (size_t k = 0; k < tc.size(); ++k) tops.push_back(operands[nc + k]);
  for (size_t q = 0; q < nres; ++q) tops.push_back(prim[nc + ny + q]);
  for (size_t i : tx) tops.push_back(t[i]);
  std::vector<TensorType> tat;
  for (size_t k = 0; k < tc.size(); ++k) tat.push_back(tops[k].type());
  for (size_t q = tc.size(); q < tops.size(); ++q) tat.push_back(slice_type(tops[q].type()));
  std::vector<ST> tans =
      build_region_op(op_def(op), tops, with_carry(op, tc.size()), {tat}, [&](size_t, const auto& a) {
        ValueMap m;
        for (size_t k = 0; k < tc.size(); ++k) m.map(jb.argument(nc + k), a[k].value());
        for (size_t q = 0; q < nres; ++q) m.map(s.residuals[q], a[tc.size() + q].value());
        for (size_t k = 0; k < tx.size(); ++k) m.map(jb.argument(ncj + nx + k), a[tc.size() + nres + k].value());
        clone_ops(s.linear_ops, m);
        TraceContext& tc2 = TraceContext::current();
        std::vector<ST> r;
        const Operation* term = jb.terminator();
        for (size_t k = 0; k < tc.size(); ++k) r.push_back(tc2.wrap(m.lookup_or_self(term->operand(nc + k))));
        for (size_t k = 0; k < ty.size(); ++k) r.push_back(tc2.wrap(m.lookup_or_self(term->operand(ncj + ny + k))));
        return r;
      });
  JvpResult res;
  res.primals.assign(prim.begin(), prim.begin() + static_cast<std::ptrdiff_t>(nc + ny));
  res.tangents.resize(nc + ny);
  for (size_t k = 0; k < tc.size(); ++k) res.tangents[tc[k]] = tans[k];
  for (size_t k = 0; k < ty.size(); ++k) res.tangents[nc + ty[k]] = tans[tc.size() + k];
  return res;
}

// The transpose of a scan linear in its carry and in some xs: a scan in the opposite
// direction whose carry is the carry's cotangent (plus accumulators for linear values the body
// captures) and whose ys are the cotangents of the linear xs.
std::vector<ST> scan_transpose(TransposeContext& ctx, const Operation& op, std::span<const ST> vals,
                               const std::vector<bool>& lin, std::span<const ST> cts) {
  auto [nc, nx, ny] = scan_shape(op);
  const Block& b = op.region(0).block();
  std::vector<const Value*> caps = captured_linear(ctx, op);
  std::vector<size_t> xs_nonlin, xs_lin;
  for (size_t i = nc; i < op.num_operands(); ++i) (lin[i] ? xs_lin : xs_nonlin).push_back(i);
  // Carry: cotangents of the final carry, then one accumulator per captured linear value.
  std::vector<ST> operands;
  for (size_t i = 0; i < nc; ++i) operands.push_back(JvpContext::instantiate(cts[i], op.result(i)->type()));
  for (const Value* c : caps) operands.push_back(zeros(c->type()));
  size_t ncar = operands.size();
  for (size_t i : xs_nonlin) operands.push_back(vals[i]);
  for (size_t j = 0; j < ny; ++j) operands.push_back(JvpContext::instantiate(cts[nc + j], op.result(nc + j)->type()));
  std::vector<TensorType> at;
  for (size_t i = 0; i < ncar; ++i) at.push_back(operands[i].type());
  for (size_t i = ncar; i < operands.size(); ++i) at.push_back(slice_type(operands[i].type()));
  bool reverse = attr_flag(op, "reverse");
  std::vector<ST> outs =
      build_region_op(op_def(op), operands, with_carry(op, ncar, !reverse), {at}, [&](size_t, const auto& a) {
        // The body is linear in its carry (always: a carry either is a tangent or starts
        // as one's zero) and in the linear xs.
        std::vector<bool> l(b.num_arguments(), false);
        std::vector<ST> args(b.num_arguments());
        for (size_t i = 0; i < nc; ++i) l[i] = true;
        for (size_t i : xs_lin) l[i] = true;
        for (size_t k = 0; k < xs_nonlin.size(); ++k) args[xs_nonlin[k]] = a[ncar + k];
        std::vector<ST> rc;
        for (size_t i = 0; i < nc; ++i) rc.push_back(a[i]);
        for (size_t j = 0; j < ny; ++j) rc.push_back(a[ncar + xs_nonlin.size() + j]);
        std::unordered_map<const Value*, ST> captured;
        std::vector<ST> arg_cts = ctx.transpose_block(b, l, args, rc, captured);
        std::vector<ST> r;
        for (size_t i = 0; i < nc; ++i) r.push_back(JvpContext::instantiate(arg_cts[i], b.argument(i)->type()));
        for (size_t k = 0; k < caps.size(); ++k) {
          auto f = captured.find(caps[k]);
          r.push_back(f == captured.end() ? a[nc + k] : add(a[nc + k], f->second));
        }
        for (size_t i : xs_lin) r.push_back(JvpContext::instantiate(arg_cts[i], b.argument(i)->type()));
        return r;
      });
  std::vector<ST> res(op.num_operands());
  for (size_t i = 0; i < nc; ++i)
    if (lin[i]) res[i] = outs[i];
  for (size_t k = 0; k < caps.size(); ++k) ctx.add_cotangent(caps[k], outs[nc + k]);
  for (size_t k = 0; k < xs_lin.size(); ++k) res[xs_lin[k]] = outs[ncar + k];
  return res;
}

// block_call (a custom op): its portable body, vectorized or differentiated in place. The result is the body's
// ops, no longer a block_call: a registered implementation serves the untransformed block only.
std::vector<BatchArg> block_batch(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  return ctx.batch_block(op.region(0).block(), args);
}

JvpResult block_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> primals, std::span<const ST> tangents) {
  auto [po, to] = ctx.jvp_block(op.region(0).block(), primals, tangents);
  return JvpResult{std::move(po), std::move(to)};
}

}  // namespace

void install_control_rules(RuleTables& t) {
  t.batch.set("block_call", block_batch);
  t.jvp.set("block_call", block_jvp);
  t.batch.set("cond", cond_batch);
  t.batch.set("while_loop", while_batch);
  t.batch.set("scan", scan_batch);
  t.jvp.set("cond", cond_jvp);
  t.jvp.set("while_loop", while_jvp);
  t.jvp.set("scan", scan_jvp);
  t.transpose.set("cond", cond_transpose);
  t.transpose.set("scan", scan_transpose);
  t.transpose.defer("while_loop",
                    "reverse mode through a while_loop needs its trip count, which depends on data here; write the "
                    "loop as a scan or a fori_loop with static bounds (a scan of known length) to differentiate it");
}

}  // namespace evoxc::transforms
