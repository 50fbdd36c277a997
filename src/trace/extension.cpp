// The op functions of the extension ops (include/evoxc/trace/extension.h).
#include "evoxc/trace/extension.h"

#include "trace/emit.h"

namespace evoxc {

std::vector<SymbolicTensor> stablehlo_call(const std::string& module, std::span<const SymbolicTensor> operands,
                                           SrcLoc loc) {
  for (const SymbolicTensor& x : operands)
    if (!x.defined()) throw TraceError("stablehlo_call: use of an undefined (default-constructed) SymbolicTensor");
  TraceContext& ctx = operands.empty() ? TraceContext::current() : *operands.front().context();
  return ctx.emit(EVOXC_OP("stablehlo_call"), operands, {{"module", module}}, loc);
}

}  // namespace evoxc
