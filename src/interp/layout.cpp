// Interpreter kernels of the layout family (see src/ops/layout.cpp for the ops): pad, flip, roll, tile and repeat
// as per-axis index maps over raw element bytes; tril/triu, diagonal, one_hot, arange and linspace.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "evoxc/ops/op_def.h"
#include "kernel_table.h"
#include "program.h"
#include "scalar_convert.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

constexpr int kMaxRank = 16;

int64_t pmod(int64_t a, int64_t n) {
  int64_t r = a % n;
  return r < 0 ? r + n : r;
}

// How one result axis reads its operand axis: source index for result index j, or -1 for the fill value.
struct AxisMap {
  enum class Kind : uint8_t { Identity, Constant, Edge, Reflect, Symmetric, Flip, Roll, Tile, Repeat, RepeatList };
  Kind kind = Kind::Identity;
  int64_t n = 0;                    // operand extent
  int64_t a = 0;                    // low (pad), shift (roll), count (repeat)
  int64_t b = 0;                    // interior (pad)
  const int64_t* prefix = nullptr;  // RepeatList: cumulative counts, n entries

  int64_t map(int64_t j) const {
    switch (kind) {
      case Kind::Identity: return j;
      case Kind::Constant: {
        int64_t q = j - a;
        if (q < 0) return -1;
        if (b > 0) {
          if (q % (b + 1) != 0) return -1;
          q /= b + 1;
        }
        return q < n ? q : -1;
      }
      case Kind::Edge: return n == 0 ? -1 : std::clamp<int64_t>(j - a, 0, n - 1);
      case Kind::Reflect: {
        if (n <= 1) return n == 0 ? -1 : 0;
        int64_t p = 2 * (n - 1), r = pmod(j - a, p);
        return r < n ? r : p - r;
      }
      case Kind::Symmetric: {
        if (n == 0) return -1;
        int64_t p = 2 * n, r = pmod(j - a, p);
        return r < n ? r : p - 1 - r;
      }
      case Kind::Flip: return n - 1 - j;
      case Kind::Roll: return pmod(j - a, n);
      case Kind::Tile: return j % n;
      case Kind::Repeat: return j / a;
      case Kind::RepeatList: return std::upper_bound(prefix, prefix + n, j) - prefix;
    }
    return -1;
  }
};

struct MapGeometry {
  int rank = 0;
  int64_t out[kMaxRank];   // result extents
  int64_t istr[kMaxRank];  // operand element strides
  AxisMap m[kMaxRank];
};

// Result rows [r0, r1) (a row runs along the last axis) of an index-map copy with ES-byte elements.
template <size_t ES>
void map_rows(const MapGeometry& g, const char* src, char* dst, const unsigned char* fill, int64_t r0, int64_t r1) {
  const int last = g.rank - 1;
  const int64_t inner = g.out[last];
  const AxisMap& im = g.m[last];
  for (int64_t r = r0; r < r1; ++r) {
    char* d = dst + r * inner * static_cast<int64_t>(ES);
    int64_t q = r, off = 0;
    bool filled = false;
    for (int i = last - 1; i >= 0; --i) {
      int64_t s = g.m[i].map(q % g.out[i]);
      q /= g.out[i];
      if (s < 0) filled = true;
      off += s * g.istr[i];
    }
    if (filled) {
      for (int64_t j = 0; j < inner; ++j) std::memcpy(d + j * static_cast<int64_t>(ES), fill, ES);
      continue;
    }
    const char* s = src + off * static_cast<int64_t>(ES);
    if (im.kind == AxisMap::Kind::Identity) {
      std::memcpy(d, s, static_cast<size_t>(inner) * ES);
      continue;
    }
    for (int64_t j = 0; j < inner; ++j) {
      int64_t k = im.map(j);
      std::memcpy(d + j * static_cast<int64_t>(ES), k < 0 ? reinterpret_cast<const char*>(fill) : s + k * int64_t{ES},
                  ES);
    }
  }
}

template <size_t ES>
void run_map(const MapGeometry& g, const char* src, char* dst, const unsigned char* fill) {
  int64_t inner = g.out[g.rank - 1], rows = 1;
  for (int i = 0; i < g.rank - 1; ++i) rows *= g.out[i];
  if (rows == 0 || inner == 0) return;
  if (rows * inner < kParallelGrain || rows == 1) {
    map_rows<ES>(g, src, dst, fill, 0, rows);
    return;
  }
  int64_t per = std::max<int64_t>(1, kParallelGrain / inner);
  parallel_for((rows + per - 1) / per,
               [&](int64_t t) { map_rows<ES>(g, src, dst, fill, t * per, std::min(rows, (t + 1) * per)); });
}

