// The op function of postfix_eval.
#include "evoxc/trace/postfix.h"

#include "emit.h"
#include "evoxc/core/error.h"

namespace evoxc {

SymbolicTensor postfix_eval(const SymbolicTensor& codes, const SymbolicTensor& args, const SymbolicTensor& consts,
                            const SymbolicTensor& x, const std::string& primitives, SrcLoc loc) {
  if (!codes.defined()) throw TraceError("postfix_eval: use of an undefined (default-constructed) SymbolicTensor");
  return codes.context()->emit1(EVOXC_OP("postfix_eval"), {codes, args, consts, x}, {{"primitives", primitives}}, loc);
}

}  // namespace evoxc
