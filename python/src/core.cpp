// Bindings of the core value types: dtypes, Dim, TensorSpec, Device, the error classes, and the shared casters.
#include <nanobind/stl/map.h>

#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <typeinfo>
#include <unordered_map>

#include "bind.h"
// After Python.h (included by nanobind through bind.h).
#include <frameobject.h>

#include "evoxc/c_api.h"
#include "evoxc/core/device.h"
#include "evoxc/core/dim.h"
#include "evoxc/core/error.h"

namespace evoxc::py {

namespace {

// Borrowed: the module's attributes (evoxc.float32, ...) own the objects, so nothing outlives the
// interpreter (nanobind's leak check at exit stays quiet).
std::array<PyObject*, kNumDTypes>& dtype_objects() {
  static std::array<PyObject*, kNumDTypes> objs{};
  return objs;
}

std::string& package_dir() {
  static std::string dir;
  return dir;
}

// The Python exception classes, one per C++ error type, base first.
struct ErrorClass {
  const char* name;
  const char* doc;
  PyObject* builtin;  // also derives from this builtin (or nullptr)
  bool (*matches)(const std::exception&);
  void (*raise)(const std::string& message);  // throws the C++ type
  PyObject* cls = nullptr;
};

template <typename E>
bool is_a(const std::exception& e) {
  return dynamic_cast<const E*>(&e) != nullptr;
}
template <typename E>
[[noreturn]] void throw_as(const std::string& message) {
  throw E(message);
}

// Most derived first, so the first match is the exact type. RunLimitError is a RuntimeError
// to Python; ShapeError, ValidationError, ParseError, VerifyError and PersistenceError are
// ValueErrors; TypeError (dtype inference) is a TypeError.
std::vector<ErrorClass>& error_classes() {
  static std::vector<ErrorClass> classes = {
      {"TraceError", "Misuse while tracing a function (no eager mode, Python control flow on a symbolic value, ...).",
       nullptr, is_a<TraceError>, throw_as<TraceError>},
      {"TransformError", "A graph transform cannot handle an op (the message names it).", nullptr, is_a<TransformError>,
       throw_as<TransformError>},
      {"BackendError", "A backend cannot lower, compile or run something (the message names the op and remedy).",
       nullptr, is_a<BackendError>, throw_as<BackendError>},
      {"PersistenceError", "A file is malformed, truncated or of another version, backend or ABI.", PyExc_ValueError,
       is_a<PersistenceError>, throw_as<PersistenceError>},
      {"DeviceError", "Data is on the wrong device.", nullptr, is_a<DeviceError>, throw_as<DeviceError>},
      {"ShapeError", "Shape inference rejects the operands.", PyExc_ValueError, is_a<ShapeError>, throw_as<ShapeError>},
      {"DTypeError", "dtype inference rejects the operands (C++ evoxc::TypeError).", PyExc_TypeError,
       is_a<evoxc::TypeError>, throw_as<evoxc::TypeError>},
      {"ValidationError", "Inputs do not match what the executable or function expects.", PyExc_ValueError,
       is_a<ValidationError>, throw_as<ValidationError>},
      {"ParseError", "EvoXIR text does not parse.", PyExc_ValueError, is_a<ParseError>, throw_as<ParseError>},
      {"VerifyError", "A graph breaks an IR invariant.", PyExc_ValueError, is_a<VerifyError>, throw_as<VerifyError>},
      {"RunLimitError", "A run hit a limit of its options (deadline, loop iterations, cancellation).",
       PyExc_RuntimeError, is_a<RunLimitError>, throw_as<RunLimitError>},
      {"TimeoutError", "A wait ran out of time; what it waited for goes on (evoxc.io's copies).", PyExc_TimeoutError,
       is_a<evoxc::TimeoutError>, throw_as<evoxc::TimeoutError>},
      {"InternalError", "An evoxc bug: please report it.", nullptr, is_a<InternalError>, throw_as<InternalError>},
  };
  return classes;
}

PyObject* g_error_base = nullptr;

}  // namespace

nb::object dtype_object(DType t) { return nb::borrow(dtype_objects()[static_cast<size_t>(t)]); }

std::optional<DType> dtype_from_python(nb::handle h) {
  if (nb::isinstance<DTypeBox>(h)) return nb::cast<DTypeBox&>(h).t;
  if (nb::isinstance<nb::str>(h)) {
    std::string s = nb::cast<std::string>(h);
    if (s == "bool_") s = "bool";
    return parse_dtype(s);
  }
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::Bool;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return kDefaultFloat;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return kIndexType;
  // numpy dtypes and scalar types: np.dtype(h).name
  if (nb::hasattr(h, "dtype") || nb::hasattr(h, "itemsize")) {
    nb::object np = nb::module_::import_("numpy");
    nb::object name = np.attr("dtype")(h).attr("name");
    std::string s = nb::cast<std::string>(name);
    if (s == "bool") return DType::Bool;
    return parse_dtype(s);
  }
  return std::nullopt;
}

void rethrow_python_error(const nb::python_error& e, const std::string& context) {
  std::string message = context + nb::cast<std::string>(nb::str(e.value()));
  for (const auto& ec : error_classes())
    if (ec.cls && e.matches(nb::handle(ec.cls))) ec.raise(message);
  throw BackendError(context + e.what());
}

std::string py_type_name(nb::handle h) { return nb::cast<std::string>(nb::str(h.type().attr("__name__"))); }

AxisTree axis_tree_from_python(nb::handle h, const char* what) {
  return tree_from_python<int64_t>(h, [what](nb::handle leaf) -> int64_t {
    if (PyLong_Check(leaf.ptr()) && !PyBool_Check(leaf.ptr())) return nb::cast<int64_t>(leaf);
    throw ValidationError(std::string(what) + " leaves must be ints or None, got " +
                          nb::cast<std::string>(nb::repr(leaf)));
  });
}

bool is_host_data(nb::handle h) noexcept {
  PyObject* o = h.ptr();
  bool r = nb::isinstance<Tensor>(h) || PyObject_CheckBuffer(o) || PyObject_HasAttrString(o, "__array__") ||
           PyObject_HasAttrString(o, "__dlpack__");
  PyErr_Clear();
  return r;
}

void host_data_error() {
  throw TraceError(
      "a Tensor or array cannot be used inside a traced function (is one captured in a closure?): host data enters a "
      "graph only as an input (pass a TensorSpec to trace) or through evoxc.constant(...)");
}

void set_package_dir(std::string dir) { package_dir() = std::move(dir); }

namespace {

// What python_location needs of a code object: its file's base name and whether it is evoxc's own, and its line
// numbers by instruction offset. Consecutive ops come from a few functions, so a handful of entries spare each op a
// UTF-8 conversion, a prefix compare and a line-table scan (CPython's PyFrame_GetLineNumber walks the table from
// the start: 7% of a trace). Each entry holds a reference to its code object, so no other object can take its
// address while cached; the entries alive at thread exit are never released (the interpreter may be gone then).
struct CodeEntry {
  PyCodeObject* code = nullptr;
  bool ours = false;
  bool has_file = false;
  std::string file;
  std::unordered_map<int, int> lines;  // instruction offset -> line
};
constexpr size_t kCodeEntries = 8;
struct CodeCache {
  std::array<CodeEntry, kCodeEntries> entries;
  size_t next = 0;  // the entry replaced next (round robin)
};
thread_local CodeCache g_codes;

CodeEntry& code_entry(PyCodeObject* code, const std::string& pkg) {
  for (CodeEntry& e : g_codes.entries)
    if (e.code == code) return e;
  CodeEntry& e = g_codes.entries[g_codes.next];
  g_codes.next = (g_codes.next + 1) % kCodeEntries;
  Py_XDECREF(reinterpret_cast<PyObject*>(e.code));
  Py_INCREF(reinterpret_cast<PyObject*>(code));
  e.code = code;
  e.lines.clear();
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  if (!file) PyErr_Clear();
  e.has_file = file != nullptr;
  e.ours = file && !pkg.empty() && std::strncmp(file, pkg.c_str(), pkg.size()) == 0;
  e.file.clear();
  if (file && !e.ours) {
    std::string_view path(file);
    size_t slash = path.find_last_of('/');
    e.file = std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
  }
  return e;
}

int line_of(CodeEntry& e, PyFrameObject* f) {
#if PY_VERSION_HEX >= 0x030B0000
  auto [it, fresh] = e.lines.try_emplace(PyFrame_GetLasti(f), 0);
  if (fresh) it->second = PyFrame_GetLineNumber(f);
  return it->second;
#else
  (void)e;
  return PyFrame_GetLineNumber(f);
#endif
}

}  // namespace

Location python_location() {
  PyFrameObject* f = PyEval_GetFrame();  // borrowed
  if (!f) return {};
  Py_INCREF(f);
  const std::string& pkg = package_dir();
  Location loc;
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);  // new reference
    CodeEntry& e = code_entry(code, pkg);
    Py_DECREF(code);  // the entry keeps its own reference
    if (!e.ours && e.has_file) {
      loc.file = e.file;
      loc.line = line_of(e, f);
      Py_DECREF(f);
      return loc;
    }
    PyFrameObject* back = PyFrame_GetBack(f);  // new reference
    Py_DECREF(f);
    f = back;
  }
  if (PyErr_Occurred()) PyErr_Clear();
  return loc;
}

