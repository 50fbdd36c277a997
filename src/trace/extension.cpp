// The op functions of the extension ops (include/evoxc/trace/extension.h).
#include "evoxc/trace/extension.h"

#include <map>
#include <mutex>

#include "evoxc/core/error.h"
#include "evoxc/ops/external.h"
#include "trace/emit.h"

namespace evoxc {

std::vector<SymbolicTensor> stablehlo_call(const std::string& module, std::span<const SymbolicTensor> operands,
                                           SrcLoc loc) {
  for (const SymbolicTensor& x : operands)
    if (!x.defined()) throw TraceError("stablehlo_call: use of an undefined (default-constructed) SymbolicTensor");
  TraceContext& ctx = operands.empty() ? TraceContext::current() : *operands.front().context();
  return ctx.emit(EVOXC_OP("stablehlo_call"), operands, {{"module", module}}, loc);
}

std::vector<SymbolicTensor> external_call(const std::string& kernel, std::span<const SymbolicTensor> operands,
                                          std::span<const TensorType> results, SrcLoc loc) {
  for (const SymbolicTensor& x : operands)
    if (!x.defined()) throw TraceError("external_call: use of an undefined (default-constructed) SymbolicTensor");
  if (kernel.empty()) throw TraceError("external_call: the kernel needs a name");
  if (results.empty()) throw TraceError("external_call '" + kernel + "': give at least one result type");
  TraceContext& ctx = operands.empty() ? TraceContext::current() : *operands.front().context();
  return ctx.emit(EVOXC_OP("external_call"), operands,
                  {{"kernel", kernel}, {"results", external_results_text(results)}}, loc);
}

namespace {

struct Portables {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const ExternalPortable>, std::less<>> fns;
};

Portables& portables() {
  static Portables p;
  return p;
}

}  // namespace

void register_external_portable(const std::string& kernel, ExternalPortable portable) {
  if (kernel.empty()) throw ValidationError("register_external_portable: the kernel's name must not be empty");
  Portables& p = portables();
  std::lock_guard<std::mutex> lk(p.mu);
  if (portable)
    p.fns[kernel] = std::make_shared<const ExternalPortable>(std::move(portable));
  else
    p.fns.erase(kernel);
}

std::shared_ptr<const ExternalPortable> find_external_portable(std::string_view kernel) {
  Portables& p = portables();
  std::lock_guard<std::mutex> lk(p.mu);
  auto it = p.fns.find(kernel);
  return it == p.fns.end() ? nullptr : it->second;
}

}  // namespace evoxc
