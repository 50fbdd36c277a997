// Sample calls for every op of the catalogue, so generic tests can iterate all_ops().
#include "ops/ops_util.h"

#include <algorithm>

namespace evoxc::testing {

std::vector<TensorType> infer(const std::string& op, const std::vector<TensorType>& operands, const AttrMap& attrs) {
  return infer_result_types(get_op(op), operands, attrs);
}

std::vector<DType> all_dtypes() {
  std::vector<DType> out;
  for (int i = 0; i < kNumDTypes; ++i) out.push_back(static_cast<DType>(i));
  return out;
}

namespace {
// A same-width target for bitcast_convert, chosen by width alone so it never depends on the op's own rule.
DType same_width(DType t) {
  switch (size_of(t)) {
    case 1: return DType::U8;
    case 2: return DType::I16;
    case 4: return DType::F32;
    default: return DType::F64;
  }
}
}  // namespace

SampleCall sample_call(const OpDef& def, DType t) {
  const Shape base{2, 1};
  SampleCall c;
  int n = def.max_operands < 0 ? std::max(def.min_operands, 2) : def.max_operands;
  for (int i = 0; i < n; ++i) c.operands.push_back(tt(t, base));
  const std::string& op = def.name;
  if (op == "gelu") {
    c.attrs = {{"approximate", true}};
  } else if (op == "nan_to_num") {
    c.attrs = {{"nan", 0.0}, {"posinf", 1.0}, {"neginf", -1.0}};
  } else if (op == "select") {
    c.operands[0].dtype = DType::Bool;
  } else if (op == "convert") {
    c.attrs = {{"dtype", DType::F32}};
  } else if (op == "bitcast_convert") {
    c.attrs = {{"dtype", same_width(t)}};
  } else if (def.category == OpCategory::Reduction && op.rfind("arg", 0) == 0) {
    c.attrs = {{"axis", int64_t{0}}, {"keepdims", false}, {"index_dtype", DType::I64}};
  } else if (def.category == OpCategory::Reduction) {
    c.attrs = {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}};
  } else if (op == "dot") {
    c.operands = {tt(t, {2, 3}), tt(t, {3, 4})};
  } else if (op == "reshape") {
    c.attrs = {{"shape", Shape{1, 2}}};
  } else if (op == "transpose") {
    c.attrs = {{"permutation", std::vector<int64_t>{1, 0}}};
  } else if (op == "broadcast_in_dim") {
    c.attrs = {{"shape", Shape{3, 2, 4}}, {"broadcast_dimensions", std::vector<int64_t>{1, 2}}};
  } else if (op == "expand_dims") {
    c.attrs = {{"axes", std::vector<int64_t>{0}}};
  } else if (op == "squeeze") {
    c.attrs = {{"axes", std::vector<int64_t>{1}}};
  } else if (op == "slice") {
    c.attrs = {{"start_indices", std::vector<int64_t>{0, 0}},
               {"limit_indices", Shape{2, 1}},
               {"strides", std::vector<int64_t>{1, 1}}};
  } else if (op == "concatenate") {
    c.attrs = {{"axis", int64_t{0}}};
  } else if (op == "iota") {
    c.attrs = {{"shape", Shape{3}}, {"dimension", int64_t{0}}, {"dtype", DType::I32}};
  } else if (op == "full") {
    c.attrs = {{"shape", Shape{3}}, {"value", 1.5}, {"dtype", DType::F32}};
  } else if (op == "constant") {
    c.attrs = {{"value", Tensor::zeros({2}, DType::F32)}};
  }
  return c;
}

}  // namespace evoxc::testing
