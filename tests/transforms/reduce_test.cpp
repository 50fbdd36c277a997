// The reduce family's batching, jvp and transpose rules: generated checks over each op's catalogue sample (vmap
// against a loop, jvp against finite differences, vjp against jvp) and hand cases (axes, keepdims, ties, zeros,
// symbolic extents, known Jacobians).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "evoxc/transforms/rules.h"
#include "ops/ops_util.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

using testing::expect_close;
using testing::make_tensor;
using testing::random_inputs;
using testing::random_tensor;
using testing::run_flat;
using testing::values_of;
using ST = SymbolicTensor;

const std::vector<std::string>& family() {
  static const std::vector<std::string> ops = {
      "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_mean", "reduce_any", "reduce_all",
      "argmax",     "argmin",      "cumsum",     "cumprod",    "cummax",      "cummin",     "reduce_logsumexp"};
  return ops;
}

// The three generic checks on a float64 graph. (cummax/cummin's tangent is a gather, so their reverse mode also
// relies on the indexing family's gather transpose.)
void check_all(const Graph& g, const std::vector<Tensor>& x) {
  std::vector<bool> all(x.size(), true);
  testing::expect_vmap_matches_loop(g, x, all);
  testing::expect_jvp_matches_fd(g, x);
  testing::expect_vjp_matches_jvp(g, x);
}

// The value of jvp(g) at x along tangent t (one input, one float output).
Tensor jvp_at(const Graph& g, const Tensor& x, const Tensor& t) { return run_flat(jvp(g), {x, t})[1]; }

// The unit tensor e_k of x's shape and dtype.
Tensor unit(const Tensor& x, int64_t k) {
  std::vector<double> v(static_cast<size_t>(x.numel()), 0.0);
  v[static_cast<size_t>(k)] = 1.0;
  return make_tensor(v, x.shape(), x.dtype());
}

TEST(ReduceRules, EveryOpHasItsRules) {
  for (const std::string& name : family()) {
    SCOPED_TRACE(name);
    const OpDef& d = get_op(name);
    EXPECT_TRUE(transforms::batch_rules().has(d.id));
    EXPECT_TRUE(transforms::jvp_rules().has(d.id));
    bool linear = !d.linear_operands.empty() || !d.linear_each.empty();
    EXPECT_EQ(transforms::transpose_rules().has(d.id), linear);
  }
}

TEST(ReduceRules, VmapMatchesLoopForEveryOpAndDtype) {
  int checked = 0;
  for (const std::string& name : family()) {
    const OpDef& def = get_op(name);
    for (DType t : {DType::F32, DType::F64, DType::I32, DType::Bool}) {
      if (!dtype_in_class(t, def.operand_dtypes)) continue;
      SCOPED_TRACE(name + " on " + std::string(dtype_name(t)));
      Graph g = testing::one_op_graph(def, testing::sample_call(def, t));
      std::vector<Tensor> ex = random_inputs(g, 5);
      testing::expect_vmap_matches_loop(g, ex, std::vector<bool>(ex.size(), true));
      ++checked;
    }
  }
  EXPECT_GE(checked, 40);
}

