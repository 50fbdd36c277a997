// mlir lowering rules: the control family.
#include "backends/mlir/emitter.h"

namespace evoxc::mlir_backend {

void add_control_rules(Table& t) { (void)t; }

}  // namespace evoxc::mlir_backend
