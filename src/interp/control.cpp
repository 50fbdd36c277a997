// Interpreter kernels of the control family (see src/ops/control.cpp for the ops).
#include "program.h"

namespace evoxc::interp {

bool is_control_op(std::string_view /*op*/) { return false; }

KernelPtr make_control_kernel(PrepareCtx& ctx) { ctx.fail("no control kernel"); }

}  // namespace evoxc::interp