TEST(ReduceRules, JvpMatchesFiniteDifferencesAndVjpMatchesJvp) {
  int checked = 0;
  for (const std::string& name : family()) {
    const OpDef& def = get_op(name);
    if (!dtype_in_class(DType::F64, def.operand_dtypes)) continue;  // reduce_any / reduce_all take bool only
    SCOPED_TRACE(name);
    Graph g = testing::one_op_graph(def, testing::sample_call(def, DType::F64));
    std::vector<Tensor> p = random_inputs(g, 5, 0.2, 0.9);
    if (g.output_specs()[0].dtype == DType::F64) testing::expect_jvp_matches_fd(g, p);
    testing::expect_vjp_matches_jvp(g, p);
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

// The rules keep the operand's float dtype (tangents of float32 and the half types): jvp and vjp of the samples
// agree with the float64 jvp at the same points.
TEST(ReduceRules, JvpAndVjpInLowerPrecision) {
  for (const std::string& name : family()) {
    const OpDef& def = get_op(name);
    if (!dtype_in_class(DType::F64, def.operand_dtypes)) continue;
    Graph g64 = testing::one_op_graph(def, testing::sample_call(def, DType::F64));
    if (g64.output_specs()[0].dtype != DType::F64) continue;
    std::vector<Tensor> p64 = random_inputs(g64, 7, 0.2, 0.9);
    Tensor t64 = random_tensor(p64[0].shape(), DType::F64, 8);
    // Round the points through the narrow dtype first, so both graphs see the same values.
    for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
      SCOPED_TRACE(name + " on " + std::string(dtype_name(dt)));
      Tensor p = make_tensor(values_of(p64[0]), p64[0].shape(), dt), t = make_tensor(values_of(t64), t64.shape(), dt);
      Tensor p_wide = make_tensor(values_of(p), p.shape(), DType::F64),
             t_wide = make_tensor(values_of(t), t.shape(), DType::F64);
      Graph g = testing::one_op_graph(def, testing::sample_call(def, dt));
      Tensor got = jvp_at(g, p, t), want = jvp_at(g64, p_wide, t_wide);
      EXPECT_EQ(got.dtype(), dt);
      double tol = dt == DType::F32 ? 1e-5 : 3e-2;
      expect_close(make_tensor(values_of(got), got.shape(), DType::F64), want, tol, tol, "jvp vs float64");
      std::vector<Tensor> v = run_flat(vjp(g), {p, random_tensor(want.shape(), dt, 9)});
      EXPECT_EQ(v[1].dtype(), dt);
    }
  }
}

// Several axes, keepdims true and false, through the trace functions (which normalise negative axes).
TEST(ReduceRules, SeveralAxesAndKeepdims) {
  using Fn = std::function<ST(const ST&, const std::vector<int64_t>&, bool)>;
  std::vector<std::pair<std::string, Fn>> fns = {
      {"sum", [](const ST& x, const std::vector<int64_t>& a, bool k) { return sum(x, a, k); }},
      {"prod", [](const ST& x, const std::vector<int64_t>& a, bool k) { return prod(x, a, k); }},
      {"max", [](const ST& x, const std::vector<int64_t>& a, bool k) { return max(x, a, k); }},
      {"min", [](const ST& x, const std::vector<int64_t>& a, bool k) { return min(x, a, k); }},
      {"mean", [](const ST& x, const std::vector<int64_t>& a, bool k) { return mean(x, a, k); }},
      {"logsumexp", [](const ST& x, const std::vector<int64_t>& a, bool k) { return logsumexp(x, a, k); }},
  };
  std::vector<std::vector<int64_t>> axes_sets = {{0, 2}, {1}, {0, 1, 2}, {-1}, {-3, -1}, {2, 0}};
  for (const auto& [name, fn] : fns)
    for (const auto& axes : axes_sets)
      for (bool keep : {false, true}) {
        SCOPED_TRACE(name + " axes " + ::testing::PrintToString(axes) + (keep ? " keepdims" : ""));
        Graph g = trace([&](const ST& x) { return fn(x, axes, keep); }, TensorSpec({2, 3, 4}, DType::F64));
        check_all(g, {random_tensor({2, 3, 4}, DType::F64, 11, 0.5, 1.5)});
      }
  // Bool reductions over several axes: batching only.
  for (bool keep : {false, true}) {
    Graph g = trace(
        [&](const ST& x) {
          return std::make_pair(any(x, {0, 2}, keep), all(x, {-1, 0}, keep));
        },
        TensorSpec({2, 3, 4}, DType::Bool));
    testing::expect_vmap_matches_loop(g, {random_tensor({2, 3, 4}, DType::Bool, 3)}, {true});
  }
}

TEST(ReduceRules, NegativeAxesThroughTheTraceFunctions) {
  Tensor x = random_tensor({3, 4}, DType::F64, 21, 0.5, 1.5);
  // Each function with a negative axis equals its positive spelling, and its rules check out.
  std::vector<std::pair<std::function<ST(const ST&)>, std::function<ST(const ST&)>>> pairs = {
      {[](const ST& v) { return sum(v, -1); }, [](const ST& v) { return sum(v, 1); }},
      {[](const ST& v) {
         return mean(v, {-2, -1}, true);
       },
       [](const ST& v) {
         return mean(v, {0, 1}, true);
       }},
      {[](const ST& v) { return cumsum(v, -2); }, [](const ST& v) { return cumsum(v, 0); }},
      {[](const ST& v) { return cumprod(v, -1, true); }, [](const ST& v) { return cumprod(v, 1, true); }},
      {[](const ST& v) { return cummax(v, -1); }, [](const ST& v) { return cummax(v, 1); }},
      {[](const ST& v) { return cummin(v, -2, true); }, [](const ST& v) { return cummin(v, 0, true); }},
      {[](const ST& v) { return logsumexp(v, -1, true); }, [](const ST& v) { return logsumexp(v, 1, true); }},
      {[](const ST& v) { return max(v, -1); }, [](const ST& v) { return max(v, 1); }},
  };
  for (size_t i = 0; i < pairs.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    Graph neg = trace(pairs[i].first, TensorSpec({3, 4}, DType::F64));
    Graph pos = trace(pairs[i].second, TensorSpec({3, 4}, DType::F64));
    expect_close(run_flat(neg, {x})[0], run_flat(pos, {x})[0], 0, 0, "negative vs positive axis");
    check_all(neg, {x});
  }
  for (bool keep : {false, true}) {
    Graph g = trace([&](const ST& v) { return std::make_pair(argmax(v, -1, keep), argmin(v, -2, keep)); },
                    TensorSpec({3, 4}, DType::F64));
    testing::expect_vmap_matches_loop(g, {x}, {true});
    testing::expect_jvp_matches_fd(g, {x});  // integer results: no tangent outputs, primals checked
  }
}

// The Jacobian of a cumulative product by brute force: J[i][j] = prod_{k in scan prefix of i, k != j} x[k].
std::vector<double> cumprod_jacobian(const std::vector<double>& x, bool reverse) {
  auto n = static_cast<int64_t>(x.size());
  std::vector<double> j(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < n; ++c) {
      bool in_prefix = reverse ? c >= i : c <= i;
      if (!in_prefix) continue;
      double p = 1.0;
      for (int64_t k = 0; k < n; ++k)
        if (k != c && (reverse ? k >= i : k <= i)) p *= x[static_cast<size_t>(k)];
      j[static_cast<size_t>(i * n + c)] = p;
    }
  return j;
}

TEST(ReduceRules, ReverseScans) {
  Tensor x = random_tensor({4, 3}, DType::F64, 31, 0.5, 1.5);
  for (bool rev : {false, true}) {
    SCOPED_TRACE(rev ? "reverse" : "forward");
    check_all(trace([&](const ST& v) { return cumsum(v, 0, rev); }, TensorSpec({4, 3}, DType::F64)), {x});
    check_all(trace([&](const ST& v) { return cumprod(v, 1, rev); }, TensorSpec({4, 3}, DType::F64)), {x});
    check_all(trace([&](const ST& v) { return cummax(v, 0, rev); }, TensorSpec({4, 3}, DType::F64)), {x});
  }
}

// cumprod's and reduce_prod's derivatives are exact where the operand has zeros (one, two, at the ends).
TEST(ReduceRules, ProductsWithZeros) {
  std::vector<std::vector<double>> inputs = {
      {2.0, 0.0, 3.0, 5.0, 0.5}, {0.0, 2.0, 3.0, 0.0, 4.0}, {1.5, 2.0, -3.0, 0.5, 0.0}, {0.0, 0.0, 0.0, 2.0, 1.0}};
  for (bool rev : {false, true}) {
    Graph g = trace([&](const ST& v) { return cumprod(v, 0, rev); }, TensorSpec({5}, DType::F64));
    for (const auto& xv : inputs) {
      SCOPED_TRACE(::testing::PrintToString(xv) + (rev ? " reverse" : ""));
      Tensor x = make_tensor(xv, {5}, DType::F64);
      std::vector<double> want = cumprod_jacobian(xv, rev);
      for (int64_t c = 0; c < 5; ++c) {
        std::vector<double> col = values_of(jvp_at(g, x, unit(x, c)));
        for (int64_t i = 0; i < 5; ++i)
          EXPECT_NEAR(col[static_cast<size_t>(i)], want[static_cast<size_t>(i * 5 + c)], 1e-12)
              << "d y[" << i << "] / d x[" << c << "]";
      }
      testing::expect_vjp_matches_jvp(g, {x});
    }
  }
  // reduce_prod over two axes of a 2x5 operand: the gradient is the product of the others.
  Graph g = trace([](const ST& v) { return prod(v, {0, 1}); }, TensorSpec({2, 5}, DType::F64));
  Graph gg = grad(g);
  for (const auto& xv : inputs) {
    SCOPED_TRACE(::testing::PrintToString(xv));
    std::vector<double> x2 = xv;
    for (double v : xv) x2.push_back(v == 0.0 ? 1.25 : 1.0 / v);
    std::vector<double> got = values_of(run_flat(gg, {make_tensor(x2, {2, 5}, DType::F64)})[0]);
    for (size_t c = 0; c < x2.size(); ++c) {
      double p = 1.0;
      for (size_t k = 0; k < x2.size(); ++k)
        if (k != c) p *= x2[k];
      EXPECT_NEAR(got[c], p, 1e-12) << "d prod / d x[" << c << "]";
    }
    testing::expect_jvp_matches_fd(g, {make_tensor(x2, {2, 5}, DType::F64)});
  }
}

// Ties: reduce_max/min share the tangent equally; cummax/cummin take the latest tied element in scan order.
TEST(ReduceRules, TiesAtTheExtreme) {
  Tensor x = make_tensor({1.0, 3.0, 3.0, 2.0, 3.0, -1.0}, {6}, DType::F64);
  std::vector<double> gmax =
      values_of(run_flat(grad(trace([](const ST& v) { return max(v); }, TensorSpec({6}, DType::F64))), {x})[0]);
  std::vector<double> want_max = {0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3, 0};
  for (size_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(gmax[i], want_max[i]) << "max at " << i;
  Tensor xm = make_tensor({-1.0, 2.0, -1.0, 0.0, 5.0, 4.0}, {6}, DType::F64);
  std::vector<double> gmin =
      values_of(run_flat(grad(trace([](const ST& v) { return min(v); }, TensorSpec({6}, DType::F64))), {xm})[0]);
  std::vector<double> want_min = {0.5, 0, 0.5, 0, 0, 0};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(gmin[i], want_min[i]) << "min at " << i;
  // Ties per row over axis 1 of a 2x3 operand with keepdims.
  Tensor x2 = make_tensor({2.0, 2.0, 1.0, 0.0, 7.0, 7.0}, {2, 3}, DType::F64);
  Graph g2 = trace([](const ST& v) { return sum(max(v, 1, true) * 1.0); }, TensorSpec({2, 3}, DType::F64));
  std::vector<double> g2v = values_of(run_flat(grad(g2), {x2})[0]);
  std::vector<double> want2 = {0.5, 0.5, 0, 0, 0.5, 0.5};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(g2v[i], want2[i]) << "row max at " << i;

  // cummax forward on [1, 3, 3, 2, 3, -1]: y = [1, 3, 3, 3, 3, 3], reported elements [0, 1, 2, 2, 4, 4].
  // cummax reverse: y[i] = max(x[i:]) = [3, 3, 3, 3, 3, -1], reported (latest from the end) [1, 1, 2, 4, 4, 5].
  // cummin forward on [-1, 2, -1, 0, 5, 4]: reported [0, 0, 2, 2, 2, 2].
  struct Case {
    bool is_max, rev;
    Tensor x;
    std::vector<int64_t> picked;
  };
  std::vector<Case> cases = {{true, false, x, {0, 1, 2, 2, 4, 4}},
                             {true, true, x, {1, 1, 2, 4, 4, 5}},
                             {false, false, xm, {0, 0, 2, 2, 2, 2}},
                             {false, true, xm, {0, 2, 2, 3, 5, 5}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.is_max ? "cummax" : "cummin") + (c.rev ? " reverse" : ""));
    Graph g = trace([&](const ST& v) { return c.is_max ? cummax(v, 0, c.rev) : cummin(v, 0, c.rev); },
                    TensorSpec({6}, DType::F64));
    for (int64_t col = 0; col < 6; ++col) {
      std::vector<double> d = values_of(jvp_at(g, c.x, unit(c.x, col)));
      for (int64_t i = 0; i < 6; ++i)
        EXPECT_EQ(d[static_cast<size_t>(i)], c.picked[static_cast<size_t>(i)] == col ? 1.0 : 0.0)
            << "d y[" << i << "] / d x[" << col << "]";
    }
  }
}

// A NaN extreme: cummax reports the first NaN from its position on, and its tangent goes with it.
TEST(ReduceRules, CummaxFollowsTheFirstNaN) {
  double nan = std::nan("");
  Tensor x = make_tensor({1.0, nan, 5.0, nan}, {4}, DType::F64);
  Graph g = trace([](const ST& v) { return cummax(v, 0); }, TensorSpec({4}, DType::F64));
  std::vector<int64_t> picked = {0, 1, 1, 1};
  for (int64_t col = 0; col < 4; ++col) {
    std::vector<double> d = values_of(jvp_at(g, x, unit(x, col)));
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(d[static_cast<size_t>(i)], picked[static_cast<size_t>(i)] == col ? 1.0 : 0.0)
          << "d y[" << i << "] / d x[" << col << "]";
  }
}

TEST(ReduceRules, LogsumexpAtMinusInfinity) {
  double inf = std::numeric_limits<double>::infinity();
  Tensor x = make_tensor({-inf, -inf, 0.0, -inf}, {2, 2}, DType::F64);
  Graph g = trace([](const ST& v) { return sum(logsumexp(v, 1)); }, TensorSpec({2, 2}, DType::F64));
  std::vector<double> gv = values_of(run_flat(grad(g), {x})[0]);
  // Row 0 is all -inf (value -inf): zero gradient; row 1 is the softmax [1, 0].
  EXPECT_EQ(gv, (std::vector<double>{0.0, 0.0, 1.0, 0.0}));
}

TEST(ReduceRules, GradOfMeanOfSquares) {
  // d/dx mean(x * x) = 2 x / N.
  Graph g = trace([](const ST& v) { return mean(v * v); }, TensorSpec({3, 4}, DType::F64));
  Tensor x = random_tensor({3, 4}, DType::F64, 41);
  std::vector<double> got = values_of(run_flat(grad(g), {x})[0]);
  std::vector<double> xv = values_of(x);
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(got[i], 2.0 * xv[i] / 12.0, 1e-15);
}

// reduce_mean's transpose over a symbolic extent counts it at run time.
TEST(ReduceRules, MeanOverASymbolicExtent) {
  DimExpr n = DimExpr::symbol("n");
  Graph m = trace([](const ST& v) { return mean(v, {0}, true); }, TensorSpec(Shape{n, 3}, DType::F64));
  for (int64_t rows : {1, 4, 7}) {
    SCOPED_TRACE("n = " + std::to_string(rows));
    Tensor x = random_tensor({rows, 3}, DType::F64, 51);
    testing::expect_jvp_matches_fd(m, {x});
    testing::expect_vjp_matches_jvp(m, {x});
    Tensor ct = random_tensor({1, 3}, DType::F64, 52);
    std::vector<double> got = values_of(run_flat(vjp(m), {x, ct})[1]);
    std::vector<double> c = values_of(ct);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 3; ++k)
        EXPECT_NEAR(got[static_cast<size_t>(r * 3 + k)], c[static_cast<size_t>(k)] / static_cast<double>(rows), 1e-15);
  }
}

