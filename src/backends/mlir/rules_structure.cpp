// mlir lowering rules: the structure family.
#include "backends/mlir/emitter.h"

namespace evoxc::mlir_backend {

void add_structure_rules(Table& t) { (void)t; }

}  // namespace evoxc::mlir_backend
