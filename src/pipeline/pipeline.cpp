// The staging pipeline: options, the lowered program, the executable and the stage functions.
#include "evoxc/pipeline/pipeline.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>

#include "evoxc/core/device_runtime.h"
#include "evoxc/core/error.h"
#include "evoxc/core/file_io.h"
#include "evoxc/transforms/decompose.h"

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

// ---- lowered program ----

namespace {
std::string graph_json_one_line(const Graph& g) {
  std::string j = g.to_json();
  for (char& c : j)
    if (c == '\n' || c == '\r') c = ' ';
  return j;
}
}  // namespace

struct LoweredProgram::State {
  std::string backend;
  Graph graph;
  Printer print;
  std::once_flag once;
  std::string text;
};

LoweredProgram::LoweredProgram(std::string backend, Graph graph, Printer print) : state_(std::make_shared<State>()) {
  state_->backend = std::move(backend);
  state_->graph = std::move(graph);
  state_->print = std::move(print);
}

LoweredProgram::LoweredProgram(std::string backend, Graph graph, std::string text)
    : LoweredProgram(std::move(backend), std::move(graph), Printer()) {
  std::call_once(state_->once, [&] { state_->text = std::move(text); });
}

const std::string& LoweredProgram::backend() const { return state_->backend; }
const Graph& LoweredProgram::graph() const { return state_->graph; }

const std::string& LoweredProgram::text() const {
  State& s = *state_;
  std::call_once(s.once, [&] {
    if (s.print) s.text = s.print(s.graph);
  });
  return s.text;
}

// The file is the text itself (valid input for the backend's tools: `mlir-opt file.mlir`), then one
// comment line the text's own parsers skip, holding what load() needs to rebuild the object: the
// backend, the text's length and the graph (its JSON; JSON strings hold no raw newlines, so
// the newlines between its tokens can become spaces).
namespace {
constexpr std::string_view kLoweredTrailer = "// evoxc-lowered ";
}

void LoweredProgram::save(const std::string& path) const {
  const std::string& t = text();
  std::string graph_json = graph_json_one_line(graph());
  nlohmann::json meta = {{"backend", backend()}, {"text_bytes", t.size()}};
  std::string data = t + (t.empty() || t.back() != '\n' ? "\n" : "") + std::string(kLoweredTrailer) + meta.dump() +
                     " " + graph_json + "\n";
  write_file_atomic(path, data);
}

LoweredProgram LoweredProgram::load(const std::string& path) {
  std::string data = read_file(path);
  auto fail = [&](const std::string& why) {
    return PersistenceError("'" + path + "' is not a saved LoweredProgram: " + why);
  };
  size_t at = data.rfind(std::string("\n") + std::string(kLoweredTrailer));
  if (at == std::string::npos) throw fail("no '// evoxc-lowered' line (write it with LoweredProgram::save)");
  size_t meta_begin = at + 1 + kLoweredTrailer.size();
  size_t meta_end = data.find("} ", meta_begin);
  if (meta_end == std::string::npos) throw fail("a malformed '// evoxc-lowered' line");
  std::string backend;
  size_t text_bytes = 0;
  try {
    nlohmann::json meta = nlohmann::json::parse(data.substr(meta_begin, meta_end + 1 - meta_begin));
    backend = meta.at("backend").get<std::string>();
    text_bytes = meta.at("text_bytes").get<size_t>();
  } catch (const nlohmann::json::exception& e) {
    throw fail(std::string("a malformed '// evoxc-lowered' line: ") + e.what());
  }
  if (text_bytes > at + 1) throw fail("the text is shorter than its recorded length (truncated)");
  if (!find_backend(backend))
    throw fail("it was lowered for backend '" + backend + "', which this build does not have");
  Graph graph = Graph::from_json(std::string_view(data).substr(meta_end + 2));
  verify(graph);
  // The text is compiled as written: an edited .mlir file is the user's program for that backend.
  return LoweredProgram(std::move(backend), std::move(graph), data.substr(0, text_bytes));
}

// ---- executable ----

struct Executable::State {
  std::string backend;
  Device device;
  Graph graph;
  std::shared_ptr<const ExecutableImpl> impl;
  size_t num_inputs = 0, num_outputs = 0;
  // The input tree with the top-level static (None) positions removed; set only when the
  // graph has some, so a call matching the full tree needs no second comparison.
  std::optional<TreeDef> tensor_inputs;
};

Executable::Executable(std::string backend, Device device, Graph graph, std::shared_ptr<const ExecutableImpl> impl) {
  if (!impl) throw InternalError("Executable: backend '" + backend + "' gave no implementation");
  auto s = std::make_shared<State>();
  s->backend = std::move(backend);
  s->device = device;
  s->num_inputs = graph.num_inputs();
  s->num_outputs = graph.num_outputs();
  const TreeDef& in = graph.input_tree();
  if (in.kind() == TreeKind::Tuple) {
    std::vector<TreeDef> kept;
    for (const auto& c : in.children())
      if (!c.is_none()) kept.push_back(c);
    if (kept.size() != in.size()) s->tensor_inputs = TreeDef::tuple(std::move(kept));
  }
  s->graph = std::move(graph);
  s->impl = std::move(impl);
  state_ = std::move(s);
}

const Executable::State& Executable::state() const {
  if (!state_) throw ValidationError("Executable: empty executable (default-constructed); use evoxc::load");
  return *state_;
}
const Device& Executable::device() const { return state().device; }
const Graph& Executable::graph() const { return state().graph; }
const std::string& Executable::backend() const { return state().backend; }
size_t Executable::num_inputs() const { return state().num_inputs; }
size_t Executable::num_outputs() const { return state().num_outputs; }
const ExecutableImpl& Executable::implementation() const { return *state().impl; }

