// Interpreter kernels of the decomposition family against hand values and identities checked in double.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "evoxc/evoxc.h"
#include "evoxc/trace/linalg.h"
#include "interp/graph_util.h"
#include "interp/thread_pool.h"

namespace evoxc::testing {
namespace {

using V = std::vector<double>;
using Fn1 = std::function<std::vector<SymbolicTensor>(SymbolicTensor)>;
using Fn2 = std::function<std::vector<SymbolicTensor>(SymbolicTensor, SymbolicTensor)>;
namespace la = evoxc::linalg;

std::vector<Tensor> run1(const Fn1& f, const Tensor& a, std::optional<Shape> spec = std::nullopt) {
  Graph g = evoxc::trace([&](SymbolicTensor x) { return f(x); },
                         TensorSpec(spec ? *spec : Shape::from_ints(a.shape()), a.dtype()));
  return run_graph(g, {a});
}
std::vector<Tensor> run2(const Fn2& f, const Tensor& a, const Tensor& b) {
  Graph g = evoxc::trace([&](SymbolicTensor x, SymbolicTensor y) { return f(x, y); },
                         TensorSpec(Shape::from_ints(a.shape()), a.dtype()),
                         TensorSpec(Shape::from_ints(b.shape()), b.dtype()));
  return run_graph(g, {a, b});
}

double tol(DType t) {
  switch (t) {
    case DType::F16: return 3e-2;
    case DType::BF16: return 1.5e-1;
    case DType::F32: return 3e-4;
    default: return 1e-9;
  }
}

// Row-major (m, k) x (k, n) in double.
V mm(const V& a, const V& b, int64_t m, int64_t k, int64_t n) {
  V c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        c[static_cast<size_t>(i * n + j)] += a[static_cast<size_t>(i * k + p)] * b[static_cast<size_t>(p * n + j)];
  return c;
}
V tr(const V& a, int64_t m, int64_t n) {
  V t(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) t[static_cast<size_t>(j * m + i)] = a[static_cast<size_t>(i * n + j)];
  return t;
}
V eye(int64_t n) {
  V e(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) e[static_cast<size_t>(i * n + i)] = 1;
  return e;
}
V part(const V& v, int64_t q, int64_t size) { return V(v.begin() + q * size, v.begin() + (q + 1) * size); }
void expect_near(const V& got, const V& want, double t, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], t * std::max(1.0, std::fabs(want[i]))) << what << " at " << i;
}

// Values rounded to the dtype, so references see exactly what the kernel sees.
V rounded(DType t, const std::vector<int64_t>& shape, const V& v) { return to_doubles(make_tensor(t, shape, v)); }

