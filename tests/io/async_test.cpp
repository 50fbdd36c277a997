// Tests of evoxc::io's asynchronous copies on a fake device runtime whose transfers wait at a gate the test opens:
// FIFO order, synchronous validation, errors surfacing at wait/result as the transfer threw them, timeouts that never
// cancel, wait_all, dropped handles, and many threads queueing at once.
#include "evoxc/io/async.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "evoxc/core/device_runtime.h"
#include "fake_device_runtime.h"

namespace evoxc {
namespace {

using namespace std::chrono_literals;

// The shared fake on vulkan:0..3 (vulkan:3 fails every transfer with a BackendError); each transfer first waits for
// the gate.
class GatedRuntime final : public testing::FakeDeviceRuntime {
 public:
  GatedRuntime() : FakeDeviceRuntime(4) {}
  Tensor transfer(const Tensor& t, Device to) const override {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return open; });
      order.push_back(t.numel());
    }
    if (to == Device::vulkan(3)) throw BackendError("gated: vulkan:3 refuses copies");
    return FakeDeviceRuntime::transfer(t, to);
  }
  void set_open(bool o) {
    {
      std::lock_guard<std::mutex> lock(mu);
      open = o;
    }
    cv.notify_all();
  }
  mutable std::mutex mu;
  mutable std::condition_variable cv;
  bool open = true;
  mutable std::vector<int64_t> order;  // numel of each source, in the order copied
};

GatedRuntime& gated() {
  static GatedRuntime* r = [] {
    auto* g = new GatedRuntime();
    register_device_runtime(Device::Kind::Vulkan, g);
    return g;
  }();
  return *r;
}

Tensor ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i) * 0.5f;
  return Tensor::from_vector<float>(v, {n});
}

TEST(AsyncCopy, PrefetchAndSinkRoundTripWithTheirDirections) {
  gated().set_open(true);
  Tensor h = ramp(10);
  io::AsyncCopy up = io::prefetch(h, Device::vulkan(1));
  EXPECT_EQ(io::direction_name(up.direction()), "host_to_device");
  EXPECT_EQ(up.source(), Device::cpu());
  EXPECT_EQ(up.target(), Device::vulkan(1));
  Tensor d = up.result();
  EXPECT_TRUE(up.done());
  EXPECT_EQ(d.device(), Device::vulkan(1));
  io::AsyncCopy across = io::prefetch(d, Device::vulkan(0));
  EXPECT_EQ(io::direction_name(across.direction()), "device_to_device");
  io::AsyncCopy down = io::sink(across.result());
  EXPECT_EQ(io::direction_name(down.direction()), "device_to_host");
  EXPECT_EQ(down.result().to_vector<float>(), h.to_vector<float>());
  EXPECT_EQ(io::direction_name(io::prefetch(h, Device::cpu()).direction()), "host_to_host");
  io::wait_all();
  EXPECT_EQ(io::pending(), 0u);
}

TEST(AsyncCopy, CopiesRunInTheOrderQueuedAndTimeoutsDoNotCancel) {
  GatedRuntime& g = gated();
  g.set_open(false);
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.order.clear();
  }
  std::vector<io::AsyncCopy> copies;
  for (int64_t n = 1; n <= 5; ++n) copies.push_back(io::prefetch(ramp(n), Device::vulkan(0)));
  EXPECT_FALSE(copies[0].done());
  EXPECT_FALSE(copies[0].wait(20ms));
  EXPECT_THROW(copies[4].result(10ms), TimeoutError);
  EXPECT_THROW(io::wait_all(10ms), TimeoutError);
  EXPECT_GE(io::pending(), 5u);
  g.set_open(true);
  EXPECT_EQ(copies[4].result().numel(), 5);  // the copy the timeout gave up on finished anyway
  io::wait_all();
  for (const auto& c : copies) EXPECT_TRUE(c.done());
  std::lock_guard<std::mutex> lock(g.mu);
  EXPECT_EQ(g.order, (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

TEST(AsyncCopy, ValidationIsSynchronousAndTransferErrorsSurfaceAtWaitAndResult) {
  gated().set_open(true);
  EXPECT_THROW(io::prefetch(Tensor(), Device::vulkan(0)), ValidationError);
  EXPECT_THROW(io::prefetch(ramp(3), Device::vulkan(9)), DeviceError);  // nothing serves it: now, not at result
  float x = 1;
  EXPECT_THROW(io::sink(Tensor::borrow(&x, {}, f32, Device::cuda(0))), DeviceError);
  io::AsyncCopy bad = io::prefetch(ramp(3), Device::vulkan(3));
  try {
    bad.result();
    ADD_FAILURE() << "a failed copy gave a result";
  } catch (const BackendError& e) {
    EXPECT_STREQ(e.what(), "gated: vulkan:3 refuses copies");
  }
  EXPECT_THROW(bad.wait(), BackendError);
  EXPECT_TRUE(bad.done());
  // The worker goes on after a failure.
  EXPECT_EQ(io::prefetch(ramp(4), Device::vulkan(2)).result().numel(), 4);
}

TEST(AsyncCopy, DroppedHandlesAndManyThreads) {
  gated().set_open(true);
  for (int i = 0; i < 20; ++i) (void)io::prefetch(ramp(8), Device::vulkan(0));  // handles dropped at once
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 25; ++k) {
        Tensor h = Tensor::full({16}, t * 100 + k, f32);
        Tensor back = io::sink(io::prefetch(h, Device::vulkan(t % 3)).result()).result();
        if (back.to_vector<float>()[15] != static_cast<float>(t * 100 + k)) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  io::wait_all();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(io::pending(), 0u);
}

}  // namespace
}  // namespace evoxc
