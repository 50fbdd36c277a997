// Tests of the mlir lowering's loop fusion (src/backends/mlir/fusion.cpp): which ops join which loops, the loops the
// lowered text holds, and fused programs' results against the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "evoxc/evoxc.h"
#include "evoxc/trace/control.h"
#if EVOXC_HAS_MLIR
#include "backends/mlir/emitter.h"
#endif

namespace evoxc {
namespace {

#if EVOXC_HAS_MLIR
using ST = SymbolicTensor;
using mlir_backend::FusionPlan;

bool have_mlir() { return find_backend("mlir") != nullptr; }
#define REQUIRE_MLIR() \
  if (!have_mlir()) GTEST_SKIP() << "this build has no mlir backend"

// "exp:M tanh:R return:A": each op of main's block and its role (Alone, Root, Member, Fed).
std::string roles(const Graph& g) {
  const Block& b = g.main().entry();
  FusionPlan plan = mlir_backend::plan_fusion(b);
  std::string s;
  for (size_t k = 0; k < b.operations().size(); ++k) {
    static const char kRole[] = {'A', 'R', 'M', 'F'};
    s += (s.empty() ? "" : " ") + b.operations()[k]->name() + ":" + kRole[static_cast<int>(plan.role[k])];
  }
  return s;
}

// The op names of the loop rooted at the first op named `root`, in block order.
std::string loop_of(const Graph& g, const std::string& root) {
  const Block& b = g.main().entry();
  FusionPlan plan = mlir_backend::plan_fusion(b);
  for (size_t k = 0; k < b.operations().size(); ++k) {
    if (b.operations()[k]->name() != root) continue;
    std::string s;
    for (const Operation* op : plan.members[k]) s += (s.empty() ? "" : " ") + op->name();
    return s;
  }
  return "(no " + root + ")";
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

Tensor ramp(const std::vector<int64_t>& shape, double scale, double offset) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<double>(i % 53) * scale + offset);
  return Tensor::from_vector(v, shape);
}

// Every output of the compiled program against the interpreter's: bit for bit when `exact`, else (float32 outputs)
// within the few-ULP tolerance of the math approximations.
void expect_like_interpreter(const Graph& g, const std::vector<Tensor>& in, bool exact) {
  Executable m = load(compile(lower(g, "mlir")));
  Executable i = load(compile(lower(g)));
  std::vector<Tensor> got(g.main().entry().terminator()->num_operands()), want(got.size());
  m.execute(in, got);
  i.execute(in, want);
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].dtype(), want[o].dtype());
    ASSERT_EQ(got[o].shape(), want[o].shape());
    size_t bytes = got[o].numel() * size_of(got[o].dtype());
    if (exact) {
      EXPECT_EQ(std::memcmp(got[o].raw_data(), want[o].raw_data(), bytes), 0) << "output " << o;
      continue;
    }
    ASSERT_EQ(got[o].dtype(), f32) << "compared within a tolerance: float32 outputs only";
    std::vector<float> gv = got[o].to_vector<float>(), wv = want[o].to_vector<float>();
    for (size_t k = 0; k < gv.size(); ++k)
      EXPECT_NEAR(gv[k], wv[k], 2e-6f + 2e-5f * std::abs(wv[k])) << "output " << o << " element " << k;
  }
}

TEST(MlirFusion, AChainIsOneLoop) {
  REQUIRE_MLIR();
  Graph g = trace([](ST x) { return tanh(exp(x) * x); }, TensorSpec({4, 3}, f32));
  EXPECT_EQ(roles(g), "exp:M multiply:M tanh:R return:A");
  EXPECT_EQ(loop_of(g, "tanh"), "exp multiply tanh");
  std::string text = lower(g, "mlir").text();
  EXPECT_EQ(count(text, "linalg.generic"), 1u) << text;
  // x is read once although two members read it
  EXPECT_NE(text.find("ins(%arg0 : tensor<4x3xf32>)"), std::string::npos) << text;
  expect_like_interpreter(g, {ramp({4, 3}, 0.05, -1.0)}, false);
}

TEST(MlirFusion, SplatsAreConstantsInsideTheLoop) {
  REQUIRE_MLIR();
  // The literals trace as rank-0 `full` ops: each is an arith.constant in the body, not a filled tensor read.
  Graph g = trace([](ST x) { return x * 2.5f + 1.0f; }, TensorSpec({8}, f32));
  std::string r = roles(g);
  EXPECT_EQ(count(r, "full:M"), 2u) << r;
  EXPECT_NE(r.find("add:R"), std::string::npos) << r;
  std::string text = lower(g, "mlir").text();
  EXPECT_EQ(count(text, "linalg.generic"), 1u) << text;
  EXPECT_EQ(count(text, "linalg.fill"), 0u) << text;
  expect_like_interpreter(g, {ramp({8}, 0.25, -1.0)}, true);
}