// vmap with a symbolic batch: vectorize(g, 0, 0) builds one graph for every batch size.
TEST(ReduceRules, VmapWithASymbolicBatch) {
  Graph g = trace(
      [](const ST& v) {
        return std::make_tuple(sum(v, {1}, true), prod(v, {0, 1}), mean(v, 0), max(v, -1), argmin(v, 1),
                               cumsum(v, 1, true), cumprod(v, 0), cummin(v, 1), logsumexp(v, {0, 1}, true));
      },
      TensorSpec({3, 4}, DType::F64));
  Graph vg = vectorize(g, AxisTree(0), AxisTree(0));
  EXPECT_FALSE(vg.input_specs()[0].shape[0].is_const());
  for (int64_t batch : {1, 5}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    Tensor xs = random_tensor({batch, 3, 4}, DType::F64, 61, 0.5, 1.5);
    std::vector<Tensor> got = run_flat(vg, {xs});
    std::vector<double> all = values_of(xs);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<double> row(all.begin() + b * 12, all.begin() + (b + 1) * 12);
      std::vector<Tensor> want = run_flat(g, {make_tensor(row, {3, 4}, DType::F64)});
      for (size_t k = 0; k < want.size(); ++k) {
        std::vector<double> gv = values_of(got[k]);
        auto per = static_cast<int64_t>(gv.size()) / batch;
        std::vector<double> slice(gv.begin() + b * per, gv.begin() + (b + 1) * per);
        expect_close(make_tensor(slice, want[k].shape(), DType::F64),
                     make_tensor(values_of(want[k]), want[k].shape(), DType::F64), 1e-12, 1e-12,
                     "output " + std::to_string(k) + " row " + std::to_string(b));
      }
    }
  }
}

