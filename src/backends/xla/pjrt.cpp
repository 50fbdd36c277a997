// The PJRT plugin of this process: discovery, dlopen, the API version check, the client and its devices.
#include "backends/xla/pjrt.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>

#include "evoxc/core/error.h"

namespace evoxc {
namespace xla_backend {
namespace {

// The plugin libraries discovery knows, in the order it tries them: CPU first (always usable), then
// the GPU platforms, newest CUDA first. Paths are relative to a site-packages directory.
struct Known {
  const char* platform;
  const char* relative;
};
constexpr Known kKnown[] = {
    {"cpu", "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so"},
    {"cuda", "jax_plugins/xla_cuda13/xla_cuda_plugin.so"},
    {"cuda", "jax_plugins/xla_cuda12/xla_cuda_plugin.so"},
    {"rocm", "jax_plugins/xla_rocm7/xla_rocm_plugin.so"},
};

struct State {
  std::mutex mu;
  std::optional<xla::InitOptions> chosen;
  std::vector<std::string> extra_dirs;
  std::unique_ptr<Plugin> plugin;  // never unloaded: XLA's plugins do not support dlclose
  std::string failure;             // why the last load failed (loads are retried: a plugin may be installed later)
  // FFI handlers registered with register_ffi_target: given to the plugin when it loads (or at once when it is).
  struct Ffi {
    std::string target;
    void* handler;
    std::string platform;
  };
  std::vector<Ffi> ffi;
};

State& state() {
  static State* s = new State();  // leaked: the plugin outlives static destructors that might still run programs
  return *s;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(':', pos);
    if (end == std::string::npos) end = list.size();
    if (end > pos) out.push_back(list.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

// EVOXC_PJRT_PLUGIN_PATH's directories, then those the Python package added, then $VIRTUAL_ENV's site-packages.
std::vector<std::string> search_dirs(const std::vector<std::string>& extra) {
  std::vector<std::string> dirs = split(env("EVOXC_PJRT_PLUGIN_PATH"));
  dirs.insert(dirs.end(), extra.begin(), extra.end());
  if (std::string venv = env("VIRTUAL_ENV"); !venv.empty()) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(venv + "/lib", ec))
      if (e.path().filename().string().rfind("python3", 0) == 0) dirs.push_back((e.path() / "site-packages").string());
  }
  std::vector<std::string> unique;
  for (const std::string& d : dirs)
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
  return unique;
}

std::string platform_asked(const std::optional<xla::InitOptions>& chosen) {
  if (chosen && !chosen->platform.empty()) return chosen->platform;
  return env("EVOXC_PLATFORM");
}

// `prefer`: the platform a first use needs (Plugin::get), when nothing else chose one.
std::vector<xla::Candidate> candidates(const State& s, std::string_view prefer = {}) {
  std::string platform = platform_asked(s.chosen);
  if (platform.empty()) platform = prefer;
  std::string path = s.chosen && !s.chosen->path.empty() ? s.chosen->path : env("EVOXC_PJRT_PLUGIN");
  std::vector<xla::Candidate> out;
  if (!path.empty()) {
    std::error_code ec;
    out.push_back({path, platform, std::filesystem::is_regular_file(path, ec) ? "" : "no such file"});
    return out;
  }
  std::vector<std::string> dirs = search_dirs(s.extra_dirs);
  for (const Known& k : kKnown) {
    if (!platform.empty() && platform != k.platform) continue;
    for (const std::string& d : dirs) {
      std::filesystem::path p = std::filesystem::path(d) / k.relative;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(p, ec)) continue;
      std::string where = p.lexically_normal().string();
      bool seen = std::any_of(out.begin(), out.end(), [&](const xla::Candidate& c) { return c.path == where; });
      if (!seen) out.push_back({where, k.platform, ""});
    }
  }
  return out;
}

std::string no_plugin_help() {
  return "install one (`pip install lammps-jax-pjrt-cpu` for the CPU, as `make` does into .venv; "
         "jax-cuda12-pjrt/jax-cuda13-pjrt for NVIDIA GPUs) or set EVOXC_PJRT_PLUGIN to a plugin library";
}

}  // namespace

Plugin::Plugin(const std::string& path, const xla::InitOptions& options) {
  info_.path = path;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw BackendError("xla: cannot load the plugin '" + path + "': " + std::string(dlerror()));
  using GetApi = const PJRT_Api* (*)();
  auto get_api = reinterpret_cast<GetApi>(dlsym(lib, "GetPjrtApi"));
  if (!get_api) throw BackendError("xla: '" + path + "' has no GetPjrtApi symbol: not a PJRT C API plugin");
  api_ = get_api();
  if (!api_) throw BackendError("xla: the plugin '" + path + "' returned no API table");
  info_.api_major = api_->pjrt_api_version.major_version;
  info_.api_minor = api_->pjrt_api_version.minor_version;
  // Same major, and a minor at least the header's: every function this build calls is then in the plugin's table
  // and every args struct it passes is one the plugin knows (PJRT keeps older structs' prefixes stable).
  if (info_.api_major != PJRT_API_MAJOR || info_.api_minor < PJRT_API_MINOR || api_->struct_size < PJRT_Api_STRUCT_SIZE)
    throw BackendError(
        "xla: the plugin '" + path + "' implements PJRT C API " + std::to_string(info_.api_major) + "." +
        std::to_string(info_.api_minor) + ", this build of evoxc was compiled against " +
        std::to_string(PJRT_API_MAJOR) + "." + std::to_string(PJRT_API_MINOR) +
        " and needs that major version with the same or a later minor version; install a matching plugin");
  auto init = args<PJRT_Plugin_Initialize_Args>(PJRT_Plugin_Initialize_Args_STRUCT_SIZE);
  check(api_->PJRT_Plugin_Initialize(&init), "initialising the plugin '" + path + "'");

  // The caller's options as PJRT_NamedValues (the strings and names live in `options` during the call).
  std::vector<PJRT_NamedValue> named;
  for (const auto& [name, value] : options.options) {
    auto v = args<PJRT_NamedValue>(PJRT_NamedValue_STRUCT_SIZE);
    v.name = name.c_str();
    v.name_size = name.size();
    v.value_size = 1;
    if (const auto* i = std::get_if<int64_t>(&value)) {
      v.type = PJRT_NamedValue_kInt64;
      v.int64_value = *i;
    } else if (const auto* d = std::get_if<double>(&value)) {
      v.type = PJRT_NamedValue_kFloat;
      v.float_value = static_cast<float>(*d);
    } else if (const auto* b = std::get_if<bool>(&value)) {
      v.type = PJRT_NamedValue_kBool;
      v.bool_value = *b;
    } else {
      const std::string& s = std::get<std::string>(value);
      v.type = PJRT_NamedValue_kString;
      v.string_value = s.c_str();
      v.value_size = s.size();
    }
    named.push_back(v);
  }
  auto create = args<PJRT_Client_Create_Args>(PJRT_Client_Create_Args_STRUCT_SIZE);
  create.create_options = named.data();
  create.num_options = named.size();
  check(api_->PJRT_Client_Create(&create), "creating the client of the plugin '" + path + "'");
  client_ = create.client;

  auto name = args<PJRT_Client_PlatformName_Args>(PJRT_Client_PlatformName_Args_STRUCT_SIZE);
  name.client = client_;
  check(api_->PJRT_Client_PlatformName(&name), "the client's platform name");
  info_.platform.assign(name.platform_name, name.platform_name_size);
  auto version = args<PJRT_Client_PlatformVersion_Args>(PJRT_Client_PlatformVersion_Args_STRUCT_SIZE);
  version.client = client_;
  check(api_->PJRT_Client_PlatformVersion(&version), "the client's platform version");
  info_.platform_version.assign(version.platform_version, version.platform_version_size);
  host_memory_ = info_.platform == "cpu";
  for (auto* e = api_->extension_start; e != nullptr; e = e->next)
    if (e->type == PJRT_Extension_Type_FFI && e->struct_size >= PJRT_FFI_Extension_STRUCT_SIZE)
      ffi_ = reinterpret_cast<const PJRT_FFI_Extension*>(e);
  if (!options.platform.empty() && options.platform != info_.platform)
    throw BackendError("xla: the plugin '" + path + "' is for platform '" + info_.platform + "', not the '" +
                       options.platform + "' asked for");

  auto devs = args<PJRT_Client_AddressableDevices_Args>(PJRT_Client_AddressableDevices_Args_STRUCT_SIZE);
  devs.client = client_;
  check(api_->PJRT_Client_AddressableDevices(&devs), "listing the client's devices");
  for (size_t i = 0; i < devs.num_addressable_devices; ++i) {
    devices_.push_back(devs.addressable_devices[i]);
    auto desc = args<PJRT_Device_GetDescription_Args>(PJRT_Device_GetDescription_Args_STRUCT_SIZE);
    desc.device = devs.addressable_devices[i];
    check(api_->PJRT_Device_GetDescription(&desc), "a device's description");
    auto kind = args<PJRT_DeviceDescription_Kind_Args>(PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE);
    kind.device_description = desc.device_description;
    check(api_->PJRT_DeviceDescription_Kind(&kind), "a device's kind");
    info_.devices.emplace_back(kind.device_kind, kind.device_kind_size);
    auto id = args<PJRT_DeviceDescription_Id_Args>(PJRT_DeviceDescription_Id_Args_STRUCT_SIZE);
    id.device_description = desc.device_description;
    check(api_->PJRT_DeviceDescription_Id(&id), "a device's id");
    device_ids_.push_back(id.id);
  }
  if (devices_.empty()) throw BackendError("xla: the plugin '" + path + "' has no addressable device");
}

int Plugin::index_of(const PJRT_Device* device) const {
  for (size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i] == device) return static_cast<int>(i);
  return -1;
}

