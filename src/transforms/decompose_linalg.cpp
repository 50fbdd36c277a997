// Decompositions of the LAPACK-backed linear algebra (cholesky, triangular_solve, lu, solve, inv, det, slogdet, qr,
// matrix_exp, norm, matrix_rank)
// into elementwise ops, reductions, dot_general and while loops: what a backend without LAPACK
// lowers instead (the interpreter calls LAPACK itself).
//
// Every loop works on whole matrices with masks, one column (or one Jacobi pair) per step, so shapes stay static
// and batch dims, symbolic ones too, need nothing else. The algorithms are LAPACK's unblocked ones (getf2, geqr2 and
// org2r, potf2, trsm) and the interpreter's matrix_exp, so pivots, reflector signs and squaring counts equal the
// interpreter's; sums are taken in another order, hence the conformance tolerances. Half floats work in float32, as
// LAPACK is called for them.
#include <cmath>
#include <limits>
#include <numeric>

#include "evoxc/ops/special_constants.h"
#include "evoxc/trace/control.h"
#include "evoxc/trace/indexing.h"
#include "evoxc/trace/linalg.h"
#include "evoxc/transforms/decompose.h"
#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

using ST = SymbolicTensor;
using Ints = std::vector<int64_t>;
constexpr DType I64 = DType::I64;
constexpr DType F64 = DType::F64;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

DType acc_type(DType t) { return t == DType::F16 || t == DType::BF16 ? DType::F32 : t; }

ST scalar(const Operand& v, DType t) { return fill(Shape{}, v, t); }
ST fill_as(const Shape& s, const Operand& v, DType t) { return fill(s, v, t); }
// The index along `axis` of every element of a `s`-shaped tensor.
ST index(const Shape& s, size_t axis) { return iota(s, static_cast<int64_t>(axis), I64); }

bool has_zero_extent(const Shape& s) {
  for (const DimExpr& d : s.dims())
    if (d.is_const() && d.value() == 0) return true;
  return false;
}
Ints iota_ints(size_t n) {
  Ints v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}
// 0..rank-1 without `axis`: how a tensor that lost `axis` broadcasts back to the full rank.
Ints all_but(size_t rank, size_t axis) {
  Ints v;
  for (size_t i = 0; i < rank; ++i)
    if (i != axis) v.push_back(static_cast<int64_t>(i));
  return v;
}
Shape prefix(const Shape& s, size_t n) {
  return Shape(std::vector<DimExpr>(s.dims().begin(), s.dims().begin() + static_cast<std::ptrdiff_t>(n)));
}
Shape append(Shape s, const DimExpr& d) {
  s.dims().push_back(d);
  return s;
}
// A per-matrix value of shape `batch` (the leading dims of s) broadcast over the matrices of shape `s`.
ST per_matrix(const ST& v, const Shape& s) { return broadcast_in_dim(v, s, iota_ints(v.rank())); }
ST sum_over(const ST& x, const Ints& axes) { return reduce_sum_keep(x, axes); }

// The extent `d` at run time, a rank-0 int64 (a symbolic one counted from a tensor of that length).
ST extent(const DimExpr& d) {
  if (d.is_const()) return scalar(d.value(), I64);
  return sum_over(fill_as(Shape{d}, int64_t{1}, I64), {0});
}
ST min_extent(const DimExpr& a, const DimExpr& b) {
  if (a.is_const() && b.is_const()) return extent(min(a, b));
  return minimum(extent(a), extent(b));
}

// The slice of x at index `at` along `axis` (`at` rank 0 or of x's shape), exactly: every other element becomes
// -0.0 (0 for ints) before the sum, and x + -0.0 is x for every x (NaN, inf and +-0 included).
ST take_at(const ST& x, size_t axis, const ST& at) {
  DType t = x.dtype();
  ST zero = is_float(t) ? scalar(-0.0, t) : scalar(int64_t{0}, t);
  ST hit = equal(index(x.shape(), axis), at);
  return sum_over(where(hit, x, zero), {static_cast<int64_t>(axis)});
}

// The last two axes swapped.
ST transpose_last(const ST& x) {
  Ints perm = iota_ints(x.rank());
  std::swap(perm[x.rank() - 2], perm[x.rank() - 1]);
  return transpose(x, perm);
}

// The identity of a (..., M, N) shape: ones where row == column.
ST identity_like(const Shape& s, DType t) {
  size_t r = s.rank();
  return convert(equal(index(s, r - 2), index(s, r - 1)), t);
}

// The first `count` entries of x along `axis`: a slice when the extents are static, a gather of 0..count-1
// otherwise (exact either way).
ST leading(const ST& x, size_t axis, const DimExpr& count) {
  if (x.shape()[axis] == count) return x;
  if (count.is_const() && x.shape()[axis].is_const()) {
    Ints start(x.rank(), 0), limit;
    for (size_t i = 0; i < x.rank(); ++i)
      limit.push_back(i == axis ? count.value() : (x.shape()[i].is_const() ? x.shape()[i].value() : 0));
    bool all_static = x.shape().is_static();
    if (all_static) return slice(x, start, limit);
  }
  return take(x, iota(Shape{count}, 0, I64), static_cast<int64_t>(axis));
}

