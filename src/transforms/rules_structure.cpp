// Transform rules of the structure and layout families: reshape, transpose, broadcast_in_dim, expand_dims, squeeze,
// slice, concatenate, pad, tril, triu, diagonal, flip, roll, tile, repeat and one_hot.
#include <algorithm>
#include <numeric>

#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

using ST = SymbolicTensor;
using Ints = std::vector<int64_t>;

// ---------------------------------------------------------------- shared helpers

// `s` with the batch extent in front.
Shape with_batch(const DimExpr& b, const Shape& s) {
  std::vector<DimExpr> d{b};
  d.insert(d.end(), s.begin(), s.end());
  return Shape(std::move(d));
}

// Axes of the unbatched op as axes of the batched value (batch at 0).
Ints shifted(Ints v) {
  for (int64_t& a : v) ++a;
  return v;
}

// `v` with `x` in front (an attribute entry for the batch axis).
Ints with_front(int64_t x, const Ints& v) {
  Ints r{x};
  r.insert(r.end(), v.begin(), v.end());
  return r;
}

ST reshape_to(const ST& x, const Shape& s) {
  if (x.shape() == s) return x;
  return emit_op1(EVOXC_TOP("reshape"), {x}, {{"shape", s}});
}

// A cotangent whose extents are an equal but differently spelled DimExpr (symbolic extents after
// slice/pad arithmetic) gets exactly the operand's type: the transposition checks types exactly.
ST as_type(const ST& x, const TensorType& t) { return reshape_to(x, t.shape); }

ST bcast(const ST& x, const Shape& s, Ints dims) {
  if (x.shape() == s) return x;
  return emit_op1(EVOXC_TOP("broadcast_in_dim"), {x}, {{"shape", s}, {"broadcast_dimensions", std::move(dims)}});
}

// A rule's one result, batched at axis 0.
std::vector<BatchArg> batched(const ST& v) { return {BatchArg{v, true}}; }

// One operand, batched: the op again with `attrs` (its axes moved past the batch axis).
std::vector<BatchArg> batch_with(const Operation& op, std::span<const BatchArg> args, AttrMap attrs) {
  return batched(emit_like(op, std::vector<ST>{args[0].v}, attrs)[0]);
}

// A batching rule for a one-operand op whose IntList attributes `names` hold operand axes.
BatchRule batch_axes_attrs(std::vector<const char*> names) {
  return [names = std::move(names)](BatchContext&, const Operation& op, std::span<const BatchArg> args) {
    AttrMap a = op.attributes();
    for (const char* n : names) a[n] = shifted(attr_ints(op, n));
    return batch_with(op, args, std::move(a));
  };
}

// A batching rule for an op that acts on trailing axes only (the leading batch axis is one more
// leading axis to it): the same attributes.
std::vector<BatchArg> batch_same(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  return batch_with(op, args, op.attributes());
}

std::vector<ST> ct_list(const Operation& op) { return std::vector<ST>(op.num_operands()); }

// A transpose rule for a one-operand op from the map of its result cotangent to its operand's.
TransposeRule unary_transpose(std::function<ST(const Operation& op, const ST& ct)> f) {
  return [f = std::move(f)](TransposeContext&, const Operation& op, std::span<const ST>, const std::vector<bool>&,
                            std::span<const ST> cts) {
    std::vector<ST> r = ct_list(op);
    r[0] = as_type(f(op, cts[0]), op.operand(0)->type());
    return r;
  };
}

// `x` extended by `extent` zeros at the end of `axis`, where the extent may be symbolic (pad takes
// only constant widths; concatenate takes any extent).
ST append_zeros(const ST& x, int64_t axis, const DimExpr& extent) {
  if (extent.is_const() && extent.value() == 0) return x;
  Shape zs = x.shape();
  zs[static_cast<size_t>(axis)] = extent;
  return emit_op1(EVOXC_TOP("concatenate"), {x, zeros(TensorType(x.dtype(), zs))}, {{"axis", axis}});
}

