// Interpreter kernels of the decomposition family (see src/ops/decomposition.cpp): dot_general, LAPACK-backed
// factorizations and solves, norms, matrix_exp and trace, batched over leading dims.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>

#include "evoxc/ops/op_def.h"
#include "evoxc/ops/special_constants.h"
#include "kernel_table.h"
#include "lapack_util.h"
#include "program.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

using lapack::lint;
using lapack::scratch;

constexpr int kMaxRank = 16;

// What one run sees: operand and result pointers with their extents.
struct Io {
  const void* in[2] = {nullptr, nullptr};
  const int64_t* idims[2] = {nullptr, nullptr};
  int irank[2] = {0, 0};
  void* out[3] = {nullptr, nullptr, nullptr};
  const int64_t* odims[3] = {nullptr, nullptr, nullptr};
  int orank[3] = {0, 0, 0};
  int64_t out_numel[3] = {0, 0, 0};
  DType odt[3] = {DType::F32, DType::F32, DType::F32};
};

// Attributes decoded once at prepare.
struct Params {
  bool b[4] = {false, false, false, false};  // op-specific flags (see each setup_* below)
  int64_t i[3] = {0, 0, 0};
  double f = 0;
  int mode = 0;
  // dot_general: operand axes in packed order (lhs: batch, free, contracting; rhs: batch, contracting, free).
  int lperm[kMaxRank] = {}, rperm[kMaxRank] = {};
  int nb = 0, nc = 0;
};

using Fn = void (*)(const Io&, const Params&);

template <typename T>
using Comp = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
Comp<T> ld(T x) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return static_cast<float>(x);
  } else {
    return static_cast<Comp<T>>(x);
  }
}
template <typename T, typename C>
T st(C x) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return T(static_cast<float>(x));
  } else {
    return static_cast<T>(x);
  }
}

template <typename C>
constexpr C qnan() {
  return std::numeric_limits<C>::quiet_NaN();
}

// Products of extents saturate: a zero-size tensor may have other extents whose product overflows int64.
int64_t mul_sat(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}
int64_t prod(const int64_t* d, int n) {
  for (int i = 0; i < n; ++i)
    if (d[i] == 0) return 0;
  int64_t p = 1;
  for (int i = 0; i < n; ++i) p = mul_sat(p, d[i]);
  return p;
}

// A failure inside a kernel (only scratch allocation can fail) poisons the batch elements it was
// computing: NaN in float results, 0 in integer ones. run() must not throw.
void poison(const Io& io, int64_t batch, int64_t q0, int64_t q1) {
  for (int k = 0; k < 3; ++k) {
    if (!io.out[k] || batch == 0) continue;
    const int64_t per = io.out_numel[k] / batch;
    visit_dtype(io.odt[k], [&](auto tag) {
      using T = decltype(tag);
      T* d = static_cast<T*>(io.out[k]) + q0 * per;
      for (int64_t i = 0; i < (q1 - q0) * per; ++i) {
        if constexpr (std::is_integral_v<T>) {
          d[i] = T(0);
        } else {
          d[i] = st<T>(qnan<Comp<T>>());
        }
      }
    });
  }
}

// Runs body(q0, q1) over chunks of the batch: many small matrices spread over the pool (each element
// is independent, so results do not depend on the thread count); one large matrix runs on the calling
// thread and leaves the parallelism to OpenBLAS. `work` is a rough flop count per matrix.
constexpr int64_t kBatchGrain = int64_t{1} << 15;
constexpr int64_t kSerialWork = int64_t{1} << 21;
template <typename F>
void for_batch(const Io& io, int64_t batch, int64_t work, F&& body) {
  auto guarded = [&](int64_t q0, int64_t q1) {
    try {
      body(q0, q1);
    } catch (...) {
      poison(io, batch, q0, q1);
    }
  };
  work = std::max<int64_t>(work, 1);
  const int64_t per = std::max<int64_t>(1, kBatchGrain / work);
  const int64_t tasks = (batch + per - 1) / per;
  if (batch <= 1 || work >= kSerialWork || tasks <= 1) {
    guarded(0, batch);
    return;
  }
  parallel_for(tasks, [&](int64_t t) { guarded(t * per, std::min(batch, (t + 1) * per)); });
}

// Row-major (m, n) from `src` into a column-major buffer with leading dim ldd.
template <typename T, typename C>
void load_cm(const T* src, int64_t m, int64_t n, C* dst, int64_t ldd) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) dst[i + j * ldd] = ld(src[i * n + j]);
}
template <typename T, typename C>
void store_rm(const C* src, int64_t lds, int64_t m, int64_t n, T* dst) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) dst[i * n + j] = st<T>(src[i + j * lds]);
}
template <typename T>
void fill_nan(T* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = st<T>(qnan<Comp<T>>());
}
template <typename T>
bool all_finite(const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(ld(src[i]))) return false;
  return true;
}
template <typename T>
void eye(T* dst, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) dst[i * n + j] = st<T>(Comp<T>(i == j ? 1 : 0));
}
lint li(int64_t v) { return static_cast<lint>(std::max<int64_t>(v, 1)); }

// Matrix extents of operand k: (rows, cols) and the batch count.
struct Mat {
  int64_t batch, m, n;
};
Mat mat(const Io& io, int k) {
  int r = io.irank[k];
  return {prod(io.idims[k], r - 2), io.idims[k][r - 2], io.idims[k][r - 1]};
}
// LAPACK takes 32-bit extents; a larger matrix gets NaN results (it cannot fit in memory anyway).
bool too_big(int64_t m, int64_t n) { return m > lapack::kMaxDim || n > lapack::kMaxDim; }
template <typename T>
void nan_all_outputs(const Io& io, int nout) {
  for (int k = 0; k < nout; ++k) fill_nan(static_cast<T*>(io.out[k]), io.out_numel[k]);
}

