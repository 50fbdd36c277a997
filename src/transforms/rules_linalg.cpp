// Transform rules of the linear-algebra products: dot, dot_general, conv, trace, norm and matrix_rank.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "evoxc/trace/layout.h"
#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

using ST = SymbolicTensor;
using Ints = std::vector<int64_t>;

std::vector<ST> ct_list(const Operation& op) { return std::vector<ST>(op.num_operands()); }

Ints iota_ints(int64_t begin, int64_t end) {
  Ints v;
  for (int64_t i = begin; i < end; ++i) v.push_back(i);
  return v;
}

Ints argsort(const Ints& v) {
  Ints idx = iota_ints(0, static_cast<int64_t>(v.size()));
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return v[size_t(a)] < v[size_t(b)]; });
  return idx;
}

Ints cat_ints(Ints a, const Ints& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

ST permute(const ST& x, const Ints& perm) {
  if (perm == iota_ints(0, static_cast<int64_t>(perm.size()))) return x;
  return transpose(x, perm);
}

// x with its last two axes swapped.
ST swap_last2(const ST& x) {
  auto r = static_cast<int64_t>(x.rank());
  Ints perm = iota_ints(0, r);
  std::swap(perm[size_t(r - 1)], perm[size_t(r - 2)]);
  return transpose(x, perm);
}

Shape shape_of(std::vector<DimExpr> dims) { return Shape(std::move(dims)); }

// The integer extent `d`, or a TransformError saying which rule needs it static.
int64_t static_extent(const DimExpr& d, const std::string& what) {
  if (!d.is_const())
    throw TransformError(what + " needs a static extent here, got " + d.to_string() +
                         "; bind the symbolic extent before transforming");
  return d.value();
}

// ---------------------------------------------------------------- dot_general

struct DotDims {
  Ints lc, rc, lb, rb;
};

DotDims dot_dims(const Operation& op) {
  return {attr_ints(op, "lhs_contracting_dims"), attr_ints(op, "rhs_contracting_dims"), attr_ints(op, "lhs_batch_dims"),
          attr_ints(op, "rhs_batch_dims")};
}

ST dot_general_op(const ST& a, const ST& b, const DotDims& d) {
  return emit_op1(EVOXC_TOP("dot_general"), {a, b},
                  {{"lhs_contracting_dims", d.lc},
                   {"rhs_contracting_dims", d.rc},
                   {"lhs_batch_dims", d.lb},
                   {"rhs_batch_dims", d.rb}});
}

Ints shifted(Ints v) {
  for (int64_t& x : v) ++x;
  return v;
}

// The axes of a rank-`rank` operand that are neither contracted nor batch (its free axes), in order.
Ints free_axes(size_t rank, const Ints& contracting, const Ints& batch) {
  Ints out;
  for (int64_t i = 0; i < static_cast<int64_t>(rank); ++i)
    if (std::find(contracting.begin(), contracting.end(), i) == contracting.end() &&
        std::find(batch.begin(), batch.end(), i) == batch.end())
      out.push_back(i);
  return out;
}

// Both batched: the vmap axis is one more batch dimension (leading, so the result has it at 0).
// One batched: the vmap axis is a free dimension of that operand, moved to 0 in the result.
std::vector<BatchArg> batch_dot_general(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  DotDims d = dot_dims(op);
  const BatchArg &a = args[0], &b = args[1];
  if (a.batched) d.lc = shifted(d.lc), d.lb = shifted(d.lb);
  if (b.batched) d.rc = shifted(d.rc), d.rb = shifted(d.rb);
  if (a.batched && b.batched) {
    d.lb.insert(d.lb.begin(), 0);
    d.rb.insert(d.rb.begin(), 0);
    return {{dot_general_op(a.v, b.v, d), true}};
  }
  ST r = dot_general_op(a.v, b.v, d);
  // The result is (batch, lhs free, rhs free); axis 0 of the batched operand is its first free axis.
  size_t pos = d.lb.size();
  if (!a.batched) pos += op.operand(0)->type().rank() - d.lb.size() - d.lc.size();
  return {{moveaxis(r, static_cast<int64_t>(pos), 0), true}};
}

// JAX's _dot_general_transpose_lhs: the cotangent of x (rank x_rank) from the result cotangent g and
// the other operand y. `swap_ans`: the result has y's free axes before x's (the rhs transpose).
ST dot_general_ct_lhs(const ST& g, const ST& y, size_t x_rank, const DotDims& d, bool swap_ans) {
  Ints x_kept = free_axes(x_rank, d.lc, d.lb);
  Ints y_kept = free_axes(y.rank(), d.rc, d.rb);
  auto nb = static_cast<int64_t>(d.lb.size());
  auto nx = static_cast<int64_t>(x_kept.size()), ny = static_cast<int64_t>(y_kept.size());
  Ints ans_batch = iota_ints(0, nb);
  Ints ans_y = swap_ans ? iota_ints(nb, nb + ny) : iota_ints(nb + nx, nb + nx + ny);
  ST r = dot_general_op(g, y, DotDims{ans_y, y_kept, ans_batch, d.rb});
  // r is (batch, x kept, y's contracting axes in y's order) = x's batch, kept and contracting axes
  // (the latter sorted by their y partners); permute back to x's axis order.
  Ints order = d.lb;
  order.insert(order.end(), x_kept.begin(), x_kept.end());
  for (int64_t i : argsort(d.rc)) order.push_back(d.lc[size_t(i)]);
  return permute(r, argsort(order));
}

std::vector<ST> transpose_dot_general(TransposeContext&, const Operation& op, std::span<const ST> vals,
                                      const std::vector<bool>& lin, std::span<const ST> cts) {
  std::vector<ST> r = ct_list(op);
  DotDims d = dot_dims(op);
  if (lin[0]) r[0] = dot_general_ct_lhs(cts[0], vals[1], op.operand(0)->type().rank(), d, false);
  if (lin[1])
    r[1] = dot_general_ct_lhs(cts[0], vals[0], op.operand(1)->type().rank(), DotDims{d.rc, d.lc, d.rb, d.lb}, true);
  return r;
}

// ---------------------------------------------------------------- dot (numpy matmul)

// The batched operands become stacks of matrices with the result's batch rank after the vmap axis
// (a 1-D operand gains the unit dim matmul would give it, removed again afterwards); numpy
// broadcasting then lines the vmap axis up and leaves the unbatched operand as it was.
std::vector<BatchArg> batch_dot(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  size_t ra = op.operand(0)->type().rank(), rb = op.operand(1)->type().rank();
  size_t batch_rank = std::max(ra >= 2 ? ra - 2 : 0, rb >= 2 ? rb - 2 : 0);
  bool a_vec = args[0].batched && ra == 1, b_vec = args[1].batched && rb == 1;
  auto as_stack = [&](const BatchArg& x, size_t r, bool is_lhs) {
    ST v = x.v;
    if (!x.batched) return v;
    if (r == 1) v = expand_dims(v, is_lhs ? 1 : 2);
    size_t units = batch_rank + 2 - std::max<size_t>(r, 2);
    if (units > 0) v = expand_dims(v, Axes(iota_ints(1, 1 + static_cast<int64_t>(units))));
    return v;
  };
  ST a = as_stack(args[0], ra, true), b = as_stack(args[1], rb, false);
  ST y = emit_like(op, std::vector<ST>{a, b})[0];
  // Drop the unit dims the 1-D batched operands gained: (..., n, m) with n of a, m of b.
  auto rr = static_cast<int64_t>(y.rank());
  bool has_m = b.rank() >= 2;
  Ints drop;
  if (a_vec) drop.push_back(has_m ? rr - 2 : rr - 1);
  if (b_vec) drop.push_back(rr - 1);
  if (!drop.empty()) y = squeeze(y, Axes(drop));
  return {{y, true}};
}

// dot's transposes on matrix stacks: ct_a = ct . b^T and ct_b = a^T . ct, summed over the batch
// dims broadcasting added, with 1-D operands viewed as (1, k) and (k, 1).
std::vector<ST> transpose_dot(TransposeContext&, const Operation& op, std::span<const ST> vals,
                              const std::vector<bool>& lin, std::span<const ST> cts) {
  std::vector<ST> r = ct_list(op);
  const TensorType &ta = op.operand(0)->type(), &tb = op.operand(1)->type();
  size_t ra = ta.rank(), rb = tb.rank();
  ST ct = cts[0];
  if (ra == 1) ct = expand_dims(ct, static_cast<int64_t>(ct.rank()) - (rb >= 2 ? 1 : 0));
  if (rb == 1) ct = expand_dims(ct, static_cast<int64_t>(ct.rank()));
  auto mat_type = [](const TensorType& t, bool lhs) {
    if (t.rank() != 1) return t;
    return TensorType(t.dtype, lhs ? Shape{DimExpr(1), t.shape[0]} : Shape{t.shape[0], DimExpr(1)});
  };
  auto back = [](const ST& m, const TensorType& t) { return m.shape() == t.shape ? m : reshape(m, t.shape); };
  if (lin[0]) {
    ST b = rb == 1 ? expand_dims(vals[1], 1) : vals[1];
    ST ga = emit_like(op, std::vector<ST>{ct, swap_last2(b)})[0];
    r[0] = back(unbroadcast(ga, mat_type(ta, true)), ta);
  }
  if (lin[1]) {
    ST a = ra == 1 ? expand_dims(vals[0], 0) : vals[0];
    ST gb = emit_like(op, std::vector<ST>{swap_last2(a), ct})[0];
    r[1] = back(unbroadcast(gb, mat_type(tb, false)), tb);
  }
  return r;
}

// ---------------------------------------------------------------- conv

struct ConvAttrs {
  Ints strides, padding, ldil, rdil;
  int64_t groups = 1;
};

ConvAttrs conv_attrs(const Operation& op) {
  return {attr_ints(op, "window_strides"), attr_ints(op, "padding"), attr_ints(op, "lhs_dilation"),
          attr_ints(op, "rhs_dilation"), attr_int(op, "feature_group_count")};
}

ST conv_op(const ST& x, const ST& w, const ConvAttrs& c) {
  return emit_op1(EVOXC_TOP("conv"), {x, w},
                  {{"window_strides", c.strides},
                   {"padding", c.padding},
                   {"lhs_dilation", c.ldil},
                   {"rhs_dilation", c.rdil},
                   {"feature_group_count", c.groups}});
}

// Dims of `s` from `begin` on.
std::vector<DimExpr> tail(const Shape& s, size_t begin) {
  return std::vector<DimExpr>(s.dims().begin() + static_cast<std::ptrdiff_t>(begin), s.dims().end());
}
std::vector<DimExpr> cat(std::vector<DimExpr> a, const std::vector<DimExpr>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Patches of x (B, N, C, S...) for the window of a kernel with static spatial extents `window`:
// (B, N, C, K, T...) with K = prod(window), element k the input each output position sees through
// kernel element k. A conv with a one-hot kernel per k and x's window attributes computes them in
// one op (a non-finite input then spreads NaN, 0 * inf, across its windows' patches).
ST conv_patches(const ST& x, const std::vector<int64_t>& window, const ConvAttrs& c) {
  const Shape& xs = x.shape();
  int64_t k = 1;
  for (int64_t e : window) k *= e;
  ST rows = iota(Shape{k, k}, 0), cols = iota(Shape{k, k}, 1);
  std::vector<DimExpr> eye_dims{DimExpr(k), DimExpr(1)};
  for (int64_t e : window) eye_dims.emplace_back(e);
  ST eye = reshape(convert(equal(rows, cols), x.dtype()), shape_of(eye_dims));
  ST flat = reshape(x, shape_of(cat({xs[0] * xs[1] * xs[2], DimExpr(1)}, tail(xs, 3))));
  ConvAttrs one = c;
  one.groups = 1;
  ST p = conv_op(flat, eye, one);  // (B N C, K, T...)
  return reshape(p, shape_of(cat({xs[0], xs[1], xs[2], DimExpr(k)}, tail(p.shape(), 2))));
}

// Batching (JAX's rule): a batched lhs alone folds the vmap axis into N; a batched rhs folds it into
// the output features, with feature_group_count = B * groups when the lhs is batched too. Grouped
// folds need a static batch extent (the op's group count is an attribute); with a symbolic one the
// rule contracts patches of the input with the kernels in a dot_general batched over B.
std::vector<BatchArg> batch_conv(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  ConvAttrs c = conv_attrs(op);
  const BatchArg &x = args[0], &w = args[1];
  const DimExpr& bsz = ctx.size();
  const Shape &xs = op.operand(0)->type().shape, &ws = op.operand(1)->type().shape;
  const Shape& ys = op.result(0)->type().shape;
  size_t n = xs.rank() - 2;
  const int64_t g = c.groups;
  auto out_shape = [&]() { return shape_of(cat({bsz}, ys.dims())); };
  if (!w.batched) {
    ST xf = reshape(x.v, shape_of(cat({bsz * xs[0]}, tail(xs, 1))));
    return {{reshape(conv_op(xf, w.v, c), out_shape()), true}};
  }
  const DimExpr &big_n = xs[0], &o = ws[0], &cg = ws[1];
  std::vector<DimExpr> t_dims = tail(ys, 2), k_dims = tail(ws, 2);
  if (!x.batched && g == 1) {
    ST wf = reshape(w.v, shape_of(cat({bsz * o}, tail(ws, 1))));
    ST y = conv_op(x.v, wf, c);  // (N, B O, T...)
    y = reshape(y, shape_of(cat({big_n, bsz, o}, t_dims)));
    return {{moveaxis(y, 1, 0), true}};
  }
  bool static_o = o.is_const();
  if (bsz.is_const() && static_o) {
    int64_t b = bsz.value(), og = o.value() / g;
    if (!x.batched) {
      // Output features ordered (group, batch, feature in group), so each kernel stays in its group.
      ST w5 = reshape(w.v, shape_of(cat({bsz, DimExpr(g), DimExpr(og), cg}, k_dims)));
      Ints perm{1, 0};
      for (int64_t i = 2; i < static_cast<int64_t>(n) + 4; ++i) perm.push_back(i);
      ST wf = reshape(transpose(w5, perm), shape_of(cat({DimExpr(b * o.value()), cg}, k_dims)));
      ST y = conv_op(x.v, wf, c);  // (N, g B O/g, T...)
      y = reshape(y, shape_of(cat({big_n, DimExpr(g), bsz, DimExpr(og)}, t_dims)));
      Ints p2{2, 0, 1, 3};
      for (int64_t i = 4; i < static_cast<int64_t>(n) + 4; ++i) p2.push_back(i);
      return {{reshape(transpose(y, p2), out_shape()), true}};
    }
    // Both batched: the batch elements are feature groups of one conv over (N, B C, S...).
    ST xf = reshape(moveaxis(x.v, 0, 1), shape_of(cat({big_n, bsz * xs[1]}, tail(xs, 2))));
    ST wf = reshape(w.v, shape_of(cat({DimExpr(b * o.value())}, tail(ws, 1))));
    ConvAttrs cb = c;
    cb.groups = b * g;
    ST y = conv_op(xf, wf, cb);  // (N, B O, T...)
    y = reshape(y, shape_of(cat({big_n, bsz, o}, t_dims)));
    return {{moveaxis(y, 1, 0), true}};
  }
  std::vector<int64_t> window;
  for (const DimExpr& e : k_dims) window.push_back(static_extent(e, "vmap of evoxc.conv with a batched kernel"));
  int64_t k = 1;
  for (int64_t e : window) k *= e;
  ST p = conv_patches(ctx.materialize(x), window, c);  // (B, N, C, K, T...)
  p = reshape(p, shape_of(cat({bsz, big_n, DimExpr(g), cg, DimExpr(k)}, t_dims)));
  DimExpr og = g == 1 ? o : DimExpr(o.value() / g);  // inference keeps O static when g > 1
  ST wr = reshape(w.v, shape_of({bsz, DimExpr(g), og, cg, DimExpr(k)}));
  ST y = dot_general_op(p, wr, DotDims{{3, 4}, {3, 4}, {0, 2}, {0, 1}});  // (B, g, N, T..., O/g)
  auto nn = static_cast<int64_t>(n);
  Ints perm{0, 2, 1, 3 + nn};
  for (int64_t i = 3; i < 3 + nn; ++i) perm.push_back(i);
  return {{reshape(transpose(y, perm), out_shape()), true}};
}

// XLA's dilated extent.
int64_t dilated(int64_t e, int64_t d) { return e == 0 ? 0 : (e - 1) * d + 1; }

struct ConvExtents {
  std::vector<int64_t> in, window, out;
  bool empty_out = false;
};

ConvExtents conv_extents(const Operation& op) {
  const Shape &xs = op.operand(0)->type().shape, &ws = op.operand(1)->type().shape;
  const Shape& ys = op.result(0)->type().shape;
  ConvExtents e;
  const std::string what = "transpose of evoxc.conv (its padding arithmetic)";
  for (size_t i = 2; i < xs.rank(); ++i) {
    e.in.push_back(static_extent(xs[i], what));
    e.window.push_back(static_extent(ws[i], what));
    e.out.push_back(static_extent(ys[i], what));
    e.empty_out = e.empty_out || e.out.back() == 0;
  }
  return e;
}

// JAX's conv transposes (_conv_general_dilated_transpose_lhs/_rhs) in the fixed NCH/OIH layout.
// lhs: the cotangent convolved with the spatially flipped kernel, its features swapped (per group),
// strides and lhs dilation exchanged. rhs: the input convolved with the cotangent as the kernel, N
// as the contracted feature axis; groups become feature groups over (group, N).
std::vector<ST> transpose_conv(TransposeContext&, const Operation& op, std::span<const ST> vals,
                               const std::vector<bool>& lin, std::span<const ST> cts) {
  std::vector<ST> r = ct_list(op);
  ConvAttrs c = conv_attrs(op);
  ConvExtents e = conv_extents(op);
  const TensorType &xt = op.operand(0)->type(), &wt = op.operand(1)->type();
  size_t n = e.in.size();
  const int64_t g = c.groups;
  const ST& ct = cts[0];
  Ints spatial = iota_ints(2, 2 + static_cast<int64_t>(n));
  if (e.empty_out) {
    // No output: nothing flows back (and the transposed convs would have empty windows).
    for (size_t i = 0; i < 2; ++i)
      if (lin[i]) r[i] = zeros(op.operand(i)->type());
    return r;
  }
  const Shape& ws = wt.shape;
  if (lin[0]) {
    ConvAttrs t;
    t.strides = c.ldil;
    t.ldil = c.strides;
    t.rdil = c.rdil;
    t.groups = g;
    for (size_t i = 0; i < n; ++i) {
      int64_t kd = dilated(e.window[i], c.rdil[i]);
      int64_t before = kd - c.padding[2 * i] - 1;
      int64_t after = dilated(e.in[i], c.ldil[i]) + kd - 1 - dilated(e.out[i], c.strides[i]) - before;
      t.padding.push_back(before);
      t.padding.push_back(after);
    }
    ST w = vals[1];
    if (g == 1) {
      w = transpose(w, cat_ints({1, 0}, spatial));
    } else {
      int64_t o = static_extent(ws[0], "transpose of a grouped evoxc.conv");
      ST w5 = reshape(w, shape_of(cat({DimExpr(g), DimExpr(o / g), ws[1]}, tail(ws, 2))));
      Ints perm{0, 2, 1};
      for (int64_t i = 3; i < 3 + static_cast<int64_t>(n); ++i) perm.push_back(i);
      w = reshape(transpose(w5, perm), shape_of(cat({DimExpr(g) * ws[1], DimExpr(o / g)}, tail(ws, 2))));
    }
    w = flip(w, Axes(spatial));
    r[0] = conv_op(ct, w, t);
  }
  if (lin[1]) {
    ConvAttrs t;
    t.strides = c.rdil;
    t.ldil = c.ldil;
    t.rdil = c.strides;
    t.groups = g;
    for (size_t i = 0; i < n; ++i) {
      int64_t lo = c.padding[2 * i];
      int64_t hi =
          dilated(e.out[i], c.strides[i]) - dilated(e.in[i], c.ldil[i]) + dilated(e.window[i], c.rdil[i]) - lo - 1;
      t.padding.push_back(lo);
      t.padding.push_back(hi);
    }
    const Shape& xs = xt.shape;
    // x (N, C, S...) -> (C/g, g N, S...): features of one group side by side, grouped by g.
    ST x5 = reshape(vals[0], shape_of(cat({xs[0], DimExpr(g), ws[1]}, tail(xs, 2))));
    Ints perm{2, 1, 0};
    for (int64_t i = 3; i < 3 + static_cast<int64_t>(n); ++i) perm.push_back(i);
    ST xg = reshape(transpose(x5, perm), shape_of(cat({ws[1], DimExpr(g) * xs[0]}, tail(xs, 2))));
    ST kg = transpose(ct, cat_ints({1, 0}, spatial));  // (O, N, T...)
    ST dw = conv_op(xg, kg, t);                        // (C/g, O, K...)
    r[1] = transpose(dw, cat_ints({1, 0}, spatial));
  }
  return r;
}

// ---------------------------------------------------------------- trace

std::vector<BatchArg> batch_trace(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  AttrMap attrs = op.attributes();
  attrs["axis1"] = attr_int(op, "axis1") + 1;
  attrs["axis2"] = attr_int(op, "axis2") + 1;
  return {{emit_like(op, std::vector<ST>{args[0].v}, attrs)[0], true}};
}

// The cotangent spread over the offset diagonal of the axis1/axis2 planes, zeros elsewhere.
std::vector<ST> transpose_trace(TransposeContext&, const Operation& op, std::span<const ST>, const std::vector<bool>&,
                                std::span<const ST> cts) {
  std::vector<ST> r = ct_list(op);
  const TensorType& xt = op.operand(0)->type();
  int64_t a1 = attr_int(op, "axis1"), a2 = attr_int(op, "axis2"), off = attr_int(op, "offset");
  Ints kept;
  for (int64_t i = 0; i < static_cast<int64_t>(xt.rank()); ++i)
    if (i != a1 && i != a2) kept.push_back(i);
  // The plane in increasing axis order (broadcast_in_dim keeps the order): the diagonal is where
  // the axis2 index minus the axis1 index is the offset.
  int64_t lo = std::min(a1, a2), hi = std::max(a1, a2);
  Shape plane{xt.shape[size_t(lo)], xt.shape[size_t(hi)]};
  int64_t d1 = a1 < a2 ? 0 : 1;
  ST on_diag = equal(iota(plane, d1) + off, iota(plane, 1 - d1));
  ST mask = broadcast_in_dim(on_diag, xt.shape, {lo, hi});
  ST spread = broadcast_in_dim(cts[0], xt.shape, kept);
  r[0] = select(mask, spread, zeros(xt));
  return r;
}

// ---------------------------------------------------------------- norm, matrix_rank

// Both reduce the trailing (one or two) axes, so the vmap axis at 0 passes through.
std::vector<BatchArg> batch_trailing(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  std::vector<ST> outs = emit_like(op, std::vector<ST>{args[0].v});
  std::vector<BatchArg> r;
  for (const ST& o : outs) r.push_back({o, true});
  return r;
}

// Index `first ? 0 : last` of `axis`, kept as a unit axis (moved to the front to slice, so the
// other extents may be symbolic).
ST take_end(const ST& x, int64_t axis, bool first) {
  ST v = moveaxis(x, axis, 0);
  if (!first) v = flip(v, Axes(Ints{0}));
  v = slice(v, {0}, {1});
  return moveaxis(v, 0, axis);
}

// The reduced SVD's u and vh.
std::pair<ST, ST> svd_uv(const ST& x) {
  std::vector<ST> usv = emit_op(EVOXC_TOP("svd"), std::vector<ST>{x}, {{"full_matrices", false}, {"compute_uv", true}});
  return {usv[0], usv[2]};
}

// 1/count on the entries of `v` equal to its max (or min) over `axis`, 0 elsewhere: ties share the
// derivative evenly (JAX's convention for reduce_max). The extreme is taken from `v` itself, not
// from the norm's result, which the kernel accumulates in another order and precision.
ST tie_weights(const ST& v, int64_t axis, bool take_max) {
  ST ext = take_max ? max(v, Axes(Ints{axis}), true) : min(v, Axes(Ints{axis}), true);
  ST hit = equal(v, ext);
  ST h = convert(hit, v.dtype());
  ST cnt = reduce_sum_keep(h, {axis}, true);
  return select(hit, reciprocal(cnt), zeros_like(h));
}

// dy/dx for norm's result y as a tensor W of x's shape: the tangent is sum(t * W) over the reduced
// axes. Undefined where the derivative is zero everywhere (the count "norm" p = 0).
// Conventions at the points without a derivative: 0 where y == 0 (fro, p-norms), sign(0) = 0 for
// the 1-norm terms, 0 at x_i == 0 for p < 1, ties of max/min split evenly, and the SVD's own
// singular vectors for "2", "-2" and "nuc" (a repeated or zero singular value makes them arbitrary).
ST norm_direction(const Operation& op, const ST& x, const ST& y) {
  const std::string& ord = evoxc::attr_string(op.attributes(), "ord", op.name());
  auto r = static_cast<int64_t>(x.rank());
  ST zero = zeros_like(x);
  if (ord == "vector") {
    double p = evoxc::attr_float(op.attributes(), "p", op.name());
    if (p == 0) return ST();
    ST ye = expand_dims(y, r - 1);
    if (p == 1) return sign(x);
    if (std::isinf(p)) return sign(x) * tie_weights(abs(x), r - 1, p > 0);
    if (p == 2) return select(equal(ye, 0.0), zero, x / ye);
    ST singular = logical_or(equal(x, 0.0), equal(ye, 0.0));
    ST safe_y = select(equal(ye, 0.0), ones_like(ye), ye);
    return select(singular, zero, sign(x) * power(abs(x) / safe_y, p - 1.0));
  }
  ST ye = expand_dims(y, Axes(Ints{r - 2, r - 1}));
  if (ord == "fro") return select(equal(ye, 0.0), zero, x / ye);
  if (ord == "nuc" || ord == "2" || ord == "-2") {
    auto [u, vh] = svd_uv(x);
    if (ord == "nuc") return emit_op1(EVOXC_TOP("dot"), {u, vh});
    bool top = ord == "2";
    return take_end(u, r - 1, top) * take_end(vh, r - 2, top);
  }
  // "1"/"-1": the max/min column abs-sum; "inf"/"-inf": the row abs-sum.
  bool cols = ord == "1" || ord == "-1";
  int64_t summed = cols ? r - 2 : r - 1, across = cols ? r - 1 : r - 2;
  ST sums = reduce_sum_keep(abs(x), {summed}, true);
  return sign(x) * tie_weights(sums, across, ord == "1" || ord == "inf");
}

JvpResult jvp_norm(JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  std::vector<ST> y = ctx.primal(op, p);
  const ST& x = p[0];
  auto r = static_cast<int64_t>(x.rank());
  int64_t reduced = y[0].rank() + 1 == x.rank() ? 1 : 2;
  for (int64_t i = r - reduced; i < r; ++i)
    if (x.shape()[size_t(i)].is_const() && x.shape()[size_t(i)].value() == 0)
      return JvpResult{y, {ST()}};  // an empty vector or matrix: the norm is the constant 0
  ST w = norm_direction(op, x, y[0]);
  if (!w.defined()) return JvpResult{y, {ST()}};
  // sum(t * w) over the reduced axes as one dot_general batched over the leading ones: linear in t,
  // and transposed by the rule above.
  Ints lead = iota_ints(0, r - reduced), red = iota_ints(r - reduced, r);
  return JvpResult{y, {dot_general_op(t[0], w, DotDims{red, red, lead, lead})}};
}

}  // namespace

void install_linalg_rules(RuleTables& t) {
  auto bilinear_jvp = [](JvpContext& ctx, const Operation& op, std::span<const ST> p, std::span<const ST> tg) {
    std::vector<ST> y = ctx.primal(op, p);
    ST out;
    if (tg[0].defined()) out = emit_like(op, std::vector<ST>{tg[0], p[1]})[0];
    if (tg[1].defined()) out = add_tangents(out, emit_like(op, std::vector<ST>{p[0], tg[1]})[0]);
    return JvpResult{y, {out}};
  };
  t.batch.set("dot", batch_dot);
  t.jvp.set("dot", bilinear_jvp);
  t.transpose.set("dot", transpose_dot);

  t.batch.set("dot_general", batch_dot_general);
  t.jvp.set("dot_general", bilinear_jvp);
  t.transpose.set("dot_general", transpose_dot_general);

  t.batch.set("conv", batch_conv);
  t.jvp.set("conv", bilinear_jvp);
  t.transpose.set("conv", transpose_conv);

  t.batch.set("trace", batch_trace);
  t.jvp.set("trace", linear_jvp);
  t.transpose.set("trace", transpose_trace);

  t.batch.set("norm", batch_trailing);
  t.jvp.set("norm", jvp_norm);

  t.batch.set("matrix_rank", batch_trailing);
  // An int64 result: no tangent flows (the driver never asks; the entry completes the coverage).
  t.jvp.set("matrix_rank", zero_jvp);
}

}  // namespace evoxc::transforms
