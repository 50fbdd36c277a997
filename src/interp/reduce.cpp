// Reduction instructions (reduce_* and argmax/argmin): fixed pairwise order, vectorisable rows and columns.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernel_table.h"
#include "program.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

constexpr int kMaxRank = 16;
constexpr int kLanes = 16;            // independent accumulators in a leaf, so the loop vectorises
constexpr int64_t kLeaf = 256;        // pairwise leaf size
constexpr int64_t kRowBlock = 65536;  // rows longer than this are split into fixed blocks
constexpr int64_t kMaxBlocks = 1024;
constexpr int64_t kColChunk = 1024;  // columns reduced together on the stack

enum class RedOp : uint8_t { Sum, Prod, Max, Min, Mean, Any, All };

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// The accumulator: floats in float32 or wider; sums and products of ints in unsigned
// (wrapping, and never narrower than 32 bits so uint16 * uint16 does not promote to int);
// max/min compare in the element's own type.
template <typename T, RedOp Op>
struct AccOf {
  using type = std::conditional_t<
      is_half_v<T>, float,
      std::conditional_t<std::is_floating_point_v<T> || std::is_same_v<T, bool> || Op == RedOp::Max || Op == RedOp::Min,
                         T, std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>>>;
};

template <typename T, RedOp Op>
struct Policy {
  using A = typename AccOf<T, Op>::type;
  static A load(T x) {
    if constexpr (is_half_v<T>) {
      return static_cast<float>(x);
    } else {
      return static_cast<A>(x);
    }
  }
  static A init() {
    if constexpr (Op == RedOp::Sum || Op == RedOp::Mean) return A(0);
    if constexpr (Op == RedOp::Prod) return A(1);
    if constexpr (Op == RedOp::Any) return A(false);
    if constexpr (Op == RedOp::All) return A(true);
    if constexpr (Op == RedOp::Max) {
      if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
      return std::numeric_limits<A>::lowest();
    }
    if constexpr (Op == RedOp::Min) {
      if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
      return std::numeric_limits<A>::max();
    }
    return A(0);
  }
  static A comb(A a, A b) {
    if constexpr (Op == RedOp::Sum || Op == RedOp::Mean) {
      return static_cast<A>(a + b);
    } else if constexpr (Op == RedOp::Prod) {
      return static_cast<A>(a * b);
    } else if constexpr (Op == RedOp::Any) {
      return a || b;
    } else if constexpr (Op == RedOp::All) {
      return a && b;
    } else if constexpr (Op == RedOp::Max) {
      if constexpr (std::is_floating_point_v<A>) return (a > b || a != a) ? a : b;  // NaN propagates
      return a > b ? a : b;
    } else {
      if constexpr (std::is_floating_point_v<A>) return (a < b || a != a) ? a : b;
      return a < b ? a : b;
    }
  }
  static T store(A a, int64_t count) {
    if constexpr (Op == RedOp::Mean) a = static_cast<A>(a / static_cast<A>(count));
    (void)count;
    if constexpr (is_half_v<T>) {
      return T(a);
    } else {
      return static_cast<T>(a);
    }
  }
};

// Pairwise reduction of a contiguous run; the split points depend only on n.
template <typename P, typename T>
typename P::A pairwise(const T* x, int64_t n) {
  using A = typename P::A;
  if (n <= kLeaf) {
    A acc[kLanes];
    for (int j = 0; j < kLanes; ++j) acc[j] = P::init();
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int j = 0; j < kLanes; ++j) acc[j] = P::comb(acc[j], P::load(x[i + j]));
    for (int w = kLanes / 2; w >= 1; w /= 2)
      for (int j = 0; j < w; ++j) acc[j] = P::comb(acc[j], acc[j + w]);
    A r = acc[0];
    for (; i < n; ++i) r = P::comb(r, P::load(x[i]));
    return r;
  }
  int64_t half = n / 2 / kLanes * kLanes;
  return P::comb(pairwise<P>(x, half), pairwise<P>(x + half, n - half));
}

// Pairwise combination of accumulators (the partials of a blocked row).
template <typename P>
typename P::A combine_partials(const typename P::A* a, int64_t n) {
  if (n == 1) return a[0];
  int64_t half = n / 2;
  return P::comb(combine_partials<P>(a, half), combine_partials<P>(a + half, n - half));
}

