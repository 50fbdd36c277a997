// Interpreter kernels of the indexing family: gather, scatter, dynamic_slice, dynamic_update_slice (every dtype).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "index_load.h"
#include "kernel_table.h"
#include "program.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

constexpr int kMaxRank = 16;

// Copies a block of extents `ext` between two strided layouts (strides in elements), innermost runs by memcpy.
void block_copy(char* dst, const int64_t* dst_str, const char* src, const int64_t* src_str, const int64_t* ext,
                int rank, size_t es) {
  int64_t total = 1;
  for (int i = 0; i < rank; ++i) total *= ext[i];
  if (total == 0) return;
  if (rank == 0) {
    std::memcpy(dst, src, es);
    return;
  }
  const int64_t inner = ext[rank - 1];
  const bool contiguous = dst_str[rank - 1] == 1 && src_str[rank - 1] == 1;
  int64_t idx[kMaxRank] = {};
  int64_t d = 0, s = 0;
  for (int64_t q = 0; q < total / inner; ++q) {
    if (contiguous) {
      std::memcpy(dst + static_cast<size_t>(d) * es, src + static_cast<size_t>(s) * es,
                  static_cast<size_t>(inner) * es);
    } else {
      for (int64_t j = 0; j < inner; ++j)
        std::memcpy(dst + static_cast<size_t>(d + j * dst_str[rank - 1]) * es,
                    src + static_cast<size_t>(s + j * src_str[rank - 1]) * es, es);
    }
    for (int i = rank - 2; i >= 0; --i) {
      d += dst_str[i];
      s += src_str[i];
      if (++idx[i] < ext[i]) break;
      d -= dst_str[i] * ext[i];
      s -= src_str[i] * ext[i];
      idx[i] = 0;
    }
  }
}

void row_major_strides(const int64_t* ext, int rank, int64_t* str) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; --i) {
    str[i] = s;
    s *= ext[i];
  }
}

// ---------------------------------------------------------------------------------------------
// gather / scatter: shared geometry

struct IndexSpec {
  int rank = 0;        // operand rank
  int nidx = 0;        // entries of the index vector (len(axes))
  int axes[kMaxRank];  // operand axis of index entry k
  int nrest = 0;       // operand axes not indexed, increasing
  int rest[kMaxRank];
  uint32_t operand_off = 0, indices_off = 0, indices_rank = 0;
};

struct IndexGeometry {
  int64_t batch = 1;                     // index vectors
  int64_t block = 1;                     // elements per index vector (product of rest extents)
  int64_t ext[kMaxRank], str[kMaxRank];  // operand extents and row-major strides
  int64_t rest_ext[kMaxRank], rest_str[kMaxRank], block_str[kMaxRank];
  bool empty_indexed = false;  // an indexed axis has extent 0
};

void index_geometry(const IndexSpec& sp, const Frame& f, IndexGeometry& g) {
  const int64_t* od = f.dims + sp.operand_off;
  const int64_t* id = f.dims + sp.indices_off;
  for (int i = 0; i < sp.rank; ++i) g.ext[i] = od[i];
  row_major_strides(g.ext, sp.rank, g.str);
  g.batch = 1;
  for (uint32_t i = 0; i + 1 < sp.indices_rank; ++i) g.batch *= id[i];
  g.block = 1;
  for (int k = 0; k < sp.nrest; ++k) {
    g.rest_ext[k] = g.ext[sp.rest[k]];
    g.rest_str[k] = g.str[sp.rest[k]];
    g.block *= g.rest_ext[k];
  }
  row_major_strides(g.rest_ext, sp.nrest, g.block_str);
  g.empty_indexed = false;
  for (int k = 0; k < sp.nidx; ++k) g.empty_indexed |= g.ext[sp.axes[k]] == 0;
}

