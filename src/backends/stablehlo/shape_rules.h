// Private to the StableHLO export: emission helpers shared by the structure and layout rule families
// (rules_structure.cpp, rules_layout.cpp): small typed builders, slices and concatenations over symbolic extents,
// and the guard for statically empty results.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "backends/stablehlo/emitter.h"
#include "evoxc/ops/op_def.h"

namespace evoxc::stablehlo::shape_rules {

using Ints = std::vector<int64_t>;
inline constexpr std::span<const Val> kNoOperands{};

inline const TensorType& rtype(const Operation& op, size_t i = 0) { return op.result(i)->type(); }
inline const AttrMap& attrs(const Operation& op) { return op.attributes(); }

inline std::string ints_list(const Ints& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

inline Ints iota_ints(size_t n, int64_t from = 0) {
  Ints v(n);
  for (size_t i = 0; i < n; ++i) v[i] = from + static_cast<int64_t>(i);
  return v;
}

inline Shape with_extent(const Shape& s, size_t axis, const DimExpr& d) {
  Shape r = s;
  r[axis] = d;
  return r;
}

inline bool static_zero(const DimExpr& d) { return d.is_const() && d.value() == 0; }
inline bool static_empty(const Shape& s) {
  for (const DimExpr& d : s)
    if (static_zero(d)) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Small typed builders.

inline Val scalar_i64(Emitter& e, int64_t v) { return e.splat(Attribute(v), DType::I64, Shape{}); }
inline Val vector_i64(Emitter& e, const Ints& v) {
  return e.constant(Tensor::from_vector<int64_t>(v, {static_cast<int64_t>(v.size())}));
}
// The value `v` of dtype `t` broadcast to `shape` (symbolic extents allowed).
inline Val fill(Emitter& e, const Attribute& v, DType t, const Shape& shape) {
  return e.broadcast_to(e.splat(v, t, Shape{}), shape);
}
inline Val zeros(Emitter& e, const TensorType& t) { return fill(e, Attribute(int64_t{0}), t.dtype, t.shape); }

inline Val binary(Emitter& e, const char* name, const Val& a, const Val& b) { return e.op1(name, {a, b}, "", a.type); }
inline Val compare(Emitter& e, const Val& a, const Val& b, const char* dir) {
  return e.op1("compare", {a, b}, std::string("{comparison_direction = #stablehlo<comparison_direction ") + dir + ">}",
               TensorType(DType::Bool, a.type.shape));
}
inline Val select(Emitter& e, const Val& p, const Val& a, const Val& b) {
  return e.op1("select", {p, a, b}, "", a.type);
}
inline Val logical_not(Emitter& e, const Val& p) { return e.op1("not", {p}, "", p.type); }
// The rank-0 `s` broadcast to the shape of `like_this` (its dtype kept).
inline Val like(Emitter& e, const Val& s, const Val& like_this) { return e.broadcast_to(s, like_this.type.shape); }

// x reshaped to `to` (same element count): reshape, or dynamic_reshape for symbolic extents.
inline Val reshape(Emitter& e, const Val& x, const Shape& to) {
  if (x.type.shape == to) return x;
  TensorType t(x.type.dtype, to);
  if (to.is_static()) return e.op1("reshape", {x}, "", t);
  return e.op1("dynamic_reshape", {x, e.shape_tensor(to)}, "", t);
}

// broadcast_in_dim with explicit dimensions (dynamic_broadcast_in_dim for symbolic extents).
inline Val broadcast_dims(Emitter& e, const Val& x, const Shape& to, const Ints& dims) {
  if (x.type.shape == to && dims == iota_ints(to.rank())) return x;
  TensorType t(x.type.dtype, to);
  std::string a = "{broadcast_dimensions = " + i64_array(dims) + "}";
  if (to.is_static()) return e.op1("broadcast_in_dim", {x}, a, t);
  return e.op1("dynamic_broadcast_in_dim", {x, e.shape_tensor(to)}, a, t);
}

// Counting 0, 1, ... along `dim` of `shape` in an integer or float dtype StableHLO's iota takes directly.
inline Val iota(Emitter& e, const Shape& shape, size_t dim, DType t = DType::I64) {
  TensorType ty(t, shape);
  std::string a = "{iota_dimension = " + std::to_string(dim) + " : i64}";
  if (shape.is_static()) return e.op1("iota", kNoOperands, a, ty);
  return e.op1("dynamic_iota", {e.shape_tensor(shape)}, a, ty);
}

// Elements start, start + stride, ... below limit per axis (0 <= start <= limit <= extent).
inline Val slice(Emitter& e, const Val& x, const Ints& start, const std::vector<DimExpr>& limit, const Ints& strides) {
  std::vector<DimExpr> out;
  bool is_static = true;
  for (size_t i = 0; i < start.size(); ++i) {
    out.push_back(floordiv(limit[i] - DimExpr(start[i]) + DimExpr(strides[i] - 1), DimExpr(strides[i])));
    is_static = is_static && limit[i].is_const();
  }
  TensorType t(x.type.dtype, Shape(out));
  if (t.shape == x.type.shape && std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; }))
    return x;
  if (is_static) {
    Ints lim;
    for (const DimExpr& d : limit) lim.push_back(d.value());
    return e.op1("slice", {x},
                 "{limit_indices = " + i64_array(lim) + ", start_indices = " + i64_array(start) +
                     ", strides = " + i64_array(strides) + "}",
                 t);
  }
  return e.op1("real_dynamic_slice", {x, vector_i64(e, start), e.shape_tensor(Shape(limit)), vector_i64(e, strides)},
               "", t);
}

// Elements [start, limit) along one axis, the other axes whole.
inline Val slice_axis(Emitter& e, const Val& x, size_t axis, int64_t start, const DimExpr& limit) {
  size_t r = x.type.rank();
  Ints starts(r, 0), strides(r, 1);
  starts[axis] = start;
  std::vector<DimExpr> limits = x.type.shape.dims();
  limits[axis] = limit;
  return slice(e, x, starts, limits, strides);
}

inline Val concatenate(Emitter& e, const std::vector<Val>& parts, size_t axis, const TensorType& t) {
  if (parts.size() == 1) return parts.front();
  return e.op1("concatenate", parts, "{dimension = " + std::to_string(axis) + " : i64}", t);
}

// x padded with `value` (rank 0): low/high may be negative (crop), interior >= 0.
inline Val pad(Emitter& e, const Val& x, const Val& value, const Ints& low, const Ints& high, const Ints& interior,
               const Shape& result) {
  return e.op1("pad", {x, value},
               "{edge_padding_high = " + i64_array(high) + ", edge_padding_low = " + i64_array(low) +
                   ", interior_padding = " + i64_array(interior) + "}",
               TensorType(x.type.dtype, result));
}

// x with one zero appended on each symbolic axis of `axes`: a gather whose indexed axis may be empty at run time
// then still has an element to clamp to (the caller masks or clamps so it is never read as data).
inline Val pad_symbolic_axes(Emitter& e, const Val& x, const Ints& axes) {
  size_t r = x.type.rank();
  Ints low(r, 0), high(r, 0), interior(r, 0);
  Shape s = x.type.shape;
  bool any = false;
  for (int64_t a : axes) {
    auto i = static_cast<size_t>(a);
    if (s[i].is_const() || high[i] != 0) continue;
    high[i] = 1;
    s[i] = s[i] + DimExpr(1);
    any = true;
  }
  if (!any) return x;
  return pad(e, x, e.splat(Attribute(int64_t{0}), x.type.dtype, Shape{}), low, high, interior, s);
}

inline Val reduce(Emitter& e, const Val& x, const Val& init, const Ints& dims, const char* combiner) {
  TensorType s(x.type.dtype, Shape{});
  std::vector<DimExpr> out;
  for (size_t i = 0; i < x.type.rank(); ++i)
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(i)) == dims.end()) out.push_back(x.type.shape[i]);
  TensorType rt(x.type.dtype, Shape(out));
  Val operands[] = {x, init};
  return e
      .op_with_regions("reduce", operands, "{dimensions = " + i64_array(dims) + "}", std::span(&rt, 1), 1,
                       [&](size_t) {
                         TensorType args[] = {s, s};
                         e.region_block(args, [&](std::span<const Val> a) -> std::vector<Val> {
                           return {e.op1(combiner, {a[0], a[1]}, "", s)};
                         });
                       })
      .front();
}
inline Val any_true(Emitter& e, const Val& p) {
  return reduce(e, p, e.splat(Attribute(false), DType::Bool, Shape{}), iota_ints(p.type.rank()), "or");
}

