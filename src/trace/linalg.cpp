// evoxc::dot_general and evoxc::linalg: numpy.linalg conventions (promotion, 1-D operands, batch broadcasting, axes)
// over the decomposition ops.
#include "evoxc/trace/linalg.h"

#include <algorithm>
#include <cmath>

#include "emit.h"
#include "evoxc/core/error.h"

namespace evoxc {

namespace {

// Float-only functions take ints and bool as float32 (jax.numpy); floats keep their dtype.
SymbolicTensor fl(const SymbolicTensor& x, const SrcLoc& loc) {
  if (!x.defined()) throw TraceError("use of an undefined (default-constructed) SymbolicTensor");
  return is_float(x.dtype()) ? x : astype(x, kDefaultFloat, loc);
}
SymbolicTensor to(const SymbolicTensor& x, DType t, const SrcLoc& loc) {
  return x.dtype() == t ? x : astype(x, t, loc);
}
std::vector<SymbolicTensor> emit(const OpDef& op, const std::vector<SymbolicTensor>& xs, AttrMap attrs,
                                 const SrcLoc& loc) {
  return xs[0].context()->emit(op, xs, std::move(attrs), loc);
}
SymbolicTensor emit1(const OpDef& op, const std::vector<SymbolicTensor>& xs, AttrMap attrs, const SrcLoc& loc) {
  return xs[0].context()->emit1(op, xs, std::move(attrs), loc);
}

void need_matrix(const std::string& fn, const SymbolicTensor& a) {
  if (a.rank() < 2)
    throw ShapeError("linalg." + fn + ": the operand (" + a.shape().to_string() + ") has rank " +
                     std::to_string(a.rank()) + "; it needs a (..., M, N) stack of matrices (rank >= 2)");
}

Shape head(const Shape& s, size_t drop) {
  return Shape(std::vector<DimExpr>(s.dims().begin(), s.dims().end() - static_cast<std::ptrdiff_t>(drop)));
}
Shape concat(const Shape& a, const Shape& tail, size_t keep) {
  std::vector<DimExpr> d = a.dims();
  d.insert(d.end(), tail.dims().end() - static_cast<std::ptrdiff_t>(keep), tail.dims().end());
  return Shape(std::move(d));
}
SymbolicTensor bcast(const SymbolicTensor& x, const Shape& s, const SrcLoc& loc) {
  return x.shape() == s ? x : broadcast_to(x, s, loc);
}

// Broadcasts the batch dims (all but the last two) of a and b to one batch shape.
void broadcast_batches(const std::string& fn, SymbolicTensor& a, SymbolicTensor& b, const SrcLoc& loc) {
  Shape batch = broadcast_shapes(head(a.shape(), 2), head(b.shape(), 2), "linalg." + fn + " batch dims");
  a = bcast(a, concat(batch, a.shape(), 2), loc);
  b = bcast(b, concat(batch, b.shape(), 2), loc);
}

// Moves `axes` (normalized) to the end, keeping the other axes in order.
SymbolicTensor axes_last(const SymbolicTensor& x, const std::vector<int64_t>& axes, const SrcLoc& loc) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < static_cast<int64_t>(x.rank()); ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) perm.push_back(i);
  perm.insert(perm.end(), axes.begin(), axes.end());
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  return identity ? x : transpose(x, perm, loc);
}

std::vector<int64_t> norm_axes(const std::vector<int64_t>& axes, size_t rank, const std::string& what) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = normalize_axis(a, rank, what);
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw ShapeError(what + ": axis " + std::to_string(a) + " is repeated; name each axis once");
    out.push_back(n);
  }
  return out;
}

}  // namespace

