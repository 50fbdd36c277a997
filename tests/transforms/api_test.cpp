// The transform API: in_axes/out_axes trees, symbolic batch extents, vmap over functions, grad/value_and_grad with
// argnums and has_aux, jacobians and hessians, the errors for bad use, and the size of transformed graphs.
#include <gtest/gtest.h>

#include <cmath>

#include "evoxc/evoxc.h"
#include "evoxc/trace/control.h"
#include "expect_error.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;
using test::expect_error;
using testing::random_tensor;
using testing::run_flat;
constexpr DType f64 = DType::F64;

size_t count_ops(const Block& b) {
  size_t n = 0;
  for (const auto& op : b.operations()) {
    if (op->is_terminator()) continue;
    ++n;
    for (const auto& r : op->regions()) n += count_ops(r->block());
  }
  return n;
}
size_t count_ops(const Graph& g) { return count_ops(g.main().entry()); }

TEST(TransformApi, VectorizeInsertsTheBatchAxisWhereInAxesSays) {
  Graph g = trace([](ST a, ST b) { return a * b + 1.0; }, TensorSpec({3}, f64), TensorSpec({3}, f64));
  // a mapped at axis 1 of a (3, N) input, b shared; the output's batch axis last.
  Graph v = vectorize(g, AxisTree::tuple({AxisTree(-1), AxisTree::none()}), AxisTree(-1), DimExpr(2));
  std::vector<TensorSpec> in = v.input_specs();
  EXPECT_EQ(in[0].shape, Shape({3, 2}));
  EXPECT_EQ(in[1].shape, Shape({3}));
  EXPECT_EQ(v.output_specs()[0].shape, Shape({3, 2}));
  Tensor a = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor b = Tensor::from_vector<double>({10, 20, 30}, {3});
  EXPECT_EQ(run_flat(v, {a, b})[0].to_vector<double>(), (std::vector<double>{11, 21, 61, 81, 151, 181}));
}

TEST(TransformApi, DefaultBatchExtentIsAFreshSymbol) {
  Graph g = trace([](ST a) { return sum(a * a); }, TensorSpec({Dim("B"), 2}, f64));
  Graph v = vectorize(g);  // "B" is taken by the graph: the batch is B1
  EXPECT_EQ(v.input_specs()[0].to_string(), "tensor<B1xBx2xf64>");
  std::vector<Tensor> out = run_flat(v, {random_tensor({4, 3, 2}, f64, 1)});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{4}));
}

TEST(TransformApi, VmapOverAFunctionReadsTheBatchFromTheSpecs) {
  TraceFunction f = [](const std::vector<TracedArg>& args) {
    ST x = std::get<ST>(args[0].leaf()), w = std::get<ST>(args[1].leaf());
    return Tree<ST>(tanh(matmul(x, w)));
  };
  GraphFunction vf = vmap(f, AxisTree::tuple({AxisTree(0), AxisTree::none()}));
  Graph g = vf({arg_leaf(TensorSpec({5, 4}, f64)), arg_leaf(TensorSpec({4, 3}, f64))});
  EXPECT_EQ(g.output_specs()[0].shape, Shape({5, 3}));
  expect_error<TransformError>(
      [&] {
        vmap(f, AxisTree(0))({arg_leaf(TensorSpec({5, 4}, f64)), arg_leaf(TensorSpec({6, 3}, f64))});
      },
      "same batch extent");
}

