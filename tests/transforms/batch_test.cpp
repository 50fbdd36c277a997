// batch_functions: random expression-tree populations merged and checked bit for bit against separate runs; API errors.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>

#include "../../bench/gp_population.h"
#include "evoxc/evoxc.h"
#include "expect_error.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

using testing::random_tensor;
using testing::row;
using testing::run_flat;
using testing::stack;

// A random expression tree over x (mapped, per program) and y (shared) with scalar constants.
struct TreeGen {
  std::mt19937_64 rng;
  DType dtype;
  int max_depth;

  SymbolicTensor leaf(const SymbolicTensor& x, const SymbolicTensor& y) {
    switch (rng() % 3) {
      case 0: return x;
      case 1: return y;
      default: {
        double c = static_cast<double>(static_cast<int64_t>(rng() % 19) - 9) / (is_float(dtype) ? 4.0 : 1.0);
        return add(fill(Shape(), Operand(is_float(dtype) ? Operand(c) : Operand(static_cast<int64_t>(c))), dtype), 0);
      }
    }
  }
  SymbolicTensor node(const SymbolicTensor& x, const SymbolicTensor& y, int depth) {
    if (depth >= max_depth || (depth > 0 && rng() % 4 == 0)) return leaf(x, y);
    bool fl = is_float(dtype);
    int pick = static_cast<int>(rng() % (fl ? 9 : 5));
    SymbolicTensor a = node(x, y, depth + 1);
    switch (pick) {
      case 0: return add(a, node(x, y, depth + 1));
      case 1: return subtract(a, node(x, y, depth + 1));
      case 2: return multiply(a, node(x, y, depth + 1));
      case 3: return maximum(a, node(x, y, depth + 1));
      case 4: return minimum(a, node(x, y, depth + 1));
      case 5: return sin(a);
      case 6: return tanh(a);
      case 7: return divide(a, add(abs(node(x, y, depth + 1)), 1.0));  // protected division
      default: return cos(a);
    }
  }
};

Graph random_program(uint64_t seed, DType dtype, int depth, const std::vector<int64_t>& shape) {
  TreeGen gen{std::mt19937_64(seed), dtype, depth};
  Shape s = Shape::from_ints(shape);
  return trace(
      [&](const SymbolicTensor& x, const SymbolicTensor& y) {
        SymbolicTensor r = gen.node(x, y, 0);
        return r.rank() == x.rank() ? r : broadcast_to(r, x.shape());  // a tree of constants only
      },
      TensorSpec(s, dtype), TensorSpec(s, dtype));
}

bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// Row i of the merged run equals program i run alone, bit for bit.
void expect_rows_match(const std::vector<Graph>& progs, const BatchOptions& opts, uint64_t seed,
                       const std::string& what) {
  BatchResult r = batch_functions(progs, opts);
  TensorSpec s = progs.front().input_specs()[0];
  std::vector<int64_t> shape = s.shape.to_ints();
  std::vector<Tensor> xs;
  for (size_t i = 0; i < progs.size(); ++i) xs.push_back(random_tensor(shape, s.dtype, seed + i, -3, 3));
  Tensor y = random_tensor(shape, s.dtype, seed + 1000, -3, 3);
  Tensor merged = run_flat(r.graph, {stack(xs), y})[0];
  for (size_t i = 0; i < progs.size(); ++i) {
    Tensor alone = run_flat(progs[i], {xs[i], y})[0];
    ASSERT_TRUE(bit_equal(row(merged, static_cast<int64_t>(i)), alone))
        << what << ": row " << i << " differs from program " << i << " run alone\n"
        << progs[i].to_string() << "\nmerged:\n"
        << r.graph.to_string();
  }
}

