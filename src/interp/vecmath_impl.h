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

// One struct per listed function, the form the table builders below take.
#define EVX_SIMPLE1(Name, op, fn, af, ad) \
  struct Name {                           \
    template <typename V>                 \
    static V f(V x) {                     \
      return v_##fn(x);                   \
    }                                     \
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

#define EVX_SIMPLE2(Name, fn, acc) \
  struct Name {                    \
    template <typename V>          \
    static V f(V a, V b) {         \
      return v_##fn(a, b);         \
    }                              \
  };
EVX_VECMATH_BINARY(EVX_SIMPLE2)

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
