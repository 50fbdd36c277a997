// Tests of programs as data: postfix_eval's values (by hand, and bit for bit against the same programs traced as
// graphs), its run-time validation of codes, primitive tables, Population's prefix/postfix/text forms, to_graphs and
// batch_functions over them, constants as data, symbolic extents, thread counts, and the Evaluator's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../bench/gp_population.h"
#include "evoxc/evoxc.h"
#include "expect_error.h"
#include "interp/thread_pool.h"

namespace evoxc {
namespace {

using gp::Evaluator;
using gp::Loss;
using gp::Node;
using gp::Population;
using gp::PrimitiveSet;

Tensor inputs(int64_t vars, int64_t cases, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-3.f, 3.f);
  std::vector<float> x(static_cast<size_t>(vars * cases));
  for (float& v : x) v = u(rng);
  return Tensor::from_vector(x, {vars, cases});
}

std::vector<float> row(const Tensor& t, int64_t r) {
  const int64_t n = t.shape()[1];
  const float* d = t.data<float>() + r * n;
  return {d, d + n};
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Runs a graph of ([x0, ..., x_{V-1}], consts) on the rows of x and consts row p.
std::vector<float> run_graph(const Graph& g, const Tensor& x, const Tensor& consts, int64_t p) {
  const int64_t v = x.shape()[0], n = x.shape()[1], c = consts.shape()[1];
  std::vector<Tensor> in;
  for (int64_t i = 0; i < v; ++i) {
    std::vector<float> r(x.data<float>() + i * n, x.data<float>() + (i + 1) * n);
    in.push_back(Tensor::from_vector(r, {n}));
  }
  std::vector<float> k(consts.data<float>() + p * c, consts.data<float>() + (p + 1) * c);
  in.push_back(Tensor::from_vector(k, {c}));
  std::vector<Tensor> out(1);
  load(compile(lower(g))).execute(in, out);
  const float* d = out[0].data<float>();
  return {d, d + out[0].numel()};
}

TEST(Postfix, HandValues) {
  PrimitiveSet s = PrimitiveSet::standard();
  Population pop(s, 2);
  pop.add_prefix_text("sub x0 x1");              // x0 - x1
  pop.add_prefix_text("(mul 2.5 (add x1 x1))");  // 2.5 * (x1 + x1)
  pop.add_prefix_text("pdiv x0 0");              // protected: 1 everywhere
  pop.add_prefix_text("3");                      // a constant program
  pop.add_prefix_text("x1");                     // a variable alone
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, -1, 0.5f, 8, 0}, {2, 4});
  Tensor y = Evaluator(s, 2, Loss::None).evaluate(pop, x);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{5, 4}));
  EXPECT_EQ(row(y, 0), (std::vector<float>{2, 1.5f, -5, 4}));
  EXPECT_EQ(row(y, 1), (std::vector<float>{-5, 2.5f, 40, 0}));
  EXPECT_EQ(row(y, 2), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(row(y, 3), (std::vector<float>{3, 3, 3, 3}));
  EXPECT_EQ(row(y, 4), (std::vector<float>{-1, 0.5f, 8, 0}));
  // Fitness: MSE against y.
  Tensor t = Tensor::from_vector(std::vector<float>{2, 1.5f, -5, 0}, {4});
  Tensor f = Evaluator(s, 2, Loss::MSE).evaluate(pop, x, t);
  ASSERT_EQ(f.shape(), (std::vector<int64_t>{5}));
  EXPECT_FLOAT_EQ(f.data<float>()[0], 4.f);  // only the last case is off, by 4
  EXPECT_FLOAT_EQ(f.data<float>()[3], (1.f + 2.25f + 64.f + 9.f) / 4.f);
}

