// StableHLO lowering rules: the control family.
#include "backends/stablehlo/emitter.h"

namespace evoxc::stablehlo {

void add_control_rules(Table& t) { (void)t; }

}  // namespace evoxc::stablehlo
