// Scalar building blocks shared by the elementwise kernels: wrapping integer math, NaN-aware
// max/min, and conversions that saturate or round exactly once (no undefined behaviour).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "evoxc/core/half.h"

namespace evoxc::interp::scalar {

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;
template <typename T>
inline constexpr bool is_fp_v = is_half_v<T> || std::is_floating_point_v<T>;
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The type arithmetic happens in: float for the 16-bit floats, T otherwise.
template <typename T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

// An unsigned type at least as wide as int, so integer promotion never makes it signed.
template <typename T>
using wide_unsigned_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
constexpr T wrap_add(T a, T b) {
  using U = wide_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
constexpr T wrap_sub(T a, T b) {
  using U = wide_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T>
constexpr T wrap_mul(T a, T b) {
  using U = wide_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<std::make_unsigned_t<T>>(a)) *
                        static_cast<U>(static_cast<std::make_unsigned_t<T>>(b)));
}

// IEEE 754-2019 maximum/minimum: NaN propagates, and -0 < +0.
template <typename F>
inline F nan_max(F a, F b) {
  if (a != a || b != b) return a + b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename F>
inline F nan_min(F a, F b) {
  if (a != a || b != b) return a + b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// double -> float with IEEE rounding; overflow gives +-inf without an out-of-range cast.
inline float narrow_to_float(double d) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (d > kMax || d < -kMax) {
    constexpr double kHalfUlpAbove = 0x1.ffffffp127;  // ties go to even, i.e. up to inf
    float big =
        std::fabs(d) < kHalfUlpAbove ? std::numeric_limits<float>::max() : std::numeric_limits<float>::infinity();
    return d < 0 ? -big : big;
  }
  return static_cast<float>(d);
}

// double -> float rounding to odd: a later rounding to a 16-bit float is then the correct
// single rounding of the double (float keeps more than two extra bits).
inline float narrow_to_float_odd(double d) {
  float f = narrow_to_float(d);
  if (std::isinf(f) || d != d) return f;
  if (static_cast<double>(f) != d) {
    uint32_t bits = std::bit_cast<uint32_t>(f);
    if ((bits & 1u) == 0) bits = std::fabs(static_cast<double>(f)) < std::fabs(d) ? bits + 1 : bits - 1;
    f = std::bit_cast<float>(bits);
  }
  return f;
}

// Float (or double) -> integer type I: saturates to the range, NaN -> 0, truncates toward zero.
template <typename I, typename F>
inline I saturate_cast(F x) {
  if (x != x) return I(0);
  // The limits of I as powers of two are exact in every float type.
  constexpr F kLow = static_cast<F>(std::numeric_limits<I>::min());
  constexpr F kHighExclusive = static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * F(2);
  if (x <= kLow) return std::numeric_limits<I>::min();
  if (x >= kHighExclusive) return std::numeric_limits<I>::max();
  return static_cast<I>(x);
}

// Integer -> 16-bit float with one rounding: round the integer to the target's precision in
// integer arithmetic first, so the float step after it is exact.
template <typename H, typename I>
inline H int_to_half(I x) {
  constexpr int kPrecision = std::is_same_v<H, float16> ? 11 : 8;
  using U = std::make_unsigned_t<I>;
  bool neg = false;
  uint64_t m;
  if constexpr (std::is_signed_v<I>) {
    neg = x < 0;
    m = neg ? static_cast<uint64_t>(static_cast<U>(U(0) - static_cast<U>(x))) : static_cast<uint64_t>(x);
  } else {
    m = static_cast<uint64_t>(x);
  }
  int width = std::bit_width(m);
  int shift = width > kPrecision ? width - kPrecision : 0;
  if (shift > 0) {
    uint64_t low = m & ((uint64_t{1} << shift) - 1);
    uint64_t half = uint64_t{1} << (shift - 1);
    m >>= shift;
    if (low > half || (low == half && (m & 1))) ++m;
  }
  float f = std::ldexp(static_cast<float>(m), shift);
  return H(neg ? -f : f);
}

}  // namespace evoxc::interp::scalar