PJRT_Device* Plugin::device(int index) const {
  if (index < 0 || index >= num_devices())
    throw DeviceError("xla: the plugin's " + info_.platform + " client has " + std::to_string(num_devices()) +
                      " device(s); there is no device " + std::to_string(index));
  return devices_[static_cast<size_t>(index)];
}

void Plugin::fail(PJRT_Error* e, std::string_view what, int64_t index) const {
  auto m = args<PJRT_Error_Message_Args>(PJRT_Error_Message_Args_STRUCT_SIZE);
  m.error = e;
  api_->PJRT_Error_Message(&m);
  std::string message(m.message, m.message_size);
  discard(e);
  throw BackendError("xla: " + std::string(what) + (index >= 0 ? " " + std::to_string(index) : std::string()) + ": " +
                     message);
}

void Plugin::await(PJRT_Event* event, std::string_view what, int64_t index) const {
  auto a = args<PJRT_Event_Await_Args>(PJRT_Event_Await_Args_STRUCT_SIZE);
  a.event = event;
  PJRT_Error* e = api_->PJRT_Event_Await(&a);
  destroy(event);
  check(e, what, index);
}

void Plugin::discard(PJRT_Error* e) const noexcept {
  if (!e) return;
  auto d = args<PJRT_Error_Destroy_Args>(PJRT_Error_Destroy_Args_STRUCT_SIZE);
  d.error = e;
  api_->PJRT_Error_Destroy(&d);
}

