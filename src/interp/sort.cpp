// Interpreter kernels of the sort family: sort (multi-operand, stable), argsort, top_k, searchsorted (every dtype).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "kernel_table.h"
#include "program.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

template <typename T>
auto order_load(T x) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return static_cast<float>(x);
  } else {
    return x;
  }
}

// The total order every sort-family op uses: ascending, NaN after everything (numpy), -0 equal to +0.
template <typename T>
bool less_nan_last(T a, T b) {
  auto x = order_load(a);
  auto y = order_load(b);
  if constexpr (std::is_floating_point_v<decltype(x)>) {
    if (y != y) return x == x;
    return x < y;
  } else {
    return x < y;
  }
}

// Three-way comparison of elements a and b of a line (base pointer, stride in elements).
using Cmp3 = int (*)(const void* base, int64_t stride, int64_t a, int64_t b);
template <typename T>
int cmp3(const void* base, int64_t stride, int64_t a, int64_t b) {
  const T* p = static_cast<const T*>(base);
  T x = p[a * stride], y = p[b * stride];
  if (less_nan_last(x, y)) return -1;
  if (less_nan_last(y, x)) return 1;
  return 0;
}
Cmp3 pick_cmp(DType t) {
  return visit_dtype(t, [](auto tag) -> Cmp3 { return &cmp3<decltype(tag)>; });
}

// A stable LSD radix argsort for single-key sorts of 32- and 64-bit types: the same order as
// less_nan_last (NaN last and equal among themselves, -0 equal to +0), in O(n) instead of an
// indirect comparison sort. Keys map to unsigned integers whose order is the sort order.
template <typename T>
auto radix_key(T x) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    using U = std::conditional_t<std::is_same_v<T, float>, uint32_t, uint64_t>;
    constexpr U sign = U{1} << (sizeof(U) * 8 - 1);
    if (x != x) return static_cast<U>(~U{0});
    if (x == T(0)) x = T(0);  // -0 sorts as +0
    U u;
    std::memcpy(&u, &x, sizeof u);
    return (u & sign) ? static_cast<U>(~u) : static_cast<U>(u | sign);
  } else {
    using U = std::make_unsigned_t<T>;
    if constexpr (std::is_signed_v<T>) {
      return static_cast<U>(static_cast<U>(x) ^ (U{1} << (sizeof(U) * 8 - 1)));
    } else {
      return static_cast<U>(x);
    }
  }
}

using RadixFn = void (*)(const void* base, int64_t stride, int64_t n, int64_t* perm);
template <typename T>
void radix_argsort(const void* base, int64_t stride, int64_t n, int64_t* perm) {
  using U = decltype(radix_key(T{}));
  const T* p = static_cast<const T*>(base);
  std::vector<U> key(static_cast<size_t>(n)), key2(static_cast<size_t>(n));
  std::vector<int64_t> idx2(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    key[static_cast<size_t>(i)] = radix_key(p[i * stride]);
    perm[i] = i;
  }
  U* k = key.data();
  U* k2 = key2.data();
  int64_t* ix = perm;
  int64_t* ix2 = idx2.data();
  for (unsigned shift = 0; shift < sizeof(U) * 8; shift += 8) {
    int64_t count[257] = {};
    for (int64_t i = 0; i < n; ++i) ++count[((k[i] >> shift) & 0xFF) + 1];
    if (count[((k[0] >> shift) & 0xFF) + 1] == n) continue;  // every key shares this byte: nothing moves
    for (int b = 0; b < 256; ++b) count[b + 1] += count[b];
    for (int64_t i = 0; i < n; ++i) {
      int64_t dst = count[(k[i] >> shift) & 0xFF]++;
      k2[dst] = k[i];
      ix2[dst] = ix[i];
    }
    std::swap(k, k2);
    std::swap(ix, ix2);
  }
  if (ix != perm) std::memcpy(perm, ix, static_cast<size_t>(n) * sizeof(int64_t));
}

RadixFn pick_radix(DType t) {
  switch (t) {
    case DType::F32: return &radix_argsort<float>;
    case DType::F64: return &radix_argsort<double>;
    case DType::I32: return &radix_argsort<int32_t>;
    case DType::I64: return &radix_argsort<int64_t>;
    case DType::U32: return &radix_argsort<uint32_t>;
    case DType::U64: return &radix_argsort<uint64_t>;
    default: return nullptr;
  }
}

struct LineGeometry {
  int64_t outer = 1, n = 1, inner = 1;
};
LineGeometry line_geometry(const int64_t* d, int rank, int axis) {
  LineGeometry g;
  g.n = d[axis];
  for (int i = 0; i < axis; ++i) g.outer *= d[i];
  for (int i = axis + 1; i < rank; ++i) g.inner *= d[i];
  return g;
}

