// Transform rules of the structure family: reshape, transpose, broadcast_in_dim, expand_dims, squeeze, slice and
// concatenate (the layout family is in rules_layout.cpp).
#include <algorithm>
#include <numeric>

#include "transforms/shape_rules.h"

namespace evoxc::transforms {

namespace {

using namespace shape_rules;  // NOLINT(google-build-using-namespace): the families' shared helpers

// `s` with the batch extent in front.
Shape with_batch(const DimExpr& b, const Shape& s) {
  std::vector<DimExpr> d{b};
  d.insert(d.end(), s.begin(), s.end());
  return Shape(std::move(d));
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

// ---------------------------------------------------------------- installers

void install_batching(BatchTable& b) {
  b.set("reshape", batch_reshape);
  b.set("transpose", batch_transpose);
  b.set("broadcast_in_dim", batch_broadcast_in_dim);
  b.set("expand_dims", batch_axes_attrs({"axes"}));
  b.set("squeeze", batch_axes_attrs({"axes"}));
  b.set("slice", batch_slice);
  b.set("concatenate", batch_concatenate);
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
}

}  // namespace

void install_structure_rules(RuleTables& t) {
  install_batching(t.batch);
  for (const char* op : {"reshape", "transpose", "broadcast_in_dim", "expand_dims", "squeeze", "slice", "concatenate"})
    t.jvp.set(op, linear_jvp);
  install_transposes(t.transpose);
}

}  // namespace evoxc::transforms
