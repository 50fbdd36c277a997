// A compact, versioned binary encoding of a Graph: the graph inside every artifact (the interpreter's payload, and
// beside the native code of the compiled backends: backends/common/graph_payload.h).
#pragma once

#include <string>
#include <string_view>

#include "evoxc/ir/graph.h"

namespace evoxc::graph_codec {

// The payload layout (version 1; integers are LEB128 varints, signed ones zigzag-coded):
//   "EVXG" version ir_version
//   op-name table: count, names          (ops refer to their index, resolved once by name)
//   location-file table: count, names    (a location refers to index + 1; 0 is unknown)
//   input tree, output tree, statics (attributes)
//   module: name, functions: name, result types, entry block
//   block: argument types, ops; op: name index, operand value ids, result types,
//          attributes, location, regions (blocks)
// Value ids count block arguments and op results per function in definition order, an
// op's results before the contents of its regions (as in .evoxcgraph).
inline constexpr int kVersion = 1;

// InternalError when an op uses a value defined outside its function (an unverified graph).
std::string encode(const Graph& graph);

// Strict and bounds-checked: a truncated, corrupted or hostile payload (bad tags, counts
// larger than the bytes left, out-of-scope value ids, unknown op names, nesting deeper than
// 128) is a PersistenceError naming what is wrong and where, never a crash or an unbounded
// allocation. The result is not verified; the caller runs verify().
Graph decode(std::string_view bytes);

}  // namespace evoxc::graph_codec
