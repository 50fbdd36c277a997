// Structure instructions: transpose, broadcast_in_dim, slice (strided copies) and concatenate, for every dtype.
#include <algorithm>
#include <cstring>

#include "kernel_table.h"
#include "program.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

constexpr int kMaxRank = 16;

// A copy into a contiguous destination: element (i0, ..., in) comes from
// src[src0 + sum(i_k * str[k])]. Unit axes are dropped and mergeable axes merged.
struct CopyGeometry {
  int rank = 0;
  int64_t total = 0;
  int64_t src0 = 0;
  int64_t ext[kMaxRank];
  int64_t str[kMaxRank];
};

void collapse(const int64_t* ext, const int64_t* str, int rank, int64_t src0, CopyGeometry& g) {
  g.total = 1;
  g.src0 = src0;
  for (int i = 0; i < rank; ++i) g.total *= ext[i];
  int r = 0;
  for (int i = 0; i < rank; ++i) {
    if (ext[i] == 1) continue;
    if (r > 0 && g.str[r - 1] == str[i] * ext[i]) {
      g.ext[r - 1] *= ext[i];
      g.str[r - 1] = str[i];
      continue;
    }
    g.ext[r] = ext[i];
    g.str[r] = str[i];
    ++r;
  }
  if (r == 0) {
    g.ext[0] = 1;
    g.str[0] = 1;
    r = 1;
  }
  g.rank = r;
}

template <size_t ES>
struct Elem {
  unsigned char b[ES];
};

// Rows [q0, q1) of the collapsed space (a row is the innermost axis).
template <size_t ES>
void copy_rows(const CopyGeometry& g, const char* src, char* dst, int64_t q0, int64_t q1) {
  using E = Elem<ES>;
  const int r = g.rank;
  const int64_t inner = g.ext[r - 1], s = g.str[r - 1];
  int64_t idx[kMaxRank];
  int64_t off = g.src0;
  int64_t q = q0;
  for (int i = r - 2; i >= 0; --i) {
    idx[i] = q % g.ext[i];
    q /= g.ext[i];
    off += idx[i] * g.str[i];
  }
  for (q = q0; q < q1; ++q) {
    E* d = reinterpret_cast<E*>(dst) + q * inner;
    const E* p = reinterpret_cast<const E*>(src) + off;
    if (s == 1) {
      std::memcpy(d, p, static_cast<size_t>(inner) * ES);
    } else if (s == 0) {
      for (int64_t j = 0; j < inner; ++j) d[j] = p[0];
    } else {
      for (int64_t j = 0; j < inner; ++j) d[j] = p[j * s];
    }
    for (int i = r - 2; i >= 0; --i) {
      off += g.str[i];
      if (++idx[i] < g.ext[i]) break;
      off -= g.str[i] * g.ext[i];
      idx[i] = 0;
    }
  }
}

// The transpose pattern: the second-innermost axis reads contiguously, the innermost
// strides. Blocks of kTile x kTile keep both sides in cache.
template <size_t ES>
void copy_tiled(const CopyGeometry& g, const char* src, char* dst, int64_t t0, int64_t t1) {
  using E = Elem<ES>;
  constexpr int64_t kTile = 32;
  const int r = g.rank;
  const int64_t P = g.ext[r - 2], Q = g.ext[r - 1], S = g.str[r - 1];
  const int64_t ptiles = (P + kTile - 1) / kTile;
  for (int64_t t = t0; t < t1; ++t) {
    int64_t o = t / ptiles, p0 = (t % ptiles) * kTile, p1 = std::min(P, p0 + kTile);
    int64_t off = g.src0, q = o;
    for (int i = r - 3; i >= 0; --i) {
      off += (q % g.ext[i]) * g.str[i];
      q /= g.ext[i];
    }
    const E* s = reinterpret_cast<const E*>(src) + off;
    E* d = reinterpret_cast<E*>(dst) + o * P * Q;
    for (int64_t q0 = 0; q0 < Q; q0 += kTile) {
      int64_t q1 = std::min(Q, q0 + kTile);
      for (int64_t p = p0; p < p1; ++p)
        for (int64_t qq = q0; qq < q1; ++qq) d[p * Q + qq] = s[p + qq * S];
    }
  }
}

