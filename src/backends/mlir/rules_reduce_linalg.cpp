// mlir lowering rules: the reduce_linalg family.
#include "backends/mlir/emitter.h"

namespace evoxc::mlir_backend {

void add_reduce_linalg_rules(Table& t) { (void)t; }

}  // namespace evoxc::mlir_backend