// Runs body(line, perm) for each of outer*inner lines, with a permutation buffer per task. The buffer is the one
// allocation a sort makes per call; lines are independent, so the result never depends on the thread count.
template <typename F>
void for_lines(const LineGeometry& g, F&& body) {
  int64_t lines = g.outer * g.inner;
  if (lines == 0 || g.n == 0) return;
  int64_t per = std::max<int64_t>(1, kParallelGrain / g.n);
  int64_t tasks = (lines + per - 1) / per;
  auto task = [&](int64_t t) {
    std::vector<int64_t> perm(static_cast<size_t>(g.n));
    for (int64_t l = t * per; l < std::min(lines, (t + 1) * per); ++l) body(l, perm.data());
  };
  if (lines * g.n < kParallelGrain) {
    for (int64_t t = 0; t < tasks; ++t) task(t);
  } else {
    parallel_for(tasks, task);
  }
}

int64_t line_start(const LineGeometry& g, int64_t line) { return (line / g.inner) * g.n * g.inner + line % g.inner; }

// sort and argsort.
class SortKernel final : public Kernel {
 public:
  SortKernel(std::vector<uint32_t> in, std::vector<uint32_t> out, std::vector<size_t> es, std::vector<Cmp3> keys,
             RadixFn radix, bool argsort, uint32_t dim_off, int rank, int axis)
      : in_(std::move(in)),
        out_(std::move(out)),
        es_(std::move(es)),
        keys_(std::move(keys)),
        radix_(radix),
        argsort_(argsort),
        dim_off_(dim_off),
        rank_(rank),
        axis_(axis) {}
  void run(const Frame& f) const override {
    LineGeometry g = line_geometry(f.dims + dim_off_, rank_, axis_);
    for_lines(g, [&](int64_t line, int64_t* perm) {
      int64_t s = line_start(g, line);
      const void* kb[kMaxKeys];
      for (size_t k = 0; k < keys_.size(); ++k)
        kb[k] = static_cast<const char*>(f.ptr[in_[k]]) + static_cast<size_t>(s) * es_[k];
      if (radix_ && g.n > 64) {
        radix_(kb[0], g.inner, g.n, perm);
      } else {
        std::iota(perm, perm + g.n, int64_t{0});
        std::stable_sort(perm, perm + g.n, [&](int64_t a, int64_t b) {
          for (size_t k = 0; k < keys_.size(); ++k) {
            int c = keys_[k](kb[k], g.inner, a, b);
            if (c != 0) return c < 0;
          }
          return false;
        });
      }
      if (argsort_) {
        int64_t* o = static_cast<int64_t*>(f.ptr[out_[0]]) + s;
        for (int64_t j = 0; j < g.n; ++j) o[j * g.inner] = perm[j];
        return;
      }
      for (size_t k = 0; k < out_.size(); ++k) {
        size_t es = es_[k];
        const char* src = static_cast<const char*>(f.ptr[in_[k]]) + static_cast<size_t>(s) * es;
        char* dst = static_cast<char*>(f.ptr[out_[k]]) + static_cast<size_t>(s) * es;
        for (int64_t j = 0; j < g.n; ++j)
          std::memcpy(dst + static_cast<size_t>(j * g.inner) * es, src + static_cast<size_t>(perm[j] * g.inner) * es,
                      es);
      }
    });
  }
  static constexpr size_t kMaxKeys = 64;

 private:
  std::vector<uint32_t> in_, out_;
  std::vector<size_t> es_;
  std::vector<Cmp3> keys_;
  RadixFn radix_;  // single-key sorts of 32/64-bit types; nullptr otherwise
  bool argsort_;
  uint32_t dim_off_;
  int rank_, axis_;
};