void Plugin::destroy(PJRT_Buffer* buffer) const noexcept {
  if (!buffer) return;
  auto d = args<PJRT_Buffer_Destroy_Args>(PJRT_Buffer_Destroy_Args_STRUCT_SIZE);
  d.buffer = buffer;
  discard(api_->PJRT_Buffer_Destroy(&d));
}

void Plugin::destroy(PJRT_Event* event) const noexcept {
  if (!event) return;
  auto d = args<PJRT_Event_Destroy_Args>(PJRT_Event_Destroy_Args_STRUCT_SIZE);
  d.event = event;
  discard(api_->PJRT_Event_Destroy(&d));
}

void Plugin::register_ffi(const std::string& target, void* handler, const std::string& platform) const {
  if (ffi_ == nullptr || ffi_->register_handler == nullptr)
    throw BackendError("xla: the plugin '" + info_.path + "' has no FFI extension, so it cannot run the custom call '" +
                       target + "'");
  const std::string& on = platform.empty() ? info_.platform : platform;
  auto a = args<PJRT_FFI_Register_Handler_Args>(PJRT_FFI_Register_Handler_Args_STRUCT_SIZE);
  a.target_name = target.data();
  a.target_name_size = target.size();
  a.handler = handler;
  a.platform_name = on.data();
  a.platform_name_size = on.size();
  check(ffi_->register_handler(&a), "registering the FFI handler of custom call '" + target + "'");
}

