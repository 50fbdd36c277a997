// OpDef: one record per op — name, category, operand arity, attribute schema, type inference.
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

// Which element types an op accepts (for its operands; see each OpDef's doc).
enum class DTypeClass : uint8_t { Any, Numeric, Float, Int, IntOrBool, Bool };
bool dtype_in_class(DType t, DTypeClass c);
const char* dtype_class_name(DTypeClass c);

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

struct OpDef {
  std::string name;  // IR name without "evoxc."
  OpCategory category;
  int min_operands = 0;
  int max_operands = 0;  // -1: unbounded
  int num_regions = 0;   // -1: any number >= 1, checked by infer_regions (n-way cond)
  DTypeClass operand_dtypes = DTypeClass::Any;
  std::vector<AttrSpec> attrs;
  InferFn infer;
  RegionInferFn infer_regions;  // set by ops with regions; see RegionInferFn
  std::string doc;              // one line: semantics and the dtypes it accepts
};

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