TEST(BatchFunctions, RandomPopulationsAreBitExactForEveryKnob) {
  for (DType dt : {DType::F32, DType::F64, DType::I32}) {
    for (int depth : {1, 3, 6, 12}) {
      std::vector<Graph> progs;
      for (uint64_t i = 0; i < 12; ++i) progs.push_back(random_program(i * 7919 + depth, dt, depth, {5}));
      std::string what = std::string(dtype_name(dt)) + " depth " + std::to_string(depth);
      BatchOptions flat;
      flat.axes = AxisTree::tuple({AxisTree(0), AxisTree()});
      expect_rows_match(progs, flat, 11, what + " flat");
      BatchOptions banded = flat;
      banded.bands = Bands::of(3);
      expect_rows_match(progs, banded, 12, what + " bands=3");
      BatchOptions switched = flat;
      switched.switch_ops = SwitchOps::elementwise();
      expect_rows_match(progs, switched, 13, what + " switch_ops");
      switched.alignment = Alignment::Occurrence;
      expect_rows_match(progs, switched, 17, what + " switch_ops alignment=occurrence");
      switched.alignment = Alignment::Auto;
      expect_rows_match(progs, switched, 18, what + " switch_ops alignment=auto");
      switched.bands = Bands::of(4);
      expect_rows_match(progs, switched, 14, what + " switch_ops bands=4 alignment=auto");
      BatchOptions automatic = flat;
      automatic.bands = Bands::autodetect();
      expect_rows_match(progs, automatic, 15, what + " bands=auto");
      // The fingerprint partition itself (chosen or not by the model): every row still exact.
      automatic.cost_model.dispatch_seconds = 1.0;
      expect_rows_match(progs, automatic, 16, what + " bands=auto (dispatch-bound model)");
    }
  }
}

TEST(BatchFunctions, IdenticalProgramsCollapseWithoutMuxes) {
  std::vector<Graph> progs;
  for (int i = 0; i < 8; ++i) progs.push_back(random_program(42, DType::F32, 6, {4}));
  BatchOptions o;
  o.axes = AxisTree::tuple({AxisTree(0), AxisTree()});
  BatchResult r = batch_functions(progs, o);
  EXPECT_EQ(r.report.muxes, 0);
  EXPECT_EQ(r.report.own_ops, 0);
  EXPECT_LE(r.report.emitted_ops, r.report.program_ops / 8 + 2) << r.report.to_string();
  expect_rows_match(progs, o, 3, "identical");
}

TEST(BatchFunctions, ConstantsStackIntoOneConstant) {
  std::vector<Graph> progs;
  for (int i = 0; i < 6; ++i)
    progs.push_back(trace([i](const SymbolicTensor& x) { return multiply(add(x, 0.5 * i), 1.0 + i); },
                          TensorSpec(Shape{3}, DType::F32)));
  BatchResult r = batch_functions(progs);
  EXPECT_EQ(r.report.muxes, 0) << r.report.to_string();
  EXPECT_LE(r.report.emitted_ops, 8) << r.graph.to_string();
  std::vector<Tensor> xs;
  for (int i = 0; i < 6; ++i) xs.push_back(random_tensor({3}, DType::F32, 100 + static_cast<uint64_t>(i)));
  Tensor merged = run_flat(r.graph, {stack(xs)})[0];
  for (int i = 0; i < 6; ++i)
    EXPECT_TRUE(bit_equal(row(merged, i), run_flat(progs[static_cast<size_t>(i)], {xs[static_cast<size_t>(i)]})[0]));
}

