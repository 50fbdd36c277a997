// SmallVector: a vector whose first N elements live inside it (no heap allocation until N+1).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace evoxc {

// For the short lists built on every traced op (a shape's extents): up to N elements need no
// allocation; past N every element moves to a heap vector. Iterators are pointers and stay
// valid like std::vector's (until an insertion or a spill). T must be default-constructible
// and copyable.
template <typename T, size_t N>
class SmallVector {
 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  SmallVector(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT(google-explicit-constructor)
  SmallVector(std::vector<T>&& v) {                                     // NOLINT(google-explicit-constructor)
    if (v.size() <= N) {
      assign(std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
    } else {
      heap_ = std::move(v);
      on_heap_ = true;
    }
  }
  template <typename It>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(size_t n, const T& value) { resize(n, value); }
  // Copies only the elements in use (the defaulted copy would copy every inline slot).
  SmallVector(const SmallVector& o) : size_(o.on_heap_ ? 0 : o.size_), on_heap_(o.on_heap_) {
    if (on_heap_) {
      heap_ = o.heap_;
    } else {
      std::copy(o.inline_.begin(), o.inline_.begin() + size_, inline_.begin());
    }
  }
  SmallVector(SmallVector&& o) noexcept : heap_(std::move(o.heap_)), size_(o.size_), on_heap_(o.on_heap_) {
    if (!on_heap_) std::move(o.inline_.begin(), o.inline_.begin() + size_, inline_.begin());
    o.size_ = 0;
    o.on_heap_ = false;
    o.heap_.clear();
  }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this == &o) return *this;
    clear();
    if (o.on_heap_) {
      heap_ = std::move(o.heap_);
      on_heap_ = true;
    } else {
      on_heap_ = false;
      heap_.clear();
      std::move(o.inline_.begin(), o.inline_.begin() + o.size_, inline_.begin());
      size_ = o.size_;
    }
    o.size_ = 0;
    o.on_heap_ = false;
    o.heap_.clear();
    return *this;
  }
  ~SmallVector() = default;

  // A std::vector copy of the elements, for the code that takes one.
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT(google-explicit-constructor)

  size_t size() const { return on_heap_ ? heap_.size() : size_; }
  bool empty() const { return size() == 0; }
  T* data() { return on_heap_ ? heap_.data() : inline_.data(); }
  const T* data() const { return on_heap_ ? heap_.data() : inline_.data(); }
  T* begin() { return data(); }
  T* end() { return data() + size(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size() - 1]; }
  const T& back() const { return data()[size() - 1]; }

  void clear() {
    if (on_heap_) {
      heap_.clear();
    } else {
      for (size_t i = 0; i < size_; ++i) inline_[i] = T();
      size_ = 0;
    }
  }
  void reserve(size_t n) {
    if (n > N) spill(n);
  }
  template <typename It>
  void assign(It first, It last) {
    clear();
    if (on_heap_) {
      heap_.assign(first, last);
      return;
    }
    for (; first != last; ++first) push_back(*first);
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (!on_heap_ && size_ < N) {
      inline_[size_] = T(std::forward<Args>(args)...);
      return inline_[size_++];
    }
    if (!on_heap_) spill(N + 1);
    return heap_.emplace_back(std::forward<Args>(args)...);
  }
  void pop_back() {
    if (on_heap_) {
      heap_.pop_back();
    } else {
      inline_[--size_] = T();
    }
  }
  void resize(size_t n, const T& value = T()) {
    while (size() > n) pop_back();
    while (size() < n) push_back(value);
  }
  T* insert(const T* pos, const T& v) { return insert(pos, &v, &v + 1); }
  template <typename It>
  T* insert(const T* pos, It first, It last) {
    const auto at = static_cast<size_t>(pos - data());
    std::vector<T> items(first, last);  // copied first: the range may alias this vector
    if (!on_heap_ && size_ + items.size() <= N) {
      for (size_t i = size_; i-- > at;) inline_[i + items.size()] = std::move(inline_[i]);
      for (size_t i = 0; i < items.size(); ++i) inline_[at + i] = std::move(items[i]);
      size_ += items.size();
      return inline_.data() + at;
    }
    if (!on_heap_) spill(size_ + items.size());
    auto it = heap_.insert(heap_.begin() + static_cast<difference_type>(at), std::make_move_iterator(items.begin()),
                           std::make_move_iterator(items.end()));
    return heap_.data() + (it - heap_.begin());
  }
  T* erase(const T* pos) { return erase(pos, pos + 1); }
  T* erase(const T* first, const T* last) {
    const auto a = static_cast<size_t>(first - data()), b = static_cast<size_t>(last - data());
    if (on_heap_) {
      auto it =
          heap_.erase(heap_.begin() + static_cast<difference_type>(a), heap_.begin() + static_cast<difference_type>(b));
      return heap_.data() + (it - heap_.begin());
    }
    std::move(inline_.begin() + b, inline_.begin() + size_, inline_.begin() + a);
    for (size_t i = size_ - (b - a); i < size_; ++i) inline_[i] = T();
    size_ -= b - a;
    return inline_.data() + a;
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }

 private:
  // Moves the inline elements to the heap vector, with room for `capacity`.
  void spill(size_t capacity) {
    if (on_heap_) {
      heap_.reserve(capacity);
      return;
    }
    heap_.reserve(std::max(capacity, 2 * N));
    for (size_t i = 0; i < size_; ++i) {
      heap_.push_back(std::move(inline_[i]));
      inline_[i] = T();
    }
    size_ = 0;
    on_heap_ = true;
  }
  std::array<T, N> inline_{};
  std::vector<T> heap_;
  size_t size_ = 0;  // inline elements (unused once on the heap)
  bool on_heap_ = false;
};

}  // namespace evoxc
