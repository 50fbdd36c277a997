// Creation op family: iota, full and constant, which take no operands and build their type from attributes.
#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc::ops_detail {
namespace {

OpDef creation_op(const char* name, std::vector<AttrSpec> attrs, InferFn infer, const char* doc) {
  OpDef d;
  d.name = name;
  d.category = OpCategory::Creation;
  d.attrs = std::move(attrs);
  d.infer = std::move(infer);
  d.doc = doc;
  return d;
}

std::vector<TensorType> infer_iota(std::span<const TensorType>, const AttrMap& attrs) {
  const Shape& s = attr_shape(attrs, "shape", "iota");
  check_shape_attr("iota", "shape", s);
  check_axes("iota", "dimension", {attr_int(attrs, "dimension", "iota")}, s.rank());
  DType t = attr_dtype(attrs, "dtype", "iota");
  if (!dtype_in_class(t, DTypeClass::Numeric))
    throw TypeError(op_label("iota") + ": dtype must be numeric, got " + std::string(dtype_name(t)) +
                    "; build an int iota and compare it instead");
  return {TensorType(t, s)};
}

std::vector<TensorType> infer_full(std::span<const TensorType>, const AttrMap& attrs) {
  const Shape& s = attr_shape(attrs, "shape", "full");
  check_shape_attr("full", "shape", s);
  return {TensorType(attr_dtype(attrs, "dtype", "full"), s)};
}

std::vector<TensorType> infer_constant(std::span<const TensorType>, const AttrMap& attrs) {
  const Tensor& v = attr_tensor(attrs, "value", "constant");
  return {TensorType(v.dtype(), Shape::from_ints(v.shape()))};
}

}  // namespace

void register_creation_ops(OpTable& t) {
  t.add(creation_op("iota", {{"shape", AttrKind::Shape}, {"dimension", AttrKind::Int}, {"dtype", AttrKind::DType}},
                    infer_iota, "0, 1, 2, ... counting along `dimension` of `shape`; no operands -> numeric `dtype`"));
  t.add(creation_op("full",
                    {{"shape", AttrKind::Shape},
                     {"value", AttrKind::Float, true, {AttrKind::Int, AttrKind::Bool}},
                     {"dtype", AttrKind::DType}},
                    infer_full, "every element `value` (int, float or bool) converted to `dtype`; no operands"));
  t.add(creation_op("constant", {{"value", AttrKind::Tensor}}, infer_constant,
                    "the host tensor `value` embedded in the graph; no operands -> the tensor's type"));
}

}  // namespace evoxc::ops_detail
