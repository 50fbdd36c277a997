// Sparse tensors inside a traced function (include/evoxc/trace/sparse.h): every operation written with dense ops
// over the components, plus the two sparse primitives (sparse_validate, sparse_csr_matmul).
#include "evoxc/trace/sparse.h"

#include <limits>
#include <string>

#include "evoxc/core/error.h"
#include "evoxc/trace/indexing.h"
#include "evoxc/trace/numpy.h"
#include "trace/emit.h"

namespace evoxc::sparse {
namespace {

using ST = SymbolicTensor;
constexpr DType I64 = DType::I64;

ST i64(const ST& x) { return x.dtype() == I64 ? x : astype(x, I64); }
ST scalar(int64_t v) { return fill(Shape{}, v, I64); }

// An extent as an int64 scalar (a symbolic one counted at run time).
ST extent(const DimExpr& d) {
  if (auto c = d.as_const()) return scalar(*c);
  return sum(fill(Shape{d}, int64_t{1}, I64));
}

// Column `d` of COO indices: (nse,).
ST column(const ST& indices, int64_t d) { return take(indices, scalar(d), int64_t{1}); }

// Row-major strides of `shape` as int64 scalars.
std::vector<ST> strides(const Shape& shape) {
  std::vector<ST> s(shape.rank());
  ST acc = scalar(1);
  for (size_t a = shape.rank(); a-- > 0;) {
    s[a] = acc;
    acc = acc * extent(shape[a]);
  }
  return s;
}

// Each entry's row-major position in the dense shape.
ST linear(const ST& indices, const Shape& shape) {
  std::vector<ST> st = strides(shape);
  ST lin = scalar(0);
  for (size_t a = 0; a < shape.rank(); ++a) lin = lin + column(indices, static_cast<int64_t>(a)) * st[a];
  return lin;
}

void check_rank2(const SparseTensor& a, const char* what) {
  if (a.shape.rank() != 2)
    throw ShapeError(std::string("sparse.") + what + ": a 2-D sparse value is needed, its shape is " +
                     a.shape.to_string());
}

std::vector<ST> validated(const char* format, const Shape& shape, const std::vector<ST>& parts) {
  for (const ST& p : parts)
    if (!p.defined()) throw TraceError("sparse: use of an undefined (default-constructed) SymbolicTensor");
  TraceContext& ctx = *parts.back().context();
  return ctx.emit(EVOXC_OP("sparse_validate"), parts, {{"format", std::string(format)}, {"shape", shape}},
                  SrcLoc::current());
}

SparseTensor with_values(SparseTensor a, const ST& values) {
  a.values = values;
  return a;
}

SparseTensor coo_of(const ST& indices, const ST& values, Shape shape) {
  SparseTensor s;
  s.format = SparseFormat::Coo;
  s.shape = std::move(shape);
  s.indices = indices;
  s.values = values;
  return s;
}

SparseTensor compressed_of(SparseFormat f, const ST& indptr, const ST& indices, const ST& values, Shape shape) {
  SparseTensor s = coo_of(indices, values, std::move(shape));
  s.format = f;
  s.indptr = indptr;
  return s;
}

SparseTensor compressed(SparseFormat f, const ST& indptr, const ST& indices, const ST& values, const Shape& shape) {
  if (shape.rank() != 2)
    throw ShapeError(std::string("sparse.") + sparse_format_name(f) + ": the shape must be 2-D, got " +
                     shape.to_string());
  std::vector<ST> v = validated(sparse_format_name(f), shape, {i64(indptr), i64(indices), values});
  return compressed_of(f, v[0], v[1], v[2], shape);
}

// A COO value sorted by (major, minor) axis: the CSR (major 0) or CSC (major 1) arrays.
SparseTensor compress(const SparseTensor& coo, SparseFormat f) {
  check_rank2(coo, f == SparseFormat::Csr ? "to_csr" : "to_csc");
  const int64_t major = f == SparseFormat::Csr ? 0 : 1;
  ST r = column(coo.indices, major), c = column(coo.indices, 1 - major);
  std::vector<ST> sorted = evoxc::sort({r, c, iota(Shape{coo.nse()}, 0, I64)}, 0, 2);
  ST indptr = searchsorted(sorted[0], iota(Shape{coo.shape[static_cast<size_t>(major)] + 1}, 0, I64), "left");
  return compressed_of(f, indptr, sorted[1], take(coo.values, sorted[2], int64_t{0}), coo.shape);
}

}  // namespace

SparseTensor coo(const ST& indices, const ST& values, const Shape& shape) {
  if (shape.rank() == 0) throw ShapeError("sparse.coo: a sparse value has at least one axis");
  std::vector<ST> v = validated("coo", shape, {i64(indices), values});
  return coo_of(v[0], v[1], shape);
}

SparseTensor csr(const ST& indptr, const ST& indices, const ST& values, const Shape& shape) {
  return compressed(SparseFormat::Csr, indptr, indices, values, shape);
}

SparseTensor csc(const ST& indptr, const ST& indices, const ST& values, const Shape& shape) {
  return compressed(SparseFormat::Csc, indptr, indices, values, shape);
}

SparseTensor to_coo(const SparseTensor& a) {
  if (a.format == SparseFormat::Coo) return a;
  ST major = entry_rows(a.indptr, a.nse());
  ST r = a.format == SparseFormat::Csr ? major : a.indices;
  ST c = a.format == SparseFormat::Csr ? a.indices : major;
  return coo_of(stack({r, c}, 1), a.values, a.shape);
}

SparseTensor to_csr(const SparseTensor& a) {
  return a.format == SparseFormat::Csr ? a : compress(to_coo(a), SparseFormat::Csr);
}

SparseTensor to_csc(const SparseTensor& a) {
  return a.format == SparseFormat::Csc ? a : compress(to_coo(a), SparseFormat::Csc);
}

namespace {

// A COO result converted back to the format of `like`.
SparseTensor as_format(const SparseTensor& coo, SparseFormat f) {
  if (f == SparseFormat::Csr) return to_csr(coo);
  if (f == SparseFormat::Csc) return to_csc(coo);
  return coo;
}

void check_same(const SparseTensor& a, const SparseTensor& b, const char* what) {
  if (!(a.shape == b.shape))
    throw ShapeError(std::string("sparse.") + what + ": shapes " + a.shape.to_string() + " and " + b.shape.to_string() +
                     " differ");
  if (a.dtype() != b.dtype())
    throw TypeError(std::string("sparse.") + what + ": dtypes " + std::string(dtype_name(a.dtype())) + " and " +
                    std::string(dtype_name(b.dtype())) + " differ");
}

}  // namespace

ST to_dense(const SparseTensor& a) {
  SparseTensor c = to_coo(a);
  std::vector<int64_t> axes;
  for (size_t d = 0; d < c.shape.rank(); ++d) axes.push_back(static_cast<int64_t>(d));
  return scatter(fill(c.shape, int64_t{0}, c.dtype()), c.indices, c.values, axes, "add");
}

SparseTensor from_dense(const ST& x, std::optional<int64_t> nse) {
  if (x.rank() == 0) throw ShapeError("sparse.from_dense: a sparse value has at least one axis");
  const DimExpr n = x.shape().num_elements();
  ST flat = reshape(x, Shape{n});
  // Nonzeros first, each group in row-major order (the sort is stable).
  ST zero = astype(equal(flat, fill(Shape{}, int64_t{0}, x.dtype())), DType::I8);
  ST order = argsort(zero, 0);
  if (nse) {
    if (*nse < 0) throw ShapeError("sparse.from_dense: nse is " + std::to_string(*nse) + ", it must be >= 0");
    order = slice(order, {0}, {*nse});
  }
  std::vector<ST> st = strides(x.shape());
  std::vector<ST> cols;
  for (size_t a = 0; a < x.rank(); ++a) cols.push_back(remainder(floor_divide(order, st[a]), extent(x.shape()[a])));
  return coo_of(stack(cols, 1), take(flat, order, int64_t{0}), x.shape());
}

SparseTensor add(const SparseTensor& a, const SparseTensor& b) {
  check_same(a, b, "add");
  SparseTensor ca = to_coo(a), cb = to_coo(b);
  return as_format(
      coo_of(evoxc::concatenate({ca.indices, cb.indices}, 0), evoxc::concatenate({ca.values, cb.values}, 0), a.shape),
      a.format);
}

SparseTensor multiply(const SparseTensor& a, const SparseTensor& b) {
  check_same(a, b, "multiply");
  SparseTensor ca = to_coo(a), cb = to_coo(b);
  // b's entries summed per position: its positions sorted, each run's sum at the run's rank, unused ranks keyed
  // past every position.
  std::vector<ST> kb = evoxc::sort({linear(cb.indices, b.shape), cb.values}, 0, 1);
  ST pos = iota(Shape{cb.nse()}, 0, I64);
  ST prev = take(kb[0], maximum(pos - int64_t{1}, scalar(0)), int64_t{0});
  ST starts = logical_or(equal(pos, scalar(0)), not_equal(kb[0], prev));
  ST run = cumsum(astype(starts, I64)) - int64_t{1};
  ST sums = scatter_add(fill(Shape{cb.nse()}, int64_t{0}, b.dtype()), run, kb[1], 0);
  ST keys = at(fill(Shape{cb.nse()}, std::numeric_limits<int64_t>::max(), I64), {run}).set(kb[0]);
  ST la = linear(ca.indices, a.shape);
  ST at_a = searchsorted(keys, la, "left");
  ST found = equal(take(keys, at_a, int64_t{0}), la);
  ST bv = where(found, take(sums, at_a, int64_t{0}), fill(Shape{}, int64_t{0}, b.dtype()));
  return with_values(a, a.values * bv);
}

SparseTensor multiply_dense(const SparseTensor& a, const ST& d) {
  if (!(d.shape() == a.shape))
    throw ShapeError("sparse.multiply_dense: the dense operand is " + d.type().to_string() + ", the sparse shape " +
                     a.shape.to_string());
  SparseTensor c = to_coo(a);
  std::vector<int64_t> axes;
  for (size_t x = 0; x < a.shape.rank(); ++x) axes.push_back(static_cast<int64_t>(x));
  return with_values(a, a.values * gather(d, c.indices, axes));
}

SparseTensor reduce_sum(const SparseTensor& a, const std::vector<int64_t>& axes) {
  SparseTensor c = to_coo(a);
  std::vector<bool> drop(a.shape.rank(), false);
  for (int64_t ax : axes) {
    int64_t r = static_cast<int64_t>(a.shape.rank());
    if (ax < -r || ax >= r) throw ShapeError("sparse.reduce_sum: axis " + std::to_string(ax) + " out of range");
    drop[static_cast<size_t>(ax < 0 ? ax + r : ax)] = true;
  }
  std::vector<ST> cols;
  std::vector<DimExpr> dims;
  for (size_t d = 0; d < a.shape.rank(); ++d)
    if (!drop[d]) {
      cols.push_back(column(c.indices, static_cast<int64_t>(d)));
      dims.push_back(a.shape[d]);
    }
  if (cols.empty()) throw ShapeError("sparse.reduce_sum: no axis would remain; sparse.sum gives the dense total");
  return coo_of(stack(cols, 1), c.values, Shape(std::move(dims)));
}

ST sum(const SparseTensor& a) { return evoxc::sum(a.values); }

SparseTensor transpose(const SparseTensor& a, std::optional<std::vector<int64_t>> perm) {
  const size_t r = a.shape.rank();
  std::vector<int64_t> p(r);
  for (size_t i = 0; i < r; ++i) p[i] = perm ? (*perm)[i] : static_cast<int64_t>(r - 1 - i);
  if (perm && perm->size() != r)
    throw ShapeError("sparse.transpose: perm has " + std::to_string(perm->size()) + " axes, the value " +
                     std::to_string(r));
  std::vector<DimExpr> dims;
  for (int64_t i : p) {
    if (i < 0 || i >= static_cast<int64_t>(r)) throw ShapeError("sparse.transpose: bad perm");
    dims.push_back(a.shape[static_cast<size_t>(i)]);
  }
  if (a.format != SparseFormat::Coo) {
    SparseTensor t = a;
    t.shape = Shape(std::move(dims));
    if (p[0] == 1) t.format = a.format == SparseFormat::Csr ? SparseFormat::Csc : SparseFormat::Csr;
    return t;
  }
  std::vector<ST> cols;
  for (int64_t i : p) cols.push_back(column(a.indices, i));
  return coo_of(stack(cols, 1), a.values, Shape(std::move(dims)));
}

SparseTensor reshape(const SparseTensor& a, const Shape& shape) {
  if (!a.shape.is_static() || !shape.is_static())
    throw ShapeError("sparse.reshape: needs static shapes, got " + a.shape.to_string() + " to " + shape.to_string());
  if (a.shape.num_elements() != shape.num_elements())
    throw ShapeError("sparse.reshape: cannot reshape " + a.shape.to_string() + " to " + shape.to_string());
  SparseTensor c = to_coo(a);
  ST lin = linear(c.indices, a.shape);
  std::vector<ST> st = strides(shape), cols;
  for (size_t d = 0; d < shape.rank(); ++d) cols.push_back(remainder(floor_divide(lin, st[d]), extent(shape[d])));
  return coo_of(stack(cols, 1), c.values, shape);
}

SparseTensor concatenate(const std::vector<SparseTensor>& xs, int64_t axis) {
  if (xs.empty()) throw ShapeError("sparse.concatenate: nothing to concatenate");
  const auto r = static_cast<int64_t>(xs[0].shape.rank());
  if (axis < -r || axis >= r) throw ShapeError("sparse.concatenate: axis " + std::to_string(axis) + " out of range");
  const auto ax = static_cast<size_t>(axis < 0 ? axis + r : axis);
  std::vector<ST> idx, vals;
  DimExpr offset(0);
  for (const SparseTensor& x : xs) {
    if (x.shape.rank() != xs[0].shape.rank() || x.dtype() != xs[0].dtype())
      throw ShapeError("sparse.concatenate: every value needs the first's rank and dtype");
    for (size_t d = 0; d < x.shape.rank(); ++d)
      if (d != ax && x.shape[d] != xs[0].shape[d])
        throw ShapeError("sparse.concatenate: extents differ on axis " + std::to_string(d) + ": " +
                         x.shape.to_string() + " and " + xs[0].shape.to_string());
    SparseTensor c = to_coo(x);
    std::vector<ST> cols;
    for (size_t d = 0; d < x.shape.rank(); ++d) {
      ST col = column(c.indices, static_cast<int64_t>(d));
      cols.push_back(d == ax ? col + extent(offset) : col);
    }
    idx.push_back(stack(cols, 1));
    vals.push_back(c.values);
    offset = offset + x.shape[ax];
  }
  std::vector<DimExpr> dims(xs[0].shape.begin(), xs[0].shape.end());
  dims[ax] = offset;
  return coo_of(evoxc::concatenate(idx, 0), evoxc::concatenate(vals, 0), Shape(std::move(dims)));
}

ST matmul(const SparseTensor& a, const ST& b) {
  check_rank2(a, "matmul");
  if (a.format == SparseFormat::Coo) {
    // Rows of the product scatter-added entry by entry.
    ST g = take(b, column(a.indices, 1), int64_t{0});
    ST contrib = b.rank() == 2 ? expand_dims(a.values, {1}) * g : a.values * g;
    std::vector<DimExpr> out{a.shape[0]};
    if (b.rank() == 2) out.push_back(b.shape()[1]);
    return scatter_add(fill(Shape(std::move(out)), int64_t{0}, b.dtype()), column(a.indices, 0), contrib, 0);
  }
  // A CSC matrix's arrays are the CSR arrays of its transpose: A @ b = (A^T)^T @ b.
  const bool csc = a.format == SparseFormat::Csc;
  Shape csr_shape = csc ? Shape{a.shape[1], a.shape[0]} : a.shape;
  TraceContext& ctx = *a.values.context();
  return ctx.emit(EVOXC_OP("sparse_csr_matmul"), std::vector<ST>{a.indptr, a.indices, a.values, b},
                  {{"shape", csr_shape}, {"transpose", csc}}, SrcLoc::current())[0];
}

ST entry_rows(const ST& indptr, const DimExpr& nse) {
  return searchsorted(i64(indptr), iota(Shape{nse}, 0, I64), "right") - int64_t{1};
}

ST matmul(const ST& a, const SparseTensor& b) {
  check_rank2(b, "matmul");
  // a @ B = (B^T @ a^T)^T.
  SparseTensor bt = transpose(b);
  if (a.rank() == 1) return matmul(bt, a);
  return transpose(matmul(bt, transpose(a, std::vector<int64_t>{1, 0})), std::vector<int64_t>{1, 0});
}

}  // namespace evoxc::sparse
