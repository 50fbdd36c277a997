// StableHLO lowering rules: the elementwise family (unary math, broadcasting binaries, comparisons,
// select, clamp, convert, bitcast_convert). Each rule writes evoxc's semantics (docs/semantics.md), not
// StableHLO's or XLA's: where those leave a case implementation-defined (integer division by zero,
// shifts past the width, float -> int out of range) or XLA computes it otherwise (integer power,
// conversions that round twice, digamma(0)), the case is written out with compares and selects.
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "backends/stablehlo/emitter.h"
#include "evoxc/core/half.h"
#include "evoxc/ops/special_constants.h"
#include "interp/elementwise.h"
#include "interp/vecmath_scalar.h"

namespace evoxc::stablehlo {
namespace {

// The signed and unsigned integer types of a dtype's width (bitcasts for bit tricks).
DType sint_of(DType t) {
  switch (size_of(t)) {
    case 1: return DType::I8;
    case 2: return DType::I16;
    case 4: return DType::I32;
    default: return DType::I64;
  }
}
DType uint_of(DType t) {
  switch (size_of(t)) {
    case 1: return DType::U8;
    case 2: return DType::U16;
    case 4: return DType::U32;
    default: return DType::U64;
  }
}

// float16/bfloat16 math happens in float32 and rounds once on store (docs/semantics.md), so rules
// compute in this type and convert back.
DType compute_type(DType t) { return t == DType::F16 || t == DType::BF16 ? DType::F32 : t; }

// The comparison_type StableHLO wants for an element type (bool compares as unsigned, as JAX does).
const char* compare_type(DType t) {
  if (is_float(t)) return "FLOAT";
  if (is_signed_int(t)) return "SIGNED";
  return "UNSIGNED";
}

// Writes the ops of one rule. Every value it makes has one shape (the op's result shape: operands
// are broadcast first), so each helper only needs the element type. Constants are written once per
// rule and type.
class Writer {
 public:
  Writer(Emitter& e, Shape shape) : e_(e), shape_(std::move(shape)) {}

  Emitter& emitter() { return e_; }
  TensorType type(DType t) const { return TensorType(t, shape_); }

  // numpy broadcasting of an operand to the rule's shape.
  Val bcast(const Val& x) { return e_.broadcast_to(x, shape_); }

  // A splat of `value` converted to `t` as evoxc's `full` does (exact for the values used here:
  // integers, powers of two, and floats pre-rounded to `t`).
  Val kf(double value, DType t) { return cached(Attribute(value), t); }
  Val ki(int64_t value, DType t) { return cached(Attribute(value), t); }
  Val kb(bool value) { return cached(Attribute(value), DType::Bool); }

  Val un(const std::string& name, const Val& x) { return e_.op1(name, {x}, "", x.type); }
  Val bin(const std::string& name, const Val& a, const Val& b) { return e_.op1(name, {a, b}, "", a.type); }
  Val add(const Val& a, const Val& b) { return bin("add", a, b); }
  Val sub(const Val& a, const Val& b) { return bin("subtract", a, b); }
  Val mul(const Val& a, const Val& b) { return bin("multiply", a, b); }
  Val div(const Val& a, const Val& b) { return bin("divide", a, b); }
  Val neg(const Val& a) { return un("negate", a); }
  Val abs(const Val& a) { return un("abs", a); }

  // compare with `dir` (EQ, NE, LT, LE, GT, GE); FLOAT compares follow IEEE (NE is true with NaN).
  Val cmp(const char* dir, const Val& a, const Val& b) {
    std::string attrs = std::string("{comparison_direction = #stablehlo<comparison_direction ") + dir +
                        ">, compare_type = #stablehlo<comparison_type " + compare_type(a.type.dtype) + ">}";
    return e_.op1("compare", {a, b}, attrs, type(DType::Bool));
  }
  Val sel(const Val& p, const Val& a, const Val& b) { return e_.op1("select", {p, a, b}, "", a.type); }
  Val land(const Val& a, const Val& b) { return bin("and", a, b); }
  Val lor(const Val& a, const Val& b) { return bin("or", a, b); }
  Val lxor(const Val& a, const Val& b) { return bin("xor", a, b); }
  Val lnot(const Val& a) { return un("not", a); }
  Val cvt(const Val& x, DType t) { return e_.convert(x, t); }
  Val bitcast(const Val& x, DType t) {
    if (x.type.dtype == t) return x;
    return e_.op1("bitcast_convert", {x}, "", type(t));
  }

  Val isnan(const Val& x) { return cmp("NE", x, x); }
  Val isinf(const Val& x) { return cmp("EQ", abs(x), kf(INFINITY, x.type.dtype)); }
  // |a| with b's sign bit, on the bits (exact for every value, NaN included).
  Val copysign(const Val& a, const Val& b) {
    DType f = a.type.dtype, u = uint_of(f);
    int64_t sign = std::numeric_limits<int64_t>::min() >> (64 - bit_width(f));  // top bit set, sign-extended
    Val mask = ki(sign, u);
    Val mag = land(bitcast(a, u), bitcast(un("not", mask), u));
    return bitcast(lor(mag, land(bitcast(b, u), mask)), f);
  }