class GatherKernel final : public Kernel {
 public:
  GatherKernel(const IndexSpec& sp, IndexLoad load, size_t es, uint32_t in, uint32_t idx, uint32_t out)
      : sp_(sp), load_(load), es_(es), in_(in), idx_(idx), out_(out) {}
  void run(const Frame& f) const override {
    IndexGeometry g;
    index_geometry(sp_, f, g);
    char* out = static_cast<char*>(f.ptr[out_]);
    if (g.batch * g.block == 0) return;
    // Nothing to read from: clamping has no in-range target, so the result is zeros.
    if (g.empty_indexed) {
      std::memset(out, 0, static_cast<size_t>(g.batch * g.block) * es_);
      return;
    }
    const char* src = static_cast<const char*>(f.ptr[in_]);
    const void* idx = f.ptr[idx_];
    auto one = [&](int64_t b) {
      int64_t off = 0;
      for (int k = 0; k < sp_.nidx; ++k) {
        int64_t e = g.ext[sp_.axes[k]];
        int64_t i = std::clamp<int64_t>(load_(idx, b * sp_.nidx + k), 0, e - 1);
        off += i * g.str[sp_.axes[k]];
      }
      block_copy(out + static_cast<size_t>(b * g.block) * es_, g.block_str, src + static_cast<size_t>(off) * es_,
                 g.rest_str, g.rest_ext, sp_.nrest, es_);
    };
    if (g.batch * g.block < kParallelGrain) {
      for (int64_t b = 0; b < g.batch; ++b) one(b);
    } else {
      int64_t per = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(g.block, 1));
      parallel_for((g.batch + per - 1) / per, [&](int64_t t) {
        for (int64_t b = t * per; b < std::min(g.batch, (t + 1) * per); ++b) one(b);
      });
    }
  }

 private:
  IndexSpec sp_;
  IndexLoad load_;
  size_t es_;
  uint32_t in_, idx_, out_;
};