namespace {
thread_local PyTraceScope* g_innermost = nullptr;
}

PyTraceScope::PyTraceScope(TraceContext& ctx) : ctx_(ctx), scope_(ctx, python_location()), outer_(g_innermost) {
  g_innermost = this;
}
PyTraceScope::~PyTraceScope() { g_innermost = outer_; }

LocateCall::LocateCall() {
  PyTraceScope* s = g_innermost;
  if (s && TraceContext::current_or_null() == &s->ctx_) {
    Location loc = python_location();
    if (loc.known()) s->scope_.set(std::move(loc));
  }
}

KeepLocation::KeepLocation() : scope_(g_innermost) {
  if (scope_) saved_ = scope_->scope_.location();
}
KeepLocation::~KeepLocation() {
  if (scope_ && g_innermost == scope_) scope_->scope_.set(saved_);
}

nb::object tree_to_python(const Tree<SymbolicTensor>& t) {
  switch (t.kind()) {
    case TreeKind::None: return nb::none();
    case TreeKind::Leaf: return nb::cast(t.leaf());
    case TreeKind::Tuple:
    case TreeKind::List: {
      nb::list l;
      for (const auto& c : t.children()) l.append(tree_to_python(c));
      if (t.kind() == TreeKind::List) return l;
      return nb::tuple(l);
    }
    case TreeKind::Dict: {
      nb::dict d;
      for (size_t i = 0; i < t.size(); ++i) d[nb::str(t.keys()[i].c_str())] = tree_to_python(t.children()[i]);
      return d;
    }
  }
  return nb::none();
}

