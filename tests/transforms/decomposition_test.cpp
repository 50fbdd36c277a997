// Tests of the decomposition family's transform rules: vmap vs a loop, jvp vs finite differences, vjp vs jvp duality.
//
// Inputs are well-conditioned float64 matrices (SPD for cholesky, symmetric for eigh), unbatched (3x3) and with a
// leading batch dim (2x3x3).
#include <gtest/gtest.h>

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
using testing::stack;

// How a case's operand is drawn: well-conditioned for the op that reads it.
enum class Draw {
  General,    // uniform [-1, 1); square ones get 3 I added (far from singular)
  SPD,        // B B^T + n I
  Symmetric,  // B + B^T (distinct eigenvalues almost surely)
  Plain,      // uniform [-1, 1)
};

struct Case {
  std::string op;
  std::vector<std::vector<int64_t>> shapes;  // unbatched operand shapes
  std::vector<Draw> draws;
  AttrMap attrs;
  std::string label() const {
    std::string s = op;
    for (const auto& [k, v] : attrs)
      if (const bool* b = std::get_if<bool>(&v)) s += " " + k + "=" + (*b ? "1" : "0");
    for (const auto& sh : shapes) {
      s += " (";
      for (size_t i = 0; i < sh.size(); ++i) s += (i ? "x" : "") + std::to_string(sh[i]);
      s += ")";
    }
    return s;
  }
};

std::vector<Case> cases() {
  std::vector<Case> out;
  using D = Draw;
  const std::vector<int64_t> sq{3, 3};
  for (bool lower : {true, false}) out.push_back({"cholesky", {sq}, {D::SPD}, {{"lower", lower}}});
  for (bool left : {true, false})
    for (bool lower : {true, false})
      for (bool trans : {true, false})
        for (bool unit : {true, false})
          out.push_back({"triangular_solve",
                         {sq, left ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3}},
                         {D::General, D::Plain},
                         {{"left_side", left}, {"lower", lower}, {"transpose_a", trans}, {"unit_diagonal", unit}}});
  out.push_back({"solve", {sq, {3, 2}}, {D::General, D::Plain}, {}});
  for (const auto& s : std::vector<std::vector<int64_t>>{sq, {4, 3}, {3, 4}})
    out.push_back({"lu", {s}, {D::Plain}, {}});
  out.push_back({"qr", {sq}, {D::Plain}, {{"full_matrices", false}}});
  out.push_back({"qr", {sq}, {D::Plain}, {{"full_matrices", true}}});
  out.push_back({"qr", {{4, 3}}, {D::Plain}, {{"full_matrices", false}}});
  for (bool full : {true, false}) out.push_back({"qr", {{3, 5}}, {D::Plain}, {{"full_matrices", full}}});
  for (bool lower : {true, false}) out.push_back({"eigh", {sq}, {D::Symmetric}, {{"lower", lower}}});
  for (const auto& s : std::vector<std::vector<int64_t>>{sq, {4, 3}, {3, 4}})
    for (bool uv : {true, false})
      for (bool full : {true, false}) {
        if (uv && full && s[0] != s[1]) continue;  // no jvp (checked separately)
        out.push_back({"svd", {s}, {D::Plain}, {{"full_matrices", full}, {"compute_uv", uv}}});
      }
  for (const char* op : {"inv", "det", "slogdet"}) out.push_back({op, {sq}, {D::General}, {}});
  out.push_back({"matrix_exp", {sq}, {D::Plain}, {}});
  return out;
}

// The case's operand types with `batch` leading dims.
std::vector<TensorType> types(const Case& c, const std::vector<int64_t>& batch) {
  std::vector<TensorType> t;
  for (const auto& s : c.shapes) {
    std::vector<int64_t> full = batch;
    full.insert(full.end(), s.begin(), s.end());
    t.emplace_back(DType::F64, Shape::from_ints(full));
  }
  return t;
}

Graph case_graph(const Case& c, const std::vector<int64_t>& batch) {
  return testing::one_op_graph(get_op(c.op), OpSample{types(c, batch), c.attrs});
}

