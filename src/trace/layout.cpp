// User functions of the conv and layout ops: numpy/XLA argument conventions resolved into static attributes.
#include "evoxc/trace/layout.h"

#include <algorithm>
#include <map>

#include "emit.h"
#include "evoxc/core/error.h"

namespace evoxc {

namespace {

TraceContext& ctx_of(const SymbolicTensor& x) {
  if (!x.defined()) throw TraceError("use of an undefined (default-constructed) SymbolicTensor");
  return *x.context();
}

SymbolicTensor as_tensor(const Operand& o, const char* fn, const char* what) {
  if (!o.is_tensor())
    throw TraceError(std::string(fn) + ": " + what + " must be a SymbolicTensor (a traced value), got a host scalar");
  if (!o.tensor().defined()) throw TraceError("use of an undefined (default-constructed) SymbolicTensor");
  return o.tensor();
}

// A rank-0 tensor of dtype t from a scalar or a rank-0 tensor.
SymbolicTensor scalar_of(const Operand& v, DType t, const char* fn, const SrcLoc& loc) {
  if (v.is_tensor()) {
    if (v.tensor().rank() != 0)
      throw ShapeError(std::string(fn) + ": the padding value must be a scalar (rank 0), got shape (" +
                       v.tensor().shape().to_string() + ")");
    return astype(v.tensor(), t, loc);
  }
  return fill(Shape{}, v, t, loc);
}

std::vector<int64_t> ones_or(std::vector<int64_t> v, size_t n, const char* fn, const char* what) {
  if (v.empty()) return std::vector<int64_t>(n, 1);
  if (v.size() == 1 && n > 1) return std::vector<int64_t>(n, v[0]);
  if (v.size() != n)
    throw ShapeError(std::string(fn) + ": " + what + " has " + std::to_string(v.size()) + " entries for " +
                     std::to_string(n) + " spatial dims");
  return v;
}

// a * b + c for SAME padding, with hostile extents or dilations refused rather than wrapped.
int64_t mul_add(int64_t a, int64_t b, int64_t c) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r))
    throw ShapeError("conv: SAME padding overflows int64; use smaller extents, strides or dilations");
  return r;
}

int64_t ceil_div(int64_t a, int64_t b) { return a / b + ((a % b != 0 && ((a > 0) == (b > 0))) ? 1 : 0); }

SymbolicTensor flatten(const SymbolicTensor& x, const SrcLoc& loc) {
  return reshape(x, Shape{x.shape().num_elements()}, loc);
}

SymbolicTensor slice_axis(const SymbolicTensor& x, size_t axis, int64_t start, int64_t limit, const SrcLoc& loc) {
  size_t r = x.rank();
  std::vector<int64_t> st(r, 0), strides(r, 1);
  Shape lim = x.shape();
  st[axis] = start;
  lim[axis] = DimExpr(limit);
  return ctx_of(x).emit1(EVOXC_OP("slice"), {x}, {{"start_indices", st}, {"limit_indices", lim}, {"strides", strides}},
                         loc);
}

int64_t static_extent(const SymbolicTensor& x, size_t axis, const char* fn) {
  const DimExpr& d = x.shape()[axis];
  if (!d.is_const())
    throw ShapeError(std::string(fn) + ": axis " + std::to_string(axis) + " has the symbolic extent " + d.to_string() +
                     "; splitting needs a static extent");
  return d.value();
}

std::vector<SymbolicTensor> split_at(const SymbolicTensor& x, const std::vector<int64_t>& bounds, size_t axis,
                                     const SrcLoc& loc) {
  std::vector<SymbolicTensor> out;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) out.push_back(slice_axis(x, axis, bounds[i], bounds[i + 1], loc));
  return out;
}

}  // namespace

