// The user-facing op functions: promotion, scalar lifting and numpy conventions over the IR ops.
#include "evoxc/trace/ops.h"

#include <algorithm>
#include <cfloat>
#include <limits>

#include "emit.h"
#include "evoxc/core/error.h"

namespace evoxc {

namespace {

// The trace of the tensor operands (each checked, so a misuse names the op and location), or
// the innermost active trace when all operands are host scalars.
TraceContext& context_of(const OpDef& op, std::initializer_list<const Operand*> ops, const SrcLoc& loc) {
  TraceContext* ctx = nullptr;
  for (const Operand* o : ops)
    if (o->is_tensor()) ctx = &TraceContext::of(o->tensor(), op, loc);
  return ctx ? *ctx : TraceContext::current();
}

ScalarKind scalar_kind(const Operand& o) {
  switch (o.kind()) {
    case Operand::Kind::Bool: return ScalarKind::Bool;
    case Operand::Kind::Int: return ScalarKind::Int;
    default: return ScalarKind::Float;
  }
}

DType scalar_default_dtype(const Operand& o) {
  switch (o.kind()) {
    case Operand::Kind::Bool: return DType::Bool;
    case Operand::Kind::Int: return DType::I64;
    default: return kDefaultFloat;
  }
}

// The dtype the operands combine to, with weakly typed scalars.
DType result_dtype(std::initializer_list<const Operand*> ops) {
  std::optional<DType> strong;
  for (const Operand* o : ops)
    if (o->is_tensor()) strong = strong ? promote_types(*strong, o->tensor().dtype()) : o->tensor().dtype();
  if (strong) {
    DType t = *strong;
    for (const Operand* o : ops)
      if (!o->is_tensor()) t = promote_types(t, weak_scalar_result(*strong, scalar_kind(*o)));
    return t;
  }
  DType t = scalar_default_dtype(**ops.begin());
  for (const Operand* o : ops) t = promote_types(t, scalar_default_dtype(*o));
  return t;
}

Attribute scalar_attr(const Operand& o, DType t) {
  if (is_bool(t)) return o.kind() == Operand::Kind::Float ? o.float_value() != 0.0 : o.int_value() != 0;
  if (is_float(t) || o.kind() == Operand::Kind::Float) return o.float_value();
  return o.int_value();
}

SymbolicTensor full_scalar(TraceContext& ctx, const Shape& shape, const Operand& value, DType t, const SrcLoc& loc) {
  Attribute v = scalar_attr(value, t);
  // Integer dtypes take an integral value; a float scalar there is truncated as numpy's astype would.
  if (!is_float(t) && !is_bool(t) && std::holds_alternative<double>(v)) {
    double d = std::get<double>(v);
    if (!(d >= -9.2e18 && d <= 9.2e18))
      throw TypeError("cannot represent the scalar " + std::to_string(d) + " in " + std::string(dtype_name(t)));
    v = static_cast<int64_t>(d);
  }
  // Rank-0 scalars (the weakly typed operands of binary ops) are emitted once per block.
  if (shape.rank() == 0) return ctx.scalar(v, t, loc);
  return ctx.emit1(EVOXC_OP("full"), {}, trace_internal::make_attrs("dtype", t, "shape", shape, "value", std::move(v)),
                   loc);
}

SymbolicTensor to_dtype(const SymbolicTensor& x, DType t, const SrcLoc& loc) {
  if (x.dtype() == t) return x;
  return x.context()->emit1(EVOXC_OP("convert"), {x}, trace_internal::make_attrs("dtype", t), loc);
}

// Materialises an operand as a tensor of dtype t (scalars become rank-0 `full`).
SymbolicTensor lift(TraceContext& ctx, const Operand& o, DType t, const SrcLoc& loc) {
  if (o.is_tensor()) return to_dtype(o.tensor(), t, loc);
  return full_scalar(ctx, Shape{}, o, t, loc);
}

SymbolicTensor as_bool(const SymbolicTensor& x, const SrcLoc& loc) { return to_dtype(x, DType::Bool, loc); }

SymbolicTensor unary_op(const OpDef& op, const Operand& x, const SrcLoc& loc, bool float_only, AttrMap attrs = {}) {
  TraceContext& ctx = context_of(op, {&x}, loc);
  DType t = result_dtype({&x});
  if (float_only && !is_float(t)) t = kDefaultFloat;
  return ctx.emit1(op, {lift(ctx, x, t, loc)}, std::move(attrs), loc);
}

enum class BinaryRule { Same, Float, Bool };

SymbolicTensor binary_op(const OpDef& op, const Operand& a, const Operand& b, const SrcLoc& loc,
                         BinaryRule rule = BinaryRule::Same) {
  TraceContext& ctx = context_of(op, {&a, &b}, loc);
  DType t = result_dtype({&a, &b});
  if (rule == BinaryRule::Float && !is_float(t)) t = kDefaultFloat;
  if (rule == BinaryRule::Bool) {
    SymbolicTensor x = as_bool(lift(ctx, a, t, loc), loc);
    SymbolicTensor y = as_bool(lift(ctx, b, t, loc), loc);
    return ctx.emit1(op, {x, y}, {}, loc);
  }
  return ctx.emit1(op, {lift(ctx, a, t, loc), lift(ctx, b, t, loc)}, {}, loc);
}

SymbolicTensor reduce_op(const OpDef& op, const SymbolicTensor& x, const Axes& axes, bool keepdims, const SrcLoc& loc) {
  std::vector<int64_t> ax = axes.normalize(x.rank(), op.name);
  return x.context()->emit1(op, {x}, {{"axes", ax}, {"keepdims", keepdims}}, loc);
}

DType accumulator(DType t) {
  if (is_bool(t) || (is_signed_int(t) && t != DType::I64)) return DType::I64;
  if (is_unsigned_int(t) && t != DType::U64) return DType::U64;
  return t;
}

SymbolicTensor arg_op(const OpDef& op, const SymbolicTensor& x, std::optional<int64_t> axis, bool keepdims,
                      const SrcLoc& loc) {
  TraceContext& ctx = *x.context();
  if (!axis) {
    SymbolicTensor flat = reshape(x, Shape{x.shape().num_elements()}, loc);
    SymbolicTensor r =
        ctx.emit1(op, {flat}, {{"axis", int64_t{0}}, {"keepdims", false}, {"index_dtype", kIndexType}}, loc);
    if (keepdims) return reshape(r, Shape(std::vector<DimExpr>(x.rank(), DimExpr(1))), loc);
    return r;
  }
  int64_t a = normalize_axis(*axis, x.rank(), op.name);
  return ctx.emit1(op, {x}, {{"axis", a}, {"keepdims", keepdims}, {"index_dtype", kIndexType}}, loc);
}

DimExpr product(const Shape& s, size_t begin, size_t end) {
  DimExpr n(1);
  for (size_t i = begin; i < end; ++i) n = n * s[i];
  return n;
}

double largest_finite(DType t) {
  switch (t) {
    case DType::F16: return 65504.0;
    case DType::BF16: return 3.3895313892515355e38;
    case DType::F32: return FLT_MAX;
    default: return DBL_MAX;
  }
}

}  // namespace

std::vector<int64_t> Axes::normalize(size_t rank, const std::string& what) const {
  std::vector<int64_t> out;
  if (!axes_) {
    for (size_t i = 0; i < rank; ++i) out.push_back(static_cast<int64_t>(i));
    return out;
  }
  for (int64_t a : *axes_) out.push_back(normalize_axis(a, rank, what));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) throw ShapeError(what + ": repeated axis");
  return out;
}