nb::object tensor_tree_to_python(const Tree<Tensor>& t) {
  switch (t.kind()) {
    case TreeKind::None: return nb::none();
    case TreeKind::Leaf: return nb::cast(t.leaf());
    case TreeKind::Tuple: {
      nb::tuple tup = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(t.size())));
      for (size_t i = 0; i < t.size(); ++i)
        PyTuple_SET_ITEM(tup.ptr(), static_cast<Py_ssize_t>(i), tensor_tree_to_python(t.children()[i]).release().ptr());
      return tup;
    }
    case TreeKind::List: {
      nb::list l;
      for (const auto& c : t.children()) l.append(tensor_tree_to_python(c));
      return l;
    }
    case TreeKind::Dict: {
      nb::dict d;
      for (size_t i = 0; i < t.size(); ++i) d[nb::str(t.keys()[i].c_str())] = tensor_tree_to_python(t.children()[i]);
      return d;
    }
  }
  return nb::none();
}

namespace {

DimExpr dim_from_python(nb::handle h) {
  if (nb::isinstance<DimExpr>(h)) return nb::cast<DimExpr>(h);
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return DimExpr(nb::cast<int64_t>(h));
  if (PyIndex_Check(h.ptr()) && !PyBool_Check(h.ptr())) return DimExpr(nb::cast<int64_t>(nb::int_(h)));
  throw ShapeError("a shape extent must be an int or an evoxc.Dim, got " + py_type_name(h));
}

nb::object dim_to_python(const DimExpr& d) {
  if (auto c = d.as_const()) return nb::int_(*c);
  return nb::cast(d);
}

}  // namespace

