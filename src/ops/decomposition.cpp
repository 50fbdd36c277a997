// OpDefs for dot_general and the LAPACK-backed linear algebra (cholesky ... trace), with inference over DimExpr shapes.
#include <cmath>
#include <string>
#include <vector>

#include "registry.h"

namespace evoxc::ops_detail {
namespace {

std::string paren(const Shape& s) { return "(" + s.to_string() + ")"; }
std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

Shape batch_of(const Shape& s, size_t drop) {
  return Shape(std::vector<DimExpr>(s.dims().begin(), s.dims().end() - static_cast<std::ptrdiff_t>(drop)));
}
Shape with(Shape s, std::initializer_list<DimExpr> tail) {
  for (const DimExpr& d : tail) s.dims().push_back(d);
  return s;
}

// ShapeError unless `t` has rank >= 2 (a stack of matrices).
void require_matrix(const std::string& op, const TensorType& t, const char* what = "the operand") {
  if (t.rank() < 2)
    throw ShapeError(op_label(op) + ": " + what + " " + paren(t.shape) + " has rank " + std::to_string(t.rank()) +
                     "; it needs rank >= 2, a (..., M, N) stack of matrices (reshape a vector to (1, N) or (N, 1))");
}
void require_square(const std::string& op, const TensorType& t, const char* what = "the operand") {
  require_matrix(op, t, what);
  const DimExpr& m = t.shape[t.rank() - 2];
  const DimExpr& n = t.shape[t.rank() - 1];
  if (m != n)
    throw ShapeError(op_label(op) + ": " + what + " " + paren(t.shape) + " is not a stack of square matrices: " +
                     m.to_string() + " rows and " + n.to_string() + " columns; the last two extents must be equal");
}
// The second operand of solve/triangular_solve: same rank and batch dims as the first.
void require_same_batch(const std::string& op, const TensorType& a, const TensorType& b) {
  if (b.rank() != a.rank())
    throw ShapeError(op_label(op) + ": b " + paren(b.shape) + " has rank " + std::to_string(b.rank()) + " but a " +
                     paren(a.shape) + " has rank " + std::to_string(a.rank()) +
                     "; both need the same batch dims (evoxc::linalg functions broadcast them for you)");
  for (size_t i = 0; i + 2 < a.rank(); ++i)
    if (a.shape[i] != b.shape[i])
      throw ShapeError(op_label(op) + ": batch dim " + std::to_string(i) + " differs: a " + paren(a.shape) + ", b " +
                       paren(b.shape) + "; broadcast the operands to one batch shape first");
}

OpDef la_op(const char* name, int operands, DTypeClass dtypes, std::vector<AttrSpec> attrs, InferFn infer,
            const char* doc) {
  OpDef d;
  d.name = name;
  d.category = OpCategory::LinearAlgebra;
  d.min_operands = d.max_operands = operands;
  d.operand_dtypes = dtypes;
  d.attrs = std::move(attrs);
  d.infer = std::move(infer);
  d.doc = doc;
  return d;
}

void check_dims_list(const std::string& op, const char* attr, const std::vector<int64_t>& dims, size_t rank,
                     std::vector<bool>& used, const Shape& s) {
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(rank))
      throw ShapeError(op_label(op) + ": " + attr + " " + ints_text(dims) + " names axis " + std::to_string(d) +
                       ", out of range for " + paren(s) + " of rank " + std::to_string(rank) +
                       "; axes are non-negative (the tracer normalizes negative ones)");
    if (used[static_cast<size_t>(d)])
      throw ShapeError(op_label(op) + ": axis " + std::to_string(d) + " of " + paren(s) +
                       " appears twice among the batch and contracting dims; name each axis at most once");
    used[static_cast<size_t>(d)] = true;
  }
}

