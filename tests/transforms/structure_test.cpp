// The structure and layout families' batching, jvp and transpose rules: generated checks on every op's catalogue
// sample (vmap against a loop, jvp against finite differences, vjp against jvp) and hand cases for each pad mode,
// strided slices, negative axes, symbolic extents and batches, in/out axes other than 0, and the size of vmap's graph.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "evoxc/transforms/rules.h"
#include "ops/ops_util.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

using testing::random_inputs;
using testing::random_tensor;
using ST = SymbolicTensor;
using Ints = std::vector<int64_t>;

const std::vector<std::string> kFamily = {
    "reshape", "transpose", "broadcast_in_dim", "expand_dims", "squeeze", "slice", "concatenate", "pad",
    "tril",    "triu",      "diagonal",         "flip",        "roll",    "tile",  "repeat",      "one_hot"};

TensorSpec f64(std::vector<DimExpr> dims) { return TensorSpec(Shape(std::move(dims)), DType::F64); }

// Random inputs with the symbols bound as given (testing::random_inputs binds every symbolic
// extent to one number, so an input of extent 2*N+2 would not match one of extent N).
std::vector<Tensor> inputs_with(const Graph& g, const DimBindings& dims, uint64_t seed) {
  std::vector<Tensor> ex;
  for (const TensorSpec& s : g.input_specs()) ex.push_back(random_tensor(s.shape.evaluate(dims), s.dtype, seed++));
  return ex;
}

// Every input mapped, then (for several inputs) each input alone mapped with the others shared.
void expect_vmap_all_ways(const Graph& g, const std::vector<Tensor>& ex) {
  testing::expect_vmap_matches_loop(g, ex, std::vector<bool>(ex.size(), true));
  if (ex.size() < 2) return;
  for (size_t i = 0; i < ex.size(); ++i) {
    SCOPED_TRACE("only input " + std::to_string(i) + " mapped");
    std::vector<bool> one(ex.size(), false);
    one[i] = true;
    testing::expect_vmap_matches_loop(g, ex, one);
  }
}

// vmap (every way), jvp against finite differences and vjp against jvp, on a float64 graph.
void expect_all_rules(const Graph& g, const std::vector<Tensor>& ex) {
  expect_vmap_all_ways(g, ex);
  testing::expect_jvp_matches_fd(g, ex);
  testing::expect_vjp_matches_jvp(g, ex);
}

void expect_all_rules(const Graph& g) { expect_all_rules(g, random_inputs(g, 11)); }

// ---------------------------------------------------------------- generated from the catalogue

TEST(StructureRules, EveryOpHasItsRules) {
  for (const std::string& name : kFamily) {
    SCOPED_TRACE(name);
    const OpDef& def = get_op(name);
    EXPECT_TRUE(transforms::batch_rules().has(def.id));
    EXPECT_TRUE(transforms::jvp_rules().has(def.id));
    bool linear = !def.linear_operands.empty() || !def.linear_each.empty();
    EXPECT_EQ(transforms::transpose_rules().has(def.id), linear);
  }
}

