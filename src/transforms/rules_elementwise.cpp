// Transform rules of the elementwise families (unary math, binaries, comparisons, select, clamp, conversions),
// the creation ops, and the deferrals of row_switch and postfix_eval.
#include <cmath>
#include <numbers>

#include "evoxc/core/small_vector.h"
#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

using ST = SymbolicTensor;

// ---- batching: every elementwise op broadcasts, so batched operands only need their rank
// aligned (unit axes after the batch axis); unbatched operands broadcast as they are.
std::vector<BatchArg> batch_elementwise(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  size_t rank = 0;
  for (const Value* v : op.operands()) rank = std::max(rank, v->type().rank());
  SmallVector<ST, 4> vals;
  for (const BatchArg& a : args) vals.push_back(ctx.align_rank(a, rank));
  std::vector<ST> outs = emit_like(op, vals);
  std::vector<BatchArg> r;
  r.reserve(outs.size());
  for (const ST& o : outs) r.push_back({o, true});
  return r;
}

// ---- jvp helpers

// The tangent broadcast to the result's shape (an operand of lower rank or unit extents).
ST to_shape(const ST& t, const TensorType& out) {
  if (!t.defined() || t.shape() == out.shape) return t;
  return broadcast_to(t, out.shape);
}

using Deriv = std::function<ST(const ST& x, const ST& y)>;  // dy/dx from the operand and the result

JvpRule unary_jvp(Deriv d) {
  return [d = std::move(d)](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    return JvpResult{y, {t[0] * d(p[0], y[0])}};
  };
}

constexpr double kLn2 = std::numbers::ln2;
constexpr double kLn10 = std::numbers::ln10;
constexpr double kTwoOverSqrtPi = 2.0 * std::numbers::inv_sqrtpi;
constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1/sqrt(2 pi)

void install_unary_jvps(JvpTable& j) {
  j.set("exp", unary_jvp([](const ST&, const ST& y) { return y; }));
  j.set("exp2", unary_jvp([](const ST&, const ST& y) { return y * kLn2; }));
  j.set("expm1", unary_jvp([](const ST&, const ST& y) { return y + 1.0; }));
  j.set("log", unary_jvp([](const ST& x, const ST&) { return reciprocal(x); }));
  j.set("log2", unary_jvp([](const ST& x, const ST&) { return reciprocal(x * kLn2); }));
  j.set("log10", unary_jvp([](const ST& x, const ST&) { return reciprocal(x * kLn10); }));
  j.set("log1p", unary_jvp([](const ST& x, const ST&) { return reciprocal(x + 1.0); }));
  j.set("sqrt", unary_jvp([](const ST&, const ST& y) { return 0.5 / y; }));
  j.set("rsqrt", unary_jvp([](const ST& x, const ST& y) { return -0.5 * y / x; }));
  j.set("cbrt", unary_jvp([](const ST& x, const ST& y) { return y / (x * 3.0); }));
  j.set("reciprocal", unary_jvp([](const ST&, const ST& y) { return -(y * y); }));
  j.set("sin", unary_jvp([](const ST& x, const ST&) { return cos(x); }));
  j.set("cos", unary_jvp([](const ST& x, const ST&) { return -sin(x); }));
  j.set("tan", unary_jvp([](const ST&, const ST& y) { return y * y + 1.0; }));
  j.set("asin", unary_jvp([](const ST& x, const ST&) { return rsqrt(1.0 - x * x); }));
  j.set("acos", unary_jvp([](const ST& x, const ST&) { return -rsqrt(1.0 - x * x); }));
  j.set("atan", unary_jvp([](const ST& x, const ST&) { return reciprocal(x * x + 1.0); }));
  j.set("sinh", unary_jvp([](const ST& x, const ST&) { return cosh(x); }));
  j.set("cosh", unary_jvp([](const ST& x, const ST&) { return sinh(x); }));
  j.set("tanh", unary_jvp([](const ST&, const ST& y) { return 1.0 - y * y; }));
  j.set("asinh", unary_jvp([](const ST& x, const ST&) { return rsqrt(x * x + 1.0); }));
  j.set("acosh", unary_jvp([](const ST& x, const ST&) { return rsqrt((x - 1.0) * (x + 1.0)); }));
  j.set("atanh", unary_jvp([](const ST& x, const ST&) { return reciprocal((1.0 - x) * (1.0 + x)); }));
  j.set("sigmoid", unary_jvp([](const ST&, const ST& y) { return y * (1.0 - y); }));
  j.set("erf", unary_jvp([](const ST& x, const ST&) { return exp(-(x * x)) * kTwoOverSqrtPi; }));
  j.set("erfc", unary_jvp([](const ST& x, const ST&) { return exp(-(x * x)) * -kTwoOverSqrtPi; }));
  j.set("erf_inv", unary_jvp([](const ST&, const ST& y) { return exp(y * y) * (1.0 / kTwoOverSqrtPi); }));
  j.set("lgamma", unary_jvp([](const ST& x, const ST&) { return digamma(x); }));
  j.defer("digamma", "its derivative is the trigamma function, which the catalogue has no op for yet");
  j.set("softplus", unary_jvp([](const ST& x, const ST&) { return sigmoid(x); }));
  for (const char* f : {"floor", "ceil", "round", "trunc", "sign"}) j.set(f, zero_jvp);
  j.set("gelu", [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    const ST& x = p[0];
    ST d;
    if (attr_flag(op, "approximate")) {
      // y = x/2 (1 + tanh(u)), u = c (x + 0.044715 x^3), c = sqrt(2/pi)
      constexpr double c = 0.7978845608028654;
      ST u = (x + x * x * x * 0.044715) * c;
      ST th = tanh(u);
      ST du = (x * x * (3.0 * 0.044715) + 1.0) * c;
      d = (th + 1.0) * 0.5 + x * 0.5 * (1.0 - th * th) * du;
    } else {
      // y = x Phi(x): dy/dx = Phi(x) + x phi(x)
      ST phi = exp(x * x * -0.5) * kInvSqrt2Pi;
      d = (erf(x * std::numbers::sqrt2 / 2.0) + 1.0) * 0.5 + x * phi;
    }
    return JvpResult{y, {t[0] * d}};
  });
  j.set("neg", linear_jvp);
  // abs: sign(x) * t, so the derivative at 0 is 0 (the subgradient JAX also picks).
  j.set("abs", unary_jvp([](const ST& x, const ST&) { return sign(x); }));
  j.set("square", unary_jvp([](const ST& x, const ST&) { return x * 2.0; }));
  // relu: t where x > 0, else 0 (0 at x == 0).
  j.set("relu", [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    return JvpResult{y, {select(p[0] > 0.0, t[0], zeros(t[0].type()))}};
  });
  // nan_to_num: identity on finite values; the replaced values are constants.
  j.set("nan_to_num", [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    return JvpResult{y, {select(isfinite(p[0]), t[0], zeros(t[0].type()))}};
  });
}

