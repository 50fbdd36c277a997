// Bindings of the reductions, statistics, softmax, products (matmul, einsum, ...) and linear algebra, plus
// evoxc.linalg.
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bind.h"
#include "evoxc/trace/indexing.h"
#include "evoxc/trace/linalg.h"
#include "evoxc/trace/numpy.h"

namespace evoxc::py {

namespace {

using ST = SymbolicTensor;

// A SymbolicTensor from a Python object that is not bound through a typed parameter (einsum's *operands,
// optional tensors): host data is the TraceError that says how data enters a graph.
ST to_symbolic(nb::handle h, const char* what) {
  if (nb::isinstance<ST>(h)) return nb::cast<ST>(h);
  if (is_host_data(h)) host_data_error();
  throw nb::type_error((std::string(what) + " must be a SymbolicTensor, got a " + py_type_name(h)).c_str());
}

std::optional<ST> optional_symbolic(nb::handle h, const char* what) {
  if (h.is_none()) return std::nullopt;
  return to_symbolic(h, what);
}

// norm's axis: None, an int, or a sequence of ints.
std::optional<std::vector<int64_t>> norm_axis(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  if (PyBool_Check(h.ptr())) throw nb::type_error("norm: axis must be None, an int or a sequence of ints");
  if (PyLong_Check(h.ptr()) || PyIndex_Check(h.ptr())) return std::vector<int64_t>{nb::cast<int64_t>(h)};
  if (!PySequence_Check(h.ptr()) || nb::isinstance<nb::str>(h))
    throw nb::type_error("norm: axis must be None, an int or a sequence of ints");
  std::vector<int64_t> axes;
  for (nb::handle a : nb::borrow<nb::sequence>(h)) {
    if (PyBool_Check(a.ptr()) || !PyIndex_Check(a.ptr()))
      throw nb::type_error("norm: axis must be None, an int or a sequence of ints");
    axes.push_back(nb::cast<int64_t>(a));
  }
  return axes;
}

// numpy.linalg.norm with ord None, a number or a string: picks the C++ overload.
ST norm_any(const ST& x, nb::handle ord, nb::handle axis, bool keepdims) {
  auto ax = norm_axis(axis);
  if (ord.is_none()) return linalg::norm(x, std::optional<double>(), ax, keepdims);
  if (nb::isinstance<nb::str>(ord)) return linalg::norm(x, nb::cast<std::string>(ord), ax, keepdims);
  if (PyBool_Check(ord.ptr())) throw nb::type_error("norm: ord must be None, a number, 'fro' or 'nuc'");
  double p = PyFloat_AsDouble(ord.ptr());
  if (p == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw nb::type_error("norm: ord must be None, a number, 'fro' or 'nuc'");
  }
  return linalg::norm(x, p, ax, keepdims);
}

// The linalg functions, bound both at the top level and in evoxc.linalg.
void bind_linalg_functions(nb::module_& m) {
  def_op(
      m, "cholesky", [](const ST& a, bool upper) { return linalg::cholesky(a, upper); }, nb::arg("a"),
      nb::arg("upper") = false,
      "numpy.linalg.cholesky: L with a = L L^T (lower triangle read), or U with a = U^T U when upper; a matrix that is "
      "not positive definite gives all NaN.");
  def_op(
      m, "solve", [](const ST& a, const ST& b) { return linalg::solve(a, b); }, nb::arg("a"), nb::arg("b"),
      "numpy.linalg.solve (numpy 2 rules): x with a x = b; b of shape (M,) is one vector, else (..., M, K).");
  def_op(
      m, "triangular_solve",
      [](const ST& a, const ST& b, bool left_side, bool lower, bool transpose_a, bool unit_diagonal) {
        return linalg::triangular_solve(a, b, left_side, lower, transpose_a, unit_diagonal);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("left_side") = false, nb::arg("lower") = false,
      nb::arg("transpose_a") = false, nb::arg("unit_diagonal") = false,
      "jax.lax.linalg.triangular_solve: x with op(a) x = b (left_side) or x op(a) = b, op(a) = a^T when "
      "transpose_a; reads only the lower (else upper) triangle.");
  def_op(
      m, "inv", [](const ST& a) { return linalg::inv(a); }, nb::arg("a"), "numpy.linalg.inv: the matrix inverse.");
  def_op(
      m, "det", [](const ST& a) { return linalg::det(a); }, nb::arg("a"), "numpy.linalg.det: the determinant.");
  def_op(
      m, "slogdet",
      [](const ST& a) {
        auto r = linalg::slogdet(a);
        return std::make_tuple(r.sign, r.logabsdet);
      },
      nb::arg("a"), "numpy.linalg.slogdet: the tuple (sign, logabsdet) of the determinant.");
  def_op(
      m, "qr",
      [](const ST& a, const std::string& mode) -> nb::object {
        auto r = linalg::qr(a, mode);
        if (mode == "r") return nb::cast(r.R);
        return nb::make_tuple(r.Q, r.R);
      },
      nb::arg("a"), nb::arg("mode") = "reduced",
      "numpy.linalg.qr: the tuple (q, r) for mode 'reduced' or 'complete'; r alone for mode 'r'.");
  def_op(
      m, "eigh",
      [](const ST& a, const std::string& UPLO) {
        auto r = linalg::eigh(a, UPLO);
        return std::make_tuple(r.eigenvalues, r.eigenvectors);
      },
      nb::arg("a"), nb::arg("UPLO") = "L",
      "numpy.linalg.eigh: the tuple (eigenvalues ascending, eigenvectors as columns) of a symmetric matrix.");
  def_op(
      m, "eigvalsh", [](const ST& a, const std::string& UPLO) { return linalg::eigvalsh(a, UPLO); }, nb::arg("a"),
      nb::arg("UPLO") = "L", "numpy.linalg.eigvalsh: the eigenvalues (ascending) of a symmetric matrix.");
  def_op(
      m, "svd",
      [](const ST& a, bool full_matrices, bool compute_uv) -> nb::object {
        if (!compute_uv) return nb::cast(linalg::svdvals(a));
        auto r = linalg::svd(a, full_matrices);
        return nb::make_tuple(r.U, r.S, r.Vh);
      },
      nb::arg("a"), nb::arg("full_matrices") = true, nb::arg("compute_uv") = true,
      "numpy.linalg.svd: the tuple (u, s, vh) with a = u diag(s) vh, s descending; compute_uv=False gives s alone "
      "(= svdvals(a)).");
  def_op(
      m, "svdvals", [](const ST& a) { return linalg::svdvals(a); }, nb::arg("a"),
      "numpy.linalg.svdvals: the singular values, descending.");
  def_op(
      m, "matrix_rank",
      [](const ST& a, std::optional<double> tol, std::optional<double> rtol) {
        return linalg::matrix_rank(a, tol, rtol);
      },
      nb::arg("a"), nb::arg("tol") = nb::none(), nb::arg("rtol") = nb::none(),
      "numpy.linalg.matrix_rank: the number of singular values above tol (default rtol = max(M, N) * eps times the "
      "largest), int64.");
  def_op(
      m, "norm",
      [](const ST& x, nb::handle ord, nb::handle axis, bool keepdims) { return norm_any(x, ord, axis, keepdims); },
      nb::arg("x"), nb::arg("ord") = nb::none(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
      "numpy.linalg.norm: ord None, a number (vector p-norm, or matrix 1, 2, inf, -1, -2, -inf), 'fro' or 'nuc'; "
      "axis None, an int or two ints.");
  def_op(
      m, "matrix_norm",
      [](const ST& x, bool keepdims, nb::handle ord) { return norm_any(x, ord, nb::make_tuple(-2, -1), keepdims); },
      nb::arg("x"), nb::arg("keepdims") = false, nb::arg("ord") = "fro",
      "numpy.linalg.matrix_norm(x, keepdims, ord) = norm(x, ord, axis=(-2, -1), keepdims=keepdims).");
  def_op(
      m, "lu",
      [](const ST& a) {
        auto r = linalg::lu(a);
        return std::make_tuple(r.lu, r.pivots, r.permutation);
      },
      nb::arg("a"),
      "jax.lax.linalg.lu: the tuple (lu, pivots, permutation) of P a = L U; pivots and permutation are int32 and "
      "a[permutation] = L U.");
  def_op(
      m, "matrix_exp", [](const ST& a) { return linalg::matrix_exp(a); }, nb::arg("a"),
      "scipy.linalg.expm: the matrix exponential.");
  def_op(
      m, "expm", [](const ST& a) { return linalg::matrix_exp(a); }, nb::arg("a"),
      "expm(a) = matrix_exp(a) (scipy.linalg.expm).");
  def_op(
      m, "trace",
      [](const ST& a, int64_t offset, int64_t axis1, int64_t axis2) { return linalg::trace(a, offset, axis1, axis2); },
      nb::arg("a"), nb::arg("offset") = 0, nb::arg("axis1") = 0, nb::arg("axis2") = 1,
      "numpy.trace: the sum of the offset diagonal of the axis1/axis2 planes.");
  def_op(
      m, "matmul", [](const Operand& a, const Operand& b) { return matmul(a, b); }, nb::arg("a"), nb::arg("b"),
      "numpy.matmul: matrix product with broadcast batch dims; 1-D operands gain and lose a unit dim.");
  def_op(
      m, "outer", [](const ST& a, const ST& b) { return outer(a, b); }, nb::arg("a"), nb::arg("b"),
      "numpy.outer: a.ravel()[i] * b.ravel()[j].");
}

}  // namespace

void bind_ops_reduce_linalg(nb::module_& m) {
  // ---- reductions ----
#define EVOXC_REDUCTION(name, doc)                                                                        \
  def_op(                                                                                                 \
      m, #name, [](const ST& x, Axes axes, bool keepdims) { return name(x, std::move(axes), keepdims); }, \
      nb::arg("x"), nb::arg("axes") = nb::none(), nb::arg("keepdims") = false, doc);
  EVOXC_REDUCTION(sum, "numpy.sum over axes (None: all); bool and ints accumulate in int64 (uint64 if unsigned).")
  EVOXC_REDUCTION(prod, "numpy.prod over axes (None: all); bool and ints accumulate in int64 (uint64 if unsigned).")
  EVOXC_REDUCTION(max, "numpy.max over axes (None: all); an empty set gives the identity (-inf or the lowest int).")
  EVOXC_REDUCTION(min, "numpy.min over axes (None: all); an empty set gives the identity (+inf or the highest int).")
  EVOXC_REDUCTION(mean, "numpy.mean over axes (None: all); ints and bool convert to float32 first.")
  EVOXC_REDUCTION(any, "numpy.any over axes (None: all).")
  EVOXC_REDUCTION(all, "numpy.all over axes (None: all).")
#undef EVOXC_REDUCTION
  def_op(
      m, "amax", [](const ST& x, Axes axes, bool keepdims) { return max(x, std::move(axes), keepdims); }, nb::arg("x"),
      nb::arg("axes") = nb::none(), nb::arg("keepdims") = false, "amax(x, axes, keepdims) = max(x, axes, keepdims).");
  def_op(
      m, "amin", [](const ST& x, Axes axes, bool keepdims) { return min(x, std::move(axes), keepdims); }, nb::arg("x"),
      nb::arg("axes") = nb::none(), nb::arg("keepdims") = false, "amin(x, axes, keepdims) = min(x, axes, keepdims).");
  def_op(
      m, "argmax", [](const ST& x, std::optional<int64_t> axis, bool keepdims) { return argmax(x, axis, keepdims); },
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
      "numpy.argmax: the first index of the maximum along axis (None: flattened), NaN counting as the maximum; int64.");
  def_op(
      m, "argmin", [](const ST& x, std::optional<int64_t> axis, bool keepdims) { return argmin(x, axis, keepdims); },
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
      "numpy.argmin: the first index of the minimum along axis (None: flattened), NaN counting as the minimum; int64.");
  def_op(
      m, "logsumexp", [](const ST& x, Axes axes, bool keepdims) { return logsumexp(x, std::move(axes), keepdims); },
      nb::arg("x"), nb::arg("axes") = nb::none(), nb::arg("keepdims") = false,
      "scipy.special.logsumexp: log(sum(exp(x))) over axes, computed stably; ints and bool convert to float32.");

  // ---- normalisation and statistics ----
  def_op(
      m, "softmax", [](const ST& x, Axes axes) { return softmax(x, std::move(axes)); }, nb::arg("x"),
      nb::arg("axes") = -1, "scipy.special.softmax: exp(x - max) / sum(exp(x - max)) over axes (default the last).");
  def_op(
      m, "log_softmax", [](const ST& x, Axes axes) { return log_softmax(x, std::move(axes)); }, nb::arg("x"),
      nb::arg("axes") = -1,
      "scipy.special.log_softmax: (x - max) - log(sum(exp(x - max))) over axes (default the last).");
  def_op(
      m, "var",
      [](const ST& x, Axes axes, int64_t ddof, bool keepdims) { return var(x, std::move(axes), ddof, keepdims); },
      nb::arg("x"), nb::arg("axes") = nb::none(), nb::arg("ddof") = 0, nb::arg("keepdims") = false,
      "numpy.var: mean(|x - mean(x)|^2) with divisor N - ddof; ints and bool convert to float32.");
  def_op(
      m, "std",
      [](const ST& x, Axes axes, int64_t ddof, bool keepdims) {
        return evoxc::std(x, std::move(axes), ddof, keepdims);
      },
      nb::arg("x"), nb::arg("axes") = nb::none(), nb::arg("ddof") = 0, nb::arg("keepdims") = false,
      "numpy.std: sqrt(var(x, axes, ddof, keepdims)).");
  def_op(
      m, "average",
      [](const ST& x, Axes axes, nb::handle weights, bool keepdims) {
        return average(x, std::move(axes), optional_symbolic(weights, "average: weights"), keepdims);
      },
      nb::arg("x"), nb::arg("axes") = nb::none(), nb::arg("weights") = nb::none(), nb::arg("keepdims") = false,
      "numpy.average: mean(x, axes) without weights, else sum(x * weights) / sum(weights) over axes.");

  // ---- products ----
  def_op(
      m, "dot", [](const Operand& a, const Operand& b) { return dot(a, b); }, nb::arg("a"), nb::arg("b"),
      "numpy.dot: matmul for ranks <= 2; for N-D a sum over a's last axis and b's second-to-last.");
  def_op(
      m, "dot_general",
      [](const ST& lhs, const ST& rhs, std::vector<int64_t> lhs_contracting, std::vector<int64_t> rhs_contracting,
         std::vector<int64_t> lhs_batch, std::vector<int64_t> rhs_batch) {
        return dot_general(lhs, rhs, std::move(lhs_contracting), std::move(rhs_contracting), std::move(lhs_batch),
                           std::move(rhs_batch));
      },
      nb::arg("lhs"), nb::arg("rhs"), nb::arg("lhs_contracting"), nb::arg("rhs_contracting"),
      nb::arg("lhs_batch") = std::vector<int64_t>{}, nb::arg("rhs_batch") = std::vector<int64_t>{},
      "XLA DotGeneral: contracts the paired contracting axes; result = batch dims, lhs free dims, rhs free dims.");
  def_op(
      m, "einsum",
      [](std::string_view subscripts, nb::args operands) {
        std::vector<ST> ops;
        ops.reserve(operands.size());
        for (nb::handle h : operands) ops.push_back(to_symbolic(h, "einsum: each operand"));
        return einsum(subscripts, ops);
      },
      nb::arg("subscripts"), nb::arg("operands"),
      "numpy.einsum(subscripts, *operands): letters per axis, '...' for leading axes, optional '->output'; "
      "contracts left to right.");
  def_op(
      m, "inner", [](const ST& a, const ST& b) { return inner(a, b); }, nb::arg("a"), nb::arg("b"),
      "numpy.inner: a sum over the last axis of both; shape a.shape[:-1] + b.shape[:-1].");

  // ---- linear algebra: at the top level and as evoxc.linalg ----
  bind_linalg_functions(m);
  nb::module_ la = m.def_submodule("linalg",
                                   "numpy.linalg names (plus lu, triangular_solve, matrix_exp) for traced "
                                   "values.");
  bind_linalg_functions(la);
}

}  // namespace evoxc::py