enum class ScatterMode : uint8_t { Set, Add, Mul, Min, Max };

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Combines the current value a with the update b; ints wrap through unsigned arithmetic, bool add/mul are or/and,
// min/max propagate NaN.
template <typename T, ScatterMode M>
T combine(T a, T b) {
  if constexpr (M == ScatterMode::Set) {
    (void)a;
    return b;
  } else if constexpr (is_half_v<T>) {
    return T(combine<float, M>(static_cast<float>(a), static_cast<float>(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    if constexpr (M == ScatterMode::Add || M == ScatterMode::Max) return a || b;
    return a && b;
  } else if constexpr (M == ScatterMode::Min || M == ScatterMode::Max) {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    if constexpr (M == ScatterMode::Max) return a > b ? a : b;
    return a < b ? a : b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
    U r = M == ScatterMode::Add ? static_cast<U>(static_cast<U>(a) + static_cast<U>(b))
                                : static_cast<U>(static_cast<U>(a) * static_cast<U>(b));
    return static_cast<T>(r);
  } else {
    return M == ScatterMode::Add ? a + b : a * b;
  }
}

using ScatterFn = void (*)(const IndexSpec&, const IndexGeometry&, IndexLoad, const void*, const void*, void*);

// Sequential in row-major order of the index vectors, so `set` is last-wins and combining is deterministic.
template <typename T, ScatterMode M>
void scatter_entry(const IndexSpec& sp, const IndexGeometry& g, IndexLoad load, const void* idx, const void* upd,
                   void* out) {
  const T* u = static_cast<const T*>(upd);
  T* o = static_cast<T*>(out);
  int64_t ridx[kMaxRank];
  for (int64_t b = 0; b < g.batch; ++b) {
    int64_t off = 0;
    bool in_range = true;
    for (int k = 0; k < sp.nidx; ++k) {
      int64_t i = load(idx, b * sp.nidx + k);
      if (i < 0 || i >= g.ext[sp.axes[k]]) {
        in_range = false;
        break;
      }
      off += i * g.str[sp.axes[k]];
    }
    if (!in_range) continue;
    const T* ub = u + b * g.block;
    std::fill(ridx, ridx + sp.nrest, int64_t{0});
    int64_t p = off;
    for (int64_t j = 0; j < g.block; ++j) {
      o[p] = combine<T, M>(o[p], ub[j]);
      for (int k = sp.nrest - 1; k >= 0; --k) {
        p += g.rest_str[k];
        if (++ridx[k] < g.rest_ext[k]) break;
        p -= g.rest_str[k] * g.rest_ext[k];
        ridx[k] = 0;
      }
    }
  }
}

template <ScatterMode M>
ScatterFn pick_scatter(DType t) {
  return visit_dtype(t, [](auto tag) -> ScatterFn { return &scatter_entry<decltype(tag), M>; });
}

class ScatterKernel final : public Kernel {
 public:
  ScatterKernel(const IndexSpec& sp, IndexLoad load, ScatterFn fn, size_t es, uint32_t in, uint32_t idx, uint32_t upd,
                uint32_t out)
      : sp_(sp), load_(load), fn_(fn), es_(es), in_(in), idx_(idx), upd_(upd), out_(out) {}
  void run(const Frame& f) const override {
    IndexGeometry g;
    index_geometry(sp_, f, g);
    if (f.ptr[out_] != f.ptr[in_]) std::memcpy(f.ptr[out_], f.ptr[in_], static_cast<size_t>(f.numel[in_]) * es_);
    if (g.batch * g.block == 0 || g.empty_indexed) return;  // every update is out of range
    fn_(sp_, g, load_, f.ptr[idx_], f.ptr[upd_], f.ptr[out_]);
  }

 private:
  IndexSpec sp_;
  IndexLoad load_;
  ScatterFn fn_;
  size_t es_;
  uint32_t in_, idx_, upd_, out_;
};

// Builds the shared spec and records the result-shape checks for gather (`check_shape` is the shape the gathered
// positions have: gather's result or scatter's updates).
IndexSpec make_index_spec(PrepareCtx& ctx, uint32_t check_id) {
  const ValueDesc& check_shape = ctx.val(check_id);
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& ind = ctx.operand(1);
  if (a.rank() > static_cast<uint32_t>(kMaxRank) || ind.rank() > static_cast<uint32_t>(kMaxRank + 1))
    ctx.fail("the interpreter indexes tensors up to rank " + std::to_string(kMaxRank));
  if (!is_int(ind.dtype())) ctx.fail("indices must have an integer dtype, got " + std::string(dtype_name(ind.dtype())));
  if (ind.rank() < 1) ctx.fail("indices must have rank >= 1");
  const auto& axes = ctx.attr_ints("axes");
  IndexSpec sp;
  sp.rank = static_cast<int>(a.rank());
  sp.nidx = static_cast<int>(axes.size());
  if (axes.size() > a.rank()) ctx.fail("axes names more axes than the operand has");
  std::vector<bool> indexed(a.rank(), false);
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] < 0 || axes[k] >= static_cast<int64_t>(a.rank()) || indexed[static_cast<size_t>(axes[k])])
      ctx.fail("axes must be unique and in [0, " + std::to_string(a.rank()) + ")");
    indexed[static_cast<size_t>(axes[k])] = true;
    sp.axes[k] = static_cast<int>(axes[k]);
  }
  for (int i = 0; i < sp.rank; ++i)
    if (!indexed[static_cast<size_t>(i)]) sp.rest[sp.nrest++] = i;
  sp.operand_off = a.dim_off;
  sp.indices_off = ind.dim_off;
  sp.indices_rank = ind.rank();
  ctx.require_equal(ind.type().shape[ind.rank() - 1], DimExpr(static_cast<int64_t>(axes.size())),
                    "last extent of indices (the index vector)");
  size_t want_rank = ind.rank() - 1 + static_cast<size_t>(sp.nrest);
  if (check_shape.rank() != want_rank)
    ctx.fail(ctx.value_name(check_id) + " has rank " + std::to_string(check_shape.rank()) + ", expected " +
             std::to_string(want_rank));
  size_t k = 0;
  for (size_t i = 0; i + 1 < ind.rank(); ++i, ++k)
    ctx.require_equal(ind.type().shape[i], check_shape.type().shape[k], "extent of axis " + std::to_string(k));
  for (int r = 0; r < sp.nrest; ++r, ++k)
    ctx.require_equal(a.type().shape[static_cast<size_t>(sp.rest[r])], check_shape.type().shape[k],
                      "extent of axis " + std::to_string(k));
  return sp;
}