template <size_t ES>
void run_copy(const CopyGeometry& g, const char* src, char* dst) {
  if (g.total == 0) return;
  const int r = g.rank;
  if (r >= 2 && g.str[r - 2] == 1 && g.str[r - 1] != 1 && g.str[r - 1] != 0) {
    int64_t ptiles = (g.ext[r - 2] + 31) / 32;
    int64_t tasks = g.total / (g.ext[r - 2] * g.ext[r - 1]) * ptiles;
    if (g.total < kParallelGrain) {
      copy_tiled<ES>(g, src, dst, 0, tasks);
    } else {
      parallel_for(tasks, [&](int64_t t) { copy_tiled<ES>(g, src, dst, t, t + 1); });
    }
    return;
  }
  const int64_t inner = g.ext[r - 1], rows = g.total / inner;
  if (g.total < kParallelGrain) {
    copy_rows<ES>(g, src, dst, 0, rows);
    return;
  }
  int64_t rpt = std::max<int64_t>(1, kParallelGrain / inner);
  parallel_for((rows + rpt - 1) / rpt,
               [&](int64_t t) { copy_rows<ES>(g, src, dst, t * rpt, std::min(rows, (t + 1) * rpt)); });
}

using CopyFn = void (*)(const CopyGeometry&, const char*, char*);

CopyFn copy_fn(size_t es) {
  switch (es) {
    case 1: return &run_copy<1>;
    case 2: return &run_copy<2>;
    case 4: return &run_copy<4>;
    default: return &run_copy<8>;
  }
}

// transpose, broadcast_in_dim and slice: a strided read of the operand into the result.
class StridedKernel final : public Kernel {
 public:
  enum class Mode : uint8_t { Transpose, Broadcast, Slice };
  StridedKernel(Mode mode, const PrepareCtx& ctx, const std::vector<int64_t>& p1, const std::vector<int64_t>& p2)
      : mode_(mode), fn_(copy_fn(size_of(ctx.result().dtype()))) {
    in_ = ctx.in[0];
    out_ = ctx.out[0];
    irank_ = static_cast<int>(ctx.operand(0).rank());
    orank_ = static_cast<int>(ctx.result().rank());
    ioff_ = ctx.operand(0).dim_off;
    ooff_ = ctx.result().dim_off;
    for (size_t i = 0; i < p1.size(); ++i) p1_[i] = p1[i];
    for (size_t i = 0; i < p2.size(); ++i) p2_[i] = p2[i];
    if (ctx.all_static()) {
      geometry(ctx.static_dims(in_), ctx.static_dims(out_), geo_);
      static_ = true;
    }
  }
  void run(const Frame& f) const override {
    CopyGeometry local;
    const CopyGeometry* g = &geo_;
    if (!static_) {
      geometry(f.dims + ioff_, f.dims + ooff_, local);
      g = &local;
    }
    fn_(*g, static_cast<const char*>(f.ptr[in_]), static_cast<char*>(f.ptr[out_]));
  }

 private:
  void geometry(const int64_t* id, const int64_t* od, CopyGeometry& g) const {
    int64_t istr[kMaxRank], str[kMaxRank];
    int64_t s = 1;
    for (int i = irank_ - 1; i >= 0; --i) {
      istr[i] = s;
      s *= id[i];
    }
    int64_t src0 = 0;
    switch (mode_) {
      case Mode::Transpose:
        for (int i = 0; i < orank_; ++i) str[i] = istr[p1_[i]];
        break;
      case Mode::Broadcast:
        for (int i = 0; i < orank_; ++i) str[i] = 0;
        for (int k = 0; k < irank_; ++k) {
          int64_t i = p1_[k];
          str[i] = (id[k] == 1 && od[i] != 1) ? 0 : istr[k];
        }
        break;
      case Mode::Slice:
        for (int i = 0; i < orank_; ++i) {
          str[i] = istr[i] * p2_[i];
          src0 += p1_[i] * istr[i];
        }
        break;
    }
    collapse(od, str, orank_, src0, g);
  }

  Mode mode_;
  CopyFn fn_;
  uint32_t in_, out_, ioff_, ooff_;
  int irank_, orank_;
  int64_t p1_[kMaxRank] = {}, p2_[kMaxRank] = {};
  bool static_ = false;
  CopyGeometry geo_;
};

