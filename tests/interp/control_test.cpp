// Interpreter kernels of cond, while_loop and scan: every dtype, captured values, symbolic and zero-size shapes,
// failures.
#include "evoxc/trace/control.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "evoxc/evoxc.h"
#include "evoxc/interp/interp.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;

// A tensor whose bytes follow `seed` (bools 0/1), so every dtype can be compared bytewise.
Tensor patterned(std::vector<int64_t> shape, DType t, int seed) {
  Tensor x = Tensor::empty(std::move(shape), t);
  auto* p = static_cast<unsigned char*>(x.raw_data());
  for (size_t i = 0; i < x.nbytes(); ++i)
    p[i] = t == bool_ ? static_cast<unsigned char>((i + static_cast<size_t>(seed)) % 2)
                      : static_cast<unsigned char>((i * 7 + static_cast<size_t>(seed) * 13) % 61);
  return x;
}

std::vector<unsigned char> bytes(const Tensor& t, size_t from = 0, size_t n = SIZE_MAX) {
  auto* p = static_cast<const unsigned char*>(t.raw_data());
  n = std::min(n, t.nbytes() - from);
  return std::vector<unsigned char>(p + from, p + from + n);
}

std::vector<Tensor> run_graph(const Graph& g, std::vector<Tensor> in, size_t nout) {
  auto p = interp::prepare(g);
  std::vector<Tensor> out(nout);
  interp::execute(*p, in, out);
  return out;
}

class ControlDTypes : public ::testing::TestWithParam<int> {};

TEST_P(ControlDTypes, CondPassesOperandsAndCapturedValues) {
  auto t = static_cast<DType>(GetParam());
  auto f = [](ST p, ST x, ST y) {
    return cond(
        p, [](const ST& v) { return v; }, [&](const ST&) { return y; }, x);
  };
  Graph g = trace(f, TensorSpec({}, bool_), TensorSpec({2, 3}, t), TensorSpec({2, 3}, t));
  Tensor x = patterned({2, 3}, t, 1), y = patterned({2, 3}, t, 2);
  EXPECT_EQ(bytes(run_graph(g, {Tensor::scalar<bool>(true), x, y}, 1)[0]), bytes(x));
  EXPECT_EQ(bytes(run_graph(g, {Tensor::scalar<bool>(false), x, y}, 1)[0]), bytes(y));
}

TEST_P(ControlDTypes, WhileSwapsCarry) {
  auto t = static_cast<DType>(GetParam());
  using C = std::tuple<ST, ST, ST>;
  auto f = [](ST n, ST x, ST y) {
    return while_loop([&](const C& c) { return less(std::get<0>(c), n); },
                      [](const C& c) {
                        return C{std::get<0>(c) + int64_t{1}, std::get<2>(c), std::get<1>(c)};
                      },
                      C{fill(Shape(), 0, i64), x, y});
  };
  Graph g = trace(f, TensorSpec({}, i64), TensorSpec({4}, t), TensorSpec({4}, t));
  Tensor x = patterned({4}, t, 3), y = patterned({4}, t, 4);
  for (int64_t n : {0, 1, 2, 3}) {
    auto out = run_graph(g, {Tensor::scalar<int64_t>(n), x, y}, 3);
    EXPECT_EQ(out[0].data<const int64_t>()[0], n);
    EXPECT_EQ(bytes(out[1]), bytes(n % 2 ? y : x)) << n;
    EXPECT_EQ(bytes(out[2]), bytes(n % 2 ? x : y)) << n;
  }
}

