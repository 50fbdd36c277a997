// Interpreter gather, scatter, dynamic_slice and dynamic_update_slice on every dtype against loop references.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "evoxc/core/error.h"
#include "interp/graph_util.h"

namespace evoxc::testing {
namespace {

std::vector<DType> int_dtypes() {
  return {DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32, DType::U64};
}

Tensor run1(const std::string& op, const std::vector<Tensor>& ins, TensorType result, AttrMap attrs) {
  GraphBuilder b;
  std::vector<Value*> vs;
  for (const Tensor& t : ins) vs.push_back(b.input(t.dtype(), S(t.shape())));
  Value* r = b.op(op, vs, std::move(result), std::move(attrs));
  return run_graph(b.build({r}), ins)[0];
}

void expect_same(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
    }
  }
}

int64_t clampi(int64_t i, int64_t n) { return std::min(std::max<int64_t>(i, 0), n - 1); }

TEST(InterpGather, TakeRowsClampsOnEveryDtype) {
  // operand (3, 4), 5 index vectors on axis 0: -1 and 7 clamp to 0 and 2.
  std::vector<double> idx = {2, -1, 7, 0, 1};
  for (DType t : all_dtypes()) {
    std::vector<double> v = sample_values(t, 12, 3);
    Tensor a = make_tensor(t, {3, 4}, v);
    std::vector<double> av = to_doubles(a);
    Tensor r = run1("gather", {a, make_tensor(DType::I32, {5, 1}, idx)}, tt(t, S({5, 4})),
                    {{"axes", std::vector<int64_t>{0}}});
    std::vector<double> want;
    for (double i : idx)
      for (int64_t j = 0; j < 4; ++j)
        want.push_back(av[static_cast<size_t>(clampi(static_cast<int64_t>(i), 3) * 4 + j)]);
    expect_same(to_doubles(r), want, std::string(dtype_name(t)));
  }
}

TEST(InterpGather, ColumnsWithBatchedIndices) {
  // axes {1}: result (2, 2) batch + the remaining axis 0 of extent 3.
  std::vector<double> v(12);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  Tensor a = make_tensor(DType::F32, {3, 4}, v);
  Tensor idx = make_tensor(DType::I64, {2, 2, 1}, {3, 0, -5, 9});
  Tensor r = run1("gather", {a, idx}, tt(DType::F32, S({2, 2, 3})), {{"axes", std::vector<int64_t>{1}}});
  std::vector<double> want;
  for (int64_t c : {3, 0, 0, 3})
    for (int64_t row = 0; row < 3; ++row) want.push_back(static_cast<double>(row * 4 + c));
  expect_same(to_doubles(r), want, "columns");
}

TEST(InterpGather, PointIndexingOverTwoAxesInEitherOrder) {
  std::vector<double> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  Tensor a = make_tensor(DType::I32, {2, 3, 4}, v);
  // a[i, j, :] with axes {0, 1}, and a[:, j, i] with axes {2, 1}.
  Tensor idx = make_tensor(DType::I16, {3, 2}, {1, 2, 0, 0, 5, -1});
  Tensor r = run1("gather", {a, idx}, tt(DType::I32, S({3, 4})), {{"axes", std::vector<int64_t>{0, 1}}});
  std::vector<double> want;
  for (auto [i, j] : std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {0, 0}, {1, 0}})
    for (int64_t k = 0; k < 4; ++k) want.push_back(static_cast<double>(i * 12 + j * 4 + k));
  expect_same(to_doubles(r), want, "axes {0, 1}");
  Tensor r2 = run1("gather", {a, idx}, tt(DType::I32, S({3, 2})), {{"axes", std::vector<int64_t>{2, 1}}});
  std::vector<double> want2;
  for (auto [k, j] : std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {0, 0}, {3, 0}})
    for (int64_t i = 0; i < 2; ++i) want2.push_back(static_cast<double>(i * 12 + j * 4 + k));
  expect_same(to_doubles(r2), want2, "axes {2, 1}");
}

