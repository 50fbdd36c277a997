// Transform rules of the indexing and sorting family: gather, scatter, dynamic_slice, dynamic_update_slice, sort,
// argsort, top_k and searchsorted.
#include <algorithm>
#include <numeric>
#include <string>

#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

using ST = SymbolicTensor;
using Ints = std::vector<int64_t>;

// ---------------------------------------------------------------- shared helpers

Ints iota_ints(int64_t from, int64_t to) {
  Ints r(static_cast<size_t>(std::max<int64_t>(to - from, 0)));
  std::iota(r.begin(), r.end(), from);
  return r;
}

Ints shifted(const Ints& axes, int64_t by) {
  Ints r;
  for (int64_t a : axes) r.push_back(a + by);
  return r;
}

ST gather_op(const ST& x, const ST& idx, const Ints& axes) {
  return emit_op1(EVOXC_TOP("gather"), {x, idx}, {{"axes", axes}});
}

ST scatter_op(const ST& x, const ST& idx, const ST& upd, const Ints& axes, const std::string& mode) {
  return emit_op1(EVOXC_TOP("scatter"), {x, idx, upd}, {{"axes", axes}, {"mode", mode}});
}

std::string scatter_mode(const Operation& op) { return evoxc::attr_string(op.attributes(), "mode", op.name()); }

// Index values as int64. Unsigned 64-bit values saturate at 2^62 first (past every extent),
// so they still clamp to the end (or count as out of range) instead of wrapping negative,
// as the kernels read them.
ST index_i64(const ST& idx) {
  if (idx.dtype() == DType::I64) return idx;
  if (idx.dtype() == DType::U64)
    return convert(minimum(idx, scalar_like(4611686018427387904.0, DType::U64)), DType::I64);
  return convert(idx, DType::I64);
}

// A rank-0 int64 holding the extent `d`: a constant when static, else counted from a vector of
// ones of that extent (exact for every extent, 0 included).
ST extent_value(const DimExpr& d) {
  if (d.is_const()) return scalar_like(static_cast<double>(d.value()), DType::I64);
  return reduce_sum_keep(fill(Shape{d}, 1, DType::I64), {0});
}

// x with a trailing unit axis (one component of an index vector).
ST component(const ST& x) { return expand_dims(x, {static_cast<int64_t>(x.rank())}); }

// idx (B, I..., k) with the batch position prepended to every index vector: (B, I..., 1 + k),
// int64. Gathering or scattering over [0] + (axes + 1) then addresses example b's own operand.
ST with_batch_index(const ST& idx) {
  ST i = index_i64(idx);
  std::vector<DimExpr> s = i.shape().dims();
  s.back() = DimExpr(1);
  return concatenate({iota(Shape(s), 0, DType::I64), i}, static_cast<int64_t>(i.rank()) - 1);
}

// The per-component upper bounds (extent - 1 of each indexed axis), shape (k,), int64.
ST index_upper_bounds(const Shape& operand, const Ints& axes) {
  std::vector<ST> parts;
  for (int64_t a : axes) parts.push_back(reshape(extent_value(operand[static_cast<size_t>(a)]) - 1, Shape{1}));
  return parts.size() == 1 ? parts[0] : concatenate(parts, 0);
}

// gather's clamp, made explicit: every component of idx (int64) inside [0, extent - 1].
ST clamp_indices(const ST& idx, const Shape& operand, const Ints& axes) {
  ST i = index_i64(idx);
  if (axes.empty()) return i;
  return minimum(maximum(i, 0), index_upper_bounds(operand, axes));
}

// Which index vectors scatter applies (every component in range), broadcast to `target` (the
// updates' shape: idx.shape[:-1] + the non-indexed extents).
ST rows_in_range(const ST& idx, const Shape& operand, const Ints& axes, const Shape& target) {
  if (axes.empty()) return fill(target, true, DType::Bool);
  size_t lead = idx.rank() - 1;
  ST i = index_i64(idx);
  ST in = logical_and(greater_equal(i, 0), less_equal(i, index_upper_bounds(operand, axes)));
  ST ok = all(in, {static_cast<int64_t>(lead)});
  return broadcast_in_dim(ok, target, iota_ints(0, static_cast<int64_t>(lead)));
}

