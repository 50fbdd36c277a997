// Tests of row_switch: each row bit-identical to its variant run alone on the row, across variant mixes, operand
// layouts and dtypes, plus the op's inference errors and the kernel's refusals.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "evoxc/ops/op_def.h"
#include "expect_error.h"
#include "interp/graph_util.h"

namespace evoxc {
namespace {

using testing::GraphBuilder;
using testing::make_tensor;
using testing::run_graph;
using testing::S;
using testing::sample_values;
using testing::tt;

AttrMap switch_attrs(const std::string& variants, const std::vector<int64_t>& rows) {
  return {{"variants", variants}, {"rows", rows}};
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t c; (c = s.find(',', start)) != std::string::npos; start = c + 1)
    out.push_back(s.substr(start, c - start));
  out.push_back(s.substr(start));
  return out;
}

// Runs one op named `op` on `inputs` (types as given) through the interpreter.
Tensor run_one(const std::string& op, const std::vector<TensorType>& types, const std::vector<Tensor>& inputs,
               const AttrMap& attrs = {}) {
  std::vector<TensorType> out = infer_result_types(get_op(op), types, attrs);
  GraphBuilder g;
  std::vector<Value*> args;
  for (const TensorType& t : types) args.push_back(g.input(t.dtype, t.shape));
  Value* r = g.op(op, args, out[0], attrs);
  return run_graph(g.build({r}), inputs)[0];
}

// Row r of a per-row tensor, as a tensor of its own.
Tensor row_of(const Tensor& x, int64_t r) {
  std::vector<int64_t> shape(x.shape().begin() + 1, x.shape().end());
  Tensor out = Tensor::empty(shape, x.dtype());
  size_t bytes = out.nbytes();
  std::memcpy(out.raw_data(), static_cast<const char*>(x.raw_data()) + static_cast<size_t>(r) * bytes, bytes);
  return out;
}

// Random inputs of `shapes`, runs row_switch over them and checks every row's bytes against the
// row's variant run alone on that row's slices (per-row operands) and the shared operands.
void check_switch(const std::string& variants, const std::vector<int64_t>& rows, DType t,
                  const std::vector<std::vector<int64_t>>& shapes, uint32_t seed = 1) {
  SCOPED_TRACE(variants + " on " + std::string(dtype_name(t)));
  std::vector<TensorType> types;
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < shapes.size(); ++k) {
    types.push_back(tt(t, S(shapes[k])));
    int64_t n = 1;
    for (int64_t d : shapes[k]) n *= d;
    std::vector<double> v = sample_values(t, n, seed + static_cast<uint32_t>(k) * 7919u);
    // Some edge values among the random ones: zero divisors, NaN and infinities for floats.
    if (n > 3) {
      v[1] = 0.0;
      if (is_float(t)) {
        v[2] = std::numeric_limits<double>::quiet_NaN();
        v[3] = k == 0 ? std::numeric_limits<double>::infinity() : -0.0;
      }
    }
    inputs.push_back(make_tensor(t, shapes[k], v));
  }
  AttrMap attrs = switch_attrs(variants, rows);
  Tensor got = run_one("row_switch", types, inputs, attrs);
  const size_t rank = got.rank();
  ASSERT_EQ(got.shape()[0], static_cast<int64_t>(rows.size()));
  std::vector<std::string> names = split(variants);
  const size_t row_bytes = rows.empty() ? 0 : got.nbytes() / rows.size();
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<TensorType> row_types;
    std::vector<Tensor> row_inputs;
    for (size_t k = 0; k < inputs.size(); ++k) {
      bool per_row = inputs[k].rank() == rank;
      Tensor x = per_row ? row_of(inputs[k], static_cast<int64_t>(r)) : inputs[k];
      row_types.push_back(tt(t, S(x.shape())));
      row_inputs.push_back(x);
    }
    const std::string& op = names[static_cast<size_t>(rows[r])];
    Tensor want = run_one(op, row_types, row_inputs);
    ASSERT_EQ(want.nbytes(), row_bytes) << "row " << r;
    EXPECT_EQ(std::memcmp(static_cast<const char*>(got.raw_data()) + r * row_bytes, want.raw_data(), row_bytes), 0)
        << "row " << r << " (" << op << ") differs from " << op << " run alone";
  }
}

