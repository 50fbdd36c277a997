// mlir lowering rules: binary elementwise ops, comparisons, select, clamp, convert and bitcast_convert, with
// evoxc's semantics (docs/semantics.md) written out where arith leaves a case undefined (integer division by
// zero and INT_MIN / -1, shifts past the width: poison in LLVM) or computes it otherwise.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include "backends/mlir/emitter.h"

namespace evoxc::mlir_backend {
namespace {

const TensorType& result_type(const Operation& op) { return op.result(0)->type(); }

// The unsigned integer type of a dtype's width (bit tricks on floats).
DType uint_of(DType t) {
  switch (size_of(t)) {
    case 1: return DType::U8;
    case 2: return DType::U16;
    case 4: return DType::U32;
    default: return DType::U64;
  }
}

// The bits of `x` read as `t` (same width). MLIR integers are signless, so between two integer types of one
// width nothing is written.
Scalar reinterpret(Body& b, const Scalar& x, DType t) {
  if (element_type(x.dtype) == element_type(t)) return {x.name, t};
  return b.cast("arith.bitcast", x, t);
}

Scalar land(Body& b, const Scalar& x, const Scalar& y) { return b.bin("arith.andi", x, y); }
Scalar lor(Body& b, const Scalar& x, const Scalar& y) { return b.bin("arith.ori", x, y); }
Scalar lxor(Body& b, const Scalar& x, const Scalar& y) { return b.bin("arith.xori", x, y); }

// Integer compares: the predicate's signed or unsigned form by the dtype (bool compares as unsigned:
// false < true).
Scalar icmp(Body& b, const char* pred, const Scalar& x, const Scalar& y) {
  std::string p = pred;
  if (p != "eq" && p != "ne") p = (is_signed_int(x.dtype) ? "s" : "u") + p;
  return b.cmpi(p, x, y);
}

// ---- integer arithmetic (docs/semantics.md, "Integer arithmetic") ----

// Truncating (or, with `floor`, numpy's flooring) division with evoxc's guards: x / 0 = -1 (all ones),
// INT_MIN / -1 = INT_MIN. The divisor arith sees is never 0 or -1, where LLVM's division is undefined.
Scalar int_divide(Body& b, const Scalar& x, const Scalar& y, bool floor) {
  DType t = x.dtype;
  Scalar zero = b.i(0, t), one = b.i(1, t), all_ones = b.i(-1, t);
  Scalar y_zero = b.cmpi("eq", y, zero);
  if (!is_signed_int(t)) return b.select(y_zero, all_ones, b.bin("arith.divui", x, b.select(y_zero, one, y)));
  Scalar y_m1 = b.cmpi("eq", y, all_ones);
  Scalar safe = b.select(lor(b, y_zero, y_m1), one, y);
  Scalar q = b.bin("arith.divsi", x, safe);
  if (floor) {
    // one less where the remainder is non-zero and its sign differs from the divisor's
    Scalar r = b.bin("arith.remsi", x, safe);
    Scalar fix = land(b, b.cmpi("ne", r, zero), lxor(b, b.cmpi("slt", r, zero), b.cmpi("slt", y, zero)));
    q = b.select(fix, b.bin("arith.subi", q, one), q);
  }
  q = b.select(y_m1, b.bin("arith.subi", zero, x), q);  // wraps: -INT_MIN is INT_MIN
  return b.select(y_zero, all_ones, q);
}

// remainder (`numpy`: the divisor's sign) or fmod (C: the dividend's sign): x % 0 = x, INT_MIN % -1 = 0.
Scalar int_remainder(Body& b, const Scalar& x, const Scalar& y, bool numpy) {
  DType t = x.dtype;
  Scalar zero = b.i(0, t), one = b.i(1, t);
  Scalar y_zero = b.cmpi("eq", y, zero);
  if (!is_signed_int(t)) return b.select(y_zero, x, b.bin("arith.remui", x, b.select(y_zero, one, y)));
  Scalar y_m1 = b.cmpi("eq", y, b.i(-1, t));
  Scalar r = b.bin("arith.remsi", x, b.select(lor(b, y_zero, y_m1), one, y));
  if (numpy) {
    Scalar fix = land(b, b.cmpi("ne", r, zero), lxor(b, b.cmpi("slt", r, zero), b.cmpi("slt", y, zero)));
    r = b.select(fix, b.bin("arith.addi", r, y), r);
  }
  r = b.select(y_m1, zero, r);
  return b.select(y_zero, x, r);
}

// Square-and-multiply, wrapping, in an scf.while that runs while exponent bits are left. (Unrolled over every
// bit the squarings form a DAG whose shared operands LLVM's loop vectorizer walks once per path: exponential
// compile time when the base is loop-invariant.) A negative exponent gives 0 except for bases 1 and -1.
Scalar int_power(Body& b, const Scalar& x, const Scalar& y) {
  DType t = x.dtype;
  std::string ty = element_type(t), tys = ty + ", " + ty + ", " + ty;
  Scalar zero = b.i(0, t), one = b.i(1, t);
  std::string loop = b.fresh();
  Scalar r{b.fresh(), t}, base{b.fresh(), t}, e{b.fresh(), t};  // the carried values, named for both regions
  std::string carried = r.name + ", " + base.name + ", " + e.name;
  b.line(loop + ":3 = scf.while (" + r.name + " = " + one.name + ", " + base.name + " = " + x.name + ", " + e.name +
         " = " + y.name + ") : (" + tys + ") -> (" + tys + ") {");
  b.emitter().indent([&] { b.line("scf.condition(" + b.cmpi("ne", e, zero).name + ") " + carried + " : " + tys); });
  b.line("} do {");
  b.line("^bb0(" + r.name + ": " + ty + ", " + base.name + ": " + ty + ", " + e.name + ": " + ty + "):");
  b.emitter().indent([&] {
    Scalar bit = b.cmpi("ne", land(b, e, one), zero);
    Scalar next_r = b.select(bit, b.bin("arith.muli", r, base), r);
    Scalar next_base = b.bin("arith.muli", base, base);
    Scalar next_e = b.bin("arith.shrui", e, one);
    b.line("scf.yield " + next_r.name + ", " + next_base.name + ", " + next_e.name + " : " + tys);
  });
  b.line("}");
  Scalar result{loop + "#0", t};
  if (!is_signed_int(t)) return result;
  Scalar m1 = b.i(-1, t);
  Scalar odd = b.cmpi("ne", land(b, y, one), zero);
  Scalar neg_exp = b.select(b.cmpi("eq", x, one), one, b.select(b.cmpi("eq", x, m1), b.select(odd, m1, one), zero));
  return b.select(b.cmpi("slt", y, zero), neg_exp, result);
}

// Whether a shift amount is in [0, width): compared unsigned, where a negative amount is huge.
Scalar shift_in_range(Body& b, const Scalar& y) { return b.cmpi("ult", y, b.i(bit_width(y.dtype), y.dtype)); }

// shift_left / shift_right_logical: 0 for amounts outside [0, width); the amount arith sees is always in range.
Scalar logical_shift(Body& b, const char* name, const Scalar& x, const Scalar& y) {
  Scalar zero = b.i(0, x.dtype);
  Scalar ok = shift_in_range(b, y);
  return b.select(ok, b.bin(name, x, b.select(ok, y, zero)), zero);
}

// shift_right_arithmetic: the bit pattern shifted as a signed value (also for unsigned dtypes, as StableHLO and
// JAX), and the sign fill for amounts outside [0, width), which is the shift by width - 1.
Scalar arithmetic_shift(Body& b, const Scalar& x, const Scalar& y) {
  Scalar amount = b.select(shift_in_range(b, y), y, b.i(bit_width(x.dtype) - 1, x.dtype));
  return b.bin("arith.shrsi", x, amount);
}

// ---- float formulas ----

// |x| with y's sign bit, on the bits (exact for every value, NaN payloads included, in any float format).
Scalar copysign(Body& b, const Scalar& x, const Scalar& y) {
  DType f = x.dtype, u = uint_of(f);
  int w = bit_width(f);
  Scalar sign = b.i(std::numeric_limits<int64_t>::min() >> (64 - w), u);  // the top bit
  Scalar magnitude = b.i(std::numeric_limits<int64_t>::max() >> (64 - w), u);
  Scalar bits = lor(b, land(b, reinterpret(b, x, u), magnitude), land(b, reinterpret(b, y, u), sign));
  return reinterpret(b, bits, f);
}

// C's fmod: arith.remf is LLVM's frem (the C library's fmod), exact.
Scalar fmod(Body& b, const Scalar& x, const Scalar& y) { return b.bin("arith.remf", x, y); }

// Where fmod's result needs moving to the divisor's sign (numpy): non-zero and of the other sign.
Scalar needs_sign_fix(Body& b, const Scalar& mod, const Scalar& y, const Scalar& zero) {
  return land(b, b.cmpf("une", mod, zero), lxor(b, b.cmpf("olt", y, zero), b.cmpf("olt", mod, zero)));
}

// numpy's remainder: fmod moved to the divisor's sign; a zero result takes the divisor's sign.
Scalar float_remainder(Body& b, const Scalar& x, const Scalar& y) {
  Scalar zero = b.f(0.0, x.dtype);
  Scalar mod = fmod(b, x, y);
  Scalar r = b.select(needs_sign_fix(b, mod, y, zero), b.bin("arith.addf", mod, y), mod);
  return b.select(b.cmpf("oeq", mod, zero), copysign(b, zero, y), r);
}

// numpy's floor_divide (npy_divmod): the exact quotient from fmod, floored with a 0.5 guard; division by zero
// is the plain quotient (+-inf or NaN).
Scalar float_floor_divide(Body& b, const Scalar& x, const Scalar& y) {
  DType t = x.dtype;
  Scalar zero = b.f(0.0, t), one = b.f(1.0, t);
  Scalar q = b.bin("arith.divf", x, y);
  Scalar mod = fmod(b, x, y);
  Scalar d = b.bin("arith.divf", b.bin("arith.subf", x, mod), y);
  d = b.select(needs_sign_fix(b, mod, y, zero), b.bin("arith.subf", d, one), d);
  Scalar fl = b.un("math.floor", d);
  fl = b.select(b.cmpf("ogt", b.bin("arith.subf", d, fl), b.f(0.5, t)), b.bin("arith.addf", fl, one), fl);
  Scalar r = b.select(b.cmpf("une", d, zero), fl, copysign(b, zero, q));
  return b.select(b.cmpf("oeq", y, zero), q, r);
}

Scalar is_nan(Body& b, const Scalar& x) { return b.cmpf("uno", x, x); }
Scalar is_inf(Body& b, const Scalar& x) { return b.cmpf("oeq", b.un("math.absf", x), b.f(INFINITY, x.dtype)); }

// hypot: IEEE's hypot(+-inf, NaN) = +inf, otherwise NaN propagates. Below float64 the plain sqrt(x^2 + y^2) in
// float64 neither overflows nor underflows and rounds once (to within an ULP of float64) before the rounding to
// the result type; float64 scales by the larger magnitude instead.
Scalar hypot(Body& b, const Scalar& x, const Scalar& y) {
  DType t = x.dtype;
  Scalar r;
  if (t != DType::F64) {
    Scalar a = b.cast("arith.extf", x, DType::F64), c = b.cast("arith.extf", y, DType::F64);
    Scalar s = b.un("math.sqrt", b.bin("arith.addf", b.bin("arith.mulf", a, a), b.bin("arith.mulf", c, c)));
    r = b.convert(s, t);
  } else {
    Scalar a = b.un("math.absf", x), c = b.un("math.absf", y);
    Scalar a_bigger = b.cmpf("ogt", a, c);
    Scalar big = b.select(a_bigger, a, c), small = b.select(a_bigger, c, a);
    Scalar ratio = b.bin("arith.divf", small, big);
    Scalar one = b.f(1.0, t), zero = b.f(0.0, t);
    Scalar scaled =
        b.bin("arith.mulf", big, b.un("math.sqrt", b.bin("arith.addf", one, b.bin("arith.mulf", ratio, ratio))));
    r = b.select(b.cmpf("oeq", big, zero), zero, scaled);
    r = b.select(lor(b, is_nan(b, x), is_nan(b, y)), b.bin("arith.addf", x, y), r);
  }
  return b.select(lor(b, is_inf(b, x), is_inf(b, y)), b.f(INFINITY, t), r);
}

// nextafter on the bits of the operand's own format (float16 steps in float16).
Scalar nextafter(Body& b, const Scalar& x, const Scalar& y) {
  DType t = x.dtype, u = uint_of(t);
  Scalar ux = reinterpret(b, x, u), uy = reinterpret(b, y, u);
  Scalar one = b.i(1, u);
  Scalar sign = b.i(std::numeric_limits<int64_t>::min() >> (64 - bit_width(t)), u);
  Scalar from_zero = lor(b, land(b, uy, sign), one);  // the smallest subnormal with y's sign
  Scalar zero = b.f(0.0, t);
  // moving away from zero grows the magnitude bits
  Scalar away = b.cmpi("eq", b.cmpf("olt", x, y), b.cmpf("ogt", x, zero));
  Scalar step = b.select(away, b.bin("arith.addi", ux, one), b.bin("arith.subi", ux, one));
  Scalar r = b.select(b.cmpf("oeq", x, zero), from_zero, step);
  r = reinterpret(b, b.select(b.cmpf("oeq", x, y), uy, r), t);
  return b.select(lor(b, is_nan(b, x), is_nan(b, y)), b.bin("arith.addf", x, y), r);
}

// Whether a float's sign bit is set (-0 and negative NaNs included).
Scalar sign_bit(Body& b, const Scalar& x) {
  DType u = uint_of(x.dtype);
  Scalar sign = b.i(std::numeric_limits<int64_t>::min() >> (64 - bit_width(x.dtype)), u);
  return b.cmpi("ne", land(b, reinterpret(b, x, u), sign), b.i(0, u));
}

// IEEE 754-2019 maximum/minimum (the interpreter's nan_max/nan_min): NaN propagates, -0 < +0. Written out:
// arith.maximumf/minimumf would say the same, but the pipeline's arith-expand rewrites them to a compare and
// select that ignores the sign of zero.
Scalar maximum(Body& b, const Scalar& x, const Scalar& y) {
  if (!is_float(x.dtype)) return b.bin(is_signed_int(x.dtype) ? "arith.maxsi" : "arith.maxui", x, y);
  Scalar r = b.select(b.cmpf("ogt", x, y), x, y);
  r = b.select(b.cmpf("oeq", x, y), b.select(sign_bit(b, x), y, x), r);
  return b.select(b.cmpf("uno", x, y), b.bin("arith.addf", x, y), r);
}
Scalar minimum(Body& b, const Scalar& x, const Scalar& y) {
  if (!is_float(x.dtype)) return b.bin(is_signed_int(x.dtype) ? "arith.minsi" : "arith.minui", x, y);
  Scalar r = b.select(b.cmpf("olt", x, y), x, y);
  r = b.select(b.cmpf("oeq", x, y), b.select(sign_bit(b, x), x, y), r);
  return b.select(b.cmpf("uno", x, y), b.bin("arith.addf", x, y), r);
}

// atan2 in float64 for every narrower type, rounded once: MLIR's float32 polynomial atan2 is wrong at the
// infinities (atan2(-inf, -inf) is NaN, atan2(-1, -inf) is +pi), while float64's is the C library's.
Scalar atan2(Body& b, const Scalar& x, const Scalar& y) {
  DType t = x.dtype;
  if (t == DType::F64) return b.bin("math.atan2", x, y);
  Scalar r = b.bin("math.atan2", b.cast("arith.extf", x, DType::F64), b.cast("arith.extf", y, DType::F64));
  return b.convert(r, t);
}

// ---- rule builders ----

using Fn2 = std::function<Scalar(Body&, const Scalar&, const Scalar&)>;

// numpy broadcasting comes from the indexing maps; the body sees one element of each operand. `cheap`: a few
// instructions (ScalarRule::cheap), recomputed in each fused loop that reads it.
void binary(Tables& t, const char* name, Fn2 f, bool cheap) {
  set_elementwise(
      t, name,
      {[f = std::move(f)](Body& b, const Operation&, std::span<const Scalar> x) { return f(b, x[0], x[1]); }, cheap});
}

// Float math in float32 for the 16-bit floats, rounded once (docs/semantics.md); `int_f` for integer operands.
void math_binary(Tables& t, const char* name, Fn2 float_f, Fn2 int_f = nullptr) {
  binary(
      t, name,
      [float_f = std::move(float_f), int_f = std::move(int_f)](Body& b, const Scalar& x, const Scalar& y) {
        if (!is_float(x.dtype)) return int_f(b, x, y);
        // Body::convert, not narrow: LLVM's float32 -> bfloat16 flushes subnormals
        return b.convert(float_f(b, b.widen(x), b.widen(y)), x.dtype);
      },
      false);
}

// add, subtract, multiply, divide: correctly rounded in every float type, so the 16-bit floats compute in
// float32 and round once (float32's result of two 16-bit floats rounds to the same value as the exact one); the
// rounding is Body::convert's, as LLVM's float32 -> bfloat16 flushes subnormals.
void arith_binary(Tables& t, const char* name, const char* float_op, const char* int_op, const char* bool_op) {
  binary(
      t, name,
      [=](Body& b, const Scalar& x, const Scalar& y) {
        if (is_float(x.dtype)) return b.convert(b.bin(float_op, b.widen(x), b.widen(y)), x.dtype);
        return b.bin(x.dtype == DType::Bool ? bool_op : int_op, x, y);
      },
      true);
}

void add_arithmetic(Tables& t) {
  // bool operands (the interpreter's logical forms): + is or, * is and, - is xor
  arith_binary(t, "add", "arith.addf", "arith.addi", "arith.ori");
  arith_binary(t, "subtract", "arith.subf", "arith.subi", "arith.xori");
  arith_binary(t, "multiply", "arith.mulf", "arith.muli", "arith.andi");
  math_binary(
      t, "divide", [](Body& b, const Scalar& x, const Scalar& y) { return b.bin("arith.divf", x, y); },
      [](Body& b, const Scalar& x, const Scalar& y) { return int_divide(b, x, y, false); });
  math_binary(t, "floor_divide", float_floor_divide,
              [](Body& b, const Scalar& x, const Scalar& y) { return int_divide(b, x, y, true); });
  math_binary(t, "remainder", float_remainder,
              [](Body& b, const Scalar& x, const Scalar& y) { return int_remainder(b, x, y, true); });
  math_binary(t, "fmod", fmod, [](Body& b, const Scalar& x, const Scalar& y) { return int_remainder(b, x, y, false); });
  math_binary(
      t, "power", [](Body& b, const Scalar& x, const Scalar& y) { return b.bin("math.powf", x, y); }, int_power);
  binary(t, "maximum", maximum, true);
  binary(t, "minimum", minimum, true);
  // atan2 and hypot widen to float64 themselves; nextafter and copysign work on the operand's own bits
  binary(t, "atan2", atan2, false);
  binary(t, "hypot", hypot, false);
  binary(t, "nextafter", nextafter, false);
  binary(t, "copysign", copysign, true);
}

void add_logic(Tables& t) {
  binary(t, "logical_and", land, true);
  binary(t, "logical_or", lor, true);
  binary(t, "logical_xor", lxor, true);
  binary(t, "bitwise_and", land, true);
  binary(t, "bitwise_or", lor, true);
  binary(t, "bitwise_xor", lxor, true);
  binary(
      t, "shift_left", [](Body& b, const Scalar& x, const Scalar& y) { return logical_shift(b, "arith.shli", x, y); },
      true);
  binary(
      t, "shift_right_logical",
      [](Body& b, const Scalar& x, const Scalar& y) { return logical_shift(b, "arith.shrui", x, y); }, true);
  binary(t, "shift_right_arithmetic", arithmetic_shift, true);
}

// Float compares are ordered (false with a NaN) except not_equal, which is unordered (true with a NaN), as
// IEEE's; -0 == +0. Integers compare signed or unsigned by the dtype.
void add_comparisons(Tables& t) {
  struct Cmp {
    const char* name;
    const char* fpred;
    const char* ipred;
  };
  for (Cmp c : {Cmp{"equal", "oeq", "eq"}, Cmp{"not_equal", "une", "ne"}, Cmp{"less", "olt", "lt"},
                Cmp{"less_equal", "ole", "le"}, Cmp{"greater", "ogt", "gt"}, Cmp{"greater_equal", "oge", "ge"}}) {
    binary(
        t, c.name,
        [c](Body& b, const Scalar& x, const Scalar& y) {
          return is_float(x.dtype) ? b.cmpf(c.fpred, x, y) : icmp(b, c.ipred, x, y);
        },
        true);
  }
}

// Whether two dtypes are one MLIR type read the same way, so a value of one is a value of the other (int32 and
// uint32 for bitcast_convert): the rule then writes no op at all.
bool same_bits(DType a, DType b) { return element_type(a) == element_type(b) && is_float(a) == is_float(b); }

// bitcast_convert between types of one width, neither bool (BackendError otherwise).
void check_bitcast(const Operation& op, DType from, DType to) {
  if (size_of(from) != size_of(to) || from == DType::Bool || to == DType::Bool)
    Emitter::fail(op, "bitcast_convert needs two non-bool types of one width");
}

// bitcast_convert's element: the same bits read as `to`.
Scalar bitcast_element(Body& b, const Operation& op, const Scalar& x, DType to) {
  check_bitcast(op, x.dtype, to);
  if (same_bits(x.dtype, to)) return {x.name, to};
  return reinterpret(b, x, to);
}

void add_other(Tables& t) {
  set_elementwise(
      t, "select",
      {[](Body& b, const Operation&, std::span<const Scalar> x) { return b.select(x[0], x[1], x[2]); }, true});
  // minimum(maximum(x, lo), hi): NaN from any operand propagates, -0 < +0, lo > hi gives hi
  set_elementwise(
      t, "clamp",
      {[](Body& b, const Operation&, std::span<const Scalar> x) { return minimum(b, maximum(b, x[0], x[1]), x[2]); },
       true});
  // convert and bitcast_convert between types of one MLIR type reuse the tensor when they are not fused.
  set_elementwise(
      t, "convert",
      {[](Body& b, const Operation& op, std::span<const Scalar> x) { return b.convert(x[0], result_type(op).dtype); },
       true},
      [](const Operation&, DType from, DType to) { return is_int(from) && is_int(to) && same_bits(from, to); });
  set_elementwise(t, "bitcast_convert",
                  {[](Body& b, const Operation& op, std::span<const Scalar> x) {
                     return bitcast_element(b, op, x[0], result_type(op).dtype);
                   },
                   true},
                  [](const Operation& op, DType from, DType to) {
                    check_bitcast(op, from, to);  // before any loop is written
                    return same_bits(from, to);
                  });
}

}  // namespace

void add_binary_rules(Tables& t) {
  add_arithmetic(t);
  add_logic(t);
  add_comparisons(t);
  add_other(t);
}

}  // namespace evoxc::mlir_backend
