// Linear algebra inside a trace: evoxc::dot_general and evoxc::linalg (numpy.linalg names, jax/scipy lu).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evoxc/trace/ops.h"

namespace evoxc {

// XLA DotGeneral: contracts lhs axes `lhs_contracting` with rhs axes `rhs_contracting` pairwise and
// keeps paired `lhs_batch`/`rhs_batch` axes; result = batch dims, then lhs free dims, then rhs free
// dims. Negative axes count from the end. The operands are promoted to one dtype with promote_types;
// the op takes numeric dtypes (convert bool operands first).
SymbolicTensor dot_general(const SymbolicTensor& lhs, const SymbolicTensor& rhs, std::vector<int64_t> lhs_contracting,
                           std::vector<int64_t> rhs_contracting, std::vector<int64_t> lhs_batch = {},
                           std::vector<int64_t> rhs_batch = {}, SrcLoc loc = SrcLoc::current());

namespace linalg {

// Every function takes (..., M, N) stacks of matrices and maps over the leading dims. Integer and
// bool operands convert to float32 first (as jax.numpy); float16/bfloat16 stay in their dtype (the
// interpreter computes in float32 and rounds once). Numerical failures never throw: see
// docs/semantics.md ("Linear algebra") for the NaN/inf each op gives.

// numpy.linalg.cholesky: L with A = L L^T reading A's lower triangle; upper = true gives U with
// A = U^T U reading the upper triangle. Not positive definite: that matrix's result is all NaN.
SymbolicTensor cholesky(const SymbolicTensor& a, bool upper = false, SrcLoc loc = SrcLoc::current());

// numpy.linalg.solve (numpy 2 rules): b of shape (M,) is one right-hand side and the result is (..., M);
// otherwise b is (..., M, K); batch dims broadcast.
SymbolicTensor solve(const SymbolicTensor& a, const SymbolicTensor& b, SrcLoc loc = SrcLoc::current());

// jax.lax.linalg.triangular_solve: solves op(a) x = b (left_side) or x op(a) = b, op = transpose when
// transpose_a; only the `lower` (or upper) triangle of a is read; unit_diagonal assumes ones on it.
SymbolicTensor triangular_solve(const SymbolicTensor& a, const SymbolicTensor& b, bool left_side = false,
                                bool lower = false, bool transpose_a = false, bool unit_diagonal = false,
                                SrcLoc loc = SrcLoc::current());

SymbolicTensor inv(const SymbolicTensor& a, SrcLoc loc = SrcLoc::current());
SymbolicTensor det(const SymbolicTensor& a, SrcLoc loc = SrcLoc::current());

struct SlogdetResult {
  SymbolicTensor sign, logabsdet;
};
SlogdetResult slogdet(const SymbolicTensor& a, SrcLoc loc = SrcLoc::current());

// numpy.linalg.qr: mode "reduced" (Q (..., M, K), R (..., K, N), K = min(M, N)), "complete"
// (Q (..., M, M), R (..., M, N)) or "r" (R of reduced only; Q is left undefined).
struct QRResult {
  SymbolicTensor Q, R;
};
QRResult qr(const SymbolicTensor& a, const std::string& mode = "reduced", SrcLoc loc = SrcLoc::current());

// numpy.linalg.eigh: eigenvalues ascending, eigenvectors as columns; UPLO "L" or "U" names the triangle read.
struct EighResult {
  SymbolicTensor eigenvalues, eigenvectors;
};
EighResult eigh(const SymbolicTensor& a, const std::string& UPLO = "L", SrcLoc loc = SrcLoc::current());
// numpy.linalg.eigvalsh: the eigenvalues alone.
SymbolicTensor eigvalsh(const SymbolicTensor& a, const std::string& UPLO = "L", SrcLoc loc = SrcLoc::current());

// numpy.linalg.svd: A = U diag(S) Vh with S descending; full_matrices as numpy (default true).
struct SVDResult {
  SymbolicTensor U, S, Vh;
};
SVDResult svd(const SymbolicTensor& a, bool full_matrices = true, SrcLoc loc = SrcLoc::current());
// numpy.linalg.svdvals (svd with compute_uv = false): S alone.
SymbolicTensor svdvals(const SymbolicTensor& a, SrcLoc loc = SrcLoc::current());

// numpy.linalg.matrix_rank: singular values above tol; with neither tol nor rtol, rtol =
// max(M, N) * eps(dtype) relative to the largest one. A 1-D operand counts as one row. int64.
SymbolicTensor matrix_rank(const SymbolicTensor& a, std::optional<double> tol = std::nullopt,
                           std::optional<double> rtol = std::nullopt, SrcLoc loc = SrcLoc::current());

// numpy.linalg.norm. ord: nullopt gives the 2-norm of vectors and "fro" of matrices; a number is a
// vector p-norm (one axis) or one of the matrix norms 1, 2, inf, -1, -2, -inf (two axes). axis:
// nullopt means every axis of a 1-D or 2-D operand (and the flattened 2-norm when ord is nullopt
// too); one axis gives a vector norm, two axes a matrix norm. keepdims keeps them as unit dims.
SymbolicTensor norm(const SymbolicTensor& x, std::optional<double> ord = std::nullopt,
                    std::optional<std::vector<int64_t>> axis = std::nullopt, bool keepdims = false,
                    SrcLoc loc = SrcLoc::current());
// ord "fro" or "nuc" (matrix norms).
SymbolicTensor norm(const SymbolicTensor& x, const std::string& ord,
                    std::optional<std::vector<int64_t>> axis = std::nullopt, bool keepdims = false,
                    SrcLoc loc = SrcLoc::current());

// jax.lax.linalg.lu: P A = L U with partial pivoting; lu holds L (unit diagonal, below) and U;
// pivots (int32, 0-based, (..., min(M, N))) swap row i with row pivots[i] in turn; permutation
// (int32, (..., M)) satisfies A[permutation] = L U.
struct LUResult {
  SymbolicTensor lu, pivots, permutation;
};
LUResult lu(const SymbolicTensor& a, SrcLoc loc = SrcLoc::current());

// scipy.linalg.expm / jax.scipy.linalg.expm: the matrix exponential.
SymbolicTensor matrix_exp(const SymbolicTensor& a, SrcLoc loc = SrcLoc::current());
inline SymbolicTensor expm(const SymbolicTensor& a, SrcLoc loc = SrcLoc::current()) { return matrix_exp(a, loc); }

// numpy.trace: the sum of the `offset` diagonal of the axis1/axis2 planes (negative axes count from the
// end), which are removed. bool and ints sum in int64 (uint64 for unsigned), as numpy.sum.
SymbolicTensor trace(const SymbolicTensor& a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1,
                     SrcLoc loc = SrcLoc::current());

}  // namespace linalg
}  // namespace evoxc