#define EVOXC_UNARY_OP(name, op)                                           \
  SymbolicTensor name(const Operand& x, SrcLoc loc) {                      \
    const OpDef& def = EVOXC_OP(op);                                       \
    return unary_op(def, x, loc, def.operand_dtypes == DTypeClass::Float); \
  }
#include "evoxc/trace/unary_ops.inc"
#undef EVOXC_UNARY_OP

SymbolicTensor logical_not(const Operand& x, SrcLoc loc) {
  TraceContext& ctx = context_of(EVOXC_OP("logical_not"), {&x}, loc);
  return ctx.emit1(EVOXC_OP("logical_not"), {as_bool(lift(ctx, x, result_dtype({&x}), loc), loc)}, {}, loc);
}

SymbolicTensor gelu(const Operand& x, bool approximate, SrcLoc loc) {
  return unary_op(EVOXC_OP("gelu"), x, loc, true, {{"approximate", approximate}});
}

SymbolicTensor nan_to_num(const Operand& x, double nan, std::optional<double> posinf, std::optional<double> neginf,
                          SrcLoc loc) {
  TraceContext& ctx = context_of(EVOXC_OP("nan_to_num"), {&x}, loc);
  DType t = result_dtype({&x});
  if (!is_float(t)) return lift(ctx, x, t, loc);  // no NaN or inf to replace, as numpy
  double big = largest_finite(t);
  return ctx.emit1(EVOXC_OP("nan_to_num"), {lift(ctx, x, t, loc)},
                   {{"nan", nan}, {"posinf", posinf.value_or(big)}, {"neginf", neginf.value_or(-big)}}, loc);
}

