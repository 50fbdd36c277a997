// StableHLO lowering rules: the reduce_linalg family (reductions, scans, dot, conv and linear algebra).
//
// What evoxc defines and StableHLO leaves open is written out here (docs/semantics.md):
// half floats accumulate in float32 and round once, argmax/argmin take the first index with
// NaN counting as the extreme, cholesky poisons a failed factor with NaN and zeroes the other
// triangle. The factorizations StableHLO has no op for (lu, qr and what builds on them: solve,
// inv, det, slogdet, matrix_exp, norm, matrix_rank) are not lowered here: lower() expands them
// first with their decompositions in EvoXIR (src/transforms/decompose_linalg.cpp), shared with
// every backend. eigh and svd, whose results depend on LAPACK's sign conventions, are deferred.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "backends/stablehlo/emitter.h"
#include "evoxc/ops/families.h"
#include "evoxc/ops/special_constants.h"

namespace evoxc::stablehlo {
namespace {

using Ints = std::vector<int64_t>;

// Half floats accumulate in float32 (semantics: "float16/bfloat16 accumulate in float32 and
// round once"); every other type in itself.
DType acc_type(DType t) { return t == DType::F16 || t == DType::BF16 ? DType::F32 : t; }

std::span<const Val> none() { return {}; }

TensorType retype(const TensorType& t, DType d) { return TensorType(d, t.shape); }

Val scalar(Emitter& e, const Attribute& v, DType t) { return e.splat(v, t, Shape{}); }

// `full` of `shape` with `v` (symbolic shapes broadcast a scalar).
Val fill(Emitter& e, const Attribute& v, DType t, const Shape& shape) { return e.splat(v, t, shape); }

Val unary(Emitter& e, const char* name, const Val& x) { return e.op1(name, {x}, "", x.type); }

// A binary elementwise op on operands of one shape (broadcast first where they differ).
Val binary(Emitter& e, const char* name, const Val& a, const Val& b) {
  return e.op1(name, {a, e.broadcast_to(b, a.type.shape)}, "", a.type);
}

Val compare(Emitter& e, const Val& a, const Val& b, const char* dir) {
  return e.op1("compare", {a, e.broadcast_to(b, a.type.shape)},
               std::string("{comparison_direction = #stablehlo<comparison_direction ") + dir + ">}",
               TensorType(DType::Bool, a.type.shape));
}

Val select(Emitter& e, const Val& p, const Val& a, const Val& b) {
  const Shape& s = p.type.shape;
  return e.op1("select", {p, e.broadcast_to(a, s), e.broadcast_to(b, s)}, "", TensorType(a.type.dtype, s));
}

Val is_nan(Emitter& e, const Val& x) { return compare(e, x, x, "NE"); }

// Reshape to `s`, dynamic_reshape where an extent is symbolic.
Val reshape(Emitter& e, const Val& x, const Shape& s) {
  if (x.type.shape == s) return x;
  TensorType to(x.type.dtype, s);
  if (s.is_static() && x.type.shape.is_static()) return e.op1("reshape", {x}, "", to);
  return e.op1("dynamic_reshape", {x, e.shape_tensor(s)}, "", to);
}

// Broadcast with an explicit map from operand axes to result axes (broadcast_in_dim).
Val broadcast_dims(Emitter& e, const Val& x, const Shape& s, const Ints& dims) {
  TensorType to(x.type.dtype, s);
  std::string a = "{broadcast_dimensions = " + i64_array(dims) + "}";
  if (s.is_static()) return e.op1("broadcast_in_dim", {x}, a, to);
  return e.op1("dynamic_broadcast_in_dim", {x, e.shape_tensor(s)}, a, to);
}

Val iota(Emitter& e, DType t, const Shape& s, size_t dim) {
  TensorType ty(t, s);
  std::string a = "{iota_dimension = " + std::to_string(dim) + " : i64}";
  if (s.is_static()) return e.op1("iota", none(), a, ty);
  return e.op1("dynamic_iota", {e.shape_tensor(s)}, a, ty);
}

Val transpose(Emitter& e, const Val& x, const Ints& perm) {
  Shape s;
  for (int64_t p : perm) s.dims().push_back(x.type.shape[static_cast<size_t>(p)]);
  return e.op1("transpose", {x}, "{permutation = " + i64_array(perm) + "}", TensorType(x.type.dtype, s));
}

// The type's lowest and highest values: the identities of maximum and minimum.
Attribute lowest(DType t) {
  if (is_float(t)) return -std::numeric_limits<double>::infinity();
  if (t == DType::Bool) return false;
  if (is_unsigned_int(t)) return int64_t{0};
  return bit_width(t) == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bit_width(t) - 1));
}
Attribute highest(DType t) {
  if (is_float(t)) return std::numeric_limits<double>::infinity();
  if (t == DType::Bool) return true;
  if (is_unsigned_int(t)) return int64_t{-1};  // converted as `full` does: all bits set
  return bit_width(t) == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bit_width(t) - 1)) - 1;
}