// `batch` well-conditioned n x n matrices (diagonally dominant).
V well_conditioned(int64_t batch, int64_t n, uint32_t seed) {
  V v = sample_values(DType::F64, batch * n * n, seed);
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(q * n * n + i * n + i)] += 4.0 * static_cast<double>(n);
  return v;
}
// `batch` symmetric positive definite matrices M M^T + n I.
V spd(int64_t batch, int64_t n, uint32_t seed) {
  V m = sample_values(DType::F64, batch * n * n, seed), out;
  for (int64_t q = 0; q < batch; ++q) {
    V a = part(m, q, n * n);
    V s = mm(a, tr(a, n, n), n, n, n);
    for (int64_t i = 0; i < n; ++i) s[static_cast<size_t>(i * n + i)] += static_cast<double>(n);
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

const std::vector<DType> kMain = {DType::F32, DType::F64};
const std::vector<DType> kAll = {DType::F16, DType::BF16, DType::F32, DType::F64};

TEST(InterpCholesky, LowerAndUpperReconstructOnEveryFloat) {
  for (DType t : kAll) {
    const int64_t B = 3, n = 4;
    V a = rounded(t, {B, n, n}, spd(B, n, 1));
    for (bool upper : {false, true}) {
      auto r =
          run1([&](SymbolicTensor x) { return std::vector{la::cholesky(x, upper)}; }, make_tensor(t, {B, n, n}, a));
      ASSERT_EQ(r[0].dtype(), t);
      V l = to_doubles(r[0]);
      for (int64_t q = 0; q < B; ++q) {
        V f = part(l, q, n * n);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j)
            if (upper ? j < i : j > i) {
              EXPECT_EQ(f[static_cast<size_t>(i * n + j)], 0.0);
            }
        V rec = upper ? mm(tr(f, n, n), f, n, n, n) : mm(f, tr(f, n, n), n, n, n);
        expect_near(rec, part(a, q, n * n), tol(t) * 4, "cholesky " + std::string(dtype_name(t)));
      }
    }
  }
}

TEST(InterpCholesky, HandValueReadsOnlyItsTriangle) {
  // [[4, 2], [2, 5]] = L L^T with L = [[2, 0], [1, 2]]; the upper entry 99 is never read.
  auto r = run1([](SymbolicTensor x) { return std::vector{la::cholesky(x)}; },
                make_tensor(DType::F64, {2, 2}, {4, 99, 2, 5}));
  expect_near(to_doubles(r[0]), {2, 0, 1, 2}, 1e-15, "cholesky");
}

TEST(InterpCholesky, NotPositiveDefiniteGivesNanInThatMatrixOnly) {
  for (DType t : kMain) {
    V a = {4, 0, 0, 9, /**/ 1, 2, 2, 1, /**/ std::nan(""), 0, 0, 1};
    auto r = run1([](SymbolicTensor x) { return std::vector{la::cholesky(x)}; }, make_tensor(t, {3, 2, 2}, a));
    V l = to_doubles(r[0]);
    expect_near(part(l, 0, 4), {2, 0, 0, 3}, 1e-6, "pd");
    for (int i = 4; i < 12; ++i) EXPECT_TRUE(std::isnan(l[static_cast<size_t>(i)])) << i;
  }
}

TEST(InterpCholesky, ZeroSizeBatchAndMatrix) {
  auto r = run1([](SymbolicTensor x) { return std::vector{la::cholesky(x)}; }, make_tensor(DType::F32, {0, 3, 3}, {}));
  EXPECT_EQ(r[0].shape(), (std::vector<int64_t>{0, 3, 3}));
  r = run1([](SymbolicTensor x) { return std::vector{la::cholesky(x)}; }, make_tensor(DType::F32, {2, 0, 0}, {}));
  EXPECT_EQ(r[0].shape(), (std::vector<int64_t>{2, 0, 0}));
}

TEST(InterpTriangularSolve, EveryFlagCombination) {
  const int64_t n = 3, k = 2;
  for (DType t : kMain)
    for (int flags = 0; flags < 16; ++flags) {
      bool left = flags & 1, lower = flags & 2, trans = flags & 4, unit = flags & 8;
      // The unused triangle holds 100s, the diagonal 7s when unit_diagonal (both must be ignored).
      V a(static_cast<size_t>(n * n)), eff(static_cast<size_t>(n * n), 0.0);
      V s = sample_values(DType::F64, n * n, 7 + static_cast<uint32_t>(flags));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          size_t x = static_cast<size_t>(i * n + j);
          bool in = lower ? j < i : j > i;
          if (i == j) {
            a[x] = unit ? 7.0 : 2.0 + std::fabs(s[x]);
            eff[x] = unit ? 1.0 : a[x];
          } else {
            a[x] = in ? s[x] : 100.0;
            eff[x] = in ? s[x] : 0.0;
          }
        }
      if (trans) eff = tr(eff, n, n);
      std::vector<int64_t> bs = left ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
      V b = sample_values(DType::F64, n * k, 3);
      auto r = run2([&](SymbolicTensor x,
                        SymbolicTensor y) { return std::vector{la::triangular_solve(x, y, left, lower, trans, unit)}; },
                    make_tensor(t, {n, n}, a), make_tensor(t, bs, b));
      V x = to_doubles(r[0]);
      V back = left ? mm(eff, x, n, n, k) : mm(x, eff, k, n, n);
      expect_near(back, b, tol(t) * 10, "triangular_solve flags " + std::to_string(flags));
    }
}

TEST(InterpSolve, ResidualBatchedAndVectorRhs) {
  for (DType t : kAll) {
    const int64_t B = 2, n = 4, k = 3;
    V a = rounded(t, {B, n, n}, well_conditioned(B, n, 5));
    V b = rounded(t, {B, n, k}, sample_values(DType::F64, B * n * k, 6));
    auto r = run2([](SymbolicTensor x, SymbolicTensor y) { return std::vector{la::solve(x, y)}; },
                  make_tensor(t, {B, n, n}, a), make_tensor(t, {B, n, k}, b));
    V x = to_doubles(r[0]);
    for (int64_t q = 0; q < B; ++q)
      expect_near(mm(part(a, q, n * n), part(x, q, n * k), n, n, k), part(b, q, n * k), tol(t) * 20, "solve");
  }
  // numpy 2: a 1-D b is one right-hand side, broadcast against a's batch.
  auto r = run2([](SymbolicTensor x, SymbolicTensor y) { return std::vector{la::solve(x, y)}; },
                make_tensor(DType::F64, {2, 2, 2}, {2, 0, 0, 4, 1, 1, 0, 1}), make_tensor(DType::F64, {2}, {2, 4}));
  EXPECT_EQ(r[0].shape(), (std::vector<int64_t>{2, 2}));
  expect_near(to_doubles(r[0]), {1, 1, -2, 4}, 1e-14, "solve vector");
}

TEST(InterpSolve, SingularGivesNonFiniteNotAnError) {
  auto r = run2([](SymbolicTensor x, SymbolicTensor y) { return std::vector{la::solve(x, y)}; },
                make_tensor(DType::F64, {2, 2}, {1, 2, 2, 4}), make_tensor(DType::F64, {2, 1}, {1, 1}));
  V x = to_doubles(r[0]);
  bool any_nonfinite = false;
  for (double v : x) any_nonfinite = any_nonfinite || !std::isfinite(v);
  EXPECT_TRUE(any_nonfinite);
}

