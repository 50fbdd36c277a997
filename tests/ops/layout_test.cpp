// Inference of the conv and layout ops over symbolic shapes, worked out by hand, and the must-fail set
// (error type and message) for each op.
#include <gtest/gtest.h>

#include <cmath>

#include "evoxc/ops/op_def.h"
#include "ops/ops_util.h"

namespace evoxc {
namespace {

using testing::infer;
using testing::tt;
using Ints = std::vector<int64_t>;

const DimExpr B = Dim("B");
const DimExpr H = Dim("H");

TensorType one(const std::string& op, const std::vector<TensorType>& operands, const AttrMap& attrs) {
  auto r = infer(op, operands, attrs);
  EXPECT_EQ(r.size(), 1u) << op;
  return r.empty() ? TensorType() : r[0];
}

AttrMap conv_attrs(Ints strides, Ints padding, Ints ld, Ints rd, int64_t groups = 1) {
  return {{"window_strides", strides},
          {"padding", padding},
          {"lhs_dilation", ld},
          {"rhs_dilation", rd},
          {"feature_group_count", groups}};
}

AttrMap pad_attrs(Ints low, Ints high, const std::string& mode, Ints interior = {}) {
  AttrMap a = {{"low", low}, {"high", high}, {"mode", mode}};
  if (!interior.empty()) a["interior"] = interior;
  return a;
}

template <typename E>
void expect_fail(const std::string& op, const std::vector<TensorType>& operands, const AttrMap& attrs,
                 const std::string& substr) {
  try {
    infer(op, operands, attrs);
    ADD_FAILURE() << op << ": expected an error containing '" << substr << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(substr), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("op '" + op + "'"), std::string::npos) << e.what();
  }
}

TEST(InferConv, StaticShapes) {
  // (6 + 1 + 1 - 3) / 2 + 1 = 3 and (5 - 3) / 1 + 1 = 3.
  EXPECT_EQ(
      one("conv", {tt(f32, {2, 3, 6, 5}), tt(f32, {4, 3, 3, 3})}, conv_attrs({2, 1}, {1, 1, 0, 0}, {1, 1}, {1, 1})),
      tt(f32, {2, 4, 3, 3}));
  // rhs dilation 2: window 5; lhs dilation 2: 4 -> 7.
  EXPECT_EQ(one("conv", {tt(i8, {1, 2, 7}), tt(i8, {3, 2, 3})}, conv_attrs({1}, {0, 0}, {1}, {2})), tt(i8, {1, 3, 3}));
  EXPECT_EQ(one("conv", {tt(f16, {1, 2, 4}), tt(f16, {3, 2, 2})}, conv_attrs({1}, {0, 0}, {2}, {1})),
            tt(f16, {1, 3, 6}));
  // Groups: C = 6 = 2 * 3; a window wider than the input gives 0; 3-d.
  EXPECT_EQ(one("conv", {tt(f32, {1, 6, 5}), tt(f32, {4, 3, 1})}, conv_attrs({1}, {0, 0}, {1}, {1}, 2)),
            tt(f32, {1, 4, 5}));
  EXPECT_EQ(one("conv", {tt(f32, {1, 1, 2}), tt(f32, {1, 1, 3})}, conv_attrs({1}, {0, 0}, {1}, {1})),
            tt(f32, {1, 1, 0}));
  EXPECT_EQ(one("conv", {tt(f64, {1, 2, 4, 5, 3}), tt(f64, {3, 2, 2, 3, 2})},
                conv_attrs({1, 2, 1}, {1, 0, 1, 1, 0, 1}, {1, 1, 1}, {1, 1, 2})),
            tt(f64, {1, 3, 4, 3, 2}));
  // Negative padding crops: 6 - 1 - 2 = 3, window 2 -> 2.
  EXPECT_EQ(one("conv", {tt(f32, {1, 1, 6}), tt(f32, {1, 1, 2})}, conv_attrs({1}, {-1, -2}, {1}, {1})),
            tt(f32, {1, 1, 2}));
}

TEST(InferConv, SymbolicShapes) {
  // Stride 1, pad 1 + 1, window 3: H stays H; the batch passes through.
  EXPECT_EQ(
      one("conv", {tt(f32, {B, 3, H, 8}), tt(f32, {4, 3, 3, 3})}, conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, {1, 1})),
      tt(f32, {B, 4, H, 8}));
  TensorType s2 = one("conv", {tt(f32, {1, 3, H}), tt(f32, {4, 3, 3})}, conv_attrs({2}, {0, 0}, {1}, {1}));
  EXPECT_EQ(s2.shape[2], floordiv(H - DimExpr(3), DimExpr(2)) + DimExpr(1));
}

