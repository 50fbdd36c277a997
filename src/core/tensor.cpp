// Tensor storage: aligned host buffers, zero-copy views, conversion and numpy-like printing.
#include "evoxc/core/tensor.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/sanitizers.h"

namespace evoxc {

namespace {
constexpr size_t kAlign = 64;

// Freed large blocks wait here for the next request of the same size: a program run over and over
// gets its outputs' and intermediates' storage back from this cache instead of from malloc, which
// returns the top of its heap to the system when a large block there is freed (glibc's trimming), so
// that every run faulted the pages of its outputs in again (measured: 200+ page faults per run of a
// 4 MB elementwise program once a worker thread frees small blocks, 3x its time).
class BlockCache {
 public:
  static constexpr size_t kMinBytes = size_t{1} << 16;    // smaller blocks: malloc's own bins serve well
  static constexpr size_t kMaxBytes = size_t{256} << 20;  // what the cache may hold in all
  static constexpr size_t kPage = 4096;
  // Under AddressSanitizer every block goes back to malloc, so a use after free is still caught.
  static constexpr bool kEnabled = !kAddressSanitizer;

  static size_t rounded(size_t n) { return n < kMinBytes ? n : (n + kPage - 1) / kPage * kPage; }

  void* take(size_t n) {
    if (n < kMinBytes || !kEnabled) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = count_; i-- > 0;) {  // the most recently freed block of the size first
      if (slots_[i].bytes != n) continue;
      void* p = slots_[i].data;
      slots_[i] = slots_[--count_];
      held_ -= n;
      return p;
    }
    return nullptr;
  }
  void give(void* p, size_t n) {
    if (n >= kMinBytes && kEnabled) {
      std::lock_guard<std::mutex> lock(mu_);
      if (count_ < slots_.size() && held_ + n <= kMaxBytes) {
        slots_[count_++] = {n, p};
        held_ += n;
        return;
      }
    }
    std::free(p);
  }

 private:
  struct Slot {
    size_t bytes;
    void* data;
  };
  std::mutex mu_;
  std::array<Slot, 64> slots_{};  // fixed: freeing a buffer allocates nothing
  size_t count_ = 0;
  size_t held_ = 0;
};

BlockCache& block_cache() {
  static BlockCache* c = new BlockCache();  // never destroyed: buffers may be freed during exit
  return *c;
}
}  // namespace

std::shared_ptr<Buffer> Buffer::allocate(size_t nbytes, bool zero) {
  size_t n = BlockCache::rounded(std::max<size_t>(kAlign, (nbytes + kAlign - 1) / kAlign * kAlign));
  void* p = block_cache().take(n);
  if (!p) p = std::aligned_alloc(kAlign, n);
  if (!p) throw ValidationError("Buffer: cannot allocate " + std::to_string(nbytes) + " bytes");
  if (zero) std::memset(p, 0, n);
  return std::shared_ptr<Buffer>(new Buffer(p, nbytes, Device::cpu(), [n](void* q) { block_cache().give(q, n); }));
}

std::shared_ptr<Buffer> Buffer::wrap(void* data, size_t nbytes, Device device, std::function<void(void*)> release) {
  return std::shared_ptr<Buffer>(new Buffer(data, nbytes, device, std::move(release)));
}

std::shared_ptr<Buffer> Buffer::wrap_device(void* data, size_t nbytes, Device device, const DeviceRuntime* runtime,
                                            void* handle, std::function<void(void*)> release) {
  std::shared_ptr<Buffer> b(new Buffer(data, nbytes, device, std::move(release)));
  b->runtime_ = runtime;
  b->handle_ = handle;
  return b;
}

Buffer::~Buffer() {
  if (release_) release_(data_);
}

int64_t shape_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw ShapeError("negative extent " + std::to_string(d) + " in a tensor shape");
    if (d != 0 && n > INT64_MAX / d) throw ShapeError("tensor shape has too many elements (int64 overflow)");
    n *= d;
  }
  return n;
}

Tensor Tensor::from_buffer(std::shared_ptr<Buffer> buffer, std::vector<int64_t> shape, DType dtype) {
  Tensor t;
  t.numel_ = shape_numel(shape);
  if (static_cast<size_t>(t.numel_) * size_of(dtype) > buffer->nbytes())
    throw ShapeError("Tensor: buffer of " + std::to_string(buffer->nbytes()) + " bytes is too small");
  t.buffer_ = std::move(buffer);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  return t;
}

Tensor Tensor::empty(std::vector<int64_t> shape, DType dtype) {
  int64_t n = shape_numel(shape);
  if (static_cast<uint64_t>(n) > (uint64_t{1} << 48) / size_of(dtype))
    throw ValidationError("Tensor: " + std::to_string(n) + " elements is more than this host can allocate");
  return from_buffer(Buffer::allocate(static_cast<size_t>(n) * size_of(dtype)), std::move(shape), dtype);
}