// One operand of `shape` (..., M, N) drawn as `d`, every matrix of the stack independently.
Tensor draw(const std::vector<int64_t>& shape, Draw d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int64_t m = shape[shape.size() - 2], n = shape[shape.size() - 1], count = 1;
  for (size_t i = 0; i + 2 < shape.size(); ++i) count *= shape[i];
  std::vector<double> v;
  for (int64_t q = 0; q < count; ++q) {
    std::vector<double> b(static_cast<size_t>(m * n));
    for (auto& x : b) x = u(rng);
    std::vector<double> a = b;
    auto at = [&](std::vector<double>& x, int64_t i, int64_t j) -> double& {
      return x[static_cast<size_t>(i * n + j)];
    };
    if (d == Draw::General && m == n)
      for (int64_t i = 0; i < n; ++i) at(a, i, i) += 3.0;
    if (d == Draw::SPD)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t k = 0; k < n; ++k) s += at(b, i, k) * at(b, j, k);
          at(a, i, j) = s + (i == j ? static_cast<double>(n) : 0.0);
        }
    if (d == Draw::Symmetric)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) at(a, i, j) = at(b, i, j) + at(b, j, i);
    v.insert(v.end(), a.begin(), a.end());
  }
  return make_tensor(v, shape, DType::F64);
}

std::vector<Tensor> draw_inputs(const Case& c, const std::vector<int64_t>& batch, uint64_t seed) {
  std::vector<Tensor> out;
  std::vector<TensorType> t = types(c, batch);
  for (size_t i = 0; i < t.size(); ++i) {
    std::vector<int64_t> s;
    for (const DimExpr& d : t[i].shape) s.push_back(d.value());
    out.push_back(draw(s, c.draws[i], seed + 31 * i));
  }
  return out;
}

// vmap over 3 batch elements drawn as the case says (the shared helper draws plain uniform rows,
// which are not SPD for cholesky): every row of vectorize(g) equals g on that row.
void expect_vmap_matches_loop(const Graph& g, const Case& c, const std::vector<int64_t>& batch,
                              const std::vector<bool>& mapped) {
  const int64_t n = 3;
  std::vector<std::vector<Tensor>> per(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; ++b)
    per[static_cast<size_t>(b)] = draw_inputs(c, batch, 100 + 7 * static_cast<uint64_t>(b));
  std::vector<Tensor> batched;
  std::vector<AxisTree> axes;
  for (size_t i = 0; i < mapped.size(); ++i) {
    if (!mapped[i]) {
      for (int64_t b = 1; b < n; ++b) per[static_cast<size_t>(b)][i] = per[0][i];
      batched.push_back(per[0][i]);
      axes.push_back(AxisTree::none());
      continue;
    }
    std::vector<Tensor> rows;
    for (int64_t b = 0; b < n; ++b) rows.push_back(per[static_cast<size_t>(b)][i]);
    batched.push_back(stack(rows));
    axes.push_back(AxisTree(0));
  }
  Graph vg = vectorize(g, AxisTree::tuple(axes), AxisTree(0));
  std::vector<Tensor> got = testing::run_flat(vg, batched);
  for (int64_t b = 0; b < n; ++b) {
    std::vector<Tensor> want = testing::run_flat(g, per[static_cast<size_t>(b)]);
    ASSERT_EQ(want.size(), got.size());
    for (size_t k = 0; k < want.size(); ++k)
      testing::expect_close(row(got[k], b), want[k], 1e-12, 1e-12,
                            "vmap output " + std::to_string(k) + " row " + std::to_string(b));
  }
}

const std::vector<std::vector<int64_t>> kBatches{{}, {2}};

TEST(DecompositionRules, VmapMatchesLoop) {
  int checked = 0;
  for (const Case& c : cases())
    for (const auto& batch : kBatches) {
      SCOPED_TRACE(c.label() + (batch.empty() ? "" : " batched"));
      Graph g = case_graph(c, batch);
      expect_vmap_matches_loop(g, c, batch, std::vector<bool>(c.shapes.size(), true));
      // solve / triangular_solve with one operand shared: it must be given the batch axis.
      if (c.shapes.size() == 2) {
        expect_vmap_matches_loop(g, c, batch, {true, false});
        expect_vmap_matches_loop(g, c, batch, {false, true});
      }
      ++checked;
    }
  EXPECT_GT(checked, 60);
}

TEST(DecompositionRules, JvpMatchesFiniteDifferences) {
  int checked = 0;
  for (const Case& c : cases())
    for (const auto& batch : kBatches) {
      SCOPED_TRACE(c.label() + (batch.empty() ? "" : " batched"));
      Graph g = case_graph(c, batch);
      testing::expect_jvp_matches_fd(g, draw_inputs(c, batch, 5));
      ++checked;
    }
  EXPECT_GT(checked, 60);
}

