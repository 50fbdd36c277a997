// Operand-less ops (arange, linspace, a splat's element) evaluated on the interpreter at lowering time, so that a
// backend embeds evoxc's own values as a constant instead of re-deriving the formula.
#pragma once

#include "evoxc/core/tensor.h"
#include "evoxc/ir/ir.h"

namespace evoxc::backends {

// The one result of the op `def` with `attrs`, which takes no operands and has the static result type `type`.
Tensor fold_on_interp(const OpInfo& def, const TensorType& type, const AttrMap& attrs);
inline Tensor fold_on_interp(const Operation& op) {
  return fold_on_interp(op.info(), op.result(0)->type(), op.attributes());
}

}  // namespace evoxc::backends