TEST_P(ControlDTypes, ScanStacksSlices) {
  auto t = static_cast<DType>(GetParam());
  for (bool reverse : {false, true}) {
    // carry = the previous slice; ys[i] = the carry before step i.
    auto f = [reverse](ST c0, ST xs) {
      return scan([](const ST& c, const ST& x) { return std::pair<ST, ST>{x, c}; }, c0, xs, std::nullopt, reverse);
    };
    Graph g = trace(f, TensorSpec({2}, t), TensorSpec({3, 2}, t));
    Tensor c0 = patterned({2}, t, 5), xs = patterned({3, 2}, t, 6);
    auto out = run_graph(g, {c0, xs}, 2);
    size_t row = 2 * size_of(t);
    EXPECT_EQ(bytes(out[0]), bytes(xs, reverse ? 0 : 2 * row, row));
    for (size_t s = 0; s < 3; ++s) {
      size_t i = reverse ? 2 - s : s;  // step s visits row i
      std::vector<unsigned char> want = s == 0 ? bytes(c0) : bytes(xs, (reverse ? i + 1 : i - 1) * row, row);
      EXPECT_EQ(bytes(out[1], i * row, row), want) << reverse << " " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, ControlDTypes, ::testing::Range(0, kNumDTypes),
                         [](const auto& info) { return std::string(dtype_name(static_cast<DType>(info.param))); });

TEST(InterpControl, SwitchIndexDTypesClamp) {
  for (DType it : {i32, i64}) {
    auto f = [](ST i, ST x) {
      return switch_(i,
                     {[](const ST& v) -> Tree<ST> { return v + 1.0; }, [](const ST& v) -> Tree<ST> { return v * 3.0; }},
                     x)
          .leaf();
    };
    Graph g = trace(f, TensorSpec({}, it), TensorSpec({}, f64));
    auto idx = [&](int64_t v) {
      Tensor s = Tensor::empty({}, it);
      if (it == i32)
        s.data<int32_t>()[0] = static_cast<int32_t>(v);
      else
        s.data<int64_t>()[0] = v;
      return run_graph(g, {s, Tensor::scalar<double>(2.0)}, 1)[0].data<const double>()[0];
    };
    EXPECT_EQ(idx(0), 3.0);
    EXPECT_EQ(idx(1), 6.0);
    EXPECT_EQ(idx(INT32_MAX), 6.0);
    EXPECT_EQ(idx(INT32_MIN), 3.0);
  }
}

TEST(InterpControl, NanAndInfPassThroughRegions) {
  auto f = [](ST p, ST x) {
    return cond(
        p, [](const ST& v) { return v * 2.0; }, [](const ST& v) { return -v; }, x);
  };
  Graph g = trace(f, TensorSpec({}, bool_), TensorSpec({3}, f32));
  Tensor x = Tensor::from_vector<float>({NAN, INFINITY, -INFINITY}, {3});
  auto y = run_graph(g, {Tensor::scalar<bool>(true), x}, 1)[0];
  EXPECT_TRUE(std::isnan(y.data<const float>()[0]));
  EXPECT_EQ(y.data<const float>()[1], INFINITY);
  EXPECT_EQ(y.data<const float>()[2], -INFINITY);
}

TEST(InterpControl, SymbolicAndZeroSize) {
  DimExpr N = Dim("N"), L = Dim("L");
  // A cond over a symbolic, possibly empty tensor with a captured symbolic value.
  auto f = [](ST p, ST x, ST w) {
    return cond(
        p, [&](const ST& v) { return v + w; }, [&](const ST& v) { return v - w; }, x);
  };
  Graph g = trace(f, TensorSpec({}, bool_), TensorSpec({N}, f32), TensorSpec({N}, f32));
  auto out = run_graph(g, {Tensor::scalar<bool>(false), Tensor::zeros({0}, f32), Tensor::zeros({0}, f32)}, 1);
  EXPECT_EQ(out[0].shape(), std::vector<int64_t>{0});
  out = run_graph(g, {Tensor::scalar<bool>(false), Tensor::full({5}, 3.0, f32), Tensor::full({5}, 1.0, f32)}, 1);
  EXPECT_EQ(out[0].data<const float>()[4], 2.0f);
  // A scan over L steps of N-wide rows, summing rows.
  auto s = [](ST xs) {
    return scan(
        [](const ST& c, const ST& x) {
          return std::pair<ST, ST>{c + sum(x), sum(x)};
        },
        fill(Shape(), 0.0, f32), xs);
  };
  Graph gs = trace(s, TensorSpec({L, N}, f32));
  out = run_graph(gs, {Tensor::full({4, 3}, 2.0, f32)}, 2);
  EXPECT_EQ(out[0].data<const float>()[0], 24.0f);
  EXPECT_EQ(out[1].shape(), std::vector<int64_t>{4});
  out = run_graph(gs, {Tensor::zeros({3, 0}, f32)}, 2);
  EXPECT_EQ(out[0].data<const float>()[0], 0.0f);
  EXPECT_EQ(out[1].shape(), std::vector<int64_t>{3});
}

TEST(InterpControl, MustFail) {
  // A static length against a symbolic leading extent is checked when the program runs.
  DimExpr N = Dim("N");
  auto f = [](ST xs) {
    return scan(
               [](const ST& c, const ST& x) {
                 return std::pair<ST, ST>{c + x, c};
               },
               fill(Shape(), 0.0, f32), xs, 3)
        .second;
  };
  Graph g = trace(f, TensorSpec({N}, f32));
  EXPECT_EQ(run_graph(g, {Tensor::full({3}, 1.0, f32)}, 1)[0].shape(), std::vector<int64_t>{3});
  try {
    run_graph(g, {Tensor::full({4}, 1.0, f32)}, 1);
    ADD_FAILURE() << "no error";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("evoxc.scan"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("scan length"), std::string::npos) << e.what();
  }
  // A hand-built cond whose region takes the wrong types (unverified graph).
  auto m = std::make_shared<Module>("main");
  Function& fn = m->add_function("main");
  Value* p = fn.entry().add_argument(TensorType(bool_, Shape()));
  Value* x = fn.entry().add_argument(TensorType(f32, Shape{2}));
  Operation* op = fn.entry().append("cond", {p, x}, {TensorType(f32, Shape{2})}, {}, Location{"h.cpp", 1, 1}, 2);
  for (int r = 0; r < 2; ++r) {
    Value* a = op->region(static_cast<size_t>(r)).block().add_argument(TensorType(f64, Shape{2}));
    op->region(static_cast<size_t>(r)).block().append("return", {a}, {});
  }
  fn.entry().append("return", {op->result()}, {});
  fn.result_types() = {TensorType(f32, Shape{2})};
  Graph bad(m, TreeDef::tuple({TreeDef(LeafMark{}), TreeDef(LeafMark{})}), TreeDef(LeafMark{}));
  try {
    interp::prepare(bad);
    ADD_FAILURE() << "no error";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("evoxc.cond at h.cpp:1:1: region 0 takes (tensor<2xf64>)"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(interp::kernels().has(get_op("cond").id));
  EXPECT_TRUE(interp::kernels().has(get_op("while_loop").id));
  EXPECT_TRUE(interp::kernels().has(get_op("scan").id));
}

}  // namespace
}  // namespace evoxc
