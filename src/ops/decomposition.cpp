// OpDefs for dot_general and the LAPACK-backed linear algebra.
#include "registry.h"

namespace evoxc::ops_detail {

void register_decomposition_ops(OpTable& /*t*/) {}

}  // namespace evoxc::ops_detail
