// The elementwise kernel ABI: flat loops over contiguous runs, chosen once per op and dtype at load.
#pragma once

#include <array>
#include <cstdint>

#include "evoxc/core/dtype.h"
#include "evoxc/ir/attribute.h"
#include "evoxc/ops/op_def.h"

namespace evoxc::interp {

class PrepareCtx;
class Kernel;

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

// The kernel of a unary or binary elementwise op (its row in elementwise_unary.cpp or
// elementwise_binary.cpp) for an operand dtype; nullptr when the op has no row or no
// kernel for that dtype. `dtype` is the operand type (predicates and comparisons write
// bool). `attrs` are the op's attributes (gelu's approximate, nan_to_num's values), read
// once here, never at run time; `params` receives what the kernel needs of them.
UnaryFn unary_kernel(const OpDef& op, DType dtype, const AttrMap& attrs, UnaryParams* params);
// nan_to_num's replacement values {nan, posinf, neginf} for float dtype `t`: the attributes or numpy's defaults (0,
// the largest and the lowest finite value), each rounded once to `t` (overflow to +-inf). The compiling backends
// write the same constants (one definition of the op's semantics).
std::array<double, 3> nan_to_num_values(DType t, const AttrMap& attrs);
BinaryFn binary_kernel(const OpDef& op, DType dtype);
TernaryFn select_kernel(DType dtype);
TernaryFn clamp_kernel(DType dtype);
UnaryFn convert_kernel(DType from, DType to);
// bitcast_convert between same-width types is a byte copy: no lookup needed.

// The instructions of broadcast.cpp around those kernels: each checks the operand and
// result shapes (numpy broadcasting for binary and ternary ops, equal shapes for unary
// ones), records the run-time checks, marks which operands the result may overwrite, and
// builds the kernel. `fn` is not null.
std::unique_ptr<Kernel> unary_instruction(PrepareCtx& ctx, UnaryFn fn, const UnaryParams& params);
std::unique_ptr<Kernel> binary_instruction(PrepareCtx& ctx, BinaryFn fn);
std::unique_ptr<Kernel> ternary_instruction(PrepareCtx& ctx, TernaryFn fn);

}  // namespace evoxc::interp
