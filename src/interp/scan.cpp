// Interpreter kernels of the scan family (see src/ops/scan.cpp for the ops).
#include "program.h"

namespace evoxc::interp {

bool is_scan_op(std::string_view /*op*/) { return false; }

KernelPtr make_scan_kernel(PrepareCtx& ctx) { ctx.fail("no scan kernel"); }

}  // namespace evoxc::interp
