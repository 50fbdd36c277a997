// Private to the transforms layer: emission helpers shared by the structure and layout rule families
// (src/transforms/rules_structure.cpp, rules_layout.cpp): batch-axis bookkeeping, reshapes, zero padding and the
// index-map transpose.
#pragma once

#include <functional>
#include <numeric>
#include <span>
#include <vector>

#include "transforms/families.h"

namespace evoxc::transforms::shape_rules {

using ST = SymbolicTensor;
using Ints = std::vector<int64_t>;

// Axes of the unbatched op as axes of the batched value (batch at 0).
inline Ints shifted(Ints v) {
  for (int64_t& a : v) ++a;
  return v;
}

// `v` with `x` in front (an attribute entry for the batch axis).
inline Ints with_front(int64_t x, const Ints& v) {
  Ints r{x};
  r.insert(r.end(), v.begin(), v.end());
  return r;
}

inline ST reshape_to(const ST& x, const Shape& s) {
  if (x.shape() == s) return x;
  return emit_op1(EVOXC_TOP("reshape"), {x}, {{"shape", s}});
}

// A cotangent whose extents are an equal but differently spelled DimExpr (symbolic extents after
// slice/pad arithmetic) gets exactly the operand's type: the transposition checks types exactly.
inline ST as_type(const ST& x, const TensorType& t) { return reshape_to(x, t.shape); }

inline ST bcast(const ST& x, const Shape& s, Ints dims) {
  if (x.shape() == s) return x;
  return emit_op1(EVOXC_TOP("broadcast_in_dim"), {x}, {{"shape", s}, {"broadcast_dimensions", std::move(dims)}});
}

// A rule's one result, batched at axis 0.
inline std::vector<BatchArg> batched(const ST& v) { return {BatchArg{v, true}}; }

// One operand, batched: the op again with `attrs` (its axes moved past the batch axis).
inline std::vector<BatchArg> batch_with(const Operation& op, std::span<const BatchArg> args, AttrMap attrs) {
  return batched(emit_like(op, std::vector<ST>{args[0].v}, attrs)[0]);
}

// A batching rule for a one-operand op whose IntList attributes `names` hold operand axes.
inline BatchRule batch_axes_attrs(std::vector<const char*> names) {
  return [names = std::move(names)](BatchContext&, const Operation& op, std::span<const BatchArg> args) {
    AttrMap a = op.attributes();
    for (const char* n : names) a[n] = shifted(attr_ints(op, n));
    return batch_with(op, args, std::move(a));
  };
}

inline std::vector<ST> ct_list(const Operation& op) { return std::vector<ST>(op.num_operands()); }

// A transpose rule for a one-operand op from the map of its result cotangent to its operand's.
inline TransposeRule unary_transpose(std::function<ST(const Operation& op, const ST& ct)> f) {
  return [f = std::move(f)](TransposeContext&, const Operation& op, std::span<const ST>, const std::vector<bool>&,
                            std::span<const ST> cts) {
    std::vector<ST> r = ct_list(op);
    r[0] = as_type(f(op, cts[0]), op.operand(0)->type());
    return r;
  };
}

// `x` extended by `extent` zeros at the end of `axis`, where the extent may be symbolic (pad takes
// only constant widths; concatenate takes any extent).
inline ST append_zeros(const ST& x, int64_t axis, const DimExpr& extent) {
  if (extent.is_const() && extent.value() == 0) return x;
  Shape zs = x.shape();
  zs[static_cast<size_t>(axis)] = extent;
  return emit_op1(EVOXC_TOP("concatenate"), {x, zeros(TensorType(x.dtype(), zs))}, {{"axis", axis}});
}

// x padded with zeros: `low` and `interior` constants, `high` any extents (symbolic ones appended
// as zeros after the constant pad).
inline ST zero_pad(const ST& x, const Ints& low, const std::vector<DimExpr>& high, const Ints& interior) {
  Ints hc(high.size(), 0);
  bool any = false;
  for (size_t i = 0; i < high.size(); ++i) {
    if (high[i].is_const()) hc[i] = high[i].value();
    any = any || low[i] != 0 || hc[i] != 0 || interior[i] != 0;
  }
  ST r = x;
  if (any)
    r = emit_op1(EVOXC_TOP("pad"), {x, scalar_like(0.0, x.dtype())},
                 {{"low", low}, {"high", hc}, {"interior", interior}, {"mode", std::string("constant")}});
  for (size_t i = 0; i < high.size(); ++i)
    if (!high[i].is_const()) r = append_zeros(r, static_cast<int64_t>(i), high[i]);
  return r;
}

}  // namespace evoxc::transforms::shape_rules
