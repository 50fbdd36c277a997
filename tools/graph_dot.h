// Graphviz DOT text for a graph's main function (`evoxc dot`).
#pragma once

#include <string>

#include "evoxc/ir/graph.h"

namespace evoxc::cli {

// One node per input leaf (its path and type), per op of main's entry block (its name and
// result types; an op with regions says how many, their contents are not drawn) and per
// output leaf; an edge per operand, labelled with the result number when the producing
// op has several results.
std::string graph_to_dot(const Graph& graph);

}  // namespace evoxc::cli
