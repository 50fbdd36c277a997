// The dot instruction: numpy matmul over broadcast batches; OpenBLAS for float32/float64, loops otherwise.
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <type_traits>

#include "kernel_table.h"
#include "program.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

constexpr int kMaxBatchRank = 16;

// One dot call: `batch` products of (n, k) by (k, m); a_off/b_off give each batch's
// element offset into the operands (broadcast batch axes repeat an offset).
struct DotGeometry {
  int64_t n, k, m;
  int brank;                    // result batch rank
  int64_t bext[kMaxBatchRank];  // result batch extents
  int64_t astr[kMaxBatchRank];  // a's element stride per batch axis (0 when broadcast)
  int64_t bstr[kMaxBatchRank];
  int64_t batch;
};

void batch_offsets(const DotGeometry& g, int64_t q, int64_t& ao, int64_t& bo) {
  ao = bo = 0;
  for (int i = g.brank - 1; i >= 0; --i) {
    int64_t idx = q % g.bext[i];
    q /= g.bext[i];
    ao += idx * g.astr[i];
    bo += idx * g.bstr[i];
  }
}

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <typename T>
using DotAcc =
    std::conditional_t<is_half_v<T> || std::is_same_v<T, float>, float,
                       std::conditional_t<std::is_same_v<T, double>, double,
                                          std::conditional_t<std::is_same_v<T, bool>, bool,
                                                             std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>>>>;

template <typename T>
DotAcc<T> dload(T x) {
  if constexpr (is_half_v<T>) {
    return static_cast<float>(x);
  } else {
    return static_cast<DotAcc<T>>(x);
  }
}

template <typename T>
T dstore(DotAcc<T> a) {
  if constexpr (is_half_v<T>) {
    return T(a);
  } else {
    return static_cast<T>(a);
  }
}

// Rows [i0, i1) of one (n, k) x (k, m) product, accumulating a block of columns at a time.
template <typename T>
void loop_rows(const T* a, const T* b, T* c, int64_t k, int64_t m, int64_t i0, int64_t i1) {
  using A = DotAcc<T>;
  constexpr int64_t kCols = 256;
  A acc[kCols];
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t j0 = 0; j0 < m; j0 += kCols) {
      int64_t w = std::min(kCols, m - j0);
      for (int64_t j = 0; j < w; ++j) acc[j] = A(0);
      for (int64_t p = 0; p < k; ++p) {
        A av = dload(a[i * k + p]);
        const T* row = b + p * m + j0;
        if constexpr (std::is_same_v<A, bool>) {
          if (av)
            for (int64_t j = 0; j < w; ++j) acc[j] = acc[j] || static_cast<bool>(row[j]);
        } else {
          for (int64_t j = 0; j < w; ++j) acc[j] = static_cast<A>(acc[j] + av * dload(row[j]));
        }
      }
      for (int64_t j = 0; j < w; ++j) c[i * m + j0 + j] = dstore<T>(acc[j]);
    }
  }
}

template <typename T>
void dot_loops(const DotGeometry& g, const T* a, const T* b, T* c) {
  const int64_t rows = g.batch * g.n;
  if (rows == 0 || g.m == 0) return;
  int64_t per_row = std::max<int64_t>(1, g.k * g.m);
  int64_t rows_per_task = std::max<int64_t>(1, kParallelGrain / per_row);
  int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  auto body = [&](int64_t t) {
    int64_t r0 = t * rows_per_task, r1 = std::min(rows, r0 + rows_per_task);
    while (r0 < r1) {
      int64_t q = r0 / g.n, i0 = r0 % g.n, i1 = std::min(g.n, i0 + (r1 - r0));
      int64_t ao, bo;
      batch_offsets(g, q, ao, bo);
      loop_rows<T>(a + ao, b + bo, c + q * g.n * g.m, g.k, g.m, i0, i1);
      r0 += i1 - i0;
    }
  };
  if (tasks == 1) {
    body(0);
  } else {
    parallel_for(tasks, body);
  }
}