TEST(TransformApi, GradArgnumsHasAuxAndValueAndGrad) {
  Graph g = trace(
      [](ST x, ST w) {
        ST l = sum(tanh(x * w));
        return std::pair<ST, ST>{l, x * 2.0};
      },
      TensorSpec({3}, f64), TensorSpec({3}, f64));
  Graph ga = grad(g, {0, 1}, /*has_aux=*/true);
  Tensor x = random_tensor({3}, f64, 2), w = random_tensor({3}, f64, 3);
  std::vector<Tensor> out = run_flat(ga, {x, w});
  ASSERT_EQ(out.size(), 3u);  // (dx, dw), aux
  std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>();
  for (size_t i = 0; i < 3; ++i) {
    double s = 1 - std::pow(std::tanh(xv[i] * wv[i]), 2);
    EXPECT_NEAR(out[0].to_vector<double>()[i], s * wv[i], 1e-12);
    EXPECT_NEAR(out[1].to_vector<double>()[i], s * xv[i], 1e-12);
    EXPECT_DOUBLE_EQ(out[2].to_vector<double>()[i], 2 * xv[i]);
  }
  Graph vg = value_and_grad(g, 1, true);  // ((loss, aux), dw)
  EXPECT_EQ(vg.output_tree().structure_string(), "((*, *), *)");
  expect_error<TransformError>([&] { (void)grad(g); }, "must return one scalar");
  expect_error<TransformError>([&] { (void)grad(g, 5, true); }, "out of range");
}

