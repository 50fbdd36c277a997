// Interpreter reductions (reduce_* and argmax/argmin) on every accepted dtype against loop references.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "interp/graph_util.h"
#include "interp/thread_pool.h"

namespace evoxc::testing {
namespace {

// Reference: reduces `x` of `shape` over `axes` with `combine`, in double, row-major output.
template <typename F>
std::vector<double> ref_reduce(const std::vector<int64_t>& shape, const std::vector<double>& x,
                               const std::vector<int64_t>& axes, double init, F combine, int64_t* count_out = nullptr) {
  std::vector<bool> red(shape.size(), false);
  for (int64_t a : axes) red[static_cast<size_t>(a)] = true;
  int64_t nout = 1, count = 1;
  for (size_t i = 0; i < shape.size(); ++i) (red[i] ? count : nout) *= shape[i];
  std::vector<double> out(static_cast<size_t>(nout), init);
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t flat = 0; flat < x.size(); ++flat) {
    int64_t o = 0;
    for (size_t i = 0; i < shape.size(); ++i)
      if (!red[i]) o = o * shape[i] + idx[i];
    out[static_cast<size_t>(o)] = combine(out[static_cast<size_t>(o)], x[flat]);
    for (size_t i = shape.size(); i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  if (count_out) *count_out = count;
  return out;
}

std::vector<int64_t> reduced_shape(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, bool keep) {
  std::vector<int64_t> r;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool red = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (!red)
      r.push_back(shape[i]);
    else if (keep)
      r.push_back(1);
  }
  return r;
}

Tensor run_reduce(const std::string& op, const Tensor& x, const std::vector<int64_t>& axes, bool keep) {
  GraphBuilder b;
  Value* in = b.input(x.dtype(), S(x.shape()));
  Value* r =
      b.op(op, {in}, tt(x.dtype(), S(reduced_shape(x.shape(), axes, keep))), {{"axes", axes}, {"keepdims", keep}});
  return run_graph(b.build({r}), {x})[0];
}

// Compares a result with a double reference rounded through the result's dtype.
void expect_matches(const Tensor& got, DType t, const std::vector<double>& want, double magnitude,
                    const std::string& what) {
  std::vector<double> g = to_doubles(got);
  std::vector<double> w = to_doubles(make_tensor(t, got.shape(), want));
  ASSERT_EQ(g.size(), w.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << what << " at " << i;
    } else if (is_float(t)) {
      EXPECT_NEAR(g[i], want[i], tolerance(t, magnitude)) << what << " at " << i;
    } else {
      EXPECT_EQ(g[i], w[i]) << what << " at " << i;
    }
  }
}

const std::vector<std::vector<int64_t>> kAxesSets = {{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};

TEST(InterpReduce, SumProdMaxMinEveryNumericDtype) {
  std::vector<int64_t> shape = {2, 3, 4};
  for (DType t : numeric_dtypes()) {
    std::vector<double> v = sample_values(t, 24, 7);
    std::vector<double> pv(v.size());
    for (size_t i = 0; i < v.size(); ++i) pv[i] = is_float(t) ? 1.0 + (static_cast<int>(i % 5) - 2) / 8.0 : v[i];
    Tensor x = make_tensor(t, shape, v);
    Tensor px = make_tensor(t, shape, pv);
    double mag = 0;
    for (double d : v) mag += std::fabs(d);
    for (const auto& axes : kAxesSets) {
      for (bool keep : {false, true}) {
        std::string what =
            std::string(dtype_name(t)) + " axes=" + std::to_string(axes.size()) + " keep=" + std::to_string(keep);
        auto sum = ref_reduce(shape, v, axes, 0.0, [](double a, double b) { return a + b; });
        expect_matches(run_reduce("reduce_sum", x, axes, keep), t, sum, mag, "sum " + what);
        auto prod = ref_reduce(shape, pv, axes, 1.0, [](double a, double b) { return a * b; });
        expect_matches(run_reduce("reduce_prod", px, axes, keep), t, prod, 8.0, "prod " + what);
        auto mx = ref_reduce(shape, v, axes, -INFINITY, [](double a, double b) { return std::max(a, b); });
        expect_matches(run_reduce("reduce_max", x, axes, keep), t, mx, 4.0, "max " + what);
        auto mn = ref_reduce(shape, v, axes, INFINITY, [](double a, double b) { return std::min(a, b); });
        expect_matches(run_reduce("reduce_min", x, axes, keep), t, mn, 4.0, "min " + what);
        Tensor got = run_reduce("reduce_sum", x, axes, keep);
        EXPECT_EQ(got.shape(), reduced_shape(shape, axes, keep)) << what;
        EXPECT_EQ(got.dtype(), t);
      }
    }
  }
}

TEST(InterpReduce, MeanOnFloatsAnyAllOnBool) {
  std::vector<int64_t> shape = {2, 3, 4};
  for (DType t : float_dtypes()) {
    std::vector<double> v = sample_values(t, 24, 3);
    for (const auto& axes : kAxesSets) {
      int64_t count = 0;
      auto sum = ref_reduce(
          shape, v, axes, 0.0, [](double a, double b) { return a + b; }, &count);
      for (double& s : sum) s /= static_cast<double>(count);
      expect_matches(run_reduce("reduce_mean", make_tensor(t, shape, v), axes, true), t, sum, 4.0, "mean");
    }
  }
  std::vector<double> v = sample_values(DType::Bool, 24, 5);
  Tensor x = make_tensor(DType::Bool, shape, v);
  for (const auto& axes : kAxesSets) {
    auto any = ref_reduce(shape, v, axes, 0.0, [](double a, double b) { return (a != 0 || b != 0) ? 1.0 : 0.0; });
    auto all = ref_reduce(shape, v, axes, 1.0, [](double a, double b) { return (a != 0 && b != 0) ? 1.0 : 0.0; });
    auto mx = ref_reduce(shape, v, axes, 0.0, [](double a, double b) { return std::max(a, b); });
    auto mn = ref_reduce(shape, v, axes, 1.0, [](double a, double b) { return std::min(a, b); });
    expect_matches(run_reduce("reduce_any", x, axes, false), DType::Bool, any, 1, "any");
    expect_matches(run_reduce("reduce_all", x, axes, false), DType::Bool, all, 1, "all");
    expect_matches(run_reduce("reduce_max", x, axes, false), DType::Bool, mx, 1, "bool max");
    expect_matches(run_reduce("reduce_min", x, axes, false), DType::Bool, mn, 1, "bool min");
  }
}

TEST(InterpReduce, EmptySetsGiveIdentities) {
  Tensor f = Tensor::empty({0, 3}, DType::F32);
  EXPECT_EQ(to_doubles(run_reduce("reduce_sum", f, {0}, false)), std::vector<double>(3, 0.0));
  EXPECT_EQ(to_doubles(run_reduce("reduce_prod", f, {0}, false)), std::vector<double>(3, 1.0));
  EXPECT_EQ(to_doubles(run_reduce("reduce_max", f, {0}, false)), std::vector<double>(3, -INFINITY));
  EXPECT_EQ(to_doubles(run_reduce("reduce_min", f, {0}, false)), std::vector<double>(3, INFINITY));
  for (double m : to_doubles(run_reduce("reduce_mean", f, {0}, false))) EXPECT_TRUE(std::isnan(m));
  EXPECT_EQ(run_reduce("reduce_sum", f, {1}, false).shape(), std::vector<int64_t>{0});
  EXPECT_EQ(run_reduce("reduce_sum", f, {1}, true).shape(), (std::vector<int64_t>{0, 1}));
  Tensor i = Tensor::empty({2, 0}, DType::I32);
  EXPECT_EQ(to_doubles(run_reduce("reduce_max", i, {1}, false)), std::vector<double>(2, INT32_MIN));
  EXPECT_EQ(to_doubles(run_reduce("reduce_min", i, {1}, false)), std::vector<double>(2, INT32_MAX));
  Tensor u = Tensor::empty({2, 0}, DType::U8);
  EXPECT_EQ(to_doubles(run_reduce("reduce_min", u, {0, 1}, false)), std::vector<double>(1, 255));
  Tensor b = Tensor::empty({0}, DType::Bool);
  EXPECT_EQ(to_doubles(run_reduce("reduce_any", b, {0}, false)), std::vector<double>(1, 0));
  EXPECT_EQ(to_doubles(run_reduce("reduce_all", b, {0}, false)), std::vector<double>(1, 1));
  Tensor h = Tensor::empty({0}, DType::F16);
  EXPECT_TRUE(std::isnan(to_doubles(run_reduce("reduce_mean", h, {0}, false))[0]));
}

TEST(InterpReduce, NaNPropagates) {
  Tensor x = make_tensor(DType::F32, {2, 3}, {1, NAN, 3, 4, 5, 6});
  auto mx = to_doubles(run_reduce("reduce_max", x, {1}, false));
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_EQ(mx[1], 6);
  auto mn = to_doubles(run_reduce("reduce_min", x, {0}, false));
  EXPECT_EQ(mn[0], 1);
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_TRUE(std::isnan(to_doubles(run_reduce("reduce_sum", x, {0, 1}, false))[0]));
  Tensor h = make_tensor(DType::BF16, {3}, {NAN, 1, 2});
  EXPECT_TRUE(std::isnan(to_doubles(run_reduce("reduce_max", h, {0}, false))[0]));
}

TEST(InterpReduce, IntegerSumsAndProductsWrap) {
  EXPECT_EQ(run_reduce("reduce_sum", Tensor::from_vector<int8_t>({100, 100}, {2}), {0}, false).to_vector<int8_t>(),
            std::vector<int8_t>{-56});
  EXPECT_EQ(run_reduce("reduce_sum", Tensor::from_vector<uint8_t>({200, 100}, {2}), {0}, false).to_vector<uint8_t>(),
            std::vector<uint8_t>{44});
  EXPECT_EQ(
      run_reduce("reduce_sum", Tensor::from_vector<int32_t>({INT32_MAX, 1}, {2}), {0}, false).to_vector<int32_t>(),
      std::vector<int32_t>{INT32_MIN});
  EXPECT_EQ(
      run_reduce("reduce_prod", Tensor::from_vector<uint16_t>({65535, 65535}, {2}), {0}, false).to_vector<uint16_t>(),
      std::vector<uint16_t>{1});  // 65535^2 = 2^32 - 2^17 + 1 = 1 (mod 2^16)
  EXPECT_EQ(
      run_reduce("reduce_prod", Tensor::from_vector<int64_t>({INT64_MAX, 2}, {2}), {0}, false).to_vector<int64_t>(),
      std::vector<int64_t>{-2});
}

TEST(InterpReduce, LargeRowsAndColumnsMatchDoubleReference) {
  const int64_t n = 1024;
  std::vector<float> v(static_cast<size_t>(n * n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i * 7919u) % 1000u) - 500) / 64.0f;
  Tensor x = Tensor::from_vector(v, {n, n});
  auto rows = run_reduce("reduce_sum", x, {1}, false).to_vector<float>();
  auto cols = run_reduce("reduce_sum", x, {0}, false).to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    double rs = 0, cs = 0;
    for (int64_t j = 0; j < n; ++j) {
      rs += v[static_cast<size_t>(i * n + j)];
      cs += v[static_cast<size_t>(j * n + i)];
    }
    ASSERT_NEAR(rows[static_cast<size_t>(i)], rs, 1e-3) << i;
    ASSERT_NEAR(cols[static_cast<size_t>(i)], cs, 1e-3) << i;
  }
  double total = 0;
  for (float f : v) total += f;
  EXPECT_NEAR(run_reduce("reduce_sum", x, {0, 1}, false).to_vector<float>()[0], total, 1e-2);
  // A middle axis and a non-adjacent pair exercise the other loop shapes.
  Tensor y = x.reshaped({16, 64, 1024});
  auto mid = run_reduce("reduce_max", y, {1}, false).to_vector<float>();
  for (int64_t a = 0; a < 16; ++a)
    for (int64_t c = 0; c < 1024; c += 97) {
      float m = -INFINITY;
      for (int64_t b2 = 0; b2 < 64; ++b2) m = std::max(m, v[static_cast<size_t>((a * 64 + b2) * 1024 + c)]);
      ASSERT_EQ(mid[static_cast<size_t>(a * 1024 + c)], m);
    }
  auto outer = run_reduce("reduce_sum", y, {0, 2}, false).to_vector<float>();
  for (int64_t b2 = 0; b2 < 64; ++b2) {
    double s = 0;
    for (int64_t a = 0; a < 16; ++a)
      for (int64_t c = 0; c < 1024; ++c) s += v[static_cast<size_t>((a * 64 + b2) * 1024 + c)];
    ASSERT_NEAR(outer[static_cast<size_t>(b2)], s, 1e-2);
  }
}

