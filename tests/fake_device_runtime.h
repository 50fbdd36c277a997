// Shared by the device-runtime and async-copy tests: a device runtime whose "device" storage is host memory only it
// reads (the data pointer it gives the Buffer is null, so the host cannot), on vulkan devices.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "evoxc/core/device_runtime.h"

namespace evoxc::testing {

class FakeDeviceRuntime : public DeviceRuntime {
 public:
  explicit FakeDeviceRuntime(int num_devices) : num_devices_(num_devices) {}
  std::string_view name() const override { return "fake"; }
  bool serves(Device d, std::string* why) const override {
    if (d.kind == Device::Kind::Vulkan && d.index < num_devices_) return true;
    *why = "the fake has vulkan:0 to vulkan:" + std::to_string(num_devices_ - 1);
    return false;
  }
  std::vector<Device> devices() const override {
    std::vector<Device> out;
    for (int i = 0; i < num_devices_; ++i) out.push_back(Device::vulkan(i));
    return out;
  }
  // Host and fake storage both ways: a copy of the bytes.
  Tensor transfer(const Tensor& t, Device to) const override {
    auto* held = static_cast<std::vector<char>*>(t.buffer()->handle(this));
    const char* src = held ? held->data() : static_cast<const char*>(t.raw_data());
    if (to == Device::cpu()) {
      Tensor out = Tensor::empty(t.shape(), t.dtype());
      std::memcpy(out.raw_data(), src, t.nbytes());
      return out;
    }
    auto* copy = new std::vector<char>(src, src + t.nbytes());
    return Tensor::from_buffer(Buffer::wrap_device(nullptr, t.nbytes(), to, this, copy, [copy](void*) { delete copy; }),
                               t.shape(), t.dtype());
  }

 private:
  int num_devices_;
};

}  // namespace evoxc::testing