const Plugin& Plugin::get(std::string_view prefer_platform) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.plugin) return *s.plugin;
  xla::InitOptions options = s.chosen.value_or(xla::InitOptions{});
  if (options.platform.empty()) options.platform = env("EVOXC_PLATFORM");
  bool path_given = (s.chosen && !s.chosen->path.empty()) || !env("EVOXC_PJRT_PLUGIN").empty();
  if (options.platform.empty() && !path_given) options.platform = prefer_platform;
  std::vector<xla::Candidate> found = candidates(s, path_given ? std::string_view() : prefer_platform);
  std::string tried;
  for (const xla::Candidate& c : found) {
    if (!c.rejected.empty()) {
      tried += "\n  " + c.path + ": " + c.rejected;
      continue;
    }
    try {
      s.plugin = std::make_unique<Plugin>(c.path, options);
      for (const State::Ffi& f : s.ffi) s.plugin->register_ffi(f.target, f.handler, f.platform);
      return *s.plugin;
    } catch (const BackendError& e) {
      tried += "\n  " + c.path + ": " + e.what();
    }
  }
  std::string platform = options.platform.empty() ? "" : " for platform '" + options.platform + "'";
  s.failure = found.empty() ? "xla: no PJRT plugin found" + platform + "; " + no_plugin_help()
                            : "xla: no PJRT plugin could be loaded" + platform + "; tried:" + tried;
  throw BackendError(s.failure);
}

}  // namespace xla_backend

namespace xla {

void initialize(const InitOptions& options) {
  auto& s = xla_backend::state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.plugin)
    throw BackendError("xla: initialize() must come before the first use of the backend: the plugin '" +
                       s.plugin->info().path + "' (" + s.plugin->info().platform +
                       ") is loaded already, and a process loads one plugin");
  s.chosen = options;
}

std::vector<Candidate> discover() {
  auto& s = xla_backend::state();
  std::lock_guard<std::mutex> lock(s.mu);
  return xla_backend::candidates(s);
}

void add_search_directories(const std::vector<std::string>& dirs) {
  auto& s = xla_backend::state();
  std::lock_guard<std::mutex> lock(s.mu);
  for (const std::string& d : dirs)
    if (std::find(s.extra_dirs.begin(), s.extra_dirs.end(), d) == s.extra_dirs.end()) s.extra_dirs.push_back(d);
}

void register_ffi_target(const std::string& target, void* handler, const std::string& platform) {
  if (target.empty()) throw ValidationError("xla: register_ffi_target: the target name is empty");
  if (handler == nullptr) throw ValidationError("xla: register_ffi_target '" + target + "': the handler is NULL");
  auto& s = xla_backend::state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.plugin) s.plugin->register_ffi(target, handler, platform);
  s.ffi.push_back({target, handler, platform});
}

std::vector<std::string> ffi_targets() {
  auto& s = xla_backend::state();
  std::lock_guard<std::mutex> lock(s.mu);
  std::vector<std::string> out;
  for (const auto& f : s.ffi) out.push_back(f.target);
  return out;
}

const PluginInfo& plugin_info() { return xla_backend::Plugin::get().info(); }

bool available(std::string* why) {
  try {
    xla_backend::Plugin::get();
    return true;
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
}

std::pair<int, int> header_api_version() { return {PJRT_API_MAJOR, PJRT_API_MINOR}; }

}  // namespace xla
}  // namespace evoxc