std::vector<TensorType> infer_dot_general(std::span<const TensorType> ops, const AttrMap& attrs) {
  const std::string op = "dot_general";
  require_same_dtype(op, ops);
  const auto& lc = attr_ints(attrs, "lhs_contracting_dims", op);
  const auto& rc = attr_ints(attrs, "rhs_contracting_dims", op);
  const auto& lb = attr_ints(attrs, "lhs_batch_dims", op);
  const auto& rb = attr_ints(attrs, "rhs_batch_dims", op);
  const Shape& a = ops[0].shape;
  const Shape& b = ops[1].shape;
  if (lc.size() != rc.size())
    throw ShapeError(op_label(op) + ": lhs_contracting_dims " + ints_text(lc) + " and rhs_contracting_dims " +
                     ints_text(rc) + " have different lengths; they pair up axis by axis");
  if (lb.size() != rb.size())
    throw ShapeError(op_label(op) + ": lhs_batch_dims " + ints_text(lb) + " and rhs_batch_dims " + ints_text(rb) +
                     " have different lengths; they pair up axis by axis");
  std::vector<bool> ua(a.rank(), false), ub(b.rank(), false);
  check_dims_list(op, "lhs_batch_dims", lb, a.rank(), ua, a);
  check_dims_list(op, "lhs_contracting_dims", lc, a.rank(), ua, a);
  check_dims_list(op, "rhs_batch_dims", rb, b.rank(), ub, b);
  check_dims_list(op, "rhs_contracting_dims", rc, b.rank(), ub, b);
  auto pair_check = [&](const std::vector<int64_t>& l, const std::vector<int64_t>& r, const char* what) {
    for (size_t i = 0; i < l.size(); ++i) {
      const DimExpr& x = a[static_cast<size_t>(l[i])];
      const DimExpr& y = b[static_cast<size_t>(r[i])];
      if (x != y)
        throw ShapeError(op_label(op) + ": " + what + " pair " + std::to_string(i) + " has extents " + x.to_string() +
                         " (lhs axis " + std::to_string(l[i]) + " of " + paren(a) + ") and " + y.to_string() +
                         " (rhs axis " + std::to_string(r[i]) + " of " + paren(b) + "); paired axes must be equal");
    }
  };
  pair_check(lb, rb, "batch");
  pair_check(lc, rc, "contracting");
  std::vector<DimExpr> out;
  for (int64_t d : lb) out.push_back(a[static_cast<size_t>(d)]);
  for (size_t i = 0; i < a.rank(); ++i)
    if (!ua[i]) out.push_back(a[i]);
  for (size_t i = 0; i < b.rank(); ++i)
    if (!ub[i]) out.push_back(b[i]);
  return {TensorType(ops[0].dtype, Shape(std::move(out)))};
}

std::vector<TensorType> infer_same_square(const std::string& op, std::span<const TensorType> ops) {
  require_square(op, ops[0]);
  return {ops[0]};
}

std::vector<TensorType> infer_triangular_solve(std::span<const TensorType> ops, const AttrMap& attrs) {
  const std::string op = "triangular_solve";
  require_same_dtype(op, ops);
  require_square(op, ops[0], "a");
  require_matrix(op, ops[1], "b");
  require_same_batch(op, ops[0], ops[1]);
  bool left = attr_bool(attrs, "left_side", op);
  size_t r = ops[1].rank();
  const DimExpr& n = ops[0].shape[r - 1];
  const DimExpr& bd = left ? ops[1].shape[r - 2] : ops[1].shape[r - 1];
  if (n != bd)
    throw ShapeError(op_label(op) + ": a " + paren(ops[0].shape) + " is " + n.to_string() + "x" + n.to_string() +
                     " but b " + paren(ops[1].shape) + " has " + bd.to_string() + (left ? " rows" : " columns") +
                     "; with left_side = " + (left ? "true" : "false") + " b's " + (left ? "rows" : "columns") +
                     " must match a");
  return {ops[1]};
}

std::vector<TensorType> infer_solve(std::span<const TensorType> ops, const AttrMap&) {
  const std::string op = "solve";
  require_same_dtype(op, ops);
  require_square(op, ops[0], "a");
  require_matrix(op, ops[1], "b");
  require_same_batch(op, ops[0], ops[1]);
  size_t r = ops[1].rank();
  if (ops[0].shape[r - 1] != ops[1].shape[r - 2])
    throw ShapeError(op_label(op) + ": a " + paren(ops[0].shape) + " and b " + paren(ops[1].shape) +
                     " disagree: b needs as many rows as a (" + ops[0].shape[r - 1].to_string() + ")");
  return {ops[1]};
}

