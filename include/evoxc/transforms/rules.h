// The transform rule tables (batching, jvp, transpose), keyed by op id, and the contexts a rule emits through.
//
// A rule is written with the ordinary op functions of the trace layer (evoxc::add, sum,
// reshape, ...) over SymbolicTensors: a transform runs as a trace of the new graph, with the
// original op's location as the active LocationScope, so every op a rule emits carries the
// location of the op it came from. Families install their rules with the helpers below.
#pragma once

#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "evoxc/ops/rule_table.h"
#include "evoxc/trace/ops.h"

namespace evoxc::transforms {

// ---------------------------------------------------------------- shared

// Emits `op` again over new operands with the given attributes (its regions, if any, are
// cloned with captured values remapped through `map`), at the op's location. Result types
// come from inference.
std::vector<SymbolicTensor> emit_like(const Operation& op, std::span<const SymbolicTensor> operands,
                                      const AttrMap& attrs);
inline std::vector<SymbolicTensor> emit_like(const Operation& op, std::span<const SymbolicTensor> operands) {
  return emit_like(op, operands, op.attributes());
}
// zeros of a type (a fresh `full` op).
SymbolicTensor zeros(const TensorType& t);
// Whether values of this dtype carry tangents (the float dtypes).
bool has_tangent(DType t);
// Sums `ct` (of a broadcast shape) down to `target`'s shape: the transpose of numpy broadcasting.
SymbolicTensor unbroadcast(const SymbolicTensor& ct, const TensorType& target);
// Normalises a possibly negative axis against `rank`; TransformError naming `what` when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* what);

// ---------------------------------------------------------------- batching (vmap)

// A value of the vectorized graph: when `batched`, axis 0 is the batch axis and the rest is
// the original value's shape; otherwise it is the original value itself (shared by every
// batch element). The driver keeps the batch axis at 0, so rules never search for it.
struct BatchArg {
  SymbolicTensor v;
  bool batched = false;
};

class BatchContext {
 public:
  virtual ~BatchContext() = default;
  // The batch extent.
  virtual const DimExpr& size() const = 0;
  // The value with its batch axis (broadcast to the batch extent when unbatched).
  SymbolicTensor materialize(const BatchArg& a) const;
  // `a` with rank `rank + 1` (batched) by inserting unit axes after the batch axis: aligns a
  // batched operand of lower rank for numpy broadcasting against the others.
  SymbolicTensor align_rank(const BatchArg& a, size_t rank) const;
  // Vectorizes the block of a region op into the block being built (a region of the new op,
  // pushed on the trace): `args` are the new block's arguments with their batch status; the
  // result is what the block returns. Values captured from enclosing scopes keep their
  // batch status.
  virtual std::vector<BatchArg> batch_block(const Block& block, std::span<const BatchArg> args) = 0;
  // Whether `block` (with these arguments) computes anything batched: its returned values.
  // (Dry run: emits nothing.)
  virtual std::vector<bool> batched_returns(const Block& block, const std::vector<bool>& args_batched) = 0;
  // The batch status of a value from an enclosing scope (a capture of a region).
  virtual BatchArg lookup(const Value* v) const = 0;
};

// Returns the op's results in the vectorized graph. Called only when some operand (or a
// value a region captures) is batched. A result that does not depend on the batch may be
// returned unbatched (control flow does this per carry); never the other way round:
// batched_returns, the dry run, counts every result of such an op as batched.
using BatchRule =
    std::function<std::vector<BatchArg>(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args)>;
using BatchTable = RuleTable<BatchRule, TransformError>;
// The table (built on first use by every family's installer).
const BatchTable& batch_rules();

// ---------------------------------------------------------------- jvp (forward mode)

// A tangent is an undefined SymbolicTensor where it is a symbolic zero (no ops emitted).
class JvpContext {
 public:
  virtual ~JvpContext() = default;
  // The original op over the new primal operands (the primal outputs); an op with regions is
  // cloned with its captures remapped to their primals.
  virtual std::vector<SymbolicTensor> primal(const Operation& op, std::span<const SymbolicTensor> primals) = 0;
  // The tangent, or zeros of `type` where it is a symbolic zero.
  static SymbolicTensor instantiate(const SymbolicTensor& tangent, const TensorType& type);
  // jvp of a region's block into the block being built: `primals` and `tangents` are the
  // new block's values for the old block's arguments; returns (primal returns, tangent
  // returns), tangents undefined where zero. Captured values use their outer tangents.
  virtual std::pair<std::vector<SymbolicTensor>, std::vector<SymbolicTensor>> jvp_block(
      const Block& block, std::span<const SymbolicTensor> primals, std::span<const SymbolicTensor> tangents) = 0;
  // Which of `block`'s returns have a non-zero tangent given which arguments do (dry run).
  virtual std::vector<bool> nonzero_returns(const Block& block, const std::vector<bool>& args_nonzero) = 0;
  // The tangent of a value from an enclosing scope (undefined when zero).
  virtual SymbolicTensor tangent_of(const Value* v) const = 0;
  // The primal of a value from an enclosing scope in the new graph.
  virtual SymbolicTensor primal_of(const Value* v) const = 0;
  // Whether a value of the new graph is a tangent the driver bound (so a region that captures
  // it from an enclosing scope uses a tangent).
  virtual bool is_tangent(const Value* v) const = 0;
  // Whether this jvp will be transposed (reverse mode): then an op with regions must keep its
  // primal and tangent parts in separate ops (the tangent one linear in the tangents, the
  // residuals it needs computed by the primal one). Forward mode keeps them in one op: a scan
  // then carries its tangent beside the primal instead of storing residuals per iteration.
  virtual bool linearize() const = 0;
};

struct JvpResult {
  std::vector<SymbolicTensor> primals;
  std::vector<SymbolicTensor> tangents;  // undefined: zero
};
// Called only when some operand (or captured value) has a non-zero tangent. Tangent
// computations must be LINEAR in the tangents (ops listed in their OpDef's linear traits,
// applied to tangents only in those operands): reverse mode transposes exactly these ops.
using JvpRule = std::function<JvpResult(JvpContext& ctx, const Operation& op, std::span<const SymbolicTensor> primals,
                                        std::span<const SymbolicTensor> tangents)>;
using JvpTable = RuleTable<JvpRule, TransformError>;
const JvpTable& jvp_rules();

// ---------------------------------------------------------------- transpose (reverse mode)

class TransposeContext {
 public:
  virtual ~TransposeContext() = default;
  // Transposes a region's block into the block being built: `linear[i]` says which block
  // arguments are linear; `args` holds the new values of the non-linear arguments (undefined
  // for linear ones); `cts` the cotangents of the block's returns (undefined: zero). Returns
  // the cotangents of the linear arguments (undefined: zero) and, in `captured_cts`, those
  // of linear values captured from enclosing scopes.
  virtual std::vector<SymbolicTensor> transpose_block(
      const Block& block, const std::vector<bool>& linear, std::span<const SymbolicTensor> args,
      std::span<const SymbolicTensor> cts, std::unordered_map<const Value*, SymbolicTensor>& captured_cts) = 0;
  // Whether a value (of the graph being transposed) is linear.
  virtual bool is_linear(const Value* v) const = 0;
  // The new value of a non-linear value from an enclosing scope.
  virtual SymbolicTensor forward_of(const Value* v) const = 0;
  // Adds a cotangent for a linear value of an enclosing scope that the op being transposed
  // captures in its regions (control flow's transposes return these as extra results).
  virtual void add_cotangent(const Value* v, const SymbolicTensor& ct) = 0;
};

// Returns one cotangent per operand of `op` (undefined for non-linear operands and zero
// cotangents). `operands` holds the forward values of the non-linear operands (undefined for
// the linear ones, whose types are op.operand(i)->type()); `cts` one cotangent per result
// (undefined: zero; not all undefined).
using TransposeRule = std::function<std::vector<SymbolicTensor>(
    TransposeContext& ctx, const Operation& op, std::span<const SymbolicTensor> operands,
    const std::vector<bool>& linear, std::span<const SymbolicTensor> cts)>;
using TransposeTable = RuleTable<TransposeRule, TransformError>;
const TransposeTable& transpose_rules();

// Before it transposes an op, the driver checks that the op is linear in the operands that
// carry tangents, by its OpDef's traits (linear_operands jointly, linear_each one at a time).
// An op whose linearity depends on its attributes (scatter: linear in the operand and the
// updates jointly for mode "add", and for "set", but not for "mul", so its OpDef lists none)
// registers a predicate here, asked instead of the traits.
using LinearityFn = std::function<bool(const Operation& op, const std::vector<int>& linear_operands)>;
using LinearityTable = RuleTable<LinearityFn, TransformError>;
const LinearityTable& linearity_rules();

// The vjp column of the coverage matrix, derived from the tables above: reverse mode through
// an op needs its jvp rule and, when the op itself can carry tangents linearly (its traits,
// a linearity predicate, or control flow), its transpose rule. Deferrals of either are shown.
const RuleTableBase& vjp_coverage();

// ---------------------------------------------------------------- family installers

// Each family file (src/transforms/rules_*.cpp) fills the three tables for its ops. The
// tables are built once, in this order, by the first lookup.
struct RuleTables {
  BatchTable& batch;
  JvpTable& jvp;
  TransposeTable& transpose;
  LinearityTable& linearity;
};

}  // namespace evoxc::transforms
