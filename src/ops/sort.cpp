// OpDefs for sort, argsort, top_k and searchsorted (ordering rules: docs/semantics.md, "Sorting").
#include <string>
#include <vector>

#include "registry.h"

namespace evoxc::ops_detail {
namespace {

std::string paren(const Shape& s) { return "(" + s.to_string() + ")"; }

OpDef sort_op(const char* name, int min_operands, int max_operands, DTypeClass cls, std::vector<AttrSpec> attrs,
              InferFn infer, const char* doc) {
  OpDef d;
  d.name = name;
  d.category = OpCategory::Structure;
  d.min_operands = min_operands;
  d.max_operands = max_operands;
  d.operand_dtypes = cls;
  d.attrs = std::move(attrs);
  d.infer = std::move(infer);
  d.doc = doc;
  return d;
}

std::vector<TensorType> infer_sort(std::span<const TensorType> ops, const AttrMap& attrs) {
  int64_t dim = attr_int(attrs, "dimension", "sort");
  int64_t num_keys = attr_int(attrs, "num_keys", "sort");
  const Shape& first = ops[0].shape;
  if (first.rank() == 0)
    throw ShapeError(op_label("sort") + ": cannot sort a rank-0 operand; reshape it to rank 1 first");
  check_axes("sort", "dimension", {dim}, first.rank());
  if (num_keys < 1 || num_keys > static_cast<int64_t>(ops.size()))
    throw ShapeError(op_label("sort") + ": num_keys " + std::to_string(num_keys) + " must lie in [1, " +
                     std::to_string(ops.size()) + "] (the number of operands)");
  std::vector<TensorType> out;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].shape != first)
      throw ShapeError(op_label("sort") + ": operand " + std::to_string(i) + " " + paren(ops[i].shape) +
                       " differs from operand 0 " + paren(first) + "; every operand must have one shape");
    out.push_back(ops[i]);
  }
  return out;
}

std::vector<TensorType> infer_argsort(std::span<const TensorType> ops, const AttrMap& attrs) {
  int64_t dim = attr_int(attrs, "dimension", "argsort");
  if (ops[0].rank() == 0)
    throw ShapeError(op_label("argsort") + ": cannot sort a rank-0 operand; reshape it to rank 1 first");
  check_axes("argsort", "dimension", {dim}, ops[0].rank());
  return {TensorType(DType::I64, ops[0].shape)};
}

std::vector<TensorType> infer_top_k(std::span<const TensorType> ops, const AttrMap& attrs) {
  int64_t k = attr_int(attrs, "k", "top_k");
  const Shape& in = ops[0].shape;
  if (in.rank() == 0) throw ShapeError(op_label("top_k") + ": the operand must have rank >= 1, got a scalar");
  const DimExpr& n = in[in.rank() - 1];
  if (k < 0 || (n.is_const() && k > n.value()))
    throw ShapeError(op_label("top_k") + ": k = " + std::to_string(k) + " must lie in [0, " + n.to_string() +
                     "], the last extent of " + paren(in));
  Shape out = in;
  out[in.rank() - 1] = DimExpr(k);
  return {TensorType(ops[0].dtype, out), TensorType(DType::I64, out)};
}

std::vector<TensorType> infer_searchsorted(std::span<const TensorType> ops, const AttrMap& attrs) {
  const std::string& side = attr_string(attrs, "side", "searchsorted");
  if (side != "left" && side != "right")
    throw TypeError(op_label("searchsorted") + ": side '" + side + "' must be 'left' or 'right'");
  require_same_dtype("searchsorted", ops);
  if (ops[0].rank() != 1)
    throw ShapeError(op_label("searchsorted") + ": the sorted operand " + paren(ops[0].shape) +
                     " must have rank 1; flatten or slice it first");
  return {TensorType(DType::I64, ops[1].shape)};
}

}  // namespace

// Traits: none. A sort's permutation depends on the keys, so it is linear in nothing (only in
// the non-key operands for fixed keys, which a trait cannot say since num_keys is an attribute);
// argsort and searchsorted give ints. No attribute is data.
void register_sort_ops(OpTable& t) {
  const Shape x{4, 3};
  t.add(sort_op("sort", 1, -1, DTypeClass::Any, {{"dimension", AttrKind::Int}, {"num_keys", AttrKind::Int}}, infer_sort,
                "stable ascending sort along `dimension` of every operand by the first `num_keys` operands "
                "(lexicographic; NaN last); one result per operand; any dtype"))
      .sample = sample_shapes({x}, {{"dimension", int64_t{1}}, {"num_keys", int64_t{1}}});
  t.add(sort_op("argsort", 1, 1, DTypeClass::Any, {{"dimension", AttrKind::Int}}, infer_argsort,
                "int64 indices of a stable ascending sort along `dimension` (NaN last); any dtype"))
      .sample = sample_shapes({x}, {{"dimension", int64_t{1}}});
  t.add(sort_op("top_k", 1, 1, DTypeClass::Any, {{"k", AttrKind::Int}}, infer_top_k,
                "the k largest along the last axis, descending (NaN largest, ties: lower index first): values and "
                "int64 indices; any dtype"))
      .sample = sample_shapes({x}, {{"k", int64_t{2}}});
  t.add(sort_op("searchsorted", 2, 2, DTypeClass::Any, {{"side", AttrKind::String}}, infer_searchsorted,
                "int64 insertion points of `values` into the ascending 1-D operand (NaN last), side left/right; "
                "same dtype, any"))
      .sample = sample_shapes({{3}, {2, 1}}, {{"side", std::string("left")}});
}

}  // namespace evoxc::ops_detail
