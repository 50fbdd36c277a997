// Flat open-addressing pointer set, pointer map and hash-to-pointer multimap for the IR walks of every program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace evoxc {

// Slots for n elements at most half full: a power of two, at least 64.
inline size_t flat_capacity(size_t n) {
  size_t c = 64;
  while (c < (n + 1) * 2) c *= 2;
  return c;
}

// A set of pointers with open addressing: passes and the verifier run on every program of a
// population, and node-based hash sets (one allocation per element) cost more than the walks.
class PtrSet {
 public:
  bool contains(const void* p) const {
    if (slots_.empty()) return false;
    for (size_t i = slot(p);; i = (i + 1) & mask_) {
      if (slots_[i] == p) return true;
      if (slots_[i] == nullptr) return false;
    }
  }
  // Sizes the table for n elements at once (no growth while inserting them).
  void reserve(size_t n) {
    if ((n + 1) * 2 > slots_.size()) rehash(flat_capacity(n));
  }
  void insert(const void* p) {
    if ((used_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 64 : slots_.size() * 2);
    size_t i = slot(p);
    while (slots_[i] != nullptr && slots_[i] != kGone && slots_[i] != p) i = (i + 1) & mask_;
    if (slots_[i] == p) return;
    if (slots_[i] == nullptr) ++used_;
    slots_[i] = p;
  }
  // Live slots plus tombstones: what the table holds for sizing.
  size_t size() const { return used_; }
  void erase(const void* p) {
    if (slots_.empty()) return;
    for (size_t i = slot(p);; i = (i + 1) & mask_) {
      if (slots_[i] == nullptr) return;
      if (slots_[i] == p) {
        slots_[i] = kGone;  // a tombstone keeps later probes of the chain intact
        return;
      }
    }
  }

 private:
  static inline const void* const kGone = reinterpret_cast<const void*>(uintptr_t{1});
  size_t slot(const void* p) const {
    return ((reinterpret_cast<uintptr_t>(p) >> 4) * 0x9e3779b97f4a7c15ULL >> 7) & mask_;
  }
  void rehash(size_t cap) {
    std::vector<const void*> old = std::move(slots_);
    slots_.assign(cap, nullptr);
    mask_ = slots_.size() - 1;
    used_ = 0;
    for (const void* p : old)
      if (p != nullptr && p != kGone) insert(p);
  }
  std::vector<const void*> slots_;
  size_t mask_ = 0, used_ = 0;
};

// A map from pointers (IR values, operations) to V with open addressing in one array: the
// transforms map every value of every program, and a node-based map (one allocation per
// entry) was a tenth of vjp's instructions. Insert-only (no erase). References returned by
// operator[] and find stay valid until the next insertion of a new key (a rehash moves them).
template <typename K, typename V>
class PtrMap {
 public:
  V* find(K k) {
    if (slots_.empty()) return nullptr;
    Slot& s = probe(k);
    return s.key != nullptr ? &s.value : nullptr;
  }
  const V* find(K k) const { return const_cast<PtrMap*>(this)->find(k); }  // NOLINT: one probe for both
  bool contains(K k) const { return find(k) != nullptr; }
  // The value of k, default-constructed when absent.
  V& operator[](K k) {
    if ((used_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 32 : slots_.size() * 2);
    Slot& s = probe(k);
    if (s.key == nullptr) {
      s.key = k;
      ++used_;
    }
    return s.value;
  }
  size_t size() const { return used_; }
  bool empty() const { return used_ == 0; }
  void reserve(size_t n) {
    size_t c = 32;
    while (c < (n + 1) * 2) c *= 2;
    if (c > slots_.size()) rehash(c);
  }
  void clear() {
    slots_.clear();
    used_ = 0;
  }
  // f(key, value) for every entry, in no particular order.
  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.key != nullptr) f(s.key, s.value);
  }

 private:
  struct Slot {
    K key = nullptr;
    V value{};
  };
  Slot& probe(K k) {
    const size_t mask = slots_.size() - 1;
    size_t i = (reinterpret_cast<uintptr_t>(k) >> 4) * 0x9e3779b97f4a7c15ULL >> 7 & mask;
    while (slots_[i].key != nullptr && slots_[i].key != k) i = (i + 1) & mask;
    return slots_[i];
  }
  void rehash(size_t cap) {
    std::vector<Slot> old = std::move(slots_);
    slots_.clear();
    slots_.resize(cap);
    for (Slot& s : old)
      if (s.key != nullptr) {
        Slot& d = probe(s.key);
        d.key = s.key;
        d.value = std::move(s.value);
      }
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

// Insert-only multimap from a hash to pointers, open addressing: for_each(h, f) calls f(ptr)
// for every pointer inserted under h until f returns true.
template <typename T>
class HashIndex {
 public:
  void reserve(size_t n) {
    if ((n + 1) * 2 > slots_.size()) rehash(flat_capacity(n));
  }
  void insert(size_t h, const T* p) {
    if ((used_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 64 : slots_.size() * 2);
    size_t i = slot(h);
    while (slots_[i].ptr != nullptr) i = (i + 1) & mask_;
    slots_[i] = {h, p};
    ++used_;
  }
  template <typename F>
  const T* find(size_t h, F&& match) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = slot(h); slots_[i].ptr != nullptr; i = (i + 1) & mask_)
      if (slots_[i].hash == h && match(*slots_[i].ptr)) return slots_[i].ptr;
    return nullptr;
  }

 private:
  // The high bits of a multiplicative scramble: callers' hashes need not be uniform in their low bits.
  size_t slot(size_t h) const { return (h * 0x9e3779b97f4a7c15ULL >> 20) & mask_; }
  struct Slot {
    size_t hash = 0;
    const T* ptr = nullptr;
  };
  void rehash(size_t cap) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    used_ = 0;
    for (const Slot& s : old)
      if (s.ptr != nullptr) insert(s.hash, s.ptr);
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0, used_ = 0;
};

}  // namespace evoxc
