// Elementwise instructions: numpy broadcasting over contiguous inner runs, calling the kernels of elementwise.h.
#include <algorithm>
#include <cstring>

#include "elementwise.h"
#include "program.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

constexpr int kMaxOperands = 3;
constexpr int kMaxRank = 16;

// Collapsed iteration space: the output is contiguous over `ext`; operand k advances
// str[k][i] elements per step along axis i (0 where it broadcasts). The innermost
// stride is always 0 or 1, which is what the kernels take.
struct Geometry {
  int rank = 1;
  int64_t total = 0;
  int64_t ext[kMaxRank];
  int64_t str[kMaxOperands][kMaxRank];
};

void compute_geometry(int n_ops, const int64_t* rdims, int rrank, const int64_t* const* odims, const int* oranks,
                      Geometry& g) {
  int64_t ext[kMaxRank], str[kMaxOperands][kMaxRank];
  int r = 0;
  g.total = 1;
  for (int i = 0; i < rrank; ++i) g.total *= rdims[i];
  int64_t run[kMaxOperands];
  for (int k = 0; k < n_ops; ++k) run[k] = 1;
  // Walk from the innermost axis, so operand strides come out contiguous.
  int64_t tmp_str[kMaxOperands][kMaxRank];
  for (int i = rrank - 1; i >= 0; --i) {
    for (int k = 0; k < n_ops; ++k) {
      int oi = i - (rrank - oranks[k]);
      int64_t e = oi >= 0 ? odims[k][oi] : 1;
      tmp_str[k][i] = (e == 1 && rdims[i] != 1) ? 0 : run[k];
      run[k] *= e;
    }
  }
  for (int i = 0; i < rrank; ++i) {
    if (rdims[i] == 1) continue;
    if (r > 0) {
      bool merge = true;
      for (int k = 0; k < n_ops; ++k) merge = merge && str[k][r - 1] == tmp_str[k][i] * rdims[i];
      if (merge) {
        ext[r - 1] *= rdims[i];
        for (int k = 0; k < n_ops; ++k) str[k][r - 1] = tmp_str[k][i];
        continue;
      }
    }
    ext[r] = rdims[i];
    for (int k = 0; k < n_ops; ++k) str[k][r] = tmp_str[k][i];
    ++r;
  }
  if (r == 0) {
    ext[0] = 1;
    for (int k = 0; k < n_ops; ++k) str[k][0] = 0;
    r = 1;
  }
  g.rank = r;
  for (int i = 0; i < r; ++i) {
    g.ext[i] = ext[i];
    for (int k = 0; k < n_ops; ++k) g.str[k][i] = str[k][i];
  }
}

// Calls `call(ptrs, steps, out, n)` for rows [q0, q1) of the collapsed space, columns [c0, c1).
template <int N, typename Call>
void run_rows(const Geometry& g, const char* const* base, const size_t* esz, char* out, size_t oesz, int64_t q0,
              int64_t q1, int64_t c0, int64_t c1, const Call& call) {
  const int r = g.rank;
  const int64_t inner = g.ext[r - 1];
  int64_t idx[kMaxRank];
  int64_t off[N];
  for (int k = 0; k < N; ++k) off[k] = 0;
  int64_t q = q0;
  for (int i = r - 2; i >= 0; --i) {
    idx[i] = q % g.ext[i];
    q /= g.ext[i];
    for (int k = 0; k < N; ++k) off[k] += idx[i] * g.str[k][i];
  }
  int64_t step[N];
  for (int k = 0; k < N; ++k) step[k] = g.str[k][r - 1];
  const char* p[N];
  for (q = q0; q < q1; ++q) {
    for (int k = 0; k < N; ++k) p[k] = base[k] + static_cast<size_t>(off[k] + c0 * step[k]) * esz[k];
    call(p, step, out + static_cast<size_t>(q * inner + c0) * oesz, c1 - c0);
    for (int i = r - 2; i >= 0; --i) {
      for (int k = 0; k < N; ++k) off[k] += g.str[k][i];
      if (++idx[i] < g.ext[i]) break;
      for (int k = 0; k < N; ++k) off[k] -= g.str[k][i] * g.ext[i];
      idx[i] = 0;
    }
  }
}

template <int N, typename Call>
void run_geometry(const Geometry& g, const char* const* base, const size_t* esz, char* out, size_t oesz,
                  const Call& call) {
  if (g.total == 0) return;
  const int64_t inner = g.ext[g.rank - 1];
  const int64_t rows = g.total / inner;
  if (g.total < kParallelGrain) {
    run_rows<N>(g, base, esz, out, oesz, 0, rows, 0, inner, call);
    return;
  }
  if (inner >= kParallelGrain) {
    int64_t per_row = (inner + kParallelGrain - 1) / kParallelGrain;
    parallel_for(rows * per_row, [&](int64_t t) {
      int64_t q = t / per_row, c = t % per_row;
      run_rows<N>(g, base, esz, out, oesz, q, q + 1, c * kParallelGrain, std::min(inner, (c + 1) * kParallelGrain),
                  call);
    });
    return;
  }
  int64_t rows_per_task = kParallelGrain / inner;
  int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  parallel_for(tasks, [&](int64_t t) {
    run_rows<N>(g, base, esz, out, oesz, t * rows_per_task, std::min(rows, (t + 1) * rows_per_task), 0, inner, call);
  });
}

