// Binary elementwise kernels (arithmetic, comparisons, logic, shifts) plus select and clamp,
// with the step-0 (broadcast scalar) cases compiled as their own loops.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "elementwise.h"
#include "kernel_table.h"
#include "vecmath.h"
#include "vecmath_scalar.h"

namespace evoxc::interp {
namespace {

using scalar::compute_t;
using scalar::is_fp_v;
using scalar::is_half_v;
using scalar::is_int_v;

// One loop per (a broadcast?, b broadcast?) pair: a constant index lets the operand stay in a
// register instead of being reloaded through a multiplied step.
template <typename T, typename R, typename Op, bool A, bool B>
inline void binary_inner(const T* a, const T* b, R* y, int64_t n) {
  using C = compute_t<T>;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = static_cast<R>(Op::template f<C>(static_cast<C>(a[A ? i : 0]), static_cast<C>(b[B ? i : 0])));
  }
}

template <typename T, typename R, typename Op>
void binary_loop(const void* pa, int64_t as, const void* pb, int64_t bs, void* out, int64_t n) {
  if (n <= 0) return;
  const T* a = static_cast<const T*>(pa);
  const T* b = static_cast<const T*>(pb);
  R* y = static_cast<R*>(out);
  if (as == 1 && bs == 1) {
    binary_inner<T, R, Op, true, true>(a, b, y, n);
  } else if (as == 0 && bs == 1) {
    binary_inner<T, R, Op, false, true>(a, b, y, n);
  } else if (as == 1 && bs == 0) {
    binary_inner<T, R, Op, true, false>(a, b, y, n);
  } else if (as == 0 && bs == 0) {
    binary_inner<T, R, Op, false, false>(a, b, y, n);
  } else {  // other steps are outside the ABI; still computed correctly
    using C = compute_t<T>;
    for (int64_t i = 0; i < n; ++i) {
      y[i] = static_cast<R>(Op::template f<C>(static_cast<C>(a[i * as]), static_cast<C>(b[i * bs])));
    }
  }
}

struct Add {
  template <typename C>
  static C f(C a, C b) {
    if constexpr (is_int_v<C>)
      return scalar::wrap_add(a, b);
    else
      return a + b;
  }
};
struct Subtract {
  template <typename C>
  static C f(C a, C b) {
    if constexpr (is_int_v<C>)
      return scalar::wrap_sub(a, b);
    else
      return a - b;
  }
};
struct Multiply {
  template <typename C>
  static C f(C a, C b) {
    if constexpr (is_int_v<C>)
      return scalar::wrap_mul(a, b);
    else
      return a * b;
  }
};
// Integer division guards (docs/semantics.md): x / 0 = -1 (all ones), INT_MIN / -1 = INT_MIN.
struct Divide {
  template <typename C>
  static C f(C a, C b) {
    if constexpr (is_int_v<C>) {
      if (b == 0) return static_cast<C>(~std::make_unsigned_t<C>(0));
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return scalar::wrap_sub(C(0), a);
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};
struct IntFloorDivide {
  template <typename C>
  static C f(C a, C b) {
    if (b == 0) return static_cast<C>(~std::make_unsigned_t<C>(0));
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return scalar::wrap_sub(C(0), a);
      C q = static_cast<C>(a / b);
      C r = static_cast<C>(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<C>(q - 1) : q;
    } else {
      return static_cast<C>(a / b);
    }
  }
};
// numpy remainder: the result takes the divisor's sign; x % 0 = x, INT_MIN % -1 = 0.
struct IntRemainder {
  template <typename C>
  static C f(C a, C b) {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return C(0);
      C r = static_cast<C>(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<C>(r + b) : r;
    } else {
      return static_cast<C>(a % b);
    }
  }
};
// C fmod: the result takes the dividend's sign.
struct IntFmod {
  template <typename C>
  static C f(C a, C b) {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return C(0);
    }
    return static_cast<C>(a % b);
  }
};
// Square-and-multiply, wrapping; a negative exponent gives 0 except for bases 1 and -1.
struct IntPower {
  template <typename C>
  static C f(C a, C b) {
    using U = std::make_unsigned_t<C>;
    if constexpr (std::is_signed_v<C>) {
      if (b < 0) {
        if (a == 1) return C(1);
        if (a == -1) return (b & 1) ? C(-1) : C(1);
        return C(0);
      }
    }
    U e = static_cast<U>(b);
    C result = 1, base = a;
    while (e != 0) {
      if (e & 1u) result = scalar::wrap_mul(result, base);
      e = static_cast<U>(e >> 1);
      if (e != 0) base = scalar::wrap_mul(base, base);
    }
    return result;
  }
};
struct Maximum {
  template <typename C>
  static C f(C a, C b) {
    if constexpr (std::is_floating_point_v<C>)
      return scalar::nan_max(a, b);
    else
      return a > b ? a : b;
  }
};
struct Minimum {
  template <typename C>
  static C f(C a, C b) {
    if constexpr (std::is_floating_point_v<C>)
      return scalar::nan_min(a, b);
    else
      return a < b ? a : b;
  }
};
struct LogicalAnd {
  template <typename C>
  static C f(C a, C b) {
    return a && b;
  }
};
struct LogicalOr {
  template <typename C>
  static C f(C a, C b) {
    return a || b;
  }
};
struct LogicalXor {
  template <typename C>
  static C f(C a, C b) {
    return a != b;
  }
};
template <typename C>
struct bits {
  using type = scalar::wide_unsigned_t<C>;
};
template <>
struct bits<bool> {
  using type = bool;
};
template <typename C>
using bits_t = typename bits<C>::type;
struct BitwiseAnd {
  template <typename C>
  static C f(C a, C b) {
    return static_cast<C>(static_cast<bits_t<C>>(a) & static_cast<bits_t<C>>(b));
  }
};
struct BitwiseOr {
  template <typename C>
  static C f(C a, C b) {
    return static_cast<C>(static_cast<bits_t<C>>(a) | static_cast<bits_t<C>>(b));
  }
};
struct BitwiseXor {
  template <typename C>
  static C f(C a, C b) {
    return static_cast<C>(static_cast<bits_t<C>>(a) ^ static_cast<bits_t<C>>(b));
  }
};
// Shift amounts outside [0, width) give 0 (or the sign fill); C++ would be undefined.
template <typename C>
constexpr bool shift_in_range(C b) {
  if constexpr (std::is_signed_v<C>) {
    if (b < 0) return false;
  }
  return static_cast<uint64_t>(b) < sizeof(C) * 8;
}
struct ShiftLeft {
  template <typename C>
  static C f(C a, C b) {
    using U = scalar::wide_unsigned_t<C>;
    if (!shift_in_range(b)) return C(0);
    return static_cast<C>(static_cast<U>(static_cast<std::make_unsigned_t<C>>(a)) << static_cast<int>(b));
  }
};
struct ShiftRightLogical {
  template <typename C>
  static C f(C a, C b) {
    using U = std::make_unsigned_t<C>;
    if (!shift_in_range(b)) return C(0);
    return static_cast<C>(static_cast<U>(a) >> static_cast<int>(b));
  }
};
// Unsigned operands sign-fill their bit pattern too (reinterpreted as the signed type of the
// same width, shifted, reinterpreted back), as StableHLO and JAX do: 0x80u8 >> 1 is 0xC0.
struct ShiftRightArithmetic {
  template <typename C>
  static C f(C a, C b) {
    using S = std::make_signed_t<C>;
    S sa = static_cast<S>(a);  // modular since C++20
    if (!shift_in_range(b)) return static_cast<C>(sa < 0 ? S(-1) : S(0));
    return static_cast<C>(static_cast<S>(sa >> static_cast<int>(b)));  // arithmetic in C++20
  }
};
struct Equal {
  template <typename C>
  static bool f(C a, C b) {
    return a == b;
  }
};
struct NotEqual {
  template <typename C>
  static bool f(C a, C b) {
    return a != b;
  }
};
struct Less {
  template <typename C>
  static bool f(C a, C b) {
    return a < b;
  }
};
struct LessEqual {
  template <typename C>
  static bool f(C a, C b) {
    return a <= b;
  }
};
struct Greater {
  template <typename C>
  static bool f(C a, C b) {
    return a > b;
  }
};
struct GreaterEqual {
  template <typename C>
  static bool f(C a, C b) {
    return a >= b;
  }
};

// nextafter on a 16-bit float must step in that format's bits, not in float's.
template <typename H>
void half_nextafter(const void* pa, int64_t as, const void* pb, int64_t bs, void* out, int64_t n) {
  const H* a = static_cast<const H*>(pa);
  const H* b = static_cast<const H*>(pb);
  H* y = static_cast<H*>(out);
  for (int64_t i = 0; i < n; ++i) {
    H ha = a[i * as], hb = b[i * bs];
    float fa = static_cast<float>(ha), fb = static_cast<float>(hb);
    uint16_t r;
    if (fa != fa || fb != fb) {
      r = H(fa + fb).bits;
    } else if (fa == fb) {
      r = hb.bits;
    } else if (fa == 0) {
      r = static_cast<uint16_t>((hb.bits & 0x8000u) | 1u);
    } else {
      bool away = (fa < fb) == (fa > 0);  // moving away from zero grows the magnitude bits
      r = static_cast<uint16_t>(away ? ha.bits + 1 : ha.bits - 1);
    }
    y[i] = H::from_bits(r);
  }
}

// Same-type (Pred = false) or bool-result (Pred = true) kernel for every dtype in class C.
template <typename Op, DTypeClass C, bool Pred = false>
BinaryFn pick(DType t) {
  return visit_dtype(t, [](auto tag) -> BinaryFn {
    using T = decltype(tag);
    if constexpr (dtype_in_class(dtype_of_v<T>, C)) {
      if constexpr (Pred)
        return &binary_loop<T, bool, Op>;
      else
        return &binary_loop<T, T, Op>;
    } else {
      return nullptr;
    }
  });
}

// The SLEEF table's kernel for a float dtype.
template <vecmath::Fn2 F>
BinaryFn vec(DType t) {
  int slot = vecmath::float_slot(t);
  return slot < 0 ? nullptr : vecmath::table().binary[static_cast<int>(F)][slot];
}

// Integer kernel from IntOp, float kernel from the SLEEF table.
template <typename IntOp, vecmath::Fn2 F>
BinaryFn int_or_vec(DType t) {
  if (vecmath::float_slot(t) >= 0) return vec<F>(t);
  return pick<IntOp, DTypeClass::Int>(t);
}

// nextafter on a 16-bit float steps in that format's bits; SLEEF covers float and double.
BinaryFn nextafter(DType t) {
  if (t == DType::F16) return &half_nextafter<float16>;
  if (t == DType::BF16) return &half_nextafter<bfloat16>;
  return vec<vecmath::Fn2::Nextafter>(t);
}

// select: pred ? on_true : on_false, moved as raw bits of the element's width.
template <typename B, bool P, bool X, bool Y>
inline void select_inner(const bool* p, const B* x, const B* y, B* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = p[P ? i : 0] ? x[X ? i : 0] : y[Y ? i : 0];
}
template <typename B>
void select_loop(const void* pp, int64_t ps, const void* px, int64_t xs, const void* py, int64_t ys, void* out,
                 int64_t n) {
  if (n <= 0) return;
  const bool* p = static_cast<const bool*>(pp);
  const B* x = static_cast<const B*>(px);
  const B* y = static_cast<const B*>(py);
  B* o = static_cast<B*>(out);
  switch ((ps != 0 ? 4 : 0) | (xs != 0 ? 2 : 0) | (ys != 0 ? 1 : 0)) {
    case 0: select_inner<B, false, false, false>(p, x, y, o, n); break;
    case 1: select_inner<B, false, false, true>(p, x, y, o, n); break;
    case 2: select_inner<B, false, true, false>(p, x, y, o, n); break;
    case 3: select_inner<B, false, true, true>(p, x, y, o, n); break;
    case 4: select_inner<B, true, false, false>(p, x, y, o, n); break;
    case 5: select_inner<B, true, false, true>(p, x, y, o, n); break;
    case 6: select_inner<B, true, true, false>(p, x, y, o, n); break;
    default: select_inner<B, true, true, true>(p, x, y, o, n); break;
  }
}

// clamp: min(max(x, lo), hi) with NaN from any operand propagating (floats).
template <typename T>
inline T clamp_one(T x, T lo, T hi) {
  using C = compute_t<T>;
  C cx = static_cast<C>(x), cl = static_cast<C>(lo), ch = static_cast<C>(hi);
  if constexpr (std::is_floating_point_v<C>) {
    return static_cast<T>(scalar::nan_min(scalar::nan_max(cx, cl), ch));
  } else {
    C m = cx > cl ? cx : cl;
    return m < ch ? m : ch;
  }
}
template <typename T, bool X, bool L, bool H>
inline void clamp_inner(const T* x, const T* lo, const T* hi, T* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = clamp_one(x[X ? i : 0], lo[L ? i : 0], hi[H ? i : 0]);
}
template <typename T>
void clamp_loop(const void* px, int64_t xs, const void* pl, int64_t ls, const void* ph, int64_t hs, void* out,
                int64_t n) {
  if (n <= 0) return;
  const T* x = static_cast<const T*>(px);
  const T* lo = static_cast<const T*>(pl);
  const T* hi = static_cast<const T*>(ph);
  T* o = static_cast<T*>(out);
  switch ((xs != 0 ? 4 : 0) | (ls != 0 ? 2 : 0) | (hs != 0 ? 1 : 0)) {
    case 0: clamp_inner<T, false, false, false>(x, lo, hi, o, n); break;
    case 1: clamp_inner<T, false, false, true>(x, lo, hi, o, n); break;
    case 2: clamp_inner<T, false, true, false>(x, lo, hi, o, n); break;
    case 3: clamp_inner<T, false, true, true>(x, lo, hi, o, n); break;
    case 4: clamp_inner<T, true, false, false>(x, lo, hi, o, n); break;
    case 5: clamp_inner<T, true, false, true>(x, lo, hi, o, n); break;
    case 6: clamp_inner<T, true, true, false>(x, lo, hi, o, n); break;
    default: clamp_inner<T, true, true, true>(x, lo, hi, o, n); break;
  }
}

using BinaryPick = BinaryFn (*)(DType t);
struct BinaryRow {
  const char* op;
  BinaryPick pick;
};

// Every binary elementwise op and comparison, one row each.
constexpr BinaryRow kRows[] = {
    {"add", &pick<Add, DTypeClass::Numeric>},
    {"subtract", &pick<Subtract, DTypeClass::Numeric>},
    {"multiply", &pick<Multiply, DTypeClass::Numeric>},
    {"divide", &pick<Divide, DTypeClass::Numeric>},
    {"maximum", &pick<Maximum, DTypeClass::Numeric>},
    {"minimum", &pick<Minimum, DTypeClass::Numeric>},
    {"floor_divide", &int_or_vec<IntFloorDivide, vecmath::Fn2::FloorDivide>},
    {"remainder", &int_or_vec<IntRemainder, vecmath::Fn2::Remainder>},
    {"fmod", &int_or_vec<IntFmod, vecmath::Fn2::Fmod>},
    {"power", &int_or_vec<IntPower, vecmath::Fn2::Pow>},
    {"atan2", &vec<vecmath::Fn2::Atan2>},
    {"hypot", &vec<vecmath::Fn2::Hypot>},
    {"copysign", &vec<vecmath::Fn2::Copysign>},
    {"nextafter", &nextafter},
    {"logical_and", &pick<LogicalAnd, DTypeClass::Bool>},
    {"logical_or", &pick<LogicalOr, DTypeClass::Bool>},
    {"logical_xor", &pick<LogicalXor, DTypeClass::Bool>},
    {"bitwise_and", &pick<BitwiseAnd, DTypeClass::IntOrBool>},
    {"bitwise_or", &pick<BitwiseOr, DTypeClass::IntOrBool>},
    {"bitwise_xor", &pick<BitwiseXor, DTypeClass::IntOrBool>},
    {"shift_left", &pick<ShiftLeft, DTypeClass::Int>},
    {"shift_right_logical", &pick<ShiftRightLogical, DTypeClass::Int>},
    {"shift_right_arithmetic", &pick<ShiftRightArithmetic, DTypeClass::Int>},
    {"equal", &pick<Equal, DTypeClass::Any, true>},
    {"not_equal", &pick<NotEqual, DTypeClass::Any, true>},
    {"less", &pick<Less, DTypeClass::Any, true>},
    {"less_equal", &pick<LessEqual, DTypeClass::Any, true>},
    {"greater", &pick<Greater, DTypeClass::Any, true>},
    {"greater_equal", &pick<GreaterEqual, DTypeClass::Any, true>},
};

const std::vector<BinaryPick>& picks_by_id() {
  static const std::vector<BinaryPick> by_id = [] {
    std::vector<BinaryPick> v(num_ops(), nullptr);
    for (const BinaryRow& r : kRows) v[get_op(r.op).id] = r.pick;
    return v;
  }();
  return by_id;
}

std::string dt(DType t) { return std::string(dtype_name(t)); }

KernelPtr make_binary(PrepareCtx& ctx) {
  if (ctx.op.num_results() != 1) ctx.fail("expects one result");
  if (ctx.op.num_operands() != 2) ctx.fail("expects 2 operands, got " + std::to_string(ctx.op.num_operands()));
  DType t = ctx.operand(0).dtype();
  if (ctx.operand(1).dtype() != t)
    ctx.fail("operands have dtypes " + dt(t) + " and " + dt(ctx.operand(1).dtype()) + "; convert one first");
  BinaryFn fn = picks_by_id()[ctx.op.op_id()](t);
  if (!fn) ctx.fail("no kernel for dtype " + dt(t));
  return binary_instruction(ctx, fn);
}

// select (pred, on_true, on_false) and clamp (x, lo, hi): operands and result share one
// dtype, except select's bool predicate.
template <bool Select>
KernelPtr make_ternary(PrepareCtx& ctx) {
  if (ctx.op.num_results() != 1) ctx.fail("expects one result");
  size_t n = ctx.op.num_operands();
  if (n != 3) ctx.fail("expects 3 operands, got " + std::to_string(n));
  DType t = ctx.operand(Select ? 1 : 0).dtype();
  if (Select && ctx.operand(0).dtype() != DType::Bool) ctx.fail("the predicate must be bool");
  for (size_t k = Select ? 1 : 0; k < 3; ++k)
    if (ctx.operand(k).dtype() != t || ctx.result().dtype() != t) ctx.fail("operands and result must share one dtype");
  TernaryFn fn = Select ? select_kernel(t) : clamp_kernel(t);
  if (!fn) ctx.fail("no kernel for dtype " + dt(t));
  return ternary_instruction(ctx, fn);
}

}  // namespace

BinaryFn binary_kernel(const OpDef& op, DType t) {
  BinaryPick pick = op.id < picks_by_id().size() ? picks_by_id()[op.id] : nullptr;
  return pick == nullptr ? nullptr : pick(t);
}

TernaryFn select_kernel(DType t) {
  switch (size_of(t)) {
    case 1: return &select_loop<uint8_t>;
    case 2: return &select_loop<uint16_t>;
    case 4: return &select_loop<uint32_t>;
    case 8: return &select_loop<uint64_t>;
    default: return nullptr;
  }
}

TernaryFn clamp_kernel(DType t) {
  return visit_dtype(t, [](auto tag) -> TernaryFn {
    using T = decltype(tag);
    if constexpr (is_int_v<T> || is_fp_v<T>)
      return &clamp_loop<T>;
    else
      return nullptr;
  });
}

void install_elementwise_binary_kernels(KernelTable& t) {
  for (const BinaryRow& r : kRows) t.set(r.op, &make_binary);
  t.set("select", &make_ternary<true>);
  t.set("clamp", &make_ternary<false>);
}

}  // namespace evoxc::interp
