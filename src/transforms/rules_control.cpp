// Transform rules of the control family.
#include "transforms/families.h"

namespace evoxc::transforms {

void install_control_rules(RuleTables&) {}

}  // namespace evoxc::transforms
