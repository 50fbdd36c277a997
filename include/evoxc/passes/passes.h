// Graph passes: each is one free function from a Graph to a Graph (src/passes/, one file each).
#pragma once

#include "evoxc/ir/graph.h"

namespace evoxc {

// Dead-code elimination: removes every op (at any region depth) whose results are not used
// by the function's return, directly or through other ops. Block arguments and region
// signatures are kept. Returns `g` itself (sharing its module) when nothing is dead.
Graph dce(const Graph& g);

// Common-subexpression elimination: two ops of one block with the same op, operands,
// attributes and result types compute the same values (EvoXIR ops are pure), so the later
// one's uses are redirected to the earlier one; an op in a region may reuse one of an
// enclosing block. Ops with regions are compared by their regions too. Returns `g` itself
// when nothing changes.
Graph cse(const Graph& g);

// dce then cse in one copy of the module (CSE leaves no new dead code: the operands of a
// dropped duplicate are duplicates of the kept op's, dropped too). What transforms run on the
// graphs they build.
Graph dce_cse(const Graph& g);

}  // namespace evoxc