void Executable::execute(std::span<const Tensor> inputs, std::span<Tensor> outputs, const RunOptions& options) const {
  const State& m = state();
  if (inputs.size() != m.num_inputs)
    throw ValidationError("execute: expected " + std::to_string(m.num_inputs) + " inputs, got " +
                          std::to_string(inputs.size()));
  if (outputs.size() != m.num_outputs)
    throw ValidationError("execute: expected " + std::to_string(m.num_outputs) + " output slots, got " +
                          std::to_string(outputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].device() != m.device)
      throw DeviceError("input " + m.graph.input_paths()[i] + " is on " + inputs[i].device().to_string() +
                        " but the executable runs on " + m.device.to_string() + "; move it with .to(device)");
  if (options.max_loop_iterations < 0)
    throw ValidationError("RunOptions::max_loop_iterations = " + std::to_string(options.max_loop_iterations) +
                          " is negative; use 0 for unlimited or a positive count");
  if (options.unlimited()) {
    m.impl->execute(inputs, outputs);
  } else {
    if (!m.impl->supports_run_options())
      throw BackendError(m.backend +
                         ": this backend cannot stop a running program, so it cannot honour RunOptions "
                         "(deadline, max_loop_iterations, cancel); run it without them, or on the "
                         "'interp' backend");
    m.impl->execute_with(inputs, outputs, options);
  }
}

namespace {

// Whether `t` has the structure `def` (kinds, sizes, dict keys), without building the paths
// Tree::first_mismatch builds: those are for the error message only.
bool same_structure(const TreeDef& def, const Tree<Tensor>& t) {
  if (def.kind() != t.kind() || def.size() != t.size()) return false;
  if (def.kind() == TreeKind::Dict && def.keys() != t.keys()) return false;
  for (size_t i = 0; i < def.size(); ++i)
    if (!same_structure(def.children()[i], t.children()[i])) return false;
  return true;
}

}  // namespace

Tree<Tensor> Executable::run(const Tree<Tensor>& inputs, const RunOptions& options) const {
  const State& m = state();
  if (!same_structure(m.graph.input_tree(), inputs) && !(m.tensor_inputs && same_structure(*m.tensor_inputs, inputs))) {
    const TreeDef& want = m.tensor_inputs ? *m.tensor_inputs : m.graph.input_tree();
    std::string why;
    auto at = want.first_mismatch(inputs, &why);
    throw ValidationError("run: inputs do not match the graph's input structure " + want.structure_string() + " at " +
                          at.value_or("<root>") + ": " + why);
  }
  std::vector<Tensor> flat = inputs.flatten();
  std::vector<Tensor> outs(m.num_outputs);
  execute(flat, outs, options);
  return m.graph.output_tree().unflatten(outs);
}

Tree<Tensor> run(const Executable& exe, const Tree<Tensor>& inputs, const RunOptions& options) {
  return exe.run(inputs, options);
}

// ---- the shared steps of every backend ----

Backend::Backend(Capabilities caps) : caps_(std::move(caps)) {
  if (caps_.rules) lowered_ = std::make_unique<DecomposedCoverage>(*caps_.rules);
}
Backend::~Backend() = default;

const RuleTableBase& Backend::lowered_ops() const {
  if (!lowered_) throw InternalError("backend '" + name() + "' declares no rule table in its capabilities");
  return *lowered_;
}

LoweredProgram Backend::lower(const Graph& graph) const {
  verify(graph);
  check_supported(graph);
  Graph g = decompose(graph, *caps_.rules);
  // What the decompositions emit must be lowerable too (a dtype the backend lacks, say).
  if (g.module_ptr() != graph.module_ptr()) check_supported(g);
  return lower_verified(g);
}

CompiledArtifact Backend::compile(const LoweredProgram& lowered, const CompileOptions& options) const {
  if (lowered.backend() != name())
    throw BackendError(name() + ": cannot compile a program lowered for backend '" + lowered.backend() +
                       "'; compile it with evoxc::compile, which picks the program's backend");
  if (options.cancel && options.cancel->cancelled()) throw BackendError(name() + ": compile cancelled");
  CompiledArtifact artifact = compile_lowered(lowered, options);
  if (options.cancel && options.cancel->cancelled()) throw BackendError(name() + ": compile cancelled");
  return artifact;
}

Executable Backend::load(const CompiledArtifact& artifact, Device device) const {
  if (artifact.backend() != name())
    throw BackendError(name() + ": cannot load an artifact compiled for backend '" + artifact.backend() +
                       "'; load it with evoxc::load, which picks the artifact's backend");
  if (!caps_.supports_device(device)) {
    std::string kinds;
    for (Device::Kind k : caps_.device_kinds)
      kinds += (kinds.empty() ? "" : ", ") + std::string(Device(k, 0).kind_name());
    throw DeviceError(name() + ": cannot run on " + device.to_string() + "; it runs on " + kinds);
  }
  return load_artifact(artifact, device);
}

// ---- stages ----

std::vector<Device> devices() {
  std::vector<Device> out{Device::cpu(0)};
  for (const DeviceRuntime* runtime : device_runtimes())
    for (Device d : runtime->devices())
      if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  return out;
}

LoweredProgram lower(const Graph& graph, std::string_view backend) { return get_backend(backend).lower(graph); }

CompiledArtifact compile(const LoweredProgram& lowered, const CompileOptions& options) {
  return get_backend(lowered.backend()).compile(lowered, options);
}

Executable load(const CompiledArtifact& artifact, Device device) {
  return get_backend(artifact.backend()).load(artifact, device);
}

}  // namespace evoxc
