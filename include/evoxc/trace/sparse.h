// Sparse tensors inside a traced function (namespace evoxc::sparse). A sparse value is its format, its dense shape
// and its component tensors (include/evoxc/ops/sparse.h: COO indices and values; CSR/CSC indptr, indices and
// values), so it enters and leaves a graph as those tensors. Every operation here is written with dense ops —
// gather, scatter-add, sort, searchsorted — so vmap, jvp, grad (with respect to the stored values), control flow
// and every compiled backend take sparse programs as they take dense ones; the two primitives are sparse_validate
// (the structure checked at run time, a ValidationError naming the entry) and sparse_csr_matmul (A @ B with a CSR
// kernel). The number of stored entries (nse) of every result is static: ops whose exact count depends on the data
// (union, intersection, from_dense) keep explicit zeros instead, as scipy's non-canonical formats may.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "evoxc/ops/sparse.h"
#include "evoxc/trace/ops.h"

namespace evoxc::sparse {

struct SparseTensor {
  SparseFormat format = SparseFormat::Coo;
  Shape shape;             // the dense shape (2-D for CSR and CSC)
  SymbolicTensor indptr;   // CSR/CSC: (rows + 1,) / (cols + 1,) int64; undefined for COO
  SymbolicTensor indices;  // COO: (nse, ndim) int64; CSR: column ids (nse,); CSC: row ids (nse,)
  SymbolicTensor values;   // (nse,)
  DType dtype() const { return values.dtype(); }
  const DimExpr& nse() const { return values.shape()[0]; }
};

// Sparse values from their components, checked at run time (sparse_validate); the index components are converted
// to int64. ShapeError when the components' types do not fit the shape.
SparseTensor coo(const SymbolicTensor& indices, const SymbolicTensor& values, const Shape& shape);
SparseTensor csr(const SymbolicTensor& indptr, const SymbolicTensor& indices, const SymbolicTensor& values,
                 const Shape& shape);
SparseTensor csc(const SymbolicTensor& indptr, const SymbolicTensor& indices, const SymbolicTensor& values,
                 const Shape& shape);

// The dense tensor (repeated entries add up).
SymbolicTensor to_dense(const SparseTensor& a);
// The COO value of x's nonzeros in row-major order, `nse` entries (default: all of x's elements, so nothing can be
// lost): with fewer nonzeros the rest are explicit zeros at x's zero positions; with more than nse, the first nse
// only (as jax.experimental.sparse's nse: choose it from the data, or leave the default).
SparseTensor from_dense(const SymbolicTensor& x, std::optional<int64_t> nse = std::nullopt);

// Conversions (CSR/CSC sort their entries, stably; repeated indices stay, adjacent).
SparseTensor to_coo(const SparseTensor& a);
SparseTensor to_csr(const SparseTensor& a);
SparseTensor to_csc(const SparseTensor& a);

// a + b (the union of the entries: a's then b's, so nse adds up); both of a's dense shape and dtype. In a's format.
SparseTensor add(const SparseTensor& a, const SparseTensor& b);
// a * b elementwise (the intersection: a's structure, each value times b's at its index, zero where b has none).
SparseTensor multiply(const SparseTensor& a, const SparseTensor& b);
// a * d for a dense d of a's shape: a's structure.
SparseTensor multiply_dense(const SparseTensor& a, const SymbolicTensor& d);
// The sum over `axes` (a COO value of the remaining axes; at least one must remain), and over everything (dense).
SparseTensor reduce_sum(const SparseTensor& a, const std::vector<int64_t>& axes);
SymbolicTensor sum(const SparseTensor& a);
// Axes permuted (default: reversed). CSR <-> CSC is free: the same arrays.
SparseTensor transpose(const SparseTensor& a, std::optional<std::vector<int64_t>> perm = std::nullopt);
// The same entries in another static shape of the same size (row-major, as numpy.reshape). COO.
SparseTensor reshape(const SparseTensor& a, const Shape& shape);
// Along `axis` (extents static before it); COO.
SparseTensor concatenate(const std::vector<SparseTensor>& xs, int64_t axis = 0);
// A @ b and a @ B for 2-D sparse A, B and a dense (K,) or (K, N) / (M, K) operand: dense results. CSR and CSC
// run the sparse_csr_matmul kernel; COO scatter-adds.
SymbolicTensor matmul(const SparseTensor& a, const SymbolicTensor& b);
SymbolicTensor matmul(const SymbolicTensor& a, const SparseTensor& b);

// The row (CSC: column) of each of the `nse` stored entries of a compressed structure: the last r with
// indptr[r] <= k, int64 — -1 or the row count for entries outside indptr's range (scatter drops those, gather
// clamps them). The transform rules of sparse_csr_matmul use it too.
SymbolicTensor entry_rows(const SymbolicTensor& indptr, const DimExpr& nse);

}  // namespace evoxc::sparse
