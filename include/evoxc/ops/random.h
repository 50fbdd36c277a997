// The key-based random number algorithms: which algorithm a key's type names, and the constants every
// implementation (the interpreter's kernels, the decompositions the compiled backends run) shares.
#pragma once

#include <cstdint>
#include <optional>

#include "evoxc/ir/ir.h"

namespace evoxc::random_alg {

// splitmix64: a rank-0 int64/uint64 key (leading axes: a batch of keys).
// threefry2x32: (2,) int32/uint32, JAX's partitionable scheme. philox4x32_10: (4,) int32/uint32 (key words 0-1,
// counter words 2-3).
enum class Algorithm : uint8_t { Splitmix64, Threefry2x32, Philox4x32 };

// The algorithm a key of type `t` names and the number of its trailing key axes (0 or 1); nullopt when `t` is no
// key type.
struct KeyKind {
  Algorithm algorithm;
  size_t key_rank;
  int64_t words;  // 1 (one 64-bit word), 2 or 4 (32-bit words)
};
std::optional<KeyKind> key_kind(const TensorType& t);
// The same for a type inference has accepted as a key (InternalError otherwise).
KeyKind key_kind_of(const TensorType& t);
// What a key is, for messages: "a key is int64/uint64 (splitmix64) or ...".
inline constexpr const char* kKeyTypes =
    "a key is int64/uint64 (splitmix64; any shape, each element a key) or int32/uint32 with last extent 2 "
    "(threefry2x32) or 4 (philox4x32_10)";
// "splitmix64", "threefry2x32", "philox4x32_10".
const char* algorithm_name(Algorithm a);

inline constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;       // splitmix64's increment
inline constexpr uint64_t kSplitDomain = 0x6A09E667F3BCC909ULL;  // splitmix64: children come from mix(s) ^ this
inline constexpr uint32_t kThreefryParity = 0x1BD11BDA;
inline constexpr int kThreefryRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
inline constexpr uint32_t kPhiloxM0 = 0xD2511F53, kPhiloxM1 = 0xCD9E8D57;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9, kPhiloxW1 = 0xBB67AE85;

inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
inline constexpr uint64_t kMixMul1 = 0xBF58476D1CE4E5B9ULL, kMixMul2 = 0x94D049BB133111EBULL;

inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Threefry-2x32, 20 rounds (Salmon et al., SC'11), on one block.
inline void threefry2x32(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1) {
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ kThreefryParity};
  x0 += ks[0];
  x1 += ks[1];
  for (int g = 0; g < 5; ++g) {
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = rotl32(x1, kThreefryRot[(g % 2) * 4 + r]);
      x1 ^= x0;
    }
    x0 += ks[(g + 1) % 3];
    x1 += ks[(g + 2) % 3] + static_cast<uint32_t>(g + 1);
  }
}

// Philox-4x32, 10 rounds (Salmon et al., SC'11), on one block.
inline void philox4x32(uint32_t k0, uint32_t k1, uint32_t c[4]) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c[0], p1 = static_cast<uint64_t>(kPhiloxM1) * c[2];
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    uint32_t n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
  }
}

}  // namespace evoxc::random_alg
