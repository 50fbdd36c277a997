// The registry of device runtimes, and Tensor::to, which routes a transfer through them.
#include "evoxc/core/device_runtime.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "evoxc/core/error.h"

namespace evoxc {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::pair<Device::Kind, const DeviceRuntime*>> entries;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: runtimes are asked during exit too
  return *r;
}

std::vector<const DeviceRuntime*> runtimes_for(Device::Kind kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<const DeviceRuntime*> out;
  for (const auto& [k, rt] : r.entries)
    if (k == kind) out.push_back(rt);
  return out;
}

}  // namespace

void register_device_runtime(Device::Kind kind, const DeviceRuntime* runtime) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.entries.emplace_back(kind, runtime);
}

const DeviceRuntime& device_runtime(Device device) {
  std::vector<const DeviceRuntime*> candidates = runtimes_for(device.kind);
  std::string reasons;
  for (const DeviceRuntime* rt : candidates) {
    std::string why;
    if (rt->serves(device, &why)) return *rt;
    reasons += "; " + std::string(rt->name()) + ": " + why;
  }
  if (candidates.empty())
    throw DeviceError(
        "no runtime in this build holds storage on " + device.to_string() +
        (device.kind == Device::Kind::Cpu ? " (cpu:0 is the host; other cpu devices are a PJRT plugin's)" : ""));
  throw DeviceError("no runtime serves " + device.to_string() + reasons);
}

std::vector<const DeviceRuntime*> device_runtimes() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<const DeviceRuntime*> out;
  for (const auto& entry : r.entries)
    if (std::find(out.begin(), out.end(), entry.second) == out.end()) out.push_back(entry.second);
  return out;
}

Tensor Tensor::to(Device device) const {
  if (!defined()) throw ValidationError("Tensor::to: an undefined tensor has no data to move");
  const DeviceRuntime* source = buffer_->runtime();
  if (!source && this->device().kind != Device::Kind::Cpu)
    throw DeviceError("Tensor::to: the storage on " + this->device().to_string() +
                      " was wrapped by the caller, not made by a device runtime: evoxc cannot read it");
  if (device == Device::cpu()) return source ? source->transfer(*this, device) : clone();
  const DeviceRuntime& target = device_runtime(device);
  if (source && source != &target) return target.transfer(source->transfer(*this, Device::cpu()), device);
  return target.transfer(*this, device);
}

}  // namespace evoxc
