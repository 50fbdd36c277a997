// The staging pipeline: lower → LoweredProgram, compile → CompiledArtifact, load → Executable, run.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "evoxc/core/tensor.h"
#include "evoxc/core/tree.h"
#include "evoxc/ir/graph.h"
#include "evoxc/trace/trace.h"

namespace evoxc {

// ---- options ----

// An optimisation level, 0..3. Accepted spellings: "O0".."O3", "0".."3", or an int.
class OptLevel {
 public:
  OptLevel(int level);              // NOLINT(google-explicit-constructor); ValidationError outside 0..3
  OptLevel(std::string_view text);  // NOLINT(google-explicit-constructor)
  OptLevel(const char* text) : OptLevel(std::string_view(text)) {}  // NOLINT(google-explicit-constructor)
  int value() const { return level_; }
  std::string to_string() const { return "O" + std::to_string(level_); }

 private:
  int level_;
};

// Options for compile(). The opt level in force is, first that wins: a raw flag "-O<n>"
// in `flags`, then `opt_level`, then the environment variable EVOXC_OPT_LEVEL, then O2.
// Opt levels never change what a program computes; on the interpreter they are recorded
// in the artifact and do not change the plan.
struct CompileOptions {
  std::optional<OptLevel> opt_level;
  std::vector<std::string> flags;
  // The resolved level and where it came from ("flag", "option", "env", "default").
  std::pair<OptLevel, std::string> resolve_opt_level() const;
};

// What a backend can do; anything else is a BackendError naming the op and the remedy.
struct Capabilities {
  std::string backend;
  std::vector<Device::Kind> device_kinds;
  bool symbolic_shapes = false;
  bool regions = false;
  bool serializable_artifact = false;
  std::vector<DType> dtypes;
};

// ---- stage objects ----

// A graph lowered for one backend: its payload is the backend's input text (for the
// interpreter, the verified EvoXIR module itself).
class LoweredProgram {
 public:
  LoweredProgram(std::string backend, Graph graph, std::string text)
      : backend_(std::move(backend)), graph_(std::move(graph)), text_(std::move(text)) {}
  const std::string& backend() const { return backend_; }
  const Graph& graph() const { return graph_; }
  const std::string& text() const { return text_; }
  std::string to_string() const { return text_; }
  // Writes the text atomically.
  void save(const std::string& path) const;

 private:
  std::string backend_;
  Graph graph_;
  std::string text_;
};

// The compiler's output with a header (format version, ABI, backend, target, options,
// content hash). For the interpreter the payload is the graph's .evoxcgraph JSON.
class CompiledArtifact {
 public:
  static constexpr int kFormatVersion = 1;
  static constexpr int kAbi = 1;

  CompiledArtifact(std::string backend, std::string target, std::string options, std::string payload, Graph graph);
  const std::string& backend() const { return backend_; }
  const std::string& target() const { return target_; }
  const std::string& options() const { return options_; }
  const std::string& payload() const { return payload_; }
  // FNV-1a 64 of the payload, hex.
  const std::string& content_hash() const { return hash_; }
  const Graph& graph() const { return graph_; }

  // .evoxcartifact: a magic line, one JSON header line, then the payload. Written
  // atomically; load() raises PersistenceError on a wrong magic, version, ABI, hash
  // or a truncated file, and never recompiles.
  void save(const std::string& path) const;
  static CompiledArtifact load(const std::string& path);

 private:
  std::string backend_, target_, options_, payload_, hash_;
  Graph graph_;
};

namespace interp {
class Program;
}

// A device-bound, callable program. Cheap to copy (shared). run/execute are safe to
// call from many threads at once.
class Executable {
 public:
  Executable() = default;
  const Device& device() const;
  const Graph& graph() const;
  const std::string& backend() const;
  size_t num_inputs() const;
  size_t num_outputs() const;

  // Tree in, tree out. `inputs` must match the graph's input tree, with the positions of
  // static arguments either present as None or left out entirely.
  Tree<Tensor> run(const Tree<Tensor>& inputs) const;

  // The native entry: flat inputs (graph order) and caller-provided outputs. A defined
  // output of the right shape and dtype is written in place; for static shapes this
  // allocates nothing on the hot path. Undefined outputs are allocated.
  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const;