// ---- cholesky ----
template <typename T>
void cholesky_fn(const Io& io, const Params& p) {
  using C = Comp<T>;
  Mat a = mat(io, 0);
  if (a.batch == 0) return;  // every result is empty
  const int64_t n = a.n;
  if (too_big(n, n)) return nan_all_outputs<T>(io, 1);
  const T* src = static_cast<const T*>(io.in[0]);
  T* dst = static_cast<T*>(io.out[0]);
  const bool lower = p.b[0];
  for_batch(io, a.batch, mul_sat(mul_sat(a.m, a.n), std::max(a.m, a.n)), [&](int64_t q0, int64_t q1) {
    C* w = scratch<C>(0, static_cast<size_t>(n * n));
    for (int64_t q = q0; q < q1; ++q) {
      const T* s = src + q * n * n;
      T* d = dst + q * n * n;
      load_cm(s, n, n, w, n);
      lint info = n ? lapack::potrf(lower ? 'L' : 'U', li(n), w, li(n)) : 0;
      // A NaN or inf in the triangle read poisons the whole factor, as a failed factorization does.
      for (int64_t j = 0; j < n && info == 0; ++j)
        for (int64_t i = lower ? j : 0; i < (lower ? n : j + 1); ++i)
          if (!std::isfinite(w[i + j * n])) info = 1;
      if (info != 0) {
        fill_nan(d, n * n);
        continue;
      }
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          bool keep = lower ? j <= i : j >= i;
          d[i * n + j] = st<T>(keep ? w[i + j * n] : C(0));
        }
    }
  });
}

// ---- triangular_solve: b[0] left_side, b[1] lower, b[2] transpose_a, b[3] unit_diagonal ----
template <typename T>
void triangular_solve_fn(const Io& io, const Params& p) {
  using C = Comp<T>;
  Mat a = mat(io, 0), b = mat(io, 1);
  if (a.batch == 0) return;  // every result is empty
  if (too_big(b.m, b.n)) return nan_all_outputs<T>(io, 1);
  const T* as = static_cast<const T*>(io.in[0]);
  const T* bs = static_cast<const T*>(io.in[1]);
  T* out = static_cast<T*>(io.out[0]);
  const int64_t n = a.n;
  for_batch(io, a.batch, mul_sat(mul_sat(a.m, a.n), std::max(a.m, a.n)), [&](int64_t q0, int64_t q1) {
    C* wa = scratch<C>(0, static_cast<size_t>(n * n));
    C* wb = scratch<C>(1, static_cast<size_t>(b.m * b.n));
    for (int64_t q = q0; q < q1; ++q) {
      load_cm(as + q * n * n, n, n, wa, li(n));
      load_cm(bs + q * b.m * b.n, b.m, b.n, wb, li(b.m));
      if (b.m > 0 && b.n > 0)
        lapack::trsm(p.b[0] ? CblasLeft : CblasRight, p.b[1] ? CblasLower : CblasUpper,
                     p.b[2] ? CblasTrans : CblasNoTrans, p.b[3] ? CblasUnit : CblasNonUnit, li(b.m), li(b.n), wa, li(n),
                     wb, li(b.m));
      store_rm(wb, li(b.m), b.m, b.n, out + q * b.m * b.n);
    }
  });
}

// ---- solve and inv: LU, then forward/back substitution even when a pivot is zero ----
template <typename T>
void solve_fn(const Io& io, const Params& p) {
  using C = Comp<T>;
  const bool inverse = p.mode == 1;
  Mat a = mat(io, 0);
  if (a.batch == 0) return;  // every result is empty
  const int64_t n = a.n, k = inverse ? n : mat(io, 1).n;
  if (too_big(n, k)) return nan_all_outputs<T>(io, 1);
  const T* as = static_cast<const T*>(io.in[0]);
  const T* bs = inverse ? nullptr : static_cast<const T*>(io.in[1]);
  T* out = static_cast<T*>(io.out[0]);
  for_batch(io, a.batch, mul_sat(mul_sat(a.m, a.n), std::max(a.m, a.n)), [&](int64_t q0, int64_t q1) {
    C* wa = scratch<C>(0, static_cast<size_t>(n * n));
    C* wb = scratch<C>(1, static_cast<size_t>(n * k));
    lint* piv = scratch<lint>(0, static_cast<size_t>(n));
    for (int64_t q = q0; q < q1; ++q) {
      load_cm(as + q * n * n, n, n, wa, li(n));
      if (inverse) {
        for (int64_t i = 0; i < n * n; ++i) wb[i] = C(0);
        for (int64_t i = 0; i < n; ++i) wb[i + i * n] = C(1);
      } else {
        load_cm(bs + q * n * k, n, k, wb, li(n));
      }
      if (n > 0 && k > 0) {
        lapack::getrf(li(n), li(n), wa, li(n), piv);
        lapack::getrs('N', li(n), li(k), wa, li(n), piv, wb, li(n));
      }
      store_rm(wb, li(n), n, k, out + q * n * k);
    }
  });
}

// ---- lu: results lu, pivots (0-based), permutation ----
template <typename T>
void lu_fn(const Io& io, const Params&) {
  using C = Comp<T>;
  Mat a = mat(io, 0);
  if (a.batch == 0) return;  // every result is empty
  const int64_t m = a.m, n = a.n, k = std::min(m, n);
  if (too_big(m, n)) {
    fill_nan(static_cast<T*>(io.out[0]), io.out_numel[0]);
    std::memset(io.out[1], 0, static_cast<size_t>(io.out_numel[1]) * sizeof(int32_t));
    std::memset(io.out[2], 0, static_cast<size_t>(io.out_numel[2]) * sizeof(int32_t));
    return;
  }
  const T* as = static_cast<const T*>(io.in[0]);
  T* lu = static_cast<T*>(io.out[0]);
  int32_t* pv = static_cast<int32_t*>(io.out[1]);
  int32_t* perm = static_cast<int32_t*>(io.out[2]);
  for_batch(io, a.batch, mul_sat(mul_sat(a.m, a.n), std::max(a.m, a.n)), [&](int64_t q0, int64_t q1) {
    C* w = scratch<C>(0, static_cast<size_t>(m * n));
    lint* piv = scratch<lint>(0, static_cast<size_t>(k));
    for (int64_t q = q0; q < q1; ++q) {
      load_cm(as + q * m * n, m, n, w, li(m));
      if (k > 0) lapack::getrf(li(m), li(n), w, li(m), piv);
      store_rm(w, li(m), m, n, lu + q * m * n);
      int32_t* pq = perm + q * m;
      for (int64_t i = 0; i < m; ++i) pq[i] = static_cast<int32_t>(i);
      for (int64_t i = 0; i < k; ++i) {
        // LAPACK's pivots are 1-based and in [i + 1, m]; clamp so a misbehaving library cannot index out of range.
        int64_t t = std::clamp<int64_t>(static_cast<int64_t>(piv[i]) - 1, i, m - 1);
        pv[q * k + i] = static_cast<int32_t>(t);
        std::swap(pq[i], pq[t]);
      }
    }
  });
}