TEST(InterpReduce, ResultsDoNotDependOnThreadCount) {
  const int64_t n = 3 * 1000 * 1000 + 17;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i)) * 1000.0f;
  Tensor x = Tensor::from_vector(v, {n});
  interp::set_num_threads(1);
  float one = run_reduce("reduce_sum", x, {0}, false).to_vector<float>()[0];
  interp::set_num_threads(2);
  float two = run_reduce("reduce_sum", x, {0}, false).to_vector<float>()[0];
  interp::set_num_threads(4);
  float four = run_reduce("reduce_sum", x, {0}, false).to_vector<float>()[0];
  interp::set_num_threads(0);
  EXPECT_EQ(std::bit_cast<uint32_t>(one), std::bit_cast<uint32_t>(two));
  EXPECT_EQ(std::bit_cast<uint32_t>(one), std::bit_cast<uint32_t>(four));
  double ref = 0;
  for (float f : v) ref += f;
  EXPECT_NEAR(one, ref, std::fabs(ref) * 1e-5 + 1.0);
}

// --- argmax / argmin

Tensor run_arg(const std::string& op, const Tensor& x, int64_t axis, bool keep, DType idx = DType::I64) {
  GraphBuilder b;
  Value* in = b.input(x.dtype(), S(x.shape()));
  Value* r = b.op(op, {in}, tt(idx, S(reduced_shape(x.shape(), {axis}, keep))),
                  {{"axis", axis}, {"keepdims", keep}, {"index_dtype", idx}});
  return run_graph(b.build({r}), {x})[0];
}