TEST(InterpInv, HandValueAndIdentity) {
  auto r =
      run1([](SymbolicTensor x) { return std::vector{la::inv(x)}; }, make_tensor(DType::F64, {2, 2}, {4, 7, 2, 6}));
  expect_near(to_doubles(r[0]), {0.6, -0.7, -0.2, 0.4}, 1e-14, "inv hand");
  for (DType t : kAll) {
    const int64_t B = 3, n = 5;
    V a = rounded(t, {B, n, n}, well_conditioned(B, n, 9));
    auto s = run1([](SymbolicTensor x) { return std::vector{la::inv(x)}; }, make_tensor(t, {B, n, n}, a));
    V ai = to_doubles(s[0]);
    for (int64_t q = 0; q < B; ++q)
      expect_near(mm(part(ai, q, n * n), part(a, q, n * n), n, n, n), eye(n), tol(t) * 20, "inv(A) A");
  }
  // Singular: inf/NaN entries, never an exception.
  auto z =
      run1([](SymbolicTensor x) { return std::vector{la::inv(x)}; }, make_tensor(DType::F32, {2, 2}, {0, 0, 0, 0}));
  for (double v : to_doubles(z[0])) EXPECT_FALSE(std::isfinite(v));
}

TEST(InterpDet, HandValuesPermutedTriangularAndEdges) {
  for (DType t : kAll) {
    // [[1, 2], [3, 4]] -> -2; rows of an upper triangular diag(2, 3, -1) swapped once -> +6; 0x0 -> 1 is below.
    V a = {1, 2, 3, 4};
    auto r = run1([](SymbolicTensor x) { return std::vector{la::det(x)}; }, make_tensor(t, {2, 2}, a));
    EXPECT_NEAR(to_doubles(r[0])[0], -2.0, tol(t) * 4);
    V u = {0, 3, 5, 2, 1, 4, 0, 0, -1};  // rows 0 and 1 of [[2,1,4],[0,3,5],[0,0,-1]] swapped
    r = run1([](SymbolicTensor x) { return std::vector{la::det(x)}; }, make_tensor(t, {3, 3}, u));
    EXPECT_NEAR(to_doubles(r[0])[0], 6.0, tol(t) * 8);
  }
  auto r = run1([](SymbolicTensor x) { return std::vector{la::det(x)}; }, make_tensor(DType::F64, {2, 0, 0}, {}));
  expect_near(to_doubles(r[0]), {1, 1}, 0, "det 0x0");
  r = run1([](SymbolicTensor x) { return std::vector{la::det(x)}; }, make_tensor(DType::F64, {0, 2, 2}, {}));
  EXPECT_EQ(r[0].shape(), (std::vector<int64_t>{0}));
  r = run1([](SymbolicTensor x) { return std::vector{la::det(x)}; },
           make_tensor(DType::F64, {2, 2, 2}, {1, 2, 2, 4, 2, 0, 0, 3}));
  expect_near(to_doubles(r[0]), {0, 6}, 1e-14, "det singular");
}

TEST(InterpSlogdet, SignLogAndSingular) {
  for (DType t : kAll) {
    auto r = run1(
        [](SymbolicTensor x) {
          auto s = la::slogdet(x);
          return std::vector{s.sign, s.logabsdet};
        },
        make_tensor(t, {3, 2, 2}, {1, 2, 3, 4, 1, 2, 2, 4, 2, 0, 0, 3}));
    V sign = to_doubles(r[0]), lg = to_doubles(r[1]);
    EXPECT_EQ(sign[0], -1.0);
    EXPECT_NEAR(lg[0], std::log(2.0), tol(t) * 4);
    EXPECT_EQ(sign[1], 0.0);
    EXPECT_TRUE(std::isinf(lg[1]) && lg[1] < 0);
    EXPECT_EQ(sign[2], 1.0);
    EXPECT_NEAR(lg[2], std::log(6.0), tol(t) * 4);
  }
  auto r = run1(
      [](SymbolicTensor x) {
        auto s = la::slogdet(x);
        return std::vector{s.sign, s.logabsdet};
      },
      make_tensor(DType::F64, {2, 2}, {std::nan(""), 0, 0, 1}));
  EXPECT_TRUE(std::isnan(to_doubles(r[0])[0]));
  EXPECT_TRUE(std::isnan(to_doubles(r[1])[0]));
}