TEST(Postfix, PrefixPostfixAndTextAgree) {
  PrimitiveSet s = PrimitiveSet::standard();
  Population pop(s, 2);
  const int32_t add = s.code("add"), sin = s.code("sin"), sub = s.code("sub");
  // sub(sin(x0), add(x1, 0.5)) in prefix, in postfix and as text.
  std::vector<Node> pre{Node::primitive(sub), Node::primitive(sin), Node::variable(0),
                        Node::primitive(add), Node::variable(1),    Node::constant(0.5)};
  std::vector<Node> post{Node::variable(0),   Node::primitive(sin), Node::variable(1),
                         Node::constant(0.5), Node::primitive(add), Node::primitive(sub)};
  pop.add_prefix(pre);
  pop.add_postfix(post);
  pop.add_prefix_text("sub(sin(x0), add(x1, 0.5))");
  pop.add_prefix_text("sub sin a add b 0.5", {"a", "b"});
  for (size_t p = 0; p < 4; ++p) {
    std::vector<Node> got = pop.program(p);
    ASSERT_EQ(got.size(), post.size()) << p;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].code, post[i].code) << p << " " << i;
      EXPECT_EQ(got[i].value, post[i].value) << p << " " << i;
    }
  }
  EXPECT_EQ(pop.max_length(), 6);
  EXPECT_EQ(pop.max_constants(), 1);
}

// The bench's random trees, traced one by one as graphs (bench/gp_population.h, its own protected log
// log(|x| + 1e-6)), equal the same trees evaluated as data, bit for bit.
TEST(Postfix, EqualsTracedGraphsBitForBit) {
  int32_t code_of[10];
  PrimitiveSet s = bench::gp_primitive_set(code_of);
  const int64_t cases = 700;  // two blocks, the second partial
  auto trees = bench::gp_population(7, 60, 17, 2);
  Population pop(s, 2);
  for (const auto& t : trees) pop.add_prefix(bench::gp_nodes(t, code_of));
  Tensor x = inputs(2, cases, 3);
  Tensor y = Evaluator(s, 2, Loss::None).evaluate(pop, x);
  std::vector<Tensor> xs;
  for (int64_t v = 0; v < 2; ++v) {
    std::vector<float> r(x.data<float>() + v * cases, x.data<float>() + (v + 1) * cases);
    xs.push_back(Tensor::from_vector(r, {cases}));
  }
  int differ = 0;
  for (size_t p = 0; p < trees.size(); ++p) {
    std::vector<Tensor> out(1);
    load(compile(lower(bench::gp_trace(trees[p], 2, cases)))).execute(xs, out);
    std::vector<float> ref(out[0].data<float>(), out[0].data<float>() + cases);
    if (!same_bits(row(y, static_cast<int64_t>(p)), ref)) ++differ;
  }
  EXPECT_EQ(differ, 0);
}

TEST(Postfix, ToGraphsAndTheirMergeEqualTheData) {
  PrimitiveSet s = PrimitiveSet::standard();
  Population pop(s, 2);
  for (const char* text : {"aq x0 (cos (mul x1 0.75))", "plog (sub x0 -1.5)", "tanh (add (sqrtabs x1) (exp x0))",
                           "pow (abs x0) 0.5", "max (sigmoid x0) (neg (cube x1))", "1.25"})
    pop.add_prefix_text(text);
  Tensor x = inputs(2, 37, 5);
  Tensor y = Evaluator(s, 2, Loss::None).evaluate(pop, x);
  Tensor consts = pop.consts();
  std::vector<Graph> graphs = pop.to_graphs(37);
  for (size_t p = 0; p < graphs.size(); ++p)
    EXPECT_TRUE(same_bits(run_graph(graphs[p], x, consts, static_cast<int64_t>(p)), row(y, static_cast<int64_t>(p))))
        << p;
  // The graphs share one signature, so they merge; the merged rows are the same values.
  BatchOptions bo;
  bo.axes = AxisTree::tuple({AxisTree::list({AxisTree(), AxisTree()}), AxisTree(0)});
  BatchResult merged = batch_functions(graphs, bo);
  std::vector<Tensor> in;
  for (int64_t v = 0; v < 2; ++v) {
    std::vector<float> r(x.data<float>() + v * 37, x.data<float>() + (v + 1) * 37);
    in.push_back(Tensor::from_vector(r, {37}));
  }
  in.push_back(consts);
  std::vector<Tensor> out(1);
  load(compile(lower(merged.graph))).execute(in, out);
  ASSERT_EQ(out[0].shape(), y.shape());
  EXPECT_EQ(std::memcmp(out[0].data<float>(), y.data<float>(), y.nbytes()), 0);
  // A graph is an ordinary graph: its gradient with respect to the constants is finite differences'.
  Graph g = graphs[0];
  EXPECT_NO_THROW(vjp(g));
}

