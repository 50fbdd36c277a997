// The adapter that makes an external compiler (include/evoxc/backends/external.h) a backend: the stablehlo export's
// rules less what the compiler cannot take, artifacts carrying the graph and the compiled module, identity checks.
#include <chrono>
#include <memory>

#include "backends/common/graph_payload.h"
#include "evoxc/backends/external.h"
#include "evoxc/backends/stablehlo.h"
#include "evoxc/core/error.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/pipeline/cache.h"

namespace evoxc {
namespace {

// The stablehlo export's rules without the ops the compiler cannot take (which lower() then decomposes).
class NativeRules final : public RuleTableBase {
 public:
  NativeRules(std::string name, const RuleTableBase& stablehlo,
              const std::vector<std::pair<std::string, std::string>>& not_native)
      : RuleTableBase(std::move(name)), base_(stablehlo), reasons_(num_ops()) {
    for (const auto& [op, why] : not_native) reasons_[get_op(op).id] = why;
  }
  bool has(uint32_t id) const override { return base_.has(id) && (id >= reasons_.size() || reasons_[id].empty()); }
  const std::string* deferral(uint32_t id) const override {
    if (id < reasons_.size() && !reasons_[id].empty()) return &reasons_[id];
    return base_.deferral(id);
  }

 private:
  const RuleTableBase& base_;
  std::vector<std::string> reasons_;
};

struct Module {
  ExternalModule module;
};

// Runs a callback: evoxc errors pass as they are, anything else becomes a BackendError naming the backend.
template <typename F>
auto guarded(const std::string& backend, const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw BackendError(backend + ": " + what + ": " + e.what());
  }
}

class ExternalBackend final : public Backend {
 public:
  ExternalBackend(ExternalCompiler spec, std::unique_ptr<NativeRules> rules, Capabilities caps)
      : Backend(std::move(caps)), spec_(std::move(spec)), rules_(std::move(rules)) {}

  CompiledArtifact deserialize(const ArtifactHeader& header, std::string payload) const override {
    std::string here = identity();
    if (header.cpu != here)
      throw PersistenceError(name() + ": the artifact was compiled by '" + header.cpu + "', this process has '" + here +
                             "'; compile it again here");
    return graph_payload::read(*this, header, std::move(payload));
  }

  // The compiler and the host CPU: what decides whether a module compiled elsewhere runs here.
  std::string identity() const override {
    return guarded(name(), "the compiler's identity", [&] { return spec_.identity(); }) + " on " +
           DiskCache::host_cpu();
  }

 protected:
  LoweredProgram lower_verified(const Graph& graph) const override {
    return LoweredProgram(name(), graph, [](const Graph& g) { return export_stablehlo(g); });
  }

  CompiledArtifact compile_lowered(const LoweredProgram& lowered, const CompileOptions& options) const override {
    auto t0 = std::chrono::steady_clock::now();
    const std::string& text = lowered.text();
    auto t1 = std::chrono::steady_clock::now();
    auto [level, source] = options.resolve_opt_level();
    auto module = std::make_shared<const Module>(
        Module{guarded(name(), "compile", [&] { return spec_.compile(text, level.value(), options.flags); })});
    auto t2 = std::chrono::steady_clock::now();
    std::string opts = "opt_level=" + level.to_string() + " (" + source + ")";
    for (const auto& f : options.flags) opts += " " + f;
    ArtifactHeader h{name(), module->module.target, std::move(opts), identity(), ""};
    std::vector<StageTime> stages{{"export", std::chrono::duration<double>(t1 - t0).count()},
                                  {"compile", std::chrono::duration<double>(t2 - t1).count()}};
    return CompiledArtifact(
        h, lowered.graph(), [module](const Graph& g) { return graph_payload::encode(g, module->module.bytes); },
        std::move(stages), module);
  }

  Executable load_artifact(const CompiledArtifact& artifact, Device device) const override {
    auto module = std::static_pointer_cast<const Module>(artifact.native());
    ExternalModule read;
    const ExternalModule* m = module ? &module->module : &read;
    if (!module) read = {artifact.target(), std::string(graph_payload::blob(artifact.payload()))};
    std::shared_ptr<const ExecutableImpl> impl =
        guarded(name(), "load", [&] { return spec_.load(*m, artifact.graph(), device); });
    if (!impl) throw InternalError(name() + ": the load callback returned no executable");
    return Executable(name(), device, artifact.graph(), std::move(impl));
  }

 private:
  ExternalCompiler spec_;
  std::unique_ptr<NativeRules> rules_;  // caps' rule table
};

}  // namespace

bool register_external_backend(ExternalCompiler spec) {
  if (spec.name.empty() || !spec.identity || !spec.compile || !spec.load)
    throw InternalError("register_external_backend: a backend needs a name and its identity, compile and load");
  std::string name = spec.name;
  return register_backend(name, [spec = std::move(spec)]() -> std::unique_ptr<Backend> {
    const Capabilities& shlo = get_backend("stablehlo").capabilities();
    auto rules = std::make_unique<NativeRules>(spec.name, *shlo.rules, spec.not_native);
    Capabilities c;
    c.backend = spec.name;
    c.device_kinds = spec.device_kinds;
    c.symbolic_shapes = true;
    c.regions = true;
    c.serializable_artifact = true;
    c.dtypes = spec.dtypes;
    c.rules = rules.get();
    return std::make_unique<ExternalBackend>(spec, std::move(rules), std::move(c));
  });
}

}  // namespace evoxc