// The dtype's float of the same width as int, for bit manipulation.
DType bits_type(DType t) { return t == F64 ? I64 : DType::I32; }
// Whether the sign bit of x is set (-0.0 included).
ST sign_bit(const ST& x) {
  return less(bitcast_convert(x, bits_type(x.dtype())), scalar(int64_t{0}, bits_type(x.dtype())));
}
// 2^e for an int64 e in [-1022, 1023], exactly: the bits of the double.
ST pow2(const ST& e) { return bitcast_convert(left_shift(add(e, int64_t{1023}), int64_t{52}), F64); }
// The unbiased exponent of a positive float64 (floor(log2(x)) for a normal x), from its bits.
ST exponent_of(const ST& x) {
  return subtract(shift_right_logical(bitcast_convert(x, I64), int64_t{52}), int64_t{1023});
}
// Whether the number of set elements along the last axis is odd.
ST odd_count(const ST& p) {
  ST n = sum_over(convert(p, I64), {static_cast<int64_t>(p.rank() - 1)});
  return not_equal(bitwise_and(n, int64_t{1}), int64_t{0});
}

// ---------------------------------------------------------------- cholesky, triangular_solve

// Row i of x along the rows axis as (..., C), for x (..., R, C).
ST row_of(const ST& x, const ST& i) { return take_at(x, x.rank() - 2, i); }
// The dot of each row vector v (..., R) with the rows of X (..., R, C) -> (..., C).
ST vec_times(const ST& v, const ST& X) {
  size_t r = X.rank();
  int64_t rows = static_cast<int64_t>(r - 2);
  return dot_general(v, X, {rows}, {rows}, iota_ints(r - 2), iota_ints(r - 2));
}

// cholesky as potf2, one column per step: l_jj = sqrt(a_jj - sum_k<j l_jk^2), l_ij = (a_ij - sum_k<j l_ik l_jk) /
// l_jj below it. Only the triangle `lower` names is read (mirrored into the other first); the other triangle of the
// result is 0; a pivot that is not > 0 or a non-finite factor makes that matrix NaN everywhere (semantics).
std::vector<ST> decompose_cholesky(const Operation& op, std::span<const ST> in) {
  bool lower = attr_flag(op, "lower");
  DType t = in[0].dtype(), acc = acc_type(t);
  if (has_zero_extent(in[0].shape())) return {in[0]};
  ST a = convert(in[0], acc);
  const Shape& s = a.shape();
  size_t r = s.rank();
  ST rows = index(s, r - 2), cols = index(s, r - 1);
  ST sym = where(lower ? greater_equal(rows, cols) : less_equal(rows, cols), a, transpose_last(a));
  Shape vshape = append(prefix(s, r - 2), s[r - 2]);
  std::vector<ST> out =
      while_loop([&](const std::vector<ST>& c) { return less(c[0], extent(s[r - 1])); },
                 [&](const std::vector<ST>& c) {
                   const ST& j = c[0];
                   ST Lm = where(less(index(s, r - 1), j), c[1], scalar(0.0, acc));  // the columns done
                   ST v = dot_general(Lm, row_of(Lm, j), {static_cast<int64_t>(r - 1)}, {static_cast<int64_t>(r - 2)},
                                      iota_ints(r - 2), iota_ints(r - 2));  // v_i = sum_k<j l_ik l_jk
                   ST col = subtract(take_at(sym, r - 1, j), v);
                   ST ljj = sqrt(take_at(col, r - 2, j));
                   ST rv = index(vshape, r - 2);
                   ST newcol = where(equal(rv, j), per_matrix(ljj, vshape),
                                     where(greater(rv, j), divide(col, per_matrix(ljj, vshape)), scalar(0.0, acc)));
                   ST L = where(equal(index(s, r - 1), j), broadcast_in_dim(newcol, s, all_but(r, r - 1)), c[1]);
                   return std::vector<ST>{add(j, int64_t{1}), L};
                 },
                 std::vector<ST>{scalar(int64_t{0}, I64), fill_as(s, 0.0, acc)});
  ST L = out[1];
  ST bad_pivot = logical_and(equal(rows, cols), logical_not(greater(L, scalar(0.0, acc))));
  ST bad =
      any(logical_or(logical_not(isfinite(L)), bad_pivot), {static_cast<int64_t>(r - 2), static_cast<int64_t>(r - 1)});
  L = where(per_matrix(bad, s), scalar(kNaN, acc), L);
  return {convert(lower ? L : transpose_last(L), t)};
}