TEST(InferConv, MustFail) {
  AttrMap a1 = conv_attrs({1}, {0, 0}, {1}, {1});
  expect_fail<TypeError>("conv", {tt(f32, {1, 2, 4}), tt(f64, {1, 2, 3})}, a1, "never promote");
  expect_fail<TypeError>("conv", {tt(bool_, {1, 2, 4}), tt(bool_, {1, 2, 3})}, a1, "bool");
  expect_fail<ShapeError>("conv", {tt(f32, {2, 4}), tt(f32, {2, 3})}, conv_attrs({}, {}, {}, {}), "rank >= 3");
  expect_fail<ShapeError>("conv", {tt(f32, {1, 2, 4}), tt(f32, {1, 3, 3})}, a1, "expects 3");
  expect_fail<ShapeError>("conv", {tt(f32, {1, 6, 4}), tt(f32, {3, 3, 3})}, conv_attrs({1}, {0, 0}, {1}, {1}, 2),
                          "not divisible");
  expect_fail<ShapeError>("conv", {tt(f32, {1, 2, 4}), tt(f32, {1, 2, 3})}, conv_attrs({0}, {0, 0}, {1}, {1}),
                          "window_strides");
  expect_fail<ShapeError>("conv", {tt(f32, {1, 2, 4}), tt(f32, {1, 2, 3})}, conv_attrs({1}, {0}, {1}, {1}),
                          "(low, high) pair");
  expect_fail<ShapeError>("conv", {tt(f32, {1, 2, 4}), tt(f32, {1, 2, 3})}, conv_attrs({1}, {0, 0}, {1}, {1}, 0),
                          "feature_group_count");
  expect_fail<ShapeError>("conv", {tt(f32, {1, 2, 4}), tt(f32, {1, 2, 3})}, conv_attrs({1}, {-3, -2}, {1}, {1}),
                          "negative after padding");
  expect_fail<ShapeError>("conv", {tt(f32, {1, 2, 4}), tt(f32, {1, 2, 3})},
                          conv_attrs({1}, {0, 0}, {1}, {int64_t{1} << 40}), "2^31");
  // Hostile extents overflow int64 once dilated: a ShapeError, never a wrapped extent.
  EXPECT_THROW(infer("conv", {tt(f32, {1, 1, int64_t{1} << 62}), tt(f32, {1, 1, 1})},
                     conv_attrs({1}, {0, 0}, {int64_t{1} << 31}, {1})),
               ShapeError);
  EXPECT_THROW(infer("tile", {tt(f32, {int64_t{1} << 40})}, {{"reps", Ints{int64_t{1} << 40}}}), ShapeError);
}

TEST(InferLayout, PadOverSymbolicShapes) {
  EXPECT_EQ(one("pad", {tt(f32, {B, 3}), tt(f32, {})}, pad_attrs({1, -1}, {2, 0}, "constant")), tt(f32, {B + 3, 2}));
  EXPECT_EQ(one("pad", {tt(i8, {B, 4})}, pad_attrs({2, 0}, {1, 3}, "reflect")), tt(i8, {B + 3, 7}));
  // Interior: 3 + 2 * 2 = 7 then low/high.
  EXPECT_EQ(one("pad", {tt(u16, {3}), tt(u16, {})}, pad_attrs({1}, {-1}, "constant", {2})), tt(u16, {7}));
  EXPECT_EQ(one("pad", {tt(u16, {0}), tt(u16, {})}, pad_attrs({0}, {0}, "constant", {2})), tt(u16, {0}));
  EXPECT_EQ(one("pad", {tt(bool_, {0, 2}), tt(bool_, {})}, pad_attrs({1, 0}, {1, 0}, "constant")), tt(bool_, {2, 2}));
  EXPECT_EQ(one("pad", {tt(f32, {0, 2})}, pad_attrs({0, 1}, {0, 1}, "edge")), tt(f32, {0, 4}));
}

