// The `xla` backend's process-wide plugin: which PJRT C API plugin this process uses, found how, with what options.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace evoxc::xla {

// A client option the plugin understands (a PJRT_NamedValue): for XLA's CPU plugin for example
// "cpu_device_count" (int); for JAX's CUDA plugins "memory_fraction" (float), "preallocate" (bool).
// A double is handed to the plugin as PJRT's 32-bit float.
using OptionValue = std::variant<int64_t, double, bool, std::string>;

struct InitOptions {
  std::string platform;                        // "cpu", "cuda", "rocm"; empty: the first found (discover())
  std::string path;                            // a plugin library; empty: discovery
  std::map<std::string, OptionValue> options;  // the plugin's client options
};

// Chooses the plugin, its platform and its client options. One plugin per process: BackendError once the
// plugin has been loaded (by an earlier initialize, or by the first use of the backend), and for an option
// whose value the plugin's client refuses (at load). Without a call, the first use loads the plugin
// discovery finds with no options.
void initialize(const InitOptions& options);

// A plugin library discovery found: where, for which platform, and why it cannot be used (empty: usable
// as far as discovery can tell without loading it; load() says more).
struct Candidate {
  std::string path;
  std::string platform;
  std::string rejected;
};

// The plugins this process would try, in order: the path of initialize() or EVOXC_PJRT_PLUGIN alone when
// set; else every known plugin library under the search directories (EVOXC_PJRT_PLUGIN_PATH, a ':'
// list; the Python package's site-packages; $VIRTUAL_ENV's), CPU first, then CUDA (13, 12), then ROCm, keeping
// only the platform asked for (initialize() or EVOXC_PLATFORM).
std::vector<Candidate> discover();

// Directories discovery searches besides EVOXC_PJRT_PLUGIN_PATH and $VIRTUAL_ENV (the Python package
// adds its interpreter's site-packages at import).
void add_search_directories(const std::vector<std::string>& dirs);

// The loaded plugin.
struct PluginInfo {
  std::string path;
  std::string platform;          // the client's platform name: "cpu", "cuda", ...
  std::string platform_version;  // the client's platform version
  int api_major = 0, api_minor = 0;
  std::vector<std::string> devices;  // the addressable devices' kinds, in index order
};

// Loads the plugin when it is not loaded yet (BackendError saying which candidates were tried and why each
// failed when none loads).
const PluginInfo& plugin_info();

// Whether a plugin is loaded or loads now; never throws. `why` receives the reason when not.
bool available(std::string* why = nullptr);

// The PJRT C API version this build was compiled against (major, minor).
std::pair<int, int> header_api_version();

}  // namespace evoxc::xla
