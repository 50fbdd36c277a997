// The interpreter backend: an execution plan prepared once at load, then run many times.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "evoxc/core/tensor.h"
#include "evoxc/ir/graph.h"
#include "evoxc/ops/rule_table.h"

namespace evoxc::interp {

// The load-time plan: a flat instruction list with a kernel chosen per op and dtype,
// value shapes (precomputed when static), buffer liveness and reuse, and in-place
// updates where legal. Immutable, so one Program may run on many threads at once.
class Program;

// Builds the plan. BackendError naming the op and its location when an op has no kernel.
std::shared_ptr<const Program> prepare(const Graph& graph);

// Limits on one call's loop work: the interpreter's view of pipeline's RunOptions. Every
// loop kernel (while_loop, scan, and so fori_loop) checks them before each iteration of its
// body, at any region depth; a limit hit is a RunLimitError naming the loop op and its
// location. Loop-free work between two iterations (one large matmul) is never interrupted.
struct RunLimits {
  // The call stops once steady_clock passes this. Checked at the start of the call, then
  // sampled at loop iterations, adaptively:
  // every iteration while iterations are slow (>= ~20 us apart), at most every 1024 when fast.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Body iterations of all loops of the call counted together (nested loops included); the
  // iteration that would exceed it is not run. 0: unlimited.
  int64_t max_loop_iterations = 0;
  // Read (relaxed) before every iteration and once at the start of the call; another thread
  // sets it to stop the call. Must outlive the call. nullptr: not cancellable.
  const std::atomic<bool>* cancelled = nullptr;

  bool unlimited() const { return !deadline && max_loop_iterations <= 0 && cancelled == nullptr; }
};

// Runs the plan. `inputs` holds one host tensor per graph input leaf (flattening order);
// dtypes and shapes are checked, symbolic dims bound, and every equality the graph
// relies on is checked: ValidationError naming the input path or the op on a mismatch.
// `outputs` has one slot per output leaf: a defined tensor of the right shape and dtype
// is written in place (no allocation for static shapes); an undefined one is allocated.
// Safe to call concurrently on one Program.
void execute(const Program& program, std::span<const Tensor> inputs, std::span<Tensor> outputs);
// The same under `limits`; with unlimited limits it is the call above. A limit hit throws
// RunLimitError; what the call allocated is freed and the Program stays usable.
void execute(const Program& program, std::span<const Tensor> inputs, std::span<Tensor> outputs,
             const RunLimits& limits);

// What execute() checks before any kernel runs: the inputs' dtypes and shapes, the symbols they
// bind, every extent condition the graph's ops rely on (a convolution's window within its padded
// input, equal contracting extents, ...) and every value's extent (not negative, within limits);
// ValidationError exactly as execute() raises it. No kernel runs and no buffer is sized: a
// backend that runs the same graph as compiled code calls it so bad extents fail there as here
// (docs/semantics.md). Checks inside control-flow regions run with their regions and are not
// covered.
void check_shapes(const Program& program, std::span<const Tensor> inputs);

// The interpreter's kernel table (RuleTable "interp", keyed by op id), for the coverage
// matrix: has(id) says whether an op has a kernel, deferral(id) why it deliberately has none.
const RuleTableBase& kernels();

// Threads used for large tensors (default: hardware concurrency, or EVOXC_NUM_THREADS).
int num_threads();

}  // namespace evoxc::interp
