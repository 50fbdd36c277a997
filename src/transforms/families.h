// Private to the transforms layer: the family installers that fill the rule tables, and shared emission helpers.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "evoxc/transforms/decompose.h"
#include "evoxc/transforms/rules.h"

namespace evoxc::transforms {

// One per family file (src/transforms/rules_<family>.cpp). Each fills the batching, jvp and
// transpose rules (or deferrals with their reason) of its ops.
void install_elementwise_rules(RuleTables& t);
void install_reduce_rules(RuleTables& t);
void install_structure_rules(RuleTables& t);
void install_layout_rules(RuleTables& t);
void install_indexing_rules(RuleTables& t);
void install_linalg_rules(RuleTables& t);
void install_decomposition_rules(RuleTables& t);
void install_control_rules(RuleTables& t);
void install_random_rules(RuleTables& t);
void install_extension_rules(RuleTables& t);
void install_sparse_rules(RuleTables& t);

// One per family file of decompositions (src/transforms/decompose_<family>.cpp).
void install_linalg_decompositions(DecomposeTable& t);
void install_random_decompositions(DecomposeTable& t);
void install_extension_decompositions(DecomposeTable& t);  // rules_extension.cpp
void install_sparse_decompositions(DecomposeTable& t);     // rules_sparse.cpp

// The op `name` emitted over `operands` with `attrs` in the current trace (no promotion, no
// defaults: the op exactly as given).
std::vector<SymbolicTensor> emit_op(const OpDef& def, std::span<const SymbolicTensor> operands, AttrMap attrs = {});
SymbolicTensor emit_op1(const OpDef& def, std::span<const SymbolicTensor> operands, AttrMap attrs = {});
inline SymbolicTensor emit_op1(const OpDef& def, std::initializer_list<SymbolicTensor> operands, AttrMap attrs = {}) {
  return emit_op1(def, std::span<const SymbolicTensor>(operands.begin(), operands.size()), std::move(attrs));
}

// The OpDef named `name` (a literal), looked up once per call site.
#define EVOXC_TOP(name)                                                \
  ([]() -> const ::evoxc::OpDef& {                                     \
    static const ::evoxc::OpDef& evoxc_op_def = ::evoxc::get_op(name); \
    return evoxc_op_def;                                               \
  }())

// `fn` (op functions over one batch element's operands, of types `row`) vmapped over a new leading batch axis of
// extent `size` — axes[i] is AxisTree(0) for a batched operand, AxisTree::none() for a shared one — and called on
// `args` inside the current trace: how a rule batches a computation it writes itself (a decomposition, a portable
// form) without a batching rule of its own. Results batched at axis 0.
using TracedFn = std::function<std::vector<SymbolicTensor>(std::span<const SymbolicTensor>)>;
std::vector<SymbolicTensor> call_vmapped(const TracedFn& fn, const std::vector<TensorType>& row,
                                         std::vector<Tree<int64_t>> axes, const DimExpr& size,
                                         const std::vector<SymbolicTensor>& args);

// The primal with zero tangents: non-differentiable points held constant (floor, sign), and
// entries of ops with only integer or bool results (the driver never asks those).
JvpResult zero_jvp(JvpContext& ctx, const Operation& op, std::span<const SymbolicTensor> primals,
                   std::span<const SymbolicTensor> tangents);
// A linear op: the op itself applied to the tangents of every operand (zeros where undefined).
JvpResult linear_jvp(JvpContext& ctx, const Operation& op, std::span<const SymbolicTensor> primals,
                     std::span<const SymbolicTensor> tangents);

// A scalar of `v` in dtype `t` (rank 0, shared per block).
SymbolicTensor scalar_like(double v, DType t);
// The sum of `x` over `axes` (sorted, non-negative), keeping x's dtype.
SymbolicTensor reduce_sum_keep(const SymbolicTensor& x, const std::vector<int64_t>& axes, bool keepdims = false);
// a + b where either may be undefined (a symbolic zero): the sum of the defined ones.
SymbolicTensor add_tangents(const SymbolicTensor& a, const SymbolicTensor& b);
// x with its axes permuted so that axis `from` comes to position `to` (numpy.moveaxis).
SymbolicTensor moveaxis(const SymbolicTensor& x, int64_t from, int64_t to);
// The ints of an IntList attribute / an int attribute of `op`.
std::vector<int64_t> attr_ints(const Operation& op, const char* name);
int64_t attr_int(const Operation& op, const char* name);
bool attr_flag(const Operation& op, const char* name, bool fallback = false);

}  // namespace evoxc::transforms