std::vector<int64_t> random_rows(size_t n, int variants, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> rows(n);
  for (auto& r : rows) r = static_cast<int64_t>(rng() % static_cast<uint32_t>(variants));
  return rows;
}

// ---- bit-exact against each variant alone

TEST(RowSwitch, BinaryVariantsInRunsAndAlternating) {
  for (DType t : {DType::F32, DType::F64, DType::I32}) {
    check_switch("add,multiply,subtract", {0, 0, 1, 2, 2, 2, 1, 0}, t, {{8, 5}, {8, 5}});
    check_switch("add,multiply", {0, 1, 0, 1, 0, 1, 0}, t, {{7, 3, 2}, {7, 3, 2}});
    check_switch("subtract,divide", {1, 1, 1, 1}, t, {{4, 6}, {4, 6}});  // one variant on every row
  }
}

TEST(RowSwitch, UnaryVariantsOnEveryFloatDtype) {
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    check_switch("sin,cos,tanh", {2, 0, 0, 1, 1, 1, 2, 0, 2}, t, {{9, 17}});
    check_switch("exp,log,sqrt", {0, 1, 2, 1, 0}, t, {{5, 2, 3}});
  }
  check_switch("neg,abs,square", {1, 0, 2, 2}, DType::I16, {{4, 5}});
  check_switch("isnan,isfinite", {1, 0, 1}, DType::F32, {{3, 4}});  // bool results
}

TEST(RowSwitch, ComparisonVariants) {
  for (DType t : {DType::F32, DType::I32, DType::U8, DType::Bool})
    check_switch("less,greater_equal,equal", {0, 2, 2, 1, 0, 1}, t, {{6, 4}, {6, 4}});
}

TEST(RowSwitch, SharedOperandsBroadcastAgainstEachRow) {
  // per-row a (5, 3, 4) against a shared vector, a shared column, a shared scalar, and the reverse order.
  const std::vector<int64_t> rows = {0, 1, 1, 2, 0};
  for (DType t : {DType::F32, DType::I64}) {
    check_switch("add,subtract,maximum", rows, t, {{5, 3, 4}, {4}});
    check_switch("add,subtract,maximum", rows, t, {{5, 3, 4}, {3, 1}});
    check_switch("add,subtract,maximum", rows, t, {{5, 3, 4}, {}});
    check_switch("subtract,minimum,multiply", rows, t, {{3, 4}, {5, 3, 4}});
    // A per-row operand with unit extents inside its row broadcasts there too.
    check_switch("subtract,divide,power", rows, t, {{5, 1, 4}, {3, 1}});
  }
  check_switch("less,not_equal", {1, 0, 0}, DType::F64, {{3, 2, 2}, {2}});
}

TEST(RowSwitch, IntegerRulesAndMoreDtypes) {
  // The integer guards (x / 0, x % 0) come from the variants' own kernels.
  for (DType t : {DType::I8, DType::U16, DType::I32, DType::U64})
    check_switch("divide,remainder,floor_divide,fmod", {0, 1, 2, 3, 3, 2, 1, 0}, t, {{8, 6}, {8, 6}});
  for (DType t : {DType::I32, DType::U32})
    check_switch("shift_left,bitwise_xor,shift_right_logical", {2, 2, 1, 0}, t, {{4, 5}, {4, 5}});
  check_switch("logical_and,logical_xor,logical_or", {0, 1, 2, 1}, DType::Bool, {{4, 3}, {3}});
  check_switch("atan2,hypot,copysign", {0, 2, 1}, DType::BF16, {{3, 8}, {3, 8}});
}

TEST(RowSwitch, LargeRunsSplitAcrossThreadsStayBitExact) {
  // 48 rows of 4096 (beyond the parallel grain), a random table over four variants, one operand
  // shared; and a unary population with long runs.
  check_switch("add,subtract,multiply,divide", random_rows(48, 4, 7), DType::F32, {{48, 4096}, {4096}});
  check_switch("sin,cos,tanh,log", random_rows(40, 4, 9), DType::F64, {{40, 5000}});
  std::vector<int64_t> long_runs(30, 0);
  for (size_t i = 10; i < 30; ++i) long_runs[i] = i < 25 ? 1 : 0;
  check_switch("maximum,minimum", long_runs, DType::F16, {{30, 70000}, {30, 70000}});
}