TEST(InterpGather, EveryIndexDtypeIncludingHugeUnsigned) {
  Tensor a = make_tensor(DType::F64, {5}, {10, 11, 12, 13, 14});
  for (DType it : int_dtypes()) {
    Tensor idx = make_tensor(it, {3, 1}, {0, 3, 100});
    Tensor r = run1("gather", {a, idx}, tt(DType::F64, S({3})), {{"axes", std::vector<int64_t>{0}}});
    expect_same(to_doubles(r), {10, 13, 14}, std::string(dtype_name(it)));
  }
  Tensor big = Tensor::from_vector<uint64_t>({std::numeric_limits<uint64_t>::max(), 1}, {2, 1});
  Tensor r = run1("gather", {a, big}, tt(DType::F64, S({2})), {{"axes", std::vector<int64_t>{0}}});
  expect_same(to_doubles(r), {14, 11}, "uint64 max clamps to the end");
}

TEST(InterpGather, EmptyCases) {
  Tensor a = make_tensor(DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor none = make_tensor(DType::I32, {0, 1}, {});
  EXPECT_EQ(run1("gather", {a, none}, tt(DType::F32, S({0, 2})), {{"axes", std::vector<int64_t>{0}}}).numel(), 0);
  // An empty indexed axis has nothing to clamp to: the result is zeros.
  Tensor e = Tensor::zeros({0, 2}, DType::F32);
  Tensor r = run1("gather", {e, make_tensor(DType::I32, {2, 1}, {0, 5})}, tt(DType::F32, S({2, 2})),
                  {{"axes", std::vector<int64_t>{0}}});
  expect_same(to_doubles(r), {0, 0, 0, 0}, "empty indexed axis");
  // No indexed axis: every index vector takes the whole operand.
  Tensor all = run1("gather", {a, make_tensor(DType::I32, {2, 0}, {})}, tt(DType::F32, S({2, 3, 2})),
                    {{"axes", std::vector<int64_t>{}}});
  expect_same(to_doubles(all), {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, "no axes");
}

TEST(InterpGather, SymbolicBatchRunsForSeveralExtents) {
  GraphBuilder b;
  Value* a = b.input(DType::F32, S({4}));
  Value* idx = b.input(DType::I32, Shape{Dim("N"), DimExpr(1)});
  Value* r = b.op("gather", {a, idx}, tt(DType::F32, Shape{Dim("N")}), {{"axes", std::vector<int64_t>{0}}});
  Graph g = b.build({r});
  Tensor at = make_tensor(DType::F32, {4}, {5, 6, 7, 8});
  for (int64_t n : {0, 1, 7}) {
    std::vector<double> iv, want;
    for (int64_t i = 0; i < n; ++i) {
      iv.push_back(static_cast<double>(i - 2));
      want.push_back(5 + static_cast<double>(clampi(i - 2, 4)));
    }
    expect_same(to_doubles(run_graph(g, {at, make_tensor(DType::I32, {n, 1}, iv)})[0]), want, "N");
  }
}

TEST(InterpGather, LargeGatherMatchesLoop) {
  int64_t rows = 300, cols = 257, n = 2000;
  std::vector<double> v = sample_values(DType::F32, rows * cols, 5);
  std::vector<double> iv;
  for (int64_t i = 0; i < n; ++i) iv.push_back(static_cast<double>((i * 37) % (rows + 20) - 10));
  Tensor a = make_tensor(DType::F32, {rows, cols}, v);
  std::vector<double> av = to_doubles(a);
  Tensor r = run1("gather", {a, make_tensor(DType::I64, {n, 1}, iv)}, tt(DType::F32, S({n, cols})),
                  {{"axes", std::vector<int64_t>{0}}});
  std::vector<double> got = to_doubles(r);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < cols; ++j)
      ASSERT_EQ(got[static_cast<size_t>(i * cols + j)],
                av[static_cast<size_t>(clampi(static_cast<int64_t>(iv[static_cast<size_t>(i)]), rows) * cols + j)]);
}

// Reference scatter: row-major order, out-of-range rows dropped.
std::vector<double> ref_scatter(std::vector<double> base, const std::vector<double>& idx,
                                const std::vector<double>& upd, int64_t cols, int64_t rows, const std::string& mode,
                                DType t) {
  for (size_t b = 0; b < idx.size(); ++b) {
    auto i = static_cast<int64_t>(idx[b]);
    if (i < 0 || i >= rows) continue;
    for (int64_t j = 0; j < cols; ++j) {
      double& o = base[static_cast<size_t>(i * cols + j)];
      double u = upd[b * static_cast<size_t>(cols) + static_cast<size_t>(j)];
      if (mode == "set") o = u;
      if (mode == "add") o = is_bool(t) ? double(o != 0 || u != 0) : o + u;
      if (mode == "mul") o = is_bool(t) ? double(o != 0 && u != 0) : o * u;
      if (mode == "min") o = std::isnan(o) || std::isnan(u) ? NAN : std::min(o, u);
      if (mode == "max") o = std::isnan(o) || std::isnan(u) ? NAN : std::max(o, u);
      // Round through the dtype after each step so wrapping and float rounding match the kernel.
      o = to_doubles(make_tensor(t, {1}, {o}))[0];
    }
  }
  return base;
}

TEST(InterpScatter, EveryModeAndDtypeWithDuplicatesAndOutOfRange) {
  std::vector<double> idx = {1, 3, 1, -1, 9, 0, 1};  // duplicates of 1, two dropped rows
  for (DType t : all_dtypes()) {
    for (std::string mode : {"set", "add", "mul", "min", "max"}) {
      Tensor a = make_tensor(t, {4, 3}, sample_values(t, 12, 11));
      Tensor u = make_tensor(t, {7, 3}, sample_values(t, 21, 12));
      Tensor r = run1("scatter", {a, make_tensor(DType::I32, {7, 1}, idx), u}, tt(t, S({4, 3})),
                      {{"axes", std::vector<int64_t>{0}}, {"mode", mode}});
      std::vector<double> want = ref_scatter(to_doubles(a), idx, to_doubles(u), 3, 4, mode, t);
      std::vector<double> got = to_doubles(r);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        if (is_float(t) && !std::isnan(want[i])) {
          EXPECT_NEAR(got[i], want[i], tolerance(t, 64)) << dtype_name(t) << " " << mode << " at " << i;
        } else if (std::isnan(want[i])) {
          EXPECT_TRUE(std::isnan(got[i]));
        } else {
          EXPECT_EQ(got[i], want[i]) << dtype_name(t) << " " << mode << " at " << i;
        }
      }
    }
  }
}

