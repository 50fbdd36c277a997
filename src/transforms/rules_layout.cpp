// Transform rules of the layout family (src/ops/layout.cpp): pad, tril, triu, diagonal, flip, roll, tile, repeat
// and one_hot. arange and linspace take no operands and need no rules.
#include <algorithm>
#include <numeric>

#include "transforms/shape_rules.h"

namespace evoxc::transforms {

namespace {

using namespace shape_rules;  // NOLINT(google-build-using-namespace): the families' shared helpers

// A batching rule for an op that acts on trailing axes only (the leading batch axis is one more
// leading axis to it): the same attributes.
std::vector<BatchArg> batch_same(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  return batch_with(op, args, op.attributes());
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

// The op again over the cotangent (an op that is its own transpose).
ST same_op(const Operation& op, const ST& ct) { return emit_like(op, std::vector<ST>{ct})[0]; }

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

void install_batching(BatchTable& b) {
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

void install_layout_rules(RuleTables& t) {
  install_batching(t.batch);
  for (const char* op : {"pad", "tril", "triu", "diagonal", "flip", "roll", "tile", "repeat"})
    t.jvp.set(op, linear_jvp);
  // one_hot reads integer indices: no tangent reaches it, and its float result is piecewise
  // constant in them; the entry gives the zero tangent so coverage is complete.
  t.jvp.set("one_hot", zero_jvp);
  install_transposes(t.transpose);
}

}  // namespace evoxc::transforms
