// Shared by every binding file of the evoxc._core extension: type casters, the Python-location guard, def_op.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "evoxc/core/dtype.h"
#include "evoxc/core/shape.h"
#include "evoxc/core/tensor.h"
#include "evoxc/core/tree.h"
#include "evoxc/trace/ops.h"
#include "evoxc/trace/symbolic_tensor.h"
#include "evoxc/trace/trace.h"
#include "evoxc/transforms/transforms.h"

namespace evoxc::py {

namespace nb = nanobind;

// A dtype as Python sees it: one interned object per DType (evoxc.float32, ...). Arguments
// that take a dtype also accept its name ("float32") and numpy dtypes (np.float32).
struct DTypeBox {
  DType t;
};
// The interned Python object of `t` (created at module init).
nb::object dtype_object(DType t);
// DType of a Python object (DTypeBox, str, numpy dtype or scalar type); nullopt if it is none of them.
std::optional<DType> dtype_from_python(nb::handle h);

// Python's frame -> Location: the innermost frame outside the evoxc package (so ops emitted
// from our own Python sugar carry the user's file:line).
Location python_location();
void set_package_dir(std::string dir);

// While a Python function is being traced, every op binding sets the active trace's
// LocationScope to the caller's Python file:line (ops emitted by C++ code in between keep it).
// One scope per Python trace (and per traced region of it), innermost last.
class PyTraceScope {
 public:
  explicit PyTraceScope(TraceContext& ctx);
  ~PyTraceScope();
  PyTraceScope(const PyTraceScope&) = delete;
  PyTraceScope& operator=(const PyTraceScope&) = delete;

 private:
  TraceContext& ctx_;
  LocationScope scope_;
  PyTraceScope* outer_;
  friend struct LocateCall;
  friend class KeepLocation;
};

// Keeps the innermost Python trace scope's location across a callback into Python (a traced
// region), so the op that owns the region is recorded at its own call site.
class KeepLocation {
 public:
  KeepLocation();
  ~KeepLocation();
  KeepLocation(const KeepLocation&) = delete;
  KeepLocation& operator=(const KeepLocation&) = delete;

 private:
  PyTraceScope* scope_;
  Location saved_;
};

// nb::call_guard of every op binding: points the innermost Python trace scope at the caller.
struct LocateCall {
  LocateCall();
};

// m.def with the location guard: every user-facing op function is bound through this.
template <typename F, typename... Extra>
void def_op(nb::module_& m, const char* name, F&& f, const Extra&... extra) {
  m.def(name, std::forward<F>(f), extra..., nb::call_guard<LocateCall>());
}

// A Python exception raised in a callback C++ called, as the evoxc error it is (evoxc.DeviceError ->
// DeviceError, ...), else as a BackendError; `context` prefixes the message.
[[noreturn]] void rethrow_python_error(const nb::python_error& e, const std::string& context);

// The Python type name of an object, for messages.
std::string py_type_name(nb::handle h);
// An axis prefix tree (vmap in_axes/out_axes, batch_functions axes): ints at the leaves, None
// where unmapped, tuples/lists/dicts as the trees they prefix. ValidationError naming `what`.
AxisTree axis_tree_from_python(nb::handle h, const char* what);

// Whether `h` is host data (a Tensor, a numpy array, anything with the buffer protocol or
// __array__/__dlpack__) rather than a symbolic value or scalar.
bool is_host_data(nb::handle h) noexcept;
// The TraceError for host data used where a symbolic value is needed.
[[noreturn]] void host_data_error();

// A Python object C++ holds beyond any one call: released under the GIL (also while the interpreter finalizes, so
// a module an executable held is freed before the runtime that made it checks for leaks), or leaked when the
// interpreter is already gone (a backend lives in the registry until exit).
class PyRef {
 public:
  explicit PyRef(nb::object o) : o_(new nb::object(std::move(o))) {}
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  ~PyRef() {
    if (!Py_IsInitialized()) return;  // leaked: no interpreter to release it in
    nb::gil_scoped_acquire gil;
    delete o_;
  }
  const nb::object& get() const { return *o_; }