template <bool argsort>
KernelPtr make_sort(PrepareCtx& ctx) {
  size_t n = ctx.op.num_operands();
  if (n == 0) ctx.fail("expects at least one operand");
  if (argsort ? (n != 1 || ctx.op.num_results() != 1) : ctx.op.num_results() != n)
    ctx.fail(argsort ? "expects one operand and one result" : "expects one result per operand");
  const ValueDesc& a = ctx.operand(0);
  int64_t axis = ctx.attr_int("dimension");
  if (a.rank() == 0 || axis < 0 || axis >= static_cast<int64_t>(a.rank()))
    ctx.fail("dimension " + std::to_string(axis) + " is out of range for rank " + std::to_string(a.rank()));
  int64_t num_keys = argsort ? 1 : ctx.attr_int("num_keys");
  if (num_keys < 1 || num_keys > static_cast<int64_t>(n) || num_keys > static_cast<int64_t>(SortKernel::kMaxKeys))
    ctx.fail("num_keys must lie in [1, " + std::to_string(n) + "]");
  std::vector<size_t> es;
  std::vector<Cmp3> keys;
  for (size_t i = 0; i < n; ++i) {
    const ValueDesc& v = ctx.operand(i);
    if (v.rank() != a.rank()) ctx.fail("every operand must have operand 0's shape");
    for (size_t d = 0; d < a.rank(); ++d) {
      ctx.require_equal(a.type().shape[d], v.type().shape[d],
                        "extent of axis " + std::to_string(d) + " of operand " + std::to_string(i));
      ctx.require_equal(a.type().shape[d], ctx.result(argsort ? 0 : i).type().shape[d],
                        "extent of result axis " + std::to_string(d));
    }
    if (!argsort && (ctx.result(i).dtype() != v.dtype() || ctx.result(i).rank() != v.rank()))
      ctx.fail("each result must have its operand's type");
    es.push_back(size_of(v.dtype()));
    if (static_cast<int64_t>(i) < num_keys) keys.push_back(pick_cmp(v.dtype()));
  }
  if (argsort && (ctx.result().dtype() != DType::I64 || ctx.result().rank() != a.rank()))
    ctx.fail("the result must be int64 with the operand's shape");
  RadixFn radix = keys.size() == 1 ? pick_radix(a.dtype()) : nullptr;
  return std::make_unique<SortKernel>(
      std::vector<uint32_t>(ctx.in.begin(), ctx.in.end()), std::vector<uint32_t>(ctx.out.begin(), ctx.out.end()),
      std::move(es), std::move(keys), radix, argsort, a.dim_off, static_cast<int>(a.rank()), static_cast<int>(axis));
}

// ---------------------------------------------------------------------------------------------
// top_k

using TopKFn = void (*)(const void* x, void* values, int64_t* indices, int64_t rows, int64_t n, int64_t k);

template <typename T>
void top_k_entry(const void* xv, void* vv, int64_t* idx, int64_t rows, int64_t n, int64_t k) {
  const T* x = static_cast<const T*>(xv);
  T* vals = static_cast<T*>(vv);
  if (rows == 0 || k == 0) return;
  int64_t per = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
  int64_t tasks = (rows + per - 1) / per;
  auto task = [&](int64_t t) {
    std::vector<int64_t> perm(static_cast<size_t>(n));
    for (int64_t r = t * per; r < std::min(rows, (t + 1) * per); ++r) {
      const T* row = x + r * n;
      std::iota(perm.begin(), perm.end(), int64_t{0});
      // Descending with NaN largest; equal values keep the lower index first (an explicit tie-break makes the
      // unstable partial sort deterministic).
      std::partial_sort(perm.begin(), perm.begin() + k, perm.end(), [&](int64_t a, int64_t b) {
        if (less_nan_last(row[b], row[a])) return true;
        if (less_nan_last(row[a], row[b])) return false;
        return a < b;
      });
      for (int64_t j = 0; j < k; ++j) {
        vals[r * k + j] = row[perm[static_cast<size_t>(j)]];
        idx[r * k + j] = perm[static_cast<size_t>(j)];
      }
    }
  };
  if (rows * n < kParallelGrain) {
    for (int64_t t = 0; t < tasks; ++t) task(t);
  } else {
    parallel_for(tasks, task);
  }
}

class TopKKernel final : public Kernel {
 public:
  TopKKernel(TopKFn fn, uint32_t in, uint32_t vals, uint32_t idx, uint32_t dim_off, int rank, int64_t k)
      : fn_(fn), in_(in), vals_(vals), idx_(idx), dim_off_(dim_off), rank_(rank), k_(k) {}
  void run(const Frame& f) const override {
    const int64_t* d = f.dims + dim_off_;
    int64_t rows = 1;
    for (int i = 0; i + 1 < rank_; ++i) rows *= d[i];
    fn_(f.ptr[in_], f.ptr[vals_], static_cast<int64_t*>(f.ptr[idx_]), rows, d[rank_ - 1], k_);
  }

 private:
  TopKFn fn_;
  uint32_t in_, vals_, idx_, dim_off_;
  int rank_;
  int64_t k_;
};

