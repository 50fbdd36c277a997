// Interpreter cumsum, cumprod, cummax, cummin and reduce_logsumexp on every accepted dtype against loop references.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "interp/graph_util.h"
#include "interp/thread_pool.h"

namespace evoxc::testing {
namespace {

Tensor run_scan(const std::string& op, const Tensor& x, int64_t axis, bool reverse) {
  GraphBuilder b;
  Value* in = b.input(x.dtype(), S(x.shape()));
  Value* r = b.op(op, {in}, tt(x.dtype(), S(x.shape())), {{"axis", axis}, {"reverse", reverse}});
  return run_graph(b.build({r}), {x})[0];
}

// Reference scan of a (r, c) tensor; each step rounds through the dtype (ints wrap), as the kernel stores.
std::vector<double> ref_scan(const std::string& op, const std::vector<double>& v, int64_t r, int64_t c, int axis,
                             bool reverse, DType t) {
  std::vector<double> out(v.size());
  int64_t lines = axis == 0 ? c : r, n = axis == 0 ? r : c;
  for (int64_t l = 0; l < lines; ++l) {
    double acc = 0;
    uint64_t iacc = 0;
    for (int64_t s = 0; s < n; ++s) {
      int64_t k = reverse ? n - 1 - s : s;
      auto at = static_cast<size_t>(axis == 0 ? k * c + l : l * c + k);
      double x = v[at];
      if (is_int(t) && (op == "cumsum" || op == "cumprod")) {
        // Wrapping integer arithmetic in uint64, then the dtype's own wrap.
        auto xi = static_cast<uint64_t>(static_cast<int64_t>(x));
        iacc = s == 0 ? xi : (op == "cumsum" ? iacc + xi : iacc * xi);
        out[at] = to_doubles(make_tensor(t, {1}, {static_cast<double>(static_cast<int64_t>(iacc))}))[0];
        if (is_unsigned_int(t) && t != DType::U64)
          out[at] = static_cast<double>(iacc % (uint64_t{1} << (8 * size_of(t))));
        continue;
      }
      if (s == 0) {
        acc = x;
      } else if (op == "cumsum") {
        acc += x;
      } else if (op == "cumprod") {
        acc *= x;
      } else if (std::isnan(acc) || std::isnan(x)) {
        acc = NAN;
      } else {
        acc = op == "cummax" ? std::max(acc, x) : std::min(acc, x);
      }
      out[at] = acc;
    }
  }
  return out;
}

TEST(InterpScan, EveryOpDtypeAxisAndDirection) {
  int64_t r = 3, c = 5;
  for (std::string op : {"cumsum", "cumprod", "cummax", "cummin"}) {
    bool numeric_only = op == "cumsum" || op == "cumprod";
    for (DType t : numeric_only ? numeric_dtypes() : all_dtypes()) {
      std::vector<double> v = sample_values(t, r * c, 51);
      if (op == "cumprod" && is_float(t))
        for (double& x : v) x = 0.5 + std::fabs(x) / 4;  // keep half-float products in range
      Tensor a = make_tensor(t, {r, c}, v);
      std::vector<double> av = to_doubles(a);
      for (int axis : {0, 1})
        for (bool rev : {false, true}) {
          std::vector<double> got = to_doubles(run_scan(op, a, axis, rev));
          std::vector<double> want = ref_scan(op, av, r, c, axis, rev, t);
          for (size_t i = 0; i < got.size(); ++i) {
            std::string what = op + " " + std::string(dtype_name(t)) + " axis " + std::to_string(axis) +
                               (rev ? " reverse" : "") + " at " + std::to_string(i);
            if (is_float(t)) {
              EXPECT_NEAR(got[i], want[i], tolerance(t, 16)) << what;
            } else {
              EXPECT_EQ(got[i], want[i]) << what;
            }
          }
        }
    }
  }
}

TEST(InterpScan, NaNPropagatesAndIntsWrap) {
  Tensor a = make_tensor(DType::F32, {5}, {1, NAN, 3, -INFINITY, 0});
  std::vector<double> mx = to_doubles(run_scan("cummax", a, 0, false));
  EXPECT_EQ(mx[0], 1);
  for (size_t i = 1; i < 5; ++i) EXPECT_TRUE(std::isnan(mx[i]));
  std::vector<double> mn = to_doubles(run_scan("cummin", a, 0, true));
  EXPECT_EQ(mn[4], 0);
  EXPECT_EQ(mn[3], -INFINITY);
  EXPECT_EQ(mn[2], -INFINITY);
  EXPECT_TRUE(std::isnan(mn[1]));
  Tensor big = Tensor::from_vector<int8_t>({100, 100, 100}, {3});
  std::vector<double> s = to_doubles(run_scan("cumsum", big, 0, false));
  EXPECT_EQ(s, (std::vector<double>{100, -56, 44}));
  Tensor b = make_tensor(DType::Bool, {4}, {0, 1, 0, 0});
  EXPECT_EQ(to_doubles(run_scan("cummax", b, 0, false)), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(to_doubles(run_scan("cummin", b, 0, true)), (std::vector<double>{0, 0, 0, 0}));
}

TEST(InterpScan, EmptyAndLargeColumnsAgreeAcrossThreads) {
  EXPECT_EQ(run_scan("cumsum", Tensor::zeros({0, 3}, DType::F32), 0, false).numel(), 0);
  EXPECT_EQ(run_scan("cumsum", Tensor::zeros({4, 0}, DType::F32), 0, true).numel(), 0);
  int64_t r = 100, c = 700;
  Tensor a = make_tensor(DType::F64, {r, c}, sample_values(DType::F64, r * c, 9));
  std::vector<double> many = to_doubles(run_scan("cumsum", a, 0, false));
  interp::set_num_threads(1);
  std::vector<double> one = to_doubles(run_scan("cumsum", a, 0, false));
  interp::set_num_threads(0);
  EXPECT_EQ(many, one);
  std::vector<double> want = ref_scan("cumsum", to_doubles(a), r, c, 0, false, DType::F64);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(many[i], want[i], 1e-9);
}

Tensor run_lse(const Tensor& x, const std::vector<int64_t>& axes, bool keep, std::vector<int64_t> out_shape) {
  GraphBuilder b;
  Value* in = b.input(x.dtype(), S(x.shape()));
  Value* r = b.op("reduce_logsumexp", {in}, tt(x.dtype(), S(out_shape)), {{"axes", axes}, {"keepdims", keep}});
  return run_graph(b.build({r}), {x})[0];
}

TEST(InterpLogsumexp, EveryFloatDtypeAndAxisSet) {
  std::vector<int64_t> shape = {2, 3, 4};
  for (DType t : float_dtypes()) {
    std::vector<double> v = sample_values(t, 24, 61);
    for (double& x : v) x *= 10;  // large enough that the unshifted form would lose precision in half floats
    Tensor a = make_tensor(t, shape, v);
    std::vector<double> av = to_doubles(a);
    // axes {1}: out (2, 4); axes {0, 2}: out (3).
    std::vector<double> want1, want2;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k) {
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < 3; ++j) m = std::max(m, av[static_cast<size_t>(i * 12 + j * 4 + k)]);
        for (int64_t j = 0; j < 3; ++j) s += std::exp(av[static_cast<size_t>(i * 12 + j * 4 + k)] - m);
        want1.push_back(m + std::log(s));
      }
    for (int64_t j = 0; j < 3; ++j) {
      double m = -INFINITY, s = 0;
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t k = 0; k < 4; ++k) m = std::max(m, av[static_cast<size_t>(i * 12 + j * 4 + k)]);
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t k = 0; k < 4; ++k) s += std::exp(av[static_cast<size_t>(i * 12 + j * 4 + k)] - m);
      want2.push_back(m + std::log(s));
    }
    std::vector<double> g1 = to_doubles(run_lse(a, {1}, false, {2, 4}));
    std::vector<double> g2 = to_doubles(run_lse(a, {0, 2}, true, {1, 3, 1}));
    for (size_t i = 0; i < want1.size(); ++i) EXPECT_NEAR(g1[i], want1[i], tolerance(t, 40)) << dtype_name(t);
    for (size_t i = 0; i < want2.size(); ++i) EXPECT_NEAR(g2[i], want2[i], tolerance(t, 40)) << dtype_name(t);
  }
}