// ---- qr: b[0] full_matrices ----
template <typename T>
void qr_fn(const Io& io, const Params& p) {
  using C = Comp<T>;
  Mat a = mat(io, 0);
  if (a.batch == 0) return;  // every result is empty
  const int64_t m = a.m, n = a.n, k = std::min(m, n), qc = p.b[0] ? m : k, rr = qc;
  if (too_big(m, std::max(n, qc))) return nan_all_outputs<T>(io, 2);
  const T* as = static_cast<const T*>(io.in[0]);
  T* qo = static_cast<T*>(io.out[0]);
  T* ro = static_cast<T*>(io.out[1]);
  const int64_t lw = 64 * std::max<int64_t>({1, n, qc});
  for_batch(io, a.batch, mul_sat(mul_sat(a.m, a.n), std::max(a.m, a.n)), [&](int64_t q0, int64_t q1) {
    C* w = scratch<C>(0, static_cast<size_t>(m * n));
    C* qb = scratch<C>(1, static_cast<size_t>(m * qc));
    C* tau = scratch<C>(2, static_cast<size_t>(std::max<int64_t>(k, 1)));
    C* work = scratch<C>(3, static_cast<size_t>(lw));
    for (int64_t q = q0; q < q1; ++q) {
      load_cm(as + q * m * n, m, n, w, li(m));
      if (k > 0) lapack::geqrf(li(m), li(n), w, li(m), tau, work, li(lw));
      T* r = ro + q * rr * n;
      for (int64_t i = 0; i < rr; ++i)
        for (int64_t j = 0; j < n; ++j) r[i * n + j] = st<T>(j >= i ? w[i + j * m] : C(0));
      if (m == 0 || qc == 0) continue;
      for (int64_t j = 0; j < qc; ++j)
        for (int64_t i = 0; i < m; ++i) qb[i + j * m] = j < k ? w[i + j * m] : C(0);
      lapack::orgqr(li(m), li(qc), static_cast<lint>(k), qb, li(m), tau, work, li(lw));
      store_rm(qb, m, m, qc, qo + q * m * qc);
    }
  });
}

// ---- eigh: b[0] lower ----
template <typename T>
void eigh_fn(const Io& io, const Params& p) {
  using C = Comp<T>;
  Mat a = mat(io, 0);
  if (a.batch == 0) return;  // every result is empty
  const int64_t n = a.n;
  if (too_big(n, 2 * n * n + 6 * n + 1)) return nan_all_outputs<T>(io, 2);
  const T* as = static_cast<const T*>(io.in[0]);
  T* wo = static_cast<T*>(io.out[0]);
  T* vo = static_cast<T*>(io.out[1]);
  const int64_t lw = 1 + 6 * n + 2 * n * n, liw = 3 + 5 * n;
  for_batch(io, a.batch, mul_sat(mul_sat(a.m, a.n), std::max(a.m, a.n)), [&](int64_t q0, int64_t q1) {
    C* w = scratch<C>(0, static_cast<size_t>(n * n));
    C* ev = scratch<C>(1, static_cast<size_t>(n));
    C* work = scratch<C>(2, static_cast<size_t>(lw));
    lint* iw = scratch<lint>(0, static_cast<size_t>(liw));
    for (int64_t q = q0; q < q1; ++q) {
      const T* s = as + q * n * n;
      lint info = 0;
      if (all_finite(s, n * n)) {
        load_cm(s, n, n, w, li(n));
        if (n > 0) info = lapack::syevd(p.b[0] ? 'L' : 'U', li(n), w, li(n), ev, work, li(lw), iw, li(liw));
      } else {
        info = 1;
      }
      if (info != 0) {
        fill_nan(wo + q * n, n);
        fill_nan(vo + q * n * n, n * n);
        continue;
      }
      for (int64_t i = 0; i < n; ++i) wo[q * n + i] = st<T>(ev[i]);
      store_rm(w, li(n), n, n, vo + q * n * n);
    }
  });
}

// Singular values (descending) of one row-major (m, n) matrix into s; jobz 'N', 'S' or 'A' with u/vt
// column-major. Returns false (outputs unset) for non-finite input or no convergence.
template <typename T, typename C>
bool svd_one(const T* src, int64_t m, int64_t n, char jobz, C* s, C* u, int64_t ldu, C* vt, int64_t ldvt) {
  const int64_t k = std::min(m, n);
  if (!all_finite(src, m * n)) return false;
  if (k == 0) return true;
  C* w = scratch<C>(0, static_cast<size_t>(m * n));
  load_cm(src, m, n, w, li(m));
  lint* iw = scratch<lint>(0, static_cast<size_t>(8 * k));
  C query = 0;
  C dummy = 0;
  C* uu = u ? u : &dummy;
  C* vv = vt ? vt : &dummy;
  lint info = lapack::gesdd(jobz, li(m), li(n), w, li(m), s, uu, li(ldu), vv, li(ldvt), &query, -1, iw);
  if (info != 0 || !(query >= 1) || query > C(lapack::kMaxDim)) return false;
  const int64_t lw = static_cast<int64_t>(query) + 1;
  C* work = scratch<C>(1, static_cast<size_t>(lw));
  info = lapack::gesdd(jobz, li(m), li(n), w, li(m), s, uu, li(ldu), vv, li(ldvt), work, li(lw), iw);
  return info == 0;
}

