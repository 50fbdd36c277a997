// Interpreter kernels of the sparse primitives: sparse_validate (a structure check, then the components copied
// through) and sparse_csr_matmul (rows of A @ B in parallel chunks; A^T @ B serially, scattering rows). Both check
// every index they read before any arithmetic: a bad structure is a ValidationError naming the entry, never an
// out-of-bounds read.
#include "evoxc/ops/sparse.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "evoxc/core/small_vector.h"
#include "index_load.h"
#include "kernel_table.h"
#include "thread_pool.h"

namespace evoxc::interp {
namespace {

// A symbolic extent of an attribute, evaluated per call from the plan's symbols.
class Extent {
 public:
  Extent() = default;
  Extent(const DimExpr& d, const PrepareCtx& ctx) {
    if (auto c = d.as_const()) {
      value_ = *c;
    } else {
      id_ = code_.add(d, ctx.sym_names());
    }
  }
  int64_t operator()(const Frame& f) const { return id_ < 0 ? value_ : code_.eval(id_, f.syms); }

 private:
  DimCode code_;
  int32_t id_ = -1;
  int64_t value_ = 0;
};

std::string shape_text(const std::vector<int64_t>& s) {  // "(4, 5)"
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

// Where a message starts: the op, and the batch element when there are several.
struct Where {
  const std::string& op;
  const char* detail;
  int64_t batch = -1;
  std::string text() const {
    return op + detail + (batch >= 0 ? " (batch element " + std::to_string(batch) + ")" : std::string());
  }
};

// Checks a CSR/CSC structure: indptr[0] = 0, non-decreasing, indptr[n] = nse, every index in [0, minor) and
// non-decreasing within its row. Not `strict` (what a kernel needs to read safely): 0 <= indptr[0], non-decreasing,
// indptr[n] <= nse, the indices it covers in range. `ptr(i)` and `idx(k)` read the components as int64.
template <typename Ptr, typename Idx>
void check_compressed_with(Ptr ptr, Idx idx, int64_t n, int64_t nse, int64_t minor, const Where& where,
                           const char* row_word, bool strict) {
  auto what = [&] { return where.text(); };
  if (!strict && ptr(0) < 0) throw ValidationError(what() + ": indptr[0] is " + std::to_string(ptr(0)) + ", below 0");
  if (strict && ptr(0) != 0)
    throw ValidationError(what() + ": indptr[0] is " + std::to_string(ptr(0)) + ", it must be 0");
  for (int64_t r = 0; r < n; ++r) {
    const int64_t lo = ptr(r), hi = ptr(r + 1);
    if (hi < lo || hi > nse)
      throw ValidationError(what() + ": indptr[" + std::to_string(r + 1) + "] is " + std::to_string(hi) +
                            ", it must lie in [indptr[" + std::to_string(r) + "] = " + std::to_string(lo) + ", " +
                            std::to_string(nse) + "]");
    int64_t prev = -1;
    for (int64_t k = lo; k < hi; ++k) {
      const int64_t c = idx(k);
      if (c < 0 || c >= minor)
        throw ValidationError(what() + ": entry " + std::to_string(k) + " (" + row_word + " " + std::to_string(r) +
                              ") has index " + std::to_string(c) + ", out of range [0, " + std::to_string(minor) + ")");
      if (strict && c < prev)
        throw ValidationError(what() + ": entry " + std::to_string(k) + " (" + row_word + " " + std::to_string(r) +
                              ") has index " + std::to_string(c) + " after " + std::to_string(prev) +
                              ": indices must be sorted within each " + row_word);
      prev = c;
    }
  }
  if (strict && ptr(n) != nse)
    throw ValidationError(what() + ": indptr[" + std::to_string(n) + "] is " + std::to_string(ptr(n)) +
                          ", it must equal the number of stored entries, " + std::to_string(nse));
}

// check_compressed_with over the components' dtypes: direct loads for int32 and int64 (scipy's and evoxc's index
// types), the readers chosen at prepare otherwise.
void check_compressed(const void* indptr, DType pt, IndexLoad pl, const void* indices, DType it, IndexLoad il,
                      int64_t n, int64_t nse, int64_t minor, const Where& where, const char* row_word,
                      bool strict = true) {
  auto direct = [&](auto ptag, auto itag) {
    using P = decltype(ptag);
    using I = decltype(itag);
    const P* p = static_cast<const P*>(indptr);
    const I* x = static_cast<const I*>(indices);
    check_compressed_with([p](int64_t i) { return static_cast<int64_t>(p[i]); },
                          [x](int64_t k) { return static_cast<int64_t>(x[k]); }, n, nse, minor, where, row_word,
                          strict);
  };
  const bool p64 = pt == DType::I64, i64 = it == DType::I64;
  if ((p64 || pt == DType::I32) && (i64 || it == DType::I32)) {
    if (p64 && i64) return direct(int64_t{}, int64_t{});
    if (p64) return direct(int64_t{}, int32_t{});
    if (i64) return direct(int32_t{}, int64_t{});
    return direct(int32_t{}, int32_t{});
  }
  check_compressed_with([&](int64_t i) { return pl(indptr, i); }, [&](int64_t k) { return il(indices, k); }, n, nse,
                        minor, where, row_word, strict);
}

class ValidateKernel final : public Kernel {
 public:
  ValidateKernel(PrepareCtx& ctx, SparseFormat format) : format_(format), where_(ctx.where()) {
    for (const DimExpr& d : ctx.attr_shape("shape")) shape_.emplace_back(d, ctx);
    for (size_t i = 0; i < ctx.in.size(); ++i) {
      in_.push_back(ctx.in[i]);
      out_.push_back(ctx.out[i]);
      types_.push_back(ctx.operand(i).dtype());
      loads_.push_back(pick_index_load(ctx.operand(i).dtype()));  // null for the values
      ranks_.push_back(ctx.operand(i).rank());
      dim_off_.push_back(ctx.operand(i).dim_off);
      esize_.push_back(size_of(ctx.operand(i).dtype()));
    }
  }

  void run(const Frame& f) const override {
    SmallVector<int64_t, 8> shape;
    for (const Extent& e : shape_) shape.push_back(e(f));
    // Component 0's leading axes are the batch; one structure per batch element.
    const int64_t* d0 = f.dims + dim_off_[0];
    const uint32_t inner0 = format_ == SparseFormat::Coo ? 2 : 1;
    int64_t batch = 1;
    for (uint32_t a = 0; a + inner0 < ranks_[0]; ++a) batch *= d0[a];
    const int64_t* d1 = f.dims + dim_off_[1];
    for (int64_t b = 0; b < batch; ++b) {
      const Where where{where_,
                        format_ == SparseFormat::Coo   ? ""
                        : format_ == SparseFormat::Csr ? " (csr)"
                                                       : " (csc)",
                        batch > 1 ? b : -1};
      if (format_ == SparseFormat::Coo) {
        const int64_t nse = d0[ranks_[0] - 2], nd = d0[ranks_[0] - 1];
        const void* idx = static_cast<const char*>(f.ptr[in_[0]]) + b * nse * nd * static_cast<int64_t>(esize_[0]);
        for (int64_t k = 0; k < nse; ++k)
          for (int64_t a = 0; a < nd; ++a) {
            const int64_t i = loads_[0](idx, k * nd + a);
            if (i < 0 || i >= shape[static_cast<size_t>(a)])
              throw ValidationError(where.text() + ": COO entry " + std::to_string(k) + " has index " +
                                    std::to_string(i) + " on axis " + std::to_string(a) + ", out of range for shape " +
                                    shape_text({shape.begin(), shape.end()}));
          }
      } else {
        const bool csr = format_ == SparseFormat::Csr;
        const int64_t n = shape[csr ? 0 : 1], minor = shape[csr ? 1 : 0], nse = d1[ranks_[1] - 1];
        const char* ip = static_cast<const char*>(f.ptr[in_[0]]) + b * (n + 1) * static_cast<int64_t>(esize_[0]);
        const char* ix = static_cast<const char*>(f.ptr[in_[1]]) + b * nse * static_cast<int64_t>(esize_[1]);
        check_compressed(ip, types_[0], loads_[0], ix, types_[1], loads_[1], n, nse, minor, where,
                         csr ? "row" : "column");
      }
    }
    for (size_t i = 0; i < in_.size(); ++i) {
      if (f.ptr[out_[i]] == f.ptr[in_[i]]) continue;
      std::memcpy(f.ptr[out_[i]], f.ptr[in_[i]], static_cast<size_t>(f.numel[in_[i]]) * esize_[i]);
    }
  }

 private:
  SparseFormat format_;
  std::string where_;
  std::vector<Extent> shape_;
  std::vector<uint32_t> in_, out_, ranks_, dim_off_;
  std::vector<DType> types_;
  std::vector<IndexLoad> loads_;
  std::vector<size_t> esize_;
};

KernelPtr make_validate(PrepareCtx& ctx) {
  auto f = parse_sparse_format(ctx.attr_string("format"));
  if (!f) ctx.fail("unknown sparse format");
  return std::make_unique<ValidateKernel>(ctx, *f);
}

template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double,
                               std::conditional_t<std::is_floating_point_v<T> || !std::is_integral_v<T>, float,
                                                  std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>>>;

template <typename T>
Acc<T> load(T x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<Acc<T>>(x);  // integers wrap like the integer dot
  } else {
    return static_cast<float>(x);  // float16, bfloat16
  }
}
template <typename T>
T store(Acc<T> a) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(a);
  } else {
    return T(a);
  }
}

