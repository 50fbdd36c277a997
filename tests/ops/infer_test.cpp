// Hand-written inference cases: expected types are worked out by hand from docs/semantics.md.
#include <gtest/gtest.h>

#include "evoxc/ops/op_def.h"
#include "ops/ops_util.h"

namespace evoxc {
namespace {

using testing::infer;
using testing::tt;
using Ints = std::vector<int64_t>;

const DimExpr B = Dim("B");
const DimExpr C = Dim("C");

TensorType one(const std::string& op, const std::vector<TensorType>& operands, const AttrMap& attrs = {}) {
  auto r = infer(op, operands, attrs);
  EXPECT_EQ(r.size(), 1u) << op;
  return r.empty() ? TensorType() : r[0];
}

TEST(InferElementwise, UnaryKeepsType) {
  EXPECT_EQ(one("exp", {tt(f16, {B, 3})}), tt(f16, {B, 3}));
  EXPECT_EQ(one("abs", {tt(i8, {})}), tt(i8, {}));
  EXPECT_EQ(one("gelu", {tt(bf16, {4})}, {{"approximate", false}}), tt(bf16, {4}));
  EXPECT_EQ(one("isnan", {tt(f32, {B})}), tt(bool_, {B}));
  EXPECT_EQ(one("isfinite", {tt(u16, {2})}), tt(bool_, {2}));
  EXPECT_EQ(one("bitwise_not", {tt(bool_, {2})}), tt(bool_, {2}));
  EXPECT_EQ(one("nan_to_num", {tt(f64, {1})}, {{"nan", 0.0}, {"posinf", 9.0}, {"neginf", -9.0}}), tt(f64, {1}));
}

TEST(InferElementwise, BroadcastWithSymbolicDims) {
  EXPECT_EQ(one("add", {tt(f32, {B, 1}), tt(f32, {1, 4})}), tt(f32, {B, 4}));
  EXPECT_EQ(one("add", {tt(f32, {B}), tt(f32, {1})}), tt(f32, {B}));
  EXPECT_EQ(one("multiply", {tt(i32, {3, 1, B}), tt(i32, {5, 1})}), tt(i32, {3, 5, B}));
  EXPECT_EQ(one("subtract", {tt(f32, {}), tt(f32, {2, B})}), tt(f32, {2, B}));
  EXPECT_EQ(one("less", {tt(u8, {B, 2}), tt(u8, {2})}), tt(bool_, {B, 2}));
  EXPECT_EQ(one("logical_or", {tt(bool_, {B}), tt(bool_, {B})}), tt(bool_, {B}));
  EXPECT_THROW(one("add", {tt(f32, {B}), tt(f32, {C})}), ShapeError);
  EXPECT_THROW(one("add", {tt(f32, {B}), tt(f32, {4})}), ShapeError);
  EXPECT_THROW(one("add", {tt(f32, {3}), tt(f32, {4})}), ShapeError);
}

TEST(InferElementwise, SelectAndClampBroadcastAllThree) {
  EXPECT_EQ(one("select", {tt(bool_, {B, 1}), tt(f32, {1, 3}), tt(f32, {})}), tt(f32, {B, 3}));
  EXPECT_EQ(one("clamp", {tt(i64, {4}), tt(i64, {}), tt(i64, {2, 1})}), tt(i64, {2, 4}));
  EXPECT_THROW(one("select", {tt(i32, {2}), tt(f32, {2}), tt(f32, {2})}), TypeError);
  EXPECT_THROW(one("select", {tt(bool_, {2}), tt(f32, {2}), tt(f64, {2})}), TypeError);
  EXPECT_THROW(one("clamp", {tt(f32, {2}), tt(f32, {3}), tt(f32, {2})}), ShapeError);
}

TEST(InferElementwise, ConvertAndBitcastWidth) {
  EXPECT_EQ(one("convert", {tt(f32, {B})}, {{"dtype", bool_}}), tt(bool_, {B}));
  EXPECT_EQ(one("convert", {tt(bool_, {2})}, {{"dtype", f64}}), tt(f64, {2}));
  EXPECT_EQ(one("bitcast_convert", {tt(f32, {B})}, {{"dtype", i32}}), tt(i32, {B}));
  EXPECT_EQ(one("bitcast_convert", {tt(u16, {2})}, {{"dtype", bf16}}), tt(bf16, {2}));
  EXPECT_EQ(one("bitcast_convert", {tt(f64, {})}, {{"dtype", u64}}), tt(u64, {}));
  EXPECT_THROW(one("bitcast_convert", {tt(f32, {2})}, {{"dtype", f64}}), TypeError);
  EXPECT_THROW(one("bitcast_convert", {tt(u8, {2})}, {{"dtype", bool_}}), TypeError);
  EXPECT_THROW(one("bitcast_convert", {tt(bool_, {2})}, {{"dtype", u8}}), TypeError);
}

AttrMap red(Ints axes, bool keepdims) { return {{"axes", std::move(axes)}, {"keepdims", keepdims}}; }

TEST(InferReduce, AxesAndKeepdims) {
  EXPECT_EQ(one("reduce_sum", {tt(f32, {B, 3, 4})}, red({1}, false)), tt(f32, {B, 4}));
  EXPECT_EQ(one("reduce_sum", {tt(f32, {B, 3, 4})}, red({1}, true)), tt(f32, {B, 1, 4}));
  EXPECT_EQ(one("reduce_max", {tt(i8, {B, 3, 4})}, red({0, 2}, true)), tt(i8, {1, 3, 1}));
  EXPECT_EQ(one("reduce_prod", {tt(u32, {B, 3})}, red({0, 1}, false)), tt(u32, {}));
  EXPECT_EQ(one("reduce_mean", {tt(bf16, {5})}, red({}, false)), tt(bf16, {5}));
  EXPECT_EQ(one("reduce_all", {tt(bool_, {2, B})}, red({1}, false)), tt(bool_, {2}));
  EXPECT_THROW(one("reduce_sum", {tt(f32, {2, 3})}, red({1, 0}, false)), ShapeError);
  EXPECT_THROW(one("reduce_sum", {tt(f32, {2, 3})}, red({1, 1}, false)), ShapeError);
  EXPECT_THROW(one("reduce_sum", {tt(f32, {2, 3})}, red({2}, false)), ShapeError);
  EXPECT_THROW(one("reduce_sum", {tt(f32, {2, 3})}, red({-1}, false)), ShapeError);
  EXPECT_THROW(one("reduce_mean", {tt(i32, {2})}, red({0}, false)), TypeError);
}

AttrMap arg(int64_t axis, bool keepdims, DType index) {
  return {{"axis", axis}, {"keepdims", keepdims}, {"index_dtype", index}};
}

TEST(InferReduce, ArgmaxIndexDType) {
  EXPECT_EQ(one("argmax", {tt(f32, {B, 7})}, arg(1, false, i64)), tt(i64, {B}));
  EXPECT_EQ(one("argmin", {tt(bool_, {B, 7})}, arg(0, true, i32)), tt(i32, {1, 7}));
  EXPECT_EQ(one("argmax", {tt(u8, {B})}, arg(0, false, i32)), tt(i32, {}));
  EXPECT_THROW(one("argmax", {tt(f32, {4})}, arg(0, false, i16)), TypeError);
  EXPECT_THROW(one("argmax", {tt(f32, {4})}, arg(0, false, f32)), TypeError);
  EXPECT_THROW(one("argmax", {tt(f32, {3, 0})}, arg(1, false, i64)), ShapeError);
  // A symbolic extent may be zero at run time; the interpreter checks it then.
  EXPECT_EQ(one("argmax", {tt(f32, {3, B})}, arg(1, false, i64)), tt(i64, {3}));
  EXPECT_THROW(one("argmax", {tt(f32, {})}, arg(0, false, i64)), ShapeError);
}

TEST(InferDot, EveryRankCombination) {
  // 1x1: inner product.
  EXPECT_EQ(one("dot", {tt(f32, {B}), tt(f32, {B})}), tt(f32, {}));
  // 1x2: (k) . (k, m) -> (m).
  EXPECT_EQ(one("dot", {tt(f32, {3}), tt(f32, {3, 5})}), tt(f32, {5}));
  // 2x1: (n, k) . (k) -> (n).
  EXPECT_EQ(one("dot", {tt(f32, {B, 3}), tt(f32, {3})}), tt(f32, {B}));
  // 2x2.
  EXPECT_EQ(one("dot", {tt(i32, {2, 3}), tt(i32, {3, C})}), tt(i32, {2, C}));
  // 3x2: batch dims of the rank-2 side are empty.
  EXPECT_EQ(one("dot", {tt(f64, {B, 2, 3}), tt(f64, {3, 4})}), tt(f64, {B, 2, 4}));
  // 4x3: batch (7, 1) broadcasts with (B).
  EXPECT_EQ(one("dot", {tt(f32, {7, 1, 2, 3}), tt(f32, {B, 3, 4})}), tt(f32, {7, B, 2, 4}));
  // 1x3 and 3x1.
  EXPECT_EQ(one("dot", {tt(f32, {3}), tt(f32, {B, 3, 4})}), tt(f32, {B, 4}));
  EXPECT_EQ(one("dot", {tt(f32, {B, 2, 3}), tt(f32, {3})}), tt(f32, {B, 2}));
  EXPECT_THROW(one("dot", {tt(f32, {2, 3}), tt(f32, {4, 5})}), ShapeError);
  EXPECT_THROW(one("dot", {tt(f32, {B}), tt(f32, {C})}), ShapeError);
  // Contracting extents never broadcast, even from 1.
  EXPECT_THROW(one("dot", {tt(f32, {2, 1}), tt(f32, {3, 5})}), ShapeError);
  EXPECT_THROW(one("dot", {tt(f32, {2, 2, 3}), tt(f32, {4, 3, 5})}), ShapeError);
  EXPECT_THROW(one("dot", {tt(f32, {}), tt(f32, {3})}), ShapeError);
  EXPECT_THROW(one("dot", {tt(f32, {3}), tt(f64, {3})}), TypeError);
  EXPECT_THROW(one("dot", {tt(bool_, {3}), tt(bool_, {3})}), TypeError);
}

TEST(InferStructure, ReshapeStaticAndSymbolic) {
  EXPECT_EQ(one("reshape", {tt(f32, {2, 6})}, {{"shape", Shape{3, 4}}}), tt(f32, {3, 4}));
  EXPECT_EQ(one("reshape", {tt(f32, {1})}, {{"shape", Shape{}}}), tt(f32, {}));
  EXPECT_EQ(one("reshape", {tt(f32, {B, 6})}, {{"shape", Shape{B, 2, 3}}}), tt(f32, {B, 2, 3}));
  // Not provably different: checked at run time.
  EXPECT_EQ(one("reshape", {tt(f32, {B, C})}, {{"shape", Shape{C, B}}}), tt(f32, {C, B}));
  EXPECT_EQ(one("reshape", {tt(f32, {B, 4})}, {{"shape", Shape{8}}}), tt(f32, {8}));
  EXPECT_THROW(one("reshape", {tt(f32, {2, 6})}, {{"shape", Shape{5, 2}}}), ShapeError);
  EXPECT_THROW(one("reshape", {tt(f32, {4})}, {{"shape", Shape{-1}}}), ShapeError);
}

TEST(InferStructure, Transpose) {
  EXPECT_EQ(one("transpose", {tt(i8, {B, 3, 4})}, {{"permutation", Ints{2, 0, 1}}}), tt(i8, {4, B, 3}));
  EXPECT_EQ(one("transpose", {tt(i8, {})}, {{"permutation", Ints{}}}), tt(i8, {}));
  EXPECT_THROW(one("transpose", {tt(i8, {2, 3})}, {{"permutation", Ints{0, 0}}}), ShapeError);
  EXPECT_THROW(one("transpose", {tt(i8, {2, 3})}, {{"permutation", Ints{0}}}), ShapeError);
  EXPECT_THROW(one("transpose", {tt(i8, {2, 3})}, {{"permutation", Ints{0, 2}}}), ShapeError);
}

TEST(InferStructure, BroadcastInDim) {
  AttrMap a = {{"shape", Shape{B, 3, 4}}, {"broadcast_dimensions", Ints{0, 2}}};
  EXPECT_EQ(one("broadcast_in_dim", {tt(f32, {B, 1})}, a), tt(f32, {B, 3, 4}));
  EXPECT_EQ(one("broadcast_in_dim", {tt(f32, {1, 4})}, a), tt(f32, {B, 3, 4}));
  EXPECT_EQ(one("broadcast_in_dim", {tt(f32, {})}, {{"shape", Shape{2}}, {"broadcast_dimensions", Ints{}}}),
            tt(f32, {2}));
  EXPECT_THROW(one("broadcast_in_dim", {tt(f32, {C, 4})}, a), ShapeError);
  EXPECT_THROW(
      one("broadcast_in_dim", {tt(f32, {B, 4})}, {{"shape", Shape{B, 3, 4}}, {"broadcast_dimensions", Ints{2, 0}}}),
      ShapeError);
  EXPECT_THROW(one("broadcast_in_dim", {tt(f32, {B})}, a), ShapeError);
}

TEST(InferStructure, ExpandDimsAndSqueeze) {
  EXPECT_EQ(one("expand_dims", {tt(f32, {B, 3})}, {{"axes", Ints{0, 3}}}), tt(f32, {1, B, 3, 1}));
  EXPECT_EQ(one("expand_dims", {tt(f32, {B, 3})}, {{"axes", Ints{1}}}), tt(f32, {B, 1, 3}));
  EXPECT_EQ(one("squeeze", {tt(f32, {1, B, 1})}, {{"axes", Ints{0, 2}}}), tt(f32, {B}));
  EXPECT_THROW(one("expand_dims", {tt(f32, {B, 3})}, {{"axes", Ints{3}}}), ShapeError);
  EXPECT_THROW(one("squeeze", {tt(f32, {1, B})}, {{"axes", Ints{1}}}), ShapeError);
  EXPECT_THROW(one("squeeze", {tt(f32, {1, 2})}, {{"axes", Ints{1}}}), ShapeError);
}

AttrMap slice_attrs(Ints start, Shape limit, Ints strides) {
  return {{"start_indices", std::move(start)}, {"limit_indices", std::move(limit)}, {"strides", std::move(strides)}};
}

TEST(InferStructure, SliceWithStrides) {
  // Indices 1, 4, 7.
  EXPECT_EQ(one("slice", {tt(f32, {10})}, slice_attrs({1}, {10}, {3})), tt(f32, {3}));
  // Indices 0, 2, 4, 6, 8.
  EXPECT_EQ(one("slice", {tt(f32, {10})}, slice_attrs({0}, {9}, {2})), tt(f32, {5}));
  EXPECT_EQ(one("slice", {tt(f32, {10, 4})}, slice_attrs({5, 0}, {5, 4}, {1, 1})), tt(f32, {0, 4}));
  EXPECT_THROW(one("slice", {tt(f32, {10})}, slice_attrs({0}, {11}, {1})), ShapeError);
  EXPECT_THROW(one("slice", {tt(f32, {10})}, slice_attrs({4}, {3}, {1})), ShapeError);
  EXPECT_THROW(one("slice", {tt(f32, {10})}, slice_attrs({-1}, {3}, {1})), ShapeError);
  EXPECT_THROW(one("slice", {tt(f32, {10})}, slice_attrs({0}, {3}, {0})), ShapeError);
  EXPECT_THROW(one("slice", {tt(f32, {10})}, slice_attrs({0, 0}, {3, 3}, {1, 1})), ShapeError);
}

TEST(InferStructure, SliceSymbolicLimit) {
  EXPECT_EQ(one("slice", {tt(f32, {B, 4})}, slice_attrs({0, 0}, {B, 4}, {1, 1})), tt(f32, {B, 4}));
  TensorType r = one("slice", {tt(f32, {B})}, slice_attrs({1}, {B}, {2}));
  ASSERT_EQ(r.rank(), 1u);
  // Checked at several B against a count of the indices 1, 3, 5, ... below B.
  for (int64_t b = 1; b < 12; ++b) {
    int64_t count = 0;
    for (int64_t i = 1; i < b; i += 2) ++count;
    EXPECT_EQ(r.shape[0].evaluate({{"B", b}}), count) << b;
  }
  EXPECT_EQ(r.shape[0], floordiv(B, DimExpr(2)));
  // A limit beyond a symbolic extent by a constant is provably out of range.
  EXPECT_THROW(one("slice", {tt(f32, {B})}, slice_attrs({0}, {B + 1}, {1})), ShapeError);
}

TEST(InferStructure, Concatenate) {
  AttrMap ax0 = {{"axis", int64_t{0}}};
  TensorType r = one("concatenate", {tt(f32, {B, 3}), tt(f32, {B + 1, 3})}, ax0);
  EXPECT_EQ(r.shape[1], DimExpr(3));
  EXPECT_EQ(r.shape[0].to_string(), "(2*B+1)");
  EXPECT_EQ(r.shape[0], DimExpr(2) * B + DimExpr(1));
  EXPECT_EQ(one("concatenate", {tt(i32, {2, B}), tt(i32, {5, B}), tt(i32, {1, B})}, ax0), tt(i32, {8, B}));
  EXPECT_EQ(one("concatenate", {tt(i32, {2, B})}, {{"axis", int64_t{1}}}), tt(i32, {2, B}));
  EXPECT_EQ(one("concatenate", {tt(i32, {2, B}), tt(i32, {2, C})}, {{"axis", int64_t{1}}}), tt(i32, {2, B + C}));
  EXPECT_THROW(one("concatenate", {tt(f32, {B, 3}), tt(f32, {B, 4})}, ax0), ShapeError);
  EXPECT_THROW(one("concatenate", {tt(f32, {B, 3}), tt(f32, {3})}, ax0), ShapeError);
  EXPECT_THROW(one("concatenate", {tt(f32, {B, 3}), tt(i32, {B, 3})}, ax0), TypeError);
  EXPECT_THROW(one("concatenate", {tt(f32, {})}, ax0), ShapeError);
}

TEST(InferCreation, IotaFullConstant) {
  EXPECT_EQ(one("iota", {}, {{"shape", Shape{B, 4}}, {"dimension", int64_t{1}}, {"dtype", i32}}), tt(i32, {B, 4}));
  EXPECT_THROW(one("iota", {}, {{"shape", Shape{4}}, {"dimension", int64_t{1}}, {"dtype", i32}}), ShapeError);
  EXPECT_EQ(one("iota", {}, {{"shape", Shape{4}}, {"dimension", int64_t{0}}, {"dtype", bool_}}), tt(bool_, {4}));
  EXPECT_EQ(one("full", {}, {{"shape", Shape{2, B}}, {"value", int64_t{3}}, {"dtype", u8}}), tt(u8, {2, B}));
  EXPECT_EQ(one("full", {}, {{"shape", Shape{}}, {"value", true}, {"dtype", bool_}}), tt(bool_, {}));
  EXPECT_EQ(one("full", {}, {{"shape", Shape{3}}, {"value", 0.25}, {"dtype", f16}}), tt(f16, {3}));
  EXPECT_THROW(one("full", {}, {{"shape", Shape{3}}, {"value", Ints{1}}, {"dtype", f16}}), TypeError);
  Tensor v = Tensor::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(one("constant", {}, {{"value", v}}), tt(i32, {2, 3}));
  EXPECT_THROW(one("constant", {tt(f32, {})}, {{"value", v}}), TypeError);
}

TEST(InferControl, ReturnHasNoResults) {
  EXPECT_TRUE(infer("return", {}).empty());
  EXPECT_TRUE(infer("return", {tt(f32, {B}), tt(bool_, {}), tt(u64, {2})}).empty());
}

}  // namespace
}  // namespace evoxc
