// The `mlir` backend: EvoXIR -> upstream MLIR text (the rule table) -> object code (codegen/) -> a JIT-linked entry;
// registers itself.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <thread>

#include "backends/common/async_runtime.h"
#include "backends/common/graph_payload.h"
#include "backends/common/scratch_memory.h"
#include "backends/mlir/blas_runtime.h"
#include "backends/mlir/codegen/codegen.h"
#include "backends/mlir/emitter.h"
#include "backends/mlir/external_runtime.h"
#include "backends/mlir/loop_budget.h"
#include "backends/mlir/postfix_runtime.h"
#include "backends/mlir/runtime_errors.h"
#include "evoxc/core/error.h"
#include "evoxc/interp/interp.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc {
namespace mlir_backend {

// The lowered module: one public function @main taking the inputs as tensors and the outputs as
// memrefs to fill, with the C interface MLIR generates for it (codegen wraps that in evoxc_entry).
std::string write_module(const Graph& graph) {
  const Block& entry = graph.main().entry();
  std::string body;
  Emitter e(&body);
  std::vector<Val> args;
  std::string sig;
  for (size_t i = 0; i < entry.arguments().size(); ++i) {
    const TensorType& t = entry.argument(i)->type();
    args.push_back({"%arg" + std::to_string(i), t});
    // The caller's inputs are read-only: a rule that updates an operand in place gets a copy.
    sig += (i ? ", " : "") + args.back().name + ": " + tensor_type(t) + " {bufferization.writable = false}";
    for (size_t a = 0; a < t.shape.rank(); ++a)
      if (t.shape[a].is_symbol()) e.bind_symbol(t.shape[a].name(), args.back(), a);
  }
  std::vector<Val> outs = e.lower_block(entry, args);
  // Results are written into the caller's buffers (destination-passing style): each output is a
  // memref argument after the inputs, filled by materialize_in_destination, which empty-tensor
  // elimination turns into the producing op writing there directly. A value returned twice (or an
  // input returned as is) is written once and copied.
  std::string outs_sig;
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string memref = "memref" + tensor_type(outs[i].type).substr(6);
    outs_sig += ", %out" + std::to_string(i) + ": " + memref;
    e.line("bufferization.materialize_in_destination " + outs[i].name + " in restrict writable %out" +
           std::to_string(i) + " : (" + tensor_type(outs[i].type) + ", " + memref + ") -> ()");
  }
  // A rule that calls a runtime function able to fail asked for the call's error sink: one more argument.
  if (e.uses_error_sink()) outs_sig += ", " + Emitter::kErrorSink + ": !llvm.ptr";
  if (sig.empty() && !outs_sig.empty()) outs_sig = outs_sig.substr(2);
  std::string decls;
  for (const std::string& d : e.declarations()) decls += "  " + d + "\n";
  return "module @evoxc {\n" + decls + "  func.func @main(" + sig + outs_sig +
         ") attributes {llvm.emit_c_interface} {\n" + body + "    return\n  }\n}\n";
}

// Every function of this process compiled programs may call by name: the async runtime, the scratch allocator,
// BLAS.
const std::vector<mlir_codegen::RuntimeSymbol>& runtime_symbols() {
  static const std::vector<mlir_codegen::RuntimeSymbol> all = [] {
    std::vector<mlir_codegen::RuntimeSymbol> v = async_runtime::symbols();
    for (const auto& s : scratch_memory::symbols()) v.push_back(s);
    for (const auto& s : blas_runtime::symbols()) v.push_back(s);
    for (const auto& s : loop_budget_symbols()) v.push_back(s);
    for (const auto& s : postfix_runtime::symbols()) v.push_back(s);
    for (const auto& s : external_runtime::symbols()) v.push_back(s);
    return v;
  }();
  return all;
}

}  // namespace mlir_backend

