// Private to the trace layer: result types of attribute-free ops, remembered across traces.
#pragma once

#include <vector>

#include "evoxc/ir/builder.h"
#include "evoxc/ops/op_def.h"

namespace evoxc::trace_internal {

// Appends `op` over `operands` (an op without attributes or regions) through `b`. Its
// result types come from a process-wide memo of earlier inferences of the same op over
// operands of the same types when there is one; otherwise Builder::create infers them
// (raising its ShapeError/TypeError) and the memo remembers a success.
//
// Inference is a pure function of the op, the operand types and the attributes, so the
// memo changes no result; it exists because a workload traces hundreds of small programs
// over the same few types, and inference (validation, broadcasting, temporaries) was the
// largest cost of tracing. The memo is a fixed-size, insert-only, lock-free table: lookups
// take no lock, entries are immutable once published and live until exit, and once the
// table is full new signatures are simply not remembered.
Operation* create_memoized(Builder& b, const OpDef& op, std::span<Value* const> operands);

// The number of signatures remembered so far (for tests).
size_t memoized_signatures();

}  // namespace evoxc::trace_internal
