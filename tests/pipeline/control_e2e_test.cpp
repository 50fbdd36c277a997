// End to end: traced control flow (cond, switch_, while_loop, scan, fori_loop) built, run, printed, parsed and saved.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "evoxc/evoxc.h"
#include "evoxc/trace/control.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;

std::vector<float> vals(const Tensor& t) {
  std::vector<float> v;
  const float* p = t.data<const float>();
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(p[i]);
  return v;
}

ST sqrt_newton(ST x) {
  auto cond_fn = [](const std::pair<ST, ST>& s) { return greater(abs(s.first - s.second), 1e-6); };
  auto body_fn = [x](const std::pair<ST, ST>& s) { return std::pair<ST, ST>{0.5 * (s.first + x / s.first), s.first}; };
  auto [y, prev] = while_loop(cond_fn, body_fn, std::pair<ST, ST>{x, fill(Shape(), 0.0, f32)});
  return y;
}

TEST(ControlE2E, NewtonSqrt) {
  Executable exe = build(sqrt_newton, TensorSpec({}, f32));
  Tensor y = run(exe, Tensor::scalar<float>(2.0f)).leaf();
  EXPECT_EQ(y.dtype(), f32);
  EXPECT_FLOAT_EQ(y.data<const float>()[0], 1.4142135f);
  EXPECT_FLOAT_EQ(run(exe, Tensor::scalar<float>(9.0f)).leaf().data<const float>()[0], 3.0f);
}

// cond with values captured from the enclosing trace (w, b) and an explicit operand x.
ST cond_captured(ST p, ST x, ST w, ST b) {
  ST scale = w * 2.0;
  return cond(
      p, [&](const ST& v) { return v * scale + b; }, [&](const ST& v) { return v - b; }, x);
}

TEST(ControlE2E, CondCapturedValues) {
  Executable exe =
      build(cond_captured, TensorSpec({}, bool_), TensorSpec({3}, f32), TensorSpec({3}, f32), TensorSpec({}, f32));
  Tensor x = Tensor::from_vector<float>({1, 2, 3}, {3}), w = Tensor::from_vector<float>({1, 10, 100}, {3});
  Tensor b = Tensor::scalar<float>(0.5f);
  EXPECT_EQ(vals(run(exe, Tensor::scalar<bool>(true), x, w, b).leaf()), (std::vector<float>{2.5f, 40.5f, 600.5f}));
  EXPECT_EQ(vals(run(exe, Tensor::scalar<bool>(false), x, w, b).leaf()), (std::vector<float>{0.5f, 1.5f, 2.5f}));
}

ST switch3(ST i, ST x) {
  return switch_(i,
                 {[](const ST& v) -> Tree<ST> { return v + 1.0; }, [](const ST& v) -> Tree<ST> { return v * 10.0; },
                  [](const ST& v) -> Tree<ST> { return -v; }},
                 x)
      .leaf();
}

TEST(ControlE2E, SwitchClampsIndex) {
  Executable exe = build(switch3, TensorSpec({}, i32), TensorSpec({2}, f32));
  Tensor x = Tensor::from_vector<float>({1, 2}, {2});
  auto at = [&](int32_t i) { return vals(run(exe, Tensor::scalar<int32_t>(i), x).leaf()); };
  EXPECT_EQ(at(0), (std::vector<float>{2, 3}));
  EXPECT_EQ(at(1), (std::vector<float>{10, 20}));
  EXPECT_EQ(at(2), (std::vector<float>{-1, -2}));
  EXPECT_EQ(at(7), (std::vector<float>{-1, -2}));  // clamped to the last branch
  EXPECT_EQ(at(-3), (std::vector<float>{2, 3}));   // clamped to the first
}

std::pair<ST, ST> cumsum_scan(ST xs, bool reverse) {
  auto body = [](const ST& c, const ST& x) {
    ST n = c + x;
    return std::pair<ST, ST>{n, n};
  };
  return scan(body, fill(Shape({xs.shape()[1]}), 0.0, f32), xs, std::nullopt, reverse);
}

TEST(ControlE2E, ScanCumulativeSumForwardAndReverse) {
  DimExpr N = Dim("N");
  Tensor xs = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  for (bool reverse : {false, true}) {
    Executable exe = build([reverse](ST x) { return cumsum_scan(x, reverse); }, TensorSpec({N, 2}, f32));
    Tree<Tensor> out = run(exe, xs);
    EXPECT_EQ(vals(out[0].leaf()), (std::vector<float>{16, 20}));
    std::vector<float> want =
        reverse ? std::vector<float>{16, 20, 15, 18, 12, 14, 7, 8} : std::vector<float>{1, 2, 4, 6, 9, 12, 16, 20};
    EXPECT_EQ(vals(out[1].leaf()), want) << reverse;
    EXPECT_EQ(out[1].leaf().shape(), (std::vector<int64_t>{4, 2}));
    // Symbolic length: zero steps give the initial carry and an empty stack.
    Tree<Tensor> empty = run(exe, Tensor::zeros({0, 2}, f32));
    EXPECT_EQ(vals(empty[0].leaf()), (std::vector<float>{0, 0}));
    EXPECT_EQ(empty[1].leaf().shape(), (std::vector<int64_t>{0, 2}));
  }
}