// x padded with zeros: `low` and `interior` constants, `high` any extents (symbolic ones appended
// as zeros after the constant pad).
ST zero_pad(const ST& x, const Ints& low, const std::vector<DimExpr>& high, const Ints& interior) {
  Ints hc(high.size(), 0);
  bool any = false;
  for (size_t i = 0; i < high.size(); ++i) {
    if (high[i].is_const()) hc[i] = high[i].value();
    any = any || low[i] != 0 || hc[i] != 0 || interior[i] != 0;
  }
  ST r = x;
  if (any)
    r = emit_op1(EVOXC_TOP("pad"), {x, scalar_like(0.0, x.dtype())},
                 {{"low", low}, {"high", hc}, {"interior", interior}, {"mode", std::string("constant")}});
  for (size_t i = 0; i < high.size(); ++i)
    if (!high[i].is_const()) r = append_zeros(r, static_cast<int64_t>(i), high[i]);
  return r;
}

// The transpose of an op that copies each result element from one operand element (a gather by an
// index map the op itself computes): the op applied to the flat positions of the operand gives, for
// every result element, its source; a scatter-add sums the cotangent back onto the sources. Used
// where the map is not a reshape or a pad (pad's edge/reflect/symmetric modes, repeat with a count
// per element).
ST transpose_index_map(const Operation& op, const ST& ct) {
  const TensorType& xt = op.operand(0)->type();
  DimExpr n = xt.shape.num_elements();
  ST flat = emit_op1(EVOXC_TOP("iota"), {}, {{"shape", Shape{n}}, {"dimension", int64_t{0}}, {"dtype", kIndexType}});
  ST src = emit_like(op, std::vector<ST>{reshape_to(flat, xt.shape)})[0];
  ST idx = emit_op1(EVOXC_TOP("expand_dims"), {src}, {{"axes", Ints{static_cast<int64_t>(src.rank())}}});
  ST acc = emit_op1(EVOXC_TOP("scatter"), {zeros(TensorType(ct.dtype(), Shape{n})), idx, ct},
                    {{"axes", Ints{0}}, {"mode", std::string("add")}});
  return reshape_to(acc, xt.shape);
}

// ---------------------------------------------------------------- reshape, transpose, broadcast

std::vector<BatchArg> batch_reshape(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  AttrMap a = op.attributes();
  a["shape"] = with_batch(ctx.size(), evoxc::attr_shape(op.attributes(), "shape", op.name()));
  return batch_with(op, args, std::move(a));
}

std::vector<BatchArg> batch_transpose(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  AttrMap a = op.attributes();
  a["permutation"] = with_front(0, shifted(attr_ints(op, "permutation")));
  return batch_with(op, args, std::move(a));
}

ST transpose_transpose(const Operation& op, const ST& ct) {
  Ints perm = attr_ints(op, "permutation"), inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return emit_op1(EVOXC_TOP("transpose"), {ct}, {{"permutation", inv}});
}

std::vector<BatchArg> batch_broadcast_in_dim(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  AttrMap a = op.attributes();
  a["shape"] = with_batch(ctx.size(), evoxc::attr_shape(op.attributes(), "shape", op.name()));
  a["broadcast_dimensions"] = with_front(0, shifted(attr_ints(op, "broadcast_dimensions")));
  return batch_with(op, args, std::move(a));
}

// Sums over the result axes the operand does not map to, and over the mapped axes where a unit
// operand extent was broadcast, then reshapes to the operand.
ST transpose_broadcast_in_dim(const Operation& op, const ST& ct) {
  const Shape& in = op.operand(0)->type().shape;
  const Shape& out = ct.shape();
  Ints bd = attr_ints(op, "broadcast_dimensions");
  std::vector<bool> mapped(out.rank(), false);
  Ints axes;
  for (size_t i = 0; i < bd.size(); ++i) {
    auto o = static_cast<size_t>(bd[i]);
    mapped[o] = true;
    bool unit_in = in[i].is_const() && in[i].value() == 1;
    bool unit_out = out[o].is_const() && out[o].value() == 1;
    if (unit_in && !unit_out) axes.push_back(bd[i]);
  }
  for (size_t o = 0; o < out.rank(); ++o)
    if (!mapped[o]) axes.push_back(static_cast<int64_t>(o));
  std::sort(axes.begin(), axes.end());
  return reshape_to(reduce_sum_keep(ct, axes, /*keepdims=*/true), in);
}