// The flat row-major number of each index vector of idx (shape idx.shape[:-1]), int64,
// broadcast to `target` (the updates' shape): the order in which scatter applies them.
ST row_ids(const ST& idx, const Shape& target) {
  size_t lead = idx.rank() - 1;
  std::vector<DimExpr> rows(idx.shape().begin(), idx.shape().begin() + static_cast<std::ptrdiff_t>(lead));
  DimExpr n(1);
  for (const DimExpr& d : rows) n = n * d;
  ST flat = reshape(iota(Shape{n}, 0, DType::I64), Shape(rows));
  return broadcast_in_dim(flat, target, iota_ints(0, static_cast<int64_t>(lead)));
}

// Index grid of a window: for each axis d a position start'_d + w_d, start'_d the start clamped
// into [0, extent_d - window_d] as dynamic_slice and dynamic_update_slice clamp it. The grid has
// shape ([B,] window..., [1 +] rank): with `lead` (the batch extent) it has a leading batch axis,
// over which `starts` of shape (B,) vary (rank-0 starts are shared); with `batch_component` every
// index vector starts with its batch position (the operand is batched too).
ST window_grid(const std::vector<ST>& starts, const Shape& operand, const Shape& window, const DimExpr* lead,
               bool batch_component) {
  size_t r = operand.rank();
  std::vector<DimExpr> gs;
  if (lead) gs.push_back(*lead);
  gs.insert(gs.end(), window.begin(), window.end());
  Shape grid(gs);
  int64_t off = lead ? 1 : 0;
  std::vector<ST> comps;
  if (batch_component) comps.push_back(component(iota(grid, 0, DType::I64)));
  for (size_t d = 0; d < r; ++d) {
    ST s = index_i64(starts[d]);
    ST hi = operand[d].is_const() && window[d].is_const()
                ? scalar_like(static_cast<double>(operand[d].value() - window[d].value()), DType::I64)
                : extent_value(operand[d]) - extent_value(window[d]);
    s = minimum(maximum(s, 0), hi);
    ST sb = s.rank() == 0 ? broadcast_in_dim(s, grid, {}) : broadcast_in_dim(s, grid, {0});
    comps.push_back(component(sb + iota(grid, static_cast<int64_t>(d) + off, DType::I64)));
  }
  return concatenate(comps, static_cast<int64_t>(grid.rank()));
}

// numpy.take_along_axis for an index tensor of t's rank (perm's extents may differ from t's
// on `dim` only): a gather over every axis, linear in t.
ST take_along(const ST& t, const ST& perm, int64_t dim) {
  auto r = static_cast<int64_t>(t.rank());
  std::vector<ST> comps;
  for (int64_t a = 0; a < r; ++a)
    comps.push_back(component(a == dim ? index_i64(perm) : iota(perm.shape(), a, DType::I64)));
  return gather_op(t, concatenate(comps, r), iota_ints(0, r));
}

std::vector<ST> starts_of(std::span<const ST> operands, size_t first) {
  return std::vector<ST>(operands.begin() + static_cast<std::ptrdiff_t>(first), operands.end());
}

std::vector<BatchArg> all_batched(const std::vector<ST>& vs) {
  std::vector<BatchArg> r;
  for (const ST& v : vs) r.push_back({v, true});
  return r;
}

// ---------------------------------------------------------------- batching

std::vector<BatchArg> batch_gather(BatchContext&, const Operation& op, std::span<const BatchArg> a) {
  Ints axes = attr_ints(op, "axes");
  const BatchArg& x = a[0];
  const BatchArg& idx = a[1];
  // Shared operand: the batch axis of the indices leads the result already.
  if (!x.batched) return {{gather_op(x.v, idx.v, axes), true}};
  if (!idx.batched) {
    // The batch axis is the first non-indexed axis: it lands right after the index batch axes.
    ST r = gather_op(x.v, idx.v, shifted(axes, 1));
    return {{moveaxis(r, static_cast<int64_t>(idx.v.rank()) - 1, 0), true}};
  }
  Ints ax{0};
  for (int64_t v : shifted(axes, 1)) ax.push_back(v);
  return {{gather_op(x.v, with_batch_index(idx.v), ax), true}};
}