 private:
  nb::object* o_;
};

// A host callback over evoxc Tensors that calls Python `fn(inputs, outputs)` (lists of Tensors viewing the
// buffers) with the GIL taken for the call only; a Python exception is raised again as an evoxc error prefixed by
// `what` (block.cpp; custom-op implementations and external kernels share it).
std::function<void(std::span<const Tensor>, std::span<Tensor>)> python_tensor_callback(nb::callable fn,
                                                                                       std::string what);

// Registration of each binding file (module.cpp calls them in order).
void bind_core(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_trace(nb::module_& m);
void bind_pipeline(nb::module_& m);
void bind_transforms(nb::module_& m);
void bind_batch(nb::module_& m);
void bind_control(nb::module_& m);
void bind_ops_elementwise(nb::module_& m);
void bind_ops_reduce_linalg(nb::module_& m);
void bind_ops_structure(nb::module_& m);
void bind_ops_indexing(nb::module_& m);
void bind_gp(nb::module_& m);
void bind_xla(nb::module_& m);
void bind_io(nb::module_& m);
void bind_external(nb::module_& m);
void bind_random(nb::module_& m);
void bind_block(nb::module_& m);
void bind_external_call(nb::module_& m);
void bind_sparse(nb::module_& m);

// The C++ tree of a normalised Python pytree (tuple, list, dict with str keys, None, leaves)
// and back. `leaf` converts one leaf.
template <typename T, typename F>
Tree<T> tree_from_python(nb::handle h, F&& leaf, int depth = 0);
nb::object tree_to_python(const Tree<SymbolicTensor>& t);
// A TraceFunction calling a Python callback with the input SymbolicTensors (flattening order)
// and converting what it returns (a normalised pytree of SymbolicTensors).
TraceFunction python_trace_function(nb::callable cb);
// A traced function's output leaf: a SymbolicTensor, else the TraceError saying what it got.
SymbolicTensor output_leaf(nb::handle h);
// Normalised Python pytrees of TensorSpecs and statics -> trace arguments.
std::vector<TraceArg> trace_args_from_python(const nb::list& args);
nb::object tensor_tree_to_python(const Tree<Tensor>& t);

template <typename T, typename F>
Tree<T> tree_from_python(nb::handle h, F&& leaf, int depth) {
  if (depth > kMaxNestingDepth) throw ValidationError("pytree nested more than " + std::to_string(kMaxNestingDepth));
  if (h.is_none()) return Tree<T>();
  if (PyTuple_CheckExact(h.ptr()) || PyList_CheckExact(h.ptr())) {
    std::vector<Tree<T>> kids;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(h.ptr());
    kids.reserve(static_cast<size_t>(n));
    PyObject** items = PySequence_Fast_ITEMS(h.ptr());
    for (Py_ssize_t i = 0; i < n; ++i) kids.push_back(tree_from_python<T>(nb::handle(items[i]), leaf, depth + 1));
    return PyTuple_CheckExact(h.ptr()) ? Tree<T>::tuple(std::move(kids)) : Tree<T>::list(std::move(kids));
  }
  if (PyDict_CheckExact(h.ptr())) {
    std::map<std::string, Tree<T>> kids;
    for (auto [k, v] : nb::borrow<nb::dict>(h)) {
      if (!nb::isinstance<nb::str>(k)) throw ValidationError("pytree dict keys must be str");
      kids.emplace(nb::cast<std::string>(k), tree_from_python<T>(v, leaf, depth + 1));
    }
    return Tree<T>::dict(std::move(kids));
  }
  return Tree<T>(leaf(h));
}

}  // namespace evoxc::py

// ---- type casters ----
namespace nanobind::detail {

// Operand: a SymbolicTensor or a Python scalar (weakly typed). A Tensor or a numpy array is
// host data: converting one is the TraceError that says how data enters a graph.
template <>
struct type_caster<evoxc::Operand> {
  using Value = evoxc::Operand;
  static constexpr auto Name = const_name("SymbolicTensor | bool | int | float");
  template <typename T_>
  using Cast = Value;
  template <typename T_>
  static constexpr bool can_cast() {
    return true;
  }
  std::optional<Value> value;
  bool host_data = false;

  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) noexcept;
  static handle from_cpp(const Value& v, rv_policy policy, cleanup_list* cleanup) noexcept;
  explicit operator Value() {
    if (host_data) evoxc::py::host_data_error();
    return *value;
  }
};

// SymbolicTensor: the bound class; a Tensor or host array in its place is the TraceError that
// says how data enters a graph (a captured Tensor in a traced closure ends up here).
template <>
struct type_caster<evoxc::SymbolicTensor> : type_caster_base<evoxc::SymbolicTensor> {
  using Base = type_caster_base<evoxc::SymbolicTensor>;
  bool host_data = false;
  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) noexcept {
    if (Base::from_python(src, flags, cleanup)) return true;
    host_data = evoxc::py::is_host_data(src);
    return host_data;
  }
  template <typename T_>
  bool can_cast() const noexcept {
    return host_data || Base::template can_cast<T_>();
  }
  void check() const {
    if (host_data) evoxc::py::host_data_error();
  }
  operator evoxc::SymbolicTensor*() {
    check();
    return Base::operator evoxc::SymbolicTensor*();
  }
  operator evoxc::SymbolicTensor&() {
    check();
    return Base::operator evoxc::SymbolicTensor&();
  }
  operator evoxc::SymbolicTensor&&() {
    check();
    return Base::operator evoxc::SymbolicTensor&&();
  }
};

