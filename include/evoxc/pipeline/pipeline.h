// The staging pipeline: lower → LoweredProgram, compile → CompiledArtifact, load → Executable, run;
// the Backend interface and the registry backends add themselves to.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "evoxc/core/tensor.h"
#include "evoxc/core/tree.h"
#include "evoxc/ir/graph.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/ops/rule_table.h"
#include "evoxc/trace/trace.h"
#include "evoxc/transforms/batch.h"

namespace evoxc {

class Backend;

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

// A stop signal for runs and compiles, which any thread may trip: every call running with it (RunOptions::
// cancel) stops with a RunLimitError at its next loop iteration, and every call started with it
// stops at once, until reset(); a compile with it (CompileOptions::cancel) stops at its next stage. One token may serve
// many calls, concurrent ones included. Share it through a std::shared_ptr (RunOptions holds one), so it outlives every
// call using it.
class CancellationToken {
 public:
  // Trips the token; idempotent, safe from any thread (a signal handler included: lock-free).
  void cancel() noexcept { flag_.store(true, std::memory_order_relaxed); }
  // Re-arms the token for later calls. A call still running may or may not have seen the trip.
  void reset() noexcept { flag_.store(false, std::memory_order_relaxed); }
  bool cancelled() const noexcept { return flag_.load(std::memory_order_relaxed); }
  // The flag a backend polls.
  const std::atomic<bool>& flag() const noexcept { return flag_; }

 private:
  std::atomic<bool> flag_{false};
};

// Options for compile(). The opt level in force is, first that wins: a raw flag "-O<n>"
// in `flags`, then `opt_level`, then the environment variable EVOXC_OPT_LEVEL, then O2.
// Opt levels never change what a program computes; on the interpreter they are recorded
// in the artifact and do not change the plan.
struct CompileOptions {
  std::optional<OptLevel> opt_level;
  std::vector<std::string> flags;
  // Stops the compile with a BackendError ("compile cancelled") at its next stage boundary once tripped (a
  // backend's stages: for mlir, parse, MLIR passes, translation, LLVM passes, code generation; a stage in
  // progress runs to its end). nullptr: not cancellable. Not part of the artifact or the cache key.
  std::shared_ptr<const CancellationToken> cancel;
  // The resolved level and where it came from ("flag", "option", "env", "default").
  std::pair<OptLevel, std::string> resolve_opt_level() const;
};

// Limits on one call of Executable::run/execute (and run_with, evaluate_with). The default is
// unlimited and costs nothing. A limit hit is a RunLimitError naming the limit, the loop op
// and its source location; what the call allocated is freed and the executable stays usable.
// Limits are checked at the start of the call and before each iteration of every loop
// (while_loop, scan, fori_loop) at any depth: loop-free work is never interrupted midway.
struct RunOptions {
  using Clock = std::chrono::steady_clock;
  // The call stops once Clock passes this (interp: sampled every iteration while iterations
  // are slow, at most every 1024 fast ones, so it is overshot by about one iteration or 20 us).
  std::optional<Clock::time_point> deadline;
  // Body iterations of all loops of one call, counted together (a nested loop's iterations
  // count too); the iteration that would exceed it does not run. 0: unlimited.
  int64_t max_loop_iterations = 0;
  // Stops the call when tripped (see CancellationToken). nullptr: not cancellable.
  std::shared_ptr<const CancellationToken> cancel;

  // deadline = now + timeout.
  static RunOptions with_timeout(Clock::duration timeout) {
    RunOptions o;
    o.deadline = Clock::now() + timeout;
    return o;
  }
  bool unlimited() const { return !deadline && max_loop_iterations <= 0 && !cancel; }
};

// What a backend can do. lower() checks every op of a graph, at every region depth,
// against it; anything else is a BackendError naming the op, its location and the remedy.
struct Capabilities {
  std::string backend;
  std::vector<Device::Kind> device_kinds;
  bool symbolic_shapes = false;          // shapes with Dim("B") extents
  bool regions = false;                  // ops with regions (cond, while_loop, scan)
  bool serializable_artifact = false;    // CompiledArtifact::save / load
  std::vector<DType> dtypes;             // element types of any value
  const RuleTableBase* rules = nullptr;  // which ops it has a rule for (its kernel or lowering table)
  // batch_functions' cost model on this backend (BatchOptions::cost_model), measured by a bench
  // command (the interpreter's: bench/calibrate_batch.py).
  BatchCostModel batch_cost;

