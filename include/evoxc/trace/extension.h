// The op functions of the extension ops: stablehlo_call, a StableHLO module's @main applied to traced values.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "evoxc/trace/ops.h"

namespace evoxc {

// The results of the @main function of the StableHLO module `module` (text; a JAX export, say) on `operands`, which
// must have @main's argument types (TypeError otherwise). Runs on the xla backend; opaque to the interpreter and
// the transforms. With no operands it is recorded in the innermost active trace.
std::vector<SymbolicTensor> stablehlo_call(const std::string& module, std::span<const SymbolicTensor> operands,
                                           SrcLoc loc = SrcLoc::current());

}  // namespace evoxc
