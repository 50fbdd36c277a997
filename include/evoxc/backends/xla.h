// The `xla` backend's process-wide plugin: which PJRT C API plugin this process uses, found how, with what options.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "evoxc/ir/graph.h"
#include "evoxc/pipeline/pipeline.h"

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

// ---- typed FFI custom calls ----

// Registers a typed XLA FFI handler (an XLA_FFI_Handler*: what jax.ffi and jaxlib hand out in capsules named
// "xla._CUSTOM_CALL_TARGET", or XLA_FFI_DEFINE_HANDLER in C++) for the custom calls to `target` on `platform`
// ("cpu", "cuda"; empty: the plugin's). For the process: with the plugin now when it is loaded, else when it loads.
// Programs calling `target` then compile and run; a call to a target with no handler is the plugin's BackendError,
// naming the target, at compile. BackendError when the plugin has no FFI extension or refuses the handler.
void register_ffi_target(const std::string& target, void* handler, const std::string& platform = "");
// The targets registered so far, in order.
std::vector<std::string> ffi_targets();

// ---- StableHLO programs from outside evoxc (the seed's lowered JAX programs) ----

// A StableHLO module (text, such as jax.export's `mlir_module()`) as an evoxc program: a graph whose inputs are the
// arguments of the module's @main (a tuple), with one stablehlo_call op, and whose outputs are its results (a tuple,
// or the one result itself when `single_output`). It saves and loads as that graph (.evoxcgraph: no JAX, no MLIR
// needed to read it back), compiles with the xla backend like any graph, and can be called inside other traced
// programs through the stablehlo_call op function. Static shapes and evoxc's 13 dtypes only (TypeError naming what
// else the signature has). MLIR bytecode is not taken: turning it into text needs the StableHLO dialect, which evoxc
// does not link; pass the text form.
class Program {
 public:
  static Program from_text(std::string module_text, bool single_output = false);
  // A graph made by from_text (read back from a file, say); BackendError when it is not one stablehlo_call of its
  // inputs.
  static Program from_graph(Graph graph);

  const Graph& graph() const { return graph_; }
  // The module's text.
  const std::string& text() const;
  std::vector<TensorSpec> input_specs() const { return graph_.input_specs(); }
  std::vector<TensorSpec> output_specs() const { return graph_.output_specs(); }

  // .evoxcgraph, written atomically; load() checks what from_graph checks.
  void save(const std::string& path) const { graph_.save(path); }
  static Program load(const std::string& path);

  // lower(graph, "xla") -> compile -> load on `device`.
  Executable compile(Device device = Device::cpu(), const CompileOptions& options = {}) const;

 private:
  explicit Program(Graph graph) : graph_(std::move(graph)) {}
  Graph graph_;
};

}  // namespace evoxc::xla
