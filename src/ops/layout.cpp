// OpDefs for layout ops: pad, tril, triu, diagonal, flip, roll, tile, repeat, one_hot, arange, linspace.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc::ops_detail {
namespace {

std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
std::string paren(const Shape& s) { return "(" + s.to_string() + ")"; }

// Attribute magnitudes are bounded so constant extent arithmetic cannot overflow int64.
constexpr int64_t kMaxAttr = int64_t{1} << 40;
// numpy would try to allocate whatever arange/linspace asks; a graph refuses absurd static lengths up front.
constexpr int64_t kMaxLength = int64_t{1} << 40;

void check_bound(const std::string& op, const std::string& attr, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi)
    throw ShapeError(op_label(op) + ": '" + attr + "' is " + std::to_string(v) + "; it must lie in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

OpDef layout_op(const char* name, int min_operands, int max_operands, DTypeClass cls, std::vector<AttrSpec> attrs,
                InferFn infer, const char* doc, OpCategory cat = OpCategory::Structure) {
  OpDef d;
  d.name = name;
  d.category = cat;
  d.min_operands = min_operands;
  d.max_operands = max_operands;
  d.operand_dtypes = cls;
  d.attrs = std::move(attrs);
  d.infer = std::move(infer);
  d.doc = doc;
  return d;
}

bool is_pad_mode(const std::string& m) { return m == "constant" || m == "edge" || m == "reflect" || m == "symmetric"; }

std::vector<TensorType> infer_pad(std::span<const TensorType> ops, const AttrMap& attrs) {
  const std::string op = op_label("pad");
  const Shape& in = ops[0].shape;
  const std::string& mode = attr_string(attrs, "mode", "pad");
  if (!is_pad_mode(mode))
    throw ShapeError(op + ": mode \"" + mode + "\" is not one of constant, edge, reflect, symmetric");
  bool constant = mode == "constant";
  if (constant != (ops.size() == 2))
    throw ShapeError(op + ": mode \"" + mode + "\" takes " +
                     (constant ? "2 operands (x, padding value)" : "1 operand") + ", got " +
                     std::to_string(ops.size()));
  if (constant) {
    require_same_dtype("pad", ops);
    if (ops[1].rank() != 0)
      throw ShapeError(op + ": the padding value must be a scalar (rank 0), got " + paren(ops[1].shape));
  }
  const auto& low = attr_ints(attrs, "low", "pad");
  const auto& high = attr_ints(attrs, "high", "pad");
  std::vector<int64_t> interior(in.rank(), 0);
  if (attrs.count("interior")) interior = attr_ints(attrs, "interior", "pad");
  if (low.size() != in.rank() || high.size() != in.rank() || interior.size() != in.rank())
    throw ShapeError(op + ": low, high and interior need one entry per axis of " + paren(in) + ", got " +
                     ints_text(low) + ", " + ints_text(high) + " and " + ints_text(interior));
  std::vector<DimExpr> out;
  for (size_t i = 0; i < in.rank(); ++i) {
    check_bound("pad", "low", low[i], -kMaxAttr, kMaxAttr);
    check_bound("pad", "high", high[i], -kMaxAttr, kMaxAttr);
    check_bound("pad", "interior", interior[i], 0, kMaxAttr);
    if (interior[i] != 0 && !constant)
      throw ShapeError(op + ": interior padding needs mode \"constant\", got \"" + mode + "\"");
    DimExpr n = in[i];
    DimExpr e = n;
    if (interior[i] > 0) {
      DimExpr gaps = n.is_const() ? DimExpr(n.value() > 0 ? n.value() - 1 : 0) : max(n - DimExpr(1), DimExpr(0));
      e = e + gaps * DimExpr(interior[i]);
    }
    e = e + DimExpr(low[i]) + DimExpr(high[i]);
    std::string where = " on axis " + std::to_string(i) + " of " + paren(in);
    if (e.is_const() && e.value() < 0)
      throw ShapeError(op + ": the result extent " + e.to_string() + where +
                       " is negative; a negative pad crops at most the whole axis");
    if (!constant && n.is_const() && n.value() == 0 && !(e.is_const() && e.value() == 0))
      throw ShapeError(op + ": cannot extend the empty axis" + where + " with mode \"" + mode +
                       "\" (numpy raises too); use mode \"constant\"");
    out.push_back(e);
  }
  return {TensorType(ops[0].dtype, Shape(std::move(out)))};
}

std::vector<TensorType> infer_tri(const char* name, std::span<const TensorType> ops, const AttrMap& attrs) {
  check_bound(name, "k", attr_int(attrs, "k", name), -kMaxAttr, kMaxAttr);
  if (ops[0].rank() < 2)
    throw ShapeError(op_label(name) + ": the operand " + paren(ops[0].shape) +
                     " needs rank >= 2 (the last two axes are the matrix)");
  return {ops[0]};
}

std::vector<TensorType> infer_diagonal(std::span<const TensorType> ops, const AttrMap& attrs) {
  const std::string op = op_label("diagonal");
  const Shape& in = ops[0].shape;
  int64_t offset = attr_int(attrs, "offset", "diagonal");
  int64_t a1 = attr_int(attrs, "axis1", "diagonal"), a2 = attr_int(attrs, "axis2", "diagonal");
  check_bound("diagonal", "offset", offset, -kMaxAttr, kMaxAttr);
  if (in.rank() < 2) throw ShapeError(op + ": the operand " + paren(in) + " needs rank >= 2");
  int64_t r = static_cast<int64_t>(in.rank());
  if (a1 < 0 || a1 >= r || a2 < 0 || a2 >= r || a1 == a2)
    throw ShapeError(op + ": axis1 " + std::to_string(a1) + " and axis2 " + std::to_string(a2) +
                     " must be distinct axes in [0, " + std::to_string(r) + ") of " + paren(in));
  std::vector<DimExpr> out;
  for (int64_t i = 0; i < r; ++i)
    if (i != a1 && i != a2) out.push_back(in[static_cast<size_t>(i)]);
  const DimExpr& n1 = in[static_cast<size_t>(a1)];
  const DimExpr& n2 = in[static_cast<size_t>(a2)];
  DimExpr len;
  if (n1.is_const() && n2.is_const()) {
    int64_t l = std::min(n1.value() + std::min<int64_t>(offset, 0), n2.value() - std::max<int64_t>(offset, 0));
    len = DimExpr(std::max<int64_t>(l, 0));
  } else if (offset == 0) {
    len = min(n1, n2);
  } else {
    len = max(min(n1 - DimExpr(std::max<int64_t>(-offset, 0)), n2 - DimExpr(std::max<int64_t>(offset, 0))), DimExpr(0));
  }
  out.push_back(len);
  return {TensorType(ops[0].dtype, Shape(std::move(out)))};
}

std::vector<TensorType> infer_flip(std::span<const TensorType> ops, const AttrMap& attrs) {
  check_axes("flip", "axes", attr_ints(attrs, "axes", "flip"), ops[0].rank());
  return {ops[0]};
}

std::vector<TensorType> infer_roll(std::span<const TensorType> ops, const AttrMap& attrs) {
  const auto& shifts = attr_ints(attrs, "shifts", "roll");
  const auto& axes = attr_ints(attrs, "axes", "roll");
  check_axes("roll", "axes", axes, ops[0].rank());
  if (shifts.size() != axes.size())
    throw ShapeError(op_label("roll") + ": shifts " + ints_text(shifts) + " and axes " + ints_text(axes) +
                     " need the same length");
  return {ops[0]};
}

std::vector<TensorType> infer_tile(std::span<const TensorType> ops, const AttrMap& attrs) {
  const auto& reps = attr_ints(attrs, "reps", "tile");
  const Shape& in = ops[0].shape;
  if (reps.size() != in.rank())
    throw ShapeError(op_label("tile") + ": reps " + ints_text(reps) + " needs one entry per axis of " + paren(in) +
                     "; the tracer pads reps or the operand with leading ones");
  std::vector<DimExpr> out;
  for (size_t i = 0; i < reps.size(); ++i) {
    check_bound("tile", "reps", reps[i], 0, kMaxAttr);
    out.push_back(DimExpr(reps[i]) * in[i]);
  }
  return {TensorType(ops[0].dtype, Shape(std::move(out)))};
}

std::vector<TensorType> infer_repeat(std::span<const TensorType> ops, const AttrMap& attrs) {
  const std::string op = op_label("repeat");
  const auto& reps = attr_ints(attrs, "repeats", "repeat");
  int64_t axis = attr_int(attrs, "axis", "repeat");
  const Shape& in = ops[0].shape;
  check_axes("repeat", "axis", {axis}, in.rank());
  for (int64_t r : reps) check_bound("repeat", "repeats", r, 0, kMaxAttr);
  Shape out = in;
  const DimExpr& n = in[static_cast<size_t>(axis)];
  if (reps.size() == 1) {
    out[static_cast<size_t>(axis)] = DimExpr(reps[0]) * n;
  } else {
    if (!n.is_const() || n.value() != static_cast<int64_t>(reps.size()))
      throw ShapeError(op + ": " + std::to_string(reps.size()) + " repeats for axis " + std::to_string(axis) + " of " +
                       paren(in) + " with extent " + n.to_string() +
                       "; a list of repeats needs one entry per element of a static axis");
    int64_t total = 0;
    for (int64_t r : reps)
      if (__builtin_add_overflow(total, r, &total))
        throw ShapeError(op + ": the repeated extent overflows int64; use smaller repeats");
    out[static_cast<size_t>(axis)] = DimExpr(total);
  }
  return {TensorType(ops[0].dtype, std::move(out))};
}

std::vector<TensorType> infer_one_hot(std::span<const TensorType> ops, const AttrMap& attrs) {
  int64_t k = attr_int(attrs, "num_classes", "one_hot");
  check_bound("one_hot", "num_classes", k, 0, kMaxAttr);
  Shape out = ops[0].shape;
  out.dims().emplace_back(k);
  return {TensorType(attr_dtype(attrs, "dtype", "one_hot"), std::move(out))};
}

double num_attr(const AttrMap& attrs, const std::string& name, const std::string& op) {
  auto it = attrs.find(name);
  if (it != attrs.end() && std::holds_alternative<int64_t>(it->second))
    return static_cast<double>(std::get<int64_t>(it->second));
  return attr_float(attrs, name, op);
}

void require_numeric_dtype(const std::string& op, DType t) {
  if (!dtype_in_class(t, DTypeClass::Numeric))
    throw TypeError(op_label(op) + ": dtype must be numeric, got " + std::string(dtype_name(t)) +
                    "; build a numeric range and compare or convert it");
}

std::vector<TensorType> infer_arange(std::span<const TensorType>, const AttrMap& attrs) {
  const std::string op = op_label("arange");
  DType t = attr_dtype(attrs, "dtype", "arange");
  require_numeric_dtype("arange", t);
  int64_t len = 0;
  auto is_int = [&](const char* n) { return std::holds_alternative<int64_t>(attrs.at(n)); };
  if (is_int("start") && is_int("stop") && is_int("step")) {
    // numpy's length rule, ceil((stop - start) / step), exactly in integers.
    int64_t a = attr_int(attrs, "start", "arange"), b = attr_int(attrs, "stop", "arange");
    int64_t s = attr_int(attrs, "step", "arange");
    if (s == 0) throw ShapeError(op + ": step must not be zero");
    int64_t d = 0;
    if (__builtin_sub_overflow(b, a, &d)) throw ShapeError(op + ": stop - start overflows int64");
    int64_t q = (s == -1) ? (d == INT64_MIN ? kMaxLength + 1 : -d) : d / s;
    if (q * s != d && ((d > 0) == (s > 0))) ++q;
    if (q > kMaxLength) throw ShapeError(op + ": the range has more than 2^40 elements");
    len = q > 0 ? static_cast<int64_t>(q) : 0;
  } else {
    double a = num_attr(attrs, "start", "arange"), b = num_attr(attrs, "stop", "arange");
    double s = num_attr(attrs, "step", "arange");
    if (s == 0) throw ShapeError(op + ": step must not be zero");
    double q = std::ceil((b - a) / s);
    if (std::isnan(q) || q > static_cast<double>(kMaxLength))
      throw ShapeError(op + ": start, stop and step must be finite and give at most 2^40 elements");
    len = q > 0 ? static_cast<int64_t>(q) : 0;
  }
  return {TensorType(t, Shape{len})};
}

std::vector<TensorType> infer_linspace(std::span<const TensorType>, const AttrMap& attrs) {
  DType t = attr_dtype(attrs, "dtype", "linspace");
  require_numeric_dtype("linspace", t);
  int64_t num = attr_int(attrs, "num", "linspace");
  check_bound("linspace", "num", num, 0, kMaxLength);
  (void)attr_bool(attrs, "endpoint", "linspace");
  return {TensorType(t, Shape{num})};
}

}  // namespace

// Traits: pad, tril, triu, diagonal, flip, roll, tile and repeat only move, copy, drop or zero
// elements, so each is linear in its operand; pad is jointly linear in x and the padding value
// (JAX's pad transpose gives both a cotangent), which holds in every mode since the other modes
// take x alone. one_hot reads ints; arange and linspace take no operands. Data attributes:
// linspace's start and stop (they enter only as values); arange's start, stop and step set the
// length, and the other attributes are extents, axes, counts or a mode, all structure.
void register_layout_ops(OpTable& t) {
  const AttrKind I = AttrKind::Int, Is = AttrKind::Ints;
  using Ints = std::vector<int64_t>;
  const Shape x{4, 3}, sq{3, 3};
  OpDef& pad =
      t.add(layout_op("pad", 1, 2, DTypeClass::Any,
                      {{"low", Is}, {"high", Is}, {"interior", Is, false}, {"mode", AttrKind::String}}, infer_pad,
                      "numpy.pad: result[j] = x[map(j - low)] per axis with extent low + n + high (+ interior "
                      "gaps); negative low/high crop; mode constant (2nd operand: rank-0 value), edge, reflect, "
                      "symmetric; any dtype"));
  set_linear(pad, {0, 1});
  pad.sample = sample_shapes({x, {}}, {{"low", Ints{1, 0}}, {"high", Ints{0, 1}}, {"mode", std::string("constant")}});
  OpDef& tril = t.add(layout_op(
      "tril", 1, 1, DTypeClass::Any, {{"k", I}},
      [](std::span<const TensorType> o, const AttrMap& a) { return infer_tri("tril", o, a); },
      "zeroes elements above diagonal k of the last two axes (kept where j - i <= k); any dtype, rank >= 2"));
  set_linear(tril, {0});
  tril.sample = sample_shapes({sq}, {{"k", int64_t{0}}});
  OpDef& triu = t.add(layout_op(
      "triu", 1, 1, DTypeClass::Any, {{"k", I}},
      [](std::span<const TensorType> o, const AttrMap& a) { return infer_tri("triu", o, a); },
      "zeroes elements below diagonal k of the last two axes (kept where j - i >= k); any dtype, rank >= 2"));
  set_linear(triu, {0});
  triu.sample = sample_shapes({sq}, {{"k", int64_t{0}}});
  OpDef& diag =
      t.add(layout_op("diagonal", 1, 1, DTypeClass::Any, {{"offset", I}, {"axis1", I}, {"axis2", I}}, infer_diagonal,
                      "numpy.diagonal: removes axis1 and axis2 (non-negative, distinct) and appends the "
                      "diagonal x[.., i, .., i + offset, ..]; any dtype"));
  set_linear(diag, {0});
  diag.sample = sample_shapes({sq}, {{"offset", int64_t{0}}, {"axis1", int64_t{0}}, {"axis2", int64_t{1}}});
  OpDef& flip = t.add(layout_op("flip", 1, 1, DTypeClass::Any, {{"axes", Is}}, infer_flip,
                                "reverses the order of elements along each of `axes` (sorted, unique); any dtype"));
  set_linear(flip, {0});
  flip.sample = sample_shapes({x}, {{"axes", Ints{0}}});
  OpDef& roll =
      t.add(layout_op("roll", 1, 1, DTypeClass::Any, {{"shifts", Is}, {"axes", Is}}, infer_roll,
                      "numpy.roll: result[(i + shift) mod n] = x[i] along each of `axes` (sorted, unique); any dtype"));
  set_linear(roll, {0});
  roll.sample = sample_shapes({x}, {{"shifts", Ints{1}}, {"axes", Ints{0}}});
  OpDef& tile = t.add(layout_op("tile", 1, 1, DTypeClass::Any, {{"reps", Is}}, infer_tile,
                                "numpy.tile with one rep (>= 0) per axis: extents reps[i] * n[i]; any dtype"));
  set_linear(tile, {0});
  tile.sample = sample_shapes({x}, {{"reps", Ints{2, 1}}});
  OpDef& repeat = t.add(layout_op("repeat", 1, 1, DTypeClass::Any, {{"repeats", Is}, {"axis", I}}, infer_repeat,
                                  "numpy.repeat along `axis`: one count (>= 0) for every element, or one per element "
                                  "of a static axis; any dtype"));
  set_linear(repeat, {0});
  repeat.sample = sample_shapes({x}, {{"repeats", Ints{2}}, {"axis", int64_t{0}}});
  t.add(layout_op("one_hot", 1, 1, DTypeClass::Int, {{"num_classes", I}, {"dtype", AttrKind::DType}}, infer_one_hot,
                  "appends an axis of num_classes: 1 where the class equals the index, else 0 (out-of-range indices "
                  "give a zero row); int operand -> `dtype`"))
      .sample = sample_shapes({{3}}, {{"num_classes", int64_t{4}}, {"dtype", DType::F32}});
  const AttrKind F = AttrKind::Float;
  t.add(layout_op("arange", 0, 0, DTypeClass::Any,
                  {{"start", F, true, {I}}, {"stop", F, true, {I}}, {"step", F, true, {I}}, {"dtype", AttrKind::DType}},
                  infer_arange,
                  "numpy.arange: ceil((stop - start) / step) values start + i * step; no operands -> numeric `dtype`",
                  OpCategory::Creation))
      .sample =
      sample_operands(0, {{"start", int64_t{0}}, {"stop", int64_t{5}}, {"step", int64_t{1}}, {"dtype", DType::F32}});
  OpDef& lin = t.add(layout_op("linspace", 0, 0, DTypeClass::Any,
                               {{"start", F, true, {I}},
                                {"stop", F, true, {I}},
                                {"num", I},
                                {"endpoint", AttrKind::Bool},
                                {"dtype", AttrKind::DType}},
                               infer_linspace,
                               "numpy.linspace: num values start + i * step, step = (stop - start) / (num - endpoint), "
                               "the last exactly stop with endpoint; ints floor; no operands -> numeric `dtype`",
                               OpCategory::Creation));
  lin.data_attrs = {"start", "stop"};
  lin.sample = sample_operands(
      0, {{"start", 0.0}, {"stop", 1.0}, {"num", int64_t{5}}, {"endpoint", true}, {"dtype", DType::F32}});
}

}  // namespace evoxc::ops_detail
