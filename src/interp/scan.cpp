// Interpreter kernels of the scan family: cumsum, cumprod, cummax, cummin and reduce_logsumexp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernel_table.h"
#include "program.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

constexpr int kMaxRank = 16;
constexpr int64_t kCols = 64;  // columns scanned together, so rows stream through the cache

enum class ScanOp : uint8_t { Sum, Prod, Max, Min };

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Accumulator: half floats in float32 (rounded once per stored element); ints wrap through unsigned arithmetic.
template <typename T, ScanOp Op>
struct ScanPolicy {
  using A = std::conditional_t<is_half_v<T>, float, T>;
  static A load(T x) {
    if constexpr (is_half_v<T>) {
      return static_cast<float>(x);
    } else {
      return x;
    }
  }
  static T store(A a) {
    if constexpr (is_half_v<T>) {
      return T(a);
    } else {
      return a;
    }
  }
  static A comb(A a, A b) {
    if constexpr (Op == ScanOp::Max || Op == ScanOp::Min) {
      if constexpr (std::is_floating_point_v<A>) {
        if (a != a) return a;  // NaN propagates
        if (b != b) return b;
      }
      if constexpr (Op == ScanOp::Max) return a > b ? a : b;
      return a < b ? a : b;
    } else if constexpr (std::is_same_v<A, bool>) {
      return Op == ScanOp::Sum ? (a || b) : (a && b);  // not reached: cumsum/cumprod take numeric operands
    } else if constexpr (std::is_integral_v<A>) {
      using U = std::conditional_t<(sizeof(A) < 4), uint32_t, std::make_unsigned_t<A>>;
      U r = Op == ScanOp::Sum ? static_cast<U>(static_cast<U>(a) + static_cast<U>(b))
                              : static_cast<U>(static_cast<U>(a) * static_cast<U>(b));
      return static_cast<A>(r);
    } else {
      return Op == ScanOp::Sum ? a + b : a * b;
    }
  }
};

struct ScanGeometry {
  int64_t outer = 1, n = 1, inner = 1;
};

using ScanFn = void (*)(const ScanGeometry&, const void*, void*, bool reverse);

template <typename T, ScanOp Op>
void scan_entry(const ScanGeometry& g, const void* xv, void* ov, bool reverse) {
  using P = ScanPolicy<T, Op>;
  using A = typename P::A;
  const T* x = static_cast<const T*>(xv);
  T* out = static_cast<T*>(ov);
  if (g.n == 0) return;
  int64_t chunks = (g.inner + kCols - 1) / kCols;
  auto body = [&](int64_t t) {
    int64_t o = t / chunks, j0 = (t % chunks) * kCols, w = std::min(kCols, g.inner - j0);
    const T* src = x + o * g.n * g.inner + j0;
    T* dst = out + o * g.n * g.inner + j0;
    A acc[kCols];
    for (int64_t s = 0; s < g.n; ++s) {
      int64_t a = reverse ? g.n - 1 - s : s;
      const T* row = src + a * g.inner;
      T* orow = dst + a * g.inner;
      for (int64_t j = 0; j < w; ++j) {
        acc[j] = s == 0 ? P::load(row[j]) : P::comb(acc[j], P::load(row[j]));
        orow[j] = P::store(acc[j]);
      }
    }
  };
  int64_t tasks = g.outer * chunks;
  if (g.outer * g.n * g.inner < kParallelGrain) {
    for (int64_t t = 0; t < tasks; ++t) body(t);
  } else {
    parallel_for(tasks, body);
  }
}

template <ScanOp Op>
ScanFn pick_scan(DType t) {
  return visit_dtype(t, [](auto tag) -> ScanFn { return &scan_entry<decltype(tag), Op>; });
}

