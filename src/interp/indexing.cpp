// Interpreter kernels of the indexing family (see src/ops/indexing.cpp for the ops).
#include "program.h"

namespace evoxc::interp {

bool is_indexing_op(std::string_view /*op*/) { return false; }

KernelPtr make_indexing_kernel(PrepareCtx& ctx) { ctx.fail("no indexing kernel"); }

}  // namespace evoxc::interp