#define EVOXC_BINARY_OP(name, op, rule)                                 \
  SymbolicTensor name(const Operand& a, const Operand& b, SrcLoc loc) { \
    return binary_op(EVOXC_OP(op), a, b, loc, BinaryRule::rule);        \
  }
#include "evoxc/trace/binary_ops.inc"
#undef EVOXC_BINARY_OP

SymbolicTensor right_shift(const Operand& a, const Operand& b, SrcLoc loc) {
  DType t = result_dtype({&a, &b});
  return binary_op(is_unsigned_int(t) ? EVOXC_OP("shift_right_logical") : EVOXC_OP("shift_right_arithmetic"), a, b,
                   loc);
}

SymbolicTensor select(const Operand& cond, const Operand& on_true, const Operand& on_false, SrcLoc loc) {
  TraceContext& ctx = context_of(EVOXC_OP("select"), {&cond, &on_true, &on_false}, loc);
  DType t = result_dtype({&on_true, &on_false});
  SymbolicTensor p = as_bool(lift(ctx, cond, result_dtype({&cond}), loc), loc);
  return ctx.emit1(EVOXC_OP("select"), {p, lift(ctx, on_true, t, loc), lift(ctx, on_false, t, loc)}, {}, loc);
}
SymbolicTensor where(const Operand& c, const Operand& a, const Operand& b, SrcLoc loc) { return select(c, a, b, loc); }

SymbolicTensor clamp(const Operand& x, const Operand& lo, const Operand& hi, SrcLoc loc) {
  TraceContext& ctx = context_of(EVOXC_OP("clamp"), {&x, &lo, &hi}, loc);
  DType t = result_dtype({&x, &lo, &hi});
  return ctx.emit1(EVOXC_OP("clamp"), {lift(ctx, x, t, loc), lift(ctx, lo, t, loc), lift(ctx, hi, t, loc)}, {}, loc);
}
SymbolicTensor clip(const Operand& x, const Operand& lo, const Operand& hi, SrcLoc loc) {
  return clamp(x, lo, hi, loc);
}

SymbolicTensor convert(const Operand& x, DType dtype, SrcLoc loc) {
  TraceContext& ctx = context_of(EVOXC_OP("convert"), {&x}, loc);
  if (!x.is_tensor()) return full_scalar(ctx, Shape{}, x, dtype, loc);
  return ctx.emit1(EVOXC_OP("convert"), {x.tensor()}, trace_internal::make_attrs("dtype", dtype), loc);
}
SymbolicTensor astype(const Operand& x, DType dtype, SrcLoc loc) { return convert(x, dtype, loc); }

SymbolicTensor bitcast_convert(const SymbolicTensor& x, DType dtype, SrcLoc loc) {
  return x.context()->emit1(EVOXC_OP("bitcast_convert"), {x}, {{"dtype", dtype}}, loc);
}

