// Vectorised float32/float64 math (SLEEF) behind per-CPU tables picked once at load.
#pragma once

#include <cstdint>

#include "elementwise.h"

namespace evoxc::interp::vecmath {

// The vectorised float functions. Each list is the one place a function is named: the
// Fn1/Fn2 enums, the SLEEF declarations and wrappers of vecmath_impl.h, every per-ISA
// table and the interpreter's kernel rows (elementwise_unary.cpp) are generated from it,
// so a new SLEEF-backed unary op is one line of EVX_VECMATH_UNARY.
//
// EVX_VECMATH_UNARY(X): X(Name, "op", sleef, float accuracy, double accuracy). Fn1::Name
// implements evoxc op "op" with SLEEF's `sleef` function; an accuracy is SLEEF's name
// suffix (u05, u10, u15, u35: 0.5 to 3.5 ULP) or `exact` for the correctly rounded ones
// without a suffix. float tanh uses the 3.5-ULP variant: 2.6x faster than the 1-ULP one
// (docs/semantics.md, Accuracy). round is rint: round half to even in the default mode.
// One entry a line: clang-format re-wraps these lists differently on every pass.
// clang-format off
#define EVX_VECMATH_UNARY(X) \
  X(Exp, "exp", exp, u10, u10) \
  X(Exp2, "exp2", exp2, u10, u10) \
  X(Expm1, "expm1", expm1, u10, u10) \
  X(Log, "log", log, u10, u10) \
  X(Log2, "log2", log2, u10, u10) \
  X(Log10, "log10", log10, u10, u10) \
  X(Log1p, "log1p", log1p, u10, u10) \
  X(Sqrt, "sqrt", sqrt, exact, exact) \
  X(Cbrt, "cbrt", cbrt, u10, u10) \
  X(Sin, "sin", sin, u10, u10) \
  X(Cos, "cos", cos, u10, u10) \
  X(Tan, "tan", tan, u10, u10) \
  X(Asin, "asin", asin, u10, u10) \
  X(Acos, "acos", acos, u10, u10) \
  X(Atan, "atan", atan, u10, u10) \
  X(Sinh, "sinh", sinh, u10, u10) \
  X(Cosh, "cosh", cosh, u10, u10) \
  X(Tanh, "tanh", tanh, u35, u10) \
  X(Asinh, "asinh", asinh, u10, u10) \
  X(Acosh, "acosh", acosh, u10, u10) \
  X(Atanh, "atanh", atanh, u10, u10) \
  X(Erf, "erf", erf, u10, u10) \
  X(Erfc, "erfc", erfc, u15, u15) \
  X(Lgamma, "lgamma", lgamma, u10, u10) \
  X(Floor, "floor", floor, exact, exact) \
  X(Ceil, "ceil", ceil, exact, exact) \
  X(Round, "round", rint, exact, exact) \
  X(Trunc, "trunc", trunc, exact, exact)
// Unary functions composed from the ones above, each a struct Name in vecmath_impl.h:
// X(Name, "op"); "" for variants an op picks by attribute (gelu's approximate).
#define EVX_VECMATH_UNARY_COMPOSITE(X) \
  X(Rsqrt, "rsqrt") \
  X(Reciprocal, "reciprocal") \
  X(Sigmoid, "sigmoid") \
  X(Softplus, "softplus") \
  X(GeluErf, "") \
  X(GeluTanh, "")
// Binary functions: X(Name, sleef, accuracy) from SLEEF, then composites written in
// vecmath_impl.h (numpy semantics for remainder and floor_divide). Their ops also take
// integers, so their kernel rows live with the integer kernels (elementwise_binary.cpp).
#define EVX_VECMATH_BINARY(X) \
  X(Atan2, atan2, u10) \
  X(Hypot, hypot, u05) \
  X(Pow, pow, u10) \
  X(Nextafter, nextafter, exact) \
  X(Copysign, copysign, exact) \
  X(Fmod, fmod, exact)
#define EVX_VECMATH_BINARY_COMPOSITE(X) \
  X(Remainder) \
  X(FloorDivide)
// clang-format on

// Unary float functions with a vector kernel. Each entry works on float16/bfloat16 too
// (converted to float32 in blocks, rounded once on store).
enum class Fn1 : uint8_t {
#define EVX_FN1_ENUM(Name, ...) Name,
  EVX_VECMATH_UNARY(EVX_FN1_ENUM) EVX_VECMATH_UNARY_COMPOSITE(EVX_FN1_ENUM)
#undef EVX_FN1_ENUM
      kCount
};
// Binary float functions with a vector kernel.
enum class Fn2 : uint8_t {
#define EVX_FN2_ENUM(Name, ...) Name,
  EVX_VECMATH_BINARY(EVX_FN2_ENUM) EVX_VECMATH_BINARY_COMPOSITE(EVX_FN2_ENUM)
#undef EVX_FN2_ENUM
      kCount
};

inline constexpr int kNumFn1 = static_cast<int>(Fn1::kCount);
inline constexpr int kNumFn2 = static_cast<int>(Fn2::kCount);

// The evoxc op each unary function implements, indexed by Fn1 ("" when none does directly).
inline constexpr const char* kFn1Op[kNumFn1] = {
#define EVX_FN1_OP(Name, op, ...) op,
    EVX_VECMATH_UNARY(EVX_FN1_OP) EVX_VECMATH_UNARY_COMPOSITE(EVX_FN1_OP)
#undef EVX_FN1_OP
};

// Kernels for one instruction set; index 0..3 of the inner arrays: float32, float64, float16, bfloat16.
struct Table {
  UnaryFn unary[kNumFn1][4];
  BinaryFn binary[kNumFn2][4];
};

// Scalar fallbacks for the rare lanes outside a SLEEF function's domain (vecmath_impl.h's
// Fixup rows), compiled for the baseline ISA in vecmath.cpp so no inline standard-library
// code is built for a wider one. fmod is exact (C semantics); pow rounds as the C library does.
float fmod_exact(float a, float b);
double fmod_exact(double a, double b);
float pow_fallback(float a, float b);
double pow_fallback(double a, double b);

// The best table for this CPU, chosen on first use with __builtin_cpu_supports.
const Table& table();
// The per-ISA tables (nullptr where not compiled for this target), exposed so tests can
// check every instruction set the machine runs.
const Table* table_avx512();
const Table* table_avx2();
const Table* table_sse2();
const Table* table_scalar();

// Slot of a dtype in Table's inner arrays; -1 for non-float types.
constexpr int float_slot(DType t) {
  switch (t) {
    case DType::F32: return 0;
    case DType::F64: return 1;
    case DType::F16: return 2;
    case DType::BF16: return 3;
    default: return -1;
  }
}

}  // namespace evoxc::interp::vecmath
