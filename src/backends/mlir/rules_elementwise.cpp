// mlir lowering rules: the unary elementwise family (float math, rounding, integer and bool ops, nan_to_num).
//
// Each op is one linalg.generic whose body computes evoxc's semantics (docs/semantics.md) element by
// element. Float math uses the math dialect where MLIR's float32 polynomial approximations (or, for
// float64, the C library calls the math ops lower to) keep the interpreter's results within the test
// tolerances on every edge value; float16/bfloat16 compute in float32 and round once. Where a math op is
// not good enough, the rule says so and writes around it:
//  - float32 log2 and cbrt: the approximations read the exponent field and are wrong for subnormal x
//    (and cbrt for +-inf), so subnormals are scaled into the normal range first;
//  - sin, cos, tan, exp, log and pow are not approximated: the compiler vectorises them as calls to SLEEF's
//    vector functions (codegen/compile_mlir.cpp);
//  - float64 log1p and expm1: convert-math-to-llvm lowers them to log(1 + x) and exp(x) - 1, which lose
//    every digit for small x, so they are Goldberg's and Kahan's compensated forms on log and exp;
//  - lgamma, digamma, erf_inv and gelu have no math op: they compute in float64 for every float type
//    from the interpreter's algorithms (src/interp/), as the StableHLO rules do.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numbers>
#include <span>
#include <string>
#include <utility>

#include "backends/mlir/emitter.h"
#include "evoxc/core/half.h"
#include "evoxc/ops/special_constants.h"
#include "interp/elementwise.h"
#include "interp/vecmath_scalar.h"

namespace evoxc::mlir_backend {
namespace {

const TensorType& result_type(const Operation& op) { return op.result(0)->type(); }

// Float scalar arithmetic in a linalg body; every operand of one call has the same float type.
class Math {
 public:
  explicit Math(Body& b) : b_(b) {}
  Body& body() { return b_; }

  // A float constant. float64 and float32 values are written as their bits here (exact, and no
  // interpreter run per constant: lgamma and digamma have dozens).
  Scalar k(double v, DType t) {
    char buf[40];
    if (t == DType::F64) {
      std::snprintf(buf, sizeof buf, "0x%016llX", static_cast<unsigned long long>(std::bit_cast<uint64_t>(v)));
    } else if (t == DType::F32 && static_cast<double>(static_cast<float>(v)) == v) {
      std::snprintf(buf, sizeof buf, "0x%08X", static_cast<unsigned>(std::bit_cast<uint32_t>(static_cast<float>(v))));
    } else {
      return b_.f(v, t);
    }
    std::string r = b_.fresh();
    b_.line(r + " = arith.constant " + buf + " : " + element_type(t));
    return {r, t};
  }
  Scalar k(double v, const Scalar& like) { return k(v, like.dtype); }

  Scalar add(const Scalar& a, const Scalar& c) { return b_.bin("arith.addf", a, c); }
  Scalar sub(const Scalar& a, const Scalar& c) { return b_.bin("arith.subf", a, c); }
  Scalar mul(const Scalar& a, const Scalar& c) { return b_.bin("arith.mulf", a, c); }
  Scalar div(const Scalar& a, const Scalar& c) { return b_.bin("arith.divf", a, c); }
  Scalar neg(const Scalar& a) { return b_.un("arith.negf", a); }
  Scalar abs(const Scalar& a) { return b_.un("math.absf", a); }
  Scalar fn(const char* name, const Scalar& a) { return b_.un(name, a); }

  // Ordered compares (false with NaN), as C's.
  Scalar lt(const Scalar& a, const Scalar& c) { return b_.cmpf("olt", a, c); }
  Scalar le(const Scalar& a, const Scalar& c) { return b_.cmpf("ole", a, c); }
  Scalar gt(const Scalar& a, const Scalar& c) { return b_.cmpf("ogt", a, c); }
  Scalar ge(const Scalar& a, const Scalar& c) { return b_.cmpf("oge", a, c); }
  Scalar eq(const Scalar& a, const Scalar& c) { return b_.cmpf("oeq", a, c); }
  Scalar ne(const Scalar& a, const Scalar& c) { return b_.cmpf("one", a, c); }
  Scalar isnan(const Scalar& a) { return b_.cmpf("uno", a, a); }
  Scalar both(const Scalar& p, const Scalar& q) { return b_.bin("arith.andi", p, q); }
  Scalar either(const Scalar& p, const Scalar& q) { return b_.bin("arith.ori", p, q); }
  Scalar sel(const Scalar& c, const Scalar& a, const Scalar& f) { return b_.select(c, a, f); }

