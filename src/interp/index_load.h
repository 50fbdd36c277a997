// Reading integer index tensors of any integer dtype as int64, with the reader chosen once at prepare.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "evoxc/core/dtype.h"

namespace evoxc::interp {

// Reads element i of an integer index tensor as int64; unsigned values above INT64_MAX saturate so they still
// clamp to the top of the range (or count as out of range) instead of wrapping negative.
using IndexLoad = int64_t (*)(const void*, int64_t);
template <typename I>
int64_t load_index(const void* p, int64_t i) {
  I v = static_cast<const I*>(p)[i];
  if constexpr (std::is_unsigned_v<I> && sizeof(I) == 8) {
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::numeric_limits<int64_t>::max();
  }
  return static_cast<int64_t>(v);
}
// The reader of integer dtype t; nullptr for other dtypes.
inline IndexLoad pick_index_load(DType t) {
  switch (t) {
    case DType::I8: return &load_index<int8_t>;
    case DType::I16: return &load_index<int16_t>;
    case DType::I32: return &load_index<int32_t>;
    case DType::I64: return &load_index<int64_t>;
    case DType::U8: return &load_index<uint8_t>;
    case DType::U16: return &load_index<uint16_t>;
    case DType::U32: return &load_index<uint32_t>;
    case DType::U64: return &load_index<uint64_t>;
    default: return nullptr;
  }
}

}  // namespace evoxc::interp