// The jacobian graph of a few programs against central differences of their own graphs (float64).
TEST(Postfix, JacobianWithRespectToConstantsMatchesFiniteDifferences) {
  PrimitiveSet s = PrimitiveSet::standard();
  Population pop(s, 2);
  pop.add_prefix_text("mul 1.5 (sin (add x0 0.25))");
  pop.add_prefix_text("x1");
  pop.add_prefix_text("aq (mul 0.5 x0) (sub x1 -0.75)");
  const std::vector<size_t> which{0, 2};
  const int64_t n = 9;
  Graph j = gp::jacobian_graph(pop, which, n, DType::F64);
  std::vector<double> x0(n), x1(n);
  for (int64_t i = 0; i < n; ++i) {
    x0[static_cast<size_t>(i)] = -1.3 + 0.31 * static_cast<double>(i);
    x1[static_cast<size_t>(i)] = 0.7 - 0.17 * static_cast<double>(i);
  }
  const int64_t c = pop.max_constants();
  ASSERT_EQ(c, 2);
  std::vector<double> k{1.5, 0.25, 0.5, -0.75};  // rows: program 0's, program 2's constants
  std::vector<Tensor> in{Tensor::from_vector(x0, {n}), Tensor::from_vector(x1, {n}), Tensor::from_vector(k, {2, c})};
  std::vector<Tensor> out(2);
  load(compile(lower(j))).execute(in, out);
  ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{2, n}));
  ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{2, n, c}));
  const double* jac = out[1].data<double>();
  for (size_t r = 0; r < which.size(); ++r) {
    Executable g = load(compile(lower(pop.to_graph(which[r], n, DType::F64))));
    auto eval = [&](std::vector<double> kk) {
      std::vector<Tensor> gi{Tensor::from_vector(x0, {n}), Tensor::from_vector(x1, {n}), Tensor::from_vector(kk, {c})};
      std::vector<Tensor> go(1);
      g.execute(gi, go);
      return go[0].to_vector<double>();
    };
    for (int64_t q = 0; q < c; ++q) {
      std::vector<double> hi(k.begin() + static_cast<ptrdiff_t>(r) * c, k.begin() + static_cast<ptrdiff_t>(r + 1) * c);
      std::vector<double> lo = hi;
      const double h = 1e-6;
      hi[static_cast<size_t>(q)] += h;
      lo[static_cast<size_t>(q)] -= h;
      std::vector<double> fh = eval(hi), fl = eval(lo);
      for (int64_t i = 0; i < n; ++i) {
        double fd = (fh[static_cast<size_t>(i)] - fl[static_cast<size_t>(i)]) / (2 * h);
        EXPECT_NEAR(jac[(static_cast<int64_t>(r) * n + i) * c + q], fd, 1e-7 * (1 + std::abs(fd)))
            << "program " << which[r] << " case " << i << " constant " << q;
      }
    }
  }
}

TEST(Postfix, ConstantsAreData) {
  PrimitiveSet s = PrimitiveSet::standard();
  Population pop(s, 1);
  pop.add_prefix_text("add (mul 2 x0) 1");
  Evaluator ev(s, 1, Loss::None);
  Tensor x = Tensor::from_vector(std::vector<float>{0, 1, 2}, {1, 3});
  EXPECT_EQ(row(ev.evaluate(pop, x), 0), (std::vector<float>{1, 3, 5}));
  pop.constants(0)[0] = -1;  // mul -1 x0
  pop.constants(0)[1] = 0.5;
  EXPECT_EQ(row(ev.evaluate(pop, x), 0), (std::vector<float>{0.5f, -0.5f, -1.5f}));
}