Shape drop_axes(const Shape& s, const Ints& axes) {
  Shape out;
  for (size_t i = 0; i < s.rank(); ++i) {
    bool gone = false;
    for (int64_t a : axes) gone = gone || a == static_cast<int64_t>(i);
    if (!gone) out.dims().push_back(s[i]);
  }
  return out;
}

// stablehlo.reduce of x over `dims` with the scalar op `fn` ("add", "maximum", ...) from `init`.
Val reduce(Emitter& e, const Val& x, const Ints& dims, const char* fn, const Attribute& init) {
  DType t = x.type.dtype;
  TensorType st = scalar_type(t), rt(t, drop_axes(x.type.shape, dims));
  Val i = scalar(e, init, t);
  std::vector<Val> operands{x, i};
  return e
      .op_with_regions("reduce", operands, "{dimensions = " + i64_array(dims) + "}", std::span(&rt, 1), 1,
                       [&](size_t) {
                         TensorType args[2] = {st, st};
                         e.region_block(args, [&](std::span<const Val> a) {
                           return std::vector<Val>{e.op1(fn, {a[0], a[1]}, "", st)};
                         });
                       })
      .front();
}

// The extent product of `axes` as a scalar of dtype t (a constant, or read from the inputs).
Val count_of(Emitter& e, const Shape& s, const Ints& axes, DType t) {
  DimExpr n(1);
  for (int64_t a : axes) n = n * s[static_cast<size_t>(a)];
  if (auto c = n.as_const()) return scalar(e, Attribute(*c), t);
  return e.convert(e.extent(n), t);
}

using Red = Combiner;

std::vector<Val> lower_reduction(Emitter& e, const Operation& op, std::span<const Val> in, Red r) {
  const TensorType& rt = op.result(0)->type();
  const Ints& axes = attr_ints(op.attributes(), "axes", op.name());
  DType t = in[0].type.dtype;
  bool b = t == DType::Bool;
  Val x = in[0];
  const char* fn = "add";
  Attribute init;
  switch (r) {
    case Red::Sum:
      x = e.convert(x, acc_type(t));
      init = int64_t{0};
      break;
    case Red::Prod:
      x = e.convert(x, acc_type(t));
      fn = "multiply";
      init = int64_t{1};
      break;
    // maximum/minimum propagate NaN (semantics: numpy's maximum); on bool they are or/and.
    case Red::Max:
      fn = b ? "or" : "maximum";
      init = lowest(t);
      break;
    case Red::Min:
      fn = b ? "and" : "minimum";
      init = highest(t);
      break;
    case Red::Or:
      fn = "or";
      init = false;
      break;
    case Red::And:
      fn = "and";
      init = true;
      break;
  }
  Val v = e.convert(reduce(e, x, axes, fn, init), t);
  return {reshape(e, v, rt.shape)};
}

// sum / count in the accumulator type (float32 for half floats), rounded once; empty: 0 / 0 = NaN.
std::vector<Val> lower_mean(Emitter& e, const Operation& op, std::span<const Val> in) {
  const TensorType& rt = op.result(0)->type();
  const Ints& axes = attr_ints(op.attributes(), "axes", op.name());
  DType t = in[0].type.dtype, a = acc_type(t);
  Val s = reduce(e, e.convert(in[0], a), axes, "add", int64_t{0});
  Val m = binary(e, "divide", s, count_of(e, in[0].type.shape, axes, a));
  return {reshape(e, e.convert(m, t), rt.shape)};
}