TEST(ControlE2E, ForiLoopStaticAndDynamicBounds) {
  // sum of i for i in [2, 7) = 20, starting from 1.
  auto f = [](ST x) {
    return fori_loop(
        2, 7, [](const ST& i, const ST& c) { return c + convert(i, f32); }, x);
  };
  Executable exe = build(f, TensorSpec({}, f32));
  EXPECT_FLOAT_EQ(run(exe, Tensor::scalar<float>(1.0f)).leaf().data<const float>()[0], 21.0f);
  auto g = [](ST n, ST x) {
    return fori_loop(
        0, n, [](const ST& i, const ST& c) { return c * 2.0 + convert(i, f32); }, x);
  };
  Executable exe2 = build(g, TensorSpec({}, i64), TensorSpec({}, f32));
  // c: 1 -> 2 -> 5 -> 12 for n = 3; n <= 0 runs no step.
  EXPECT_FLOAT_EQ(run(exe2, Tensor::scalar<int64_t>(3), Tensor::scalar<float>(1.0f)).leaf().data<const float>()[0],
                  12.0f);
  EXPECT_FLOAT_EQ(run(exe2, Tensor::scalar<int64_t>(-2), Tensor::scalar<float>(1.0f)).leaf().data<const float>()[0],
                  1.0f);
}

// A cond inside a while body: Collatz steps until 1, counting them.
std::pair<ST, ST> collatz(ST n) {
  auto c = [](const std::pair<ST, ST>& s) { return greater(s.first, int64_t{1}); };
  auto b = [](const std::pair<ST, ST>& s) {
    ST next = cond(
        equal(remainder(s.first, int64_t{2}), int64_t{0}), [](const ST& v) { return floor_divide(v, int64_t{2}); },
        [](const ST& v) { return v * int64_t{3} + int64_t{1}; }, s.first);
    return std::pair<ST, ST>{next, s.second + int64_t{1}};
  };
  return while_loop(c, b, std::pair<ST, ST>{n, fill(Shape(), 0, i64)});
}

TEST(ControlE2E, NestedCondInsideWhile) {
  Executable exe = build(collatz, TensorSpec({}, i64));
  Tree<Tensor> out = run(exe, Tensor::scalar<int64_t>(27));
  EXPECT_EQ(out[0].leaf().data<const int64_t>()[0], 1);
  EXPECT_EQ(out[1].leaf().data<const int64_t>()[0], 111);
}

TEST(ControlE2E, PrintParseAndJsonRoundTripRunTheSame) {
  Graph g = trace(collatz, TensorSpec({}, i64));
  std::string text = g.to_string();
  EXPECT_NE(text.find("evoxc.while_loop"), std::string::npos) << text;
  EXPECT_NE(text.find("evoxc.cond"), std::string::npos) << text;
  Graph parsed = Graph::parse(text);
  EXPECT_EQ(parsed.to_string(), text);
  std::string path = (std::filesystem::temp_directory_path() / "evoxc_control_e2e.evoxcgraph").string();
  g.save(path);
  Graph loaded = Graph::load(path);
  std::remove(path.c_str());
  for (const Graph& h : {parsed, loaded}) {
    Tree<Tensor> out = run(build_graph(h), Tensor::scalar<int64_t>(6));
    EXPECT_EQ(out[0].leaf().data<const int64_t>()[0], 1);
    EXPECT_EQ(out[1].leaf().data<const int64_t>()[0], 8);
  }
  // Scan with captured values, parsed back.
  auto f = [](ST xs, ST w) {
    return scan(
               [&](const ST& c, const ST& x) {
                 return std::pair<ST, ST>{c + x * w, c};
               },
               fill(Shape(), 0.0, f32), xs)
        .second;
  };
  Graph gs = trace(f, TensorSpec({Dim("L")}, f32), TensorSpec({}, f32));
  Graph ps = Graph::parse(gs.to_string());
  Tensor ys = run(build_graph(ps), Tensor::from_vector<float>({1, 2, 3}, {3}), Tensor::scalar<float>(2.0f)).leaf();
  EXPECT_EQ(vals(ys), (std::vector<float>{0, 2, 6}));
}

}  // namespace
}  // namespace evoxc
