// The decompositions checked once against the interpreter's own kernels (LAPACK): every op with a decomposition on
// every dtype it accepts (the catalogue's samples), then the semantic edge cases by hand, and the rewrite itself.
#include "evoxc/transforms/decompose.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "evoxc/evoxc.h"
#include "ops/ops_util.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

using testing::expect_close;
using testing::random_inputs;
using testing::run_flat;

// A table with no rules: every op with a decomposition expands.
const RuleTableBase& nothing_native() {
  static const RuleTable<int, BackendError> t("none");
  return t;
}

// Per dtype: the rounding a reordered float computation may differ by (half floats round the float32 result).
double tol_for(DType t) {
  switch (t) {
    case DType::F16: return 2e-2;
    case DType::BF16: return 1e-1;
    case DType::F32: return 2e-4;
    default: return 1e-9;
  }
}

// Whether any op of the graph's main block (at any depth) is `name`.
bool contains(const Block& b, const std::string& name) {
  for (const auto& op : b.operations()) {
    if (op->name() == name) return true;
    for (const auto& r : op->regions())
      if (contains(r->block(), name)) return true;
  }
  return false;
}

// Runs g and its full decomposition on the same inputs and compares every output.
void expect_decomposition_matches(const Graph& g, const std::vector<Tensor>& inputs, double tol,
                                  const std::string& what) {
  Graph d = decompose(g, nothing_native());
  for (const auto& op : g.main().entry().operations()) {
    if (decompositions().has(op->op_id())) {
      EXPECT_FALSE(contains(d.main().entry(), op->name())) << what << ": " << op->name() << " was not expanded";
    }
  }
  std::vector<Tensor> want = run_flat(g, inputs);
  std::vector<Tensor> got = run_flat(d, inputs);
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    if (is_float(want[i].dtype()))
      expect_close(got[i], want[i], tol, tol, what + " output " + std::to_string(i));
    else
      EXPECT_EQ(testing::values_of(got[i]), testing::values_of(want[i])) << what << " output " << i;
  }
}

TEST(Decompose, EveryDecomposableOpOnEveryDtypeMatchesTheInterpreter) {
  int checked = 0;
  for (const OpDef* def : all_ops()) {
    if (!decompositions().has(def->id)) continue;
    for (DType t : testing::all_dtypes()) {
      if (!dtype_in_class(t, def->operand_dtypes)) continue;
      Graph g = testing::one_op_graph(*def, testing::sample_call(*def, t));
      // Well-conditioned inputs: the identity plus noise (a singular sample would compare inf with inf).
      std::vector<Tensor> in = random_inputs(g, 7 + static_cast<uint64_t>(t), -0.5, 0.5);
      // A sparse structure must be valid for the interpreter to run it: ones, as the catalogue's samples take.
      if (def->category == OpCategory::Sparse)
        for (Tensor& x : in)
          if (is_int(x.dtype())) x = Tensor::full(x.shape(), 1.0, x.dtype());
      for (Tensor& x : in) {
        if (x.shape().size() < 2 || x.shape().back() != x.shape()[x.shape().size() - 2]) continue;
        std::vector<double> v = testing::values_of(x);
        int64_t n = x.shape().back();
        for (size_t k = 0; k < v.size(); ++k)
          if (static_cast<int64_t>(k) % n == static_cast<int64_t>(k) / n % n) v[k] += 2.0;
        x = testing::make_tensor(v, x.shape(), t);
      }
      expect_decomposition_matches(g, in, tol_for(t), def->name + " " + std::string(dtype_name(t)));
      ++checked;
    }
  }
  // lu, solve, inv, det, slogdet, qr, matrix_exp, norm, matrix_rank on four float dtypes at least.
  EXPECT_GE(checked, 36);
}

// A traced program over specs, checked on random inputs (and their scaled, shifted variants) against the kernels.
template <typename F>
void check(F&& fn, const std::vector<TensorSpec>& specs, const std::string& what, double tol = 1e-9, double lo = -1.0,
           double hi = 1.0) {
  std::vector<TraceArg> args;
  for (const auto& s : specs) args.push_back(arg_leaf(s));
  Graph g = trace_dynamic(
      [&](const std::vector<TracedArg>& a) {
        std::vector<SymbolicTensor> in;
        for (const auto& x : a) in.push_back(std::get<SymbolicTensor>(x.leaf()));
        std::vector<Tree<SymbolicTensor>> outs;
        for (const SymbolicTensor& o : fn(in)) outs.emplace_back(o);
        return Tree<SymbolicTensor>::tuple(std::move(outs));
      },
      args);
  for (uint64_t seed = 1; seed <= 3; ++seed)
    expect_decomposition_matches(g, random_inputs(g, seed, lo, hi, 4), tol, what + " seed " + std::to_string(seed));
}

