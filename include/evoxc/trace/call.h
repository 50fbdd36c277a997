// call(): a Graph used as a function inside another trace (its ops inlined into the trace being built).
#pragma once

#include "evoxc/core/tree.h"
#include "evoxc/ir/graph.h"
#include "evoxc/trace/symbolic_tensor.h"

namespace evoxc {

// Inlines `graph` into the trace the `inputs` belong to (the innermost active one) and returns its
// outputs in the graph's output tree. `inputs` must have the graph's input tree (static positions
// None) and each leaf the exact type of the graph's input there (TraceError naming the first path that
// differs): a graph traced for B-sized batches is called with B-sized values. This is how a transformed
// graph (grad, vmap, ...) composes inside another traced function.
Tree<SymbolicTensor> call(const Graph& graph, const Tree<SymbolicTensor>& inputs);

}  // namespace evoxc