// Unary and convert: operand and result have one shape, so the run is flat.
class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(UnaryFn fn, UnaryParams params, uint32_t in, uint32_t out, size_t iesz, size_t oesz, int64_t static_numel)
      : fn_(fn), params_(params), in_(in), out_(out), iesz_(iesz), oesz_(oesz), static_numel_(static_numel) {}
  int64_t tile_numel() const override { return static_numel_; }
  void run_range(const Frame& f, int64_t b, int64_t e) const override {
    fn_(static_cast<const char*>(f.ptr[in_]) + static_cast<size_t>(b) * iesz_,
        static_cast<char*>(f.ptr[out_]) + static_cast<size_t>(b) * oesz_, e - b, params_);
  }
  void run(const Frame& f) const override {
    int64_t n = f.numel[out_];
    const char* a = static_cast<const char*>(f.ptr[in_]);
    char* o = static_cast<char*>(f.ptr[out_]);
    if (n < kParallelGrain) {
      fn_(a, o, n, params_);
      return;
    }
    parallel_for((n + kParallelGrain - 1) / kParallelGrain, [&](int64_t t) {
      int64_t b = t * kParallelGrain, e = std::min(n, b + kParallelGrain);
      fn_(a + static_cast<size_t>(b) * iesz_, o + static_cast<size_t>(b) * oesz_, e - b, params_);
    });
  }

 private:
  UnaryFn fn_;
  UnaryParams params_;
  uint32_t in_, out_;
  size_t iesz_, oesz_;
  int64_t static_numel_;  // -1 when symbolic
};

// Binary and ternary ops with broadcasting.
template <int N>
class BroadcastKernel final : public Kernel {
 public:
  using Fn = std::conditional_t<N == 2, BinaryFn, TernaryFn>;
  BroadcastKernel(Fn fn, const PrepareCtx& ctx) : fn_(fn) {
    for (int k = 0; k < N; ++k) {
      in_[k] = ctx.in[static_cast<size_t>(k)];
      esz_[k] = size_of(ctx.val(in_[k]).dtype());
      rank_[k] = static_cast<int>(ctx.val(in_[k]).rank());
      off_[k] = ctx.val(in_[k]).dim_off;
    }
    out_ = ctx.out[0];
    oesz_ = size_of(ctx.result().dtype());
    rrank_ = static_cast<int>(ctx.result().rank());
    roff_ = ctx.result().dim_off;
    if (ctx.all_static()) {
      const int64_t* od[N];
      for (int k = 0; k < N; ++k) od[k] = ctx.static_dims(in_[k]);
      compute_geometry(N, ctx.static_dims(out_), rrank_, od, rank_, geo_);
      static_ = true;
      flat_ = geo_.rank == 1 && geo_.total < kParallelGrain;
      tileable_ = geo_.rank == 1;
      for (int k = 0; k < N; ++k) tileable_ = tileable_ && geo_.str[k][0] == 1;
    }
  }

  int64_t tile_numel() const override { return tileable_ ? geo_.total : -1; }
  void run_range(const Frame& f, int64_t b, int64_t e) const override {
    const char* p[N];
    for (int k = 0; k < N; ++k) p[k] = static_cast<const char*>(f.ptr[in_[k]]) + static_cast<size_t>(b) * esz_[k];
    call(p, 1, 1, 1, static_cast<char*>(f.ptr[out_]) + static_cast<size_t>(b) * oesz_, e - b);
  }

  void run(const Frame& f) const override {
    const char* base[N];
    for (int k = 0; k < N; ++k) base[k] = static_cast<const char*>(f.ptr[in_[k]]);
    char* out = static_cast<char*>(f.ptr[out_]);
    if (flat_) {
      call(base, geo_.str[0][0], geo_.str[1][0], N == 3 ? geo_.str[N - 1][0] : 0, out, geo_.total);
      return;
    }
    Geometry local;
    const Geometry* g = &geo_;
    if (!static_) {
      const int64_t* od[N];
      for (int k = 0; k < N; ++k) od[k] = f.dims + off_[k];
      compute_geometry(N, f.dims + roff_, rrank_, od, rank_, local);
      g = &local;
    }
    run_geometry<N>(*g, base, esz_, out, oesz_, [this](const char* const* p, const int64_t* s, char* o, int64_t n) {
      if constexpr (N == 2) {
        fn_(p[0], s[0], p[1], s[1], o, n);
      } else {
        fn_(p[0], s[0], p[1], s[1], p[2], s[2], o, n);
      }
    });
  }

