// Decompositions: an op written with other ops, once, for every backend that does not lower it itself — a rule
// table keyed by op id, and the rewrite lower() applies before a backend sees the graph.
//
// A decomposition is an ordinary traced function over the op's operands (the trace layer's op functions:
// evoxc::where, sum, while_loop, ...), recorded at the op's location. It computes what the op computes under
// docs/semantics.md, to the rounding the conformance tolerances allow (e.g. LU's pivots are LAPACK's, its sums
// are taken in another order). A backend states what it lowers natively by the rules in its Capabilities; lower()
// expands every other op that has a decomposition, so each expansion is written here and nowhere else.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "evoxc/ir/graph.h"
#include "evoxc/ops/rule_table.h"
#include "evoxc/trace/symbolic_tensor.h"

namespace evoxc {

// The op's results, one per result of `op` with its exact type, written over `operands` (fresh inputs of the
// op's operand types in a trace of their own). An op with regions never has one.
using DecomposeRule =
    std::function<std::vector<SymbolicTensor>(const Operation& op, std::span<const SymbolicTensor> operands)>;
using DecomposeTable = RuleTable<DecomposeRule, TransformError>;
// The table (built on first use by every family's installer: src/transforms/decompose_<family>.cpp).
const DecomposeTable& decompositions();

// `graph` with every op (at any region depth, in every function) that `native` has no rule for and that has a
// decomposition replaced by its decomposition; what an expansion emits is expanded in turn where `native` lacks
// it. Ops with neither stay as they are (the backend's support check names them). Returns `graph` itself when
// nothing is expanded. The result has the same trees and static values and is verified; InternalError when a
// decomposition returns other types than its op's.
Graph decompose(const Graph& graph, const RuleTableBase& native);

// What a backend lowers, natively or through a decomposition, as the coverage matrix shows it: has(op) when
// `native` has a rule or the op has a decomposition (whose ops the backend lowers; the decompositions' tests check
// that for every backend), a deferral as `native` records it otherwise.
class DecomposedCoverage final : public RuleTableBase {
 public:
  explicit DecomposedCoverage(const RuleTableBase& native) : RuleTableBase(native.name()), native_(native) {}
  bool has(uint32_t id) const override;
  const std::string* deferral(uint32_t id) const override;

 private:
  const RuleTableBase& native_;
};

}  // namespace evoxc
