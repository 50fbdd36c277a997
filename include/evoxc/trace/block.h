// evoxc::block_call: a custom op inside a traced function. Its portable body is an ordinary traced function; the
// graph records the block's name and that body, so it runs anywhere. A backend runs an implementation registered
// under the name (evoxc/ops/block.h) where it has one, and the body otherwise; compiled backends and the transforms
// (vmap, jvp, grad) work on the body.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "evoxc/ops/block.h"
#include "evoxc/trace/ops.h"

namespace evoxc {

using BlockBody = std::function<std::vector<SymbolicTensor>(const std::vector<SymbolicTensor>& operands)>;

// Emits block_call `name` over `operands`, its region traced from `body` (called once, over fresh values of the
// operands' types). Returns the body's results. TraceError for an empty name or a body that returns nothing.
std::vector<SymbolicTensor> block_call(const std::string& name, const BlockBody& body,
                                       const std::vector<SymbolicTensor>& operands, SrcLoc loc = SrcLoc::current());

}  // namespace evoxc
