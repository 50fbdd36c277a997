// MLIR's memref descriptors as runtime functions of compiled mlir programs receive them (postfix_runtime.cpp,
// external_runtime.cpp), and the i64 slot globals those functions cache a pointer in.
#pragma once

#include <atomic>
#include <cstdint>

namespace evoxc::mlir_backend {

// The descriptor of a rank-R memref, element type erased (every element type has this layout).
template <int R>
struct Memref {
  char* allocated;
  char* aligned;
  int64_t offset;
  int64_t sizes[R];
  int64_t strides[R];
};

// The i64 a call site's memref<1xi64> global holds: 0 until the site's first call stores a pointer there.
inline std::atomic_ref<int64_t> slot_of(const Memref<1>* slot) {
  return std::atomic_ref<int64_t>(*reinterpret_cast<int64_t*>(slot->aligned + slot->offset * 8));
}

}  // namespace evoxc::mlir_backend
