// Transform rules of the reduce family: reduce_*, argmax/argmin, the scans (cum*) and reduce_logsumexp.
#include <algorithm>
#include <limits>
#include <numeric>

#include "evoxc/trace/indexing.h"
#include "evoxc/trace/layout.h"
#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

using ST = SymbolicTensor;

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// ---- batching: the batch axis is axis 0, so every axis attribute moves up by one; keepdims,
// reverse and index_dtype carry over unchanged.
std::vector<BatchArg> batch_shift_axes(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  AttrMap attrs = op.attributes();
  if (attrs.count("axes")) {
    std::vector<int64_t> axes = attr_ints(op, "axes");
    for (int64_t& a : axes) ++a;
    attrs["axes"] = axes;
  }
  if (attrs.count("axis")) attrs["axis"] = attr_int(op, "axis") + 1;
  std::vector<ST> vals{ctx.materialize(args[0])};
  return {{emit_like(op, vals, attrs)[0], true}};
}

// ---- jvp helpers

// A scan op over `x` along `axis` (the op exactly: no accumulator widening as cumsum() does).
ST scan(const OpDef& def, const ST& x, int64_t axis, bool reverse) {
  return emit_op1(def, {x}, {{"axis", axis}, {"reverse", reverse}});
}

// A reduction's result `y` with the reduced axes kept (unit extents), so it broadcasts against the operand.
ST keep_reduced(const ST& y, const Operation& op) {
  std::vector<int64_t> axes = attr_ints(op, "axes");
  if (attr_flag(op, "keepdims") || axes.empty()) return y;
  return emit_op1(EVOXC_TOP("expand_dims"), {y}, {{"axes", axes}});
}

// The tangent of a reduction whose derivative in each operand element is the weight `w` (x's shape):
// sum(t * w) over the op's axes, with the op's keepdims.
ST weighted_sum(const Operation& op, const ST& t, const ST& w) {
  return reduce_sum_keep(t * w, attr_ints(op, "axes"), attr_flag(op, "keepdims"));
}

// reduce_max / reduce_min: the tangent of the extreme element; ties share it equally (JAX's
// convention t * mask / count, so the derivative of max(x, x) is 1/2 per copy and sums to 1). A NaN
// extreme matches no element: 0/0 weights, so the tangent is NaN as the value is.
JvpRule extreme_jvp() {
  return [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    const ST& x = p[0];
    ST mask = convert(equal(x, keep_reduced(y[0], op)), x.dtype());
    ST count = reduce_sum_keep(mask, attr_ints(op, "axes"), /*keepdims=*/true);
    return JvpResult{y, {weighted_sum(op, t[0], mask / count)}};
  };
}

// reduce_logsumexp: the softmax-weighted sum of the tangent, exp(x - y). Elements at -inf weigh 0
// (exp(x) = 0 there), so an all -inf (or empty) slice, whose value is -inf, gets a zero tangent
// rather than exp(-inf + inf) = NaN.
JvpRule logsumexp_jvp() {
  return [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    const ST& x = p[0];
    ST neg_inf = logical_and(isinf(x), less(x, 0.0));
    ST w = select(neg_inf, zeros_like(x), exp(x - keep_reduced(y[0], op)));
    return JvpResult{y, {weighted_sum(op, t[0], w)}};
  };
}

// The products of the other elements along the last axis of `x` (exact with zeros): the exclusive
// prefix product times the exclusive suffix product, each a cumprod shifted by one with 1 shifted in.
ST products_of_others(const ST& x) {
  auto last = static_cast<int64_t>(x.rank()) - 1;
  std::vector<int64_t> none(x.rank(), 0), one_low(x.rank(), 0), one_high(x.rank(), 0);
  one_low[static_cast<size_t>(last)] = 1;
  one_high[static_cast<size_t>(last)] = 1;
  std::vector<int64_t> crop_low = none, crop_high = none;
  crop_low[static_cast<size_t>(last)] = -1;
  crop_high[static_cast<size_t>(last)] = -1;
  // before[i] = x[0] ... x[i-1]; after[i] = x[i+1] ... x[n-1].
  ST before = pad_general(scan(EVOXC_TOP("cumprod"), x, last, false), 1.0, one_low, crop_high);
  ST after = pad_general(scan(EVOXC_TOP("cumprod"), x, last, true), 1.0, crop_low, one_high);
  return before * after;
}

