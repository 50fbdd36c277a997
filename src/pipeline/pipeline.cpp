// The staging pipeline: options, stage objects, the backend registry and the interpreter backend.
#include "evoxc/pipeline/pipeline.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "evoxc/core/error.h"
#include "evoxc/core/file_io.h"
#include "evoxc/interp/interp.h"
#include "evoxc/ops/op_def.h"

namespace evoxc {

// ---- options ----

OptLevel::OptLevel(int level) : level_(level) {
  if (level < 0 || level > 3)
    throw ValidationError("opt_level " + std::to_string(level) + " is out of range (use 0..3 or \"O0\"..\"O3\")");
}

OptLevel::OptLevel(std::string_view text) : level_(0) {
  std::string_view t = text;
  if (!t.empty() && (t[0] == 'O' || t[0] == 'o')) t.remove_prefix(1);
  if (t.size() != 1 || t[0] < '0' || t[0] > '3')
    throw ValidationError("opt_level '" + std::string(text) + "' is not one of O0, O1, O2, O3, 0, 1, 2, 3");
  level_ = t[0] - '0';
}

std::pair<OptLevel, std::string> CompileOptions::resolve_opt_level() const {
  for (auto it = flags.rbegin(); it != flags.rend(); ++it)
    if (it->size() == 3 && (*it)[0] == '-' && (*it)[1] == 'O')
      return {OptLevel(std::string_view(*it).substr(1)), "flag"};
  if (opt_level) return {*opt_level, "option"};
  if (const char* env = std::getenv("EVOXC_OPT_LEVEL"); env && *env) {
    try {
      return {OptLevel(env), "env"};
    } catch (const ValidationError& e) {
      throw ValidationError(std::string("EVOXC_OPT_LEVEL: ") + e.what());
    }
  }
  return {OptLevel(2), "default"};
}

// ---- stage objects ----

void LoweredProgram::save(const std::string& path) const { write_file_atomic(path, text_); }

namespace {
std::string fnv1a_hex(std::string_view data) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}
constexpr std::string_view kArtifactMagic = "EVOXCARTIFACT\n";
}  // namespace

CompiledArtifact::CompiledArtifact(std::string backend, std::string target, std::string options, std::string payload,
                                   Graph graph)
    : backend_(std::move(backend)),
      target_(std::move(target)),
      options_(std::move(options)),
      payload_(std::move(payload)),
      hash_(fnv1a_hex(payload_)),
      graph_(std::move(graph)) {}

void CompiledArtifact::save(const std::string& path) const {
  nlohmann::json h = {{"format_version", kFormatVersion},
                      {"abi", kAbi},
                      {"backend", backend_},
                      {"target", target_},
                      {"options", options_},
                      {"content_hash", hash_},
                      {"payload_bytes", payload_.size()}};
  std::string data(kArtifactMagic);
  data += h.dump();
  data += "\n";
  data += payload_;
  write_file_atomic(path, data);
}

CompiledArtifact CompiledArtifact::load(const std::string& path) {
  std::string data = read_file(path);
  auto fail = [&](const std::string& why) -> PersistenceError {
    return PersistenceError("'" + path + "' is not a loadable .evoxcartifact: " + why);
  };
  if (data.compare(0, kArtifactMagic.size(), kArtifactMagic) != 0) throw fail("bad magic (not an evoxc artifact)");
  size_t eol = data.find('\n', kArtifactMagic.size());
  if (eol == std::string::npos) throw fail("truncated header");
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(data.substr(kArtifactMagic.size(), eol - kArtifactMagic.size()));
    if (h.at("format_version").get<int>() != kFormatVersion)
      throw fail("format version " + std::to_string(h.at("format_version").get<int>()) + ", this build reads " +
                 std::to_string(kFormatVersion));
    if (h.at("abi").get<int>() != kAbi)
      throw fail("ABI " + std::to_string(h.at("abi").get<int>()) + ", this build has " + std::to_string(kAbi));
  } catch (const nlohmann::json::exception& e) {
    throw fail(std::string("malformed header: ") + e.what());
  }
  std::string backend, target, options, hash;
  size_t bytes = 0;
  try {
    backend = h.at("backend").get<std::string>();
    target = h.at("target").get<std::string>();
    options = h.at("options").get<std::string>();
    hash = h.at("content_hash").get<std::string>();
    bytes = h.at("payload_bytes").get<size_t>();
  } catch (const nlohmann::json::exception& e) {
    throw fail(std::string("malformed header: ") + e.what());
  }
  std::string payload = data.substr(eol + 1);
  if (payload.size() != bytes)
    throw fail("payload is " + std::to_string(payload.size()) + " bytes, header says " + std::to_string(bytes) +
               " (truncated or corrupted)");
  if (fnv1a_hex(payload) != hash) throw fail("content hash mismatch (corrupted)");
  if (backend != "interp") throw fail("backend '" + backend + "' is not available in this build");
  Graph g = Graph::from_json(payload);
  return CompiledArtifact(backend, target, options, std::move(payload), std::move(g));
}

// ---- executable ----

