// Bindings of the structure ops: reshape/transpose/broadcast, slicing and joining, pad, layout, sorting, scans, conv.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "bind.h"
#include "evoxc/core/error.h"
#include "evoxc/trace/extension.h"
#include "evoxc/trace/indexing.h"
#include "evoxc/trace/layout.h"
#include "evoxc/trace/numpy.h"

namespace evoxc::py {

namespace {

using Ints = std::vector<int64_t>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// A Python int (or anything with __index__, not bool); nullopt otherwise.
std::optional<int64_t> as_int(nb::handle h) {
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr())) return std::nullopt;
  PyObject* i = PyNumber_Index(h.ptr());  // a numpy array of rank > 0 has __index__ but refuses it
  if (!i) {
    PyErr_Clear();
    return std::nullopt;
  }
  return nb::cast<int64_t>(nb::steal(i));
}

bool is_sequence(nb::handle h) { return PySequence_Check(h.ptr()) && !nb::isinstance<nb::str>(h); }

// A sequence of ints; TypeError naming `what` otherwise.
Ints as_ints(nb::handle h, const char* what) {
  if (!is_sequence(h)) throw nb::type_error((std::string(what) + " must be an int or a sequence of ints").c_str());
  Ints out;
  for (nb::handle e : nb::borrow<nb::sequence>(h)) {
    auto v = as_int(e);
    if (!v) throw nb::type_error((std::string(what) + " must hold ints, got a " + py_type_name(e)).c_str());
    out.push_back(*v);
  }
  return out;
}

// An int or a sequence of ints, as a list.
Ints int_or_ints(nb::handle h, const char* what) {
  if (auto v = as_int(h)) return {*v};
  return as_ints(h, what);
}

// A sequence whose items are each an int or a (before, after) pair; an int p is (p, p).
Pairs as_pairs(nb::handle h, const char* what) {
  Pairs out;
  for (nb::handle e : nb::borrow<nb::sequence>(h)) {
    if (auto v = as_int(e)) {
      out.emplace_back(*v, *v);
      continue;
    }
    Ints p = as_ints(e, what);
    if (p.size() == 1) p.push_back(p[0]);
    if (p.size() != 2)
      throw nb::type_error((std::string(what) + ": each entry must be an int or a (before, after) pair").c_str());
    out.emplace_back(p[0], p[1]);
  }
  return out;
}

// Conv padding: "SAME"/"VALID", an int (that many on both sides of every spatial dim), or one entry per spatial
// dim that is an int p (= (p, p)) or a (low, high) pair.
ConvPadding conv_padding(nb::handle h, const Operand& lhs) {
  if (nb::isinstance<nb::str>(h)) return ConvPadding(nb::cast<std::string>(h));
  if (auto v = as_int(h)) {
    if (!lhs.is_tensor())
      throw nb::type_error("conv: an int padding needs a tensor lhs (its rank gives the spatial dims)");
    size_t rank = lhs.tensor().rank();
    return ConvPadding(Pairs(rank > 2 ? rank - 2 : 0, {*v, *v}));
  }
  if (is_sequence(h)) return ConvPadding(as_pairs(h, "conv padding"));
  throw nb::type_error(
      ("conv padding must be \"SAME\", \"VALID\", an int or a sequence of pairs, got a " + py_type_name(h)).c_str());
}

Ints or_empty(const std::optional<Ints>& v) { return v ? *v : Ints{}; }

// Non-negative axis of a rank-`rank` value (negative counts from the end); ShapeError when out of range.
int64_t norm_axis(int64_t a, size_t rank, const char* what) {
  auto r = static_cast<int64_t>(rank);
  if (a < -r || a >= r)
    throw ShapeError(std::string(what) + ": axis " + std::to_string(a) + " is out of range for rank " +
                     std::to_string(r));
  return a < 0 ? a + r : a;
}