SymbolicTensor dot_general(const SymbolicTensor& lhs, const SymbolicTensor& rhs, std::vector<int64_t> lhs_contracting,
                           std::vector<int64_t> rhs_contracting, std::vector<int64_t> lhs_batch,
                           std::vector<int64_t> rhs_batch, SrcLoc loc) {
  if (!lhs.defined() || !rhs.defined()) throw TraceError("use of an undefined (default-constructed) SymbolicTensor");
  auto norm = [](std::vector<int64_t>& v, size_t rank) {
    for (int64_t& a : v) a = normalize_axis(a, rank, "dot_general");
  };
  norm(lhs_contracting, lhs.rank());
  norm(lhs_batch, lhs.rank());
  norm(rhs_contracting, rhs.rank());
  norm(rhs_batch, rhs.rank());
  DType t = promote_types(lhs.dtype(), rhs.dtype());
  return emit1(EVOXC_OP("dot_general"), {to(lhs, t, loc), to(rhs, t, loc)},
               {{"lhs_contracting_dims", lhs_contracting},
                {"rhs_contracting_dims", rhs_contracting},
                {"lhs_batch_dims", lhs_batch},
                {"rhs_batch_dims", rhs_batch}},
               loc);
}

namespace linalg {

SymbolicTensor cholesky(const SymbolicTensor& a, bool upper, SrcLoc loc) {
  return emit1(EVOXC_OP("cholesky"), {fl(a, loc)}, {{"lower", !upper}}, loc);
}

SymbolicTensor solve(const SymbolicTensor& a0, const SymbolicTensor& b0, SrcLoc loc) {
  SymbolicTensor a = fl(a0, loc), b = fl(b0, loc);
  DType t = promote_types(a.dtype(), b.dtype());
  a = to(a, t, loc);
  b = to(b, t, loc);
  need_matrix("solve", a);
  if (b.rank() == 0) throw ShapeError("linalg.solve: b is a scalar; it needs shape (M,) or (..., M, K)");
  const bool vec = b.rank() == 1;
  if (vec) b = expand_dims(b, {1}, loc);
  broadcast_batches("solve", a, b, loc);
  SymbolicTensor x = emit1(EVOXC_OP("solve"), {a, b}, {}, loc);
  return vec ? squeeze(x, {static_cast<int64_t>(x.rank()) - 1}, loc) : x;
}

SymbolicTensor triangular_solve(const SymbolicTensor& a0, const SymbolicTensor& b0, bool left_side, bool lower,
                                bool transpose_a, bool unit_diagonal, SrcLoc loc) {
  SymbolicTensor a = fl(a0, loc), b = fl(b0, loc);
  DType t = promote_types(a.dtype(), b.dtype());
  a = to(a, t, loc);
  b = to(b, t, loc);
  need_matrix("triangular_solve", a);
  need_matrix("triangular_solve", b);
  broadcast_batches("triangular_solve", a, b, loc);
  return emit1(
      EVOXC_OP("triangular_solve"), {a, b},
      {{"left_side", left_side}, {"lower", lower}, {"transpose_a", transpose_a}, {"unit_diagonal", unit_diagonal}},
      loc);
}

SymbolicTensor inv(const SymbolicTensor& a, SrcLoc loc) { return emit1(EVOXC_OP("inv"), {fl(a, loc)}, {}, loc); }
SymbolicTensor det(const SymbolicTensor& a, SrcLoc loc) { return emit1(EVOXC_OP("det"), {fl(a, loc)}, {}, loc); }

SlogdetResult slogdet(const SymbolicTensor& a, SrcLoc loc) {
  auto r = emit(EVOXC_OP("slogdet"), {fl(a, loc)}, {}, loc);
  return {r[0], r[1]};
}

QRResult qr(const SymbolicTensor& a, const std::string& mode, SrcLoc loc) {
  if (mode != "reduced" && mode != "complete" && mode != "r")
    throw TypeError("linalg.qr: unknown mode \"" + mode + "\"; use \"reduced\", \"complete\" or \"r\"");
  auto r = emit(EVOXC_OP("qr"), {fl(a, loc)}, {{"full_matrices", mode == "complete"}}, loc);
  if (mode == "r") return {SymbolicTensor(), r[1]};
  return {r[0], r[1]};
}

EighResult eigh(const SymbolicTensor& a, const std::string& UPLO, SrcLoc loc) {
  if (UPLO != "L" && UPLO != "U") throw TypeError("linalg.eigh: UPLO is \"" + UPLO + "\"; use \"L\" or \"U\"");
  auto r = emit(EVOXC_OP("eigh"), {fl(a, loc)}, {{"lower", UPLO == "L"}}, loc);
  return {r[0], r[1]};
}
SymbolicTensor eigvalsh(const SymbolicTensor& a, const std::string& UPLO, SrcLoc loc) {
  return eigh(a, UPLO, loc).eigenvalues;
}

SVDResult svd(const SymbolicTensor& a, bool full_matrices, SrcLoc loc) {
  auto r = emit(EVOXC_OP("svd"), {fl(a, loc)}, {{"full_matrices", full_matrices}, {"compute_uv", true}}, loc);
  return {r[0], r[1], r[2]};
}
SymbolicTensor svdvals(const SymbolicTensor& a, SrcLoc loc) {
  return emit1(EVOXC_OP("svd"), {fl(a, loc)}, {{"full_matrices", false}, {"compute_uv", false}}, loc);
}

SymbolicTensor matrix_rank(const SymbolicTensor& a0, std::optional<double> tol, std::optional<double> rtol,
                           SrcLoc loc) {
  SymbolicTensor a = fl(a0, loc);
  if (tol && rtol) throw TypeError("linalg.matrix_rank: give at most one of tol and rtol");
  // numpy counts a vector (or scalar) as having rank 1 unless it is all zeros: the same as one row.
  if (a.rank() < 2) a = reshape(a, Shape{DimExpr(1), a.rank() == 1 ? a.shape()[0] : DimExpr(1)}, loc);
  AttrMap attrs;
  if (tol) attrs["tol"] = *tol;
  if (rtol) attrs["rtol"] = *rtol;
  return emit1(EVOXC_OP("matrix_rank"), {a}, std::move(attrs), loc);
}

namespace {

SymbolicTensor keep(const SymbolicTensor& r, const Shape& in, const std::vector<int64_t>& axes, bool keepdims,
                    const SrcLoc& loc) {
  if (!keepdims) return r;
  std::vector<DimExpr> d = in.dims();
  for (int64_t a : axes) d[static_cast<size_t>(a)] = DimExpr(1);
  return reshape(r, Shape(std::move(d)), loc);
}

std::vector<int64_t> default_axes(const SymbolicTensor& x) {
  if (x.rank() != 1 && x.rank() != 2)
    throw ShapeError("linalg.norm: with no axis the operand must be 1-D or 2-D, got (" + x.shape().to_string() +
                     "); pass axis");
  return x.rank() == 1 ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 1};
}

SymbolicTensor matrix_norm(const SymbolicTensor& x, const std::vector<int64_t>& axes, const std::string& ord,
                           bool keepdims, const SrcLoc& loc) {
  SymbolicTensor r = emit1(EVOXC_OP("norm"), {axes_last(x, axes, loc)}, {{"ord", ord}}, loc);
  return keep(r, x.shape(), axes, keepdims, loc);
}

}  // namespace