// ---- svd: b[0] full_matrices, b[1] compute_uv ----
template <typename T>
void svd_fn(const Io& io, const Params& p) {
  using C = Comp<T>;
  Mat a = mat(io, 0);
  if (a.batch == 0) return;  // every result is empty
  const int64_t m = a.m, n = a.n, k = std::min(m, n);
  const bool full = p.b[0], uv = p.b[1];
  const int nout = uv ? 3 : 1;
  if (too_big(m, n) || too_big(m * std::max(m, n), 1)) return nan_all_outputs<T>(io, nout);
  const int64_t uc = full ? m : k, vr = full ? n : k;
  const T* as = static_cast<const T*>(io.in[0]);
  T* uo = uv ? static_cast<T*>(io.out[0]) : nullptr;
  T* so = static_cast<T*>(io.out[uv ? 1 : 0]);
  T* vo = uv ? static_cast<T*>(io.out[2]) : nullptr;
  for_batch(io, a.batch, mul_sat(mul_sat(a.m, a.n), std::max(a.m, a.n)), [&](int64_t q0, int64_t q1) {
    C* s = scratch<C>(2, static_cast<size_t>(k));
    C* u = uv ? scratch<C>(3, static_cast<size_t>(m * uc)) : nullptr;
    C* vt = uv ? scratch<C>(4, static_cast<size_t>(vr * n)) : nullptr;
    for (int64_t q = q0; q < q1; ++q) {
      bool ok = svd_one<T, C>(as + q * m * n, m, n, uv ? (full ? 'A' : 'S') : 'N', s, u, m, vt, vr);
      if (!ok) {
        fill_nan(so + q * k, k);
        if (uv) {
          fill_nan(uo + q * m * uc, m * uc);
          fill_nan(vo + q * vr * n, vr * n);
        }
        continue;
      }
      for (int64_t i = 0; i < k; ++i) so[q * k + i] = st<T>(s[i]);
      if (!uv) continue;
      if (k == 0) {
        // LAPACK returns at once for an empty matrix; full bases are then the identity.
        eye(uo + q * m * uc, m, uc);
        eye(vo + q * vr * n, vr, n);
        continue;
      }
      store_rm(u, li(m), m, uc, uo + q * m * uc);
      store_rm(vt, li(vr), vr, n, vo + q * vr * n);
    }
  });
}

// ---- det (mode 0) and slogdet (mode 1) from the LU factors ----
template <typename T>
void det_fn(const Io& io, const Params& p) {
  using C = Comp<T>;
  Mat a = mat(io, 0);
  if (a.batch == 0) return;  // every result is empty
  const int64_t n = a.n;
  if (too_big(n, n)) return nan_all_outputs<T>(io, p.mode == 1 ? 2 : 1);
  const T* as = static_cast<const T*>(io.in[0]);
  for_batch(io, a.batch, mul_sat(mul_sat(a.m, a.n), std::max(a.m, a.n)), [&](int64_t q0, int64_t q1) {
    C* w = scratch<C>(0, static_cast<size_t>(n * n));
    lint* piv = scratch<lint>(0, static_cast<size_t>(n));
    for (int64_t q = q0; q < q1; ++q) {
      load_cm(as + q * n * n, n, n, w, li(n));
      if (n > 0) lapack::getrf(li(n), li(n), w, li(n), piv);
      C sign = 1, det = 1, logabs = 0;
      bool nan = false;
      for (int64_t i = 0; i < n; ++i) {
        C u = w[i + i * n];
        if (piv[i] != i + 1) {
          sign = -sign;
          det = -det;
        }
        det *= u;
        if (std::isnan(u)) nan = true;
        if (u < 0) sign = -sign;
        if (u == 0) sign = 0;
        logabs += std::log(std::fabs(u));
      }
      if (p.mode == 0) {
        static_cast<T*>(io.out[0])[q] = st<T>(det);
      } else {
        if (nan) sign = logabs = qnan<C>();
        if (sign == 0) logabs = -std::numeric_limits<C>::infinity();
        static_cast<T*>(io.out[0])[q] = st<T>(sign);
        static_cast<T*>(io.out[1])[q] = st<T>(logabs);
      }
    }
  });
}

template <typename T>
double eps_of() {
  if constexpr (std::is_same_v<T, float16>) {
    return std::ldexp(1.0, -10);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return std::ldexp(1.0, -7);
  } else {
    return std::numeric_limits<T>::epsilon();
  }
}

// ---- matrix_rank: mode 0 default rtol, 1 tol = f, 2 rtol = f ----
template <typename T>
void matrix_rank_fn(const Io& io, const Params& p) {
  using C = Comp<T>;
  Mat a = mat(io, 0);
  if (a.batch == 0) return;  // every result is empty
  const int64_t m = a.m, n = a.n, k = std::min(m, n);
  int64_t* out = static_cast<int64_t*>(io.out[0]);
  if (too_big(m, n)) {
    std::memset(out, 0, static_cast<size_t>(io.out_numel[0]) * sizeof(int64_t));
    return;
  }
  const T* as = static_cast<const T*>(io.in[0]);
  for_batch(io, a.batch, mul_sat(mul_sat(a.m, a.n), std::max(a.m, a.n)), [&](int64_t q0, int64_t q1) {
    C* s = scratch<C>(2, static_cast<size_t>(k));
    for (int64_t q = q0; q < q1; ++q) {
      out[q] = 0;
      if (k == 0 ||
          !svd_one<T, C>(as + q * m * n, m, n, 'N', s, static_cast<C*>(nullptr), 1, static_cast<C*>(nullptr), 1))
        continue;
      double smax = static_cast<double>(s[0]);
      double tol = p.mode == 1   ? p.f
                   : p.mode == 2 ? p.f * smax
                                 : smax * static_cast<double>(std::max(m, n)) * eps_of<T>();
      int64_t r = 0;
      for (int64_t i = 0; i < k; ++i) r += static_cast<double>(s[i]) > tol ? 1 : 0;
      out[q] = r;
    }
  });
}

// ---- norm: mode 0 vector (f = p); 1 fro, 2 nuc, 3 "1", 4 "2", 5 "inf", 6 "-1", 7 "-2", 8 "-inf" ----
double nan_max(double a, double b) { return (std::isnan(a) || a > b) ? a : (std::isnan(b) ? b : b); }
double nan_min(double a, double b) { return (std::isnan(a) || a < b) ? a : (std::isnan(b) ? b : b); }

