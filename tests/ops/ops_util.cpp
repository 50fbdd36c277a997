// Helpers of the ops-layer tests: inference by op name, every dtype, and the catalogue's sample calls.
#include "ops/ops_util.h"

#include <cstring>

#include "evoxc/ops/external.h"
#include "evoxc/trace/extension.h"

namespace evoxc::testing {

namespace {

// The kernel external_call's sample names (src/ops/extension.cpp): a copy of its one operand, in the default slot,
// with the same copy as its portable decomposition.
void register_sample_kernel() {
  static const bool done = [] {
    register_external_kernel("evoxc.test.copy", [](std::span<const ExternalBuffer> in, std::span<ExternalBuffer> out) {
      std::memcpy(out[0].data, in[0].data, static_cast<size_t>(in[0].numel()) * size_of(in[0].dtype));
    });
    register_external_portable("evoxc.test.copy",
                               [](std::span<const SymbolicTensor> x) { return std::vector<SymbolicTensor>{x[0]}; });
    return true;
  }();
  (void)done;
}

}  // namespace

std::vector<TensorType> infer(const std::string& op, const std::vector<TensorType>& operands, const AttrMap& attrs) {
  return infer_result_types(get_op(op), operands, attrs);
}

std::vector<DType> all_dtypes() {
  std::vector<DType> out;
  for (int i = 0; i < kNumDTypes; ++i) out.push_back(static_cast<DType>(i));
  return out;
}

Graph one_op_graph(const OpDef& def, const SampleCall& call) { return sample_graph(def, call); }

SampleCall sample_call(const OpDef& def, DType t) {
  if (!def.sample) throw InternalError("op '" + def.name + "' has no sample call");
  register_sample_kernel();
  return def.sample(t);
}

}  // namespace evoxc::testing