SymbolicTensor conv_general(const Operand& lhs_in, const Operand& rhs_in, std::vector<int64_t> window_strides,
                            const ConvPadding& padding, std::vector<int64_t> lhs_dilation,
                            std::vector<int64_t> rhs_dilation, int64_t feature_group_count, SrcLoc loc) {
  SymbolicTensor lhs = as_tensor(lhs_in, "conv", "lhs");
  SymbolicTensor rhs = as_tensor(rhs_in, "conv", "rhs");
  DType t = promote_types(lhs.dtype(), rhs.dtype());
  lhs = astype(lhs, t, loc);
  rhs = astype(rhs, t, loc);
  if (lhs.rank() < 3 || rhs.rank() != lhs.rank())
    throw ShapeError("conv: lhs (" + lhs.shape().to_string() + ") must be (N, C, spatial...) and rhs (" +
                     rhs.shape().to_string() + ") (O, C/groups, window...) of the same rank >= 3");
  size_t n = lhs.rank() - 2;
  std::vector<int64_t> st = ones_or(std::move(window_strides), n, "conv", "window_strides");
  std::vector<int64_t> ld = ones_or(std::move(lhs_dilation), n, "conv", "lhs_dilation");
  std::vector<int64_t> rd = ones_or(std::move(rhs_dilation), n, "conv", "rhs_dilation");
  for (size_t i = 0; i < n; ++i)
    if (st[i] < 1 || ld[i] < 1 || rd[i] < 1)
      throw ShapeError("conv: strides and dilations must be >= 1 (spatial dim " + std::to_string(i) + ")");
  std::vector<int64_t> pads;
  const std::string& mode = padding.mode();
  if (mode.empty()) {
    if (padding.pairs().size() != n)
      throw ShapeError("conv: padding has " + std::to_string(padding.pairs().size()) + " (low, high) pairs for " +
                       std::to_string(n) + " spatial dims");
    for (const auto& [lo, hi] : padding.pairs()) {
      pads.push_back(lo);
      pads.push_back(hi);
    }
  } else if (mode == "VALID" || mode == "valid") {
    pads.assign(2 * n, 0);
  } else if (mode == "SAME" || mode == "same") {
    for (size_t i = 0; i < n; ++i) {
      const DimExpr& w = rhs.shape()[i + 2];
      if (!w.is_const())
        throw ShapeError("conv: SAME padding needs a static window, got extent " + w.to_string() + " on dim " +
                         std::to_string(i));
      int64_t win = w.value() == 0 ? 0 : mul_add(w.value() - 1, rd[i], 1);
      const DimExpr& x = lhs.shape()[i + 2];
      int64_t total = 0;
      if (st[i] == 1) {
        // out = in, so the padding is window - 1 whatever the extent.
        total = std::max<int64_t>(win - 1, 0);
      } else {
        if (!x.is_const())
          throw ShapeError("conv: SAME padding with stride " + std::to_string(st[i]) +
                           " needs a static spatial extent, got " + x.to_string() + "; use explicit padding");
        int64_t in = x.value() == 0 ? 0 : mul_add(x.value() - 1, ld[i], 1);
        int64_t out = ceil_div(in, st[i]);
        total = std::max<int64_t>(mul_add(out - 1, st[i], win) - in, 0);
      }
      pads.push_back(total / 2);
      pads.push_back(total - total / 2);
    }
  } else {
    throw ShapeError("conv: padding \"" + mode + "\" is not SAME, VALID or a list of (low, high) pairs");
  }
  return ctx_of(lhs).emit1(EVOXC_OP("conv"), {lhs, rhs},
                           {{"window_strides", st},
                            {"padding", pads},
                            {"lhs_dilation", ld},
                            {"rhs_dilation", rd},
                            {"feature_group_count", feature_group_count}},
                           loc);
}

SymbolicTensor conv(const Operand& x, const Operand& w, std::vector<int64_t> strides, const ConvPadding& padding,
                    std::vector<int64_t> dilation, int64_t groups, SrcLoc loc) {
  return conv_general(x, w, std::move(strides), padding, {}, std::move(dilation), groups, loc);
}

namespace {
SymbolicTensor conv_rank(size_t rank, const char* fn, const Operand& x, const Operand& w, std::vector<int64_t> strides,
                         const ConvPadding& padding, std::vector<int64_t> dilation, int64_t groups, SrcLoc loc) {
  SymbolicTensor xt = as_tensor(x, fn, "x");
  if (xt.rank() != rank)
    throw ShapeError(std::string(fn) + ": x (" + xt.shape().to_string() + ") must have rank " + std::to_string(rank) +
                     " (N, C, spatial...)");
  return conv(x, w, std::move(strides), padding, std::move(dilation), groups, loc);
}
}  // namespace

