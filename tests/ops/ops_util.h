// Helpers shared by the ops-layer tests: short type constructors and sample calls for every op.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/ops/op_def.h"

namespace evoxc::testing {

inline TensorType tt(DType t, Shape s) { return TensorType(t, std::move(s)); }

// Runs infer_result_types for the named op.
std::vector<TensorType> infer(const std::string& op, const std::vector<TensorType>& operands,
                              const AttrMap& attrs = {});

// A valid call of `def` whose dtype-class operands have dtype `t`: the catalogue's own
// sample (OpDef::sample); InternalError when the op has none. Registers the kernel external_call's sample names.
using SampleCall = OpSample;
SampleCall sample_call(const OpDef& def, DType t);

// The graph of one call of `def`: main takes the sample's operands and returns the op's
// results (types from inference).
Graph one_op_graph(const OpDef& def, const SampleCall& call);

// Every DType, in enum order.
std::vector<DType> all_dtypes();

}  // namespace evoxc::testing