// Rows [r0, r1) of A @ B for float32/float64: each output row accumulated in place, in cache while its entries
// stream by. Compiled for AVX2+FMA too and picked by the CPU at load (the library's baseline is SSE2).
#define EVOXC_CSR_ROWS(T)                                                                                          \
  __attribute__((target_clones("arch=x86-64-v3", "default"))) void csr_rows(                                       \
      const T* v, const T* b, T* out, const int64_t* ptr, const int64_t* col, int64_t r0, int64_t r1, int64_t n) { \
    for (int64_t r = r0; r < r1; ++r) {                                                                            \
      T* __restrict orow = out + r * n;                                                                            \
      std::fill(orow, orow + n, T{});                                                                              \
      for (int64_t k = ptr[r]; k < ptr[r + 1]; ++k) {                                                              \
        const T vk = v[k];                                                                                         \
        const T* __restrict brow = b + col[k] * n;                                                                 \
        for (int64_t j = 0; j < n; ++j) orow[j] += vk * brow[j];                                                   \
      }                                                                                                            \
    }                                                                                                              \
  }
EVOXC_CSR_ROWS(float)
EVOXC_CSR_ROWS(double)
#undef EVOXC_CSR_ROWS

class CsrMatmulKernel final : public Kernel {
 public:
  explicit CsrMatmulKernel(PrepareCtx& ctx) : where_(ctx.where()) {
    const Shape& s = ctx.attr_shape("shape");
    rows_ = Extent(s[0], ctx);
    cols_ = Extent(s[1], ctx);
    transpose_ = ctx.has_attr("transpose") && ctx.attr_bool("transpose");
    for (size_t i = 0; i < 4; ++i) in_[i] = ctx.in[i];
    out_ = ctx.out[0];
    pt_ = ctx.operand(0).dtype();
    it_ = ctx.operand(1).dtype();
    pl_ = pick_index_load(pt_);
    il_ = pick_index_load(it_);
    if (!pl_ || !il_) ctx.fail("indptr and indices must have integer dtypes");
    vt_ = ctx.operand(2).dtype();
    dense_dims_ = ctx.operand(3).dim_off;
    dense_rank_ = ctx.operand(3).rank();
  }

