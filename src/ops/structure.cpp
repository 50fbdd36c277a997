// Structure op family: reshape, transpose, broadcast_in_dim, expand_dims, squeeze, slice, concatenate.
#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc::ops_detail {
namespace {

std::string paren(const Shape& s) { return "(" + s.to_string() + ")"; }
std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Extents are int64; a hostile attribute or shape must not overflow silently (signed overflow is undefined).
int64_t checked(bool overflow, int64_t v) {
  if (overflow) throw ShapeError(op_label("concatenate") + ": the summed extent overflows int64; use smaller extents");
  return v;
}
int64_t mul_i64(int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflow = __builtin_mul_overflow(a, b, &r);
  return checked(overflow, r);
}
int64_t add_i64(int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflow = __builtin_add_overflow(a, b, &r);
  return checked(overflow, r);
}

// A sum of terms c*x plus a constant, so that B + (B+1) becomes 2*B+1 rather than B+B+1: DimExpr only
// folds constants, and extents that add up along concatenate should print and compare in one form.
struct LinearSum {
  std::vector<std::pair<DimExpr, int64_t>> terms;  // (term, coefficient), in order of first appearance
  int64_t constant = 0;

  void add(const DimExpr& e, int64_t coef) {
    using K = DimExpr::Kind;
    switch (e.kind()) {
      case K::Const: constant = add_i64(constant, mul_i64(coef, e.value())); return;
      case K::Add:
        add(e.lhs(), coef);
        add(e.rhs(), coef);
        return;
      case K::Sub:
        add(e.lhs(), coef);
        add(e.rhs(), mul_i64(coef, -1));
        return;
      case K::Mul:
        if (e.lhs().is_const()) {
          add(e.rhs(), mul_i64(coef, e.lhs().value()));
          return;
        }
        break;
      default: break;
    }
    for (auto& [term, c] : terms)
      if (term == e) {
        c = add_i64(c, coef);
        return;
      }
    terms.emplace_back(e, coef);
  }