TEST(StructureRules, VmapMatchesLoopForEveryOpAndDtype) {
  int checked = 0;
  for (const std::string& name : kFamily) {
    const OpDef& def = get_op(name);
    for (DType t : {DType::F32, DType::F64, DType::I32, DType::Bool}) {
      if (!dtype_in_class(t, def.operand_dtypes)) continue;
      SCOPED_TRACE(name + " on " + std::string(dtype_name(t)));
      Graph g = testing::one_op_graph(def, testing::sample_call(def, t));
      expect_vmap_all_ways(g, random_inputs(g, 5));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 15 * 4 + 1);
}

TEST(StructureRules, JvpMatchesFiniteDifferencesAndVjpMatchesJvp) {
  int checked = 0;
  for (const std::string& name : kFamily) {
    const OpDef& def = get_op(name);
    if (!dtype_in_class(DType::F64, def.operand_dtypes)) continue;  // one_hot: below
    SCOPED_TRACE(name);
    Graph g = testing::one_op_graph(def, testing::sample_call(def, DType::F64));
    std::vector<Tensor> p = random_inputs(g, 5);
    testing::expect_jvp_matches_fd(g, p);
    testing::expect_vjp_matches_jvp(g, p);
    ++checked;
  }
  EXPECT_EQ(checked, 15);
}

TEST(StructureRules, OneHotHasAZeroTangentAndNoGradient) {
  Graph g = trace([](const ST& i) { return one_hot(i, 4, DType::F64); }, TensorSpec(Shape{3}, DType::I32));
  Tensor idx = testing::make_tensor({2, -1, 3}, {3}, DType::I32);
  std::vector<Tensor> out = testing::run_flat(jvp(g), {idx});
  ASSERT_EQ(out.size(), 2u);
  testing::expect_close(out[1], Tensor::zeros({3, 4}, DType::F64), 0, 0, "one_hot tangent");
  // A float computation downstream of one_hot still differentiates in its own inputs.
  Graph h = trace([](const ST& i, const ST& w) { return one_hot(i, 4, DType::F64) * w; },
                  TensorSpec(Shape{3}, DType::I32), f64({3, 4}));
  std::vector<Tensor> p{idx, random_tensor({3, 4}, DType::F64, 3)};
  testing::expect_vjp_matches_jvp(h, p);
  expect_vmap_all_ways(h, p);
}

// ---------------------------------------------------------------- pad: every mode

TEST(StructureRules, PadConstantWithABatchedPaddingValue) {
  // The padding value is an input: vmap maps it alone (one value per batch element), with x, and x alone.
  Graph g = trace(
      [](const ST& x, const ST& v) {
        return pad(x, {{1, 2}, {0, 3}}, "constant", v);
      },
      f64({4, 3}), f64({}));
  expect_all_rules(g);
}

TEST(StructureRules, PadGeneralInteriorAndNegativeWidths) {
  Graph g = trace(
      [](const ST& x, const ST& v) {
        return pad_general(x, v, {-1, 2}, {1, -1}, {2, 1});
      },
      f64({4, 3}), f64({}));
  expect_all_rules(g);
  // Cropping more than the low side leaves, and interior padding on a rank-3 operand.
  Graph h = trace(
      [](const ST& x, const ST& v) {
        return pad_general(x, v, {-3, 0, 1}, {2, -2, 0}, {0, 1, 3});
      },
      f64({4, 5, 2}), f64({}));
  expect_all_rules(h);
}

TEST(StructureRules, PadEdgeReflectSymmetric) {
  for (const char* mode : {"edge", "reflect", "symmetric"}) {
    SCOPED_TRACE(mode);
    // Widths beyond the extent: reflect and symmetric repeat periodically.
    Graph g = trace([mode](const ST& x) { return pad(x, {{4, 5}, {2, 1}}, mode); }, f64({3, 4}));
    expect_all_rules(g);
    // Negative widths crop; a unit axis.
    Graph h = trace([mode](const ST& x) { return pad(x, {{-1, 2}, {3, -1}, {2, 2}}, mode); }, f64({3, 4, 1}));
    expect_all_rules(h);
  }
}

TEST(StructureRules, PadGradientsByHand) {
  // The vjp of a cotangent of ones (the gradient of the sum): for x, 1 everywhere (every element
  // kept); for v, the number of padded positions.
  Graph g = trace(
      [](const ST& x, const ST& v) {
        return pad_general(x, v, {1, 0}, {2, 1}, {1, 0});
      },
      f64({3, 2}), f64({}));
  // Result (1 + 3 + 2 + 2) x (2 + 1) = 24 positions, 6 from x.
  std::vector<Tensor> out = testing::run_flat(
      vjp(g), {random_tensor({3, 2}, DType::F64, 1), Tensor::scalar(0.5), Tensor::full({8, 3}, 1.0, DType::F64)});
  ASSERT_EQ(out.size(), 3u);
  testing::expect_close(out[1], Tensor::full({3, 2}, 1.0, DType::F64), 0, 0, "d/dx");
  EXPECT_EQ(out[2].get_as_double(0), 18.0);
  // edge: the first element is read 1 + 3 times, the last 1 + 2 times.
  Graph e = trace([](const ST& x) { return pad(x, {{3, 2}}, "edge"); }, f64({4}));
  std::vector<Tensor> ge =
      testing::run_flat(vjp(e), {random_tensor({4}, DType::F64, 2), Tensor::full({9}, 1.0, DType::F64)});
  ASSERT_EQ(ge.size(), 2u);
  testing::expect_close(ge[1], testing::make_tensor({4, 1, 1, 3}, {4}, DType::F64), 0, 0, "edge gradient");
  // reflect over a 3-element axis with 4 on each side: the result reads 0 1 2 1 | 0 1 2 | 1 0 1 2.
  Graph r = trace([](const ST& x) { return pad(x, {{4, 4}}, "reflect"); }, f64({3}));
  std::vector<Tensor> gr =
      testing::run_flat(vjp(r), {random_tensor({3}, DType::F64, 2), Tensor::full({11}, 1.0, DType::F64)});
  testing::expect_close(gr[1], testing::make_tensor({3, 5, 3}, {3}, DType::F64), 0, 0, "reflect gradient");
}

// ---------------------------------------------------------------- slices, axes, layout ops

TEST(StructureRules, StridedSlices) {
  Graph g = trace([](const ST& x) { return slice(x, {1, 0}, {7, 5}, {3, 2}); }, f64({7, 5}));
  expect_all_rules(g);
  Graph h = trace([](const ST& x) { return slice(x, {2, 1, 0}, {6, 4, 3}, {4, 1, 5}); }, f64({6, 5, 3}));
  expect_all_rules(h);
}

TEST(StructureRules, NegativeAxes) {
  std::vector<std::pair<const char*, Graph>> cases;
  cases.emplace_back("expand_dims", trace([](const ST& x) { return expand_dims(x, {-1, 0}); }, f64({3, 2})));
  cases.emplace_back("squeeze", trace([](const ST& x) { return squeeze(x, {-2}); }, f64({3, 1, 2})));
  cases.emplace_back("flip", trace([](const ST& x) { return flip(x, {-1, 0}); }, f64({3, 2, 4})));
  cases.emplace_back("roll", trace([](const ST& x) { return roll(x, Ints{2, -5}, Ints{-1, 0}); }, f64({3, 4})));
  cases.emplace_back("concatenate", trace(
                                        [](const ST& x, const ST& y) {
                                          return concatenate({x, y, x}, -1);
                                        },
                                        f64({3, 2}), f64({3, 5})));
  cases.emplace_back("repeat", trace([](const ST& x) { return repeat(x, 3, -1); }, f64({3, 2})));
  cases.emplace_back("repeat counts", trace([](const ST& x) { return repeat(x, Ints{1, 0, 3}, -2); }, f64({3, 2})));
  cases.emplace_back("diagonal", trace([](const ST& x) { return diagonal(x, 1, -1, 0); }, f64({3, 2, 4})));
  cases.emplace_back("diagonal below", trace([](const ST& x) { return diagonal(x, -2, 1, -1); }, f64({2, 5, 3})));
  cases.emplace_back("tril", trace([](const ST& x) { return tril(x, -1); }, f64({2, 3, 4})));
  cases.emplace_back("triu", trace([](const ST& x) { return triu(x, 2); }, f64({4, 3})));
  cases.emplace_back("tile", trace([](const ST& x) { return tile(x, {2, 1, 3}); }, f64({3, 2})));
  cases.emplace_back("transpose", trace([](const ST& x) { return transpose(x, Ints{2, 0, 1}); }, f64({3, 2, 4})));
  cases.emplace_back("broadcast", trace([](const ST& x) { return broadcast_to(x, Shape{2, 3, 4}); }, f64({3, 1})));
  cases.emplace_back("reshape", trace([](const ST& x) { return reshape(x, Shape{2, -1}); }, f64({3, 4})));
  for (const auto& [name, g] : cases) {
    SCOPED_TRACE(name);
    expect_all_rules(g);
  }
}

TEST(StructureRules, EmptyResults) {
  std::vector<std::pair<const char*, Graph>> cases;
  cases.emplace_back("diagonal past the end", trace([](const ST& x) { return diagonal(x, 5, 0, 1); }, f64({2, 3})));
  cases.emplace_back("diagonal below the start", trace([](const ST& x) { return diagonal(x, -3, 0, 1); }, f64({2, 3})));
  cases.emplace_back("slice", trace([](const ST& x) { return slice(x, {3, 1}, {3, 3}, {2, 1}); }, f64({4, 3})));
  cases.emplace_back("tile", trace([](const ST& x) { return tile(x, {0, 2}); }, f64({2, 3})));
  cases.emplace_back("repeat", trace([](const ST& x) { return repeat(x, 0, 1); }, f64({2, 3})));
  for (const auto& [name, g] : cases) {
    SCOPED_TRACE(name);
    expect_all_rules(g);
  }
}

// ---------------------------------------------------------------- symbolic extents and batches

TEST(StructureRules, SymbolicBatchRunsAtEveryBatchSize) {
  Graph g = trace(
      [](const ST& x, const ST& v) {
        return flip(pad(x, {{1, 0}, {2, 1}}, "constant", v), {1});
      },
      f64({2, 3}), f64({}));
  Graph vg = vectorize(g, AxisTree(0), AxisTree(0));
  ASSERT_FALSE(vg.input_specs()[0].shape[0].is_const()) << "the batch extent should be a symbol";
  for (int64_t n : {1, 2, 5}) {
    SCOPED_TRACE(n);
    testing::expect_vmap_matches_loop(g, random_inputs(g, 3), {true, true}, n);
  }
}

TEST(StructureRules, SymbolicOperandExtents) {
  const DimExpr N = Dim("N"), M = Dim("M");
  auto big = std::numeric_limits<int64_t>::max();
  std::vector<std::pair<const char*, Graph>> cases;
  // Concatenate at a symbolic offset: the transpose cannot slice there.
  cases.emplace_back("concatenate", trace(
                                        [](const ST& x, const ST& y) {
                                          return concatenate({x, y, x}, 0);
                                        },
                                        f64({N, 2}), f64({M, 2})));
  cases.emplace_back("slice", trace([big](const ST& x) { return slice(x, {1, 1}, {big, 3}, {2, 1}); }, f64({N, 3})));
  cases.emplace_back("diagonal", trace([](const ST& x) { return diagonal(x, 0, 0, 1); }, f64({N, M})));
  cases.emplace_back("pad", trace(
                                [](const ST& x, const ST& v) {
                                  return pad_general(x, v, {1, -1}, {-1, 2}, {2, 0});
                                },
                                f64({N, 3}), f64({})));
  cases.emplace_back("reflect", trace([](const ST& x) { return pad(x, {{2, 3}, {1, 0}}, "reflect"); }, f64({N, 3})));
  cases.emplace_back("reshape", trace([N](const ST& x) { return reshape(x, Shape{N * 2, 2}); }, f64({N, 4})));
  cases.emplace_back("tile", trace([](const ST& x) { return tile(x, {2, 3}); }, f64({N, 2})));
  cases.emplace_back("repeat", trace([](const ST& x) { return repeat(x, 2, 0); }, f64({N, 2})));
  cases.emplace_back("roll", trace([](const ST& x) { return roll(x, 4, 0); }, f64({N, 2})));
  for (const auto& [name, g] : cases) {
    SCOPED_TRACE(name);
    // N = 3 and M = 5 (different so a swapped offset shows).
    expect_all_rules(g, inputs_with(g, {{"N", 3}, {"M", 5}}, 21));
  }
}

// ---------------------------------------------------------------- transforms of transforms

TEST(StructureRules, VmapAndJvpOfTheVjpGraphs) {
  // The transposes emit structure and elementwise ops only for these ops (pad's value cotangent
  // and the sums of broadcast, tile and repeat use reduce_sum; pad's other modes scatter), so
  // their vjp graphs vectorize and differentiate with this family's rules again.
  const DimExpr N = Dim("N");
  std::vector<std::pair<const char*, Graph>> cases;
  cases.emplace_back("diagonal", trace([](const ST& x) { return diagonal(x, 1, 2, 0); }, f64({3, 2, 4})));
  cases.emplace_back("slice", trace([](const ST& x) { return slice(x, {1, 0}, {7, 5}, {3, 2}); }, f64({7, 5})));
  cases.emplace_back("pad", trace(
                                [](const ST& x) {
                                  return pad_general(x, 0.0, {2, -1}, {-1, 1}, {1, 2});
                                },
                                f64({4, 3})));
  cases.emplace_back("concatenate", trace(
                                        [](const ST& x, const ST& y) {
                                          return concatenate({x, y, x}, 0);
                                        },
                                        f64({N, 2}), f64({2, 2})));
  cases.emplace_back("tril roll flip",
                     trace([](const ST& x) { return flip(roll(tril(x, 1), 2, 1), {0}); }, f64({3, 4})));
  cases.emplace_back("reshape transpose", trace(
                                              [](const ST& x) {
                                                return transpose(reshape(x, Shape{2, 2, 3}));
                                              },
                                              f64({4, 3})));
  for (const auto& [name, g] : cases) {
    SCOPED_TRACE(name);
    for (const Graph& t : {vjp(g), jvp(g)}) {
      std::vector<Tensor> ex = inputs_with(t, {{"N", 3}}, 31);
      testing::expect_vmap_matches_loop(t, ex, std::vector<bool>(ex.size(), true));
      testing::expect_jvp_matches_fd(t, ex);
    }
  }
}

// The other transposes emit reduce_sum (broadcast, tile, repeat, pad's value) or scatter (pad's
// edge/reflect/symmetric modes, repeat with a count per element): their second-order checks need
// those families' rules too, and are skipped without them.
bool has_all_rules(const char* name) {
  uint32_t id = get_op(name).id;
  return transforms::batch_rules().has(id) && transforms::jvp_rules().has(id) && transforms::transpose_rules().has(id);
}

TEST(StructureRules, SecondOrderThroughReduceAndScatter) {
  if (!has_all_rules("reduce_sum") || !has_all_rules("scatter"))
    GTEST_SKIP() << "reduce_sum or scatter has no rules yet";
  std::vector<std::pair<const char*, Graph>> cases;
  cases.emplace_back("reflect", trace([](const ST& x) { return pad(x, {{4, 5}, {2, 1}}, "reflect"); }, f64({3, 4})));
  cases.emplace_back("edge", trace([](const ST& x) { return pad(x, {{1, 2}, {2, 1}}, "edge"); }, f64({3, 4})));
  cases.emplace_back("pad value", trace(
                                      [](const ST& x, const ST& v) {
                                        return pad_general(x, v, {-1, 2}, {1, -1}, {2, 1});
                                      },
                                      f64({4, 3}), f64({})));
  cases.emplace_back("broadcast", trace([](const ST& x) { return broadcast_to(x, Shape{2, 3, 4}); }, f64({3, 1})));
  cases.emplace_back("tile", trace([](const ST& x) { return tile(x, {2, 3}); }, f64({3, 2})));
  cases.emplace_back("repeat", trace([](const ST& x) { return repeat(x, 2, 1); }, f64({3, 2})));
  cases.emplace_back("repeat counts", trace([](const ST& x) { return repeat(x, Ints{1, 0, 3}, 0); }, f64({3, 2})));
  for (const auto& [name, g] : cases) {
    SCOPED_TRACE(name);
    for (const Graph& t : {vjp(g), jvp(g)}) {
      std::vector<Tensor> ex = random_inputs(t, 31);
      testing::expect_vmap_matches_loop(t, ex, std::vector<bool>(ex.size(), true));
      testing::expect_jvp_matches_fd(t, ex);
      testing::expect_vjp_matches_jvp(t, ex);
    }
  }
  // f(a, b, c) = sum(symmetric pad (2, 1) * edge pad (1, 2)) = [b a a b c c] . [a a b c c c]
  //            = a^2 + 2ab + bc + 2c^2, whose Hessian is [[2, 2, 0], [2, 0, 1], [0, 1, 4]].
  Graph f = trace([](const ST& x) { return sum(pad(x, {{2, 1}}, "symmetric") * pad(x, {{1, 2}}, "edge")); }, f64({3}));
  std::vector<Tensor> h = testing::run_flat(hessian(f), {random_tensor({3}, DType::F64, 4)});
  ASSERT_EQ(h.size(), 1u);
  testing::expect_close(h[0], testing::make_tensor({2, 2, 0, 2, 0, 1, 0, 1, 4}, {3, 3}, DType::F64), 0, 1e-12,
                        "hessian");
}

// ---------------------------------------------------------------- in_axes / out_axes

// Element b of a float64 tensor along `axis`.
Tensor take_at(const Tensor& t, int64_t axis, int64_t b) {
  Ints shape = t.shape(), out_shape = shape;
  out_shape.erase(out_shape.begin() + axis);
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
  int64_t n = shape[static_cast<size_t>(axis)], outer = t.numel() / std::max<int64_t>(n * inner, 1);
  std::vector<double> v = testing::values_of(t), r;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) r.push_back(v[static_cast<size_t>((o * n + b) * inner + i)]);
  return testing::make_tensor(r, out_shape, DType::F64);
}

