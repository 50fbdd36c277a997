// Transform rules of the linalg family.
#include "transforms/families.h"

namespace evoxc::transforms {

void install_linalg_rules(RuleTables&) {}

}  // namespace evoxc::transforms