// jacfwd and jacrev of sum and cumsum are the known matrices.
TEST(ReduceRules, JacobiansOfSumAndCumsum) {
  Tensor x = random_tensor({4}, DType::F64, 71);
  std::vector<double> ones(4, 1.0);
  std::vector<double> lower(16, 0.0), upper(16, 0.0);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      lower[static_cast<size_t>(i * 4 + j)] = j <= i ? 1.0 : 0.0;
      upper[static_cast<size_t>(i * 4 + j)] = j >= i ? 1.0 : 0.0;
    }
  struct Case {
    const char* name;
    std::function<ST(const ST&)> f;
    std::vector<double> jac;
    std::vector<int64_t> shape;
  };
  std::vector<Case> cases = {{"sum", [](const ST& v) { return sum(v); }, ones, {4}},
                             {"cumsum", [](const ST& v) { return cumsum(v, 0); }, lower, {4, 4}},
                             {"reverse cumsum", [](const ST& v) { return cumsum(v, 0, true); }, upper, {4, 4}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Graph g = trace(c.f, TensorSpec({4}, DType::F64));
    Tensor want = make_tensor(c.jac, c.shape, DType::F64);
    expect_close(run_flat(jacfwd(g), {x})[0], want, 0, 0, "jacfwd");
    expect_close(run_flat(jacrev(g), {x})[0], want, 0, 0, "jacrev");
  }
  // A 2-D sum over one axis with keepdims: d out[i, 0] / d x[k, l] = (i == k).
  Graph g = trace([](const ST& v) { return sum(v, 1, true); }, TensorSpec({2, 3}, DType::F64));
  std::vector<double> j(2 * 1 * 2 * 3, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int l = 0; l < 3; ++l) j[static_cast<size_t>(i * 6 + i * 3 + l)] = 1.0;
  Tensor want = make_tensor(j, {2, 1, 2, 3}, DType::F64);
  Tensor x2 = random_tensor({2, 3}, DType::F64, 72);
  expect_close(run_flat(jacfwd(g), {x2})[0], want, 0, 0, "jacfwd keepdims");
  expect_close(run_flat(jacrev(g), {x2})[0], want, 0, 0, "jacrev keepdims");
}

