// StableHLO lowering rules: the reduce_linalg family.
#include "backends/stablehlo/emitter.h"

namespace evoxc::stablehlo {

void add_reduce_linalg_rules(Table& t) { (void)t; }

}  // namespace evoxc::stablehlo
