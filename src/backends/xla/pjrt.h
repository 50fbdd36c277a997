// The PJRT C API plugin the xla backend drives: the loaded library, its client and devices, and the calls' error
// handling. Only src/backends/xla/ includes the PJRT header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/backends/xla.h"
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla/pjrt/c/pjrt_c_api_ffi_extension.h"

namespace evoxc::xla_backend {

class Plugin {
 public:
  // The process's plugin, loaded on first use (discovery: evoxc/backends/xla.h). BackendError when none loads.
  static const Plugin& get();

  const PJRT_Api* api() const { return api_; }
  PJRT_Client* client() const { return client_; }
  const xla::PluginInfo& info() const { return info_; }
  // The addressable device `index`; DeviceError when the plugin has no such device.
  PJRT_Device* device(int index) const;
  int num_devices() const { return static_cast<int>(devices_.size()); }
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
