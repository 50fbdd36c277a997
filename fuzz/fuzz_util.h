// What the fuzz targets share: which outcomes of a loader are findings, and bitwise tensor comparison.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "evoxc/core/error.h"
#include "evoxc/core/tensor.h"

namespace evoxc::fuzz {

// A failed identity or an internal error: print it and abort, which libFuzzer (and the replay
// main) report as a crash, so the input is saved as a reproducer.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "evoxc fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Runs `body` on hostile input. A typed evoxc::Error is the documented answer to bad input;
// InternalError is not (it marks an evoxc bug), and any other exception escapes to
// std::terminate: both are findings.
template <typename F>
int guarded(F&& body) {
  try {
    body();
  } catch (const InternalError& e) {
    finding(std::string("InternalError: ") + e.what());
  } catch (const Error&) {
    // Bad input rejected with a typed error: the contract.
  }
  return 0;
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Bit-for-bit equality of two tensors (dtype, shape, bytes), except that any two NaNs of a
// float dtype compare equal: a NaN's payload is not part of a result's meaning.
inline bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0) return true;
  if (!is_float(a.dtype())) return false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get_as_double(i), y = b.get_as_double(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    // Not NaN on both sides: the element's bytes must match exactly.
    size_t w = size_of(a.dtype());
    if (std::memcmp(static_cast<const char*>(a.raw_data()) + i * w, static_cast<const char*>(b.raw_data()) + i * w,
                    w) != 0)
      return false;
  }
  return true;
}

}  // namespace evoxc::fuzz

namespace evoxc::fuzz {

// Runs `body` on a value a loader accepted: from here on every error is a finding (what we
// wrote ourselves must read back).
template <typename F>
void must_succeed(const char* what, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    finding(std::string(what) + " threw: " + e.what());
  }
}

}  // namespace evoxc::fuzz