SymbolicTensor norm(const SymbolicTensor& x0, std::optional<double> ord, std::optional<std::vector<int64_t>> axis,
                    bool keepdims, SrcLoc loc) {
  SymbolicTensor x = fl(x0, loc);
  if (!axis && !ord) {
    // numpy: the 2-norm of the flattened operand.
    std::vector<int64_t> all;
    for (int64_t i = 0; i < static_cast<int64_t>(x.rank()); ++i) all.push_back(i);
    SymbolicTensor flat = reshape(x, Shape{x.shape().num_elements()}, loc);
    SymbolicTensor r = emit1(EVOXC_OP("norm"), {flat}, {{"ord", std::string("vector")}, {"p", 2.0}}, loc);
    return keep(r, x.shape(), all, keepdims, loc);
  }
  std::vector<int64_t> axes = axis ? norm_axes(*axis, x.rank(), "linalg.norm") : default_axes(x);
  if (axes.size() == 1) {
    double p = ord.value_or(2.0);
    if (std::isnan(p)) throw TypeError("linalg.norm: ord is NaN; give a number or +-inf");
    SymbolicTensor r =
        emit1(EVOXC_OP("norm"), {axes_last(x, axes, loc)}, {{"ord", std::string("vector")}, {"p", p}}, loc);
    return keep(r, x.shape(), axes, keepdims, loc);
  }
  if (axes.size() != 2)
    throw ShapeError("linalg.norm: " + std::to_string(axes.size()) +
                     " axes given; a norm takes one axis (vector) or two (matrix)");
  std::string o = "fro";
  if (ord) {
    double v = *ord;
    if (v == 1)
      o = "1";
    else if (v == 2)
      o = "2";
    else if (v == -1)
      o = "-1";
    else if (v == -2)
      o = "-2";
    else if (std::isinf(v))
      o = v > 0 ? "inf" : "-inf";
    else
      throw TypeError("linalg.norm: ord " + std::to_string(v) +
                      " is not a matrix norm; use 1, 2, inf, -1, -2, -inf, \"fro\" or \"nuc\"");
  }
  return matrix_norm(x, axes, o, keepdims, loc);
}