// Lists of SymbolicTensors / Operands convert their elements here rather than through nanobind's
// list caster, so host data in a list reaches the op as the TraceError (the list caster converts
// inside a noexcept function, where that error would terminate the process).
template <typename Elem>
struct host_checked_list_caster {
  using Value = std::vector<Elem>;
  static constexpr auto Name = const_name("Sequence[") + make_caster<Elem>::Name + const_name("]");
  template <typename T_>
  using Cast = movable_cast_t<T_>;
  template <typename T_>
  static constexpr bool can_cast() {
    return true;
  }
  Value value;
  bool host_data = false;

  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) noexcept {
    if (!PyList_Check(src.ptr()) && !PyTuple_Check(src.ptr())) {
      if (evoxc::py::is_host_data(src)) return host_data = true;
      return false;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(src.ptr());
    PyObject** items = PySequence_Fast_ITEMS(src.ptr());
    value.clear();
    value.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      make_caster<Elem> c;
      if (!c.from_python(handle(items[i]), flags, cleanup)) return false;
      if (c.host_data) {
        host_data = true;
        continue;
      }
      value.push_back(c.operator cast_t<Elem>());
    }
    return true;
  }
  static handle from_cpp(const Value& v, rv_policy policy, cleanup_list* cleanup) noexcept {
    PyObject* l = PyList_New(static_cast<Py_ssize_t>(v.size()));
    for (size_t i = 0; i < v.size(); ++i)
      PyList_SET_ITEM(l, static_cast<Py_ssize_t>(i), make_caster<Elem>::from_cpp(v[i], policy, cleanup).ptr());
    return l;
  }
  void check() const {
    if (host_data) evoxc::py::host_data_error();
  }
  explicit operator Value*() {
    check();
    return &value;
  }
  explicit operator Value&() {
    check();
    return value;
  }
  explicit operator Value&&() {
    check();
    return std::move(value);
  }
};
template <>
struct type_caster<std::vector<evoxc::SymbolicTensor>> : host_checked_list_caster<evoxc::SymbolicTensor> {};
template <>
struct type_caster<std::vector<evoxc::Operand>> : host_checked_list_caster<evoxc::Operand> {};

// DType: evoxc.float32, "float32", np.float32, np.dtype("float32").
template <>
struct type_caster<evoxc::DType> {
  NB_TYPE_CASTER(evoxc::DType, const_name("evoxc.DType"))
  bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
    try {
      auto t = evoxc::py::dtype_from_python(src);
      if (!t) return false;
      value = *t;
      return true;
    } catch (...) {
      PyErr_Clear();
      return false;
    }
  }
  static handle from_cpp(evoxc::DType t, rv_policy, cleanup_list*) noexcept {
    return evoxc::py::dtype_object(t).release();
  }
};

// Axes: None (every axis), an int, or a sequence of ints.
template <>
struct type_caster<evoxc::Axes> {
  NB_TYPE_CASTER(evoxc::Axes, const_name("None | int | Sequence[int]"))
  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) noexcept;
  static handle from_cpp(const evoxc::Axes&, rv_policy, cleanup_list*) noexcept { return none().release(); }
};

// Shape: a sequence of ints and Dims (a lone int or Dim is a rank-1 shape).
template <>
struct type_caster<evoxc::Shape> {
  NB_TYPE_CASTER(evoxc::Shape, const_name("Sequence[int | evoxc.Dim]"))
  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) noexcept;
  static handle from_cpp(const evoxc::Shape& s, rv_policy policy, cleanup_list* cleanup) noexcept;
};

}  // namespace nanobind::detail
