// Inference of the decomposition ops over symbolic shapes, worked out by hand, and their must-fail set.
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
const DimExpr C = Dim("C");
const DimExpr M = Dim("M");
const DimExpr N = Dim("N");

TensorType one(const std::string& op, const std::vector<TensorType>& operands, const AttrMap& attrs = {}) {
  auto r = infer(op, operands, attrs);
  EXPECT_EQ(r.size(), 1u) << op;
  return r.empty() ? TensorType() : r[0];
}

AttrMap dg(Ints lc, Ints rc, Ints lb = {}, Ints rb = {}) {
  return {{"lhs_contracting_dims", lc}, {"rhs_contracting_dims", rc}, {"lhs_batch_dims", lb}, {"rhs_batch_dims", rb}};
}
AttrMap ts(bool left, bool lower = true) {
  return {{"left_side", left}, {"lower", lower}, {"transpose_a", false}, {"unit_diagonal", false}};
}

template <typename E>
void expect_fail(const std::string& op, const std::vector<TensorType>& operands, const AttrMap& attrs,
                 const std::string& substr) {
  try {
    infer(op, operands, attrs);
    ADD_FAILURE() << op << ": expected an error containing '" << substr << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(substr), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
  }
}

TEST(InferDecomposition, DotGeneralOrdersBatchLhsFreeRhsFree) {
  EXPECT_EQ(one("dot_general", {tt(f32, {B, 3, 4}), tt(f32, {B, 4, 5})}, dg({2}, {1}, {0}, {0})), tt(f32, {B, 3, 5}));
  // batch axis 1 of lhs, contracting 0; free dims in original order.
  EXPECT_EQ(one("dot_general", {tt(i32, {M, B, 7, 2}), tt(i32, {2, M, B})}, dg({0, 3}, {1, 0}, {1}, {2})),
            tt(i32, {B, 7}));
  EXPECT_EQ(one("dot_general", {tt(f64, {3}), tt(f64, {N})}, dg({}, {})), tt(f64, {3, N}));
  EXPECT_EQ(one("dot_general", {tt(f16, {0, 4}), tt(f16, {4, 0})}, dg({1}, {0})), tt(f16, {0, 0}));
}

TEST(InferDecomposition, SquareOpsKeepOrDropTheMatrix) {
  AttrMap lower{{"lower", true}};
  EXPECT_EQ(one("cholesky", {tt(f32, {B, N, N})}, lower), tt(f32, {B, N, N}));
  EXPECT_EQ(one("inv", {tt(bf16, {3, 3})}), tt(bf16, {3, 3}));
  EXPECT_EQ(one("matrix_exp", {tt(f64, {B, C, 0, 0})}), tt(f64, {B, C, 0, 0}));
  EXPECT_EQ(one("det", {tt(f32, {B, 2, 2})}), tt(f32, {B}));
  auto s = infer("slogdet", {tt(f64, {4, 4})});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], tt(f64, {}));
  EXPECT_EQ(s[1], tt(f64, {}));
  auto e = infer("eigh", {tt(f32, {B, N, N})}, lower);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0], tt(f32, {B, N}));
  EXPECT_EQ(e[1], tt(f32, {B, N, N}));
}

TEST(InferDecomposition, SolvesTakeTheRhsType) {
  EXPECT_EQ(one("solve", {tt(f32, {B, N, N}), tt(f32, {B, N, 3})}), tt(f32, {B, N, 3}));
  EXPECT_EQ(one("triangular_solve", {tt(f64, {B, 4, 4}), tt(f64, {B, 4, C})}, ts(true)), tt(f64, {B, 4, C}));
  EXPECT_EQ(one("triangular_solve", {tt(f64, {4, 4}), tt(f64, {C, 4})}, ts(false)), tt(f64, {C, 4}));
}

TEST(InferDecomposition, RectangularFactorizationsUseMinOfExtents) {
  auto l = infer("lu", {tt(f32, {B, 5, 3})});
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0], tt(f32, {B, 5, 3}));
  EXPECT_EQ(l[1], tt(i32, {B, 3}));
  EXPECT_EQ(l[2], tt(i32, {B, 5}));
  auto ls = infer("lu", {tt(f32, {M, N})});
  EXPECT_EQ(ls[1], tt(i32, {min(M, N)}));
  auto q = infer("qr", {tt(f64, {B, 5, 3})}, {{"full_matrices", false}});
  EXPECT_EQ(q[0], tt(f64, {B, 5, 3}));
  EXPECT_EQ(q[1], tt(f64, {B, 3, 3}));
  q = infer("qr", {tt(f64, {5, 3})}, {{"full_matrices", true}});
  EXPECT_EQ(q[0], tt(f64, {5, 5}));
  EXPECT_EQ(q[1], tt(f64, {5, 3}));
  auto s = infer("svd", {tt(f32, {B, 2, 6})}, {{"full_matrices", true}, {"compute_uv", true}});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], tt(f32, {B, 2, 2}));
  EXPECT_EQ(s[1], tt(f32, {B, 2}));
  EXPECT_EQ(s[2], tt(f32, {B, 6, 6}));
  s = infer("svd", {tt(f32, {M, N})}, {{"full_matrices", false}, {"compute_uv", true}});
  EXPECT_EQ(s[0], tt(f32, {M, min(M, N)}));
  EXPECT_EQ(s[2], tt(f32, {min(M, N), N}));
  s = infer("svd", {tt(f16, {4, 3})}, {{"full_matrices", false}, {"compute_uv", false}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], tt(f16, {3}));
}