  DimExpr build() const {
    DimExpr r(0);
    for (const auto& [term, c] : terms) {
      if (c > 0) r = r + DimExpr(c) * term;
      if (c < 0) r = r - DimExpr(mul_i64(c, -1)) * term;
    }
    return r + DimExpr(constant);
  }
};

// Every op of this family only moves, copies or drops elements, so each is linear in its operand
// (JAX: deflinear for reshape, transpose, broadcast_in_dim, squeeze, slice, concatenate); its
// attributes are all structure.
OpDef structure_op(const char* name, int min_operands, int max_operands, std::vector<AttrSpec> attrs, InferFn infer,
                   const char* doc, SampleFn sample) {
  OpDef d;
  d.name = name;
  d.category = OpCategory::Structure;
  d.min_operands = min_operands;
  d.max_operands = max_operands;
  d.operand_dtypes = DTypeClass::Any;
  d.attrs = std::move(attrs);
  d.infer = std::move(infer);
  d.doc = doc;
  set_linear(d, {0});
  d.sample = std::move(sample);
  return d;
}

std::vector<TensorType> infer_reshape(std::span<const TensorType> ops, const AttrMap& attrs) {
  const Shape& to = attr_shape(attrs, "shape", "reshape");
  check_shape_attr("reshape", "shape", to);
  DimExpr n_in = ops[0].shape.num_elements();
  DimExpr n_out = to.num_elements();
  // Only a provable difference is an error here; symbolic counts are checked by the interpreter at run time.
  DimExpr diff = n_in - n_out;
  if (diff.is_const() && diff.value() != 0)
    throw ShapeError(op_label("reshape") + ": cannot reshape " + paren(ops[0].shape) + " with " + n_in.to_string() +
                     " elements to " + paren(to) + " with " + n_out.to_string() +
                     " elements; the element counts must match");
  return {TensorType(ops[0].dtype, to)};
}

std::vector<TensorType> infer_transpose(std::span<const TensorType> ops, const AttrMap& attrs) {
  const auto& perm = attr_ints(attrs, "permutation", "transpose");
  const Shape& in = ops[0].shape;
  std::vector<bool> seen(in.rank(), false);
  bool ok = perm.size() == in.rank();
  for (int64_t p : perm) {
    if (!ok) break;
    ok = p >= 0 && p < static_cast<int64_t>(in.rank()) && !seen[static_cast<size_t>(p)];
    if (ok) seen[static_cast<size_t>(p)] = true;
  }
  if (!ok)
    throw ShapeError(op_label("transpose") + ": permutation " + ints_text(perm) + " is not a permutation of the " +
                     std::to_string(in.rank()) + " axes of " + paren(in));
  std::vector<DimExpr> out;
  for (int64_t p : perm) out.push_back(in[static_cast<size_t>(p)]);
  return {TensorType(ops[0].dtype, Shape(std::move(out)))};
}

std::vector<TensorType> infer_broadcast_in_dim(std::span<const TensorType> ops, const AttrMap& attrs) {
  const Shape& to = attr_shape(attrs, "shape", "broadcast_in_dim");
  check_shape_attr("broadcast_in_dim", "shape", to);
  const auto& bd = attr_ints(attrs, "broadcast_dimensions", "broadcast_in_dim");
  const Shape& in = ops[0].shape;
  const std::string op = op_label("broadcast_in_dim");
  if (bd.size() != in.rank())
    throw ShapeError(op + ": broadcast_dimensions " + ints_text(bd) + " has " + std::to_string(bd.size()) +
                     " entries but the operand " + paren(in) + " has rank " + std::to_string(in.rank()));
  for (size_t i = 0; i < bd.size(); ++i) {
    if (bd[i] < 0 || bd[i] >= static_cast<int64_t>(to.rank()))
      throw ShapeError(op + ": broadcast_dimensions entry " + std::to_string(bd[i]) + " is out of range for result " +
                       paren(to) + " of rank " + std::to_string(to.rank()));
    if (i > 0 && bd[i] <= bd[i - 1])
      throw ShapeError(op + ": broadcast_dimensions " + ints_text(bd) + " must be strictly increasing");
    const DimExpr& d = in[i];
    const DimExpr& r = to[static_cast<size_t>(bd[i])];
    if (!(d == r || (d.is_const() && d.value() == 1)))
      throw ShapeError(op + ": operand dim " + std::to_string(i) + " has extent " + d.to_string() +
                       ", which is neither 1 nor the result extent " + r.to_string() + " of dim " +
                       std::to_string(bd[i]) + " in " + paren(to));
  }
  return {TensorType(ops[0].dtype, to)};
}

std::vector<TensorType> infer_expand_dims(std::span<const TensorType> ops, const AttrMap& attrs) {
  const auto& axes = attr_ints(attrs, "axes", "expand_dims");
  const Shape& in = ops[0].shape;
  size_t rank = in.rank() + axes.size();
  check_axes("expand_dims", "axes", axes, rank);
  std::vector<DimExpr> out;
  size_t next = 0, src = 0;
  for (size_t i = 0; i < rank; ++i) {
    if (next < axes.size() && axes[next] == static_cast<int64_t>(i)) {
      out.emplace_back(1);
      ++next;
    } else {
      out.push_back(in[src++]);
    }
  }
  return {TensorType(ops[0].dtype, Shape(std::move(out)))};
}

std::vector<TensorType> infer_squeeze(std::span<const TensorType> ops, const AttrMap& attrs) {
  const auto& axes = attr_ints(attrs, "axes", "squeeze");
  const Shape& in = ops[0].shape;
  check_axes("squeeze", "axes", axes, in.rank());
  std::vector<DimExpr> out;
  size_t next = 0;
  for (size_t i = 0; i < in.rank(); ++i) {
    if (next < axes.size() && axes[next] == static_cast<int64_t>(i)) {
      ++next;
      if (!(in[i].is_const() && in[i].value() == 1))
        throw ShapeError(op_label("squeeze") + ": axis " + std::to_string(i) + " of " + paren(in) + " has extent " +
                         in[i].to_string() + ", not the constant 1; only unit axes can be squeezed");
      continue;
    }
    out.push_back(in[i]);
  }
  return {TensorType(ops[0].dtype, Shape(std::move(out)))};
}

std::vector<TensorType> infer_slice(std::span<const TensorType> ops, const AttrMap& attrs) {
  const auto& start = attr_ints(attrs, "start_indices", "slice");
  const Shape& limit = attr_shape(attrs, "limit_indices", "slice");
  const auto& strides = attr_ints(attrs, "strides", "slice");
  const Shape& in = ops[0].shape;
  const std::string op = op_label("slice");
  if (start.size() != in.rank() || limit.rank() != in.rank() || strides.size() != in.rank())
    throw ShapeError(op + ": start_indices, limit_indices and strides need one entry per axis of " + paren(in) +
                     " (rank " + std::to_string(in.rank()) + "), got " + std::to_string(start.size()) + ", " +
                     std::to_string(limit.rank()) + " and " + std::to_string(strides.size()));
  std::vector<DimExpr> out;
  for (size_t i = 0; i < in.rank(); ++i) {
    const std::string where = " on axis " + std::to_string(i) + " of " + paren(in);
    if (strides[i] < 1) throw ShapeError(op + ": stride " + std::to_string(strides[i]) + where + " must be >= 1");
    if (start[i] < 0) throw ShapeError(op + ": start " + std::to_string(start[i]) + where + " must be >= 0");
    const DimExpr& lim = limit[i];
    if (lim.is_const() && lim.value() < start[i])
      throw ShapeError(op + ": limit " + lim.to_string() + where + " is below the start " + std::to_string(start[i]));
    if (in[i].is_const() && start[i] > in[i].value())
      throw ShapeError(op + ": start " + std::to_string(start[i]) + where + " exceeds the extent " + in[i].to_string());
    // A limit equal to the extent is in range even when both are symbolic; other symbolic bounds are checked at
    // run time.
    DimExpr over = lim - in[i];
    if (over.is_const() && over.value() > 0)
      throw ShapeError(op + ": limit " + lim.to_string() + where + " exceeds the extent " + in[i].to_string());
    out.push_back(floordiv(lim - DimExpr(start[i]) + DimExpr(strides[i] - 1), DimExpr(strides[i])));
  }
  return {TensorType(ops[0].dtype, Shape(std::move(out)))};
}

std::vector<TensorType> infer_concatenate(std::span<const TensorType> ops, const AttrMap& attrs) {
  require_same_dtype("concatenate", ops);
  int64_t axis = attr_int(attrs, "axis", "concatenate");
  const Shape& first = ops[0].shape;
  check_axes("concatenate", "axis", {axis}, first.rank());
  auto ax = static_cast<size_t>(axis);
  LinearSum total;
  for (size_t k = 0; k < ops.size(); ++k) {
    const Shape& s = ops[k].shape;
    if (s.rank() != first.rank())
      throw ShapeError(op_label("concatenate") + ": operand " + std::to_string(k) + " " + paren(s) + " has rank " +
                       std::to_string(s.rank()) + " but operand 0 " + paren(first) + " has rank " +
                       std::to_string(first.rank()));
    for (size_t i = 0; i < s.rank(); ++i)
      if (i != ax && s[i] != first[i])
        throw ShapeError(op_label("concatenate") + ": operand " + std::to_string(k) + " " + paren(s) +
                         " differs from operand 0 " + paren(first) + " on axis " + std::to_string(i) + " (" +
                         s[i].to_string() + " vs " + first[i].to_string() + "); only the concatenation axis " +
                         std::to_string(axis) + " may differ");
    total.add(s[ax], 1);
  }
  Shape out = first;
  if (ops.size() > 1) out[ax] = total.build();
  return {TensorType(ops[0].dtype, std::move(out))};
}

}  // namespace

