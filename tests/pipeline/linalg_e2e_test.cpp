// End to end: linear algebra traced over a symbolic batch, built, run, and round-tripped through text and JSON.
#include <gtest/gtest.h>

#include <cmath>

#include "evoxc/evoxc.h"
#include "evoxc/trace/linalg.h"

namespace evoxc {
namespace {

namespace la = linalg;

// A least-squares-style program: SPD system solved two ways (LU and Cholesky + two triangular solves),
// plus det/slogdet/rank/trace/eigenvalue identities that hold for any SPD input.
std::map<std::string, SymbolicTensor> program(SymbolicTensor a, SymbolicTensor b) {
  SymbolicTensor spd = dot_general(a, a, {2}, {2}, {0}, {0}) + la::expm(a * 0.0);  // A A^T + I (expm(0) = I)
  // numpy 2: a 2-D b is a stack of matrices, so one right-hand side per batch needs a unit column axis.
  SymbolicTensor x = squeeze(la::solve(spd, expand_dims(b, {2})), {2});
  SymbolicTensor l = la::cholesky(spd);
  SymbolicTensor y = la::triangular_solve(l, expand_dims(b, {2}), true, true);
  SymbolicTensor z = la::triangular_solve(l, y, true, true, true);  // L^T z = y
  auto sl = la::slogdet(spd);
  return {{"x", x},
          {"z", squeeze(z, {2})},
          {"det", la::det(spd)},
          {"sign", sl.sign},
          {"logdet", sl.logabsdet},
          {"rank", la::matrix_rank(spd)},
          {"tr", la::trace(spd, 0, -2, -1)},
          {"eig_sum", sum(la::eigvalsh(spd), {1})}};
}

TEST(LinalgE2E, SymbolicBatchAgreesWithIdentities) {
  DimExpr B = Dim("B");
  Executable exe = build(program, TensorSpec({B, 3, 3}, f64), TensorSpec({B, 3}, f64));
  for (int64_t nb : {0, 1, 4}) {
    Tensor a = Tensor::empty({nb, 3, 3}, f64), b = Tensor::empty({nb, 3}, f64);
    for (int64_t i = 0; i < nb * 9; ++i) a.data<double>()[i] = std::sin(0.7 * static_cast<double>(i) + 0.3);
    for (int64_t i = 0; i < nb * 3; ++i) b.data<double>()[i] = std::cos(static_cast<double>(i));
    Tree<Tensor> out = run(exe, a, b);
    const Tensor& x = out["x"].leaf();
    const Tensor& z = out["z"].leaf();
    ASSERT_EQ(x.shape(), (std::vector<int64_t>{nb, 3}));
    ASSERT_EQ(out["rank"].leaf().dtype(), i64);
    for (int64_t q = 0; q < nb; ++q) {
      // S = A A^T + I computed here in double.
      double s[9];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          double v = i == j ? 1.0 : 0.0;
          for (int k = 0; k < 3; ++k) v += a.data<double>()[q * 9 + i * 3 + k] * a.data<double>()[q * 9 + j * 3 + k];
          s[i * 3 + j] = v;
        }
      for (int i = 0; i < 3; ++i) {
        double r = 0;
        for (int k = 0; k < 3; ++k) r += s[i * 3 + k] * x.data<double>()[q * 3 + k];
        EXPECT_NEAR(r, b.data<double>()[q * 3 + i], 1e-10);
        EXPECT_NEAR(z.data<double>()[q * 3 + i], x.data<double>()[q * 3 + i], 1e-10);
      }
      double det =
          s[0] * (s[4] * s[8] - s[5] * s[7]) - s[1] * (s[3] * s[8] - s[5] * s[6]) + s[2] * (s[3] * s[7] - s[4] * s[6]);
      EXPECT_NEAR(out["det"].leaf().data<double>()[q], det, 1e-10 * det);
      EXPECT_EQ(out["sign"].leaf().data<double>()[q], 1.0);
      EXPECT_NEAR(out["logdet"].leaf().data<double>()[q], std::log(det), 1e-10);
      EXPECT_EQ(out["rank"].leaf().data<int64_t>()[q], 3);
      double tr = s[0] + s[4] + s[8];
      EXPECT_NEAR(out["tr"].leaf().data<double>()[q], tr, 1e-12);
      EXPECT_NEAR(out["eig_sum"].leaf().data<double>()[q], tr, 1e-10);
    }
  }
}

TEST(LinalgE2E, GraphRoundTripsThroughTextAndJson) {
  auto f = [](SymbolicTensor a) {
    auto q = la::qr(a, "complete");
    auto s = la::svd(a, false);
    auto l = la::lu(a);
    return std::vector{q.Q,
                       s.S,
                       l.permutation,
                       la::norm(a, -INFINITY, std::vector<int64_t>{1, 2}),
                       la::norm(a, 0.5, std::vector<int64_t>{-1}),
                       la::matrix_rank(a, std::nullopt, 0.25)};
  };
  Graph g = trace(f, TensorSpec({Dim("B"), 4, 3}, f32));
  Graph p = Graph::parse(g.to_string());
  EXPECT_EQ(p.to_string(), g.to_string());
  Graph j = Graph::from_json(g.to_json());
  EXPECT_EQ(j.to_string(), g.to_string());
  Executable exe = build_graph(p);
  Tensor a = Tensor::empty({2, 4, 3}, f32);
  for (int64_t i = 0; i < 24; ++i) a.data<float>()[i] = static_cast<float>((i * 7) % 5) - 2.0f;
  Tree<Tensor> out = run(exe, a);
  ASSERT_EQ(out[0].leaf().shape(), (std::vector<int64_t>{2, 4, 4}));
  ASSERT_EQ(out[2].leaf().dtype(), i32);
  ASSERT_EQ(out[5].leaf().dtype(), i64);
}

}  // namespace
}  // namespace evoxc
