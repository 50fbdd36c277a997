// Tests for tracing: graph construction, promotion, weak scalars, trees, statics and trace-time errors.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "evoxc/evoxc.h"

namespace evoxc {
namespace {

std::vector<std::string> op_names(const Graph& g) {
  std::vector<std::string> out;
  for (const auto& op : g.main().entry().operations()) out.push_back(op->name());
  return out;
}

TEST(Trace, QuickstartGraphHasTheExpectedOps) {
  auto f = [](SymbolicTensor x, SymbolicTensor w) { return sum(tanh(dot(x, w)), {1}); };
  Graph g = trace(f, TensorSpec({4, 8}, f32), TensorSpec({8, 4}, f32));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"dot", "tanh", "reduce_sum", "return"}));
  EXPECT_EQ(g.num_inputs(), 2u);
  EXPECT_EQ(g.output_specs().at(0).to_string(), "tensor<4xf32>");
  EXPECT_EQ(g.summary(), "<Graph 2 tensor inputs, 0 static values>");
  const auto& ops = g.main().entry().operations();
  EXPECT_EQ(ops[0]->location().file, "trace_test.cpp");
  EXPECT_GT(ops[0]->location().line, 0);
  verify(g);
}

TEST(Trace, PromotesBinaryOperandsOnTheLattice) {
  auto f = [](SymbolicTensor a, SymbolicTensor b) { return a + b; };
  EXPECT_EQ(trace(f, TensorSpec({2}, i32), TensorSpec({2}, f32)).output_specs()[0].dtype, f32);
  EXPECT_EQ(trace(f, TensorSpec({2}, u8), TensorSpec({2}, i8)).output_specs()[0].dtype, i16);
  EXPECT_EQ(trace(f, TensorSpec({2}, f16), TensorSpec({2}, bf16)).output_specs()[0].dtype, f32);
  EXPECT_EQ(trace(f, TensorSpec({2}, bool_), TensorSpec({2}, u16)).output_specs()[0].dtype, u16);
}

TEST(Trace, HostScalarsAreWeaklyTyped) {
  auto half = [](SymbolicTensor x) { return 0.5 * x; };
  EXPECT_EQ(trace(half, TensorSpec({3}, f16)).output_specs()[0].dtype, f16);
  EXPECT_EQ(trace(half, TensorSpec({3}, i32)).output_specs()[0].dtype, f32);
  auto plus1 = [](SymbolicTensor x) { return x + 1; };
  EXPECT_EQ(trace(plus1, TensorSpec({3}, u8)).output_specs()[0].dtype, u8);
  EXPECT_EQ(trace(plus1, TensorSpec({3}, bool_)).output_specs()[0].dtype, i64);
}

TEST(Trace, FloatOnlyFunctionsConvertIntegers) {
  auto f = [](SymbolicTensor x) { return exp(x); };
  Graph g = trace(f, TensorSpec({3}, i32));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"convert", "exp", "return"}));
  EXPECT_EQ(g.output_specs()[0].dtype, f32);
}

TEST(Trace, SumUsesNumpyAccumulators) {
  auto f = [](SymbolicTensor x) { return sum(x); };
  EXPECT_EQ(trace(f, TensorSpec({3}, i8)).output_specs()[0].dtype, i64);
  EXPECT_EQ(trace(f, TensorSpec({3}, u32)).output_specs()[0].dtype, u64);
  EXPECT_EQ(trace(f, TensorSpec({3}, bool_)).output_specs()[0].dtype, i64);
  EXPECT_EQ(trace(f, TensorSpec({3}, f16)).output_specs()[0].dtype, f16);
  auto m = [](SymbolicTensor x) { return mean(x, {0}, true); };
  Graph g = trace(m, TensorSpec({3, 2}, i32));
  EXPECT_EQ(g.output_specs()[0].to_string(), "tensor<1x2xf32>");
}

TEST(Trace, SymbolicShapesFlowThroughOps) {
  DimExpr B = Dim("B");
  auto f = [](SymbolicTensor x, SymbolicTensor y) { return concatenate({x, y}, 0); };
  Graph g = trace(f, TensorSpec({B, 4}, f32), TensorSpec({B + 1, 4}, f32));
  EXPECT_EQ(g.output_specs()[0].shape[0], 2 * B + 1);
  auto r = [](SymbolicTensor x) { return reshape(x, Shape{-1}); };
  EXPECT_EQ(trace(r, TensorSpec({B, 4}, f32)).output_specs()[0].shape[0], 4 * B);
}