// jacfwd (vectorized jvp) and jacrev (vectorized vjp) agree: every op the jvp rules and transposes emit batches.
TEST(ReduceRules, JacfwdMatchesJacrev) {
  std::vector<std::pair<std::string, std::function<ST(const ST&)>>> fns = {
      {"sum", [](const ST& v) { return sum(v, {0, 2}, true); }},
      {"prod", [](const ST& v) { return prod(v, {0, 2}); }},
      {"max", [](const ST& v) { return max(v, 1, true); }},
      {"min", [](const ST& v) { return min(v, {0, 1}); }},
      {"mean", [](const ST& v) { return mean(v, {1, 2}); }},
      {"logsumexp", [](const ST& v) { return logsumexp(v, -1); }},
      {"cumsum", [](const ST& v) { return cumsum(v, 1, true); }},
      {"cumprod", [](const ST& v) { return cumprod(v, 2); }},
      {"cummax", [](const ST& v) { return cummax(v, 1); }},
      {"cummin", [](const ST& v) { return cummin(v, 2, true); }},
  };
  Tensor x = random_tensor({2, 3, 4}, DType::F64, 81, 0.5, 1.5);
  for (const auto& [name, fn] : fns) {
    SCOPED_TRACE(name);
    Graph g = trace(fn, TensorSpec({2, 3, 4}, DType::F64));
    try {
      expect_close(run_flat(jacfwd(g), {x})[0], run_flat(jacrev(g), {x})[0], 1e-12, 1e-12, "jacfwd vs jacrev");
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

// Second derivatives through the rules: the Hessians of logsumexp and prod in closed form.
TEST(ReduceRules, HessiansOfLogsumexpAndProd) {
  std::vector<double> xv = {0.3, -1.2, 0.8, 2.0};
  Tensor x = make_tensor(xv, {4}, DType::F64);
  std::vector<double> h = values_of(
      run_flat(hessian(trace([](const ST& v) { return logsumexp(v); }, TensorSpec({4}, DType::F64))), {x})[0]);
  double z = 0;
  for (double v : xv) z += std::exp(v);
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 4; ++j) {
      double si = std::exp(xv[i]) / z, sj = std::exp(xv[j]) / z;
      EXPECT_NEAR(h[i * 4 + j], (i == j ? si : 0.0) - si * sj, 1e-12) << i << "," << j;
    }
  // prod with one zero: H[i][j] = prod of the others but i and j (0 on the diagonal).
  std::vector<double> pv = {1.5, 0.0, -2.0, 3.0};
  std::vector<double> hp =
      values_of(run_flat(hessian(trace([](const ST& v) { return prod(v); }, TensorSpec({4}, DType::F64))),
                         {make_tensor(pv, {4}, DType::F64)})[0]);
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 4; ++j) {
      double want = 0;
      if (i != j) {
        want = 1;
        for (size_t k = 0; k < 4; ++k)
          if (k != i && k != j) want *= pv[k];
      }
      EXPECT_NEAR(hp[i * 4 + j], want, 1e-12) << i << "," << j;
    }
}

// The jvp rules over symbolic extents (the prod rule flattens them, the cum* rules build iotas and fills) and over
// empty axes.
TEST(ReduceRules, SymbolicAndEmptyExtents) {
  DimExpr n = DimExpr::symbol("n");
  std::vector<std::pair<std::string, std::function<ST(const ST&)>>> fns = {
      {"prod", [](const ST& v) { return prod(v, {0}); }},
      {"prod all", [](const ST& v) { return prod(v); }},
      {"max", [](const ST& v) { return max(v, 0, true); }},
      {"logsumexp", [](const ST& v) { return logsumexp(v, {0, 1}); }},
      {"mean", [](const ST& v) { return mean(v, 0); }},
      {"cumprod", [](const ST& v) { return cumprod(v, 0, true); }},
      {"cummax", [](const ST& v) { return cummax(v, 0); }},
      {"cummin", [](const ST& v) { return cummin(v, 0, true); }},
  };
  for (const auto& [name, fn] : fns) {
    Graph g = trace(fn, TensorSpec(Shape{n, 3}, DType::F64));
    for (int64_t rows : {1, 4}) {
      SCOPED_TRACE(name + " n = " + std::to_string(rows));
      Tensor x = random_tensor({rows, 3}, DType::F64, 91, 0.5, 1.5);
      testing::expect_jvp_matches_fd(g, {x});
      testing::expect_vjp_matches_jvp(g, {x});
    }
    SCOPED_TRACE(name + " n = 0");
    Tensor empty = random_tensor({0, 3}, DType::F64, 92);
    std::vector<Tensor> out = run_flat(jvp(g), {empty, empty});
    // An empty reduction's value does not move: a zero tangent; but the mean of nothing is NaN, and so is its
    // tangent (the mean of the empty tangent).
    for (double v : values_of(out[1])) {
      if (name == "mean")
        EXPECT_TRUE(std::isnan(v));
      else
        EXPECT_EQ(v, 0.0);
    }
  }
}

}  // namespace
}  // namespace evoxc