template <typename T>
void norm_fn(const Io& io, const Params& p) {
  using C = Comp<T>;
  const T* x = static_cast<const T*>(io.in[0]);
  T* out = static_cast<T*>(io.out[0]);
  const int r = io.irank[0];
  if (p.mode == 0) {
    const int64_t n = io.idims[0][r - 1], batch = prod(io.idims[0], r - 1);
    const double pp = p.f;
    for (int64_t q = 0; q < batch; ++q) {
      const T* v = x + q * n;
      double acc = 0;
      if (std::isinf(pp)) {
        acc = n ? std::fabs(static_cast<double>(ld(v[0]))) : 0.0;
        for (int64_t i = 1; i < n; ++i) {
          double e = std::fabs(static_cast<double>(ld(v[i])));
          acc = pp > 0 ? nan_max(acc, e) : nan_min(acc, e);
        }
      } else if (pp == 0) {
        for (int64_t i = 0; i < n; ++i) acc += ld(v[i]) != C(0) ? 1.0 : 0.0;
      } else if (pp == 1) {
        for (int64_t i = 0; i < n; ++i) acc += std::fabs(static_cast<double>(ld(v[i])));
      } else if (pp == 2) {
        for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(ld(v[i])) * static_cast<double>(ld(v[i]));
        acc = std::sqrt(acc);
      } else {
        if (n == 0) {
          out[q] = st<T>(C(0));
          continue;
        }
        for (int64_t i = 0; i < n; ++i) acc += std::pow(std::fabs(static_cast<double>(ld(v[i]))), pp);
        acc = std::pow(acc, 1.0 / pp);
      }
      out[q] = st<T>(static_cast<C>(acc));
    }
    return;
  }
  Mat a = mat(io, 0);
  if (a.batch == 0) return;  // every result is empty
  const int64_t m = a.m, n = a.n, k = std::min(m, n);
  for_batch(io, a.batch, mul_sat(mul_sat(a.m, a.n), std::max(a.m, a.n)), [&](int64_t q0, int64_t q1) {
    C* s = (p.mode == 2 || p.mode == 4 || p.mode == 7) ? scratch<C>(2, static_cast<size_t>(k)) : nullptr;
    for (int64_t q = q0; q < q1; ++q) {
      const T* A = x + q * m * n;
      double res = 0;
      if (m * n == 0) {
        out[q] = st<T>(C(0));
        continue;
      }
      switch (p.mode) {
        case 1:
          for (int64_t i = 0; i < m * n; ++i) res += static_cast<double>(ld(A[i])) * static_cast<double>(ld(A[i]));
          res = std::sqrt(res);
          break;
        case 2:
        case 4:
        case 7:
          if (!svd_one<T, C>(A, m, n, 'N', s, static_cast<C*>(nullptr), 1, static_cast<C*>(nullptr), 1)) {
            res = qnan<double>();
          } else if (p.mode == 2) {
            for (int64_t i = 0; i < k; ++i) res += static_cast<double>(s[i]);
          } else {
            res = static_cast<double>(p.mode == 4 ? s[0] : s[k - 1]);
          }
          break;
        case 3:
        case 6:  // column sums
          for (int64_t j = 0; j < n; ++j) {
            double c = 0;
            for (int64_t i = 0; i < m; ++i) c += std::fabs(static_cast<double>(ld(A[i * n + j])));
            res = j == 0 ? c : (p.mode == 3 ? nan_max(res, c) : nan_min(res, c));
          }
          break;
        default:  // 5, 8: row sums
          for (int64_t i = 0; i < m; ++i) {
            double c = 0;
            for (int64_t j = 0; j < n; ++j) c += std::fabs(static_cast<double>(ld(A[i * n + j])));
            res = i == 0 ? c : (p.mode == 5 ? nan_max(res, c) : nan_min(res, c));
          }
          break;
      }
      out[q] = st<T>(static_cast<C>(res));
    }
  });
}

// ---- matrix_exp: Higham (2005) scaling and squaring with the degree-13 Pade approximant, in double ----
template <typename T>
void matrix_exp_fn(const Io& io, const Params&) {
  Mat a = mat(io, 0);
  if (a.batch == 0) return;  // every result is empty
  const int64_t n = a.n;
  if (too_big(n, n * n)) return nan_all_outputs<T>(io, 1);
  const auto& b = special::kPade13;  // the degree-13 Pade coefficients (special_constants.h)
  constexpr double theta13 = special::kPade13Theta;
  const T* as = static_cast<const T*>(io.in[0]);
  T* out = static_cast<T*>(io.out[0]);
  const size_t nn = static_cast<size_t>(n * n);
  for_batch(io, a.batch, mul_sat(mul_sat(a.m, a.n), std::max(a.m, a.n)), [&](int64_t q0, int64_t q1) {
    double* A = scratch<double>(0, nn);
    double* A2 = scratch<double>(1, nn);
    double* A4 = scratch<double>(2, nn);
    double* A6 = scratch<double>(3, nn);
    double* U = scratch<double>(4, nn);
    double* V = scratch<double>(5, 2 * nn);
    double* tmp = V + nn;
    lint* piv = scratch<lint>(0, static_cast<size_t>(n));
    const lint N = li(n);
    for (int64_t q = q0; q < q1; ++q) {
      const T* s = as + q * n * n;
      T* d = out + q * n * n;
      if (n == 0) continue;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) A[i + j * n] = static_cast<double>(ld(s[i * n + j]));
      double norm1 = 0;
      for (int64_t j = 0; j < n; ++j) {
        double c = 0;
        for (int64_t i = 0; i < n; ++i) c += std::fabs(A[i + j * n]);
        norm1 = nan_max(norm1, c);
      }
      if (!std::isfinite(norm1)) {
        fill_nan(d, n * n);
        continue;
      }
      int sq = 0;
      if (norm1 > theta13) sq = static_cast<int>(std::ceil(std::log2(norm1 / theta13)));
      const double scale = std::ldexp(1.0, -sq);
      for (size_t i = 0; i < nn; ++i) A[i] *= scale;
      lapack::gemm_sq(N, A, A, A2);
      lapack::gemm_sq(N, A2, A2, A4);
      lapack::gemm_sq(N, A4, A2, A6);
      // U = A (A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I)
      // V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I
      for (size_t i = 0; i < nn; ++i) tmp[i] = b[13] * A6[i] + b[11] * A4[i] + b[9] * A2[i];
      lapack::gemm_sq(N, A6, tmp, U);
      for (size_t i = 0; i < nn; ++i) U[i] += b[7] * A6[i] + b[5] * A4[i] + b[3] * A2[i];
      for (int64_t i = 0; i < n; ++i) U[i + i * n] += b[1];
      std::memcpy(tmp, U, nn * sizeof(double));
      lapack::gemm_sq(N, A, tmp, U);
      for (size_t i = 0; i < nn; ++i) tmp[i] = b[12] * A6[i] + b[10] * A4[i] + b[8] * A2[i];
      lapack::gemm_sq(N, A6, tmp, A);  // A is no longer needed
      for (size_t i = 0; i < nn; ++i) V[i] = A[i] + b[6] * A6[i] + b[4] * A4[i] + b[2] * A2[i];
      for (int64_t i = 0; i < n; ++i) V[i + i * n] += b[0];
      // Solve (V - U) X = (V + U): P in A2, X in A4.
      for (size_t i = 0; i < nn; ++i) {
        A2[i] = V[i] - U[i];
        A4[i] = V[i] + U[i];
      }
      lapack::getrf(N, N, A2, N, piv);
      lapack::getrs('N', N, N, A2, N, piv, A4, N);
      for (int i = 0; i < sq; ++i) {
        lapack::gemm_sq(N, A4, A4, A6);
        std::swap(A4, A6);
      }
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) d[i * n + j] = st<T>(static_cast<Comp<T>>(A4[i + j * n]));
    }
  });
}

