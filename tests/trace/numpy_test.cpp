// Tests for the numpy-shaped composites (einsum, softmax, var/std, stack, average, isclose) against hand-computed
// values.
#include "evoxc/trace/numpy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "evoxc/evoxc.h"

namespace evoxc {
namespace {

Tensor f32v(std::vector<float> v, std::vector<int64_t> shape) {
  return Tensor::from_vector<float>(v, std::move(shape));
}
Tensor i32v(std::vector<int32_t> v, std::vector<int64_t> shape) {
  return Tensor::from_vector<int32_t>(v, std::move(shape));
}

void expect_near(const Tensor& t, const std::vector<double>& want, std::vector<int64_t> shape, double tol = 1e-5) {
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(t.get_as_double(static_cast<int64_t>(i)))) << "element " << i;
    } else {
      EXPECT_NEAR(t.get_as_double(static_cast<int64_t>(i)), want[i], tol) << "element " << i;
    }
  }
}

Tensor run1(auto f, const Tensor& a) { return evaluate(f, a).leaf(); }
Tensor run2(auto f, const Tensor& a, const Tensor& b) { return evaluate(f, a, b).leaf(); }

// a = [[1,2,3],[4,5,6]], b = [[1,0],[0,1],[1,1]]
const Tensor kA = f32v({1, 2, 3, 4, 5, 6}, {2, 3});
const Tensor kB = f32v({1, 0, 0, 1, 1, 1}, {3, 2});

TEST(Einsum, MatmulExplicitAndImplicit) {
  auto f = [](SymbolicTensor a, SymbolicTensor b) { return einsum("ij,jk->ik", a, b); };
  expect_near(run2(f, kA, kB), {4, 5, 10, 11}, {2, 2});
  auto g = [](SymbolicTensor a, SymbolicTensor b) { return einsum("ij,jk", a, b); };
  expect_near(run2(g, kA, kB), {4, 5, 10, 11}, {2, 2});
  // Implicit output in ASCII order: "ji,jk" → "ik"... here labels i,k sorted.
  auto h = [](SymbolicTensor a, SymbolicTensor b) { return einsum("ij,jk->ki", a, b); };
  expect_near(run2(h, kA, kB), {4, 10, 5, 11}, {2, 2});
}