TEST(InferLayout, PadMustFail) {
  expect_fail<ShapeError>("pad", {tt(f32, {3})}, pad_attrs({1}, {1}, "wrap"), "not one of");
  expect_fail<ShapeError>("pad", {tt(f32, {3})}, pad_attrs({1}, {1}, "constant"), "takes 2 operands");
  expect_fail<ShapeError>("pad", {tt(f32, {3}), tt(f32, {})}, pad_attrs({1}, {1}, "edge"), "takes 1 operand");
  expect_fail<TypeError>("pad", {tt(f32, {3}), tt(i32, {})}, pad_attrs({1}, {1}, "constant"), "never promote");
  expect_fail<ShapeError>("pad", {tt(f32, {3}), tt(f32, {1})}, pad_attrs({1}, {1}, "constant"), "scalar");
  expect_fail<ShapeError>("pad", {tt(f32, {3, 2})}, pad_attrs({1}, {1}, "edge"), "one entry per axis");
  expect_fail<ShapeError>("pad", {tt(f32, {3})}, pad_attrs({-2}, {-2}, "edge"), "negative");
  expect_fail<ShapeError>("pad", {tt(f32, {0})}, pad_attrs({1}, {0}, "reflect"), "empty axis");
  expect_fail<ShapeError>("pad", {tt(f32, {3})}, pad_attrs({1}, {1}, "edge", {1}), "interior");
  expect_fail<ShapeError>("pad", {tt(f32, {3}), tt(f32, {})}, pad_attrs({1}, {1}, "constant", {-1}), "interior");
}

TEST(InferLayout, TriDiagonalFlipRoll) {
  EXPECT_EQ(one("tril", {tt(f32, {B, 3, 4})}, {{"k", int64_t{-1}}}), tt(f32, {B, 3, 4}));
  EXPECT_EQ(one("triu", {tt(bool_, {2, 2})}, {{"k", int64_t{5}}}), tt(bool_, {2, 2}));
  AttrMap d = {{"offset", int64_t{1}}, {"axis1", int64_t{0}}, {"axis2", int64_t{2}}};
  EXPECT_EQ(one("diagonal", {tt(i32, {3, B, 5})}, d), tt(i32, {B, 3}));
  AttrMap d0 = {{"offset", int64_t{0}}, {"axis1", int64_t{1}}, {"axis2", int64_t{2}}};
  EXPECT_EQ(one("diagonal", {tt(f32, {4, B, B})}, d0), tt(f32, {4, B}));
  AttrMap far = {{"offset", int64_t{-9}}, {"axis1", int64_t{0}}, {"axis2", int64_t{1}}};
  EXPECT_EQ(one("diagonal", {tt(f32, {4, 5})}, far), tt(f32, {0}));
  EXPECT_EQ(one("flip", {tt(u8, {B, 2})}, {{"axes", Ints{0, 1}}}), tt(u8, {B, 2}));
  EXPECT_EQ(one("roll", {tt(f16, {B, 2})}, {{"shifts", Ints{3}}, {"axes", Ints{0}}}), tt(f16, {B, 2}));

  expect_fail<ShapeError>("tril", {tt(f32, {3})}, {{"k", int64_t{0}}}, "rank >= 2");
  expect_fail<ShapeError>("diagonal", {tt(f32, {3, 3})},
                          {{"offset", int64_t{0}}, {"axis1", int64_t{1}}, {"axis2", int64_t{1}}}, "distinct");
  expect_fail<ShapeError>("diagonal", {tt(f32, {3})}, d0, "rank >= 2");
  expect_fail<ShapeError>("flip", {tt(f32, {3})}, {{"axes", Ints{1}}}, "out of range");
  expect_fail<ShapeError>("flip", {tt(f32, {3, 3})}, {{"axes", Ints{1, 0}}}, "sorted");
  expect_fail<ShapeError>("roll", {tt(f32, {3, 3})}, {{"shifts", Ints{1, 2}}, {"axes", Ints{0}}}, "same length");
  expect_fail<TypeError>("roll", {tt(f32, {3})}, {{"shifts", Ints{1}}}, "axes");
}