 private:
  void call(const char* const* p, int64_t s0, int64_t s1, int64_t s2, char* o, int64_t n) const {
    if constexpr (N == 2) {
      (void)s2;
      fn_(p[0], s0, p[1], s1, o, n);
    } else {
      fn_(p[0], s0, p[1], s1, p[2], s2, o, n);
    }
  }

  Fn fn_;
  uint32_t in_[N], out_;
  size_t esz_[N], oesz_;
  int rank_[N], rrank_;
  uint32_t off_[N], roff_;
  bool static_ = false, flat_ = false, tileable_ = false;
  Geometry geo_;
};

void require_broadcastable(PrepareCtx& ctx) {
  const ValueDesc& r = ctx.result();
  if (r.rank() > static_cast<uint32_t>(kMaxRank))
    ctx.fail("the interpreter supports elementwise ops up to rank " + std::to_string(kMaxRank));
  for (size_t k = 0; k < ctx.in.size(); ++k) {
    const ValueDesc& a = ctx.operand(k);
    if (a.rank() > r.rank()) ctx.fail("operand " + std::to_string(k) + " has a higher rank than the result");
    size_t lead = r.rank() - a.rank();
    for (size_t i = 0; i < a.rank(); ++i)
      ctx.require_broadcast(a.type().shape[i], r.type().shape[lead + i], [&] {
        return "extent of axis " + std::to_string(i) + " of operand " + std::to_string(k) + " against axis " +
               std::to_string(lead + i) + " of the result";
      });
  }
}

// A run of tileable kernels executed tile by tile (see fuse_elementwise_runs).
class FusedKernel final : public Kernel {
 public:
  FusedKernel(std::vector<KernelPtr> members, int64_t n) : members_(std::move(members)), n_(n) {}
  void run(const Frame& f) const override {
    // Tiles small enough that every member's operands and result stay in L2 between members.
    constexpr int64_t kTile = 8192;
    int64_t tiles = (n_ + kTile - 1) / kTile;
    int64_t per_task = std::max<int64_t>(1, kParallelGrain / kTile);
    int64_t tasks = (tiles + per_task - 1) / per_task;
    parallel_for(tasks, [&](int64_t t) {
      for (int64_t i = t * per_task; i < std::min(tiles, (t + 1) * per_task); ++i) {
        int64_t b = i * kTile, e = std::min(n_, b + kTile);
        for (const KernelPtr& k : members_) k->run_range(f, b, e);
      }
    });
  }

 private:
  std::vector<KernelPtr> members_;
  int64_t n_;
};

}  // namespace

void fuse_elementwise_runs(std::vector<KernelPtr>& kernels) {
  // Below this a single pass is already cache-resident and dispatch cost dominates.
  constexpr int64_t kMinFuse = 1 << 16;
  size_t i = 0;
  while (i < kernels.size()) {
    int64_t n = kernels[i] ? kernels[i]->tile_numel() : -1;
    size_t j = i + 1;
    if (n >= kMinFuse)
      while (j < kernels.size() && kernels[j] && kernels[j]->tile_numel() == n) ++j;
    if (n >= kMinFuse && j - i >= 2) {
      std::vector<KernelPtr> members;
      for (size_t k = i; k < j; ++k) members.push_back(std::move(kernels[k]));
      kernels[i] = std::make_unique<FusedKernel>(std::move(members), n);
    }
    i = j;
  }
}

KernelPtr unary_instruction(PrepareCtx& ctx, UnaryFn fn, const UnaryParams& params) {
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& r = ctx.result();
  if (a.rank() != r.rank()) ctx.fail("the result must have the operand's shape");
  for (size_t i = 0; i < a.rank(); ++i)
    ctx.require_equal(a.type().shape[i], r.type().shape[i], [&] { return "extent of axis " + std::to_string(i); });
  if (size_of(a.dtype()) == size_of(r.dtype())) ctx.in_place_operands = 1u;
  int64_t static_numel = -1;
  if (ctx.all_static()) {
    static_numel = 1;
    for (size_t i = 0; i < r.rank(); ++i) static_numel *= ctx.static_dims(ctx.out[0])[i];
  }
  return std::make_unique<UnaryKernel>(fn, params, ctx.in[0], ctx.out[0], size_of(a.dtype()), size_of(r.dtype()),
                                       static_numel);
}

KernelPtr binary_instruction(PrepareCtx& ctx, BinaryFn fn) {
  require_broadcastable(ctx);
  if (size_of(ctx.operand(0).dtype()) == size_of(ctx.result().dtype())) ctx.in_place_operands = 0b11u;
  return std::make_unique<BroadcastKernel<2>>(fn, ctx);
}

KernelPtr ternary_instruction(PrepareCtx& ctx, TernaryFn fn) {
  require_broadcastable(ctx);
  return std::make_unique<BroadcastKernel<3>>(fn, ctx);
}

}  // namespace evoxc::interp
