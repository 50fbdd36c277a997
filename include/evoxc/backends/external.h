// Backends whose compiler and runtime live outside this library (IREE's Python packages, say): they take the
// StableHLO export and hand it to callbacks; lower's checks and decompositions, artifacts, disk caches and the
// executable's checks stay the pipeline's.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "evoxc/core/device.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc {

// A compiled module: the target it was compiled for (IREE: "llvm-cpu", "cuda", ...) and its bytes.
struct ExternalModule {
  std::string target;
  std::string bytes;
};

// What an external compiler does with the export. The callbacks may be called from any thread at once (the
// pipeline's stages are thread-safe); a binding takes its interpreter's lock inside them. An error they raise
// reaches the caller as it is when it is an evoxc Error, as a BackendError naming the backend otherwise.
struct ExternalCompiler {
  std::string name;
  std::vector<Device::Kind> device_kinds;
  std::vector<DType> dtypes;
  // Ops the stablehlo export lowers that this compiler cannot take, with the reason: lower() expands them with
  // their decompositions (IREE: cholesky and triangular_solve), or names the reason when they have none.
  std::vector<std::pair<std::string, std::string>> not_native;
  // The compiler's name and version. Recorded in every artifact (with this host's CPU); an artifact another
  // compiler made is a PersistenceError at load, never run.
  std::function<std::string()> identity;
  // Compiles the StableHLO text at optimisation level `level` (0-3, resolved as CompileOptions says) with the
  // caller's raw `flags`.
  std::function<ExternalModule(const std::string& stablehlo, int level, const std::vector<std::string>& flags)> compile;
  // An executable of a compiled module on `device` (DeviceError when the module's target cannot run there); its
  // execute() takes the graph's input leaves and gives its output leaves, in order.
  std::function<std::shared_ptr<const ExecutableImpl>(const ExternalModule& module, const Graph& graph, Device device)>
      load;
};

// Registers the compiler as a backend under its name (register_backend's rules: InternalError when the name is
// taken, or when a callback is missing).
bool register_external_backend(ExternalCompiler spec);

}  // namespace evoxc