TensorSpec f64(std::vector<DimExpr> dims) { return TensorSpec(Shape(std::move(dims)), DType::F64); }

// A (..., n, n) input well away from singular: random plus 3 on the diagonal.
Tensor dominant(const std::vector<int64_t>& shape, uint64_t seed) {
  Tensor x = testing::random_tensor(shape, DType::F64, seed);
  std::vector<double> v = testing::values_of(x);
  int64_t n = shape.back();
  for (size_t k = 0; k < v.size(); ++k)
    if (static_cast<int64_t>(k) % n == static_cast<int64_t>(k) / n % n) v[k] += 3.0;
  return testing::make_tensor(v, shape, DType::F64);
}

TEST(Decompose, TriangularSolveEveryFlagCombination) {
  for (int flags = 0; flags < 16; ++flags) {
    bool left = flags & 1, lower = flags & 2, trans = flags & 4, unit = flags & 8;
    std::vector<int64_t> bshape = left ? std::vector<int64_t>{2, 4, 3} : std::vector<int64_t>{2, 3, 4};
    Graph g = trace([&](const SymbolicTensor& a,
                        const SymbolicTensor& b) { return linalg::triangular_solve(a, b, left, lower, trans, unit); },
                    f64({2, 4, 4}), TensorSpec(Shape::from_ints(bshape), DType::F64));
    expect_decomposition_matches(g, {dominant({2, 4, 4}, 3), testing::random_tensor(bshape, DType::F64, 4)}, 1e-12,
                                 "triangular_solve flags " + std::to_string(flags));
  }
}

TEST(Decompose, CholeskyReadsOneTriangleAndPoisonsWhatIsNotPositiveDefinite) {
  for (bool upper : {false, true}) {
    Graph g = trace([upper](const SymbolicTensor& a) { return linalg::cholesky(a, upper); }, f64({Dim("B"), 4, 4}));
    // Symmetric positive definite from the dominant diagonal; the triangle not read holds garbage.
    expect_decomposition_matches(g, {dominant({3, 4, 4}, 9)}, 1e-12, upper ? "cholesky upper" : "cholesky lower");
    // A negative pivot in the second matrix only: that matrix is all NaN, the first is not.
    std::vector<double> v = testing::values_of(dominant({2, 4, 4}, 10));
    v[16 + 5] = -4.0;
    expect_decomposition_matches(g, {testing::make_tensor(v, {2, 4, 4}, DType::F64)}, 1e-12, "cholesky not PD");
  }
}

TEST(Decompose, LuPivotsAndPermutationAreLapacksOnRectangularAndBatchedStacks) {
  for (auto shape : {std::vector<DimExpr>{5, 5}, {6, 3}, {3, 6}, {2, 4, 4}, {Dim("B"), 3, 4}}) {
    check(
        [](const std::vector<SymbolicTensor>& a) {
          auto r = linalg::lu(a[0]);
          return std::vector<SymbolicTensor>{r.lu, r.pivots, r.permutation};
        },
        {f64(shape)}, "lu " + Shape(shape).to_string());
  }
}

TEST(Decompose, SolveInvDetSlogdetOnBatchesIncludingSymbolicOnes) {
  for (auto batch : {std::vector<DimExpr>{}, {3}, {Dim("B")}}) {
    auto sq = batch, rhs = batch;
    sq.insert(sq.end(), {4, 4});
    rhs.insert(rhs.end(), {4, 2});
    check([](const std::vector<SymbolicTensor>& a) { return std::vector<SymbolicTensor>{linalg::solve(a[0], a[1])}; },
          {f64(sq), f64(rhs)}, "solve " + Shape(sq).to_string(), 1e-8);
    check(
        [](const std::vector<SymbolicTensor>& a) {
          auto s = linalg::slogdet(a[0]);
          return std::vector<SymbolicTensor>{linalg::inv(a[0]), linalg::det(a[0]), s.sign, s.logabsdet};
        },
        {f64(sq)}, "inv/det/slogdet " + Shape(sq).to_string(), 1e-8);
  }
}

