// Tests of the device-runtime registry and of Tensor::to's routing through it, with a fake runtime on vulkan devices.
#include "evoxc/core/device_runtime.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "fake_device_runtime.h"

namespace evoxc {
namespace {

// The shared fake on vulkan:0 and vulkan:1, counting its transfers.
class FakeRuntime final : public testing::FakeDeviceRuntime {
 public:
  FakeRuntime() : FakeDeviceRuntime(2) {}
  mutable int transfers = 0;
  Tensor transfer(const Tensor& t, Device to) const override {
    ++transfers;
    return FakeDeviceRuntime::transfer(t, to);
  }
};

const FakeRuntime& fake() {
  static const FakeRuntime* r = [] {
    auto* f = new FakeRuntime();
    register_device_runtime(Device::Kind::Vulkan, f);
    return f;
  }();
  return *r;
}

TEST(DeviceRuntime, ToRoutesThroughTheRuntimeOfEachEnd) {
  const FakeRuntime& rt = fake();
  Tensor h = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  int before = rt.transfers;
  Tensor d = h.to(Device::vulkan(1));
  EXPECT_EQ(rt.transfers, before + 1);
  EXPECT_EQ(d.device(), Device::vulkan(1));
  EXPECT_EQ(d.buffer()->runtime(), &rt);
  EXPECT_NE(d.buffer()->handle(&rt), nullptr);
  EXPECT_EQ(d.buffer()->handle(nullptr), nullptr);  // a handle is only given to its own runtime
  EXPECT_THROW(d.raw_data(), DeviceError);
  EXPECT_EQ(d.to_string(), "Tensor(shape=(2, 2), dtype=float32, device=vulkan:1)");
  h.data<float>()[0] = 99;  // the device copy is its own
  Tensor d0 = d.to(Device::vulkan(0));
  Tensor back = d0.to(Device::cpu());
  EXPECT_EQ(rt.transfers, before + 3);
  EXPECT_EQ(back.device(), Device::cpu());
  EXPECT_EQ(back.buffer()->runtime(), nullptr);
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  // Host to host is a copy the core makes itself.
  Tensor c = h.to(Device::cpu());
  EXPECT_EQ(rt.transfers, before + 3);
  EXPECT_NE(c.raw_data(), h.raw_data());
}

TEST(DeviceRuntime, DevicesNoRuntimeServesAreDeviceErrorsWithEachReason) {
  fake();
  Tensor h = Tensor::zeros({3}, f32);
  try {
    h.to(Device::vulkan(7));
    ADD_FAILURE() << "moved to a device no runtime serves";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("fake: the fake has vulkan:0 to vulkan:1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(device_runtime(Device::vulkan(2)), DeviceError);
  EXPECT_EQ(&device_runtime(Device::vulkan(0)), &fake());
  // Storage the caller wrapped on a device, made by no runtime: nobody can read it.
  float x = 0;
  Tensor wrapped = Tensor::borrow(&x, {}, f32, Device::cuda(0));
  EXPECT_THROW(wrapped.to(Device::cpu()), DeviceError);
  EXPECT_THROW(Tensor().to(Device::cpu()), ValidationError);
}

TEST(DeviceRuntime, EachRuntimeIsListedOnce) {
  const FakeRuntime& rt = fake();
  register_device_runtime(Device::Kind::Vulkan, &rt);  // a second kind entry of one runtime
  int seen = 0;
  for (const DeviceRuntime* r : device_runtimes()) seen += r == &rt;
  EXPECT_EQ(seen, 1);
}

}  // namespace
}  // namespace evoxc
