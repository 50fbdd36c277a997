// DType names, parsing and the promotion lattice.
#include "evoxc/core/dtype.h"

#include <array>

namespace evoxc {
namespace {
struct Names {
  std::string_view name, short_name;
};
constexpr std::array<Names, kNumDTypes> kNames = {{
    {"bool", "i1"},
    {"int8", "i8"},
    {"int16", "i16"},
    {"int32", "i32"},
    {"int64", "i64"},
    {"uint8", "ui8"},
    {"uint16", "ui16"},
    {"uint32", "ui32"},
    {"uint64", "ui64"},
    {"float16", "f16"},
    {"bfloat16", "bf16"},
    {"float32", "f32"},
    {"float64", "f64"},
}};
}  // namespace

std::string_view dtype_name(DType t) { return kNames[static_cast<size_t>(t)].name; }
std::string_view dtype_short_name(DType t) { return kNames[static_cast<size_t>(t)].short_name; }

std::optional<DType> parse_dtype(std::string_view s) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i].name == s || kNames[i].short_name == s) return static_cast<DType>(i);
  }
  return std::nullopt;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_bool(a)) return b;
  if (is_bool(b)) return a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(a)) return b;
    if (!is_float(b)) return a;
    // Both float and different.
    if ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16)) return DType::F32;
    return size_of(a) >= size_of(b) ? a : b;
  }
  if (is_signed_int(a) == is_signed_int(b)) return size_of(a) >= size_of(b) ? a : b;
  DType s = is_signed_int(a) ? a : b;
  DType u = is_signed_int(a) ? b : a;
  if (size_of(s) > size_of(u)) return s;
  switch (size_of(u)) {
    case 1: return DType::I16;
    case 2: return DType::I32;
    default: return DType::I64;
  }
}

DType weak_scalar_result(DType tensor_type, ScalarKind scalar) {
  if (scalar == ScalarKind::Float && !is_float(tensor_type)) return kDefaultFloat;
  if (scalar == ScalarKind::Int && is_bool(tensor_type)) return DType::I64;
  return tensor_type;
}

}  // namespace evoxc

namespace evoxc {

const char* dtype_class_name(DTypeClass c) {
  switch (c) {
    case DTypeClass::Any: return "any";
    case DTypeClass::Numeric: return "numeric";
    case DTypeClass::Float: return "float";
    case DTypeClass::Int: return "int";
    case DTypeClass::IntOrBool: return "int or bool";
    case DTypeClass::Bool: return "bool";
    case DTypeClass::Key: return "random key";
  }
  return "?";
}

}  // namespace evoxc