 private:
  Val cached(const Attribute& v, DType t) {
    std::string key = std::to_string(static_cast<int>(t)) + ":" + std::to_string(v.index()) + ":";
    if (const auto* d = std::get_if<double>(&v))
      key += std::to_string(std::bit_cast<uint64_t>(*d));
    else if (const auto* i = std::get_if<int64_t>(&v))
      key += std::to_string(*i);
    else
      key += std::get<bool>(v) ? "1" : "0";
    auto it = consts_.find(key);
    if (it != consts_.end()) return it->second;
    Val c = e_.splat(v, t, shape_);
    consts_.emplace(key, c);
    return c;
  }

  Emitter& e_;
  Shape shape_;
  std::map<std::string, Val> consts_;
};

const TensorType& result_type(const Operation& op) { return op.result(0)->type(); }

// ---- integer arithmetic (docs/semantics.md, "Integer arithmetic") ----

// Truncating division with evoxc's guards: x / 0 = -1 (all ones), INT_MIN / -1 = INT_MIN. The divisor
// StableHLO sees is never 0 or -1, so no implementation-defined case is reached.
Val int_divide(Writer& w, const Val& a, const Val& b, bool floor) {
  DType t = a.type.dtype;
  Val zero = w.ki(0, t), one = w.ki(1, t);
  Val b_zero = w.cmp("EQ", b, zero);
  if (!is_signed_int(t)) {
    Val q = w.div(a, w.sel(b_zero, one, b));
    return w.sel(b_zero, w.ki(-1, t), q);
  }
  Val b_m1 = w.cmp("EQ", b, w.ki(-1, t));
  Val safe = w.sel(w.lor(b_zero, b_m1), one, b);
  Val q = w.div(a, safe);
  if (floor) {
    // Round toward -inf: one less where the remainder is non-zero and its sign differs from b's.
    Val r = w.bin("remainder", a, safe);
    Val fix = w.land(w.cmp("NE", r, zero), w.lxor(w.cmp("LT", r, zero), w.cmp("LT", b, zero)));
    q = w.sel(fix, w.sub(q, one), q);
  }
  q = w.sel(b_m1, w.neg(a), q);  // wraps: -INT_MIN is INT_MIN
  return w.sel(b_zero, w.ki(-1, t), q);
}

// remainder (numpy: the divisor's sign) or fmod (C: the dividend's sign): x % 0 = x, INT_MIN % -1 = 0.
Val int_remainder(Writer& w, const Val& a, const Val& b, bool numpy) {
  DType t = a.type.dtype;
  Val zero = w.ki(0, t), one = w.ki(1, t);
  Val b_zero = w.cmp("EQ", b, zero);
  if (!is_signed_int(t)) return w.sel(b_zero, a, w.bin("remainder", a, w.sel(b_zero, one, b)));
  Val b_m1 = w.cmp("EQ", b, w.ki(-1, t));
  Val r = w.bin("remainder", a, w.sel(w.lor(b_zero, b_m1), one, b));
  if (numpy) {
    Val fix = w.land(w.cmp("NE", r, zero), w.lxor(w.cmp("LT", r, zero), w.cmp("LT", b, zero)));
    r = w.sel(fix, w.add(r, b), r);
  }
  r = w.sel(b_m1, zero, r);
  return w.sel(b_zero, a, r);
}

// Square-and-multiply over every exponent bit, wrapping. XLA's integer power looks at the exponent's
// low 6 bits only (3^64 and 2^64 give 1 in int64, where the wrapped values are 0x7932...01 and 0),
// so it is written out; a negative exponent gives 0 except for bases 1 and -1.
Val int_power(Writer& w, const Val& a, const Val& b) {
  DType t = a.type.dtype;
  bool is_signed = is_signed_int(t);
  int bits = bit_width(t) - (is_signed ? 1 : 0);  // a non-negative signed exponent has a zero top bit
  Val zero = w.ki(0, t), one = w.ki(1, t);
  Val result = one, base = a, e = b;
  for (int i = 0; i < bits; ++i) {
    Val bit = w.cmp("NE", w.land(e, one), zero);
    result = w.sel(bit, w.mul(result, base), result);
    if (i + 1 < bits) {
      base = w.mul(base, base);
      e = w.bin("shift_right_logical", e, one);
    }
  }
  if (!is_signed) return result;
  Val m1 = w.ki(-1, t);
  Val odd = w.cmp("NE", w.land(b, one), zero);
  Val neg_exp = w.sel(w.cmp("EQ", a, one), one, w.sel(w.cmp("EQ", a, m1), w.sel(odd, m1, one), zero));
  return w.sel(w.cmp("LT", b, zero), neg_exp, result);
}

// Whether a shift amount is in [0, width): compared in the unsigned type, where a negative amount
// is huge.
Val shift_in_range(Writer& w, const Val& b) {
  DType u = uint_of(b.type.dtype);
  return w.cmp("LT", w.bitcast(b, u), w.ki(bit_width(b.type.dtype), u));
}

// shift_left / shift_right_logical: 0 for amounts outside [0, width); the amount StableHLO sees is
// always in range.
Val logical_shift(Writer& w, const char* name, const Val& a, const Val& b) {
  DType t = a.type.dtype;
  Val ok = shift_in_range(w, b);
  Val shifted = w.bin(name, a, w.sel(ok, b, w.ki(0, t)));
  return w.sel(ok, shifted, w.ki(0, t));
}

// shift_right_arithmetic: the bit pattern shifted as the signed type of the width (also for
// unsigned types, as StableHLO and JAX), and the sign fill for amounts outside [0, width), which is
// the shift by width - 1.
Val arithmetic_shift(Writer& w, const Val& a, const Val& b) {
  DType t = a.type.dtype, s = sint_of(t);
  Val ok = shift_in_range(w, b);
  Val amount = w.sel(ok, b, w.ki(bit_width(t) - 1, t));
  return w.bitcast(w.bin("shift_right_arithmetic", w.bitcast(a, s), w.bitcast(amount, s)), t);
}

// ---- float formulas (computed in compute_type) ----

// C's fmod: StableHLO's float remainder takes the dividend's sign and is exact.
Val fmod(Writer& w, const Val& a, const Val& b) { return w.bin("remainder", a, b); }

// numpy's remainder: fmod moved to the divisor's sign; a zero result takes b's sign.
Val float_remainder(Writer& w, const Val& a, const Val& b) {
  DType t = a.type.dtype;
  Val zero = w.kf(0.0, t);
  Val mod = fmod(w, a, b);
  Val fix = w.land(w.cmp("NE", mod, zero), w.lxor(w.cmp("LT", b, zero), w.cmp("LT", mod, zero)));
  Val r = w.sel(fix, w.add(mod, b), mod);
  return w.sel(w.cmp("EQ", mod, zero), w.copysign(zero, b), r);
}

// numpy's floor_divide (npy_divmod): the exact quotient from fmod, floored with a 0.5 guard.
Val float_floor_divide(Writer& w, const Val& a, const Val& b) {
  DType t = a.type.dtype;
  Val zero = w.kf(0.0, t), one = w.kf(1.0, t);
  Val q = w.div(a, b);
  Val mod = fmod(w, a, b);
  Val d = w.div(w.sub(a, mod), b);
  Val fix = w.land(w.cmp("NE", mod, zero), w.lxor(w.cmp("LT", b, zero), w.cmp("LT", mod, zero)));
  d = w.sel(fix, w.sub(d, one), d);
  Val fl = w.un("floor", d);
  fl = w.sel(w.cmp("GT", w.sub(d, fl), w.kf(0.5, t)), w.add(fl, one), fl);
  Val r = w.sel(w.cmp("NE", d, zero), fl, w.copysign(zero, q));
  return w.sel(w.cmp("EQ", b, zero), q, r);
}

// sigmoid as the interpreter writes it: exp(-|x|) never overflows, so both tails keep their relative
// accuracy (StableHLO's logistic leaves the formula to the consumer).
Val sigmoid(Writer& w, const Val& x) {
  DType t = x.type.dtype;
  Val e = w.un("exponential", w.neg(w.abs(x)));
  Val one = w.kf(1.0, t);
  return w.div(w.sel(w.cmp("GE", x, w.kf(0.0, t)), one, e), w.add(one, e));
}

// hypot: IEEE's hypot(+-inf, NaN) = +inf; otherwise NaN propagates. Scaled by the larger magnitude
// so that nothing overflows or underflows: within about an ULP.
Val hypot(Writer& w, const Val& a, const Val& b) {
  DType t = a.type.dtype;
  Val x = w.abs(a), y = w.abs(b);
  Val x_bigger = w.cmp("GT", x, y);
  Val big = w.sel(x_bigger, x, y), small = w.sel(x_bigger, y, x);
  Val ratio = w.div(small, big);
  Val scaled = w.mul(big, w.un("sqrt", w.add(w.kf(1.0, t), w.mul(ratio, ratio))));
  Val r = w.sel(w.cmp("EQ", big, w.kf(0.0, t)), w.kf(0.0, t), scaled);
  r = w.sel(w.lor(w.isnan(a), w.isnan(b)), w.add(a, b), r);
  return w.sel(w.lor(w.isinf(a), w.isinf(b)), w.kf(INFINITY, t), r);
}

// nextafter on the bits of the operand's own format (float16 steps in float16).
Val nextafter(Writer& w, const Val& a, const Val& b) {
  DType t = a.type.dtype, u = uint_of(t);
  Val ua = w.bitcast(a, u), ub = w.bitcast(b, u);
  Val one = w.ki(1, u);
  int64_t sign = std::numeric_limits<int64_t>::min() >> (64 - bit_width(t));
  Val from_zero = w.lor(w.land(ub, w.ki(sign, u)), one);  // the smallest subnormal with b's sign
  Val zero = w.kf(0.0, t);
  // Moving away from zero grows the magnitude bits.
  Val away = w.cmp("EQ", w.cmp("LT", a, b), w.cmp("GT", a, zero));
  Val step = w.sel(away, w.add(ua, one), w.sub(ua, one));
  Val r = w.sel(w.cmp("EQ", a, zero), from_zero, step);
  r = w.sel(w.cmp("EQ", a, b), ub, r);
  r = w.bitcast(r, t);
  return w.sel(w.lor(w.isnan(a), w.isnan(b)), w.add(a, b), r);
}

// gelu in float64 for every float type (float32 and the 16-bit floats round once from it). In the
// negative tail both forms lose about x^2 ULPs of their type to the rounding of their argument (95
// ULP at x = -12 in float32), which float64 makes negligible for a float32 result; a float64 result
// keeps it (below 2e-13 relative before the result underflows). The interpreter instead carries the
// argument's rounding error with Dekker's exact products and corrects for it, but XLA's CPU compiler
// contracts multiply-adds into fused ones, which breaks exact two-sums. The limit at -inf is -0, not
// -inf * 0.
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kGeluA = 0x1.9884533d43651p+0;  // 2 sqrt(2 / pi)
constexpr double kGeluB = 0x1.2444f2a4d8b4bp-4;  // 2 sqrt(2 / pi) 0.044715
Val gelu(Writer& w, const Val& x, bool approximate) {
  DType t = x.type.dtype;
  Val r;
  if (approximate) {
    // 0.5 x (1 + tanh(u)) = x sigmoid(2u), 2u = x (A + B x^2); 1 + tanh(u) would cancel.
    Val v = w.mul(x, w.add(w.kf(kGeluA, t), w.mul(w.kf(kGeluB, t), w.mul(x, x))));
    r = w.mul(x, sigmoid(w, v));
  } else {
    // 0.5 x erfc(-x / sqrt2): 1 + erf would cancel.
    r = w.mul(w.mul(x, w.kf(0.5, t)), w.un("chlo.erfc", w.mul(x, w.kf(-kInvSqrt2, t))));
  }
  return w.sel(w.cmp("EQ", x, w.kf(-INFINITY, t)), w.kf(-0.0, t), r);
}

// log1p. XLA's float64 log_plus_one is up to 127 ULPs off for |x| in [0.3, 0.6] (an ULP elsewhere);
// from |x| = 1/4 on log(1 + x) is within a few ULPs (the rounding of 1 + x costs at most 2^-53 /
// ((1 + x) log1p(x)) relative), so float64 takes that there. (Goldberg's log(u) x / (u - 1) would need
// u - 1 kept: XLA's simplifier folds (1 + x) - 1 to x.)
Val log1p(Writer& w, const Val& x) {
  DType t = x.type.dtype;
  Val native = w.un("log_plus_one", x);
  if (t != DType::F64) return native;
  Val plain = w.un("log", w.add(w.kf(1.0, t), x));
  return w.sel(w.cmp("LT", w.abs(x), w.kf(0.25, t)), native, plain);
}

// atanh(x) = sign(x) log1p(2|x| / (1 - |x|)) / 2: on |x| the argument is positive, where log1p is
// well conditioned, and 1 - |x| is exact from 1/2 on (CHLO's form inherits XLA's float64 log1p).
Val atanh(Writer& w, const Val& x) {
  DType t = x.type.dtype;
  Val a = w.abs(x);
  Val r = w.mul(w.kf(0.5, t), log1p(w, w.div(w.add(a, a), w.sub(w.kf(1.0, t), a))));
  return w.copysign(r, x);
}

// sinh and cosh from exp (CHLO's exp(|x| + log(1/2)) rounds its argument, which costs |x| ULPs: 400
// in float64 near the overflow). Beyond 20, where e^-|x| is below an ULP of e^|x|, both are
// exp(|x|/2)^2 / 2, which stays finite up to the result's own overflow; sinh below 1 is CHLO's
// (expm1-based: no cancellation).
Val sinh(Writer& w, const Val& x) {
  DType t = x.type.dtype;
  Val a = w.abs(x);
  Val e = w.un("exponential", a);
  Val mid = w.mul(w.kf(0.5, t), w.sub(e, w.div(w.kf(1.0, t), e)));
  Val h = w.un("exponential", w.mul(a, w.kf(0.5, t)));
  Val big = w.mul(w.mul(h, w.kf(0.5, t)), h);
  Val r = w.sel(w.cmp("GT", a, w.kf(20.0, t)), big, mid);
  return w.sel(w.cmp("LT", a, w.kf(1.0, t)), w.un("chlo.sinh", x), w.copysign(r, x));
}
Val cosh(Writer& w, const Val& x) {
  DType t = x.type.dtype;
  Val a = w.abs(x);
  Val e = w.un("exponential", a);
  Val mid = w.mul(w.kf(0.5, t), w.add(e, w.div(w.kf(1.0, t), e)));
  Val h = w.un("exponential", w.mul(a, w.kf(0.5, t)));
  Val big = w.mul(w.mul(h, w.kf(0.5, t)), h);
  return w.sel(w.cmp("GT", a, w.kf(20.0, t)), big, mid);
}

// z (c[0] + z (c[1] + ...)) by Horner.
Val series(Writer& w, const Val& z, std::span<const double> c) {
  DType t = z.type.dtype;
  Val p = w.kf(c.back(), t);
  for (size_t i = c.size() - 1; i-- > 0;) p = w.add(w.mul(p, z), w.kf(c[i], t));
  return w.mul(p, z);
}

// lgamma. CHLO's Lanczos form is accurate in absolute terms only: next to the zeros at 1 and 2 its
// relative error reaches 1e-10 in float64 (5e-2 in float32), where the interpreter's is an ULP. On
// [1/2, 5/2] the series above takes over: lgamma(1 + z) = lgamma(2 + z) - log(1 + z) (no
// cancellation: the two differ in sign or by 2x or more), with z = x - 1 or x - 2 exact there
// (Sterbenz).
Val lgamma(Writer& w, const Val& x) {
  DType t = x.type.dtype;
  Val r = w.un("chlo.lgamma", x);
  Val half = w.kf(0.5, t);
  Val z2 = w.sub(x, w.kf(2.0, t));
  r = w.sel(w.cmp("LE", w.abs(z2), half), series(w, z2, special::kLgammaAt2), r);
  Val z1 = w.sub(x, w.kf(1.0, t));
  Val near1 = w.sub(series(w, z1, special::kLgammaAt2), w.un("log", x));  // log(x) = log1p(z1)
  return w.sel(w.cmp("LT", w.abs(z1), half), near1, r);
}

// digamma's Taylor coefficients about its positive zero x0 (the interpreter's, special_constants.h):
// the first 22 suffice for |x - x0| <= 0.1, where this series takes over.
constexpr std::span<const double> kDigammaTaylor(special::kDigammaTaylor, 22);
using special::kDigammaRootHi;
using special::kDigammaRootLo;

// digamma. XLA's is NaN at 0, where evoxc gives -inf (the limit from above, as torch)
// for both zeros; and like lgamma it is accurate only in absolute terms next to its positive zero,
// where the series takes over.
Val digamma(Writer& w, const Val& x) {
  DType t = x.type.dtype;
  Val r = w.un("chlo.digamma", x);
  // psi(x) = P(h - lo) with h = x - hi exact near the root; (x - hi) - lo would be folded by XLA's
  // simplifier to x - (hi + lo), which loses lo, so lo enters to first order: P(h) - lo P'(0).
  Val h = w.sub(x, w.kf(kDigammaRootHi, t));
  Val near = w.sub(series(w, h, kDigammaTaylor), w.kf(kDigammaRootLo * kDigammaTaylor[0], t));
  r = w.sel(w.cmp("LT", w.abs(h), w.kf(0.1, t)), near, r);
  return w.sel(w.cmp("EQ", x, w.kf(0.0, t)), w.kf(-INFINITY, t), r);
}

// ---- convert (docs/semantics.md, "Conversion") ----

// float -> int: truncation toward zero, saturating, NaN -> 0. StableHLO leaves out-of-range values
// implementation-defined, so the convert only ever sees values in range.
Val float_to_int(Writer& w, const Val& x, DType to) {
  Val xc = w.cvt(x, compute_type(x.type.dtype));
  DType f = xc.type.dtype;
  // The range's ends as powers of two, exact in every float type: [lo, hi).
  double lo = is_signed_int(to) ? -std::ldexp(1.0, bit_width(to) - 1) : 0.0;
  double hi = std::ldexp(1.0, bit_width(to) - (is_signed_int(to) ? 1 : 0));
  Val klo = w.kf(lo, f), khi = w.kf(hi, f);
  Val inside = w.land(w.cmp("GT", xc, klo), w.cmp("LT", xc, khi));  // false for NaN
  Val r = w.cvt(w.sel(inside, xc, w.kf(0.0, f)), to);
  int64_t max_bits = is_signed_int(to) ? (std::numeric_limits<int64_t>::max() >> (64 - bit_width(to))) : -1;
  int64_t min_bits = is_signed_int(to) ? (std::numeric_limits<int64_t>::min() >> (64 - bit_width(to))) : 0;
  r = w.sel(w.cmp("GE", xc, khi), w.ki(max_bits, to), r);
  return w.sel(w.cmp("LE", xc, klo), w.ki(min_bits, to), r);
}

// float64 -> float32 rounding to odd (the interpreter's narrow_to_float_odd): an inexact result
// with an even last bit moves one ULP toward x, so that the rounding to a 16-bit float after it is
// the correct single rounding of x. XLA converts float64 to float16/bfloat16 through float32 with
// two roundings to nearest (1 + 2^-11 + 2^-40 gives 1 in float16 instead of 1 + 2^-10).
Val narrow_to_float_odd(Writer& w, const Val& x) {
  Val r = w.cvt(x, DType::F32);
  Val bits = w.bitcast(r, DType::U32);
  Val one = w.ki(1, DType::U32);
  Val even = w.cmp("EQ", w.land(bits, one), w.ki(0, DType::U32));
  // false for NaN (NaN != NaN is true, but r is then NaN too and never adjusted) and for inf
  Val inexact = w.land(w.cmp("NE", w.cvt(r, DType::F64), x), w.lnot(w.isinf(r)));
  inexact = w.land(inexact, w.lnot(w.isnan(x)));
  Val toward = w.sel(w.cmp("LT", w.abs(w.cvt(r, DType::F64)), w.abs(x)), w.add(bits, one), w.sub(bits, one));
  return w.bitcast(w.sel(w.land(inexact, even), toward, bits), DType::F32);
}

// A 32- or 64-bit integer -> bfloat16 with one rounding (the interpreter's int_to_half): the
// magnitude is rounded to 8 significant bits, half to even, in integer arithmetic, and the float
// steps after it are exact. XLA goes through float32 and rounds twice (2^30 + 2^22 + 1 gives 2^30
// instead of 2^30 + 2^23).
Val int_to_bfloat16(Writer& w, const Val& x) {
  DType t = x.type.dtype, u = uint_of(t);
  int width = bit_width(t);
  Val m = is_signed_int(t) ? w.bitcast(w.sel(w.cmp("LT", x, w.ki(0, t)), w.neg(x), x), u) : x;  // |INT_MIN| wraps right
  Val zero = w.ki(0, u), one = w.ki(1, u);
  Val bits_used = w.sub(w.ki(width, u), w.un("count_leading_zeros", m));
  Val shift = w.sel(w.cmp("GT", bits_used, w.ki(8, u)), w.sub(bits_used, w.ki(8, u)), zero);  // < width
  Val unit = w.bin("shift_left", one, shift);
  Val low = w.land(m, w.sub(unit, one));
  Val half = w.bin("shift_right_logical", unit, one);  // 0 when nothing is shifted out
  Val q = w.bin("shift_right_logical", m, shift);
  Val odd = w.cmp("NE", w.land(q, one), zero);
  Val up = w.land(w.cmp("NE", half, zero), w.lor(w.cmp("GT", low, half), w.land(w.cmp("EQ", low, half), odd)));
  q = w.sel(up, w.add(q, one), q);  // at most 2^8: exact in float32
  // 2^shift as float32 bits: (shift + 127) << 23.
  Val scale = w.bitcast(
      w.bin("shift_left", w.add(w.cvt(shift, DType::U32), w.ki(127, DType::U32)), w.ki(23, DType::U32)), DType::F32);
  Val r = w.mul(w.cvt(q, DType::F32), scale);
  if (is_signed_int(t)) r = w.sel(w.cmp("LT", x, w.ki(0, t)), w.neg(r), r);
  return w.cvt(r, DType::BF16);
}

Val convert(Writer& w, const Val& x, DType to) {
  DType from = x.type.dtype;
  if (from == to) return x;
  // anything -> bool is x != 0 (NaN -> true, -0 -> false).
  if (to == DType::Bool) return w.cmp("NE", x, is_float(from) ? w.kf(0.0, from) : w.ki(0, from));
  if (is_float(from) && is_int(to)) return float_to_int(w, x, to);
  if (from == DType::F64 && (to == DType::F16 || to == DType::BF16)) return w.cvt(narrow_to_float_odd(w, x), to);
  // Integers of up to 16 bits are exact in float32, so XLA's route rounds once for them.
  if (is_int(from) && bit_width(from) >= 32 && to == DType::BF16) return int_to_bfloat16(w, x);
  // int -> float16: integers above 2^24 (the only ones float32 rounds) are far past float16's range,
  // so the route through float32 rounds once too.
  return w.cvt(x, to);
}

// ---- rule builders ----

using Fn1 = std::function<Val(Writer&, const Val&)>;
using Fn2 = std::function<Val(Writer&, const Val&, const Val&)>;

// A float unary op computed in compute_type and rounded once to its type. (Only gelu, lgamma and
// digamma compute in float64 for a narrower type: float64 is slow or emulated on accelerators.)
void float_unary(Table& t, const char* name, Fn1 f) {
  t.set(name, [f = std::move(f)](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    const TensorType& r = result_type(op);
    Writer w(e, r.shape);
    return {w.cvt(f(w, w.cvt(in[0], compute_type(r.dtype))), r.dtype)};
  });
}

// A unary op written directly on its operand's type.
void same_unary(Table& t, const char* name, Fn1 f) {
  t.set(name, [f = std::move(f)](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    Writer w(e, result_type(op).shape);
    return {f(w, in[0])};
  });
}

// A broadcasting binary op (or comparison) on its operands broadcast to the result shape.
void binary(Table& t, const char* name, Fn2 f) {
  t.set(name, [f = std::move(f)](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    Writer w(e, result_type(op).shape);
    return {f(w, w.bcast(in[0]), w.bcast(in[1]))};
  });
}

// A float-math binary op: in compute_type for the 16-bit floats; `int_f` for integer operands.
void math_binary(Table& t, const char* name, Fn2 float_f, Fn2 int_f = nullptr) {
  binary(t, name, [float_f = std::move(float_f), int_f = std::move(int_f)](Writer& w, const Val& a, const Val& b) {
    DType d = a.type.dtype;
    if (!is_float(d)) return int_f(w, a, b);
    DType c = compute_type(d);
    return w.cvt(float_f(w, w.cvt(a, c), w.cvt(b, c)), d);
  });
}

Fn1 op1(const char* name) {
  return [name](Writer& w, const Val& x) { return w.un(name, x); };
}
Fn1 chlo(const char* name) {
  return [name](Writer& w, const Val& x) { return w.un(std::string("chlo.") + name, x); };
}

void add_unary(Table& t) {
  float_unary(t, "exp", op1("exponential"));
  // 2^x by power, not exp(x ln 2), whose rounding of x ln 2 costs |x| ULPs.
  float_unary(t, "exp2", [](Writer& w, const Val& x) { return w.bin("power", w.kf(2.0, x.type.dtype), x); });
  float_unary(t, "expm1", op1("exponential_minus_one"));
  float_unary(t, "log", op1("log"));
  float_unary(t, "log1p", log1p);
  // log(x) / log(b): the quotient adds an ULP or so to log's error.
  for (auto [name, base] : {std::pair{"log2", 2.0}, std::pair{"log10", 10.0}}) {
    double ln_base = std::log(base);
    float_unary(t, name,
                [ln_base](Writer& w, const Val& x) { return w.div(w.un("log", x), w.kf(ln_base, x.type.dtype)); });
  }
  float_unary(t, "sqrt", op1("sqrt"));
  // 1 / sqrt(x) as the interpreter writes it (XLA's simplifier turns it into its rsqrt, which can
  // differ by an ULP).
  float_unary(t, "rsqrt", [](Writer& w, const Val& x) { return w.div(w.kf(1.0, x.type.dtype), w.un("sqrt", x)); });
  float_unary(t, "cbrt", op1("cbrt"));
  float_unary(t, "reciprocal", [](Writer& w, const Val& x) { return w.div(w.kf(1.0, x.type.dtype), x); });
  float_unary(t, "sin", op1("sine"));
  float_unary(t, "cos", op1("cosine"));
  float_unary(t, "tan", op1("tan"));
  float_unary(t, "asin", chlo("asin"));
  float_unary(t, "acos", chlo("acos"));
  // atan(x) = atan2(x, 1) exactly, in StableHLO proper.
  float_unary(t, "atan", [](Writer& w, const Val& x) { return w.bin("atan2", x, w.kf(1.0, x.type.dtype)); });
  float_unary(t, "sinh", sinh);
  float_unary(t, "cosh", cosh);
  float_unary(t, "tanh", op1("tanh"));
  float_unary(t, "asinh", chlo("asinh"));
  float_unary(t, "acosh", chlo("acosh"));
  float_unary(t, "atanh", atanh);
  float_unary(t, "sigmoid", sigmoid);
  float_unary(t, "erf", chlo("erf"));
  float_unary(t, "erfc", chlo("erfc"));
  float_unary(t, "erf_inv", chlo("erf_inv"));
  // lgamma and digamma compute in float64 for every float type: CHLO's float32 forms are accurate to
  // about 1e-6 absolute (a dozen ULPs of 1), which the reflection for x < 0 turns into any relative
  // error next to the negative zeros (4e-3 at -2.457), where the interpreter keeps its ULP.
  for (auto [name, fn] : {std::pair{"lgamma", &lgamma}, std::pair{"digamma", &digamma}}) {
    t.set(name, [fn](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
      const TensorType& r = result_type(op);
      Writer w(e, r.shape);
      return {convert(w, fn(w, w.cvt(in[0], DType::F64)), r.dtype)};
    });
  }
  // log1p(exp(x)) = max(x, 0) + log1p(exp(-|x|)): no overflow for large x, NaN propagates.
  float_unary(t, "softplus", [](Writer& w, const Val& x) {
    DType d = x.type.dtype;
    Val zero = w.kf(0.0, d);
    Val pos = w.sel(w.cmp("GT", x, zero), x, zero);
    return w.add(pos, w.un("log_plus_one", w.un("exponential", w.neg(w.abs(x)))));
  });
  // Rounding is exact in every float type; no widening.
  same_unary(t, "floor", op1("floor"));
  same_unary(t, "ceil", op1("ceil"));
  same_unary(t, "round", op1("round_nearest_even"));
  // trunc: ceil below zero, floor otherwise (keeps -0 for (-1, 0) and NaN).
  same_unary(t, "trunc", [](Writer& w, const Val& x) {
    return w.sel(w.cmp("LT", x, w.kf(0.0, x.type.dtype)), w.un("ceil", x), w.un("floor", x));
  });
  t.set("gelu", [](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    const TensorType& r = result_type(op);
    bool approximate = op.attributes().find("approximate") != op.attributes().end() &&
                       attr_bool(op.attributes(), "approximate", "gelu");
    Writer w(e, r.shape);
    return {convert(w, gelu(w, w.cvt(in[0], DType::F64), approximate), r.dtype)};
  });

  same_unary(t, "neg", op1("negate"));  // integers wrap, as StableHLO's negate
  same_unary(t, "abs", [](Writer& w, const Val& x) {
    // StableHLO's abs takes no unsigned operand; abs(INT_MIN) wraps to INT_MIN in StableHLO too.
    return is_unsigned_int(x.type.dtype) ? x : w.abs(x);
  });
  same_unary(t, "sign", [](Writer& w, const Val& x) {
    // StableHLO's sign keeps +-0 and NaN on floats and gives -1/0/1 on signed ints; it takes no
    // unsigned operand, where the sign is x != 0.
    if (is_unsigned_int(x.type.dtype)) return w.cvt(w.cmp("NE", x, w.ki(0, x.type.dtype)), x.type.dtype);
    return w.un("sign", x);
  });
  same_unary(t, "square", [](Writer& w, const Val& x) { return w.mul(x, x); });
  // relu: x where x > 0 or NaN, else +0 (relu(-0) is +0).
  same_unary(t, "relu", [](Writer& w, const Val& x) {
    DType d = x.type.dtype;
    Val zero = is_float(d) ? w.kf(0.0, d) : w.ki(0, d);
    return w.sel(w.cmp("LE", x, zero), zero, x);
  });
  // The predicates are constant on integers and bool.
  same_unary(t, "isnan", [](Writer& w, const Val& x) { return is_float(x.type.dtype) ? w.isnan(x) : w.kb(false); });
  same_unary(t, "isinf", [](Writer& w, const Val& x) { return is_float(x.type.dtype) ? w.isinf(x) : w.kb(false); });
  same_unary(t, "isfinite", [](Writer& w, const Val& x) {
    return is_float(x.type.dtype) ? w.emitter().op1("is_finite", {x}, "", w.type(DType::Bool)) : w.kb(true);
  });
  same_unary(t, "logical_not", op1("not"));
  same_unary(t, "bitwise_not", op1("not"));
  same_unary(t, "popcount", op1("popcnt"));
  t.set("nan_to_num", [](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    const TensorType& r = result_type(op);
    Writer w(e, r.shape);
    DType d = r.dtype;
    auto [nan_v, posinf_v, neginf_v] = interp::nan_to_num_values(d, op.attributes());
    Val nan = w.kf(nan_v, d), posinf = w.kf(posinf_v, d), neginf = w.kf(neginf_v, d);
    const Val& x = in[0];
    Val y = w.sel(w.cmp("EQ", x, w.kf(-INFINITY, d)), neginf, x);
    y = w.sel(w.cmp("EQ", x, w.kf(INFINITY, d)), posinf, y);
    return {w.sel(w.isnan(x), nan, y)};
  });
}

void add_binary(Table& t) {
  binary(t, "add", [](Writer& w, const Val& a, const Val& b) { return w.add(a, b); });
  binary(t, "subtract", [](Writer& w, const Val& a, const Val& b) { return w.sub(a, b); });
  binary(t, "multiply", [](Writer& w, const Val& a, const Val& b) { return w.mul(a, b); });
  // Float add, subtract, multiply and divide are correctly rounded in every float type (float32's
  // result of two 16-bit floats rounds to the same value), so they run in the operands' type.
  binary(t, "divide", [](Writer& w, const Val& a, const Val& b) {
    return is_float(a.type.dtype) ? w.div(a, b) : int_divide(w, a, b, false);
  });
  math_binary(t, "floor_divide", float_floor_divide,
              [](Writer& w, const Val& a, const Val& b) { return int_divide(w, a, b, true); });
  math_binary(t, "remainder", float_remainder,
              [](Writer& w, const Val& a, const Val& b) { return int_remainder(w, a, b, true); });
  math_binary(t, "fmod", fmod, [](Writer& w, const Val& a, const Val& b) { return int_remainder(w, a, b, false); });
  math_binary(
      t, "power", [](Writer& w, const Val& a, const Val& b) { return w.bin("power", a, b); }, int_power);
  // StableHLO's maximum and minimum are IEEE 754-2019's on floats (NaN propagates, -0 < +0), as
  // evoxc's.
  binary(t, "maximum", [](Writer& w, const Val& a, const Val& b) { return w.bin("maximum", a, b); });
  binary(t, "minimum", [](Writer& w, const Val& a, const Val& b) { return w.bin("minimum", a, b); });
  math_binary(t, "atan2", [](Writer& w, const Val& a, const Val& b) { return w.bin("atan2", a, b); });
  math_binary(t, "hypot", hypot);
  binary(t, "nextafter", nextafter);
  binary(t, "copysign", [](Writer& w, const Val& a, const Val& b) { return w.copysign(a, b); });
  binary(t, "logical_and", [](Writer& w, const Val& a, const Val& b) { return w.land(a, b); });
  binary(t, "logical_or", [](Writer& w, const Val& a, const Val& b) { return w.lor(a, b); });
  binary(t, "logical_xor", [](Writer& w, const Val& a, const Val& b) { return w.lxor(a, b); });
  binary(t, "bitwise_and", [](Writer& w, const Val& a, const Val& b) { return w.land(a, b); });
  binary(t, "bitwise_or", [](Writer& w, const Val& a, const Val& b) { return w.lor(a, b); });
  binary(t, "bitwise_xor", [](Writer& w, const Val& a, const Val& b) { return w.lxor(a, b); });
  binary(t, "shift_left", [](Writer& w, const Val& a, const Val& b) { return logical_shift(w, "shift_left", a, b); });
  binary(t, "shift_right_logical",
         [](Writer& w, const Val& a, const Val& b) { return logical_shift(w, "shift_right_logical", a, b); });
  binary(t, "shift_right_arithmetic", arithmetic_shift);

  for (auto [name, dir] :
       {std::pair{"equal", "EQ"}, std::pair{"not_equal", "NE"}, std::pair{"less", "LT"}, std::pair{"less_equal", "LE"},
        std::pair{"greater", "GT"}, std::pair{"greater_equal", "GE"}}) {
    binary(t, name, [dir](Writer& w, const Val& a, const Val& b) { return w.cmp(dir, a, b); });
  }
}

void add_other(Table& t) {
  t.set("select", [](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    Writer w(e, result_type(op).shape);
    return {w.sel(w.bcast(in[0]), w.bcast(in[1]), w.bcast(in[2]))};
  });
  // StableHLO's clamp is minimum(maximum(x, lo), hi) with those IEEE ops, as evoxc's (NaN from any
  // operand propagates, -0 < +0, lo > hi gives hi).
  t.set("clamp", [](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    const TensorType& r = result_type(op);
    Writer w(e, r.shape);
    return {e.op1("clamp", {w.bcast(in[1]), w.bcast(in[0]), w.bcast(in[2])}, "", r)};
  });
  t.set("convert", [](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    const TensorType& r = result_type(op);
    Writer w(e, r.shape);
    return {convert(w, in[0], r.dtype)};
  });
  t.set("bitcast_convert", [](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    const TensorType& r = result_type(op);
    return {e.op1("bitcast_convert", {in[0]}, "", r)};
  });
}

}  // namespace

void add_elementwise_rules(Table& t) {
  add_unary(t);
  add_binary(t);
  add_other(t);
}

}  // namespace evoxc::stablehlo
