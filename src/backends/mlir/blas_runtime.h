// Functions compiled mlir programs call for work better done by a library: float32/float64 matrix products
// through BLAS's gemm.
#pragma once

#include <vector>

#include "backends/mlir/codegen/codegen.h"

namespace evoxc::mlir_backend::blas_runtime {

// The C-interface names (_mlir_ciface_evoxc_gemm_f32, ..._f64) and their addresses, for the JIT linker.
const std::vector<mlir_codegen::RuntimeSymbol>& symbols();

}  // namespace evoxc::mlir_backend::blas_runtime
