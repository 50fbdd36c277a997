// Conversion of a host double (an attribute value) to an element type, by the rules of docs/semantics.md.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "evoxc/core/half.h"

namespace evoxc::interp {

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Floats round to nearest; ints saturate to their range with NaN -> 0; bool is x != 0.
template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (is_half_v<T>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    // 2^63 and 2^64 are exact doubles; anything at or above the type's max + 1 saturates.
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

}  // namespace evoxc::interp