TEST(StructureRules, VmapWithInAndOutAxesOtherThanZero) {
  // x mapped on its axis 1, y shared (None); outputs mapped at axis 2 and -1, and one batch-free output (None).
  Graph g = trace(
      [](const ST& x, const ST& y) {
        ST a = concatenate({pad(x, {{1, 0}, {0, 2}}, "reflect"), broadcast_to(y, Shape{3, 4})}, 0);
        return std::make_tuple(a, diagonal(tile(x, {1, 2}), 1, 0, 1), flip(y, {0}));
      },
      f64({2, 2}), f64({4}));
  const int64_t n = 3;
  Tensor xb = random_tensor({2, n, 2}, DType::F64, 7), y = random_tensor({4}, DType::F64, 8);
  Graph vg = vectorize(g, AxisTree::tuple({AxisTree(1), AxisTree::none()}),
                       AxisTree::tuple({AxisTree(2), AxisTree(-1), AxisTree::none()}));
  std::vector<Tensor> got = testing::run_flat(vg, {xb, y});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].shape(), (Ints{6, 4, n}));
  EXPECT_EQ(got[1].shape(), (Ints{2, n}));
  EXPECT_EQ(got[2].shape(), (Ints{4}));
  for (int64_t b = 0; b < n; ++b) {
    std::vector<Tensor> want = testing::run_flat(g, {take_at(xb, 1, b), y});
    testing::expect_close(take_at(got[0], 2, b), want[0], 0, 0, "output 0 row " + std::to_string(b));
    testing::expect_close(take_at(got[1], 1, b), want[1], 0, 0, "output 1 row " + std::to_string(b));
    testing::expect_close(got[2], want[2], 0, 0, "output 2");
  }
}

