// A process-wide memo of inferred result types for attribute-free, region-free ops, shared by
// the tracer (Builder emission) and the verifier.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "evoxc/ops/op_def.h"

namespace evoxc {

// Inference is a pure function of the op, its operand types and its attributes, so a memo
// changes no result; it exists because a search traces and verifies hundreds of small
// programs over the same few types, and inference (validation, broadcasting, temporaries)
// was the largest cost of both. Only ops with no attributes, no regions and at most
// kMemoMaxOperands operands are memoized. The table is fixed-size, insert-only and
// lock-free: lookups take no lock, entries are immutable once published and live until
// exit, and once it is full new signatures are simply not remembered. Failed inferences
// are never remembered, so errors are raised every time.
inline constexpr size_t kMemoMaxOperands = 3;

// Whether an op call of this shape may use the memo.
inline bool memoizable(const OpDef& op, size_t num_operands, bool has_attrs) {
  return !has_attrs && op.num_regions == 0 && num_operands <= kMemoMaxOperands;
}
// The remembered result types, or nullptr.
const std::vector<TensorType>* memoized_result_types(const OpDef& op, std::span<const TensorType* const> operands);
// Remembers a successful inference.
void remember_result_types(const OpDef& op, std::span<const TensorType* const> operands,
                           const std::vector<TensorType>& results);
// The number of signatures remembered so far (for tests).
size_t memoized_signatures();

}  // namespace evoxc