std::vector<TensorType> infer_lu(std::span<const TensorType> ops, const AttrMap&) {
  require_matrix("lu", ops[0]);
  const Shape& s = ops[0].shape;
  size_t r = s.rank();
  Shape b = batch_of(s, 2);
  return {ops[0], TensorType(DType::I32, with(b, {min(s[r - 2], s[r - 1])})),
          TensorType(DType::I32, with(b, {s[r - 2]}))};
}

std::vector<TensorType> infer_qr(std::span<const TensorType> ops, const AttrMap& attrs) {
  require_matrix("qr", ops[0]);
  bool full = attr_bool(attrs, "full_matrices", "qr");
  const Shape& s = ops[0].shape;
  size_t r = s.rank();
  const DimExpr &m = s[r - 2], &n = s[r - 1];
  DimExpr k = full ? m : min(m, n);
  Shape b = batch_of(s, 2);
  DType t = ops[0].dtype;
  return {TensorType(t, with(b, {m, k})), TensorType(t, with(b, {k, n}))};
}

std::vector<TensorType> infer_eigh(std::span<const TensorType> ops, const AttrMap& attrs) {
  attr_bool(attrs, "lower", "eigh");
  require_square("eigh", ops[0]);
  const Shape& s = ops[0].shape;
  return {TensorType(ops[0].dtype, batch_of(s, 1)), ops[0]};
}

std::vector<TensorType> infer_svd(std::span<const TensorType> ops, const AttrMap& attrs) {
  require_matrix("svd", ops[0]);
  bool full = attr_bool(attrs, "full_matrices", "svd");
  bool uv = attr_bool(attrs, "compute_uv", "svd");
  const Shape& s = ops[0].shape;
  size_t r = s.rank();
  const DimExpr &m = s[r - 2], &n = s[r - 1];
  DimExpr k = min(m, n);
  Shape b = batch_of(s, 2);
  DType t = ops[0].dtype;
  TensorType sv(t, with(b, {k}));
  if (!uv) return {sv};
  return {TensorType(t, with(b, {m, full ? m : k})), sv, TensorType(t, with(b, {full ? n : k, n}))};
}

std::vector<TensorType> infer_matrix_rank(std::span<const TensorType> ops, const AttrMap& attrs) {
  const std::string op = "matrix_rank";
  require_matrix(op, ops[0]);
  bool has_tol = attrs.count("tol") > 0, has_rtol = attrs.count("rtol") > 0;
  if (has_tol && has_rtol)
    throw TypeError(op_label(op) +
                    ": give at most one of `tol` (absolute) and `rtol` (relative to the largest "
                    "singular value), not both");
  for (const char* name : {"tol", "rtol"})
    if (attrs.count(name)) {
      double v = attr_float(attrs, name, op);
      if (!(v >= 0))
        throw TypeError(op_label(op) + ": `" + name + "` is " + std::to_string(v) +
                        "; a tolerance must be a non-negative number (not NaN)");
    }
  return {TensorType(DType::I64, batch_of(ops[0].shape, 2))};
}

bool matrix_ord(const std::string& ord) {
  for (const char* o : {"fro", "nuc", "1", "2", "inf", "-1", "-2", "-inf"})
    if (ord == o) return true;
  return false;
}

std::vector<TensorType> infer_norm(std::span<const TensorType> ops, const AttrMap& attrs) {
  const std::string op = "norm";
  const std::string& ord = attr_string(attrs, "ord", op);
  bool has_p = attrs.count("p") > 0;
  if (ord == "vector") {
    if (!has_p)
      throw TypeError(op_label(op) + ": ord = \"vector\" needs the float attribute `p` (the vector norm's order)");
    double p = attr_float(attrs, "p", op);
    if (std::isnan(p)) throw TypeError(op_label(op) + ": `p` is NaN; give a number or +-inf");
    if (ops[0].rank() < 1)
      throw ShapeError(op_label(op) + ": a vector norm needs rank >= 1, got a scalar; reshape it to (1,)");
    return {TensorType(ops[0].dtype, batch_of(ops[0].shape, 1))};
  }
  if (!matrix_ord(ord))
    throw TypeError(op_label(op) + ": unknown ord \"" + ord +
                    "\"; use \"vector\" (with `p`) or a matrix norm: \"fro\", \"nuc\", \"1\", \"2\", \"inf\", \"-1\", "
                    "\"-2\", \"-inf\"");
  if (has_p) throw TypeError(op_label(op) + ": `p` only applies to ord = \"vector\"; drop it for ord \"" + ord + "\"");
  require_matrix(op, ops[0]);
  return {TensorType(ops[0].dtype, batch_of(ops[0].shape, 2))};
}

