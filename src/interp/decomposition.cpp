// Interpreter kernels of the decomposition family (see src/ops/decomposition.cpp for the ops).
#include "program.h"

namespace evoxc::interp {

bool is_decomposition_op(std::string_view /*op*/) { return false; }

KernelPtr make_decomposition_kernel(PrepareCtx& ctx) { ctx.fail("no decomposition kernel"); }

}  // namespace evoxc::interp
