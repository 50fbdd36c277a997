// The user functions of evoxc/trace/indexing.h: numpy layouts, index modes, accumulators and errors, run end to end.
#include "evoxc/trace/indexing.h"

#include <gtest/gtest.h>

#include <cmath>

#include "evoxc/evoxc.h"

namespace evoxc {
namespace {

template <typename T>
std::vector<T> vals(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = t.data<const T>()[i];
  return out;
}

Tensor arange_f(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return Tensor::from_vector(v, std::move(shape));
}

Tensor ints(std::vector<int64_t> v, std::vector<int64_t> shape) { return Tensor::from_vector(v, std::move(shape)); }

TEST(TraceIndexing, TakeClipAndWrapAlongEveryAxis) {
  Tensor a = arange_f({2, 3, 4});
  Tensor idx = ints({3, -1, 1, 0}, {2, 2});
  // axis 1 (extent 3): clip gives {2, 0, 1, 0}; wrap gives {0, 2, 1, 0}.
  Tensor clip = evaluate([](SymbolicTensor x, SymbolicTensor i) { return take(x, i, 1); }, a, idx).leaf();
  Tensor wrap = evaluate([](SymbolicTensor x, SymbolicTensor i) { return take(x, i, 1, "wrap"); }, a, idx).leaf();
  EXPECT_EQ(clip.shape(), (std::vector<int64_t>{2, 2, 2, 4}));
  std::vector<float> c = vals<float>(clip), w = vals<float>(wrap);
  int64_t cj[4] = {2, 0, 1, 0}, wj[4] = {0, 2, 1, 0};
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t p = 0; p < 4; ++p)
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_EQ(c[static_cast<size_t>(i * 16 + p * 4 + k)], static_cast<float>(i * 12 + cj[p] * 4 + k));
        EXPECT_EQ(w[static_cast<size_t>(i * 16 + p * 4 + k)], static_cast<float>(i * 12 + wj[p] * 4 + k));
      }
  // Last axis and the flattened form.
  Tensor last = evaluate([](SymbolicTensor x, SymbolicTensor i) { return take(x, i, -1); }, a, idx).leaf();
  EXPECT_EQ(last.shape(), (std::vector<int64_t>{2, 3, 2, 2}));
  EXPECT_EQ(vals<float>(last)[0], 3.0f);
  Tensor flat =
      evaluate([](SymbolicTensor x, SymbolicTensor i) { return take(x, i); }, a, ints({23, 30, -2}, {3})).leaf();
  EXPECT_EQ(vals<float>(flat), (std::vector<float>{23, 23, 0}));
}

TEST(TraceIndexing, TakeAlongAxisMatchesNumpy) {
  Tensor a = Tensor::from_vector<float>({10, 30, 20, 60, 40, 50}, {2, 3});
  Tensor order = evaluate([](SymbolicTensor x) { return take_along_axis(x, argsort(x, 1), 1); }, a).leaf();
  EXPECT_EQ(vals<float>(order), (std::vector<float>{10, 20, 30, 40, 50, 60}));
  // Broadcast: indices (1, 3) against (2, 3) along axis 0.
  Tensor r =
      evaluate([](SymbolicTensor x, SymbolicTensor i) { return take_along_axis(x, i, 0); }, a, ints({1, 0, 5}, {1, 3}))
          .leaf();
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(vals<float>(r), (std::vector<float>{60, 30, 50}));
}