// ---- trace (numeric): i[0] offset, i[1] axis1, i[2] axis2 ----
template <typename T>
void trace_fn(const Io& io, const Params& p) {
  const int r = io.irank[0];
  const int64_t* d = io.idims[0];
  const int a1 = static_cast<int>(p.i[1]), a2 = static_cast<int>(p.i[2]);
  int64_t str[kMaxRank];
  int64_t s = 1;
  for (int i = r - 1; i >= 0; --i) {
    str[i] = s;
    s = mul_sat(s, d[i]);
  }
  const int64_t off = p.i[0], d1 = d[a1], d2 = d[a2];
  // Diagonal length and start without arithmetic on `off` that could overflow.
  int64_t len = 0, i0 = 0, j0 = 0;
  if (off >= 0) {
    if (off < d2) {
      len = std::min(d1, d2 - off);
      j0 = off;
    }
  } else if (off > -d1) {
    len = std::min(d1 + off, d2);
    i0 = -off;
  }
  const int64_t dstep = str[a1] + str[a2], base = i0 * str[a1] + j0 * str[a2];
  int od[kMaxRank], orank = 0;
  for (int i = 0; i < r; ++i)
    if (i != a1 && i != a2) od[orank++] = i;
  const T* x = static_cast<const T*>(io.in[0]);
  T* out = static_cast<T*>(io.out[0]);
  int64_t total = io.out_numel[0];
  int64_t idx[kMaxRank] = {};
  for (int64_t q = 0; q < total; ++q) {
    int64_t o = base;
    for (int k = 0; k < orank; ++k) o += idx[k] * str[od[k]];
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      U acc = 0;
      for (int64_t t = 0; t < len; ++t) acc = static_cast<U>(acc + static_cast<U>(x[o + t * dstep]));
      out[q] = static_cast<T>(acc);
    } else {
      double acc = 0;
      for (int64_t t = 0; t < len; ++t) acc += static_cast<double>(ld(x[o + t * dstep]));
      out[q] = st<T>(static_cast<Comp<T>>(acc));
    }
    for (int k = orank - 1; k >= 0; --k) {
      if (++idx[k] < d[od[k]]) break;
      idx[k] = 0;
    }
  }
}

// ---- dot_general ----
// Copies `src` (rank r, extents d) into dst in the axis order perm, converting each element.
template <typename S, typename D, typename Cv>
void pack(const S* src, const int64_t* d, int r, const int* perm, D* dst, Cv cv) {
  int64_t str[kMaxRank], pe[kMaxRank], ps[kMaxRank], idx[kMaxRank] = {};
  int64_t s = 1, total = 1;
  for (int i = r - 1; i >= 0; --i) {
    str[i] = s;
    s = mul_sat(s, d[i]);
  }
  for (int i = 0; i < r; ++i) {
    pe[i] = d[perm[i]];
    ps[i] = str[perm[i]];
    total *= pe[i];
  }
  if (total == 0) return;
  int64_t o = 0;
  for (int64_t q = 0; q < total; ++q) {
    dst[q] = cv(src[o]);
    for (int k = r - 1; k >= 0; --k) {
      o += ps[k];
      if (++idx[k] < pe[k]) break;
      o -= ps[k] * pe[k];
      idx[k] = 0;
    }
  }
}

bool is_identity(const int* perm, int r) {
  for (int i = 0; i < r; ++i)
    if (perm[i] != i) return false;
  return true;
}

template <typename T>
using DgAcc =
    std::conditional_t<std::is_floating_point_v<T>, T, std::conditional_t<std::is_integral_v<T>, uint64_t, float>>;