TEST(InferLayout, TileRepeatOneHot) {
  EXPECT_EQ(one("tile", {tt(f32, {B, 2})}, {{"reps", Ints{3, 1}}}), tt(f32, {DimExpr(3) * B, 2}));
  EXPECT_EQ(one("tile", {tt(f32, {2, 2})}, {{"reps", Ints{0, 4}}}), tt(f32, {0, 8}));
  EXPECT_EQ(one("repeat", {tt(i64, {B, 3})}, {{"repeats", Ints{2}}, {"axis", int64_t{0}}}),
            tt(i64, {DimExpr(2) * B, 3}));
  EXPECT_EQ(one("repeat", {tt(i64, {B, 3})}, {{"repeats", Ints{1, 0, 4}}, {"axis", int64_t{1}}}), tt(i64, {B, 5}));
  EXPECT_EQ(one("one_hot", {tt(i32, {B, 2})}, {{"num_classes", int64_t{10}}, {"dtype", f32}}), tt(f32, {B, 2, 10}));
  EXPECT_EQ(one("one_hot", {tt(u8, {})}, {{"num_classes", int64_t{0}}, {"dtype", bool_}}), tt(bool_, {0}));

  expect_fail<ShapeError>("tile", {tt(f32, {2, 2})}, {{"reps", Ints{2}}}, "one entry per axis");
  expect_fail<ShapeError>("tile", {tt(f32, {2})}, {{"reps", Ints{-1}}}, "reps");
  expect_fail<ShapeError>("repeat", {tt(f32, {B})}, {{"repeats", Ints{1, 2}}, {"axis", int64_t{0}}}, "static axis");
  expect_fail<ShapeError>("repeat", {tt(f32, {3})}, {{"repeats", Ints{1, 2}}, {"axis", int64_t{0}}}, "static axis");
  expect_fail<ShapeError>("repeat", {tt(f32, {3})}, {{"repeats", Ints{-1}}, {"axis", int64_t{0}}}, "repeats");
  expect_fail<ShapeError>("repeat", {tt(f32, {3})}, {{"repeats", Ints{1}}, {"axis", int64_t{1}}}, "out of range");
  expect_fail<TypeError>("one_hot", {tt(f32, {3})}, {{"num_classes", int64_t{2}}, {"dtype", f32}}, "one_hot");
  expect_fail<ShapeError>("one_hot", {tt(i32, {3})}, {{"num_classes", int64_t{-2}}, {"dtype", f32}}, "num_classes");
}

TEST(InferLayout, ArangeAndLinspaceLengths) {
  auto ar = [](Attribute a, Attribute b, Attribute s, DType t = i64) {
    return one("arange", {}, {{"start", a}, {"stop", b}, {"step", s}, {"dtype", t}});
  };
  EXPECT_EQ(ar(int64_t{0}, int64_t{10}, int64_t{3}), tt(i64, {4}));
  EXPECT_EQ(ar(int64_t{10}, int64_t{0}, int64_t{-3}), tt(i64, {4}));
  EXPECT_EQ(ar(int64_t{10}, int64_t{0}, int64_t{3}), tt(i64, {0}));
  EXPECT_EQ(ar(0.0, 1.0, 0.1, f32), tt(f32, {10}));
  EXPECT_EQ(ar(int64_t{1}, 2.5, 0.5, f64), tt(f64, {3}));
  EXPECT_EQ(ar(INT64_MIN, INT64_MIN + 2, int64_t{1}), tt(i64, {2}));
  EXPECT_EQ(
      one("linspace", {}, {{"start", 0.0}, {"stop", 1.0}, {"num", int64_t{7}}, {"endpoint", false}, {"dtype", f16}}),
      tt(f16, {7}));

  expect_fail<ShapeError>("arange", {},
                          {{"start", int64_t{0}}, {"stop", int64_t{1}}, {"step", int64_t{0}}, {"dtype", i64}}, "zero");
  expect_fail<ShapeError>("arange", {}, {{"start", 0.0}, {"stop", NAN}, {"step", 1.0}, {"dtype", f32}}, "finite");
  expect_fail<ShapeError>(
      "arange", {}, {{"start", INT64_MIN}, {"stop", INT64_MAX}, {"step", int64_t{1}}, {"dtype", i64}}, "overflows");
  expect_fail<ShapeError>("arange", {}, {{"start", 0.0}, {"stop", 1e300}, {"step", 1.0}, {"dtype", f32}}, "2^40");
  expect_fail<TypeError>(
      "arange", {}, {{"start", int64_t{0}}, {"stop", int64_t{2}}, {"step", int64_t{1}}, {"dtype", bool_}}, "numeric");
  expect_fail<ShapeError>(
      "linspace", {}, {{"start", 0.0}, {"stop", 1.0}, {"num", int64_t{-1}}, {"endpoint", true}, {"dtype", f32}}, "num");
}

}  // namespace
}  // namespace evoxc