namespace {

using mlir_codegen::HostTarget;

const HostTarget& host() {
  static const HostTarget h = mlir_codegen::host_target();
  return h;
}

// Enabled features only: what the object code may use.
std::string enabled_features(const std::string& all) {
  std::string out;
  size_t pos = 0;
  while (pos < all.size()) {
    size_t end = all.find(',', pos);
    if (end == std::string::npos) end = all.size();
    std::string f = all.substr(pos, end - pos);
    if (!f.empty() && f[0] == '+') out += (out.empty() ? "" : ",") + f;
    pos = end + 1;
  }
  return out;
}

// The descriptors MLIR's C interface reads: {allocated, aligned, offset, sizes[R], strides[R]}.
struct Layout {
  std::vector<size_t> offsets;  // per argument, in int64 slots
  size_t slots = 0;
};

class MlirExecutable final : public ExecutableImpl {
 public:
  MlirExecutable(Graph graph, std::shared_ptr<const mlir_codegen::LoadedObject> object)
      : graph_(std::move(graph)), object_(std::move(object)), externals_(graph_) {
    const Block& entry = graph_.main().entry();
    for (size_t i = 0; i < entry.arguments().size(); ++i) types_.push_back(entry.argument(i)->type());
    num_inputs_ = types_.size();
    for (const TensorType& t : graph_.main().result_types()) types_.push_back(t);
    for (const TensorType& t : types_) {
      layout_.offsets.push_back(layout_.slots);
      layout_.slots += 3 + 2 * t.shape.rank();
      bool dynamic = false;
      for (const DimExpr& d : t.shape) dynamic = dynamic || !d.is_const();
      dynamic_ = dynamic_ || dynamic;
    }
    // Static programs compare the caller's outputs with shapes decided here, not built per call.
    if (!dynamic_)
      for (size_t j = num_inputs_; j < types_.size(); ++j) static_shapes_.push_back(static_shape(types_[j]));
    // Symbolic ones check every op's extent conditions at the call's extents with the interpreter's
    // plan of the same graph (its kernels are never run): the compiled code assumes them, and a
    // convolution whose window outgrows its input would otherwise return an empty result where the
    // interpreter raises. An op without an interpreter kernel leaves only the checks below.
    if (dynamic_) {
      try {
        shape_checks_ = interp::prepare(graph_);
      } catch (const BackendError&) {
      }
    }
  }

  // Compiled loops tick a LoopBudget: a while loop stops at its next test once a limit is hit, and the
  // call raises the RunLimitError when the code returns.
  bool supports_run_options() const override { return true; }
  void execute_with(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                    const RunOptions& options) const override {
    mlir_backend::LoopBudget budget(options);
    budget.check_start();
    {
      mlir_backend::LoopBudget::Scope scope(budget);
      execute(inputs, outputs);
    }
    budget.raise_if_stopped();
  }

  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    if (inputs.size() != num_inputs_ || outputs.size() != types_.size() - num_inputs_)
      throw ValidationError("mlir: execute: wrong number of inputs or outputs");
    if (shape_checks_) interp::check_shapes(*shape_checks_, inputs);
    DimBindings bindings;
    for (size_t i = 0; i < num_inputs_; ++i) check_input(i, inputs[i], bindings);
    for (size_t j = 0; j < outputs.size(); ++j) {
      const TensorType& t = types_[num_inputs_ + j];
      std::vector<int64_t> evaluated = dynamic_ ? t.shape.evaluate(bindings) : std::vector<int64_t>();
      const std::vector<int64_t>& shape = dynamic_ ? evaluated : static_shapes_[j];
      Tensor& o = outputs[j];
      if (o.defined() && o.dtype() == t.dtype && o.shape() == shape) continue;
      if (o.defined() && o.dtype() != t.dtype)
        throw ValidationError("mlir: output [" + std::to_string(j) + "]: the caller's tensor has dtype " +
                              std::string(dtype_name(o.dtype())) + ", the program gives " +
                              std::string(dtype_name(t.dtype)));
      o = Tensor::empty(shape, t.dtype);
    }
    // Descriptors on the stack for the usual sizes: no allocation for static programs.
    std::array<int64_t, 256> small{};
    std::vector<int64_t> large;
    int64_t* slots = small.data();
    if (layout_.slots > small.size()) {
      large.resize(layout_.slots);
      slots = large.data();
    }
    // One more slot after the outputs: the call's error sink, which @main takes when a runtime function it
    // calls can fail (and ignores otherwise: evoxc_entry reads only the arguments @main has).
    std::array<void*, 64> small_args{};
    std::vector<void*> large_args;
    void** args = small_args.data();
    if (types_.size() + 1 > small_args.size()) {
      large_args.resize(types_.size() + 1);
      args = large_args.data();
    }
    mlir_backend::ErrorSink errors;
    errors.externals = &externals_;
    args[types_.size()] = &errors;
    for (size_t i = 0; i < types_.size(); ++i) {
      const Tensor& t = i < num_inputs_ ? inputs[i] : outputs[i - num_inputs_];
      int64_t* d = slots + layout_.offsets[i];
      void* data = t.numel() ? t.raw_data() : nullptr;
      std::memcpy(&d[0], &data, sizeof data);
      std::memcpy(&d[1], &data, sizeof data);
      d[2] = 0;
      size_t r = t.rank();
      int64_t stride = 1;
      for (size_t a = r; a-- > 0;) {
        d[3 + a] = t.shape()[a];
        d[3 + r + a] = stride;
        stride *= t.shape()[a];
      }
      args[i] = d;
    }
    object_->entry()(args);
    errors.rethrow_if_any();
  }

