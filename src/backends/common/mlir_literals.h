// MLIR literal text shared by the backends that write MLIR (stablehlo, mlir): ranked tensor types, dense tensor
// constants and the exact value a splat of evoxc's `full` has.
#pragma once

#include <cstddef>
#include <string>

#include "evoxc/core/tensor.h"
#include "evoxc/ir/attribute.h"
#include "evoxc/ir/ir.h"

namespace evoxc::mlir_literals {

// "tensor<3x?xf32>": each static extent, `?` for a symbolic one, then `element` (the dialect's element type).
std::string tensor_type(const Shape& shape, const std::string& element);

// Raw little-endian bytes as MLIR's hex dense form: "0x0A1B..." in quotes.
std::string hex_bytes(const void* data, size_t n);

// The tensor's elements as MLIR's dense attribute: `dense<>` when empty, bools as nested
// true/false lists (i1 has no byte-per-element hex form), every other dtype as hex bytes (exact).
std::string dense(const Tensor& t);

// One element of evoxc's `full(value, dtype)` as the interpreter computes it, so a splat converts
// exactly as the op does.
Tensor full_scalar(const Attribute& value, DType t);

}  // namespace evoxc::mlir_literals