  struct Impl;
  explicit Executable(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  const Impl& impl() const;
  std::shared_ptr<const Impl> impl_;
};

// ---- backends ----

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const Capabilities& capabilities() const = 0;
  virtual LoweredProgram lower(const Graph& graph) const = 0;
  virtual CompiledArtifact compile(const LoweredProgram& lowered, const CompileOptions& options) const = 0;
  virtual Executable load(const CompiledArtifact& artifact, Device device) const = 0;
};

// The backends this build has, by name ("interp"). BackendError naming the known ones
// when `name` is not one of them.
const Backend& get_backend(std::string_view name);
std::vector<std::string> backend_names();

// Devices this host can run on (always cpu:0; more when device runtimes exist).
std::vector<Device> devices();

// ---- stages ----

LoweredProgram lower(const Graph& graph, std::string_view backend = "interp");
CompiledArtifact compile(const LoweredProgram& lowered, const CompileOptions& options = {});
Executable load(const CompiledArtifact& artifact, Device device = Device::cpu());

namespace pipeline_detail {
inline Tree<Tensor> to_input_tree(const Tensor& t) { return Tree<Tensor>(t); }
inline Tree<Tensor> to_input_tree(const Tree<Tensor>& t) { return t; }
inline Tree<Tensor> to_input_tree(const std::vector<Tensor>& v) {
  std::vector<Tree<Tensor>> kids(v.begin(), v.end());
  return Tree<Tensor>::list(std::move(kids));
}
template <typename T>
Tree<Tensor> to_input_tree(const std::map<std::string, T>& m) {
  std::map<std::string, Tree<Tensor>> kids;
  for (const auto& [k, v] : m) kids.emplace(k, to_input_tree(v));
  return Tree<Tensor>::dict(std::move(kids));
}

inline TensorSpec spec_of(const Tensor& t) { return TensorSpec(Shape::from_ints(t.shape()), t.dtype()); }
inline Tree<TensorSpec> spec_of(const Tree<Tensor>& t) {
  return t.map([](const Tensor& x) { return spec_of(x); });
}
inline std::vector<TensorSpec> spec_of(const std::vector<Tensor>& v) {
  std::vector<TensorSpec> out;
  for (const auto& t : v) out.push_back(spec_of(t));
  return out;
}
inline std::map<std::string, TensorSpec> spec_of(const std::map<std::string, Tensor>& m) {
  std::map<std::string, TensorSpec> out;
  for (const auto& [k, t] : m) out.emplace(k, spec_of(t));
  return out;
}
template <typename T>
requires trace_detail::is_static_v<T> T spec_of(const T& v) { return v; }
template <typename T>
inline constexpr bool is_tensor_arg_v = !trace_detail::is_static_v<T>;
}  // namespace pipeline_detail

// Runs an executable. Each argument is a Tensor, a Tree<Tensor>, a std::vector<Tensor>
// or a std::map<std::string, Tensor> — one per tensor argument of the traced function.
template <typename... Args>
Tree<Tensor> run(const Executable& exe, const Args&... inputs) {
  return exe.run(Tree<Tensor>::tuple({pipeline_detail::to_input_tree(inputs)...}));
}

// build = trace → lower → compile → load, with no other semantics.
struct BuildOptions {
  std::string backend = "interp";
  Device device = Device::cpu();
  CompileOptions compile;
};
inline Executable build_graph(const Graph& graph, const BuildOptions& options = {}) {
  return load(compile(lower(graph, options.backend), options.compile), options.device);
}
template <typename F, typename... Specs>
Executable build(F&& fn, const Specs&... specs) {
  return build_graph(trace(std::forward<F>(fn), specs...));
}
template <typename F, typename... Specs>
Executable build_with(const BuildOptions& options, F&& fn, const Specs&... specs) {
  return build_graph(trace(std::forward<F>(fn), specs...), options);
}

// evaluate = derive specs from the tensors (static arguments pass through) → build → run.
template <typename F, typename... Args>
Tree<Tensor> evaluate(F&& fn, const Args&... args) {
  Executable exe = build(std::forward<F>(fn), pipeline_detail::spec_of(args)...);
  std::vector<Tree<Tensor>> tensor_args;
  (
      [&] {
        if constexpr (pipeline_detail::is_tensor_arg_v<Args>)
          tensor_args.push_back(pipeline_detail::to_input_tree(args));
      }(),
      ...);
  return exe.run(Tree<Tensor>::tuple(std::move(tensor_args)));
}

}  // namespace evoxc