TEST(InterpLogsumexp, SpecialValuesAndEmptySets) {
  Tensor a = make_tensor(DType::F32, {5, 3},
                         {-INFINITY, 1, 1000,         //
                          -INFINITY, INFINITY, 1000,  //
                          -INFINITY, 2, NAN,          //
                          -INFINITY, 3, 1000,         //
                          -INFINITY, -INFINITY, 1000});
  std::vector<double> g = to_doubles(run_lse(a, {0}, false, {3}));
  EXPECT_EQ(g[0], -INFINITY);
  EXPECT_EQ(g[1], INFINITY);
  EXPECT_TRUE(std::isnan(g[2]));
  std::vector<double> rows = to_doubles(run_lse(a, {1}, false, {5}));
  EXPECT_NEAR(rows[0], 1000, 1e-3);  // no overflow: the maximum is subtracted
  EXPECT_EQ(rows[1], INFINITY);
  EXPECT_TRUE(std::isnan(rows[2]));
  Tensor e = Tensor::zeros({0, 2}, DType::F64);
  EXPECT_EQ(to_doubles(run_lse(e, {0}, false, {2})), (std::vector<double>{-INFINITY, -INFINITY}));
  EXPECT_EQ(run_lse(e, {1}, false, {0}).numel(), 0);
  Tensor s = make_tensor(DType::F64, {}, {2.5});
  EXPECT_EQ(to_doubles(run_lse(s, {}, false, {})), (std::vector<double>{2.5}));
}

}  // namespace
}  // namespace evoxc::testing
