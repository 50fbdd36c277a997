// float16 and bfloat16 storage types with correctly rounded conversions to and from float.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace evoxc {

// IEEE 754 binary16. Arithmetic happens in float; storing rounds to nearest even.
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  explicit float16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }
  static float16 from_bits(uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }

  static uint16_t from_float(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or nan: keep nan quiet
      return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u));
    }
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (abs < 0x38800000u) {                                               // subnormal half (or zero)
      // Shift the float with its implicit bit into half subnormal position, rounding to nearest even.
      if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // below half of the smallest subnormal
      uint32_t exp = abs >> 23;
      uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
      uint32_t shift = 126u - exp;  // 113 + 13 ... value = mant * 2^(exp-150); half sub unit 2^-24
      uint32_t h = mant >> shift;
      uint32_t rem = mant & ((1u << shift) - 1u);
      uint32_t half_point = 1u << (shift - 1u);
      if (rem > half_point || (rem == half_point && (h & 1u))) ++h;
      return static_cast<uint16_t>(sign | h);
    }
    uint32_t h = ((abs - 0x38000000u) >> 13);
    uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }

  static float to_float(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t out;
    if (exp == 0) {
      if (mant == 0) {
        out = sign;
      } else {  // normalise the subnormal
        int e = -1;
        do {
          ++e;
          mant <<= 1;
        } while ((mant & 0x400u) == 0);
        out = sign | ((112u - static_cast<uint32_t>(e)) << 23) | ((mant & 0x3ffu) << 13);
      }
    } else if (exp == 31) {
      out = sign | 0x7f800000u | (mant << 13);
    } else {
      out = sign | ((exp + 112u) << 23) | (mant << 13);
    }
    return std::bit_cast<float>(out);
  }
};

// bfloat16: the upper half of a float32; storing rounds to nearest even.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
  static bfloat16 from_bits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
  static uint16_t from_float(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
    uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>((x + rounding) >> 16);
  }
};

}  // namespace evoxc
