// Creation instructions: iota and full fill their result; constant's tensor is read from the attribute once.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernel_table.h"
#include "program.h"
#include "scalar_convert.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

template <typename T>
T from_int(int64_t v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (is_half_v<T>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
void iota_fill(void* out, int64_t outer, int64_t n, int64_t inner) {
  T* p = static_cast<T*>(out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i) {
      T v = from_int<T>(i);
      T* row = p + (o * n + i) * inner;
      for (int64_t j = 0; j < inner; ++j) row[j] = v;
    }
}

using IotaFn = void (*)(void*, int64_t, int64_t, int64_t);

class IotaKernel final : public Kernel {
 public:
  IotaKernel(IotaFn fn, uint32_t out, uint32_t off, int rank, int dim)
      : fn_(fn), out_(out), off_(off), rank_(rank), dim_(dim) {}
  void run(const Frame& f) const override {
    const int64_t* d = f.dims + off_;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < dim_; ++i) outer *= d[i];
    for (int i = dim_ + 1; i < rank_; ++i) inner *= d[i];
    fn_(f.ptr[out_], outer, d[dim_], inner);
  }

 private:
  IotaFn fn_;
  uint32_t out_, off_;
  int rank_, dim_;
};

template <size_t ES>
void fill_pattern(void* out, int64_t n, const unsigned char* bytes) {
  if constexpr (ES == 1) {
    std::memset(out, bytes[0], static_cast<size_t>(n));
  } else {
    using U = std::conditional_t<ES == 2, uint16_t, std::conditional_t<ES == 4, uint32_t, uint64_t>>;
    U v;
    std::memcpy(&v, bytes, ES);
    U* p = static_cast<U*>(out);
    for (int64_t i = 0; i < n; ++i) p[i] = v;
  }
}

class FullKernel final : public Kernel {
 public:
  FullKernel(uint32_t out, size_t es, const unsigned char* bytes) : out_(out), es_(es) {
    std::memcpy(bytes_, bytes, es);
  }
  void run(const Frame& f) const override {
    int64_t n = f.numel[out_];
    switch (es_) {
      case 1: fill_pattern<1>(f.ptr[out_], n, bytes_); break;
      case 2: fill_pattern<2>(f.ptr[out_], n, bytes_); break;
      case 4: fill_pattern<4>(f.ptr[out_], n, bytes_); break;
      default: fill_pattern<8>(f.ptr[out_], n, bytes_); break;
    }
  }

 private:
  uint32_t out_;
  size_t es_;
  unsigned char bytes_[8] = {};
};

void require_shape_attr(PrepareCtx& ctx) {
  const Shape& want = ctx.attr_shape("shape");
  const ValueDesc& r = ctx.result();
  if (want.rank() != r.rank()) ctx.fail("the result type differs from the shape attribute");
  for (size_t i = 0; i < r.rank(); ++i)
    ctx.require_equal(want[i], r.type().shape[i], [&] { return "extent of result axis " + std::to_string(i); });
  if (ctx.has_attr("dtype") && ctx.attr_dtype("dtype") != r.dtype())
    ctx.fail("the result type differs from the dtype attribute");
}

void require_no_operands(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 0 || ctx.op.num_results() != 1) ctx.fail("expects no operands and one result");
}

// constant: no kernel; the plan reads the attribute's tensor in place.
KernelPtr make_constant(PrepareCtx& ctx) {
  require_no_operands(ctx);
  const ValueDesc& r = ctx.result();
  const Tensor& t = ctx.attr_tensor("value");
  if (!t.defined()) ctx.fail("the value attribute holds no tensor");
  t.raw_data();  // DeviceError now rather than on the first call
  bool same = t.dtype() == r.dtype() && t.rank() == r.rank() && r.is_static;
  for (size_t i = 0; same && i < t.rank(); ++i) same = r.type().shape[i].value() == t.shape()[i];
  if (!same) ctx.fail("the value attribute's tensor does not match the result type " + r.type().to_string());
  ctx.constant = &t;
  return nullptr;
}

KernelPtr make_iota(PrepareCtx& ctx) {
  require_no_operands(ctx);
  const ValueDesc& r = ctx.result();
  require_shape_attr(ctx);
  int64_t dim = ctx.attr_int("dimension");
  if (dim < 0 || dim >= static_cast<int64_t>(r.rank())) ctx.fail("dimension is out of range");
  IotaFn fn = visit_dtype(r.dtype(), [](auto tag) -> IotaFn { return &iota_fill<decltype(tag)>; });
  return std::make_unique<IotaKernel>(fn, ctx.out[0], r.dim_off, static_cast<int>(r.rank()), static_cast<int>(dim));
}

KernelPtr make_full(PrepareCtx& ctx) {
  require_no_operands(ctx);
  const ValueDesc& r = ctx.result();
  require_shape_attr(ctx);
  auto it = ctx.attrs().find("value");
  if (it == ctx.attrs().end()) ctx.fail("missing the value attribute");
  unsigned char bytes[8] = {};
  const Attribute& v = it->second;
  visit_dtype(r.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T x{};
    if (const auto* b = std::get_if<bool>(&v)) {
      x = from_int<T>(*b ? 1 : 0);
    } else if (const auto* i = std::get_if<int64_t>(&v)) {
      x = from_int<T>(*i);
    } else if (const auto* d = std::get_if<double>(&v)) {
      x = from_double<T>(*d);
    } else {
      ctx.fail("the value attribute must be an int, float or bool");
    }
    std::memcpy(bytes, &x, sizeof(T));
  });
  return std::make_unique<FullKernel>(ctx.out[0], size_of(r.dtype()), bytes);
}

}  // namespace

void install_creation_kernels(KernelTable& t) {
  t.set("constant", &make_constant);
  t.set("iota", &make_iota);
  t.set("full", &make_full);
}

}  // namespace evoxc::interp