KernelPtr make_top_k(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 1 || ctx.op.num_results() != 2) ctx.fail("expects one operand and two results");
  const ValueDesc& a = ctx.operand(0);
  int64_t k = ctx.attr_int("k");
  if (a.rank() == 0) ctx.fail("the operand must have rank >= 1");
  if (k < 0) ctx.fail("k must be >= 0");
  const ValueDesc& v = ctx.result(0);
  const ValueDesc& i = ctx.result(1);
  if (v.dtype() != a.dtype() || i.dtype() != DType::I64 || v.rank() != a.rank() || i.rank() != a.rank())
    ctx.fail("the results must be (values of the operand's dtype, int64 indices) of the operand's rank");
  size_t last = a.rank() - 1;
  ctx.require_less_equal(DimExpr(k), a.type().shape[last], "k within the last extent");
  for (size_t d = 0; d < a.rank(); ++d) {
    DimExpr want = d == last ? DimExpr(k) : a.type().shape[d];
    ctx.require_equal(want, v.type().shape[d], "extent of values axis " + std::to_string(d));
    ctx.require_equal(want, i.type().shape[d], "extent of indices axis " + std::to_string(d));
  }
  TopKFn fn = visit_dtype(a.dtype(), [](auto tag) -> TopKFn { return &top_k_entry<decltype(tag)>; });
  return std::make_unique<TopKKernel>(fn, ctx.in[0], ctx.out[0], ctx.out[1], a.dim_off, static_cast<int>(a.rank()), k);
}

// ---------------------------------------------------------------------------------------------
// searchsorted

using SearchFn = void (*)(const void* sorted, int64_t n, const void* values, int64_t m, int64_t* out, bool right);

template <typename T>
void search_entry(const void* sv, int64_t n, const void* vv, int64_t m, int64_t* out, bool right) {
  const T* s = static_cast<const T*>(sv);
  const T* v = static_cast<const T*>(vv);
  auto one = [&](int64_t i) {
    const T* p = right ? std::upper_bound(s, s + n, v[i], [](T a, T b) { return less_nan_last(a, b); })
                       : std::lower_bound(s, s + n, v[i], [](T a, T b) { return less_nan_last(a, b); });
    out[i] = p - s;
  };
  if (m < 4096) {
    for (int64_t i = 0; i < m; ++i) one(i);
  } else {
    int64_t per = 4096;
    parallel_for((m + per - 1) / per, [&](int64_t t) {
      for (int64_t i = t * per; i < std::min(m, (t + 1) * per); ++i) one(i);
    });
  }
}

class SearchKernel final : public Kernel {
 public:
  SearchKernel(SearchFn fn, uint32_t sorted, uint32_t values, uint32_t out, bool right)
      : fn_(fn), sorted_(sorted), values_(values), out_(out), right_(right) {}
  void run(const Frame& f) const override {
    fn_(f.ptr[sorted_], f.numel[sorted_], f.ptr[values_], f.numel[values_], static_cast<int64_t*>(f.ptr[out_]), right_);
  }

 private:
  SearchFn fn_;
  uint32_t sorted_, values_, out_;
  bool right_;
};

KernelPtr make_searchsorted(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 2 || ctx.op.num_results() != 1) ctx.fail("expects two operands and one result");
  const ValueDesc& s = ctx.operand(0);
  const ValueDesc& v = ctx.operand(1);
  if (s.rank() != 1) ctx.fail("the sorted operand must have rank 1");
  if (s.dtype() != v.dtype()) ctx.fail("the sorted operand and the values must have one dtype");
  const ValueDesc& r = ctx.result();
  if (r.dtype() != DType::I64 || r.rank() != v.rank()) ctx.fail("the result must be int64 with the values' shape");
  for (size_t d = 0; d < v.rank(); ++d)
    ctx.require_equal(v.type().shape[d], r.type().shape[d], "extent of result axis " + std::to_string(d));
  const std::string& side = ctx.attr_string("side");
  // side is "left" (lower bound) or "right" (upper bound).
  constexpr std::string_view kSides[] = {"left", "right"};
  const bool right = std::string_view(side) == kSides[1];
  if (!right && std::string_view(side) != kSides[0]) ctx.fail("side must be 'left' or 'right'");
  SearchFn fn = visit_dtype(s.dtype(), [](auto tag) -> SearchFn { return &search_entry<decltype(tag)>; });
  return std::make_unique<SearchKernel>(fn, ctx.in[0], ctx.in[1], ctx.out[0], right);
}

}  // namespace

void install_sort_kernels(KernelTable& t) {
  t.set("sort", &make_sort<false>);
  t.set("argsort", &make_sort<true>);
  t.set("top_k", &make_top_k);
  t.set("searchsorted", &make_searchsorted);
}

}  // namespace evoxc::interp
