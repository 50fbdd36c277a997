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

// One entry a line: clang-format re-wraps this list differently on every pass.
// clang-format off
#define EVX_U_FUNCS(X) \
  X(exp, u10) \
  X(exp2, u10) \
  X(expm1, u10) \
  X(log, u10) \
  X(log2, u10) \
  X(log10, u10) \
  X(log1p, u10) \
  X(cbrt, u10) \
  X(sin, u10) \
  X(cos, u10) \
  X(tan, u10) \
  X(asin, u10) \
  X(acos, u10) \
  X(atan, u10) \
  X(sinh, u10) \
  X(cosh, u10) \
  X(asinh, u10) \
  X(acosh, u10) \
  X(atanh, u10) \
  X(erf, u10) \
  X(erfc, u15) \
  X(lgamma, u10)
// clang-format on
#define EVX_X_FUNCS(X) X(sqrt) X(floor) X(ceil) X(trunc) X(rint) X(fabs)
#define EVX_U_FUNCS2(X) X(atan2, u10) X(hypot, u05) X(pow, u10)
#define EVX_X_FUNCS2(X) X(copysign) X(nextafter) X(fmod)

#define EVX_DECL_U(fn, u)                  \
  extern "C" EVX_VF EVX_SF(fn, u)(EVX_VF); \
  extern "C" EVX_VD EVX_SD(fn, u)(EVX_VD);
#define EVX_DECL_X(fn)                   \
  extern "C" EVX_VF EVX_SFX(fn)(EVX_VF); \
  extern "C" EVX_VD EVX_SDX(fn)(EVX_VD);
#define EVX_DECL_U2(fn, u)                         \
  extern "C" EVX_VF EVX_SF(fn, u)(EVX_VF, EVX_VF); \
  extern "C" EVX_VD EVX_SD(fn, u)(EVX_VD, EVX_VD);
#define EVX_DECL_X2(fn)                          \
  extern "C" EVX_VF EVX_SFX(fn)(EVX_VF, EVX_VF); \
  extern "C" EVX_VD EVX_SDX(fn)(EVX_VD, EVX_VD);
EVX_U_FUNCS(EVX_DECL_U)
EVX_X_FUNCS(EVX_DECL_X)
EVX_U_FUNCS2(EVX_DECL_U2)
EVX_X_FUNCS2(EVX_DECL_X2)
// float tanh uses SLEEF's 3.5-ULP variant: 2.6x faster than the 1-ULP one (docs/semantics.md, Accuracy).
extern "C" EVX_VF EVX_SF(tanh, u35)(EVX_VF);
extern "C" EVX_VD EVX_SD(tanh, u10)(EVX_VD);