// The index (dtype `it`) of the extreme element along `axis`: a variadic reduce over (value,
// index). The combiner keeps the extreme value and, among equal ones, the lower index; a NaN is
// more extreme than any number (numpy). That order is total, so the combiner is associative and
// commutative and XLA may combine in any order.
Val arg_reduce(Emitter& e, Val x, int64_t axis, bool is_max, DType it) {
  if (x.type.dtype == DType::Bool) x = e.convert(x, DType::U8);  // false < true
  DType t = x.type.dtype;
  bool flt = is_float(t);
  Val idx = iota(e, it, x.type.shape, static_cast<size_t>(axis));
  Val vi = scalar(e, is_max ? lowest(t) : highest(t), t);
  Val ii = scalar(e, int64_t{0}, it);
  Shape out = drop_axes(x.type.shape, {axis});
  TensorType rts[2] = {TensorType(t, out), TensorType(it, out)};
  std::vector<Val> operands{x, idx, vi, ii};
  TensorType sv = scalar_type(t), si = scalar_type(it);
  std::vector<Val> res =
      e.op_with_regions("reduce", operands, "{dimensions = " + i64_array({axis}) + "}", rts, 1, [&](size_t) {
        TensorType args[4] = {sv, si, sv, si};
        e.region_block(args, [&](std::span<const Val> a) {
          const Val &av = a[0], &ai = a[1], &bv = a[2], &bi = a[3];
          Val better = compare(e, av, bv, is_max ? "GT" : "LT");
          Val tie = compare(e, av, bv, "EQ");
          if (flt) {
            Val an = is_nan(e, av), bn = is_nan(e, bv);
            better = binary(e, "or", better, binary(e, "and", an, unary(e, "not", bn)));
            tie = binary(e, "or", tie, binary(e, "and", an, bn));
          }
          Val pick = binary(e, "or", better, binary(e, "and", tie, compare(e, ai, bi, "LT")));
          return std::vector<Val>{select(e, pick, av, bv), select(e, pick, ai, bi)};
        });
      });
  return res[1];
}

// An empty symbolic axis is a ValidationError on the interpreter; XLA's reduce gives the init
// index 0 there (a run-time check StableHLO cannot raise).
std::vector<Val> lower_arg(Emitter& e, const Operation& op, std::span<const Val> in, bool is_max) {
  const TensorType& rt = op.result(0)->type();
  int64_t axis = attr_int(op.attributes(), "axis", op.name());
  return {reshape(e, arg_reduce(e, in[0], axis, is_max, rt.dtype), rt.shape)};
}

// ---- scans ----

// Inclusive scan along `axis`. A static extent n is a reduce_window of window n padded with n - 1
// identities before (after, for reverse) each position (as jax lowers cumsum; XLA rewrites that
// pattern into a log-depth scan). A symbolic extent cannot be a window size: there every output
// i combines the masked row j <= i (j >= i reversed) of an (n, n) broadcast: O(n^2) memory.
Val scan(Emitter& e, const Val& x, size_t axis, bool reverse, const char* fn, const Attribute& init) {
  const Shape& s = x.type.shape;
  size_t r = s.rank();
  DType t = x.type.dtype;
  const DimExpr& n = s[axis];
  if (auto c = n.as_const()) {
    if (*c == 0) return x;  // empty: nothing to combine
    Ints window(r, 1), strides(r, 1);
    window[axis] = *c;
    std::string pad = "dense<[";
    for (size_t i = 0; i < r; ++i) {
      int64_t lo = i == axis && !reverse ? *c - 1 : 0, hi = i == axis && reverse ? *c - 1 : 0;
      pad += (i ? ", [" : "[") + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    }
    pad += "]> : tensor<" + std::to_string(r) + "x2xi64>";
    TensorType st = scalar_type(t);
    Val i = scalar(e, init, t);
    std::vector<Val> operands{x, i};
    return e
        .op_with_regions("reduce_window", operands,
                         "{padding = " + pad + ", window_dimensions = " + i64_array(window) +
                             ", window_strides = " + i64_array(strides) + "}",
                         std::span(&x.type, 1), 1,
                         [&](size_t) {
                           TensorType args[2] = {st, st};
                           e.region_block(args, [&](std::span<const Val> a) {
                             return std::vector<Val>{e.op1(fn, {a[0], a[1]}, "", st)};
                           });
                         })
        .front();
  }
  // (.., n_i, n_j, ..): x along j, masked by j <= i (forward) or j >= i (reverse), reduced over j.
  Shape big;
  Ints dims;
  for (size_t i = 0; i < r; ++i) {
    big.dims().push_back(s[i]);
    if (i == axis) big.dims().push_back(n);
    dims.push_back(static_cast<int64_t>(i < axis ? i : i + 1));
  }
  Val xb = broadcast_dims(e, x, big, dims);
  Val oi = iota(e, DType::I64, big, axis), oj = iota(e, DType::I64, big, axis + 1);
  Val keep = compare(e, oj, oi, reverse ? "GE" : "LE");
  Val masked = select(e, keep, xb, fill(e, init, t, big));
  return reduce(e, masked, {static_cast<int64_t>(axis + 1)}, fn, init);
}

