// convert between every pair of dtypes: saturating float->int, single rounding to narrower
// floats, wrapping int->int, x != 0 for bool.
#include <cstring>

#include "elementwise.h"
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

}  // namespace evoxc::interp
