// The `xla` backend: a graph's StableHLO export compiled and run by the process's PJRT C API plugin; registers itself.
#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>

#include "backends/common/graph_payload.h"
#include "backends/stablehlo/emitter.h"
#include "backends/xla/pjrt.h"
#include "evoxc/backends/stablehlo.h"
#include "evoxc/core/error.h"
#include "evoxc/core/small_vector.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc {
namespace {

using xla_backend::args;
using xla_backend::Plugin;

// PJRT's element type of each DType, indexed by the DType's value.
constexpr std::array<PJRT_Buffer_Type, kNumDTypes> kElementTypes = {
    PJRT_Buffer_Type_PRED, PJRT_Buffer_Type_S8,  PJRT_Buffer_Type_S16, PJRT_Buffer_Type_S32, PJRT_Buffer_Type_S64,
    PJRT_Buffer_Type_U8,   PJRT_Buffer_Type_U16, PJRT_Buffer_Type_U32, PJRT_Buffer_Type_U64, PJRT_Buffer_Type_F16,
    PJRT_Buffer_Type_BF16, PJRT_Buffer_Type_F32, PJRT_Buffer_Type_F64};
static_assert(static_cast<int>(DType::F64) == kNumDTypes - 1, "kElementTypes follows DType's order");

// xla::CompileOptionsProto, serialised by hand (no protobuf dependency; field numbers from XLA's
// compile_options.proto and xla.proto): executable_build_options {num_replicas: 1, num_partitions: 1} (the
// client's default device assignment: device 0; a portable executable, which could run on any device, ran the
// 2^20-element tanh(a*b+a) in 727 us against 422 us on XLA's CPU plugin), and env_option_overrides
// {"xla_allow_excess_precision": false}: XLA otherwise drops the rounding of float16/bfloat16 intermediate values, and
// a program must compute the same bits here as on the interpreter (docs/semantics.md).
std::string compile_options_proto() {
  std::string build = "\x20\x01\x28\x01";  // field 4 num_replicas = 1, field 5 num_partitions = 1
  std::string flag = "xla_allow_excess_precision";
  std::string value = std::string("\x10\x00", 2);  // OptionOverrideProto.bool_field (2) = false
  std::string entry = "\x0a" + std::string(1, static_cast<char>(flag.size())) + flag + "\x12" +
                      std::string(1, static_cast<char>(value.size())) + value;
  std::string out;
  out += "\x1a" + std::string(1, static_cast<char>(build.size())) + build;  // field 3: executable_build_options
  out += "\x3a" + std::string(1, static_cast<char>(entry.size())) + entry;  // field 7: env_option_overrides entry
  return out;
}

// What identifies the plugin a serialised executable belongs to: its platform and version, its PJRT API version and
// its library file (name and size: two installs of one plugin agree, two builds of it do not).
std::string plugin_identity(const Plugin& p) {
  const xla::PluginInfo& i = p.info();
  std::error_code ec;
  auto size = std::filesystem::file_size(i.path, ec);
  return "pjrt " + i.platform + " " + i.platform_version + " api " + std::to_string(i.api_major) + "." +
         std::to_string(i.api_minor) + " " + std::filesystem::path(i.path).filename().string() + " " +
         (ec ? std::string("?") : std::to_string(size)) + " bytes";
}

Device::Kind platform_kind(const std::string& platform) {
  if (platform == "cuda") return Device::Kind::Cuda;
  if (platform == "rocm") return Device::Kind::Rocm;
  return Device::Kind::Cpu;
}

// A loaded executable of the plugin, shared by the artifact that compiled it and the executables loaded from it.
class Compiled {
 public:
  Compiled(const Plugin& plugin, PJRT_LoadedExecutable* exe) : plugin_(plugin), exe_(exe) {}
  ~Compiled() {
    auto d = args<PJRT_LoadedExecutable_Destroy_Args>(PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE);
    d.executable = exe_;
    plugin_.discard(plugin_.api()->PJRT_LoadedExecutable_Destroy(&d));
  }
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;

  PJRT_LoadedExecutable* get() const { return exe_; }