TEST(TraceIndexing, IntegerArrayIndexingAndAtUpdates) {
  Tensor a = arange_f({3, 4});
  Tensor i0 = ints({0, 2, 2}, {3}), i1 = ints({1}, {1});
  Tensor g = evaluate(
                 [](SymbolicTensor x, SymbolicTensor p, SymbolicTensor q) {
                   return index(x, {p, q});
                 },
                 a, i0, i1)
                 .leaf();
  EXPECT_EQ(vals<float>(g), (std::vector<float>{1, 9, 9}));
  Tensor added = evaluate(
                     [](SymbolicTensor x, SymbolicTensor p, SymbolicTensor q) {
                       return at(x, {p, q}).add(1.0);
                     },
                     a, i0, i1)
                     .leaf();
  std::vector<float> want = vals<float>(a);
  want[1] += 1;
  want[9] += 2;  // a duplicate index accumulates
  EXPECT_EQ(vals<float>(added), want);
  Tensor set_rows =
      evaluate([](SymbolicTensor x, SymbolicTensor p) { return at(x, {p}).set(-1); }, a, ints({2, 7, -1}, {3})).leaf();
  std::vector<float> w2 = vals<float>(a);
  for (int k = 8; k < 12; ++k) w2[static_cast<size_t>(k)] = -1;  // 7 and -1 are out of range: dropped
  EXPECT_EQ(vals<float>(set_rows), w2);
  Tensor mx =
      evaluate([](SymbolicTensor x, SymbolicTensor p) { return at(x, {p}).max(5.0); }, a, ints({0}, {1})).leaf();
  EXPECT_EQ(vals<float>(mx)[0], 5.0f);
  EXPECT_EQ(vals<float>(mx)[4], 4.0f);
  Tensor mul =
      evaluate([](SymbolicTensor x, SymbolicTensor p) { return at(x, {p}).multiply(2); }, a, ints({1}, {1})).leaf();
  EXPECT_EQ(vals<float>(mul)[5], 10.0f);
  Tensor mn =
      evaluate([](SymbolicTensor x, SymbolicTensor p) { return at(x, {p}).min(0.5); }, a, ints({0}, {1})).leaf();
  EXPECT_EQ(vals<float>(mn)[1], 0.5f);
  Tensor got = evaluate([](SymbolicTensor x, SymbolicTensor p) { return at(x, {p}).get(); }, a, ints({1}, {1})).leaf();
  EXPECT_EQ(got.shape(), (std::vector<int64_t>{1, 4}));
}

TEST(TraceIndexing, PutAndScatterAdd) {
  Tensor a = arange_f({2, 3});
  Tensor p =
      evaluate([](SymbolicTensor x, SymbolicTensor i) { return put(x, i, 100.0); }, a, ints({5, 9, -1}, {3})).leaf();
  EXPECT_EQ(vals<float>(p), (std::vector<float>{0, 1, 2, 3, 4, 100}));
  Tensor pc =
      evaluate([](SymbolicTensor x, SymbolicTensor i) { return put(x, i, 100.0, "clip"); }, a, ints({9, -1}, {2}))
          .leaf();
  EXPECT_EQ(vals<float>(pc), (std::vector<float>{100, 1, 2, 3, 4, 100}));
  Tensor pw =
      evaluate([](SymbolicTensor x, SymbolicTensor i) { return put(x, i, 7.0, "wrap"); }, a, ints({-1}, {1})).leaf();
  EXPECT_EQ(vals<float>(pw)[5], 7.0f);
  // scatter_add along axis 1: updates in take's layout (2, idx=3).
  Tensor u = Tensor::from_vector<float>({1, 2, 4, 8, 16, 32}, {2, 3});
  Tensor s = evaluate([](SymbolicTensor x, SymbolicTensor i, SymbolicTensor v) { return scatter_add(x, i, v, 1); }, a,
                      ints({2, 2, 0}, {3}), u)
                 .leaf();
  EXPECT_EQ(vals<float>(s), (std::vector<float>{4, 1, 5, 35, 4, 29}));
  Tensor s0 =
      evaluate([](SymbolicTensor x, SymbolicTensor i) { return scatter_add(x, i, 1.0f, 0); }, a, ints({1, 1, 3}, {3}))
          .leaf();
  EXPECT_EQ(vals<float>(s0), (std::vector<float>{0, 1, 2, 5, 6, 7}));
}

TEST(TraceIndexing, DynamicSlicesWithTensorAndHostStarts) {
  Tensor a = arange_f({4, 5});
  Tensor s = evaluate(
                 [](SymbolicTensor x, SymbolicTensor i) {
                   return dynamic_slice(x, {i, 3}, {2, 3});
                 },
                 a, Tensor::scalar<int32_t>(-7))
                 .leaf();
  EXPECT_EQ(vals<float>(s), (std::vector<float>{2, 3, 4, 7, 8, 9}));
  Tensor u = evaluate(
                 [](SymbolicTensor x, SymbolicTensor i) {
                   return dynamic_update_slice(x, fill(Shape{1, 2}, 0.5, f32), {i, 1});
                 },
                 a, Tensor::scalar<int64_t>(10))
                 .leaf();
  std::vector<float> w = vals<float>(a);
  w[16] = w[17] = 0.5f;
  EXPECT_EQ(vals<float>(u), w);
  EXPECT_THROW(trace(
                   [](SymbolicTensor x) {
                     return dynamic_slice(x, {1.5, 0}, {1, 1});
                   },
                   TensorSpec({4, 5}, f32)),
               TypeError);
}

