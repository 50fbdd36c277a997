// Transform rules of the decomposition family (cholesky ... matrix_exp): batching, jvp and transpose.
//
// Every op here maps over leading dims, so batching only moves the batch axis in front (where
// the driver keeps it). The jvps are the standard matrix-calculus formulas (as jax/_src/lax/linalg.py),
// written so that the tangent only enters ops in operand positions their OpDef marks linear:
// dot (each operand), triangular_solve/solve (b), trace, tril/triu, diagonal, transpose,
// add/subtract/neg, multiply by a primal factor, divide by a primal divisor, dot_general.
// Ops that read one triangle of their operand (cholesky, eigh, triangular_solve) are
// differentiated as the functions they are of that operand: the other triangle has zero
// derivative, and the triangle read counts once (not symmetrized as JAX does), so the jvp
// agrees with finite differences along any direction, symmetric or not.
#include <numeric>

#include "evoxc/trace/layout.h"
#include "evoxc/trace/linalg.h"
#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

using ST = SymbolicTensor;

// ---------------------------------------------------------------- helpers

int64_t rank_of(const ST& x) { return static_cast<int64_t>(x.rank()); }

// x with its last two axes swapped (the matrix transpose of every matrix of a stack).
ST mT(const ST& x) {
  std::vector<int64_t> perm(x.rank());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[x.rank() - 1], perm[x.rank() - 2]);
  return emit_op1(EVOXC_TOP("transpose"), {x}, {{"permutation", perm}});
}

// The (n, n) identity of dtype t (n may be symbolic).
ST eye(const DimExpr& n, DType t) {
  Shape s{n, n};
  return convert(equal(iota(s, 0, DType::I32), iota(s, 1, DType::I32)), t);
}

// The diagonal of every matrix of a stack: (..., N, N) -> (..., N).
ST diag_part(const ST& x) {
  return emit_op1(EVOXC_TOP("diagonal"), {x},
                  {{"offset", int64_t{0}}, {"axis1", rank_of(x) - 2}, {"axis2", rank_of(x) - 1}});
}

// The trace of every matrix of a stack: (..., N, N) -> (...).
ST trace_last2(const ST& x) {
  return emit_op1(EVOXC_TOP("trace"), {x},
                  {{"offset", int64_t{0}}, {"axis1", rank_of(x) - 2}, {"axis2", rank_of(x) - 1}});
}

// x[..., :rows, :cols] (leading axes whole; extents may be symbolic).
ST leading_block(const ST& x, const DimExpr& rows, const DimExpr& cols) {
  size_t r = x.rank();
  Shape lim = x.shape();
  lim[r - 2] = rows;
  lim[r - 1] = cols;
  return emit_op1(
      EVOXC_TOP("slice"), {x},
      {{"start_indices", std::vector<int64_t>(r, 0)}, {"limit_indices", lim}, {"strides", std::vector<int64_t>(r, 1)}});
}

// x[..., r0:, c0:] for static offsets.
ST trailing_block(const ST& x, int64_t r0, int64_t c0) {
  size_t r = x.rank();
  std::vector<int64_t> st(r, 0);
  st[r - 2] = r0;
  st[r - 1] = c0;
  return emit_op1(EVOXC_TOP("slice"), {x},
                  {{"start_indices", st}, {"limit_indices", x.shape()}, {"strides", std::vector<int64_t>(r, 1)}});
}

// The symmetric matrix an op that reads only one triangle sees, as a function of the
// tangent: the triangle read plus its strict part mirrored (linear: tril/triu, transpose, add).
ST sym_from_triangle(const ST& t, bool lower) {
  if (lower) return tril(t, 0) + mT(tril(t, -1));
  return triu(t, 0) + mT(triu(t, 1));
}

// The triangle a triangular solve reads of a tangent: its diagonal included unless unit_diagonal.
ST triangle_read(const ST& t, bool lower, bool unit_diagonal) {
  int64_t k = unit_diagonal ? 1 : 0;
  return lower ? tril(t, -k) : triu(t, k);
}

const DimExpr& rows(const ST& x) { return x.shape()[x.rank() - 2]; }
const DimExpr& cols(const ST& x) { return x.shape()[x.rank() - 1]; }

ST sub_tangents(const ST& a, const ST& b) {  // a - b, either may be undefined (zero)
  if (!b.defined()) return a;
  if (!a.defined()) return -b;
  return a - b;
}

