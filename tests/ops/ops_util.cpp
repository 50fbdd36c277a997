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

Graph one_op_graph(const OpDef& def, const SampleCall& call) {
  std::vector<TensorType> out = infer_result_types(def, call.operands, call.attrs);
  auto module = std::make_shared<Module>();
  Function& f = module->add_function("main");
  std::vector<Value*> args;
  for (const auto& ty : call.operands) args.push_back(f.entry().add_argument(ty));
  Operation* op = f.entry().append(def, args, out, call.attrs);
  std::vector<Value*> results;
  for (const auto& r : op->results()) results.push_back(r.get());
  f.entry().append(get_op("return"), results, {});
  f.result_types() = out;
  return Graph(module, TreeDef::tuple(std::vector<TreeDef>(call.operands.size(), TreeDef(LeafMark{}))),
               TreeDef::tuple(std::vector<TreeDef>(out.size(), TreeDef(LeafMark{}))));
}

SampleCall sample_call(const OpDef& def, DType t) {
  if (!def.sample) throw InternalError("op '" + def.name + "' has no sample call");
  return def.sample(t);
}

}  // namespace evoxc::testing
