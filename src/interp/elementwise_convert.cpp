// convert between every pair of dtypes: saturating float->int, single rounding to narrower
// floats, wrapping int->int, x != 0 for bool.
#include <cstring>

#include "elementwise.h"
#include "kernel_table.h"
#include "vecmath_scalar.h"

namespace evoxc::interp {
namespace {

using scalar::is_fp_v;
using scalar::is_half_v;
using scalar::is_int_v;

template <typename F, typename T>
inline T convert_one(F x) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (is_half_v<F>)
      return static_cast<float>(x) != 0.0f;
    else
      return x != F(0);  // NaN != 0 is true
  } else if constexpr (std::is_same_v<F, bool>) {
    if constexpr (is_half_v<T>)
      return T(x ? 1.0f : 0.0f);
    else
      return static_cast<T>(x ? 1 : 0);
  } else if constexpr (is_int_v<F>) {
    if constexpr (is_half_v<T>)
      return scalar::int_to_half<T>(x);
    else
      return static_cast<T>(x);  // int -> int keeps the low bits (C++20); int -> float rounds
  } else if constexpr (is_int_v<T>) {
    if constexpr (is_half_v<F>)
      return scalar::saturate_cast<T>(static_cast<float>(x));
    else
      return scalar::saturate_cast<T>(x);
  } else if constexpr (is_half_v<F>) {
    if constexpr (is_half_v<T>)
      return T(static_cast<float>(x));
    else
      return static_cast<T>(static_cast<float>(x));  // exact
  } else if constexpr (std::is_same_v<F, double>) {
    if constexpr (std::is_same_v<T, float>)
      return scalar::narrow_to_float(x);
    else
      return T(scalar::narrow_to_float_odd(x));  // round-to-odd first: one rounding overall
  } else {                                       // F is float
    if constexpr (is_half_v<T>)
      return T(x);
    else
      return static_cast<T>(x);
  }
}

template <typename F, typename T>
void convert_loop(const void* in, void* out, int64_t n, const UnaryParams&) {
  if constexpr (std::is_same_v<F, T>) {
    if (in != out && n > 0) std::memmove(out, in, static_cast<size_t>(n) * sizeof(T));
  } else {
    const F* x = static_cast<const F*>(in);
    T* y = static_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) y[i] = convert_one<F, T>(x[i]);
  }
}

}  // namespace

UnaryFn convert_kernel(DType from, DType to) {
  return visit_dtype(from, [to](auto ftag) -> UnaryFn {
    using F = decltype(ftag);
    return visit_dtype(to, [](auto ttag) -> UnaryFn {
      using T = decltype(ttag);
      return &convert_loop<F, T>;
    });
  });
}

namespace {

std::string dt(DType t) { return std::string(dtype_name(t)); }

KernelPtr make_convert(PrepareCtx& ctx) {
  if (ctx.op.num_results() != 1) ctx.fail("expects one result");
  if (ctx.op.num_operands() != 1) ctx.fail("expects 1 operand, got " + std::to_string(ctx.op.num_operands()));
  DType from = ctx.operand(0).dtype(), to = ctx.result().dtype();
  UnaryFn fn = convert_kernel(from, to);
  if (!fn) ctx.fail("no kernel for dtype " + dt(from) + " to " + dt(to));
  return unary_instruction(ctx, fn, UnaryParams{});
}

// A zero-copy view: the result reads the operand's bytes as another type of one width.
KernelPtr make_bitcast_convert(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 1 || ctx.op.num_results() != 1) ctx.fail("expects one operand and one result");
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& r = ctx.result();
  if (size_of(a.dtype()) != size_of(r.dtype()) || is_bool(a.dtype()) || is_bool(r.dtype()))
    ctx.fail("bitcast_convert needs two non-bool types of one width, got " + dt(a.dtype()) + " and " + dt(r.dtype()));
  if (a.rank() != r.rank()) ctx.fail("bitcast_convert keeps the shape");
  for (size_t i = 0; i < a.rank(); ++i)
    ctx.require_equal(a.type().shape[i], r.type().shape[i], [&] { return "extent of axis " + std::to_string(i); });
  ctx.alias_operand0 = true;
  return nullptr;
}

}  // namespace

void install_elementwise_convert_kernels(KernelTable& t) {
  t.set("convert", &make_convert);
  t.set("bitcast_convert", &make_bitcast_convert);
}

}  // namespace evoxc::interp
