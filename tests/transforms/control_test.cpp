// Transforms through control flow: vmap of cond/switch/while_loop/scan with batched and unbatched predicates, jvp
// against finite differences, vjp/grad of cond and scan (fori_loop), and the while_loop reverse-mode error.
#include "evoxc/trace/control.h"

#include <gtest/gtest.h>

#include <cmath>

#include "evoxc/evoxc.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;
using testing::expect_jvp_matches_fd;
using testing::expect_vjp_matches_jvp;
using testing::expect_vmap_matches_loop;
using testing::random_tensor;
using testing::run_flat;

constexpr DType f64 = DType::F64;

ST cond_fn(ST p, ST x, ST w) {
  ST scale = w * 2.0;
  return cond(
      p > 0.0, [&](const ST& v) { return sin(v) * scale; }, [&](const ST& v) { return v * v - w; }, x);
}

Graph cond_graph() { return trace(cond_fn, TensorSpec({}, f64), TensorSpec({3}, f64), TensorSpec({3}, f64)); }

TEST(ControlTransforms, VmapCondWithSharedPredicateStaysACond) {
  Graph g = cond_graph();
  std::vector<Tensor> ex{Tensor::scalar(0.5), random_tensor({3}, f64, 1), random_tensor({3}, f64, 2)};
  expect_vmap_matches_loop(g, ex, {false, true, true});
  Graph v = vectorize(g, AxisTree::tuple({AxisTree::none(), AxisTree(0), AxisTree(0)}), AxisTree(0));
  EXPECT_NE(v.to_string().find("evoxc.cond"), std::string::npos) << v.to_string();
}

TEST(ControlTransforms, VmapCondWithBatchedPredicateSelectsPerLane) {
  Graph g = cond_graph();
  for (double p : {-0.5, 0.5}) {
    std::vector<Tensor> ex{Tensor::scalar(p), random_tensor({3}, f64, 1), random_tensor({3}, f64, 2)};
    expect_vmap_matches_loop(g, ex, {true, true, false}, 4);
  }
  Graph v = vectorize(g, AxisTree(0), AxisTree(0));
  EXPECT_EQ(v.to_string().find("evoxc.cond"), std::string::npos) << "a batched predicate becomes a select";
}

TEST(ControlTransforms, VmapSwitchWithBatchedIndexClampsLikeTheOp) {
  Graph g = trace(
      [](ST i, ST x) {
        return switch_(i,
                       {[](const ST& v) -> Tree<ST> { return v + 1.0; },
                        [](const ST& v) -> Tree<ST> { return v * 10.0; }, [](const ST& v) -> Tree<ST> { return -v; }},
                       x)
            .leaf();
      },
      TensorSpec({}, DType::I32), TensorSpec({2}, f64));
  // Rows with indices -1, 0, 1, 2, 5 (stacked by hand).
  Graph v = vectorize(g, AxisTree(0), AxisTree(0));
  Tensor idx = Tensor::from_vector<int32_t>({-1, 0, 1, 2, 5}, {5});
  Tensor x = Tensor::from_vector<double>({1, 2, 1, 2, 1, 2, 1, 2, 1, 2}, {5, 2});
  std::vector<Tensor> out = run_flat(v, {idx, x});
  EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{2, 3, 2, 3, 10, 20, -1, -2, -1, -2}));
}

// Doubles x until it exceeds `limit`, counting the steps: each lane runs its own trip count.
std::pair<ST, ST> doubling(ST x, ST limit) {
  auto c = [limit](const std::pair<ST, ST>& s) { return less(s.first, limit); };
  auto b = [](const std::pair<ST, ST>& s) { return std::pair<ST, ST>{s.first * 2.0, s.second + int64_t{1}}; };
  return while_loop(c, b, std::pair<ST, ST>{x, fill(Shape(), 0, DType::I64)});
}

TEST(ControlTransforms, VmapWhileWithBatchedPredicateFreezesFinishedLanes) {
  Graph g = trace(doubling, TensorSpec({}, f64), TensorSpec({}, f64));
  Graph v = vectorize(g, AxisTree::tuple({AxisTree(0), AxisTree::none()}), AxisTree(0));
  std::vector<Tensor> out = run_flat(v, {Tensor::from_vector<double>({1, 3, 100, 0.5}, {4}), Tensor::scalar(10.0)});
  EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{16, 12, 100, 16}));
  EXPECT_EQ(out[1].to_vector<int64_t>(), (std::vector<int64_t>{4, 2, 0, 5}));
  // The limit batched too, and the loop-versus-rows check.
  expect_vmap_matches_loop(g, {Tensor::scalar(0.7), Tensor::scalar(9.0)}, {true, true}, 3);
}