template <typename T>
void dot_general_fn(const Io& io, const Params& p) {
  const int ra = io.irank[0], rb = io.irank[1];
  const int64_t* ad = io.idims[0];
  const int64_t* bd = io.idims[1];
  int64_t B = 1, M = 1, K = 1, N = 1;
  for (int i = 0; i < p.nb; ++i) B = mul_sat(B, ad[p.lperm[i]]);
  for (int i = p.nb; i < ra - p.nc; ++i) M = mul_sat(M, ad[p.lperm[i]]);
  for (int i = ra - p.nc; i < ra; ++i) K = mul_sat(K, ad[p.lperm[i]]);
  for (int i = p.nb + p.nc; i < rb; ++i) N = mul_sat(N, bd[p.rperm[i]]);
  T* c = static_cast<T*>(io.out[0]);
  if (io.out_numel[0] == 0) return;
  const T* a = static_cast<const T*>(io.in[0]);
  const T* b = static_cast<const T*>(io.in[1]);
  using A = DgAcc<T>;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (K == 0) {
      std::memset(static_cast<void*>(c), 0, static_cast<size_t>(io.out_numel[0]) * sizeof(T));
      return;
    }
    if (M <= lapack::kMaxDim && N <= lapack::kMaxDim && K <= lapack::kMaxDim) {
      auto same = [](T x) { return x; };
      const T* pa = a;
      const T* pb = b;
      if (!is_identity(p.lperm, ra)) {
        T* w = scratch<T>(0, static_cast<size_t>(B * M * K));
        pack(a, ad, ra, p.lperm, w, same);
        pa = w;
      }
      if (!is_identity(p.rperm, rb)) {
        T* w = scratch<T>(1, static_cast<size_t>(B * K * N));
        pack(b, bd, rb, p.rperm, w, same);
        pb = w;
      }
      const lint m = static_cast<lint>(M), n = static_cast<lint>(N), k = static_cast<lint>(K);
      for (int64_t q = 0; q < B; ++q) {
        if constexpr (std::is_same_v<T, float>) {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, pa + q * M * K, k, pb + q * K * N, n,
                      0.0f, c + q * M * N, n);
        } else {
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, pa + q * M * K, k, pb + q * K * N, n,
                      0.0, c + q * M * N, n);
        }
      }
      return;
    }
  }
  auto cv = [](T x) -> A {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<A>(static_cast<int64_t>(x));
    } else {
      return static_cast<A>(ld(x));
    }
  };
  A* pa = scratch<A>(0, static_cast<size_t>(B * M * K));
  A* pb = scratch<A>(1, static_cast<size_t>(B * K * N));
  pack(a, ad, ra, p.lperm, pa, cv);
  pack(b, bd, rb, p.rperm, pb, cv);
  A* acc = scratch<A>(2, static_cast<size_t>(N));
  for (int64_t q = 0; q < B; ++q)
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) acc[j] = A(0);
      const A* ar = pa + (q * M + i) * K;
      for (int64_t t = 0; t < K; ++t) {
        const A av = ar[t];
        const A* br = pb + (q * K + t) * N;
        for (int64_t j = 0; j < N; ++j) acc[j] = static_cast<A>(acc[j] + av * br[j]);
      }
      T* cr = c + (q * M + i) * N;
      for (int64_t j = 0; j < N; ++j) {
        if constexpr (std::is_integral_v<T>) {
          cr[j] = static_cast<T>(acc[j]);
        } else {
          cr[j] = st<T>(acc[j]);
        }
      }
    }
}

class DecompKernel final : public Kernel {
 public:
  DecompKernel(Fn fn, Params p, const PrepareCtx& ctx) : fn_(fn), p_(p) {
    nin_ = ctx.in.size();
    nout_ = ctx.out.size();
    for (size_t i = 0; i < nin_; ++i) {
      in_[i] = ctx.in[i];
      irank_[i] = static_cast<int>(ctx.operand(i).rank());
      ioff_[i] = ctx.operand(i).dim_off;
    }
    for (size_t i = 0; i < nout_; ++i) {
      out_[i] = ctx.out[i];
      orank_[i] = static_cast<int>(ctx.result(i).rank());
      ooff_[i] = ctx.result(i).dim_off;
      odt_[i] = ctx.result(i).dtype();
    }
  }
  void run(const Frame& f) const override {
    Io io;
    for (size_t i = 0; i < nin_; ++i) {
      io.in[i] = f.ptr[in_[i]];
      io.idims[i] = f.dims + ioff_[i];
      io.irank[i] = irank_[i];
    }
    for (size_t i = 0; i < nout_; ++i) {
      io.out[i] = f.ptr[out_[i]];
      io.odims[i] = f.dims + ooff_[i];
      io.orank[i] = orank_[i];
      io.out_numel[i] = f.numel[out_[i]];
      io.odt[i] = odt_[i];
    }
    try {
      fn_(io, p_);
    } catch (...) {
      poison(io, 1, 0, 1);
    }
  }

 private:
  Fn fn_;
  Params p_;
  size_t nin_ = 0, nout_ = 0;
  uint32_t in_[2] = {}, ioff_[2] = {}, out_[3] = {}, ooff_[3] = {};
  int irank_[2] = {}, orank_[3] = {};
  DType odt_[3] = {DType::F32, DType::F32, DType::F32};
};

template <template <typename> class F>
Fn float_fn(PrepareCtx& ctx, DType t) {
  switch (t) {
    case DType::F16: return &F<float16>::run;
    case DType::BF16: return &F<bfloat16>::run;
    case DType::F32: return &F<float>::run;
    case DType::F64: return &F<double>::run;
    default: ctx.fail("expects a float operand, got " + std::string(dtype_name(t)));
  }
}

#define EVOXC_WRAP(name)                                                    \
  template <typename T>                                                     \
  struct name##_w {                                                         \
    static void run(const Io& io, const Params& p) { name##_fn<T>(io, p); } \
  };
EVOXC_WRAP(cholesky)
EVOXC_WRAP(triangular_solve)
EVOXC_WRAP(solve)
EVOXC_WRAP(lu)
EVOXC_WRAP(qr)
EVOXC_WRAP(eigh)
EVOXC_WRAP(svd)
EVOXC_WRAP(det)
EVOXC_WRAP(matrix_rank)
EVOXC_WRAP(norm)
EVOXC_WRAP(matrix_exp)
#undef EVOXC_WRAP

bool get_bool(const PrepareCtx& ctx, const char* name) {
  const AttrMap& m = ctx.op.attributes();
  auto it = m.find(name);
  if (it == m.end() || !std::holds_alternative<bool>(it->second))
    ctx.fail(std::string("needs the bool attribute `") + name + "`");
  return std::get<bool>(it->second);
}

// How each op fills the kernel's parameters and picks its routine for the operand dtype.
using Setup = Fn (*)(PrepareCtx& ctx, DType t, Params& p);

Fn setup_dot_general(PrepareCtx& ctx, DType t, Params& p) {
  const std::string& name = ctx.op.name();
  const AttrMap& attrs = ctx.attrs();
  auto ints = [&](const char* n) { return attr_ints(attrs, n, name); };
  const auto lb = ints("lhs_batch_dims"), lc = ints("lhs_contracting_dims");
  const auto rb = ints("rhs_batch_dims"), rc = ints("rhs_contracting_dims");
  const int ra = static_cast<int>(ctx.operand(0).rank()), rr = static_cast<int>(ctx.operand(1).rank());
  p.nb = static_cast<int>(lb.size());
  p.nc = static_cast<int>(lc.size());
  auto build = [](int r, const std::vector<int64_t>& bt, const std::vector<int64_t>& ct, bool contract_last,
                  int* perm) {
    std::vector<bool> used(static_cast<size_t>(r), false);
    int k = 0;
    for (int64_t d : bt) {
      perm[k++] = static_cast<int>(d);
      used[static_cast<size_t>(d)] = true;
    }
    for (int64_t d : ct) used[static_cast<size_t>(d)] = true;
    if (!contract_last)
      for (int64_t d : ct) perm[k++] = static_cast<int>(d);
    for (int i = 0; i < r; ++i)
      if (!used[static_cast<size_t>(i)]) perm[k++] = i;
    if (contract_last)
      for (int64_t d : ct) perm[k++] = static_cast<int>(d);
  };
  build(ra, lb, lc, true, p.lperm);
  build(rr, rb, rc, false, p.rperm);
  return visit_dtype(t, [&](auto tag) -> Fn {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      ctx.fail("expects numeric operands, got bool");
    } else {
      return &dot_general_fn<T>;
    }
  });
}