Tensor Tensor::zeros(std::vector<int64_t> shape, DType dtype) {
  int64_t n = shape_numel(shape);
  return from_buffer(Buffer::allocate(static_cast<size_t>(n) * size_of(dtype), true), std::move(shape), dtype);
}

Tensor Tensor::full(std::vector<int64_t> shape, double value, DType dtype) {
  Tensor t = empty(std::move(shape), dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T v;
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
      v = T(static_cast<float>(value));
    } else if constexpr (std::is_same_v<T, bool>) {
      v = value != 0.0;
    } else {
      v = static_cast<T>(value);
    }
    T* p = static_cast<T*>(t.raw_data());
    for (int64_t i = 0; i < t.numel_; ++i) p[i] = v;
  });
  return t;
}

Tensor Tensor::borrow(void* data, std::vector<int64_t> shape, DType dtype, Device device) {
  return adopt(data, std::move(shape), dtype, nullptr, device);
}

Tensor Tensor::adopt(void* data, std::vector<int64_t> shape, DType dtype, std::function<void(void*)> release,
                     Device device) {
  int64_t n = shape_numel(shape);
  return from_buffer(Buffer::wrap(data, static_cast<size_t>(n) * size_of(dtype), device, std::move(release)),
                     std::move(shape), dtype);
}

Device Tensor::device() const { return buffer_ ? buffer_->device() : Device::cpu(); }

void* Tensor::raw_data() const {
  if (!buffer_) throw ValidationError("Tensor: undefined tensor has no data");
  if (buffer_->device().kind != Device::Kind::Cpu || (!buffer_->data() && buffer_->runtime() && numel_))
    throw DeviceError("Tensor: data of a tensor on " + buffer_->device().to_string() +
                      " cannot be read on the host; call .to(Device::cpu()) first");
  return buffer_->data();
}

void Tensor::check_type(DType t) const {
  if (t != dtype_)
    throw TypeError("Tensor: element type " + std::string(dtype_name(t)) + " requested from a " +
                    std::string(dtype_name(dtype_)) + " tensor");
}

double Tensor::get_as_double(int64_t i) const {
  return visit_dtype(dtype_, [&](auto tag) -> double {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(raw_data());
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
      return static_cast<double>(static_cast<float>(p[i]));
    } else {
      return static_cast<double>(p[i]);
    }
  });
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_);
  if (nbytes()) std::memcpy(t.raw_data(), raw_data(), nbytes());
  return t;
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  if (shape_numel(shape) != numel_) throw ShapeError("Tensor::reshaped: element count differs");
  return from_buffer(buffer_, std::move(shape), dtype_);
}

namespace {
std::string format_element(const Tensor& t, int64_t i) {
  double v = t.get_as_double(i);
  DType d = t.dtype();
  if (is_bool(d)) return v != 0 ? "True" : "False";
  if (is_int(d)) {
    if (d == DType::U64) return std::to_string(static_cast<const uint64_t*>(t.raw_data())[i]);
    if (d == DType::I64) return std::to_string(static_cast<const int64_t*>(t.raw_data())[i]);
    return std::to_string(static_cast<int64_t>(v));
  }
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  // Shortest text that reads back to the same value in the tensor's own precision.
  std::to_chars_result r{};
  if (d == DType::F64) {
    r = std::to_chars(buf, buf + sizeof buf, v);
  } else {
    r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  }
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".";
  return s;
}

void format_rec(const Tensor& t, size_t dim, int64_t& flat, std::string& out) {
  if (dim == t.rank()) {
    out += format_element(t, flat++);
    return;
  }
  out += "[";
  for (int64_t i = 0; i < t.shape()[dim]; ++i) {
    if (i) out += dim + 1 == t.rank() ? " " : "\n" + std::string(dim + 1, ' ');
    format_rec(t, dim + 1, flat, out);
  }
  out += "]";
}
}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "<undefined>";
  if (device().kind != Device::Kind::Cpu || (!buffer_->data() && numel_)) return repr();
  std::string out;
  int64_t flat = 0;
  format_rec(*this, 0, flat, out);
  return out;
}

std::string Tensor::repr() const {
  std::string s = "Tensor(shape=(";
  for (size_t i = 0; i < shape_.size(); ++i) s += (i ? ", " : "") + std::to_string(shape_[i]);
  if (shape_.size() == 1) s += ",";
  return s + "), dtype=" + std::string(dtype_name(dtype_)) + ", device=" + device().to_string() + ")";
}

}  // namespace evoxc