TEST(RowSwitch, SingleRowAndNoRows) {
  check_switch("multiply,add", {1}, DType::F32, {{1, 4}, {1, 4}});
  check_switch("multiply,add", {0}, DType::F32, {{1}, {1}});
  Tensor empty = run_one("row_switch", {tt(DType::F32, S({0, 3})), tt(DType::F32, S({3}))},
                         {Tensor::zeros({0, 3}), Tensor::zeros({3})}, switch_attrs("add,multiply", {}));
  EXPECT_EQ(empty.shape(), (std::vector<int64_t>{0, 3}));
}

TEST(RowSwitch, ResultOverwritesADyingOperandCorrectly) {
  // neg(x) dies at the switch, so the plan may write the result over it; rows must still be right.
  GraphBuilder g;
  Value* x = g.input(DType::F32, S({6, 8}));
  Value* y = g.input(DType::F32, S({8}));
  Value* nx = g.op("neg", {x}, tt(DType::F32, S({6, 8})));
  std::vector<int64_t> rows = {0, 0, 1, 1, 0, 1};
  Value* r = g.op("row_switch", {nx, y}, tt(DType::F32, S({6, 8})), switch_attrs("add,multiply", rows));
  Value* out = g.op("exp", {r}, tt(DType::F32, S({6, 8})));
  std::vector<double> xv = sample_values(DType::F32, 48, 3), yv = sample_values(DType::F32, 8, 4);
  std::vector<Tensor> got =
      run_graph(g.build({out}), {make_tensor(DType::F32, {6, 8}, xv), make_tensor(DType::F32, {8}, yv)});
  const float* o = got[0].data<float>();
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      float a = -static_cast<float>(xv[static_cast<size_t>(i * 8 + j)]),
            b = static_cast<float>(yv[static_cast<size_t>(j)]);
      float v = rows[static_cast<size_t>(i)] == 0 ? a + b : a * b;
      Tensor want = run_one("exp", {tt(DType::F32, S({}))}, {Tensor::scalar(v)});
      EXPECT_EQ(o[i * 8 + j], want.data<float>()[0]) << i << ", " << j;
    }
}

TEST(RowSwitch, PrintsParsesAndRunsTheSame) {
  GraphBuilder g;
  Value* a = g.input(DType::F32, S({4, 3}));
  Value* b = g.input(DType::F32, S({3}));
  Value* r = g.op("row_switch", {a, b}, tt(DType::F32, S({4, 3})), switch_attrs("divide,add", {1, 0, 0, 1}));
  Graph graph = g.build({r});
  std::string text = graph.to_string();
  EXPECT_NE(text.find("evoxc.row_switch"), std::string::npos) << text;
  Graph back = Graph::parse(text);
  EXPECT_EQ(back.to_string(), text);
  std::vector<Tensor> in = {make_tensor(DType::F32, {4, 3}, sample_values(DType::F32, 12, 5)),
                            make_tensor(DType::F32, {3}, {2.0, -0.5, 0.0})};
  Tensor x = run_graph(graph, in)[0], y = run_graph(back, in)[0];
  EXPECT_EQ(std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()), 0);
}

// ---- inference: the op's errors

std::vector<TensorType> infer(const std::vector<TensorType>& ops, const std::string& variants,
                              const std::vector<int64_t>& rows) {
  return infer_result_types(get_op("row_switch"), ops, switch_attrs(variants, rows));
}

TEST(RowSwitch, InfersTheVariantsResultType) {
  auto f = tt(DType::F32, S({3, 4}));
  EXPECT_EQ(infer({f, f}, "add,multiply", {0, 1, 0}), std::vector<TensorType>{f});
  EXPECT_EQ(infer({f, tt(DType::F32, S({4}))}, "add,multiply", {0, 1, 0}), std::vector<TensorType>{f});
  EXPECT_EQ(infer({f, f}, "less,equal", {1, 1, 0}), std::vector<TensorType>{tt(DType::Bool, S({3, 4}))});
  EXPECT_EQ(infer({f}, "sin", {0, 0, 0}), std::vector<TensorType>{f});
  // A shared operand of the row's rank broadcasts against each row: (3, 1, 4) with (2, 1).
  EXPECT_EQ(infer({tt(DType::F32, S({3, 1, 4})), tt(DType::F32, S({2, 1}))}, "add,subtract", {0, 1, 1}),
            std::vector<TensorType>{tt(DType::F32, S({3, 2, 4}))});
}