// triangular_solve by substitution, one row of the solution per step (trsm's order): the solve is brought to
// A x = B with A lower or upper (op(a) transposed when asked, and a right-side solve x A = B as A^T x^T = B^T);
// only the triangle read is used, and with unit_diagonal not the diagonal. A zero pivot divides by zero (inf/NaN,
// as LAPACK).
std::vector<ST> decompose_triangular_solve(const Operation& op, std::span<const ST> in) {
  bool left = attr_flag(op, "left_side"), lower = attr_flag(op, "lower");
  bool trans = attr_flag(op, "transpose_a"), unit = attr_flag(op, "unit_diagonal");
  DType t = in[1].dtype(), acc = acc_type(t);
  if (has_zero_extent(in[1].shape()) || has_zero_extent(in[0].shape())) return {in[1]};
  ST a = convert(in[0], acc), B = convert(in[1], acc);
  const Shape& s = a.shape();
  size_t r = s.rank();
  ST rows = index(s, r - 2), cols = index(s, r - 1);
  a = where(lower ? greater_equal(rows, cols) : less_equal(rows, cols), a, scalar(0.0, acc));
  if (unit) a = where(equal(rows, cols), scalar(1.0, acc), a);
  if (trans) {
    a = transpose_last(a);
    lower = !lower;
  }
  if (!left) {  // x A = B  <=>  A^T x^T = B^T
    a = transpose_last(a);
    lower = !lower;
    B = transpose_last(B);
  }
  const Shape& bs = B.shape();
  ST n = extent(s[r - 1]);
  std::vector<ST> out =
      while_loop([&](const std::vector<ST>& c) { return less(c[0], n); },
                 [&](const std::vector<ST>& c) {
                   ST i = lower ? c[0] : subtract(subtract(n, int64_t{1}), c[0]);
                   ST X = c[1];
                   ST brow = index(bs, r - 2);
                   // The rows solved so far (masked: the others still hold B, which may be inf).
                   ST Xm = where(lower ? less(brow, i) : greater(brow, i), X, scalar(0.0, acc));
                   ST arow = row_of(a, i);
                   ST ai = where(equal(index(arow.shape(), r - 2), i), scalar(0.0, acc), arow);
                   ST xi = divide(subtract(row_of(X, i), vec_times(ai, Xm)),
                                  per_matrix(take_at(arow, r - 2, i), append(prefix(bs, r - 2), bs[r - 1])));
                   X = where(equal(brow, i), broadcast_in_dim(xi, bs, all_but(r, r - 2)), X);
                   return std::vector<ST>{add(c[0], int64_t{1}), X};
                 },
                 std::vector<ST>{scalar(int64_t{0}, I64), B});
  ST X = left ? out[1] : transpose_last(out[1]);
  return {convert(X, t)};
}

// ---------------------------------------------------------------- LU

struct Lu {
  ST lu, pivots, permutation;
  std::vector<ST> rhs;  // the right-hand sides with the row swaps applied in order (getrs' laswp)
};

// LU with partial pivoting of a (..., M, N) float stack, LAPACK's getf2 one column per step: the pivot is the
// first row of largest |a[i, k]| at or below k (a NaN counts only in row k, as idamax compares with >), rows k and
// p swap (also in `permutation` and in every `rhs`), a nonzero pivot scales the column below it by its reciprocal
// (by division when it is below the smallest normal), a zero pivot leaves the column as it is, and the trailing
// matrix takes the rank-1 update.
Lu lu_factor(const ST& a, const std::vector<ST>& rhs) {
  const Shape& s = a.shape();
  size_t r = s.rank();
  DType ft = a.dtype();
  Shape batch = prefix(s, r - 2);
  Ints bdims = iota_ints(r - 2);
  const DimExpr &m = s[r - 2], &n = s[r - 1];
  Shape pshape = append(batch, min(m, n)), mshape = append(batch, m);
  ST steps = min_extent(m, n);
  std::vector<ST> init{scalar(int64_t{0}, I64), a, fill_as(pshape, int64_t{0}, DType::I32),
                       iota(mshape, static_cast<int64_t>(r - 2), DType::I32)};
  for (const ST& b : rhs) init.push_back(b);
  // No rows: nothing to factor (and no pivot to search for, which a loop body would trace).
  if (m.is_const() && m.value() == 0) return Lu{a, init[2], init[3], rhs};
  double sfmin = ft == F64 ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();
  std::vector<ST> out = while_loop(
      [&](const std::vector<ST>& c) { return less(c[0], steps); },
      [&](const std::vector<ST>& c) {
        const ST& k = c[0];
        ST A = c[1];
        ST col = take_at(A, r - 1, k);
        ST rv = index(mshape, r - 2);
        ST mag = abs(col);
        ST nan_key = where(equal(rv, k), scalar(kInf, ft), scalar(-1.0, ft));
        ST key = where(less(rv, k), scalar(-1.0, ft), where(isnan(mag), nan_key, mag));
        ST p = argmax(key, static_cast<int64_t>(r - 2));
        auto swap_rows = [&](const ST& x) {
          size_t ax = r - 2;
          ST idx = index(x.shape(), ax);
          ST pb = broadcast_in_dim(p, x.shape(), bdims);
          Ints keep = all_but(x.rank(), ax);
          ST rk = broadcast_in_dim(take_at(x, ax, k), x.shape(), keep);
          ST rp = broadcast_in_dim(take_at(x, ax, pb), x.shape(), keep);
          return where(equal(idx, k), rp, where(equal(idx, pb), rk, x));
        };
        A = swap_rows(A);
        std::vector<ST> next{add(k, int64_t{1}), ST(), ST(), swap_rows(c[3])};
        for (size_t i = 4; i < c.size(); ++i) next.push_back(swap_rows(c[i]));
        // Multipliers: the column below the pivot times 1 / pivot (LAPACK scales by the reciprocal).
        col = take_at(A, r - 1, k);
        ST d = per_matrix(take_at(col, r - 2, k), mshape);
        ST scaled = where(greater_equal(abs(d), scalar(sfmin, ft)), multiply(col, divide(1.0, d)), divide(col, d));
        ST l = where(not_equal(d, scalar(0.0, ft)), scaled, col);
        ST u = take_at(A, r - 2, k);
        ST lb = broadcast_in_dim(l, s, all_but(r, r - 1)), ub = broadcast_in_dim(u, s, all_but(r, r - 2));
        ST rows = index(s, r - 2), cols = index(s, r - 1);
        ST below = greater(rows, k);
        A = where(logical_and(below, greater(cols, k)), subtract(A, multiply(lb, ub)), A);
        A = where(logical_and(below, equal(cols, k)), lb, A);
        ST piv = where(equal(index(pshape, r - 2), k), convert(broadcast_in_dim(p, pshape, bdims), DType::I32), c[2]);
        next[1] = A;
        next[2] = piv;
        return next;
      },
      init);
  Lu res{out[1], out[2], out[3], {}};
  for (size_t i = 4; i < out.size(); ++i) res.rhs.push_back(out[i]);
  return res;
}