TEST(ControlTransforms, VmapWhileWithSharedPredicateKeepsTheLoop) {
  // The trip count depends only on n (shared); x is batched.
  Graph g = trace(
      [](ST n, ST x) {
        return fori_loop(
            0, n, [](const ST&, const ST& c) { return c * 1.5 + 1.0; }, x);
      },
      TensorSpec({}, DType::I64), TensorSpec({2}, f64));
  expect_vmap_matches_loop(g, {Tensor::scalar<int64_t>(4), random_tensor({2}, f64, 3)}, {false, true});
}

TEST(ControlTransforms, VmapKeepsALoopCounterThatIgnoresTheBatchUnbatched) {
  // The counter depends only on the shared n: it can be returned with out_axes None.
  Graph g = trace(
      [](ST n, ST x) {
        auto c = [n](const std::pair<ST, ST>& s) { return less(s.first, n); };
        auto b = [](const std::pair<ST, ST>& s) { return std::pair<ST, ST>{s.first + int64_t{1}, s.second * 2.0}; };
        return while_loop(c, b, std::pair<ST, ST>{fill(Shape(), 0, DType::I64), x});
      },
      TensorSpec({}, DType::I64), TensorSpec({}, f64));
  Graph v =
      vectorize(g, AxisTree::tuple({AxisTree::none(), AxisTree(0)}), AxisTree::tuple({AxisTree::none(), AxisTree(0)}));
  EXPECT_EQ(v.output_specs()[0].shape, Shape());
  std::vector<Tensor> out = run_flat(v, {Tensor::scalar<int64_t>(3), Tensor::from_vector<double>({1, 2}, {2})});
  EXPECT_EQ(out[0].to_vector<int64_t>(), (std::vector<int64_t>{3}));
  EXPECT_EQ(out[1].to_vector<double>(), (std::vector<double>{8, 16}));
}

std::pair<ST, ST> scan_fn(ST h0, ST xs, ST w) {
  auto body = [w](const ST& h, const ST& x) {
    ST n = tanh(h * w + x);
    return std::pair<ST, ST>{n, n * n};
  };
  return scan(body, h0, xs);
}

Graph scan_graph() { return trace(scan_fn, TensorSpec({3}, f64), TensorSpec({4, 3}, f64), TensorSpec({3}, f64)); }

TEST(ControlTransforms, VmapScanOverEveryCombination) {
  Graph g = scan_graph();
  std::vector<Tensor> ex{random_tensor({3}, f64, 4), random_tensor({4, 3}, f64, 5), random_tensor({3}, f64, 6)};
  expect_vmap_matches_loop(g, ex, {true, true, true});
  expect_vmap_matches_loop(g, ex, {false, true, false});  // only xs batched
  expect_vmap_matches_loop(g, ex, {false, false, true});  // only a captured value batched
  expect_vmap_matches_loop(g, ex, {true, false, false});  // only the carry batched
}

TEST(ControlTransforms, JvpThroughCondWhileAndScan) {
  Graph c = cond_graph();
  for (double p : {-0.5, 0.5})
    expect_jvp_matches_fd(c, {Tensor::scalar(p), random_tensor({3}, f64, 1), random_tensor({3}, f64, 2)});
  Graph s = scan_graph();
  expect_jvp_matches_fd(s, {random_tensor({3}, f64, 4), random_tensor({4, 3}, f64, 5), random_tensor({3}, f64, 6)});
  // Newton's square root: a data-dependent while_loop, differentiated forward.
  Graph w = trace(
      [](ST x) {
        auto cf = [](const std::pair<ST, ST>& st) { return greater(abs(st.first - st.second), 1e-12); };
        auto bf = [x](const std::pair<ST, ST>& st) {
          return std::pair<ST, ST>{0.5 * (st.first + x / st.first), st.first};
        };
        return while_loop(cf, bf, std::pair<ST, ST>{x, fill(Shape(), 0.0, f64)}).first;
      },
      TensorSpec({}, f64));
  std::vector<Tensor> out = run_flat(jvp(w), {Tensor::scalar(4.0), Tensor::scalar(1.0)});
  EXPECT_NEAR(out[0].get_as_double(0), 2.0, 1e-12);
  EXPECT_NEAR(out[1].get_as_double(0), 0.25, 1e-9);  // d sqrt(x) / dx at 4
}