// Chains that differ only in which elementwise op sits at each position: one row_switch per
// position, no muxes, and the same arithmetic as the programs run one by one.
TEST(BatchFunctions, SwitchClassesCollapseSameSkeletonChains) {
  std::vector<Graph> progs;
  for (int i = 0; i < 16; ++i)
    progs.push_back(trace(
        [i](const SymbolicTensor& x, const SymbolicTensor& c) {
          SymbolicTensor y = x;
          for (int k = 0; k < 10; ++k) {
            int v = (i * 7 + k * 3) % 3;
            y = v == 0 ? add(y, c) : v == 1 ? multiply(y, c) : maximum(y, c);
            y = (i + k) % 2 ? tanh(y) : sin(y);
          }
          return y;
        },
        TensorSpec(Shape{8}, DType::F32), TensorSpec(Shape{1}, DType::F32)));
  BatchOptions o;
  o.axes = AxisTree::tuple({AxisTree(0), AxisTree()});
  o.switch_ops = SwitchOps::elementwise();
  BatchResult r = batch_functions(progs, o);
  EXPECT_EQ(r.report.muxes, 0) << r.report.to_string();
  EXPECT_LE(r.report.emitted_ops, 21) << r.graph.to_string();
  EXPECT_EQ(r.report.switched.size(), 20u);
  EXPECT_LE(r.report.cost_estimate.work, 1.1 * r.report.separate_cost.work) << r.report.to_string();
  int64_t rows = 0;
  for (const auto& v : r.report.switched.front().rows) rows += static_cast<int64_t>(v.size());
  EXPECT_EQ(rows, 16);
  std::vector<Tensor> xs;
  for (int i = 0; i < 16; ++i) xs.push_back(random_tensor({8}, DType::F32, 200 + static_cast<uint64_t>(i)));
  Tensor c = random_tensor({1}, DType::F32, 7);
  Tensor merged = run_flat(r.graph, {stack(xs), c})[0];
  for (int i = 0; i < 16; ++i)
    EXPECT_TRUE(bit_equal(row(merged, i), run_flat(progs[static_cast<size_t>(i)], {xs[static_cast<size_t>(i)], c})[0]));
}

// Two structures interleaved: "auto" groups each structure into a band (no muxes inside a band)
// when the model finds that cheaper, and puts the rows back in program order.
TEST(BatchFunctions, AutoBandsGroupByStructureAndKeepProgramOrder) {
  std::vector<Graph> progs;
  for (int i = 0; i < 12; ++i)
    progs.push_back(i % 2 ? random_program(5, DType::F32, 6, {4}) : random_program(9, DType::F32, 6, {4}));
  BatchOptions o;
  o.axes = AxisTree::tuple({AxisTree(0), AxisTree()});
  o.bands = Bands::autodetect();
  BatchResult r = batch_functions(progs, o);
  BatchOptions flat = o;
  flat.bands = Bands::none();
  BatchResult f = batch_functions(progs, flat);
  auto est = [&](const BatchReport& rep) {
    return static_cast<double>(rep.cost_estimate.dispatches) * o.cost_model.dispatch_seconds +
           rep.cost_estimate.work * o.cost_model.element_seconds;
  };
  EXPECT_LE(est(r.report), est(f.report)) << r.report.to_string() << "\n" << f.report.to_string();
  EXPECT_EQ(r.report.bands, 2) << r.report.to_string();
  expect_rows_match(progs, o, 21, "auto, two interleaved structures");
}

TEST(BatchFunctions, OverTraceFunctionsTakesMappedSpecs) {
  std::vector<TraceFunction> fns;
  for (int k = 0; k < 3; ++k)
    fns.push_back([k](const std::vector<TracedArg>& a) {
      SymbolicTensor x = std::get<SymbolicTensor>(a[0].leaf()), c = std::get<SymbolicTensor>(a[1].leaf());
      return Tree<SymbolicTensor>(tanh(add(multiply(x, c), static_cast<double>(k))));
    });
  BatchOptions o;
  o.axes = AxisTree::tuple({AxisTree(0), AxisTree()});
  BatchFunction merged = batch_functions(fns, o);
  BatchResult r = merged({arg_leaf(TensorSpec(Shape{3, 4}, DType::F32)), arg_leaf(TensorSpec(Shape(), DType::F32))});
  EXPECT_EQ(r.graph.input_specs()[0].shape, (Shape{3, 4}));
  EXPECT_EQ(r.report.programs, 3);
  EXPECT_EQ(r.report.muxes, 0);
  test::expect_error<TransformError>(
      [&] {
        merged({arg_leaf(TensorSpec(Shape{2, 4}, DType::F32)), arg_leaf(TensorSpec(Shape(), DType::F32))});
      },
      "there are 3 functions");
}

