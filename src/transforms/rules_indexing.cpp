// Transform rules of the indexing family.
#include "transforms/families.h"

namespace evoxc::transforms {

void install_indexing_rules(RuleTables&) {}

}  // namespace evoxc::transforms
