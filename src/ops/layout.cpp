// OpDefs for layout ops: pad, tril, triu, diagonal, flip, roll, tile, repeat, one_hot, arange, linspace.
#include "registry.h"

namespace evoxc::ops_detail {

void register_layout_ops(OpTable& /*t*/) {}

}  // namespace evoxc::ops_detail
