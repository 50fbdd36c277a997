// Private to the transforms layer: what the drivers and public entries share.
#pragma once

#include <optional>
#include <vector>

#include "evoxc/transforms/transforms.h"

namespace evoxc::transforms {

// The axis (or none) of every leaf of `tree` given a prefix tree of axes; TransformError
// naming `what` and the path where the structures differ.
std::vector<std::optional<int64_t>> broadcast_axes(const AxisTree& axes, const TreeDef& tree, const char* what);

// The transformed graph with the original's static values, through CSE and DCE, verified
// (a rule that emitted a malformed graph is an InternalError here, not at run time).
Graph finish_transform(const Graph& g, const AttrMap& statics);

// Strips the mapped axis from every TensorSpec leaf of trace arguments (in_axes a prefix tree of
// the argument tuple); returns the extent all mapped leaves agree on (TransformError naming `what`
// and the first argument that differs, or when nothing is mapped).
DimExpr strip_batch(std::vector<TraceArg>& args, const AxisTree& in_axes, const char* what);

Graph vectorize_impl(const Graph& graph, const AxisTree& in_axes, const AxisTree& out_axes,
                     std::optional<DimExpr> axis_size);

// The jvp graph before CSE/DCE: inputs (primals, tangents), outputs (outputs, tangents).
// vjp transposes it, so it must keep the exact op structure the rules emitted.
// With `tangent_mask`, only the float inputs it marks get a tangent input.
// `linearize`: the graph will be transposed (vjp), so region ops split (JvpContext::linearize).
Graph jvp_raw(const Graph& graph, const std::vector<bool>* tangent_mask = nullptr, bool linearize = false);

}  // namespace evoxc::transforms

namespace evoxc::transforms {
// `op` again over new operands, at the end of the current trace block: emit_like for an op
// without regions; an op with regions is cloned with the values its regions capture mapped
// through `captured` (old value -> its value in the new graph).
std::vector<SymbolicTensor> clone_with_captures(const Operation& op, std::span<const SymbolicTensor> operands,
                                                const std::function<SymbolicTensor(const Value*)>& captured);
// `tree` with the leaves where keep[i] is false replaced by None (leaf order).
TreeDef mask_tree(const TreeDef& tree, const std::vector<bool>& keep);
// Whether each spec is of a float dtype (carries a tangent).
std::vector<bool> float_leaves(const std::vector<TensorSpec>& specs);
}  // namespace evoxc::transforms

namespace evoxc::transforms {
// The vjp of `graph` with cotangent inputs only for the outputs `seeded` marks (float ones):
// inputs (primals, cotangents), outputs the input cotangents of every float input (zeros
// where nothing flows), in leaf order, as a flat tuple.
Graph vjp_seeded(const Graph& graph, const std::vector<bool>& seeded);
// Inlines `g`'s main into the current trace with `args` for its inputs; returns its outputs.
std::vector<SymbolicTensor> inline_graph(const Graph& g, const std::vector<SymbolicTensor>& args);
}  // namespace evoxc::transforms

namespace evoxc::transforms {
// Static values keyed by argument path, moved under `prefix` (jvp and vjp nest the graph's
// inputs as the first element of a new input tuple: "[1]" becomes "[0][1]").
AttrMap prefix_statics(const AttrMap& statics, const std::string& prefix);
}  // namespace evoxc::transforms