// Index values as int64. Unsigned 64-bit values above INT64_MAX count as INT64_MAX (evoxc reads indices so),
// where a plain convert would wrap them negative.
inline Val index_i64(Emitter& e, const Val& i) {
  if (i.type.dtype == DType::U64) {
    Val cap = like(e, e.splat(Attribute(std::numeric_limits<int64_t>::max()), DType::U64, Shape{}), i);
    return e.convert(binary(e, "minimum", i, cap), DType::I64);
  }
  return e.convert(i, DType::I64);
}

inline std::string gather_dims(const Ints& offset, const Ints& collapsed, const Ints& start_map, size_t ivd) {
  std::vector<std::string> parts;
  if (!offset.empty()) parts.push_back("offset_dims = " + ints_list(offset));
  if (!collapsed.empty()) parts.push_back("collapsed_slice_dims = " + ints_list(collapsed));
  if (!start_map.empty()) parts.push_back("start_index_map = " + ints_list(start_map));
  parts.push_back("index_vector_dim = " + std::to_string(ivd));
  std::string s = "#stablehlo.gather<";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s + ">";
}

// StableHLO gather (dynamic_gather when a slice size is symbolic). Start indices clamp into range.
inline Val gather(Emitter& e, const Val& x, const Val& idx, const std::string& dnums, const Shape& slice_sizes,
                  const TensorType& result) {
  if (slice_sizes.is_static())
    return e.op1("gather", {x, idx},
                 "{dimension_numbers = " + dnums +
                     ", indices_are_sorted = false, slice_sizes = " + i64_array(slice_sizes.to_ints()) + "}",
                 result);
  return e.op1("dynamic_gather", {x, idx, e.shape_tensor(slice_sizes)},
               "{dimension_numbers = " + dnums + ", indices_are_sorted = false}", result);
}