std::vector<BatchArg> batch_scatter(BatchContext& ctx, const Operation& op, std::span<const BatchArg> a) {
  Ints axes = attr_ints(op, "axes");
  std::string mode = scatter_mode(op);
  ST x = ctx.materialize(a[0]);
  ST u = ctx.materialize(a[2]);
  if (!a[1].batched) {
    // Shared indices: each index vector writes a slab across the batch (the first non-indexed
    // axis), in the same order for every example, so "set" keeps its last-wins rule.
    u = moveaxis(u, 0, static_cast<int64_t>(a[1].v.rank()) - 1);
    return {{scatter_op(x, a[1].v, u, shifted(axes, 1), mode), true}};
  }
  // Per-example indices address their own example; rows of one example keep their order, and
  // rows of different examples never collide. The batch component is always in range.
  Ints ax{0};
  for (int64_t v : shifted(axes, 1)) ax.push_back(v);
  return {{scatter_op(x, with_batch_index(a[1].v), u, ax, mode), true}};
}

std::vector<BatchArg> batch_dynamic_slice(BatchContext& ctx, const Operation& op, std::span<const BatchArg> a) {
  const Shape& in = op.operand(0)->type().shape;
  const Shape& out = op.result(0)->type().shape;
  size_t r = in.rank();
  if (r == 0) return {a[0]};  // no starts: the whole (batched) operand
  bool starts_batched = false;
  std::vector<ST> starts;
  for (size_t i = 1; i < a.size(); ++i) {
    starts_batched = starts_batched || a[i].batched;
    starts.push_back(a[i].v);
  }
  auto r1 = static_cast<int64_t>(r);
  if (!starts_batched) {
    // Shared window over a batched operand: gather the window's grid on the operand axes; the
    // batch axis is the only non-indexed one and comes last.
    ST grid = window_grid(starts, in, out, nullptr, false);
    return {{moveaxis(gather_op(a[0].v, grid, iota_ints(1, r1 + 1)), r1, 0), true}};
  }
  // Per-example starts: a grid with a batch axis, gathered from the example's own operand
  // when the operand is batched.
  ST grid = window_grid(starts, in, out, &ctx.size(), a[0].batched);
  return {{gather_op(a[0].v, grid, iota_ints(0, r1 + (a[0].batched ? 1 : 0))), true}};
}

std::vector<BatchArg> batch_dynamic_update_slice(BatchContext& ctx, const Operation& op, std::span<const BatchArg> a) {
  const Shape& in = op.operand(0)->type().shape;
  const Shape& up = op.operand(1)->type().shape;
  ST x = ctx.materialize(a[0]);
  ST u = ctx.materialize(a[1]);
  bool starts_batched = false;
  std::vector<ST> starts;
  for (size_t i = 2; i < a.size(); ++i) {
    starts_batched = starts_batched || a[i].batched;
    starts.push_back(a[i].v);
  }
  if (!starts_batched) {
    // The update spans the whole batch axis, so its start there is 0.
    std::vector<ST> ops{x, u, scalar_like(0.0, DType::I64)};
    ops.insert(ops.end(), starts.begin(), starts.end());
    return {{emit_like(op, ops)[0], true}};
  }
  // Per-example starts: a "set" scatter of the update over its window's grid (distinct
  // positions, so the write order does not matter).
  ST grid = window_grid(starts, in, up, &ctx.size(), true);
  return {{scatter_op(x, grid, u, iota_ints(0, static_cast<int64_t>(in.rank()) + 1), "set"), true}};
}

// Every operand gets the batch axis and the sorted dimension moves up by one.
std::vector<BatchArg> batch_sort_like(BatchContext& ctx, const Operation& op, std::span<const BatchArg> a) {
  std::vector<ST> vals;
  for (const BatchArg& x : a) vals.push_back(ctx.materialize(x));
  AttrMap attrs = op.attributes();
  attrs["dimension"] = attr_int(op, "dimension") + 1;
  return all_batched(emit_like(op, vals, attrs));
}

std::vector<BatchArg> batch_top_k(BatchContext&, const Operation& op, std::span<const BatchArg> a) {
  return all_batched(emit_like(op, std::vector<ST>{a[0].v}));  // the last axis stays last
}

