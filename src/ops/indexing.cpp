// OpDefs for gather, scatter, dynamic_slice and dynamic_update_slice (index form: docs/semantics.md, "Indexing, sorting
// and scans").
#include <string>
#include <vector>

#include "registry.h"

namespace evoxc::ops_detail {
namespace {

std::string paren(const Shape& s) { return "(" + s.to_string() + ")"; }

OpDef indexing_op(const char* name, int min_operands, int max_operands, std::vector<AttrSpec> attrs, InferFn infer,
                  const char* doc) {
  OpDef d;
  d.name = name;
  d.category = OpCategory::Structure;
  d.min_operands = min_operands;
  d.max_operands = max_operands;
  // Mixed operand kinds (data of any dtype, integer indices): inference checks each operand itself.
  d.operand_dtypes = DTypeClass::Any;
  d.attrs = std::move(attrs);
  d.infer = std::move(infer);
  d.doc = doc;
  return d;
}

void require_int(const std::string& op, const TensorType& t, const std::string& what) {
  if (!is_int(t.dtype))
    throw TypeError(op_label(op) + ": " + what + " has dtype " + std::string(dtype_name(t.dtype)) +
                    ", expected an integer dtype; convert the indices with astype(int64)");
}

// Shared by gather and scatter: checks `axes` against the operand and the index vector of `indices`,
// and returns indices.shape[:-1] + the operand extents of the axes not in `axes`.
Shape gathered_shape(const std::string& op, const TensorType& operand, const TensorType& indices,
                     const std::vector<int64_t>& axes) {
  require_int(op, indices, "indices");
  size_t r = operand.rank();
  std::vector<bool> indexed(r, false);
  for (int64_t a : axes) {
    if (a < 0 || a >= static_cast<int64_t>(r))
      throw ShapeError(op_label(op) + ": axis " + std::to_string(a) + " in axes is out of range for the operand " +
                       paren(operand.shape) + " of rank " + std::to_string(r));
    if (indexed[static_cast<size_t>(a)])
      throw ShapeError(op_label(op) + ": axis " + std::to_string(a) + " appears twice in axes; name each axis once");
    indexed[static_cast<size_t>(a)] = true;
  }
  if (indices.rank() < 1)
    throw ShapeError(op_label(op) + ": indices must have rank >= 1 (the last axis is the index vector), got a scalar");
  const DimExpr& last = indices.shape[indices.rank() - 1];
  if (!(last.is_const() && last.value() == static_cast<int64_t>(axes.size())))
    throw ShapeError(op_label(op) + ": the last extent of indices " + paren(indices.shape) + " is " + last.to_string() +
                     " but axes names " + std::to_string(axes.size()) +
                     " axes; the index vector needs one entry per indexed axis");
  std::vector<DimExpr> out;
  for (size_t i = 0; i + 1 < indices.rank(); ++i) out.push_back(indices.shape[i]);
  for (size_t i = 0; i < r; ++i)
    if (!indexed[i]) out.push_back(operand.shape[i]);
  return Shape(std::move(out));
}

std::vector<TensorType> infer_gather(std::span<const TensorType> ops, const AttrMap& attrs) {
  const auto& axes = attr_ints(attrs, "axes", "gather");
  return {TensorType(ops[0].dtype, gathered_shape("gather", ops[0], ops[1], axes))};
}

std::vector<TensorType> infer_scatter(std::span<const TensorType> ops, const AttrMap& attrs) {
  const auto& axes = attr_ints(attrs, "axes", "scatter");
  const std::string& mode = attr_string(attrs, "mode", "scatter");
  if (mode != "set" && mode != "add" && mode != "mul" && mode != "min" && mode != "max")
    throw TypeError(op_label("scatter") + ": mode '" + mode + "' is not one of set, add, mul, min, max");
  if (ops[2].dtype != ops[0].dtype)
    throw TypeError(op_label("scatter") + ": updates have dtype " + std::string(dtype_name(ops[2].dtype)) +
                    " but the operand has " + std::string(dtype_name(ops[0].dtype)) + "; convert the updates first");
  Shape want = gathered_shape("scatter", ops[0], ops[1], axes);
  if (ops[2].shape != want)
    throw ShapeError(op_label("scatter") + ": updates " + paren(ops[2].shape) + " must have the shape " + paren(want) +
                     " (indices.shape[:-1] + the operand's non-indexed extents)");
  return {ops[0]};
}

// Start operands: one rank-0 integer per operand axis, from operand `first` on.
void check_starts(const std::string& op, std::span<const TensorType> ops, size_t first, size_t rank) {
  if (ops.size() - first != rank)
    throw TypeError(op_label(op) + ": takes one start index per operand axis (" + std::to_string(rank) + "), got " +
                    std::to_string(ops.size() - first));
  for (size_t i = first; i < ops.size(); ++i) {
    require_int(op, ops[i], "start index " + std::to_string(i - first));
    if (ops[i].rank() != 0)
      throw ShapeError(op_label(op) + ": start index " + std::to_string(i - first) + " has shape " +
                       paren(ops[i].shape) + "; each start index must be a rank-0 tensor");
  }
}

std::vector<TensorType> infer_dynamic_slice(std::span<const TensorType> ops, const AttrMap& attrs) {
  const auto& sizes = attr_ints(attrs, "slice_sizes", "dynamic_slice");
  const Shape& in = ops[0].shape;
  check_starts("dynamic_slice", ops, 1, in.rank());
  if (sizes.size() != in.rank())
    throw ShapeError(op_label("dynamic_slice") + ": slice_sizes has " + std::to_string(sizes.size()) +
                     " entries but the operand " + paren(in) + " has rank " + std::to_string(in.rank()));
  std::vector<DimExpr> out;
  for (size_t i = 0; i < in.rank(); ++i) {
    if (sizes[i] < 0 || (in[i].is_const() && sizes[i] > in[i].value()))
      throw ShapeError(op_label("dynamic_slice") + ": slice size " + std::to_string(sizes[i]) + " on axis " +
                       std::to_string(i) + " must lie in [0, " + in[i].to_string() + "] for the operand " + paren(in));
    out.emplace_back(sizes[i]);
  }
  return {TensorType(ops[0].dtype, Shape(std::move(out)))};
}

std::vector<TensorType> infer_dynamic_update_slice(std::span<const TensorType> ops, const AttrMap& /*attrs*/) {
  const Shape& in = ops[0].shape;
  const Shape& up = ops[1].shape;
  if (ops[1].dtype != ops[0].dtype)
    throw TypeError(op_label("dynamic_update_slice") + ": the update has dtype " +
                    std::string(dtype_name(ops[1].dtype)) + " but the operand has " +
                    std::string(dtype_name(ops[0].dtype)));
  if (up.rank() != in.rank())
    throw ShapeError(op_label("dynamic_update_slice") + ": the update " + paren(up) + " must have the operand's rank " +
                     std::to_string(in.rank()) + " " + paren(in));
  check_starts("dynamic_update_slice", ops, 2, in.rank());
  for (size_t i = 0; i < in.rank(); ++i) {
    DimExpr over = up[i] - in[i];
    if (over.is_const() && over.value() > 0)
      throw ShapeError(op_label("dynamic_update_slice") + ": the update " + paren(up) + " is larger than the operand " +
                       paren(in) + " on axis " + std::to_string(i));
  }
  return {ops[0]};
}

}  // namespace

// Traits: gather and dynamic_slice are linear in the operand, dynamic_update_slice jointly in
// operand and update (the starts and indices are ints). scatter is jointly linear in operand
// and updates for mode "set" (each result element is one of them) and "add", but not for "mul",
// "min" or "max"; a trait must hold for every attribute value, so it lists none and a transpose
// rule for scatter reads the mode itself. No attribute is data.
void register_indexing_ops(OpTable& t) {
  using Ints = std::vector<int64_t>;
  const Shape x{4, 3};
  const TensorType i32_scalar(DType::I32, Shape());
  OpDef& gather = t.add(indexing_op("gather", 2, 2, {{"axes", AttrKind::Ints}}, infer_gather,
                                    "operand[indices[b..., :] on `axes`, the other axes whole] -> indices.shape[:-1] + "
                                    "non-indexed extents; indices clamp into range; any dtype, integer indices"));
  set_linear(gather, {0});
  gather.sample = [x](DType t) {
    return OpSample{{TensorType(t, x), TensorType(DType::I64, {2, 1})}, {{"axes", Ints{0}}}};
  };
  t.add(indexing_op("scatter", 3, 3, {{"axes", AttrKind::Ints}, {"mode", AttrKind::String}}, infer_scatter,
                    "operand with updates written (mode set/add/mul/min/max) at gather's positions; out-of-range "
                    "rows dropped, set: last in row-major order wins; any dtype, integer indices"))
      .sample = [x](DType t) {
    return OpSample{{TensorType(t, x), TensorType(DType::I64, {2, 1}), TensorType(t, {2, 3})},
                    {{"axes", Ints{0}}, {"mode", std::string("set")}}};
  };
  OpDef& ds = t.add(
      indexing_op("dynamic_slice", 1, -1, {{"slice_sizes", AttrKind::Ints}}, infer_dynamic_slice,
                  "a `slice_sizes` window at rank-0 integer starts (one per axis), clamped into range; any dtype"));
  set_linear(ds, {0});
  ds.sample = [x, i32_scalar](DType t) {
    return OpSample{{TensorType(t, x), i32_scalar, i32_scalar}, {{"slice_sizes", Ints{2, 2}}}};
  };
  OpDef& dus = t.add(indexing_op("dynamic_update_slice", 2, -1, {}, infer_dynamic_update_slice,
                                 "operand with `update` written at rank-0 integer starts (one per axis), clamped into "
                                 "range; any dtype"));
  set_linear(dus, {0, 1});
  dus.sample = [x, i32_scalar](DType t) {
    return OpSample{{TensorType(t, x), TensorType(t, {2, 2}), i32_scalar, i32_scalar}, {}};
  };
}

}  // namespace evoxc::ops_detail