SymbolicTensor sum(const SymbolicTensor& x, Axes axes, bool keepdims, SrcLoc loc) {
  return reduce_op(EVOXC_OP("reduce_sum"), to_dtype(x, accumulator(x.dtype()), loc), axes, keepdims, loc);
}
SymbolicTensor prod(const SymbolicTensor& x, Axes axes, bool keepdims, SrcLoc loc) {
  return reduce_op(EVOXC_OP("reduce_prod"), to_dtype(x, accumulator(x.dtype()), loc), axes, keepdims, loc);
}
SymbolicTensor max(const SymbolicTensor& x, Axes axes, bool keepdims, SrcLoc loc) {
  return reduce_op(EVOXC_OP("reduce_max"), x, axes, keepdims, loc);
}
SymbolicTensor min(const SymbolicTensor& x, Axes axes, bool keepdims, SrcLoc loc) {
  return reduce_op(EVOXC_OP("reduce_min"), x, axes, keepdims, loc);
}
SymbolicTensor mean(const SymbolicTensor& x, Axes axes, bool keepdims, SrcLoc loc) {
  return reduce_op(EVOXC_OP("reduce_mean"), is_float(x.dtype()) ? x : to_dtype(x, kDefaultFloat, loc), axes, keepdims,
                   loc);
}
SymbolicTensor any(const SymbolicTensor& x, Axes axes, bool keepdims, SrcLoc loc) {
  return reduce_op(EVOXC_OP("reduce_any"), as_bool(x, loc), axes, keepdims, loc);
}
SymbolicTensor all(const SymbolicTensor& x, Axes axes, bool keepdims, SrcLoc loc) {
  return reduce_op(EVOXC_OP("reduce_all"), as_bool(x, loc), axes, keepdims, loc);
}
SymbolicTensor argmax(const SymbolicTensor& x, std::optional<int64_t> axis, bool keepdims, SrcLoc loc) {
  return arg_op(EVOXC_OP("argmax"), x, axis, keepdims, loc);
}
SymbolicTensor argmin(const SymbolicTensor& x, std::optional<int64_t> axis, bool keepdims, SrcLoc loc) {
  return arg_op(EVOXC_OP("argmin"), x, axis, keepdims, loc);
}

SymbolicTensor matmul(const Operand& a, const Operand& b, SrcLoc loc) {
  TraceContext& ctx = context_of(EVOXC_OP("dot"), {&a, &b}, loc);
  if (!a.is_tensor() || !b.is_tensor()) throw TraceError("matmul: both operands must be tensors, not scalars");
  DType t = result_dtype({&a, &b});
  return ctx.emit1(EVOXC_OP("dot"), {lift(ctx, a, t, loc), lift(ctx, b, t, loc)}, {}, loc);
}

SymbolicTensor dot(const Operand& a, const Operand& b, SrcLoc loc) {
  if (!a.is_tensor() || !b.is_tensor()) return multiply(a, b, loc);  // numpy: dot with a scalar multiplies
  const SymbolicTensor& x = a.tensor();
  const SymbolicTensor& y = b.tensor();
  if (x.rank() == 0 || y.rank() == 0) return multiply(a, b, loc);
  if (x.rank() <= 2 && y.rank() <= 2) return matmul(a, b, loc);
  if (y.rank() == 1) return matmul(a, b, loc);  // sum over the last axis of x and the only axis of y
  // N-D: result[i..., j..., m] = sum_k x[i..., k] * y[j..., k, m].
  size_t rx = x.rank(), ry = y.rank();
  const DimExpr& k = x.shape()[rx - 1];
  SymbolicTensor x2 = reshape(x, Shape{product(x.shape(), 0, rx - 1), k}, loc);
  std::vector<int64_t> perm{static_cast<int64_t>(ry - 2)};
  for (size_t i = 0; i + 2 < ry; ++i) perm.push_back(static_cast<int64_t>(i));
  perm.push_back(static_cast<int64_t>(ry - 1));
  SymbolicTensor yt = transpose(y, perm, loc);
  SymbolicTensor y2 = reshape(yt, Shape{y.shape()[ry - 2], product(y.shape(), 0, ry - 2) * y.shape()[ry - 1]}, loc);
  SymbolicTensor r = matmul(x2, y2, loc);
  std::vector<DimExpr> out(x.shape().begin(), x.shape().end() - 1);
  out.insert(out.end(), y.shape().begin(), y.shape().end() - 2);
  out.push_back(y.shape()[ry - 1]);
  return reshape(r, Shape(std::move(out)), loc);
}