KernelPtr make_gather(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 2 || ctx.op.num_results() != 1) ctx.fail("expects two operands and one result");
  if (ctx.result().dtype() != ctx.operand(0).dtype()) ctx.fail("the result dtype must be the operand's");
  IndexSpec sp = make_index_spec(ctx, ctx.out[0]);
  return std::make_unique<GatherKernel>(sp, pick_index_load(ctx.operand(1).dtype()), size_of(ctx.operand(0).dtype()),
                                        ctx.in[0], ctx.in[1], ctx.out[0]);
}

// scatter's modes by name.
struct ScatterModeRow {
  std::string_view name;
  ScatterFn (*pick)(DType t);
};
constexpr ScatterModeRow kScatterModes[] = {{"set", &pick_scatter<ScatterMode::Set>},
                                            {"add", &pick_scatter<ScatterMode::Add>},
                                            {"mul", &pick_scatter<ScatterMode::Mul>},
                                            {"min", &pick_scatter<ScatterMode::Min>},
                                            {"max", &pick_scatter<ScatterMode::Max>}};

KernelPtr make_scatter(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 3 || ctx.op.num_results() != 1) ctx.fail("expects three operands and one result");
  const ValueDesc& a = ctx.operand(0);
  DType t = a.dtype();
  if (ctx.result().dtype() != t || ctx.operand(2).dtype() != t)
    ctx.fail("the updates and the result must have the operand's dtype");
  IndexSpec sp = make_index_spec(ctx, ctx.in[2]);
  if (ctx.result().rank() != a.rank()) ctx.fail("the result must have the operand's shape");
  for (size_t i = 0; i < a.rank(); ++i)
    ctx.require_equal(a.type().shape[i], ctx.result().type().shape[i], "extent of result axis " + std::to_string(i));
  const std::string& mode = ctx.attr_string("mode");
  ScatterFn fn = nullptr;
  for (const ScatterModeRow& m : kScatterModes)
    if (std::string_view(mode) == m.name) fn = m.pick(t);
  if (fn == nullptr) ctx.fail("mode '" + mode + "' is not one of set, add, mul, min, max");
  return std::make_unique<ScatterKernel>(sp, pick_index_load(ctx.operand(1).dtype()), fn, size_of(t), ctx.in[0],
                                         ctx.in[1], ctx.in[2], ctx.out[0]);
}

// ---------------------------------------------------------------------------------------------
// dynamic_slice / dynamic_update_slice

class DynamicSliceKernel final : public Kernel {
 public:
  // `window_off`: where the window's extents live in Frame::dims (the result for dynamic_slice, the update for
  // dynamic_update_slice).
  DynamicSliceKernel(bool update, int rank, size_t es, uint32_t in, uint32_t upd, uint32_t out, uint32_t operand_off,
                     uint32_t window_off, std::vector<uint32_t> starts, std::vector<IndexLoad> loads)
      : update_(update),
        rank_(rank),
        es_(es),
        in_(in),
        upd_(upd),
        out_(out),
        operand_off_(operand_off),
        window_off_(window_off),
        starts_(std::move(starts)),
        loads_(std::move(loads)) {}
  void run(const Frame& f) const override {
    const int64_t* od = f.dims + operand_off_;
    const int64_t* wd = f.dims + window_off_;
    int64_t ostr[kMaxRank], wstr[kMaxRank];
    row_major_strides(od, rank_, ostr);
    row_major_strides(wd, rank_, wstr);
    int64_t off = 0;
    for (int i = 0; i < rank_; ++i) {
      // Clamped so the whole window lies inside the operand (the window fits: checked at prepare or per call).
      int64_t s = std::clamp<int64_t>(loads_[static_cast<size_t>(i)](f.ptr[starts_[static_cast<size_t>(i)]], 0), 0,
                                      std::max<int64_t>(od[i] - wd[i], 0));
      off += s * ostr[i];
    }
    char* out = static_cast<char*>(f.ptr[out_]);
    if (!update_) {
      block_copy(out, wstr, static_cast<const char*>(f.ptr[in_]) + static_cast<size_t>(off) * es_, ostr, wd, rank_,
                 es_);
      return;
    }
    if (f.ptr[out_] != f.ptr[in_]) std::memcpy(out, f.ptr[in_], static_cast<size_t>(f.numel[in_]) * es_);
    block_copy(out + static_cast<size_t>(off) * es_, ostr, static_cast<const char*>(f.ptr[upd_]), wstr, wd, rank_, es_);
  }

