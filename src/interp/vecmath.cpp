// Picks the SLEEF kernel table for this CPU once, and provides the portable scalar table and the scalar fallbacks.
#include "vecmath.h"

#include <cmath>

#include "evoxc/core/half.h"
#include "vecmath_scalar.h"

#define EVX_VF float
#define EVX_VD double
#define EVX_SF(fn, u) Sleef_##fn##f_##u
#define EVX_SD(fn, u) Sleef_##fn##_##u
#define EVX_SFX(fn) Sleef_##fn##f
#define EVX_SDX(fn) Sleef_##fn
#define EVX_TABLE_FN table_scalar
#include "vecmath_impl.h"

namespace evoxc::interp::vecmath {

namespace {

const Table* pick_table() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2 && __builtin_cpu_supports("avx512f") && table_avx512() != nullptr) return table_avx512();
  if (avx2 && table_avx2() != nullptr) return table_avx2();
  if (table_sse2() != nullptr) return table_sse2();
#endif
  return table_scalar();
}

}  // namespace

float fmod_exact(float a, float b) { return std::fmod(a, b); }
double fmod_exact(double a, double b) { return std::fmod(a, b); }
// float through double: the double result is within 2^-52 relative, so rounding it to float
// is correct but in near-ties, and float's overflow threshold comes out exactly.
float pow_fallback(float a, float b) {
  return scalar::narrow_to_float(std::pow(static_cast<double>(a), static_cast<double>(b)));
}
double pow_fallback(double a, double b) { return std::pow(a, b); }

const Table& table() {
  static const Table* const chosen = pick_table();
  return *chosen;
}

}  // namespace evoxc::interp::vecmath