// x with a x = b: LU, the swaps applied to b, then the unit-lower and upper triangular solves (getrs). A zero
// pivot divides by zero there: inf and NaN, as LAPACK.
ST lu_solve(const ST& a, const ST& b) {
  Lu f = lu_factor(a, {b});
  ST y = linalg::triangular_solve(f.lu, f.rhs[0], /*left_side=*/true, /*lower=*/true, false, /*unit_diagonal=*/true);
  return linalg::triangular_solve(f.lu, y, true, false, false, false);
}

std::vector<ST> decompose_lu(const Operation&, std::span<const ST> in) {
  DType t = in[0].dtype();
  Lu f = lu_factor(convert(in[0], acc_type(t)), {});
  return {convert(f.lu, t), f.pivots, f.permutation};
}

std::vector<ST> decompose_solve(const Operation& op, std::span<const ST> in, bool inverse) {
  const TensorType& rt = op.result(0)->type();
  DType acc = acc_type(rt.dtype);
  if (has_zero_extent(rt.shape)) return {fill_as(rt.shape, int64_t{0}, rt.dtype)};
  ST a = convert(in[0], acc);
  ST b = inverse ? identity_like(a.shape(), acc) : convert(in[1], acc);
  return {convert(lu_solve(a, b), rt.dtype)};
}

// det: the product of U's diagonal, negated for an odd number of swaps (0x0: 1).
// slogdet: sign and sum of log|u|; a zero pivot gives (0, -inf), a NaN on U's diagonal (NaN, NaN).
std::vector<ST> decompose_det(const Operation&, std::span<const ST> in, bool slog) {
  DType t = in[0].dtype(), acc = acc_type(t);
  ST a = convert(in[0], acc);
  const Shape& s = a.shape();
  size_t r = s.rank();
  Lu f = lu_factor(a, {});
  ST diag = take_at(f.lu, r - 1, index(s, r - 2));  // (..., N): u[i, i]
  ST odd = odd_count(not_equal(f.pivots, iota(f.pivots.shape(), static_cast<int64_t>(r - 2), DType::I32)));
  auto sgn = [&](const ST& flip) { return where(flip, scalar(-1.0, acc), scalar(1.0, acc)); };
  int64_t last = static_cast<int64_t>(r - 2);
  if (!slog) return {convert(multiply(prod(diag, {last}), sgn(odd)), t)};
  ST zero = scalar(0.0, acc);
  ST neg = odd_count(less(diag, zero));
  ST any_zero = any(equal(diag, zero), {last});
  ST any_nan = any(isnan(diag), {last});
  ST sign = sgn(logical_xor(odd, neg));
  ST logabs = sum_over(log(abs(diag)), {last});
  sign = where(any_zero, zero, sign);
  logabs = where(any_zero, scalar(-kInf, acc), logabs);
  sign = where(any_nan, scalar(kNaN, acc), sign);
  logabs = where(any_nan, scalar(kNaN, acc), logabs);
  return {convert(sign, t), convert(logabs, t)};
}

// ---------------------------------------------------------------- matrix_exp

