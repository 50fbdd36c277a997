// BLAS matrix products for compiled mlir programs: MLIR's C interface passes each operand as a strided memref
// descriptor; row-major or transposed operands go to gemm as they are, any other strides are packed first.
#include "backends/mlir/blas_runtime.h"

#include <cblas.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace evoxc::mlir_backend::blas_runtime {
namespace {

// MLIR's descriptor of a rank-2 memref (StridedMemRefType<T, 2>).
template <typename T>
struct Memref2 {
  T* allocated;
  T* aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
  T at(int64_t i, int64_t j) const { return aligned[offset + i * strides[0] + j * strides[1]]; }
};

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k, const float* a, blasint lda,
          const float* b, blasint ldb, float* c, blasint ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k, const double* a, blasint lda,
          const double* b, blasint ldb, double* c, blasint ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
}

// An operand as gemm takes it: row-major (unit column stride), transposed (unit row stride), or
// packed row-major into `scratch`.
template <typename T>
struct Operand {
  const T* data;
  blasint ld;
  CBLAS_TRANSPOSE trans;
};
template <typename T>
Operand<T> operand(const Memref2<T>& x, std::vector<T>& scratch) {
  const int64_t rows = x.sizes[0], cols = x.sizes[1];
  const T* base = x.aligned + x.offset;
  if (x.strides[1] == 1 && x.strides[0] >= std::max<int64_t>(cols, 1))
    return {base, static_cast<blasint>(x.strides[0]), CblasNoTrans};
  if (x.strides[0] == 1 && x.strides[1] >= std::max<int64_t>(rows, 1))
    return {base, static_cast<blasint>(x.strides[1]), CblasTrans};
  scratch.resize(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) scratch[static_cast<size_t>(i * cols + j)] = x.at(i, j);
  return {scratch.data(), static_cast<blasint>(std::max<int64_t>(cols, 1)), CblasNoTrans};
}

// c = a @ b; c is a fresh row-major buffer.
template <typename T>
void matmul(const Memref2<T>* a, const Memref2<T>* b, Memref2<T>* c) {
  const int64_t m = a->sizes[0], k = a->sizes[1], n = b->sizes[1];
  T* out = c->aligned + c->offset;
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(out + i * c->strides[0], 0, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  constexpr int64_t kMax = std::numeric_limits<blasint>::max();
  if (m > kMax || n > kMax || k > kMax || a->strides[0] > kMax || a->strides[1] > kMax || b->strides[0] > kMax ||
      b->strides[1] > kMax || c->strides[0] > kMax) {
    // Beyond BLAS's integer range: plain loops, accumulating in double as the interpreter's own loops do.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) s += static_cast<double>(a->at(i, q)) * static_cast<double>(b->at(q, j));
        out[i * c->strides[0] + j] = static_cast<T>(s);
      }
    return;
  }
  thread_local std::vector<T> scratch_a, scratch_b;  // only for operands of unusual strides
  Operand<T> pa = operand(*a, scratch_a), pb = operand(*b, scratch_b);
  gemm(pa.trans, pb.trans, static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), pa.data, pa.ld,
       pb.data, pb.ld, out, static_cast<blasint>(c->strides[0]));
}

void gemm_f32(const Memref2<float>* a, const Memref2<float>* b, Memref2<float>* c) { matmul(a, b, c); }
void gemm_f64(const Memref2<double>* a, const Memref2<double>* b, Memref2<double>* c) { matmul(a, b, c); }

}  // namespace

const std::vector<mlir_codegen::RuntimeSymbol>& symbols() {
  static const std::vector<mlir_codegen::RuntimeSymbol> table = {
      {"_mlir_ciface_evoxc_gemm_f32", reinterpret_cast<void*>(gemm_f32)},
      {"_mlir_ciface_evoxc_gemm_f64", reinterpret_cast<void*>(gemm_f64)},
  };
  return table;
}

}  // namespace evoxc::mlir_backend::blas_runtime
