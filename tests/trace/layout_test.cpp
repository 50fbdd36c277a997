// The conv and layout user functions end to end (trace -> build -> run) against numpy's results for the same
// calls, their argument conventions (SAME/VALID, pad_width forms, axis=None flattening, negative axes), symbolic
// shapes and the trace-time errors.
#include "evoxc/trace/layout.h"

#include <gtest/gtest.h>

#include <cmath>

#include "evoxc/evoxc.h"

namespace evoxc {
namespace {

using Ints = std::vector<int64_t>;

Tensor iota_f32(Ints shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::from_vector(v, shape);
}

template <typename F, typename... Args>
Tensor eval1(F&& f, const Args&... args) {
  return evaluate(std::forward<F>(f), args...).leaf();
}

const AttrMap& last_op_attrs(const Graph& g, const std::string& name) {
  for (const auto& op : g.main().entry().operations())
    if (op->name() == name) return op->attributes();
  throw std::runtime_error("no " + name);
}

TEST(TraceLayout, ConvSamePaddingFollowsXla) {
  // 5x5 ones, 3x3 ones, stride 2, SAME: out 3x3 with pads (1, 1); counts of in-range taps.
  auto f = [](SymbolicTensor x, SymbolicTensor w) { return conv2d(x, w, {2, 2}, "SAME"); };
  Tensor r = eval1(f, Tensor::full({1, 1, 5, 5}, 1.0), Tensor::full({1, 1, 3, 3}, 1.0));
  EXPECT_EQ(r.shape(), (Ints{1, 1, 3, 3}));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4}));
  // An even window puts the extra padding on the high side: pads (0, 1).
  Graph g = trace([](SymbolicTensor x, SymbolicTensor w) { return conv1d(x, w, {}, "SAME"); },
                  TensorSpec({1, 1, 4}, f32), TensorSpec({1, 1, 2}, f32));
  EXPECT_EQ(std::get<Ints>(last_op_attrs(g, "conv").at("padding")), (Ints{0, 1}));
  EXPECT_EQ(g.output_specs()[0].shape, (Shape{1, 1, 4}));
}

TEST(TraceLayout, ConvValidExplicitDilatedGroupedAndPromoted) {
  // x = 0..9 over (1, 2, 5), w = ones (2, 1, 2) in 2 groups, rhs dilation 2: out[o][p] = x[o][p] + x[o][p + 2].
  auto f = [](SymbolicTensor x, SymbolicTensor w) { return conv(x, w, {1}, "VALID", {2}, 2); };
  Tensor r = eval1(f, iota_f32({1, 2, 5}), Tensor::full({2, 1, 2}, 1.0));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{2, 4, 6, 12, 14, 16}));
  // Explicit pairs and lhs dilation through conv_general; int32 x float32 promotes to float32.
  auto g = [](SymbolicTensor x, SymbolicTensor w) { return conv_general(x, w, {1}, {{1, -1}}, {2}); };
  Tensor xi = Tensor::from_vector(std::vector<int32_t>{1, 2, 3}, {1, 1, 3});
  Tensor r2 = eval1(g, xi, Tensor::full({1, 1, 1}, 2.0));
  // Dilated lhs [1, 0, 2, 0, 3], padded (1, -1): [0, 1, 0, 2, 0] times 2.
  EXPECT_EQ(r2.dtype(), f32);
  EXPECT_EQ(r2.to_vector<float>(), (std::vector<float>{0, 2, 0, 4, 0}));
}

TEST(TraceLayout, ConvSymbolicBatchAndSameWithUnitStride) {
  DimExpr B = Dim("B"), H = Dim("H");
  Graph g = trace(
      [](SymbolicTensor x, SymbolicTensor w) {
        return conv2d(x, w, {1, 1}, "SAME");
      },
      TensorSpec({B, 3, H, 8}, f32), TensorSpec({4, 3, 3, 3}, f32));
  EXPECT_EQ(g.output_specs()[0].shape, (Shape{B, 4, H, 8}));
  verify(g);
}