// As the interpreter computes it (Higham 2005, in float64): s = ceil(log2(|A|_1 / theta13)) squarings when |A|_1 >
// theta13 (the exponent read from the bits: exact where std::log2 rounds), the degree-13 Pade approximant of A / 2^s
// from one solve, then s squarings; each matrix squares only as often as its own s asks. A NaN or inf anywhere
// gives NaN.
std::vector<ST> decompose_matrix_exp(const Operation&, std::span<const ST> in) {
  DType t = in[0].dtype();
  if (has_zero_extent(in[0].shape())) return {in[0]};
  const auto& b = special::kPade13;  // the interpreter's coefficients
  constexpr double theta13 = special::kPade13Theta;
  ST A = convert(in[0], F64);
  const Shape& s = A.shape();
  size_t r = s.rank();
  ST norm1 = max(sum_over(abs(A), {static_cast<int64_t>(r - 2)}), {static_cast<int64_t>(r - 2)});  // NaN propagates
  ST finite = isfinite(norm1);
  ST y = divide(norm1, theta13);
  ST frac = bitwise_and(bitcast_convert(y, I64), (int64_t{1} << 52) - 1);
  ST ceil_log2 = add(exponent_of(y), convert(not_equal(frac, int64_t{0}), I64));
  ST sq = where(logical_and(finite, greater(norm1, theta13)), ceil_log2, scalar(int64_t{0}, I64));
  // Scaled by 2^-s in two exact steps (2^-s alone may be subnormal).
  ST half = shift_right_logical(sq, int64_t{1});
  A = multiply(multiply(A, per_matrix(pow2(negative(half)), s)), per_matrix(pow2(negative(subtract(sq, half))), s));
  auto lin3 = [&](int i6, const ST& A6, int i4, const ST& A4, int i2, const ST& A2) {
    return add(add(multiply(A6, b[i6]), multiply(A4, b[i4])), multiply(A2, b[i2]));
  };
  ST I = identity_like(s, F64);
  ST A2 = matmul(A, A), A4 = matmul(A2, A2), A6 = matmul(A4, A2);
  ST U = matmul(A6, lin3(13, A6, 11, A4, 9, A2));
  U = add(add(U, lin3(7, A6, 5, A4, 3, A2)), multiply(I, b[1]));
  U = matmul(A, U);
  ST V = matmul(A6, lin3(12, A6, 10, A4, 8, A2));
  V = add(add(V, lin3(6, A6, 4, A4, 2, A2)), multiply(I, b[0]));
  // The solve op: a backend that lowers it natively does, the others expand it below.
  ST X = linalg::solve(subtract(V, U), add(V, U));
  ST rounds = sq.rank() == 0 ? sq : max(sq);
  ST sqb = per_matrix(sq, s);
  std::vector<ST> out =
      while_loop([&](const std::vector<ST>& v) { return less(v[0], rounds); },
                 [&](const std::vector<ST>& v) {
                   ST more = greater(sqb, v[0]);
                   return std::vector<ST>{add(v[0], int64_t{1}), where(more, matmul(v[1], v[1]), v[1])};
                 },
                 std::vector<ST>{scalar(int64_t{0}, I64), X});
  ST res = where(per_matrix(finite, s), out[1], scalar(kNaN, F64));
  return {convert(res, t)};
}

// ---------------------------------------------------------------- qr