// reduce_prod: sum(t * prod(others)) with the products of the others built from prefix and suffix
// products (no division), so it is exact where the operand has zeros (one zero: only its own
// element has a non-zero derivative; two or more: all derivatives are zero). The reduced axes are
// moved last and flattened into one, and the weights moved back.
JvpRule prod_jvp() {
  return [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    const ST& x = p[0];
    std::vector<int64_t> axes = attr_ints(op, "axes");
    if (axes.empty()) return JvpResult{y, {t[0]}};  // a product over nothing is the identity
    auto rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> perm;
    std::vector<DimExpr> flat;
    DimExpr n(int64_t{1});
    for (int64_t i = 0; i < rank; ++i)
      if (!contains(axes, i)) {
        perm.push_back(i);
        flat.push_back(x.shape()[static_cast<size_t>(i)]);
      }
    for (int64_t a : axes) n = n * x.shape()[static_cast<size_t>(a)];
    perm.insert(perm.end(), axes.begin(), axes.end());
    flat.push_back(n);
    bool identity = std::is_sorted(perm.begin(), perm.end());
    ST moved = identity ? x : transpose(x, perm);
    ST others = reshape(products_of_others(reshape(moved, Shape(flat))), moved.shape());
    if (!identity) {
      std::vector<int64_t> inverse(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
      others = transpose(others, inverse);
    }
    return JvpResult{y, {weighted_sum(op, t[0], others)}};
  };
}

// cumprod: dy[i] = sum_{j <= i} t[j] prod_{k <= i, k != j} x[k], exact with zeros. With Z[i] the
// number of zeros in x[..i] and P~ the running product of x with its zeros replaced by 1:
//   Z[i] == 0: dy[i] = y[i] * cumsum(t / x)[i];
//   Z[i] == 1: only the zero's own tangent survives: dy[i] = P~[i] * cumsum(t * (x == 0))[i];
//   Z[i] >= 2: dy[i] = 0.
// (All in scan order, so `reverse` only passes through.) The first branch divides by the non-zero
// elements, so it can lose accuracy where 1/x overflows; it is exact in exact arithmetic.
JvpRule cumprod_jvp() {
  return [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    const ST& x = p[0];
    int64_t axis = attr_int(op, "axis");
    bool reverse = attr_flag(op, "reverse");
    ST is_zero = equal(x, 0.0);
    ST nz = select(is_zero, ones_like(x), x);
    ST ptil = scan(EVOXC_TOP("cumprod"), nz, axis, reverse);
    ST zeros_seen = scan(EVOXC_TOP("cumsum"), convert(is_zero, DType::I32), axis, reverse);
    ST none = scan(EVOXC_TOP("cumsum"), t[0] / nz, axis, reverse) * ptil;
    ST one = scan(EVOXC_TOP("cumsum"), t[0] * convert(is_zero, x.dtype()), axis, reverse) * ptil;
    ST z = zeros(op.result(0)->type());
    ST dy = select(equal(zeros_seen, 0), none, select(equal(zeros_seen, 1), one, z));
    return JvpResult{y, {dy}};
  };
}

// cummax / cummin: the tangent of the element that is the running extreme. On a tie that is the
// LATEST element in scan order (the kernel's combine keeps the new element unless the running value
// is strictly more extreme), and once a NaN appears it is the first NaN (the kernel keeps it). The
// element reported at i is the last j <= i (in scan order) with x[j] == y[j] (or the first NaN): a
// running max/min of the marked positions gives its index, and a gather picks its tangent.
JvpRule cumextreme_jvp() {
  return [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    const ST& x = p[0];
    int64_t axis = attr_int(op, "axis");
    bool reverse = attr_flag(op, "reverse");
    ST nan = isnan(x);
    ST nans_seen = scan(EVOXC_TOP("cumsum"), convert(nan, DType::I32), axis, reverse);
    ST marked = logical_or(equal(x, y[0]), logical_and(nan, equal(nans_seen, 1)));
    ST pos = iota(x.shape(), axis, DType::I64);
    ST idx;
    if (reverse) {
      ST never = fill(x.shape(), std::numeric_limits<int64_t>::max(), DType::I64);
      idx = scan(EVOXC_TOP("cummin"), select(marked, pos, never), axis, true);
    } else {
      ST never = fill(x.shape(), int64_t{-1}, DType::I64);
      idx = scan(EVOXC_TOP("cummax"), select(marked, pos, never), axis, false);
    }
    return JvpResult{y, {take_along_axis(t[0], idx, axis)}};
  };
}

// ---- transposes

// The cotangent of a reduction's result spread back over the reduced axes (the operand's type).
ST broadcast_back(const ST& ct, const Operation& op) {
  const TensorType& in = op.operand(0)->type();
  std::vector<int64_t> axes = attr_ints(op, "axes");
  bool keep = attr_flag(op, "keepdims");
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < static_cast<int64_t>(in.rank()); ++i)
    if (keep || !contains(axes, i)) dims.push_back(i);
  if (ct.shape() == in.shape) return ct;
  return broadcast_in_dim(ct, in.shape, dims);
}