TEST(TraceLayout, ConvMustFail) {
  auto same2 = [](SymbolicTensor x, SymbolicTensor w) { return conv2d(x, w, {2, 2}, "SAME"); };
  try {
    trace(same2, TensorSpec({1, 1, Dim("H"), 4}, f32), TensorSpec({1, 1, 3, 3}, f32));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("static spatial extent"), std::string::npos) << e.what();
  }
  auto full = [](SymbolicTensor x, SymbolicTensor w) { return conv1d(x, w, {}, "FULL"); };
  EXPECT_THROW(trace(full, TensorSpec({1, 1, 4}, f32), TensorSpec({1, 1, 2}, f32)), ShapeError);
  auto rank = [](SymbolicTensor x, SymbolicTensor w) { return conv2d(x, w); };
  EXPECT_THROW(trace(rank, TensorSpec({1, 1, 4}, f32), TensorSpec({1, 1, 2}, f32)), ShapeError);
  auto pairs = [](SymbolicTensor x, SymbolicTensor w) { return conv1d(x, w, {}, {{1, 1}, {1, 1}}); };
  EXPECT_THROW(trace(pairs, TensorSpec({1, 1, 4}, f32), TensorSpec({1, 1, 2}, f32)), ShapeError);
  auto chans = [](SymbolicTensor x, SymbolicTensor w) { return conv1d(x, w); };
  try {
    trace(chans, TensorSpec({1, 3, 4}, f32), TensorSpec({1, 2, 2}, f32));
    FAIL();
  } catch (const ShapeError& e) {
    // Inference errors carry the op and the caller's location.
    EXPECT_NE(std::string(e.what()).find("op 'conv'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("layout_test.cpp"), std::string::npos) << e.what();
  }
}

TEST(TraceLayout, PadModesMatchNumpy) {
  Tensor x = Tensor::from_vector(std::vector<int32_t>{1, 2, 3}, {3});
  auto mode = [&](const std::string& m) {
    return eval1([m](SymbolicTensor t) { return pad(t, {{5, 5}}, m); }, x).to_vector<int32_t>();
  };
  // numpy.pad([1, 2, 3], (5, 5), mode): reflect and symmetric repeat periodically on a short axis.
  EXPECT_EQ(mode("reflect"), (std::vector<int32_t>{2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(mode("symmetric"), (std::vector<int32_t>{2, 3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1, 2}));
  EXPECT_EQ(mode("edge"), (std::vector<int32_t>{1, 1, 1, 1, 1, 1, 2, 3, 3, 3, 3, 3, 3}));
  EXPECT_EQ(mode("constant"), (std::vector<int32_t>{0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 0}));
  // One width for every axis and side; a float value converts to the int dtype as astype (truncates).
  Tensor m = eval1([](SymbolicTensor t) { return pad(t, 1, "constant", 7.9); },
                   Tensor::from_vector(std::vector<int32_t>{5}, {1, 1}));
  EXPECT_EQ(m.to_vector<int32_t>(), (std::vector<int32_t>{7, 7, 7, 7, 5, 7, 7, 7, 7}));
  // lax.pad with interior and a negative (cropping) high side.
  Tensor p = eval1([](SymbolicTensor t) { return pad_general(t, -1, {1}, {-1}, {1}); }, x);
  EXPECT_EQ(p.to_vector<int32_t>(), (std::vector<int32_t>{-1, 1, -1, 2, -1}));
}

TEST(TraceLayout, PadSymbolicAndMustFail) {
  DimExpr B = Dim("B");
  Graph g = trace([](SymbolicTensor t) { return pad(t, {{1, 2}, {0, -1}}, "reflect"); }, TensorSpec({B, 4}, f32));
  EXPECT_EQ(g.output_specs()[0].shape, (Shape{B + 3, 3}));
  auto bad_mode = [](SymbolicTensor t) { return pad(t, 1, "wrap"); };
  EXPECT_THROW(trace(bad_mode, TensorSpec({3}, f32)), ShapeError);
  auto bad_width = [](SymbolicTensor t) { return pad(t, {{1, 1}, {1, 1}, {1, 1}}); };
  EXPECT_THROW(trace(bad_width, TensorSpec({3, 3}, f32)), ShapeError);
  auto bad_value = [](SymbolicTensor t, SymbolicTensor v) { return pad(t, 1, "constant", v); };
  EXPECT_THROW(trace(bad_value, TensorSpec({3}, f32), TensorSpec({2}, f32)), ShapeError);
}

TEST(TraceLayout, TriDiagonalFlipRollTileRepeat) {
  Tensor v = Tensor::from_vector(std::vector<int32_t>{1, 2, 3}, {3});
  EXPECT_EQ(eval1([](SymbolicTensor t) { return tril(t); }, v).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 0, 0, 1, 2, 0, 1, 2, 3}));
  EXPECT_EQ(eval1([](SymbolicTensor t) { return triu(t, 1); }, v).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 2, 3, 0, 0, 3, 0, 0, 0}));
  Tensor x = iota_f32({2, 3});
  // numpy.diagonal(x, 0, -1, -2) of [[0,1,2],[3,4,5]] is [0, 4].
  EXPECT_EQ(eval1([](SymbolicTensor t) { return diagonal(t, 0, -1, -2); }, x).to_vector<float>(),
            (std::vector<float>{0, 4}));
  EXPECT_EQ(eval1([](SymbolicTensor t) { return flip(t); }, x).to_vector<float>(),
            (std::vector<float>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(eval1([](SymbolicTensor t) { return flip(t, -1); }, x).to_vector<float>(),
            (std::vector<float>{2, 1, 0, 5, 4, 3}));
  // numpy.roll(x, 1) flattens; numpy.roll(x, (1, 1), (1, 1)) adds the shifts.
  EXPECT_EQ(eval1([](SymbolicTensor t) { return roll(t, 1); }, x).to_vector<float>(),
            (std::vector<float>{5, 0, 1, 2, 3, 4}));
  EXPECT_EQ(eval1(
                [](SymbolicTensor t) {
                  return roll(t, {1, 1}, {1, -1});
                },
                x)
                .to_vector<float>(),
            (std::vector<float>{1, 2, 0, 4, 5, 3}));
  // numpy.tile([1, 2], (2, 2)) and numpy.tile(x, 2).
  Tensor r = eval1(
      [](SymbolicTensor t) {
        return tile(t, {2, 2});
      },
      Tensor::from_vector(std::vector<int32_t>{1, 2}, {2}));
  EXPECT_EQ(r.shape(), (Ints{2, 4}));
  EXPECT_EQ(r.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(eval1([](SymbolicTensor t) { return tile(t, {2}); }, x).shape(), (Ints{2, 6}));
  // numpy.repeat(x, 2) flattens; with a list per element along axis 0.
  EXPECT_EQ(eval1([](SymbolicTensor t) { return repeat(t, 2); }, x).to_vector<float>(),
            (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  EXPECT_EQ(eval1(
                [](SymbolicTensor t) {
                  return repeat(t, Ints{0, 2}, 0);
                },
                x)
                .to_vector<float>(),
            (std::vector<float>{3, 4, 5, 3, 4, 5}));
  EXPECT_THROW(trace(
                   [](SymbolicTensor t) {
                     return repeat(t, Ints{1, 2, 3}, 0);
                   },
                   TensorSpec({2, 3}, f32)),
               ShapeError);
  EXPECT_THROW(trace([](SymbolicTensor t) { return diagonal(t, 0, 1, -1); }, TensorSpec({2, 3}, f32)), ShapeError);
}

TEST(TraceLayout, OneHotArangeLinspace) {
  Tensor idx = Tensor::from_vector(std::vector<int64_t>{1, -1, 3}, {3});
  Tensor r = eval1([](SymbolicTensor t) { return one_hot(t, 3); }, idx);
  EXPECT_EQ(r.dtype(), f32);
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{0, 1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_THROW(trace([](SymbolicTensor t) { return one_hot(t, 3); }, TensorSpec({3}, f32)), TypeError);

  Tensor a = eval1([](SymbolicTensor t) { return arange(5) + t; }, Tensor::scalar<int64_t>(0));
  EXPECT_EQ(a.dtype(), i64);
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  Tensor fa = eval1([](SymbolicTensor t) { return arange(0.0, 1.0, 0.25) + t; }, Tensor::scalar<float>(0));
  EXPECT_EQ(fa.to_vector<float>(), (std::vector<float>{0, 0.25, 0.5, 0.75}));
  Tensor da = eval1([](SymbolicTensor t) { return arange(3, f64) + t; }, Tensor::scalar<double>(0));
  EXPECT_EQ(da.to_vector<double>(), (std::vector<double>{0, 1, 2}));
  Tensor l = eval1([](SymbolicTensor t) { return linspace(0, 1, 5) + t; }, Tensor::scalar<float>(0));
  EXPECT_EQ(l.to_vector<float>(), (std::vector<float>{0, 0.25, 0.5, 0.75, 1}));
  auto traced = [](SymbolicTensor t) { return arange(t); };
  EXPECT_THROW(trace(traced, TensorSpec({}, i64)), TraceError);
  EXPECT_THROW(trace([](SymbolicTensor t) { return arange(0, 5, 0) + t; }, TensorSpec({}, i64)), ShapeError);
}

TEST(TraceLayout, SplitAndArraySplit) {
  Tensor x = iota_f32({6});
  auto parts = [](const Tree<Tensor>& t) {
    std::vector<std::vector<float>> out;
    for (size_t i = 0; i < t.size(); ++i) out.push_back(t[i].leaf().to_vector<float>());
    return out;
  };
  auto s3 = evaluate([](SymbolicTensor t) { return split(t, 3); }, x);
  EXPECT_EQ(parts(s3), (std::vector<std::vector<float>>{{0, 1}, {2, 3}, {4, 5}}));
  // numpy.split(arange(6), [2, -1, 10]) -> [0 1], [2 3 4], [5], [].
  auto si = evaluate([](SymbolicTensor t) { return split(t, Ints{2, -1, 10}); }, x);
  EXPECT_EQ(parts(si), (std::vector<std::vector<float>>{{0, 1}, {2, 3, 4}, {5}, {}}));
  auto as = evaluate([](SymbolicTensor t) { return array_split(t, 4); }, x);
  EXPECT_EQ(parts(as), (std::vector<std::vector<float>>{{0, 1}, {2, 3}, {4}, {5}}));
  // Along axis 1 of a (2, 4) with a symbolic leading extent.
  Graph g = trace([](SymbolicTensor t) { return split(t, 2, -1); }, TensorSpec({Dim("B"), 4}, f32));
  EXPECT_EQ(g.output_specs()[1].shape, (Shape{Dim("B"), 2}));
  try {
    trace([](SymbolicTensor t) { return split(t, 4); }, TensorSpec({6}, f32));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("array_split"), std::string::npos) << e.what();
  }
  EXPECT_THROW(trace([](SymbolicTensor t) { return split(t, 2); }, TensorSpec({Dim("B")}, f32)), ShapeError);
}

}  // namespace
}  // namespace evoxc