// QR as LAPACK's geqr2 and org2r compute it (geqrf and orgqr are their blocked forms, equal up to rounding): for
// each column k a Householder reflector from dlarfg (beta = -sign(alpha) |(alpha, x)|, tau = (beta - alpha) / beta,
// v = x / (alpha - beta); x = 0 gives tau = 0, H = I) applied to the columns right of k; Q = H(0) ... H(K-1)
// applied to the first columns of the identity. So R's diagonal signs are LAPACK's, not normalized (semantics).
std::vector<ST> decompose_qr(const Operation& op, std::span<const ST> in) {
  const TensorType& qt = op.result(0)->type();
  const TensorType& rt = op.result(1)->type();
  DType t = in[0].dtype(), ft = acc_type(t);
  ST A = convert(in[0], ft);
  const Shape& s = A.shape();
  size_t r = s.rank();
  const DimExpr &m = s[r - 2], &n = s[r - 1];
  DimExpr k_all = min(m, n);
  Shape batch = prefix(s, r - 2), mshape = append(batch, m), tshape = append(batch, k_all);
  ST steps = min_extent(m, n);
  int64_t row_axis = static_cast<int64_t>(r - 2);
  // v of step k from the factored column k: 1 at row k, the stored x below, 0 above.
  auto reflector = [&](const ST& col, const ST& k) {
    ST rv = index(mshape, r - 2);
    return where(equal(rv, k), scalar(1.0, ft), where(greater(rv, k), col, scalar(0.0, ft)));
  };
  // v^T X over the rows (..., M) . (..., M, C) -> (..., C), rows where v is 0 masked out of X first so a NaN or
  // inf there (R's rows, already final) cannot leak in through 0 * inf.
  auto vt_x = [&](const ST& v, const ST& X, const ST& k) {
    ST Xm = where(greater_equal(index(X.shape(), r - 2), k), X, scalar(0.0, ft));
    return dot_general(v, Xm, {row_axis}, {row_axis}, iota_ints(r - 2), iota_ints(r - 2));
  };
  // X - tau v w^T.
  auto apply_update = [&](const ST& X, const ST& v, const ST& tau, const ST& w) {
    ST tv = multiply(v, per_matrix(tau, mshape));
    return subtract(X, multiply(broadcast_in_dim(tv, X.shape(), all_but(r, r - 1)),
                                broadcast_in_dim(w, X.shape(), all_but(r, r - 2))));
  };
  std::vector<ST> f = while_loop([&](const std::vector<ST>& c) { return less(c[0], steps); },
                                 [&](const std::vector<ST>& c) {
                                   const ST& k = c[0];
                                   ST X = c[1];
                                   ST rows = index(s, r - 2), cols = index(s, r - 1);
                                   ST rv = index(mshape, r - 2);
                                   ST col = take_at(X, r - 1, k);
                                   ST alpha = take_at(col, r - 2, k);
                                   ST x = where(greater(rv, k), col, scalar(0.0, ft));
                                   ST xnorm = sqrt(sum_over(multiply(x, x), {row_axis}));
                                   ST h = sqrt(add(multiply(alpha, alpha), multiply(xnorm, xnorm)));
                                   ST beta = where(sign_bit(alpha), h, negative(h));
                                   ST nz = not_equal(xnorm, scalar(0.0, ft));
                                   ST tau = where(nz, divide(subtract(beta, alpha), beta), scalar(0.0, ft));
                                   ST inv = divide(1.0, subtract(alpha, beta));
                                   ST vx = where(per_matrix(nz, mshape), multiply(x, per_matrix(inv, mshape)), x);
                                   ST v = reflector(vx, k);
                                   // H applied to the columns right of k.
                                   ST upd = apply_update(X, v, tau, vt_x(v, X, k));
                                   ST apply = logical_and(logical_and(greater_equal(rows, k), greater(cols, k)),
                                                          per_matrix(not_equal(tau, scalar(0.0, ft)), s));
                                   X = where(apply, upd, X);
                                   ST newcol = where(equal(rv, k), per_matrix(where(nz, beta, alpha), mshape), vx);
                                   ST at_k = logical_and(equal(cols, k), greater_equal(rows, k));
                                   X = where(at_k, broadcast_in_dim(newcol, s, all_but(r, r - 1)), X);
                                   ST taus = where(equal(index(tshape, r - 2), k), per_matrix(tau, tshape), c[2]);
                                   return std::vector<ST>{add(k, int64_t{1}), X, taus};
                                 },
                                 std::vector<ST>{scalar(int64_t{0}, I64), A, fill_as(tshape, 0.0, ft)});
  const ST &fac = f[1], &taus = f[2];
  // R: the upper triangle of the factored matrix, its first rows.
  ST R = leading(where(less_equal(index(s, r - 2), index(s, r - 1)), fac, scalar(0.0, ft)), r - 2, rt.shape[r - 2]);
  // Q: reflectors applied last to first to the identity's first columns.
  std::vector<ST> q =
      while_loop([&](const std::vector<ST>& c) { return greater_equal(c[0], int64_t{0}); },
                 [&](const std::vector<ST>& c) {
                   const ST& k = c[0];
                   ST v = reflector(take_at(fac, r - 1, k), k);
                   ST tau = take_at(taus, r - 2, k);
                   return std::vector<ST>{subtract(k, int64_t{1}), apply_update(c[1], v, tau, vt_x(v, c[1], k))};
                 },
                 std::vector<ST>{subtract(steps, int64_t{1}), identity_like(qt.shape, ft)});
  return {convert(q[1], t), convert(R, t)};
}

// ---------------------------------------------------------------- singular values, norm, matrix_rank