TEST(Decompose, SingularAndNonFiniteMatricesGiveTheKernelsSpecialValues) {
  Graph g = trace(
      [](const SymbolicTensor& a) {
        auto s = linalg::slogdet(a);
        return std::vector<SymbolicTensor>{linalg::det(a), s.sign, s.logabsdet};
      },
      f64({3, 3}));
  double nan = std::numeric_limits<double>::quiet_NaN();
  // A zero column: det 0, sign 0, logabsdet -inf. A NaN: NaN. A zero matrix: no pivot moves.
  for (const std::vector<double>& v : {std::vector<double>{1, 0, 2, 3, 0, 4, 5, 0, 6},
                                       {1, 2, 3, 4, nan, 6, 7, 8, 9},
                                       std::vector<double>(9, 0.0),
                                       {0, 1, 0, 1, 0, 0, 0, 0, 1}}) {
    Tensor a = testing::make_tensor(v, {3, 3}, DType::F64);
    expect_decomposition_matches(g, {a}, 1e-12, "det special");
  }
}

TEST(Decompose, QrReducedAndCompleteMatchLapacksSigns) {
  for (const char* mode : {"reduced", "complete"}) {
    for (auto shape : {std::vector<DimExpr>{4, 4}, {6, 3}, {3, 5}, {2, 5, 3}}) {
      check(
          [mode](const std::vector<SymbolicTensor>& a) {
            auto r = linalg::qr(a[0], mode);
            return std::vector<SymbolicTensor>{r.Q, r.R};
          },
          {f64(shape)}, std::string("qr ") + mode + " " + Shape(shape).to_string(), 1e-10);
    }
  }
  // A zero column below the diagonal: tau = 0, H = I (and no NaN from 0 / 0).
  Graph g = trace(
      [](const SymbolicTensor& a) {
        auto r = linalg::qr(a);
        return std::vector<SymbolicTensor>{r.Q, r.R};
      },
      f64({3, 3}));
  expect_decomposition_matches(g, {testing::make_tensor({1, 2, 3, 0, 4, 5, 0, 0, 6}, {3, 3}, DType::F64)}, 1e-12,
                               "qr triangular");
}

TEST(Decompose, MatrixExpSquaresAsTheInterpreterDoesAndPoisonsNonFinite) {
  for (double scale : {0.01, 1.0, 40.0}) {
    check([](const std::vector<SymbolicTensor>& a) { return std::vector<SymbolicTensor>{linalg::matrix_exp(a[0])}; },
          {f64({2, 4, 4})}, "matrix_exp scale " + std::to_string(scale), 1e-8, -scale, scale);
  }
  Graph g = trace([](const SymbolicTensor& a) { return linalg::matrix_exp(a); }, f64({2, 2}));
  expect_decomposition_matches(
      g, {testing::make_tensor({1, std::numeric_limits<double>::infinity(), 0, 1}, {2, 2}, DType::F64)}, 0, "expm inf");
}

