// StableHLO export: a verified graph as StableHLO MLIR text (the input every compiler path shares).
#pragma once

#include <string>

#include "evoxc/ir/graph.h"

namespace evoxc {

// The graph as one StableHLO module whose public @main takes the input leaves and returns the
// output leaves in flattening order (the same as lower(graph, "stablehlo").text()). Ops use the
// generic MLIR form ("stablehlo.add"(...) : (...) -> ...); symbolic extents print as '?', their
// values read from the inputs with get_dimension_size. BackendError naming the op, its location
// and the reason for an op StableHLO cannot express (see the stablehlo column of docs/ops.md).
std::string export_stablehlo(const Graph& graph);

}  // namespace evoxc
