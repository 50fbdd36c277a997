// Reduction op family: reduce_* over sorted axes, and argmax/argmin over one axis.
// None is elementwise and no attribute is data (axes and keepdims shape the result).
#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc::ops_detail {
namespace {

// `linear`: reduce_sum and reduce_mean (sum / n, n fixed by the type) are linear in their operand.
void reduction(OpTable& t, const char* name, DTypeClass cls, const char* what, bool linear = false) {
  OpDef d;
  d.name = name;
  d.category = OpCategory::Reduction;
  d.min_operands = d.max_operands = 1;
  d.operand_dtypes = cls;
  d.attrs = {{"axes", AttrKind::Ints}, {"keepdims", AttrKind::Bool}};
  d.infer = [name = d.name](std::span<const TensorType> ops, const AttrMap& attrs) {
    const auto& axes = attr_ints(attrs, "axes", name);
    check_axes(name, "axes", axes, ops[0].rank());
    return std::vector<TensorType>{
        TensorType(ops[0].dtype, reduced_shape(ops[0].shape, axes, attr_bool(attrs, "keepdims", name)))};
  };
  d.doc = std::string(what) + " over `axes` (sorted, unique, non-negative), `keepdims`; 1 " + dtype_class_name(cls) +
          " operand -> same dtype";
  if (linear) set_linear(d, {0});
  d.sample = sample_operands(1, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  t.add(std::move(d));
}

void arg_reduction(OpTable& t, const char* name, const char* what) {
  OpDef d;
  d.name = name;
  d.category = OpCategory::Reduction;
  d.min_operands = d.max_operands = 1;
  d.operand_dtypes = DTypeClass::Any;
  d.attrs = {{"axis", AttrKind::Int}, {"keepdims", AttrKind::Bool}, {"index_dtype", AttrKind::DType}};
  d.infer = [name = d.name](std::span<const TensorType> ops, const AttrMap& attrs) {
    int64_t axis = attr_int(attrs, "axis", name);
    check_axes(name, "axis", {axis}, ops[0].rank());
    const DimExpr& extent = ops[0].shape[static_cast<size_t>(axis)];
    if (extent.is_const() && extent.value() == 0)
      throw ShapeError(op_label(name) + ": axis " + std::to_string(axis) + " of (" + ops[0].shape.to_string() +
                       ") is empty, so there is no index to return; reduce over a non-empty axis");
    DType index = attr_dtype(attrs, "index_dtype", name);
    if (index != DType::I32 && index != DType::I64)
      throw TypeError(op_label(name) + ": index_dtype must be int32 or int64, got " + std::string(dtype_name(index)));
    return std::vector<TensorType>{
        TensorType(index, reduced_shape(ops[0].shape, {axis}, attr_bool(attrs, "keepdims", name)))};
  };
  d.doc = std::string(what) + " along `axis`, first on ties, NaN counts as extreme; numeric or bool -> `index_dtype` " +
          "(int32/int64)";
  d.sample = sample_operands(1, {{"axis", int64_t{0}}, {"keepdims", false}, {"index_dtype", DType::I64}});
  t.add(std::move(d));
}

}  // namespace

void register_reduce_ops(OpTable& t) {
  reduction(t, "reduce_sum", DTypeClass::Numeric, "sum (empty: 0)", /*linear=*/true);
  reduction(t, "reduce_prod", DTypeClass::Numeric, "product (empty: 1)");
  reduction(t, "reduce_max", DTypeClass::Any, "maximum (empty: the lowest value)");
  reduction(t, "reduce_min", DTypeClass::Any, "minimum (empty: the highest value)");
  reduction(t, "reduce_mean", DTypeClass::Float, "mean (empty: NaN)", /*linear=*/true);
  reduction(t, "reduce_any", DTypeClass::Bool, "logical or (empty: false)");
  reduction(t, "reduce_all", DTypeClass::Bool, "logical and (empty: true)");
  arg_reduction(t, "argmax", "index of the maximum");
  arg_reduction(t, "argmin", "index of the minimum");
}

}  // namespace evoxc::ops_detail