void bind_core(nb::module_& m) {
  // ---- errors: one base class, one subclass per stage ----
  g_error_base = PyErr_NewExceptionWithDoc("evoxc.EvoxcError", "Base class of every error evoxc raises on purpose.",
                                           PyExc_Exception, nullptr);
  m.attr("EvoxcError") = nb::handle(g_error_base);
  for (auto& ec : error_classes()) {
    std::string qual = std::string("evoxc.") + ec.name;
    nb::object bases = ec.builtin ? nb::object(nb::make_tuple(nb::handle(g_error_base), nb::handle(ec.builtin)))
                                  : nb::object(nb::borrow(g_error_base));
    ec.cls = PyErr_NewExceptionWithDoc(qual.c_str(), ec.doc, bases.ptr(), nullptr);
    m.attr(ec.name) = nb::handle(ec.cls);
  }
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const evoxc::Error& e) {
      for (const auto& ec : error_classes()) {
        if (ec.matches(e)) {
          PyErr_SetString(ec.cls, e.what());
          return;
        }
      }
      PyErr_SetString(g_error_base, e.what());
    }
  });

  // ---- dtypes ----
  nb::class_<DTypeBox>(m, "DType", "An element type: evoxc.float32, evoxc.int64, ... (one object per dtype).")
      .def_prop_ro("name", [](const DTypeBox& d) { return std::string(dtype_name(d.t)); })
      .def_prop_ro("itemsize", [](const DTypeBox& d) { return size_of(d.t); })
      .def_prop_ro("is_floating", [](const DTypeBox& d) { return is_float(d.t); })
      .def_prop_ro("is_integer", [](const DTypeBox& d) { return is_int(d.t); })
      .def_prop_ro("is_signed", [](const DTypeBox& d) { return is_signed_int(d.t) || is_float(d.t); })
      .def("__repr__", [](const DTypeBox& d) { return std::string(dtype_name(d.t)); })
      .def("__str__", [](const DTypeBox& d) { return std::string(dtype_name(d.t)); })
      .def("__hash__", [](const DTypeBox& d) { return static_cast<int64_t>(d.t); })
      .def("__eq__",
           [](const DTypeBox& d, nb::handle o) {
             auto t = dtype_from_python(o);
             return t && *t == d.t;
           })
      .def("__reduce__", [](const DTypeBox& d) {
        return nb::make_tuple(nb::module_::import_("evoxc").attr("dtype"),
                              nb::make_tuple(std::string(dtype_name(d.t))));
      });
  for (int i = 0; i < kNumDTypes; ++i) {
    auto t = static_cast<DType>(i);
    nb::object obj = nb::cast(DTypeBox{t});
    dtype_objects()[static_cast<size_t>(i)] = obj.ptr();
    std::string name(dtype_name(t));
    m.attr(name == "bool" ? "bool_" : name.c_str()) = obj;
  }
  m.def(
      "dtype",
      [](nb::handle h) {
        auto t = dtype_from_python(h);
        if (!t) throw evoxc::TypeError("not a dtype: " + nb::cast<std::string>(nb::repr(h)));
        return *t;
      },
      nb::arg("x"), "The evoxc dtype of a dtype object, a name ('float32') or a numpy dtype.");
  m.def(
      "promote_types", [](DType a, DType b) { return promote_types(a, b); }, nb::arg("a"), nb::arg("b"),
      "The result dtype of a binary op on tensors of dtypes a and b (docs/semantics.md).");

  // ---- Dim ----
  nb::class_<DimExpr>(m, "Dim",
                      "A symbolic extent: evoxc.dim('B'); supports + - * // % and min/max with Dims and ints.")
      .def(nb::init<int64_t>(), nb::arg("value"))
      .def("__init__", [](DimExpr* self, const std::string& name) { new (self) DimExpr(DimExpr::symbol(name)); })
      .def_prop_ro("is_symbol", &DimExpr::is_symbol)
      .def_prop_ro("is_constant", &DimExpr::is_const)
      .def("__repr__", [](const DimExpr& d) { return d.to_string(); })
      .def("__str__", [](const DimExpr& d) { return d.to_string(); })
      .def("__hash__", [](const DimExpr& d) { return d.hash(); })
      .def("__eq__",
           [](const DimExpr& a, nb::handle b) {
             try {
               return a == dim_from_python(b);
             } catch (const ShapeError&) {
               return false;
             }
           })
      .def("__add__", [](const DimExpr& a, nb::handle b) { return dim_to_python(a + dim_from_python(b)); })
      .def("__radd__", [](const DimExpr& a, nb::handle b) { return dim_to_python(dim_from_python(b) + a); })
      .def("__sub__", [](const DimExpr& a, nb::handle b) { return dim_to_python(a - dim_from_python(b)); })
      .def("__rsub__", [](const DimExpr& a, nb::handle b) { return dim_to_python(dim_from_python(b) - a); })
      .def("__mul__", [](const DimExpr& a, nb::handle b) { return dim_to_python(a * dim_from_python(b)); })
      .def("__rmul__", [](const DimExpr& a, nb::handle b) { return dim_to_python(dim_from_python(b) * a); })
      .def("__floordiv__",
           [](const DimExpr& a, nb::handle b) { return dim_to_python(floordiv(a, dim_from_python(b))); })
      .def("__rfloordiv__",
           [](const DimExpr& a, nb::handle b) { return dim_to_python(floordiv(dim_from_python(b), a)); })
      .def("__mod__", [](const DimExpr& a, nb::handle b) { return dim_to_python(a % dim_from_python(b)); })
      .def("__rmod__", [](const DimExpr& a, nb::handle b) { return dim_to_python(dim_from_python(b) % a); })
      .def("__bool__", [](const DimExpr& d) -> bool {
        if (auto c = d.as_const()) return *c != 0;
        throw TraceError("a symbolic Dim (" + d.to_string() + ") has no truth value at trace time");
      });
  m.def(
      "dim", [](const std::string& name) { return DimExpr::symbol(name); }, nb::arg("name"),
      "A named symbolic extent, e.g. B = evoxc.dim('B'); TensorSpec((B, 4)) accepts any batch size.");
  m.def(
      "dim_min", [](nb::handle a, nb::handle b) { return dim_to_python(min(dim_from_python(a), dim_from_python(b))); },
      nb::arg("a"), nb::arg("b"), "min of two extents (Dims or ints).");
  m.def(
      "dim_max", [](nb::handle a, nb::handle b) { return dim_to_python(max(dim_from_python(a), dim_from_python(b))); },
      nb::arg("a"), nb::arg("b"), "max of two extents (Dims or ints).");

  // ---- Device ----
  nb::class_<Device>(m, "Device", "Where a tensor's storage lives: Device('cpu', 0), Device('cuda', 1), ...")
      .def(
          "__init__",
          [](Device* self, const std::string& kind, std::optional<int> index) {
            // "cuda:1" carries its index; a second one must agree with it.
            Device d = Device::parse(kind);
            bool has_index = kind.find(':') != std::string::npos;
            if (index && has_index && *index != d.index)
              throw ValidationError("Device('" + kind + "', " + std::to_string(*index) + "): two different indices");
            if (index && *index < 0) throw ValidationError("Device: a negative index " + std::to_string(*index));
            new (self) Device(d.kind, index ? *index : d.index);
          },
          nb::arg("kind") = "cpu", nb::arg("index") = nb::none())
      .def_prop_ro("kind", [](const Device& d) { return std::string(d.kind_name()); })
      .def_ro("index", &Device::index)
      .def("__repr__", &Device::repr)
      .def("__str__", &Device::repr)
      .def("__eq__",
           [](const Device& a, nb::handle b) {
             if (nb::isinstance<Device>(b)) return a == nb::cast<Device>(b);
             if (nb::isinstance<nb::str>(b)) return a == Device::parse(nb::cast<std::string>(b));
             return false;
           })
      .def("__hash__", [](const Device& d) { return static_cast<int64_t>(d.kind) * 1000003 + d.index; });
  nb::implicitly_convertible<std::string, Device>();

  // ---- TensorSpec ----
  nb::class_<TensorSpec>(m, "TensorSpec",
                         "Describes a future runtime tensor: shape (ints and Dims), dtype, optional device.")
      .def(
          "__init__",
          [](TensorSpec* self, const Shape& shape, DType dtype, std::optional<Device> device) {
            new (self) TensorSpec(shape, dtype, device);
          },
          nb::arg("shape"), nb::arg("dtype") = kDefaultFloat, nb::arg("device") = nb::none())
      .def_prop_ro("shape", [](const TensorSpec& s) { return s.shape; })
      .def_prop_ro("dtype", [](const TensorSpec& s) { return s.dtype; })
      .def_prop_ro("device", [](const TensorSpec& s) { return s.device; })
      .def_prop_ro("ndim", [](const TensorSpec& s) { return s.shape.rank(); })
      .def("__repr__",
           [](const TensorSpec& s) {
             std::string r = "TensorSpec(" + s.to_string();
             if (s.device) r += ", device=" + s.device->to_string();
             return r + ")";
           })
      .def("__eq__", [](const TensorSpec& a,
                        nb::handle b) { return nb::isinstance<TensorSpec>(b) && a == nb::cast<TensorSpec>(b); })
      .def("__hash__", [](const TensorSpec& s) {
        size_t h = static_cast<size_t>(s.dtype);
        for (const auto& d : s.shape) h = h * 1000003u ^ d.hash();
        if (s.device) h = h * 31u + static_cast<size_t>(s.device->kind) * 7u + static_cast<size_t>(s.device->index);
        return h;
      });
  m.def("_set_package_dir", &set_package_dir);
  // The C ABI's version: the one this module was compiled against and the loaded libevoxc's.
  m.attr("ABI_VERSION") = EVOXC_ABI_VERSION;
  m.def("abi_version", &evoxc_abi_version, "The C ABI version (evoxc/c_api.h) of the loaded libevoxc.");
  // Tracer warnings (constant() embedding data) become Python warnings, so users can filter them.
  set_warning_handler([](const std::string& message) {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) PyErr_Clear();
  });
}

}  // namespace evoxc::py