  // The plugin's serialised executable (PJRT_Executable_Serialize).
  std::string serialize() const {
    const PJRT_Api* api = plugin_.api();
    auto ge = args<PJRT_LoadedExecutable_GetExecutable_Args>(PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE);
    ge.loaded_executable = exe_;
    plugin_.check(api->PJRT_LoadedExecutable_GetExecutable(&ge), "getting the executable to serialise");
    auto s = args<PJRT_Executable_Serialize_Args>(PJRT_Executable_Serialize_Args_STRUCT_SIZE);
    s.executable = ge.executable;
    PJRT_Error* e = api->PJRT_Executable_Serialize(&s);
    std::string bytes;
    if (!e) bytes.assign(s.serialized_bytes, s.serialized_bytes_size);
    if (!e && s.serialized_executable_deleter) s.serialized_executable_deleter(s.serialized_executable);
    auto d = args<PJRT_Executable_Destroy_Args>(PJRT_Executable_Destroy_Args_STRUCT_SIZE);
    d.executable = ge.executable;
    plugin_.check(api->PJRT_Executable_Destroy(&d), "releasing the executable");
    plugin_.check(e, "serialising the executable");
    return bytes;
  }

 private:
  const Plugin& plugin_;
  PJRT_LoadedExecutable* exe_;
};

// The input and output buffers of one call, destroyed when it ends (whatever way).
struct CallBuffers {
  const Plugin& plugin;
  SmallVector<PJRT_Buffer*, 8> in, out;
  SmallVector<PJRT_Event*, 8> events;
  ~CallBuffers() {
    for (PJRT_Buffer* b : out) plugin.destroy(b);
    for (PJRT_Buffer* b : in) plugin.destroy(b);
    for (PJRT_Event* e : events) plugin.destroy(e);
  }
};

class XlaExecutable final : public ExecutableImpl {
 public:
  XlaExecutable(const Graph& graph, std::shared_ptr<const Compiled> compiled, const Plugin& plugin, PJRT_Device* device)
      : compiled_(std::move(compiled)), plugin_(plugin), device_(device) {
    const Block& entry = graph.main().entry();
    for (size_t i = 0; i < entry.arguments().size(); ++i) inputs_.push_back(static_type(entry.argument(i)->type()));
    for (const TensorType& t : graph.main().result_types()) outputs_.push_back(static_type(t));
  }

  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    if (inputs.size() != inputs_.size() || outputs.size() != outputs_.size())
      throw ValidationError("xla: execute: wrong number of inputs or outputs");
    const PJRT_Api* api = plugin_.api();
    CallBuffers call{plugin_, {}, {}, {}};
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& x = inputs[i];
      const Static& t = inputs_[i];
      if (!x.defined() || x.dtype() != t.dtype || x.shape() != t.shape)
        throw ValidationError("xla: input " + std::to_string(i) + ": expected " + describe(t) + ", got " +
                              (x.defined() ? describe({x.dtype(), x.shape()}) : std::string("an undefined tensor")));
      if (x.device().kind != Device::Kind::Cpu)
        throw DeviceError("xla: input " + std::to_string(i) + " is on " + x.device().to_string() +
                          "; inputs are host tensors here");
      auto b = args<PJRT_Client_BufferFromHostBuffer_Args>(PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE);
      b.client = plugin_.client();
      static const int64_t kEmpty = 0;  // a zero-size tensor may have no storage; PJRT wants a pointer
      b.data = x.numel() ? x.raw_data() : &kEmpty;
      b.type = kElementTypes[static_cast<size_t>(t.dtype)];
      b.dims = t.shape.data();
      b.num_dims = t.shape.size();
      b.host_buffer_semantics = semantics_;
      b.device = device_;
      plugin_.check(api->PJRT_Client_BufferFromHostBuffer(&b), "input", static_cast<int64_t>(i));
      call.in.push_back(b.buffer);
      call.events.push_back(b.done_with_host_buffer);
    }
    call.out.resize(outputs_.size(), nullptr);
    auto options = args<PJRT_ExecuteOptions>(PJRT_ExecuteOptions_STRUCT_SIZE);
    PJRT_Buffer* const* argument_list = call.in.data();
    PJRT_Buffer** output_list = call.out.data();
    auto ex = args<PJRT_LoadedExecutable_Execute_Args>(PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE);
    ex.executable = compiled_->get();
    ex.options = &options;
    ex.argument_lists = &argument_list;
    ex.num_devices = 1;
    ex.num_args = call.in.size();
    ex.output_lists = &output_list;
    plugin_.check(api->PJRT_LoadedExecutable_Execute(&ex), "execute");
    for (size_t j = 0; j < outputs.size(); ++j) take_output(call, j, inputs, outputs[j]);
  }

 private:
  struct Static {
    DType dtype;
    std::vector<int64_t> shape;
  };
  static Static static_type(const TensorType& t) {
    Static s{t.dtype, {}};
    for (const DimExpr& d : t.shape) s.shape.push_back(d.value());
    return s;
  }
  static std::string describe(const Static& s) { return TensorType(s.dtype, Shape::from_ints(s.shape)).to_string(); }

  // Output j into the caller's slot: written into the caller's tensor when it has the right type; else, on the
  // CPU, the plugin's buffer itself becomes the tensor (freed with it) unless it aliases an input; else a copy.
  void take_output(CallBuffers& call, size_t j, std::span<const Tensor> inputs, Tensor& o) const {
    const Static& t = outputs_[j];
    const PJRT_Api* api = plugin_.api();
    PJRT_Buffer* buf = call.out[j];
    const char* what = "output";
    auto jj = static_cast<int64_t>(j);
    if (o.defined() && o.dtype() != t.dtype)
      throw ValidationError("xla: output " + std::to_string(j) + ": the caller's tensor has dtype " +
                            std::string(dtype_name(o.dtype())) + ", the program gives " +
                            std::string(dtype_name(t.dtype)));
    bool into_caller = o.defined() && o.shape() == t.shape;
    if (!into_caller && plugin_.host_memory() && dense(buf)) {
      auto ready = args<PJRT_Buffer_ReadyEvent_Args>(PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE);
      ready.buffer = buf;
      plugin_.check(api->PJRT_Buffer_ReadyEvent(&ready), what, jj);
      plugin_.await(ready.event, what, jj);
      auto ptr = args<PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args>(
          PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE);
      ptr.buffer = buf;
      plugin_.check(api->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&ptr), what, jj);
      size_t bytes = size_of(t.dtype);
      for (int64_t e : t.shape) bytes *= static_cast<size_t>(e);
      if (bytes && ptr.device_memory_ptr && !aliases_input(ptr.device_memory_ptr, bytes, inputs)) {
        const Plugin* plugin = &plugin_;
        o = Tensor::adopt(ptr.device_memory_ptr, t.shape, t.dtype, [plugin, buf](void*) { plugin->destroy(buf); });
        call.out[j] = nullptr;  // the tensor owns it now
        return;
      }
    }
    if (!into_caller) o = Tensor::empty(t.shape, t.dtype);
    if (o.nbytes() == 0) return;
    auto copy = args<PJRT_Buffer_ToHostBuffer_Args>(PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE);
    copy.src = buf;
    copy.dst = o.raw_data();
    copy.dst_size = o.nbytes();
    plugin_.check(api->PJRT_Buffer_ToHostBuffer(&copy), what, jj);
    plugin_.await(copy.event, what, jj);
  }

  // Whether the buffer is dense and row-major (the layout of a Tensor).
  bool dense(PJRT_Buffer* buf) const {
    auto l = args<PJRT_Buffer_GetMemoryLayout_Args>(PJRT_Buffer_GetMemoryLayout_Args_STRUCT_SIZE);
    l.buffer = buf;
    if (PJRT_Error* e = plugin_.api()->PJRT_Buffer_GetMemoryLayout(&l)) {
      plugin_.discard(e);  // no layout to read: the output is copied instead
      return false;
    }
    if (l.layout.type != PJRT_Buffer_MemoryLayout_Type_Tiled || l.layout.tiled.num_tiles != 0) return false;
    size_t r = l.layout.tiled.minor_to_major_size;
    for (size_t k = 0; k < r; ++k)
      if (l.layout.tiled.minor_to_major[k] != static_cast<int64_t>(r - 1 - k)) return false;
    return true;
  }

  static bool aliases_input(const void* p, size_t bytes, std::span<const Tensor> inputs) {
    auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
    for (const Tensor& x : inputs) {
      if (!x.numel()) continue;
      auto xlo = reinterpret_cast<uintptr_t>(x.raw_data()), xhi = xlo + x.nbytes();
      if (lo < xhi && xlo < hi) return true;
    }
    return false;
  }

  std::shared_ptr<const Compiled> compiled_;
  const Plugin& plugin_;
  PJRT_Device* device_;
  // On the CPU an input buffer aliases the caller's memory (XLA copies one that is not aligned as it needs).
  PJRT_HostBufferSemantics semantics_ = plugin_.host_memory() ? PJRT_HostBufferSemantics_kImmutableZeroCopy
                                                              : PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  std::vector<Static> inputs_, outputs_;
};