SymbolicTensor norm(const SymbolicTensor& x0, const std::string& ord, std::optional<std::vector<int64_t>> axis,
                    bool keepdims, SrcLoc loc) {
  SymbolicTensor x = fl(x0, loc);
  if (ord != "fro" && ord != "nuc")
    throw TypeError("linalg.norm: unknown ord \"" + ord + "\"; the string orders are \"fro\" and \"nuc\"");
  std::vector<int64_t> axes = axis ? norm_axes(*axis, x.rank(), "linalg.norm") : default_axes(x);
  if (axes.size() != 2)
    throw TypeError("linalg.norm: ord \"" + ord + "\" is a matrix norm and needs two axes, got " +
                    std::to_string(axes.size()));
  return matrix_norm(x, axes, ord, keepdims, loc);
}

LUResult lu(const SymbolicTensor& a, SrcLoc loc) {
  auto r = emit(EVOXC_OP("lu"), {fl(a, loc)}, {}, loc);
  return {r[0], r[1], r[2]};
}

SymbolicTensor matrix_exp(const SymbolicTensor& a, SrcLoc loc) {
  return emit1(EVOXC_OP("matrix_exp"), {fl(a, loc)}, {}, loc);
}

SymbolicTensor trace(const SymbolicTensor& a, int64_t offset, int64_t axis1, int64_t axis2, SrcLoc loc) {
  if (!a.defined()) throw TraceError("use of an undefined (default-constructed) SymbolicTensor");
  if (a.rank() < 2)
    throw ShapeError("linalg.trace: the operand (" + a.shape().to_string() + ") needs rank >= 2 for a trace");
  int64_t a1 = normalize_axis(axis1, a.rank(), "linalg.trace axis1");
  int64_t a2 = normalize_axis(axis2, a.rank(), "linalg.trace axis2");
  DType t = a.dtype();
  // numpy.sum's accumulator: bool and signed ints in int64, unsigned in uint64.
  if (is_bool(t) || is_signed_int(t)) t = DType::I64;
  if (is_unsigned_int(t)) t = DType::U64;
  return emit1(EVOXC_OP("trace"), {to(a, t, loc)}, {{"offset", offset}, {"axis1", a1}, {"axis2", a2}}, loc);
}

}  // namespace linalg
}  // namespace evoxc
