// Transform rules of the indexing and sorting family (gather, scatter, dynamic slices, sort, argsort, top_k,
// searchsorted): generated checks over each op's sample and variants, with index operands built in and out of range,
// plus hand cases against closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "evoxc/transforms/rules.h"
#include "ops/ops_util.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

using testing::make_tensor;
using testing::row;
using testing::run_flat;
using testing::stack;
using testing::values_of;
using Ints = std::vector<int64_t>;

// ---------------------------------------------------------------- inputs

// Whether operand i of the op is an index (gather/scatter indices, dynamic-slice starts).
bool is_index_operand(const std::string& op, size_t i) {
  if (op == "gather" || op == "scatter") return i == 1;
  if (op == "dynamic_slice") return i >= 1;
  if (op == "dynamic_update_slice") return i >= 2;
  return false;
}

Tensor random_ints(const std::vector<int64_t>& shape, DType dtype, uint64_t seed, int64_t lo, int64_t hi) {
  std::mt19937_64 rng(seed);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  std::uniform_int_distribution<int64_t> u(lo, hi - 1);
  for (auto& x : v) x = static_cast<double>(u(rng));
  return make_tensor(v, shape, dtype);
}

std::vector<int64_t> dims_of(const TensorSpec& s) {
  std::vector<int64_t> out;
  for (const DimExpr& d : s.shape) out.push_back(d.is_const() ? d.value() : 3);
  return out;
}

// Inputs for one call: indices in [-1, 5) (so some are out of range on the samples' extents 4
// and 3, and some repeat), a sorted first operand for searchsorted, data in [-1, 1) (ints in
// [-3, 3), so sort sees ties).
std::vector<Tensor> op_inputs(const std::string& op, const Graph& g, uint64_t seed) {
  std::vector<Tensor> out;
  std::vector<TensorSpec> specs = g.input_specs();
  for (size_t i = 0; i < specs.size(); ++i) {
    std::vector<int64_t> shape = dims_of(specs[i]);
    DType t = specs[i].dtype;
    uint64_t s = seed * 31 + i;
    if (is_index_operand(op, i)) {
      out.push_back(random_ints(shape, t, s, -1, 5));
    } else if (!is_float(t)) {
      out.push_back(t == DType::Bool ? testing::random_tensor(shape, t, s) : random_ints(shape, t, s, -3, 3));
    } else {
      out.push_back(testing::random_tensor(shape, t, s));
    }
    if (op == "searchsorted" && i == 0) {
      std::vector<double> v = values_of(out.back());
      std::sort(v.begin(), v.end());
      out.back() = make_tensor(v, shape, t);
    }
  }
  return out;
}

// ---------------------------------------------------------------- vmap against a loop

// The in_axes tree for `def` with its leaves (in order) mapped at axis 0 or not.
AxisTree axes_tree(const TreeDef& def, const std::vector<bool>& mapped, size_t& pos) {
  if (def.is_leaf()) return mapped.at(pos++) ? AxisTree(0) : AxisTree::none();
  if (def.is_none()) return AxisTree::none();
  std::vector<AxisTree> kids;
  for (const TreeDef& c : def.children()) kids.push_back(axes_tree(c, mapped, pos));
  return AxisTree::from_parts(def.kind(), std::move(kids), def.keys());
}

// vectorize(g) over the examples (per[b][i]: input i of example b; unmapped inputs take
// example 0's value) equals running g on each example.
void expect_vmap_rows(const Graph& g, const std::vector<std::vector<Tensor>>& per, const std::vector<bool>& mapped) {
  size_t n = per.size(), k = mapped.size();
  std::vector<Tensor> batched;
  for (size_t i = 0; i < k; ++i) {
    std::vector<Tensor> rows;
    for (size_t b = 0; b < n; ++b) rows.push_back(per[b][i]);
    batched.push_back(mapped[i] ? stack(rows) : per[0][i]);
  }
  size_t pos = 0;
  Graph vg = vectorize(g, axes_tree(g.input_tree(), mapped, pos), AxisTree(0));
  std::vector<Tensor> got = run_flat(vg, batched);
  for (size_t b = 0; b < n; ++b) {
    std::vector<Tensor> in;
    for (size_t i = 0; i < k; ++i) in.push_back(mapped[i] ? per[b][i] : per[0][i]);
    std::vector<Tensor> want = run_flat(g, in);
    ASSERT_EQ(want.size(), got.size());
    for (size_t j = 0; j < want.size(); ++j)
      testing::expect_close(row(got[j], static_cast<int64_t>(b)), want[j], 1e-6, 1e-6,
                            "vmap output " + std::to_string(j) + " row " + std::to_string(b));
  }
}