TEST(TransformApi, GradOfADictArgumentIsADictAndHessianNestsLikeJax) {
  // loss({'a': a, 'b': b}, c) = sum(a * b) + sum(c^2 a): d/da = b + c^2, d/db = a.
  std::map<std::string, TensorSpec> params{{"a", TensorSpec({2}, f64)}, {"b", TensorSpec({2}, f64)}};
  Graph g = trace(
      [](const std::map<std::string, ST>& p, ST c) { return sum(p.at("a") * p.at("b")) + sum(c * c * p.at("a")); },
      params, TensorSpec({2}, f64));
  Graph gg = grad(g, 0);
  EXPECT_EQ(gg.output_tree().structure_string(), "{'a': *, 'b': *}");
  Tensor a = Tensor::from_vector<double>({1, 2}, {2}), b = Tensor::from_vector<double>({3, 4}, {2});
  Tensor c = Tensor::from_vector<double>({0.5, -1}, {2});
  std::vector<Tensor> out = run_flat(gg, {a, b, c});
  EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{3.25, 5}));
  EXPECT_EQ(out[1].to_vector<double>(), (std::vector<double>{1, 2}));
  // hessian over two arguments nests as jax.hessian(f, argnums=(0, 1)) does: the outer tuple
  // is over the first derivative's arguments, each leaf of it a tuple over the second's.
  Graph h = hessian(g, {0, 1});
  EXPECT_EQ(h.output_tree().structure_string(),
            "({'a': ({'a': *, 'b': *}, *), 'b': ({'a': *, 'b': *}, *)}, ({'a': *, 'b': *}, *))");
  // Leaves in order: H[a][a], H[a][b], H[a][c], ...: d/da = b + c^2, so d2/da db = I and
  // d2/da dc = diag(2c).
  std::vector<Tensor> hv = run_flat(h, {a, b, c});
  EXPECT_EQ(hv[0].to_vector<double>(), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(hv[1].to_vector<double>(), (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(hv[2].to_vector<double>(), (std::vector<double>{1, 0, 0, -2}));
}

TEST(TransformApi, JacobiansAndHessianOfKnownFunctions) {
  // f(x) = x0^2 x1, x1^3: J = [[2 x0 x1, x0^2], [0, 3 x1^2]].
  Graph g = trace(
      [](ST x) {
        ST a = slice(x, {0}, {1}), b = slice(x, {1}, {2});
        return concatenate({a * a * b, b * b * b});
      },
      TensorSpec({2}, f64));
  Tensor x = Tensor::from_vector<double>({1.5, -2.0}, {2});
  std::vector<double> want{2 * 1.5 * -2.0, 1.5 * 1.5, 0, 3 * 4.0};
  EXPECT_EQ(run_flat(jacfwd(g), {x})[0].to_vector<double>(), want);
  EXPECT_EQ(run_flat(jacrev(g), {x})[0].to_vector<double>(), want);
  // h(x) = sum(x^3): H = diag(6 x).
  Graph h = trace([](ST v) { return sum(v * v * v); }, TensorSpec({2}, f64));
  Tensor hx = run_flat(hessian(h), {x})[0];
  EXPECT_EQ(hx.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(hx.to_vector<double>(), (std::vector<double>{9, 0, 0, -12}));
}

TEST(TransformApi, BadUseIsATransformError) {
  Graph g = trace([](ST a, ST b) { return a + b; }, TensorSpec({3}, f64), TensorSpec({3}, f64));
  expect_error<TransformError>([&] { (void)vectorize(g, AxisTree::tuple({AxisTree(0)})); }, "does not match");
  expect_error<TransformError>([&] { (void)vectorize(g, AxisTree(2)); }, "out of range");
  expect_error<TransformError>([&] { (void)vectorize(g, AxisTree(0), AxisTree::none()); }, "depends on the batch");
  Graph gi = trace([](ST a) { return sum(a); }, TensorSpec({3}, DType::I32));
  expect_error<TransformError>([&] { (void)grad(gi); }, "rank-0 float");
  Graph gf =
      trace([](ST a, ST n) { return sum(a) * convert(n, f64); }, TensorSpec({3}, f64), TensorSpec({}, DType::I64));
  expect_error<TransformError>([&] { (void)grad(gf, 1); }, "only for float inputs");
}

TEST(TransformApi, AnOpWithoutARuleNamesOpTransformAndLocation) {
  Graph g = trace([](ST a) { return sum(digamma(a)); }, TensorSpec({3}, f64));
  expect_error<TransformError>([&] { (void)grad(g); }, "evoxc.digamma at api_test.cpp:");
  expect_error<TransformError>([&] { (void)jvp(g); }, "has no jvp rule: its derivative is the trigamma");
}

// A chain of n elementwise ops on a batched value becomes n batched ops (no broadcasting, no
// copies); grad of an n-op scalar loss stays within a small constant factor of n.
TEST(TransformApi, TransformedGraphsStayLinearInSize) {
  auto chain = [](int n) {
    return trace(
        [n](ST x, ST y) {
          ST v = x;
          for (int i = 0; i < n; ++i) v = (i % 3 == 0) ? sin(v) * y : (i % 3 == 1 ? v + y : tanh(v));
          return sum(v);
        },
        TensorSpec({16}, f64), TensorSpec({16}, f64));
  };
  for (int n : {10, 40}) {
    Graph g = chain(n);
    size_t ops = count_ops(g);
    size_t vops = count_ops(vectorize(g));
    size_t gops = count_ops(grad(g, {0, 1}));
    EXPECT_LE(vops, ops + 2) << "vmap emitted " << vops << " ops for " << ops;
    EXPECT_LE(gops, 4 * ops) << "grad emitted " << gops << " ops for " << ops;
    std::printf("[ size ] n=%d graph %zu ops, vmap %zu (%.2fx), grad %zu (%.2fx)\n", n, ops, vops,
                static_cast<double>(vops) / static_cast<double>(ops), gops,
                static_cast<double>(gops) / static_cast<double>(ops));
  }
}

TEST(TransformApi, PrintedTransformedGraphsShowOnlyOrdinaryOps) {
  Graph g = trace([](ST x, ST w) { return sum(tanh(matmul(x, w))); }, TensorSpec({4, 3}, f64), TensorSpec({3, 2}, f64));
  Graph pg = vectorize(grad(g, 1), AxisTree::tuple({AxisTree(0), AxisTree::none()}));
  std::string text = pg.to_string();
  Graph back = Graph::parse(text);
  EXPECT_TRUE(graphs_equal(pg, back));
  for (const char* word : {"vmap", "grad", "jvp", "transpose_rule"}) EXPECT_EQ(text.find(word), std::string::npos);
}

}  // namespace
}  // namespace evoxc