TEST(InterpLu, HandValueAndPermutedReconstruction) {
  auto lu3 = [](SymbolicTensor x) {
    auto r = la::lu(x);
    return std::vector{r.lu, r.pivots, r.permutation};
  };
  auto r = run1(lu3, make_tensor(DType::F64, {2, 2}, {1, 2, 3, 4}));
  expect_near(to_doubles(r[0]), {3, 4, 1.0 / 3, 2.0 / 3}, 1e-15, "lu");
  EXPECT_EQ(r[1].dtype(), DType::I32);
  expect_near(to_doubles(r[1]), {1, 1}, 0, "pivots");
  expect_near(to_doubles(r[2]), {1, 0}, 0, "permutation");
  for (DType t : kAll)
    for (auto [m, n] : {std::pair<int64_t, int64_t>{4, 4}, {3, 5}, {5, 3}}) {
      const int64_t B = 2, k = std::min(m, n);
      V a = rounded(t, {B, m, n}, sample_values(DType::F64, B * m * n, 11));
      auto s = run1(lu3, make_tensor(t, {B, m, n}, a));
      ASSERT_EQ(s[1].shape(), (std::vector<int64_t>{B, k}));
      ASSERT_EQ(s[2].shape(), (std::vector<int64_t>{B, m}));
      V f = to_doubles(s[0]), perm = to_doubles(s[2]);
      for (int64_t q = 0; q < B; ++q) {
        V l(static_cast<size_t>(m * k), 0.0), u(static_cast<size_t>(k * n), 0.0), f0 = part(f, q, m * n);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < k; ++j)
            l[static_cast<size_t>(i * k + j)] = i == j ? 1.0 : (i > j ? f0[static_cast<size_t>(i * n + j)] : 0.0);
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = i; j < n; ++j) u[static_cast<size_t>(i * n + j)] = f0[static_cast<size_t>(i * n + j)];
        V prod = mm(l, u, m, k, n), pa;
        for (int64_t i = 0; i < m; ++i) {
          int64_t row = static_cast<int64_t>(perm[static_cast<size_t>(q * m + i)]);
          for (int64_t j = 0; j < n; ++j) pa.push_back(a[static_cast<size_t>(q * m * n + row * n + j)]);
        }
        expect_near(prod, pa, tol(t) * 8, "A[perm] = L U");
      }
    }
}

TEST(InterpQr, ReducedAndCompleteReconstructWithOrthonormalQ) {
  for (DType t : kAll)
    for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 3}, {3, 5}, {4, 4}})
      for (bool complete : {false, true}) {
        const int64_t B = 2, k = std::min(m, n), qc = complete ? m : k;
        V a = rounded(t, {B, m, n}, sample_values(DType::F64, B * m * n, 13));
        auto r = run1(
            [&](SymbolicTensor x) {
              auto f = la::qr(x, complete ? "complete" : "reduced");
              return std::vector{f.Q, f.R};
            },
            make_tensor(t, {B, m, n}, a));
        ASSERT_EQ(r[0].shape(), (std::vector<int64_t>{B, m, qc}));
        ASSERT_EQ(r[1].shape(), (std::vector<int64_t>{B, qc, n}));
        V q = to_doubles(r[0]), rr = to_doubles(r[1]);
        for (int64_t b = 0; b < B; ++b) {
          V Q = part(q, b, m * qc), R = part(rr, b, qc * n);
          for (int64_t i = 0; i < qc; ++i)
            for (int64_t j = 0; j < std::min(i, n); ++j) EXPECT_EQ(R[static_cast<size_t>(i * n + j)], 0.0);
          expect_near(mm(Q, R, m, qc, n), part(a, b, m * n), tol(t) * 10, "Q R = A");
          expect_near(mm(tr(Q, m, qc), Q, qc, m, qc), eye(qc), tol(t) * 4, "Q^T Q = I");
        }
      }
  // An empty (3, 0) matrix: complete Q is the identity.
  auto r = run1(
      [](SymbolicTensor x) {
        auto f = la::qr(x, "complete");
        return std::vector{f.Q, f.R};
      },
      make_tensor(DType::F64, {3, 0}, {}));
  expect_near(to_doubles(r[0]), eye(3), 0, "qr of (3, 0)");
}

TEST(InterpEigh, HandValueAndEigenIdentity) {
  auto eig = [](const std::string& uplo) {
    return [uplo](SymbolicTensor x) {
      auto e = la::eigh(x, uplo);
      return std::vector{e.eigenvalues, e.eigenvectors};
    };
  };
  // [[2, 1], [1, 2]]: eigenvalues 1, 3; the unread triangle holds 50.
  auto r = run1(eig("L"), make_tensor(DType::F64, {2, 2}, {2, 50, 1, 2}));
  expect_near(to_doubles(r[0]), {1, 3}, 1e-14, "eigh L");
  r = run1(eig("U"), make_tensor(DType::F64, {2, 2}, {2, 1, 50, 2}));
  expect_near(to_doubles(r[0]), {1, 3}, 1e-14, "eigh U");
  for (DType t : kAll) {
    const int64_t B = 2, n = 5;
    V a = rounded(t, {B, n, n}, spd(B, n, 17));
    auto s = run1(eig("L"), make_tensor(t, {B, n, n}, a));
    V w = to_doubles(s[0]), v = to_doubles(s[1]);
    for (int64_t q = 0; q < B; ++q) {
      V W = part(w, q, n), Vq = part(v, q, n * n), vd = Vq;
      for (int64_t i = 0; i + 1 < n; ++i) EXPECT_LE(W[static_cast<size_t>(i)], W[static_cast<size_t>(i + 1)]);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) vd[static_cast<size_t>(i * n + j)] *= W[static_cast<size_t>(j)];
      expect_near(mm(part(a, q, n * n), Vq, n, n, n), vd, tol(t) * 40, "A V = V diag(w)");
      expect_near(mm(tr(Vq, n, n), Vq, n, n, n), eye(n), tol(t) * 4, "V^T V = I");
    }
  }
  auto z = run1(eig("L"), make_tensor(DType::F32, {2, 2}, {1, 0, std::nan(""), 1}));
  for (double x : to_doubles(z[0])) EXPECT_TRUE(std::isnan(x));
}