  bool supports_dtype(DType t) const;
  bool supports_device(const Device& d) const;
  // Whether an op is in the rule table (the block terminator always is: every backend
  // binds returned values itself), the backend handles dtype `t`, and the op accepts `t`
  // as an operand dtype (its DTypeClass).
  bool supports(const OpDef& op, DType t) const;
};

// ---- stage objects ----

// A graph lowered for one backend. Its text is the backend's input program (for the
// interpreter, the printed EvoXIR module); a backend may produce it on first use, so lowering
// never prints what nobody reads. Cheap to copy (shared, immutable); thread-safe.
class LoweredProgram {
 public:
  // Produces the text from the graph on first use of text()/to_string()/save().
  using Printer = std::function<std::string(const Graph&)>;
  LoweredProgram(std::string backend, Graph graph, Printer print);
  // The text is known already.
  LoweredProgram(std::string backend, Graph graph, std::string text);

  const std::string& backend() const;
  const Graph& graph() const;
  const std::string& text() const;
  std::string to_string() const { return text(); }
  // Writes the text atomically (for mlir/stablehlo a .mlir file the MLIR tools read), followed by
  // one `// evoxc-lowered` comment line with the backend and the graph, so load() can rebuild it.
  void save(const std::string& path) const;
  // Reads a file written by save(). The text is taken as written (an edited .mlir file is
  // compiled as edited); PersistenceError for a file without the trailer line, a truncated
  // one, or a backend this build does not have.
  static LoweredProgram load(const std::string& path);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// The header fields of a compiled artifact besides the format version, ABI and hash.
struct ArtifactHeader {
  std::string backend;
  std::string target;   // "cpu"
  std::string options;  // the resolved compile options, as text
  // For object code: the CPU it was compiled for (LLVM's triple and CPU name) and the features
  // it may use ("+avx2,+fma,..."); empty for portable payloads. A backend refuses to load an
  // artifact whose CPU or features differ from the host's (PersistenceError).
  std::string cpu;
  std::string cpu_features;
};

// One stage of a compile and the wall time it took (for the mlir backend: "context", "parse", "mlir passes",
// "translate", then "split" when a large module is compiled in parts on threads, "llvm opt", "codegen").
struct StageTime {
  std::string stage;
  double seconds = 0;
};

// The compiler's output: a header (format version, ABI, backend, target, options, content
// hash) and the backend's payload (for the interpreter: a compact binary encoding of the
// verified graph). An artifact made by compile() keeps what the backend needs in memory
// (for the interpreter, the graph), so load() never parses anything; its payload bytes and
// hash are produced on first use (payload(), content_hash(), save()). Cheap to copy.
class CompiledArtifact {
 public:
  static constexpr int kFormatVersion = 3;  // 2: the backend's payload is binary; 3: cpu, cpu_features
  static constexpr int kAbi = 1;

  // Serialises the backend's compiled program; `graph` is the artifact's graph.
  using PayloadWriter = std::function<std::string(const Graph& graph)>;
  // In memory: the payload is written by `write` on first use; `stages` is where the compile spent its time;
  // `native` is the compiled program in the backend's own in-memory form (for xla, the plugin's loaded executable),
  // so that load() of this artifact uses it instead of reading the payload back.
  CompiledArtifact(ArtifactHeader header, Graph graph, PayloadWriter write, std::vector<StageTime> stages = {},
                   std::shared_ptr<const void> native = nullptr);
  // Read back from bytes: the payload is known.
  CompiledArtifact(ArtifactHeader header, Graph graph, std::string payload);

  const std::string& backend() const;
  const std::string& target() const;
  const std::string& options() const;
  const ArtifactHeader& header() const;
  const Graph& graph() const;
  const std::string& payload() const;
  // FNV-1a 64 of the payload, 16 hex digits.
  const std::string& content_hash() const;
  // Where the compile that made this artifact spent its time, stage by stage, in order (empty for an
  // artifact read back from bytes or a file, and for backends that do not time their stages).
  const std::vector<StageTime>& stage_times() const;
  // The backend's in-memory compiled program given at compile (null for an artifact read back from bytes or a file):
  // only the backend that made it knows its type.
  const std::shared_ptr<const void>& native() const;