TEST(DecompositionRules, JvpWithASymbolicBatchDim) {
  // Leading dims may be symbolic (a graph traced with a batch symbol, or jvp of a vmapped graph):
  // the rules only read the matrix extents.
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.label());
    std::vector<TensorType> ts;
    for (const auto& s : c.shapes) {
      std::vector<DimExpr> d{DimExpr::symbol("N")};
      for (int64_t x : s) d.emplace_back(x);
      ts.emplace_back(DType::F64, Shape(d));
    }
    Graph g = testing::one_op_graph(get_op(c.op), OpSample{ts, c.attrs});
    testing::expect_jvp_matches_fd(g, draw_inputs(c, {2}, 21));
  }
}

TEST(DecompositionRules, JvpOfFloat32KeepsTheDtype) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.label());
    std::vector<TensorType> ts;
    for (const auto& s : c.shapes) ts.emplace_back(DType::F32, Shape::from_ints(s));
    Graph g = testing::one_op_graph(get_op(c.op), OpSample{ts, c.attrs});
    Graph jg = jvp(g);
    std::vector<TensorSpec> outs = g.output_specs(), jouts = jg.output_specs();
    size_t k = outs.size();
    for (const TensorSpec& o : outs)
      if (o.dtype == DType::F32) {
        EXPECT_EQ(jouts[k++].dtype, DType::F32);
      }
  }
}