using MapFn = void (*)(const MapGeometry&, const char*, char*, const unsigned char*);
MapFn map_fn(size_t es) {
  switch (es) {
    case 1: return &run_map<1>;
    case 2: return &run_map<2>;
    case 4: return &run_map<4>;
    default: return &run_map<8>;
  }
}

// pad, flip, roll, tile, repeat. A rank-0 operand is handled as rank 1 of extent 1.
class MapKernel final : public Kernel {
 public:
  struct Axis {
    AxisMap::Kind kind = AxisMap::Kind::Identity;
    int64_t a = 0, b = 0;
  };
  MapKernel(const PrepareCtx& ctx, std::vector<Axis> axes, std::vector<int64_t> prefix)
      : fn_(map_fn(size_of(ctx.result().dtype()))),
        es_(size_of(ctx.result().dtype())),
        axes_(std::move(axes)),
        prefix_(std::move(prefix)) {
    in_ = ctx.in[0];
    out_ = ctx.out[0];
    fill_in_ = ctx.in.size() > 1 ? static_cast<int64_t>(ctx.in[1]) : -1;
    rank_ = static_cast<int>(ctx.result().rank());
    ioff_ = ctx.operand(0).dim_off;
    ooff_ = ctx.result().dim_off;
  }
  void run(const Frame& f) const override {
    MapGeometry g;
    const int64_t* id = f.dims + ioff_;
    const int64_t* od = f.dims + ooff_;
    if (rank_ == 0) {
      g.rank = 1;
      g.out[0] = 1;
      g.istr[0] = 1;
    } else {
      g.rank = rank_;
      int64_t s = 1;
      for (int i = rank_ - 1; i >= 0; --i) {
        g.out[i] = od[i];
        g.istr[i] = s;
        s *= id[i];
        AxisMap& m = g.m[i];
        m.kind = axes_[static_cast<size_t>(i)].kind;
        m.n = id[i];
        m.a = axes_[static_cast<size_t>(i)].a;
        m.b = axes_[static_cast<size_t>(i)].b;
        if (m.kind == AxisMap::Kind::Roll && m.n > 0) m.a = pmod(m.a, m.n);
        if (m.kind == AxisMap::Kind::RepeatList) m.prefix = prefix_.data();
      }
    }
    unsigned char fill[8] = {};
    if (fill_in_ >= 0) std::memcpy(fill, f.ptr[fill_in_], es_);
    fn_(g, static_cast<const char*>(f.ptr[in_]), static_cast<char*>(f.ptr[out_]), fill);
  }

 private:
  MapFn fn_;
  size_t es_;
  std::vector<Axis> axes_;
  std::vector<int64_t> prefix_;
  uint32_t in_, out_, ioff_, ooff_;
  int64_t fill_in_;
  int rank_;
};

// tril/triu: copy each row's kept band and zero the rest (all-zero bytes are 0 in every dtype).
class TriKernel final : public Kernel {
 public:
  TriKernel(const PrepareCtx& ctx, bool lower, int64_t k) : lower_(lower), k_(k) {
    in_ = ctx.in[0];
    out_ = ctx.out[0];
    es_ = static_cast<int64_t>(size_of(ctx.result().dtype()));
    rank_ = static_cast<int>(ctx.result().rank());
    off_ = ctx.result().dim_off;
  }
  void run(const Frame& f) const override {
    const int64_t* d = f.dims + off_;
    int64_t m = d[rank_ - 2], n = d[rank_ - 1];
    int64_t rows = f.numel[out_] / std::max<int64_t>(n, 1);
    if (f.numel[out_] == 0) return;
    const char* src = static_cast<const char*>(f.ptr[in_]);
    char* dst = static_cast<char*>(f.ptr[out_]);
    auto body = [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        int64_t i = r % m;
        // Kept columns: tril j <= i + k, triu j >= i + k.
        int64_t lo = lower_ ? 0 : std::clamp<int64_t>(i + k_, 0, n);
        int64_t hi = lower_ ? std::clamp<int64_t>(i + k_ + 1, 0, n) : n;
        char* drow = dst + r * n * es_;
        const char* srow = src + r * n * es_;
        if (drow != srow && hi > lo)
          std::memcpy(drow + lo * es_, srow + lo * es_, static_cast<size_t>((hi - lo) * es_));
        std::memset(drow, 0, static_cast<size_t>(lo * es_));
        std::memset(drow + hi * es_, 0, static_cast<size_t>((n - hi) * es_));
      }
    };
    if (f.numel[out_] < kParallelGrain) {
      body(0, rows);
      return;
    }
    int64_t per = std::max<int64_t>(1, kParallelGrain / n);
    parallel_for((rows + per - 1) / per, [&](int64_t t) { body(t * per, std::min(rows, (t + 1) * per)); });
  }

 private:
  bool lower_;
  int64_t k_;
  uint32_t in_, out_, off_;
  int64_t es_;
  int rank_;
};