// ---------------------------------------------------------------- slice, concatenate

std::vector<BatchArg> batch_slice(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  AttrMap a = op.attributes();
  a["start_indices"] = with_front(0, attr_ints(op, "start_indices"));
  a["limit_indices"] = with_batch(ctx.size(), evoxc::attr_shape(op.attributes(), "limit_indices", op.name()));
  a["strides"] = with_front(1, attr_ints(op, "strides"));
  return batch_with(op, args, std::move(a));
}

// The cotangent goes back to the sliced positions: zeros before `start`, stride - 1 zeros
// between elements (interior padding), zeros after the last element taken.
ST transpose_slice(const Operation& op, const ST& ct) {
  const Shape& in = op.operand(0)->type().shape;
  Ints start = attr_ints(op, "start_indices"), strides = attr_ints(op, "strides"), interior;
  std::vector<DimExpr> high;
  for (size_t i = 0; i < in.rank(); ++i) {
    const DimExpr& m = ct.shape()[i];
    int64_t s = strides[i];
    interior.push_back(s - 1);
    DimExpr used = m;  // the extent the padded elements occupy: m + (m - 1)(s - 1) for m > 0
    if (s > 1)
      used = m.is_const() ? DimExpr(m.value() == 0 ? 0 : (m.value() - 1) * s + 1)
                          : m + max(m - DimExpr(1), DimExpr(0)) * DimExpr(s - 1);
    high.push_back(in[i] - DimExpr(start[i]) - used);
  }
  return zero_pad(ct, start, high, interior);
}

std::vector<BatchArg> batch_concatenate(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  std::vector<ST> vals;
  for (const BatchArg& a : args) vals.push_back(ctx.materialize(a));
  return batched(emit_op1(EVOXC_TOP("concatenate"), vals, {{"axis", attr_int(op, "axis") + 1}}));
}

// Each operand's cotangent is its stretch of the result's along the axis. A stretch at a symbolic
// offset cannot be a slice (slice starts are constants): it is the last n of the first offset + n
// elements, taken as a flip, a slice from 0 and a flip back.
std::vector<ST> transpose_concatenate(TransposeContext&, const Operation& op, std::span<const ST>,
                                      const std::vector<bool>& lin, std::span<const ST> cts) {
  std::vector<ST> r = ct_list(op);
  const ST& ct = cts[0];
  int64_t axis = attr_int(op, "axis");
  auto ax = static_cast<size_t>(axis);
  size_t rank = ct.rank();
  DimExpr off(0);
  for (size_t k = 0; k < op.num_operands(); ++k) {
    const TensorType& t = op.operand(k)->type();
    DimExpr n = t.shape[ax];
    if (lin[k]) {
      Shape limit = ct.shape();
      limit[ax] = off + n;
      Ints start(rank, 0), ones(rank, 1);
      if (off.is_const()) {
        start[ax] = off.value();
        r[k] =
            emit_op1(EVOXC_TOP("slice"), {ct}, {{"start_indices", start}, {"limit_indices", limit}, {"strides", ones}});
      } else {
        ST head =
            emit_op1(EVOXC_TOP("slice"), {ct}, {{"start_indices", start}, {"limit_indices", limit}, {"strides", ones}});
        ST back = emit_op1(EVOXC_TOP("flip"), {head}, {{"axes", Ints{axis}}});
        Shape lim2 = back.shape();
        lim2[ax] = n;
        back = emit_op1(EVOXC_TOP("slice"), {back},
                        {{"start_indices", start}, {"limit_indices", lim2}, {"strides", ones}});
        r[k] = emit_op1(EVOXC_TOP("flip"), {back}, {{"axes", Ints{axis}}});
      }
      r[k] = as_type(r[k], t);
    }
    off = off + n;
  }
  return r;
}

// ---------------------------------------------------------------- pad

bool pad_constant(const Operation& op) { return op.num_operands() == 2; }

Ints pad_interior(const Operation& op) {
  if (op.attributes().count("interior")) return attr_ints(op, "interior");
  return Ints(op.operand(0)->type().rank(), 0);
}

