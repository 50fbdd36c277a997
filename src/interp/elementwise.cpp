// The list of op names the elementwise kernels serve (unary, binary, select, clamp, convert).
#include "elementwise.h"

#include <algorithm>
#include <iterator>

namespace evoxc::interp {

namespace {

constexpr std::string_view kOps[] = {
    // unary float math
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "reciprocal", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "erf_inv",
    "lgamma", "digamma", "softplus", "floor", "ceil", "round", "trunc", "gelu",
    // other unary
    "neg", "abs", "sign", "square", "relu", "isnan", "isinf", "isfinite", "logical_not", "bitwise_not", "popcount",
    "nan_to_num",
    // binary
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "power", "maximum", "minimum",
    "atan2", "hypot", "nextafter", "copysign", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
    "bitwise_xor", "shift_left", "shift_right_logical", "shift_right_arithmetic",
    // comparisons
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    // ternary and conversions
    "select", "clamp", "convert", "bitcast_convert"};

}  // namespace

bool is_elementwise_op(std::string_view op) {
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

}  // namespace evoxc::interp