// ---------------------------------------------------------------- graph size

size_t main_ops(const Graph& g) { return g.main().entry().operations().size(); }

TEST(StructureRules, VmapEmitsAConstantNumberOfOpsPerOp) {
  // Two ops, one of them pad with a batched padding value (the costliest rule): the vectorized
  // graph's size does not grow with the batch.
  Graph g = trace(
      [](const ST& x, const ST& v) {
        return tile(pad(x, {{1, 1}, {0, 2}}, "constant", v), {2, 1});
      },
      f64({3, 2}), f64({}));
  size_t small = main_ops(vectorize(g, AxisTree(0), AxisTree(0), DimExpr(2)));
  size_t large = main_ops(vectorize(g, AxisTree(0), AxisTree(0), DimExpr(500)));
  size_t symbolic = main_ops(vectorize(g));
  EXPECT_EQ(small, large);
  EXPECT_EQ(small, symbolic);
  EXPECT_LE(small, 12u) << "a vmap of 2 ops should stay a handful of ops";
  // The plain two-op chain with every operand batched stays at its two ops (plus the return).
  Graph h = trace([](const ST& x) { return roll(slice(x, {0, 1}, {3, 2}), 1, 0); }, f64({3, 2}));
  EXPECT_LE(main_ops(vectorize(h, AxisTree(0), AxisTree(0), DimExpr(64))), 3u);
}

}  // namespace
}  // namespace evoxc
