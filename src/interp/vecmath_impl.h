// The ISA-generic body of the SLEEF kernels, included once per instruction set by vecmath_*.cpp.
//
// The including file defines, inside its own target region:
//   EVX_VF / EVX_VD    vector (or scalar) types of float and double
//   EVX_SF(fn, u) / EVX_SD(fn, u)   SLEEF names with an accuracy suffix (u10, u05, ...)
//   EVX_SFX(fn) / EVX_SDX(fn)       SLEEF names of exact functions (sqrt, floor, fmod, ...)
//   EVX_TABLE_FN       the name of the function that returns this ISA's table
// No standard-library code may be instantiated here: inline functions compiled for a wider
// ISA could be picked by the linker for callers on a narrower CPU. Everything is internal.

#include "evoxc/core/half.h"
#include "vecmath.h"

// SLEEF's name of a function at an accuracy (see EVX_VECMATH_UNARY in vecmath.h).
#define EVX_NAME_F(fn, acc) EVX_NAME_F_##acc(fn)
#define EVX_NAME_D(fn, acc) EVX_NAME_D_##acc(fn)
#define EVX_NAME_F_u05(fn) EVX_SF(fn, u05)
#define EVX_NAME_F_u10(fn) EVX_SF(fn, u10)
#define EVX_NAME_F_u15(fn) EVX_SF(fn, u15)
#define EVX_NAME_F_u35(fn) EVX_SF(fn, u35)
#define EVX_NAME_F_exact(fn) EVX_SFX(fn)
#define EVX_NAME_D_u05(fn) EVX_SD(fn, u05)
#define EVX_NAME_D_u10(fn) EVX_SD(fn, u10)
#define EVX_NAME_D_u15(fn) EVX_SD(fn, u15)
#define EVX_NAME_D_u35(fn) EVX_SD(fn, u35)
#define EVX_NAME_D_exact(fn) EVX_SDX(fn)

// SLEEF functions the composites use that implement no op themselves.
#define EVX_HELPER_UNARY(X) X(Fabs, "", fabs, exact, exact)

#define EVX_DECL1(Name, op, fn, af, ad)         \
  extern "C" EVX_VF EVX_NAME_F(fn, af)(EVX_VF); \
  extern "C" EVX_VD EVX_NAME_D(fn, ad)(EVX_VD);
#define EVX_DECL2(Name, fn, acc)                         \
  extern "C" EVX_VF EVX_NAME_F(fn, acc)(EVX_VF, EVX_VF); \
  extern "C" EVX_VD EVX_NAME_D(fn, acc)(EVX_VD, EVX_VD);
EVX_VECMATH_UNARY(EVX_DECL1)
EVX_HELPER_UNARY(EVX_DECL1)
EVX_VECMATH_BINARY(EVX_DECL2)