// The GP population (random trees of 17 nodes: add, sub, mul, protected div, sin, cos,
// tanh, protected log): the merged graph does no more arithmetic than the programs one by one
// (within 10%), for every band setting, and its rows are exact.
TEST(BatchFunctions, GpPopulationArithmeticStaysWithinTenPercent) {
  auto pop = bench::gp_population(20261201, 120, 17, 2);
  std::vector<Graph> progs;
  for (const auto& t : pop) progs.push_back(bench::gp_trace(t, 2, 64));
  for (Bands b : {Bands::none(), Bands::of(4), Bands::autodetect()}) {
    BatchOptions o;
    o.axes = AxisTree();
    o.bands = b;
    o.switch_ops = SwitchOps::elementwise();
    BatchResult r = batch_functions(progs, o);
    EXPECT_LE(r.report.cost_estimate.work, 1.1 * r.report.separate_cost.work) << r.report.to_string();
    std::vector<Tensor> in{random_tensor({64}, DType::F32, 1, -2, 2), random_tensor({64}, DType::F32, 2, -2, 2)};
    Tensor merged = run_flat(r.graph, in)[0];
    for (size_t i = 0; i < progs.size(); i += 17)
      EXPECT_TRUE(bit_equal(row(merged, static_cast<int64_t>(i)), run_flat(progs[i], in)[0])) << "program " << i;
  }
}

TEST(BatchFunctions, SignatureMismatchNamesProgramAndPath) {
  Graph a = trace([](const SymbolicTensor& x) { return sin(x); }, TensorSpec(Shape{3}, DType::F32));
  Graph b = trace([](const SymbolicTensor& x) { return sin(x); }, TensorSpec(Shape{4}, DType::F32));
  Graph c = trace([](const SymbolicTensor& x) { return std::make_pair(x, x); }, TensorSpec(Shape{3}, DType::F32));
  test::expect_error<TransformError>([&] { batch_functions({a, a, b}); }, "program 2 has input [0]");
  test::expect_error<TransformError>([&] { batch_functions({a, c}); }, "program 1 has outputs");
  test::expect_error<TransformError>([&] { batch_functions(std::vector<Graph>{}); }, "at least one program");
}

TEST(BatchFunctions, SharedOutputWithNoneOutAxes) {
  Graph a = trace([](const SymbolicTensor& x, const SymbolicTensor& y) { return std::make_pair(sin(x), cos(y)); },
                  TensorSpec(Shape{3}, DType::F32), TensorSpec(Shape{3}, DType::F32));
  Graph b = trace([](const SymbolicTensor& x, const SymbolicTensor& y) { return std::make_pair(tanh(x), cos(y)); },
                  TensorSpec(Shape{3}, DType::F32), TensorSpec(Shape{3}, DType::F32));
  BatchOptions o;
  o.axes = AxisTree::tuple({AxisTree(0), AxisTree()});
  o.out_axes = AxisTree::tuple({AxisTree(0), AxisTree()});
  BatchResult r = batch_functions({a, b}, o);
  EXPECT_EQ(r.graph.output_specs()[1].shape, (Shape{3}));
  BatchOptions bad = o;
  bad.out_axes = AxisTree::tuple({AxisTree(), AxisTree()});
  test::expect_error<TransformError>([&] { batch_functions({a, b}, bad); }, "out_axes is None");
}

