// User functions for indexing, sorting and scans, expanded into gather/scatter/dynamic_slice/sort/cumsum/... ops.
#include "evoxc/trace/indexing.h"

#include <numeric>

#include "emit.h"
#include "evoxc/core/error.h"

namespace evoxc {

namespace {

TraceContext& ctx_of(const SymbolicTensor& x) {
  if (!x.defined()) throw TraceError("use of an undefined (default-constructed) SymbolicTensor");
  return *x.context();
}

void require_int(const SymbolicTensor& t, const std::string& fn, const std::string& what) {
  if (!is_int(t.dtype()))
    throw TypeError(fn + ": " + what + " has dtype " + std::string(dtype_name(t.dtype())) +
                    ", expected an integer dtype; convert it with astype(int64)");
}

SymbolicTensor flatten(const SymbolicTensor& x, const SrcLoc& loc) {
  if (x.rank() == 1) return x;
  return reshape(x, Shape{x.shape().num_elements()}, loc);
}

// A host scalar or tensor as a tensor of dtype t.
SymbolicTensor as_tensor(TraceContext& ctx, const Operand& v, DType t, const SrcLoc& loc) {
  if (v.is_tensor()) return astype(v.tensor(), t, loc);
  (void)ctx;
  return fill(Shape{}, v, t, loc);
}

// Stacks same-shape integer tensors along a new last axis as int64: the index vectors of gather/scatter.
SymbolicTensor stack_indices(const std::vector<SymbolicTensor>& parts, const Shape& shape, const SrcLoc& loc) {
  std::vector<SymbolicTensor> cols;
  for (const auto& p : parts) {
    SymbolicTensor q = astype(p, DType::I64, loc);
    if (q.shape() != shape) q = broadcast_to(q, shape, loc);
    cols.push_back(expand_dims(q, Axes(static_cast<int64_t>(shape.rank())), loc));
  }
  return concatenate(cols, static_cast<int64_t>(shape.rank()), loc);
}

// The index vectors and broadcast shape of a[i0, i1, ...].
SymbolicTensor leading_indices(const SymbolicTensor& a, const std::vector<SymbolicTensor>& idx, const std::string& fn,
                               Shape& bshape, const SrcLoc& loc) {
  if (idx.size() > a.rank())
    throw ShapeError(fn + ": " + std::to_string(idx.size()) + " index tensors for an operand of rank " +
                     std::to_string(a.rank()) + "; give at most one per axis");
  if (idx.empty()) throw ShapeError(fn + ": give at least one index tensor");
  bshape = idx[0].shape();
  for (size_t i = 0; i < idx.size(); ++i) {
    require_int(idx[i], fn, "index " + std::to_string(i));
    bshape = broadcast_shapes(bshape, idx[i].shape(), fn);
  }
  return stack_indices(idx, bshape, loc);
}

std::vector<int64_t> iota_axes(size_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

// Static extent for the index modes that need one.
int64_t static_extent(const DimExpr& d, const std::string& fn, const std::string& mode) {
  if (!d.is_const())
    throw TraceError(fn + ": mode '" + mode + "' needs a static extent, got " + d.to_string() +
                     "; use the default mode or wrap the indices yourself");
  return d.value();
}

SymbolicTensor scan_op(const OpDef& op, const SymbolicTensor& x, std::optional<int64_t> axis, bool reverse,
                       bool accumulate, const SrcLoc& loc) {
  TraceContext& ctx = ctx_of(x);
  SymbolicTensor y = x;
  if (!axis) y = flatten(x, loc);
  if (y.rank() == 0) y = reshape(y, Shape{1}, loc);
  if (accumulate) {
    DType t = y.dtype();
    if (is_bool(t) || (is_signed_int(t) && t != DType::I64)) y = astype(y, DType::I64, loc);
    if (is_unsigned_int(t) && t != DType::U64) y = astype(y, DType::U64, loc);
  }
  int64_t a = normalize_axis(axis.value_or(0), y.rank(), op.name);
  return ctx.emit1(op, {y}, {{"axis", a}, {"reverse", reverse}}, loc);
}

}  // namespace

SymbolicTensor gather(const SymbolicTensor& a, const SymbolicTensor& indices, std::vector<int64_t> axes, SrcLoc loc) {
  TraceContext& ctx = ctx_of(a);
  for (auto& ax : axes) ax = normalize_axis(ax, a.rank(), "gather");
  return ctx.emit1(EVOXC_OP("gather"), {a, indices}, {{"axes", axes}}, loc);
}

SymbolicTensor scatter(const SymbolicTensor& a, const SymbolicTensor& indices, const Operand& updates,
                       std::vector<int64_t> axes, const std::string& mode, SrcLoc loc) {
  TraceContext& ctx = ctx_of(a);
  for (auto& ax : axes) ax = normalize_axis(ax, a.rank(), "scatter");
  SymbolicTensor u = as_tensor(ctx, updates, a.dtype(), loc);
  // Updates broadcast to gather's shape, as numpy broadcasts the right side of a[idx] += v.
  if (indices.rank() >= 1) {
    std::vector<DimExpr> want;
    for (size_t i = 0; i + 1 < indices.rank(); ++i) want.push_back(indices.shape()[i]);
    std::vector<bool> indexed(a.rank(), false);
    for (int64_t ax : axes) indexed[static_cast<size_t>(ax)] = true;
    for (size_t i = 0; i < a.rank(); ++i)
      if (!indexed[i]) want.push_back(a.shape()[i]);
    Shape ws(std::move(want));
    if (u.shape() != ws && u.rank() <= ws.rank()) u = broadcast_to(u, ws, loc);
  }
  return ctx.emit1(EVOXC_OP("scatter"), {a, indices, u}, {{"axes", axes}, {"mode", mode}}, loc);
}

SymbolicTensor take(const SymbolicTensor& a, const SymbolicTensor& indices, std::optional<int64_t> axis,
                    const std::string& mode, SrcLoc loc) {
  ctx_of(a);
  require_int(indices, "take", "indices");
  if (mode != "clip" && mode != "wrap") throw TypeError("take: mode '" + mode + "' must be 'clip' or 'wrap'");
  SymbolicTensor x = axis ? a : flatten(a, loc);
  if (x.rank() == 0) throw ShapeError("take: cannot index a rank-0 operand along an axis");
  int64_t ax = normalize_axis(axis.value_or(0), x.rank(), "take");
  SymbolicTensor idx = indices;
  if (mode == "wrap") {
    int64_t n = static_extent(x.shape()[static_cast<size_t>(ax)], "take", mode);
    if (n == 0) throw ShapeError("take: mode 'wrap' on an empty axis has nothing to index");
    idx = remainder(astype(idx, DType::I64, loc), n, loc);
  }
  SymbolicTensor g = gather(x, expand_dims(idx, Axes(static_cast<int64_t>(idx.rank())), loc), {ax}, loc);
  if (ax == 0) return g;
  // gather gives idx.shape + x's other axes; numpy puts idx.shape where the axis was.
  auto q = static_cast<int64_t>(idx.rank());
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < ax; ++i) perm.push_back(q + i);
  for (int64_t i = 0; i < q; ++i) perm.push_back(i);
  for (int64_t i = q + ax; i < static_cast<int64_t>(g.rank()); ++i) perm.push_back(i);
  return transpose(g, perm, loc);
}

SymbolicTensor take_along_axis(const SymbolicTensor& a, const SymbolicTensor& indices, int64_t axis, SrcLoc loc) {
  ctx_of(a);
  require_int(indices, "take_along_axis", "indices");
  if (indices.rank() != a.rank())
    throw ShapeError("take_along_axis: indices (" + indices.shape().to_string() + ") must have the operand's rank " +
                     std::to_string(a.rank()) + " (" + a.shape().to_string() + ")");
  if (a.rank() == 0) throw ShapeError("take_along_axis: the operand must have rank >= 1");
  auto ax = static_cast<size_t>(normalize_axis(axis, a.rank(), "take_along_axis"));
  // The other axes broadcast between the operand and the indices.
  std::vector<DimExpr> out, src;
  for (size_t i = 0; i < a.rank(); ++i) {
    if (i == ax) {
      out.push_back(indices.shape()[i]);
      src.push_back(a.shape()[i]);
      continue;
    }
    Shape b = broadcast_shapes(Shape{a.shape()[i]}, Shape{indices.shape()[i]}, "take_along_axis");
    out.push_back(b[0]);
    src.push_back(b[0]);
  }
  Shape os(out), ss(src);
  SymbolicTensor x = a.shape() == ss ? a : broadcast_to(a, ss, loc);
  std::vector<SymbolicTensor> parts;
  for (size_t i = 0; i < a.rank(); ++i)
    parts.push_back(i == ax ? indices : iota(os, static_cast<int64_t>(i), DType::I64, loc));
  return gather(x, stack_indices(parts, os, loc), iota_axes(a.rank()), loc);
}

SymbolicTensor index(const SymbolicTensor& a, const std::vector<SymbolicTensor>& idx, SrcLoc loc) {
  ctx_of(a);
  Shape b;
  SymbolicTensor iv = leading_indices(a, idx, "index", b, loc);
  return gather(a, iv, iota_axes(idx.size()), loc);
}

SymbolicTensor put(const SymbolicTensor& a, const SymbolicTensor& indices, const Operand& values,
                   const std::string& mode, SrcLoc loc) {
  TraceContext& ctx = ctx_of(a);
  require_int(indices, "put", "indices");
  if (mode != "drop" && mode != "clip" && mode != "wrap")
    throw TypeError("put: mode '" + mode + "' must be 'drop', 'clip' or 'wrap'");
  SymbolicTensor flat = flatten(a, loc);
  if (flat.rank() == 0) flat = reshape(flat, Shape{1}, loc);
  SymbolicTensor idx = flatten(astype(indices, DType::I64, loc), loc);
  if (idx.rank() == 0) idx = reshape(idx, Shape{1}, loc);
  if (mode != "drop") {
    int64_t n = static_extent(flat.shape()[0], "put", mode);
    if (n == 0) throw ShapeError("put: mode '" + mode + "' on an empty operand has nothing to index");
    idx = mode == "clip" ? clip(idx, 0, n - 1, loc) : remainder(idx, n, loc);
  }
  SymbolicTensor v = as_tensor(ctx, values, a.dtype(), loc);
  if (v.shape() != indices.shape()) v = broadcast_to(v, indices.shape(), loc);
  v = flatten(v, loc);
  if (v.rank() == 0) v = reshape(v, Shape{1}, loc);
  SymbolicTensor r = scatter(flat, expand_dims(idx, Axes(1), loc), v, {0}, "set", loc);
  return r.shape() == a.shape() ? r : reshape(r, a.shape(), loc);
}

SymbolicTensor scatter_add(const SymbolicTensor& a, const SymbolicTensor& indices, const Operand& updates, int64_t axis,
                           SrcLoc loc) {
  TraceContext& ctx = ctx_of(a);
  require_int(indices, "scatter_add", "indices");
  if (a.rank() == 0) throw ShapeError("scatter_add: the operand must have rank >= 1");
  int64_t ax = normalize_axis(axis, a.rank(), "scatter_add");
  auto q = static_cast<int64_t>(indices.rank());
  auto r = static_cast<int64_t>(a.rank());
  // take's layout: a.shape[:axis] + indices.shape + a.shape[axis+1:].
  std::vector<DimExpr> take_shape;
  for (int64_t i = 0; i < ax; ++i) take_shape.push_back(a.shape()[static_cast<size_t>(i)]);
  for (int64_t i = 0; i < q; ++i) take_shape.push_back(indices.shape()[static_cast<size_t>(i)]);
  for (int64_t i = ax + 1; i < r; ++i) take_shape.push_back(a.shape()[static_cast<size_t>(i)]);
  Shape ts(take_shape);
  SymbolicTensor u = as_tensor(ctx, updates, a.dtype(), loc);
  if (u.shape() != ts) u = broadcast_to(u, ts, loc);
  if (ax > 0) {
    std::vector<int64_t> perm;
    for (int64_t p = 0; p < q; ++p) perm.push_back(ax + p);
    for (int64_t p = 0; p < ax; ++p) perm.push_back(p);
    for (int64_t p = q + ax; p < q + r - 1; ++p) perm.push_back(p);
    u = transpose(u, perm, loc);
  }
  return scatter(a, expand_dims(indices, Axes(q), loc), u, {ax}, "add", loc);
}

SymbolicTensor IndexUpdate::get(SrcLoc loc) const { return index(a_, idx_, loc); }
SymbolicTensor IndexUpdate::set(const Operand& v, SrcLoc loc) const { return apply(v, "set", loc); }
SymbolicTensor IndexUpdate::add(const Operand& v, SrcLoc loc) const { return apply(v, "add", loc); }
SymbolicTensor IndexUpdate::multiply(const Operand& v, SrcLoc loc) const { return apply(v, "mul", loc); }
SymbolicTensor IndexUpdate::min(const Operand& v, SrcLoc loc) const { return apply(v, "min", loc); }
SymbolicTensor IndexUpdate::max(const Operand& v, SrcLoc loc) const { return apply(v, "max", loc); }

SymbolicTensor IndexUpdate::apply(const Operand& v, const char* mode, const SrcLoc& loc) const {
  ctx_of(a_);
  Shape b;
  SymbolicTensor iv = leading_indices(a_, idx_, std::string("at(...).") + mode, b, loc);
  return scatter(a_, iv, v, iota_axes(idx_.size()), mode, loc);
}

SymbolicTensor dynamic_slice(const SymbolicTensor& a, const std::vector<Operand>& starts,
                             const std::vector<int64_t>& sizes, SrcLoc loc) {
  TraceContext& ctx = ctx_of(a);
  std::vector<SymbolicTensor> ops{a};
  for (const Operand& s : starts) {
    if (s.kind() == Operand::Kind::Float || s.kind() == Operand::Kind::Bool)
      throw TypeError("dynamic_slice: start indices must be integers");
    ops.push_back(s.is_tensor() ? s.tensor() : fill(Shape{}, s, DType::I64, loc));
  }
  return ctx.emit1(EVOXC_OP("dynamic_slice"), ops, {{"slice_sizes", sizes}}, loc);
}

SymbolicTensor dynamic_update_slice(const SymbolicTensor& a, const Operand& update, const std::vector<Operand>& starts,
                                    SrcLoc loc) {
  TraceContext& ctx = ctx_of(a);
  std::vector<SymbolicTensor> ops{a, as_tensor(ctx, update, a.dtype(), loc)};
  for (const Operand& s : starts) {
    if (s.kind() == Operand::Kind::Float || s.kind() == Operand::Kind::Bool)
      throw TypeError("dynamic_update_slice: start indices must be integers");
    ops.push_back(s.is_tensor() ? s.tensor() : fill(Shape{}, s, DType::I64, loc));
  }
  return ctx.emit1(EVOXC_OP("dynamic_update_slice"), ops, {}, loc);
}

SymbolicTensor sort(const SymbolicTensor& x, std::optional<int64_t> axis, SrcLoc loc) {
  return sort(std::vector<SymbolicTensor>{axis ? x : flatten(x, loc)}, axis.value_or(0), 1, loc)[0];
}

std::vector<SymbolicTensor> sort(const std::vector<SymbolicTensor>& xs, int64_t axis, int64_t num_keys, SrcLoc loc) {
  if (xs.empty()) throw ShapeError("sort: give at least one tensor");
  TraceContext& ctx = ctx_of(xs[0]);
  if (xs[0].rank() == 0) throw ShapeError("sort: cannot sort a rank-0 tensor; give an axis of a rank >= 1 tensor");
  int64_t a = normalize_axis(axis, xs[0].rank(), "sort");
  return ctx.emit(EVOXC_OP("sort"), xs, {{"dimension", a}, {"num_keys", num_keys}}, loc);
}

SymbolicTensor argsort(const SymbolicTensor& x, std::optional<int64_t> axis, SrcLoc loc) {
  TraceContext& ctx = ctx_of(x);
  SymbolicTensor y = axis ? x : flatten(x, loc);
  if (y.rank() == 0) throw ShapeError("argsort: cannot sort a rank-0 tensor");
  int64_t a = normalize_axis(axis.value_or(0), y.rank(), "argsort");
  return ctx.emit1(EVOXC_OP("argsort"), {y}, {{"dimension", a}}, loc);
}

std::pair<SymbolicTensor, SymbolicTensor> top_k(const SymbolicTensor& x, int64_t k, SrcLoc loc) {
  TraceContext& ctx = ctx_of(x);
  auto r = ctx.emit(EVOXC_OP("top_k"), {x}, {{"k", k}}, loc);
  return {r.at(0), r.at(1)};
}

SymbolicTensor searchsorted(const SymbolicTensor& a, const Operand& v, const std::string& side, SrcLoc loc) {
  TraceContext& ctx = ctx_of(a);
  DType t = a.dtype();
  if (v.is_tensor()) {
    t = promote_types(t, v.tensor().dtype());
  } else {
    ScalarKind k = v.kind() == Operand::Kind::Bool  ? ScalarKind::Bool
                   : v.kind() == Operand::Kind::Int ? ScalarKind::Int
                                                    : ScalarKind::Float;
    t = promote_types(t, weak_scalar_result(t, k));
  }
  return ctx.emit1(EVOXC_OP("searchsorted"), {astype(a, t, loc), as_tensor(ctx, v, t, loc)}, {{"side", side}}, loc);
}

SymbolicTensor cumsum(const SymbolicTensor& x, std::optional<int64_t> axis, bool reverse, SrcLoc loc) {
  return scan_op(EVOXC_OP("cumsum"), x, axis, reverse, true, loc);
}
SymbolicTensor cumprod(const SymbolicTensor& x, std::optional<int64_t> axis, bool reverse, SrcLoc loc) {
  return scan_op(EVOXC_OP("cumprod"), x, axis, reverse, true, loc);
}
SymbolicTensor cummax(const SymbolicTensor& x, std::optional<int64_t> axis, bool reverse, SrcLoc loc) {
  return scan_op(EVOXC_OP("cummax"), x, axis, reverse, false, loc);
}
SymbolicTensor cummin(const SymbolicTensor& x, std::optional<int64_t> axis, bool reverse, SrcLoc loc) {
  return scan_op(EVOXC_OP("cummin"), x, axis, reverse, false, loc);
}

SymbolicTensor logsumexp(const SymbolicTensor& x, Axes axes, bool keepdims, SrcLoc loc) {
  TraceContext& ctx = ctx_of(x);
  SymbolicTensor y = is_float(x.dtype()) ? x : astype(x, kDefaultFloat, loc);
  std::vector<int64_t> ax = axes.normalize(y.rank(), "logsumexp");
  return ctx.emit1(EVOXC_OP("reduce_logsumexp"), {y}, {{"axes", ax}, {"keepdims", keepdims}}, loc);
}

}  // namespace evoxc