// The number of elements a reduction averages, as a scalar of dtype `t`: a constant where the reduced
// extents are, else counted at run time (an int64 sum of ones over the reduced extents).
ST reduced_count(const Operation& op, DType t) {
  const TensorType& in = op.operand(0)->type();
  std::vector<int64_t> axes = attr_ints(op, "axes");
  DimExpr n(int64_t{1});
  std::vector<DimExpr> extents;
  for (int64_t a : axes) {
    n = n * in.shape[static_cast<size_t>(a)];
    extents.push_back(in.shape[static_cast<size_t>(a)]);
  }
  if (n.is_const()) return scalar_like(static_cast<double>(n.value()), t);
  Shape s(extents);
  std::vector<int64_t> all(extents.size());
  std::iota(all.begin(), all.end(), 0);
  ST ones = fill(s, int64_t{1}, DType::I64);
  return convert(emit_op1(EVOXC_TOP("reduce_sum"), {ones}, {{"axes", all}, {"keepdims", false}}), t);
}

std::vector<ST> one_ct(const ST& c) { return {c}; }

void install_transposes(TransposeTable& tt) {
  tt.set("reduce_sum", [](TransposeContext&, const Operation& op, std::span<const ST>, const std::vector<bool>&,
                          std::span<const ST> cts) { return one_ct(broadcast_back(cts[0], op)); });
  // mean = sum / n: the cotangent divided by the count, spread back (n may be symbolic).
  tt.set("reduce_mean", [](TransposeContext&, const Operation& op, std::span<const ST>, const std::vector<bool>&,
                           std::span<const ST> cts) {
    return one_ct(broadcast_back(cts[0] / reduced_count(op, cts[0].dtype()), op));
  });
  // cumsum's transpose is the cumsum in the other direction (JAX).
  tt.set("cumsum", [](TransposeContext&, const Operation& op, std::span<const ST>, const std::vector<bool>&,
                      std::span<const ST> cts) {
    return one_ct(scan(EVOXC_TOP("cumsum"), cts[0], attr_int(op, "axis"), !attr_flag(op, "reverse")));
  });
}

}  // namespace

void install_reduce_rules(RuleTables& t) {
  const char* ops[] = {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min",      "reduce_mean",
                       "reduce_any", "reduce_all",  "argmax",     "argmin",          "cumsum",
                       "cumprod",    "cummax",      "cummin",     "reduce_logsumexp"};
  for (const char* op : ops) t.batch.set(op, batch_shift_axes);
  t.jvp.set("reduce_sum", linear_jvp);
  t.jvp.set("reduce_mean", linear_jvp);
  t.jvp.set("cumsum", linear_jvp);
  t.jvp.set("reduce_prod", prod_jvp());
  t.jvp.set("reduce_max", extreme_jvp());
  t.jvp.set("reduce_min", extreme_jvp());
  t.jvp.set("reduce_logsumexp", logsumexp_jvp());
  t.jvp.set("cumprod", cumprod_jvp());
  t.jvp.set("cummax", cumextreme_jvp());
  t.jvp.set("cummin", cumextreme_jvp());
  // Bool and integer results carry no tangent: the driver never asks these for one.
  for (const char* op : {"reduce_any", "reduce_all", "argmax", "argmin"}) t.jvp.set(op, zero_jvp);
  install_transposes(t.transpose);
}

}  // namespace evoxc::transforms
