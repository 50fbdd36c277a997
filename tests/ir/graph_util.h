// Hand-built EvoXIR graphs shared by the ir tests (printer, parser, JSON, verifier).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "evoxc/ir/graph.h"

namespace evoxc::testing {

inline TensorType tt(std::vector<DimExpr> dims, DType dt = f32) { return TensorType(dt, Shape(std::move(dims))); }
inline Location loc(std::string file, int line, int col = 0) { return Location{std::move(file), line, col}; }

// The example of the brief: dot, tanh, reduce_sum over two static inputs.
Graph mlp_graph();
// Symbolic extents (B, 2*B+1, floordiv, min/max), a dict input tree, a list output tree
// and static values.
Graph symbolic_graph();
// One op carrying every attribute kind, including NaN payloads, -0.0, empty lists,
// escaped strings and dense tensors.
Graph attrs_graph();
// A multi-result op with two regions, one of which holds a nested region op; region
// ops use values of enclosing blocks; ops without locations; a zero-result op.
Graph regions_graph();
// Two functions; the helper returns nothing and has an odd name.
Graph multi_function_graph();

// Every graph above, named, for tests that run over all of them.
std::vector<std::pair<std::string, Graph>> all_test_graphs();

// Reads a file under EVOXC_TEST_DATA_DIR; empty when missing.
std::string read_test_data(const std::string& relative_path);

}  // namespace evoxc::testing