TEST(Postfix, OneExecutableForEveryPopulationAndCaseCount) {
  PrimitiveSet s = PrimitiveSet::standard();
  Evaluator ev(s, 2, Loss::MSE);
  for (int gen = 0; gen < 3; ++gen) {
    Population pop(s, 2);
    std::mt19937 rng(static_cast<unsigned>(gen));
    const int programs = 5 + 40 * gen;
    for (int p = 0; p < programs; ++p) {
      std::string text = "x" + std::to_string(rng() % 2);
      for (int d = 0; d < 1 + gen * 3 + p % 4; ++d)
        text = (rng() % 2 ? "sin " : "add x1 ") + std::string("(") + text + ")";
      pop.add_prefix_text(text);
    }
    const int64_t cases = 100 + 600 * gen;
    Tensor x = inputs(2, cases, static_cast<uint64_t>(gen));
    Tensor t = Tensor::zeros({cases}, DType::F32);
    Tensor f = ev.evaluate(pop, x, t);
    ASSERT_EQ(f.shape(), (std::vector<int64_t>{programs}));
    // Each fitness equals the mean of the squared predictions of its own graph.
    Tensor consts = pop.consts();
    for (int64_t p = 0; p < programs; p += 7) {
      std::vector<float> pred = run_graph(pop.to_graph(static_cast<size_t>(p), cases), x, consts, p);
      double m = 0;
      for (float v : pred) m += static_cast<double>(v) * v;
      EXPECT_NEAR(f.data<float>()[p], m / static_cast<double>(cases), 1e-4 * (1 + m / static_cast<double>(cases)));
    }
  }
}

TEST(Postfix, ResultsDoNotDependOnThreadCount) {
  PrimitiveSet s = PrimitiveSet::standard();
  Population pop(s, 2);
  for (int p = 0; p < 300; ++p)
    pop.add_prefix_text("add (sin (mul x0 " + std::to_string(p % 7) + ")) (tanh (sub x1 " + std::to_string(p) + "))");
  Tensor x = inputs(2, 5000, 9);
  Evaluator ev(s, 2, Loss::None);
  interp::set_num_threads(1);
  Tensor one = ev.evaluate(pop, x);
  interp::set_num_threads(0);
  Tensor many = ev.evaluate(pop, x);
  EXPECT_EQ(std::memcmp(one.data<float>(), many.data<float>(), one.nbytes()), 0);
}

TEST(Postfix, OtherDtypes) {
  PrimitiveSet s;
  s.add("add", "$0 $1 add");
  s.add("mul", "$0 $1 multiply");
  Population pop(s, 2);
  pop.add_prefix_text("add x0 (mul x1 3)");
  // int32 values: the constants are the data of a float population only, so this runs the op directly.
  Graph g = trace(
      [&](const std::vector<SymbolicTensor>& in) { return postfix_eval(in[0], in[1], in[2], in[3], s.attribute()); },
      std::vector<TensorSpec>{TensorSpec(Shape{1, 5}, DType::I32), TensorSpec(Shape{1, 5}, DType::I32),
                              TensorSpec(Shape{1, 1}, DType::I32), TensorSpec(Shape{2, 3}, DType::I32)});
  std::vector<Tensor> in{pop.codes(), pop.args(), Tensor::from_vector(std::vector<int32_t>{3}, {1, 1}),
                         Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 10, 20, 30}, {2, 3})};
  std::vector<Tensor> out(1);
  load(compile(lower(g))).execute(in, out);
  EXPECT_EQ(out[0].to_vector<int32_t>(), (std::vector<int32_t>{31, 62, 93}));
  // float64 through the evaluator.
  Population q(PrimitiveSet::standard(), 1);
  q.add_prefix_text("mul x0 0.1");
  Tensor xd = Tensor::from_vector(std::vector<double>{1, 3}, {1, 2});
  Tensor yd = Evaluator(PrimitiveSet::standard(), 1, Loss::None, DType::F64).evaluate(q, xd);
  EXPECT_EQ(yd.to_vector<double>(), (std::vector<double>{0.1, 3 * 0.1}));
}

