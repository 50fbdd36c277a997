// Device runtimes: who holds tensor storage on a device other than the host and moves it (Tensor::to); backends
// register them, so the core knows no device API.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "evoxc/core/device.h"
#include "evoxc/core/tensor.h"

namespace evoxc {

// The host is cpu:0 and needs no runtime: its storage is plain memory. Every other device's storage is held by the
// runtime that made it (Buffer::runtime()), which alone can read it back.
class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  DeviceRuntime() = default;
  DeviceRuntime(const DeviceRuntime&) = delete;
  DeviceRuntime& operator=(const DeviceRuntime&) = delete;

  // A short name for messages ("xla").
  virtual std::string_view name() const = 0;
  // Whether this runtime holds storage on `device`; when not, the reason in `why`. It may load what it needs to
  // know (a plugin) and must not throw.
  virtual bool serves(Device device, std::string* why) const = 0;
  // The devices it serves (loading what it needs); none when it cannot load. Never throws.
  virtual std::vector<Device> devices() const = 0;
  // A copy of `t` on `to`, complete when it returns: `t` is a host tensor or storage this runtime holds, `to` the
  // host (cpu:0) or a device it serves. A failed transfer is the runtime's typed error.
  virtual Tensor transfer(const Tensor& t, Device to) const = 0;
};

// Registers `runtime` (which lives as long as the process) for devices of `kind`; Tensor::to asks a kind's runtimes
// in the order they registered.
void register_device_runtime(Device::Kind kind, const DeviceRuntime* runtime);
// The first registered runtime that serves `device`; DeviceError giving each runtime's reason when none does.
const DeviceRuntime& device_runtime(Device device);
// Every registered runtime, once each, in registration order.
std::vector<const DeviceRuntime*> device_runtimes();

}  // namespace evoxc