// One row: blocks of a size fixed by n alone, so the result never depends on the thread count.
template <typename P, typename T>
typename P::A reduce_row(const T* x, int64_t n, bool parallel) {
  using A = typename P::A;
  if (n <= kRowBlock) return pairwise<P>(x, n);
  int64_t block = kRowBlock;
  if ((n + block - 1) / block > kMaxBlocks) block = ((n + kMaxBlocks - 1) / kMaxBlocks + 63) / 64 * 64;
  int64_t nb = (n + block - 1) / block;
  A partial[kMaxBlocks] = {};  // zeroed: GCC cannot see that combine_partials reads only the nb written
  auto one = [&](int64_t b) { partial[b] = pairwise<P>(x + b * block, std::min(block, n - b * block)); };
  if (parallel) {
    parallel_for(nb, one);
  } else {
    for (int64_t b = 0; b < nb; ++b) one(b);
  }
  return combine_partials<P>(partial, nb);
}

// Columns [j0, j0 + w) of an (r, inner) slab, pairwise over rows; `acc` gets w results.
template <typename P, typename T>
void reduce_cols(const T* x, int64_t r, int64_t inner, int64_t j0, int64_t w, typename P::A* acc) {
  using A = typename P::A;
  if (r <= 64) {
    A* __restrict a = acc;
    for (int64_t j = 0; j < w; ++j) a[j] = P::init();
    int64_t t = 0;
    // Four rows per pass, combined left to right: the same order as one row at a time,
    // with a quarter of the accumulator traffic.
    for (; t + 4 <= r; t += 4) {
      const T* __restrict r0 = x + t * inner + j0;
      const T* __restrict r1 = r0 + inner;
      const T* __restrict r2 = r1 + inner;
      const T* __restrict r3 = r2 + inner;
      for (int64_t j = 0; j < w; ++j)
        a[j] = P::comb(P::comb(P::comb(P::comb(a[j], P::load(r0[j])), P::load(r1[j])), P::load(r2[j])), P::load(r3[j]));
    }
    for (; t < r; ++t) {
      const T* __restrict row = x + t * inner + j0;
      for (int64_t j = 0; j < w; ++j) a[j] = P::comb(a[j], P::load(row[j]));
    }
    return;
  }
  int64_t h = r / 2;
  reduce_cols<P>(x, h, inner, j0, w, acc);
  A tmp[kColChunk];
  reduce_cols<P>(x + h * inner, r - h, inner, j0, w, tmp);
  for (int64_t j = 0; j < w; ++j) acc[j] = P::comb(acc[j], tmp[j]);
}

// Reduction geometry after dropping unit axes and merging neighbours of one kind.
struct RedGeometry {
  int rank = 0;
  int64_t ext[kMaxRank];
  bool red[kMaxRank];
  int64_t in_count = 1;   // elements reduced into each output
  int64_t out_count = 1;  // outputs
};

void compute_red_geometry(const int64_t* dims, int rank, const bool* reduced, RedGeometry& g) {
  g.rank = 0;
  g.in_count = 1;
  g.out_count = 1;
  for (int i = 0; i < rank; ++i) {
    (reduced[i] ? g.in_count : g.out_count) *= dims[i];
    if (dims[i] == 1) continue;
    if (g.rank > 0 && g.red[g.rank - 1] == reduced[i]) {
      g.ext[g.rank - 1] *= dims[i];
    } else {
      g.ext[g.rank] = dims[i];
      g.red[g.rank] = reduced[i];
      ++g.rank;
    }
  }
}