// x[..., idx[j], ...] along `axis` for each j: idx is rank-1 int64 with in-range values.
inline Val take_axis(Emitter& e, const Val& x, const Val& idx, size_t axis) {
  size_t r = x.type.rank();
  Ints offset;
  for (size_t i = 0; i < r; ++i)
    if (i != axis) offset.push_back(static_cast<int64_t>(i));
  Shape sizes = with_extent(x.type.shape, axis, DimExpr(1));
  TensorType t(x.type.dtype, with_extent(x.type.shape, axis, idx.type.shape[0]));
  return gather(e, x, idx, gather_dims(offset, {static_cast<int64_t>(axis)}, {static_cast<int64_t>(axis)}, 1), sizes,
                t);
}

// Python's modulo of int64 tensors by a positive divisor tensor of the same shape.
inline Val pmod(Emitter& e, const Val& a, const Val& n) {
  return binary(e, "remainder", binary(e, "add", binary(e, "remainder", a, n), n), n);
}

// A rule whose results are all statically empty writes empty constants: several StableHLO ops (gather from an
// empty axis, a slice of size 1 from extent 0) are invalid there, and nothing needs computing.
inline Rule empty_guard(Rule rule) {
  return [rule](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    bool all_empty = op.num_results() > 0;
    for (size_t i = 0; i < op.num_results(); ++i) all_empty = all_empty && static_empty(rtype(op, i).shape);
    if (!all_empty) return rule(e, op, in);
    std::vector<Val> out;
    for (size_t i = 0; i < op.num_results(); ++i) out.push_back(zeros(e, rtype(op, i)));
    return out;
  };
}

}  // namespace evoxc::stablehlo::shape_rules