template <typename T>
void gemm(int64_t n, int64_t k, int64_t m, const T* a, const T* b, T* c) {
  int N = static_cast<int>(n), K = static_cast<int>(k), M = static_cast<int>(m);
  if constexpr (std::is_same_v<T, float>) {
    if (n == 1 && m == 1) {
      c[0] = cblas_sdot(K, a, 1, b, 1);
    } else if (m == 1) {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, N, K, 1.0f, a, K, b, 1, 0.0f, c, 1);
    } else if (n == 1) {
      cblas_sgemv(CblasRowMajor, CblasTrans, K, M, 1.0f, b, M, a, 1, 0.0f, c, 1);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, M, K, 1.0f, a, K, b, M, 0.0f, c, M);
    }
  } else {
    if (n == 1 && m == 1) {
      c[0] = cblas_ddot(K, a, 1, b, 1);
    } else if (m == 1) {
      cblas_dgemv(CblasRowMajor, CblasNoTrans, N, K, 1.0, a, K, b, 1, 0.0, c, 1);
    } else if (n == 1) {
      cblas_dgemv(CblasRowMajor, CblasTrans, K, M, 1.0, b, M, a, 1, 0.0, c, 1);
    } else {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, M, K, 1.0, a, K, b, M, 0.0, c, M);
    }
  }
}

template <typename T>
void dot_blas(const DotGeometry& g, const T* a, const T* b, T* c) {
  if (g.batch == 0 || g.n == 0 || g.m == 0) return;
  if (g.k == 0) {
    std::memset(c, 0, static_cast<size_t>(g.batch * g.n * g.m) * sizeof(T));
    return;
  }
  // BLAS takes int extents; larger products use the loops.
  if (g.n > INT_MAX || g.k > INT_MAX || g.m > INT_MAX) {
    dot_loops<T>(g, a, b, c);
    return;
  }
  // b shared by every batch and a dense over the batch: one call with the batch folded into n.
  bool b_shared = true, a_dense = true;
  int64_t s = g.n * g.k;
  for (int i = g.brank - 1; i >= 0; --i) {
    b_shared = b_shared && g.bstr[i] == 0;
    a_dense = a_dense && g.astr[i] == s;
    s *= g.bext[i];
  }
  if (g.batch > 1 && b_shared && a_dense && g.batch * g.n <= INT_MAX) {
    gemm<T>(g.batch * g.n, g.k, g.m, a, b, c);
    return;
  }
  for (int64_t q = 0; q < g.batch; ++q) {
    int64_t ao, bo;
    batch_offsets(g, q, ao, bo);
    gemm<T>(g.n, g.k, g.m, a + ao, b + bo, c + q * g.n * g.m);
  }
}

using DotFn = void (*)(const DotGeometry&, const void*, const void*, void*);

template <typename T>
void dot_entry(const DotGeometry& g, const void* a, const void* b, void* c) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    dot_blas<T>(g, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c));
  } else {
    dot_loops<T>(g, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c));
  }
}

class DotKernel final : public Kernel {
 public:
  DotKernel(DotFn fn, const PrepareCtx& ctx) : fn_(fn) {
    a_ = ctx.in[0];
    b_ = ctx.in[1];
    c_ = ctx.out[0];
    ra_ = static_cast<int>(ctx.operand(0).rank());
    rb_ = static_cast<int>(ctx.operand(1).rank());
    rc_ = static_cast<int>(ctx.result().rank());
    aoff_ = ctx.operand(0).dim_off;
    boff_ = ctx.operand(1).dim_off;
    coff_ = ctx.result().dim_off;
    if (ctx.all_static()) {
      geometry(ctx.static_dims(a_), ctx.static_dims(b_), ctx.static_dims(c_), geo_);
      static_ = true;
    }
  }
  void run(const Frame& f) const override {
    DotGeometry local;
    const DotGeometry* g = &geo_;
    if (!static_) {
      geometry(f.dims + aoff_, f.dims + boff_, f.dims + coff_, local);
      g = &local;
    }
    fn_(*g, f.ptr[a_], f.ptr[b_], f.ptr[c_]);
  }

