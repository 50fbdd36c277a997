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
  // Every dtype, bool included: a bool iota is the int count converted as `convert` does
  // (x != 0), i.e. [false, true, true, ...], as numpy's arange(n).astype(bool).
  return {TensorType(attr_dtype(attrs, "dtype", "iota"), s)};
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

// Traits: no operands, so nothing is linear or elementwise. full's and constant's `value` are
// data: they enter only as values (constant's result type is its tensor's type), so programs
// differing only in them stack. iota's attributes are all structure. The sample ignores the dtype
// (creation ops take it as an attribute, if at all).
void register_creation_ops(OpTable& t) {
  t.add(creation_op("iota", {{"shape", AttrKind::Shape}, {"dimension", AttrKind::Int}, {"dtype", AttrKind::DType}},
                    infer_iota,
                    "0, 1, 2, ... counting along `dimension` of `shape`, converted to `dtype` (bool: 0 is false)"))
      .sample = sample_operands(0, {{"shape", Shape{3}}, {"dimension", int64_t{0}}, {"dtype", DType::I32}});
  OpDef& full =
      t.add(creation_op("full",
                        {{"shape", AttrKind::Shape},
                         {"value", AttrKind::Float, true, {AttrKind::Int, AttrKind::Bool}},
                         {"dtype", AttrKind::DType}},
                        infer_full, "every element `value` (int, float or bool) converted to `dtype`; no operands"));
  full.data_attrs = {"value"};
  full.sample = sample_operands(0, {{"shape", Shape{3}}, {"value", 1.5}, {"dtype", DType::F32}});
  OpDef& constant =
      t.add(creation_op("constant", {{"value", AttrKind::Tensor}}, infer_constant,
                        "the host tensor `value` embedded in the graph; no operands -> the tensor's type"));
  constant.data_attrs = {"value"};
  // A fresh tensor per call: a test may write into the one it gets.
  constant.sample = [](DType) { return OpSample{{}, {{"value", Tensor::zeros({2}, DType::F32)}}}; };
}

}  // namespace evoxc::ops_detail