// Every non-empty subset of the operands mapped, 3 examples.
void expect_vmap_every_subset(const std::string& op, const Graph& g) {
  size_t k = g.input_specs().size();
  std::vector<std::vector<Tensor>> per;
  for (uint64_t b = 0; b < 3; ++b) per.push_back(op_inputs(op, g, 100 + b));
  for (size_t mask = 1; mask < (size_t{1} << k); ++mask) {
    std::vector<bool> mapped(k);
    std::string m;
    for (size_t i = 0; i < k; ++i) {
      mapped[i] = (mask >> i) & 1;
      m += mapped[i] ? "1" : "0";
    }
    SCOPED_TRACE("mapped operands " + m);
    expect_vmap_rows(g, per, mapped);
  }
}

// ---------------------------------------------------------------- the calls checked

struct Call {
  std::string label;
  const OpDef* def;
  OpSample call;
};

AttrMap with(AttrMap a, const std::string& k, Attribute v) {
  a[k] = std::move(v);
  return a;
}

// The catalogue sample of each op on `t`, and variants: every scatter mode, gathers and
// scatters over several axes with several index batch axes, sorts of several operands.
std::vector<Call> calls(DType t) {
  std::vector<Call> out;
  for (const char* name :
       {"gather", "scatter", "dynamic_slice", "dynamic_update_slice", "sort", "argsort", "top_k", "searchsorted"}) {
    const OpDef& d = get_op(name);
    out.push_back({name, &d, testing::sample_call(d, t)});
  }
  const OpDef& sc = get_op("scatter");
  for (const char* mode : {"add", "mul", "min", "max"}) {
    OpSample s = testing::sample_call(sc, t);
    s.attrs = with(s.attrs, "mode", std::string(mode));
    out.push_back({std::string("scatter ") + mode, &sc, s});
  }
  TensorType x(t, {4, 3, 2});
  TensorType idx(DType::I32, {2, 3, 2});
  out.push_back({"gather axes [2, 0]", &get_op("gather"), {{x, idx}, {{"axes", Ints{2, 0}}}}});
  out.push_back({"gather axes []", &get_op("gather"), {{x, TensorType(DType::I64, {2, 0})}, {{"axes", Ints{}}}}});
  for (const char* mode : {"set", "add"})
    out.push_back({std::string("scatter axes [2, 0] ") + mode,
                   &sc,
                   {{x, idx, TensorType(t, {2, 3, 3})}, {{"axes", Ints{2, 0}}, {"mode", std::string(mode)}}}});
  const OpDef& so = get_op("sort");
  TensorType a(t, {4, 3});
  TensorType b(DType::I32, {4, 3});
  out.push_back({"sort 2 operands, 1 key", &so, {{a, b}, {{"dimension", int64_t{0}}, {"num_keys", int64_t{1}}}}});
  out.push_back({"sort int key first, 2 keys", &so, {{b, a}, {{"dimension", int64_t{1}}, {"num_keys", int64_t{2}}}}});
  out.push_back({"dynamic_slice 3-d",
                 &get_op("dynamic_slice"),
                 {{x, TensorType(DType::U8, {}), TensorType(DType::I64, {}), TensorType(DType::I32, {})},
                  {{"slice_sizes", Ints{2, 3, 1}}}}});
  out.push_back({"dynamic_update_slice 3-d",
                 &get_op("dynamic_update_slice"),
                 {{x, TensorType(t, {3, 1, 2}), TensorType(DType::I64, {}), TensorType(DType::U8, {}),
                   TensorType(DType::I32, {})},
                  {}}});
  out.push_back(
      {"gather u64 indices", &get_op("gather"), {{x, TensorType(DType::U64, {3, 2})}, {{"axes", Ints{0, 1}}}}});
  out.push_back({"scatter u8 indices",
                 &sc,
                 {{x, TensorType(DType::U8, {5, 1}), TensorType(t, {5, 4, 2})},
                  {{"axes", Ints{1}}, {"mode", std::string("add")}}}});
  out.push_back({"searchsorted right",
                 &get_op("searchsorted"),
                 {{TensorType(t, {5}), TensorType(t, {2, 3})}, {{"side", std::string("right")}}}});
  return out;
}