// Binary jvps. `y` is the result; ta/tb may be undefined (zero).
using BinaryJvp = std::function<ST(const ST& a, const ST& b, const ST& y, const ST& ta, const ST& tb)>;

JvpRule binary_jvp(BinaryJvp f) {
  return [f = std::move(f)](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    ST r = f(p[0], p[1], y[0], t[0], t[1]);
    return JvpResult{y, {to_shape(r, op.result(0)->type())}};
  };
}

// a*s + b where a may be undefined (zero), s a factor, b a partial sum (maybe undefined).
ST axpy(const ST& t, const ST& s, const ST& acc) {
  if (!t.defined()) return acc;
  return add_tangents(acc, t * s);
}

void install_binary_jvps(JvpTable& j) {
  j.set("add",
        binary_jvp([](const ST&, const ST&, const ST&, const ST& ta, const ST& tb) { return add_tangents(ta, tb); }));
  j.set("subtract", binary_jvp([](const ST&, const ST&, const ST&, const ST& ta, const ST& tb) {
          return tb.defined() ? (ta.defined() ? ta - tb : -tb) : ta;
        }));
  j.set("multiply", binary_jvp([](const ST& a, const ST& b, const ST&, const ST& ta, const ST& tb) {
          return axpy(tb, a, axpy(ta, b, ST()));
        }));
  j.set("divide", binary_jvp([](const ST&, const ST& b, const ST& y, const ST& ta, const ST& tb) {
          ST r = ta.defined() ? ta / b : ST();
          return axpy(tb, -y / b, r);
        }));
  j.set("floor_divide", zero_jvp);
  // remainder(a, b) = a - b floor(a/b); fmod(a, b) = a - b trunc(a/b): the quotient is
  // piecewise constant, so d = ta - tb * q.
  j.set("remainder", binary_jvp([](const ST& a, const ST& b, const ST&, const ST& ta, const ST& tb) {
          return axpy(tb, -floor(a / b), ta);
        }));
  j.set("fmod", binary_jvp([](const ST& a, const ST& b, const ST&, const ST& ta, const ST& tb) {
          return axpy(tb, -trunc(a / b), ta);
        }));
  // power: ta * b a^(b-1) + tb * log(a) y, with the tb term 0 where a == 0 (JAX's choice), so
  // 0^b stays differentiable in b at a = 0 with derivative 0.
  j.set("power", binary_jvp([](const ST& a, const ST& b, const ST& y, const ST& ta, const ST& tb) {
          ST r;
          if (ta.defined()) r = ta * (b * power(a, b - 1.0));
          if (tb.defined()) {
            ST safe_log = log(select(equal(a, 0.0), ones_like(a), a));
            r = axpy(tb, select(equal(a, 0.0), zeros_like(y), y * safe_log), r);
          }
          return r;
        }));
  // maximum/minimum: the tangent of the chosen operand; a tie splits it half and half (the
  // convention JAX uses, so the derivative of max(x, x) is 1).
  auto minmax = [](bool is_max) {
    return binary_jvp([is_max](const ST& a, const ST& b, const ST&, const ST& ta, const ST& tb) {
      ST pick_a = is_max ? greater(a, b) : less(a, b);
      ST tie = equal(a, b);
      ST wa = select(pick_a, ones_like(a), select(tie, fill(a.shape(), 0.5, a.dtype()), zeros_like(a)));
      ST r = ta.defined() ? ta * wa : ST();
      return axpy(tb, 1.0 - wa, r);
    });
  };
  j.set("maximum", minmax(true));
  j.set("minimum", minmax(false));
  j.set("atan2", binary_jvp([](const ST& a, const ST& b, const ST&, const ST& ta, const ST& tb) {
          ST den = a * a + b * b;
          return axpy(tb, -a / den, axpy(ta, b / den, ST()));
        }));
  j.set("hypot", binary_jvp([](const ST& a, const ST& b, const ST& y, const ST& ta, const ST& tb) {
          return axpy(tb, b / y, axpy(ta, a / y, ST()));
        }));
  // nextafter moves a by one ulp: the derivative in a is 1 and in b is 0.
  j.set("nextafter", binary_jvp([](const ST&, const ST&, const ST&, const ST& ta, const ST&) { return ta; }));
  // copysign(a, b) = |a| sign(b): d/da = sign(a) * sign(b) (as signs of the bits), d/db = 0.
  j.set("copysign", binary_jvp([](const ST& a, const ST& b, const ST&, const ST& ta, const ST&) {
          if (!ta.defined()) return ST();
          ST s = copysign(ones_like(a), a) * copysign(ones_like(a), b);
          return ta * s;
        }));
  j.set("select", [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    const TensorType& out = op.result(0)->type();
    ST a = JvpContext::instantiate(t[1], op.operand(1)->type());
    ST b = JvpContext::instantiate(t[2], op.operand(2)->type());
    return JvpResult{y, {to_shape(select(p[0], a, b), out)}};
  });
  // clamp(x, lo, hi) = min(max(x, lo), hi): the tangent of the operand each step picks (x on
  // a tie with lo, the max on a tie with hi), so lo > hi behaves as the op does.
  j.set("clamp", [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    const TensorType& out = op.result(0)->type();
    ST tx = to_shape(JvpContext::instantiate(t[0], op.operand(0)->type()), out);
    ST tl = to_shape(JvpContext::instantiate(t[1], op.operand(1)->type()), out);
    ST th = to_shape(JvpContext::instantiate(t[2], op.operand(2)->type()), out);
    ST m = maximum(p[0], p[1]);
    ST tm = select(less(p[0], p[1]), tl, tx);
    return JvpResult{y, {to_shape(select(greater(m, p[2]), th, tm), out)}};
  });
  // convert: float -> float converts the tangent; to an integer or bool the driver drops it.
  j.set("convert", [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
    std::vector<ST> y = ctx.primal(op, p);
    if (!has_tangent(y[0].dtype()) || !t[0].defined()) return JvpResult{y, {ST()}};
    return JvpResult{y, emit_like(op, std::vector<ST>{t[0]})};
  });
  // bitcast_convert reinterprets bits: no derivative exists; a float result gets a zero tangent.
  j.set("bitcast_convert", zero_jvp);
}