 private:
  void geometry(const int64_t* ad, const int64_t* bd, const int64_t* cd, DotGeometry& g) const {
    g.k = ad[ra_ - 1];
    g.n = ra_ >= 2 ? ad[ra_ - 2] : 1;
    g.m = rb_ >= 2 ? bd[rb_ - 1] : 1;
    int abr = std::max(ra_ - 2, 0), bbr = std::max(rb_ - 2, 0);
    g.brank = std::max(abr, bbr);
    g.batch = 1;
    (void)rc_;
    int64_t as = g.n * g.k, bs = g.k * g.m;
    for (int i = g.brank - 1; i >= 0; --i) {
      int ai = i - (g.brank - abr), bi = i - (g.brank - bbr);
      int64_t ae = ai >= 0 ? ad[ai] : 1, be = bi >= 0 ? bd[bi] : 1;
      int64_t e = cd[i];
      g.bext[i] = e;
      g.astr[i] = (ae == 1 && e != 1) ? 0 : as;
      g.bstr[i] = (be == 1 && e != 1) ? 0 : bs;
      as *= ae;
      bs *= be;
      g.batch *= e;
    }
  }

  DotFn fn_;
  uint32_t a_, b_, c_, aoff_, boff_, coff_;
  int ra_, rb_, rc_;
  bool static_ = false;
  DotGeometry geo_;
};

// dot: numpy matmul with broadcast batch axes.
KernelPtr make_dot(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 2 || ctx.op.num_results() != 1) ctx.fail("expects two operands and one result");
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& b = ctx.operand(1);
  const ValueDesc& c = ctx.result();
  DType t = a.dtype();
  if (b.dtype() != t || c.dtype() != t)
    ctx.fail("operands and result must share one dtype, got " + std::string(dtype_name(t)) + " and " +
             std::string(dtype_name(b.dtype())));
  if (a.rank() < 1 || b.rank() < 1) ctx.fail("operands must have rank 1 or more");
  size_t abr = a.rank() >= 2 ? a.rank() - 2 : 0, bbr = b.rank() >= 2 ? b.rank() - 2 : 0;
  size_t brank = std::max(abr, bbr);
  if (brank > static_cast<size_t>(kMaxBatchRank))
    ctx.fail("the interpreter supports up to " + std::to_string(kMaxBatchRank) + " batch axes");
  size_t want = brank + (a.rank() >= 2 ? 1 : 0) + (b.rank() >= 2 ? 1 : 0);
  if (c.rank() != want)
    ctx.fail("the result has rank " + std::to_string(c.rank()) + ", numpy matmul gives rank " + std::to_string(want));
  const Shape& as = a.type().shape;
  const Shape& bs = b.type().shape;
  const Shape& cs = c.type().shape;
  ctx.require_equal(as[a.rank() - 1], bs[b.rank() >= 2 ? b.rank() - 2 : 0], "contracting extents of the operands");
  for (size_t i = 0; i < brank; ++i) {
    if (i + abr >= brank)
      ctx.require_broadcast(as[i + abr - brank], cs[i], "batch axis " + std::to_string(i) + " of the lhs");
    if (i + bbr >= brank)
      ctx.require_broadcast(bs[i + bbr - brank], cs[i], "batch axis " + std::to_string(i) + " of the rhs");
  }
  size_t k = brank;
  if (a.rank() >= 2) ctx.require_equal(as[a.rank() - 2], cs[k++], "rows of the lhs and the result");
  if (b.rank() >= 2) ctx.require_equal(bs[b.rank() - 1], cs[k], "columns of the rhs and the result");
  DotFn fn = visit_dtype(t, [](auto tag) -> DotFn {
    using T = decltype(tag);
    return &dot_entry<T>;
  });
  return std::make_unique<DotKernel>(fn, ctx);
}

}  // namespace

void install_linalg_kernels(KernelTable& t) { t.set("dot", &make_dot); }

}  // namespace evoxc::interp
