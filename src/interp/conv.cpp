// Interpreter kernels of the conv family (see src/ops/conv.cpp for the ops).
#include "program.h"

namespace evoxc::interp {

bool is_conv_op(std::string_view /*op*/) { return false; }

KernelPtr make_conv_kernel(PrepareCtx& ctx) { ctx.fail("no conv kernel"); }

}  // namespace evoxc::interp