// diagonal: a strided gather; the appended axis steps along both axis1 and axis2 at once.
class DiagonalKernel final : public Kernel {
 public:
  DiagonalKernel(const PrepareCtx& ctx, int64_t offset, int a1, int a2) : offset_(offset), a1_(a1), a2_(a2) {
    in_ = ctx.in[0];
    out_ = ctx.out[0];
    es_ = static_cast<int64_t>(size_of(ctx.result().dtype()));
    irank_ = static_cast<int>(ctx.operand(0).rank());
    ioff_ = ctx.operand(0).dim_off;
    ooff_ = ctx.result().dim_off;
  }
  void run(const Frame& f) const override {
    if (f.numel[out_] == 0) return;
    const int64_t* id = f.dims + ioff_;
    const int64_t* od = f.dims + ooff_;
    int64_t istr[kMaxRank], str[kMaxRank], ext[kMaxRank];
    int64_t s = 1;
    for (int i = irank_ - 1; i >= 0; --i) {
      istr[i] = s;
      s *= id[i];
    }
    int orank = irank_ - 1, k = 0;
    for (int i = 0; i < irank_; ++i)
      if (i != a1_ && i != a2_) {
        ext[k] = od[k];
        str[k] = istr[i];
        ++k;
      }
    ext[k] = od[k];
    str[k] = istr[a1_] + istr[a2_];
    int64_t src0 = std::max<int64_t>(-offset_, 0) * istr[a1_] + std::max<int64_t>(offset_, 0) * istr[a2_];
    const char* src = static_cast<const char*>(f.ptr[in_]);
    char* dst = static_cast<char*>(f.ptr[out_]);
    int64_t total = f.numel[out_];
    for (int64_t e = 0; e < total; ++e) {
      int64_t q = e, off = src0;
      for (int i = orank - 1; i >= 0; --i) {
        off += (q % ext[i]) * str[i];
        q /= ext[i];
      }
      std::memcpy(dst + e * es_, src + off * es_, static_cast<size_t>(es_));
    }
  }

 private:
  int64_t offset_;
  int a1_, a2_;
  uint32_t in_, out_, ioff_, ooff_;
  int64_t es_;
  int irank_;
};

template <typename I, typename O>
void one_hot_fill(const void* idx, void* out, int64_t n, int64_t k) {
  const I* x = static_cast<const I*>(idx);
  O* y = static_cast<O*>(out);
  const O one = from_double<O>(1.0), zero = from_double<O>(0.0);
  for (int64_t e = 0; e < n; ++e) {
    O* row = y + e * k;
    for (int64_t c = 0; c < k; ++c) row[c] = zero;
    // Compared in the index's own signedness: a negative index never matches a class.
    if constexpr (std::is_signed_v<I>) {
      if (x[e] >= 0 && static_cast<int64_t>(x[e]) < k) row[static_cast<int64_t>(x[e])] = one;
    } else {
      if (static_cast<uint64_t>(x[e]) < static_cast<uint64_t>(k)) row[static_cast<int64_t>(x[e])] = one;
    }
  }
}

using OneHotFn = void (*)(const void*, void*, int64_t, int64_t);

class OneHotKernel final : public Kernel {
 public:
  OneHotKernel(const PrepareCtx& ctx, OneHotFn fn, int64_t k) : fn_(fn), k_(k), in_(ctx.in[0]), out_(ctx.out[0]) {}
  void run(const Frame& f) const override { fn_(f.ptr[in_], f.ptr[out_], f.numel[in_], k_); }

 private:
  OneHotFn fn_;
  int64_t k_;
  uint32_t in_, out_;
};

// arange/linspace: value i is start + i * step in double (ints floor for linspace, truncate for arange, then
// saturate), or exact wrapping int64 arithmetic for an all-int arange into an int dtype.
struct RangeSpec {
  bool exact_int = false;
  int64_t istart = 0, istep = 0;
  double start = 0, step = 0, stop = 0;
  bool floor_ints = false;
  bool last_is_stop = false;
};