TEST(InterpSvd, ReconstructionDescendingValuesAndEdges) {
  for (DType t : kAll)
    for (auto [m, n] : {std::pair<int64_t, int64_t>{4, 3}, {3, 4}})
      for (bool full : {false, true}) {
        const int64_t B = 2, k = std::min(m, n), uc = full ? m : k, vr = full ? n : k;
        V a = rounded(t, {B, m, n}, sample_values(DType::F64, B * m * n, 19));
        auto r = run1(
            [&](SymbolicTensor x) {
              auto s = la::svd(x, full);
              return std::vector{s.U, s.S, s.Vh, la::svdvals(x)};
            },
            make_tensor(t, {B, m, n}, a));
        ASSERT_EQ(r[0].shape(), (std::vector<int64_t>{B, m, uc}));
        ASSERT_EQ(r[2].shape(), (std::vector<int64_t>{B, vr, n}));
        V u = to_doubles(r[0]), s = to_doubles(r[1]), vh = to_doubles(r[2]);
        expect_near(to_doubles(r[3]), s, tol(t), "svdvals = S");
        for (int64_t q = 0; q < B; ++q) {
          V U = part(u, q, m * uc), S = part(s, q, k), Vh = part(vh, q, vr * n);
          for (int64_t i = 0; i + 1 < k; ++i) EXPECT_GE(S[static_cast<size_t>(i)], S[static_cast<size_t>(i + 1)]);
          V us(static_cast<size_t>(m * k));
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < k; ++j)
              us[static_cast<size_t>(i * k + j)] = U[static_cast<size_t>(i * uc + j)] * S[static_cast<size_t>(j)];
          V vk(Vh.begin(), Vh.begin() + k * n);
          expect_near(mm(us, vk, m, k, n), part(a, q, m * n), tol(t) * 20, "U S Vh = A");
          expect_near(mm(tr(U, m, uc), U, uc, m, uc), eye(uc), tol(t) * 4, "U^T U");
          expect_near(mm(Vh, tr(Vh, vr, n), vr, n, vr), eye(vr), tol(t) * 4, "Vh Vh^T");
        }
      }
  auto r = run1([](SymbolicTensor x) { return std::vector{la::svdvals(x)}; },
                make_tensor(DType::F64, {2, 2}, {3, 0, 0, -2}));
  expect_near(to_doubles(r[0]), {3, 2}, 1e-15, "svd hand");
  r = run1(
      [](SymbolicTensor x) {
        auto s = la::svd(x, true);
        return std::vector{s.U, s.S, s.Vh};
      },
      make_tensor(DType::F64, {0, 3}, {}));
  EXPECT_EQ(r[0].shape(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(r[1].shape(), (std::vector<int64_t>{0}));
  expect_near(to_doubles(r[2]), eye(3), 0, "vh of an empty matrix");
  r = run1([](SymbolicTensor x) { return std::vector{la::svdvals(x)}; },
           make_tensor(DType::F32, {2, 2}, {1, INFINITY, 0, 1}));
  for (double x : to_doubles(r[0])) EXPECT_TRUE(std::isnan(x));
}

TEST(InterpMatrixRank, DefaultTolAndAttributes) {
  for (DType t : kMain) {
    // Rank 2: rows 3 and 4 are sums of rows 1 and 2. Then zeros (rank 0), then diag(1, 1e-3, 0, 0).
    V a = {1, 2, 3, 4, 0, 1, 1, 0, 1, 3, 4, 4, 2, 4, 6, 8};
    V z(16, 0.0);
    V d = {1, 0, 0, 0, 0, 1e-3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    V all = a;
    all.insert(all.end(), z.begin(), z.end());
    all.insert(all.end(), d.begin(), d.end());
    auto r = run1([](SymbolicTensor x) { return std::vector{la::matrix_rank(x)}; }, make_tensor(t, {3, 4, 4}, all));
    EXPECT_EQ(r[0].dtype(), DType::I64);
    expect_near(to_doubles(r[0]), {2, 0, 2}, 0, "rank");
    r = run1([](SymbolicTensor x) { return std::vector{la::matrix_rank(x, 0.01)}; }, make_tensor(t, {3, 4, 4}, all));
    expect_near(to_doubles(r[0]), {2, 0, 1}, 0, "rank tol");
    r = run1([](SymbolicTensor x) { return std::vector{la::matrix_rank(x, std::nullopt, 1e-2)}; },
             make_tensor(t, {3, 4, 4}, all));
    expect_near(to_doubles(r[0]), {2, 0, 1}, 0, "rank rtol");
  }
  auto r = run1([](SymbolicTensor x) { return std::vector{la::matrix_rank(x)}; },
                make_tensor(DType::F16, {2, 2}, {1, 2, 3, 4}));
  expect_near(to_doubles(r[0]), {2}, 0, "rank f16");
  r = run1([](SymbolicTensor x) { return std::vector{la::matrix_rank(x)}; },
           make_tensor(DType::F64, {2, 2}, {std::nan(""), 2, 3, 4}));
  expect_near(to_doubles(r[0]), {0}, 0, "rank NaN");
}

TEST(InterpNorm, VectorOrders) {
  for (DType t : kAll) {
    V x = {3, -4, 0, 1};
    auto nv = [&](std::optional<double> ord) {
      return to_doubles(
          run1([ord](SymbolicTensor v) { return std::vector{la::norm(v, ord)}; }, make_tensor(t, {4}, x))[0])[0];
    };
    EXPECT_NEAR(nv(std::nullopt), std::sqrt(26.0), tol(t) * 6);
    EXPECT_NEAR(nv(1), 8, tol(t) * 8);
    EXPECT_NEAR(nv(INFINITY), 4, tol(t) * 4);
    EXPECT_NEAR(nv(-INFINITY), 0, tol(t));
    EXPECT_NEAR(nv(0), 3, tol(t) * 3);
    EXPECT_NEAR(nv(3), std::cbrt(27.0 + 64 + 1), tol(t) * 5);
  }
  auto r = run1([](SymbolicTensor v) { return std::vector{la::norm(v, INFINITY, std::vector<int64_t>{-1})}; },
                make_tensor(DType::F64, {2, 3}, {1, std::nan(""), 2, 0, 0, 0}));
  V n = to_doubles(r[0]);
  EXPECT_TRUE(std::isnan(n[0]));
  EXPECT_EQ(n[1], 0.0);
  r = run1([](SymbolicTensor v) { return std::vector{la::norm(v, 2.0, std::vector<int64_t>{1})}; },
           make_tensor(DType::F32, {3, 0}, {}));
  expect_near(to_doubles(r[0]), {0, 0, 0}, 0, "empty vectors");
}

TEST(InterpNorm, MatrixOrdersHandValues) {
  // [[1, -2], [3, 4]]: A^T A = [[10, 10], [10, 20]], singular values sqrt(15 +- sqrt(125)).
  const double s1 = std::sqrt(15 + std::sqrt(125.0)), s2 = std::sqrt(15 - std::sqrt(125.0));
  for (DType t : kAll) {
    Tensor a = make_tensor(t, {2, 2}, {1, -2, 3, 4});
    auto ns = [&](const std::string& o) {
      return to_doubles(run1([o](SymbolicTensor x) { return std::vector{la::norm(x, o)}; }, a)[0])[0];
    };
    auto nd = [&](double o) {
      return to_doubles(run1([o](SymbolicTensor x) { return std::vector{la::norm(x, o)}; }, a)[0])[0];
    };
    EXPECT_NEAR(ns("fro"), std::sqrt(30.0), tol(t) * 6);
    EXPECT_NEAR(ns("nuc"), s1 + s2, tol(t) * 8);
    EXPECT_NEAR(nd(1), 6, tol(t) * 6);
    EXPECT_NEAR(nd(-1), 4, tol(t) * 4);
    EXPECT_NEAR(nd(INFINITY), 7, tol(t) * 7);
    EXPECT_NEAR(nd(-INFINITY), 3, tol(t) * 3);
    EXPECT_NEAR(nd(2), s1, tol(t) * 6);
    EXPECT_NEAR(nd(-2), s2, tol(t) * 3);
  }
  // Batched over the last two axes with keepdims, and a matrix norm over axes (0, 2).
  auto r = run1(
      [](SymbolicTensor x) {
        return std::vector{la::norm(x, "fro", std::vector<int64_t>{0, 2}, true)};
      },
      make_tensor(DType::F64, {2, 1, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(r[0].shape(), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_NEAR(to_doubles(r[0])[0], std::sqrt(30.0), 1e-14);
}

TEST(InterpMatrixExp, ClosedFormsScalingAndNan) {
  for (DType t : kAll) {
    auto e = [&](const V& a, int64_t n) {
      return to_doubles(run1([](SymbolicTensor x) { return std::vector{la::expm(x)}; }, make_tensor(t, {n, n}, a))[0]);
    };
    expect_near(e({0, 1, 0, 0}, 2), {1, 1, 0, 1}, tol(t), "nilpotent");
    const double th = 0.75;
    expect_near(e({0, -th, th, 0}, 2), {std::cos(th), -std::sin(th), std::sin(th), std::cos(th)}, tol(t) * 2,
                "rotation");
    // Norm 12 > theta_13: exercises the squaring phase.
    expect_near(e({6, 0, 0, -6}, 2), {std::exp(6.0), 0, 0, std::exp(-6.0)}, tol(t) * 2, "diag");
  }
  // Against a Taylor series in double for a small random matrix, batched.
  const int64_t B = 2, n = 3;
  V a = sample_values(DType::F64, B * n * n, 23);
  for (double& v : a) v *= 0.25;
  auto r = run1([](SymbolicTensor x) { return std::vector{la::matrix_exp(x)}; }, make_tensor(DType::F64, {B, n, n}, a));
  V got = to_doubles(r[0]);
  for (int64_t q = 0; q < B; ++q) {
    V A = part(a, q, n * n), term = eye(n), sum = eye(n);
    for (int i = 1; i < 40; ++i) {
      term = mm(term, A, n, n, n);
      for (double& v : term) v /= i;
      for (size_t j = 0; j < sum.size(); ++j) sum[j] += term[j];
    }
    expect_near(part(got, q, n * n), sum, 1e-12, "expm vs Taylor");
  }
  r = run1([](SymbolicTensor x) { return std::vector{la::expm(x)}; },
           make_tensor(DType::F32, {2, 2}, {1, INFINITY, 0, 1}));
  for (double v : to_doubles(r[0])) EXPECT_TRUE(std::isnan(v));
}

TEST(InterpTrace, NumpyExamplesOffsetsAndDtypes) {
  // numpy.trace(np.arange(8).reshape(2, 2, 2)) == [6, 8].
  V ar(8);
  for (int i = 0; i < 8; ++i) ar[static_cast<size_t>(i)] = i;
  for (DType t : {DType::I8, DType::I32, DType::U16, DType::F16, DType::BF16, DType::F32, DType::F64}) {
    auto r = run1([](SymbolicTensor x) { return std::vector{la::trace(x)}; }, make_tensor(t, {2, 2, 2}, ar));
    expect_near(to_doubles(r[0]), {6, 8}, 0, "trace " + std::string(dtype_name(t)));
    DType want = is_float(t) ? t : (is_unsigned_int(t) ? DType::U64 : DType::I64);
    EXPECT_EQ(r[0].dtype(), want);
  }
  V m(12);
  for (int i = 0; i < 12; ++i) m[static_cast<size_t>(i)] = i;  // (3, 4)
  auto tr_off = [&](int64_t off, int64_t a1, int64_t a2) {
    return to_doubles(run1([=](SymbolicTensor x) { return std::vector{la::trace(x, off, a1, a2)}; },
                           make_tensor(DType::F64, {3, 4}, m))[0])[0];
  };
  EXPECT_EQ(tr_off(0, 0, 1), 0 + 5 + 10);
  EXPECT_EQ(tr_off(1, 0, 1), 1 + 6 + 11);
  EXPECT_EQ(tr_off(3, 0, 1), 3);
  EXPECT_EQ(tr_off(-1, 0, 1), 4 + 9);
  EXPECT_EQ(tr_off(9, 0, 1), 0);
  EXPECT_EQ(tr_off(-9, 0, 1), 0);
  EXPECT_EQ(tr_off(INT64_MIN, 0, 1), 0);
  EXPECT_EQ(tr_off(INT64_MAX, 0, 1), 0);
  EXPECT_EQ(tr_off(1, -1, -2), 4 + 9);  // axes swapped: offset runs along the rows
  // axis1/axis2 in the middle of a (2, 3, 2, 3) tensor, against loops.
  V big = sample_values(DType::F64, 36, 29);
  auto r = run1([](SymbolicTensor x) { return std::vector{la::trace(x, 0, 1, 3)}; },
                make_tensor(DType::F64, {2, 3, 2, 3}, big));
  V want;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k) {
      double s = 0;
      for (int d = 0; d < 3; ++d) s += big[static_cast<size_t>(((i * 3 + d) * 2 + k) * 3 + d)];
      want.push_back(s);
    }
  expect_near(to_doubles(r[0]), want, 1e-14, "trace axes 1, 3");
  // int8 sums wrap in int64 only after widening: 100 + 100 is 200.
  r = run1([](SymbolicTensor x) { return std::vector{la::trace(x)}; },
           make_tensor(DType::I8, {2, 2}, {100, 0, 0, 100}));
  EXPECT_EQ(to_doubles(r[0])[0], 200.0);
}

TEST(InterpTrace, SymbolicBatch) {
  Graph g = evoxc::trace([](SymbolicTensor x) { return la::trace(x, 0, -2, -1); },
                         TensorSpec(Shape{Dim("B"), DimExpr(2), DimExpr(2)}, DType::F32));
  for (int64_t b : {0, 1, 3}) {
    V v(static_cast<size_t>(b * 4), 1.0);
    auto out = run_graph(g, {make_tensor(DType::F32, {b, 2, 2}, v)});
    EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{b}));
    for (double x : to_doubles(out[0])) EXPECT_EQ(x, 2.0);
  }
}

// Reference dot_general in double (ints wrap in int64 before the final cast).
TEST(InterpDotGeneral, BatchAndContractingOnEveryNumericDtype) {
  for (DType t : numeric_dtypes()) {
    // lhs (3, 2, 4) with batch axis 1, contracting axis 0; rhs (2, 3, 5) with batch 0, contracting 1.
    V a = sample_values(t, 24, 31), b = sample_values(t, 30, 37);
    auto r = run2([](SymbolicTensor x, SymbolicTensor y) { return std::vector{dot_general(x, y, {0}, {1}, {1}, {0})}; },
                  make_tensor(t, {3, 2, 4}, a), make_tensor(t, {2, 3, 5}, b));
    ASSERT_EQ(r[0].shape(), (std::vector<int64_t>{2, 4, 5}));
    ASSERT_EQ(r[0].dtype(), t);
    V want;
    for (int q = 0; q < 2; ++q)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 5; ++j) {
          double s = 0;
          for (int k = 0; k < 3; ++k)
            s += a[static_cast<size_t>((k * 2 + q) * 4 + i)] * b[static_cast<size_t>((q * 3 + k) * 5 + j)];
          want.push_back(s);
        }
    double tl = is_float(t) ? tol(t) * 10 : 0;
    // sample_values keeps ints small enough that no sum wraps.
    expect_near(to_doubles(r[0]), want, tl, "dot_general " + std::string(dtype_name(t)));
  }
}

TEST(InterpDotGeneral, PlainMatmulOuterProductAndEmptyContraction) {
  auto r = run2([](SymbolicTensor x, SymbolicTensor y) { return std::vector{dot_general(x, y, {-1}, {0})}; },
                make_tensor(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}), make_tensor(DType::F32, {3, 1}, {1, 1, 1}));
  expect_near(to_doubles(r[0]), {6, 15}, 0, "matmul");
  r = run2([](SymbolicTensor x, SymbolicTensor y) { return std::vector{dot_general(x, y, {}, {})}; },
           make_tensor(DType::F64, {2}, {1, 2}), make_tensor(DType::F64, {3}, {1, 10, 100}));
  expect_near(to_doubles(r[0]), {1, 10, 100, 2, 20, 200}, 0, "outer");
  r = run2([](SymbolicTensor x, SymbolicTensor y) { return std::vector{dot_general(x, y, {1}, {0})}; },
           make_tensor(DType::F32, {2, 0}, {}), make_tensor(DType::F32, {0, 2}, {}));
  expect_near(to_doubles(r[0]), {0, 0, 0, 0}, 0, "K = 0");
  r = run2([](SymbolicTensor x, SymbolicTensor y) { return std::vector{dot_general(x, y, {1}, {0})}; },
           make_tensor(DType::I32, {2, 0}, {}), make_tensor(DType::I32, {0, 2}, {}));
  expect_near(to_doubles(r[0]), {0, 0, 0, 0}, 0, "K = 0 int");
}

TEST(InterpDecomposition, HandBuiltGraphWithWrongResultTypeIsRefused) {
  GraphBuilder g;
  Value* a = g.input(DType::F32, S({3, 3}));
  Value* r = g.op("cholesky", {a}, tt(DType::F32, S({3, 4})), {{"lower", true}});
  Graph graph = g.build({r});
  try {
    interp::prepare(graph);
    FAIL() << "expected BackendError";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("cholesky"), std::string::npos) << e.what();
  }
  GraphBuilder h;
  Value* b = h.input(DType::I32, S({3, 3}));
  Value* c = h.op("inv", {b}, tt(DType::I32, S({3, 3})));
  EXPECT_THROW(interp::prepare(h.build({c})), BackendError);
}