// The positions of a constant-mode pad's result that hold the padding value: the same pad of an
// all-false tensor by true.
ST pad_fill_mask(const Operation& op) {
  const TensorType& xt = op.operand(0)->type();
  ST f = zeros(TensorType(DType::Bool, xt.shape));
  return emit_op1(EVOXC_TOP("pad"), {f, scalar_like(1.0, DType::Bool)}, op.attributes());
}

// The batch axis gets no padding. A batched padding value (one per batch element) cannot be an
// operand of one pad: x is padded with zero and the padded positions then select the value.
std::vector<BatchArg> batch_pad(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  AttrMap a = op.attributes();
  a["low"] = with_front(0, attr_ints(op, "low"));
  a["high"] = with_front(0, attr_ints(op, "high"));
  a["interior"] = with_front(0, pad_interior(op));
  ST x = ctx.materialize(args[0]);
  if (!pad_constant(op)) return batched(emit_op1(EVOXC_TOP("pad"), {x}, a));
  if (!args[1].batched) return batched(emit_op1(EVOXC_TOP("pad"), {x, args[1].v}, a));
  ST padded = emit_op1(EVOXC_TOP("pad"), {x, scalar_like(0.0, x.dtype())}, a);
  const Shape& out = padded.shape();
  Ints inner(out.rank() - 1);
  std::iota(inner.begin(), inner.end(), 1);
  ST mask = bcast(pad_fill_mask(op), out, inner);
  ST value = bcast(args[1].v, out, {0});
  return batched(emit_op1(EVOXC_TOP("select"), {mask, value, padded}));
}

// Constant mode is jointly linear in x and the value (pad(tx, tv)); the other modes read x only.
// Both: the op over the tangents (linear_jvp).

// Constant mode (JAX's _pad_transpose): undo the edge padding (a pad by -low, -high, which also
// restores cropped elements as zeros), then take every (interior + 1)-th element; the value's
// cotangent is the sum over the padded positions. Other modes: an index-map scatter.
std::vector<ST> transpose_pad(TransposeContext&, const Operation& op, std::span<const ST>, const std::vector<bool>& lin,
                              std::span<const ST> cts) {
  std::vector<ST> r = ct_list(op);
  const ST& ct = cts[0];
  const TensorType& xt = op.operand(0)->type();
  if (!pad_constant(op)) {
    r[0] = transpose_index_map(op, ct);
    return r;
  }
  if (lin[0]) {
    Ints low = attr_ints(op, "low"), high = attr_ints(op, "high"), interior = pad_interior(op);
    Ints nlow, nhigh, zero(low.size(), 0), step;
    for (size_t i = 0; i < low.size(); ++i) {
      nlow.push_back(-low[i]);
      nhigh.push_back(-high[i]);
      step.push_back(interior[i] + 1);
    }
    ST un = ct;
    if (std::any_of(low.begin(), low.end(), [](int64_t v) { return v != 0; }) ||
        std::any_of(high.begin(), high.end(), [](int64_t v) { return v != 0; }))
      un = emit_op1(EVOXC_TOP("pad"), {ct, scalar_like(0.0, ct.dtype())},
                    {{"low", nlow}, {"high", nhigh}, {"interior", zero}, {"mode", std::string("constant")}});
    if (std::any_of(interior.begin(), interior.end(), [](int64_t v) { return v != 0; }))
      un = emit_op1(EVOXC_TOP("slice"), {un},
                    {{"start_indices", zero}, {"limit_indices", un.shape()}, {"strides", step}});
    r[0] = as_type(un, xt);
  }
  if (lin[1]) {
    ST picked = emit_op1(EVOXC_TOP("select"), {pad_fill_mask(op), ct, zeros(ct.type())});
    Ints all(ct.rank());
    std::iota(all.begin(), all.end(), 0);
    r[1] = reduce_sum_keep(picked, all);
  }
  return r;
}

// ---------------------------------------------------------------- diagonal

std::vector<BatchArg> batch_diagonal(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  AttrMap a = op.attributes();
  a["axis1"] = attr_int(op, "axis1") + 1;
  a["axis2"] = attr_int(op, "axis2") + 1;
  return batch_with(op, args, std::move(a));
}