TEST(InterpArgReduce, EveryDtypeAndAxis) {
  std::vector<int64_t> shape = {3, 4, 5};
  for (DType t : all_dtypes()) {
    std::vector<double> v = sample_values(t, 60, 11);
    Tensor x = make_tensor(t, shape, to_doubles(make_tensor(t, shape, v)));
    std::vector<double> xv = to_doubles(x);
    for (int64_t axis = 0; axis < 3; ++axis) {
      for (bool is_max : {true, false}) {
        for (DType idx : {DType::I32, DType::I64}) {
          Tensor got = run_arg(is_max ? "argmax" : "argmin", x, axis, axis == 1, idx);
          EXPECT_EQ(got.dtype(), idx);
          std::vector<double> g = to_doubles(got);
          int64_t outer = 1, inner = 1;
          for (int64_t i = 0; i < axis; ++i) outer *= shape[static_cast<size_t>(i)];
          for (int64_t i = axis + 1; i < 3; ++i) inner *= shape[static_cast<size_t>(i)];
          int64_t n = shape[static_cast<size_t>(axis)];
          for (int64_t o = 0; o < outer; ++o)
            for (int64_t j = 0; j < inner; ++j) {
              int64_t best = 0;
              for (int64_t a = 1; a < n; ++a) {
                double cur = xv[static_cast<size_t>((o * n + a) * inner + j)];
                double bv = xv[static_cast<size_t>((o * n + best) * inner + j)];
                if (is_max ? cur > bv : cur < bv) best = a;
              }
              ASSERT_EQ(g[static_cast<size_t>(o * inner + j)], static_cast<double>(best))
                  << dtype_name(t) << " axis " << axis << " max " << is_max;
            }
        }
      }
    }
  }
}