TEST(IndexingRules, VmapMatchesLoopForEveryOpVariantAndMappedSubset) {
  int checked = 0;
  for (DType t : {DType::F64, DType::F32, DType::I32, DType::Bool}) {
    for (const Call& c : calls(t)) {
      SCOPED_TRACE(c.label + " on " + std::string(dtype_name(t)));
      Graph g = testing::one_op_graph(*c.def, c.call);
      expect_vmap_every_subset(c.def->name, g);
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
}

TEST(IndexingRules, JvpMatchesFiniteDifferencesAndVjpMatchesJvp) {
  int checked = 0;
  for (const Call& c : calls(DType::F64)) {
    SCOPED_TRACE(c.label);
    Graph g = testing::one_op_graph(*c.def, c.call);
    for (uint64_t seed : {1, 2, 3}) {
      std::vector<Tensor> p = op_inputs(c.def->name, g, seed);
      testing::expect_jvp_matches_fd(g, p);
      testing::expect_vjp_matches_jvp(g, p);
    }
    ++checked;
  }
  EXPECT_GT(checked, 15);
}

// Nested transforms: vmap of each op's vjp graph (the transposes' scatters, gathers and
// dynamic slices batched), every input mapped, then the cotangents only.
TEST(IndexingRules, VmapOfVjpMatchesLoop) {
  int checked = 0;
  for (const Call& c : calls(DType::F64)) {
    SCOPED_TRACE(c.label);
    Graph g = testing::one_op_graph(*c.def, c.call);
    Graph vg = vjp(g);
    std::vector<TensorSpec> specs = vg.input_specs();
    size_t n_primal = g.input_specs().size();
    std::vector<std::vector<Tensor>> per;
    for (uint64_t b = 0; b < 3; ++b) {
      std::vector<Tensor> in = op_inputs(c.def->name, g, 200 + b);
      for (size_t i = n_primal; i < specs.size(); ++i)
        in.push_back(testing::random_tensor(dims_of(specs[i]), specs[i].dtype, 300 + 7 * b + i));
      per.push_back(in);
    }
    if (specs.size() == n_primal) continue;  // integer outputs only: no cotangent
    expect_vmap_rows(vg, per, std::vector<bool>(specs.size(), true));
    std::vector<bool> cts_only(specs.size(), false);
    for (size_t i = n_primal; i < specs.size(); ++i) cts_only[i] = true;
    expect_vmap_rows(vg, per, cts_only);
    ++checked;
  }
  EXPECT_GT(checked, 15);
}

TEST(IndexingRules, EveryOpHasARuleInEveryTableItNeeds) {
  for (const char* op :
       {"gather", "scatter", "dynamic_slice", "dynamic_update_slice", "sort", "argsort", "top_k", "searchsorted"}) {
    const OpDef& d = get_op(op);
    EXPECT_TRUE(transforms::batch_rules().has(d.id)) << op;
    EXPECT_TRUE(transforms::jvp_rules().has(d.id)) << op;
  }
  for (const char* op : {"gather", "scatter", "dynamic_slice", "dynamic_update_slice"})
    EXPECT_TRUE(transforms::transpose_rules().has(get_op(op).id)) << op;
  EXPECT_TRUE(transforms::linearity_rules().has(get_op("scatter").id));
}

// ---------------------------------------------------------------- hand cases

Tensor f64(const std::vector<double>& v, const std::vector<int64_t>& shape) {
  return make_tensor(v, shape, DType::F64);
}
Tensor i64(const std::vector<double>& v, const std::vector<int64_t>& shape) {
  return make_tensor(v, shape, DType::I64);
}

void expect_values(const Tensor& t, const std::vector<double>& want, const std::string& what) {
  std::vector<double> got = values_of(t);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << what << " at " << i;
}

Graph take_graph() {
  return trace([](const SymbolicTensor& x, const SymbolicTensor& i) { return gather(x, i, {0}); },
               TensorSpec({4, 2}, DType::F64), TensorSpec({3, 1}, DType::I64));
}

TEST(IndexingRules, GatherBatchedIndicesOnlyOperandOnlyAndBoth) {
  Graph g = take_graph();
  Tensor x0 = f64({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2}), x1 = f64({10, 11, 12, 13, 14, 15, 16, 17}, {4, 2});
  Tensor i0 = i64({3, 0, 9}, {3, 1}), i1 = i64({-2, 2, 2}, {3, 1});
  Tensor xs = stack({x0, x1}), is = stack({i0, i1});
  // Indices only: both rows read x0; 9 clamps to 3, -2 to 0.
  Graph vi = vectorize(g, AxisTree::tuple({AxisTree::none(), AxisTree(0)}), AxisTree(0));
  expect_values(run_flat(vi, {x0, is})[0], {6, 7, 0, 1, 6, 7, 0, 1, 4, 5, 4, 5}, "batched indices");
  Graph vx = vectorize(g, AxisTree::tuple({AxisTree(0), AxisTree::none()}), AxisTree(0));
  expect_values(run_flat(vx, {xs, i0})[0], {6, 7, 0, 1, 6, 7, 16, 17, 10, 11, 16, 17}, "batched operand");
  Graph vb = vectorize(g, AxisTree(0), AxisTree(0));
  expect_values(run_flat(vb, {xs, is})[0], {6, 7, 0, 1, 6, 7, 10, 11, 14, 15, 14, 15}, "both batched");
}

TEST(IndexingRules, ScatterBatchedIndicesOnlyOperandOnlyAndBoth) {
  Graph g = trace([](const SymbolicTensor& x, const SymbolicTensor& i,
                     const SymbolicTensor& u) { return scatter(x, i, u, {0}, "add"); },
                  TensorSpec({3}, DType::F64), TensorSpec({2, 1}, DType::I64), TensorSpec({2}, DType::F64));
  Tensor x0 = f64({0, 0, 0}, {3}), x1 = f64({100, 100, 100}, {3});
  Tensor i0 = i64({1, 1}, {2, 1}), i1 = i64({0, 5}, {2, 1});  // duplicates; 5 is dropped
  Tensor u = f64({1, 2}, {2});
  auto none = AxisTree::none();
  Graph vi = vectorize(g, AxisTree::tuple({none, AxisTree(0), none}), AxisTree(0));
  expect_values(run_flat(vi, {x0, stack({i0, i1}), u})[0], {0, 3, 0, 1, 0, 0}, "batched indices");
  Graph vx = vectorize(g, AxisTree::tuple({AxisTree(0), none, none}), AxisTree(0));
  expect_values(run_flat(vx, {stack({x0, x1}), i0, u})[0], {0, 3, 0, 100, 103, 100}, "batched operand");
  Graph vb = vectorize(g, AxisTree::tuple({AxisTree(0), AxisTree(0), none}), AxisTree(0));
  expect_values(run_flat(vb, {stack({x0, x1}), stack({i0, i1}), u})[0], {0, 3, 0, 101, 100, 100}, "both batched");
}

TEST(IndexingRules, GradOfGatherIsAScatterAddOfOnesAtTheClampedIndices) {
  Graph g = trace([](const SymbolicTensor& x, const SymbolicTensor& i) { return sum(take(x, i)); },
                  TensorSpec({4}, DType::F64), TensorSpec({5}, DType::I64));
  Graph gg = grad(g, {0});
  // 7 clamps to 3 and -3 to 0 (take's default "clip"): counts per position.
  std::vector<Tensor> out = run_flat(gg, {f64({1, 2, 3, 4}, {4}), i64({0, 2, 2, 7, -3}, {5})});
  expect_values(out[0], {2, 0, 2, 1}, "grad of sum(take(x, i))");
}

TEST(IndexingRules, GradOfScatterSetGoesToTheLastWriterAndDropsOutOfRangeRows) {
  Graph g = trace(
      [](const SymbolicTensor& x, const SymbolicTensor& u, const SymbolicTensor& w) {
        SymbolicTensor i = constant(Tensor::from_vector<int64_t>({1, 1, 5}, {3, 1}));
        return sum(scatter(x, i, u, {0}, "set") * w);
      },
      TensorSpec({4}, DType::F64), TensorSpec({3}, DType::F64), TensorSpec({4}, DType::F64));
  std::vector<Tensor> out =
      run_flat(grad(g, {0, 1}), {f64({1, 2, 3, 4}, {4}), f64({5, 6, 7}, {3}), f64({10, 20, 30, 40}, {4})});
  expect_values(out[0], {10, 0, 30, 40}, "d/dx: zero where overwritten");
  expect_values(out[1], {0, 20, 0}, "d/du: the last duplicate wins, the out-of-range row gets nothing");
}

TEST(IndexingRules, GatherTransposeSaturatesHugeUnsignedIndices) {
  // 2^63 + 5 reads the last element (the kernel saturates, then clamps); its cotangent goes there.
  Graph g = trace([](const SymbolicTensor& x, const SymbolicTensor& i) { return sum(gather(x, i, {0})); },
                  TensorSpec({4}, DType::F64), TensorSpec({2, 1}, DType::U64));
  Tensor idx = Tensor::from_vector<uint64_t>({(uint64_t{1} << 63) + 5, 1}, {2, 1});
  std::vector<Tensor> out = run_flat(grad(g, {0}), {f64({1, 2, 3, 4}, {4}), idx});
  expect_values(out[0], {0, 1, 0, 1}, "grad of sum(gather(x, huge u64))");
}

TEST(IndexingRules, ScatterMulJvpWithZeroAndDuplicateUpdates) {
  Graph g = trace(
      [](const SymbolicTensor& x, const SymbolicTensor& u) {
        SymbolicTensor i = constant(Tensor::from_vector<int64_t>({0, 0, 1, 1, 2, 2, 2, 4}, {8, 1}));
        return scatter(x, i, u, {0}, "mul");
      },
      TensorSpec({4}, DType::F64), TensorSpec({8}, DType::F64));
  // Position 0: no zero; 1: one zero; 2: two zeros; row 7 is dropped. The op is multilinear,
  // so central differences are exact up to rounding.
  std::vector<Tensor> p = {f64({1.5, -2, 3, 0.5}, {4}), f64({2, -3, 0, 4, 0, 0, 5, 7}, {8})};
  testing::expect_jvp_matches_fd(g, p);
  testing::expect_vjp_matches_jvp(g, p);
}

TEST(IndexingRules, ScatterMaxTiesSplitTheTangent) {
  Graph g = trace(
      [](const SymbolicTensor& x, const SymbolicTensor& u) {
        SymbolicTensor i = constant(Tensor::from_vector<int64_t>({0, 0, 1}, {3, 1}));
        return scatter(x, i, u, {0}, "max");
      },
      TensorSpec({2}, DType::F64), TensorSpec({3}, DType::F64));
  // Position 0: the operand and both updates tie at 2; position 1: the update 5 wins.
  std::vector<Tensor> out =
      run_flat(jvp(g), {f64({2, 1}, {2}), f64({2, 2, 5}, {3}), f64({3, 1}, {2}), f64({6, 9, 4}, {3})});
  expect_values(out[0], {2, 5}, "primal");
  expect_values(out[1], {(3.0 + 6 + 9) / 3, 4}, "tangent");
}

TEST(IndexingRules, SortWithTiesPermutesTangentsStably) {
  Graph g = trace(
      [](const SymbolicTensor& k, const SymbolicTensor& x) {
        return sort({k, x}, 0, 1);
      },
      TensorSpec({5}, DType::F64), TensorSpec({5}, DType::F64));
  Tensor keys = f64({2, 1, 2, 1, 0}, {5}), x = f64({10, 11, 12, 13, 14}, {5});
  Tensor tk = f64({1, 2, 3, 4, 5}, {5}), tx = f64({6, 7, 8, 9, 10}, {5});
  std::vector<Tensor> out = run_flat(jvp(g), {keys, x, tk, tx});
  // Stable order of the keys: positions 4, 1, 3, 0, 2.
  expect_values(out[0], {0, 1, 1, 2, 2}, "sorted keys");
  expect_values(out[1], {14, 11, 13, 10, 12}, "payload");
  expect_values(out[2], {5, 2, 4, 1, 3}, "key tangent");
  expect_values(out[3], {10, 7, 9, 6, 8}, "payload tangent");
  // grad of sum(w * sort(k)) puts w back at the stable permutation.
  Graph s = trace([](const SymbolicTensor& k, const SymbolicTensor& w) { return sum(sort(k, 0) * w); },
                  TensorSpec({5}, DType::F64), TensorSpec({5}, DType::F64));
  std::vector<Tensor> gr = run_flat(grad(s, {0}), {keys, f64({1, 2, 3, 4, 5}, {5})});
  expect_values(gr[0], {4, 2, 5, 3, 1}, "grad of sum(w * sort(k))");
}

TEST(IndexingRules, TopKGradGoesToTheChosenIndices) {
  Graph g = trace(
      [](const SymbolicTensor& x) {
        auto [v, i] = top_k(x, 2);
        return sum(v * constant(Tensor::from_vector<double>({1, 10}, {2})));
      },
      TensorSpec({2, 4}, DType::F64));
  // Row 0 ties at 3: the lower index comes first. Row 1: 9 then 7.
  std::vector<Tensor> out = run_flat(grad(g, {0}), {f64({3, 1, 3, 2, 7, 9, 0, 1}, {2, 4})});
  expect_values(out[0], {1, 0, 10, 0, 10, 1, 0, 0}, "grad of top_k values");
}

TEST(IndexingRules, DynamicSliceWithBatchedStartsClamps) {
  Graph g = trace(
      [](const SymbolicTensor& x, const SymbolicTensor& s) {
        return dynamic_slice(x, {s, 1}, {2, 2});
      },
      TensorSpec({4, 3}, DType::F64), TensorSpec({}, DType::I32));
  Graph vg = vectorize(g, AxisTree::tuple({AxisTree::none(), AxisTree(0)}), AxisTree(0));
  Tensor x = f64({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3});
  Tensor s = make_tensor({0, 3, -5}, {3}, DType::I32);  // 3 clamps to 2, -5 to 0
  expect_values(run_flat(vg, {x, s})[0], {1, 2, 4, 5, 7, 8, 10, 11, 1, 2, 4, 5}, "batched starts");
  // And the transposes through vmap(grad): d/dx sum(slice) is the window's indicator.
  Graph gs = trace(
      [](const SymbolicTensor& x, const SymbolicTensor& s) {
        return sum(dynamic_slice(x, {s, 1}, {2, 2}));
      },
      TensorSpec({4, 3}, DType::F64), TensorSpec({}, DType::I32));
  Graph vgrad = vectorize(grad(gs, {0}), AxisTree::tuple({AxisTree::none(), AxisTree(0)}), AxisTree(0));
  expect_values(run_flat(vgrad, {x, s})[0], {0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                             0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0},
                "vmap of grad");
}

TEST(IndexingRules, SymbolicExtentsInGatherAndDynamicSlices) {
  const DimExpr N = Dim("N");
  Graph g = trace(
      [](const SymbolicTensor& x, const SymbolicTensor& i, const SymbolicTensor& s) {
        SymbolicTensor a = sum(take(x, i, 0), {1});
        SymbolicTensor b = dynamic_slice(x, {s, 0}, {2, 2});
        return sum(a) + sum(b * b);
      },
      TensorSpec({N, 2}, DType::F64), TensorSpec({3}, DType::I64), TensorSpec({}, DType::I64));
  Tensor x = testing::random_tensor({5, 2}, DType::F64, 3);
  Tensor i = i64({9, -1, 2}, {3});
  Tensor s = i64({4}, {});
  testing::expect_jvp_matches_fd(g, {x, i, s});
  testing::expect_vjp_matches_jvp(g, {x, i, s});
  std::vector<std::vector<Tensor>> per;
  for (uint64_t b = 0; b < 3; ++b)
    per.push_back({testing::random_tensor({5, 2}, DType::F64, 10 + b), random_ints({3}, DType::I64, 20 + b, -1, 7),
                   random_ints({}, DType::I64, 30 + b, -1, 6)});
  expect_vmap_rows(g, per, {true, true, true});
  expect_vmap_rows(g, per, {false, false, true});
  // vmap of the gradient (scatter-add and dynamic_update_slice with symbolic extents).
  Graph gg = grad(g, {0});
  expect_vmap_rows(gg, per, {true, true, true});
}

TEST(IndexingRules, DynamicUpdateSliceWithSymbolicUpdateTransposes) {
  const DimExpr M = Dim("M");
  Graph g = trace(
      [](const SymbolicTensor& x, const SymbolicTensor& u, const SymbolicTensor& s) {
        return dynamic_update_slice(x, u, {s, 0});
      },
      TensorSpec({6, 2}, DType::F64), TensorSpec({M, 2}, DType::F64), TensorSpec({}, DType::I64));
  std::vector<Tensor> p = {testing::random_tensor({6, 2}, DType::F64, 1), testing::random_tensor({3, 2}, DType::F64, 2),
                           i64({5}, {})};
  testing::expect_jvp_matches_fd(g, p);
  testing::expect_vjp_matches_jvp(g, p);
  std::vector<std::vector<Tensor>> per;
  for (uint64_t b = 0; b < 3; ++b)
    per.push_back({testing::random_tensor({6, 2}, DType::F64, 10 + b),
                   testing::random_tensor({3, 2}, DType::F64, 20 + b), random_ints({}, DType::I64, 30 + b, -2, 6)});
  expect_vmap_rows(g, per, {false, false, true});
  expect_vmap_rows(g, per, {true, true, true});
}

TEST(IndexingRules, SearchsortedWithBatchedSortedRowsTiesAndNan) {
  for (const char* side : {"left", "right"}) {
    SCOPED_TRACE(side);
    std::string sd = side;
    Graph g = trace([sd](const SymbolicTensor& a, const SymbolicTensor& v) { return searchsorted(a, v, sd); },
                    TensorSpec({5}, DType::F64), TensorSpec({2, 3}, DType::F64));
    double nan = std::nan("");
    std::vector<std::vector<Tensor>> per = {
        {f64({0, 1, 1, 1, 3}, {5}), f64({1, -1, 5, 0, 3, nan}, {2, 3})},
        {f64({-2, -2, 0, 4, nan}, {5}), f64({-2, 4, nan, 0.5, -3, 4.5}, {2, 3})},
        {f64({1, 1, 1, 1, 1}, {5}), f64({1, 1, 0, 2, nan, 1}, {2, 3})},
    };
    expect_vmap_rows(g, per, {true, true});
    expect_vmap_rows(g, per, {true, false});
    expect_vmap_rows(g, per, {false, true});
  }
}

}  // namespace
}  // namespace evoxc
