// Interpreter kernels of the sort family (see src/ops/sort.cpp for the ops).
#include "program.h"

namespace evoxc::interp {

bool is_sort_op(std::string_view /*op*/) { return false; }

KernelPtr make_sort_kernel(PrepareCtx& ctx) { ctx.fail("no sort kernel"); }

}  // namespace evoxc::interp
