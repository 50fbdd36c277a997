// Bindings of the elementwise op functions (unary, binary, select/clip/convert, isclose) and in-trace creation.
#include <cstring>
#include <optional>
#include <string>

#include "bind.h"
#include "evoxc/core/error.h"
#include "evoxc/trace/layout.h"
#include "evoxc/trace/numpy.h"

namespace evoxc::py {

namespace {

struct OpDoc {
  const char* name;
  const char* doc;
};

// One line per op function: what it computes, as its numpy (or scipy/jax) equivalent.
constexpr OpDoc kDocs[] = {
    {"negative", "numpy.negative(x): -x elementwise."},
    {"abs", "numpy.abs(x): |x| elementwise (abs(INT_MIN) wraps to INT_MIN, as numpy)."},
    {"sign", "numpy.sign(x): -1, 0 or 1 elementwise (sign(+-0) is +-0, sign(NaN) is NaN)."},
    {"exp", "numpy.exp(x) elementwise (int/bool operands are converted to float32 first)."},
    {"exp2", "numpy.exp2(x): 2**x elementwise (int/bool operands are converted to float32 first)."},
    {"expm1", "numpy.expm1(x): exp(x) - 1 elementwise (int/bool operands are converted to float32 first)."},
    {"log", "numpy.log(x): natural logarithm elementwise (int/bool operands are converted to float32 first)."},
    {"log2", "numpy.log2(x) elementwise (int/bool operands are converted to float32 first)."},
    {"log10", "numpy.log10(x) elementwise (int/bool operands are converted to float32 first)."},
    {"log1p", "numpy.log1p(x): log(1 + x) elementwise (int/bool operands are converted to float32 first)."},
    {"sqrt", "numpy.sqrt(x) elementwise (int/bool operands are converted to float32 first)."},
    {"rsqrt", "1 / numpy.sqrt(x) elementwise (int/bool operands are converted to float32 first)."},
    {"cbrt", "numpy.cbrt(x): cube root elementwise (int/bool operands are converted to float32 first)."},
    {"square", "numpy.square(x): x * x elementwise."},
    {"reciprocal", "numpy.reciprocal(x): 1 / x elementwise (int/bool operands are converted to float32 first)."},
    {"sin", "numpy.sin(x) elementwise (int/bool operands are converted to float32 first)."},
    {"cos", "numpy.cos(x) elementwise (int/bool operands are converted to float32 first)."},
    {"tan", "numpy.tan(x) elementwise (int/bool operands are converted to float32 first)."},
    {"arcsin", "numpy.arcsin(x) elementwise (int/bool operands are converted to float32 first)."},
    {"arccos", "numpy.arccos(x) elementwise (int/bool operands are converted to float32 first)."},
    {"arctan", "numpy.arctan(x) elementwise (int/bool operands are converted to float32 first)."},
    {"sinh", "numpy.sinh(x) elementwise (int/bool operands are converted to float32 first)."},
    {"cosh", "numpy.cosh(x) elementwise (int/bool operands are converted to float32 first)."},
    {"tanh", "numpy.tanh(x) elementwise (int/bool operands are converted to float32 first)."},
    {"arcsinh", "numpy.arcsinh(x) elementwise (int/bool operands are converted to float32 first)."},
    {"arccosh", "numpy.arccosh(x) elementwise (int/bool operands are converted to float32 first)."},
    {"arctanh", "numpy.arctanh(x) elementwise (int/bool operands are converted to float32 first)."},
    {"sigmoid", "scipy.special.expit(x): 1 / (1 + exp(-x)) elementwise (int/bool converted to float32 first)."},
    {"erf", "scipy.special.erf(x) elementwise (int/bool operands are converted to float32 first)."},
    {"erfc", "scipy.special.erfc(x): 1 - erf(x) elementwise (int/bool operands are converted to float32 first)."},
    {"erf_inv", "scipy.special.erfinv(x) elementwise (int/bool operands are converted to float32 first)."},
    {"lgamma", "scipy.special.gammaln(x): log|gamma(x)| elementwise (int/bool converted to float32 first)."},
    {"digamma", "scipy.special.digamma(x) elementwise (int/bool operands are converted to float32 first)."},
    {"relu", "numpy.maximum(x, 0) elementwise."},
    {"softplus", "numpy.logaddexp(0, x): log(1 + exp(x)) elementwise (int/bool converted to float32 first)."},
    {"floor", "numpy.floor(x) elementwise (int/bool operands are converted to float32 first)."},
    {"ceil", "numpy.ceil(x) elementwise (int/bool operands are converted to float32 first)."},
    {"round", "numpy.round(x) (numpy.rint): round half to even elementwise (int/bool converted to float32 first)."},
    {"trunc", "numpy.trunc(x): round toward zero elementwise (int/bool operands are converted to float32 first)."},
    {"isnan", "numpy.isnan(x) elementwise, bool."},
    {"isinf", "numpy.isinf(x) elementwise, bool."},
    {"isfinite", "numpy.isfinite(x) elementwise, bool."},
    {"bitwise_not", "numpy.bitwise_not(x) (numpy.invert): ~x elementwise for ints, logical not for bool."},
    {"popcount",
     "The number of set bits of x's two's complement pattern, in x's int dtype (numpy.bitwise_count counts |x|, "
     "uint8)."},
    {"add", "numpy.add(a, b): a + b elementwise with numpy broadcasting and evoxc promotion."},
    {"subtract", "numpy.subtract(a, b): a - b elementwise with broadcasting."},
    {"multiply", "numpy.multiply(a, b): a * b elementwise with broadcasting."},
    {"divide", "numpy.divide(a, b): true division with broadcasting (int/bool operands are converted to float32)."},
    {"floor_divide", "numpy.floor_divide(a, b): a // b with broadcasting (int division by zero gives -1)."},
    {"remainder", "numpy.remainder(a, b): a % b with the divisor's sign (int remainder by zero gives a)."},
    {"fmod", "numpy.fmod(a, b): C fmod, the remainder with the dividend's sign (int fmod by zero gives a)."},
    {"power", "numpy.power(a, b): a ** b with broadcasting (ints wrap; a negative int exponent gives 0)."},
    {"maximum", "numpy.maximum(a, b) elementwise with broadcasting (NaN propagates)."},
    {"minimum", "numpy.minimum(a, b) elementwise with broadcasting (NaN propagates)."},
    {"arctan2", "numpy.arctan2(a, b): the angle of (b, a) with broadcasting (int/bool converted to float32)."},
    {"hypot", "numpy.hypot(a, b): sqrt(a**2 + b**2) without overflow, with broadcasting."},
    {"nextafter", "numpy.nextafter(a, b): the next float after a toward b, with broadcasting."},
    {"copysign", "numpy.copysign(a, b): |a| with the sign of b, with broadcasting."},
    {"logical_and", "numpy.logical_and(a, b) with broadcasting, bool."},
    {"logical_or", "numpy.logical_or(a, b) with broadcasting, bool."},
    {"logical_xor", "numpy.logical_xor(a, b) with broadcasting, bool."},
    {"bitwise_and", "numpy.bitwise_and(a, b): a & b with broadcasting (ints and bool)."},
    {"bitwise_or", "numpy.bitwise_or(a, b): a | b with broadcasting (ints and bool)."},
    {"bitwise_xor", "numpy.bitwise_xor(a, b): a ^ b with broadcasting (ints and bool)."},
    {"left_shift", "numpy.left_shift(a, b): a << b with broadcasting (a shift by >= the bit width gives 0)."},
    {"right_shift",
     "numpy.right_shift(a, b): a >> b, arithmetic for signed and logical for unsigned ints, with broadcasting."},
    {"shift_right_logical", "jax.lax.shift_right_logical(a, b): a >> b shifting in zeros (>= bit width gives 0)."},
    {"shift_right_arithmetic",
     "jax.lax.shift_right_arithmetic(a, b): a >> b shifting in the sign bit (unsigned: as the same-width signed)."},
    {"equal", "numpy.equal(a, b): a == b with broadcasting, bool."},
    {"not_equal", "numpy.not_equal(a, b): a != b with broadcasting, bool."},
    {"less", "numpy.less(a, b): a < b with broadcasting, bool."},
    {"less_equal", "numpy.less_equal(a, b): a <= b with broadcasting, bool."},
    {"greater", "numpy.greater(a, b): a > b with broadcasting, bool."},
    {"greater_equal", "numpy.greater_equal(a, b): a >= b with broadcasting, bool."},
};

const char* doc_of(const char* name) {
  for (const auto& d : kDocs)
    if (std::strcmp(d.name, name) == 0) return d.doc;
  throw InternalError(std::string("ops_elementwise: no docstring for ") + name);
}

}  // namespace

void bind_ops_elementwise(nb::module_& m) {
  // ---- unary ----
#define EVOXC_UNARY_OP(name, op) \
  def_op(                        \
      m, #name, [](const Operand& x) { return ::evoxc::name(x); }, nb::arg("x"), doc_of(#name));
#include "evoxc/trace/unary_ops.inc"
#undef EVOXC_UNARY_OP
  def_op(
      m, "logical_not", [](const Operand& x) { return logical_not(x); }, nb::arg("x"),
      "numpy.logical_not(x) elementwise, bool.");
  def_op(
      m, "neg", [](const Operand& x) { return neg(x); }, nb::arg("x"), "neg(x) = negative(x): -x elementwise.");
  def_op(
      m, "absolute", [](const Operand& x) { return abs(x); }, nb::arg("x"), "absolute(x) = abs(x), as numpy.");
  def_op(
      m, "invert", [](const Operand& x) { return bitwise_not(x); }, nb::arg("x"),
      "invert(x) = bitwise_not(x), as numpy.");
  def_op(
      m, "bitwise_count", [](const Operand& x) { return popcount(x); }, nb::arg("x"),
      "bitwise_count(x) = popcount(x) (numpy's name; evoxc counts the two's complement bits, in x's dtype).");
  def_op(
      m, "gelu", [](const Operand& x, bool approximate) { return gelu(x, approximate); }, nb::arg("x"),
      nb::arg("approximate") = false,
      "jax.nn.gelu(x, approximate): x * Phi(x) exactly, or its tanh form with approximate=True.");
  def_op(
      m, "nan_to_num",
      [](const Operand& x, double nan, std::optional<double> posinf, std::optional<double> neginf) {
        return nan_to_num(x, nan, posinf, neginf);
      },
      nb::arg("x"), nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(), nb::arg("neginf") = nb::none(),
      "numpy.nan_to_num(x, nan, posinf, neginf): NaN -> nan, +-inf -> posinf/neginf (default: the dtype's "
      "largest/lowest finite value); non-float x is returned unchanged.");

  // ---- binary ----
#define EVOXC_BINARY(name)                                                                                          \
  def_op(                                                                                                           \
      m, #name, [](const Operand& a, const Operand& b) { return ::evoxc::name(a, b); }, nb::arg("a"), nb::arg("b"), \
      doc_of(#name));
#define EVOXC_BINARY_OP(name, op, rule) EVOXC_BINARY(name)
#include "evoxc/trace/binary_ops.inc"
#undef EVOXC_BINARY_OP
  EVOXC_BINARY(right_shift)
#undef EVOXC_BINARY
  def_op(
      m, "mod", [](const Operand& a, const Operand& b) { return mod(a, b); }, nb::arg("a"), nb::arg("b"),
      "mod(a, b) = remainder(a, b), as numpy.");
  def_op(
      m, "pow", [](const Operand& a, const Operand& b) { return evoxc::pow(a, b); }, nb::arg("a"), nb::arg("b"),
      "pow(a, b) = power(a, b), as numpy.");
  def_op(
      m, "true_divide", [](const Operand& a, const Operand& b) { return divide(a, b); }, nb::arg("a"), nb::arg("b"),
      "true_divide(a, b) = divide(a, b), as numpy.");

  // ---- other elementwise ----
  def_op(
      m, "where",
      [](const Operand& cond, const Operand& on_true, const Operand& on_false) {
        return where(cond, on_true, on_false);
      },
      nb::arg("cond"), nb::arg("on_true"), nb::arg("on_false"),
      "numpy.where(cond, on_true, on_false): on_true where cond else on_false, broadcast and promoted.");
  def_op(
      m, "select",
      [](const Operand& cond, const Operand& on_true, const Operand& on_false) {
        return select(cond, on_true, on_false);
      },
      nb::arg("cond"), nb::arg("on_true"), nb::arg("on_false"),
      "select(cond, on_true, on_false) = where(cond, on_true, on_false).");
  def_op(
      m, "clip",
      [](const Operand& x, std::optional<Operand> lo, std::optional<Operand> hi) {
        if (lo && hi) return clip(x, *lo, *hi);
        if (hi) return minimum(x, *hi);
        if (lo) return maximum(x, *lo);
        throw ValidationError("clip: at least one of lo and hi must be given");
      },
      nb::arg("x"), nb::arg("lo").none(), nb::arg("hi").none(),
      "numpy.clip(x, lo, hi): minimum(maximum(x, lo), hi) with broadcasting, NaN propagating (lo=None: "
      "minimum(x, hi); hi=None: maximum(x, lo)).");
  def_op(
      m, "clamp", [](const Operand& x, const Operand& lo, const Operand& hi) { return clamp(x, lo, hi); }, nb::arg("x"),
      nb::arg("lo"), nb::arg("hi"), "clamp(x, lo, hi) = clip(x, lo, hi).");
  def_op(
      m, "astype", [](const Operand& x, DType dtype) { return astype(x, dtype); }, nb::arg("x"), nb::arg("dtype"),
      "x.astype(dtype) as numpy (float -> int saturates, NaN -> 0; anything -> bool is x != 0).");
  def_op(
      m, "convert", [](const Operand& x, DType dtype) { return convert(x, dtype); }, nb::arg("x"), nb::arg("dtype"),
      "convert(x, dtype) = astype(x, dtype).");
  def_op(
      m, "bitcast_convert", [](const SymbolicTensor& x, DType dtype) { return bitcast_convert(x, dtype); },
      nb::arg("x"), nb::arg("dtype"),
      "x.view(dtype) as numpy: reinterprets the bits as a dtype of the same width (bool excluded).");
  def_op(
      m, "isclose",
      [](const Operand& a, const Operand& b, double rtol, double atol, bool equal_nan) {
        return isclose(a, b, rtol, atol, equal_nan);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8, nb::arg("equal_nan") = false,
      "numpy.isclose(a, b, rtol, atol, equal_nan): |a - b| <= atol + rtol * |b| elementwise, bool (ints compared "
      "in float32).");
  def_op(
      m, "allclose",
      [](const Operand& a, const Operand& b, double rtol, double atol, bool equal_nan) {
        return allclose(a, b, rtol, atol, equal_nan);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8, nb::arg("equal_nan") = false,
      "numpy.allclose(a, b, rtol, atol, equal_nan) = all(isclose(a, b, rtol, atol, equal_nan)), a rank-0 bool "
      "tensor.");

  // ---- creation inside a trace ----
  def_op(
      m, "iota", [](const Shape& shape, int64_t dimension, DType dtype) { return iota(shape, dimension, dtype); },
      nb::arg("shape"), nb::arg("dimension"), nb::arg("dtype") = kIndexType,
      "jax.lax.iota: a tensor of `shape` whose values count 0, 1, ... along `dimension`.");
  def_op(
      m, "fill",
      [](const Shape& shape, const Operand& value, std::optional<DType> dtype) { return fill(shape, value, dtype); },
      nb::arg("shape"), nb::arg("value"), nb::arg("dtype") = nb::none(),
      "numpy.full(shape, value, dtype) inside a traced function (dtype None: int64 for int, float32 for float, "
      "bool for bool values; a SymbolicTensor value is broadcast to shape).");
  def_op(
      m, "full_like",
      [](const SymbolicTensor& x, const Operand& value, std::optional<DType> dtype) {
        return fill(x.shape(), value, dtype.value_or(x.dtype()));
      },
      nb::arg("x"), nb::arg("value"), nb::arg("dtype") = nb::none(),
      "numpy.full_like(x, value, dtype): full_like(x, value, dtype) = fill(x.shape, value, dtype or x.dtype).");
  def_op(
      m, "zeros_like", [](const SymbolicTensor& x) { return zeros_like(x); }, nb::arg("x"),
      "numpy.zeros_like(x): zeros of x's shape and dtype.");
  def_op(
      m, "ones_like", [](const SymbolicTensor& x) { return ones_like(x); }, nb::arg("x"),
      "numpy.ones_like(x): ones of x's shape and dtype.");
  def_op(
      m, "arange",
      [](const Operand& start, std::optional<Operand> stop, const Operand& step, std::optional<DType> dtype) {
        if (!stop) return arange(Operand(0), start, step, dtype);
        return arange(start, *stop, step, dtype);
      },
      nb::arg("start"), nb::arg("stop") = nb::none(), nb::arg("step") = 1, nb::arg("dtype") = nb::none(),
      "numpy.arange(start, stop, step, dtype) with static bounds (one argument is stop); dtype None: int64 when "
      "all are ints, else float32.");
  def_op(
      m, "eye", [](int64_t n, std::optional<int64_t> cols, int64_t k, DType dtype) { return eye(n, cols, k, dtype); },
      nb::arg("N"), nb::arg("M") = nb::none(), nb::arg("k") = 0, nb::arg("dtype") = kDefaultFloat,
      "numpy.eye(N, M, k, dtype): ones on diagonal k of an N x M matrix (M = N when None), zeros elsewhere.");
  def_op(
      m, "identity", [](int64_t n, DType dtype) { return identity(n, dtype); }, nb::arg("n"),
      nb::arg("dtype") = kDefaultFloat, "numpy.identity(n, dtype): eye(n).");
  def_op(
      m, "linspace",
      [](double start, double stop, int64_t num, bool endpoint, DType dtype) {
        return linspace(start, stop, num, endpoint, dtype);
      },
      nb::arg("start"), nb::arg("stop"), nb::arg("num") = 50, nb::arg("endpoint") = true,
      nb::arg("dtype") = kDefaultFloat,
      "numpy.linspace(start, stop, num, endpoint, dtype): num evenly spaced values (an int dtype floors them).");
}

}  // namespace evoxc::py