TEST(RowSwitch, MustFail) {
  using test::expect_error;
  auto f = tt(DType::F32, S({3, 4}));
  expect_error<TypeError>([&] { infer({f, f}, "add,no_such_op", {0, 1, 0}); }, "unknown variant 'no_such_op'");
  expect_error<TypeError>([&] { infer({f, f}, "add, multiply", {0, 1, 0}); }, "unknown variant ' multiply'");
  expect_error<TypeError>([&] { infer({f, f}, "", {0, 0, 0}); }, "unknown variant ''");
  expect_error<TypeError>([&] { infer({f, f}, "add,sin", {0, 1, 0}); }, "variant 'sin' takes 1 operand, got 2");
  expect_error<TypeError>([&] { infer({f}, "neg,add", {0, 1, 0}); }, "variant 'add' takes 2 operands, got 1");
  expect_error<TypeError>([&] { infer({f, f, f}, "add", {0, 0, 0}); }, "op 'row_switch' takes");
  expect_error<TypeError>([&] { infer({}, "add", {}); }, "op 'row_switch' takes");
  expect_error<TypeError>(
      [&] {
        infer({f, f}, "add,less", {0, 1, 0});
      },
      "variants 'add' and 'less' give different result types");
  expect_error<TypeError>([&] { infer({f, f, f}, "select", {0, 0, 0}); }, "variant 'select' is a elementwise_other");
  expect_error<TypeError>([&] { infer({f}, "reduce_sum", {0, 0, 0}); }, "variant 'reduce_sum' is a reduction");
  expect_error<TypeError>([&] { infer({f}, "gelu", {0, 0, 0}); }, "variant 'gelu'");
  expect_error<TypeError>([&] { infer({tt(DType::I32, S({3}))}, "neg,sin", {0, 1, 0}); }, "variant 'sin'");
  expect_error<TypeError>([&] { infer({f, tt(DType::F64, S({3, 4}))}, "add", {0, 0, 0}); }, "variant 'add'");
  expect_error<TypeError>([&] { infer({f, f}, "row_switch", {0, 0, 0}); }, "variant 'row_switch' is a structure");
  expect_error<ShapeError>([&] { infer({f, f}, "add,multiply", {0, 1}); }, "'rows' has 2 entries");
  expect_error<ShapeError>([&] { infer({f, f}, "add,multiply", {0, 1, 0, 1}); }, "'rows' has 4 entries");
  expect_error<ShapeError>([&] { infer({f, f}, "add,multiply", {0, 2, 0}); }, "'rows' entry 1 is 2");
  expect_error<ShapeError>([&] { infer({f, f}, "add,multiply", {0, -1, 0}); }, "'rows' entry 1 is -1");
  expect_error<ShapeError>(
      [&] {
        infer({f, tt(DType::F32, S({1, 4}))}, "add", {0, 0, 0});
      },
      "operand 1 (tensor<1x4xf32>) has the result's rank");
  expect_error<ShapeError>(
      [&] {
        infer({tt(DType::F32, S({})), tt(DType::F32, S({}))}, "add", {});
      },
      "no leading row axis");
  auto sym = tt(DType::F32, Shape{DimExpr::symbol("N"), DimExpr(4)});
  expect_error<ShapeError>([&] { infer({sym, sym}, "add", {0, 0}); }, "is symbolic");
  expect_error<ShapeError>([&] { infer({f, tt(DType::F32, S({3, 5}))}, "add", {0, 0, 0}); }, "variant 'add'");
}

TEST(RowSwitch, InterpreterRefusesSymbolicRowExtents) {
  auto t = tt(DType::F32, Shape{DimExpr(3), DimExpr::symbol("B")});
  GraphBuilder g;
  Value* a = g.input(t.dtype, t.shape);
  Value* b = g.input(t.dtype, t.shape);
  Value* r = g.op("row_switch", {a, b}, t, switch_attrs("add,subtract", {0, 1, 0}));
  Graph graph = g.build({r});
  test::expect_error<BackendError>([&] { (void)interp::prepare(graph); },
                                   "does not support symbolic non-leading extents");
}

}  // namespace
}  // namespace evoxc
