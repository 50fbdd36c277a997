// Per-thread size-class caches for compiled programs' scratch buffers (see scratch_memory.h).
#include "backends/common/scratch_memory.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstdlib>

#include "core/sanitizers.h"

namespace evoxc::scratch_memory {
namespace {

// Why a cache at all: a merged GP population frees and allocates ~1,000 blocks of 4 KiB per run, which malloc
// serves from its coalescing bins (13% of the run in unlink_chunk and friends, measured with perf); from a
// thread's free list the same request is a few loads and stores.
constexpr size_t kHeader = 64;  // keeps the block's payload 64-byte aligned
constexpr size_t kMinClassBytes = 64;
constexpr int kClasses = 15;  // 64 B .. 1 MiB; larger blocks go to malloc and back
constexpr uint32_t kUncached = kClasses;
constexpr uint32_t kMaxBlocksPerClass = 64;
constexpr size_t kMaxBytesPerThread = size_t{32} << 20;

// Under AddressSanitizer every block goes back to malloc, so a use after free is still caught.
constexpr bool kEnabled = !kAddressSanitizer;

// Written just below the payload: where the block starts and which class it is.
struct Header {
  void* base;
  uint32_t size_class;
};

size_t class_bytes(uint32_t c) { return kMinClassBytes << c; }

uint32_t class_of(size_t payload) {
  if (payload <= kMinClassBytes) return 0;
  auto c = static_cast<uint32_t>(std::bit_width((payload - 1) / kMinClassBytes));
  return c < kClasses ? c : kUncached;
}

struct ThreadCache {
  std::array<void*, kClasses> head{};  // free blocks, linked through their first word
  std::array<uint32_t, kClasses> count{};
  size_t bytes = 0;
  ~ThreadCache();
};

// Set once the thread's cache is destroyed (a block released later in the thread's exit goes to free).
thread_local bool cache_gone = false;
thread_local ThreadCache cache;

ThreadCache::~ThreadCache() {
  for (void*& h : head) {
    while (h) {
      void* next = *static_cast<void**>(h);
      std::free(h);
      h = next;
    }
  }
  cache_gone = true;
}

void* take(uint32_t c) {
  if (!kEnabled || c == kUncached || cache_gone || !cache.head[c]) return nullptr;
  void* base = cache.head[c];
  cache.head[c] = *static_cast<void**>(base);
  --cache.count[c];
  cache.bytes -= class_bytes(c);
  return base;
}

bool keep(void* base, uint32_t c) {
  if (!kEnabled || c == kUncached || cache_gone) return false;
  if (cache.count[c] >= kMaxBlocksPerClass || cache.bytes + class_bytes(c) > kMaxBytesPerThread) return false;
  *static_cast<void**>(base) = cache.head[c];
  cache.head[c] = base;
  ++cache.count[c];
  cache.bytes += class_bytes(c);
  return true;
}

// MLIR's generic allocation functions (finalize-memref-to-llvm{use-generic-functions}).
void* mlir_alloc(uint64_t bytes) { return allocate(bytes); }
void* mlir_aligned_alloc(uint64_t alignment, uint64_t bytes) { return allocate(bytes, alignment); }
void mlir_free(void* p) { release(p); }

template <class F>
void* address(F* f) {
  return reinterpret_cast<void*>(f);
}

}  // namespace

void* allocate(size_t bytes, size_t alignment) {
  if (alignment < kHeader) alignment = kHeader;
  if (!std::has_single_bit(alignment)) return nullptr;
  // The payload starts at the first multiple of `alignment` past the header: at most alignment - 64 further on.
  size_t payload = bytes + (alignment - kHeader);
  if (payload < bytes) return nullptr;  // overflow
  uint32_t c = class_of(payload);
  size_t total = (c == kUncached ? payload : class_bytes(c)) + kHeader;
  if (total < payload) return nullptr;
  void* base = take(c);
  if (!base) base = std::aligned_alloc(kHeader, (total + kHeader - 1) / kHeader * kHeader);
  if (!base) return nullptr;
  auto start = reinterpret_cast<uintptr_t>(base) + kHeader;
  void* p = reinterpret_cast<void*>((start + alignment - 1) & ~(uintptr_t{alignment} - 1));
  *(static_cast<Header*>(p) - 1) = {base, c};
  return p;
}

void release(void* p) {
  if (!p) return;
  Header h = *(static_cast<Header*>(p) - 1);
  if (!keep(h.base, h.size_class)) std::free(h.base);
}

const std::vector<RuntimeSymbol>& symbols() {
  static const std::vector<RuntimeSymbol> table = {
      {"_mlir_memref_to_llvm_alloc", address(mlir_alloc)},
      {"_mlir_memref_to_llvm_aligned_alloc", address(mlir_aligned_alloc)},
      {"_mlir_memref_to_llvm_free", address(mlir_free)},
  };
  return table;
}

bool caching_enabled() { return kEnabled; }

CacheStats thread_cache_stats() {
  CacheStats s;
  if (cache_gone) return s;
  for (uint32_t n : cache.count) s.blocks += n;
  s.bytes = cache.bytes;
  return s;
}

}  // namespace evoxc::scratch_memory