SymbolicTensor conv1d(const Operand& x, const Operand& w, std::vector<int64_t> strides, const ConvPadding& padding,
                      std::vector<int64_t> dilation, int64_t groups, SrcLoc loc) {
  return conv_rank(3, "conv1d", x, w, std::move(strides), padding, std::move(dilation), groups, loc);
}
SymbolicTensor conv2d(const Operand& x, const Operand& w, std::vector<int64_t> strides, const ConvPadding& padding,
                      std::vector<int64_t> dilation, int64_t groups, SrcLoc loc) {
  return conv_rank(4, "conv2d", x, w, std::move(strides), padding, std::move(dilation), groups, loc);
}
SymbolicTensor conv3d(const Operand& x, const Operand& w, std::vector<int64_t> strides, const ConvPadding& padding,
                      std::vector<int64_t> dilation, int64_t groups, SrcLoc loc) {
  return conv_rank(5, "conv3d", x, w, std::move(strides), padding, std::move(dilation), groups, loc);
}

SymbolicTensor pad(const SymbolicTensor& x, std::vector<std::pair<int64_t, int64_t>> pad_width, const std::string& mode,
                   const Operand& constant_value, SrcLoc loc) {
  TraceContext& ctx = ctx_of(x);
  size_t r = x.rank();
  if (pad_width.size() == 1 && r != 1) pad_width.assign(r, pad_width[0]);
  if (pad_width.size() != r)
    throw ShapeError("pad: pad_width has " + std::to_string(pad_width.size()) + " pairs for rank " + std::to_string(r) +
                     "; give one (before, after) pair per axis or one for all");
  std::vector<int64_t> low, high;
  for (const auto& [b, a] : pad_width) {
    low.push_back(b);
    high.push_back(a);
  }
  AttrMap attrs = {{"low", low}, {"high", high}, {"mode", mode}};
  if (mode == "constant")
    return ctx.emit1(EVOXC_OP("pad"), {x, scalar_of(constant_value, x.dtype(), "pad", loc)}, attrs, loc);
  return ctx.emit1(EVOXC_OP("pad"), {x}, attrs, loc);
}

SymbolicTensor pad(const SymbolicTensor& x, int64_t pad_width, const std::string& mode, const Operand& constant_value,
                   SrcLoc loc) {
  return pad(x, std::vector<std::pair<int64_t, int64_t>>(std::max<size_t>(x.rank(), 1), {pad_width, pad_width}), mode,
             constant_value, loc);
}

SymbolicTensor pad_general(const SymbolicTensor& x, const Operand& value, std::vector<int64_t> low,
                           std::vector<int64_t> high, std::vector<int64_t> interior, SrcLoc loc) {
  TraceContext& ctx = ctx_of(x);
  if (interior.empty()) interior.assign(x.rank(), 0);
  return ctx.emit1(EVOXC_OP("pad"), {x, scalar_of(value, x.dtype(), "pad_general", loc)},
                   {{"low", low}, {"high", high}, {"interior", interior}, {"mode", std::string("constant")}}, loc);
}

namespace {
SymbolicTensor tri(const OpDef& op, const SymbolicTensor& x, int64_t k, const SrcLoc& loc) {
  SymbolicTensor m = x;
  if (x.rank() == 1) m = broadcast_to(x, Shape{x.shape()[0], x.shape()[0]}, loc);
  if (m.rank() < 2) throw ShapeError(op.name + ": needs rank >= 1, got a scalar");
  return ctx_of(m).emit1(op, {m}, {{"k", k}}, loc);
}
}  // namespace

SymbolicTensor tril(const SymbolicTensor& x, int64_t k, SrcLoc loc) { return tri(EVOXC_OP("tril"), x, k, loc); }
SymbolicTensor triu(const SymbolicTensor& x, int64_t k, SrcLoc loc) { return tri(EVOXC_OP("triu"), x, k, loc); }

SymbolicTensor diagonal(const SymbolicTensor& x, int64_t offset, int64_t axis1, int64_t axis2, SrcLoc loc) {
  if (x.rank() < 2) throw ShapeError("diagonal: needs rank >= 2, got (" + x.shape().to_string() + ")");
  int64_t a1 = normalize_axis(axis1, x.rank(), "diagonal");
  int64_t a2 = normalize_axis(axis2, x.rank(), "diagonal");
  if (a1 == a2) throw ShapeError("diagonal: axis1 and axis2 name the same axis " + std::to_string(a1));
  return ctx_of(x).emit1(EVOXC_OP("diagonal"), {x}, {{"offset", offset}, {"axis1", a1}, {"axis2", a2}}, loc);
}

SymbolicTensor flip(const SymbolicTensor& x, Axes axes, SrcLoc loc) {
  std::vector<int64_t> ax;
  if (axes.is_all()) {
    for (size_t i = 0; i < x.rank(); ++i) ax.push_back(static_cast<int64_t>(i));
  } else {
    ax = axes.normalize(x.rank(), "flip");
  }
  return ctx_of(x).emit1(EVOXC_OP("flip"), {x}, {{"axes", ax}}, loc);
}

