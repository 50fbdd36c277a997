// Sparse formats, shared by the sparse primitives' inference, kernels and rules (src/ops/sparse.cpp) and the sparse
// functions of the trace layer (evoxc/trace/sparse.h).
//
// COO: `indices` (nse, ndim) integer, `values` (nse,): entry k is values[k] at indices[k]; any order, repeated
// indices add up. CSR (2-D): `indptr` (rows + 1,), `indices` (nse,) column ids, `values` (nse,): row r holds entries
// indptr[r] .. indptr[r + 1] - 1, its column ids in non-decreasing order (repeats add up). CSC: CSR of the transpose
// (indptr over columns, row ids). Leading axes before these are batch axes (one structure per batch element).
#pragma once

#include <optional>
#include <string_view>

namespace evoxc {

enum class SparseFormat : uint8_t { Coo, Csr, Csc };

inline const char* sparse_format_name(SparseFormat f) {
  return f == SparseFormat::Coo ? "coo" : f == SparseFormat::Csr ? "csr" : "csc";
}
inline std::optional<SparseFormat> parse_sparse_format(std::string_view s) {
  if (s == "coo") return SparseFormat::Coo;
  if (s == "csr") return SparseFormat::Csr;
  if (s == "csc") return SparseFormat::Csc;
  return std::nullopt;
}

}  // namespace evoxc