 private:
  static std::vector<int64_t> static_shape(const TensorType& t) {
    std::vector<int64_t> s;
    for (const DimExpr& d : t.shape) s.push_back(d.value());
    return s;
  }
  void check_input(size_t i, const Tensor& x, DimBindings& bindings) const {
    const TensorType& t = types_[i];
    bool ok = x.defined() && x.dtype() == t.dtype && x.rank() == t.shape.rank();
    for (size_t a = 0; ok && a < t.shape.rank(); ++a) {
      const DimExpr& d = t.shape[a];
      if (auto c = d.as_const())
        ok = *c == x.shape()[a];
      else if (d.is_symbol()) {
        auto [it, fresh] = bindings.emplace(d.name(), x.shape()[a]);
        ok = fresh || it->second == x.shape()[a];
      }
    }
    if (!ok)
      throw ValidationError("mlir: input " + std::to_string(i) + ": expected " + t.to_string() + ", got " +
                            (x.defined() ? TensorType(x.dtype(), Shape::from_ints(x.shape())).to_string()
                                         : std::string("an undefined tensor")));
  }

  Graph graph_;
  std::shared_ptr<const mlir_codegen::LoadedObject> object_;
  mlir_backend::ExternalTable externals_;  // external_call's kernels, resolved at load
  std::vector<TensorType> types_;
  size_t num_inputs_ = 0;
  Layout layout_;
  bool dynamic_ = false;
  std::vector<std::vector<int64_t>> static_shapes_;      // the outputs' shapes when no extent is symbolic
  std::shared_ptr<const interp::Program> shape_checks_;  // symbolic programs: the interpreter's shape checks
};

Capabilities mlir_capabilities() {
  Capabilities c;
  c.backend = "mlir";
  c.device_kinds = {Device::Kind::Cpu};
  c.symbolic_shapes = true;
  c.regions = true;
  c.serializable_artifact = true;
  c.dtypes = all_dtypes();
  c.rules = &mlir_backend::rules();
  return c;
}

class MlirBackend final : public Backend {
 public:
  MlirBackend() : Backend(mlir_capabilities()) {}

  CompiledArtifact deserialize(const ArtifactHeader& header, std::string payload) const override {
    check_cpu(header);
    return graph_payload::read(*this, header, std::move(payload));
  }

 protected:
  LoweredProgram lower_verified(const Graph& graph) const override {
    return LoweredProgram(name(), graph, mlir_backend::write_module(graph));
  }

  CompiledArtifact compile_lowered(const LoweredProgram& lowered, const CompileOptions& options) const override {
    auto [level, source] = options.resolve_opt_level();
    mlir_codegen::CodegenOptions cg;
    cg.opt_level = level.value();
    cg.reassociate_reductions = level.value() >= 2;
    // Both cores for large loops from O2 on (the machine's count, recorded in the options).
    cg.threads = level.value() >= 2 ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : 1;
    std::string opts = "opt_level=" + level.to_string() + " (" + source + ") threads=" + std::to_string(cg.threads);
    for (const auto& f : options.flags) opts += " " + f;
    if (options.cancel) cg.cancel = &options.cancel->flag();
    mlir_codegen::StageTimes times;
    std::string object = mlir_codegen::compile_to_object(lowered.text(), cg, &times);
    ArtifactHeader h{name(), "cpu", std::move(opts), host().triple + " " + host().cpu,
                     enabled_features(host().features)};
    std::vector<StageTime> stages;
    for (auto& [stage, seconds] : times) stages.push_back({std::move(stage), seconds});
    return CompiledArtifact(
        h, lowered.graph(), [object = std::move(object)](const Graph& g) { return graph_payload::encode(g, object); },
        std::move(stages));
  }

  Executable load_artifact(const CompiledArtifact& artifact, Device device) const override {
    if (device.index != 0) throw DeviceError("mlir: runs on cpu:0 only, not " + device.to_string());
    check_cpu(artifact.header());
    auto object = mlir_codegen::LoadedObject::load(std::string(graph_payload::blob(artifact.payload())),
                                                   mlir_backend::runtime_symbols(), async_runtime::quiesce);
    return Executable(name(), device, artifact.graph(), std::make_shared<MlirExecutable>(artifact.graph(), object));
  }

 private:
  static void check_cpu(const ArtifactHeader& h) {
    std::string cpu = host().triple + " " + host().cpu;
    if (h.cpu != cpu)
      throw PersistenceError("mlir: the artifact's object code is for " + (h.cpu.empty() ? "no CPU" : h.cpu) +
                             ", this machine is " + cpu + "; compile it again here");
    if (h.cpu_features != enabled_features(host().features))
      throw PersistenceError("mlir: the artifact's object code uses CPU features (" + h.cpu_features +
                             ") that differ from this machine's; compile it again here");
  }
};

[[maybe_unused]] const bool registered = register_backend("mlir", [] { return std::make_unique<MlirBackend>(); });

}  // namespace
}  // namespace evoxc