template <typename P, typename T>
void run_reduce(const RedGeometry& g, const T* x, T* out) {
  using A = typename P::A;
  const int64_t count = g.in_count;
  if (g.out_count == 0) return;
  if (g.in_count == 0) {
    for (int64_t i = 0; i < g.out_count; ++i) out[i] = P::store(P::init(), 0);
    return;
  }
  const int r = g.rank;
  // [K, R], [R] or [K] or []: one contiguous run per output.
  if (r == 0 || (r == 1) || (r == 2 && !g.red[0] && g.red[1])) {
    int64_t rows = g.out_count, n = count;
    if (rows == 1) {
      out[0] = P::store(reduce_row<P>(x, n, true), count);
      return;
    }
    int64_t rows_per_task = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
    int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
    auto body = [&](int64_t t) {
      int64_t e = std::min(rows, (t + 1) * rows_per_task);
      for (int64_t q = t * rows_per_task; q < e; ++q) out[q] = P::store(reduce_row<P>(x + q * n, n, false), count);
    };
    if (rows * n < kParallelGrain) {
      for (int64_t t = 0; t < tasks; ++t) body(t);
    } else {
      parallel_for(tasks, body);
    }
    return;
  }
  // [R, K] or [K, R, K]: columns.
  if ((r == 2 && g.red[0]) || (r == 3 && !g.red[0] && g.red[1])) {
    int64_t outer = r == 3 ? g.ext[0] : 1;
    int64_t rr = g.ext[r - 2], inner = g.ext[r - 1];
    // Each column's order is fixed whatever the chunk width, so the width may follow the
    // thread count: wide chunks stream rows, narrower ones give every thread work.
    int64_t nt = (outer == 1 && rr * inner >= kParallelGrain) ? num_threads() : 1;
    int64_t cw = std::clamp<int64_t>((inner + nt - 1) / nt, 64, kColChunk);
    int64_t chunks = (inner + cw - 1) / cw;
    auto body = [&](int64_t t) {
      int64_t o = t / chunks, c = t % chunks;
      int64_t j0 = c * cw, w = std::min(cw, inner - j0);
      A acc[kColChunk];
      reduce_cols<P>(x + o * rr * inner, rr, inner, j0, w, acc);
      T* dst = out + o * inner + j0;
      for (int64_t j = 0; j < w; ++j) dst[j] = P::store(acc[j], count);
    };
    if (outer * rr * inner < kParallelGrain) {
      for (int64_t t = 0; t < outer * chunks; ++t) body(t);
    } else {
      parallel_for(outer * chunks, body);
    }
    return;
  }
  // Anything else: walk each output's reduced positions in row-major order.
  int64_t stride[kMaxRank];
  int64_t s = 1;
  for (int i = r - 1; i >= 0; --i) {
    stride[i] = s;
    s *= g.ext[i];
  }
  int kept[kMaxRank], reds[kMaxRank], nk = 0, nr = 0;
  for (int i = 0; i < r; ++i) (g.red[i] ? reds[nr++] : kept[nk++]) = i;
  auto body = [&](int64_t o) {
    int64_t base = 0, q = o;
    for (int k = nk - 1; k >= 0; --k) {
      base += (q % g.ext[kept[k]]) * stride[kept[k]];
      q /= g.ext[kept[k]];
    }
    int64_t idx[kMaxRank] = {};
    A acc = P::init();
    int64_t off = base;
    for (int64_t t = 0; t < count; ++t) {
      acc = P::comb(acc, P::load(x[off]));
      for (int k = nr - 1; k >= 0; --k) {
        off += stride[reds[k]];
        if (++idx[k] < g.ext[reds[k]]) break;
        off -= stride[reds[k]] * g.ext[reds[k]];
        idx[k] = 0;
      }
    }
    out[o] = P::store(acc, count);
  };
  if (g.out_count * count < kParallelGrain) {
    for (int64_t o = 0; o < g.out_count; ++o) body(o);
  } else {
    parallel_for(g.out_count, body);
  }
}

using ReduceFn = void (*)(const RedGeometry&, const void*, void*);

template <typename T, RedOp Op>
void reduce_entry(const RedGeometry& g, const void* x, void* out) {
  run_reduce<Policy<T, Op>>(g, static_cast<const T*>(x), static_cast<T*>(out));
}

template <RedOp Op>
ReduceFn pick(DType t) {
  return visit_dtype(t, [](auto tag) -> ReduceFn {
    using T = decltype(tag);
    return &reduce_entry<T, Op>;
  });
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(ReduceFn fn, const PrepareCtx& ctx, std::vector<bool> reduced) : fn_(fn) {
    in_ = ctx.in[0];
    out_ = ctx.out[0];
    rank_ = static_cast<int>(ctx.operand(0).rank());
    off_ = ctx.operand(0).dim_off;
    for (int i = 0; i < rank_; ++i) red_[i] = reduced[static_cast<size_t>(i)];
    if (ctx.operand(0).is_static) {
      compute_red_geometry(ctx.static_dims(in_), rank_, red_, geo_);
      static_ = true;
    }
  }
  void run(const Frame& f) const override {
    RedGeometry local;
    const RedGeometry* g = &geo_;
    if (!static_) {
      compute_red_geometry(f.dims + off_, rank_, red_, local);
      g = &local;
    }
    fn_(*g, f.ptr[in_], f.ptr[out_]);
  }

 private:
  ReduceFn fn_;
  uint32_t in_, out_, off_;
  int rank_;
  bool red_[kMaxRank] = {};
  bool static_ = false;
  RedGeometry geo_;
};

