// Inference and must-fail cases for gather, scatter, dynamic_slice, dynamic_update_slice, sort, argsort, top_k,
// searchsorted, cumsum/cumprod/cummax/cummin and reduce_logsumexp, over static and symbolic shapes.
#include <gtest/gtest.h>

#include "evoxc/core/error.h"
#include "ops/ops_util.h"

namespace evoxc {
namespace {

using testing::infer;
using testing::tt;
using Ints = std::vector<int64_t>;

const DimExpr B = Dim("B");
const DimExpr N = Dim("N");

TensorType one(const std::string& op, const std::vector<TensorType>& ops, const AttrMap& attrs) {
  auto r = infer(op, ops, attrs);
  EXPECT_EQ(r.size(), 1u);
  return r.at(0);
}

TEST(IndexingInfer, Gather) {
  EXPECT_EQ(one("gather", {tt(f32, {B, 4}), tt(i32, {N, 1})}, {{"axes", Ints{0}}}), tt(f32, {N, 4}));
  EXPECT_EQ(one("gather", {tt(f32, {B, 4, 5}), tt(u8, {2, 3, 1})}, {{"axes", Ints{1}}}), tt(f32, {2, 3, B, 5}));
  EXPECT_EQ(one("gather", {tt(i8, {3, 4, 5}), tt(i64, {N, 2})}, {{"axes", Ints{2, 0}}}), tt(i8, {N, 4}));
  EXPECT_EQ(one("gather", {tt(bool_, {3}), tt(i64, {0})}, {{"axes", Ints{}}}), tt(bool_, {3}));
}

TEST(IndexingInfer, Scatter) {
  AttrMap at = {{"axes", Ints{0}}, {"mode", std::string("add")}};
  EXPECT_EQ(one("scatter", {tt(f32, {B, 4}), tt(i32, {N, 1}), tt(f32, {N, 4})}, at), tt(f32, {B, 4}));
  AttrMap pts = {{"axes", Ints{0, 1}}, {"mode", std::string("max")}};
  EXPECT_EQ(one("scatter", {tt(u16, {3, 4}), tt(i32, {5, 2}), tt(u16, {5})}, pts), tt(u16, {3, 4}));
}

TEST(IndexingInfer, DynamicSlices) {
  EXPECT_EQ(one("dynamic_slice", {tt(f32, {B, 4}), tt(i32, {}), tt(u8, {})}, {{"slice_sizes", Ints{2, 3}}}),
            tt(f32, {2, 3}));
  EXPECT_EQ(one("dynamic_slice", {tt(f32, {})}, {{"slice_sizes", Ints{}}}), tt(f32, {}));
  EXPECT_EQ(one("dynamic_update_slice", {tt(f64, {B, 4}), tt(f64, {1, 4}), tt(i64, {}), tt(i64, {})}, {}),
            tt(f64, {B, 4}));
}

TEST(IndexingInfer, SortFamily) {
  auto r = infer("sort", {tt(f32, {B, 3}), tt(i32, {B, 3})}, {{"dimension", int64_t{0}}, {"num_keys", int64_t{2}}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], tt(f32, {B, 3}));
  EXPECT_EQ(r[1], tt(i32, {B, 3}));
  EXPECT_EQ(one("argsort", {tt(bool_, {B, 3})}, {{"dimension", int64_t{1}}}), tt(i64, {B, 3}));
  auto k = infer("top_k", {tt(f16, {B, 7})}, {{"k", int64_t{3}}});
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0], tt(f16, {B, 3}));
  EXPECT_EQ(k[1], tt(i64, {B, 3}));
  EXPECT_EQ(infer("top_k", {tt(f32, {N})}, {{"k", int64_t{2}}})[0], tt(f32, {2}));
  EXPECT_EQ(one("searchsorted", {tt(i32, {N}), tt(i32, {B, 2})}, {{"side", std::string("right")}}), tt(i64, {B, 2}));
}