// ---------------------------------------------------------------------------------------------- mlir

// The mlir backend runs postfix_eval through the interpreter's engine: every prediction equals the interpreter's
// bit for bit, the loss around it within the backend's float tolerance, one artifact serves every population.
TEST(PostfixMlir, EqualsTheInterpreterForEveryPopulation) {
  if (!find_backend("mlir")) GTEST_SKIP() << "this build has no mlir backend (EVOXC_MLIR=OFF)";
  PrimitiveSet s = PrimitiveSet::standard();
  Evaluator pred_interp(s, 2, Loss::None), pred_mlir(s, 2, Loss::None, DType::F32, "mlir");
  Evaluator fit_interp(s, 2, Loss::MSE), fit_mlir(s, 2, Loss::MSE, DType::F32, "mlir");
  int32_t code_of[10] = {};
  PrimitiveSet bench_set = bench::gp_primitive_set(code_of);
  for (int gen = 0; gen < 3; ++gen) {
    Population pop(s, 2);
    std::mt19937 rng(static_cast<unsigned>(gen + 11));
    for (int p = 0; p < 40 + 30 * gen; ++p) {
      std::string text = "x" + std::to_string(rng() % 2);
      for (int d = 0; d < 2 + p % 5; ++d)
        text = (rng() % 3 == 0 ? "sin " : rng() % 2 ? "pdiv x1 " : "mul 0.5 ") + std::string("(") + text + ")";
      pop.add_prefix_text(text);
    }
    const int64_t cases = 300 + 500 * gen;  // not a multiple of the engine's block
    Tensor x = inputs(2, cases, static_cast<uint64_t>(40 + gen));
    Tensor y = Tensor::from_vector(row(x, 1), {cases});
    Tensor a = pred_interp.evaluate(pop, x), b = pred_mlir.evaluate(pop, x);
    ASSERT_EQ(a.shape(), b.shape());
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0) << "generation " << gen;
    std::vector<float> fa = fit_interp.evaluate(pop, x, y).to_vector<float>();
    std::vector<float> fb = fit_mlir.evaluate(pop, x, y).to_vector<float>();
    ASSERT_EQ(fa.size(), fb.size());
    for (size_t p = 0; p < fa.size(); ++p)
      if (std::isfinite(fa[p])) {
        EXPECT_NEAR(fa[p], fb[p], 2e-5 * (1 + std::abs(fa[p]))) << p;
      }
  }
  // The bench's GP trees (their own protected log), 100 of them, bit for bit.
  Population bp(bench_set, 2);
  for (const auto& t : bench::gp_population(7, 100, 17, 2)) bp.add_prefix(bench::gp_nodes(t, code_of));
  Tensor x = inputs(2, 1024, 5);
  Tensor a = Evaluator(bench_set, 2, Loss::None).evaluate(bp, x);
  Tensor b = Evaluator(bench_set, 2, Loss::None, DType::F32, "mlir").evaluate(bp, x);
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
}