TEST(MlirFusion, ACheapValueIsRecomputedInEachLoopAnExpensiveOneStored) {
  REQUIRE_MLIR();
  // `m` (a compare) is read by two loops that end in math calls: recomputed in both. `s` (a sine) read by two
  // loops is a root of its own, stored once.
  Graph g = trace(
      [](ST x, ST y) {
        ST m = greater(x, y);
        ST s = sin(y);
        return std::vector<ST>{cos(where(m, x, s)), exp(where(m, s, x))};
      },
      TensorSpec({64}, f32), TensorSpec({64}, f32));
  EXPECT_EQ(roles(g), "greater:M sin:R select:M cos:R select:M exp:R return:A");
  EXPECT_EQ(loop_of(g, "cos"), "greater select cos");
  EXPECT_EQ(loop_of(g, "exp"), "greater select exp");
  std::string text = lower(g, "mlir").text();
  EXPECT_EQ(count(text, "linalg.generic"), 3u) << text;
  EXPECT_EQ(count(text, "arith.cmpf ogt"), 2u) << text;
  EXPECT_EQ(count(text, "math.sin"), 1u) << text;
  expect_like_interpreter(g, {ramp({64}, 0.07, -1.5), ramp({64}, -0.05, 1.0)}, false);
}

TEST(MlirFusion, ValuesReadByOtherOpsOrReturnedAreStored) {
  REQUIRE_MLIR();
  // exp's value is returned and read by a reduction; tanh's only by the loop after it.
  Graph g = trace(
      [](ST x) {
        ST e = exp(x);
        ST t = tanh(x);
        return std::vector<ST>{e, sum(e, {1}), t + 1.0f};
      },
      TensorSpec({5, 7}, f32));
  std::string r = roles(g);
  EXPECT_NE(r.find("exp:R"), std::string::npos) << r;
  EXPECT_NE(r.find("tanh:M"), std::string::npos) << r;
  EXPECT_NE(r.find("reduce_sum:A"), std::string::npos) << r;
  expect_like_interpreter(g, {ramp({5, 7}, 0.03, -0.8)}, false);
}

TEST(MlirFusion, ALoopOnlyAReductionReadsRunsInsideTheReduction) {
  REQUIRE_MLIR();
  // A program's prediction and its loss: the chain feeding the reduction is computed in the reduction's own loop.
  Graph g = trace([](ST x, ST y) { return mean(square(tanh(x) - y)); }, TensorSpec({256}, f32), TensorSpec({256}, f32));
  EXPECT_EQ(roles(g), "tanh:M subtract:M square:F reduce_mean:A return:A");
  std::string text = lower(g, "mlir").text();
  EXPECT_EQ(count(text, "linalg.generic"), 2u) << text;  // the reduction, and mean's division of its sum
  EXPECT_EQ(count(text, "iterator_types = [\"reduction\"]"), 1u) << text;
  EXPECT_EQ(count(text, "%fed"), 0u) << text;  // the placeholder never reaches the text
  expect_like_interpreter(g, {ramp({256}, 0.03, -0.7), ramp({256}, -0.02, 0.4)}, false);
}