void register_structure_ops(OpTable& t) {
  using Ints = std::vector<int64_t>;
  // Samples start from operands of sample_shape(), (2, 1).
  t.add(structure_op("reshape", 1, 1, {{"shape", AttrKind::Shape}}, infer_reshape,
                     "the same elements in row-major order with extents `shape` (no -1); any dtype",
                     sample_operands(1, {{"shape", Shape{1, 2}}})));
  t.add(structure_op("transpose", 1, 1, {{"permutation", AttrKind::Ints}}, infer_transpose,
                     "permutes axes: result dim i is operand dim permutation[i]; any dtype",
                     sample_operands(1, {{"permutation", Ints{1, 0}}})));
  t.add(structure_op("broadcast_in_dim", 1, 1, {{"shape", AttrKind::Shape}, {"broadcast_dimensions", AttrKind::Ints}},
                     infer_broadcast_in_dim,
                     "broadcasts to `shape`, operand dim i going to result dim broadcast_dimensions[i] (strictly "
                     "increasing; extent 1 or equal); any dtype",
                     sample_operands(1, {{"shape", Shape{3, 2, 4}}, {"broadcast_dimensions", Ints{1, 2}}})));
  t.add(structure_op("expand_dims", 1, 1, {{"axes", AttrKind::Ints}}, infer_expand_dims,
                     "inserts unit dims at `axes` (sorted, unique, in the result's rank); any dtype",
                     sample_operands(1, {{"axes", Ints{0}}})));
  t.add(structure_op("squeeze", 1, 1, {{"axes", AttrKind::Ints}}, infer_squeeze,
                     "removes the unit dims at `axes` (sorted, unique, each extent the constant 1); any dtype",
                     sample_operands(1, {{"axes", Ints{1}}})));
  t.add(structure_op(
      "slice", 1, 1,
      {{"start_indices", AttrKind::Ints}, {"limit_indices", AttrKind::Shape}, {"strides", AttrKind::Ints}}, infer_slice,
      "elements start, start+stride, ... below limit per axis (0 <= start <= limit <= extent, stride "
      ">= 1); any dtype",
      sample_operands(1, {{"start_indices", Ints{0, 0}}, {"limit_indices", Shape{2, 1}}, {"strides", Ints{1, 1}}})));
  // Jointly linear in all its operands, however many.
  set_linear(t.add(structure_op("concatenate", 1, -1, {{"axis", AttrKind::Int}}, infer_concatenate,
                                "joins operands of one dtype and rank along `axis`, other extents equal; any dtype",
                                sample_operands(2, {{"axis", int64_t{0}}}))),
             {kEveryOperand});
}

}  // namespace evoxc::ops_detail