TEST(IndexingInfer, Scans) {
  AttrMap s = {{"axis", int64_t{1}}, {"reverse", true}};
  for (const char* op : {"cumsum", "cumprod", "cummax", "cummin"})
    EXPECT_EQ(one(op, {tt(i16, {B, 3})}, s), tt(i16, {B, 3}));
  EXPECT_EQ(one("cummax", {tt(bool_, {2, 3})}, s), tt(bool_, {2, 3}));
  EXPECT_EQ(one("reduce_logsumexp", {tt(bf16, {B, 3, 4})}, {{"axes", Ints{0, 2}}, {"keepdims", false}}), tt(bf16, {3}));
  EXPECT_EQ(one("reduce_logsumexp", {tt(f32, {B, 3})}, {{"axes", Ints{1}}, {"keepdims", true}}), tt(f32, {B, 1}));
}

enum class Err { Type, Shape };
struct BadCall {
  std::string op;
  std::vector<TensorType> operands;
  AttrMap attrs;
  Err err;
  std::string substring;
};

std::vector<BadCall> bad_calls() {
  AttrMap g0 = {{"axes", Ints{0}}};
  AttrMap sc = {{"axes", Ints{0}}, {"mode", std::string("add")}};
  AttrMap sd = {{"dimension", int64_t{0}}, {"num_keys", int64_t{1}}};
  AttrMap scan = {{"axis", int64_t{0}}, {"reverse", false}};
  return {
      {"gather", {tt(f32, {3}), tt(f32, {2, 1})}, g0, Err::Type, "indices has dtype float32, expected an integer"},
      {"gather", {tt(f32, {3}), tt(i32, {2, 2})}, g0, Err::Shape, "the index vector needs one entry per indexed axis"},
      {"gather", {tt(f32, {3}), tt(i32, {2, N})}, g0, Err::Shape, "last extent of indices"},
      {"gather", {tt(f32, {3}), tt(i32, {})}, {{"axes", Ints{}}}, Err::Shape, "indices must have rank >= 1"},
      {"gather", {tt(f32, {3}), tt(i32, {2, 1})}, {{"axes", Ints{1}}}, Err::Shape, "axis 1 in axes is out of range"},
      {"gather", {tt(f32, {3, 3}), tt(i32, {2, 2})}, {{"axes", Ints{0, 0}}}, Err::Shape, "appears twice"},
      {"gather", {tt(f32, {3})}, g0, Err::Type, "takes 2 operands"},
      {"scatter",
       {tt(f32, {3}), tt(i32, {2, 1}), tt(f32, {2})},
       {{"axes", Ints{0}}, {"mode", std::string("xor")}},
       Err::Type,
       "mode 'xor' is not one of"},
      {"scatter", {tt(f32, {3}), tt(i32, {2, 1}), tt(f64, {2})}, sc, Err::Type, "convert the updates first"},
      {"scatter",
       {tt(f32, {3, 4}), tt(i32, {2, 1}), tt(f32, {2, 3})},
       sc,
       Err::Shape,
       "updates (2x3) must have the shape (2x4)"},
      {"scatter", {tt(f32, {3}), tt(i32, {2, 1}), tt(f32, {2})}, {{"axes", Ints{0}}}, Err::Type, "mode"},
      {"dynamic_slice",
       {tt(f32, {3, 4}), tt(i32, {})},
       {{"slice_sizes", Ints{1, 1}}},
       Err::Type,
       "one start index per operand axis (2), got 1"},
      {"dynamic_slice",
       {tt(f32, {3}), tt(f32, {})},
       {{"slice_sizes", Ints{1}}},
       Err::Type,
       "start index 0 has dtype float32"},
      {"dynamic_slice",
       {tt(f32, {3}), tt(i32, {1})},
       {{"slice_sizes", Ints{1}}},
       Err::Shape,
       "must be a rank-0 tensor"},
      {"dynamic_slice",
       {tt(f32, {3}), tt(i32, {})},
       {{"slice_sizes", Ints{4}}},
       Err::Shape,
       "slice size 4 on axis 0 must lie in [0, 3]"},
      {"dynamic_slice", {tt(f32, {3}), tt(i32, {})}, {{"slice_sizes", Ints{-1}}}, Err::Shape, "slice size -1"},
      {"dynamic_slice",
       {tt(f32, {3}), tt(i32, {})},
       {{"slice_sizes", Ints{1, 1}}},
       Err::Shape,
       "slice_sizes has 2 entries"},
      {"dynamic_update_slice", {tt(f32, {3}), tt(f32, {4}), tt(i32, {})}, {}, Err::Shape, "larger than the operand"},
      {"dynamic_update_slice", {tt(f32, {3}), tt(i32, {2}), tt(i32, {})}, {}, Err::Type, "the update has dtype int32"},
      {"dynamic_update_slice",
       {tt(f32, {3}), tt(f32, {1, 1}), tt(i32, {})},
       {},
       Err::Shape,
       "must have the operand's rank"},
      {"sort", {tt(f32, {3}), tt(f32, {4})}, sd, Err::Shape, "every operand must have one shape"},
      {"sort", {tt(f32, {3})}, {{"dimension", int64_t{1}}, {"num_keys", int64_t{1}}}, Err::Shape, "dimension"},
      {"sort",
       {tt(f32, {3})},
       {{"dimension", int64_t{0}}, {"num_keys", int64_t{2}}},
       Err::Shape,
       "num_keys 2 must lie in [1, 1]"},
      {"sort", {tt(f32, {})}, sd, Err::Shape, "cannot sort a rank-0 operand"},
      {"sort", {}, sd, Err::Type, "takes at least 1 operand"},
      {"argsort", {tt(f32, {})}, {{"dimension", int64_t{0}}}, Err::Shape, "rank-0"},
      {"top_k", {tt(f32, {3})}, {{"k", int64_t{4}}}, Err::Shape, "k = 4 must lie in [0, 3]"},
      {"top_k", {tt(f32, {3})}, {{"k", int64_t{-1}}}, Err::Shape, "k = -1"},
      {"top_k", {tt(f32, {})}, {{"k", int64_t{0}}}, Err::Shape, "rank >= 1"},
      {"searchsorted",
       {tt(f32, {3, 2}), tt(f32, {2})},
       {{"side", std::string("left")}},
       Err::Shape,
       "must have rank 1"},
      {"searchsorted",
       {tt(f32, {3}), tt(i32, {2})},
       {{"side", std::string("left")}},
       Err::Type,
       "operand 1 has dtype int32"},
      {"searchsorted", {tt(f32, {3}), tt(f32, {2})}, {{"side", std::string("middle")}}, Err::Type, "side 'middle'"},
      {"cumsum", {tt(bool_, {3})}, scan, Err::Type, "operand 0 has dtype bool"},
      {"cumsum", {tt(f32, {3})}, {{"axis", int64_t{1}}, {"reverse", false}}, Err::Shape, "axis"},
      {"cumsum", {tt(f32, {3})}, {{"axis", int64_t{-1}}, {"reverse", false}}, Err::Shape, "axis"},
      {"cumprod", {tt(f32, {})}, scan, Err::Shape, "cannot scan a rank-0 operand"},
      {"cummax", {tt(f32, {3})}, {{"axis", int64_t{0}}}, Err::Type, "reverse"},
      {"reduce_logsumexp", {tt(i32, {3})}, {{"axes", Ints{0}}, {"keepdims", false}}, Err::Type, "expected float"},
      {"reduce_logsumexp", {tt(f32, {3})}, {{"axes", Ints{1}}, {"keepdims", false}}, Err::Shape, "axes"},
  };
}

TEST(IndexingMustFail, EveryBadCallRaisesItsTypedError) {
  for (const BadCall& c : bad_calls()) {
    SCOPED_TRACE(c.op + ": " + c.substring);
    try {
      infer(c.op, c.operands, c.attrs);
      ADD_FAILURE() << "no error";
    } catch (const TypeError& e) {
      EXPECT_EQ(c.err, Err::Type) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.substring), std::string::npos) << e.what();
    } catch (const ShapeError& e) {
      EXPECT_EQ(c.err, Err::Shape) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.substring), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace evoxc
