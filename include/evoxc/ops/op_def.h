// OpDef: one record per op — name and dense id, category, traits, operand arity, attribute schema,
// type inference and sample operands for generated tests.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/ir/graph.h"
#include "evoxc/ir/ir.h"

namespace evoxc {

enum class OpCategory : uint8_t {
  ElementwiseUnary,
  ElementwiseBinary,
  Comparison,
  ElementwiseOther,  // select, clamp, convert, bitcast_convert
  Reduction,
  LinearAlgebra,
  Structure,
  Creation,  // iota, full, constant
  ControlFlow,
  Terminator,
  // Ops whose meaning is code from outside the catalogue (stablehlo_call): no interpreter kernel, no transform rules.
  // Last, so that adding one moves no other op's id.
  Extension,
  // Key-based random numbers (random_bits, random_split, random_fold_in): after Extension so that no earlier op's id
  // moved when they arrived.
  Random,
  // The primitives of sparse tensors (sparse_validate, sparse_csr_matmul); the rest of evoxc.sparse is written
  // with dense ops (include/evoxc/trace/sparse.h).
  Sparse,
};
const char* op_category_name(OpCategory c);

// DTypeClass (which element types an op accepts) is defined once, in core/dtype.h.

struct AttrSpec {
  std::string name;
  AttrKind kind;
  bool required = true;
  // Kinds also accepted (e.g. full's value may be Int, Float or Bool).
  std::vector<AttrKind> also = {};
};

// Computes result types from operand types and attributes; throws ShapeError/TypeError.
using InferFn = std::function<std::vector<TensorType>(std::span<const TensorType> operands, const AttrMap& attrs)>;
// Ops with regions (control flow): result types also depend on the regions' argument and
// return types, so the verifier calls this after `infer` with the whole operation.
using RegionInferFn = std::function<std::vector<TensorType>(std::span<const TensorType> operands, const AttrMap& attrs,
                                                            const Operation& op)>;

// A valid call of an op: operand types and attributes (what generated tests build).
struct OpSample {
  std::vector<TensorType> operands;
  AttrMap attrs;
};
// Gives a valid call of the op whose dtype-class operands have dtype `t` (t is in the op's
// class); set per family, so every op of the catalogue has one. For a `t` outside the class
// it gives the same call on `t`, which inference rejects. Ops with regions get operands and
// attributes that pass `infer`; their regions are the caller's to build.
using SampleFn = std::function<OpSample(DType t)>;

// The definition of one op. Its name and dense id live in the OpInfo base, which is what an
// Operation refers to; op_def(op) gives this record back.
struct OpDef : OpInfo {
  OpCategory category = OpCategory::Structure;
  int min_operands = 0;
  int max_operands = 0;  // -1: unbounded
  int num_regions = 0;   // -1: any number >= 1, checked by infer_regions (n-way cond)
  DTypeClass operand_dtypes = DTypeClass::Any;
  std::vector<AttrSpec> attrs;
  InferFn infer;
  RegionInferFn infer_regions;  // set by ops with regions; see RegionInferFn
  std::string doc;              // one line: semantics and the dtypes it accepts

  // ---- traits the rule tables of later layers read ----
  // Each trait holds for every attribute value the op accepts (scatter is linear for mode
  // "set" and "add" but not "mul", so it lists no linear operands). Linearity is over the
  // reals, on float dtypes: an op on int or bool values has no tangents whatever it lists,
  // and ops that accept only ints or bools list none. The family files of src/ops set
  // them and say why for each op.
  //
  // Each result element depends only on the operand elements at the same (broadcast)
  // position: batching adds a leading axis to every operand, fusion may tile it.
  bool elementwise = false;
  // The op is linear in these operands jointly when the others are held fixed (add: {0, 1};
  // multiply: {0} and {1} separately, so it lists none jointly — see linear_each).
  // Transposition (reverse mode) needs a rule for exactly these. kEveryOperand lists every
  // operand of a variadic op (concatenate).
  std::vector<int> linear_operands;
  // Operands in which the op is linear one at a time (multiply, dot: each operand with the
  // other fixed); a superset of linear_operands, so a transpose rule may treat any one of
  // them as the linear input and the other operands as constants.
  std::vector<int> linear_each;
  // Attributes that are data rather than structure: values that enter the result only as
  // values (never as extents, axes, counts or a choice of formula), so result types depend
  // on them at most through their own type and programs differing only in these can be
  // merged by stacking the values (constant's value, full's value).
  std::vector<std::string> data_attrs;
  // The op computes its one region over its operands and nothing else (block_call: a custom op's portable body):
  // a backend without a rule for it inlines the region (evoxc::decompose), and so does a transform.
  bool inline_region = false;
  // A valid sample call for generated tests.
  SampleFn sample;

  std::vector<TensorType> infer_types(std::span<const TensorType> operands, const AttrMap& attrs,
                                      const Operation* op) const override;
};

// An entry of OpDef::linear_operands or linear_each that stands for every operand.
inline constexpr int kEveryOperand = -1;
// Whether `operand` is listed in `traits` (an OpDef's linear_operands or linear_each),
// counting kEveryOperand: linear_in(def.linear_operands, i).
inline bool linear_in(const std::vector<int>& traits, int operand) {
  for (int i : traits)
    if (i == operand || i == kEveryOperand) return true;
  return false;
}

// The OpDef an operation refers to (every Operation's OpInfo is an OpDef of the registry).
inline const OpDef& op_def(const Operation& op) { return static_cast<const OpDef&>(op.info()); }
// The OpDef with this dense id; InternalError when out of range.
const OpDef& op_def(uint32_t id);
// The number of registered ops (ids are 0 .. num_ops() - 1).
size_t num_ops();

// The registry: every op of the catalogue that this build knows.
const OpDef* find_op(std::string_view name);
// TypeError "unknown op 'x'" when absent.
const OpDef& get_op(std::string_view name);
const std::vector<const OpDef*>& all_ops();

// Checks arity, operand dtypes and the attribute schema, then runs inference.
// ShapeError/TypeError naming the op on failure.
std::vector<TensorType> infer_result_types(const OpDef& def, std::span<const TensorType> operands,
                                           const AttrMap& attrs);

// The graph of one call of `def` as `sample` gives it: main takes the sample's operands and
// returns the op's results (types from inference). Ops with regions get empty regions: the
// caller builds them. Generated checks of every rule table run these graphs.
Graph sample_graph(const OpDef& def, const OpSample& sample);

// The full verifier: verify_structure plus, for every op, a registered name, the attribute
// schema, and result types equal to what inference gives. VerifyError on failure.
void verify(const Graph& g);

}  // namespace evoxc
