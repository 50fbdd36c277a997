// OpDefs for cumsum, cumprod, cummax, cummin and reduce_logsumexp.
// Of these only cumsum is linear (JAX: cumsum's transpose is a reversed cumsum); no attribute is data.
#include <string>
#include <vector>

#include "registry.h"

namespace evoxc::ops_detail {
namespace {

OpDef& scan(OpTable& t, const char* name, DTypeClass cls, const char* what) {
  OpDef d;
  d.name = name;
  d.category = OpCategory::Reduction;
  d.min_operands = d.max_operands = 1;
  d.operand_dtypes = cls;
  d.attrs = {{"axis", AttrKind::Int}, {"reverse", AttrKind::Bool}};
  d.infer = [name = d.name](std::span<const TensorType> ops, const AttrMap& attrs) {
    int64_t axis = attr_int(attrs, "axis", name);
    if (ops[0].rank() == 0)
      throw ShapeError(op_label(name) + ": cannot scan a rank-0 operand; reshape it to rank 1 first");
    check_axes(name, "axis", {axis}, ops[0].rank());
    attr_bool(attrs, "reverse", name);
    return std::vector<TensorType>{ops[0]};
  };
  d.doc = std::string(what) + " along `axis` (non-negative), from the end with `reverse`; 1 " + dtype_class_name(cls) +
          " operand -> same type";
  d.sample = sample_operands(1, {{"axis", int64_t{0}}, {"reverse", false}});
  return t.add(std::move(d));
}

}  // namespace

void register_scan_ops(OpTable& t) {
  set_linear(scan(t, "cumsum", DTypeClass::Numeric, "inclusive running sum (ints wrap)"), {0});
  scan(t, "cumprod", DTypeClass::Numeric, "inclusive running product (ints wrap)");
  scan(t, "cummax", DTypeClass::Any, "inclusive running maximum (NaN propagates)");
  scan(t, "cummin", DTypeClass::Any, "inclusive running minimum (NaN propagates)");
  OpDef d;
  d.name = "reduce_logsumexp";
  d.category = OpCategory::Reduction;
  d.min_operands = d.max_operands = 1;
  d.operand_dtypes = DTypeClass::Float;
  d.attrs = {{"axes", AttrKind::Ints}, {"keepdims", AttrKind::Bool}};
  d.infer = [](std::span<const TensorType> ops, const AttrMap& attrs) {
    const auto& axes = attr_ints(attrs, "axes", "reduce_logsumexp");
    check_axes("reduce_logsumexp", "axes", axes, ops[0].rank());
    return std::vector<TensorType>{
        TensorType(ops[0].dtype, reduced_shape(ops[0].shape, axes, attr_bool(attrs, "keepdims", "reduce_logsumexp")))};
  };
  d.doc =
      "log(sum(exp(x))) over `axes` (sorted, unique, non-negative), `keepdims`, with the maximum subtracted (empty or "
      "all -inf: -inf; any +inf: +inf; NaN propagates); 1 float operand -> same dtype";
  d.sample = sample_operands(1, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  t.add(std::move(d));
}

}  // namespace evoxc::ops_detail