// searchsorted with per-example sorted rows: a merge. Each row's sorted values and the
// example's values are sorted together with a tag that places a value before the equal
// sorted entries ("left") or after them ("right"); a value's insertion point is then the
// number of sorted entries ahead of it in the merged order (an exclusive cumsum), written
// back to the value's position by a scatter. O(1) ops; on sorted rows it equals the kernel's
// binary search (on unsorted ones both answers are unspecified).
std::vector<BatchArg> batch_searchsorted(BatchContext& ctx, const Operation& op, std::span<const BatchArg> a) {
  if (!a[0].batched) return {{emit_like(op, std::vector<ST>{a[0].v, a[1].v})[0], true}};
  const DimExpr& B = ctx.size();
  ST s = a[0].v;  // (B, N)
  ST v = ctx.materialize(a[1]);
  const Shape& vshape = op.operand(1)->type().shape;
  DimExpr n = op.operand(0)->type().shape[0];
  DimExpr m(1);
  for (const DimExpr& d : vshape) m = m * d;
  ST vf = reshape(v, Shape{B, m});
  bool left = evoxc::attr_string(op.attributes(), "side", op.name()) == "left";
  ST keys = concatenate({s, vf}, 1);
  ST tags = concatenate({fill(Shape{B, n}, left ? 1 : 0, DType::I32), fill(Shape{B, m}, left ? 0 : 1, DType::I32)}, 1);
  Shape merged{B, n + m};
  ST pos = iota(merged, 1, DType::I64);
  std::vector<ST> sorted = emit_op(EVOXC_TOP("sort"), std::vector<ST>{keys, tags, pos},
                                   {{"dimension", int64_t{1}}, {"num_keys", int64_t{2}}});
  ST nv = extent_value(n);
  ST is_sorted_entry = convert(less(sorted[2], nv), DType::I64);
  ST ahead =
      emit_op1(EVOXC_TOP("cumsum"), {is_sorted_entry}, {{"axis", int64_t{1}}, {"reverse", false}}) - is_sorted_entry;
  // The sorted entries get a negative target and are dropped by the scatter.
  ST target = sorted[2] - nv;
  ST grid = concatenate({component(iota(merged, 0, DType::I64)), component(target)}, 2);
  ST out = scatter_op(fill(Shape{B, m}, 0, DType::I64), grid, ahead, {0, 1}, "set");
  std::vector<DimExpr> os{B};
  os.insert(os.end(), vshape.begin(), vshape.end());
  return {{reshape(out, Shape(os)), true}};
}

// ---------------------------------------------------------------- jvp

// Linear in operand 0 with the rest (indices, starts) fixed: the op applied to the tangent.
JvpRule linear_in_first_jvp() {
  return [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    std::vector<ST> ops(p.begin(), p.end());
    ops[0] = t[0];
    return JvpResult{y, emit_like(op, ops)};
  };
}

JvpResult dynamic_update_slice_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  std::vector<ST> ops(p.begin(), p.end());
  ops[0] = JvpContext::instantiate(t[0], op.operand(0)->type());
  ops[1] = JvpContext::instantiate(t[1], op.operand(1)->type());
  return JvpResult{y, emit_like(op, ops)};
}

// scatter. set/add: linear jointly in operand and updates. mul: the product rule, with the
// product of the other updates at a position computed without dividing by zero (a count of
// zero updates and the product of the non-zero ones). min/max: the tangent of the operand or
// update(s) equal to the result; a tie splits it equally among them (as maximum/minimum do),
// and a NaN result gets a zero tangent.
JvpResult scatter_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  Ints axes = attr_ints(op, "axes");
  std::string mode = scatter_mode(op);
  const TensorType& xt = op.operand(0)->type();
  const TensorType& ut = op.operand(2)->type();
  const ST& x = p[0];
  const ST& idx = p[1];
  const ST& u = p[2];
  if (mode == "set" || mode == "add") {
    ST tx = JvpContext::instantiate(t[0], xt);
    ST tu = JvpContext::instantiate(t[2], ut);
    return JvpResult{y, {scatter_op(tx, idx, tu, axes, mode)}};
  }
  ST in_range = rows_in_range(idx, xt.shape, axes, ut.shape);
  ST zu = zeros(ut);
  if (mode == "mul") {
    ST r;
    if (t[0].defined()) r = t[0] * scatter_op(fill(xt.shape, 1, xt.dtype), idx, u, axes, "mul");
    if (t[2].defined()) {
      ST is_zero = equal(u, 0.0);
      ST nzeros = scatter_op(zeros(TensorType(DType::I64, xt.shape)), idx, convert(is_zero, DType::I64), axes, "add");
      ST nonzero_prod = scatter_op(fill(xt.shape, 1, xt.dtype), idx, select(is_zero, ones_like(u), u), axes, "mul");
      ST zj = gather_op(nzeros, idx, axes);
      ST pj = gather_op(nonzero_prod, idx, axes);
      // The product of the other updates at row j's position.
      ST others = select(is_zero, select(equal(zj, 1), pj, zu),
                         select(equal(zj, 0), pj / select(is_zero, ones_like(u), u), zu));
      ST w = select(in_range, gather_op(x, idx, axes) * others, zu);
      r = add_tangents(r, scatter_op(zeros(xt), idx, t[2] * w, axes, "add"));
    }
    return JvpResult{y, {r}};
  }
  // min / max
  ST yj = gather_op(y[0], idx, axes);
  ST pick_u = convert(logical_and(in_range, equal(u, yj)), ut.dtype);
  ST pick_x = convert(equal(x, y[0]), xt.dtype);
  ST count = maximum(pick_x + scatter_op(zeros(xt), idx, pick_u, axes, "add"), 1.0);
  ST r;
  if (t[0].defined()) r = t[0] * pick_x;
  if (t[2].defined()) r = add_tangents(r, scatter_op(zeros(xt), idx, t[2] * pick_u, axes, "add"));
  return JvpResult{y, {r / count}};
}