  void run(const Frame& f) const override {
    const int64_t m = rows_(f), kc = cols_(f);
    const int64_t nse = f.numel[in_[1]];
    const int64_t n = dense_rank_ == 2 ? f.dims[dense_dims_ + 1] : 1;
    const void* ip = f.ptr[in_[0]];
    const void* ix = f.ptr[in_[1]];
    check_compressed(ip, pt_, pl_, ix, it_, il_, m, nse, kc, Where{where_, " (the CSR operand)"}, "row", false);
    // int64 indices are read in place; others are widened once into scratch.
    std::vector<int64_t> ptr_scratch, col_scratch;
    const int64_t* ptr = static_cast<const int64_t*>(ip);
    const int64_t* col = static_cast<const int64_t*>(ix);
    if (pt_ != DType::I64) {
      ptr_scratch.resize(static_cast<size_t>(m + 1));
      for (int64_t r = 0; r <= m; ++r) ptr_scratch[static_cast<size_t>(r)] = pl_(ip, r);
      ptr = ptr_scratch.data();
    }
    if (it_ != DType::I64) {
      col_scratch.resize(static_cast<size_t>(nse));
      for (int64_t k = 0; k < nse; ++k) col_scratch[static_cast<size_t>(k)] = il_(ix, k);
      col = col_scratch.data();
    }
    visit_dtype(vt_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, bool>) {
        compute(static_cast<const T*>(f.ptr[in_[2]]), static_cast<const T*>(f.ptr[in_[3]]),
                static_cast<T*>(f.ptr[out_]), ptr, col, m, kc, n);
      }
    });
  }

 private:
  template <typename T>
  void compute(const T* v, const T* b, T* out, const int64_t* ptr, const int64_t* col, int64_t m, int64_t kc,
               int64_t n) const {
    using A = Acc<T>;
    if (!transpose_) {
      // out[r, :] = sum_k v[k] * b[col[k], :], rows in chunks on the pool.
      const int64_t rows_per_chunk = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, n * 4));
      const int64_t chunks = (m + rows_per_chunk - 1) / rows_per_chunk;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        parallel_for(chunks, [&](int64_t c) {
          csr_rows(v, b, out, ptr, col, c * rows_per_chunk, std::min(m, (c + 1) * rows_per_chunk), n);
        });
        return;
      }
      parallel_for(chunks, [&](int64_t c) {
        std::vector<A> acc(static_cast<size_t>(n));
        const int64_t r1 = std::min(m, (c + 1) * rows_per_chunk);
        for (int64_t r = c * rows_per_chunk; r < r1; ++r) {
          std::fill(acc.begin(), acc.end(), A{});
          for (int64_t k = ptr[r]; k < ptr[r + 1]; ++k) {
            const A vk = load(v[k]);
            const T* brow = b + col[k] * n;
            for (int64_t j = 0; j < n; ++j) acc[static_cast<size_t>(j)] += vk * load(brow[j]);
          }
          for (int64_t j = 0; j < n; ++j) out[r * n + j] = store<T>(acc[static_cast<size_t>(j)]);
        }
      });
      return;
    }
    // out = A^T @ b: out[col[k], :] += v[k] * b[r, :], accumulated in A's precision.
    std::vector<A> acc(static_cast<size_t>(kc * n), A{});
    for (int64_t r = 0; r < m; ++r)
      for (int64_t k = ptr[r]; k < ptr[r + 1]; ++k) {
        const A vk = load(v[k]);
        A* orow = acc.data() + col[k] * n;
        const T* brow = b + r * n;
        for (int64_t j = 0; j < n; ++j) orow[j] += vk * load(brow[j]);
      }
    for (int64_t i = 0; i < kc * n; ++i) out[i] = store<T>(acc[static_cast<size_t>(i)]);
  }

  std::string where_;
  Extent rows_, cols_;
  bool transpose_ = false;
  uint32_t in_[4] = {}, out_ = 0, dense_dims_ = 0, dense_rank_ = 0;
  DType pt_ = DType::I64, it_ = DType::I64, vt_ = DType::F32;
  IndexLoad pl_ = nullptr, il_ = nullptr;
};

KernelPtr make_csr_matmul(PrepareCtx& ctx) { return std::make_unique<CsrMatmulKernel>(ctx); }

}  // namespace

void install_sparse_kernels(KernelTable& t) {
  t.set("sparse_validate", &make_validate);
  t.set("sparse_csr_matmul", &make_csr_matmul);
}

}  // namespace evoxc::interp