// ---- transposes of the linear elementwise ops. `cts[0]` has the result's shape; every
// cotangent is summed back to its operand's shape (the transpose of broadcasting).
std::vector<ST> ct_list(const Operation& op) { return std::vector<ST>(op.num_operands()); }

void install_transposes(TransposeTable& tt) {
  tt.set("add", [](TransposeContext&, const Operation& op, std::span<const ST>, const std::vector<bool>& lin,
                   std::span<const ST> cts) {
    std::vector<ST> r = ct_list(op);
    for (size_t i = 0; i < 2; ++i)
      if (lin[i]) r[i] = unbroadcast(cts[0], op.operand(i)->type());
    return r;
  });
  tt.set("subtract", [](TransposeContext&, const Operation& op, std::span<const ST>, const std::vector<bool>& lin,
                        std::span<const ST> cts) {
    std::vector<ST> r = ct_list(op);
    if (lin[0]) r[0] = unbroadcast(cts[0], op.operand(0)->type());
    if (lin[1]) r[1] = unbroadcast(-cts[0], op.operand(1)->type());
    return r;
  });
  tt.set("neg", [](TransposeContext&, const Operation& op, std::span<const ST>, const std::vector<bool>&,
                   std::span<const ST> cts) {
    std::vector<ST> r = ct_list(op);
    r[0] = -cts[0];
    return r;
  });
  tt.set("multiply", [](TransposeContext&, const Operation& op, std::span<const ST> vals, const std::vector<bool>& lin,
                        std::span<const ST> cts) {
    std::vector<ST> r = ct_list(op);
    size_t i = lin[0] ? 0 : 1;
    r[i] = unbroadcast(cts[0] * vals[1 - i], op.operand(i)->type());
    return r;
  });
  tt.set("divide", [](TransposeContext&, const Operation& op, std::span<const ST> vals, const std::vector<bool>&,
                      std::span<const ST> cts) {
    std::vector<ST> r = ct_list(op);
    r[0] = unbroadcast(cts[0] / vals[1], op.operand(0)->type());
    return r;
  });
  tt.set("select", [](TransposeContext&, const Operation& op, std::span<const ST> vals, const std::vector<bool>& lin,
                      std::span<const ST> cts) {
    std::vector<ST> r = ct_list(op);
    ST z = zeros(cts[0].type());
    if (lin[1]) r[1] = unbroadcast(select(vals[0], cts[0], z), op.operand(1)->type());
    if (lin[2]) r[2] = unbroadcast(select(vals[0], z, cts[0]), op.operand(2)->type());
    return r;
  });
  tt.set("convert", [](TransposeContext&, const Operation& op, std::span<const ST>, const std::vector<bool>&,
                       std::span<const ST> cts) {
    std::vector<ST> r = ct_list(op);
    r[0] = convert(cts[0], op.operand(0)->dtype());
    return r;
  });
}

}  // namespace

