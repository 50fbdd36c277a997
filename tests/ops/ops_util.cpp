// Helpers of the ops-layer tests: inference by op name, every dtype, and the catalogue's sample calls.
#include "ops/ops_util.h"

namespace evoxc::testing {

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
  return def.sample(t);
}

}  // namespace evoxc::testing