// The singular values (unsorted) of a (..., M, N) float64 stack with static M and N, by one-sided Jacobi
// (Hestenes): plane rotations orthogonalize the columns (of the transpose when M < N, so there are min(M, N) of
// them) sweep after sweep until a sweep rotates nothing (a pair counts as orthogonal when |b_p . b_q| <= M eps |b_p|
// |b_q|; at most 60 sweeps), and the column norms are the singular values. Singular values are unique (no sign or
// order convention), and Jacobi computes them to high relative accuracy, so they agree with LAPACK's gesdd up to
// rounding. Each matrix is scaled by a power of two first (exact) so that the squared norms neither overflow nor
// underflow. A matrix with a NaN or inf gives NaN (semantics).
ST singular_values(const Operation& op, ST A) {
  const Shape& s0 = A.shape();
  size_t r = s0.rank();
  if (!s0[r - 2].is_const() || !s0[r - 1].is_const())
    throw BackendError("evoxc." + op.name() + " at " + op.location().to_string() +
                       ": its singular values are decomposed for static matrix extents only, got (" + s0.to_string() +
                       "); give the last two extents statically, or run this op on the interp backend");
  if (s0[r - 2].value() < s0[r - 1].value()) A = transpose_last(A);
  const Shape& s = A.shape();
  const int64_t m = s[r - 2].value(), n = s[r - 1].value();
  Shape batch = prefix(s, r - 2), cshape = append(batch, DimExpr(m));
  Ints both{static_cast<int64_t>(r - 2), static_cast<int64_t>(r - 1)};
  // Scaled by 2^-e with e the exponent of the largest |a| (clamped into the normal range).
  ST amax = max(abs(A), both);
  ST finite = isfinite(amax);
  ST ex = clamp(exponent_of(amax), int64_t{-1022}, int64_t{1022});
  ST B = multiply(A, per_matrix(pow2(negative(ex)), s));
  B = where(per_matrix(finite, s), B, scalar(0.0, F64));  // no NaN in the loop
  const double tol = static_cast<double>(m) * std::numeric_limits<double>::epsilon();
  int64_t rows = static_cast<int64_t>(r - 2);
  // Carry: sweep, p, q, B, rotated in this sweep, done.
  std::vector<ST> init{scalar(int64_t{0}, I64),    scalar(int64_t{0}, I64),   scalar(int64_t{1}, I64), B,
                       scalar(false, DType::Bool), scalar(n < 2, DType::Bool)};
  std::vector<ST> out =
      while_loop([&](const std::vector<ST>& c) { return logical_and(logical_not(c[5]), less(c[0], int64_t{60})); },
                 [&](const std::vector<ST>& c) {
                   const ST &p = c[1], &q = c[2], &X = c[3];
                   ST bp = take_at(X, r - 1, p), bq = take_at(X, r - 1, q);
                   ST alpha = sum_over(multiply(bp, bp), {rows});
                   ST beta = sum_over(multiply(bq, bq), {rows});
                   ST gamma = sum_over(multiply(bp, bq), {rows});
                   ST bound = multiply(sqrt(multiply(alpha, beta)), tol);
                   ST rot = greater(abs(gamma), bound);
                   ST safe_gamma = where(rot, gamma, scalar(1.0, F64));
                   ST zeta = divide(subtract(beta, alpha), multiply(safe_gamma, 2.0));
                   ST sgn = where(sign_bit(zeta), scalar(-1.0, F64), scalar(1.0, F64));
                   ST tt = divide(sgn, add(abs(zeta), sqrt(add(multiply(zeta, zeta), 1.0))));
                   ST cs = divide(1.0, sqrt(add(multiply(tt, tt), 1.0)));
                   ST sn = multiply(cs, tt);
                   ST cb = per_matrix(cs, cshape), sb = per_matrix(sn, cshape);
                   ST np = subtract(multiply(bp, cb), multiply(bq, sb));
                   ST nq = add(multiply(bp, sb), multiply(bq, cb));
                   ST cols = index(s, r - 1);
                   ST rb = per_matrix(rot, s);
                   Ints keep = all_but(r, r - 1);
                   ST Y = where(logical_and(rb, equal(cols, p)), broadcast_in_dim(np, s, keep), X);
                   Y = where(logical_and(rb, equal(cols, q)), broadcast_in_dim(nq, s, keep), Y);
                   ST any_rot = rot.rank() == 0 ? rot : any(rot);
                   ST rotated = logical_or(c[4], any_rot);
                   // Next pair in cyclic order; after the last one, a new sweep (done when nothing rotated).
                   ST q1 = add(q, int64_t{1});
                   ST wrap_q = equal(q1, n);
                   ST p1 = where(wrap_q, add(p, int64_t{1}), p);
                   ST end = logical_and(wrap_q, equal(p1, n - 1));
                   ST np_ = where(end, scalar(int64_t{0}, I64), p1);
                   ST nq_ = where(wrap_q, add(np_, int64_t{1}), q1);
                   ST sweep = where(end, add(c[0], int64_t{1}), c[0]);
                   ST done = logical_and(end, logical_not(rotated));
                   ST flag = where(end, scalar(false, DType::Bool), rotated);
                   return std::vector<ST>{sweep, np_, nq_, Y, flag, done};
                 },
                 init);
  ST sv = sqrt(sum_over(multiply(out[3], out[3]), {rows}));
  Shape vs = append(batch, DimExpr(n));
  sv = multiply(sv, per_matrix(pow2(ex), vs));
  return where(per_matrix(finite, vs), sv, scalar(kNaN, F64));
}

// Rounded to the precision LAPACK computes them in (float32 for float16/bfloat16/float32), and back to float64, as
// the interpreter reads them.
ST in_lapack_precision(const ST& sv, DType t) { return convert(convert(sv, acc_type(t)), F64); }

