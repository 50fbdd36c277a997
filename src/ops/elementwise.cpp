// Elementwise op families: unary math, broadcasting binaries, comparisons, select, clamp and conversions.
// Every op here is elementwise; the few linear ones say so in their table row (JAX's deflinear/defbilinear).
#include <cstdint>
#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc::ops_detail {
namespace {

// How an op is linear (OpDef::linear_operands, linear_each), as JAX's ad rules have it.
enum class Lin : uint8_t {
  None,
  Joint,  // in all operands jointly: neg, add, subtract (ad.deflinear)
  Each,   // in each operand alone: multiply (ad.defbilinear)
  First,  // in operand 0 alone: divide, x / y with y fixed
};

struct NameDoc {
  const char* name;
  const char* what;
  Lin lin = Lin::None;
};

void set_linearity(OpDef& d, Lin lin, int n) {
  std::vector<int> all;
  for (int i = 0; i < n; ++i) all.push_back(i);
  switch (lin) {
    case Lin::None: break;
    case Lin::Joint: set_linear(d, all); break;
    case Lin::Each: set_linear_each(d, all); break;
    case Lin::First: set_linear_each(d, {0}); break;
  }
}

TensorType same_type(std::span<const TensorType> ops, const AttrMap&) { return ops[0]; }

// One unary op: result has the operand's shape, and its dtype unless `to_bool`.
OpDef& unary(OpTable& t, const NameDoc& nd, DTypeClass cls, bool to_bool = false) {
  OpDef d;
  d.name = nd.name;
  d.category = OpCategory::ElementwiseUnary;
  d.min_operands = d.max_operands = 1;
  d.operand_dtypes = cls;
  d.infer = [to_bool](std::span<const TensorType> ops, const AttrMap& attrs) {
    TensorType r = same_type(ops, attrs);
    if (to_bool) r.dtype = DType::Bool;
    return std::vector<TensorType>{r};
  };
  d.doc = std::string(nd.what) + "; 1 " + dtype_class_name(cls) + " operand -> " +
          (to_bool ? "bool, same shape" : "same type");
  d.elementwise = true;
  set_linearity(d, nd.lin, 1);
  d.sample = sample_operands(1);
  return t.add(std::move(d));
}

// The numpy broadcast of every operand's shape, naming the op on a conflict.
Shape broadcast_all(const std::string& op, std::span<const TensorType> ops) {
  Shape s = ops[0].shape;
  for (size_t i = 1; i < ops.size(); ++i) s = broadcast_shapes(s, ops[i].shape, op_label(op));
  return s;
}

// One broadcasting binary op over a single dtype; comparisons and logical ops give bool.
void binary(OpTable& t, const NameDoc& nd, OpCategory cat, DTypeClass cls, bool to_bool) {
  OpDef d;
  d.name = nd.name;
  d.category = cat;
  d.min_operands = d.max_operands = 2;
  d.operand_dtypes = cls;
  d.infer = [name = d.name, to_bool](std::span<const TensorType> ops, const AttrMap&) {
    require_same_dtype(name, ops);
    return std::vector<TensorType>{TensorType(to_bool ? DType::Bool : ops[0].dtype, broadcast_all(name, ops))};
  };
  d.doc = std::string(nd.what) + "; 2 " + dtype_class_name(cls) + " operands of one dtype, broadcast -> " +
          (to_bool ? "bool" : "same dtype");
  d.elementwise = true;
  set_linearity(d, nd.lin, 2);
  d.sample = sample_operands(2);
  t.add(std::move(d));
}

constexpr NameDoc kUnaryFloat[] = {
    {"exp", "e^x"},
    {"exp2", "2^x"},
    {"expm1", "e^x - 1, accurate near 0"},
    {"log", "natural logarithm"},
    {"log2", "base-2 logarithm"},
    {"log10", "base-10 logarithm"},
    {"log1p", "log(1 + x), accurate near 0"},
    {"sqrt", "square root"},
    {"rsqrt", "1 / sqrt(x)"},
    {"cbrt", "cube root"},
    {"reciprocal", "1 / x"},
    {"sin", "sine"},
    {"cos", "cosine"},
    {"tan", "tangent"},
    {"asin", "arc sine"},
    {"acos", "arc cosine"},
    {"atan", "arc tangent"},
    {"sinh", "hyperbolic sine"},
    {"cosh", "hyperbolic cosine"},
    {"tanh", "hyperbolic tangent"},
    {"asinh", "inverse hyperbolic sine"},
    {"acosh", "inverse hyperbolic cosine"},
    {"atanh", "inverse hyperbolic tangent"},
    {"sigmoid", "logistic 1 / (1 + e^-x)"},
    {"erf", "error function"},
    {"erfc", "complementary error function 1 - erf(x)"},
    {"erf_inv", "inverse error function"},
    {"lgamma", "log of the absolute gamma function"},
    {"digamma", "derivative of lgamma"},
    {"softplus", "log(1 + e^x)"},
    {"floor", "round toward -inf"},
    {"ceil", "round toward +inf"},
    {"round", "round half to even"},
    {"trunc", "round toward zero"},
};

constexpr NameDoc kUnaryNumeric[] = {
    {"neg", "-x (ints wrap)", Lin::Joint},
    {"abs", "|x| (abs(INT_MIN) wraps to INT_MIN)"},
    {"sign", "-1, 0 or 1 (sign(+-0) is +-0, sign(NaN) is NaN)"},
    {"square", "x * x"},
    {"relu", "max(x, 0)"},
};

constexpr NameDoc kUnaryPredicates[] = {
    {"isnan", "whether x is NaN (false for ints and bool)"},
    {"isinf", "whether x is +-inf (false for ints and bool)"},
    {"isfinite", "whether x is neither NaN nor inf (true for ints and bool)"},
};

constexpr NameDoc kBinaryNumeric[] = {
    {"add", "a + b (ints wrap)", Lin::Joint},
    {"subtract", "a - b (ints wrap)", Lin::Joint},
    {"multiply", "a * b (ints wrap)", Lin::Each},
    {"divide", "a / b (ints truncate; x/0 is -1)", Lin::First},
    {"floor_divide", "a / b rounded toward -inf (x//0 is -1)"},
    {"remainder", "remainder with the divisor's sign (x%0 is x)"},
    {"fmod", "remainder with the dividend's sign (x%0 is x)"},
    {"power", "a ^ b (ints by repeated squaring, wrapping)"},
    {"maximum", "the larger of a and b, NaN propagating"},
    {"minimum", "the smaller of a and b, NaN propagating"},
};

constexpr NameDoc kBinaryFloat[] = {
    {"atan2", "arc tangent of a / b using both signs"},
    {"hypot", "sqrt(a^2 + b^2) without overflow"},
    {"nextafter", "the next representable value after a toward b"},
    {"copysign", "|a| with the sign of b"},
};

constexpr NameDoc kBinaryLogical[] = {
    {"logical_and", "a and b"},
    {"logical_or", "a or b"},
    {"logical_xor", "a xor b"},
};

constexpr NameDoc kBinaryBitwise[] = {
    {"bitwise_and", "bitwise a & b"},
    {"bitwise_or", "bitwise a | b"},
    {"bitwise_xor", "bitwise a ^ b"},
};

constexpr NameDoc kBinaryShift[] = {
    {"shift_left", "a << b (0 when b is out of [0, width))"},
    {"shift_right_logical", "a >> b filling zeros (0 when b is out of [0, width))"},
    {"shift_right_arithmetic", "a >> b filling the sign (sign fill when b is out of [0, width))"},
};

constexpr NameDoc kComparisons[] = {
    {"equal", "a == b"},      {"not_equal", "a != b"}, {"less", "a < b"},
    {"less_equal", "a <= b"}, {"greater", "a > b"},    {"greater_equal", "a >= b"},
};

void register_unary(OpTable& t) {
  for (const NameDoc& nd : kUnaryFloat) unary(t, nd, DTypeClass::Float);
  OpDef& gelu = unary(t, {"gelu", "Gaussian error linear unit (approximate: tanh form)"}, DTypeClass::Float);
  gelu.attrs = {{"approximate", AttrKind::Bool}};
  // `approximate` picks a formula, so it is structure, not data.
  gelu.sample = sample_operands(1, {{"approximate", true}});
  for (const NameDoc& nd : kUnaryNumeric) unary(t, nd, DTypeClass::Numeric);
  for (const NameDoc& nd : kUnaryPredicates) unary(t, nd, DTypeClass::Any, /*to_bool=*/true);
  unary(t, {"logical_not", "not x"}, DTypeClass::Bool);
  unary(t, {"bitwise_not", "bitwise ~x (not x for bool)"}, DTypeClass::IntOrBool);
  unary(t, {"popcount", "number of set bits"}, DTypeClass::Int);
  OpDef& ntn = unary(t, {"nan_to_num", "NaN -> nan, +inf -> posinf, -inf -> neginf"}, DTypeClass::Float);
  ntn.attrs = {{"nan", AttrKind::Float}, {"posinf", AttrKind::Float}, {"neginf", AttrKind::Float}};
  // The replacement values enter the result only as values.
  ntn.data_attrs = {"nan", "posinf", "neginf"};
  ntn.sample = sample_operands(1, {{"nan", 0.0}, {"posinf", 1.0}, {"neginf", -1.0}});
}

void register_binary(OpTable& t) {
  for (const NameDoc& nd : kBinaryNumeric) binary(t, nd, OpCategory::ElementwiseBinary, DTypeClass::Numeric, false);
  for (const NameDoc& nd : kBinaryFloat) binary(t, nd, OpCategory::ElementwiseBinary, DTypeClass::Float, false);
  for (const NameDoc& nd : kBinaryLogical) binary(t, nd, OpCategory::ElementwiseBinary, DTypeClass::Bool, true);
  for (const NameDoc& nd : kBinaryBitwise) binary(t, nd, OpCategory::ElementwiseBinary, DTypeClass::IntOrBool, false);
  for (const NameDoc& nd : kBinaryShift) binary(t, nd, OpCategory::ElementwiseBinary, DTypeClass::Int, false);
  for (const NameDoc& nd : kComparisons) binary(t, nd, OpCategory::Comparison, DTypeClass::Any, true);
}

void register_other(OpTable& t) {
  OpDef sel;
  sel.name = "select";
  sel.category = OpCategory::ElementwiseOther;
  sel.min_operands = sel.max_operands = 3;
  sel.operand_dtypes = DTypeClass::Any;
  sel.infer = [](std::span<const TensorType> ops, const AttrMap&) {
    if (ops[0].dtype != DType::Bool)
      throw TypeError(op_label("select") + ": the predicate (operand 0) must be bool, got " +
                      std::string(dtype_name(ops[0].dtype)) + "; compare it with a value first");
    require_same_dtype("select", ops, 1);
    return std::vector<TensorType>{TensorType(ops[1].dtype, broadcast_all("select", ops))};
  };
  sel.doc = "pred ? on_true : on_false; pred bool, on_true and on_false one dtype (any), broadcast of all three";
  sel.elementwise = true;
  // Jointly linear in the two branches for a fixed predicate (JAX: select_n's transpose).
  set_linear(sel, {1, 2});
  sel.sample = [](DType t) {
    OpSample s = sample_operands(3)(t);
    s.operands[0].dtype = DType::Bool;
    return s;
  };
  t.add(std::move(sel));

  OpDef clamp;
  clamp.name = "clamp";
  clamp.category = OpCategory::ElementwiseOther;
  clamp.min_operands = clamp.max_operands = 3;
  clamp.operand_dtypes = DTypeClass::Numeric;
  clamp.infer = [](std::span<const TensorType> ops, const AttrMap&) {
    require_same_dtype("clamp", ops);
    return std::vector<TensorType>{TensorType(ops[0].dtype, broadcast_all("clamp", ops))};
  };
  clamp.doc = "min(max(x, lo), hi), NaN propagating; x, lo, hi numeric of one dtype, broadcast of all three";
  clamp.elementwise = true;
  clamp.sample = sample_operands(3);
  t.add(std::move(clamp));

  OpDef cvt;
  cvt.name = "convert";
  cvt.category = OpCategory::ElementwiseOther;
  cvt.min_operands = cvt.max_operands = 1;
  cvt.operand_dtypes = DTypeClass::Any;
  cvt.attrs = {{"dtype", AttrKind::DType}};
  cvt.infer = [](std::span<const TensorType> ops, const AttrMap& attrs) {
    return std::vector<TensorType>{TensorType(attr_dtype(attrs, "dtype", "convert"), ops[0].shape)};
  };
  cvt.doc = "converts values to `dtype` (float->int saturates, NaN->0; ints wrap); any dtype -> same shape, `dtype`";
  cvt.elementwise = true;
  // Linear between float dtypes, as JAX's convert_element_type (ad.deflinear2): its rounding is the
  // rounding every float op has. To or from int and bool there is no tangent to carry.
  set_linear(cvt, {0});
  cvt.sample = sample_operands(1, {{"dtype", DType::F32}});
  t.add(std::move(cvt));

  OpDef bc;
  bc.name = "bitcast_convert";
  bc.category = OpCategory::ElementwiseOther;
  bc.min_operands = bc.max_operands = 1;
  bc.operand_dtypes = DTypeClass::Numeric;
  bc.attrs = {{"dtype", AttrKind::DType}};
  bc.infer = [](std::span<const TensorType> ops, const AttrMap& attrs) {
    DType to = attr_dtype(attrs, "dtype", "bitcast_convert");
    if (is_bool(to))
      throw TypeError(op_label("bitcast_convert") + ": cannot reinterpret bits as bool; use convert instead");
    if (size_of(to) != size_of(ops[0].dtype))
      throw TypeError(op_label("bitcast_convert") + ": " + std::string(dtype_name(ops[0].dtype)) + " is " +
                      std::to_string(bit_width(ops[0].dtype)) + " bits but " + std::string(dtype_name(to)) + " is " +
                      std::to_string(bit_width(to)) + "; pick a target of the same bit width or use convert");
    return std::vector<TensorType>{TensorType(to, ops[0].shape)};
  };
  bc.doc = "reinterprets the bits as `dtype` of the same width; numeric (non-bool) -> same shape, `dtype`";
  bc.elementwise = true;
  // A target of the operand's width, chosen by width alone so the sample never leans on this op's own rule.
  bc.sample = [](DType t) {
    DType to = size_of(t) == 1 ? DType::U8 : size_of(t) == 2 ? DType::I16 : size_of(t) == 4 ? DType::F32 : DType::F64;
    return sample_operands(1, {{"dtype", to}})(t);
  };
  t.add(std::move(bc));
}

}  // namespace

void register_elementwise_ops(OpTable& t) {
  register_unary(t);
  register_binary(t);
  register_other(t);
}

}  // namespace evoxc::ops_detail