std::vector<BatchArg> all_batched(const std::vector<ST>& outs) {
  std::vector<BatchArg> r;
  for (const ST& o : outs) r.push_back({o, true});
  return r;
}

// ---------------------------------------------------------------- batching

// One matrix operand: it is batched (else the rule is not called), and the batch axis at 0 is
// one more leading dim the op maps over.
std::vector<BatchArg> batch_unary(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  return all_batched(emit_like(op, std::vector<ST>{args[0].v}));
}

// solve / triangular_solve: a and b need the same batch dims, so an unbatched one gets the batch axis.
std::vector<BatchArg> batch_binary(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  return all_batched(emit_like(op, std::vector<ST>{ctx.materialize(args[0]), ctx.materialize(args[1])}));
}

// ---------------------------------------------------------------- jvp

// cholesky: A = L L^T (lower) reading A's lower triangle S; dL = L Phi(L^-1 dS L^-T) with Phi the
// lower triangle with its diagonal halved. upper: U = L^T of the same S (mirrored), dU = dL^T.
JvpResult cholesky_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  bool lower = attr_flag(op, "lower", true);
  ST l = lower ? y[0] : mT(y[0]);
  ST s = sym_from_triangle(t[0], lower);
  auto tsolve = [&](const ST& b, bool left, bool trans) {
    return emit_op1(EVOXC_TOP("triangular_solve"), {l, b},
                    {{"left_side", left}, {"lower", true}, {"transpose_a", trans}, {"unit_diagonal", false}});
  };
  ST x = tsolve(tsolve(s, true, false), false, true);  // L^-1 S L^-T
  ST phi = (tril(x, 0) + tril(x, -1)) * 0.5;
  ST dl = matmul(l, phi);
  return JvpResult{y, {lower ? dl : mT(dl)}};
}

// triangular_solve: op(A) X = B (left) or X op(A) = B, A read through its triangle T:
// dX = op(A)^-1 (dB - dop(T) X), resp. (dB - X dop(T)) op(A)^-1.
JvpResult triangular_solve_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  bool left = attr_flag(op, "left_side"), lower = attr_flag(op, "lower");
  bool trans = attr_flag(op, "transpose_a"), unit = attr_flag(op, "unit_diagonal");
  ST rhs = t[1];
  if (t[0].defined()) {
    ST da = triangle_read(t[0], lower, unit);
    if (trans) da = mT(da);
    rhs = sub_tangents(rhs, left ? matmul(da, y[0]) : matmul(y[0], da));
  }
  return JvpResult{y, {emit_like(op, std::vector<ST>{p[0], rhs})}};
}

// solve: A X = B: dX = A^-1 (dB - dA X).
JvpResult solve_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  ST rhs = t[1];
  if (t[0].defined()) rhs = sub_tangents(rhs, matmul(t[0], y[0]));
  return JvpResult{y, {emit_like(op, std::vector<ST>{p[0], rhs})}};
}

// inv: d(A^-1) = -A^-1 dA A^-1.
JvpResult inv_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  return JvpResult{y, {-matmul(matmul(y[0], t[0]), y[0])}};
}

// tr(A^-1 dA), through a solve (linear in dA as its b).
ST trace_inv_times(const ST& a, const ST& da) { return trace_last2(emit_op1(EVOXC_TOP("solve"), {a, da})); }

// det: d det = det tr(A^-1 dA). At a singular A the solve divides by a zero pivot, so the
// tangent is inf/NaN there (the adjugate form JAX uses is not implemented).
JvpResult det_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  return JvpResult{y, {trace_inv_times(p[0], t[0]) * y[0]}};
}

// slogdet: sign is piecewise constant (zero tangent); d log|det| = tr(A^-1 dA) (inf/NaN at a singular A).
JvpResult slogdet_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  return JvpResult{y, {ST(), trace_inv_times(p[0], t[0])}};
}

// eigh: A = V diag(w) V^T with A the symmetric matrix of the triangle read. With X = V^T dS V:
// dw = diag(X), dV = V (F o X), F_ij = 1 / (w_j - w_i) off the diagonal and 0 on it.
// Repeated eigenvalues: F has inf off the diagonal, so dV is inf/NaN (JAX's behaviour); dw is
// still diag(X), which is a directional derivative only where X is diagonal on the repeated block.
JvpResult eigh_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  const ST &w = y[0], &v = y[1];
  ST s = sym_from_triangle(t[0], attr_flag(op, "lower", true));
  ST x = matmul(matmul(mT(v), s), v);
  ST dw = diag_part(x);
  ST wj = expand_dims(w, {-2});  // (..., 1, N): w_j along columns
  ST id = eye(cols(v), v.dtype());
  ST f = reciprocal(wj - mT(wj) + id) - id;
  ST dv = matmul(v, x * f);
  return JvpResult{y, {dw, dv}};
}