template <typename T>
void range_fill(const RangeSpec& r, void* out, int64_t n) {
  T* y = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (r.exact_int) {
        uint64_t v = static_cast<uint64_t>(r.istart) + static_cast<uint64_t>(i) * static_cast<uint64_t>(r.istep);
        y[i] = static_cast<T>(v);
        continue;
      }
    }
    double v = (r.last_is_stop && i == n - 1) ? r.stop : r.start + static_cast<double>(i) * r.step;
    if constexpr (std::is_integral_v<T>) {
      if (r.floor_ints) v = std::floor(v);
    }
    y[i] = from_double<T>(v);
  }
}

using RangeFn = void (*)(const RangeSpec&, void*, int64_t);

class RangeKernel final : public Kernel {
 public:
  RangeKernel(const PrepareCtx& ctx, RangeFn fn, RangeSpec spec) : fn_(fn), spec_(spec), out_(ctx.out[0]) {}
  void run(const Frame& f) const override { fn_(spec_, f.ptr[out_], f.numel[out_]); }

 private:
  RangeFn fn_;
  RangeSpec spec_;
  uint32_t out_;
};

// Re-runs the op's inference on the operand types and records that the result type agrees.
void check_result_type(PrepareCtx& ctx) {
  std::vector<TensorType> in;
  for (size_t k = 0; k < ctx.in.size(); ++k) in.push_back(ctx.operand(k).type());
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
}

double num_attr(const PrepareCtx& ctx, const std::string& name) {
  const Attribute& a = ctx.op.attributes().at(name);
  if (const auto* i = std::get_if<int64_t>(&a)) return static_cast<double>(*i);
  return std::get<double>(a);
}

using K = AxisMap::Kind;
using Axes = std::vector<MapKernel::Axis>;

// pad's modes by name; any other name is symmetric.
constexpr std::pair<std::string_view, K> kPadModes[] = {
    {"constant", K::Constant}, {"edge", K::Edge}, {"reflect", K::Reflect}, {"symmetric", K::Symmetric}};

void pad_axes(PrepareCtx& ctx, Axes& axes, std::vector<int64_t>&) {
  const ValueDesc& x = ctx.operand(0);
  size_t rank = x.rank();
  const std::string& mode = ctx.attr_string("mode");
  const auto& low = ctx.attr_ints("low");
  const auto& high = ctx.attr_ints("high");
  std::vector<int64_t> interior(rank, 0);
  if (ctx.has_attr("interior")) interior = ctx.attr_ints("interior");
  K kind = K::Symmetric;
  for (const auto& [name, k] : kPadModes)
    if (std::string_view(mode) == name) kind = k;
  for (size_t i = 0; i < rank; ++i) {
    axes[i] = {kind, low[i], interior[i]};
    // numpy cannot extend an empty axis except with a constant; a symbolic extent is checked per call.
    if (kind != K::Constant && !x.type().shape[i].is_const() && (low[i] > 0 || high[i] > 0))
      ctx.require_less_equal(DimExpr(1), x.type().shape[i],
                             "non-empty axis " + std::to_string(i) + " for mode \"" + mode + "\"");
  }
  for (size_t i = 0; i < rank; ++i)
    ctx.require_less_equal(DimExpr(0), ctx.result().type().shape[i],
                           "non-negative extent of result axis " + std::to_string(i));
  if (ctx.in.size() > 1 && ctx.operand(1).dtype() != x.dtype()) ctx.fail("the padding value's dtype differs");
}

void flip_axes(PrepareCtx& ctx, Axes& axes, std::vector<int64_t>&) {
  for (int64_t a : ctx.attr_ints("axes")) axes[static_cast<size_t>(a)].kind = K::Flip;
}

void roll_axes(PrepareCtx& ctx, Axes& axes, std::vector<int64_t>&) {
  const auto& shifts = ctx.attr_ints("shifts");
  const auto& ax = ctx.attr_ints("axes");
  for (size_t i = 0; i < ax.size(); ++i) axes[static_cast<size_t>(ax[i])] = {K::Roll, shifts[i], 0};
}

void tile_axes(PrepareCtx& ctx, Axes& axes, std::vector<int64_t>&) {
  const auto& reps = ctx.attr_ints("reps");
  for (size_t i = 0; i < axes.size(); ++i)
    if (reps[i] != 1) axes[i].kind = K::Tile;
}