// ---------------------------------------------------------------------------------------------
// argmax / argmin

struct ArgGeometry {
  int64_t outer, n, inner;
};

template <typename T>
auto arg_load(T x) {
  if constexpr (is_half_v<T>) {
    return static_cast<float>(x);
  } else if constexpr (std::is_same_v<T, bool>) {
    return static_cast<int>(x);
  } else {
    return x;
  }
}

template <typename V>
bool is_nan_value(V v) {
  if constexpr (std::is_floating_point_v<V>) {
    return v != v;
  } else {
    (void)v;
    return false;
  }
}

// True when v replaces best: the first NaN wins, then strictly greater (max) or smaller (min).
template <bool IsMax, typename V>
bool better(V v, V best) {
  if (is_nan_value(best)) return false;
  if (is_nan_value(v)) return true;
  return IsMax ? v > best : v < best;
}

template <typename T, bool IsMax, typename I>
void run_arg(const ArgGeometry& g, const T* x, I* out) {
  using V = decltype(arg_load(T{}));
  constexpr int64_t kChunk = 64;
  if (g.n == 0) return;  // only reached when there are no outputs (checked at run time)
  int64_t chunks = (g.inner + kChunk - 1) / kChunk;
  auto body = [&](int64_t t) {
    int64_t o = t / chunks, j0 = (t % chunks) * kChunk, w = std::min(kChunk, g.inner - j0);
    const T* base = x + o * g.n * g.inner + j0;
    V best[kChunk];
    int64_t idx[kChunk];
    for (int64_t j = 0; j < w; ++j) {
      best[j] = arg_load(base[j]);
      idx[j] = 0;
    }
    for (int64_t a = 1; a < g.n; ++a) {
      const T* row = base + a * g.inner;
      for (int64_t j = 0; j < w; ++j) {
        V v = arg_load(row[j]);
        if (better<IsMax>(v, best[j])) {
          best[j] = v;
          idx[j] = a;
        }
      }
    }
    I* dst = out + o * g.inner + j0;
    for (int64_t j = 0; j < w; ++j) dst[j] = static_cast<I>(idx[j]);
  };
  int64_t tasks = g.outer * chunks;
  if (g.outer * g.n * g.inner < kParallelGrain) {
    for (int64_t t = 0; t < tasks; ++t) body(t);
  } else {
    parallel_for(tasks, body);
  }
}

using ArgFn = void (*)(const ArgGeometry&, const void*, void*);

template <typename T, bool IsMax, typename I>
void arg_entry(const ArgGeometry& g, const void* x, void* out) {
  run_arg<T, IsMax, I>(g, static_cast<const T*>(x), static_cast<I*>(out));
}

template <bool IsMax, typename I>
ArgFn pick_arg(DType t) {
  return visit_dtype(t, [](auto tag) -> ArgFn {
    using T = decltype(tag);
    return &arg_entry<T, IsMax, I>;
  });
}

class ArgKernel final : public Kernel {
 public:
  ArgKernel(ArgFn fn, const PrepareCtx& ctx, int axis) : fn_(fn), axis_(axis) {
    in_ = ctx.in[0];
    out_ = ctx.out[0];
    rank_ = static_cast<int>(ctx.operand(0).rank());
    off_ = ctx.operand(0).dim_off;
  }
  void run(const Frame& f) const override {
    const int64_t* d = f.dims + off_;
    ArgGeometry g{1, d[axis_], 1};
    for (int i = 0; i < axis_; ++i) g.outer *= d[i];
    for (int i = axis_ + 1; i < rank_; ++i) g.inner *= d[i];
    fn_(g, f.ptr[in_], f.ptr[out_]);
  }

 private:
  ArgFn fn_;
  int axis_;
  uint32_t in_, out_, off_;
  int rank_;
};

// Checks keepdims/axes against the result type.
void require_reduced_shape(PrepareCtx& ctx, const std::vector<bool>& reduced, bool keepdims) {
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& r = ctx.result();
  size_t want_rank = 0;
  for (size_t i = 0; i < a.rank(); ++i) want_rank += (keepdims || !reduced[i]) ? 1 : 0;
  if (r.rank() != want_rank)
    ctx.fail("the result has rank " + std::to_string(r.rank()) + ", but the reduction gives rank " +
             std::to_string(want_rank));
  size_t k = 0;
  for (size_t i = 0; i < a.rank(); ++i) {
    if (reduced[i] && !keepdims) continue;
    ctx.require_equal(reduced[i] ? DimExpr(1) : a.type().shape[i], r.type().shape[k],
                      "extent of result axis " + std::to_string(k));
    ++k;
  }
}