SymbolicTensor roll(const SymbolicTensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& axes,
                    SrcLoc loc) {
  std::vector<int64_t> sh = shifts;
  if (sh.size() == 1 && axes.size() > 1) sh.assign(axes.size(), shifts[0]);
  if (sh.size() != axes.size())
    throw ShapeError("roll: " + std::to_string(shifts.size()) + " shifts for " + std::to_string(axes.size()) +
                     " axes; give one shift per axis or one for all");
  std::map<int64_t, int64_t> total;  // numpy adds the shifts of a repeated axis
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = normalize_axis(axes[i], x.rank(), "roll");
    int64_t& s = total[a];
    if (__builtin_add_overflow(s, sh[i], &s)) throw ShapeError("roll: the summed shifts overflow int64");
  }
  std::vector<int64_t> ax, sv;
  for (const auto& [a, s] : total) {
    ax.push_back(a);
    sv.push_back(s);
  }
  return ctx_of(x).emit1(EVOXC_OP("roll"), {x}, {{"shifts", sv}, {"axes", ax}}, loc);
}

SymbolicTensor roll(const SymbolicTensor& x, int64_t shift, std::optional<int64_t> axis, SrcLoc loc) {
  if (axis) return roll(x, std::vector<int64_t>{shift}, std::vector<int64_t>{*axis}, loc);
  SymbolicTensor r = roll(flatten(x, loc), std::vector<int64_t>{shift}, std::vector<int64_t>{0}, loc);
  return reshape(r, x.shape(), loc);
}

SymbolicTensor tile(const SymbolicTensor& x, std::vector<int64_t> reps, SrcLoc loc) {
  SymbolicTensor y = x;
  if (reps.size() > x.rank()) {
    std::vector<DimExpr> s(reps.size() - x.rank(), DimExpr(1));
    for (const DimExpr& d : x.shape()) s.push_back(d);
    y = reshape(x, Shape(std::move(s)), loc);
  }
  if (reps.size() < y.rank()) reps.insert(reps.begin(), y.rank() - reps.size(), 1);
  for (int64_t r : reps)
    if (r < 0) throw ShapeError("tile: reps must be >= 0, got " + std::to_string(r));
  return ctx_of(y).emit1(EVOXC_OP("tile"), {y}, {{"reps", reps}}, loc);
}

SymbolicTensor repeat(const SymbolicTensor& x, const std::vector<int64_t>& repeats, std::optional<int64_t> axis,
                      SrcLoc loc) {
  SymbolicTensor y = axis ? x : flatten(x, loc);
  int64_t a = axis ? normalize_axis(*axis, x.rank(), "repeat") : 0;
  for (int64_t r : repeats)
    if (r < 0) throw ShapeError("repeat: repeats must be >= 0, got " + std::to_string(r));
  if (repeats.empty()) throw ShapeError("repeat: repeats must not be empty");
  std::vector<int64_t> reps = repeats;
  // numpy broadcasts a one-entry list; a list for a one-element axis is the same thing.
  const DimExpr& n = y.shape()[static_cast<size_t>(a)];
  if (reps.size() > 1 && n.is_const() && static_cast<int64_t>(reps.size()) != n.value())
    throw ShapeError("repeat: " + std::to_string(reps.size()) + " repeats for an axis of extent " + n.to_string() +
                     "; give one count or one per element");
  return ctx_of(y).emit1(EVOXC_OP("repeat"), {y}, {{"repeats", reps}, {"axis", a}}, loc);
}

SymbolicTensor repeat(const SymbolicTensor& x, int64_t repeats, std::optional<int64_t> axis, SrcLoc loc) {
  return repeat(x, std::vector<int64_t>{repeats}, axis, loc);
}

SymbolicTensor one_hot(const SymbolicTensor& x, int64_t num_classes, DType dtype, SrcLoc loc) {
  if (!is_signed_int(x.dtype()) && !is_unsigned_int(x.dtype()))
    throw TypeError("one_hot: indices must have an int dtype, got " + std::string(dtype_name(x.dtype())) +
                    "; convert them with astype first");
  return ctx_of(x).emit1(EVOXC_OP("one_hot"), {x}, {{"num_classes", num_classes}, {"dtype", dtype}}, loc);
}