// svd (the reduced formula of jax's _svd_jvp_rule for real matrices): with dS = U^T dA V,
// ds = diag(dS); dU = U (F o (dS S + S dS^T)) [+ (I - U U^T) dA V / s when M > N],
// dV = V (F o (S dS + dS^T S)) [+ (I - V V^T) dA^T U / s when N > M], F_ij = 1 / (s_j^2 - s_i^2)
// off the diagonal. Repeated singular values make F inf and zero ones (with M != N) divide by
// zero: dU, dV are inf/NaN there; ds = diag(dS) stays finite (a directional derivative only for
// simple singular values). full_matrices with M != N: the extra columns of U (rows of Vh) are not
// unique, so there is no jvp (TransformError, as JAX's NotImplementedError).
JvpResult svd_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  bool uv = attr_flag(op, "compute_uv", true), full = attr_flag(op, "full_matrices", true);
  const ST& a = p[0];
  const DimExpr &m = rows(a), &n = cols(a);
  if (uv && full && m != n)
    throw TransformError("jvp: evoxc.svd with full_matrices = true of a non-square (" + a.shape().to_string() +
                         ") operand has no derivative: the columns of U (or rows of Vh) beyond min(M, N) are not "
                         "unique; use full_matrices = false");
  // The reduced factors: the op's own results, or a second svd that computes them.
  std::vector<ST> f =
      uv ? y : emit_op(EVOXC_TOP("svd"), std::vector<ST>{a}, {{"full_matrices", false}, {"compute_uv", true}});
  const ST &u = f[0], &s = f[1], &vh = f[2];
  ST v = mT(vh), ut = mT(u);
  ST ds_mat = matmul(matmul(ut, t[0]), v);
  ST ds = diag_part(ds_mat);
  if (!uv) return JvpResult{y, {ds}};
  ST sj = expand_dims(s, {-2});  // (..., 1, K)
  ST si = mT(sj);                // (..., K, 1)
  ST id = eye(s.shape()[s.rank() - 1], s.dtype());
  ST fm = reciprocal((sj + si) * (sj - si) + id) - id;
  ST dss = ds_mat * sj;  // dS diag(s)
  ST sds = ds_mat * si;  // diag(s) dS
  ST du = matmul(u, (dss + mT(dss)) * fm);
  ST dv = matmul(v, (sds + mT(sds)) * fm);
  // The projections onto the complement of U's (V's) columns: zero for the square side.
  // Symbolic extents that are not known equal get both terms (each vanishes when not needed).
  bool known = m.is_const() && n.is_const();
  bool tall = m != n && (!known || m.value() > n.value());
  bool wide = m != n && (!known || n.value() > m.value());
  if (tall) {
    ST dav = matmul(t[0], v);
    du = du + (dav - matmul(u, matmul(ut, dav))) / sj;
  }
  if (wide) {
    ST dahu = matmul(mT(t[0]), u);
    dv = dv + (dahu - matmul(v, matmul(vh, dahu))) / sj;
  }
  return JvpResult{y, {du, ds, mT(dv)}};
}

// The qr tangents for M >= N (jax's qr_jvp_rule): with C = Q^T dA R^-1 and
// Omega = tril(C, -1) - tril(C, -1)^T (skew), dQ = Q (Omega - C) + dA R^-1, dR = (C - Omega) R.
std::pair<ST, ST> qr_tall_tangents(const ST& q, const ST& r, const ST& da) {
  ST dx_rinv = emit_op1(EVOXC_TOP("triangular_solve"), {r, da},
                        {{"left_side", false}, {"lower", false}, {"transpose_a", false}, {"unit_diagonal", false}});
  ST c = matmul(mT(q), dx_rinv);
  ST low = tril(c, -1);
  ST omega = low - mT(low);
  return {matmul(q, omega - c) + dx_rinv, matmul(c - omega, r)};
}