std::vector<TensorType> infer_trace(std::span<const TensorType> ops, const AttrMap& attrs) {
  const std::string op = "trace";
  attr_int(attrs, "offset", op);
  int64_t a1 = attr_int(attrs, "axis1", op), a2 = attr_int(attrs, "axis2", op);
  const Shape& s = ops[0].shape;
  int64_t r = static_cast<int64_t>(s.rank());
  if (r < 2) throw ShapeError(op_label(op) + ": the operand " + paren(s) + " needs rank >= 2 for a trace");
  for (int64_t a : {a1, a2})
    if (a < 0 || a >= r)
      throw ShapeError(op_label(op) + ": axis " + std::to_string(a) + " is out of range for " + paren(s) + " of rank " +
                       std::to_string(r) + "; axes are non-negative (the tracer normalizes negative ones)");
  if (a1 == a2)
    throw ShapeError(op_label(op) + ": axis1 and axis2 are both " + std::to_string(a1) + "; they must differ");
  std::vector<DimExpr> out;
  for (int64_t i = 0; i < r; ++i)
    if (i != a1 && i != a2) out.push_back(s[static_cast<size_t>(i)]);
  return {TensorType(ops[0].dtype, Shape(std::move(out)))};
}

}  // namespace

// Traits: dot_general is bilinear; triangular_solve and solve are linear in b with a fixed (JAX
// transposes them in b only); trace is linear. The factorizations and functions of a matrix are
// not linear, and no attribute is data except matrix_rank's tolerances, which enter only as a
// threshold on the singular values (whether one is given is structure). norm's `p` picks a formula.
void register_decomposition_ops(OpTable& t) {
  using K = AttrKind;
  using Ints = std::vector<int64_t>;
  const auto F = DTypeClass::Float;
  // Samples: (3, 3) for ops of square matrices, (3, 2) for any matrix.
  const Shape sq{3, 3}, tall{3, 2};
  OpDef& dg =
      t.add(la_op("dot_general", 2, DTypeClass::Numeric,
                  {{"lhs_contracting_dims", K::Ints},
                   {"rhs_contracting_dims", K::Ints},
                   {"lhs_batch_dims", K::Ints},
                   {"rhs_batch_dims", K::Ints}},
                  infer_dot_general,
                  "XLA DotGeneral: sum over paired contracting axes, per paired batch axis; result = batch dims, "
                  "lhs free dims, rhs free dims; 2 numeric operands of one dtype"));
  set_linear_each(dg, {0, 1});
  dg.sample = sample_shapes({{2, 3}, {3, 4}}, {{"lhs_contracting_dims", Ints{1}},
                                               {"rhs_contracting_dims", Ints{0}},
                                               {"lhs_batch_dims", Ints{}},
                                               {"rhs_batch_dims", Ints{}}});
  t.add(la_op(
            "cholesky", 1, F, {{"lower", K::Bool}},
            [](std::span<const TensorType> ops, const AttrMap& a) {
              attr_bool(a, "lower", "cholesky");
              return infer_same_square("cholesky", ops);
            },
            "Cholesky factor of (..., N, N) reading the triangle `lower` names; not positive definite: NaN; float"))
      .sample = sample_shapes({sq}, {{"lower", true}});
  OpDef& ts = t.add(la_op(
      "triangular_solve", 2, F,
      {{"left_side", K::Bool}, {"lower", K::Bool}, {"transpose_a", K::Bool}, {"unit_diagonal", K::Bool}},
      infer_triangular_solve, "solves op(a) x = b (left_side) or x op(a) = b with a triangular (..., M, M); float"));
  set_linear_each(ts, {1});
  ts.sample = sample_shapes({sq, {3, 2}},
                            {{"left_side", true}, {"lower", true}, {"transpose_a", false}, {"unit_diagonal", false}});
  OpDef& solve =
      t.add(la_op("solve", 2, F, {}, infer_solve, "solves a x = b for (..., N, N) a and (..., N, K) b by LU; float"));
  set_linear_each(solve, {1});
  solve.sample = sample_shapes({sq, {3, 2}});
  t.add(la_op("lu", 1, F, {}, infer_lu,
              "LU with partial pivoting of (..., M, N): lu, pivots int32 (..., min(M, N)), permutation int32 "
              "(..., M); float"))
      .sample = sample_shapes({sq});
  t.add(la_op("qr", 1, F, {{"full_matrices", K::Bool}}, infer_qr, "QR of (..., M, N): q, r; float")).sample =
      sample_shapes({tall}, {{"full_matrices", false}});
  t.add(la_op("eigh", 1, F, {{"lower", K::Bool}}, infer_eigh,
              "symmetric eigendecomposition of (..., N, N): eigenvalues ascending, eigenvectors as columns; float"))
      .sample = sample_shapes({sq}, {{"lower", true}});
  t.add(la_op("svd", 1, F, {{"full_matrices", K::Bool}, {"compute_uv", K::Bool}}, infer_svd,
              "SVD of (..., M, N): u, s (descending), vh, or s only; float"))
      .sample = sample_shapes({tall}, {{"full_matrices", false}, {"compute_uv", true}});
  t.add(la_op(
            "inv", 1, F, {},
            [](std::span<const TensorType> ops, const AttrMap&) { return infer_same_square("inv", ops); },
            "inverse of (..., N, N) by LU; float"))
      .sample = sample_shapes({sq});
  t.add(la_op(
            "det", 1, F, {},
            [](std::span<const TensorType> ops, const AttrMap&) {
              require_square("det", ops[0]);
              return std::vector<TensorType>{TensorType(ops[0].dtype, batch_of(ops[0].shape, 2))};
            },
            "determinant of (..., N, N) by LU; float"))
      .sample = sample_shapes({sq});
  t.add(la_op(
            "slogdet", 1, F, {},
            [](std::span<const TensorType> ops, const AttrMap&) {
              require_square("slogdet", ops[0]);
              TensorType r(ops[0].dtype, batch_of(ops[0].shape, 2));
              return std::vector<TensorType>{r, r};
            },
            "sign and log|det| of (..., N, N) by LU; float"))
      .sample = sample_shapes({sq});
  OpDef& rank =
      t.add(la_op("matrix_rank", 1, F, {{"tol", K::Float, false}, {"rtol", K::Float, false}}, infer_matrix_rank,
                  "number of singular values above tol (or rtol * largest); int64 (...); float"));
  rank.data_attrs = {"tol", "rtol"};
  rank.sample = sample_shapes({tall});
  t.add(la_op("norm", 1, F, {{"ord", K::String}, {"p", K::Float, false}}, infer_norm,
              "ord \"vector\" with float p: vector p-norm over the last axis; ord fro|nuc|1|2|inf|-1|-2|-inf: "
              "matrix norm over the last two axes; float"))
      .sample = sample_shapes({tall}, {{"ord", std::string("fro")}});
  t.add(la_op(
            "matrix_exp", 1, F, {},
            [](std::span<const TensorType> ops, const AttrMap&) { return infer_same_square("matrix_exp", ops); },
            "matrix exponential of (..., N, N) by scaling and squaring with a degree-13 Pade approximant; float"))
      .sample = sample_shapes({sq});
  OpDef& tr =
      t.add(la_op("trace", 1, DTypeClass::Numeric, {{"offset", K::Int}, {"axis1", K::Int}, {"axis2", K::Int}},
                  infer_trace, "numpy.trace: sum of the offset diagonal over axis1/axis2, which are removed; numeric"));
  set_linear(tr, {0});
  tr.sample = sample_shapes({sq}, {{"offset", int64_t{0}}, {"axis1", int64_t{0}}, {"axis2", int64_t{1}}});
}

}  // namespace evoxc::ops_detail