class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(const PrepareCtx& ctx, int axis) : axis_(axis), es_(size_of(ctx.result().dtype())) {
    for (size_t k = 0; k < ctx.in.size(); ++k) {
      in_.push_back(ctx.in[k]);
      ioff_.push_back(ctx.operand(k).dim_off);
    }
    out_ = ctx.out[0];
    ooff_ = ctx.result().dim_off;
    rank_ = static_cast<int>(ctx.result().rank());
  }
  void run(const Frame& f) const override {
    const int64_t* od = f.dims + ooff_;
    int64_t outer = 1, inner = static_cast<int64_t>(es_);
    for (int i = 0; i < axis_; ++i) outer *= od[i];
    for (int i = axis_ + 1; i < rank_; ++i) inner *= od[i];
    const int64_t row = od[axis_] * inner;  // bytes per outer step of the result
    if (outer == 0 || row == 0) return;
    char* dst = static_cast<char*>(f.ptr[out_]);
    auto body = [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        int64_t at = 0;
        for (size_t k = 0; k < in_.size(); ++k) {
          int64_t chunk = f.dims[ioff_[k] + static_cast<uint32_t>(axis_)] * inner;
          if (chunk)
            std::memcpy(dst + o * row + at, static_cast<const char*>(f.ptr[in_[k]]) + o * chunk,
                        static_cast<size_t>(chunk));
          at += chunk;
        }
      }
    };
    int64_t total = outer * row / static_cast<int64_t>(es_);
    if (total < kParallelGrain || outer == 1) {
      body(0, outer);
      return;
    }
    int64_t per = std::max<int64_t>(1, kParallelGrain * static_cast<int64_t>(es_) / row);
    parallel_for((outer + per - 1) / per, [&](int64_t t) { body(t * per, std::min(outer, (t + 1) * per)); });
  }

 private:
  int axis_;
  size_t es_;
  std::vector<uint32_t> in_, ioff_;
  uint32_t out_, ooff_;
  int rank_;
};

void require_same_dtype(PrepareCtx& ctx) {
  for (size_t k = 0; k < ctx.in.size(); ++k)
    if (ctx.operand(k).dtype() != ctx.result().dtype())
      ctx.fail("operand " + std::to_string(k) + " has dtype " + std::string(dtype_name(ctx.operand(k).dtype())) +
               " but the result has " + std::string(dtype_name(ctx.result().dtype())));
}

KernelPtr make_transpose(PrepareCtx& ctx) {
  const auto& perm = ctx.attr_ints("permutation");
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& r = ctx.result();
  if (perm.size() != a.rank() || r.rank() != a.rank()) ctx.fail("the permutation must list every axis once");
  std::vector<bool> seen(a.rank(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(a.rank()) || seen[static_cast<size_t>(perm[i])])
      ctx.fail("the permutation must list every axis once");
    seen[static_cast<size_t>(perm[i])] = true;
    ctx.require_equal(a.type().shape[static_cast<size_t>(perm[i])], r.type().shape[i],
                      "extent of result axis " + std::to_string(i));
  }
  return std::make_unique<StridedKernel>(StridedKernel::Mode::Transpose, ctx, perm, std::vector<int64_t>{});
}

KernelPtr make_broadcast_in_dim(PrepareCtx& ctx) {
  const auto& bd = ctx.attr_ints("broadcast_dimensions");
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& r = ctx.result();
  if (bd.size() != a.rank()) ctx.fail("broadcast_dimensions must have one entry per operand axis");
  for (size_t k = 0; k < bd.size(); ++k) {
    if (bd[k] < 0 || bd[k] >= static_cast<int64_t>(r.rank()) || (k > 0 && bd[k] <= bd[k - 1]))
      ctx.fail("broadcast_dimensions must be strictly increasing result axes");
    ctx.require_broadcast(
        a.type().shape[k], r.type().shape[static_cast<size_t>(bd[k])],
        "extent of operand axis " + std::to_string(k) + " against result axis " + std::to_string(bd[k]));
  }
  const Shape& want = ctx.attr_shape("shape");
  if (want.rank() != r.rank()) ctx.fail("the result type differs from the shape attribute");
  for (size_t i = 0; i < r.rank(); ++i)
    ctx.require_equal(want[i], r.type().shape[i], "extent of result axis " + std::to_string(i));
  return std::make_unique<StridedKernel>(StridedKernel::Mode::Broadcast, ctx, bd, std::vector<int64_t>{});
}

