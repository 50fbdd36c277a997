// Tests of the scratch allocator compiled programs' buffers come from (src/backends/common/scratch_memory.cpp):
// alignment, reuse of freed blocks by size class, the cache's bounds, blocks freed by another thread, large blocks and
// MLIR's generic entry points. Built in every configuration, so ThreadSanitizer and AddressSanitizer check it too.
#include "backends/common/scratch_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace evoxc {
namespace {

namespace sm = scratch_memory;

bool aligned(const void* p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

void* symbol(const char* name) {
  for (const RuntimeSymbol& s : sm::symbols())
    if (std::string(s.name) == name) return s.address;
  ADD_FAILURE() << "no runtime symbol " << name;
  return nullptr;
}

TEST(ScratchMemory, BlocksAreAlignedAndWholeWritable) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{4096}, size_t{3} << 20}) {
    for (size_t alignment : {size_t{16}, size_t{64}, size_t{128}, size_t{4096}}) {
      auto* p = static_cast<unsigned char*>(sm::allocate(bytes, alignment));
      ASSERT_NE(p, nullptr) << bytes;
      EXPECT_TRUE(aligned(p, alignment < 64 ? 64 : alignment)) << bytes << " " << alignment;
      std::memset(p, 0xab, bytes);  // AddressSanitizer: the whole payload belongs to the block
      sm::release(p);
    }
  }
  sm::release(nullptr);
}

TEST(ScratchMemory, RejectsBadAlignmentAndOverflow) {
  EXPECT_EQ(sm::allocate(64, 96), nullptr);
  EXPECT_EQ(sm::allocate(SIZE_MAX - 8), nullptr);
}

TEST(ScratchMemory, FreedBlockServesTheNextRequestOfItsClass) {
  if (!sm::caching_enabled()) GTEST_SKIP() << "AddressSanitizer build: every block goes back to malloc";
  void* a = sm::allocate(4000);
  sm::release(a);
  void* b = sm::allocate(4096 - 64);  // same size class (4 KiB)
  EXPECT_EQ(a, b);
  void* c = sm::allocate(100);  // another class: not the cached block
  EXPECT_NE(c, b);
  sm::release(b);
  sm::release(c);
}

TEST(ScratchMemory, CacheIsBounded) {
  std::vector<void*> blocks;
  for (int i = 0; i < 1000; ++i) blocks.push_back(sm::allocate(1024));
  for (void* p : blocks) sm::release(p);
  sm::CacheStats s = sm::thread_cache_stats();
  EXPECT_LE(s.blocks, 15u * 64u);
  EXPECT_LE(s.bytes, size_t{32} << 20);
  // Blocks of more than 1 MiB are never cached.
  size_t before = sm::thread_cache_stats().bytes;
  sm::release(sm::allocate(size_t{2} << 20));
  EXPECT_EQ(sm::thread_cache_stats().bytes, before);
}

TEST(ScratchMemory, BlockFreedOnAnotherThread) {
  std::vector<void*> blocks;
  for (int i = 0; i < 100; ++i) {
    blocks.push_back(sm::allocate(static_cast<size_t>(64 * (i + 1))));
    std::memset(blocks.back(), i, static_cast<size_t>(64 * (i + 1)));
  }
  std::thread t([&] {
    for (void* p : blocks) sm::release(p);
    for (int i = 0; i < 100; ++i) sm::release(sm::allocate(512));  // reused there, freed at the thread's exit
  });
  t.join();
}

TEST(ScratchMemory, MlirGenericEntryPoints) {
  auto alloc = reinterpret_cast<void* (*)(uint64_t)>(symbol("_mlir_memref_to_llvm_alloc"));
  auto aligned_alloc = reinterpret_cast<void* (*)(uint64_t, uint64_t)>(symbol("_mlir_memref_to_llvm_aligned_alloc"));
  auto free = reinterpret_cast<void (*)(void*)>(symbol("_mlir_memref_to_llvm_free"));
  ASSERT_TRUE(alloc && aligned_alloc && free);
  void* p = alloc(12345);
  void* q = aligned_alloc(256, 777);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_TRUE(aligned(q, 256));
  std::memset(p, 1, 12345);
  std::memset(q, 2, 777);
  free(p);
  free(q);
}

}  // namespace
}  // namespace evoxc
