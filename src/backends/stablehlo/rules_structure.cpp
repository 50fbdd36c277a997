// StableHLO lowering rules: the structure family.
#include "backends/stablehlo/emitter.h"

namespace evoxc::stablehlo {

void add_structure_rules(Table& t) { (void)t; }

}  // namespace evoxc::stablehlo