namespace nanobind::detail {

bool type_caster<evoxc::Operand>::from_python(handle src, uint32_t, cleanup_list*) noexcept {
  PyObject* o = src.ptr();
  if (nanobind::isinstance<evoxc::SymbolicTensor>(src)) {
    value.emplace(nanobind::cast<evoxc::SymbolicTensor>(src));
    return true;
  }
  if (PyBool_Check(o)) {
    value.emplace(o == Py_True);
    return true;
  }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    value.emplace(v);
    return true;
  }
  if (PyFloat_Check(o)) {
    value.emplace(PyFloat_AS_DOUBLE(o));
    return true;
  }
  if (nanobind::isinstance<evoxc::Tensor>(src) || PyObject_CheckBuffer(o) || PyObject_HasAttrString(o, "__array__")) {
    // numpy scalars are numbers, not host arrays
    if (PyObject_HasAttrString(o, "item") && PyObject_HasAttrString(o, "dtype") && PyObject_HasAttrString(o, "ndim")) {
      PyObject* nd = PyObject_GetAttrString(o, "ndim");
      long d = nd ? PyLong_AsLong(nd) : -1;
      Py_XDECREF(nd);
      if (d == 0 && !nanobind::isinstance<evoxc::Tensor>(src)) {
        PyObject* item = PyObject_CallMethod(o, "item", nullptr);
        if (!item) {
          PyErr_Clear();
          return false;
        }
        bool ok = from_python(handle(item), 0, nullptr);
        Py_DECREF(item);
        return ok;
      }
    }
    PyErr_Clear();
    host_data = true;
    value.emplace(false);
    return true;
  }
  return false;
}

