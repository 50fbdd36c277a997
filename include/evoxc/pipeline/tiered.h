// Tiered execution: a program runs at once on a backend that needs no compile (the interpreter) while
// another backend (mlir) compiles it on a background thread; later calls switch to the compiled code.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "evoxc/pipeline/pipeline.h"

namespace evoxc {

// The two tiers: the first runs at once, the compiled one once its background compile is loaded.
enum class Tier : uint8_t { First, Compiled };
const char* tier_name(Tier t);  // "first", "compiled"

struct TieredOptions {
  std::string first_backend = "interp";   // runs from the first call (lower + compile + load at construction)
  std::string compiled_backend = "mlir";  // lowered, compiled and loaded on a background thread
  CompileOptions compile;                 // for the compiled tier (its `cancel` is the tier's own; ignored here)
  Device device = Device::cpu();
  // The background compile starts once the program has been called this many times (0: at construction).
  // A program evaluated once or twice (a GP generation of new programs) then never pays for a compile;
  // one evaluated a thousand times (constant tuning) starts compiling on its Nth call.
  int64_t compile_after_calls = 0;
};

// What a tiered executable has done so far.
struct TierReport {
  enum class Compile : uint8_t { NotStarted, Running, Ready, Failed, Cancelled };
  std::string first_backend, compiled_backend;
  Compile compile = Compile::NotStarted;
  std::string error;  // Failed: the compile's error (type and message)
  // Wall times of the background stages, seconds (0 until the stage has run).
  double lower_seconds = 0, compile_seconds = 0, load_seconds = 0;
  std::vector<StageTime> stages;                // the compiled backend's own stages (CompiledArtifact::stage_times)
  int64_t first_calls = 0, compiled_calls = 0;  // calls that ran on each tier
  std::optional<Tier> pinned;
};
const char* compile_state_name(TierReport::Compile c);  // "not started", "running", "ready", "failed", "cancelled"

// A graph loaded on two backends. Calls run on the compiled tier once it is ready (and not pinned
// away), on the first tier before that: nothing waits for the compile. Results of the two tiers
// differ at most by the compiled backend's documented tolerance (docs/backends.md). Cheap to copy
// (shared); every member is safe to call from many threads at once.
//
// A compile error (an op the compiled backend does not take, say) leaves the program on the first
// tier, with the error in report(). Dropping the last copy while the compile runs cancels it and waits
// for the stage in progress to end (for mlir at most one of parse, passes, LLVM, codegen).
class TieredExecutable {
 public:
  // Loads `graph` on the first backend (its errors are raised here) and, unless compile_after_calls > 0,
  // starts the background compile.
  explicit TieredExecutable(const Graph& graph, const TieredOptions& options = {});

  // An ordinary Executable (backend "tiered") that runs on the tier in force: evoxc::run, execute,
  // RunOptions and the bindings take it as any other.
  const Executable& executable() const;
  Tree<Tensor> run(const Tree<Tensor>& inputs, const RunOptions& options = {}) const;
  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs, const RunOptions& options = {}) const;

  // The tier the next call runs on.
  Tier tier() const;
  // Whether the compiled tier is loaded.
  bool ready() const;
  // Starts the background compile now if it has not started (a no-op otherwise).
  void start_compile() const;
  // Starts the compile if needed and waits for it to end, at most `timeout` (nullopt: for as long as it
  // takes). True when the compiled tier is ready; false on timeout, failure or cancellation.
  bool wait(std::optional<std::chrono::duration<double>> timeout = std::nullopt) const;
  // Pins every later call to `tier` (nullopt: automatic again). Pinning Compiled starts the compile if
  // needed and waits for it; BackendError naming the compile's error when it failed.
  void pin(std::optional<Tier> tier) const;
  TierReport report() const;
  // The first tier's Executable, and the compiled tier's once ready.
  const Executable& first() const;
  std::optional<Executable> compiled() const;

  struct State;  // (shared with the "tiered" Executable's implementation)

 private:
  std::shared_ptr<State> state_;
  Executable exe_;
};

// TieredExecutable(trace(fn, specs...), options): the tiered counterpart of build_with.
template <typename F, typename... Specs>
TieredExecutable build_tiered(const TieredOptions& options, F&& fn, const Specs&... specs) {
  return TieredExecutable(trace(std::forward<F>(fn), specs...), options);
}

}  // namespace evoxc
