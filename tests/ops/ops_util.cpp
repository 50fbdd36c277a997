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
  using Ints = std::vector<int64_t>;
  const TensorType x = tt(t, {4, 3});
  const TensorType sq = tt(t, {3, 3});
  const TensorType i32_scalar = tt(DType::I32, {});
  if (op == "cumsum" || op == "cumprod" || op == "cummax" || op == "cummin") {
    c.attrs = {{"axis", int64_t{0}}, {"reverse", false}};
  } else if (op == "dot_general") {
    c.operands = {tt(t, {2, 3}), tt(t, {3, 4})};
    c.attrs = {{"lhs_contracting_dims", Ints{1}},
               {"rhs_contracting_dims", Ints{0}},
               {"lhs_batch_dims", Ints{}},
               {"rhs_batch_dims", Ints{}}};
  } else if (op == "cholesky" || op == "eigh") {
    c.operands = {sq};
    c.attrs = {{"lower", true}};
  } else if (op == "triangular_solve") {
    c.operands = {sq, tt(t, {3, 2})};
    c.attrs = {{"left_side", true}, {"lower", true}, {"transpose_a", false}, {"unit_diagonal", false}};
  } else if (op == "solve") {
    c.operands = {sq, tt(t, {3, 2})};
  } else if (op == "lu" || op == "inv" || op == "det" || op == "slogdet" || op == "matrix_exp") {
    c.operands = {sq};
  } else if (op == "qr") {
    c.operands = {tt(t, {3, 2})};
    c.attrs = {{"full_matrices", false}};
  } else if (op == "svd") {
    c.operands = {tt(t, {3, 2})};
    c.attrs = {{"full_matrices", false}, {"compute_uv", true}};
  } else if (op == "matrix_rank") {
    c.operands = {tt(t, {3, 2})};
  } else if (op == "norm") {
    c.operands = {tt(t, {3, 2})};
    c.attrs = {{"ord", std::string("fro")}};
  } else if (op == "trace" || op == "diagonal") {
    c.operands = {sq};
    c.attrs = {{"offset", int64_t{0}}, {"axis1", int64_t{0}}, {"axis2", int64_t{1}}};
  } else if (op == "conv") {
    c.operands = {tt(t, {1, 2, 5, 5}), tt(t, {3, 2, 3, 3})};
    c.attrs = {{"window_strides", Ints{1, 1}},
               {"padding", Ints{0, 0, 0, 0}},
               {"lhs_dilation", Ints{1, 1}},
               {"rhs_dilation", Ints{1, 1}},
               {"feature_group_count", int64_t{1}}};
  } else if (op == "pad") {
    c.operands = {x, tt(t, {})};
    c.attrs = {{"low", Ints{1, 0}}, {"high", Ints{0, 1}}, {"mode", std::string("constant")}};
  } else if (op == "tril" || op == "triu") {
    c.operands = {sq};
    c.attrs = {{"k", int64_t{0}}};
  } else if (op == "flip") {
    c.operands = {x};
    c.attrs = {{"axes", Ints{0}}};
  } else if (op == "roll") {
    c.operands = {x};
    c.attrs = {{"shifts", Ints{1}}, {"axes", Ints{0}}};
  } else if (op == "tile") {
    c.operands = {x};
    c.attrs = {{"reps", Ints{2, 1}}};
  } else if (op == "repeat") {
    c.operands = {x};
    c.attrs = {{"repeats", Ints{2}}, {"axis", int64_t{0}}};
  } else if (op == "one_hot") {
    c.operands = {tt(t, {3})};
    c.attrs = {{"num_classes", int64_t{4}}, {"dtype", DType::F32}};
  } else if (op == "gather") {
    c.operands = {x, tt(DType::I64, {2, 1})};
    c.attrs = {{"axes", Ints{0}}};
  } else if (op == "scatter") {
    c.operands = {x, tt(DType::I64, {2, 1}), tt(t, {2, 3})};
    c.attrs = {{"axes", Ints{0}}, {"mode", std::string("set")}};
  } else if (op == "dynamic_slice") {
    c.operands = {x, i32_scalar, i32_scalar};
    c.attrs = {{"slice_sizes", Ints{2, 2}}};
  } else if (op == "dynamic_update_slice") {
    c.operands = {x, tt(t, {2, 2}), i32_scalar, i32_scalar};
  } else if (op == "sort") {
    c.operands = {x};
    c.attrs = {{"dimension", int64_t{1}}, {"num_keys", int64_t{1}}};
  } else if (op == "argsort") {
    c.operands = {x};
    c.attrs = {{"dimension", int64_t{1}}};
  } else if (op == "top_k") {
    c.operands = {x};
    c.attrs = {{"k", int64_t{2}}};
  } else if (op == "searchsorted") {
    c.operands = {tt(t, {3}), tt(t, {2, 1})};
    c.attrs = {{"side", std::string("left")}};
  } else if (op == "arange") {
    c.attrs = {{"start", int64_t{0}}, {"stop", int64_t{5}}, {"step", int64_t{1}}, {"dtype", DType::F32}};
  } else if (op == "linspace") {
    c.attrs = {{"start", 0.0}, {"stop", 1.0}, {"num", int64_t{5}}, {"endpoint", true}, {"dtype", DType::F32}};
  } else if (op == "gelu") {
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