TEST(InterpArgReduce, TiesTakeTheFirstAndNaNWins) {
  Tensor x = make_tensor(DType::F32, {2, 4}, {1, 3, 3, 0, 2, NAN, 5, NAN});
  EXPECT_EQ(to_doubles(run_arg("argmax", x, 1, false)), (std::vector<double>{1, 1}));
  EXPECT_EQ(to_doubles(run_arg("argmin", x, 1, false)), (std::vector<double>{3, 1}));
  Tensor h = make_tensor(DType::F16, {3}, {-INFINITY, NAN, -INFINITY});
  EXPECT_EQ(to_doubles(run_arg("argmin", h, 0, true)), (std::vector<double>{1}));
}

TEST(InterpArgReduce, SymbolicEmptyAxisIsAValidationError) {
  GraphBuilder b;
  Shape s{Dim("N"), DimExpr(3)};
  Value* in = b.input(DType::F32, s);
  Value* r =
      b.op("argmax", {in}, tt(DType::I64, S({3})),
           {{"axis", int64_t{0}}, {"keepdims", false}, {"index_dtype", DType::I64}}, Location{"model.py", 12, 4});
  auto p = interp::prepare(b.build({r}));
  std::vector<Tensor> outs(1);
  std::vector<Tensor> ok = {make_tensor(DType::F32, {2, 3}, {1, 5, 2, 4, 0, 3})};
  interp::execute(*p, ok, outs);
  EXPECT_EQ(to_doubles(outs[0]), (std::vector<double>{1, 0, 1}));
  std::vector<Tensor> empty = {Tensor::empty({0, 3}, DType::F32)};
  std::vector<Tensor> outs2(1);
  try {
    interp::execute(*p, empty, outs2);
    FAIL() << "expected a ValidationError";
  } catch (const ValidationError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("evoxc.argmax at model.py:12:4"), std::string::npos) << m;
    EXPECT_NE(m.find("N = 0"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace evoxc::testing
