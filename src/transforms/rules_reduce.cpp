// Transform rules of the reduce family.
#include "transforms/families.h"

namespace evoxc::transforms {

void install_reduce_rules(RuleTables&) {}

}  // namespace evoxc::transforms
