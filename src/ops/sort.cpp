// OpDefs for sort, argsort, top_k and searchsorted.
#include "registry.h"

namespace evoxc::ops_detail {

void register_sort_ops(OpTable& /*t*/) {}

}  // namespace evoxc::ops_detail