TEST(InterpScatter, SetLastWinsAndNaNPropagatesInMinMax) {
  Tensor a = make_tensor(DType::F32, {3}, {1, 2, 3});
  Tensor idx = make_tensor(DType::I64, {4, 1}, {2, 2, 0, 2});
  Tensor u = make_tensor(DType::F32, {4}, {10, 20, NAN, 30});
  auto go = [&](const std::string& mode) {
    return to_doubles(
        run1("scatter", {a, idx, u}, tt(DType::F32, S({3})), {{"axes", std::vector<int64_t>{0}}, {"mode", mode}}));
  };
  expect_same(go("set"), {NAN, 2, 30}, "set");
  expect_same(go("add"), {NAN, 2, 63}, "add");
  expect_same(go("max"), {NAN, 2, 30}, "max");
  expect_same(go("min"), {NAN, 2, 3}, "min");
}

TEST(InterpScatter, PointsOverTwoAxesAndEmptyUpdates) {
  Tensor a = Tensor::zeros({2, 3}, DType::I64);
  Tensor idx = make_tensor(DType::U8, {4, 2}, {1, 2, 0, 0, 1, 2, 2, 0});
  Tensor u = make_tensor(DType::I64, {4}, {5, 7, 11, 100});
  Tensor r = run1("scatter", {a, idx, u}, tt(DType::I64, S({2, 3})),
                  {{"axes", std::vector<int64_t>{0, 1}}, {"mode", std::string("add")}});
  expect_same(to_doubles(r), {7, 0, 0, 0, 0, 16}, "points");
  Tensor e = run1("scatter", {a, make_tensor(DType::I32, {0, 2}, {}), Tensor::zeros({0}, DType::I64)},
                  tt(DType::I64, S({2, 3})), {{"axes", std::vector<int64_t>{0, 1}}, {"mode", std::string("set")}});
  expect_same(to_doubles(e), {0, 0, 0, 0, 0, 0}, "no updates");
}