// The transposes every jvp rule of this family leans on (most belong to other families); a
// duality test runs once all of them exist.
std::vector<std::string> missing_transposes() {
  std::vector<std::string> missing;
  for (const char* op : {"dot", "dot_general", "transpose", "tril", "triu", "diagonal", "trace", "add", "subtract",
                         "neg", "multiply", "divide", "slice", "concatenate", "triangular_solve", "solve"})
    if (!transforms::transpose_rules().has(get_op(op).id)) missing.push_back(op);
  return missing;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

TEST(DecompositionRules, VjpMatchesJvp) {
  std::vector<std::string> missing = missing_transposes();
  if (!missing.empty()) GTEST_SKIP() << "transpose rules not yet installed: " << joined(missing);
  for (const Case& c : cases())
    for (const auto& batch : kBatches) {
      SCOPED_TRACE(c.label() + (batch.empty() ? "" : " batched"));
      Graph g = case_graph(c, batch);
      testing::expect_vjp_matches_jvp(g, draw_inputs(c, batch, 9));
    }
}

TEST(DecompositionRules, SolveTransposesAlone) {
  // The transposes of the linear ops alone: with an integer matrix (no tangent) the jvp of
  // b -> solve(A, b) is one solve in b, so vjp/jvp duality needs no other family's rules.
  Tensor a = make_tensor({4, 1, 0, -1, 3, 1, 2, 1, 5}, {3, 3}, DType::I32);
  Tensor b = make_tensor({0.5, -1.0, 0.25, 2.0, 1.5, -0.75}, {3, 2}, DType::F64);
  Tensor bt = make_tensor({0.5, -1.0, 0.25, 2.0, 1.5, -0.75}, {2, 3}, DType::F64);
  TensorSpec as({3, 3}, DType::I32), bs({3, 2}, DType::F64), bts({2, 3}, DType::F64);
  Graph g = trace([](const SymbolicTensor& x, const SymbolicTensor& y) { return linalg::solve(x, y); }, as, bs);
  testing::expect_vjp_matches_jvp(g, {a, b});
  for (bool left : {true, false})
    for (bool lower : {true, false})
      for (bool trans : {true, false})
        for (bool unit : {true, false}) {
          SCOPED_TRACE(std::string("triangular_solve left=") + (left ? "1" : "0") + " lower=" + (lower ? "1" : "0") +
                       " trans=" + (trans ? "1" : "0") + " unit=" + (unit ? "1" : "0"));
          Graph ts =
              trace([&](const SymbolicTensor& x,
                        const SymbolicTensor& y) { return linalg::triangular_solve(x, y, left, lower, trans, unit); },
                    as, left ? bs : bts);
          testing::expect_vjp_matches_jvp(ts, {a, left ? b : bt});
        }
}

TEST(DecompositionRules, GradOfLogdetIsInverseTranspose) {
  std::vector<std::string> missing;
  for (const char* op : {"trace", "solve", "multiply"})
    if (!transforms::transpose_rules().has(get_op(op).id)) missing.push_back(op);
  if (!missing.empty()) GTEST_SKIP() << "transpose rules not yet installed: " << joined(missing);
  Graph g = trace([](const SymbolicTensor& a) { return linalg::slogdet(a).logabsdet; }, TensorSpec({3, 3}, DType::F64));
  // A non-symmetric matrix with a negative determinant, so the sign does not hide a transpose.
  Tensor a = make_tensor({0.0, 2.0, 1.0, 1.5, 0.3, -0.4, 0.2, 1.1, -2.0}, {3, 3}, DType::F64);
  std::vector<Tensor> got = testing::run_flat(grad(g), {a});
  Graph inv_t =
      trace([](const SymbolicTensor& x) { return transpose(linalg::inv(x)); }, TensorSpec({3, 3}, DType::F64));
  std::vector<Tensor> want = testing::run_flat(inv_t, {a});
  ASSERT_EQ(got.size(), 1u);
  testing::expect_close(got[0], want[0], 1e-10, 1e-12, "grad logdet vs inv(A)^T");
  // And d det / dA = det(A) inv(A)^T.
  Graph gd = trace([](const SymbolicTensor& x) { return linalg::det(x); }, TensorSpec({3, 3}, DType::F64));
  Graph cof = trace([](const SymbolicTensor& x) { return linalg::det(x) * transpose(linalg::inv(x)); },
                    TensorSpec({3, 3}, DType::F64));
  testing::expect_close(testing::run_flat(grad(gd), {a})[0], testing::run_flat(cof, {a})[0], 1e-10, 1e-12,
                        "grad det vs det(A) inv(A)^T");
}

TEST(DecompositionRules, LogdetJvpIsTraceOfInverseTimesTangent) {
  // Forward mode needs no other family's transposes: d log|det A| [dA] = tr(A^-1 dA).
  Graph g = trace([](const SymbolicTensor& a) { return linalg::slogdet(a).logabsdet; }, TensorSpec({3, 3}, DType::F64));
  Tensor a = make_tensor({0.0, 2.0, 1.0, 1.5, 0.3, -0.4, 0.2, 1.1, -2.0}, {3, 3}, DType::F64);
  Graph inv = trace([](const SymbolicTensor& x) { return linalg::inv(x); }, TensorSpec({3, 3}, DType::F64));
  std::vector<double> ai = testing::values_of(testing::run_flat(inv, {a})[0]);
  Graph jg = jvp(g);
  for (int k = 0; k < 9; ++k) {
    std::vector<double> e(9, 0.0);
    e[static_cast<size_t>(k)] = 1.0;
    std::vector<Tensor> out = testing::run_flat(jg, {a, make_tensor(e, {3, 3}, DType::F64)});
    // tr(A^-1 E_ij) = (A^-1)_ji = (A^-T)_ij.
    int i = k / 3, j = k % 3;
    EXPECT_NEAR(out[1].get_as_double(0), ai[static_cast<size_t>(j * 3 + i)], 1e-12) << "entry " << i << ", " << j;
  }
}

TEST(DecompositionRules, NoJvpWhereTheFactorsAreNotUnique) {
  // svd with full_matrices of a non-square matrix, qr with full_matrices of a tall one: a TransformError.
  Graph s = testing::one_op_graph(
      get_op("svd"), OpSample{{TensorType(DType::F64, Shape{4, 3})}, {{"full_matrices", true}, {"compute_uv", true}}});
  EXPECT_THROW(jvp(s), TransformError);
  Graph qf =
      testing::one_op_graph(get_op("qr"), OpSample{{TensorType(DType::F64, Shape{4, 3})}, {{"full_matrices", true}}});
  EXPECT_THROW(jvp(qf), TransformError);
}

TEST(DecompositionRules, EighJvpAtRepeatedEigenvaluesIsNaNOnlyInTheEigenvectors) {
  // The identity has one triple eigenvalue: eigenvalue tangents are diag(V^T dA V) (finite), the
  // eigenvector tangents divide by w_j - w_i = 0 (documented: inf/NaN, as JAX).
  Graph g = testing::one_op_graph(get_op("eigh"), OpSample{{TensorType(DType::F64, Shape{3, 3})}, {{"lower", true}}});
  Tensor id = make_tensor({1, 0, 0, 0, 1, 0, 0, 0, 1}, {3, 3}, DType::F64);
  Tensor t = make_tensor({0.1, 0, 0, 0.2, 0.3, 0, 0.4, 0.5, 0.6}, {3, 3}, DType::F64);
  std::vector<Tensor> out = testing::run_flat(jvp(g), {id, t});
  for (double v : testing::values_of(out[2])) EXPECT_TRUE(std::isfinite(v));
  bool any_nonfinite = false;
  for (double v : testing::values_of(out[3])) any_nonfinite = any_nonfinite || !std::isfinite(v);
  EXPECT_TRUE(any_nonfinite);
}

}  // namespace
}  // namespace evoxc