Fn setup_trace(PrepareCtx& ctx, DType t, Params& p) {
  const std::string& name = ctx.op.name();
  p.i[0] = attr_int(ctx.attrs(), "offset", name);
  p.i[1] = attr_int(ctx.attrs(), "axis1", name);
  p.i[2] = attr_int(ctx.attrs(), "axis2", name);
  return visit_dtype(t, [&](auto tag) -> Fn {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      ctx.fail("expects a numeric operand, got bool");
    } else {
      return &trace_fn<T>;
    }
  });
}

Fn setup_cholesky(PrepareCtx& ctx, DType t, Params& p) {
  p.b[0] = get_bool(ctx, "lower");
  return float_fn<cholesky_w>(ctx, t);
}

Fn setup_triangular_solve(PrepareCtx& ctx, DType t, Params& p) {
  p.b[0] = get_bool(ctx, "left_side");
  p.b[1] = get_bool(ctx, "lower");
  p.b[2] = get_bool(ctx, "transpose_a");
  p.b[3] = get_bool(ctx, "unit_diagonal");
  return float_fn<triangular_solve_w>(ctx, t);
}

// A routine without attributes; `Mode` selects its variant (inv of solve, slogdet of det).
template <template <typename> class F, int Mode = 0>
Fn setup_plain(PrepareCtx& ctx, DType t, Params& p) {
  p.mode = Mode;
  return float_fn<F>(ctx, t);
}

template <template <typename> class F, int Flags>
Fn setup_full_matrices(PrepareCtx& ctx, DType t, Params& p) {
  p.b[0] = get_bool(ctx, "full_matrices");
  if (Flags > 1) p.b[1] = get_bool(ctx, "compute_uv");
  return float_fn<F>(ctx, t);
}

Fn setup_eigh(PrepareCtx& ctx, DType t, Params& p) {
  p.b[0] = get_bool(ctx, "lower");
  return float_fn<eigh_w>(ctx, t);
}

Fn setup_matrix_rank(PrepareCtx& ctx, DType t, Params& p) {
  const std::string& name = ctx.op.name();
  if (ctx.has_attr("tol")) {
    p.mode = 1;
    p.f = attr_float(ctx.attrs(), "tol", name);
  } else if (ctx.has_attr("rtol")) {
    p.mode = 2;
    p.f = attr_float(ctx.attrs(), "rtol", name);
  }
  return float_fn<matrix_rank_w>(ctx, t);
}

Fn setup_norm(PrepareCtx& ctx, DType t, Params& p) {
  const std::string& name = ctx.op.name();
  const std::string& ord = attr_string(ctx.attrs(), "ord", name);
  // The mode is the ord's index here; "vector" (0) takes the order from `p`.
  static const std::string_view kOrds[] = {"vector", "fro", "nuc", "1", "2", "inf", "-1", "-2", "-inf"};
  for (int i = 0; i < 9; ++i)
    if (std::string_view(ord) == kOrds[i]) p.mode = i;
  if (p.mode == 0) p.f = attr_float(ctx.attrs(), "p", name);
  return float_fn<norm_w>(ctx, t);
}

template <Setup S>
KernelPtr make_decomposition(PrepareCtx& ctx) {
  // Inference is the single source of the shape rules: every relation the kernel relies on (square
  // matrices, paired extents, result extents) is one inference proves over DimExprs, so a hand-built
  // graph whose result types differ from it is refused here rather than read out of range at run time.
  std::vector<TensorType> in_types, want;
  for (size_t i = 0; i < ctx.in.size(); ++i) in_types.push_back(ctx.operand(i).type());
  try {
    want = infer_result_types(op_def(ctx.op), in_types, ctx.attrs());
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
  if (want.size() != ctx.out.size())
    ctx.fail("has " + std::to_string(ctx.out.size()) + " results, inference gives " + std::to_string(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    if (!(want[i] == ctx.result(i).type()))
      ctx.fail("result " + std::to_string(i) + " has type " + ctx.result(i).type().to_string() + ", inference gives " +
               want[i].to_string());
  for (size_t i = 0; i < ctx.in.size(); ++i)
    if (ctx.operand(i).rank() > static_cast<uint32_t>(kMaxRank))
      ctx.fail("the interpreter supports rank up to " + std::to_string(kMaxRank));
  Params p;
  Fn fn = S(ctx, ctx.operand(0).dtype(), p);
  return std::make_unique<DecompKernel>(fn, p, ctx);
}

}  // namespace

void install_decomposition_kernels(KernelTable& t) {
  t.set("dot_general", &make_decomposition<setup_dot_general>);
  t.set("trace", &make_decomposition<setup_trace>);
  t.set("cholesky", &make_decomposition<setup_cholesky>);
  t.set("triangular_solve", &make_decomposition<setup_triangular_solve>);
  t.set("solve", &make_decomposition<setup_plain<solve_w, 0>>);
  t.set("inv", &make_decomposition<setup_plain<solve_w, 1>>);
  t.set("lu", &make_decomposition<setup_plain<lu_w>>);
  t.set("qr", &make_decomposition<setup_full_matrices<qr_w, 1>>);
  t.set("eigh", &make_decomposition<setup_eigh>);
  t.set("svd", &make_decomposition<setup_full_matrices<svd_w, 2>>);
  t.set("det", &make_decomposition<setup_plain<det_w, 0>>);
  t.set("slogdet", &make_decomposition<setup_plain<det_w, 1>>);
  t.set("matrix_rank", &make_decomposition<setup_matrix_rank>);
  t.set("norm", &make_decomposition<setup_norm>);
  t.set("matrix_exp", &make_decomposition<setup_plain<matrix_exp_w>>);
}

}  // namespace evoxc::interp