  // .evoxcartifact: a magic line, one JSON header line, then the payload. save() writes
  // atomically. load()/from_bytes() raise PersistenceError on a wrong magic, version, ABI,
  // size or hash, on a backend this build does not have (naming the ones it has), and on a
  // payload its backend cannot read back; they never recompile.
  void save(const std::string& path) const;
  static CompiledArtifact load(const std::string& path);
  std::string to_bytes() const;
  // `where` names the source in error messages (a path).
  static CompiledArtifact from_bytes(std::string_view data, std::string_view where = "<bytes>");

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// What a backend's loaded program does; pipeline's Executable holds one and does the checks
// every backend shares (counts, devices, the input tree) before calling it.
class ExecutableImpl {
 public:
  virtual ~ExecutableImpl() = default;
  // `inputs` has one tensor per graph input leaf (flattening order) on the executable's
  // device; `outputs` one slot per output leaf. A defined output of the right shape and dtype
  // is written in place, an undefined one allocated. Must be safe to call concurrently.
  virtual void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const = 0;
  // Whether execute_with honours RunOptions. Executable raises a BackendError for limited
  // options on a backend that cannot stop a running program, rather than ignore them.
  virtual bool supports_run_options() const { return false; }
  // execute under `options` (called only with limited options when supports_run_options()).
  // The default ignores them: it is reached only with unlimited options.
  virtual void execute_with(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                            const RunOptions& /*options*/) const {
    execute(inputs, outputs);
  }
};

// A device-bound, callable program. Cheap to copy (shared). run/execute are safe to
// call from many threads at once.
class Executable {
 public:
  Executable() = default;
  // What a backend's load returns.
  Executable(std::string backend, Device device, Graph graph, std::shared_ptr<const ExecutableImpl> impl);

  const Device& device() const;
  const Graph& graph() const;
  const std::string& backend() const;
  size_t num_inputs() const;
  size_t num_outputs() const;
  const ExecutableImpl& implementation() const;

  // Tree in, tree out. `inputs` must match the graph's input tree, with the positions of
  // static arguments either present as None or left out entirely. `options` limits the call
  // (RunLimitError when one is hit; BackendError when the backend cannot enforce them).
  Tree<Tensor> run(const Tree<Tensor>& inputs, const RunOptions& options = {}) const;

  // The native entry: flat inputs (graph order) and caller-provided outputs. A defined
  // output of the right shape and dtype is written in place; for static shapes this
  // allocates nothing on the hot path. Undefined outputs are allocated. After a
  // RunLimitError the outputs' contents are unspecified.
  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs, const RunOptions& options = {}) const;

 private:
  struct State;
  const State& state() const;
  std::shared_ptr<const State> state_;
};

// ---- backends ----

// A backend: lower, compile, load. The public stage functions do the checks every backend
// shares (verification, capabilities over every op, backend names, devices) and then call
// the backend's own step.
class Backend {
 public:
  explicit Backend(Capabilities caps);
  virtual ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const std::string& name() const { return caps_.backend; }
  const Capabilities& capabilities() const { return caps_; }
  // The ops this backend lowers: its capabilities' rules, and every op with a decomposition
  // (transforms/decompose.h), which lower() expands into ops it has rules for. The coverage
  // matrix shows this table.
  const RuleTableBase& lowered_ops() const;

  // verify(graph), check_supported(graph), the decompositions of the ops the capabilities' rules
  // lack (decompose), then the backend's lowering of the decomposed graph (the program's graph).
  LoweredProgram lower(const Graph& graph) const;
  // BackendError when `lowered` is for another backend.
  CompiledArtifact compile(const LoweredProgram& lowered, const CompileOptions& options) const;
  // BackendError when the artifact is for another backend; DeviceError for a device kind
  // the backend does not run on.
  Executable load(const CompiledArtifact& artifact, Device device) const;

  // BackendError for the first op (at any region depth) the capabilities exclude: an op
  // without a rule or a decomposition, a dtype, regions or symbolic shapes the backend does not handle. The
  // message names the op, its location, the enclosing op and the remedy.
  void check_supported(const Graph& graph) const;

  // Rebuilds an artifact from its header and payload (CompiledArtifact::load dispatches
  // here on the header's backend). PersistenceError when the payload is malformed.
  virtual CompiledArtifact deserialize(const ArtifactHeader& header, std::string payload) const = 0;

  // What besides the lowered text and options decides whether an artifact compiled elsewhere loads here, for
  // caches to key on (for xla, the process's plugin: platform, versions, library); empty when the host CPU
  // (which DiskCache keys on anyway) is all.
  virtual std::string identity() const { return {}; }

 protected:
  // The graph is verified and supported.
  virtual LoweredProgram lower_verified(const Graph& graph) const = 0;
  virtual CompiledArtifact compile_lowered(const LoweredProgram& lowered, const CompileOptions& options) const = 0;
  // The device's kind is one of the capabilities' device_kinds.
  virtual Executable load_artifact(const CompiledArtifact& artifact, Device device) const = 0;