// Puts the diagonal back onto zeros: the cotangent's last axis (diagonal element k) is padded to
// axis1's extent so that element i on axis1 holds diagonal element i - max(-offset, 0), broadcast
// along axis2, and kept where j - i == offset (an iota mask).
ST transpose_diagonal(const Operation& op, const ST& ct) {
  const Shape& s = op.operand(0)->type().shape;
  int64_t offset = attr_int(op, "offset");
  auto a1 = static_cast<size_t>(attr_int(op, "axis1")), a2 = static_cast<size_t>(attr_int(op, "axis2"));
  size_t rank = s.rank(), last = ct.rank() - 1;
  const DimExpr& n1 = s[a1];
  int64_t c1 = std::max<int64_t>(-offset, 0);
  Ints low(ct.rank(), 0), interior(ct.rank(), 0);
  low[last] = c1;
  std::vector<DimExpr> high(ct.rank(), DimExpr(0));
  high[last] = n1 - ct.shape()[last] - DimExpr(c1);
  ST p = zero_pad(ct, low, high, interior);
  Shape ps = ct.shape();
  ps[last] = n1;
  p = reshape_to(p, ps);
  Ints dims;
  for (size_t i = 0; i < rank; ++i)
    if (i != a1 && i != a2) dims.push_back(static_cast<int64_t>(i));
  dims.push_back(static_cast<int64_t>(a1));
  // broadcast_dimensions must increase: order the operand's axes as they appear in the result.
  Ints order(dims.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t x, int64_t y) { return dims[static_cast<size_t>(x)] < dims[static_cast<size_t>(y)]; });
  Ints sorted_dims;
  for (int64_t o : order) sorted_dims.push_back(dims[static_cast<size_t>(o)]);
  if (!std::is_sorted(order.begin(), order.end())) p = emit_op1(EVOXC_TOP("transpose"), {p}, {{"permutation", order}});
  ST g = bcast(p, s, sorted_dims);
  size_t lo = std::min(a1, a2), hi = std::max(a1, a2);
  Shape ms{s[lo], s[hi]};
  auto iota2 = [&](int64_t d) {
    return emit_op1(EVOXC_TOP("iota"), {}, {{"shape", ms}, {"dimension", d}, {"dtype", kIndexType}});
  };
  ST i = iota2(a1 < a2 ? 0 : 1), j = iota2(a1 < a2 ? 1 : 0);
  ST diff = emit_op1(EVOXC_TOP("subtract"), {j, i});
  ST on = emit_op1(EVOXC_TOP("equal"), {diff, bcast(scalar_like(static_cast<double>(offset), kIndexType), ms, {})});
  ST mask = bcast(on, s, {static_cast<int64_t>(lo), static_cast<int64_t>(hi)});
  return emit_op1(EVOXC_TOP("select"), {mask, g, zeros(TensorType(ct.dtype(), s))});
}

// ---------------------------------------------------------------- roll, tile, repeat

ST transpose_roll(const Operation& op, const ST& ct) {
  Ints shifts = attr_ints(op, "shifts");
  for (int64_t& s : shifts) s = -s;
  AttrMap a = op.attributes();
  a["shifts"] = shifts;
  return emit_like(op, std::vector<ST>{ct}, a)[0];
}

std::vector<BatchArg> batch_tile(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  AttrMap a = op.attributes();
  a["reps"] = with_front(1, attr_ints(op, "reps"));
  return batch_with(op, args, std::move(a));
}

// Result axis i is reps[i] copies of operand axis i one after another: split it into (reps, n) and
// sum over the copies.
ST transpose_tile(const Operation& op, const ST& ct) {
  const Shape& in = op.operand(0)->type().shape;
  Ints reps = attr_ints(op, "reps"), sum_axes;
  std::vector<DimExpr> split;
  for (size_t i = 0; i < in.rank(); ++i) {
    if (reps[i] != 1) {
      sum_axes.push_back(static_cast<int64_t>(split.size()));
      split.emplace_back(reps[i]);
    }
    split.push_back(in[i]);
  }
  if (sum_axes.empty()) return ct;
  return reduce_sum_keep(reshape_to(ct, Shape(std::move(split))), sum_axes);
}