handle type_caster<evoxc::Operand>::from_cpp(const evoxc::Operand& v, rv_policy, cleanup_list*) noexcept {
  switch (v.kind()) {
    case evoxc::Operand::Kind::Tensor: return nanobind::cast(v.tensor()).release();
    case evoxc::Operand::Kind::Bool: return PyBool_FromLong(v.int_value() != 0);
    case evoxc::Operand::Kind::Int: return PyLong_FromLongLong(v.int_value());
    case evoxc::Operand::Kind::Float: return PyFloat_FromDouble(v.float_value());
  }
  return none().release();
}

bool type_caster<evoxc::Axes>::from_python(handle src, uint32_t, cleanup_list*) noexcept {
  try {
    if (src.is_none()) {
      value = evoxc::Axes::all();
      return true;
    }
    if (PyLong_Check(src.ptr()) && !PyBool_Check(src.ptr())) {
      value = evoxc::Axes(nanobind::cast<int64_t>(src));
      return true;
    }
    if (PyTuple_Check(src.ptr()) || PyList_Check(src.ptr())) {
      std::vector<int64_t> a;
      for (handle h : nanobind::borrow<nanobind::sequence>(src)) {
        if (!PyLong_Check(h.ptr()) || PyBool_Check(h.ptr())) return false;
        a.push_back(nanobind::cast<int64_t>(h));
      }
      value = evoxc::Axes(std::move(a));
      return true;
    }
  } catch (...) {
    PyErr_Clear();
  }
  return false;
}

