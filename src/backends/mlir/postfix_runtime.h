// postfix_eval in compiled mlir programs: a call into the interpreter's PostfixEngine (one engine per primitive
// table and dtype, built on the first call and cached in a slot of the program's data).
#pragma once

#include <vector>

#include "backends/mlir/codegen/codegen.h"

namespace evoxc::mlir_backend::postfix_runtime {

// The C-interface names (_mlir_ciface_evoxc_postfix_eval_<element type>) and their address, for the JIT linker.
const std::vector<mlir_codegen::RuntimeSymbol>& symbols();

}  // namespace evoxc::mlir_backend::postfix_runtime