namespace {
Attribute static_number(const Operand& o, const char* what) {
  switch (o.kind()) {
    case Operand::Kind::Int: return o.int_value();
    case Operand::Kind::Float: return o.float_value();
    case Operand::Kind::Bool: return o.int_value();
    default:
      throw TraceError(std::string("arange: ") + what +
                       " must be a static number; a traced value cannot set a shape (use iota and arithmetic)");
  }
}
}  // namespace

SymbolicTensor arange(const Operand& start, const Operand& stop, const Operand& step, std::optional<DType> dtype,
                      SrcLoc loc) {
  Attribute a = static_number(start, "start"), b = static_number(stop, "stop"), s = static_number(step, "step");
  bool ints =
      std::holds_alternative<int64_t>(a) && std::holds_alternative<int64_t>(b) && std::holds_alternative<int64_t>(s);
  DType t = dtype.value_or(ints ? DType::I64 : kDefaultFloat);
  return TraceContext::current().emit1(EVOXC_OP("arange"), {}, {{"start", a}, {"stop", b}, {"step", s}, {"dtype", t}},
                                       loc);
}

SymbolicTensor arange(const Operand& stop, std::optional<DType> dtype, SrcLoc loc) {
  return arange(Operand(0), stop, Operand(1), dtype, loc);
}

SymbolicTensor eye(int64_t n, std::optional<int64_t> m, int64_t k, DType dtype, SrcLoc loc) {
  int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0)
    throw ShapeError("eye: extents must be >= 0, got " + std::to_string(n) + " x " + std::to_string(cols));
  Shape shape = Shape::from_ints({n, cols});
  SymbolicTensor row = iota(shape, 0, DType::I64, loc), col = iota(shape, 1, DType::I64, loc);
  return astype(evoxc::equal(row + k, col, loc), dtype, loc);
}

SymbolicTensor linspace(double start, double stop, int64_t num, bool endpoint, DType dtype, SrcLoc loc) {
  if (num < 0) throw ShapeError("linspace: num must be >= 0, got " + std::to_string(num));
  return TraceContext::current().emit1(
      EVOXC_OP("linspace"), {},
      {{"start", start}, {"stop", stop}, {"num", num}, {"endpoint", endpoint}, {"dtype", dtype}}, loc);
}

std::vector<SymbolicTensor> split(const SymbolicTensor& x, int64_t sections, int64_t axis, SrcLoc loc) {
  auto a = static_cast<size_t>(normalize_axis(axis, x.rank(), "split"));
  if (sections < 1) throw ShapeError("split: sections must be >= 1, got " + std::to_string(sections));
  int64_t n = static_extent(x, a, "split");
  if (n % sections != 0)
    throw ShapeError("split: an axis of extent " + std::to_string(n) + " does not divide into " +
                     std::to_string(sections) + " equal sections; use array_split");
  std::vector<int64_t> bounds;
  for (int64_t i = 0; i <= sections; ++i) bounds.push_back(i * (n / sections));
  return split_at(x, bounds, a, loc);
}

std::vector<SymbolicTensor> split(const SymbolicTensor& x, const std::vector<int64_t>& indices, int64_t axis,
                                  SrcLoc loc) {
  auto a = static_cast<size_t>(normalize_axis(axis, x.rank(), "split"));
  int64_t n = static_extent(x, a, "split");
  // Python slice rules: x[prev:idx] with negative indices from the end, clamped, never decreasing.
  std::vector<int64_t> bounds = {0};
  for (int64_t idx : indices) {
    int64_t v = idx < 0 ? std::max<int64_t>(idx + n, 0) : std::min(idx, n);
    bounds.push_back(v);
  }
  bounds.push_back(n);
  std::vector<SymbolicTensor> out;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    int64_t lo = bounds[i], hi = std::max(bounds[i], bounds[i + 1]);
    out.push_back(slice_axis(x, a, lo, hi, loc));
  }
  return out;
}

std::vector<SymbolicTensor> array_split(const SymbolicTensor& x, int64_t sections, int64_t axis, SrcLoc loc) {
  auto a = static_cast<size_t>(normalize_axis(axis, x.rank(), "array_split"));
  if (sections < 1) throw ShapeError("array_split: sections must be >= 1, got " + std::to_string(sections));
  int64_t n = static_extent(x, a, "array_split");
  int64_t each = n / sections, extra = n % sections;
  std::vector<int64_t> bounds = {0};
  for (int64_t i = 0; i < sections; ++i) bounds.push_back(bounds.back() + each + (i < extra ? 1 : 0));
  return split_at(x, bounds, a, loc);
}

}  // namespace evoxc