TEST(TraceIndexing, SortArgsortTopKSearchsorted) {
  Tensor a = Tensor::from_vector<float>({3, NAN, 1, 2, 1}, {5});
  Tensor s = evaluate([](SymbolicTensor x) { return sort(x); }, a).leaf();
  std::vector<float> sv = vals<float>(s);
  EXPECT_EQ(std::vector<float>(sv.begin(), sv.begin() + 4), (std::vector<float>{1, 1, 2, 3}));
  EXPECT_TRUE(std::isnan(sv[4]));
  EXPECT_EQ(vals<int64_t>(evaluate([](SymbolicTensor x) { return argsort(x); }, a).leaf()),
            (std::vector<int64_t>{2, 4, 3, 0, 1}));
  Tensor m = Tensor::from_vector<int32_t>({5, 1, 4, 2}, {2, 2});
  EXPECT_EQ(vals<int32_t>(evaluate([](SymbolicTensor x) { return sort(x, std::nullopt); }, m).leaf()),
            (std::vector<int32_t>{1, 2, 4, 5}));
  EXPECT_EQ(vals<int32_t>(evaluate([](SymbolicTensor x) { return sort(x, 0); }, m).leaf()),
            (std::vector<int32_t>{4, 1, 5, 2}));
  Tree<Tensor> tk =
      evaluate([](SymbolicTensor x) { return top_k(x, 2); }, Tensor::from_vector<float>({1, 5, 5, 2}, {4}));
  EXPECT_EQ(vals<float>(tk.children()[0].leaf()), (std::vector<float>{5, 5}));
  EXPECT_EQ(vals<int64_t>(tk.children()[1].leaf()), (std::vector<int64_t>{1, 2}));
  Tensor sorted = Tensor::from_vector<int32_t>({1, 2, 2, 3}, {4});
  EXPECT_EQ(vals<int64_t>(evaluate([](SymbolicTensor x) { return searchsorted(x, 2); }, sorted).leaf()),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(vals<int64_t>(evaluate([](SymbolicTensor x) { return searchsorted(x, 2, "right"); }, sorted).leaf()),
            (std::vector<int64_t>{3}));
  // A float scalar against int32 promotes to float32 (weak scalar rule).
  EXPECT_EQ(vals<int64_t>(evaluate([](SymbolicTensor x) { return searchsorted(x, 2.5); }, sorted).leaf()),
            (std::vector<int64_t>{3}));
  Graph g = trace([](SymbolicTensor x) { return searchsorted(x, 2.5); }, TensorSpec({4}, i32));
  EXPECT_EQ(g.output_specs()[0].dtype, i64);
}

TEST(TraceIndexing, ScansUseNumpyAccumulators) {
  EXPECT_EQ(trace([](SymbolicTensor x) { return cumsum(x); }, TensorSpec({3}, i8)).output_specs()[0].dtype, i64);
  EXPECT_EQ(trace([](SymbolicTensor x) { return cumsum(x); }, TensorSpec({3}, bool_)).output_specs()[0].dtype, i64);
  EXPECT_EQ(trace([](SymbolicTensor x) { return cumprod(x); }, TensorSpec({3}, u16)).output_specs()[0].dtype, u64);
  EXPECT_EQ(trace([](SymbolicTensor x) { return cumsum(x); }, TensorSpec({3}, f16)).output_specs()[0].dtype, f16);
  EXPECT_EQ(trace([](SymbolicTensor x) { return cummax(x); }, TensorSpec({3}, i8)).output_specs()[0].dtype, i8);
  Tensor b = Tensor::from_vector<int8_t>({100, 100, 100, 100}, {2, 2});
  EXPECT_EQ(vals<int64_t>(evaluate([](SymbolicTensor x) { return cumsum(x); }, b).leaf()),
            (std::vector<int64_t>{100, 200, 300, 400}));
  EXPECT_EQ(vals<int64_t>(evaluate([](SymbolicTensor x) { return cumsum(x, 0, true); }, b).leaf()),
            (std::vector<int64_t>{200, 200, 100, 100}));
  Tensor f = Tensor::from_vector<float>({3, 1, 2, 5}, {4});
  EXPECT_EQ(vals<float>(evaluate([](SymbolicTensor x) { return cummin(x); }, f).leaf()),
            (std::vector<float>{3, 1, 1, 1}));
  EXPECT_EQ(vals<float>(evaluate([](SymbolicTensor x) { return cummax(x, -1, true); }, f).leaf()),
            (std::vector<float>{5, 5, 5, 5}));
  EXPECT_EQ(vals<float>(evaluate([](SymbolicTensor x) { return cumprod(x); }, f).leaf()),
            (std::vector<float>{3, 3, 6, 30}));
}

TEST(TraceIndexing, Logsumexp) {
  Tensor x = Tensor::from_vector<float>({0, 0, 1000, 1000}, {2, 2});
  std::vector<float> r = vals<float>(evaluate([](SymbolicTensor t) { return logsumexp(t, {1}); }, x).leaf());
  EXPECT_NEAR(r[0], std::log(2.0), 1e-6);
  EXPECT_NEAR(r[1], 1000 + std::log(2.0), 1e-3);
  Graph g = trace([](SymbolicTensor t) { return logsumexp(t, {}, true); }, TensorSpec({2, 3}, i32));
  EXPECT_EQ(g.output_specs()[0].dtype, f32);
  EXPECT_EQ(g.output_specs()[0].shape, (Shape{1, 1}));
}

TEST(TraceIndexing, SymbolicShapesTrace) {
  DimExpr n = Dim("N");
  Graph g = trace([](SymbolicTensor x, SymbolicTensor i) { return take(x, i, 0); },
                  TensorSpec(Shape{n, DimExpr(3)}, f32), TensorSpec(Shape{DimExpr(5)}, i64));
  EXPECT_EQ(g.output_specs()[0].shape, (Shape{5, 3}));
  Tensor out = run(build_graph(g), arange_f({2, 3}), ints({-4, 1, 9, 0, 1}, {5})).leaf();
  EXPECT_EQ(vals<float>(out), (std::vector<float>{0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
}

TEST(TraceIndexing, MustFail) {
  auto expect_error = [](auto fn, auto&& spec_or_specs, const std::string& sub, auto tag) {
    using E = decltype(tag);
    try {
      std::apply([&](const auto&... s) { trace(fn, s...); }, spec_or_specs);
      ADD_FAILURE() << "no error for " << sub;
    } catch (const E& e) {
      EXPECT_NE(std::string(e.what()).find(sub), std::string::npos) << e.what();
    }
  };
  TensorSpec f3({3}, f32), i2({2}, i32), f2({2}, f32);
  expect_error([](SymbolicTensor x, SymbolicTensor i) { return take(x, i); }, std::make_tuple(f3, f2),
               "expected an integer dtype", TypeError{""});
  expect_error([](SymbolicTensor x, SymbolicTensor i) { return take(x, i, 0, "raise"); }, std::make_tuple(f3, i2),
               "mode 'raise'", TypeError{""});
  expect_error([](SymbolicTensor x, SymbolicTensor i) { return take(x, i, 0, "wrap"); },
               std::make_tuple(TensorSpec(Shape{Dim("N")}, f32), i2), "needs a static extent", TraceError{""});
  expect_error([](SymbolicTensor x, SymbolicTensor i) { return take(x, i, 3); }, std::make_tuple(f3, i2), "axis",
               ShapeError{""});
  expect_error([](SymbolicTensor x, SymbolicTensor i) { return take_along_axis(x, i, 0); },
               std::make_tuple(TensorSpec({3, 2}, f32), i2), "must have the operand's rank", ShapeError{""});
  expect_error(
      [](SymbolicTensor x, SymbolicTensor i) {
        return index(x, {i, i});
      },
      std::make_tuple(f3, i2), "at most one per axis", ShapeError{""});
  expect_error(
      [](SymbolicTensor x, SymbolicTensor i) {
        return index(x, {i, x});
      },
      std::make_tuple(TensorSpec({3, 3}, f32), i2), "expected an integer dtype", TypeError{""});
  expect_error([](SymbolicTensor x, SymbolicTensor i) { return put(x, i, 1.0, "bad"); }, std::make_tuple(f3, i2),
               "mode 'bad'", TypeError{""});
  expect_error([](SymbolicTensor x) { return dynamic_slice(x, {0}, {4}); }, std::make_tuple(f3), "slice size 4",
               ShapeError{""});
  expect_error([](SymbolicTensor x) { return top_k(x, 5); }, std::make_tuple(f3), "k = 5", ShapeError{""});
  expect_error([](SymbolicTensor x) { return searchsorted(x, x, "up"); }, std::make_tuple(f3), "side 'up'",
               TypeError{""});
  expect_error(
      [](SymbolicTensor x, SymbolicTensor y) {
        return sort({x, y}, 0, 1);
      },
      std::make_tuple(f3, i2), "one shape", ShapeError{""});
  expect_error([](SymbolicTensor x) { return cumsum(x, 2); }, std::make_tuple(f3), "axis", ShapeError{""});
}

}  // namespace
}  // namespace evoxc
