// Interpreter dot: numpy matmul shapes (1-D promotion, broadcast batches) on every numeric dtype and bool.
#include <gtest/gtest.h>

#include <cmath>

#include "interp/graph_util.h"

namespace evoxc::testing {
namespace {

struct Case {
  std::vector<int64_t> a, b, out;
};

// Reference matmul in double (or wrapping int64 / logical for ints and bool) with numpy's rules.
std::vector<double> ref_matmul(const Case& c, const std::vector<double>& av, const std::vector<double>& bv, DType t) {
  std::vector<int64_t> a = c.a, b = c.b;
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  int64_t n = a[a.size() - 2], k = a.back(), m = b.back();
  size_t ab = a.size() - 2, bb = b.size() - 2, br = std::max(ab, bb);
  std::vector<int64_t> batch(br);
  for (size_t i = 0; i < br; ++i) {
    int64_t ae = i + ab >= br ? a[i + ab - br] : 1, be = i + bb >= br ? b[i + bb - br] : 1;
    batch[i] = std::max(ae, be);
  }
  int64_t nb = 1;
  for (int64_t e : batch) nb *= e;
  std::vector<double> out;
  for (int64_t q = 0; q < nb; ++q) {
    int64_t rem = q, aoff = 0, boff = 0, astride = n * k, bstride = k * m;
    for (size_t i = br; i-- > 0;) {
      int64_t idx = rem % batch[i];
      rem /= batch[i];
      int64_t ae = i + ab >= br ? a[i + ab - br] : 1, be = i + bb >= br ? b[i + bb - br] : 1;
      if (ae != 1) aoff += idx * astride;
      if (be != 1) boff += idx * bstride;
      astride *= ae;
      bstride *= be;
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double s = 0;
        int64_t si = 0;
        bool any = false;
        for (int64_t p = 0; p < k; ++p) {
          double x = av[static_cast<size_t>(aoff + i * k + p)], y = bv[static_cast<size_t>(boff + p * m + j)];
          s += x * y;
          si += static_cast<int64_t>(x) * static_cast<int64_t>(y);
          any = any || (x != 0 && y != 0);
        }
        out.push_back(is_bool(t) ? (any ? 1.0 : 0.0) : is_float(t) ? s : static_cast<double>(si));
      }
  }
  return out;
}

Tensor run_dot(const Tensor& a, const Tensor& b, const std::vector<int64_t>& out) {
  GraphBuilder g;
  Value* va = g.input(a.dtype(), S(a.shape()));
  Value* vb = g.input(b.dtype(), S(b.shape()));
  Value* r = g.op("dot", {va, vb}, tt(a.dtype(), S(out)));
  return run_graph(g.build({r}), {a, b})[0];
}

const std::vector<Case> kCases = {
    {{4}, {4}, {}},                           // vector . vector
    {{3, 4}, {4}, {3}},                       // matrix . vector
    {{4}, {4, 5}, {5}},                       // vector . matrix
    {{3, 4}, {4, 5}, {3, 5}},                 // matrix . matrix
    {{2, 3, 4}, {4, 5}, {2, 3, 5}},           // batched lhs, shared rhs
    {{3, 4}, {2, 4, 5}, {2, 3, 5}},           // shared lhs, batched rhs
    {{2, 1, 3, 4}, {3, 4, 2}, {2, 3, 3, 2}},  // broadcast batch dims
    {{2, 3, 4}, {4}, {2, 3}},                 // batched matrix . vector
    {{4}, {2, 4, 5}, {2, 5}},                 // vector . batched matrix
    {{3, 0}, {0, 5}, {3, 5}},                 // empty contracting dim: zeros
    {{0, 4}, {4, 5}, {0, 5}},                 // empty rows
    {{1, 1}, {1, 1}, {1, 1}},
};

TEST(InterpDot, NumpyMatmulShapesOnEveryDtype) {
  std::vector<DType> types = numeric_dtypes();
  types.push_back(DType::Bool);
  for (DType t : types) {
    for (const Case& c : kCases) {
      int64_t na = 1, nb = 1;
      for (int64_t d : c.a) na *= d;
      for (int64_t d : c.b) nb *= d;
      Tensor a = make_tensor(t, c.a, sample_values(t, na, 1));
      Tensor b = make_tensor(t, c.b, sample_values(t, nb, 2));
      std::vector<double> want = ref_matmul(c, to_doubles(a), to_doubles(b), t);
      Tensor got = run_dot(a, b, c.out);
      ASSERT_EQ(got.shape(), c.out);
      std::vector<double> g = to_doubles(got);
      std::vector<double> w = to_doubles(make_tensor(t, c.out, want));  // rounds/wraps into the dtype
      ASSERT_EQ(g.size(), w.size());
      for (size_t i = 0; i < g.size(); ++i) {
        if (is_float(t)) {
          EXPECT_NEAR(g[i], want[i], tolerance(t, 64.0)) << dtype_name(t) << " case a rank " << c.a.size();
        } else {
          EXPECT_EQ(g[i], w[i]) << dtype_name(t) << " case a rank " << c.a.size() << " i " << i;
        }
      }
    }
  }
}

TEST(InterpDot, IntegerAccumulationWraps) {
  Tensor a = Tensor::from_vector<int8_t>({100, 100}, {2});
  Tensor b = Tensor::from_vector<int8_t>({2, 1}, {2});
  EXPECT_EQ(run_dot(a, b, {}).to_vector<int8_t>(), std::vector<int8_t>{44});  // 300 mod 256
  Tensor c = Tensor::from_vector<uint32_t>({0x80000000u, 3}, {1, 2});
  Tensor d = Tensor::from_vector<uint32_t>({2, 1}, {2, 1});
  EXPECT_EQ(run_dot(c, d, {1, 1}).to_vector<uint32_t>(), std::vector<uint32_t>{3});
  Tensor e = Tensor::from_vector<int64_t>({INT64_MAX, 1}, {2});
  Tensor f = Tensor::from_vector<int64_t>({2, 2}, {2});
  EXPECT_EQ(run_dot(e, f, {}).to_vector<int64_t>(), std::vector<int64_t>{0});  // 2*(2^63-1) + 2 = 2^64
}

TEST(InterpDot, LargeFloatMatmulMatchesReference) {
  const int64_t n = 67, k = 129, m = 45;
  std::vector<double> av(static_cast<size_t>(n * k)), bv(static_cast<size_t>(k * m));
  for (size_t i = 0; i < av.size(); ++i) av[i] = std::sin(static_cast<double>(i));
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = std::cos(static_cast<double>(i) * 0.7);
  for (DType t : float_dtypes()) {
    Tensor a = make_tensor(t, {n, k}, av), b = make_tensor(t, {k, m}, bv);
    auto g = to_doubles(run_dot(a, b, {n, m}));
    auto ar = to_doubles(a), br = to_doubles(b);
    for (int64_t i = 0; i < n; i += 5)
      for (int64_t j = 0; j < m; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += ar[static_cast<size_t>(i * k + p)] * br[static_cast<size_t>(p * m + j)];
        ASSERT_NEAR(g[static_cast<size_t>(i * m + j)], s, tolerance(t, 16.0) * 8) << dtype_name(t);
      }
  }
}

TEST(InterpDot, SymbolicBatch) {
  GraphBuilder g;
  Value* a = g.input(DType::F32, Shape{Dim("B"), DimExpr(2), DimExpr(3)});
  Value* b = g.input(DType::F32, S({3, 2}));
  Value* r = g.op("dot", {a, b}, tt(DType::F32, Shape{Dim("B"), DimExpr(2), DimExpr(2)}));
  auto p = interp::prepare(g.build({r}));
  for (int64_t B : {1, 3}) {
    std::vector<double> av(static_cast<size_t>(B * 6));
    for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<double>(i);
    std::vector<double> bv = {1, 0, 0, 1, 1, 1};
    std::vector<Tensor> outs(1);
    interp::execute(
        *p, std::vector<Tensor>{make_tensor(DType::F32, {B, 2, 3}, av), make_tensor(DType::F32, {3, 2}, bv)}, outs);
    ASSERT_EQ(outs[0].shape(), (std::vector<int64_t>{B, 2, 2}));
    auto got = to_doubles(outs[0]);
    for (int64_t q = 0; q < B * 2; ++q) {
      double x0 = av[static_cast<size_t>(q * 3)], x1 = av[static_cast<size_t>(q * 3 + 1)],
             x2 = av[static_cast<size_t>(q * 3 + 2)];
      EXPECT_EQ(got[static_cast<size_t>(q * 2)], x0 + x2);
      EXPECT_EQ(got[static_cast<size_t>(q * 2 + 1)], x1 + x2);
    }
  }
}

}  // namespace
}  // namespace evoxc::testing