SymbolicTensor moveaxis_impl(const SymbolicTensor& x, const Ints& source, const Ints& destination) {
  if (source.size() != destination.size())
    throw ShapeError("moveaxis: source and destination must have the same number of axes");
  size_t rank = x.rank();
  std::vector<std::pair<int64_t, int64_t>> moves;  // (destination, source)
  std::vector<bool> moved(rank, false);
  std::vector<bool> taken(rank, false);
  for (size_t i = 0; i < source.size(); ++i) {
    int64_t s = norm_axis(source[i], rank, "moveaxis");
    int64_t d = norm_axis(destination[i], rank, "moveaxis");
    if (moved[static_cast<size_t>(s)] || taken[static_cast<size_t>(d)])
      throw ShapeError("moveaxis: repeated axis in source or destination");
    moved[static_cast<size_t>(s)] = taken[static_cast<size_t>(d)] = true;
    moves.emplace_back(d, s);
  }
  Ints perm;
  for (size_t a = 0; a < rank; ++a)
    if (!moved[a]) perm.push_back(static_cast<int64_t>(a));
  std::sort(moves.begin(), moves.end());
  for (auto [d, s] : moves) perm.insert(perm.begin() + d, s);
  return transpose(x, perm);
}

}  // namespace

void bind_ops_structure(nb::module_& m) {
  // ---- shape and layout ----
  def_op(
      m, "reshape", [](const SymbolicTensor& x, const Shape& shape) { return reshape(x, shape); }, nb::arg("x"),
      nb::arg("shape"),
      "numpy.reshape(x, shape): the same elements in row-major order with a new shape; one extent may be -1 "
      "(inferred), extents may be Dims.");
  def_op(
      m, "transpose",
      [](const SymbolicTensor& x, std::optional<Ints> perm, std::optional<Ints> axes) {
        if (perm && axes) throw nb::type_error("transpose: pass perm or its numpy alias axes, not both");
        return transpose(x, perm ? perm : axes);
      },
      nb::arg("x"), nb::arg("perm") = nb::none(), nb::arg("axes") = nb::none(),
      "numpy.transpose(x, perm): result axis i is x's axis perm[i]; no perm reverses the axes. `axes` is numpy's "
      "name for perm.");
  def_op(
      m, "broadcast_to", [](const Operand& x, const Shape& shape) { return broadcast_to(x, shape); }, nb::arg("x"),
      nb::arg("shape"), "numpy.broadcast_to(x, shape): x broadcast to `shape` by numpy's rules.");
  def_op(
      m, "broadcast_in_dim",
      [](const SymbolicTensor& x, const Shape& shape, Ints dims) {
        return broadcast_in_dim(x, shape, std::move(dims));
      },
      nb::arg("x"), nb::arg("shape"), nb::arg("dims"),
      "lax.broadcast_in_dim(x, shape, dims): x's axis i becomes result axis dims[i] (extent equal or 1); the other "
      "result axes are new.");
  def_op(
      m, "expand_dims", [](const SymbolicTensor& x, Axes axes) { return expand_dims(x, std::move(axes)); },
      nb::arg("x"), nb::arg("axes"),
      "numpy.expand_dims(x, axes): inserts unit axes at `axes` (positions in the result; negative from the end).");
  def_op(
      m, "squeeze", [](const SymbolicTensor& x, Axes axes) { return squeeze(x, std::move(axes)); }, nb::arg("x"),
      nb::arg("axes") = nb::none(),
      "numpy.squeeze(x, axes): removes the unit axes `axes`; None removes every extent that is the constant 1.");
  def_op(
      m, "ravel", [](const SymbolicTensor& x) { return reshape(x, Shape({DimExpr(-1)})); }, nb::arg("x"),
      "numpy.ravel(x): the elements as a 1-D tensor in row-major order; ravel(x) = reshape(x, -1).");
  def_op(
      m, "swapaxes",
      [](const SymbolicTensor& x, int64_t axis1, int64_t axis2) {
        Ints perm(x.rank());
        for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
        std::swap(perm[static_cast<size_t>(norm_axis(axis1, x.rank(), "swapaxes"))],
                  perm[static_cast<size_t>(norm_axis(axis2, x.rank(), "swapaxes"))]);
        return transpose(x, perm);
      },
      nb::arg("x"), nb::arg("axis1"), nb::arg("axis2"),
      "numpy.swapaxes(x, axis1, axis2): x with the two axes exchanged (a transpose).");
  def_op(
      m, "moveaxis",
      [](const SymbolicTensor& x, nb::object source, nb::object destination) {
        return moveaxis_impl(x, int_or_ints(source, "source"), int_or_ints(destination, "destination"));
      },
      nb::arg("x"), nb::arg("source"), nb::arg("destination"),
      "numpy.moveaxis(x, source, destination): axes `source` (int or sequence) moved to positions `destination`, "
      "the others keeping their order (a transpose).",
      nb::sig("def moveaxis(x: SymbolicTensor, source: int | collections.abc.Sequence[int], "
              "destination: int | collections.abc.Sequence[int]) -> SymbolicTensor"));

  // ---- slicing and joining ----
  def_op(
      m, "slice",
      [](const SymbolicTensor& x, const Ints& start, const Ints& limit, const std::optional<Ints>& strides) {
        return slice(x, start, limit, or_empty(strides));
      },
      nb::arg("x"), nb::arg("start"), nb::arg("limit"), nb::arg("strides") = nb::none(),
      "Static slice x[start[0]:limit[0]:strides[0], ...]; missing trailing axes are taken whole; negative "
      "start/limit count from the end (lax.slice with numpy's negative indices).");
  def_op(
      m, "stablehlo_call",
      [](const std::string& module, const std::vector<SymbolicTensor>& xs) { return stablehlo_call(module, xs); },
      nb::arg("module"), nb::arg("operands"),
      "The results (a list) of the @main function of a StableHLO module (text: jax.export's mlir_module(), say) on "
      "operands of its argument types. Runs on backend='xla'; opaque to the interpreter and the transforms.",
      nb::sig("def stablehlo_call(module: str, operands: collections.abc.Sequence[SymbolicTensor]) -> "
              "list[SymbolicTensor]"));
  def_op(
      m, "concatenate", [](const std::vector<SymbolicTensor>& xs, int64_t axis) { return concatenate(xs, axis); },
      nb::arg("xs"), nb::arg("axis") = 0, "numpy.concatenate(xs, axis): the operands joined along an existing axis.",
      nb::sig("def concatenate(xs: collections.abc.Sequence[SymbolicTensor], axis: int = 0) -> SymbolicTensor"));
  def_op(
      m, "stack", [](const std::vector<SymbolicTensor>& xs, int64_t axis) { return stack(xs, axis); }, nb::arg("xs"),
      nb::arg("axis") = 0, "numpy.stack(xs, axis): the operands (one shape) joined along a new axis.",
      nb::sig("def stack(xs: collections.abc.Sequence[SymbolicTensor], axis: int = 0) -> SymbolicTensor"));
  def_op(
      m, "hstack", [](const std::vector<SymbolicTensor>& xs) { return hstack(xs); }, nb::arg("xs"),
      "numpy.hstack(xs): concatenate along axis 1, or axis 0 for 1-D operands.",
      nb::sig("def hstack(xs: collections.abc.Sequence[SymbolicTensor]) -> SymbolicTensor"));
  def_op(
      m, "vstack", [](const std::vector<SymbolicTensor>& xs) { return vstack(xs); }, nb::arg("xs"),
      "numpy.vstack(xs): concatenate along axis 0 after making each operand at least 2-D.",
      nb::sig("def vstack(xs: collections.abc.Sequence[SymbolicTensor]) -> SymbolicTensor"));
  def_op(
      m, "split", [](const SymbolicTensor& x, int64_t sections, int64_t axis) { return split(x, sections, axis); },
      nb::arg("x"), nb::arg("sections"), nb::arg("axis") = 0,
      "numpy.split(x, sections, axis): a list of `sections` equal parts (ShapeError when the extent does not "
      "divide).");
  def_op(
      m, "split", [](const SymbolicTensor& x, const Ints& indices, int64_t axis) { return split(x, indices, axis); },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis") = 0,
      "numpy.split(x, indices, axis): a list of the parts between the split indices (python slice rules).");
  def_op(
      m, "array_split",
      [](const SymbolicTensor& x, int64_t sections, int64_t axis) { return array_split(x, sections, axis); },
      nb::arg("x"), nb::arg("sections"), nb::arg("axis") = 0,
      "numpy.array_split(x, sections, axis): a list of `sections` parts, the first n % sections one longer.");
  def_op(
      m, "array_split",
      [](const SymbolicTensor& x, const Ints& indices, int64_t axis) { return split(x, indices, axis); }, nb::arg("x"),
      nb::arg("indices"), nb::arg("axis") = 0, "numpy.array_split(x, indices, axis) = split(x, indices, axis).");

  // ---- padding ----
  def_op(
      m, "pad",
      [](const SymbolicTensor& x, nb::object pad_width, const std::string& mode, const Operand& constant_value) {
        if (auto v = as_int(pad_width)) return pad(x, *v, mode, constant_value);
        if (!is_sequence(pad_width))
          throw nb::type_error(
              ("pad_width must be an int or a sequence of (before, after) pairs, got a " + py_type_name(pad_width))
                  .c_str());
        nb::sequence seq = nb::borrow<nb::sequence>(pad_width);
        bool flat = true;
        for (nb::handle e : seq) flat = flat && as_int(e).has_value();
        if (flat) {
          Ints p = as_ints(pad_width, "pad_width");
          if (p.size() == 1) return pad(x, p[0], mode, constant_value);
          if (p.size() == 2) return pad(x, Pairs{{p[0], p[1]}}, mode, constant_value);
          throw nb::type_error("pad_width: a flat sequence must be (pad,) or (before, after)");
        }
        return pad(x, as_pairs(pad_width, "pad_width"), mode, constant_value);
      },
      nb::arg("x"), nb::arg("pad_width"), nb::arg("mode") = "constant", nb::arg("constant_value") = 0,
      "numpy.pad(x, pad_width, mode, constant_values=constant_value): pad_width is an int, (before, after) for every "
      "axis, or one pair per axis (negative widths crop); mode constant, edge, reflect or symmetric.",
      nb::sig("def pad(x: SymbolicTensor, pad_width: int | collections.abc.Sequence[int] | "
              "collections.abc.Sequence[collections.abc.Sequence[int]], mode: str = \"constant\", "
              "constant_value: SymbolicTensor | bool | int | float = 0) -> SymbolicTensor"));
  def_op(
      m, "pad_general",
      [](const SymbolicTensor& x, const Operand& value, Ints low, Ints high, const std::optional<Ints>& interior) {
        return pad_general(x, value, std::move(low), std::move(high), or_empty(interior));
      },
      nb::arg("x"), nb::arg("value"), nb::arg("low"), nb::arg("high"), nb::arg("interior") = nb::none(),
      "lax.pad(x, value, [(low, high, interior), ...]) with the three lists apart: low/high per axis (negative "
      "crops), interior elements between neighbours (None: 0).");

  // ---- triangles, diagonal, flip, roll, tile, repeat, one_hot ----
  def_op(
      m, "tril", [](const SymbolicTensor& x, int64_t k) { return tril(x, k); }, nb::arg("x"), nb::arg("k") = 0,
      "numpy.tril(x, k): zeros above the k-th diagonal of the last two axes.");
  def_op(
      m, "triu", [](const SymbolicTensor& x, int64_t k) { return triu(x, k); }, nb::arg("x"), nb::arg("k") = 0,
      "numpy.triu(x, k): zeros below the k-th diagonal of the last two axes.");
  def_op(
      m, "diagonal",
      [](const SymbolicTensor& x, int64_t offset, int64_t axis1, int64_t axis2) {
        return diagonal(x, offset, axis1, axis2);
      },
      nb::arg("x"), nb::arg("offset") = 0, nb::arg("axis1") = 0, nb::arg("axis2") = 1,
      "numpy.diagonal(x, offset, axis1, axis2): removes axis1 and axis2 and appends their diagonal.");
  def_op(
      m, "flip", [](const SymbolicTensor& x, Axes axes) { return flip(x, std::move(axes)); }, nb::arg("x"),
      nb::arg("axes") = nb::none(), "numpy.flip(x, axes): x reversed along `axes` (None: every axis).");
  def_op(
      m, "roll",
      [](const SymbolicTensor& x, nb::object shift, nb::object axis) {
        auto s = as_int(shift);
        if (axis.is_none()) {
          if (s) return roll(x, *s, std::nullopt);
          Ints shifts = as_ints(shift, "shift");
          int64_t total = 0;
          for (int64_t v : shifts) total += v;  // numpy rolls the flattened array by each in turn
          return roll(x, total, std::nullopt);
        }
        auto a = as_int(axis);
        if (s && a) return roll(x, *s, *a);
        Ints shifts = int_or_ints(shift, "shift");
        Ints axes = int_or_ints(axis, "axis");
        if (shifts.size() == 1 && axes.size() > 1) shifts.resize(axes.size(), shifts[0]);
        if (axes.size() == 1 && shifts.size() > 1) axes.resize(shifts.size(), axes[0]);
        return roll(x, shifts, axes);
      },
      nb::arg("x"), nb::arg("shift"), nb::arg("axis") = nb::none(),
      "numpy.roll(x, shift, axis): elements shifted cyclically along `axis` (ints or sequences, broadcast against "
      "each other; repeated axes add); None: over the flattened x, reshaped back.",
      nb::sig("def roll(x: SymbolicTensor, shift: int | collections.abc.Sequence[int], axis: "
              "int | collections.abc.Sequence[int] | None = None) -> SymbolicTensor"));
  def_op(
      m, "tile", [](const SymbolicTensor& x, int64_t reps) { return tile(x, Ints{reps}); }, nb::arg("x"),
      nb::arg("reps"), "numpy.tile(x, reps): x repeated `reps` times along its last axis; tile(x, n) = tile(x, [n]).");
  def_op(
      m, "tile", [](const SymbolicTensor& x, Ints reps) { return tile(x, std::move(reps)); }, nb::arg("x"),
      nb::arg("reps"),
      "numpy.tile(x, reps): x repeated reps[i] times along axis i (reps or x gain leading ones to match).");
  def_op(
      m, "repeat",
      [](const SymbolicTensor& x, int64_t repeats, std::optional<int64_t> axis) { return repeat(x, repeats, axis); },
      nb::arg("x"), nb::arg("repeats"), nb::arg("axis") = nb::none(),
      "numpy.repeat(x, repeats, axis): each element repeated `repeats` times along `axis` (None: flattened first).");
  def_op(
      m, "repeat",
      [](const SymbolicTensor& x, const Ints& repeats, std::optional<int64_t> axis) {
        return repeat(x, repeats, axis);
      },
      nb::arg("x"), nb::arg("repeats"), nb::arg("axis") = nb::none(),
      "numpy.repeat(x, repeats, axis): element i along `axis` repeated repeats[i] times (None: flattened first).");
  def_op(
      m, "one_hot",
      [](const SymbolicTensor& x, int64_t num_classes, DType dtype) { return one_hot(x, num_classes, dtype); },
      nb::arg("x"), nb::arg("num_classes"), nb::arg("dtype") = kDefaultFloat,
      "jax.nn.one_hot(x, num_classes, dtype): x.shape + (num_classes,), 1 where the class equals the int index, "
      "else 0 (out-of-range indices give a zero row).");

  // ---- sorting ----
  def_op(
      m, "sort", [](const SymbolicTensor& x, std::optional<int64_t> axis) { return sort(x, axis); }, nb::arg("x"),
      nb::arg("axis") = -1, "numpy.sort(x, axis): ascending, stable, NaN last (None: over the flattened x).");
  def_op(
      m, "sort",
      [](const std::vector<SymbolicTensor>& xs, int64_t axis, int64_t num_keys) { return sort(xs, axis, num_keys); },
      nb::arg("xs"), nb::arg("axis") = -1, nb::arg("num_keys") = 1,
      "lax.sort(xs, axis, num_keys): every tensor of the list (one shape) sorted along `axis` by the first "
      "`num_keys` of them lexicographically (stable); returns a list.",
      nb::sig("def sort(xs: collections.abc.Sequence[SymbolicTensor], axis: int = -1, num_keys: int = 1) -> "
              "list[SymbolicTensor]"));
  def_op(
      m, "argsort", [](const SymbolicTensor& x, std::optional<int64_t> axis) { return argsort(x, axis); }, nb::arg("x"),
      nb::arg("axis") = -1,
      "numpy.argsort(x, axis, kind='stable'): int64 indices that sort x, NaN last (None: over the flattened x).");
  def_op(
      m, "top_k", [](const SymbolicTensor& x, int64_t k) { return top_k(x, k); }, nb::arg("x"), nb::arg("k"),
      "lax.top_k(x, k): tuple (values, int64 indices) of the k largest along the last axis, descending (ties: lower "
      "index first; NaN largest).");
  def_op(
      m, "searchsorted",
      [](const SymbolicTensor& a, const Operand& v, const std::string& side) { return searchsorted(a, v, side); },
      nb::arg("a"), nb::arg("v"), nb::arg("side") = "left",
      "numpy.searchsorted(a, v, side): int64 insertion indices of v into the sorted 1-D a (side 'left' or "
      "'right').");

  // ---- scans ----
  def_op(
      m, "cumsum",
      [](const SymbolicTensor& x, std::optional<int64_t> axis, bool reverse) { return cumsum(x, axis, reverse); },
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("reverse") = false,
      "numpy.cumsum(x, axis): inclusive running sum (bool and ints accumulate in int64/uint64; None: flattened; "
      "reverse: from the end).");
  def_op(
      m, "cumprod",
      [](const SymbolicTensor& x, std::optional<int64_t> axis, bool reverse) { return cumprod(x, axis, reverse); },
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("reverse") = false,
      "numpy.cumprod(x, axis): inclusive running product (bool and ints accumulate in int64/uint64; None: "
      "flattened; reverse: from the end).");
  def_op(
      m, "cummax",
      [](const SymbolicTensor& x, std::optional<int64_t> axis, bool reverse) { return cummax(x, axis, reverse); },
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("reverse") = false,
      "numpy.maximum.accumulate(x, axis): inclusive running maximum (None: flattened; reverse: from the end).");
  def_op(
      m, "cummin",
      [](const SymbolicTensor& x, std::optional<int64_t> axis, bool reverse) { return cummin(x, axis, reverse); },
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("reverse") = false,
      "numpy.minimum.accumulate(x, axis): inclusive running minimum (None: flattened; reverse: from the end).");

  // ---- convolution ----
  def_op(
      m, "conv_general",
      [](const Operand& lhs, const Operand& rhs, const std::optional<Ints>& window_strides, nb::object padding,
         const std::optional<Ints>& lhs_dilation, const std::optional<Ints>& rhs_dilation,
         int64_t feature_group_count) {
        return conv_general(lhs, rhs, or_empty(window_strides), conv_padding(padding, lhs), or_empty(lhs_dilation),
                            or_empty(rhs_dilation), feature_group_count);
      },
      nb::arg("lhs"), nb::arg("rhs"), nb::arg("window_strides") = nb::none(), nb::arg("padding") = "VALID",
      nb::arg("lhs_dilation") = nb::none(), nb::arg("rhs_dilation") = nb::none(), nb::arg("feature_group_count") = 1,
      "lax.conv_general_dilated(lhs, rhs, ...) in NCHW/OIHW layout: cross-correlation of lhs (N, C, spatial...) "
      "with rhs (O, C / groups, window...); padding 'SAME', 'VALID', an int or (low, high) per spatial dim.",
      nb::sig("def conv_general(lhs: SymbolicTensor | bool | int | float, rhs: SymbolicTensor | bool | int | "
              "float, window_strides: collections.abc.Sequence[int] | None = None, padding: str | int | "
              "collections.abc.Sequence[int | tuple[int, int]] = \"VALID\", lhs_dilation: "
              "collections.abc.Sequence[int] | None = None, rhs_dilation: collections.abc.Sequence[int] | None = "
              "None, feature_group_count: int = 1) -> SymbolicTensor"));
  const char* conv_docs[4][2] = {
      {"conv",
       "conv(x, w, strides, padding, dilation, groups) = conv_general(x, w, strides, padding, None, dilation, "
       "groups): N-d cross-correlation, x (N, C, spatial...), w (O, C / groups, window...)."},
      {"conv1d", "conv1d(x, w, ...) = conv(x, w, ...) with x (N, C, W): 1-D cross-correlation."},
      {"conv2d", "conv2d(x, w, ...) = conv(x, w, ...) with x (N, C, H, W): 2-D cross-correlation."},
      {"conv3d", "conv3d(x, w, ...) = conv(x, w, ...) with x (N, C, D, H, W): 3-D cross-correlation."},
  };
  using ConvFn = SymbolicTensor (*)(const Operand&, const Operand&, Ints, const ConvPadding&, Ints, int64_t, SrcLoc);
  static const ConvFn conv_fns[4] = {&conv, &conv1d, &conv2d, &conv3d};
  for (size_t i = 0; i < 4; ++i) {
    ConvFn fn = conv_fns[i];
    std::string sig = std::string("def ") + conv_docs[i][0] +
                      "(x: SymbolicTensor | bool | int | float, w: SymbolicTensor | bool | int | float, strides: "
                      "collections.abc.Sequence[int] | None = None, padding: str | int | "
                      "collections.abc.Sequence[int | tuple[int, int]] = \"VALID\", dilation: "
                      "collections.abc.Sequence[int] | None = None, groups: int = 1) -> SymbolicTensor";
    def_op(
        m, conv_docs[i][0],
        [fn](const Operand& x, const Operand& w, const std::optional<Ints>& strides, nb::object padding,
             const std::optional<Ints>& dilation, int64_t groups) {
          return fn(x, w, or_empty(strides), conv_padding(padding, x), or_empty(dilation), groups, SrcLoc::current());
        },
        nb::arg("x"), nb::arg("w"), nb::arg("strides") = nb::none(), nb::arg("padding") = "VALID",
        nb::arg("dilation") = nb::none(), nb::arg("groups") = 1, conv_docs[i][1],
        nb::sig(sig.c_str()));  // nanobind copies the signature
  }
}

}  // namespace evoxc::py
