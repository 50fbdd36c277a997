// Tests of device buffers on the xla backend with XLA's CPU plugin made to have two devices (its client option
// cpu_device_count): Tensor::to both ways, executables on device 1, outputs that stay on their device and go back in
// without a copy, and the DeviceErrors of misplaced data. (A GPU plugin runs the same paths; none is here.)
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <thread>

#include "evoxc/evoxc.h"
#if EVOXC_HAS_XLA
#include "backends/xla_util.h"
#include "evoxc/backends/xla.h"
#include "evoxc/core/device_runtime.h"
#endif

namespace evoxc {
namespace {

using ST = SymbolicTensor;

#if !EVOXC_HAS_XLA
TEST(XlaDevices, Skipped) { GTEST_SKIP() << "this build has no xla backend (no PJRT C API header at configure time)"; }
#else

// The CPU plugin with two devices, chosen before anything loads it (one plugin per process).
const xla::InitOptions kTwoDevices{"cpu", "", {{"cpu_device_count", int64_t{2}}}};
#define REQUIRE_PLUGIN() REQUIRE_XLA_PLUGIN(&kTwoDevices)

const Device kDev1 = Device::cpu(1);

Tensor ramp(int64_t n, DType dtype) {
  Tensor t = Tensor::empty({n}, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    auto* p = static_cast<T*>(t.raw_data());
    for (int64_t k = 0; k < n; ++k) {
      if constexpr (std::is_same_v<T, bool>) {
        p[k] = k % 3 == 0;
      } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        p[k] = T(static_cast<float>(k % 7) - 2.5f);
      } else {
        p[k] = static_cast<T>(k % 7 + 1);
      }
    }
  });
  return t;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST(XlaDevices, ThePluginsDevicesAreListed) {
  REQUIRE_PLUGIN();
  std::vector<Device> d = devices();
  ASSERT_GE(d.size(), 2u);
  EXPECT_EQ(d[0], Device::cpu(0));
  EXPECT_EQ(d[1], kDev1);
}

TEST(XlaDevices, ToMovesEveryDTypeToDeviceOneAndBack) {
  REQUIRE_PLUGIN();
  for (int k = 0; k < kNumDTypes; ++k) {
    auto dtype = static_cast<DType>(k);
    Tensor h = ramp(37, dtype);
    Tensor d = h.to(kDev1);
    EXPECT_EQ(d.device(), kDev1);
    ASSERT_NE(d.buffer()->runtime(), nullptr) << dtype_name(dtype);
    EXPECT_NE(d.raw_data(), h.raw_data());  // a copy, which the host reads in place (the CPU plugin's memory)
    EXPECT_TRUE(same_bytes(d, h)) << dtype_name(dtype);
    Tensor d2 = d.to(kDev1);  // device to device: another buffer of the plugin
    EXPECT_NE(d2.raw_data(), d.raw_data());
    Tensor back = d2.to(Device::cpu());
    EXPECT_EQ(back.device(), Device::cpu());
    EXPECT_EQ(back.buffer()->runtime(), nullptr);
    EXPECT_TRUE(same_bytes(back, h)) << dtype_name(dtype);
  }
  // Rank 0, zero-size and rank 3.
  Tensor s = Tensor::scalar<double>(2.5).to(kDev1);
  EXPECT_EQ(s.to(Device::cpu()).to_vector<double>(), std::vector<double>{2.5});
  Tensor z = Tensor::zeros({0, 3}, f32).to(kDev1);
  EXPECT_EQ(z.shape(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(z.to(Device::cpu()).numel(), 0);
  Tensor r3 = Tensor::from_vector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  EXPECT_EQ(r3.to(kDev1).to(Device::cpu()).to_vector<int32_t>(), r3.to_vector<int32_t>());
}

TEST(XlaDevices, AnExecutableOnDeviceOneTakesAndGivesDeviceTensors) {
  REQUIRE_PLUGIN();
  Graph g = trace([](ST x, ST v) { return std::make_tuple(x + v * 0.5, v * 0.9); }, TensorSpec({1000}, f32),
                  TensorSpec({1000}, f32));
  CompiledArtifact art = compile(lower(g, "xla"));
  Executable on1 = load(art, kDev1);
  EXPECT_EQ(on1.device(), kDev1);
  Executable ref = build_graph(g);
  Tensor x = ramp(1000, f32), v = Tensor::full({1000}, 1.0, f32);
  // Host tensors are not device 1's.
  std::vector<Tensor> out(2);
  EXPECT_THROW(on1.execute(std::vector<Tensor>{x, v}, out), DeviceError);
  // The device-resident loop: place once, feed the outputs back.
  std::vector<Tensor> state{x.to(kDev1), v.to(kDev1)}, host{x, v};
  for (int step = 0; step < 20; ++step) {
    std::vector<Tensor> next(2), want(2);
    on1.execute(state, next);
    ref.execute(host, want);
    for (const Tensor& t : next) {
      EXPECT_EQ(t.device(), kDev1);
      EXPECT_NE(t.buffer()->runtime(), nullptr);
    }
    state = next;
    host = want;
  }
  EXPECT_TRUE(same_bytes(state[0].to(Device::cpu()), host[0]));
  EXPECT_TRUE(same_bytes(state[1].to(Device::cpu()), host[1]));
  // The same artifact from its bytes on device 1, and on device 0 taking host tensors.
  Executable again = load(CompiledArtifact::from_bytes(art.to_bytes()), kDev1);
  std::vector<Tensor> o1(2), o0(2);
  again.execute(std::vector<Tensor>{x.to(kDev1), v.to(kDev1)}, o1);
  load(art).execute(std::vector<Tensor>{x, v}, o0);
  EXPECT_TRUE(same_bytes(o1[0].to(Device::cpu()), o0[0].to(Device::cpu())));
  // Device 1's tensors are not device 0's.
  EXPECT_THROW(load(art).execute(std::vector<Tensor>{x.to(kDev1), v}, o0), DeviceError);
}

TEST(XlaDevices, OutputsOnTheHostDeviceAreThePluginsBuffersAndGoBackInAsThey) {
  REQUIRE_PLUGIN();
  Graph g = trace([](ST a) { return a * 2.0 + 1.0; }, TensorSpec({64}, f64));
  Executable x = load(compile(lower(g, "xla")));
  std::vector<Tensor> out(1);
  x.execute(std::vector<Tensor>{ramp(64, f64)}, out);
  EXPECT_EQ(out[0].device(), Device::cpu());
  EXPECT_NE(out[0].buffer()->runtime(), nullptr);  // read in place: the host reads the plugin's buffer
  std::vector<Tensor> again(1);
  x.execute(out, again);
  EXPECT_DOUBLE_EQ(again[0].to_vector<double>()[3], (4.0 * 2 + 1) * 2 + 1);
  // The interpreter reads it as host memory too.
  std::vector<Tensor> interp(1);
  build_graph(g).execute(out, interp);
  EXPECT_EQ(interp[0].to_vector<double>(), again[0].to_vector<double>());
}

TEST(XlaDevices, ManyThreadsMoveAndRunOnDeviceOne) {
  REQUIRE_PLUGIN();
  Executable on1 = load(compile(lower(trace([](ST a) { return a + 1.0; }, TensorSpec({128}, f32)), "xla")), kDev1);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 50; ++k) {
        Tensor d = Tensor::full({128}, static_cast<double>(t * 100 + k), f32).to(kDev1);
        std::vector<Tensor> out(1);
        on1.execute(std::vector<Tensor>{d}, out);
        if (out[0].to(Device::cpu()).to_vector<float>()[127] != static_cast<float>(t * 100 + k + 1)) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(XlaDevices, MisplacedDataIsADeviceErrorSayingWhy) {
  REQUIRE_PLUGIN();
  Tensor h = Tensor::zeros({4}, f32);
  auto message = [&](Device d) {
    try {
      h.to(d);
    } catch (const DeviceError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(Device::cpu(2)).find("cpu_device_count"), std::string::npos) << message(Device::cpu(2));
  EXPECT_NE(message(Device::cuda(0)).find("plugin is for cpu devices"), std::string::npos) << message(Device::cuda(0));
  CompiledArtifact art = compile(lower(trace([](ST a) { return a; }, TensorSpec({4}, f32)), "xla"));
  EXPECT_THROW(load(art, Device::cpu(2)), DeviceError);
  EXPECT_THROW(load(art, Device::cuda(0)), DeviceError);
}

#endif

}  // namespace
}  // namespace evoxc
