// Bindings of evoxc::sparse (evoxc/trace/sparse.h): a sparse value crosses as (format, shape, indptr or None,
// indices, values) and python/evoxc/sparse.py wraps it in its classes.
#include "evoxc/trace/sparse.h"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bind.h"

namespace evoxc::py {
namespace {

using ST = SymbolicTensor;
using Parts = std::tuple<std::string, Shape, std::optional<ST>, ST, ST>;

sparse::SparseTensor from_parts(const Parts& p) {
  sparse::SparseTensor s;
  auto f = parse_sparse_format(std::get<0>(p));
  if (!f) throw ValidationError("evoxc.sparse: unknown format '" + std::get<0>(p) + "'");
  s.format = *f;
  s.shape = std::get<1>(p);
  if (std::get<2>(p)) s.indptr = *std::get<2>(p);
  s.indices = std::get<3>(p);
  s.values = std::get<4>(p);
  if (s.format != SparseFormat::Coo && !s.indptr.defined())
    throw ValidationError("evoxc.sparse: a " + std::get<0>(p) + " value needs its indptr");
  return s;
}

Parts to_parts(const sparse::SparseTensor& s) {
  std::optional<ST> indptr;
  if (s.format != SparseFormat::Coo) indptr = s.indptr;
  return {sparse_format_name(s.format), s.shape, indptr, s.indices, s.values};
}

}  // namespace

void bind_sparse(nb::module_& m) {
  def_op(
      m, "_sparse_coo",
      [](const ST& indices, const ST& values, const Shape& shape) {
        return to_parts(sparse::coo(indices, values, shape));
      },
      nb::arg("indices"), nb::arg("values"), nb::arg("shape"));
  def_op(
      m, "_sparse_compressed",
      [](const std::string& format, const ST& indptr, const ST& indices, const ST& values, const Shape& shape) {
        return to_parts(format == "csr" ? sparse::csr(indptr, indices, values, shape)
                                        : sparse::csc(indptr, indices, values, shape));
      },
      nb::arg("format"), nb::arg("indptr"), nb::arg("indices"), nb::arg("values"), nb::arg("shape"));
  def_op(
      m, "_sparse_to_dense", [](const Parts& a) { return sparse::to_dense(from_parts(a)); }, nb::arg("a"));
  def_op(
      m, "_sparse_from_dense",
      [](const ST& x, std::optional<int64_t> nse) { return to_parts(sparse::from_dense(x, nse)); }, nb::arg("x"),
      nb::arg("nse").none());
  def_op(
      m, "_sparse_convert",
      [](const Parts& a, const std::string& to) {
        sparse::SparseTensor s = from_parts(a);
        if (to == "csr") return to_parts(sparse::to_csr(s));
        if (to == "csc") return to_parts(sparse::to_csc(s));
        return to_parts(sparse::to_coo(s));
      },
      nb::arg("a"), nb::arg("to"));
  def_op(
      m, "_sparse_add",
      [](const Parts& a, const Parts& b) { return to_parts(sparse::add(from_parts(a), from_parts(b))); }, nb::arg("a"),
      nb::arg("b"));
  def_op(
      m, "_sparse_multiply",
      [](const Parts& a, const Parts& b) { return to_parts(sparse::multiply(from_parts(a), from_parts(b))); },
      nb::arg("a"), nb::arg("b"));
  def_op(
      m, "_sparse_multiply_dense",
      [](const Parts& a, const ST& d) { return to_parts(sparse::multiply_dense(from_parts(a), d)); }, nb::arg("a"),
      nb::arg("d"));
  def_op(
      m, "_sparse_reduce_sum",
      [](const Parts& a, const std::vector<int64_t>& axes) {
        return to_parts(sparse::reduce_sum(from_parts(a), axes));
      },
      nb::arg("a"), nb::arg("axes"));
  def_op(
      m, "_sparse_sum", [](const Parts& a) { return sparse::sum(from_parts(a)); }, nb::arg("a"));
  def_op(
      m, "_sparse_transpose",
      [](const Parts& a, std::optional<std::vector<int64_t>> perm) {
        return to_parts(sparse::transpose(from_parts(a), std::move(perm)));
      },
      nb::arg("a"), nb::arg("perm").none());
  def_op(
      m, "_sparse_reshape", [](const Parts& a, const Shape& s) { return to_parts(sparse::reshape(from_parts(a), s)); },
      nb::arg("a"), nb::arg("shape"));
  def_op(
      m, "_sparse_concatenate",
      [](const std::vector<Parts>& xs, int64_t axis) {
        std::vector<sparse::SparseTensor> v;
        for (const Parts& p : xs) v.push_back(from_parts(p));
        return to_parts(sparse::concatenate(v, axis));
      },
      nb::arg("xs"), nb::arg("axis"));
  def_op(
      m, "_sparse_matmul_sd", [](const Parts& a, const ST& b) { return sparse::matmul(from_parts(a), b); },
      nb::arg("a"), nb::arg("b"));
  def_op(
      m, "_sparse_matmul_ds", [](const ST& a, const Parts& b) { return sparse::matmul(a, from_parts(b)); },
      nb::arg("a"), nb::arg("b"));
}

}  // namespace evoxc::py
