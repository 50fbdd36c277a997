// The graph transforms: vectorize/vmap, jvp, vjp, grad, value_and_grad, jacfwd, jacrev, hessian — Graph in, Graph out.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "evoxc/core/tree.h"
#include "evoxc/ir/graph.h"
#include "evoxc/trace/trace.h"

namespace evoxc {

// in_axes / out_axes: a prefix tree of the graph's input (output) tree. A leaf is the mapped
// axis of every tensor below it (negative counts from the end of the batched value); a None
// node means "not mapped" (in_axes: the input is shared by every batch element; out_axes: the
// output does not depend on the batch, TransformError otherwise). Axes(0) maps everything at 0.
using AxisTree = Tree<int64_t>;

// vectorize(graph): the graph that computes `graph` for every element of a new batch axis.
//  - Each mapped input gets the batch axis inserted at its in_axes position; unmapped inputs
//    keep their spec.
//  - `axis_size` is the batch extent: a DimExpr (constant or symbolic). Without it the batch
//    extent is a fresh symbol "B" (or "B1", "B2", ... when the graph already uses "B"), so
//    one vectorized graph serves every batch size.
//  - Ops whose operands do not depend on the batch are emitted once, unbatched (JAX's rule);
//    every other op goes through its batching rule (transforms/rules.h). An op without one is
//    a TransformError naming the op, its location and the transform.
// The result has the same input and output trees and static values as `graph`, and has been
// through DCE and CSE.
Graph vectorize(const Graph& graph, const AxisTree& in_axes = AxisTree(0), const AxisTree& out_axes = AxisTree(0),
                std::optional<DimExpr> axis_size = std::nullopt);
// vmap is vectorize (sugar: one obvious way per thing).
inline Graph vmap(const Graph& graph, const AxisTree& in_axes = AxisTree(0), const AxisTree& out_axes = AxisTree(0),
                  std::optional<DimExpr> axis_size = std::nullopt) {
  return vectorize(graph, in_axes, out_axes, std::move(axis_size));
}

// jvp(graph): forward mode. Inputs: (primals, tangents) where primals is the graph's input
// tree and tangents the same tree with one tangent of the same spec per floating-point input
// (integer and bool inputs are None there: they have no tangent). Outputs: (outputs,
// output_tangents), output_tangents being the output tree with a tangent per float output
// and None for integer and bool outputs.
Graph jvp(const Graph& graph);

// vjp(graph): reverse mode, as ONE graph. Inputs: (primals, cotangents) — cotangents is the
// output tree with a cotangent per float output (None for integer/bool outputs). Outputs:
// (outputs, input_cotangents) — the input tree with a cotangent per float input (None for
// the others). One graph rather than a forward and a backward graph: the residuals the
// backward pass needs never leave the program (no residual ABI to version or persist), a
// backend compiles one module, and DCE drops the forward outputs a caller does not return.
// Built as JAX does: the jvp graph, then transposition of its linear part.
Graph vjp(const Graph& graph);

// Which arguments grad differentiates: argument indices of the graph's input tuple (one
// entry per argument of the traced function). A single index returns that argument's
// gradient tree; several return a tuple of them.
struct ArgNums {
  std::vector<int64_t> nums{0};
  bool single = true;
  ArgNums() = default;
  ArgNums(int64_t n) : nums{n}, single(true) {}  // NOLINT(google-explicit-constructor)
  ArgNums(std::initializer_list<int64_t> ns) : nums(ns), single(false) {}
  static ArgNums tuple(std::vector<int64_t> ns) {
    ArgNums a;
    a.nums = std::move(ns);
    a.single = false;
    return a;
  }
};

// grad(graph): the gradient of a scalar float output with respect to the arguments `argnums`.
// With has_aux the graph's output is (loss, aux) and the result returns (gradients, aux).
// TransformError when the loss is not a rank-0 float or an argument is not float.
Graph grad(const Graph& graph, const ArgNums& argnums = {}, bool has_aux = false);
// value_and_grad(graph): outputs (loss, gradients), or ((loss, aux), gradients) with has_aux.
Graph value_and_grad(const Graph& graph, const ArgNums& argnums = {}, bool has_aux = false);

// Jacobians of every float output with respect to the arguments `argnums`: for an output of
// shape O and an input of shape I, a tensor of shape O + I. The output tree is the graph's
// output tree with each leaf replaced by its Jacobian (a tuple of them when argnums is a
// tuple). jacfwd pushes a basis of tangents through jvp (vectorized); jacrev pulls a basis of
// cotangents through vjp; hessian is jacfwd(jacrev).
Graph jacfwd(const Graph& graph, const ArgNums& argnums = {});
Graph jacrev(const Graph& graph, const ArgNums& argnums = {});
Graph hessian(const Graph& graph, const ArgNums& argnums = {});

// ---- over traceable functions ----

// A function that builds a Graph from trace arguments (specs and statics): what the
// transforms return when given a function instead of a Graph.
using GraphFunction = std::function<Graph(const std::vector<TraceArg>& args)>;

// vmap over a function: the returned GraphFunction takes the BATCHED specs, strips the
// mapped axis of each to trace `fn` per element, and vectorizes the result with the batch
// extent read from the specs (all mapped extents must agree: TransformError naming the
// first that differs).
GraphFunction vmap(TraceFunction fn, AxisTree in_axes = AxisTree(0), AxisTree out_axes = AxisTree(0));
// The derivative transforms over a function: trace on the given specs, then transform.
GraphFunction grad(TraceFunction fn, ArgNums argnums = {}, bool has_aux = false);
GraphFunction value_and_grad(TraceFunction fn, ArgNums argnums = {}, bool has_aux = false);
GraphFunction jvp(TraceFunction fn);
GraphFunction vjp(TraceFunction fn);
GraphFunction jacfwd(TraceFunction fn, ArgNums argnums = {});
GraphFunction jacrev(TraceFunction fn, ArgNums argnums = {});
GraphFunction hessian(TraceFunction fn, ArgNums argnums = {});

}  // namespace evoxc
