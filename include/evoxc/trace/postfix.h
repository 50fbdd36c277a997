// The op function of postfix_eval: a population of postfix programs, held as data, evaluated over shared cases.
#pragma once

#include <string>

#include "evoxc/ops/postfix.h"
#include "evoxc/trace/ops.h"

namespace evoxc {

// Row p of the result is program p (codes[p], args[p], consts[p], include/evoxc/ops/postfix.h)
// over every case of x: codes and args (P, L) int32, consts (P, C) and x (V, cases...) of one dtype,
// result (P, cases...). `primitives` is the table codes 3, 4, ... name ("add=$0 $1 add;...").
SymbolicTensor postfix_eval(const SymbolicTensor& codes, const SymbolicTensor& args, const SymbolicTensor& consts,
                            const SymbolicTensor& x, const std::string& primitives, SrcLoc loc = SrcLoc::current());

}  // namespace evoxc
