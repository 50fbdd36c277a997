// The evoxc::linalg and dot_general functions: promotion, numpy's operand conventions, emitted ops and their errors.
#include "evoxc/trace/linalg.h"

#include <gtest/gtest.h>

#include <cmath>

#include "evoxc/trace/trace.h"

namespace evoxc {
namespace {

namespace la = linalg;
const DimExpr B = Dim("B");
const DimExpr N = Dim("N");

// The types of a traced function's outputs and the printed graph.
template <typename F, typename... S>
std::pair<std::vector<TensorType>, std::string> types_of(F f, S... specs) {
  Graph g = trace(f, specs...);
  std::vector<TensorType> out;
  for (const TensorType& t : g.main().result_types()) out.push_back(t);
  return {out, g.to_string()};
}

TEST(TraceLinalg, FloatOnlyFunctionsConvertIntsToFloat32) {
  auto [t, text] = types_of([](SymbolicTensor x) { return la::inv(x); }, TensorSpec({3, 3}, i32));
  EXPECT_EQ(t[0], TensorType(f32, {3, 3}));
  EXPECT_NE(text.find("evoxc.convert"), std::string::npos);
  EXPECT_NE(text.find("evoxc.inv"), std::string::npos);
  auto [h, _] = types_of([](SymbolicTensor x) { return la::det(x); }, TensorSpec({B, 2, 2}, f16));
  EXPECT_EQ(h[0], TensorType(f16, {B}));
}

TEST(TraceLinalg, SolveBroadcastsBatchesAndTakesVectorRhs) {
  auto [t, text] = types_of([](SymbolicTensor a, SymbolicTensor b) { return la::solve(a, b); },
                            TensorSpec({B, 3, 3}, f32), TensorSpec({3}, f64));
  EXPECT_EQ(t[0], TensorType(f64, {B, 3}));
  EXPECT_NE(text.find("evoxc.broadcast_in_dim"), std::string::npos);
  auto [u, _] = types_of([](SymbolicTensor a, SymbolicTensor b) { return la::solve(a, b); }, TensorSpec({1, 3, 3}, f32),
                         TensorSpec({4, 3, 2}, f32));
  EXPECT_EQ(u[0], TensorType(f32, {4, 3, 2}));
  auto [v, __] = types_of([](SymbolicTensor a, SymbolicTensor b) { return la::triangular_solve(a, b, true, true); },
                          TensorSpec({3, 3}, f32), TensorSpec({B, 3, 5}, f32));
  EXPECT_EQ(v[0], TensorType(f32, {B, 3, 5}));
}

TEST(TraceLinalg, MultiResultFunctions) {
  auto [t, _] = types_of(
      [](SymbolicTensor a) {
        auto q = la::qr(a);
        auto s = la::svd(a, false);
        auto l = la::lu(a);
        auto e = la::eigh(la::matrix_exp(dot_general(a, a, {1}, {1})));
        auto d = la::slogdet(e.eigenvectors);
        return std::vector{q.Q, q.R, s.U, s.S, s.Vh, l.lu, l.pivots, l.permutation, e.eigenvalues, d.sign};
      },
      TensorSpec({5, 3}, f32));
  EXPECT_EQ(t[0], TensorType(f32, {5, 3}));
  EXPECT_EQ(t[1], TensorType(f32, {3, 3}));
  EXPECT_EQ(t[2], TensorType(f32, {5, 3}));
  EXPECT_EQ(t[3], TensorType(f32, {3}));
  EXPECT_EQ(t[4], TensorType(f32, {3, 3}));
  EXPECT_EQ(t[6], TensorType(i32, {3}));
  EXPECT_EQ(t[7], TensorType(i32, {5}));
  EXPECT_EQ(t[8], TensorType(f32, {5}));
  EXPECT_EQ(t[9], TensorType(f32, {}));
  auto [r, __] = types_of([](SymbolicTensor a) { return la::qr(a, "r").R; }, TensorSpec({5, 3}, f32));
  EXPECT_EQ(r[0], TensorType(f32, {3, 3}));
}

TEST(TraceLinalg, NormAxesKeepdimsAndDefaults) {
  auto [t, _] = types_of(
      [](SymbolicTensor x) {
        return std::vector{
            la::norm(x), la::norm(x, std::nullopt, std::nullopt, true), la::norm(x, 1.0, std::vector<int64_t>{1}),
            la::norm(x, "nuc", std::vector<int64_t>{-1, 0}, true), la::norm(x, INFINITY, std::vector<int64_t>{0, 2})};
      },
      TensorSpec({B, 3, 4}, f32));
  EXPECT_EQ(t[0], TensorType(f32, {}));
  EXPECT_EQ(t[1], TensorType(f32, {1, 1, 1}));
  EXPECT_EQ(t[2], TensorType(f32, {B, 4}));
  EXPECT_EQ(t[3], TensorType(f32, {1, 3, 1}));
  EXPECT_EQ(t[4], TensorType(f32, {3}));
}

TEST(TraceLinalg, RankTraceAndDotGeneralDtypes) {
  auto [t, text] = types_of(
      [](SymbolicTensor x, SymbolicTensor v) {
        return std::vector{la::matrix_rank(x), la::matrix_rank(v), la::trace(x, 1, -1, -2), la::trace(x)};
      },
      TensorSpec({2, N, N}, u8), TensorSpec({N}, f32));
  EXPECT_EQ(t[0], TensorType(i64, {2}));
  EXPECT_EQ(t[1], TensorType(i64, {}));
  EXPECT_EQ(t[2], TensorType(u64, {2}));
  EXPECT_EQ(t[3], TensorType(u64, {N}));
  EXPECT_NE(text.find("axis1 = 2, axis2 = 1"), std::string::npos) << text;
  auto [d, _] = types_of([](SymbolicTensor a, SymbolicTensor b) { return dot_general(a, b, {-1}, {-2}, {0}, {0}); },
                         TensorSpec({B, 2, 3}, i32), TensorSpec({B, 3, 4}, f32));
  EXPECT_EQ(d[0], TensorType(f32, {B, 2, 4}));
}

template <typename F, typename... S>
void expect_trace_fail(const std::string& substr, F f, S... specs) {
  try {
    trace(f, specs...);
    ADD_FAILURE() << "expected an error containing '" << substr << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(substr), std::string::npos) << e.what();
  }
}

TEST(TraceLinalgMustFail, BadOptionsAndShapes) {
  TensorSpec m({3, 3}, f32), v({3}, f32);
  expect_trace_fail(
      "unknown mode", [](SymbolicTensor a) { return la::qr(a, "full").R; }, m);
  expect_trace_fail(
      "UPLO", [](SymbolicTensor a) { return la::eigh(a, "X").eigenvalues; }, m);
  expect_trace_fail(
      "unknown ord", [](SymbolicTensor a) { return la::norm(a, "max"); }, m);
  expect_trace_fail(
      "not a matrix norm", [](SymbolicTensor a) { return la::norm(a, 3.0); }, m);
  expect_trace_fail(
      "needs two axes", [](SymbolicTensor a) { return la::norm(a, "fro"); }, v);
  expect_trace_fail(
      "1-D or 2-D", [](SymbolicTensor a) { return la::norm(a, 2.0); }, TensorSpec({2, 2, 2}, f32));
  expect_trace_fail(
      "repeated",
      [](SymbolicTensor a) {
        return la::norm(a, 2.0, std::vector<int64_t>{1, -1});
      },
      m);
  expect_trace_fail(
      "at most one", [](SymbolicTensor a) { return la::matrix_rank(a, 0.1, 0.1); }, m);
  expect_trace_fail(
      "rank >= 2", [](SymbolicTensor a) { return la::cholesky(a); }, v);
  expect_trace_fail(
      "square", [](SymbolicTensor a) { return la::inv(a); }, TensorSpec({2, 3}, f32));
  expect_trace_fail(
      "scalar", [](SymbolicTensor a, SymbolicTensor b) { return la::solve(a, b); }, m, TensorSpec({}, f32));
  expect_trace_fail(
      "rank >= 2", [](SymbolicTensor a) { return la::trace(a); }, v);
  expect_trace_fail(
      "axis", [](SymbolicTensor a) { return la::trace(a, 0, 0, 5); }, m);
  expect_trace_fail(
      "paired axes must be equal", [](SymbolicTensor a, SymbolicTensor b) { return dot_general(a, b, {1}, {0}); }, m,
      TensorSpec({4, 2}, f32));
  expect_trace_fail(
      "dot_general", [](SymbolicTensor a) { return dot_general(a, a, {0}, {0}); }, TensorSpec({2}, bool_));
}

}  // namespace
}  // namespace evoxc
