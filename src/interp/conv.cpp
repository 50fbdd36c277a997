// Interpreter kernels of the conv family (see src/ops/conv.cpp for the op): im2col per (batch, group), then
// OpenBLAS sgemm/dgemm for float32/float64 and accumulating loops for ints (wrapping) and half types (float).
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "evoxc/ops/op_def.h"
#include "kernel_table.h"
#include "program.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

constexpr int kMaxSpatial = 8;

struct ConvGeometry {
  int n = 0;  // spatial rank
  int64_t N = 0, C = 0, O = 0, G = 1, Cg = 0, Og = 0;
  int64_t in[kMaxSpatial], win[kMaxSpatial], out[kMaxSpatial];
  int64_t dil_in[kMaxSpatial];  // (in - 1) * lhs_dilation + 1, or 0
  int64_t stride[kMaxSpatial], lo[kMaxSpatial], ld[kMaxSpatial], rd[kMaxSpatial];
  int64_t ksp = 1, P = 1, Pin = 1, K = 0;  // window size, output positions, input positions, Cg * ksp
  bool direct = false;                     // a 1x1 window that reads the input as is: no im2col needed
};

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Row r of the (K x P) column matrix for one batch item and group: r = c * ksp + window index.
template <typename T>
void im2col_rows(const ConvGeometry& g, const T* x, T* col, int64_t r0, int64_t r1) {
  const int n = g.n, last = n - 1;
  const int64_t OW = g.out[last];
  const int64_t rows_out = g.P / std::max<int64_t>(OW, 1);
  int64_t kk[kMaxSpatial];
  for (int64_t r = r0; r < r1; ++r) {
    int64_t c = r / g.ksp, q = r % g.ksp;
    for (int d = n - 1; d >= 0; --d) {
      kk[d] = q % g.win[d];
      q /= g.win[d];
    }
    const T* xc = x + c * g.Pin;
    T* dst = col + r * g.P;
    const int64_t c0 = kk[last] * g.rd[last] - g.lo[last];
    const int64_t s = g.stride[last], inl = g.in[last], ldl = g.ld[last];
    // Valid output columns for the last axis when it is not lhs-dilated: 0 <= ow * s + c0 < in.
    int64_t ow_lo = 0, ow_hi = OW;
    if (ldl == 1) {
      ow_lo = std::clamp<int64_t>(-floordiv(c0, s), 0, OW);  // ceil(-c0 / s)
      ow_hi = std::clamp<int64_t>(floordiv(inl - 1 - c0, s) + 1, ow_lo, OW);
    }
    for (int64_t ro = 0; ro < rows_out; ++ro) {
      T* d = dst + ro * OW;
      int64_t q2 = ro, off = 0, mul = 1;
      bool valid = true;
      for (int dd = last - 1; dd >= 0; --dd) {
        int64_t o = q2 % g.out[dd];
        q2 /= g.out[dd];
        int64_t xd = o * g.stride[dd] + kk[dd] * g.rd[dd] - g.lo[dd];
        if (xd < 0 || xd >= g.dil_in[dd] || xd % g.ld[dd] != 0) {
          valid = false;
          break;
        }
        off += (xd / g.ld[dd]) * mul;
        mul *= g.in[dd];
      }
      if (!valid) {
        std::memset(static_cast<void*>(d), 0, static_cast<size_t>(OW) * sizeof(T));
        continue;
      }
      const T* xr = xc + off * inl;
      if (ldl == 1) {
        std::memset(static_cast<void*>(d), 0, static_cast<size_t>(ow_lo) * sizeof(T));
        if (s == 1 && ow_hi > ow_lo) {
          std::memcpy(static_cast<void*>(d + ow_lo), xr + ow_lo + c0, static_cast<size_t>(ow_hi - ow_lo) * sizeof(T));
        } else {
          for (int64_t ow = ow_lo; ow < ow_hi; ++ow) d[ow] = xr[ow * s + c0];
        }
        std::memset(static_cast<void*>(d + ow_hi), 0, static_cast<size_t>(OW - ow_hi) * sizeof(T));
      } else {
        const int64_t dl = g.dil_in[last];
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t xd = ow * s + c0;
          d[ow] = (xd >= 0 && xd < dl && xd % ldl == 0) ? xr[xd / ldl] : T{};
        }
      }
    }
  }
}

