// Vectorised float32/float64 math (SLEEF) behind per-CPU tables picked once at load.
#pragma once

#include <cstdint>

#include "elementwise.h"

namespace evoxc::interp::vecmath {

// Unary float functions with a vector kernel. Each entry works on float16/bfloat16 too
// (converted to float32 in blocks, rounded once on store).
enum class Fn1 : uint8_t {
  Exp,
  Exp2,
  Expm1,
  Log,
  Log2,
  Log10,
  Log1p,
  Sqrt,
  Rsqrt,
  Cbrt,
  Reciprocal,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Tanh,
  Asinh,
  Acosh,
  Atanh,
  Sigmoid,
  Erf,
  Erfc,
  Lgamma,
  Softplus,
  GeluErf,
  GeluTanh,
  Floor,
  Ceil,
  Round,
  Trunc,
  kCount
};
// Binary float functions with a vector kernel (numpy semantics for remainder/floor_divide).
enum class Fn2 : uint8_t { Atan2, Hypot, Pow, Nextafter, Copysign, Fmod, Remainder, FloorDivide, kCount };

inline constexpr int kNumFn1 = static_cast<int>(Fn1::kCount);
inline constexpr int kNumFn2 = static_cast<int>(Fn2::kCount);

// Kernels for one instruction set; index 0..3 of the inner arrays: float32, float64, float16, bfloat16.
struct Table {
  UnaryFn unary[kNumFn1][4];
  BinaryFn binary[kNumFn2][4];
};

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
