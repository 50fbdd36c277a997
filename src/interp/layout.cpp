// Interpreter kernels of the layout family (see src/ops/layout.cpp for the ops).
#include "program.h"

namespace evoxc::interp {

bool is_layout_op(std::string_view /*op*/) { return false; }

KernelPtr make_layout_kernel(PrepareCtx& ctx) { ctx.fail("no layout kernel"); }

}  // namespace evoxc::interp