TEST(PostfixMlir, CasesOfAnyRankAndIntegerValues) {
  if (!find_backend("mlir")) GTEST_SKIP() << "this build has no mlir backend (EVOXC_MLIR=OFF)";
  PrimitiveSet s;
  s.add("add", "$0 $1 add");
  s.add("mul", "$0 $1 multiply");
  Population pop(s, 2);
  pop.add_prefix_text("add x0 (mul x1 3)");
  pop.add_prefix_text("mul x0 x0");
  for (DType t : {DType::I32, DType::F64}) {
    // x (2, 2, 3): cases of rank 2; and x (2,): one case.
    for (std::vector<int64_t> xs : {std::vector<int64_t>{2, 2, 3}, std::vector<int64_t>{2}}) {
      Shape xshape = Shape::from_ints(xs);
      Graph g = trace(
          [&](const std::vector<SymbolicTensor>& in) {
            return postfix_eval(in[0], in[1], in[2], in[3], s.attribute());
          },
          std::vector<TensorSpec>{TensorSpec(Shape{2, 5}, DType::I32), TensorSpec(Shape{2, 5}, DType::I32),
                                  TensorSpec(Shape{2, 1}, t), TensorSpec(xshape, t)});
      int64_t n = 1;
      for (int64_t d : xs) n *= d;
      std::vector<double> xv(static_cast<size_t>(n));
      std::vector<int32_t> xi(static_cast<size_t>(n));
      for (size_t i = 0; i < xv.size(); ++i) {
        xv[i] = static_cast<double>(i) - 4.5;
        xi[i] = static_cast<int32_t>(i) - 4;
      }
      std::vector<Tensor> in{pop.codes(), pop.args(), Tensor::full({2, 1}, 3, t),
                             t == DType::I32 ? Tensor::from_vector(xi, xs) : Tensor::from_vector(xv, xs)};
      std::vector<Tensor> want(1), got(1);
      build_graph(g).execute(in, want);
      BuildOptions o;
      o.backend = "mlir";
      build_graph(g, o).execute(in, got);
      ASSERT_EQ(want[0].shape(), got[0].shape());
      EXPECT_EQ(std::memcmp(want[0].raw_data(), got[0].raw_data(), want[0].nbytes()), 0);
    }
  }
}

TEST(PostfixMlir, BadCodesRaiseTheInterpretersErrors) {
  if (!find_backend("mlir")) GTEST_SKIP() << "this build has no mlir backend (EVOXC_MLIR=OFF)";
  PrimitiveSet s = PrimitiveSet::standard();
  BuildOptions o;
  o.backend = "mlir";
  Executable exe = build_graph(gp::evaluator_graph(s, 2, Loss::MSE), o);
  auto run = [&](std::vector<int32_t> codes, std::vector<int32_t> args) {
    const auto l = static_cast<int64_t>(codes.size());
    std::vector<Tensor> in{Tensor::from_vector(codes, {1, l}), Tensor::from_vector(args, {1, l}),
                           Tensor::zeros({1, 1}, DType::F32), Tensor::zeros({2, 4}, DType::F32),
                           Tensor::zeros({4}, DType::F32)};
    std::vector<Tensor> out(1);
    exe.execute(in, out);
    return out[0];
  };
  const int32_t add = s.code("add");
  test::expect_error<ValidationError>([&] { run({1, 1, 999}, {0, 1, 0}); }, "program 0, position 2: code 999");
  test::expect_error<ValidationError>([&] { run({1, add}, {0, 0}); }, "takes 2 values but the stack holds 1");
  // The executable stays usable, and good codes after bad ones run.
  EXPECT_EQ(run({1, 1, add}, {0, 1, 0}).to_vector<float>(), std::vector<float>{0.f});
}

// ---------------------------------------------------------------------------------------------- must fail

TEST(PostfixMustFail, BadCodesAreValidationErrorsNamingTheProgram) {
  PrimitiveSet s = PrimitiveSet::standard();
  Graph g = gp::evaluator_graph(s, 2, Loss::None);
  Executable exe = load(compile(lower(g)));
  auto run = [&](std::vector<int32_t> codes, std::vector<int32_t> args) {
    const auto l = static_cast<int64_t>(codes.size());
    std::vector<Tensor> in{Tensor::from_vector(codes, {1, l}), Tensor::from_vector(args, {1, l}),
                           Tensor::zeros({1, 1}, DType::F32), Tensor::zeros({2, 4}, DType::F32)};
    std::vector<Tensor> out(1);
    exe.execute(in, out);
  };
  const int32_t add = s.code("add");
  test::expect_error<ValidationError>([&] { run({1, 1, 999}, {0, 1, 0}); }, "program 0, position 2: code 999");
  test::expect_error<ValidationError>([&] { run({1, 1}, {0, 2}); }, "variable 2 is outside [0, 2)");
  test::expect_error<ValidationError>([&] { run({2}, {1}); }, "constant 1 is outside [0, 1)");
  test::expect_error<ValidationError>([&] { run({1, add}, {0, 0}); }, "takes 2 values but the stack holds 1");
  test::expect_error<ValidationError>([&] { run({1, 1}, {0, 0}); }, "leaves 2 values");
  test::expect_error<ValidationError>([&] { run({0, 1}, {0, 0}); }, "leaves 0 values");
  test::expect_error<ValidationError>([&] { run({-4}, {0}); }, "code -4 is not 0 (end)");
  EXPECT_NO_THROW(run({1, 1, add, 0, 7}, {0, 1, 0, 0, 9}));  // codes after the end are padding
}

