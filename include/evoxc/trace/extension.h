// The op functions of the extension ops: stablehlo_call, a StableHLO module's @main applied to traced values, and
// external_call, an opaque kernel registered out of band (evoxc/ops/external.h).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/trace/ops.h"

namespace evoxc {

// The results of the @main function of the StableHLO module `module` (text; a JAX export, say) on `operands`, which
// must have @main's argument types (TypeError otherwise). Runs on the xla backend; opaque to the interpreter and
// the transforms. With no operands it is recorded in the innermost active trace.
std::vector<SymbolicTensor> stablehlo_call(const std::string& module, std::span<const SymbolicTensor> operands,
                                           SrcLoc loc = SrcLoc::current());

// The results of kernel `kernel` on `operands`: one value per type of `results` (which may use the operands' symbolic
// extents). The graph records the name and the types only; the implementation is registered out of band
// (register_external_kernel) and resolved when an executable is loaded. vmap adds a batch level (a batch variant, or
// one call per position); no derivative. With no operands it is recorded in the innermost active trace.
std::vector<SymbolicTensor> external_call(const std::string& kernel, std::span<const SymbolicTensor> operands,
                                          std::span<const TensorType> results, SrcLoc loc = SrcLoc::current());

// A portable decomposition of an external kernel: traced op functions over the call's (unbatched) operands that
// compute what the kernel computes, one value per result type. A backend that cannot call host code (xla, iree, the
// StableHLO export) inlines it at lower, with a warning, instead of failing; vmap levels of the call become vmaps of
// it. Registering replaces; an empty function removes it.
using ExternalPortable = std::function<std::vector<SymbolicTensor>(std::span<const SymbolicTensor> operands)>;
void register_external_portable(const std::string& kernel, ExternalPortable portable);
std::shared_ptr<const ExternalPortable> find_external_portable(std::string_view kernel);

}  // namespace evoxc
