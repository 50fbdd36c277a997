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
// class); set per family, so every op of the catalogue has one.
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
  // Each result element depends only on the operand elements at the same (broadcast)
  // position: batching adds a leading axis to every operand, fusion may tile it.
  bool elementwise = false;
  // The op is linear in these operands jointly when the others are held fixed (add: {0, 1};
  // multiply: {0} and {1} separately, so it lists none jointly — see linear_in). Transposition
  // (reverse mode) needs a rule for exactly these.
  std::vector<int> linear_operands;
  // Operands in which the op is linear one at a time (multiply, dot: each operand with the
  // other fixed); a superset of linear_operands.
  std::vector<int> linear_each;
  // Attributes that are data rather than structure: programs differing only in these can
  // be merged by stacking the values (constant's value, full's value).
  std::vector<std::string> data_attrs;
  // A valid sample call for generated tests.
  SampleFn sample;

  std::vector<TensorType> infer_types(std::span<const TensorType> operands, const AttrMap& attrs,
                                      const Operation* op) const override;
};

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

// The full verifier: verify_structure plus, for every op, a registered name, the attribute
// schema, and result types equal to what inference gives. VerifyError on failure.
void verify(const Graph& g);

}  // namespace evoxc
