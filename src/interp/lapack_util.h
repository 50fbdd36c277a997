// Overloads of the LAPACKE/CBLAS routines the decomposition kernels call (column-major, float and double).
#pragma once

#include <cblas.h>
#include <lapacke.h>

#include <cstddef>
#include <limits>
#include <vector>

namespace evoxc::interp::lapack {

using lint = lapack_int;
inline constexpr int64_t kMaxDim = std::numeric_limits<lapack_int>::max();

// The *_work entry points with LAPACK_COL_MAJOR call LAPACK directly: no NaN scan of the input
// (LAPACKE's scan would return early and leave the outputs unwritten) and no hidden transposed copy.
inline lint getrf(lint m, lint n, float* a, lint lda, lint* ipiv) {
  return LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
}
inline lint getrf(lint m, lint n, double* a, lint lda, lint* ipiv) {
  return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
}
inline lint getrs(char tr, lint n, lint nrhs, const float* a, lint lda, const lint* ipiv, float* b, lint ldb) {
  return LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, tr, n, nrhs, a, lda, ipiv, b, ldb);
}
inline lint getrs(char tr, lint n, lint nrhs, const double* a, lint lda, const lint* ipiv, double* b, lint ldb) {
  return LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, tr, n, nrhs, a, lda, ipiv, b, ldb);
}
inline lint potrf(char uplo, lint n, float* a, lint lda) {
  return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
}
inline lint potrf(char uplo, lint n, double* a, lint lda) {
  return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
}
inline lint geqrf(lint m, lint n, float* a, lint lda, float* tau, float* w, lint lw) {
  return LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, w, lw);
}
inline lint geqrf(lint m, lint n, double* a, lint lda, double* tau, double* w, lint lw) {
  return LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, w, lw);
}
inline lint orgqr(lint m, lint n, lint k, float* a, lint lda, const float* tau, float* w, lint lw) {
  return LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, w, lw);
}
inline lint orgqr(lint m, lint n, lint k, double* a, lint lda, const double* tau, double* w, lint lw) {
  return LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, w, lw);
}
inline lint syevd(char uplo, lint n, float* a, lint lda, float* w, float* work, lint lw, lint* iw, lint liw) {
  return LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, 'V', uplo, n, a, lda, w, work, lw, iw, liw);
}
inline lint syevd(char uplo, lint n, double* a, lint lda, double* w, double* work, lint lw, lint* iw, lint liw) {
  return LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', uplo, n, a, lda, w, work, lw, iw, liw);
}
inline lint gesdd(char jobz, lint m, lint n, float* a, lint lda, float* s, float* u, lint ldu, float* vt, lint ldvt,
                  float* w, lint lw, lint* iw) {
  return LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, iw);
}
inline lint gesdd(char jobz, lint m, lint n, double* a, lint lda, double* s, double* u, lint ldu, double* vt, lint ldvt,
                  double* w, lint lw, lint* iw) {
  return LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, iw);
}
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE tr, CBLAS_DIAG diag, lint m, lint n, const float* a,
                 lint lda, float* b, lint ldb) {
  cblas_strsm(CblasColMajor, side, uplo, tr, diag, m, n, 1.0f, a, lda, b, ldb);
}
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE tr, CBLAS_DIAG diag, lint m, lint n, const double* a,
                 lint lda, double* b, lint ldb) {
  cblas_dtrsm(CblasColMajor, side, uplo, tr, diag, m, n, 1.0, a, lda, b, ldb);
}
// C = A B for column-major n x n matrices.
inline void gemm_sq(lint n, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
}

// Per-thread scratch grown on demand, so steady-state calls allocate nothing; `slot` keeps
// buffers that one kernel uses at the same time apart.
template <typename C>
C* scratch(int slot, size_t n) {
  thread_local std::vector<C> bufs[6];
  std::vector<C>& b = bufs[slot];
  if (b.size() < n) b.resize(n);
  return b.data();
}

}  // namespace evoxc::interp::lapack
