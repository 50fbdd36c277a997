// Private to the ops layer: the registration table each op family fills, and shared inference checks.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/ops/op_def.h"

namespace evoxc::ops_detail {

// Owns the OpDefs while the registry is being built; the families append in docs order.
class OpTable {
 public:
  OpDef& add(OpDef def);
  std::vector<std::unique_ptr<OpDef>>& defs() { return defs_; }

 private:
  std::vector<std::unique_ptr<OpDef>> defs_;
};

// One call per op family file (elementwise.cpp, reduce.cpp, ...).
void register_elementwise_ops(OpTable& t);
void register_reduce_ops(OpTable& t);
void register_linalg_ops(OpTable& t);
void register_structure_ops(OpTable& t);
void register_creation_ops(OpTable& t);
void register_control_ops(OpTable& t);
// Families of the full catalogue, one file each.
void register_scan_ops(OpTable& t);           // scan.cpp: cumsum, cumprod, cummax, cummin, reduce_logsumexp
void register_decomposition_ops(OpTable& t);  // decomposition.cpp: dot_general, cholesky ... trace
void register_conv_ops(OpTable& t);           // conv.cpp: conv
void register_layout_ops(OpTable& t);         // layout.cpp: pad, tril, triu, diagonal, flip, roll, tile, repeat, ...
void register_indexing_ops(OpTable& t);       // indexing.cpp: gather, scatter, dynamic_slice, dynamic_update_slice
void register_sort_ops(OpTable& t);           // sort.cpp: sort, argsort, top_k, searchsorted
void register_row_switch_ops(OpTable& t);     // row_switch.cpp: row_switch (batch_functions' switch)
void register_postfix_ops(OpTable& t);        // postfix.cpp: postfix_eval (populations of programs as data)
void register_extension_ops(OpTable& t);      // extension.cpp: stablehlo_call, external_call
void register_random_ops(OpTable& t);         // random.cpp: random_bits, random_split, random_fold_in
void register_sparse_ops(OpTable& t);         // sparse.cpp: sparse_validate, sparse_csr_matmul

// "op 'name'", the prefix every inference message starts with.
inline std::string op_label(const std::string& op) { return "op '" + op + "'"; }

// TypeError unless operands[first..] all have the dtype of operands[first].
void require_same_dtype(const std::string& op, std::span<const TensorType> operands, size_t first = 0);

// ShapeError unless `axes` is sorted, free of duplicates and each axis lies in [0, rank).
void check_axes(const std::string& op, const std::string& attr, const std::vector<int64_t>& axes, size_t rank);

// The result shape of a reduction: `axes` (sorted) dropped, or kept as extent 1 with keepdims.
Shape reduced_shape(const Shape& in, const std::vector<int64_t>& axes, bool keepdims);

// ShapeError when a shape attribute has a negative constant extent (the tracer resolves -1).
void check_shape_attr(const std::string& op, const std::string& attr, const Shape& s);

// ---- traits and samples, set by the family helpers ----

// Linear in `operands` jointly (add: {0, 1}), replacing what a family helper set; linear_each
// becomes the same list (it is a superset), so call set_linear_each after this one.
void set_linear(OpDef& d, std::vector<int> operands);
// Linear in each of `operands` alone with the others fixed (multiply: {0, 1}; divide: {0}).
void set_linear_each(OpDef& d, const std::vector<int>& operands);

// The shape of sample operands where any shape will do: (2, 1), so broadcasting meets a unit extent.
Shape sample_shape();
// The sample of an op that needs nothing more: `n` operands of dtype t and sample_shape(), and `attrs`.
SampleFn sample_operands(int n, AttrMap attrs = {});
// One operand of dtype t per shape of `shapes`, and `attrs`.
SampleFn sample_shapes(std::vector<Shape> shapes, AttrMap attrs = {});

}  // namespace evoxc::ops_detail