struct Executable::Impl {
  Device device;
  Graph graph;
  std::string backend;
  std::shared_ptr<const interp::Program> program;
  TreeDef tensor_inputs;  // the input tree with top-level static (None) positions removed
};

const Executable::Impl& Executable::impl() const {
  if (!impl_) throw ValidationError("Executable: empty executable (default-constructed); use evoxc::load");
  return *impl_;
}
const Device& Executable::device() const { return impl().device; }
const Graph& Executable::graph() const { return impl().graph; }
const std::string& Executable::backend() const { return impl().backend; }
size_t Executable::num_inputs() const { return impl().graph.num_inputs(); }
size_t Executable::num_outputs() const { return impl().graph.num_outputs(); }

void Executable::execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const {
  const Impl& m = impl();
  if (inputs.size() != m.graph.num_inputs())
    throw ValidationError("execute: expected " + std::to_string(m.graph.num_inputs()) + " inputs, got " +
                          std::to_string(inputs.size()));
  if (outputs.size() != m.graph.num_outputs())
    throw ValidationError("execute: expected " + std::to_string(m.graph.num_outputs()) + " output slots, got " +
                          std::to_string(outputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].device() != m.device)
      throw DeviceError("input " + m.graph.input_paths()[i] + " is on " + inputs[i].device().to_string() +
                        " but the executable runs on " + m.device.to_string() + "; move it with .to(device)");
  interp::execute(*m.program, inputs, outputs);
}

Tree<Tensor> Executable::run(const Tree<Tensor>& inputs) const {
  const Impl& m = impl();
  std::string why;
  auto full = m.graph.input_tree().first_mismatch(inputs, &why);
  if (full) {
    std::string why2;
    if (auto m2 = m.tensor_inputs.first_mismatch(inputs, &why2))
      throw ValidationError("run: inputs do not match the graph's input structure " +
                            m.tensor_inputs.structure_string() + " at " + *m2 + ": " + why2);
  }
  std::vector<Tensor> flat = inputs.flatten();
  std::vector<Tensor> outs(m.graph.num_outputs());
  execute(flat, outs);
  return m.graph.output_tree().unflatten(outs);
}

// ---- the interpreter backend ----

namespace {

class InterpBackend final : public Backend {
 public:
  InterpBackend() {
    caps_.backend = "interp";
    caps_.device_kinds = {Device::Kind::Cpu};
    caps_.symbolic_shapes = true;
    caps_.regions = false;
    caps_.serializable_artifact = true;
    for (int i = 0; i < kNumDTypes; ++i) caps_.dtypes.push_back(static_cast<DType>(i));
  }
  const Capabilities& capabilities() const override { return caps_; }

  LoweredProgram lower(const Graph& graph) const override {
    verify(graph);
    for (const auto& op : graph.main().entry().operations())
      if (op->name() != "return" && !interp::has_kernel(op->name()))
        throw BackendError("interp: op '" + op->name() + "' at " + op->location().to_string() +
                           " has no interpreter kernel in this build");
    return LoweredProgram("interp", graph, graph.to_string());
  }

  CompiledArtifact compile(const LoweredProgram& lowered, const CompileOptions& options) const override {
    auto [level, source] = options.resolve_opt_level();
    std::string opts = "opt_level=" + level.to_string() + " (" + source + ")";
    for (const auto& f : options.flags) opts += " " + f;
    return CompiledArtifact("interp", "cpu", opts, lowered.graph().to_json(), lowered.graph());
  }

  Executable load(const CompiledArtifact& artifact, Device device) const override {
    if (device.kind != Device::Kind::Cpu || device.index != 0)
      throw DeviceError("interp: runs on cpu:0 only, not " + device.to_string());
    auto impl = std::make_shared<Executable::Impl>();
    impl->device = device;
    impl->graph = artifact.graph();
    impl->backend = "interp";
    impl->program = interp::prepare(artifact.graph());
    const TreeDef& in = artifact.graph().input_tree();
    if (in.kind() == TreeKind::Tuple) {
      std::vector<TreeDef> kept;
      for (const auto& c : in.children())
        if (!c.is_none()) kept.push_back(c);
      impl->tensor_inputs = TreeDef::tuple(std::move(kept));
    } else {
      impl->tensor_inputs = in;
    }
    return Executable(std::move(impl));
  }

 private:
  Capabilities caps_;
};

}  // namespace

const Backend& get_backend(std::string_view name) {
  static const InterpBackend interp_backend;
  if (name == "interp") return interp_backend;
  throw BackendError("unknown backend '" + std::string(name) + "'; this build has: interp");
}

std::vector<std::string> backend_names() { return {"interp"}; }

std::vector<Device> devices() { return {Device::cpu(0)}; }

LoweredProgram lower(const Graph& graph, std::string_view backend) { return get_backend(backend).lower(graph); }

CompiledArtifact compile(const LoweredProgram& lowered, const CompileOptions& options) {
  return get_backend(lowered.backend()).compile(lowered, options);
}

Executable load(const CompiledArtifact& artifact, Device device) {
  return get_backend(artifact.backend()).load(artifact, device);
}

}  // namespace evoxc