SymbolicTensor reshape(const SymbolicTensor& x, const Shape& shape, SrcLoc loc) {
  std::vector<DimExpr> dims = shape.dims();
  int infer = -1;
  DimExpr known(1);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].is_const() && dims[i].value() == -1) {
      if (infer >= 0) throw ShapeError("reshape: at most one extent may be -1, got shape (" + shape.to_string() + ")");
      infer = static_cast<int>(i);
    } else {
      known = known * dims[i];
    }
  }
  if (infer >= 0) {
    DimExpr n = x.shape().num_elements();
    if (known.is_const() && known.value() == 0)
      throw ShapeError("reshape: cannot infer a -1 extent next to a zero-size extent");
    if (n.is_const() && known.is_const() && n.value() % known.value() != 0)
      throw ShapeError("reshape: cannot reshape " + std::to_string(n.value()) + " elements into (" + shape.to_string() +
                       ")");
    dims[static_cast<size_t>(infer)] = floordiv(n, known);
  }
  return x.context()->emit1(EVOXC_OP("reshape"), {x}, {{"shape", Shape(std::move(dims))}}, loc);
}

SymbolicTensor transpose(const SymbolicTensor& x, std::optional<std::vector<int64_t>> perm, SrcLoc loc) {
  std::vector<int64_t> p;
  if (perm) {
    for (int64_t a : *perm) p.push_back(normalize_axis(a, x.rank(), "transpose"));
  } else {
    for (size_t i = x.rank(); i > 0; --i) p.push_back(static_cast<int64_t>(i - 1));
  }
  return x.context()->emit1(EVOXC_OP("transpose"), {x}, {{"permutation", p}}, loc);
}

SymbolicTensor broadcast_in_dim(const SymbolicTensor& x, const Shape& shape, std::vector<int64_t> dims, SrcLoc loc) {
  return x.context()->emit1(EVOXC_OP("broadcast_in_dim"), {x},
                            {{"shape", shape}, {"broadcast_dimensions", std::move(dims)}}, loc);
}

SymbolicTensor broadcast_to(const Operand& x, const Shape& shape, SrcLoc loc) {
  TraceContext& ctx = context_of(EVOXC_OP("broadcast_in_dim"), {&x}, loc);
  SymbolicTensor t = lift(ctx, x, result_dtype({&x}), loc);
  if (t.rank() > shape.rank())
    throw ShapeError("broadcast_to: cannot broadcast rank " + std::to_string(t.rank()) + " to rank " +
                     std::to_string(shape.rank()));
  std::vector<int64_t> dims;
  for (size_t i = 0; i < t.rank(); ++i) dims.push_back(static_cast<int64_t>(shape.rank() - t.rank() + i));
  return broadcast_in_dim(t, shape, std::move(dims), loc);
}

SymbolicTensor expand_dims(const SymbolicTensor& x, Axes axes, SrcLoc loc) {
  if (axes.is_all()) throw ShapeError("expand_dims: name the new axes");
  // New axes are numbered in the result, whose rank is the operand's plus their count.
  std::vector<int64_t> ax = axes.normalize(x.rank() + axes.count(), "expand_dims");
  return x.context()->emit1(EVOXC_OP("expand_dims"), {x}, {{"axes", ax}}, loc);
}

SymbolicTensor squeeze(const SymbolicTensor& x, Axes axes, SrcLoc loc) {
  std::vector<int64_t> ax;
  if (axes.is_all()) {
    for (size_t i = 0; i < x.rank(); ++i)
      if (x.shape()[i].is_const() && x.shape()[i].value() == 1) ax.push_back(static_cast<int64_t>(i));
  } else {
    ax = axes.normalize(x.rank(), "squeeze");
  }
  return x.context()->emit1(EVOXC_OP("squeeze"), {x}, {{"axes", ax}}, loc);
}

