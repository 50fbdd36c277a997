// Bindings of the indexing user functions (gather, scatter, take, index, put, dynamic slices) and x.at[...] updates.
#include <optional>
#include <string>
#include <vector>

#include "bind.h"
#include "evoxc/trace/indexing.h"

namespace evoxc::py {

void bind_ops_indexing(nb::module_& m) {
  def_op(
      m, "gather",
      [](const SymbolicTensor& a, const SymbolicTensor& indices, std::vector<int64_t> axes) {
        return gather(a, indices, std::move(axes));
      },
      nb::arg("a"), nb::arg("indices"), nb::arg("axes"),
      "The gather op: result indices.shape[:-1] + a's extents not in axes; entry k of each index vector (the last "
      "axis of indices) addresses a's axis axes[k]. Indices clamp into range.");
  def_op(
      m, "scatter",
      [](const SymbolicTensor& a, const SymbolicTensor& indices, const Operand& updates, std::vector<int64_t> axes,
         const std::string& mode) { return scatter(a, indices, updates, std::move(axes), mode); },
      nb::arg("a"), nb::arg("indices"), nb::arg("updates"), nb::arg("axes"), nb::arg("mode") = "set",
      "The scatter op: a copy of a with updates (gather's result shape, broadcast, converted to a's dtype) combined "
      "in at gather's positions; mode 'set' (last wins), 'add', 'mul', 'min', 'max'. Out-of-range rows are dropped.");
  def_op(
      m, "take",
      [](const SymbolicTensor& a, const SymbolicTensor& indices, std::optional<int64_t> axis, const std::string& mode) {
        return take(a, indices, axis, mode);
      },
      nb::arg("a"), nb::arg("indices"), nb::arg("axis") = nb::none(), nb::arg("mode") = "clip",
      "numpy.take(a, indices, axis, mode): a.shape[:axis] + indices.shape + a.shape[axis+1:] (no axis: over the "
      "flattened a); mode 'clip' (default: clamps, so -1 reads element 0) or 'wrap' (modulo a static extent).");
  def_op(
      m, "take_along_axis",
      [](const SymbolicTensor& a, const SymbolicTensor& indices, int64_t axis) {
        return take_along_axis(a, indices, axis);
      },
      nb::arg("a"), nb::arg("indices"), nb::arg("axis"),
      "numpy.take_along_axis(a, indices, axis): indices has a's rank, other axes broadcast; indices clamp.");
  def_op(
      m, "index", [](const SymbolicTensor& a, const std::vector<SymbolicTensor>& idx) { return index(a, idx); },
      nb::arg("a"), nb::arg("idx"),
      "numpy integer-array indexing a[i0, i1, ...] over the leading len(idx) axes: the indices broadcast together; "
      "result broadcast(idx).shape + a.shape[len(idx):]. Indices clamp.");
  def_op(
      m, "put",
      [](const SymbolicTensor& a, const SymbolicTensor& indices, const Operand& values, const std::string& mode) {
        return put(a, indices, values, mode);
      },
      nb::arg("a"), nb::arg("indices"), nb::arg("values"), nb::arg("mode") = "drop",
      "numpy.put without mutation: a copy of a whose flat positions indices take values (broadcast to indices' "
      "shape); mode 'drop' (default: out-of-range writes dropped), 'clip' or 'wrap'.");
  def_op(
      m, "scatter_add",
      [](const SymbolicTensor& a, const SymbolicTensor& indices, const Operand& updates, int64_t axis) {
        return scatter_add(a, indices, updates, axis);
      },
      nb::arg("a"), nb::arg("indices"), nb::arg("updates"), nb::arg("axis") = 0,
      "numpy.add.at(a, (slice(None),)*axis + (indices,), updates) without mutation: updates has take's result "
      "shape; duplicate indices add up; out-of-range rows are dropped.");
  def_op(
      m, "dynamic_slice",
      [](const SymbolicTensor& a, const std::vector<Operand>& starts, const std::vector<int64_t>& sizes) {
        return dynamic_slice(a, starts, sizes);
      },
      nb::arg("a"), nb::arg("starts"), nb::arg("sizes"),
      "a[s0:s0+n0, s1:s1+n1, ...] with starts (rank-0 int SymbolicTensors or ints) known at run time and static "
      "sizes; each start clamps into [0, extent - size] so the window fits.");
  def_op(
      m, "dynamic_update_slice",
      [](const SymbolicTensor& a, const Operand& update, const std::vector<Operand>& starts) {
        return dynamic_update_slice(a, update, starts);
      },
      nb::arg("a"), nb::arg("update"), nb::arg("starts"),
      "A copy of a with a[s0:s0+u0, ...] = update (starts: rank-0 int SymbolicTensors or ints, clamped into [0, "
      "extent - update extent] so the whole update is written).");
  def_op(
      m, "_at_update",
      [](const SymbolicTensor& a, std::vector<SymbolicTensor> idx, const std::string& mode,
         std::optional<Operand> value) -> SymbolicTensor {
        IndexUpdate u = at(a, std::move(idx));
        if (mode == "get") return u.get();
        if (!value) throw TraceError("x.at[...]." + mode + "(v) needs a value");
        if (mode == "set") return u.set(*value);
        if (mode == "add") return u.add(*value);
        if (mode == "multiply") return u.multiply(*value);
        if (mode == "min") return u.min(*value);
        if (mode == "max") return u.max(*value);
        throw TraceError("x.at[...]: unknown update mode '" + mode + "' (get, set, add, multiply, min, max)");
      },
      nb::arg("a"), nb::arg("idx"), nb::arg("mode"), nb::arg("value") = nb::none(),
      "JAX's a.at[i0, i1, ...].<mode>(value) over the leading len(idx) axes: mode 'get' is index(a, idx); 'set', "
      "'add', 'multiply', 'min', 'max' return a copy with value (broadcast to index's shape) combined in.");
}

}  // namespace evoxc::py