void install_elementwise_rules(RuleTables& t) {
  for (const OpDef* d : all_ops())
    if (d->elementwise) t.batch.set(*d, batch_elementwise);
  install_unary_jvps(t.jvp);
  install_binary_jvps(t.jvp);
  // Integer and bool results carry no tangent: the driver never asks these for one.
  for (const char* op : {"isnan",        "isinf",       "isfinite",   "logical_not",         "bitwise_not",
                         "popcount",     "logical_and", "logical_or", "logical_xor",         "bitwise_and",
                         "bitwise_or",   "bitwise_xor", "shift_left", "shift_right_logical", "shift_right_arithmetic",
                         "equal",        "not_equal",   "less",       "less_equal",          "greater",
                         "greater_equal"})
    t.jvp.set(op, zero_jvp);
  install_transposes(t.transpose);
  // row_switch (category structure, not elementwise: a row's variant depends on its index) is
  // built by batch_functions from programs that were transformed already.
  const char* row_switch_why = "emitted by batch_functions; transform the programs before merging them";
  t.batch.defer("row_switch", row_switch_why);
  t.jvp.defer("row_switch", row_switch_why);
  t.transpose.defer("row_switch", row_switch_why);
  // postfix_eval interprets programs held as data; their derivatives and batching are the graphs'.
  const char* postfix_why =
      "its programs are data; turn them into graphs (gp::to_graphs, evoxc.gp.Population.to_graphs) to transform them";
  t.batch.defer("postfix_eval", postfix_why);
  t.jvp.defer("postfix_eval", postfix_why);
  t.transpose.defer("postfix_eval", postfix_why);
  // Creation ops have no tensor operands: they are never batched and have no tangent.
  for (const OpDef* d : all_ops())
    if (d->category == OpCategory::Creation) {
      t.batch.set(*d, [](BatchContext&, const Operation& op, std::span<const BatchArg>) -> std::vector<BatchArg> {
        throw InternalError("vmap: evoxc." + op.name() + " has no operands and cannot be batched");
      });
      t.jvp.set(*d, zero_jvp);
    }
}

}  // namespace evoxc::transforms
