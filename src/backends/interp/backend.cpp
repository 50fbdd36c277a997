// The interpreter backend: lowering keeps the verified graph, compile records the options,
// load prepares the interpreter's plan; it registers itself with the pipeline from here.
#include <memory>

#include "evoxc/core/error.h"
#include "evoxc/interp/interp.h"
#include "evoxc/pipeline/pipeline.h"
#include "ir/graph_codec.h"

namespace evoxc {
namespace {

class InterpExecutable final : public ExecutableImpl {
 public:
  explicit InterpExecutable(std::shared_ptr<const interp::Program> program) : program_(std::move(program)) {}
  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    interp::execute(*program_, inputs, outputs);
  }
  bool supports_run_options() const override { return true; }
  void execute_with(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                    const RunOptions& options) const override {
    interp::RunLimits limits;
    limits.deadline = options.deadline;
    limits.max_loop_iterations = options.max_loop_iterations;
    // The token outlives the call: `options` holds a reference to it until we return.
    limits.cancelled = options.cancel ? &options.cancel->flag() : nullptr;
    interp::execute(*program_, inputs, outputs, limits);
  }

 private:
  std::shared_ptr<const interp::Program> program_;
};

Capabilities interp_capabilities() {
  Capabilities c;
  c.backend = "interp";
  c.device_kinds = {Device::Kind::Cpu};
  c.symbolic_shapes = true;
  c.regions = true;
  c.serializable_artifact = true;
  c.dtypes = all_dtypes();
  c.rules = &interp::kernels();     // its kernel table, keyed by op id
  c.batch_cost = BatchCostModel{};  // BatchCostModel's defaults are the interpreter's, as calibrated
  return c;
}

class InterpBackend final : public Backend {
 public:
  InterpBackend() : Backend(interp_capabilities()) {}

  CompiledArtifact deserialize(const ArtifactHeader& header, std::string payload) const override {
    Graph g = graph_codec::decode(payload);
    // The payload's hash matched, but its bytes may still come from anywhere: the plan is
    // built only from a graph that verifies and that this build supports.
    try {
      verify(g);
      check_supported(g);
    } catch (const Error& e) {
      throw PersistenceError(std::string("the payload's graph does not verify: ") + e.what());
    }
    return CompiledArtifact(header, std::move(g), std::move(payload));
  }

 protected:
  // The interpreter runs the verified EvoXIR itself: its text is the printed module,
  // produced only when someone reads it.
  LoweredProgram lower_verified(const Graph& graph) const override {
    return LoweredProgram(name(), graph, [](const Graph& g) { return g.to_string(); });
  }

  CompiledArtifact compile_lowered(const LoweredProgram& lowered, const CompileOptions& options) const override {
    auto [level, source] = options.resolve_opt_level();
    std::string opts = "opt_level=" + level.to_string() + " (" + source + ")";
    for (const auto& f : options.flags) opts += " " + f;
    return CompiledArtifact(ArtifactHeader{name(), "cpu", std::move(opts)}, lowered.graph(), &graph_codec::encode);
  }

  Executable load_artifact(const CompiledArtifact& artifact, Device device) const override {
    if (device.index != 0) throw DeviceError("interp: runs on cpu:0 only, not " + device.to_string());
    return Executable(name(), device, artifact.graph(),
                      std::make_shared<InterpExecutable>(interp::prepare(artifact.graph())));
  }
};

// Registers the interpreter when this object is linked (libevoxc.so links every layer whole).
[[maybe_unused]] const bool registered = register_backend("interp", [] { return std::make_unique<InterpBackend>(); });

}  // namespace
}  // namespace evoxc