SymbolicTensor slice(const SymbolicTensor& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
                     const std::vector<int64_t>& strides, SrcLoc loc) {
  size_t r = x.rank();
  if (start.size() > r || limit.size() > r || strides.size() > r)
    throw ShapeError("slice: more indices than the rank " + std::to_string(r));
  std::vector<int64_t> st(r, 0), sd(r, 1);
  std::vector<DimExpr> lim(x.shape().begin(), x.shape().end());
  for (size_t i = 0; i < r; ++i) {
    const DimExpr& ext = x.shape()[i];
    if (i < strides.size()) {
      if (strides[i] < 1) throw ShapeError("slice: strides must be >= 1 (got " + std::to_string(strides[i]) + ")");
      sd[i] = strides[i];
    }
    auto clampi = [&](int64_t v, int64_t e) {
      if (v < 0) v += e;
      return std::clamp<int64_t>(v, 0, e);
    };
    if (ext.is_const()) {
      int64_t e = ext.value();
      if (i < start.size()) st[i] = clampi(start[i], e);
      int64_t l = i < limit.size() ? clampi(limit[i], e) : e;
      lim[i] = DimExpr(std::max(l, st[i]));
    } else {
      if (i < start.size()) {
        if (start[i] < 0)
          throw ShapeError("slice: a negative start needs a static extent on axis " + std::to_string(i));
        st[i] = start[i];
      }
      if (i < limit.size() && limit[i] != std::numeric_limits<int64_t>::max()) {
        if (limit[i] < 0)
          throw ShapeError("slice: a negative limit needs a static extent on axis " + std::to_string(i));
        lim[i] = DimExpr(limit[i]);
      }
    }
  }
  return x.context()->emit1(EVOXC_OP("slice"), {x},
                            {{"start_indices", st}, {"limit_indices", Shape(std::move(lim))}, {"strides", sd}}, loc);
}

SymbolicTensor concatenate(const std::vector<SymbolicTensor>& xs, int64_t axis, SrcLoc loc) {
  if (xs.empty()) throw ShapeError("concatenate: needs at least one tensor");
  DType t = xs[0].dtype();
  for (const auto& x : xs) t = promote_types(t, x.dtype());
  std::vector<SymbolicTensor> ys;
  for (const auto& x : xs) ys.push_back(to_dtype(x, t, loc));
  int64_t a = normalize_axis(axis, xs[0].rank(), "concatenate");
  return xs[0].context()->emit1(EVOXC_OP("concatenate"), ys, {{"axis", a}}, loc);
}

SymbolicTensor iota(const Shape& shape, int64_t dimension, DType dtype, SrcLoc loc) {
  int64_t d = normalize_axis(dimension, shape.rank(), "iota");
  return TraceContext::current().emit1(EVOXC_OP("iota"), {}, {{"shape", shape}, {"dimension", d}, {"dtype", dtype}},
                                       loc);
}

SymbolicTensor fill(const Shape& shape, const Operand& value, std::optional<DType> dtype, SrcLoc loc) {
  if (value.is_tensor()) return broadcast_to(value.tensor(), shape, loc);
  TraceContext& ctx = TraceContext::current();
  return full_scalar(ctx, shape, value, dtype.value_or(scalar_default_dtype(value)), loc);
}
SymbolicTensor zeros_like(const SymbolicTensor& x, SrcLoc loc) {
  return full_scalar(*x.context(), x.shape(), Operand(0), x.dtype(), loc);
}
SymbolicTensor ones_like(const SymbolicTensor& x, SrcLoc loc) {
  return full_scalar(*x.context(), x.shape(), Operand(1), x.dtype(), loc);
}

SymbolicTensor constant(const Tensor& value, SrcLoc loc) {
  if (!value.defined()) throw TraceError("constant: undefined tensor");
  TraceContext& ctx = TraceContext::current();
  Location l = ctx.location_of(loc);
  warn("constant() embeds " + std::to_string(value.nbytes()) + " bytes of host data into the graph at " +
       l.to_string() + "; pass data as an input (TensorSpec) unless it is truly part of the program");
  return ctx.emit1(EVOXC_OP("constant"), {}, {{"value", value.to(Device::cpu())}}, loc);
}

}  // namespace evoxc