std::vector<Val> lower_scan(Emitter& e, const Operation& op, std::span<const Val> in, Combiner k) {
  size_t axis = static_cast<size_t>(attr_int(op.attributes(), "axis", op.name()));
  bool reverse = attr_bool(op.attributes(), "reverse", op.name());
  DType t = in[0].type.dtype;
  bool b = t == DType::Bool;
  switch (k) {
    case Combiner::Sum: return {e.convert(scan(e, e.convert(in[0], acc_type(t)), axis, reverse, "add", int64_t{0}), t)};
    case Combiner::Prod:
      return {e.convert(scan(e, e.convert(in[0], acc_type(t)), axis, reverse, "multiply", int64_t{1}), t)};
    case Combiner::Max: return {scan(e, in[0], axis, reverse, b ? "or" : "maximum", lowest(t))};
    case Combiner::Min: return {scan(e, in[0], axis, reverse, b ? "and" : "minimum", highest(t))};
    case Combiner::Or:
    case Combiner::And: break;
  }
  throw InternalError("stablehlo: no running scan with combiner or/and");
}

// m + log(sum(exp(x - m))) in float64, rounded once; m = -inf (empty or all -inf) gives -inf,
// m = +inf gives +inf and a NaN gives NaN (maximum propagates it), so a non-finite m is the result.
std::vector<Val> lower_logsumexp(Emitter& e, const Operation& op, std::span<const Val> in) {
  const TensorType& rt = op.result(0)->type();
  const Ints& axes = attr_ints(op.attributes(), "axes", op.name());
  DType t = in[0].type.dtype;
  Val x = e.convert(in[0], DType::F64);
  const Shape& s = x.type.shape;
  Val m = reduce(e, x, axes, "maximum", lowest(DType::F64));
  Ints kept;
  for (size_t i = 0; i < s.rank(); ++i) {
    bool red = false;
    for (int64_t a : axes) red = red || a == static_cast<int64_t>(i);
    if (!red) kept.push_back(static_cast<int64_t>(i));
  }
  Val mb = broadcast_dims(e, m, s, kept);
  Val sum = reduce(e, unary(e, "exponential", binary(e, "subtract", x, mb)), axes, "add", int64_t{0});
  Val v = binary(e, "add", m, unary(e, "log", sum));
  Val finite = e.op1("is_finite", {m}, "", retype(m.type, DType::Bool));
  return {reshape(e, e.convert(select(e, finite, v, m), t), rt.shape)};
}

// ---- dot ----

const char* kHighest = "precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]";

// `name = [..]` appended to a #stablehlo.dot<...> body; an empty list is left out (the parser
// wants it so, as the printer writes it).
void dims_field(std::string& s, const char* name, const Ints& v) {
  if (v.empty()) return;
  s += (s.back() == '<' ? "" : ", ") + std::string(name) + " = [";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  s += "]";
}

// stablehlo.dot_general at full precision (no reduced-precision passes on any backend), in the
// accumulator type: half floats convert to float32 and the result rounds once. Integer products
// and sums wrap in the operand type.
Val dot_general(Emitter& e, const Val& a, const Val& b, const Ints& lc, const Ints& rc, const Ints& lb, const Ints& rb,
                const TensorType& rt) {
  DType acc = acc_type(rt.dtype);
  std::string dn = "#stablehlo.dot<";
  dims_field(dn, "lhs_batching_dimensions", lb);
  dims_field(dn, "rhs_batching_dimensions", rb);
  dims_field(dn, "lhs_contracting_dimensions", lc);
  dims_field(dn, "rhs_contracting_dimensions", rc);
  dn += ">";
  Val r = e.op1("dot_general", {e.convert(a, acc), e.convert(b, acc)},
                "{dot_dimension_numbers = " + dn + ", " + kHighest + "}", retype(rt, acc));
  return e.convert(r, rt.dtype);
}