TEST(InterpDynamicSlice, ClampsStartsOnEveryDtype) {
  for (DType t : all_dtypes()) {
    std::vector<double> v = sample_values(t, 20, 4);
    Tensor a = make_tensor(t, {4, 5}, v);
    std::vector<double> av = to_doubles(a);
    for (auto [s0, s1] : std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {-3, 4}, {9, -1}, {2, 100}}) {
      Tensor r = run1("dynamic_slice",
                      {a, make_tensor(DType::I32, {}, {static_cast<double>(s0)}),
                       make_tensor(DType::I64, {}, {static_cast<double>(s1)})},
                      tt(t, S({2, 3})), {{"slice_sizes", std::vector<int64_t>{2, 3}}});
      int64_t c0 = std::clamp<int64_t>(s0, 0, 2), c1 = std::clamp<int64_t>(s1, 0, 2);
      std::vector<double> want;
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j) want.push_back(av[static_cast<size_t>((c0 + i) * 5 + c1 + j)]);
      expect_same(to_doubles(r), want, std::string(dtype_name(t)) + " start " + std::to_string(s0));
    }
  }
}

TEST(InterpDynamicSlice, UpdateClampsStartsOnEveryDtype) {
  for (DType t : all_dtypes()) {
    Tensor a = make_tensor(t, {3, 4}, sample_values(t, 12, 8));
    Tensor u = make_tensor(t, {2, 2}, sample_values(t, 4, 9));
    std::vector<double> av = to_doubles(a), uv = to_doubles(u);
    for (auto [s0, s1] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {-2, 7}, {5, 2}}) {
      Tensor r = run1("dynamic_update_slice",
                      {a, u, make_tensor(DType::U16, {}, {static_cast<double>(std::max<int64_t>(s0, 0))}),
                       make_tensor(DType::I8, {}, {static_cast<double>(s1)})},
                      tt(t, S({3, 4})), {});
      int64_t c0 = std::clamp<int64_t>(std::max<int64_t>(s0, 0), 0, 1), c1 = std::clamp<int64_t>(s1, 0, 2);
      std::vector<double> want = av;
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j)
          want[static_cast<size_t>((c0 + i) * 4 + c1 + j)] = uv[static_cast<size_t>(i * 2 + j)];
      expect_same(to_doubles(r), want, std::string(dtype_name(t)));
    }
  }
}

TEST(InterpDynamicSlice, ZeroSizesAndRankZero) {
  Tensor a = make_tensor(DType::F32, {3}, {1, 2, 3});
  Tensor r = run1("dynamic_slice", {a, make_tensor(DType::I32, {}, {5})}, tt(DType::F32, S({0})),
                  {{"slice_sizes", std::vector<int64_t>{0}}});
  EXPECT_EQ(r.numel(), 0);
  Tensor s = make_tensor(DType::F32, {}, {4});
  Tensor r0 = run1("dynamic_slice", {s}, tt(DType::F32, S({})), {{"slice_sizes", std::vector<int64_t>{}}});
  expect_same(to_doubles(r0), {4}, "rank 0");
  Tensor e = Tensor::zeros({0, 2}, DType::F32);
  Tensor ue =
      run1("dynamic_update_slice",
           {e, Tensor::zeros({0, 1}, DType::F32), make_tensor(DType::I32, {}, {3}), make_tensor(DType::I32, {}, {-4})},
           tt(DType::F32, S({0, 2})), {});
  EXPECT_EQ(ue.numel(), 0);
}

TEST(InterpDynamicSlice, SymbolicOperandTooSmallIsAValidationError) {
  GraphBuilder b;
  Value* a = b.input(DType::F32, Shape{Dim("N")});
  Value* s = b.input(DType::I32, S({}));
  Value* r = b.op("dynamic_slice", {a, s}, tt(DType::F32, S({3})), {{"slice_sizes", std::vector<int64_t>{3}}});
  Graph g = b.build({r});
  Tensor st = make_tensor(DType::I32, {}, {1});
  expect_same(to_doubles(run_graph(g, {make_tensor(DType::F32, {4}, {1, 2, 3, 4}), st})[0]), {2, 3, 4}, "N=4");
  EXPECT_THROW(run_graph(g, {make_tensor(DType::F32, {2}, {1, 2}), st}), ValidationError);
}

TEST(InterpIndexing, BadKernelAttributesAreBackendErrors) {
  GraphBuilder b;
  Value* a = b.input(DType::F32, S({3}));
  Value* i = b.input(DType::F32, S({2, 1}));
  Value* r = b.op("gather", {a, i}, tt(DType::F32, S({2})), {{"axes", std::vector<int64_t>{0}}});
  Graph g = b.build({r});
  try {
    run_graph(g, {Tensor::zeros({3}), Tensor::zeros({2, 1})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("integer"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace evoxc::testing