template <typename T>
void im2col(const ConvGeometry& g, const T* x, T* col) {
  int64_t total = g.K * g.P;
  if (total < kParallelGrain) {
    im2col_rows<T>(g, x, col, 0, g.K);
    return;
  }
  int64_t per = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(g.P, 1));
  parallel_for((g.K + per - 1) / per,
               [&](int64_t t) { im2col_rows<T>(g, x, col, t * per, std::min(g.K, (t + 1) * per)); });
}

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Accumulators: floats in float (halves) or their own type; ints in the unsigned type of their width, so sums
// wrap as docs/semantics.md says without signed overflow.
template <typename T>
using Acc = std::conditional_t<
    is_half_v<T>, float,
    std::conditional_t<std::is_floating_point_v<T>, T, std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>>>;

template <typename T>
Acc<T> load(T v) {
  if constexpr (is_half_v<T>) {
    return static_cast<float>(v);
  } else {
    return static_cast<Acc<T>>(v);
  }
}

// c (m x p) = a (m x k) . b (k x p), rows [i0, i1).
template <typename T>
void gemm_loops(const T* a, const T* b, T* c, int64_t k, int64_t p, int64_t i0, int64_t i1) {
  constexpr int64_t kCols = 256;
  Acc<T> acc[kCols];
  for (int64_t i = i0; i < i1; ++i)
    for (int64_t j0 = 0; j0 < p; j0 += kCols) {
      int64_t w = std::min(kCols, p - j0);
      for (int64_t j = 0; j < w; ++j) acc[j] = Acc<T>(0);
      for (int64_t r = 0; r < k; ++r) {
        Acc<T> av = load(a[i * k + r]);
        const T* row = b + r * p + j0;
        for (int64_t j = 0; j < w; ++j) acc[j] = static_cast<Acc<T>>(acc[j] + av * load(row[j]));
      }
      for (int64_t j = 0; j < w; ++j) {
        if constexpr (is_half_v<T>) {
          c[i * p + j0 + j] = T(acc[j]);
        } else {
          c[i * p + j0 + j] = static_cast<T>(acc[j]);
        }
      }
    }
}

template <typename T>
void gemm(const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t p) {
  constexpr bool blas = std::is_same_v<T, float> || std::is_same_v<T, double>;
  if constexpr (blas) {
    if (m <= INT_MAX && k <= INT_MAX && p <= INT_MAX) {
      int M = static_cast<int>(m), Kk = static_cast<int>(k), Pp = static_cast<int>(p);
      if constexpr (std::is_same_v<T, float>) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, Pp, Kk, 1.0f, a, Kk, b, Pp, 0.0f, c, Pp);
      } else {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, Pp, Kk, 1.0, a, Kk, b, Pp, 0.0, c, Pp);
      }
      return;
    }
  }
  int64_t per_row = std::max<int64_t>(1, k * p);
  int64_t rows_per_task = std::max<int64_t>(1, kParallelGrain / per_row);
  int64_t tasks = (m + rows_per_task - 1) / rows_per_task;
  if (tasks <= 1) {
    gemm_loops<T>(a, b, c, k, p, 0, m);
    return;
  }
  parallel_for(
      tasks, [&](int64_t t) { gemm_loops<T>(a, b, c, k, p, t * rows_per_task, std::min(m, (t + 1) * rows_per_task)); });
}

// The column matrix lives in a per-thread buffer that only grows, so steady-state calls do not allocate.
std::byte* scratch(size_t bytes) {
  thread_local std::vector<std::byte> buf;
  if (buf.size() < bytes) buf.resize(bytes);
  return buf.data();
}

template <typename T>
void conv_run(const ConvGeometry& g, const void* xp, const void* wp, void* yp) {
  const T* x = static_cast<const T*>(xp);
  const T* w = static_cast<const T*>(wp);
  T* y = static_cast<T*>(yp);
  if (g.N == 0 || g.O == 0 || g.P == 0) return;
  if (g.K == 0) {
    std::memset(static_cast<void*>(y), 0, static_cast<size_t>(g.N * g.O * g.P) * sizeof(T));
    return;
  }
  T* col = g.direct ? nullptr : reinterpret_cast<T*>(scratch(static_cast<size_t>(g.K * g.P) * sizeof(T)));
  for (int64_t b = 0; b < g.N; ++b)
    for (int64_t gr = 0; gr < g.G; ++gr) {
      const T* xg = x + (b * g.C + gr * g.Cg) * g.Pin;
      const T* src = xg;
      if (!g.direct) {
        im2col<T>(g, xg, col);
        src = col;
      }
      gemm<T>(w + gr * g.Og * g.K, src, y + (b * g.O + gr * g.Og) * g.P, g.Og, g.K, g.P);
    }
}

using ConvFn = void (*)(const ConvGeometry&, const void*, const void*, void*);

