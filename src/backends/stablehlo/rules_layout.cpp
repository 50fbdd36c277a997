// StableHLO lowering rules of the layout family (src/ops/layout.cpp): pad, tril, triu, diagonal, flip, roll, tile,
// repeat, one_hot, arange and linspace. Modes and index maps StableHLO lacks (pad's edge/reflect/symmetric, roll,
// repeat with a count per element) are written out as gathers, slices and concatenations.
#include <algorithm>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "backends/common/constant_fold.h"
#include "backends/stablehlo/shape_rules.h"

namespace evoxc::stablehlo {
namespace {

using namespace shape_rules;  // NOLINT(google-build-using-namespace): the families' shared helpers

// pad's index map for the modes that read the operand (edge, reflect, symmetric), on one axis of static extent
// n: result index j reads operand index map(j - low) (docs/semantics.md, as the interpreter's AxisMap).
int64_t pad_source(const std::string& mode, int64_t q, int64_t n) {
  auto pm = [](int64_t a, int64_t m) {
    int64_t r = a % m;
    return r < 0 ? r + m : r;
  };
  if (mode == "edge") return std::clamp<int64_t>(q, 0, n - 1);
  if (mode == "reflect") {
    if (n <= 1) return 0;
    int64_t p = 2 * (n - 1), r = pm(q, p);
    return r < n ? r : p - r;
  }
  int64_t p = 2 * n, r = pm(q, p);
  return r < n ? r : p - 1 - r;
}

// The same map over a symbolic extent, as StableHLO arithmetic on j = iota(out).
Val pad_source_dynamic(Emitter& e, const std::string& mode, int64_t low, const DimExpr& n, const DimExpr& out) {
  Val j = iota(e, Shape{out}, 0);
  Val q = binary(e, "subtract", j, like(e, scalar_i64(e, low), j));
  Val nv = like(e, e.extent(n), j);
  Val zero = like(e, scalar_i64(e, 0), j);
  Val one = like(e, scalar_i64(e, 1), j);
  if (mode == "edge")
    return e.op1("clamp", {zero, q, binary(e, "maximum", binary(e, "subtract", nv, one), zero)}, "", q.type);
  if (mode == "reflect") {
    // p = 2(n - 1), at least 1 so the remainder is defined; n <= 1 reads element 0.
    Val p =
        binary(e, "maximum", binary(e, "multiply", binary(e, "subtract", nv, one), like(e, scalar_i64(e, 2), j)), one);
    Val r = pmod(e, q, p);
    Val v = select(e, compare(e, r, nv, "LT"), r, binary(e, "subtract", p, r));
    return select(e, compare(e, nv, one, "LE"), zero, v);
  }
  Val p = binary(e, "maximum", binary(e, "multiply", nv, like(e, scalar_i64(e, 2), j)), one);
  Val r = pmod(e, q, p);
  return select(e, compare(e, r, nv, "LT"), r, binary(e, "subtract", binary(e, "subtract", p, one), r));
}

std::vector<Val> lower_pad(Emitter& e, const Operation& op, std::span<const Val> in) {
  const std::string& mode = attr_string(attrs(op), "mode", "pad");
  const Ints& low = attr_ints(attrs(op), "low", "pad");
  const Ints& high = attr_ints(attrs(op), "high", "pad");
  size_t r = in[0].type.rank();
  Ints interior(r, 0);
  if (attrs(op).count("interior")) interior = attr_ints(attrs(op), "interior", "pad");
  const TensorType& rt = rtype(op);
  // StableHLO's pad is numpy's constant mode with XLA's negative (cropping) widths and interior padding.
  if (mode == "constant") return {pad(e, in[0], in[1], low, high, interior, rt.shape)};
  // The other modes read the operand through a per-axis index map: one gather per padded axis.
  Val x = in[0];
  for (size_t i = 0; i < r; ++i) {
    if (low[i] == 0 && high[i] == 0) continue;
    const DimExpr& n = in[0].type.shape[i];
    const DimExpr& out = rt.shape[i];
    Val idx;
    if (n.is_const() && out.is_const()) {
      Ints v;
      for (int64_t j = 0; j < out.value(); ++j) v.push_back(pad_source(mode, j - low[i], n.value()));
      idx = vector_i64(e, v);
    } else {
      idx = pad_source_dynamic(e, mode, low[i], n, out);
      // An empty axis at run time has nothing to read (evoxc raises there unless nothing is taken): padded so
      // the gather stays a valid program.
      x = pad_symbolic_axes(e, x, {static_cast<int64_t>(i)});
    }
    x = take_axis(e, x, idx, i);
  }
  return {x};
}

std::vector<Val> lower_tri(Emitter& e, const Operation& op, std::span<const Val> in, bool lower) {
  int64_t k = attr_int(attrs(op), "k", lower ? "tril" : "triu");
  const Shape& s = in[0].type.shape;
  size_t r = s.rank();
  Shape plane{s[r - 2], s[r - 1]};
  Val d = binary(e, "subtract", iota(e, plane, 1), iota(e, plane, 0));  // j - i
  Val keep = compare(e, d, like(e, scalar_i64(e, k), d), lower ? "LE" : "GE");
  return {select(e, e.broadcast_to(keep, s), in[0], zeros(e, in[0].type))};
}

std::vector<Val> lower_diagonal(Emitter& e, const Operation& op, std::span<const Val> in) {
  int64_t offset = attr_int(attrs(op), "offset", "diagonal");
  int64_t a1 = attr_int(attrs(op), "axis1", "diagonal"), a2 = attr_int(attrs(op), "axis2", "diagonal");
  const Shape& s = in[0].type.shape;
  size_t r = s.rank();
  // The other axes first, then axis1 and axis2.
  Ints perm;
  for (size_t i = 0; i < r; ++i)
    if (static_cast<int64_t>(i) != a1 && static_cast<int64_t>(i) != a2) perm.push_back(static_cast<int64_t>(i));
  perm.push_back(a1);
  perm.push_back(a2);
  std::vector<DimExpr> ps;
  for (int64_t p : perm) ps.push_back(s[static_cast<size_t>(p)]);
  Val x = in[0];
  if (perm != iota_ints(r))
    x = e.op1("transpose", {x}, "{permutation = " + i64_array(perm) + "}", TensorType(x.type.dtype, Shape(ps)));
  x = pad_symbolic_axes(e, x, {static_cast<int64_t>(r - 2), static_cast<int64_t>(r - 1)});
  // Index pairs (i + max(-offset, 0), i + max(offset, 0)) for i < len.
  const DimExpr& len = rtype(op).shape[r - 2];
  Shape col{len, DimExpr(1)};
  Val i = iota(e, col, 0);
  Val c0 = binary(e, "add", i, like(e, scalar_i64(e, std::max<int64_t>(-offset, 0)), i));
  Val c1 = binary(e, "add", i, like(e, scalar_i64(e, std::max<int64_t>(offset, 0)), i));
  Val idx = concatenate(e, {c0, c1}, 1, TensorType(DType::I64, Shape{len, DimExpr(2)}));
  Shape sizes = x.type.shape;
  sizes[r - 2] = DimExpr(1);
  sizes[r - 1] = DimExpr(1);
  auto last = static_cast<int64_t>(r - 2);
  return {gather(e, x, idx, gather_dims(iota_ints(r - 2), {last, last + 1}, {last, last + 1}, 1), sizes, rtype(op))};
}

std::vector<Val> lower_flip(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& axes = attr_ints(attrs(op), "axes", "flip");
  if (axes.empty()) return {in[0]};
  return {e.op1("reverse", {in[0]}, "{dimensions = " + i64_array(axes) + "}", rtype(op))};
}

std::vector<Val> lower_roll(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& shifts = attr_ints(attrs(op), "shifts", "roll");
  const Ints& axes = attr_ints(attrs(op), "axes", "roll");
  Val x = in[0];
  for (size_t k = 0; k < axes.size(); ++k) {
    auto a = static_cast<size_t>(axes[k]);
    const DimExpr& n = x.type.shape[a];
    if (n.is_const()) {
      // result[(i + shift) mod n] = x[i]: the last s elements, then the first n - s.
      int64_t nv = n.value();
      if (nv == 0) continue;
      int64_t s = shifts[k] % nv;
      if (s < 0) s += nv;
      if (s == 0) continue;
      Val tail = slice_axis(e, x, a, nv - s, n);
      Val head = slice_axis(e, x, a, 0, DimExpr(nv - s));
      x = concatenate(e, {tail, head}, a, x.type);
      continue;
    }
    // Symbolic extent: result j reads (j - s) mod n with s = shift mod n, n at least 1 for the remainder.
    Val j = iota(e, Shape{n}, 0);
    Val one = scalar_i64(e, 1);
    Val n1 = binary(e, "maximum", e.extent(n), one);
    Val s = pmod(e, scalar_i64(e, shifts[k]), n1);
    Val nb = like(e, n1, j);
    Val idx = binary(e, "remainder", binary(e, "add", binary(e, "subtract", j, like(e, s, j)), nb), nb);
    // Padded so the gather stays valid when n is 0 at run time (then it takes no index).
    x = take_axis(e, pad_symbolic_axes(e, x, {static_cast<int64_t>(a)}), idx, a);
  }
  return {x};
}

std::vector<Val> lower_tile(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& reps = attr_ints(attrs(op), "reps", "tile");
  const Shape& s = in[0].type.shape;
  // Broadcast to (r0, n0, r1, n1, ...) and merge each pair: row-major order repeats the whole axis.
  std::vector<DimExpr> wide;
  Ints dims;
  for (size_t i = 0; i < s.rank(); ++i) {
    wide.emplace_back(reps[i]);
    wide.push_back(s[i]);
    dims.push_back(static_cast<int64_t>(2 * i + 1));
  }
  return {reshape(e, broadcast_dims(e, in[0], Shape(wide), dims), rtype(op).shape)};
}

std::vector<Val> lower_repeat(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& reps = attr_ints(attrs(op), "repeats", "repeat");
  auto axis = static_cast<size_t>(attr_int(attrs(op), "axis", "repeat"));
  const Shape& s = in[0].type.shape;
  if (reps.size() == 1) {
    // Broadcast to (..., n, r, ...) and merge: each element repeated r times in place.
    std::vector<DimExpr> wide;
    Ints dims;
    for (size_t i = 0; i < s.rank(); ++i) {
      dims.push_back(static_cast<int64_t>(wide.size()));
      wide.push_back(s[i]);
      if (i == axis) wide.emplace_back(reps[0]);
    }
    return {reshape(e, broadcast_dims(e, in[0], Shape(wide), dims), rtype(op).shape)};
  }
  // One count per element of a static axis: a gather with the repeated indices.
  Ints idx;
  for (size_t i = 0; i < reps.size(); ++i) idx.insert(idx.end(), static_cast<size_t>(reps[i]), static_cast<int64_t>(i));
  return {take_axis(e, in[0], vector_i64(e, idx), axis)};
}

std::vector<Val> lower_one_hot(Emitter& e, const Operation& op, std::span<const Val> in) {
  const TensorType& rt = rtype(op);
  size_t m = in[0].type.rank();
  // Compared in int64: signed and unsigned indices widen exactly (a uint64 above INT64_MAX wraps negative and,
  // like a negative index, matches no class).
  Val x = broadcast_dims(e, e.convert(in[0], DType::I64), rt.shape, iota_ints(m));
  Val hit = compare(e, x, iota(e, rt.shape, m), "EQ");
  return {e.convert(hit, rt.dtype)};
}

// arange and linspace are static: their values are the interpreter's, embedded as a constant. The one
// exception is a long all-int arange into an int dtype, whose formula (start + i * step in wrapping int64, then
// the low bits) is exact and much smaller than its constant. A float formula (start + i * step in double) is not
// exact on XLA: its CPU compiler contracts the multiply and add into one fma (rounding once where evoxc rounds
// twice), even across an optimization_barrier, so float-valued ranges are always constants.
constexpr int64_t kMaxFoldedIntRange = int64_t{1} << 20;

std::vector<Val> lower_range(Emitter& e, const Operation& op, bool arange) {
  const TensorType& rt = rtype(op);
  const AttrMap& a = attrs(op);
  int64_t n = rt.shape[0].value();
  auto is_int_attr = [&](const char* name) { return std::holds_alternative<int64_t>(a.at(name)); };
  if (arange && n > kMaxFoldedIntRange && is_int(rt.dtype) && is_int_attr("start") && is_int_attr("stop") &&
      is_int_attr("step")) {
    Val i = iota(e, Shape{n}, 0);
    Val v = binary(e, "add", binary(e, "multiply", i, like(e, scalar_i64(e, std::get<int64_t>(a.at("step"))), i)),
                   like(e, scalar_i64(e, std::get<int64_t>(a.at("start"))), i));
    return {e.convert(v, rt.dtype)};
  }
  return {e.constant(backends::fold_on_interp(op))};
}

}  // namespace

void add_layout_rules(Table& t) {
  auto set = [&](const char* name, Rule rule) { t.set(name, empty_guard(std::move(rule))); };
  set("pad", lower_pad);
  set("tril", [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_tri(e, op, in, true); });
  set("triu", [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_tri(e, op, in, false); });
  set("diagonal", lower_diagonal);
  set("flip", lower_flip);
  set("roll", lower_roll);
  set("tile", lower_tile);
  set("repeat", lower_repeat);
  set("one_hot", lower_one_hot);
  set("arange", [](Emitter& e, const Operation& op, std::span<const Val>) { return lower_range(e, op, true); });
  set("linspace", [](Emitter& e, const Operation& op, std::span<const Val>) { return lower_range(e, op, false); });
}

}  // namespace evoxc::stablehlo