std::vector<Val> lower_dot_general(Emitter& e, const Operation& op, std::span<const Val> in) {
  const AttrMap& at = op.attributes();
  const std::string& n = op.name();
  return {dot_general(e, in[0], in[1], attr_ints(at, "lhs_contracting_dims", n),
                      attr_ints(at, "rhs_contracting_dims", n), attr_ints(at, "lhs_batch_dims", n),
                      attr_ints(at, "rhs_batch_dims", n), op.result(0)->type())};
}

// numpy matmul: the batch dims broadcast (both operands to the result's batch shape), a 1-D
// operand contracts its only axis and contributes no free dim.
std::vector<Val> lower_dot(Emitter& e, const Operation& op, std::span<const Val> in) {
  const TensorType& rt = op.result(0)->type();
  Val a = in[0], b = in[1];
  size_t ra = a.type.rank(), rb = b.type.rank();
  size_t nb = (ra >= 2 && rb >= 2) ? rt.rank() - 2 : 0;
  Shape batch(std::vector<DimExpr>(rt.shape.dims().begin(), rt.shape.dims().begin() + static_cast<long>(nb)));
  if (ra >= 2 && rb >= 2) {
    Shape sa = batch, sb = batch;
    sa.dims().push_back(a.type.shape[ra - 2]);
    sa.dims().push_back(a.type.shape[ra - 1]);
    sb.dims().push_back(b.type.shape[rb - 2]);
    sb.dims().push_back(b.type.shape[rb - 1]);
    a = e.broadcast_to(a, sa);
    b = e.broadcast_to(b, sb);
  }
  Ints bd;
  for (size_t i = 0; i < nb; ++i) bd.push_back(static_cast<int64_t>(i));
  int64_t lc = static_cast<int64_t>(a.type.rank()) - 1;
  int64_t rc = b.type.rank() == 1 ? 0 : static_cast<int64_t>(b.type.rank()) - 2;
  return {dot_general(e, a, b, {lc}, {rc}, bd, bd, rt)};
}

// numpy.trace: the elements with j - i == offset (i on axis1, j on axis2) summed over both axes;
// integers wrap in their type, floats sum in float64 and round once (semantics).
std::vector<Val> lower_trace(Emitter& e, const Operation& op, std::span<const Val> in) {
  const AttrMap& at = op.attributes();
  int64_t off = attr_int(at, "offset", op.name());
  int64_t a1 = attr_int(at, "axis1", op.name()), a2 = attr_int(at, "axis2", op.name());
  DType t = in[0].type.dtype;
  Val x = e.convert(in[0], is_float(t) ? DType::F64 : t);
  const Shape& s = x.type.shape;
  Val i = iota(e, DType::I64, s, static_cast<size_t>(a1)), j = iota(e, DType::I64, s, static_cast<size_t>(a2));
  Val on = compare(e, binary(e, "subtract", j, i), scalar(e, Attribute(off), DType::I64), "EQ");
  Val kept = select(e, on, x, fill(e, int64_t{0}, x.type.dtype, s));
  Val r = reduce(e, kept, {std::min(a1, a2), std::max(a1, a2)}, "add", int64_t{0});
  return {e.convert(r, t)};
}

bool has_zero_extent(const Shape& s) {
  for (const DimExpr& d : s)
    if (d.is_const() && d.value() == 0) return true;
  return false;
}

std::string padding_attr(const Ints& lo_hi) {
  std::string s = "dense<[";
  for (size_t i = 0; i + 1 < lo_hi.size(); i += 2)
    s += (i ? ", [" : "[") + std::to_string(lo_hi[i]) + ", " + std::to_string(lo_hi[i + 1]) + "]";
  return s + "]> : tensor<" + std::to_string(lo_hi.size() / 2) + "x2xi64>";
}

