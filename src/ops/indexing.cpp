// OpDefs for gather, scatter, dynamic_slice and dynamic_update_slice.
#include "registry.h"

namespace evoxc::ops_detail {

void register_indexing_ops(OpTable& /*t*/) {}

}  // namespace evoxc::ops_detail
