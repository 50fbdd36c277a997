// OpDefs for cumsum, cumprod, cummax, cummin and reduce_logsumexp.
#include "registry.h"

namespace evoxc::ops_detail {

void register_scan_ops(OpTable& /*t*/) {}

}  // namespace evoxc::ops_detail