 private:
  Capabilities caps_;
  std::unique_ptr<const RuleTableBase> lowered_;  // caps_.rules with the decompositions
};

// Makes a backend on first use (so a backend may build its tables lazily).
using BackendFactory = std::function<std::unique_ptr<Backend>()>;

// Adds a backend under `name` (which must equal the name in its capabilities). Backends
// call this from a namespace-scope static in their own object file; the registry is a
// function-local static, so no static-initialisation order matters. InternalError when the
// name is taken. Returns true, so it can initialise a static.
bool register_backend(std::string name, BackendFactory factory);
// The backend, made on first use. BackendError naming the backends this build has when
// `name` is not one of them.
const Backend& get_backend(std::string_view name);
// nullptr when absent.
const Backend* find_backend(std::string_view name);
// The registered names, sorted.
std::vector<std::string> backend_names();

// Devices this host can run on: cpu:0 (the host), then each device runtime's devices (the xla backend's PJRT
// plugin's: loading it, so call xla::initialize before this when the plugin needs options).
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

// Runs an executable on its whole input tree (a tuple with one entry per argument of the
// traced function; static positions None or left out): exe.run(inputs, options). The
// type-erased entry bindings use.
Tree<Tensor> run(const Executable& exe, const Tree<Tensor>& inputs, const RunOptions& options = {});

// Runs an executable. Each argument is a Tensor, a Tree<Tensor>, a std::vector<Tensor>
// or a std::map<std::string, Tensor> — one per tensor argument of the traced function.
// (With one argument that is a Tree<Tensor>, the overload above takes it as the whole
// input tree; wrap it as Tree<Tensor>::tuple({t}) to pass it as the first argument.)
template <typename... Args>
Tree<Tensor> run(const Executable& exe, const Args&... inputs) {
  static_assert((!std::is_same_v<Args, RunOptions> && ...),
                "pass RunOptions first, to run_with(options, exe, inputs...)");
  return exe.run(Tree<Tensor>::tuple({pipeline_detail::to_input_tree(inputs)...}));
}

// run under RunOptions (a deadline, a loop-iteration cap, a CancellationToken):
// exe.run(tuple(inputs...), options), the arguments as run() takes them.
template <typename... Args>
Tree<Tensor> run_with(const RunOptions& options, const Executable& exe, const Args&... inputs) {
  return exe.run(Tree<Tensor>::tuple({pipeline_detail::to_input_tree(inputs)...}), options);
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

// ---- the type-erased entries (bindings) ----

// build_dynamic = trace_dynamic(fn, args) → lower → compile → load with `options`.
Executable build_dynamic(const TraceFunction& fn, const std::vector<TraceArg>& args, const BuildOptions& options = {});

// A leaf of an evaluate_dynamic argument: a Tensor (a graph input of its shape and dtype)
// or a static value, at any position of the argument's pytree.
using EvalLeaf = std::variant<Tensor, bool, int64_t, double, std::string, DType>;
using EvalArg = Tree<EvalLeaf>;

// evaluate_dynamic = specs from the tensors (each Tensor leaf becomes a TensorSpec of its
// concrete shape and dtype; statics pass through) → build_dynamic → run on the tensors
// (a tuple with one entry per argument, statics as None) under `run_options`.
Tree<Tensor> evaluate_dynamic(const TraceFunction& fn, const std::vector<EvalArg>& args,
                              const BuildOptions& options = {}, const RunOptions& run_options = {});

// evaluate_with = derive specs from the tensors (static arguments pass through) → build →
// run under `options`.
template <typename F, typename... Args>
Tree<Tensor> evaluate_with(const RunOptions& options, F&& fn, const Args&... args) {
  Executable exe = build(std::forward<F>(fn), pipeline_detail::spec_of(args)...);
  std::vector<Tree<Tensor>> tensor_args;
  (
      [&] {
        if constexpr (pipeline_detail::is_tensor_arg_v<Args>)
          tensor_args.push_back(pipeline_detail::to_input_tree(args));
      }(),
      ...);
  return exe.run(Tree<Tensor>::tuple(std::move(tensor_args)), options);
}

// evaluate = evaluate_with(RunOptions{}, fn, args...): derive specs → build → run, unlimited.
template <typename F, typename... Args>
Tree<Tensor> evaluate(F&& fn, const Args&... args) {
  static_assert((!std::is_same_v<Args, RunOptions> && ...),
                "pass RunOptions first, to evaluate_with(options, fn, args...)");
  return evaluate_with(RunOptions{}, std::forward<F>(fn), args...);
}

}  // namespace evoxc