class ScanKernel final : public Kernel {
 public:
  ScanKernel(ScanFn fn, uint32_t in, uint32_t out, uint32_t off, int rank, int axis, bool reverse)
      : fn_(fn), in_(in), out_(out), off_(off), rank_(rank), axis_(axis), reverse_(reverse) {}
  void run(const Frame& f) const override {
    const int64_t* d = f.dims + off_;
    ScanGeometry g;
    g.n = d[axis_];
    for (int i = 0; i < axis_; ++i) g.outer *= d[i];
    for (int i = axis_ + 1; i < rank_; ++i) g.inner *= d[i];
    fn_(g, f.ptr[in_], f.ptr[out_], reverse_);
  }

 private:
  ScanFn fn_;
  uint32_t in_, out_, off_;
  int rank_, axis_;
  bool reverse_;
};

template <ScanOp Op>
KernelPtr make_scan(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 1 || ctx.op.num_results() != 1) ctx.fail("expects one operand and one result");
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& r = ctx.result();
  DType t = a.dtype();
  if (r.dtype() != t || r.rank() != a.rank()) ctx.fail("the result must have the operand's type");
  int64_t axis = ctx.attr_int("axis");
  bool reverse = ctx.attr_bool("reverse");
  if (axis < 0 || axis >= static_cast<int64_t>(a.rank()))
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(a.rank()));
  for (size_t i = 0; i < a.rank(); ++i)
    ctx.require_equal(a.type().shape[i], r.type().shape[i], "extent of result axis " + std::to_string(i));
  // cumsum and cumprod take numeric operands; cummax and cummin any.
  constexpr DTypeClass kClass = Op == ScanOp::Sum || Op == ScanOp::Prod ? DTypeClass::Numeric : DTypeClass::Any;
  if (!dtype_in_class(t, kClass)) ctx.fail("no kernel for dtype " + std::string(dtype_name(t)));
  ScanFn fn = pick_scan<Op>(t);
  return std::make_unique<ScanKernel>(fn, ctx.in[0], ctx.out[0], a.dim_off, static_cast<int>(a.rank()),
                                      static_cast<int>(axis), reverse);
}

// ---------------------------------------------------------------------------------------------
// reduce_logsumexp: per output, a max pass and a sum-of-exp pass in double over its reduced positions.

struct LseSpec {
  int rank = 0;
  bool red[kMaxRank] = {};
  uint32_t off = 0;
};

