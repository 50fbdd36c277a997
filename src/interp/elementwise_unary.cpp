// Unary elementwise kernels: float math through the SLEEF tables, integer and predicate ops as
// plain loops the compiler vectorises.
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>

#include "elementwise.h"
#include "evoxc/core/error.h"
#include "evoxc/ops/special_constants.h"
#include "kernel_table.h"
#include "vecmath.h"
#include "vecmath_scalar.h"

namespace evoxc::interp {
namespace {

using scalar::compute_t;
using scalar::is_fp_v;
using scalar::is_half_v;
using scalar::is_int_v;

// y[i] = R(Op::f(x[i])) with 16-bit floats widened to float first. The in-place case gets
// its own loop so the vectoriser sees one pointer instead of a possible overlap.
template <typename T, typename R, typename Op>
void unary_loop(const void* in, void* out, int64_t n, const UnaryParams& p) {
  using C = compute_t<T>;
  const T* x = static_cast<const T*>(in);
  R* y = static_cast<R*>(out);
  if constexpr (std::is_same_v<T, R>) {
    if (static_cast<const void*>(y) == in) {
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<R>(Op::template f<C>(static_cast<C>(y[i]), p));
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<R>(Op::template f<C>(static_cast<C>(x[i]), p));
}

struct Neg {
  template <typename C>
  static C f(C x, const UnaryParams&) {
    if constexpr (is_int_v<C>)
      return scalar::wrap_sub(C(0), x);
    else
      return -x;
  }
};
struct Abs {
  template <typename C>
  static C f(C x, const UnaryParams&) {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else if constexpr (is_int_v<C>)
      return x < 0 ? scalar::wrap_sub(C(0), x) : x;  // abs(INT_MIN) wraps
    else
      return std::fabs(x);
  }
};
struct Sign {
  template <typename C>
  static C f(C x, const UnaryParams&) {
    if constexpr (std::is_unsigned_v<C>)
      return x > 0 ? C(1) : C(0);
    else
      return x > 0 ? C(1) : (x < 0 ? C(-1) : x);  // keeps +-0 and NaN
  }
};
struct Square {
  template <typename C>
  static C f(C x, const UnaryParams&) {
    if constexpr (is_int_v<C>)
      return scalar::wrap_mul(x, x);
    else
      return x * x;
  }
};
struct Relu {
  template <typename C>
  static C f(C x, const UnaryParams&) {
    if constexpr (is_int_v<C>)
      return x > 0 ? x : C(0);
    else
      return (x > 0 || x != x) ? x : C(0);
  }
};
struct IsNan {
  template <typename C>
  static bool f(C x, const UnaryParams&) {
    if constexpr (std::is_floating_point_v<C>)
      return x != x;
    else
      return false;
  }
};
struct IsInf {
  template <typename C>
  static bool f(C x, const UnaryParams&) {
    if constexpr (std::is_floating_point_v<C>)
      return std::fabs(x) == std::numeric_limits<C>::infinity();
    else
      return false;
  }
};
struct IsFinite {
  template <typename C>
  static bool f(C x, const UnaryParams&) {
    if constexpr (std::is_floating_point_v<C>)
      return x - x == x - x;  // false for inf and NaN
    else
      return true;
  }
};
struct LogicalNot {
  template <typename C>
  static C f(C x, const UnaryParams&) {
    return !x;
  }
};
struct BitwiseNot {
  template <typename C>
  static C f(C x, const UnaryParams&) {
    if constexpr (std::is_same_v<C, bool>)
      return !x;
    else
      return static_cast<C>(~static_cast<scalar::wide_unsigned_t<C>>(static_cast<std::make_unsigned_t<C>>(x)));
  }
};
struct Popcount {
  template <typename C>
  static C f(C x, const UnaryParams&) {
    return static_cast<C>(std::popcount(static_cast<std::make_unsigned_t<C>>(x)));
  }
};
struct NanToNum {
  template <typename C>
  static C f(C x, const UnaryParams& p) {
    if (x != x) return static_cast<C>(p.a);
    if (x == std::numeric_limits<C>::infinity()) return static_cast<C>(p.b);
    if (x == -std::numeric_limits<C>::infinity()) return static_cast<C>(p.c);
    return x;
  }
};

// Inverse error function in double: a rational first guess (Giles 2010, single-precision
// form) polished by two Halley steps on erf, which brings it to double accuracy.
double erf_inv(double y) {
  if (y != y || y < -1 || y > 1) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1) return std::numeric_limits<double>::infinity();
  if (y == -1) return -std::numeric_limits<double>::infinity();
  if (y == 0) return y;  // keeps -0
  double w = -std::log((1.0 - y) * (1.0 + y));
  double x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
    x = p * y;
  } else if (w > 16.0) {
    // Beyond float's tail (1 - |y| < 2^-23) Giles' polynomial is extrapolated and Halley
    // from it lands far off (5.54 for 1 - 2^-53). The asymptotic erfc(x) ~ exp(-x^2) /
    // (x sqrt(pi)) solved by fixed point is within 1e-3 there, close enough for Halley.
    double t = 1.0 - std::fabs(y);  // exact (Sterbenz)
    double g = std::sqrt(w);
    for (int k = 0; k < 4; ++k) g = std::sqrt(-std::log(t * g * 1.77245385090551602730));
    x = y > 0 ? g : -g;
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
    x = p * y;
  }
  constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
  for (int k = 0; k < 4; ++k) {
    // Near |y| = 1 the residual erf(x) - y loses digits; erfc keeps them.
    double r =
        std::fabs(y) > 0.5 ? (y > 0 ? -1.0 : 1.0) * (std::erfc(std::fabs(x)) - (1.0 - std::fabs(y))) : std::erf(x) - y;
    double d = kTwoOverSqrtPi * std::exp(-x * x);
    if (d == 0) break;
    double step = r / (d + x * r);  // Halley: r / (f' - f f''/(2 f')) with f''= -2 x f'
    x -= step;
    if (std::fabs(step) <= 0x1p-54 * std::fabs(x)) break;  // converged: one more would not move x
  }
  return x;
}

// digamma on [1, 2] as a series in (x - x0): the recurrence and asymptotic series below lose
// all relative accuracy near the zero to cancellation; this keeps it (the leading factor
// x - x0 is exact to 2^-106).
double digamma_near_root(double x) {
  double h = (x - special::kDigammaRootHi) - special::kDigammaRootLo;
  double p = 0;
  for (int k = static_cast<int>(std::size(special::kDigammaTaylor)) - 1; k >= 0; --k)
    p = p * h + special::kDigammaTaylor[k];
  return p * h;
}

// digamma in double: reflection below 0, a series about the zero on [1, 2] (reached by the
// recurrence from below 10), the asymptotic series from 10 on. Poles: 0 gives -inf (the limit from above, as torch),
// negative integers NaN.
double digamma(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x != x || x == -std::numeric_limits<double>::infinity()) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  double result = 0;
  if (x < 0) {
    double fl = std::floor(x);
    if (fl == x) return std::numeric_limits<double>::quiet_NaN();
    double r = x - std::nearbyint(x);  // tan(pi x) has period 1; the reduction is exact
    result -= kPi / std::tan(kPi * r);
    x = 1 - x;
  }
  if (x < 1) {  // psi(x) = psi(x + 1) - 1/x; the two do not cancel below 1
    result -= 1 / x;
    x += 1;
  }
  if (x < 10) {  // psi(x) = psi(x - n) + sum 1/(x - k): down to [1, 2], smallest terms first
    double sum = 0, y = x;
    while (y > 2) {
      y -= 1;  // exact below 2^52
      sum += 1 / y;
    }
    return result + (digamma_near_root(y) + sum);
  }
  double z = 1 / (x * x);  // the asymptotic series is good to 1e-17 from 10 on
  double series =
      z *
      (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
  return result + std::log(x) - 0.5 / x - series;
}

struct ErfInv {
  template <typename C>
  static C f(C x, const UnaryParams&) {
    return static_cast<C>(erf_inv(static_cast<double>(x)));
  }
};
struct Digamma {
  template <typename C>
  static C f(C x, const UnaryParams&) {
    if constexpr (std::is_same_v<C, float>)
      return scalar::narrow_to_float(digamma(static_cast<double>(x)));
    else
      return static_cast<C>(digamma(static_cast<double>(x)));
  }
};

// Same-type (Pred = false) or bool-result (Pred = true) kernel for every dtype in class C.
template <typename Op, DTypeClass C, bool Pred = false>
UnaryFn pick(DType t, const AttrMap&, UnaryParams&) {
  return visit_dtype(t, [](auto tag) -> UnaryFn {
    using T = decltype(tag);
    if constexpr (dtype_in_class(dtype_of_v<T>, C)) {
      if constexpr (Pred)
        return &unary_loop<T, bool, Op>;
      else
        return &unary_loop<T, T, Op>;
    } else {
      return nullptr;
    }
  });
}

// The SLEEF table's kernel for a float dtype.
template <vecmath::Fn1 F>
UnaryFn vec(DType t, const AttrMap&, UnaryParams&) {
  int slot = vecmath::float_slot(t);
  return slot < 0 ? nullptr : vecmath::table().unary[static_cast<int>(F)][slot];
}

// Reads an optional float attribute; a value of another kind is the attribute helper's TypeError.
double float_attr_or(const AttrMap& attrs, const char* name, double fallback, std::string_view op) {
  if (attrs.find(name) == attrs.end()) return fallback;
  return attr_float(attrs, name, std::string(op));
}

// The replacement values of nan_to_num, pre-rounded to the dtype so the kernel only casts in-range values.
UnaryParams nan_to_num_params(DType t, const AttrMap& attrs) {
  UnaryParams p;
  if (!is_float(t)) return p;
  std::array<double, 3> v = nan_to_num_values(t, attrs);
  p.a = v[0];
  p.b = v[1];
  p.c = v[2];
  return p;
}

UnaryFn gelu(DType t, const AttrMap& attrs, UnaryParams& p) {
  bool approximate = attrs.find("approximate") != attrs.end() && attr_bool(attrs, "approximate", "gelu");
  return approximate ? vec<vecmath::Fn1::GeluTanh>(t, attrs, p) : vec<vecmath::Fn1::GeluErf>(t, attrs, p);
}

UnaryFn nan_to_num(DType t, const AttrMap& attrs, UnaryParams& p) {
  UnaryFn fn = pick<NanToNum, DTypeClass::Float>(t, attrs, p);
  if (fn != nullptr) p = nan_to_num_params(t, attrs);
  return fn;
}

// A row: the op, how its kernel is picked for an operand dtype, and whether the kernel
// reads values the pick leaves in UnaryParams.
using UnaryPick = UnaryFn (*)(DType t, const AttrMap& attrs, UnaryParams& params);
struct UnaryRow {
  const char* op;
  UnaryPick pick;
  bool needs_params = false;
};

// Every unary elementwise op, one row each. The vectorised float functions come from
// vecmath.h's lists (one line there is their row).
// clang-format off
constexpr UnaryRow kRows[] = {
#define EVX_UNARY_ROW(Name, op, ...) {op, &vec<vecmath::Fn1::Name>},
    EVX_VECMATH_UNARY(EVX_UNARY_ROW)
    EVX_VECMATH_UNARY_COMPOSITE(EVX_UNARY_ROW)
#undef EVX_UNARY_ROW
    {"gelu", &gelu},
    {"erf_inv", &pick<ErfInv, DTypeClass::Float>},
    {"digamma", &pick<Digamma, DTypeClass::Float>},
    {"neg", &pick<Neg, DTypeClass::Numeric>},
    {"abs", &pick<Abs, DTypeClass::Numeric>},
    {"sign", &pick<Sign, DTypeClass::Numeric>},
    {"square", &pick<Square, DTypeClass::Numeric>},
    {"relu", &pick<Relu, DTypeClass::Numeric>},
    {"isnan", &pick<IsNan, DTypeClass::Any, true>},
    {"isinf", &pick<IsInf, DTypeClass::Any, true>},
    {"isfinite", &pick<IsFinite, DTypeClass::Any, true>},
    {"logical_not", &pick<LogicalNot, DTypeClass::Bool>},
    {"bitwise_not", &pick<BitwiseNot, DTypeClass::IntOrBool>},
    {"popcount", &pick<Popcount, DTypeClass::Int>},
    {"nan_to_num", &nan_to_num, true},
};
// clang-format on

// Each op's row, by op id (the rows with an op name; composites an op picks have none).
const std::vector<const UnaryRow*>& rows_by_id() {
  static const std::vector<const UnaryRow*> by_id = [] {
    std::vector<const UnaryRow*> v(num_ops(), nullptr);
    for (const UnaryRow& r : kRows)
      if (r.op[0] != '\0') v[get_op(r.op).id] = &r;
    return v;
  }();
  return by_id;
}

KernelPtr make_unary(PrepareCtx& ctx) {
  if (ctx.op.num_results() != 1) ctx.fail("expects one result");
  if (ctx.op.num_operands() != 1) ctx.fail("expects 1 operand, got " + std::to_string(ctx.op.num_operands()));
  DType t = ctx.operand(0).dtype();
  UnaryParams params;
  UnaryFn fn = rows_by_id()[ctx.op.op_id()]->pick(t, ctx.attrs(), params);
  if (!fn) ctx.fail("no kernel for dtype " + std::string(dtype_name(t)));
  return unary_instruction(ctx, fn, params);
}

}  // namespace

UnaryFn unary_kernel(const OpDef& op, DType t, const AttrMap& attrs, UnaryParams* params) {
  const UnaryRow* row = op.id < rows_by_id().size() ? rows_by_id()[op.id] : nullptr;
  if (row == nullptr) return nullptr;
  UnaryParams p;
  UnaryFn fn = row->pick(t, attrs, p);
  if (fn != nullptr && row->needs_params && params == nullptr)
    throw InternalError("unary_kernel: " + op.name + " needs a UnaryParams to hold the values its kernel reads");
  if (params != nullptr) *params = p;
  return fn;
}

void install_elementwise_unary_kernels(KernelTable& t) {
  for (const UnaryRow& r : kRows)
    if (r.op[0] != '\0') t.set(r.op, &make_unary);
}

std::array<double, 3> nan_to_num_values(DType t, const AttrMap& attrs) {
  std::array<double, 3> vals{};
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_fp_v<T>) {
      double hi;
      if constexpr (std::is_same_v<T, float16>)
        hi = 65504.0;
      else if constexpr (std::is_same_v<T, bfloat16>)
        hi = 0x1.fep127;
      else
        hi = static_cast<double>(std::numeric_limits<T>::max());
      vals = {float_attr_or(attrs, "nan", 0.0, "nan_to_num"), float_attr_or(attrs, "posinf", hi, "nan_to_num"),
              float_attr_or(attrs, "neginf", -hi, "nan_to_num")};
      for (double& v : vals) {
        if constexpr (std::is_same_v<T, double>) {
          (void)v;
        } else if constexpr (std::is_same_v<T, float>) {
          v = scalar::narrow_to_float(v);
        } else {
          v = static_cast<double>(static_cast<float>(T(scalar::narrow_to_float_odd(v))));
        }
      }
    }
  });
  return vals;
}

}  // namespace evoxc::interp