TEST(Decompose, NormEveryOrdAndMatrixRankEveryTolerance) {
  for (double p :
       {1.0, 2.0, 3.5, 0.0, -1.0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    check(
        [p](const std::vector<SymbolicTensor>& a) {
          return std::vector<SymbolicTensor>{linalg::norm(a[0], p, std::vector<int64_t>{-1})};
        },
        {f64({3, 5})}, "vector norm p=" + std::to_string(p), 1e-12);
  }
  for (double ord :
       {1.0, -1.0, 2.0, -2.0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    check(
        [ord](const std::vector<SymbolicTensor>& a) {
          return std::vector<SymbolicTensor>{linalg::norm(a[0], ord, std::vector<int64_t>{-2, -1})};
        },
        {f64({2, 4, 3})}, "matrix norm ord=" + std::to_string(ord), 1e-10);
  }
  for (const char* ord : {"fro", "nuc"})
    check([ord](const std::vector<SymbolicTensor>& a) { return std::vector<SymbolicTensor>{linalg::norm(a[0], ord)}; },
          {f64({5, 3})}, std::string("norm ") + ord, 1e-10);
  // A symbolic vector length, also 0 at run time.
  Graph g = trace([](const SymbolicTensor& x) { return linalg::norm(x, 1.0); }, f64({Dim("N")}));
  expect_decomposition_matches(g, {testing::make_tensor({}, {0}, DType::F64)}, 0, "norm of an empty vector");
  // matrix_rank: the default rtol, an explicit tol and rtol, and a rank-deficient matrix (two equal rows).
  Tensor deficient = testing::make_tensor({1, 2, 3, 1, 2, 3, 0, 1, 1}, {3, 3}, DType::F64);
  for (int which = 0; which < 3; ++which) {
    Graph r = trace(
        [which](const SymbolicTensor& a) {
          return which == 0   ? linalg::matrix_rank(a)
                 : which == 1 ? linalg::matrix_rank(a, 0.5)
                              : linalg::matrix_rank(a, std::nullopt, 0.2);
        },
        f64({3, 3}));
    expect_decomposition_matches(r, {deficient}, 0, "matrix_rank " + std::to_string(which));
    expect_decomposition_matches(r, random_inputs(r, 5), 0, "matrix_rank random " + std::to_string(which));
  }
}

TEST(Decompose, ZeroExtentsAsTheKernels) {
  for (auto shape : {std::vector<DimExpr>{2, 0, 0}, {0, 3}, {3, 0}, {0, 0}}) {
    check(
        [](const std::vector<SymbolicTensor>& a) {
          auto l = linalg::lu(a[0]);
          auto q = linalg::qr(a[0]);
          return std::vector<SymbolicTensor>{l.lu, l.pivots, l.permutation,
                                             q.Q,  q.R,      linalg::norm(a[0], "fro", std::vector<int64_t>{-2, -1})};
        },
        {f64(shape)}, "empty " + Shape(shape).to_string());
  }
  check(
      [](const std::vector<SymbolicTensor>& a) {
        auto s = linalg::slogdet(a[0]);
        return std::vector<SymbolicTensor>{
            linalg::det(a[0]),     s.sign, s.logabsdet, linalg::inv(a[0]), linalg::matrix_exp(a[0]),
            linalg::cholesky(a[0])};
      },
      {f64({2, 0, 0})}, "empty square");
}

TEST(Decompose, KeepsWhatTheBackendLowersAndTheOpLocation) {
  Graph g = trace([](const SymbolicTensor& a) { return linalg::det(a) + linalg::norm(a); }, f64({3, 3}));
  // Nothing to expand: the same graph back.
  RuleTable<int, BackendError> all("all");
  for (const OpDef* d : all_ops()) all.set(*d, 0);
  EXPECT_EQ(decompose(g, all).module_ptr(), g.module_ptr());
  // det expanded, norm kept; every op det became carries det's location.
  RuleTable<int, BackendError> no_det("no_det");
  for (const OpDef* d : all_ops())
    if (d->name != "det") no_det.set(*d, 0);
  Graph d = decompose(g, no_det);
  EXPECT_FALSE(contains(d.main().entry(), "det"));
  EXPECT_TRUE(contains(d.main().entry(), "norm"));
  std::string det_loc;
  for (const auto& op : g.main().entry().operations())
    if (op->name() == "det") det_loc = op->location().to_string();
  ASSERT_FALSE(det_loc.empty());
  size_t at_det = 0;
  for (const auto& op : d.main().entry().operations()) at_det += op->location().to_string() == det_loc;
  EXPECT_GT(at_det, 10u);
  EXPECT_EQ(d.input_tree().structure_string(), g.input_tree().structure_string());
  EXPECT_EQ(d.output_tree().structure_string(), g.output_tree().structure_string());
}

TEST(Decompose, InsideControlFlowBodies) {
  Graph g = trace(
      [](const SymbolicTensor& a) {
        return fori_loop(
            0, 3, [&](const SymbolicTensor&, const SymbolicTensor& x) { return linalg::inv(x) * 0.5 + x; }, a);
      },
      f64({3, 3}));
  std::vector<Tensor> in = {testing::make_tensor({4, 1, 0, 1, 3, 1, 0, 1, 5}, {3, 3}, DType::F64)};
  expect_decomposition_matches(g, in, 1e-10, "inv in fori_loop");
}

TEST(Decompose, SingularValuesNeedStaticMatrixExtents) {
  Graph g = trace([](const SymbolicTensor& a) { return linalg::norm(a, 2.0); }, f64({Dim("M"), 3}));
  try {
    decompose(g, nothing_native());
    FAIL() << "expected a BackendError";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("static matrix extents only"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("evoxc.norm at "), std::string::npos) << e.what();
  }
}

TEST(Decompose, TheCoverageViewAddsDecomposedOpsAndKeepsDeferrals) {
  RuleTable<int, BackendError> native("native");
  native.defer("svd", "no svd here");
  native.set("add", 0);
  DecomposedCoverage view(native);
  EXPECT_TRUE(view.has(get_op("add").id));
  EXPECT_TRUE(view.has(get_op("qr").id));
  EXPECT_FALSE(view.has(get_op("svd").id));
  ASSERT_NE(view.deferral(get_op("svd").id), nullptr);
  EXPECT_EQ(*view.deferral(get_op("svd").id), "no svd here");
  EXPECT_EQ(view.name(), "native");
}

}  // namespace
}  // namespace evoxc