// sort: every operand is permuted by the keys' stable permutation (tied keys keep their input
// order, the kernel's), obtained by sorting an iota alongside; each tangent takes the same
// permutation.
JvpResult sort_jvp(JvpContext&, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  int64_t dim = attr_int(op, "dimension");
  std::vector<ST> ops(p.begin(), p.end());
  ops.push_back(iota(p[0].shape(), dim, DType::I64));
  std::vector<ST> outs = emit_op(EVOXC_TOP("sort"), ops, op.attributes());
  ST perm = outs.back();
  outs.pop_back();
  std::vector<ST> ts(outs.size());
  for (size_t i = 0; i < ts.size(); ++i)
    if (t[i].defined() && has_tangent(outs[i].dtype())) ts[i] = take_along(t[i], perm, dim);
  return JvpResult{outs, ts};
}

// top_k: the values' tangent is the operand's tangent at the chosen indices (ties: the lower
// index, the kernel's choice).
JvpResult top_k_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  return JvpResult{y, {take_along(t[0], y[1], static_cast<int64_t>(p[0].rank()) - 1), ST()}};
}

// ---------------------------------------------------------------- transpose

std::vector<ST> ct_list(const Operation& op) { return std::vector<ST>(op.num_operands()); }

// gather -> scatter-add onto zeros at the indices gather actually read (clamped: scatter would
// drop an out-of-range row that gather clamped).
std::vector<ST> gather_transpose(TransposeContext&, const Operation& op, std::span<const ST> vals,
                                 const std::vector<bool>&, std::span<const ST> cts) {
  Ints axes = attr_ints(op, "axes");
  const TensorType& xt = op.operand(0)->type();
  std::vector<ST> r = ct_list(op);
  r[0] = scatter_op(zeros(xt), clamp_indices(vals[1], xt.shape, axes), cts[0], axes, "add");
  return r;
}

// scatter add: the cotangent passes to the operand; each applied update row reads it back
// (dropped rows get zero). set: the operand gets it where nothing was written; each position's
// last-written (winning) row reads it back, the others get zero.
std::vector<ST> scatter_transpose(TransposeContext&, const Operation& op, std::span<const ST> vals,
                                  const std::vector<bool>& lin, std::span<const ST> cts) {
  Ints axes = attr_ints(op, "axes");
  std::string mode = scatter_mode(op);
  const TensorType& xt = op.operand(0)->type();
  const TensorType& ut = op.operand(2)->type();
  const ST& idx = vals[1];
  const ST& ct = cts[0];
  std::vector<ST> r = ct_list(op);
  if (mode == "add") {
    if (lin[0]) r[0] = ct;
    if (lin[2]) r[2] = select(rows_in_range(idx, xt.shape, axes, ut.shape), gather_op(ct, idx, axes), zeros(ut));
  } else if (mode == "set") {
    if (lin[0]) r[0] = scatter_op(ct, idx, zeros(ut), axes, "set");
    if (lin[2]) {
      ST ids = row_ids(idx, ut.shape);
      ST winner = scatter_op(fill(xt.shape, -1, DType::I64), idx, ids, axes, "max");
      r[2] = select(equal(gather_op(winner, idx, axes), ids), gather_op(ct, idx, axes), zeros(ut));
    }
  } else {
    throw InternalError("transpose: evoxc.scatter with mode '" + mode + "' is not linear");
  }
  return r;
}