TEST(Einsum, TransposeTraceDiagonalAndSum) {
  auto t = [](SymbolicTensor a) { return einsum("ij->ji", a); };
  expect_near(run1(t, kA), {1, 4, 2, 5, 3, 6}, {3, 2});
  auto implicit_t = [](SymbolicTensor a) { return einsum("ji", a); };  // implicit output "ij": a transpose
  expect_near(run1(implicit_t, kA), {1, 4, 2, 5, 3, 6}, {3, 2});
  Tensor sq = f32v({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  auto trace_ = [](SymbolicTensor a) { return einsum("ii", a); };
  expect_near(run1(trace_, sq), {15}, {});
  auto diag = [](SymbolicTensor a) { return einsum("ii->i", a); };
  expect_near(run1(diag, sq), {1, 5, 9}, {3});
  auto total = [](SymbolicTensor a) { return einsum("ij->", a); };
  expect_near(run1(total, kA), {21}, {});
  auto rows = [](SymbolicTensor a) { return einsum("ij->i", a); };
  expect_near(run1(rows, kA), {6, 15}, {2});
}

TEST(Einsum, DiagonalIgnoresNanOffTheDiagonal) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor sq = f32v({1, nan, nan, 2}, {2, 2});
  auto diag = [](SymbolicTensor a) { return einsum("ii->i", a); };
  expect_near(run1(diag, sq), {1, 2}, {2});
}

TEST(Einsum, BatchedOuterDotAndEllipsis) {
  Tensor x = f32v({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  Tensor y = f32v({1, 0, 0, 1, 2, 0, 0, 2}, {2, 2, 2});
  auto bmm = [](SymbolicTensor a, SymbolicTensor b) { return einsum("bij,bjk->bik", a, b); };
  expect_near(run2(bmm, x, y), {1, 2, 3, 4, 10, 12, 14, 16}, {2, 2, 2});
  auto ell = [](SymbolicTensor a, SymbolicTensor b) { return einsum("...ij,...jk->...ik", a, b); };
  expect_near(run2(ell, x, y), {1, 2, 3, 4, 10, 12, 14, 16}, {2, 2, 2});
  Tensor u = f32v({1, 2}, {2}), v = f32v({3, 4, 5}, {3});
  auto out = [](SymbolicTensor a, SymbolicTensor b) { return einsum("i,j->ij", a, b); };
  expect_near(run2(out, u, v), {3, 4, 5, 6, 8, 10}, {2, 3});
  auto dotp = [](SymbolicTensor a, SymbolicTensor b) { return einsum("i,i", a, b); };
  expect_near(run2(dotp, u, u), {5}, {});
  // Three operands: u^T A v with A (2,3).
  auto three = [](SymbolicTensor a, SymbolicTensor m, SymbolicTensor b) {
    return einsum("i,ij,j->", std::vector<SymbolicTensor>{a, m, b});
  };
  expect_near(evaluate(three, u, kA, v).leaf(), {1 * (3 + 8 + 15) + 2 * (12 + 20 + 30)}, {});
}

TEST(Einsum, BroadcastsUnitExtentsAndKeepsIntegerDtype) {
  Tensor a = i32v({1, 2, 3}, {1, 3}), b = i32v({1, 1, 1, 2, 2, 2}, {2, 3});
  auto f = [](SymbolicTensor x, SymbolicTensor y) { return einsum("ij,ij->ij", x, y); };
  Tensor r = run2(f, a, b);
  EXPECT_EQ(r.dtype(), i32);
  expect_near(r, {1, 2, 3, 2, 4, 6}, {2, 3});
  auto g = [](SymbolicTensor x, SymbolicTensor y) { return einsum("ij,kj->ik", x, y); };
  Tensor s = run2(g, a, b);
  EXPECT_EQ(s.dtype(), i32);
  expect_near(s, {6, 12}, {1, 2});
}

TEST(Einsum, BadSubscriptsAreTraceErrors) {
  auto bad_rank = [](SymbolicTensor a) { return einsum("ijk->i", a); };
  EXPECT_THROW(trace(bad_rank, TensorSpec({2, 3}, f32)), TraceError);
  auto bad_char = [](SymbolicTensor a) { return einsum("i1->i", a); };
  EXPECT_THROW(trace(bad_char, TensorSpec({2, 3}, f32)), TraceError);
  auto bad_out = [](SymbolicTensor a) { return einsum("ij->q", a); };
  EXPECT_THROW(trace(bad_out, TensorSpec({2, 3}, f32)), TraceError);
  auto mismatch = [](SymbolicTensor a, SymbolicTensor b) { return einsum("ij,ij->i", a, b); };
  EXPECT_THROW(trace(mismatch, TensorSpec({2, 3}, f32), TensorSpec({2, 4}, f32)), ShapeError);
}

TEST(Numpy, OuterAndInner) {
  Tensor u = f32v({1, 2}, {2}), v = f32v({3, 4, 5}, {3});
  auto o = [](SymbolicTensor a, SymbolicTensor b) { return outer(a, b); };
  expect_near(run2(o, u, v), {3, 4, 5, 6, 8, 10}, {2, 3});
  auto in = [](SymbolicTensor a, SymbolicTensor b) { return inner(a, b); };
  expect_near(run2(in, v, v), {50}, {});
  // inner(A (2,3), B (3,2)^T rows): A · A^T.
  expect_near(run2(in, kA, kA), {14, 32, 32, 77}, {2, 2});
}

TEST(Numpy, SoftmaxIsStableAndSumsToOne) {
  Tensor x = f32v({1000, 1000, 0, 1, 2, 3}, {2, 3});
  auto f = [](SymbolicTensor a) { return softmax(a); };
  double e0 = std::exp(-1000.0);
  expect_near(run1(f, x), {0.5 / (1 + e0), 0.5 / (1 + e0), 0, 0.09003057, 0.24472847, 0.66524096}, {2, 3});
  auto g = [](SymbolicTensor a) { return log_softmax(a); };
  expect_near(run1(g, x),
              {-std::log(2.0), -std::log(2.0), -1000 - std::log(2.0), -2.40760596, -1.40760596, -0.40760596}, {2, 3},
              1e-4);
  auto cols = [](SymbolicTensor a) { return softmax(a, 0); };
  Tensor c = run1(cols, f32v({0, 0, 1, 0}, {2, 2}));
  expect_near(c, {0.26894142, 0.5, 0.73105858, 0.5}, {2, 2});
  Tensor ints = run1(f, i32v({0, 0}, {2}));
  EXPECT_EQ(ints.dtype(), f32);
  expect_near(ints, {0.5, 0.5}, {2});
}

TEST(Numpy, VarStdWithDdofAndKeepdims) {
  auto v = [](SymbolicTensor a) { return var(a); };
  expect_near(run1(v, kA), {35.0 / 12.0}, {});
  auto v1 = [](SymbolicTensor a) { return var(a, {1}, 1, true); };
  expect_near(run1(v1, kA), {1, 1}, {2, 1});
  auto s0 = [](SymbolicTensor a) { return evoxc::std(a, {0}); };
  expect_near(run1(s0, kA), {1.5, 1.5, 1.5}, {3});
  auto vi = [](SymbolicTensor a) { return var(a, {}, 1); };
  Tensor r = run1(vi, i32v({1, 2, 3, 4}, {4}));
  EXPECT_EQ(r.dtype(), f32);
  expect_near(r, {5.0 / 3.0}, {});
  auto too_many = [](SymbolicTensor a) { return var(a, {}, 4); };
  Tensor z = run1(too_many, i32v({1, 2, 3, 4}, {4}));
  EXPECT_TRUE(std::isinf(z.get_as_double(0)));
}

TEST(Numpy, VarWithSymbolicExtent) {
  auto f = [](SymbolicTensor a) { return var(a, {0}, 1); };
  Executable exe = build(f, TensorSpec({Dim("N")}, f32));
  expect_near(run(exe, f32v({1, 2, 3, 4}, {4})).leaf(), {5.0 / 3.0}, {});
}

TEST(Numpy, AverageWithAndWithoutWeights) {
  auto m = [](SymbolicTensor a) { return average(a); };
  expect_near(run1(m, kA), {3.5}, {});
  auto w1 = [](SymbolicTensor a, SymbolicTensor w) { return average(a, {1}, w); };
  expect_near(run2(w1, kA, f32v({1, 0, 1}, {3})), {2, 5}, {2});
  auto wfull = [](SymbolicTensor a, SymbolicTensor w) { return average(a, {}, w); };
  expect_near(run2(wfull, kA, f32v({0, 0, 0, 0, 0, 1}, {2, 3})), {6}, {});
  auto bad = [](SymbolicTensor a, SymbolicTensor w) { return average(a, {}, w); };
  EXPECT_THROW(trace(bad, TensorSpec({2, 3}, f32), TensorSpec({3}, f32)), ShapeError);
}

TEST(Numpy, StackHstackVstack) {
  Tensor u = f32v({1, 2}, {2}), v = f32v({3, 4}, {2});
  auto s0 = [](SymbolicTensor a, SymbolicTensor b) { return stack({a, b}); };
  expect_near(run2(s0, u, v), {1, 2, 3, 4}, {2, 2});
  auto s1 = [](SymbolicTensor a, SymbolicTensor b) { return stack({a, b}, -1); };
  expect_near(run2(s1, u, v), {1, 3, 2, 4}, {2, 2});
  auto h = [](SymbolicTensor a, SymbolicTensor b) { return hstack({a, b}); };
  expect_near(run2(h, u, v), {1, 2, 3, 4}, {4});
  expect_near(run2(h, kA, kA), {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, {2, 6});
  auto vs = [](SymbolicTensor a, SymbolicTensor b) { return vstack({a, b}); };
  expect_near(run2(vs, u, v), {1, 2, 3, 4}, {2, 2});
  auto bad = [](SymbolicTensor a, SymbolicTensor b) { return stack({a, b}); };
  EXPECT_THROW(trace(bad, TensorSpec({2}, f32), TensorSpec({3}, f32)), ShapeError);
}

TEST(Numpy, IscloseAndAllclose) {
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = f32v({1, 1, inf, inf, nan, 1e10f}, {6});
  Tensor b = f32v({1.000001f, 1.1f, inf, -inf, nan, 1.000001e10f}, {6});
  auto c = [](SymbolicTensor x, SymbolicTensor y) { return isclose(x, y); };
  Tensor r = run2(c, a, b);
  EXPECT_EQ(r.dtype(), bool_);
  expect_near(r, {1, 0, 1, 0, 0, 1}, {6});
  auto cn = [](SymbolicTensor x, SymbolicTensor y) { return isclose(x, y, 1e-5, 1e-8, true); };
  expect_near(run2(cn, a, b), {1, 0, 1, 0, 1, 1}, {6});
  auto all_ = [](SymbolicTensor x, SymbolicTensor y) { return allclose(x, y); };
  Tensor t = run2(all_, a, a);
  EXPECT_EQ(t.dtype(), bool_);
  expect_near(t, {0}, {});  // NaN != NaN
  auto all_nan = [](SymbolicTensor x, SymbolicTensor y) { return allclose(x, y, 1e-5, 1e-8, true); };
  expect_near(run2(all_nan, a, a), {1}, {});
  auto scalar = [](SymbolicTensor x) { return isclose(x, 2); };
  expect_near(run1(scalar, i32v({2, 3}, {2})), {1, 0}, {2});
}

}  // namespace
}  // namespace evoxc