void repeat_axes(PrepareCtx& ctx, Axes& axes, std::vector<int64_t>& prefix) {
  const auto& reps = ctx.attr_ints("repeats");
  auto axis = static_cast<size_t>(ctx.attr_int("axis"));
  if (reps.size() == 1) {
    if (reps[0] != 1) axes[axis] = {K::Repeat, reps[0], 0};
  } else {
    axes[axis].kind = K::RepeatList;
    int64_t s = 0;
    for (int64_t r : reps) prefix.push_back(s += r);
  }
}

// What every layout op checks first: one result, of the type inference gives.
void check_layout(PrepareCtx& ctx) {
  if (ctx.op.num_results() != 1) ctx.fail("expects one result");
  check_result_type(ctx);
  const ValueDesc& r = ctx.result();
  if (r.rank() > static_cast<uint32_t>(kMaxRank) ||
      (!ctx.in.empty() && ctx.operand(0).rank() > static_cast<uint32_t>(kMaxRank)))
    ctx.fail("the interpreter supports layout ops up to rank " + std::to_string(kMaxRank));
}

// pad, flip, roll, tile and repeat: a per-axis index map from result to operand.
template <void (*SetAxes)(PrepareCtx&, Axes&, std::vector<int64_t>&)>
KernelPtr make_map(PrepareCtx& ctx) {
  check_layout(ctx);
  Axes axes(ctx.operand(0).rank());
  std::vector<int64_t> prefix;
  SetAxes(ctx, axes, prefix);
  return std::make_unique<MapKernel>(ctx, std::move(axes), std::move(prefix));
}

template <bool Lower>
KernelPtr make_tri(PrepareCtx& ctx) {
  check_layout(ctx);
  return std::make_unique<TriKernel>(ctx, Lower, ctx.attr_int("k"));
}

KernelPtr make_diagonal(PrepareCtx& ctx) {
  check_layout(ctx);
  return std::make_unique<DiagonalKernel>(ctx, ctx.attr_int("offset"), static_cast<int>(ctx.attr_int("axis1")),
                                          static_cast<int>(ctx.attr_int("axis2")));
}

KernelPtr make_one_hot(PrepareCtx& ctx) {
  check_layout(ctx);
  OneHotFn fn = visit_dtype(ctx.operand(0).dtype(), [&](auto itag) -> OneHotFn {
    using I = decltype(itag);
    return visit_dtype(ctx.result().dtype(), [&](auto otag) -> OneHotFn {
      using O = decltype(otag);
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
        return &one_hot_fill<I, O>;
      } else {
        return nullptr;
      }
    });
  });
  if (!fn) ctx.fail("indices must have an int dtype");
  return std::make_unique<OneHotKernel>(ctx, fn, ctx.attr_int("num_classes"));
}

// arange (start, stop, step) and linspace (start, stop, num, endpoint).
template <bool Arange>
KernelPtr make_range(PrepareCtx& ctx) {
  check_layout(ctx);
  RangeSpec s;
  s.start = num_attr(ctx, "start");
  s.stop = num_attr(ctx, "stop");
  if (Arange) {
    s.step = num_attr(ctx, "step");
    auto is_int = [&](const char* n) { return std::holds_alternative<int64_t>(ctx.attrs().at(n)); };
    if (is_int("start") && is_int("stop") && is_int("step")) {
      s.exact_int = true;
      s.istart = ctx.attr_int("start");
      s.istep = ctx.attr_int("step");
    }
  } else {
    int64_t num = ctx.attr_int("num");
    bool endpoint = ctx.attr_bool("endpoint");
    int64_t div = endpoint ? num - 1 : num;
    s.step = div > 0 ? (s.stop - s.start) / static_cast<double>(div) : 0.0;
    s.floor_ints = true;
    s.last_is_stop = endpoint && num > 1;
  }
  RangeFn fn = visit_dtype(ctx.result().dtype(), [](auto tag) -> RangeFn { return &range_fill<decltype(tag)>; });
  return std::make_unique<RangeKernel>(ctx, fn, s);
}

}  // namespace

void install_layout_kernels(KernelTable& t) {
  t.set("pad", &make_map<pad_axes>);
  t.set("flip", &make_map<flip_axes>);
  t.set("roll", &make_map<roll_axes>);
  t.set("tile", &make_map<tile_axes>);
  t.set("repeat", &make_map<repeat_axes>);
  t.set("tril", &make_tri<true>);
  t.set("triu", &make_tri<false>);
  t.set("diagonal", &make_diagonal);
  t.set("one_hot", &make_one_hot);
  t.set("arange", &make_range<true>);
  t.set("linspace", &make_range<false>);
}

}  // namespace evoxc::interp
