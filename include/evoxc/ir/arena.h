// Arena: the bump allocator a Module owns, from which its operations are carved.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace evoxc {

// Memory for the IR objects of one module: staging builds, clones and merges thousands of
// operations per program, and one heap allocation and free per operation was a third of a
// clone's instructions. Allocation bumps a pointer in the current chunk; nothing is freed
// before the arena (the module) goes, so an object destroyed early (an op erased by a rewrite)
// keeps its bytes until then. Chunks double from 4 KiB to 256 KiB, so a program of n ops costs
// O(log n) allocations. Not thread-safe: a module is built by one thread (DESIGN: immutable once
// built, shared read-only after).
class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  void* allocate(size_t bytes, size_t align) {
    uintptr_t p = (cur_ + align - 1) & ~(uintptr_t{align} - 1);
    if (p + bytes > end_) {
      grow(bytes + align);
      p = (cur_ + align - 1) & ~(uintptr_t{align} - 1);
    }
    cur_ = p + bytes;
    return reinterpret_cast<void*>(p);  // NOLINT(performance-no-int-to-ptr): a bump pointer
  }
  template <typename T, typename... Args>
  T* make(Args&&... args) {
    return ::new (allocate(sizeof(T), alignof(T))) T(std::forward<Args>(args)...);
  }
  // Bytes handed out so far, and bytes held (chunks) — for tests and memory reports.
  size_t bytes_allocated() const { return allocated_ + (cur_ - begin_); }
  size_t bytes_reserved() const { return reserved_; }

 private:
  void grow(size_t at_least) {
    size_t size = chunks_.empty() ? kFirstChunk : std::min(kMaxChunk, chunk_size_ * 2);
    if (size < at_least) size = at_least;
    chunk_size_ = size;
    allocated_ += cur_ - begin_;
    chunks_.push_back(std::make_unique_for_overwrite<std::byte[]>(size));
    begin_ = cur_ = reinterpret_cast<uintptr_t>(chunks_.back().get());
    end_ = cur_ + size;
    reserved_ += size;
  }
  static constexpr size_t kFirstChunk = 4096, kMaxChunk = 256 * 1024;
  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  uintptr_t begin_ = 0, cur_ = 0, end_ = 0;
  size_t chunk_size_ = 0, allocated_ = 0, reserved_ = 0;
};

}  // namespace evoxc
