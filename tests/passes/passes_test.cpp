// dce and cse: what they remove, what they keep, and that the rewritten graph computes the same.
#include "evoxc/passes/passes.h"

#include <gtest/gtest.h>

#include "evoxc/evoxc.h"
#include "evoxc/ir/builder.h"

namespace evoxc {
namespace {

size_t count_ops(const Block& b) {
  size_t n = 0;
  for (const auto& op : b.operations()) {
    ++n;
    for (const auto& r : op->regions()) n += count_ops(r->block());
  }
  return n;
}
size_t count_ops(const Graph& g) { return count_ops(g.main().entry()); }

TEST(Dce, RemovesUnusedOpsAndKeepsTheResult) {
  Graph g = trace(
      [](SymbolicTensor x) {
        SymbolicTensor unused = exp(x) * 2.0f;  // dead: never reaches the return
        (void)unused;
        return sin(x) + 1.0f;
      },
      TensorSpec({4}, f32));
  Graph d = dce(g);
  EXPECT_LT(count_ops(d), count_ops(g));
  EXPECT_EQ(d.to_string().find("evoxc.exp"), std::string::npos) << d.to_string();
  EXPECT_NE(d.to_string().find("evoxc.sin"), std::string::npos);
  verify(d);
  Tensor x = Tensor::from_vector(std::vector<float>{0.f, 1.f, 2.f, 3.f}, {4});
  auto a = run(build_graph(g), x).leaf().to_vector<float>();
  auto b = run(build_graph(d), x).leaf().to_vector<float>();
  EXPECT_EQ(a, b);
}

TEST(Dce, ReturnsTheSameGraphWhenNothingIsDead) {
  Graph g = trace([](SymbolicTensor x) { return x * x; }, TensorSpec({3}, f32));
  Graph d = dce(g);
  EXPECT_EQ(d.module_ptr(), g.module_ptr());
}

TEST(Dce, RemovesDeadOpsInsideRegionsAndKeepsCaptures) {
  Graph g = trace(
      [](SymbolicTensor p, SymbolicTensor x) {
        SymbolicTensor outer = cos(x);
        return cond(
            p,
            [&](SymbolicTensor v) {
              SymbolicTensor dead = tanh(v);
              (void)dead;
              return v + outer;
            },
            [](SymbolicTensor v) { return v; }, x);
      },
      TensorSpec({}, bool_), TensorSpec({3}, f32));
  Graph d = dce(g);
  verify(d);
  std::string text = d.to_string();
  EXPECT_EQ(text.find("evoxc.tanh"), std::string::npos) << text;
  EXPECT_NE(text.find("evoxc.cos"), std::string::npos) << text;  // captured by the live branch
  EXPECT_EQ(count_ops(d) + 1, count_ops(g));
}

TEST(Cse, MergesEqualOpsAndComputesTheSame) {
  Graph g = trace(
      [](SymbolicTensor x) {
        SymbolicTensor a = sin(x) * 3.0f;
        SymbolicTensor b = sin(x) * 3.0f;  // the same computation twice
        return a + b;
      },
      TensorSpec({4}, f32));
  Graph c = dce(cse(g));
  verify(c);
  std::string text = c.to_string();
  size_t sins = 0;
  for (size_t p = text.find("evoxc.sin"); p != std::string::npos; p = text.find("evoxc.sin", p + 1)) ++sins;
  EXPECT_EQ(sins, 1u) << text;
  EXPECT_LT(count_ops(c), count_ops(g));
  Tensor x = Tensor::from_vector(std::vector<float>{0.f, 1.f, 2.f, 3.f}, {4});
  EXPECT_EQ(run(build_graph(g), x).leaf().to_vector<float>(), run(build_graph(c), x).leaf().to_vector<float>());
}

TEST(DceCse, OneCopyEqualsDceThenCseAndKeepsCleanGraphs) {
  Graph g = trace(
      [](SymbolicTensor p, SymbolicTensor x) {
        SymbolicTensor dead = exp(x) * 2.0f;
        (void)dead;
        SymbolicTensor a = sin(x) * 3.0f, b = sin(x) * 3.0f;
        return cond(
            p, [&](SymbolicTensor v) { return v + a + tanh(v) * 0.0f + b; }, [](SymbolicTensor v) { return v; }, x);
      },
      TensorSpec({}, bool_), TensorSpec({4}, f32));
  Graph one = dce_cse(g), two = cse(dce(g));
  std::string why;
  EXPECT_TRUE(graphs_equal(one, two, true, &why)) << why << "\n" << one.to_string() << two.to_string();
  EXPECT_LT(count_ops(one), count_ops(g));
  verify(one);
  Graph clean = trace([](SymbolicTensor x) { return x * x; }, TensorSpec({3}, f32));
  EXPECT_EQ(dce_cse(clean).module_ptr(), clean.module_ptr());
}

TEST(Cse, KeepsOpsThatDifferInAttributesOrOperands) {
  Graph g = trace(
      [](SymbolicTensor x, SymbolicTensor y) { return std::make_tuple(sum(x, {0}), sum(x, {1}), sin(x), sin(y)); },
      TensorSpec({2, 3}, f32), TensorSpec({2, 3}, f32));
  Graph c = cse(g);
  EXPECT_EQ(c.module_ptr(), g.module_ptr()) << c.to_string();
}

TEST(Cse, ARegionReusesAnOuterComputation) {
  Graph g = trace(
      [](SymbolicTensor p, SymbolicTensor x) {
        SymbolicTensor outer = exp(x);
        SymbolicTensor r = cond(
            p, [&](SymbolicTensor v) { return exp(x) + v; }, [](SymbolicTensor v) { return v; }, x);
        return r + outer;
      },
      TensorSpec({}, bool_), TensorSpec({3}, f32));
  Graph c = dce(cse(g));
  verify(c);
  std::string text = c.to_string();
  size_t exps = 0;
  for (size_t p = text.find("evoxc.exp"); p != std::string::npos; p = text.find("evoxc.exp", p + 1)) ++exps;
  EXPECT_EQ(exps, 1u) << text;
  Tensor p = Tensor::scalar(true);
  Tensor x = Tensor::from_vector(std::vector<float>{0.f, 1.f, 2.f}, {3});
  EXPECT_EQ(run(build_graph(g), p, x).leaf().to_vector<float>(), run(build_graph(c), p, x).leaf().to_vector<float>());
}

}  // namespace
}  // namespace evoxc
