// Asynchronous copies between the host and devices (the seed's evoxc.io): Tensor::to run on one process-wide FIFO
// worker, handed back as handles.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

#include "evoxc/core/device.h"
#include "evoxc/core/tensor.h"

namespace evoxc::io {

// Which way a copy goes: by where its source and target are (cpu:0 is the host; every other device is a device).
enum class Direction : uint8_t { HostToDevice, DeviceToHost, DeviceToDevice, HostToHost };
// "host_to_device", "device_to_host", "device_to_device", "host_to_host".
std::string_view direction_name(Direction d);

// How long a wait may take; nullopt: as long as it takes.
using Timeout = std::optional<std::chrono::duration<double>>;

// One queued copy. Copies run one at a time, in the order they were queued, on a worker thread; a handle may be
// copied, waited on from any thread, and dropped before its copy ran (the copy still runs, its result is freed).
class AsyncCopy {
 public:
  Direction direction() const;
  Device source() const;
  Device target() const;
  // Whether the copy has finished (with its tensor or its error); never blocks.
  bool done() const;
  // Waits for the copy up to `timeout`: true when it finished (its error, if it failed, is thrown here as the
  // transfer threw it: the same type and message), false when the time ran out (the copy is not cancelled).
  bool wait(Timeout timeout = std::nullopt) const;
  // Waits, then the copy on its target device; the transfer's own error when it failed; TimeoutError when the time
  // ran out first (the copy goes on: call again).
  Tensor result(Timeout timeout = std::nullopt) const;

  struct State;
  explicit AsyncCopy(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

// Queues `tensor.to(device)`. Checked before anything is queued (synchronous errors): the tensor is defined, and a
// device runtime serves `device` (DeviceError giving each runtime's reason). The source stays alive until its copy ran.
AsyncCopy prefetch(const Tensor& tensor, Device device);
// Queues `tensor.to(Device::cpu())`.
AsyncCopy sink(const Tensor& tensor);
// Waits until every copy queued before the call has finished; TimeoutError when `timeout` passes first (nothing is
// cancelled). A failed copy's error stays with its handle (wait/result); this only waits.
void wait_all(Timeout timeout = std::nullopt);
// Copies queued and not finished.
size_t pending();

}  // namespace evoxc::io