TEST(Trace, NumpyDotOnHigherRanks) {
  auto f = [](SymbolicTensor a, SymbolicTensor b) { return dot(a, b); };
  Graph g = trace(f, TensorSpec({2, 3, 4}, f32), TensorSpec({5, 4, 6}, f32));
  EXPECT_EQ(g.output_specs()[0].to_string(), "tensor<2x3x5x6xf32>");
  auto m = [](SymbolicTensor a, SymbolicTensor b) { return matmul(a, b); };
  EXPECT_EQ(trace(m, TensorSpec({7, 1, 3, 4}, f32), TensorSpec({5, 4, 6}, f32)).output_specs()[0].to_string(),
            "tensor<7x5x3x6xf32>");
}

TEST(Trace, TreesOfInputsAndOutputs) {
  auto f = [](std::map<std::string, SymbolicTensor> p, SymbolicTensor x) {
    return std::make_tuple(p["w"] * x, std::vector<SymbolicTensor>{x, p["b"]});
  };
  std::map<std::string, TensorSpec> ps{{"w", {{3}, f32}}, {"b", {{3}, f32}}};
  Graph g = trace(f, ps, TensorSpec({3}, f32));
  EXPECT_EQ(g.input_tree().structure_string(), "({'b': *, 'w': *}, *)");
  EXPECT_EQ(g.output_tree().structure_string(), "(*, [*, *])");
  EXPECT_EQ(g.input_paths(), (std::vector<std::string>{"[0]['b']", "[0]['w']", "[1]"}));
}

TEST(Trace, StaticValuesAreSnapshotted) {
  auto f = [](SymbolicTensor x, int n, double scale) {
    SymbolicTensor y = x;
    for (int i = 0; i < n; ++i) y = y * scale;
    return y;
  };
  Graph g = trace(f, TensorSpec({2}, f32), 3, 2.0);
  EXPECT_EQ(g.static_values().size(), 2u);
  EXPECT_EQ(std::get<int64_t>(g.static_values().at("[1]")), 3);
  EXPECT_EQ(std::get<double>(g.static_values().at("[2]")), 2.0);
  EXPECT_EQ(g.num_inputs(), 1u);
  EXPECT_EQ(g.input_tree().structure_string(), "(*, None, None)");
  EXPECT_EQ(g.summary(), "<Graph 1 tensor inputs, 2 static values>");
}

TEST(TraceErrors, BoolConversionSaysUseCond) {
  auto f = [](SymbolicTensor x) {
    if (x > 0) return x;
    return -x;
  };
  try {
    trace(f, TensorSpec({}, f32));
    FAIL() << "expected TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("cond"), std::string::npos) << e.what();
  }
}

TEST(TraceErrors, TensorsCannotEnterATrace) {
  Tensor host = ones({2});
  auto capture = [&](SymbolicTensor x) { return add(x, host); };
  try {
    trace(capture, TensorSpec({2}, f32));
    FAIL() << "expected TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("constant"), std::string::npos) << e.what();
  }
  auto ident = [](SymbolicTensor x) { return x; };
  EXPECT_THROW(trace(ident, host), TraceError);
}

TEST(TraceErrors, OpFunctionsOutsideATrace) { EXPECT_THROW(iota(Shape{3}, 0), TraceError); }

TEST(TraceErrors, InferenceErrorsCarryTheLocation) {
  auto f = [](SymbolicTensor a, SymbolicTensor b) { return a + b; };
  try {
    trace(f, TensorSpec({3}, f32), TensorSpec({4}, f32));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("trace_test.cpp"), std::string::npos) << e.what();
  }
  auto g = [](SymbolicTensor a, SymbolicTensor b) { return a + b; };
  EXPECT_THROW(trace(g, TensorSpec({Dim("B")}, f32), TensorSpec({Dim("C")}, f32)), ShapeError);
  auto h = [](SymbolicTensor a) { return sum(a, {2}); };
  EXPECT_THROW(trace(h, TensorSpec({3}, f32)), ShapeError);
}

std::vector<std::string> g_warnings;
void capture_warning(const std::string& m) { g_warnings.push_back(m); }

TEST(Trace, ConstantEmbedsDataWithAWarning) {
  g_warnings.clear();
  set_warning_handler(capture_warning);
  Tensor c = Tensor::from_vector<float>({1, 2, 3}, {3});
  auto f = [&](SymbolicTensor x) { return x + constant(c); };
  Graph g = trace(f, TensorSpec({3}, f32));
  set_warning_handler(nullptr);
  ASSERT_EQ(g_warnings.size(), 1u);
  EXPECT_NE(g_warnings[0].find("12 bytes"), std::string::npos) << g_warnings[0];
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"constant", "add", "return"}));
}

TEST(Trace, SliceNormalisesLikeNumpy) {
  auto f = [](SymbolicTensor x) { return slice(x, {1, -2}, {10, 100}, {3, 1}); };
  Graph g = trace(f, TensorSpec({10, 5}, f32));
  EXPECT_EQ(g.output_specs()[0].to_string(), "tensor<3x2xf32>");
}

}  // namespace
}  // namespace evoxc
