// Extension ops: ops whose meaning is code from outside the catalogue. stablehlo_call runs the @main function of a
// StableHLO module (a JAX export, say) on its operands; its signature is read from the module's text.
#pragma once

#include <string_view>
#include <vector>

#include "evoxc/ir/ir.h"

namespace evoxc {

// The argument and result types of `func.func public @main` in StableHLO module text (the pretty form JAX prints or
// the generic one). Static extents and evoxc's dtypes only: a dynamic extent ('?'), a complex, 8-bit float, token or
// other element type, or text without such a function is a TypeError that names `what` and the position.
struct StablehloSignature {
  std::vector<TensorType> inputs;
  std::vector<TensorType> outputs;
};
StablehloSignature parse_stablehlo_signature(std::string_view module_text, std::string_view what = "stablehlo_call");

}  // namespace evoxc
