// Element types, their properties, and the one promotion lattice every layer uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/core/half.h"

namespace evoxc {

enum class DType : uint8_t { Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64 };

inline constexpr int kNumDTypes = 13;

// Every dtype, in enum order (a backend that takes them all lists them so).
inline std::vector<DType> all_dtypes() {
  std::vector<DType> v(kNumDTypes);
  for (int i = 0; i < kNumDTypes; ++i) v[static_cast<size_t>(i)] = static_cast<DType>(i);
  return v;
}

inline constexpr DType bool_ = DType::Bool;
inline constexpr DType i8 = DType::I8, int8 = DType::I8;
inline constexpr DType i16 = DType::I16, int16 = DType::I16;
inline constexpr DType i32 = DType::I32, int32 = DType::I32;
inline constexpr DType i64 = DType::I64, int64 = DType::I64;
inline constexpr DType u8 = DType::U8, uint8 = DType::U8;
inline constexpr DType u16 = DType::U16, uint16 = DType::U16;
inline constexpr DType u32 = DType::U32, uint32 = DType::U32;
inline constexpr DType u64 = DType::U64, uint64 = DType::U64;
inline constexpr DType f16 = DType::F16, float16_ = DType::F16;
inline constexpr DType bf16 = DType::BF16, bfloat16_ = DType::BF16;
inline constexpr DType f32 = DType::F32, float32 = DType::F32;
inline constexpr DType f64 = DType::F64, float64 = DType::F64;

// The default float type (docs/semantics.md, "Element types and promotion"): float32. No silent float64.
inline constexpr DType kDefaultFloat = DType::F32;
// The type of indices (argmax, iota defaults): int64, as numpy.
inline constexpr DType kIndexType = DType::I64;

constexpr size_t size_of(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::I8:
    case DType::U8: return 1;
    case DType::I16:
    case DType::U16:
    case DType::F16:
    case DType::BF16: return 2;
    case DType::I32:
    case DType::U32:
    case DType::F32: return 4;
    case DType::I64:
    case DType::U64:
    case DType::F64: return 8;
  }
  return 0;
}
constexpr bool is_bool(DType t) { return t == DType::Bool; }
constexpr bool is_float(DType t) { return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64; }
constexpr bool is_signed_int(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}
constexpr bool is_unsigned_int(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64;
}
constexpr bool is_int(DType t) { return is_signed_int(t) || is_unsigned_int(t); }
constexpr int bit_width(DType t) { return is_bool(t) ? 1 : static_cast<int>(size_of(t) * 8); }

// Which element types an op or kernel accepts. The one definition: the op registry checks
// operands with it and the interpreter instantiates kernels for exactly its members.
// Key: the dtypes of a random key (int32/uint32 words of threefry2x32 and philox4x32_10, int64/uint64 of splitmix64).
enum class DTypeClass : uint8_t { Any, Numeric, Float, Int, IntOrBool, Bool, Key };
constexpr bool dtype_in_class(DType t, DTypeClass c) {
  switch (c) {
    case DTypeClass::Any: return true;
    case DTypeClass::Numeric: return is_int(t) || is_float(t);
    case DTypeClass::Float: return is_float(t);
    case DTypeClass::Int: return is_int(t);
    case DTypeClass::IntOrBool: return is_int(t) || is_bool(t);
    case DTypeClass::Bool: return is_bool(t);
    case DTypeClass::Key: return t == DType::I32 || t == DType::U32 || t == DType::I64 || t == DType::U64;
  }
  return false;
}
// "any", "numeric", "float", "int", "int or bool", "bool", "random key".
const char* dtype_class_name(DTypeClass c);

// numpy-style name: "float32", "int64", "bool".
std::string_view dtype_name(DType t);
// MLIR-style short name used in printed IR types: "f32", "i64", "ui8", "i1", "bf16".
std::string_view dtype_short_name(DType t);
// Accepts both spellings above; nullopt when unknown.
std::optional<DType> parse_dtype(std::string_view s);

// The promotion lattice (docs/semantics.md): bool < unsigned/signed ints < floats.
//  - same kind: the wider type wins; f16 with bf16 gives f32.
//  - signed with unsigned: the smallest signed type holding both (u64 with a signed type: i64, as JAX).
//  - int or bool with float: the float type.
DType promote_types(DType a, DType b);

// What a host scalar of a given kind becomes next to a tensor of type t ("weak typing"):
// the scalar takes the tensor's type, except a float scalar next to an integer or bool
// tensor, which gives the default float type.
enum class ScalarKind : uint8_t { Bool, Int, Float };
DType weak_scalar_result(DType tensor_type, ScalarKind scalar);

// Maps a C++ element type to its DType at compile time.
template <typename T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct dtype_of<int8_t> {
  static constexpr DType value = DType::I8;
};
template <>
struct dtype_of<int16_t> {
  static constexpr DType value = DType::I16;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::I32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::I64;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = DType::U8;
};
template <>
struct dtype_of<uint16_t> {
  static constexpr DType value = DType::U16;
};
template <>
struct dtype_of<uint32_t> {
  static constexpr DType value = DType::U32;
};
template <>
struct dtype_of<uint64_t> {
  static constexpr DType value = DType::U64;
};
template <>
struct dtype_of<float16> {
  static constexpr DType value = DType::F16;
};
template <>
struct dtype_of<bfloat16> {
  static constexpr DType value = DType::BF16;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::F32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::F64;
};
template <typename T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

// Calls f(T{}) with the C++ type for t, e.g. visit_dtype(t, [&](auto tag) { using T = decltype(tag); ... }).
template <typename F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(bool{});
    case DType::I8: return f(int8_t{});
    case DType::I16: return f(int16_t{});
    case DType::I32: return f(int32_t{});
    case DType::I64: return f(int64_t{});
    case DType::U8: return f(uint8_t{});
    case DType::U16: return f(uint16_t{});
    case DType::U32: return f(uint32_t{});
    case DType::U64: return f(uint64_t{});
    case DType::F16: return f(float16{});
    case DType::BF16: return f(bfloat16{});
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
  }
  return f(float{});
}

}  // namespace evoxc