template <typename T>
double to_double(T v) {
  if constexpr (is_half_v<T>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

using LseFn = void (*)(const LseSpec&, const int64_t* dims, const void*, void*);

template <typename T>
void lse_entry(const LseSpec& sp, const int64_t* d, const void* xv, void* ov) {
  const T* x = static_cast<const T*>(xv);
  T* out = static_cast<T*>(ov);
  int64_t stride[kMaxRank];
  int64_t s = 1;
  for (int i = sp.rank - 1; i >= 0; --i) {
    stride[i] = s;
    s *= d[i];
  }
  int kept[kMaxRank], reds[kMaxRank], nk = 0, nr = 0;
  int64_t nout = 1, count = 1;
  for (int i = 0; i < sp.rank; ++i) {
    if (sp.red[i]) {
      reds[nr++] = i;
      count *= d[i];
    } else {
      kept[nk++] = i;
      nout *= d[i];
    }
  }
  auto walk = [&](int64_t base, auto&& fn) {
    int64_t idx[kMaxRank] = {};
    int64_t off = base;
    for (int64_t t = 0; t < count; ++t) {
      fn(to_double(x[off]));
      for (int k = nr - 1; k >= 0; --k) {
        off += stride[reds[k]];
        if (++idx[k] < d[reds[k]]) break;
        off -= stride[reds[k]] * d[reds[k]];
        idx[k] = 0;
      }
    }
  };
  auto body = [&](int64_t o) {
    int64_t base = 0, q = o;
    for (int k = nk - 1; k >= 0; --k) {
      base += (q % d[kept[k]]) * stride[kept[k]];
      q /= d[kept[k]];
    }
    double m = -std::numeric_limits<double>::infinity();
    bool nan = false;
    walk(base, [&](double v) {
      if (v != v) nan = true;
      if (v > m) m = v;
    });
    double r = m;
    if (nan) {
      r = std::numeric_limits<double>::quiet_NaN();
    } else if (std::isfinite(m)) {
      double sum = 0;
      walk(base, [&](double v) { sum += std::exp(v - m); });
      r = m + std::log(sum);
    }
    // m = -inf (empty set or all -inf) gives -inf; m = +inf gives +inf.
    out[o] = static_cast<T>(r);
  };
  if (nout == 0) return;
  if (nout * count < kParallelGrain) {
    for (int64_t o = 0; o < nout; ++o) body(o);
  } else {
    parallel_for(nout, body);
  }
}

class LseKernel final : public Kernel {
 public:
  LseKernel(LseFn fn, const LseSpec& sp, uint32_t in, uint32_t out) : fn_(fn), sp_(sp), in_(in), out_(out) {}
  void run(const Frame& f) const override { fn_(sp_, f.dims + sp_.off, f.ptr[in_], f.ptr[out_]); }

 private:
  LseFn fn_;
  LseSpec sp_;
  uint32_t in_, out_;
};

template <typename T>
void lse_dispatch(const LseSpec& sp, const int64_t* d, const void* x, void* out) {
  lse_entry<T>(sp, d, x, out);
}

KernelPtr make_logsumexp(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 1 || ctx.op.num_results() != 1) ctx.fail("expects one operand and one result");
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& r = ctx.result();
  DType t = a.dtype();
  if (!is_float(t)) ctx.fail("no kernel for dtype " + std::string(dtype_name(t)) + "; logsumexp takes floats");
  if (r.dtype() != t) ctx.fail("the result dtype must be the operand's");
  if (a.rank() > static_cast<uint32_t>(kMaxRank))
    ctx.fail("the interpreter reduces tensors up to rank " + std::to_string(kMaxRank));
  const auto& axes = ctx.attr_ints("axes");
  bool keepdims = ctx.attr_bool("keepdims");
  LseSpec sp;
  sp.rank = static_cast<int>(a.rank());
  sp.off = a.dim_off;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(a.rank()) || (i > 0 && axes[i] <= axes[i - 1]))
      ctx.fail("axes must be sorted, unique and in [0, " + std::to_string(a.rank()) + ")");
    sp.red[axes[i]] = true;
  }
  size_t want = 0;
  for (int i = 0; i < sp.rank; ++i) want += (keepdims || !sp.red[i]) ? 1 : 0;
  if (r.rank() != want) ctx.fail("the result rank differs from the reduction's");
  size_t k = 0;
  for (int i = 0; i < sp.rank; ++i) {
    if (sp.red[i] && !keepdims) continue;
    ctx.require_equal(sp.red[i] ? DimExpr(1) : a.type().shape[static_cast<size_t>(i)], r.type().shape[k],
                      "extent of result axis " + std::to_string(k));
    ++k;
  }
  LseFn fn = nullptr;
  switch (t) {
    case DType::F16: fn = &lse_dispatch<float16>; break;
    case DType::BF16: fn = &lse_dispatch<bfloat16>; break;
    case DType::F32: fn = &lse_dispatch<float>; break;
    default: fn = &lse_dispatch<double>; break;
  }
  return std::make_unique<LseKernel>(fn, sp, ctx.in[0], ctx.out[0]);
}

}  // namespace

void install_scan_kernels(KernelTable& t) {
  t.set("cumsum", &make_scan<ScanOp::Sum>);
  t.set("cumprod", &make_scan<ScanOp::Prod>);
  t.set("cummax", &make_scan<ScanOp::Max>);
  t.set("cummin", &make_scan<ScanOp::Min>);
  t.set("reduce_logsumexp", &make_logsumexp);
}

}  // namespace evoxc::interp