  // p(z) = c[0] + z (c[1] + ...) by Horner.
  Scalar horner(const Scalar& z, std::span<const double> c) {
    Scalar p = k(c.back(), z);
    for (size_t i = c.size() - 1; i-- > 0;) p = add(mul(p, z), k(c[i], z));
    return p;
  }

 private:
  Body& b_;
};

// ---- float formulas (x in the type the rule computes in) ----

// log1p. float32: MLIR's approximation (Goldberg's form on its own log). float64: Goldberg's
// log(u) x / (u - 1), u = 1 + x, within a few ULPs with an accurate log (MLIR does not fold
// (1 + x) - 1 without fast-math flags).
Scalar log1p(Math& m, const Scalar& x) {
  if (x.dtype != DType::F64) return m.fn("math.log1p", x);
  Scalar one = m.k(1.0, x);
  Scalar u = m.add(one, x);
  Scalar r = m.mul(m.fn("math.log", u), m.div(x, m.sub(u, one)));
  r = m.sel(m.eq(x, m.k(INFINITY, x)), x, r);  // inf / inf in the quotient
  return m.sel(m.eq(u, one), x, r);            // keeps -0 and the tiny x exactly
}

// expm1. float32: MLIR's approximation. float64: Kahan's (u - 1) x / log(u), u = exp(x), within a
// couple of ULPs; u = 1 gives x itself, u - 1 = -1 the limit -1, u = inf overflow.
Scalar expm1(Math& m, const Scalar& x) {
  if (x.dtype != DType::F64) return m.fn("math.expm1", x);
  Scalar one = m.k(1.0, x), m1 = m.k(-1.0, x);
  Scalar u = m.fn("math.exp", x);
  Scalar um1 = m.sub(u, one);
  Scalar r = m.mul(um1, m.div(x, m.fn("math.log", u)));
  r = m.sel(m.eq(u, m.k(INFINITY, x)), u, r);
  r = m.sel(m.eq(um1, m1), m1, r);
  return m.sel(m.eq(u, one), x, r);
}

// log and log2 in float32: MLIR's approximation reads the exponent field, so a subnormal x gives the
// log of the smallest normal; x 2^24 is normal there, and the exact 24 (ln 2) comes off again.
Scalar log_any(Math& m, const Scalar& x, const char* name, double ln2) {
  Scalar r = m.fn(name, x);
  if (x.dtype != DType::F32) return r;
  Scalar tiny = m.lt(m.abs(x), m.k(0x1p-126, x));
  Scalar scaled = m.sub(m.fn(name, m.mul(x, m.k(0x1p24, x))), m.k(24 * ln2, x));
  return m.sel(m.both(tiny, m.ne(x, m.k(0.0, x))), scaled, r);
}

// cbrt: MLIR's float32 approximation gives NaN for +-inf and reads the exponent field as log does
// (cbrt(1e-40) comes out 8.6e-14 for 4.6e-14): cbrt(x 2^24) 2^-8 is exact scaling.
Scalar cbrt(Math& m, const Scalar& x) {
  Scalar r = m.fn("math.cbrt", x);
  if (x.dtype != DType::F32) return r;
  Scalar scaled = m.mul(m.fn("math.cbrt", m.mul(x, m.k(0x1p24, x))), m.k(0x1p-8, x));
  r = m.sel(m.lt(m.abs(x), m.k(0x1p-126, x)), scaled, r);
  return m.sel(m.eq(m.abs(x), m.k(INFINITY, x)), x, r);
}

// sigmoid as the interpreter writes it: exp(-|x|) never overflows, so both tails keep their
// relative accuracy.
Scalar sigmoid(Math& m, const Scalar& x) {
  Scalar one = m.k(1.0, x);
  Scalar e = m.fn("math.exp", m.neg(m.abs(x)));
  return m.div(m.sel(m.ge(x, m.k(0.0, x)), one, e), m.add(one, e));
}

// log1p(exp(x)) = max(x, 0) + log1p(exp(-|x|)): no overflow for large x, NaN propagates.
Scalar softplus(Math& m, const Scalar& x) {
  Scalar zero = m.k(0.0, x);
  Scalar pos = m.sel(m.gt(x, zero), x, zero);
  return m.add(pos, log1p(m, m.fn("math.exp", m.neg(m.abs(x)))));
}

// Veltkamp's split of a float64 into halves of 26 bits (a * b = hi + lo exactly with Dekker).
constexpr double kSplit = 134217729.0;
void split(Math& m, const Scalar& a, Scalar& hi, Scalar& lo) {
  Scalar s = m.mul(a, m.k(kSplit, a));
  hi = m.sub(s, m.sub(s, a));
  lo = m.sub(a, hi);
}
// a * b = p + e exactly (no fused multiply-adds: the arith ops carry no contract flag).
void two_prod(Math& m, const Scalar& a, const Scalar& b, Scalar& p, Scalar& e) {
  p = m.mul(a, b);
  Scalar ah, al, bh, bl;
  split(m, a, ah, al);
  split(m, b, bh, bl);
  e = m.add(m.add(m.add(m.sub(m.mul(ah, bh), p), m.mul(ah, bl)), m.mul(al, bh)), m.mul(al, bl));
}

// gelu, in float64 for every float type: the interpreter's float64 kernels (vecmath_impl.h GeluErf and
// GeluTanh) step by step. In the negative tail the rounding of the function's argument costs about x^2
// ULPs; both forms recover it with exact products and correct to first order. The limit at -inf is -0.
constexpr double kRsqrt2Lo = -0x1.bdd3413b26456p-55;  // 1/sqrt2 - double(1/sqrt2)
Scalar gelu_erf(Math& m, const Scalar& x) {
  Scalar c = m.k(-0.70710678118654752440, x);
  Scalar u = m.mul(x, c);
  Scalar xh, xl, ch, cl;
  split(m, x, xh, xl);
  split(m, c, ch, cl);
  Scalar e = m.add(m.add(m.add(m.sub(m.mul(xh, ch), u), m.mul(xh, cl)), m.mul(xl, ch)), m.mul(xl, cl));
  Scalar d = m.sub(e, m.mul(x, m.k(kRsqrt2Lo, x)));
  Scalar zero = m.k(0.0, x);
  // erfc(u + d) = erfc(u) (1 - d R(u)), with u + sqrt(u^2 + 4/pi) for R (see vecmath_impl.h).
  Scalar rr = m.add(u, m.fn("math.sqrt", m.add(m.mul(u, u), m.k(1.27323954473516268615, x))));
  Scalar dr = m.sel(m.both(m.gt(u, zero), m.lt(u, m.k(0x1p40, x))), m.mul(d, rr), zero);
  Scalar ec = m.fn("math.erfc", u);
  Scalar r = m.mul(m.mul(x, m.k(0.5, x)), m.sub(ec, m.mul(ec, dr)));
  return m.sel(m.eq(x, m.k(-INFINITY, x)), m.k(-0.0, x), r);
}
// 0.5 x (1 + tanh(u)) = x sigmoid(2u), 2u = x (A + B x^2) carried as hi + lo.
constexpr double kGeluAHi = 0x1.9884533d43651p+0, kGeluALo = -0x1.cbc0d30ebfd15p-54;
constexpr double kGeluBHi = 0x1.2444f2a4d8b4bp-4, kGeluBLo = -0x1.6c843a29d1c70p-61;
Scalar gelu_tanh(Math& m, const Scalar& x) {
  Scalar x2, e1, p, e2, v, e4;
  two_prod(m, x, x, x2, e1);
  Scalar bhi = m.k(kGeluBHi, x);
  two_prod(m, bhi, x2, p, e2);
  Scalar p_lo = m.add(m.add(e2, m.mul(bhi, e1)), m.mul(m.k(kGeluBLo, x), x2));
  Scalar a = m.k(kGeluAHi, x);
  Scalar s = m.add(a, p);  // two-sum (p may exceed a)
  Scalar sb = m.sub(s, a);
  Scalar e3 = m.add(m.sub(a, m.sub(s, sb)), m.sub(p, sb));
  Scalar s_lo = m.add(m.add(e3, m.k(kGeluALo, x)), p_lo);
  two_prod(m, x, s, v, e4);
  Scalar v_lo = m.add(e4, m.mul(x, s_lo));
  Scalar zero = m.k(0.0, x), one = m.k(1.0, x);
  Scalar e = m.fn("math.exp", m.neg(m.abs(v)));
  Scalar sig = m.div(m.sel(m.ge(v, zero), one, e), m.add(one, e));
  // sigmoid(v + lo) = sigmoid(v) (1 + lo (1 - sigmoid(v))), on the negative side while the splits
  // cannot overflow.
  Scalar corr = m.sel(m.both(m.lt(v, zero), m.gt(x, m.k(-0x1p20, x))), m.div(v_lo, m.add(one, e)), zero);
  Scalar r = m.mul(x, m.add(sig, m.mul(sig, corr)));
  return m.sel(m.eq(x, m.k(-INFINITY, x)), m.k(-0.0, x), r);
}

// erf_inv in float64: the interpreter's (elementwise_unary.cpp): Giles' rational first guess (an
// asymptotic fixed point beyond float's tail) polished by up to four Halley steps on erf, or on erfc
// near |y| = 1. Every branch is computed and the right one selected; the steps stop (a `done` flag)
// exactly where the interpreter's loop breaks.
Scalar erf_inv(Math& m, const Scalar& y) {
  DType t = y.dtype;
  Scalar one = m.k(1.0, t);
  Scalar ay = m.abs(y);
  Scalar w = m.neg(m.fn("math.log", m.mul(m.sub(one, y), m.add(one, y))));
  // w < 5
  static constexpr double kCentral[] = {1.50140941,      0.246640727,    -0.00417768164, -0.00125372503, 0.00021858087,
                                        -4.39150654e-06, -3.5233877e-06, 3.43273939e-07, 2.81022636e-08};
  Scalar x_central = m.mul(m.horner(m.sub(w, m.k(2.5, t)), kCentral), y);
  // 5 <= w <= 16
  static constexpr double kTail[] = {2.83297682,     1.00167406,    0.00943887047,  -0.0076224613,  0.00573950773,
                                     -0.00367342844, 0.00134934322, 0.000100950558, -0.000200214257};
  Scalar x_tail = m.mul(m.horner(m.sub(m.fn("math.sqrt", w), m.k(3.0, t)), kTail), y);
  // w > 16: erfc(x) ~ exp(-x^2) / (x sqrt(pi)) by fixed point.
  Scalar tt = m.sub(one, ay);
  Scalar g = m.fn("math.sqrt", w);
  for (int i = 0; i < 4; ++i)
    g = m.fn("math.sqrt", m.neg(m.fn("math.log", m.mul(m.mul(tt, g), m.k(1.77245385090551602730, t)))));
  Scalar x_far = m.sel(m.gt(y, m.k(0.0, t)), g, m.neg(g));
  Scalar x = m.sel(m.lt(w, m.k(5.0, t)), x_central, m.sel(m.gt(w, m.k(16.0, t)), x_far, x_tail));

  Scalar done = m.body().b(false);
  Scalar sign = m.sel(m.gt(y, m.k(0.0, t)), m.k(-1.0, t), one);
  Scalar near_one = m.gt(ay, m.k(0.5, t));
  for (int i = 0; i < 4; ++i) {
    Scalar r_tail = m.mul(sign, m.sub(m.fn("math.erfc", m.abs(x)), tt));
    Scalar r = m.sel(near_one, r_tail, m.sub(m.fn("math.erf", x), y));
    Scalar d = m.mul(m.k(1.12837916709551257390, t), m.fn("math.exp", m.neg(m.mul(x, x))));
    Scalar stop = m.either(done, m.eq(d, m.k(0.0, t)));
    Scalar step = m.div(r, m.add(d, m.mul(x, r)));
    Scalar next = m.sub(x, step);
    x = m.sel(stop, x, next);
    done = m.either(stop, m.le(m.abs(step), m.mul(m.k(0x1p-54, t), m.abs(next))));
  }
  x = m.sel(m.eq(y, m.k(0.0, t)), y, x);  // keeps -0
  x = m.sel(m.eq(y, one), m.k(INFINITY, t), x);
  x = m.sel(m.eq(y, m.k(-1.0, t)), m.k(-INFINITY, t), x);
  return m.sel(m.either(m.isnan(y), m.gt(ay, one)), m.k(NAN, t), x);
}

// lgamma on y >= 0 (and NaN, +inf) in float64, accurate in relative terms next to the zeros at 1 and 2:
//  - y < 10: the series about 2 on z in [-1/2, 1/2]: z = y below 1/2 (lgamma(y) = lgamma(2 + y) -
//    log(y (1 + y))), z = y - 1 below 3/2 (lgamma(1 + z) = lgamma(2 + z) - log(y)), else y brought down
//    into (3/2, 5/2] by the recurrence, the product p of its steps (below 10!) in one float64, and
//    lgamma(y) = lgamma(2 + z) + log(p); z is exact in each case (Sterbenz);
//  - y >= 10: Stirling's series, good to 1e-18 from 10 on, written as y (log y - 1) so that it stays
//    finite up to lgamma's own overflow.
Scalar lgamma_positive(Math& m, const Scalar& y) {
  DType t = y.dtype;
  Scalar one = m.k(1.0, t);
  Scalar w = y, p = one;
  for (int i = 0; i < 8; ++i) {
    Scalar c = m.gt(w, m.k(2.5, t));
    w = m.sel(c, m.sub(w, one), w);  // exact below 2^52
    p = m.sel(c, m.mul(p, w), p);
  }
  Scalar lt05 = m.lt(y, m.k(0.5, t)), lt15 = m.lt(y, m.k(1.5, t));
  Scalar z = m.sel(lt05, y, m.sel(lt15, m.sub(y, one), m.sub(w, m.k(2.0, t))));
  // y < 1/2: lgamma(y) = lgamma(2 + y) - log(y (1 + y)); y < 3/2: lgamma(1 + z) = lgamma(2 + z) - log(y);
  // otherwise lgamma(2 + z) + log(p).
  Scalar q = m.sel(lt05, m.mul(y, m.add(one, y)), m.sel(lt15, y, p));
  Scalar lq = m.fn("math.log", q);
  Scalar small = m.add(m.mul(m.horner(z, special::kLgammaAt2), z), m.sel(lt15, m.neg(lq), lq));

  Scalar ly = m.fn("math.log", y);
  Scalar iy = m.div(one, y);
  Scalar iy2 = m.mul(iy, iy);
  static constexpr double kStirling[] = {1.0 / 12,   -1.0 / 360,      1.0 / 1260, -1.0 / 1680,
                                         1.0 / 1188, -691.0 / 360360, 1.0 / 156,  -3617.0 / 122400};
  Scalar tail = m.mul(iy, m.horner(iy2, kStirling));
  Scalar big = m.add(m.sub(m.mul(y, m.sub(ly, one)), m.mul(m.k(0.5, t), ly)),
                     m.add(m.k(0.91893853320467274178, t), tail));  // log(2 pi) / 2
  Scalar r = m.sel(m.lt(y, m.k(10.0, t)), small, big);
  return m.sel(m.eq(y, m.k(INFINITY, t)), y, r);
}

// lgamma in float64: the reflection lgamma(x) = log(pi) - log|sin(pi r)| - lgamma(1 - x) below 0, with
// r = x - round(x) exact (sin(pi x) has period 1 up to sign), so the poles at the negative integers
// give +inf. lgamma(+-0) = +inf; lgamma(-inf) = +inf as the interpreter's.
Scalar lgamma(Math& m, const Scalar& x) {
  DType t = x.dtype;
  Scalar neg = m.lt(x, m.k(0.0, t));
  Scalar y = m.sel(neg, m.sub(m.k(1.0, t), x), x);
  Scalar ly = lgamma_positive(m, y);
  Scalar r = m.sub(x, m.fn("math.roundeven", x));
  Scalar s = m.abs(m.fn("math.sin", m.mul(m.k(std::numbers::pi, t), r)));
  Scalar log_pi_over_s = m.sub(m.k(1.14472988584940017414, t), m.fn("math.log", s));  // log(pi) - log|sin|
  // |r| below 2^-30: sin(pi r) = pi r to 1e-18, and pi r would round to a subnormal grid from 1e-308 on.
  Scalar ar = m.abs(r);
  log_pi_over_s = m.sel(m.lt(ar, m.k(0x1p-30, t)), m.neg(m.fn("math.log", ar)), log_pi_over_s);
  Scalar refl = m.sub(log_pi_over_s, ly);
  Scalar out = m.sel(neg, refl, ly);
  // the poles (every x <= -2^52 is one) and -inf: +inf, where the reflection could give inf - inf
  Scalar pole = m.either(m.both(neg, m.eq(r, m.k(0.0, t))), m.eq(x, m.k(-INFINITY, t)));
  return m.sel(pole, m.k(INFINITY, t), out);
}

// digamma in float64: the interpreter's (elementwise_unary.cpp) unrolled. Reflection below 0 with the
// exact reduction r = x - round(x); psi(x) = psi(x + 1) - 1/x below 1; below 10 down to [1, 2] by the
// recurrence (at most 8 steps, smallest terms first) and the Taylor series about the positive zero x0
// (all 41 coefficients: |x - x0| reaches 0.54); from 10 on the asymptotic series. digamma(+-0) = -inf
// (the limit from above, as torch), NaN at -inf and the negative integers.
Scalar digamma(Math& m, const Scalar& x) {
  DType t = x.dtype;
  Scalar zero = m.k(0.0, t), one = m.k(1.0, t);
  Scalar neg = m.lt(x, zero);
  Scalar r = m.sub(x, m.fn("math.roundeven", x));
  Scalar refl = m.neg(m.div(m.k(std::numbers::pi, t), m.fn("math.tan", m.mul(m.k(std::numbers::pi, t), r))));
  Scalar result = m.sel(neg, refl, zero);
  Scalar x1 = m.sel(neg, m.sub(one, x), x);
  Scalar below1 = m.lt(x1, one);
  result = m.sel(below1, m.sub(result, m.div(one, x1)), result);
  Scalar x2 = m.sel(below1, m.add(x1, one), x1);

  Scalar yv = x2, sum = zero;
  for (int i = 0; i < 8; ++i) {
    Scalar c = m.gt(yv, m.k(2.0, t));
    yv = m.sel(c, m.sub(yv, one), yv);
    sum = m.sel(c, m.add(sum, m.div(one, yv)), sum);
  }
  // (y - hi) - lo: MLIR folds no float algebra without fast-math flags, so lo is kept.
  Scalar h = m.sub(m.sub(yv, m.k(special::kDigammaRootHi, t)), m.k(special::kDigammaRootLo, t));
  Scalar near_root = m.mul(m.horner(h, special::kDigammaTaylor), h);
  Scalar mid = m.add(result, m.add(near_root, sum));

  Scalar z = m.div(one, m.mul(x2, x2));
  static constexpr double kAsym[] = {1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132, -691.0 / 32760, 1.0 / 12};
  Scalar series = m.mul(z, m.horner(z, kAsym));
  Scalar big = m.sub(m.sub(m.add(result, m.fn("math.log", x2)), m.div(m.k(0.5, t), x2)), series);
  Scalar out = m.sel(m.lt(x2, m.k(10.0, t)), mid, big);

  out = m.sel(m.eq(x, zero), m.k(-INFINITY, t), out);
  Scalar pole = m.both(neg, m.eq(m.fn("math.floor", x), x));
  return m.sel(m.either(m.either(m.isnan(x), m.eq(x, m.k(-INFINITY, t))), pole), m.k(NAN, t), out);
}

// ---- rule builders ----

using Fn1 = std::function<Scalar(Math&, const Scalar&)>;

// A float op computed in f32 for the 16-bit floats (f64 and f32 in their own type) and rounded once.
void float_unary(Tables& t, const char* name, Fn1 f) {
  set_elementwise(t, name, {[f = std::move(f)](Body& b, const Operation& op, std::span<const Scalar> x) {
                    Math m(b);
                    return b.narrow(f(m, b.widen(x[0])), result_type(op).dtype);
                  }});
}

// f64 -> `to` with one rounding (LLVM's fptrunc from f64 to f16 is direct: through f32 a value just above a
// tie of f16 can round onto it and then to even); bfloat16 through f32, whose two roundings stay within its
// tolerance.
Scalar narrow_from_f64(Body& b, const Scalar& x, DType to) {
  if (to == DType::F64) return x;
  if (to == DType::BF16) return b.narrow(b.cast("arith.truncf", x, DType::F32), to);
  return b.cast("arith.truncf", x, to);
}

Scalar widen_to_f64(Body& b, const Scalar& x) {
  Scalar w = b.widen(x);
  return w.dtype == DType::F64 ? w : b.cast("arith.extf", w, DType::F64);
}

// A float op computed in f64 for every float type (see the file's comment for which and why).
void f64_unary(Tables& t, const char* name, Fn1 f) {
  set_elementwise(t, name, {[f = std::move(f)](Body& b, const Operation& op, std::span<const Scalar> x) {
                    Math m(b);
                    return narrow_from_f64(b, f(m, widen_to_f64(b, x[0])), result_type(op).dtype);
                  }});
}

// An op on the operand's element as it is (integers, bool, predicates): `f` sees the element and
// returns the result element. These are a few instructions each: cheap to recompute in every fused loop.
using Raw1 = std::function<Scalar(Body&, const Scalar&)>;
void raw_unary(Tables& t, const char* name, Raw1 f) {
  set_elementwise(
      t, name, {[f = std::move(f)](Body& b, const Operation&, std::span<const Scalar> x) { return f(b, x[0]); }, true});
}

Fn1 math_op(const char* name) {
  return [name](Math& m, const Scalar& x) { return m.fn(name, x); };
}

void add_float_math(Tables& t) {
  float_unary(t, "exp", math_op("math.exp"));
  float_unary(t, "exp2", math_op("math.exp2"));
  float_unary(t, "expm1", expm1);
  // (log itself is not approximated: SLEEF's vector log and the C library's scalar one take subnormals as they are.)
  float_unary(t, "log", math_op("math.log"));
  float_unary(t, "log2", [](Math& m, const Scalar& x) { return log_any(m, x, "math.log2", 1.0); });
  float_unary(t, "log10", math_op("math.log10"));
  float_unary(t, "log1p", log1p);
  float_unary(t, "sqrt", math_op("math.sqrt"));
  // 1 / sqrt(x) as the interpreter writes it (correctly rounded sqrt, then one division).
  float_unary(t, "rsqrt", [](Math& m, const Scalar& x) { return m.div(m.k(1.0, x), m.fn("math.sqrt", x)); });
  float_unary(t, "cbrt", cbrt);
  float_unary(t, "reciprocal", [](Math& m, const Scalar& x) { return m.div(m.k(1.0, x), x); });
  // sin and cos are not approximated by MLIR (its float32 forms reduce the argument with a float32
  // pi/2: 1.5e-4 relative off at cos(89.5)); the compiler vectorises them as vector-math library calls
  // bound to SLEEF (1 ULP, full-range reduction), in their own type.
  float_unary(t, "sin", math_op("math.sin"));
  float_unary(t, "cos", math_op("math.cos"));
  float_unary(t, "tan", math_op("math.tan"));
  float_unary(t, "asin", math_op("math.asin"));
  float_unary(t, "acos", math_op("math.acos"));
  float_unary(t, "atan", math_op("math.atan"));
  float_unary(t, "sinh", math_op("math.sinh"));
  float_unary(t, "cosh", math_op("math.cosh"));
  float_unary(t, "tanh", math_op("math.tanh"));
  float_unary(t, "asinh", math_op("math.asinh"));
  float_unary(t, "acosh", math_op("math.acosh"));
  float_unary(t, "atanh", math_op("math.atanh"));
  float_unary(t, "sigmoid", sigmoid);
  float_unary(t, "erf", math_op("math.erf"));
  float_unary(t, "erfc", math_op("math.erfc"));
  float_unary(t, "softplus", softplus);
  f64_unary(t, "erf_inv", erf_inv);
  f64_unary(t, "lgamma", lgamma);
  f64_unary(t, "digamma", digamma);
  set_elementwise(t, "gelu", {[](Body& b, const Operation& op, std::span<const Scalar> x) {
                    bool approximate = op.attributes().find("approximate") != op.attributes().end() &&
                                       attr_bool(op.attributes(), "approximate", "gelu");
                    Math m(b);
                    Scalar w = widen_to_f64(b, x[0]);
                    return narrow_from_f64(b, approximate ? gelu_tanh(m, w) : gelu_erf(m, w), result_type(op).dtype);
                  }});
  // Rounding is exact in every float type (the widening and narrowing too).
  float_unary(t, "floor", math_op("math.floor"));
  float_unary(t, "ceil", math_op("math.ceil"));
  float_unary(t, "round", math_op("math.roundeven"));  // half to even, as rint
  float_unary(t, "trunc", math_op("math.trunc"));
  set_elementwise(t, "nan_to_num", {[](Body& b, const Operation& op, std::span<const Scalar> xs) {
                    DType d = result_type(op).dtype;
                    auto [nan, posinf, neginf] = interp::nan_to_num_values(d, op.attributes());
                    Math m(b);
                    Scalar x = b.widen(xs[0]);  // the replacements are values of d: exact in the wider type too
                    Scalar y = m.sel(m.eq(x, m.k(-INFINITY, x)), m.k(neginf, x), x);
                    y = m.sel(m.eq(x, m.k(INFINITY, x)), m.k(posinf, x), y);
                    return b.narrow(m.sel(m.isnan(x), m.k(nan, x), y), d);
                  }});
}

// ---- integer, bool and sign ops (docs/semantics.md: integers wrap) ----

// The signed integer type of an unsigned one's width.
DType signed_of(DType t) {
  switch (t) {
    case DType::U8: return DType::I8;
    case DType::U16: return DType::I16;
    case DType::U32: return DType::I32;
    default: return DType::I64;
  }
}

Scalar zero_of(Body& b, DType t) { return is_float(t) ? b.f(0.0, t) : b.i(0, t); }

void add_numeric(Tables& t) {
  raw_unary(t, "neg", [](Body& b, const Scalar& x) {
    if (is_float(x.dtype)) return b.un("arith.negf", x);
    return b.bin("arith.subi", b.i(0, x.dtype), x);  // wraps: -INT_MIN is INT_MIN
  });
  raw_unary(t, "abs", [](Body& b, const Scalar& x) {
    if (is_float(x.dtype)) return b.un("math.absf", x);
    if (is_unsigned_int(x.dtype)) return x;
    return b.un("math.absi", x);  // abs(INT_MIN) wraps to INT_MIN (llvm.abs without the poison flag)
  });
  raw_unary(t, "sign", [](Body& b, const Scalar& x) {
    DType d = x.dtype;
    if (is_float(d)) {
      // -1 / 1 for the signs, x itself for +-0 and NaN
      Scalar w = b.widen(x);
      Math m(b);
      Scalar zero = m.k(0.0, w);
      Scalar r = m.sel(m.gt(w, zero), m.k(1.0, w), m.sel(m.lt(w, zero), m.k(-1.0, w), w));
      return b.narrow(r, d);
    }
    Scalar zero = b.i(0, d), one = b.i(1, d);
    if (is_unsigned_int(d)) return b.select(b.cmpi("ne", x, zero), one, zero);
    return b.select(b.cmpi("sgt", x, zero), one, b.select(b.cmpi("slt", x, zero), b.i(-1, d), zero));
  });
  raw_unary(t, "square", [](Body& b, const Scalar& x) {
    // a 16-bit float's square is exact in f32: one rounding
    if (is_float(x.dtype)) {
      Scalar w = b.widen(x);
      return b.narrow(b.bin("arith.mulf", w, w), x.dtype);
    }
    return b.bin("arith.muli", x, x);  // wraps
  });
  raw_unary(t, "relu", [](Body& b, const Scalar& x) {
    DType d = x.dtype;
    Scalar zero = zero_of(b, d);
    // x where x > 0 or NaN ("ugt": unordered or greater), else +0 (relu(-0) is +0)
    if (is_float(d)) return b.select(b.cmpf("ugt", x, zero), x, zero);
    if (is_unsigned_int(d)) return x;
    return b.select(b.cmpi("sgt", x, zero), x, zero);
  });
}

void add_predicates_and_bits(Tables& t) {
  // The predicates are constant on integers and bool.
  raw_unary(t, "isnan", [](Body& b, const Scalar& x) { return is_float(x.dtype) ? b.cmpf("uno", x, x) : b.b(false); });
  raw_unary(t, "isinf", [](Body& b, const Scalar& x) {
    if (!is_float(x.dtype)) return b.b(false);
    Scalar w = b.widen(x);
    return b.cmpf("oeq", b.un("math.absf", w), b.f(INFINITY, w.dtype));
  });
  raw_unary(t, "isfinite", [](Body& b, const Scalar& x) {
    if (!is_float(x.dtype)) return b.b(true);
    Scalar w = b.widen(x);
    return b.cmpf("one", b.un("math.absf", w), b.f(INFINITY, w.dtype));  // "one": false for NaN too
  });
  raw_unary(t, "logical_not", [](Body& b, const Scalar& x) { return b.bin("arith.xori", x, b.b(true)); });
  raw_unary(t, "bitwise_not", [](Body& b, const Scalar& x) {
    if (x.dtype == DType::Bool) return b.bin("arith.xori", x, b.b(true));
    // all ones, written as the signed type's -1 (the same signless MLIR type)
    Scalar ones = b.i(-1, is_signed_int(x.dtype) ? x.dtype : signed_of(x.dtype));
    return b.bin("arith.xori", x, Scalar{ones.name, x.dtype});
  });
  raw_unary(t, "popcount", [](Body& b, const Scalar& x) { return b.un("math.ctpop", x); });
}

}  // namespace

void add_elementwise_rules(Tables& t) {
  add_float_math(t);
  add_numeric(t);
  add_predicates_and_bits(t);
}

}  // namespace evoxc::mlir_backend