 private:
  bool update_;
  int rank_;
  size_t es_;
  uint32_t in_, upd_, out_, operand_off_, window_off_;
  std::vector<uint32_t> starts_;
  std::vector<IndexLoad> loads_;
};

template <bool update>
KernelPtr make_dynamic_slice(PrepareCtx& ctx) {
  const ValueDesc& a = ctx.operand(0);
  size_t first = update ? 2 : 1;
  if (ctx.op.num_results() != 1 || ctx.op.num_operands() != first + a.rank())
    ctx.fail("expects the operand" + std::string(update ? ", the update" : "") + " and one start index per axis");
  if (a.rank() > static_cast<uint32_t>(kMaxRank))
    ctx.fail("the interpreter slices tensors up to rank " + std::to_string(kMaxRank));
  const ValueDesc& r = ctx.result();
  if (r.dtype() != a.dtype() || r.rank() != a.rank()) ctx.fail("the result must have the operand's dtype and rank");
  std::vector<uint32_t> starts;
  std::vector<IndexLoad> loads;
  for (size_t i = first; i < ctx.op.num_operands(); ++i) {
    const ValueDesc& s = ctx.operand(i);
    if (!is_int(s.dtype()) || s.rank() != 0) ctx.fail("each start index must be a rank-0 integer tensor");
    starts.push_back(ctx.in[i]);
    loads.push_back(pick_index_load(s.dtype()));
  }
  const ValueDesc& window = update ? ctx.operand(1) : r;
  if (update) {
    if (window.dtype() != a.dtype() || window.rank() != a.rank())
      ctx.fail("the update must have the operand's dtype and rank");
    for (size_t i = 0; i < a.rank(); ++i) {
      ctx.require_equal(a.type().shape[i], r.type().shape[i], "extent of result axis " + std::to_string(i));
      ctx.require_less_equal(window.type().shape[i], a.type().shape[i],
                             "update extent of axis " + std::to_string(i) + " within the operand's");
    }
  } else {
    const auto& sizes = ctx.attr_ints("slice_sizes");
    if (sizes.size() != a.rank()) ctx.fail("slice_sizes needs one entry per operand axis");
    for (size_t i = 0; i < a.rank(); ++i) {
      if (sizes[i] < 0) ctx.fail("slice sizes must be >= 0");
      ctx.require_equal(DimExpr(sizes[i]), r.type().shape[i], "extent of result axis " + std::to_string(i));
      ctx.require_less_equal(DimExpr(sizes[i]), a.type().shape[i],
                             "slice size of axis " + std::to_string(i) + " within the operand's extent");
    }
  }
  return std::make_unique<DynamicSliceKernel>(update, static_cast<int>(a.rank()), size_of(a.dtype()), ctx.in[0],
                                              update ? ctx.in[1] : ctx.in[0], ctx.out[0], a.dim_off, window.dim_off,
                                              std::move(starts), std::move(loads));
}

}  // namespace

void install_indexing_kernels(KernelTable& t) {
  t.set("gather", &make_gather);
  t.set("scatter", &make_scatter);
  t.set("dynamic_slice", &make_dynamic_slice<false>);
  t.set("dynamic_update_slice", &make_dynamic_slice<true>);
}

}  // namespace evoxc::interp