Capabilities xla_capabilities() {
  Capabilities c;
  c.backend = "xla";
  // The plugin decides which: a device of another kind than its platform's is a DeviceError at load.
  c.device_kinds = {Device::Kind::Cpu, Device::Kind::Cuda, Device::Kind::Rocm};
  c.symbolic_shapes = false;  // PJRT compiles static shapes: specialise a symbolic graph first
  c.regions = true;
  c.serializable_artifact = true;
  for (int i = 0; i < kNumDTypes; ++i) c.dtypes.push_back(static_cast<DType>(i));
  c.rules = &stablehlo::rules();  // the program it compiles is the stablehlo export
  return c;
}

class XlaBackend final : public Backend {
 public:
  XlaBackend() : Backend(xla_capabilities()) {}

  CompiledArtifact deserialize(const ArtifactHeader& header, std::string payload) const override {
    return graph_payload::read(*this, header, std::move(payload));
  }

  // Executables are the plugin's: a disk cache keys them on its identity (loading the plugin if needed).
  std::string identity() const override { return plugin_identity(Plugin::get()); }

 protected:
  LoweredProgram lower_verified(const Graph& graph) const override {
    return LoweredProgram(name(), graph, [](const Graph& g) { return export_stablehlo(g); });
  }

  CompiledArtifact compile_lowered(const LoweredProgram& lowered, const CompileOptions& options) const override {
    auto clock = std::chrono::steady_clock::now();
    auto lap = [&] {
      auto now = std::chrono::steady_clock::now();
      double s = std::chrono::duration<double>(now - clock).count();
      clock = now;
      return s;
    };
    const Plugin& p = Plugin::get();
    std::vector<StageTime> stages{{"plugin", lap()}};
    const std::string& text = lowered.text();
    stages.push_back({"export", lap()});
    if (options.cancel && options.cancel->cancelled()) throw BackendError("xla: compile cancelled");
    auto program = args<PJRT_Program>(PJRT_Program_STRUCT_SIZE);
    program.code = const_cast<char*>(text.data());  // PJRT's field is not const; it only reads
    program.code_size = text.size();
    static const char kFormat[] = "mlir";
    program.format = kFormat;
    program.format_size = sizeof kFormat - 1;
    static const std::string kOptions = compile_options_proto();
    auto c = args<PJRT_Client_Compile_Args>(PJRT_Client_Compile_Args_STRUCT_SIZE);
    c.client = p.client();
    c.program = &program;
    c.compile_options = kOptions.data();
    c.compile_options_size = kOptions.size();
    p.check(p.api()->PJRT_Client_Compile(&c), "compiling the StableHLO program");
    auto compiled = std::make_shared<const Compiled>(p, c.executable);
    stages.push_back({"compile", lap()});
    // XLA chooses its own optimisations; the level is recorded, as on the interpreter.
    auto [level, source] = options.resolve_opt_level();
    std::string opts = "opt_level=" + level.to_string() + " (" + source + ", XLA's own pipeline)";
    for (const auto& f : options.flags) opts += " " + f;
    ArtifactHeader h{name(), p.info().platform, std::move(opts), plugin_identity(p), ""};
    return CompiledArtifact(
        h, lowered.graph(), [compiled](const Graph& g) { return graph_payload::encode(g, compiled->serialize()); },
        std::move(stages), compiled);
  }