namespace evoxc::interp::vecmath {
namespace {

using VF = EVX_VF;
using VD = EVX_VD;

#define EVX_WRAP1(Name, op, fn, af, ad)                    \
  inline VF v_##fn(VF x) { return EVX_NAME_F(fn, af)(x); } \
  inline VD v_##fn(VD x) { return EVX_NAME_D(fn, ad)(x); }
#define EVX_WRAP2(Name, fn, acc)                                     \
  inline VF v_##fn(VF x, VF y) { return EVX_NAME_F(fn, acc)(x, y); } \
  inline VD v_##fn(VD x, VD y) { return EVX_NAME_D(fn, acc)(x, y); }
EVX_VECMATH_UNARY(EVX_WRAP1)
EVX_HELPER_UNARY(EVX_WRAP1)
EVX_VECMATH_BINARY(EVX_WRAP2)

// Element type of a vector (or scalar) type.
template <typename V>
struct elem;
template <>
struct elem<VF> {
  using type = float;
};
template <>
struct elem<VD> {
  using type = double;
};

template <typename V>
constexpr int lanes = static_cast<int>(sizeof(V) / sizeof(typename elem<V>::type));

template <typename V>
inline V splat(typename elem<V>::type e) {
  if constexpr (lanes<V> == 1) {
    return e;
  } else {
    V v;
    for (int k = 0; k < lanes<V>; ++k) v[k] = e;
    return v;
  }
}

template <typename V>
inline typename elem<V>::type get_lane(V v, int k) {
  if constexpr (lanes<V> == 1) {
    (void)k;
    return v;
  } else {
    return v[k];
  }
}
template <typename V>
inline void set_lane(V& v, int k, typename elem<V>::type e) {
  if constexpr (lanes<V> == 1) {
    (void)k;
    v = e;
  } else {
    v[k] = e;
  }
}
// Whether any lane of a comparison result (bool for scalars, an integer vector else) is set:
// the mask's 64-bit words ORed in halves inside the registers (a store and narrower reloads
// would stall store forwarding on every vector).
typedef long long evx_w16 __attribute__((vector_size(16)));
typedef long long evx_w32 __attribute__((vector_size(32)));
typedef long long evx_w64 __attribute__((vector_size(64)));
inline bool or_words(evx_w16 v) { return (v[0] | v[1]) != 0; }
inline bool or_words(evx_w32 v) {
  return or_words(evx_w16(__builtin_shufflevector(v, v, 0, 1) | __builtin_shufflevector(v, v, 2, 3)));
}
inline bool or_words(evx_w64 v) {
  return or_words(evx_w32(__builtin_shufflevector(v, v, 0, 1, 2, 3) | __builtin_shufflevector(v, v, 4, 5, 6, 7)));
}
template <typename V, typename M>
inline bool any_lane(M m) {
  if constexpr (lanes<V> == 1) {
    return m;
  } else if constexpr (sizeof(M) == 16) {
    return or_words((evx_w16)m);
  } else if constexpr (sizeof(M) == 32) {
    return or_words((evx_w32)m);
  } else {
    return or_words((evx_w64)m);
  }
}
// |x| inline (SLEEF's fabs is an out-of-line call): a select, exact for every input but NaN's
// sign, which the callers only compare.
template <typename V>
inline V abs_inline(V x) {
  using E = typename elem<V>::type;
  return x < splat<V>(E(0)) ? -x : x;
}
template <typename V, typename M>
inline bool mask_lane(M m, int k) {
  if constexpr (lanes<V> == 1) {
    (void)k;
    return m;
  } else {
    return m[k] != 0;
  }
}
// m ? a : b per lane (a vector ?: needs a vector condition; a scalar one is plain C++).
template <typename V, typename M>
inline V blend(M m, V a, V b) {
  return m ? a : b;
}

// The float type's limits the domain fixes below use: SLEEF's vector functions overflow or
// lose their range reduction at these, well inside the result's own range.
template <typename E>
struct Limits;
template <>
struct Limits<float> {
  static constexpr float kExpArg = 88.0f;              // exp overflows at 88.72
  static constexpr float kHuge = 0x1p63f;              // x*x overflows from 2^64
  static constexpr float kFmodRatio = 0x1p60f;         // SLEEF fmod is exact below this |a/b|
  static constexpr float kSplit = 4097.0f;             // Veltkamp: 2^ceil(p/2) + 1
  static constexpr float kRsqrt2Lo = 0x1.9fcef4p-27f;  // 1/sqrt2 - float(1/sqrt2)
  // gelu's tanh form: 2u = x (kA + kB x^2), kA = 2 sqrt(2/pi), kB = 0.044715 kA, each as
  // hi + lo (mpmath, 300 bits).
  static constexpr float kGeluAHi = 0x1.988454p+0f, kGeluALo = -0x1.857936p-25f;
  static constexpr float kGeluBHi = 0x1.2444f2p-4f, kGeluBLo = 0x1.49b16ap-29f;
};
template <>
struct Limits<double> {
  static constexpr double kExpArg = 709.0;
  static constexpr double kHuge = 0x1p511;
  static constexpr double kFmodRatio = 0x1p500;
  static constexpr double kSplit = 134217729.0;
  static constexpr double kRsqrt2Lo = -0x1.bdd3413b26456p-55;
  static constexpr double kGeluAHi = 0x1.9884533d43651p+0, kGeluALo = -0x1.cbc0d30ebfd15p-54;
  static constexpr double kGeluBHi = 0x1.2444f2a4d8b4bp-4, kGeluBLo = -0x1.6c843a29d1c70p-61;
};

// A listed function's result fixed for the lanes outside SLEEF's domain: identity unless a
// specialisation below says otherwise. Each checks cheaply whether any lane needs it, so the
// common path pays one compare per vector.
template <Fn1 F>
struct Fixup1 {
  template <typename V>
  static V f(V, V r) {
    return r;
  }
};
// sinh/cosh near overflow: exp(|x|/2)^2/2 stays finite up to the result's own overflow
// (89.42 for float, 710.48 for double) where exp(|x|) does not.
template <typename V>
inline V half_exp_squared(V ax) {
  using E = typename elem<V>::type;
  V e = v_exp(ax * splat<V>(E(0.5)));
  return (e * splat<V>(E(0.5))) * e;
}
template <>
struct Fixup1<Fn1::Sinh> {
  template <typename V>
  static V f(V x, V r) {
    using E = typename elem<V>::type;
    V ax = abs_inline(x);
    auto big = ax > splat<V>(Limits<E>::kExpArg);
    if (!any_lane<V>(big)) return r;
    return blend(big, v_copysign(half_exp_squared(ax), x), r);
  }
};
template <>
struct Fixup1<Fn1::Cosh> {
  template <typename V>
  static V f(V x, V r) {
    using E = typename elem<V>::type;
    V ax = abs_inline(x);
    auto big = ax > splat<V>(Limits<E>::kExpArg);
    if (!any_lane<V>(big)) return r;
    return blend(big, half_exp_squared(ax), r);
  }
};
// log1p(x) = log(x) + log1p(1/x), and 1/x is far below half an ULP of log(x) up there.
template <>
struct Fixup1<Fn1::Log1p> {
  template <typename V>
  [[gnu::noinline, gnu::cold]] static V slow(V x, V r) {
    using E = typename elem<V>::type;
    return blend(x > splat<V>(Limits<E>::kHuge), v_log(x), r);
  }
  template <typename V>
  static V f(V x, V r) {
    using E = typename elem<V>::type;
    if (__builtin_expect(any_lane<V>(x > splat<V>(Limits<E>::kHuge)), 0)) return slow(x, r);
    return r;
  }
};
// asinh(x) = sign(x) (log|x| + ln 2) and acosh(x) = log x + ln 2 up to 1/(4x^2), which is
// far below half an ULP from 2^63 (float) / 2^511 (double) on.
template <>
struct Fixup1<Fn1::Asinh> {
  template <typename V>
  static V f(V x, V r) {
    using E = typename elem<V>::type;
    V ax = abs_inline(x);
    auto big = ax > splat<V>(Limits<E>::kHuge);
    if (!any_lane<V>(big)) return r;
    V l = v_log(ax) + splat<V>(E(0.69314718055994530942));
    return blend(big, v_copysign(l, x), r);
  }
};
template <>
struct Fixup1<Fn1::Acosh> {
  template <typename V>
  static V f(V x, V r) {
    using E = typename elem<V>::type;
    auto big = x > splat<V>(Limits<E>::kHuge);
    if (!any_lane<V>(big)) return r;
    return blend(big, v_log(x) + splat<V>(E(0.69314718055994530942)), r);
  }
};

// lgamma overflows early (float from about 4e36, where the result is still 3.3e38): there
// lgamma(x) = x (log x - 1) - log(x)/2 + log(2 pi)/2 + ..., and the terms after the first are
// below half an ULP of it.
template <>
struct Fixup1<Fn1::Lgamma> {
  template <typename V>
  static V f(V x, V r) {
    using E = typename elem<V>::type;
    V inf = splat<V>(__builtin_huge_val());
    auto odd = (r == inf) & (x > splat<V>(E(1e6))) & (x < inf);
    if (!any_lane<V>(odd)) return r;
    return blend(odd, x * (v_log(x) - splat<V>(E(1))), r);
  }
};

// One struct per listed function, the form the table builders below take.
#define EVX_SIMPLE1(Name, op, fn, af, ad)        \
  struct Name {                                  \
    template <typename V>                        \
    static V f(V x) {                            \
      return Fixup1<Fn1::Name>::f(x, v_##fn(x)); \
    }                                            \
  };
EVX_VECMATH_UNARY(EVX_SIMPLE1)

struct Rsqrt {
  template <typename V>
  static V f(V x) {
    using E = typename elem<V>::type;
    return splat<V>(E(1)) / v_sqrt(x);
  }
};
struct Reciprocal {
  template <typename V>
  static V f(V x) {
    using E = typename elem<V>::type;
    return splat<V>(E(1)) / x;
  }
};

// exp(-|x|) never overflows, so both tails keep full relative accuracy (and denormals).
template <typename V>
inline V sigmoid(V x) {
  using E = typename elem<V>::type;
  V e = v_exp(-v_fabs(x));
  V one = splat<V>(E(1));
  return (x >= splat<V>(E(0)) ? one : e) / (one + e);
}
struct Sigmoid {
  template <typename V>
  static V f(V x) {
    return sigmoid(x);
  }
};
// log1p(exp(x)) = max(x, 0) + log1p(exp(-|x|)): no overflow for large x, NaN propagates.
struct Softplus {
  template <typename V>
  static V f(V x) {
    using E = typename elem<V>::type;
    V zero = splat<V>(E(0));
    return (x > zero ? x : zero) + v_log1p(v_exp(-v_fabs(x)));
  }
};
// x * y = p + e exactly (Dekker's product over Veltkamp's split of each factor).
// GCC contracts across statements by default (-ffp-contract=fast), and in the files built for FMA
// it fused `as - a` into fma(a, kSplit, -a), which breaks Veltkamp's split: gelu(approximate) was
// 213 ULP off at x = -17.3 on AVX2 machines. The split must round each product, so no contraction here.
// The declaration keeps its attribute line (clang-format would split it after `inline void`).
// clang-format off
template <typename V>
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
inline void two_prod(V a, V b, V& p, V& e) {
  // clang-format on
  using E = typename elem<V>::type;
  p = a * b;
  V as = a * splat<V>(Limits<E>::kSplit), bs = b * splat<V>(Limits<E>::kSplit);
  V ah = as - (as - a), al = a - ah, bh = bs - (bs - b), bl = b - bh;
  e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}
// 0.5 x (1 + erf(x / sqrt2)) written with erfc, which keeps the negative tail accurate;
// the limit at -inf is -0 rather than -inf * 0.
//
// In the negative tail erfc(u) falls like exp(-u^2), so the rounding of u = -x/sqrt2 alone
// would cost about 2u^2 ULP (95 ULP at x = -12 in float32). The rounding error d of u is
// recovered exactly (Dekker's product plus the low part of 1/sqrt2) and applied to first
// order: erfc(u + d) = erfc(u) (1 - d R(u)), R = 2 exp(-u^2) / (sqrt(pi) erfc(u)), for which
// u + sqrt(u^2 + 4/pi) (a bound of Birnbaum/Wang, exact at 0 and as u -> inf, within 5%
// between) is plenty: d R is below 2u^2 ULP, so 5% of it is a fraction of an ULP. For u < 0
// erfc is in (1, 2) and insensitive; no correction.
struct GeluErf {
  template <typename V>
  static V f(V x) {
    using E = typename elem<V>::type;
    const V c = splat<V>(E(-0.70710678118654752440));
    // Dekker: x * c = u + e exactly.
    V u, e;
    two_prod(x, c, u, e);
    V d = e - x * splat<V>(Limits<E>::kRsqrt2Lo);
    V zero = splat<V>(E(0));
    V rr = u + v_sqrt(u * u + splat<V>(E(1.27323954473516268615)));  // 4/pi
    // Only where it matters and is finite (|x| < 2^40 keeps the split from overflowing).
    V dr = (u > zero) & (u < splat<V>(E(0x1p40))) ? d * rr : zero;
    V ec = v_erfc(u);
    V r = x * splat<V>(E(0.5)) * (ec - ec * dr);
    return x == splat<V>(-__builtin_inf()) ? splat<V>(E(-0.0)) : r;
  }
};
// 0.5 x (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
//
// For x << 0 sigmoid(2u) ~ exp(2u) turns every rounding in 2u (of size |x|^3) into |2u|
// ULP of relative error (150 ULP at x = -9.5 in float32). So 2u is carried as hi + lo with
// error-free products and sums, and the result corrected to first order:
// sigmoid(v + lo) = sigmoid(v) (1 + lo (1 - sigmoid(v))).
struct GeluTanh {
  template <typename V>
  static V f(V x) {
    using E = typename elem<V>::type;
    using L = Limits<E>;
    V x2, e1, p, e2, v, e4;
    two_prod(x, x, x2, e1);
    two_prod(splat<V>(L::kGeluBHi), x2, p, e2);
    V p_lo = e2 + splat<V>(L::kGeluBHi) * e1 + splat<V>(L::kGeluBLo) * x2;
    V a = splat<V>(L::kGeluAHi);
    V s = a + p;  // two-sum (p may exceed a)
    V sb = s - a;
    V e3 = (a - (s - sb)) + (p - sb);
    V s_lo = e3 + splat<V>(L::kGeluALo) + p_lo;
    two_prod(x, s, v, e4);
    V v_lo = e4 + x * s_lo;
    V zero = splat<V>(E(0));
    V one = splat<V>(E(1));
    V e = v_exp(-v_fabs(v));
    V sig = (v >= zero ? one : e) / (one + e);
    // Only the negative side needs it, and only while the splits cannot overflow.
    V corr = (v < zero) & (x > splat<V>(E(-0x1p20))) ? v_lo / (one + e) : zero;
    V r = x * (sig + sig * corr);
    return x == splat<V>(-__builtin_inf()) ? splat<V>(E(-0.0)) : r;
  }
};

// The binary counterpart of Fixup1.
template <Fn2 F>
struct Fixup2 {
  template <typename V>
  static V f(V, V, V r) {
    return r;
  }
};
// SLEEF's fmod is exact while |a/b| is well inside the float range and gives NaN beyond (its
// reciprocal or quotient overflows); those lanes, and a zero divisor, take the exact scalar
// fmod.
template <>
struct Fixup2<Fn2::Fmod> {
  template <typename V>
  static V f(V a, V b, V r) {
    using E = typename elem<V>::type;
    // An infinite or NaN dividend may take the slow path too: C's fmod gives the same NaN.
    auto slow = abs_inline(a) >= abs_inline(b) * splat<V>(Limits<E>::kFmodRatio);
    if (!any_lane<V>(slow)) return r;
    for (int k = 0; k < lanes<V>; ++k)
      if (mask_lane<V>(slow, k)) set_lane(r, k, fmod_exact(get_lane(a, k), get_lane(b, k)));
    return r;
  }
};
// SLEEF's pow overflows a little below the largest finite value (pow(DBL_MAX, 1) is inf):
// lanes that come out infinite are recomputed by the C library.
template <>
struct Fixup2<Fn2::Pow> {
  template <typename V>
  static V f(V a, V b, V r) {
    // Every infinite result is recomputed: for infinite operands the C library gives the
    // same IEEE answer, and the common path stays one compare.
    auto odd = abs_inline(r) == splat<V>(__builtin_huge_val());
    if (!any_lane<V>(odd)) return r;
    for (int k = 0; k < lanes<V>; ++k)
      if (mask_lane<V>(odd, k)) set_lane(r, k, pow_fallback(get_lane(a, k), get_lane(b, k)));
    return r;
  }
};

#define EVX_SIMPLE2(Name, fn, acc)                     \
  struct Name {                                        \
    template <typename V>                              \
    static V f(V a, V b) {                             \
      return Fixup2<Fn2::Name>::f(a, b, v_##fn(a, b)); \
    }                                                  \
  };
EVX_VECMATH_BINARY(EVX_SIMPLE2)

// numpy's remainder: fmod moved to the divisor's sign; a zero result takes b's sign.
struct Remainder {
  template <typename V>
  static V f(V a, V b) {
    using E = typename elem<V>::type;
    V zero = splat<V>(E(0));
    V mod = Fmod::f(a, b);
    V r = ((mod != zero) & ((b < zero) ^ (mod < zero))) ? mod + b : mod;
    return mod == zero ? v_copysign(zero, b) : r;
  }
};
// numpy's floor_divide (npy_divmod): exact quotient from fmod, then floor with a 0.5 guard.
struct FloorDivide {
  template <typename V>
  static V f(V a, V b) {
    using E = typename elem<V>::type;
    V zero = splat<V>(E(0));
    V one = splat<V>(E(1));
    V q = a / b;
    V mod = Fmod::f(a, b);
    V div = (a - mod) / b;
    div = ((mod != zero) & ((b < zero) ^ (mod < zero))) ? div - one : div;
    V fl = v_floor(div);
    fl = (div - fl > splat<V>(E(0.5))) ? fl + one : fl;
    V r = div != zero ? fl : v_copysign(zero, q);
    return b == zero ? q : r;
  }
};

template <typename V, typename Op>
inline void map1(const typename elem<V>::type* x, typename elem<V>::type* y, int64_t n) {
  using E = typename elem<V>::type;
  constexpr int W = lanes<V>;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V v;
    __builtin_memcpy(&v, x + i, sizeof(V));
    v = Op::f(v);
    __builtin_memcpy(y + i, &v, sizeof(V));
  }
  if (i < n) {  // the tail runs through one zero-padded vector
    E buf[W] = {};
    __builtin_memcpy(buf, x + i, static_cast<size_t>(n - i) * sizeof(E));
    V v;
    __builtin_memcpy(&v, buf, sizeof(V));
    v = Op::f(v);
    __builtin_memcpy(buf, &v, sizeof(V));
    __builtin_memcpy(y + i, buf, static_cast<size_t>(n - i) * sizeof(E));
  }
}

// a_step / b_step are 0 or 1; a broadcast operand is splat once, outside the loop.
template <typename V, typename Op>
inline void map2(const typename elem<V>::type* a, int64_t as, const typename elem<V>::type* b, int64_t bs,
                 typename elem<V>::type* y, int64_t n) {
  using E = typename elem<V>::type;
  constexpr int W = lanes<V>;
  V sa = splat<V>(n > 0 && as == 0 ? a[0] : E(0));
  V sb = splat<V>(n > 0 && bs == 0 ? b[0] : E(0));
  auto block = [&](const E* pa, const E* pb, E* py, int64_t m) {
    E ba[W] = {}, bb[W] = {}, by[W];
    V va = sa, vb = sb;
    if (as != 0) {
      if (m == W) {
        __builtin_memcpy(&va, pa, sizeof(V));
      } else {
        __builtin_memcpy(ba, pa, static_cast<size_t>(m) * sizeof(E));
        __builtin_memcpy(&va, ba, sizeof(V));
      }
    }
    if (bs != 0) {
      if (m == W) {
        __builtin_memcpy(&vb, pb, sizeof(V));
      } else {
        __builtin_memcpy(bb, pb, static_cast<size_t>(m) * sizeof(E));
        __builtin_memcpy(&vb, bb, sizeof(V));
      }
    }
    V r = Op::f(va, vb);
    if (m == W) {
      __builtin_memcpy(py, &r, sizeof(V));
    } else {
      __builtin_memcpy(by, &r, sizeof(V));
      __builtin_memcpy(py, by, static_cast<size_t>(m) * sizeof(E));
    }
  };
  int64_t i = 0;
  for (; i + W <= n; i += W) block(a + i * as, b + i * bs, y + i, W);
  if (i < n) block(a + i * as, b + i * bs, y + i, n - i);
}

template <typename V, typename Op>
void unary_entry(const void* in, void* out, int64_t n, const UnaryParams&) {
  using E = typename elem<V>::type;
  map1<V, Op>(static_cast<const E*>(in), static_cast<E*>(out), n);
}

template <typename V, typename Op>
void binary_entry(const void* a, int64_t as, const void* b, int64_t bs, void* out, int64_t n) {
  using E = typename elem<V>::type;
  map2<V, Op>(static_cast<const E*>(a), as, static_cast<const E*>(b), bs, static_cast<E*>(out), n);
}

// float16/bfloat16: widen a block to float32, run the float kernel, round once on store.
constexpr int64_t kHalfBlock = 512;

template <typename H, typename Op>
void unary_half_entry(const void* in, void* out, int64_t n, const UnaryParams&) {
  const H* x = static_cast<const H*>(in);
  H* y = static_cast<H*>(out);
  float buf[kHalfBlock];
  for (int64_t i = 0; i < n; i += kHalfBlock) {
    int64_t m = n - i < kHalfBlock ? n - i : kHalfBlock;
    for (int64_t j = 0; j < m; ++j) buf[j] = static_cast<float>(x[i + j]);
    map1<VF, Op>(buf, buf, m);
    for (int64_t j = 0; j < m; ++j) y[i + j] = H(buf[j]);
  }
}

template <typename H, typename Op>
void binary_half_entry(const void* a, int64_t as, const void* b, int64_t bs, void* out, int64_t n) {
  const H* pa = static_cast<const H*>(a);
  const H* pb = static_cast<const H*>(b);
  H* y = static_cast<H*>(out);
  float ba[kHalfBlock], bb[kHalfBlock];
  for (int64_t i = 0; i < n; i += kHalfBlock) {
    int64_t m = n - i < kHalfBlock ? n - i : kHalfBlock;
    for (int64_t j = 0; j < (as ? m : 1); ++j) ba[j] = static_cast<float>(pa[(i + j) * as]);
    for (int64_t j = 0; j < (bs ? m : 1); ++j) bb[j] = static_cast<float>(pb[(i + j) * bs]);
    map2<VF, Op>(ba, as ? 1 : 0, bb, bs ? 1 : 0, ba, m);
    for (int64_t j = 0; j < m; ++j) y[i + j] = H(ba[j]);
  }
}

template <typename Op>
constexpr void set1(Table& t, Fn1 fn) {
  auto* e = t.unary[static_cast<int>(fn)];
  e[0] = &unary_entry<VF, Op>;
  e[1] = &unary_entry<VD, Op>;
  e[2] = &unary_half_entry<float16, Op>;
  e[3] = &unary_half_entry<bfloat16, Op>;
}
template <typename Op>
constexpr void set2(Table& t, Fn2 fn) {
  auto* e = t.binary[static_cast<int>(fn)];
  e[0] = &binary_entry<VF, Op>;
  e[1] = &binary_entry<VD, Op>;
  e[2] = &binary_half_entry<float16, Op>;
  e[3] = &binary_half_entry<bfloat16, Op>;
}

constexpr Table make_table() {
  Table t{};
#define EVX_SET1(Name, ...) set1<Name>(t, Fn1::Name);
#define EVX_SET2(Name, ...) set2<Name>(t, Fn2::Name);
  EVX_VECMATH_UNARY(EVX_SET1)
  EVX_VECMATH_UNARY_COMPOSITE(EVX_SET1)
  EVX_VECMATH_BINARY(EVX_SET2)
  EVX_VECMATH_BINARY_COMPOSITE(EVX_SET2)
#undef EVX_SET1
#undef EVX_SET2
  return t;
}

constexpr Table kTable = make_table();

}  // namespace

const Table* EVX_TABLE_FN() { return &kTable; }

}  // namespace evoxc::interp::vecmath

#undef EVX_NAME_F
#undef EVX_NAME_D
#undef EVX_NAME_F_u05
#undef EVX_NAME_F_u10
#undef EVX_NAME_F_u15
#undef EVX_NAME_F_u35
#undef EVX_NAME_F_exact
#undef EVX_NAME_D_u05
#undef EVX_NAME_D_u10
#undef EVX_NAME_D_u15
#undef EVX_NAME_D_u35
#undef EVX_NAME_D_exact
#undef EVX_HELPER_UNARY
#undef EVX_DECL1
#undef EVX_DECL2
#undef EVX_WRAP1
#undef EVX_WRAP2
#undef EVX_SIMPLE1
#undef EVX_SIMPLE2