std::string dt(DType t) { return std::string(dtype_name(t)); }

// reduce_<op> over the `axes` attribute; dtypes in class C.
template <RedOp Op, DTypeClass C>
KernelPtr make_reduce(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 1 || ctx.op.num_results() != 1) ctx.fail("expects one operand and one result");
  const ValueDesc& a = ctx.operand(0);
  DType t = a.dtype();
  if (ctx.result().dtype() != t) ctx.fail("the result dtype must be the operand's (" + dt(t) + ")");
  if (a.rank() > static_cast<uint32_t>(kMaxRank))
    ctx.fail("the interpreter reduces tensors up to rank " + std::to_string(kMaxRank));
  const auto& axes = ctx.attr_ints("axes");
  bool keepdims = ctx.attr_bool("keepdims");
  std::vector<bool> reduced(a.rank(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(a.rank()) || (i > 0 && axes[i] <= axes[i - 1]))
      ctx.fail("axes must be sorted, unique and in [0, " + std::to_string(a.rank()) + ")");
    reduced[static_cast<size_t>(axes[i])] = true;
  }
  require_reduced_shape(ctx, reduced, keepdims);
  if (!dtype_in_class(t, C)) ctx.fail("no kernel for dtype " + dt(t));
  return std::make_unique<ReduceKernel>(pick<Op>(t), ctx, reduced);
}

template <bool IsMax>
KernelPtr make_argreduce(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 1 || ctx.op.num_results() != 1) ctx.fail("expects one operand and one result");
  const ValueDesc& a = ctx.operand(0);
  int64_t axis = ctx.attr_int("axis");
  bool keepdims = ctx.attr_bool("keepdims");
  DType it = ctx.result().dtype();
  if (ctx.op.attributes().count("index_dtype") && ctx.attr_dtype("index_dtype") != it)
    ctx.fail("the result dtype differs from index_dtype");
  if (it != DType::I32 && it != DType::I64) ctx.fail("index_dtype must be int32 or int64, got " + dt(it));
  if (axis < 0 || axis >= static_cast<int64_t>(a.rank()))
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(a.rank()));
  std::vector<bool> reduced(a.rank(), false);
  reduced[static_cast<size_t>(axis)] = true;
  require_reduced_shape(ctx, reduced, keepdims);
  const DimExpr& n = a.type().shape[static_cast<size_t>(axis)];
  if (n.is_const() && n.value() == 0) ctx.fail("argmax/argmin over an empty axis has no answer");
  // Over a symbolic axis the emptiness check runs per call (only when the result has elements).
  DimExpr others(1);
  for (size_t i = 0; i < a.rank(); ++i)
    if (static_cast<int64_t>(i) != axis) others = others * a.type().shape[i];
  ctx.require_less_equal(min(others, DimExpr(1)), n,
                         "extent of axis " + std::to_string(axis) + " (argmax/argmin need at least one element)");
  ArgFn fn = it == DType::I32 ? pick_arg<IsMax, int32_t>(a.dtype()) : pick_arg<IsMax, int64_t>(a.dtype());
  return std::make_unique<ArgKernel>(fn, ctx, static_cast<int>(axis));
}

}  // namespace

void install_reduce_kernels(KernelTable& t) {
  t.set("reduce_sum", &make_reduce<RedOp::Sum, DTypeClass::Numeric>);
  t.set("reduce_prod", &make_reduce<RedOp::Prod, DTypeClass::Numeric>);
  t.set("reduce_max", &make_reduce<RedOp::Max, DTypeClass::Any>);
  t.set("reduce_min", &make_reduce<RedOp::Min, DTypeClass::Any>);
  t.set("reduce_mean", &make_reduce<RedOp::Mean, DTypeClass::Float>);
  t.set("reduce_any", &make_reduce<RedOp::Any, DTypeClass::Bool>);
  t.set("reduce_all", &make_reduce<RedOp::All, DTypeClass::Bool>);
  t.set("argmax", &make_argreduce<true>);
  t.set("argmin", &make_argreduce<false>);
}

}  // namespace evoxc::interp