  Executable load_artifact(const CompiledArtifact& artifact, Device device) const override {
    const Plugin& p = Plugin::get();
    if (device.kind != platform_kind(p.info().platform))
      throw DeviceError("xla: the process's plugin runs on " + p.info().platform + " devices, not " +
                        device.to_string());
    PJRT_Device* d = p.device(device.index);
    if (device.index != 0)
      throw DeviceError("xla: programs run on device 0 of the plugin's client (its default device assignment), not " +
                        device.to_string());
    std::shared_ptr<const Compiled> compiled = std::static_pointer_cast<const Compiled>(artifact.native());
    if (!compiled) {
      std::string identity = plugin_identity(p);
      if (artifact.header().cpu != identity)
        throw PersistenceError("xla: the artifact was compiled by the plugin '" + artifact.header().cpu +
                               "', this process uses '" + identity + "'; compile it again here");
      std::string_view exe = graph_payload::blob(artifact.payload());
      auto l = args<PJRT_Executable_DeserializeAndLoad_Args>(PJRT_Executable_DeserializeAndLoad_Args_STRUCT_SIZE);
      l.client = p.client();
      l.serialized_executable = exe.data();
      l.serialized_executable_size = exe.size();
      try {
        p.check(p.api()->PJRT_Executable_DeserializeAndLoad(&l), "loading the serialised executable");
      } catch (const BackendError& e) {
        throw PersistenceError(e.what());
      }
      compiled = std::make_shared<const Compiled>(p, l.loaded_executable);
    }
    return Executable(name(), device, artifact.graph(),
                      std::make_shared<XlaExecutable>(artifact.graph(), std::move(compiled), p, d));
  }
};

[[maybe_unused]] const bool registered = register_backend("xla", [] { return std::make_unique<XlaBackend>(); });

}  // namespace
}  // namespace evoxc