KernelPtr make_slice(PrepareCtx& ctx) {
  const auto& start = ctx.attr_ints("start_indices");
  const Shape& limit = ctx.attr_shape("limit_indices");
  const auto& strides = ctx.attr_ints("strides");
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& r = ctx.result();
  size_t n = a.rank();
  if (start.size() != n || limit.rank() != n || strides.size() != n || r.rank() != n)
    ctx.fail("start_indices, limit_indices and strides need one entry per axis");
  for (size_t i = 0; i < n; ++i) {
    if (strides[i] < 1) ctx.fail("strides must be at least 1");
    if (start[i] < 0) ctx.fail("start_indices must be non-negative");
    std::string ax = " of axis " + std::to_string(i);
    ctx.require_less_equal(DimExpr(start[i]), limit[i], "start" + ax + " at most its limit");
    ctx.require_less_equal(limit[i], a.type().shape[i], "limit" + ax + " within the operand's extent");
    ctx.require_equal(floordiv(limit[i] - DimExpr(start[i]) + DimExpr(strides[i] - 1), DimExpr(strides[i])),
                      r.type().shape[i], "result extent" + ax);
  }
  return std::make_unique<StridedKernel>(StridedKernel::Mode::Slice, ctx, start, strides);
}

KernelPtr make_concatenate(PrepareCtx& ctx) {
  int64_t axis = ctx.attr_int("axis");
  const ValueDesc& r = ctx.result();
  if (ctx.in.empty()) ctx.fail("needs at least one operand");
  if (axis < 0 || axis >= static_cast<int64_t>(r.rank())) ctx.fail("axis is out of range");
  DimExpr sum(0);
  for (size_t k = 0; k < ctx.in.size(); ++k) {
    const ValueDesc& a = ctx.operand(k);
    if (a.rank() != r.rank()) ctx.fail("operands must share the result's rank");
    for (size_t i = 0; i < a.rank(); ++i) {
      if (static_cast<int64_t>(i) == axis) continue;
      ctx.require_equal(a.type().shape[i], r.type().shape[i],
                        "extent of axis " + std::to_string(i) + " of operand " + std::to_string(k));
    }
    sum = sum + a.type().shape[static_cast<size_t>(axis)];
  }
  ctx.require_equal(sum, r.type().shape[static_cast<size_t>(axis)], "sum of the extents along the axis");
  return std::make_unique<ConcatKernel>(ctx, static_cast<int>(axis));
}

// What every structure op checks first; concatenate takes any number of operands.
template <bool AnyOperands>
void check_structure(PrepareCtx& ctx) {
  if (ctx.op.num_results() != 1) ctx.fail("expects one result");
  if (!AnyOperands && ctx.op.num_operands() != 1) ctx.fail("expects one operand");
  require_same_dtype(ctx);
  if (ctx.result().rank() > static_cast<uint32_t>(kMaxRank) ||
      (!ctx.in.empty() && ctx.operand(0).rank() > static_cast<uint32_t>(kMaxRank)))
    ctx.fail("the interpreter supports structure ops up to rank " + std::to_string(kMaxRank));
}

template <KernelPtr (*Make)(PrepareCtx&), bool AnyOperands = false>
KernelPtr structure(PrepareCtx& ctx) {
  check_structure<AnyOperands>(ctx);
  return Make(ctx);
}

// Zero-copy views (reshape, expand_dims, squeeze): the result shares the operand's bytes;
// only what a copy would have relied on is checked. reshape's shape attribute, when
// present, must agree with the result type.
template <bool Reshape>
KernelPtr make_view(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 1 || ctx.op.num_results() != 1) ctx.fail("expects one operand and one result");
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& r = ctx.result();
  if (a.dtype() != r.dtype()) ctx.fail("the result dtype must equal the operand's");
  if (Reshape && ctx.has_attr("shape")) {
    const Shape& want = ctx.attr_shape("shape");
    if (want.rank() != r.rank()) ctx.fail("the result type differs from the shape attribute");
    for (size_t i = 0; i < r.rank(); ++i)
      ctx.require_equal(want[i], r.type().shape[i], [&] { return "extent of result axis " + std::to_string(i); });
  }
  ctx.require_equal(a.type().shape.num_elements(), r.type().shape.num_elements(),
                    "element count of operand and result");
  ctx.alias_operand0 = true;
  return nullptr;
}

}  // namespace

void install_structure_kernels(KernelTable& t) {
  t.set("transpose", &structure<make_transpose>);
  t.set("broadcast_in_dim", &structure<make_broadcast_in_dim>);
  t.set("slice", &structure<make_slice>);
  t.set("concatenate", &structure<make_concatenate, true>);
  t.set("reshape", &make_view<true>);
  t.set("expand_dims", &make_view<false>);
  t.set("squeeze", &make_view<false>);
}

}  // namespace evoxc::interp
