// Control op family: the block terminator `return` (structured control flow ops join it later).
#include "ops/registry.h"

namespace evoxc::ops_detail {

void register_control_ops(OpTable& t) {
  OpDef d;
  d.name = "return";
  d.category = OpCategory::Terminator;
  d.min_operands = 0;
  d.max_operands = -1;
  d.operand_dtypes = DTypeClass::Any;
  d.infer = [](std::span<const TensorType>, const AttrMap&) { return std::vector<TensorType>{}; };
  d.doc = "ends a block; its operands (any number, any dtype) are the block's results; no results of its own";
  t.add(std::move(d));
}

}  // namespace evoxc::ops_detail