bool type_caster<evoxc::Shape>::from_python(handle src, uint32_t, cleanup_list*) noexcept {
  try {
    std::vector<evoxc::DimExpr> dims;
    auto one = [&](handle h) -> bool {
      if (nanobind::isinstance<evoxc::DimExpr>(h)) {
        dims.push_back(nanobind::cast<evoxc::DimExpr>(h));
        return true;
      }
      if (PyIndex_Check(h.ptr()) && !PyBool_Check(h.ptr())) {
        dims.push_back(evoxc::DimExpr(nanobind::cast<int64_t>(nanobind::int_(h))));
        return true;
      }
      return false;
    };
    if (PyTuple_Check(src.ptr()) || PyList_Check(src.ptr())) {
      for (handle h : nanobind::borrow<nanobind::sequence>(src))
        if (!one(h)) return false;
    } else if (!one(src)) {
      return false;
    }
    value = evoxc::Shape(std::move(dims));
    return true;
  } catch (...) {
    PyErr_Clear();
    return false;
  }
}

handle type_caster<evoxc::Shape>::from_cpp(const evoxc::Shape& s, rv_policy, cleanup_list*) noexcept {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(s.rank()));
  for (size_t i = 0; i < s.rank(); ++i) {
    PyObject* item = nullptr;
    if (auto c = s[i].as_const())
      item = PyLong_FromLongLong(*c);
    else
      item = nanobind::cast(s[i]).release().ptr();
    PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), item);
  }
  return t;
}

}  // namespace nanobind::detail