TEST(MlirFusion, AReductionReadsItsFusedLoopsInputsThroughComposedMaps) {
  REQUIRE_MLIR();
  // x (4, 8) times a row r (8) plus a column c (4, 1), summed over axis 1 and over axis 0 (keepdims): the loop's
  // inputs keep their broadcasts inside each reduction. Integer-valued floats: every sum is exact, whatever its
  // order, so the results equal the interpreter's bit for bit.
  Graph g = trace(
      [](ST x, ST r, ST c) {
        return std::vector<ST>{sum(x * r + c, {1}), sum(x * r - c, {0}, true)};
      },
      TensorSpec({4, 8}, f32), TensorSpec({8}, f32), TensorSpec({4, 1}, f32));
  std::string r = roles(g);
  EXPECT_EQ(count(r, ":F"), 2u) << r;
  std::string text = lower(g, "mlir").text();
  EXPECT_NE(text.find("affine_map<(d0, d1) -> (d1)>"), std::string::npos) << text;
  EXPECT_NE(text.find("affine_map<(d0, d1) -> (d0, 0)>"), std::string::npos) << text;
  std::vector<float> x(32), row(8), col(4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<float>(i) - 2.0f;
  for (size_t i = 0; i < col.size(); ++i) col[i] = static_cast<float>(5 * i);
  expect_like_interpreter(
      g, {Tensor::from_vector(x, {4, 8}), Tensor::from_vector(row, {8}), Tensor::from_vector(col, {4, 1})}, true);
}

TEST(MlirFusion, AnOperandOfAnotherShapeIsReadThroughABroadcast) {
  REQUIRE_MLIR();
  Graph g = trace([](ST row, ST m) { return (row * row) * m + m; }, TensorSpec({3}, f32), TensorSpec({4, 3}, f32));
  // row * row has shape (3): its own loop, read by the (4, 3) loop through the map (d0, d1) -> (d1)
  EXPECT_EQ(roles(g), "multiply:R multiply:M add:R return:A");
  std::string text = lower(g, "mlir").text();
  EXPECT_EQ(count(text, "linalg.generic"), 2u) << text;
  EXPECT_NE(text.find("affine_map<(d0, d1) -> (d1)>"), std::string::npos) << text;
  expect_like_interpreter(g, {ramp({3}, 0.5, -0.7), ramp({4, 3}, 0.25, -1.0)}, true);
}

TEST(MlirFusion, AValueARegionReadsIsStored) {
  REQUIRE_MLIR();
  Graph g = trace(
      [](ST x) {
        ST a = exp(x);
        ST c = fori_loop(
            0, 3, [&](const ST&, const ST& v) { return v * a; }, x);
        return c * 2.0f;
      },
      TensorSpec({8}, f32));
  std::string r = roles(g);
  EXPECT_EQ(r.substr(0, 5), "exp:R") << r;
  expect_like_interpreter(g, {ramp({8}, 0.1, -0.4)}, false);
}

TEST(MlirFusion, LongChainsSplitAtTheLoopSizeCap) {
  REQUIRE_MLIR();
  // 700 arithmetic ops in one chain: at most 256 to a loop; integer-valued floats, so every step is exact and
  // the fused loops must equal the interpreter bit for bit.
  Graph g = trace(
      [](ST x) {
        ST v = x;
        for (int k = 0; k < 350; ++k) v = (v * 3.0f) - (v + v);
        return v;
      },
      TensorSpec({100}, f32));
  FusionPlan plan = mlir_backend::plan_fusion(g.main().entry());
  size_t loops = 0, biggest = 0;
  for (size_t k = 0; k < plan.role.size(); ++k)
    if (plan.role[k] == FusionPlan::Role::Root) {
      ++loops;
      biggest = std::max(biggest, plan.members[k].size());
    }
  EXPECT_GE(loops, 3u);
  EXPECT_LE(biggest, 256u);
  std::vector<float> x(100);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i) - 50);
  expect_like_interpreter(g, {Tensor::from_vector(x, {100})}, true);
}

TEST(MlirFusion, MixedDtypesAndBoolsInOneLoopAreExact) {
  REQUIRE_MLIR();
  // float16 arithmetic (float32 inside, rounded once per op), compares, bool logic, int conversions: all in
  // one loop, bit for bit the interpreter's.
  Graph g = trace(
      [](ST x, ST n) {
        ST h = convert(x, f16);
        ST k = h * h + h;
        ST big = logical_and(greater(k, 0.5f), less(n, 7));
        ST i = convert(k, i32) + n;
        return std::vector<ST>{where(big, convert(k, f32), x), i};
      },
      TensorSpec({2, 50}, f32), TensorSpec({2, 50}, i32));
  std::string text = lower(g, "mlir").text();
  EXPECT_LE(count(text, "linalg.generic"), 3u) << text;
  std::vector<int32_t> n(100);
  for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<int32_t>(i % 13);
  expect_like_interpreter(g, {ramp({2, 50}, 0.173, -3.0), Tensor::from_vector(n, {2, 50})}, true);
}

TEST(MlirFusion, SymbolicExtentsFuse) {
  REQUIRE_MLIR();
  Graph g = trace([](ST a, ST b) { return exp(a) * b + a; }, TensorSpec({Dim("N")}, f32), TensorSpec({Dim("N")}, f32));
  EXPECT_EQ(roles(g), "exp:M multiply:M add:R return:A");
  for (int64_t n : {1, 17, 1000}) expect_like_interpreter(g, {ramp({n}, 0.02, -0.5), ramp({n}, -0.03, 0.7)}, false);
}

TEST(MlirFusion, AReductionOfASymbolicExtentReadsItsFusedLoop) {
  REQUIRE_MLIR();
  Graph g = trace([](ST a, ST b) { return mean(exp(a) * b, {0}); }, TensorSpec({Dim("N"), 3}, f32),
                  TensorSpec({Dim("N"), 3}, f32));
  EXPECT_EQ(roles(g), "exp:M multiply:F reduce_mean:A return:A");
  for (int64_t n : {1, 17, 400})
    expect_like_interpreter(g, {ramp({n, 3}, 0.02, -0.5), ramp({n, 3}, -0.03, 0.7)}, false);
}
#endif

}  // namespace
}  // namespace evoxc