namespace evoxc::interp::vecmath {
namespace {

using VF = EVX_VF;
using VD = EVX_VD;

#define EVX_WRAP_U(fn, u)                             \
  inline VF v_##fn(VF x) { return EVX_SF(fn, u)(x); } \
  inline VD v_##fn(VD x) { return EVX_SD(fn, u)(x); }
#define EVX_WRAP_X(fn)                              \
  inline VF v_##fn(VF x) { return EVX_SFX(fn)(x); } \
  inline VD v_##fn(VD x) { return EVX_SDX(fn)(x); }
#define EVX_WRAP_U2(fn, u)                                     \
  inline VF v_##fn(VF x, VF y) { return EVX_SF(fn, u)(x, y); } \
  inline VD v_##fn(VD x, VD y) { return EVX_SD(fn, u)(x, y); }
#define EVX_WRAP_X2(fn)                                      \
  inline VF v_##fn(VF x, VF y) { return EVX_SFX(fn)(x, y); } \
  inline VD v_##fn(VD x, VD y) { return EVX_SDX(fn)(x, y); }
EVX_U_FUNCS(EVX_WRAP_U)
EVX_X_FUNCS(EVX_WRAP_X)
EVX_U_FUNCS2(EVX_WRAP_U2)
EVX_X_FUNCS2(EVX_WRAP_X2)
inline VF v_tanh(VF x) { return EVX_SF(tanh, u35)(x); }
inline VD v_tanh(VD x) { return EVX_SD(tanh, u10)(x); }

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

#define EVX_SIMPLE1(Name, fn) \
  struct Name {               \
    template <typename V>     \
    static V f(V x) {         \
      return v_##fn(x);       \
    }                         \
  };
EVX_SIMPLE1(Exp, exp)
EVX_SIMPLE1(Exp2, exp2)
EVX_SIMPLE1(Expm1, expm1)
EVX_SIMPLE1(Log, log)
EVX_SIMPLE1(Log2, log2)
EVX_SIMPLE1(Log10, log10)
EVX_SIMPLE1(Log1p, log1p)
EVX_SIMPLE1(Sqrt, sqrt)
EVX_SIMPLE1(Cbrt, cbrt)
EVX_SIMPLE1(Sin, sin)
EVX_SIMPLE1(Cos, cos)
EVX_SIMPLE1(Tan, tan)
EVX_SIMPLE1(Asin, asin)
EVX_SIMPLE1(Acos, acos)
EVX_SIMPLE1(Atan, atan)
EVX_SIMPLE1(Sinh, sinh)
EVX_SIMPLE1(Cosh, cosh)
EVX_SIMPLE1(Tanh, tanh)
EVX_SIMPLE1(Asinh, asinh)
EVX_SIMPLE1(Acosh, acosh)
EVX_SIMPLE1(Atanh, atanh)
EVX_SIMPLE1(Erf, erf)
EVX_SIMPLE1(Erfc, erfc)
EVX_SIMPLE1(Lgamma, lgamma)
EVX_SIMPLE1(Floor, floor)
EVX_SIMPLE1(Ceil, ceil)
EVX_SIMPLE1(Trunc, trunc)
// rint in the default rounding mode is round half to even.
EVX_SIMPLE1(Round, rint)

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
// 0.5 x (1 + erf(x / sqrt2)) written with erfc, which keeps the negative tail accurate;
// the limit at -inf is -0 rather than -inf * 0.
struct GeluErf {
  template <typename V>
  static V f(V x) {
    using E = typename elem<V>::type;
    V r = x * splat<V>(E(0.5)) * v_erfc(x * splat<V>(E(-0.70710678118654752440)));
    return x == splat<V>(-__builtin_inf()) ? splat<V>(E(-0.0)) : r;
  }
};
// 0.5 x (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
struct GeluTanh {
  template <typename V>
  static V f(V x) {
    using E = typename elem<V>::type;
    V u2 = x * (splat<V>(E(2 * 0.79788456080286535588)) + splat<V>(E(2 * 0.79788456080286535588 * 0.044715)) * x * x);
    V r = x * sigmoid(u2);
    return x == splat<V>(-__builtin_inf()) ? splat<V>(E(-0.0)) : r;
  }
};

#define EVX_SIMPLE2(Name, fn) \
  struct Name {               \
    template <typename V>     \
    static V f(V a, V b) {    \
      return v_##fn(a, b);    \
    }                         \
  };
EVX_SIMPLE2(Atan2, atan2)
EVX_SIMPLE2(Hypot, hypot)
EVX_SIMPLE2(Pow, pow)
EVX_SIMPLE2(Nextafter, nextafter)
EVX_SIMPLE2(Copysign, copysign)
EVX_SIMPLE2(Fmod, fmod)

// numpy's remainder: fmod moved to the divisor's sign; a zero result takes b's sign.
struct Remainder {
  template <typename V>
  static V f(V a, V b) {
    using E = typename elem<V>::type;
    V zero = splat<V>(E(0));
    V mod = v_fmod(a, b);
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
    V mod = v_fmod(a, b);
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
  set1<Exp>(t, Fn1::Exp);
  set1<Exp2>(t, Fn1::Exp2);
  set1<Expm1>(t, Fn1::Expm1);
  set1<Log>(t, Fn1::Log);
  set1<Log2>(t, Fn1::Log2);
  set1<Log10>(t, Fn1::Log10);
  set1<Log1p>(t, Fn1::Log1p);
  set1<Sqrt>(t, Fn1::Sqrt);
  set1<Rsqrt>(t, Fn1::Rsqrt);
  set1<Cbrt>(t, Fn1::Cbrt);
  set1<Reciprocal>(t, Fn1::Reciprocal);
  set1<Sin>(t, Fn1::Sin);
  set1<Cos>(t, Fn1::Cos);
  set1<Tan>(t, Fn1::Tan);
  set1<Asin>(t, Fn1::Asin);
  set1<Acos>(t, Fn1::Acos);
  set1<Atan>(t, Fn1::Atan);
  set1<Sinh>(t, Fn1::Sinh);
  set1<Cosh>(t, Fn1::Cosh);
  set1<Tanh>(t, Fn1::Tanh);
  set1<Asinh>(t, Fn1::Asinh);
  set1<Acosh>(t, Fn1::Acosh);
  set1<Atanh>(t, Fn1::Atanh);
  set1<Sigmoid>(t, Fn1::Sigmoid);
  set1<Erf>(t, Fn1::Erf);
  set1<Erfc>(t, Fn1::Erfc);
  set1<Lgamma>(t, Fn1::Lgamma);
  set1<Softplus>(t, Fn1::Softplus);
  set1<GeluErf>(t, Fn1::GeluErf);
  set1<GeluTanh>(t, Fn1::GeluTanh);
  set1<Floor>(t, Fn1::Floor);
  set1<Ceil>(t, Fn1::Ceil);
  set1<Round>(t, Fn1::Round);
  set1<Trunc>(t, Fn1::Trunc);
  set2<Atan2>(t, Fn2::Atan2);
  set2<Hypot>(t, Fn2::Hypot);
  set2<Pow>(t, Fn2::Pow);
  set2<Nextafter>(t, Fn2::Nextafter);
  set2<Copysign>(t, Fn2::Copysign);
  set2<Fmod>(t, Fn2::Fmod);
  set2<Remainder>(t, Fn2::Remainder);
  set2<FloorDivide>(t, Fn2::FloorDivide);
  return t;
}

constexpr Table kTable = make_table();

}  // namespace

const Table* EVX_TABLE_FN() { return &kTable; }

}  // namespace evoxc::interp::vecmath

#undef EVX_U_FUNCS
#undef EVX_X_FUNCS
#undef EVX_U_FUNCS2
#undef EVX_X_FUNCS2
#undef EVX_DECL_U
#undef EVX_DECL_X
#undef EVX_DECL_U2
#undef EVX_DECL_X2
#undef EVX_WRAP_U
#undef EVX_WRAP_X
#undef EVX_WRAP_U2
#undef EVX_WRAP_X2
#undef EVX_SIMPLE1
#undef EVX_SIMPLE2
