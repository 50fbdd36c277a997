// Transform rules of the structure family.
#include "transforms/families.h"

namespace evoxc::transforms {

void install_structure_rules(RuleTables&) {}

}  // namespace evoxc::transforms