TEST(ControlTransforms, JacfwdThroughAWhileLoop) {
  // c <- 1.5 c + 0.1 while sum(c^2) < 10: the Jacobian is 1.5^k I for the k steps taken
  // (the trip count is locally constant in x).
  Graph g = trace(
      [](ST x) {
        auto cf = [](const ST& c) { return less(sum(c * c), 10.0); };
        auto bf = [](const ST& c) { return c * 1.5 + 0.1; };
        return while_loop(cf, bf, x);
      },
      TensorSpec({3}, f64));
  Tensor x = Tensor::from_vector<double>({0.5, -0.25, 1.0}, {3});
  std::vector<double> c = x.to_vector<double>();
  int k = 0;
  for (; c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 10; ++k)
    for (double& v : c) v = v * 1.5 + 0.1;
  Tensor j = run_flat(jacfwd(g), {x})[0];
  std::vector<double> want(9, 0.0);
  for (int i = 0; i < 3; ++i) want[static_cast<size_t>(4 * i)] = std::pow(1.5, k);
  std::vector<double> got = j.to_vector<double>();
  for (size_t i = 0; i < 9; ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
}

// Forward mode keeps one scan (the tangent carried beside the primal, nothing stacked per
// iteration); reverse mode splits it into a primal scan with residuals and a tangent scan.
TEST(ControlTransforms, ForwardModeKeepsOneScanReverseModeSplitsIt) {
  Graph s = scan_graph();
  auto count = [](const Graph& g, const std::string& what) {
    std::string t = g.to_string();
    size_t n = 0;
    for (size_t p = t.find(what); p != std::string::npos; p = t.find(what, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(jvp(s), "evoxc.scan"), 1u) << jvp(s).to_string();
  EXPECT_EQ(count(vjp(s), "evoxc.scan"), 2u) << vjp(s).to_string();  // the forward scan and the reversed one
}

TEST(ControlTransforms, VjpOfCondAndScanMatchesJvp) {
  Graph c = cond_graph();
  for (double p : {-0.5, 0.5})
    expect_vjp_matches_jvp(c, {Tensor::scalar(p), random_tensor({3}, f64, 1), random_tensor({3}, f64, 2)});
  Graph s = scan_graph();
  expect_vjp_matches_jvp(s, {random_tensor({3}, f64, 4), random_tensor({4, 3}, f64, 5), random_tensor({3}, f64, 6)});
}

TEST(ControlTransforms, GradOfForiLoopMatchesClosedForm) {
  // c_{k+1} = c_k * x + 1 for 3 steps from c = 1: c = x^3 + x^2 + x + 1, dc/dx = 3x^2 + 2x + 1.
  Graph g = trace(
      [](ST x) {
        return fori_loop(
            0, 3, [x](const ST&, const ST& c) { return c * x + 1.0; }, fill(Shape(), 1.0, f64));
      },
      TensorSpec({}, f64));
  double x = 0.7;
  Tensor d = run_flat(grad(g), {Tensor::scalar(x)})[0];
  EXPECT_NEAR(d.get_as_double(0), 3 * x * x + 2 * x + 1, 1e-12);
  // Reverse scan too: the same recurrence run backwards over xs.
  Graph r = trace(
      [](ST xs) {
        auto body = [](const ST& c, const ST& v) { return std::pair<ST, ST>{c * v + 1.0, c}; };
        return scan(body, fill(Shape(), 1.0, f64), xs, std::nullopt, /*reverse=*/true).first;
      },
      TensorSpec({3}, f64));
  expect_vjp_matches_jvp(r, {random_tensor({3}, f64, 9)});
}

TEST(ControlTransforms, GradOfDataDependentWhileIsATransformErrorPointingToScan) {
  Graph g = trace([](ST x) { return doubling(x, fill(Shape(), 10.0, f64)).first; }, TensorSpec({}, f64));
  try {
    (void)grad(g);
    FAIL() << "expected a TransformError";
  } catch (const TransformError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("evoxc.while_loop"), std::string::npos) << m;
    EXPECT_NE(m.find("scan"), std::string::npos) << m;
    EXPECT_NE(m.find("control_test.cpp"), std::string::npos) << "names the location: " << m;
  }
}

TEST(ControlTransforms, VmapOfGradThroughCondAndScan) {
  Graph g = trace(
      [](ST x, ST w) {
        auto body = [w](const ST& h, const ST& v) {
          ST n = cond(
              v > 0.0, [&](const ST& a) { return tanh(a * w); }, [&](const ST& a) { return a * w * 0.5; }, h + v);
          return std::pair<ST, ST>{n, n};
        };
        return sum(scan(body, fill(Shape({2}), 0.1, f64), x).second);
      },
      TensorSpec({5}, f64), TensorSpec({2}, f64));
  Graph gw = grad(g, 1);
  expect_vmap_matches_loop(gw, {random_tensor({5}, f64, 11), random_tensor({2}, f64, 12)}, {true, false}, 3, 1e-12,
                           1e-12);
}

}  // namespace
}  // namespace evoxc