// qr. M >= N: the formula above. M < N (static extents): A = [X | Y] with X square gives
// Q R_X = X and R = [R_X | Q^T Y], so (dQ, dR_X) are X's tangents and dR_Y = dQ^T Y + Q^T dY.
// full_matrices with M > N: Q's columns beyond N are not unique, so there is no jvp
// (TransformError, as JAX's NotImplementedError). Q and R are differentiable wherever R's
// diagonal has no zero (A of full rank); at a rank-deficient A the solve by R gives inf/NaN.
JvpResult qr_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  const ST& a = p[0];
  const DimExpr &m = rows(a), &n = cols(a);
  bool full = attr_flag(op, "full_matrices");
  bool known = m.is_const() && n.is_const();
  bool square = m == n;
  if (!square && !known)
    throw TransformError("jvp: evoxc.qr of a (" + a.shape().to_string() +
                         ") operand: a matrix not known to be square needs static M and N for its jvp");
  bool tall = square || m.value() > n.value();
  if (full && !square && tall)
    throw TransformError("jvp: evoxc.qr with full_matrices = true of a tall (" + a.shape().to_string() +
                         ") operand has no derivative: Q's columns beyond N are not unique; use full_matrices = false");
  const ST &q = y[0], &r = y[1];
  if (tall) {
    auto [dq, dr] = qr_tall_tangents(q, r, t[0]);
    return JvpResult{y, {dq, dr}};
  }
  int64_t mi = m.value();
  auto [dq, drx] = qr_tall_tangents(q, leading_block(r, m, m), leading_block(t[0], m, m));
  ST dry = matmul(mT(dq), trailing_block(a, 0, mi)) + matmul(mT(q), trailing_block(t[0], 0, mi));
  return JvpResult{y, {dq, concatenate({drx, dry}, rank_of(a) - 1)}};
}

// lu (jax's _lu_jvp_rule, De Hoog, Anderssen and Lukas): P A = L U; with X = L^-1 P dA U^-1,
// dL = L tril(X, -1), dU = triu(X) U, and d(lu) = dL + dU. The pivots are integers (no tangent);
// the rule differentiates for fixed pivots, which is the derivative wherever the pivoting
// does not change (ties in the pivot search are the non-differentiable points).
JvpResult lu_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  const ST &lu = y[0], &perm = y[2];
  const DimExpr &m = rows(lu), &n = cols(lu);
  DType dt = lu.dtype();
  bool square = m == n;
  if (!square && !(m.is_const() && n.is_const()))
    throw TransformError("jvp: evoxc.lu of a (" + lu.shape().to_string() +
                         ") operand: a non-square matrix needs static M and N for its jvp");
  // P as a matrix: P[i, j] = (perm[i] == j), so P dA = dA[perm].
  ST pm = convert(equal(expand_dims(perm, {-1}), iota(Shape{m}, 0, DType::I32)), dt);
  ST x = matmul(pm, t[0]);
  ST l, u;
  ST id_m = eye(m, dt);
  if (square) {
    l = tril(lu, -1) + id_m;
    u = triu(lu, 0);
  } else {
    int64_t mi = m.value(), ni = n.value(), k = std::min(mi, ni);
    size_t r = lu.rank();
    std::vector<int64_t> zero(r, 0), lhigh(r, 0), uhigh(r, 0);
    lhigh[r - 1] = mi - k;  // L: (m, k) padded to (m, m)
    uhigh[r - 2] = ni - k;  // U: (k, n) padded to (n, n)
    l = pad_general(tril(leading_block(lu, m, k), -1), 0.0, zero, lhigh) + id_m;
    // U's padded rows get ones on their diagonal so U stays invertible (they meet zero rows of L^-1 P dA).
    ST tail = eye(n, dt) * convert(greater_equal(iota(Shape{n, n}, 0, DType::I32), k), dt);
    u = pad_general(triu(leading_block(lu, k, n), 0), 0.0, zero, uhigh) + tail;
  }
  ST la = emit_op1(EVOXC_TOP("triangular_solve"), {l, x},
                   {{"left_side", true}, {"lower", true}, {"transpose_a", false}, {"unit_diagonal", true}});
  ST lau = emit_op1(EVOXC_TOP("triangular_solve"), {u, la},
                    {{"left_side", false}, {"lower", false}, {"transpose_a", false}, {"unit_diagonal", false}});
  ST dlu = matmul(l, tril(lau, -1)) + matmul(triu(lau, 0), u);
  return JvpResult{y, {dlu, ST(), ST()}};
}

