// User functions for indexing, sorting and scans: numpy names over gather, scatter, dynamic_slice, sort, cumsum, ...
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "evoxc/trace/ops.h"

namespace evoxc {

// ---- the IR ops, as they are (docs/semantics.md, "Indexing, sorting and scans") ----
// gather: the result is indices.shape[:-1] + the operand's extents not in `axes`; entry k of each index vector
// (the last axis of `indices`) addresses operand axis axes[k]. Indices clamp into range.
SymbolicTensor gather(const SymbolicTensor& a, const SymbolicTensor& indices, std::vector<int64_t> axes,
                      SrcLoc loc = SrcLoc::current());
// scatter: `a` with `updates` (gather's result shape; converted to a's dtype) combined in at gather's positions.
// mode: "set" (last update in row-major order wins), "add", "mul", "min", "max". Out-of-range rows are dropped.
SymbolicTensor scatter(const SymbolicTensor& a, const SymbolicTensor& indices, const Operand& updates,
                       std::vector<int64_t> axes, const std::string& mode = "set", SrcLoc loc = SrcLoc::current());

// ---- numpy indexing ----
// numpy.take: a.shape[:axis] + indices.shape + a.shape[axis+1:]; no axis: over the flattened `a`.
// mode "clip" (default) clamps into [0, n-1], so -1 reads element 0; "wrap" takes indices modulo n (numpy's
// negative indices; needs a static extent).
SymbolicTensor take(const SymbolicTensor& a, const SymbolicTensor& indices, std::optional<int64_t> axis = std::nullopt,
                    const std::string& mode = "clip", SrcLoc loc = SrcLoc::current());
// numpy.take_along_axis: `indices` has a's rank; other axes broadcast against a's. Indices clamp.
SymbolicTensor take_along_axis(const SymbolicTensor& a, const SymbolicTensor& indices, int64_t axis,
                               SrcLoc loc = SrcLoc::current());
// Integer-array indexing a[i0, i1, ...] over the leading len(idx) axes: the indices broadcast together and the
// result is their shape + a.shape[len(idx):]. Indices clamp.
SymbolicTensor index(const SymbolicTensor& a, const std::vector<SymbolicTensor>& idx, SrcLoc loc = SrcLoc::current());
// numpy.put without mutation: a copy of `a` whose flat positions `indices` take `values` (broadcast to indices'
// shape). mode "drop" (default: out-of-range writes are dropped), "clip" or "wrap" (static element count).
SymbolicTensor put(const SymbolicTensor& a, const SymbolicTensor& indices, const Operand& values,
                   const std::string& mode = "drop", SrcLoc loc = SrcLoc::current());
// The inverse of take(a, indices, axis) with accumulation: `updates` has take's result shape; rows with duplicate
// indices add up (numpy.add.at(a, (slice,)*axis + (indices,), updates) without mutation). Out of range: dropped.
SymbolicTensor scatter_add(const SymbolicTensor& a, const SymbolicTensor& indices, const Operand& updates,
                           int64_t axis = 0, SrcLoc loc = SrcLoc::current());

// JAX's x.at[i0, i1, ...]: at(a, {i0, i1}).add(v) is scatter over the leading axes with index(a, {i0, i1})'s
// positions; v broadcasts to that shape. get() is index(); set/add/multiply/min/max return the updated copy.
class IndexUpdate {
 public:
  IndexUpdate(SymbolicTensor a, std::vector<SymbolicTensor> idx) : a_(std::move(a)), idx_(std::move(idx)) {}
  SymbolicTensor get(SrcLoc loc = SrcLoc::current()) const;
  SymbolicTensor set(const Operand& v, SrcLoc loc = SrcLoc::current()) const;
  SymbolicTensor add(const Operand& v, SrcLoc loc = SrcLoc::current()) const;
  SymbolicTensor multiply(const Operand& v, SrcLoc loc = SrcLoc::current()) const;
  SymbolicTensor min(const Operand& v, SrcLoc loc = SrcLoc::current()) const;
  SymbolicTensor max(const Operand& v, SrcLoc loc = SrcLoc::current()) const;

 private:
  SymbolicTensor apply(const Operand& v, const char* mode, const SrcLoc& loc) const;
  SymbolicTensor a_;
  std::vector<SymbolicTensor> idx_;
};
inline IndexUpdate at(const SymbolicTensor& a, std::vector<SymbolicTensor> idx) { return {a, std::move(idx)}; }

// ---- dynamic slices (starts are rank-0 integer tensors or host ints; they clamp so the window fits) ----
SymbolicTensor dynamic_slice(const SymbolicTensor& a, const std::vector<Operand>& starts,
                             const std::vector<int64_t>& sizes, SrcLoc loc = SrcLoc::current());
SymbolicTensor dynamic_update_slice(const SymbolicTensor& a, const Operand& update, const std::vector<Operand>& starts,
                                    SrcLoc loc = SrcLoc::current());

// ---- sorting (ascending, stable, NaN last) ----
// numpy.sort; no axis: over the flattened tensor.
SymbolicTensor sort(const SymbolicTensor& x, std::optional<int64_t> axis = -1, SrcLoc loc = SrcLoc::current());
// Sorts every tensor of `xs` (one shape) along `axis` by the first `num_keys` of them, lexicographically.
std::vector<SymbolicTensor> sort(const std::vector<SymbolicTensor>& xs, int64_t axis = -1, int64_t num_keys = 1,
                                 SrcLoc loc = SrcLoc::current());
// numpy.argsort (stable), int64; no axis: over the flattened tensor.
SymbolicTensor argsort(const SymbolicTensor& x, std::optional<int64_t> axis = -1, SrcLoc loc = SrcLoc::current());
// The k largest along the last axis, descending, and their int64 indices (ties: lower index first; NaN largest).
std::pair<SymbolicTensor, SymbolicTensor> top_k(const SymbolicTensor& x, int64_t k, SrcLoc loc = SrcLoc::current());
// numpy.searchsorted on a sorted 1-D `a`, side "left" or "right"; int64 with v's shape. Both sides promote.
SymbolicTensor searchsorted(const SymbolicTensor& a, const Operand& v, const std::string& side = "left",
                            SrcLoc loc = SrcLoc::current());

// ---- scans (no axis: over the flattened tensor; reverse scans from the end) ----
// cumsum/cumprod use numpy's accumulator: bool and signed ints in int64, unsigned ints in uint64.
SymbolicTensor cumsum(const SymbolicTensor& x, std::optional<int64_t> axis = std::nullopt, bool reverse = false,
                      SrcLoc loc = SrcLoc::current());
SymbolicTensor cumprod(const SymbolicTensor& x, std::optional<int64_t> axis = std::nullopt, bool reverse = false,
                       SrcLoc loc = SrcLoc::current());
SymbolicTensor cummax(const SymbolicTensor& x, std::optional<int64_t> axis = std::nullopt, bool reverse = false,
                      SrcLoc loc = SrcLoc::current());
SymbolicTensor cummin(const SymbolicTensor& x, std::optional<int64_t> axis = std::nullopt, bool reverse = false,
                      SrcLoc loc = SrcLoc::current());
// log(sum(exp(x))) computed stably (scipy.special.logsumexp); ints and bool convert to float32.
SymbolicTensor logsumexp(const SymbolicTensor& x, Axes axes = {}, bool keepdims = false,
                         SrcLoc loc = SrcLoc::current());

}  // namespace evoxc
