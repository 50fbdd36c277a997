// Tensor: a concrete, dense, row-major array with storage on a physical device. No math on it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "evoxc/core/device.h"
#include "evoxc/core/dtype.h"
#include "evoxc/core/error.h"

namespace evoxc {

class DeviceRuntime;  // evoxc/core/device_runtime.h

// Raw storage. Host buffers that evoxc allocates are 64-byte aligned.
class Buffer {
 public:
  // Allocates nbytes (at least 64) aligned to 64 bytes on the host; zero-filled when `zero`.
  static std::shared_ptr<Buffer> allocate(size_t nbytes, bool zero = false);
  // Wraps caller memory; `release` runs when the last Tensor referring to it dies (may be empty).
  static std::shared_ptr<Buffer> wrap(void* data, size_t nbytes, Device device, std::function<void(void*)> release);
  // Storage a device runtime holds: `handle` is the runtime's own object for it (a PJRT buffer), `data` its address
  // when the host can read it (a CPU device's memory), else nullptr. `release(data)` runs when the last Tensor dies.
  static std::shared_ptr<Buffer> wrap_device(void* data, size_t nbytes, Device device, const DeviceRuntime* runtime,
                                             void* handle, std::function<void(void*)> release);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // The runtime holding this storage; nullptr for host memory.
  const DeviceRuntime* runtime() const { return runtime_; }
  // The runtime's handle when `runtime` holds this storage, else nullptr (one compare: the run path asks it).
  void* handle(const DeviceRuntime* runtime) const { return runtime_ == runtime ? handle_ : nullptr; }

 private:
  Buffer(void* d, size_t n, Device dev, std::function<void(void*)> rel)
      : data_(d), nbytes_(n), device_(dev), release_(std::move(rel)) {}
  void* data_;
  size_t nbytes_;
  Device device_;
  std::function<void(void*)> release_;
  const DeviceRuntime* runtime_ = nullptr;
  void* handle_ = nullptr;
};

class Tensor {
 public:
  // An undefined tensor (no storage); defined() is false.
  Tensor() = default;

  // Uninitialised host storage for the shape (contents unspecified).
  static Tensor empty(std::vector<int64_t> shape, DType dtype);
  static Tensor zeros(std::vector<int64_t> shape, DType dtype = kDefaultFloat);
  static Tensor full(std::vector<int64_t> shape, double value, DType dtype = kDefaultFloat);
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, std::vector<int64_t> shape);
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>(std::vector<T>{value}, {});
  }

  // Zero-copy views of caller memory.
  // Lifetime rule: `data` must stay valid and must not be freed while this Tensor or any
  // copy of it (including an Executable's output that aliases an input) is alive. evoxc
  // reads it in place and never frees it. Use adopt() to hand ownership over instead.
  static Tensor borrow(void* data, std::vector<int64_t> shape, DType dtype, Device device = Device::cpu());
  // Like borrow, but `release(data)` runs when the last Tensor referring to the memory dies.
  static Tensor adopt(void* data, std::vector<int64_t> shape, DType dtype, std::function<void(void*)> release,
                      Device device = Device::cpu());
  // A tensor viewing `buffer` with the given shape (the buffer must be large enough).
  static Tensor from_buffer(std::shared_ptr<Buffer> buffer, std::vector<int64_t> shape, DType dtype);

  bool defined() const { return buffer_ != nullptr; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  DType dtype() const { return dtype_; }
  Device device() const;
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * size_of(dtype_); }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }

  // Host pointers. DeviceError when the host cannot read the storage (not on a cpu device, or a runtime's storage
  // with no host address); TypeError when T does not match dtype.
  void* raw_data() const;
  template <typename T>
  T* data() const {
    check_type(dtype_of_v<std::remove_const_t<T>>);
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  std::vector<T> to_vector() const {
    const T* p = data<const T>();
    return std::vector<T>(p, p + numel_);
  }
  // Element i (row-major flat index) as double, whatever the dtype (for printing and tests).
  double get_as_double(int64_t i) const;

  // The only transfer primitive: a copy of this tensor on `device`, complete when it returns. cpu:0 is the host
  // (cpu:0 -> cpu:0 copies); every other device is a registered DeviceRuntime's (the xla backend's PJRT plugin:
  // its CPU devices 1.. and its GPUs), and storage there comes back only through this. DeviceError when no runtime
  // serves `device`, with each one's reason. Defined in device_runtime.cpp.
  Tensor to(Device device) const;
  Tensor clone() const;
  // Same storage, new shape with the same number of elements (ShapeError otherwise).
  Tensor reshaped(std::vector<int64_t> shape) const;

  // numpy-like text: "[3.999999 3.999999 3.999999 3.999999]".
  std::string to_string() const;
  // "Tensor(shape=(4,), dtype=float32, device=cpu:0)"
  std::string repr() const;

 private:
  void check_type(DType t) const;
  std::shared_ptr<Buffer> buffer_;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  DType dtype_ = kDefaultFloat;
};

// Number of elements of a concrete shape; ShapeError on a negative extent or overflow.
int64_t shape_numel(const std::vector<int64_t>& shape);

// Host tensor shorthands, as in numpy (float32 unless a dtype is given).
inline Tensor zeros(std::vector<int64_t> shape, DType dtype = kDefaultFloat) {
  return Tensor::zeros(std::move(shape), dtype);
}
inline Tensor ones(std::vector<int64_t> shape, DType dtype = kDefaultFloat) {
  return Tensor::full(std::move(shape), 1.0, dtype);
}
inline Tensor full(std::vector<int64_t> shape, double value, DType dtype = kDefaultFloat) {
  return Tensor::full(std::move(shape), value, dtype);
}
// A rank-0 host tensor: tensor(2.0f) is float32, tensor(2.0) float64, tensor(int64_t{3}) int64.
template <typename T>
Tensor tensor(T value) {
  return Tensor::scalar<T>(value);
}

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, std::vector<int64_t> shape) {
  Tensor t = empty(std::move(shape), dtype_of_v<T>);
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw ShapeError("Tensor::from_vector: " + std::to_string(values.size()) + " values for a shape of " +
                     std::to_string(t.numel()) + " elements");
  T* p = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

}  // namespace evoxc