// matrix_exp: the Frechet derivative L(A, E) is the top-right block of expm([[A, E], [0, A]]),
// linear in E but not through an op the transpose knows as linear. So the rule computes the
// derivative's matrix: K[i, j] = L(A, e_i e_j^T) for every basis matrix at once (one batched
// matrix_exp of the (N, N, 2N, 2N) stack), and contracts dA with it (dot_general, linear in dA).
// Cost: N^2 exponentials of 2N x 2N matrices, O(N^5) flops and O(N^4) memory per matrix.
JvpResult matrix_exp_jvp(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  const ST& a = p[0];
  const DimExpr& n = cols(a);
  if (!n.is_const())
    throw TransformError("jvp: evoxc.matrix_exp of a (" + a.shape().to_string() +
                         ") operand: its jvp needs a static matrix extent (it slices the derivative's block at it)");
  DType dt = a.dtype();
  int64_t r = rank_of(a);
  std::vector<DimExpr> dims(a.shape().begin(), a.shape().end() - 2);
  std::vector<int64_t> batch(static_cast<size_t>(r - 2));
  std::iota(batch.begin(), batch.end(), 0);
  for (int i = 0; i < 4; ++i) dims.push_back(n);
  Shape s4(dims);  // (..., i, j, a, b)
  // A broadcast over the basis axes (i, j).
  std::vector<int64_t> a_dims = batch;
  a_dims.push_back(r);
  a_dims.push_back(r + 1);
  ST ab = broadcast_in_dim(a, s4, a_dims);
  // The basis: E[i, j, a, b] = (i == a) (j == b).
  Shape b4{n, n, n, n};
  ST e = convert(equal(iota(b4, 0, DType::I32), iota(b4, 2, DType::I32)), dt) *
         convert(equal(iota(b4, 1, DType::I32), iota(b4, 3, DType::I32)), dt);
  ST eb = broadcast_in_dim(e, s4, {r - 2, r - 1, r, r + 1});
  ST z = zeros(TensorType(dt, s4));
  ST top = concatenate({ab, eb}, r + 1);
  ST bottom = concatenate({z, ab}, r + 1);
  ST big = emit_op1(EVOXC_TOP("matrix_exp"), {concatenate({top, bottom}, r)});
  // The top-right block: rows [0, n), columns [n, 2n).
  ST tr = trailing_block(leading_block(big, n, n + n), 0, n.value());
  ST dy = dot_general(t[0], tr, {r - 2, r - 1}, {r - 2, r - 1}, batch, batch);
  return JvpResult{y, {dy}};
}

// ---------------------------------------------------------------- transpose

// triangular_solve and solve are linear in b: X = op(A)^-1 B gives ct_B = op(A)^-T ct_X (left),
// X = B op(A)^-1 gives ct_B = ct_X op(A)^-T (right): the same solve with transpose_a flipped.
std::vector<ST> triangular_solve_transpose(TransposeContext&, const Operation& op, std::span<const ST> vals,
                                           const std::vector<bool>&, std::span<const ST> cts) {
  AttrMap attrs = op.attributes();
  attrs["transpose_a"] = Attribute(!attr_flag(op, "transpose_a"));
  std::vector<ST> r(2);
  r[1] = emit_op1(EVOXC_TOP("triangular_solve"), {vals[0], cts[0]}, attrs);
  return r;
}

std::vector<ST> solve_transpose(TransposeContext&, const Operation&, std::span<const ST> vals, const std::vector<bool>&,
                                std::span<const ST> cts) {
  std::vector<ST> r(2);
  r[1] = emit_op1(EVOXC_TOP("solve"), {mT(vals[0]), cts[0]});
  return r;
}

}  // namespace

void install_decomposition_rules(RuleTables& t) {
  for (const char* op : {"cholesky", "lu", "qr", "eigh", "svd", "inv", "det", "slogdet", "matrix_exp"})
    t.batch.set(op, batch_unary);
  for (const char* op : {"triangular_solve", "solve"}) t.batch.set(op, batch_binary);

  t.jvp.set("cholesky", cholesky_jvp);
  t.jvp.set("triangular_solve", triangular_solve_jvp);
  t.jvp.set("solve", solve_jvp);
  t.jvp.set("lu", lu_jvp);
  t.jvp.set("qr", qr_jvp);
  t.jvp.set("eigh", eigh_jvp);
  t.jvp.set("svd", svd_jvp);
  t.jvp.set("inv", inv_jvp);
  t.jvp.set("det", det_jvp);
  t.jvp.set("slogdet", slogdet_jvp);
  t.jvp.set("matrix_exp", matrix_exp_jvp);

  t.transpose.set("triangular_solve", triangular_solve_transpose);
  t.transpose.set("solve", solve_transpose);
}

}  // namespace evoxc::transforms