// conv: stablehlo.convolution with evoxc's fixed layouts NC(spatial) / OI(window) / NC(spatial).
// Negative padding (a crop) is written as a stablehlo.pad of the lhs, which takes the lhs dilation
// as interior padding first and then the (possibly negative) edges, exactly the coordinate rule of
// the semantics; the convolution then sees no padding and no lhs dilation.
std::vector<Val> lower_conv(Emitter& e, const Operation& op, std::span<const Val> in) {
  const AttrMap& at = op.attributes();
  const std::string& name = op.name();
  const TensorType& rt = op.result(0)->type();
  Ints strides = attr_ints(at, "window_strides", name), pad = attr_ints(at, "padding", name);
  Ints ldil = attr_ints(at, "lhs_dilation", name), rdil = attr_ints(at, "rhs_dilation", name);
  int64_t groups = attr_int(at, "feature_group_count", name);
  const Shape& ws = in[1].type.shape;
  size_t n = rt.rank() - 2;
  // No output, or no taps in the window (an empty window or no input features per group): zeros.
  bool empty = has_zero_extent(rt.shape) || (ws[1].is_const() && ws[1].value() == 0);
  for (size_t i = 0; i < n; ++i) empty = empty || (ws[i + 2].is_const() && ws[i + 2].value() == 0);
  if (empty) return {fill(e, int64_t{0}, rt.dtype, rt.shape)};
  DType acc = acc_type(rt.dtype);
  Val lhs = e.convert(in[0], acc), rhs = e.convert(in[1], acc);
  bool crop = false;
  for (int64_t p : pad) crop = crop || p < 0;
  if (crop) {
    Ints lo{0, 0}, hi{0, 0}, interior{0, 0};
    Shape ps{lhs.type.shape[0], lhs.type.shape[1]};
    for (size_t i = 0; i < n; ++i) {
      lo.push_back(pad[2 * i]);
      hi.push_back(pad[2 * i + 1]);
      interior.push_back(ldil[i] - 1);
      // XLA's dilated extent (b - 1) * d + 1, 0 for an empty b, as conv's inference writes it.
      const DimExpr& b = lhs.type.shape[i + 2];
      int64_t dl = ldil[i];
      DimExpr dil = b.is_const() ? DimExpr(b.value() == 0 ? 0 : (b.value() - 1) * dl + 1)
                                 : max(b * DimExpr(dl) - DimExpr(dl - 1), DimExpr(0));
      ps.dims().push_back(dil + DimExpr(pad[2 * i]) + DimExpr(pad[2 * i + 1]));
    }
    lhs = e.op1("pad", {lhs, scalar(e, int64_t{0}, acc)},
                "{edge_padding_high = " + i64_array(hi) + ", edge_padding_low = " + i64_array(lo) +
                    ", interior_padding = " + i64_array(interior) + "}",
                TensorType(acc, ps));
    pad.assign(2 * n, 0);
    ldil.assign(n, 1);
  }
  std::string sp;
  for (size_t i = 0; i < n; ++i) sp += ", " + std::to_string(i);
  std::string dn = "#stablehlo.conv<[b, f" + sp + "]x[o, i" + sp + "]->[b, f" + sp + "]>";
  Val r = e.op1("convolution", {lhs, rhs},
                "{batch_group_count = 1 : i64, dimension_numbers = " + dn +
                    ", feature_group_count = " + std::to_string(groups) + " : i64, lhs_dilation = " + i64_array(ldil) +
                    ", padding = " + padding_attr(pad) + ", " + kHighest + ", rhs_dilation = " + i64_array(rdil) +
                    ", window_strides = " + i64_array(strides) + "}",
                retype(rt, acc));
  return {e.convert(r, rt.dtype)};
}

// The last two axes swapped.
Val transpose_last(Emitter& e, const Val& x) {
  size_t r = x.type.rank();
  Ints perm;
  for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(i));
  std::swap(perm[r - 2], perm[r - 1]);
  return transpose(e, x, perm);
}

// Per matrix of a (..., M, N) boolean: whether any element is set, broadcast back to (..., M, N).
Val any_per_matrix(Emitter& e, const Val& p) {
  size_t r = p.type.rank();
  Val any = reduce(e, p, {static_cast<int64_t>(r - 2), static_cast<int64_t>(r - 1)}, "or", false);
  Ints batch;
  for (size_t i = 0; i + 2 < r; ++i) batch.push_back(static_cast<int64_t>(i));
  return broadcast_dims(e, any, p.type.shape, batch);
}

