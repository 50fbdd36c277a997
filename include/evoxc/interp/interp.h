// The interpreter backend: an execution plan prepared once at load, then run many times.
#pragma once

#include <cstdint>
#include <memory>
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

// Runs the plan. `inputs` holds one host tensor per graph input leaf (flattening order);
// dtypes and shapes are checked, symbolic dims bound, and every equality the graph
// relies on is checked: ValidationError naming the input path or the op on a mismatch.
// `outputs` has one slot per output leaf: a defined tensor of the right shape and dtype
// is written in place (no allocation for static shapes); an undefined one is allocated.
// Safe to call concurrently on one Program.
void execute(const Program& program, std::span<const Tensor> inputs, std::span<Tensor> outputs);

// The interpreter's kernel table (RuleTable "interp", keyed by op id), for the coverage
// matrix: has(id) says whether an op has a kernel, deferral(id) why it deliberately has none.
const RuleTableBase& kernels();

// kernels().has(op_id). Transitional: for callers not yet walking kernels().
bool has_kernel(uint32_t op_id);

// Threads used for large tensors (default: hardware concurrency, or EVOXC_NUM_THREADS).
int num_threads();

}  // namespace evoxc::interp