// dynamic_slice -> the cotangent written into zeros at the same (identically clamped) start.
std::vector<ST> dynamic_slice_transpose(TransposeContext&, const Operation& op, std::span<const ST> vals,
                                        const std::vector<bool>&, std::span<const ST> cts) {
  std::vector<ST> ops{zeros(op.operand(0)->type()), cts[0]};
  for (const ST& s : starts_of(vals, 1)) ops.push_back(s);
  std::vector<ST> r = ct_list(op);
  r[0] = emit_op1(EVOXC_TOP("dynamic_update_slice"), ops);
  return r;
}

// dynamic_update_slice -> the operand gets the cotangent with the window zeroed, the update
// the window (a dynamic_slice, or a gather of the window's grid where its extents are symbolic).
std::vector<ST> dynamic_update_slice_transpose(TransposeContext&, const Operation& op, std::span<const ST> vals,
                                               const std::vector<bool>& lin, std::span<const ST> cts) {
  const TensorType& xt = op.operand(0)->type();
  const TensorType& ut = op.operand(1)->type();
  std::vector<ST> starts = starts_of(vals, 2);
  std::vector<ST> r = ct_list(op);
  if (lin[0]) {
    std::vector<ST> ops{cts[0], zeros(ut)};
    ops.insert(ops.end(), starts.begin(), starts.end());
    r[0] = emit_op1(EVOXC_TOP("dynamic_update_slice"), ops);
  }
  if (lin[1]) {
    bool fixed = true;
    Ints sizes;
    for (const DimExpr& d : ut.shape) {
      fixed = fixed && d.is_const();
      sizes.push_back(d.is_const() ? d.value() : 0);
    }
    if (fixed) {
      std::vector<ST> ops{cts[0]};
      ops.insert(ops.end(), starts.begin(), starts.end());
      r[1] = emit_op1(EVOXC_TOP("dynamic_slice"), ops, {{"slice_sizes", sizes}});
    } else if (xt.rank() == 0) {
      r[1] = cts[0];
    } else {
      ST grid = window_grid(starts, xt.shape, ut.shape, nullptr, false);
      r[1] = gather_op(cts[0], grid, iota_ints(0, static_cast<int64_t>(xt.rank())));
    }
  }
  return r;
}

}  // namespace

void install_indexing_rules(RuleTables& t) {
  t.batch.set("gather", batch_gather);
  t.batch.set("scatter", batch_scatter);
  t.batch.set("dynamic_slice", batch_dynamic_slice);
  t.batch.set("dynamic_update_slice", batch_dynamic_update_slice);
  t.batch.set("sort", batch_sort_like);
  t.batch.set("argsort", batch_sort_like);
  t.batch.set("top_k", batch_top_k);
  t.batch.set("searchsorted", batch_searchsorted);

  t.jvp.set("gather", linear_in_first_jvp());
  t.jvp.set("dynamic_slice", linear_in_first_jvp());
  t.jvp.set("dynamic_update_slice", dynamic_update_slice_jvp);
  t.jvp.set("scatter", scatter_jvp);
  t.jvp.set("sort", sort_jvp);
  t.jvp.set("top_k", top_k_jvp);
  // Integer results carry no tangent: the driver never asks these for one.
  t.jvp.set("argsort", zero_jvp);
  t.jvp.set("searchsorted", zero_jvp);

  t.transpose.set("gather", gather_transpose);
  t.transpose.set("scatter", scatter_transpose);
  t.transpose.set("dynamic_slice", dynamic_slice_transpose);
  t.transpose.set("dynamic_update_slice", dynamic_update_slice_transpose);
  // scatter is linear in the operand and the updates (jointly, or in either with the other a
  // zero tangent) for modes set and add only.
  t.linearity.set("scatter", [](const Operation& op, const std::vector<int>& lin) {
    std::string mode = scatter_mode(op);
    if (mode != "set" && mode != "add") return false;
    for (int i : lin)
      if (i != 0 && i != 2) return false;
    return true;
  });
}

}  // namespace evoxc::transforms