double eps_of(DType t) {
  switch (t) {
    case DType::F16: return std::ldexp(1.0, -10);
    case DType::BF16: return std::ldexp(1.0, -7);
    case DType::F32: return std::ldexp(1.0, -23);
    default: return std::ldexp(1.0, -52);
  }
}

// matrix_rank: the count of singular values above the tolerance (numpy's rule, in float64).
std::vector<ST> decompose_matrix_rank(const Operation& op, std::span<const ST> in) {
  const AttrMap& at = op.attributes();
  DType t = in[0].dtype();
  const Shape& s = in[0].shape();
  size_t r = s.rank();
  const TensorType& rt = op.result(0)->type();
  if (has_zero_extent(s)) return {fill_as(rt.shape, int64_t{0}, I64)};
  ST sv = in_lapack_precision(singular_values(op, convert(in[0], F64)), t);
  int64_t last = static_cast<int64_t>(r - 2);
  ST smax = max(sv, {last});
  ST tol;
  if (at.count("tol")) {
    tol = fill_as(smax.shape(), attr_float(at, "tol", op.name()), F64);
  } else {
    double f = at.count("rtol") ? attr_float(at, "rtol", op.name())
                                : static_cast<double>(std::max(s[r - 2].value(), s[r - 1].value())) * eps_of(t);
    tol = multiply(smax, f);
  }
  ST above = greater(sv, per_matrix(tol, sv.shape()));
  return {sum_over(convert(above, I64), {last})};
}

// The norms computed in float64 and rounded once (semantics). Zero-size operands have norm 0.
std::vector<ST> decompose_norm(const Operation& op, std::span<const ST> in) {
  const std::string& ord = attr_string(op.attributes(), "ord", op.name());
  DType t = in[0].dtype();
  const TensorType& rt = op.result(0)->type();
  if (has_zero_extent(in[0].shape())) return {fill_as(rt.shape, int64_t{0}, t)};
  ST x = convert(in[0], F64);
  const Shape& s = x.shape();
  int64_t r = static_cast<int64_t>(s.rank());
  ST ax = abs(x);
  ST res;
  Ints axes;
  if (ord == "vector") {
    double p = attr_float(op.attributes(), "p", op.name());
    axes = {r - 1};
    if (std::isinf(p)) {
      res = p > 0 ? max(ax, axes) : min(ax, axes);
    } else if (p == 0) {
      res = sum_over(convert(not_equal(x, 0.0), F64), axes);
    } else if (p == 1) {
      res = sum_over(ax, axes);
    } else if (p == 2) {
      res = sqrt(sum_over(multiply(x, x), axes));
    } else {
      res = power(sum_over(power(ax, p), axes), 1.0 / p);
    }
  } else {
    axes = {r - 2, r - 1};
    if (ord == "fro") {
      res = sqrt(sum_over(multiply(x, x), axes));
    } else if (ord == "1" || ord == "-1" || ord == "inf" || ord == "-inf") {
      bool columns = ord == "1" || ord == "-1";
      bool largest = ord == "1" || ord == "inf";
      ST sums = sum_over(ax, {columns ? r - 2 : r - 1});
      res = largest ? max(sums, {r - 2}) : min(sums, {r - 2});
    } else {  // "2", "-2", "nuc": from the singular values (as the interpreter, in LAPACK's precision)
      ST sv = in_lapack_precision(singular_values(op, x), t);
      Ints last{r - 2};
      res = ord == "nuc" ? sum_over(sv, last) : ord == "2" ? max(sv, last) : min(sv, last);
    }
  }
  // A symbolic extent may be 0 at run time: an empty vector or matrix has norm 0 (the reductions would give their
  // identities, or nothing, there).
  bool maybe_empty = false;
  for (int64_t a : axes) maybe_empty = maybe_empty || !s[static_cast<size_t>(a)].is_const();
  if (maybe_empty) {
    ST count = scalar(int64_t{1}, I64);
    for (int64_t a : axes) count = multiply(count, extent(s[static_cast<size_t>(a)]));
    res = where(equal(count, int64_t{0}), scalar(0.0, F64), res);
  }
  return {convert(res, t)};
}

}  // namespace

void install_linalg_decompositions(DecomposeTable& t) {
  t.set("cholesky", decompose_cholesky);
  t.set("triangular_solve", decompose_triangular_solve);
  t.set("lu", decompose_lu);
  t.set("solve", [](const Operation& op, std::span<const ST> in) { return decompose_solve(op, in, false); });
  t.set("inv", [](const Operation& op, std::span<const ST> in) { return decompose_solve(op, in, true); });
  t.set("det", [](const Operation& op, std::span<const ST> in) { return decompose_det(op, in, false); });
  t.set("slogdet", [](const Operation& op, std::span<const ST> in) { return decompose_det(op, in, true); });
  t.set("matrix_exp", decompose_matrix_exp);
  t.set("qr", decompose_qr);
  t.set("norm", decompose_norm);
  t.set("matrix_rank", decompose_matrix_rank);
}

}  // namespace evoxc::transforms