class ConvKernel final : public Kernel {
 public:
  ConvKernel(const PrepareCtx& ctx, ConvFn fn, const ConvGeometry& attrs) : fn_(fn), base_(attrs) {
    x_ = ctx.in[0];
    w_ = ctx.in[1];
    y_ = ctx.out[0];
    xoff_ = ctx.operand(0).dim_off;
    woff_ = ctx.operand(1).dim_off;
    yoff_ = ctx.result().dim_off;
  }
  void run(const Frame& f) const override {
    ConvGeometry g = base_;
    const int64_t* xd = f.dims + xoff_;
    const int64_t* wd = f.dims + woff_;
    const int64_t* yd = f.dims + yoff_;
    g.N = xd[0];
    g.C = xd[1];
    g.O = wd[0];
    g.Cg = wd[1];
    g.Og = g.O / g.G;
    g.ksp = g.P = g.Pin = 1;
    bool unit = true;
    for (int d = 0; d < g.n; ++d) {
      g.in[d] = xd[d + 2];
      g.win[d] = wd[d + 2];
      g.out[d] = yd[d + 2];
      g.dil_in[d] = g.in[d] == 0 ? 0 : (g.in[d] - 1) * g.ld[d] + 1;
      g.ksp *= g.win[d];
      g.P *= g.out[d];
      g.Pin *= g.in[d];
      unit = unit && g.win[d] == 1 && g.stride[d] == 1 && g.ld[d] == 1 && g.lo[d] == 0 && g.out[d] == g.in[d];
    }
    g.K = g.Cg * g.ksp;
    g.direct = unit;
    fn_(g, f.ptr[x_], f.ptr[w_], f.ptr[y_]);
  }

 private:
  ConvFn fn_;
  ConvGeometry base_;
  uint32_t x_, w_, y_, xoff_, woff_, yoff_;
};

DimExpr dilate(const DimExpr& b, int64_t d) {
  if (d == 1) return b;
  return max(b * DimExpr(d) - DimExpr(d - 1), DimExpr(0));
}

// conv: the op's inference gives the result type the kernel relies on.
KernelPtr make_conv(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 2 || ctx.op.num_results() != 1) ctx.fail("expects two operands and one result");
  std::vector<TensorType> in = {ctx.operand(0).type(), ctx.operand(1).type()};
  std::vector<TensorType> want;
  try {
    want = infer_result_types(op_def(ctx.op), in, ctx.attrs());
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
  const ValueDesc& r = ctx.result();
  if (want.size() != 1 || want[0].dtype != r.dtype() || want[0].rank() != r.rank())
    ctx.fail("the result type " + r.type().to_string() + " differs from the inferred " +
             (want.empty() ? std::string("nothing") : want[0].to_string()));
  for (size_t i = 0; i < r.rank(); ++i)
    ctx.require_equal(want[0].shape[i], r.type().shape[i], "extent of result axis " + std::to_string(i));
  ConvGeometry g;
  g.n = static_cast<int>(r.rank()) - 2;
  if (g.n > kMaxSpatial) ctx.fail("the interpreter supports up to " + std::to_string(kMaxSpatial) + " spatial dims");
  const auto& strides = ctx.attr_ints("window_strides");
  const auto& padding = ctx.attr_ints("padding");
  const auto& ld = ctx.attr_ints("lhs_dilation");
  const auto& rd = ctx.attr_ints("rhs_dilation");
  g.G = ctx.attr_int("feature_group_count");
  const Shape& xs = ctx.operand(0).type().shape;
  const Shape& ws = ctx.operand(1).type().shape;
  if (g.G > 1) ctx.require_equal(DimExpr(g.G) * ws[1], xs[1], "lhs features = groups * rhs input features");
  for (int d = 0; d < g.n; ++d) {
    auto i = static_cast<size_t>(d);
    g.stride[d] = strides[i];
    g.lo[d] = padding[2 * i];
    g.ld[d] = ld[i];
    g.rd[d] = rd[i];
    DimExpr bound = dilate(xs[i + 2], ld[i]) + DimExpr(padding[2 * i]) + DimExpr(padding[2 * i + 1]);
    DimExpr window = dilate(ws[i + 2], rd[i]);
    // Inference gave a closed form only for static extents; symbolic ones need the window to fit.
    if (!(bound.is_const() && window.is_const()))
      ctx.require_less_equal(window, bound, "window of spatial dim " + std::to_string(d) + " within the padded lhs");
  }
  ConvFn fn = visit_dtype(r.dtype(), [](auto tag) -> ConvFn {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return nullptr;
    } else {
      return &conv_run<T>;
    }
  });
  if (!fn) ctx.fail("conv needs a numeric dtype, got bool");
  return std::make_unique<ConvKernel>(ctx, fn, g);
}

}  // namespace

void install_conv_kernels(KernelTable& t) { t.set("conv", &make_conv); }

}  // namespace evoxc::interp
