// The elementwise kernel ABI: flat loops over contiguous runs, chosen once per op and dtype at load.
#pragma once

#include <cstdint>
#include <string_view>

#include "evoxc/core/dtype.h"
#include "evoxc/ir/attribute.h"

namespace evoxc::interp {

// Per-op constants copied from attributes at load (nan_to_num's replacements, ...).
struct UnaryParams {
  double a = 0, b = 0, c = 0;
};

// out[i] = f(in[i]) for i in [0, n). `in` and `out` may be the same buffer (in place).
using UnaryFn = void (*)(const void* in, void* out, int64_t n, const UnaryParams& params);
// out[i] = f(a[i * a_step], b[i * b_step]); a_step and b_step are 0 (a broadcast scalar)
// or 1 (walks the array). `out` may alias `a` or `b` when that operand's step is 1.
using BinaryFn = void (*)(const void* a, int64_t a_step, const void* b, int64_t b_step, void* out, int64_t n);
// The same with three operands (select: pred, on_true, on_false; clamp: x, lo, hi).
using TernaryFn = void (*)(const void* a, int64_t a_step, const void* b, int64_t b_step, const void* c, int64_t c_step,
                           void* out, int64_t n);

// Kernel lookup; nullptr when the op has no kernel for that dtype. `dtype` is the operand
// type (comparisons write bool). `attrs` are the op's attributes (gelu's approximate,
// nan_to_num's values), read once here, never at run time.
UnaryFn unary_kernel(std::string_view op, DType dtype, const AttrMap& attrs, UnaryParams* params);
BinaryFn binary_kernel(std::string_view op, DType dtype);
TernaryFn select_kernel(DType dtype);
TernaryFn clamp_kernel(DType dtype);
UnaryFn convert_kernel(DType from, DType to);
// bitcast_convert between same-width types is a byte copy: no lookup needed.

// Whether an op name is handled by this file (for has_kernel and the coverage matrix).
bool is_elementwise_op(std::string_view op);

}  // namespace evoxc::interp
