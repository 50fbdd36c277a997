// One call's RunOptions as the mlir backend's compiled loops see them: a tick per loop iteration that says
// whether to go on, and the RunLimitError the call then raises.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/runtime_symbol.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc::mlir_backend {

// Compiled while loops and scans call `evoxc_loop_tick(where)` before each body iteration (`where`: the
// loop op and its location, a string in the module). The budget of the call running on this thread (set
// with LoopBudget::Scope, carried into pool tasks by the async runtime's call context) counts the
// iteration and checks the cancel flag and the deadline. Once a limit is hit every later tick of the call
// says stop: every loop (a scan is an scf.while too) ends at its next test, and the call raises the
// RunLimitError when the compiled code returns. Shared by the call's threads: counts are atomic.
class LoopBudget {
 public:
  explicit LoopBudget(const RunOptions& options);
  LoopBudget(const LoopBudget&) = delete;
  LoopBudget& operator=(const LoopBudget&) = delete;

  // Cancelled before the call, or the deadline already passed: RunLimitError.
  void check_start() const;
  // Whether the iteration about to run at `where` may run.
  bool tick(const char* where);
  // RunLimitError for the limit hit, if one was.
  void raise_if_stopped() const;

  // Makes `budget` the calling thread's for its lifetime (and the tasks it submits).
  class Scope {
   public:
    explicit Scope(LoopBudget& budget);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    void* saved_;
  };

 private:
  void stop(const std::string& why);
  std::atomic<int64_t> count_{0};
  int64_t max_count_;
  const std::atomic<bool>* cancelled_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  // Clock sampling as the interpreter's (run_limits::next_clock_stride): every `stride_` ticks, the stride doubling (to
  // 1024) while samples come less than 20 us apart and dropping to 1 when iterations are slow. Races between the call's
  // threads only move a sample by a few ticks.
  std::atomic<int64_t> next_sample_{1}, stride_{1};
  std::atomic<int64_t> last_sample_ns_;
  std::atomic<bool> stopped_{false};
  mutable std::mutex mu_;
  std::string message_;
};

// evoxc_loop_tick, for the JIT linker.
const std::vector<RuntimeSymbol>& loop_budget_symbols();

}  // namespace evoxc::mlir_backend