TEST(InferDecomposition, RankNormTrace) {
  EXPECT_EQ(one("matrix_rank", {tt(f32, {B, 3, 4})}), tt(i64, {B}));
  EXPECT_EQ(one("matrix_rank", {tt(f32, {3, 4})}, {{"tol", 0.5}}), tt(i64, {}));
  EXPECT_EQ(one("norm", {tt(f32, {B, 3, 4})}, {{"ord", std::string("nuc")}}), tt(f32, {B}));
  EXPECT_EQ(one("norm", {tt(f64, {B, 3, 4})}, {{"ord", std::string("vector")}, {"p", 3.0}}), tt(f64, {B, 3}));
  EXPECT_EQ(one("trace", {tt(i32, {2, B, 3})}, {{"offset", int64_t{-1}}, {"axis1", int64_t{2}}, {"axis2", int64_t{0}}}),
            tt(i32, {B}));
}

TEST(MustFailDecomposition, ShapesAndAttributes) {
  expect_fail<ShapeError>("dot_general", {tt(f32, {3, 4}), tt(f32, {5, 6})}, dg({1}, {0}), "paired axes must be equal");
  expect_fail<ShapeError>("dot_general", {tt(f32, {3, 4}), tt(f32, {4})}, dg({1}, {0}, {0}, {}), "different lengths");
  expect_fail<ShapeError>("dot_general", {tt(f32, {3, 4}), tt(f32, {4})}, dg({2}, {0}), "out of range");
  expect_fail<ShapeError>("dot_general", {tt(f32, {4, 4}), tt(f32, {4, 4})}, dg({0}, {0}, {0}, {1}), "appears twice");
  expect_fail<ShapeError>("dot_general", {tt(f32, {B, 4}), tt(f32, {C, 4})}, dg({1}, {1}, {0}, {0}),
                          "paired axes must be equal");
  expect_fail<TypeError>("dot_general", {tt(bool_, {2}), tt(bool_, {2})}, dg({0}, {0}), "dot_general");
  expect_fail<TypeError>("dot_general", {tt(f32, {2}), tt(f64, {2})}, dg({0}, {0}), "dot_general");
  expect_fail<ShapeError>("cholesky", {tt(f32, {3, 4})}, {{"lower", true}}, "not a stack of square matrices");
  expect_fail<ShapeError>("cholesky", {tt(f32, {3})}, {{"lower", true}}, "rank >= 2");
  expect_fail<TypeError>("cholesky", {tt(i32, {3, 3})}, {{"lower", true}}, "cholesky");
  expect_fail<TypeError>("cholesky", {tt(f32, {3, 3})}, {}, "lower");
  expect_fail<ShapeError>("inv", {tt(f32, {B, M, N})}, {}, "not a stack of square matrices");
  expect_fail<ShapeError>("solve", {tt(f32, {3, 3}), tt(f32, {4, 1})}, {}, "needs as many rows");
  expect_fail<ShapeError>("solve", {tt(f32, {2, 3, 3}), tt(f32, {3, 1})}, {}, "same batch dims");
  expect_fail<ShapeError>("solve", {tt(f32, {B, 3, 3}), tt(f32, {C, 3, 1})}, {}, "batch dim 0 differs");
  expect_fail<ShapeError>("triangular_solve", {tt(f32, {3, 3}), tt(f32, {3, 2})}, ts(false), "must match a");
  expect_fail<ShapeError>("det", {tt(f64, {2, 3})}, {}, "square");
  expect_fail<ShapeError>("eigh", {tt(f64, {2, 3})}, {{"lower", true}}, "square");
  expect_fail<ShapeError>("qr", {tt(f64, {3})}, {{"full_matrices", true}}, "rank >= 2");
  expect_fail<TypeError>("svd", {tt(f64, {3, 3})}, {{"full_matrices", true}}, "compute_uv");
  expect_fail<TypeError>("matrix_rank", {tt(f32, {3, 3})}, {{"tol", 0.1}, {"rtol", 0.1}}, "not both");
  expect_fail<TypeError>("matrix_rank", {tt(f32, {3, 3})}, {{"tol", -1.0}}, "non-negative");
  expect_fail<TypeError>("norm", {tt(f32, {3, 3})}, {{"ord", std::string("3")}}, "unknown ord");
  expect_fail<TypeError>("norm", {tt(f32, {3, 3})}, {{"ord", std::string("vector")}}, "needs the float attribute");
  expect_fail<TypeError>("norm", {tt(f32, {3, 3})}, {{"ord", std::string("fro")}, {"p", 2.0}}, "only applies");
  expect_fail<TypeError>("norm", {tt(f32, {3})}, {{"ord", std::string("vector")}, {"p", std::nan("")}}, "NaN");
  expect_fail<ShapeError>("norm", {tt(f32, {3})}, {{"ord", std::string("fro")}}, "rank >= 2");
  expect_fail<ShapeError>("trace", {tt(f32, {3, 3})},
                          {{"offset", int64_t{0}}, {"axis1", int64_t{1}}, {"axis2", int64_t{1}}}, "must differ");
  expect_fail<ShapeError>("trace", {tt(f32, {3, 3})},
                          {{"offset", int64_t{0}}, {"axis1", int64_t{0}}, {"axis2", int64_t{-1}}}, "out of range");
  expect_fail<ShapeError>("trace", {tt(f32, {3})},
                          {{"offset", int64_t{0}}, {"axis1", int64_t{0}}, {"axis2", int64_t{1}}}, "rank >= 2");
}

}  // namespace
}  // namespace evoxc
