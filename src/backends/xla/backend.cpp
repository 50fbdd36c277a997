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

// xla::CompileOptionsProto, serialised by hand (no protobuf dependency; field numbers from XLA's
// compile_options.proto and xla.proto): executable_build_options {num_replicas: 1, num_partitions: 1, and, for a
// device other than the client's default (device 0), device_assignment {replica_count: 1, computation_count: 1,
// computation_devices {replica_device_ids: [id]}}} (a portable executable, which could run on any device, ran the
// 2^20-element tanh(a*b+a) in 727 us against 422 us on XLA's CPU plugin), and env_option_overrides
// {"xla_allow_excess_precision": false}: XLA otherwise drops the rounding of float16/bfloat16 intermediate values, and
// a program must compute the same bits here as on the interpreter (docs/semantics.md).
std::string compile_options_proto(int device_id = -1) {
  auto field = [](int tag, const std::string& bytes) {
    return std::string(1, static_cast<char>(tag)) + std::string(1, static_cast<char>(bytes.size())) + bytes;
  };
  std::string build = "\x20\x01\x28\x01";  // field 4 num_replicas = 1, field 5 num_partitions = 1
  if (device_id >= 0) {
    std::string id;  // a varint
    for (auto v = static_cast<uint64_t>(device_id);; v >>= 7) {
      id += static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
      if (v < 0x80) break;
    }
    std::string assignment = "\x08\x01\x10\x01" + field(0x1a, "\x08" + id);
    build += field(0x4a, assignment);  // field 9: device_assignment
  }
  std::string flag = "xla_allow_excess_precision";
  std::string value = std::string("\x10\x00", 2);  // OptionOverrideProto.bool_field (2) = false
  std::string entry = field(0x0a, flag) + field(0x12, value);
  return field(0x1a, build) + field(0x3a, entry);  // fields 3 (executable_build_options), 7 (env_option_overrides)
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

// The buffers of one call: the argument list, the ones made for it (destroyed when it ends, whatever way) and the
// outputs not handed to a tensor yet.
struct CallBuffers {
  const Plugin& plugin;
  SmallVector<PJRT_Buffer*, 8> args, made, out;
  SmallVector<PJRT_Event*, 8> events;
  ~CallBuffers() {
    for (PJRT_Buffer* b : out) plugin.destroy(b);
    for (PJRT_Buffer* b : made) plugin.destroy(b);
    for (PJRT_Event* e : events) plugin.destroy(e);
  }
};

class XlaExecutable final : public ExecutableImpl {
 public:
  XlaExecutable(const Graph& graph, std::shared_ptr<const Compiled> compiled, const Plugin& plugin, int index)
      : compiled_(std::move(compiled)),
        plugin_(plugin),
        device_(plugin.device(index)),
        where_(xla_backend::device_of(plugin, index)) {
    const Block& entry = graph.main().entry();
    for (size_t i = 0; i < entry.arguments().size(); ++i) inputs_.push_back(static_type(entry.argument(i)->type()));
    for (const TensorType& t : graph.main().result_types()) outputs_.push_back(static_type(t));
  }

  // Inputs are on the executable's device (Executable::execute checked): the plugin's own buffers go in as they are;
  // on the CPU platform, host memory is lent to the plugin without a copy. Outputs stay on the device: on the CPU
  // platform read in place by the host, elsewhere the plugin's buffers (their work may still run: the plugin orders
  // every later use after it).
  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    if (inputs.size() != inputs_.size() || outputs.size() != outputs_.size())
      throw ValidationError("xla: execute: wrong number of inputs or outputs");
    const PJRT_Api* api = plugin_.api();
    const DeviceRuntime* runtime = xla_backend::runtime();
    CallBuffers call{plugin_, {}, {}, {}, {}};
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& x = inputs[i];
      const Static& t = inputs_[i];
      if (!x.defined() || x.dtype() != t.dtype || x.shape() != t.shape)
        throw ValidationError("xla: input " + std::to_string(i) + ": expected " + describe(t) + ", got " +
                              (x.defined() ? describe({x.dtype(), x.shape(), 0}) : std::string("an undefined tensor")));
      if (auto* own = static_cast<PJRT_Buffer*>(x.buffer()->handle(runtime))) {
        call.args.push_back(own);
        continue;
      }
      if (!plugin_.host_memory() || x.device().kind != Device::Kind::Cpu)
        throw DeviceError("xla: input " + std::to_string(i) + " is host memory (" + x.device().to_string() +
                          "); this executable runs on " + where_.to_string() + ": move it with .to(" +
                          where_.to_string() + ")");
      auto b = args<PJRT_Client_BufferFromHostBuffer_Args>(PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE);
      b.client = plugin_.client();
      static const int64_t kEmpty = 0;  // a zero-size tensor may have no storage; PJRT wants a pointer
      b.data = x.numel() ? x.raw_data() : &kEmpty;
      b.type = xla_backend::element_type(t.dtype);
      b.dims = t.shape.data();
      b.num_dims = t.shape.size();
      // The caller's memory aliased (XLA copies what is not aligned as it needs).
      b.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableZeroCopy;
      b.device = device_;
      plugin_.check(api->PJRT_Client_BufferFromHostBuffer(&b), "input", static_cast<int64_t>(i));
      call.args.push_back(b.buffer);
      call.made.push_back(b.buffer);
      call.events.push_back(b.done_with_host_buffer);
    }
    call.out.resize(outputs_.size(), nullptr);
    auto options = args<PJRT_ExecuteOptions>(PJRT_ExecuteOptions_STRUCT_SIZE);
    PJRT_Buffer* const* argument_list = call.args.data();
    PJRT_Buffer** output_list = call.out.data();
    auto ex = args<PJRT_LoadedExecutable_Execute_Args>(PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE);
    ex.executable = compiled_->get();
    ex.options = &options;
    ex.argument_lists = &argument_list;
    ex.num_devices = 1;
    ex.num_args = call.args.size();
    ex.output_lists = &output_list;
    plugin_.check(api->PJRT_LoadedExecutable_Execute(&ex), "execute");
    for (size_t j = 0; j < outputs.size(); ++j) take_output(call, j, inputs, outputs[j]);
  }

 private:
  struct Static {
    DType dtype;
    std::vector<int64_t> shape;
    size_t bytes = 0;  // decided at load: the run path does not multiply extents
  };
  static Static static_type(const TensorType& t) {
    Static s{t.dtype, {}, size_of(t.dtype)};
    for (const DimExpr& d : t.shape) {
      s.shape.push_back(d.value());
      s.bytes *= static_cast<size_t>(d.value());
    }
    return s;
  }
  static std::string describe(const Static& s) { return TensorType(s.dtype, Shape::from_ints(s.shape)).to_string(); }

  // Output j into the caller's slot: on the CPU platform written into the caller's host tensor when it has the right
  // type; else the plugin's buffer itself becomes the tensor (read in place on the CPU unless it aliases an input,
  // which is the caller's memory: then a copy).
  void take_output(CallBuffers& call, size_t j, std::span<const Tensor> inputs, Tensor& o) const {
    const Static& t = outputs_[j];
    PJRT_Buffer* buf = call.out[j];
    const char* what = "output";
    auto jj = static_cast<int64_t>(j);
    if (o.defined() && o.dtype() != t.dtype)
      throw ValidationError("xla: output " + std::to_string(j) + ": the caller's tensor has dtype " +
                            std::string(dtype_name(o.dtype())) + ", the program gives " +
                            std::string(dtype_name(t.dtype)));
    if (plugin_.host_memory() && o.defined() && o.shape() == t.shape && !o.buffer()->runtime() &&
        o.device().kind == Device::Kind::Cpu) {
      if (o.nbytes() == 0) return;
      auto copy = args<PJRT_Buffer_ToHostBuffer_Args>(PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE);
      copy.src = buf;
      copy.dst = o.raw_data();
      copy.dst_size = o.nbytes();
      plugin_.check(plugin_.api()->PJRT_Buffer_ToHostBuffer(&copy), what, jj);
      plugin_.await(copy.event, what, jj);
      return;
    }
    void* address = xla_backend::host_address(plugin_, buf, what, jj);
    if (address && t.bytes && aliases_input(address, t.bytes, inputs)) {
      o = xla_backend::copy_to_host(plugin_, buf, t.shape, t.dtype, where_, what, jj);
      return;
    }
    call.out[j] = nullptr;  // the tensor owns it now
    o = xla_backend::adopt_buffer(plugin_, buf, t.shape, t.dtype, where_, address);
  }

  static bool aliases_input(const void* p, size_t bytes, std::span<const Tensor> inputs) {
    auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
    for (const Tensor& x : inputs) {
      if (!x.numel() || !x.buffer()->data()) continue;
      auto xlo = reinterpret_cast<uintptr_t>(x.buffer()->data()), xhi = xlo + x.nbytes();
      if (lo < xhi && xlo < hi) return true;
    }
    return false;
  }

  std::shared_ptr<const Compiled> compiled_;
  const Plugin& plugin_;
  PJRT_Device* device_;
  Device where_;
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
  c.dtypes = all_dtypes();
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

  // An executable compiled for the client's default device (0) is placed on another device by loading its
  // serialised form again with a device assignment naming that device (PJRT's overriding compile options: no
  // compile; a portable executable would run anywhere, but slower, see compile_options_proto).
  Executable load_artifact(const CompiledArtifact& artifact, Device device) const override {
    const Plugin& p = Plugin::get();
    if (device.kind != xla_backend::device_of(p, 0).kind)
      throw DeviceError("xla: the process's plugin runs on " + p.info().platform + " devices, not " +
                        device.to_string());
    PJRT_Device* target = p.device(device.index);  // DeviceError when the client has no such device
    std::shared_ptr<const Compiled> compiled = std::static_pointer_cast<const Compiled>(artifact.native());
    if (!compiled || device.index != 0) {
      std::string serialized;
      std::string_view exe;
      if (compiled) {
        serialized = compiled->serialize();
        exe = serialized;
      } else {
        std::string identity = plugin_identity(p);
        if (artifact.header().cpu != identity)
          throw PersistenceError("xla: the artifact was compiled by the plugin '" + artifact.header().cpu +
                                 "', this process uses '" + identity + "'; compile it again here");
        exe = graph_payload::blob(artifact.payload());
      }
      std::string placement = device.index != 0 ? compile_options_proto(p.device_id(device.index)) : std::string();
      auto l = args<PJRT_Executable_DeserializeAndLoad_Args>(PJRT_Executable_DeserializeAndLoad_Args_STRUCT_SIZE);
      l.client = p.client();
      l.serialized_executable = exe.data();
      l.serialized_executable_size = exe.size();
      if (!placement.empty()) {
        l.overridden_serialized_compile_options = placement.data();
        l.overridden_serialized_compile_options_size = placement.size();
      }
      try {
        p.check(p.api()->PJRT_Executable_DeserializeAndLoad(&l), "loading the serialised executable");
      } catch (const BackendError& e) {
        if (compiled) throw;
        throw PersistenceError(e.what());  // the file's bytes: a corrupt or foreign artifact
      }
      compiled = std::make_shared<const Compiled>(p, l.loaded_executable);
      auto on = args<PJRT_LoadedExecutable_AddressableDevices_Args>(
          PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE);
      on.executable = compiled->get();
      p.check(p.api()->PJRT_LoadedExecutable_AddressableDevices(&on), "the executable's devices");
      if (on.num_addressable_devices != 1 || on.addressable_devices[0] != target)
        throw DeviceError("xla: the plugin did not place the executable on " + device.to_string() + " (it runs on " +
                          std::to_string(on.num_addressable_devices) + " device(s), the first " +
                          (on.num_addressable_devices ? std::to_string(p.index_of(on.addressable_devices[0])) : "-") +
                          ")");
    }
    return Executable(name(), device, artifact.graph(),
                      std::make_shared<XlaExecutable>(artifact.graph(), std::move(compiled), p, device.index));
  }
};

[[maybe_unused]] const bool registered = register_backend("xla", [] { return std::make_unique<XlaBackend>(); });

}  // namespace
}  // namespace evoxc
