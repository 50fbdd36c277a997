// OpDefs for N-d convolution.
#include "registry.h"

namespace evoxc::ops_detail {

void register_conv_ops(OpTable& /*t*/) {}

}  // namespace evoxc::ops_detail