TEST(InterpDecomposition, ManySmallMatricesAreThreadCountIndependent) {
  // 3000 small matrices take the batch-parallel path; results must match the one-thread run bit for bit.
  const int64_t B = 3000, n = 3;
  V a = spd(B, n, 41);
  Fn1 f = [](SymbolicTensor x) {
    auto e = la::eigh(x);
    auto s = la::svd(x);
    return std::vector{la::inv(x), e.eigenvalues, s.S, la::cholesky(x), la::det(x)};
  };
  interp::set_num_threads(1);
  auto one = run1(f, make_tensor(DType::F64, {B, n, n}, a));
  interp::set_num_threads(0);
  auto many = run1(f, make_tensor(DType::F64, {B, n, n}, a));
  for (size_t k = 0; k < one.size(); ++k) EXPECT_EQ(to_doubles(one[k]), to_doubles(many[k])) << k;
  V ai = to_doubles(many[0]);
  for (int64_t q = 0; q < B; q += 97)
    expect_near(mm(part(ai, q, n * n), part(a, q, n * n), n, n, n), eye(n), 1e-10, "inv(A) A batched");
}

TEST(InterpDecomposition, ZeroSizeBatchWithHugeMatrixExtentsRunsNothing) {
  const int64_t big = int64_t{1} << 40;
  auto r = run1(
      [](SymbolicTensor x) {
        return std::vector{la::inv(x), la::det(x), la::eigh(x).eigenvectors};
      },
      make_tensor(DType::F32, {0, big, big}, {}));
  EXPECT_EQ(r[0].shape(), (std::vector<int64_t>{0, big, big}));
  EXPECT_EQ(r[1].shape(), (std::vector<int64_t>{0}));
  auto d = run2([](SymbolicTensor x, SymbolicTensor y) { return std::vector{dot_general(x, y, {1}, {0})}; },
                make_tensor(DType::F32, {0, big}, {}), make_tensor(DType::F32, {big, 0}, {}));
  EXPECT_EQ(d[0].shape(), (std::vector<int64_t>{0, 0}));
}

}  // namespace
}  // namespace evoxc::testing