// One count r: element i of the axis becomes r copies in a row, so split the axis into (n, r) and
// sum over the copies. A count per element: an index-map scatter.
ST transpose_repeat(const Operation& op, const ST& ct) {
  Ints reps = attr_ints(op, "repeats");
  if (reps.size() != 1) return transpose_index_map(op, ct);
  const Shape& in = op.operand(0)->type().shape;
  auto axis = static_cast<size_t>(attr_int(op, "axis"));
  if (reps[0] == 1) return ct;
  std::vector<DimExpr> split(in.begin(), in.end());
  split.insert(split.begin() + static_cast<std::ptrdiff_t>(axis) + 1, DimExpr(reps[0]));
  return reduce_sum_keep(reshape_to(ct, Shape(std::move(split))), {static_cast<int64_t>(axis) + 1});
}

// ---------------------------------------------------------------- installers

ST same_op(const Operation& op, const ST& ct) { return emit_like(op, std::vector<ST>{ct})[0]; }

void install_batching(BatchTable& b) {
  b.set("reshape", batch_reshape);
  b.set("transpose", batch_transpose);
  b.set("broadcast_in_dim", batch_broadcast_in_dim);
  b.set("expand_dims", batch_axes_attrs({"axes"}));
  b.set("squeeze", batch_axes_attrs({"axes"}));
  b.set("slice", batch_slice);
  b.set("concatenate", batch_concatenate);
  b.set("pad", batch_pad);
  // tril/triu act on the last two axes, one_hot appends its class axis: a leading batch axis is
  // one more leading axis to them.
  b.set("tril", batch_same);
  b.set("triu", batch_same);
  b.set("one_hot", batch_same);
  b.set("diagonal", batch_diagonal);
  b.set("flip", batch_axes_attrs({"axes"}));
  b.set("roll", batch_axes_attrs({"axes"}));
  b.set("tile", batch_tile);
  // repeat's counts (one, or one per element of the static axis) are unchanged by the move.
  b.set("repeat", [](BatchContext&, const Operation& op, std::span<const BatchArg> args) {
    AttrMap a = op.attributes();
    a["axis"] = attr_int(op, "axis") + 1;
    return batch_with(op, args, std::move(a));
  });
}

void install_transposes(TransposeTable& t) {
  t.set("reshape",
        unary_transpose([](const Operation& op, const ST& ct) { return reshape_to(ct, op.operand(0)->type().shape); }));
  t.set("transpose", unary_transpose(transpose_transpose));
  t.set("broadcast_in_dim", unary_transpose(transpose_broadcast_in_dim));
  t.set("expand_dims", unary_transpose([](const Operation& op, const ST& ct) {
          return emit_op1(EVOXC_TOP("squeeze"), {ct}, {{"axes", attr_ints(op, "axes")}});
        }));
  t.set("squeeze", unary_transpose([](const Operation& op, const ST& ct) {
          return emit_op1(EVOXC_TOP("expand_dims"), {ct}, {{"axes", attr_ints(op, "axes")}});
        }));
  t.set("slice", unary_transpose(transpose_slice));
  t.set("concatenate", transpose_concatenate);
  t.set("pad", transpose_pad);
  // tril/triu zero a fixed set of positions: a diagonal 0/1 map, its own transpose; flip is an
  // involution (a symmetric permutation).
  t.set("tril", unary_transpose(same_op));
  t.set("triu", unary_transpose(same_op));
  t.set("flip", unary_transpose(same_op));
  t.set("diagonal", unary_transpose(transpose_diagonal));
  t.set("roll", unary_transpose(transpose_roll));
  t.set("tile", unary_transpose(transpose_tile));
  t.set("repeat", unary_transpose(transpose_repeat));
}

}  // namespace

void install_structure_rules(RuleTables& t) {
  install_batching(t.batch);
  for (const char* op : {"reshape", "transpose", "broadcast_in_dim", "expand_dims", "squeeze", "slice", "concatenate",
                         "pad", "tril", "triu", "diagonal", "flip", "roll", "tile", "repeat"})
    t.jvp.set(op, linear_jvp);
  // one_hot reads integer indices: no tangent reaches it, and its float result is piecewise
  // constant in them; the entry gives the zero tangent so coverage is complete.
  t.jvp.set("one_hot", zero_jvp);
  install_transposes(t.transpose);
}

}  // namespace evoxc::transforms
