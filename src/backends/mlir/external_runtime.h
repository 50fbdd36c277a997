// external_call in compiled mlir programs: the kernels an executable resolved at load, and the runtime function
// the call sites' wrappers call (rules_extension.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/mlir/codegen/codegen.h"
#include "evoxc/ir/graph.h"
#include "evoxc/ops/external.h"

namespace evoxc::mlir_backend {

struct ExternalEntry {
  std::string name;
  ResolvedKernel kernel;
};

// Every kernel of `graph`'s external_calls, resolved for "mlir" (then the default slot) when the executable loads:
// a BackendError naming the first that is not registered.
class ExternalTable {
 public:
  explicit ExternalTable(const Graph& graph);
  const ExternalEntry* find(std::string_view name) const;
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<ExternalEntry> entries_;  // sorted by name
};

namespace external_runtime {
// _mlir_ciface_evoxc_external_call and its address, for the JIT linker.
const std::vector<mlir_codegen::RuntimeSymbol>& symbols();
}  // namespace external_runtime

}  // namespace evoxc::mlir_backend
