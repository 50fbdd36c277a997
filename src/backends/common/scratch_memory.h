// The allocator compiled programs' intermediate buffers come from (memref.alloc/dealloc lowered to MLIR's generic
// allocation functions): per-thread caches of freed blocks by size class, so a program run over and over reuses its
// scratch blocks instead of going through malloc's bins on every run.
#pragma once

#include <cstddef>
#include <vector>

#include "backends/common/runtime_symbol.h"

namespace evoxc::scratch_memory {

// A block of at least `bytes` bytes aligned to `alignment` (a power of two; 64 at least), and its release. A block
// may be released by another thread than the one that allocated it. Returns nullptr when memory is exhausted.
void* allocate(size_t bytes, size_t alignment = 64);
void release(void* p);

// MLIR's generic names (_mlir_memref_to_llvm_alloc, _aligned_alloc, _free) and their addresses, for the JIT linker.
const std::vector<RuntimeSymbol>& symbols();

// Blocks the calling thread's cache holds now, and their bytes (for tests).
struct CacheStats {
  size_t blocks = 0;
  size_t bytes = 0;
};
CacheStats thread_cache_stats();
// False under AddressSanitizer, where every block goes back to malloc.
bool caching_enabled();

}  // namespace evoxc::scratch_memory