// cholesky: only the triangle `lower` names is read (mirrored into the other before the op, so the
// result cannot depend on it), the other triangle of the result is 0, and a matrix LAPACK's potrf
// refuses (a pivot that is not positive: a diagonal entry of the factor that is not > 0) or whose
// factor has a NaN or inf is NaN everywhere. Half floats factor in float32.
std::vector<Val> lower_cholesky(Emitter& e, const Operation& op, std::span<const Val> in) {
  bool lower = attr_bool(op.attributes(), "lower", op.name());
  DType t = in[0].type.dtype, acc = acc_type(t);
  if (has_zero_extent(in[0].type.shape)) return {in[0]};
  Val a = e.convert(in[0], acc);
  const Shape& s = a.type.shape;
  size_t r = s.rank();
  Val rows = iota(e, DType::I64, s, r - 2), cols = iota(e, DType::I64, s, r - 1);
  Val tri = compare(e, rows, cols, lower ? "GE" : "LE");
  Val sym = select(e, tri, a, transpose_last(e, a));
  Val l = e.op1("cholesky", {sym}, std::string("{lower = ") + (lower ? "true" : "false") + "}", a.type);
  Val zero = fill(e, int64_t{0}, acc, s);
  l = select(e, tri, l, zero);
  Val not_finite = unary(e, "not", e.op1("is_finite", {l}, "", retype(l.type, DType::Bool)));
  Val bad_pivot = binary(e, "and", compare(e, rows, cols, "EQ"), unary(e, "not", compare(e, l, zero, "GT")));
  Val bad = any_per_matrix(e, binary(e, "or", not_finite, bad_pivot));
  Val out = select(e, bad, fill(e, std::numeric_limits<double>::quiet_NaN(), acc, s), l);
  return {e.convert(out, t)};
}

// triangular_solve maps to stablehlo.triangular_solve one to one (it reads only the triangle
// `lower` names, and with unit_diagonal not the diagonal); half floats solve in float32.
Val triangular_solve(Emitter& e, const Val& a, const Val& b, bool left, bool lower, bool trans, bool unit) {
  auto tf = [](bool v) { return v ? std::string("true") : std::string("false"); };
  return e.op1("triangular_solve", {a, b},
               "{left_side = " + tf(left) + ", lower = " + tf(lower) + ", transpose_a = #stablehlo<transpose " +
                   (trans ? "TRANSPOSE" : "NO_TRANSPOSE") + ">, unit_diagonal = " + tf(unit) + "}",
               b.type);
}

std::vector<Val> lower_triangular_solve(Emitter& e, const Operation& op, std::span<const Val> in) {
  const AttrMap& at = op.attributes();
  const std::string& n = op.name();
  DType t = in[1].type.dtype, acc = acc_type(t);
  if (has_zero_extent(in[1].type.shape)) return {in[1]};
  Val x =
      triangular_solve(e, e.convert(in[0], acc), e.convert(in[1], acc), attr_bool(at, "left_side", n),
                       attr_bool(at, "lower", n), attr_bool(at, "transpose_a", n), attr_bool(at, "unit_diagonal", n));
  return {e.convert(x, t)};
}

}  // namespace

void add_reduce_linalg_rules(Table& t) {
  auto red = [&t](const char* name, Red r) {
    t.set(name,
          [r](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_reduction(e, op, in, r); });
  };
  for (const CombinerOp& r : kReductionOps) red(r.op, r.combiner);
  t.set("reduce_mean", lower_mean);
  t.set("argmax", [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_arg(e, op, in, true); });
  t.set("argmin", [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_arg(e, op, in, false); });
  auto sc = [&t](const char* name, Combiner k) {
    t.set(name, [k](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_scan(e, op, in, k); });
  };
  for (const CombinerOp& s : kScanOps) sc(s.op, s.combiner);
  t.set("reduce_logsumexp", lower_logsumexp);
  t.set("dot", lower_dot);
  t.set("dot_general", lower_dot_general);
  t.set("trace", lower_trace);
  t.set("conv", lower_conv);
  t.set("cholesky", lower_cholesky);
  t.set("triangular_solve", lower_triangular_solve);
  t.defer("eigh",
          std::string("StableHLO has no symmetric eigensolver (jax lowers eigh on CPU to a LAPACK syevd custom call "
                      "whose ABI is jaxlib's private one), and ") +
              kEighDeferral);
  t.defer("svd", std::string("StableHLO has no SVD op (jax lowers svd on CPU to a LAPACK gesdd custom call whose ABI "
                             "is jaxlib's private one), and ") +
                     kSvdDeferral);
}

}  // namespace evoxc::stablehlo