TEST(PostfixMustFail, PrimitiveTablesAreCheckedWhenTraced) {
  PrimitiveSet s;
  test::expect_error<TypeError>([&] { s.add("f", "$0 frobnicate"); }, "unknown op 'frobnicate'");
  test::expect_error<TypeError>([&] { s.add("f", "$0 $1"); }, "leaves 2 values");
  test::expect_error<TypeError>([&] { s.add("f", "$0 add"); }, "'add' takes 2 operands but the stack holds 1");
  test::expect_error<TypeError>([&] { s.add("f", "1 2 add"); }, "uses no argument");
  test::expect_error<TypeError>([&] { s.add("f", "$0  sin"); }, "single spaces");
  test::expect_error<TypeError>([&] { s.add("f", "$0 reduce_sum"); }, "is a reduction op");
  test::expect_error<TypeError>([&] { s.add("f", "$99 sin"); }, "'$99' is not an argument");
  test::expect_error<TypeError>([&] { s.add("a=b", "$0 sin"); }, "must be non-empty and free of '='");
  s.add("f", "$0 sin");
  test::expect_error<TypeError>([&] { s.add("f", "$0 cos"); }, "defined already");
  test::expect_error<TypeError>([&] { (void)s.code("g"); }, "unknown primitive 'g'; this set has: f");
  // A body whose ops reject the values' dtype fails at inference, naming the primitive.
  PrimitiveSet t;
  t.add("cmp", "$0 $1 less");
  test::expect_error<TypeError>([&] { (void)gp::evaluator_graph(t, 1, Loss::None); },
                                "primitive 'cmp' gives bool on float32 values");
}

TEST(PostfixMustFail, PopulationsRejectBadPrograms) {
  PrimitiveSet s = PrimitiveSet::standard();
  Population pop(s, 2);
  test::expect_error<ValidationError>([&] { pop.add_prefix_text("add x0"); }, "missing operands");
  test::expect_error<ValidationError>([&] { pop.add_prefix_text("x0 x1"); }, "is whole after 1 of its 2");
  test::expect_error<ValidationError>([&] { pop.add_prefix_text("add x0 x7"); }, "variable 7 is outside [0, 2)");
  test::expect_error<ValidationError>([&] { pop.add_prefix_text("frob x0"); }, "token 'frob'");
  test::expect_error<ValidationError>([&] { pop.add_postfix(std::vector<Node>{Node::primitive(99)}); },
                                      "code 99 is neither");
  EXPECT_EQ(pop.size(), 0u);
  EXPECT_EQ(pop.max_length(), 0);
  Evaluator ev(s, 2, Loss::MSE);
  pop.add_prefix_text("x0");
  test::expect_error<ValidationError>([&] { (void)ev.evaluate(pop, inputs(2, 3, 1)); }, "needs the targets y");
  PrimitiveSet other;
  other.add("add", "$0 $1 add");
  Population q(other, 2);
  q.add_prefix_text("add x0 x1");
  test::expect_error<ValidationError>([&] { (void)ev.evaluate(q, inputs(2, 3, 1), Tensor::zeros({3})); },
                                      "primitive set differs");
}

}  // namespace
}  // namespace evoxc