// (x+c)*(x-c) written with its branches in either order: variant alignment pairs each branch with
// the class holding its variant (no switch), occurrence alignment switches at both positions;
// rows are exact either way, and without switch_ops the two alignments build the same graph.
TEST(BatchFunctions, VariantAlignmentCollapsesReorderedSiblings) {
  std::vector<Graph> progs;
  for (int i = 0; i < 8; ++i)
    progs.push_back(trace(
        [i](const SymbolicTensor& x, const SymbolicTensor& c) {
          SymbolicTensor a, b;
          if (i % 2) {
            b = subtract(x, c);
            a = add(x, c);
          } else {
            a = add(x, c);
            b = subtract(x, c);
          }
          return multiply(a, b);
        },
        TensorSpec(Shape{5}, DType::F32), TensorSpec(Shape(), DType::F32)));
  std::vector<Tensor> xs;
  for (int i = 0; i < 8; ++i) xs.push_back(random_tensor({5}, DType::F32, 40 + static_cast<uint64_t>(i)));
  Tensor c = random_tensor({}, DType::F32, 9);
  auto merge = [&](Alignment a, bool sw) {
    BatchOptions o;
    o.axes = AxisTree::tuple({AxisTree(0), AxisTree()});
    o.alignment = a;
    if (sw) o.switch_ops = SwitchOps::elementwise();
    BatchResult r = batch_functions(progs, o);
    Tensor merged = run_flat(r.graph, {stack(xs), c})[0];
    for (int i = 0; i < 8; ++i)
      EXPECT_TRUE(
          bit_equal(row(merged, i), run_flat(progs[static_cast<size_t>(i)], {xs[static_cast<size_t>(i)], c})[0]))
          << alignment_name(a) << " program " << i;
    return r;
  };
  BatchResult v = merge(Alignment::Variant, true), occ = merge(Alignment::Occurrence, true);
  EXPECT_EQ(v.report.alignment, "variant");
  EXPECT_EQ(occ.report.alignment, "occurrence");
  EXPECT_TRUE(v.report.switched.empty()) << v.report.to_string();
  EXPECT_EQ(v.report.emitted_ops, 3) << v.graph.to_string();
  EXPECT_EQ(occ.report.switched.size(), 2u) << occ.report.to_string();
  EXPECT_GT(occ.report.emitted_ops, v.report.emitted_ops);
  // auto keeps the cheaper estimate (here the variant merge).
  BatchResult au = merge(Alignment::Auto, true);
  EXPECT_EQ(au.report.alignment, "variant");
  EXPECT_EQ(au.graph.to_string(), v.graph.to_string());
  // Without switch_ops the alignments agree, byte for byte.
  EXPECT_EQ(merge(Alignment::Variant, false).graph.to_string(), merge(Alignment::Occurrence, false).graph.to_string());
}

// alignment "auto" is never worse than either alignment by the model's estimate, on unrelated
// random trees with switch_ops.
TEST(BatchFunctions, AutoAlignmentKeepsTheCheaperEstimate) {
  auto pop = bench::gp_population(77, 60, 15, 2);
  std::vector<Graph> progs;
  for (const auto& t : pop) progs.push_back(bench::gp_trace(t, 2, 32));
  auto est = [](const BatchReport& r) {
    BatchCostModel m;
    return static_cast<double>(r.cost_estimate.dispatches) * m.dispatch_seconds +
           r.cost_estimate.work * m.element_seconds;
  };
  BatchOptions o;
  o.axes = AxisTree();
  o.switch_ops = SwitchOps::elementwise();
  o.alignment = Alignment::Variant;
  double v = est(batch_functions(progs, o).report);
  o.alignment = Alignment::Occurrence;
  double occ = est(batch_functions(progs, o).report);
  o.alignment = Alignment::Auto;
  BatchResult au = batch_functions(progs, o);
  EXPECT_LE(est(au.report), std::min(v, occ) * (1 + 1e-12));
  std::vector<Tensor> in{random_tensor({32}, DType::F32, 3, -2, 2), random_tensor({32}, DType::F32, 4, -2, 2)};
  Tensor merged = run_flat(au.graph, in)[0];
  for (size_t i = 0; i < progs.size(); i += 7)
    EXPECT_TRUE(bit_equal(row(merged, static_cast<int64_t>(i)), run_flat(progs[i], in)[0])) << "program " << i;
}

}  // namespace
}  // namespace evoxc
