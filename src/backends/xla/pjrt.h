// The PJRT C API plugin the xla backend drives: the loaded library, its client and devices, and the calls' error
// handling. Only src/backends/xla/ includes the PJRT header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/backends/xla.h"
#include "evoxc/core/device_runtime.h"
#include "evoxc/core/tensor.h"
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla/pjrt/c/pjrt_c_api_ffi_extension.h"

namespace evoxc::xla_backend {

class Plugin {
 public:
  // The process's plugin, loaded on first use (discovery: evoxc/backends/xla.h). BackendError when none loads.
  // `prefer_platform` (a first use that needs a platform: Tensor::to(cuda:0)) narrows discovery to that platform
  // when neither initialize(), EVOXC_PLATFORM nor a plugin path chose one.
  static const Plugin& get(std::string_view prefer_platform = {});

  const PJRT_Api* api() const { return api_; }
  PJRT_Client* client() const { return client_; }
  const xla::PluginInfo& info() const { return info_; }
  // The addressable device `index`; DeviceError when the plugin has no such device.
  PJRT_Device* device(int index) const;
  int num_devices() const { return static_cast<int>(devices_.size()); }
  // The global id of the addressable device `index` (what a compile's device assignment names).
  int device_id(int index) const { return device_ids_[static_cast<size_t>(index)]; }
  // The addressable index of `device`; -1 when it is not one of the client's.
  int index_of(const PJRT_Device* device) const;
  // Whether buffers live in host memory (the CPU platform): inputs then alias the caller's memory and
  // outputs are read in place.
  bool host_memory() const { return host_memory_; }
  // Registers a typed XLA FFI handler (an XLA_FFI_Handler*) for custom calls to `target` on `platform` (empty: the
  // client's platform) through the plugin's FFI extension; BackendError when it has none or refuses.
  void register_ffi(const std::string& target, void* handler, const std::string& platform) const;

  // BackendError "xla: <what>[ <index>]: <the plugin's message>" when `e` is an error (which is destroyed). The
  // message is built only then: the run path allocates nothing for it.
  void check(PJRT_Error* e, std::string_view what, int64_t index = -1) const {
    if (e) fail(e, what, index);
  }
  // Waits for `event` and destroys it; BackendError when it completed with an error.
  void await(PJRT_Event* event, std::string_view what, int64_t index = -1) const;
  // Destroys an error nobody needs (a failure while releasing something).
  void discard(PJRT_Error* e) const noexcept;
  void destroy(PJRT_Buffer* buffer) const noexcept;
  void destroy(PJRT_Event* event) const noexcept;

  // Loads a plugin library (the one-plugin rule is the caller's). BackendError naming the path and the reason.
  Plugin(const std::string& path, const xla::InitOptions& options);
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

 private:
  [[noreturn]] void fail(PJRT_Error* e, std::string_view what, int64_t index) const;
  const PJRT_Api* api_ = nullptr;
  PJRT_Client* client_ = nullptr;
  std::vector<PJRT_Device*> devices_;
  std::vector<int> device_ids_;
  xla::PluginInfo info_;
  bool host_memory_ = false;                 // decided once, at load: the run path compares no strings
  const PJRT_FFI_Extension* ffi_ = nullptr;  // the plugin's FFI extension, found at load (none: nullptr)
};

// PJRT's args structs: zeroed, with their struct_size.
template <typename Args>
Args args(size_t struct_size) {
  Args a{};
  a.struct_size = struct_size;
  return a;
}

}  // namespace evoxc::xla_backend

// ---- the plugin's buffers as evoxc tensors (runtime.cpp) ----
namespace evoxc::xla_backend {

// The device runtime holding the plugin's buffers (evoxc/core/device_runtime.h), registered for cpu, cuda and rocm
// devices: Tensor::to(cpu:1) on the CPU plugin's second device, Tensor::to(cuda:0) on a GPU plugin's first.
const DeviceRuntime* runtime();
// The evoxc device of the client's addressable device `index` (cpu:i on the CPU platform, cuda:i, rocm:i).
Device device_of(const Plugin& p, int index);
// PJRT's element type of `dtype`.
PJRT_Buffer_Type element_type(DType dtype);
// On a CPU platform, the host address of `buffer` once it is ready, when its layout is evoxc's (dense, row-major);
// nullptr otherwise (other layouts, other platforms, a zero-size buffer). Errors of the work that fills it are thrown.
void* host_address(const Plugin& p, PJRT_Buffer* buffer, std::string_view what, int64_t index);
// A tensor owning `buffer` on `device` (destroyed with the tensor's storage): read in place at `address` (from
// host_address) when there is one; else, on a CPU platform, a host copy labelled `device` (the buffer is
// destroyed); else the plugin's buffer alone, which only the plugin reads (Tensor::to).
Tensor adopt_buffer(const Plugin& p, PJRT_Buffer* buffer, std::vector<int64_t> shape, DType dtype, Device device,
                    void* address);
// A host copy of `buffer` in evoxc's layout, labelled `device` (a cpu device: the memory is the host's).
Tensor copy_to_host(const Plugin& p, PJRT_Buffer* buffer, std::vector<int64_t> shape, DType dtype, Device device,
                    std::string_view what, int64_t index);

}  // namespace evoxc::xla_backend
