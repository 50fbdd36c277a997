// Bindings of programs as data (evoxc.gp): primitive sets, populations, the evaluator, and DEAP trees packed in C++.
#include "evoxc/gp/gp.h"

#include <unordered_map>

#include "bind.h"

namespace evoxc::py {
namespace {

gp::Loss loss_from(const std::string& s) {
  if (s == "mse") return gp::Loss::MSE;
  if (s == "none") return gp::Loss::None;
  throw ValidationError("gp: loss must be 'mse' (fitness per program) or 'none' (predictions), got '" + s + "'");
}

DType dtype_arg(nb::handle h) {
  std::optional<DType> t = dtype_from_python(h);
  if (!t) throw TypeError("gp: dtype must be an evoxc dtype, its name or a numpy dtype, got " + py_type_name(h));
  return *t;
}

// A case count: an int, an evoxc.Dim, or a symbol's name.
DimExpr cases_arg(nb::handle h) {
  if (nb::isinstance<DimExpr>(h)) return nb::cast<DimExpr>(h);
  if (PyUnicode_Check(h.ptr())) return DimExpr::symbol(nb::cast<std::string>(h));
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return DimExpr(nb::cast<int64_t>(h));
  throw ShapeError("gp: cases must be an int, an evoxc.Dim or a symbol name, got " + py_type_name(h));
}

// Nodes as Python gives them: (code, arg, value) tuples.
using NodeList = std::vector<std::tuple<int32_t, int32_t, double>>;
std::vector<gp::Node> to_nodes(const NodeList& nodes) {
  std::vector<gp::Node> ns;
  ns.reserve(nodes.size());
  for (const auto& [c, a, v] : nodes) ns.push_back({c, a, v});
  return ns;
}

// An attribute of a DEAP node, by an interned name (looked up once: a node that is not cached, such as
// every ephemeral constant, costs three of these).
nb::object attr(PyObject* o, PyObject* interned) { return nb::steal(PyObject_GetAttr(o, interned)); }
PyObject* interned(const char* s) {
  PyObject* u = PyUnicode_InternFromString(s);
  if (u == nullptr) throw nb::python_error();
  return u;  // kept for the process: the interpreter owns interned strings
}

// Appends DEAP PrimitiveTrees (prefix lists of Primitive and Terminal nodes) to `pop`. Primitives map
// through `prims` (DEAP name -> code), arguments through `args` (DEAP name -> variable index); any
// other terminal's value is a constant. Node objects are looked up once per call: trees share their
// primitive and argument nodes.
void add_deap(gp::Population& pop, nb::handle trees, const nb::dict& prims, const nb::dict& args) {
  static PyObject* const k_name = interned("name");
  static PyObject* const k_arity = interned("arity");
  static PyObject* const k_value = interned("value");
  std::unordered_map<PyObject*, gp::Node> seen;
  std::vector<gp::Node> nodes;
  nb::object seq = nb::steal(PySequence_Fast(trees.ptr(), "gp: the population must be a sequence of trees"));
  if (!seq.is_valid()) throw nb::python_error();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
  for (Py_ssize_t t = 0; t < n; ++t) {
    nb::object tree = nb::steal(PySequence_Fast(items[t], "gp: each individual must be a sequence of nodes"));
    if (!tree.is_valid()) throw nb::python_error();
    const Py_ssize_t m = PySequence_Fast_GET_SIZE(tree.ptr());
    PyObject** ns = PySequence_Fast_ITEMS(tree.ptr());
    nodes.clear();
    for (Py_ssize_t i = 0; i < m; ++i) {
      PyObject* node = ns[i];
      if (auto hit = seen.find(node); hit != seen.end()) {
        nodes.push_back(hit->second);
        continue;
      }
      nb::object name = attr(node, k_name);
      if (!name.is_valid()) {
        PyErr_Clear();
        throw TypeError("gp: node " + std::to_string(i) + " of individual " + std::to_string(t) + " (" +
                        py_type_name(node) + ") is not a DEAP Primitive or Terminal (it has no name)");
      }
      nb::object arity_obj = attr(node, k_arity);
      if (!arity_obj.is_valid()) PyErr_Clear();
      const long arity = arity_obj.is_valid() ? PyLong_AsLong(arity_obj.ptr()) : 0;
      gp::Node out;
      if (PyObject* code = PyDict_GetItem(prims.ptr(), name.ptr())) {
        out = gp::Node::primitive(static_cast<int32_t>(PyLong_AsLong(code)));
        const int want = pop.primitive_set().arity(out.code);
        if (arity != want)
          throw TypeError("gp: DEAP primitive '" + nb::cast<std::string>(nb::str(name)) + "' takes " +
                          std::to_string(arity) + " arguments but the evoxc primitive it maps to takes " +
                          std::to_string(want));
      } else if (arity > 0) {
        throw TypeError("gp: unknown DEAP primitive '" + nb::cast<std::string>(nb::str(name)) +
                        "': map it to an evoxc primitive, evaluator(pset, X, y, primitives={'" +
                        nb::cast<std::string>(nb::str(name)) + "': 'pdiv'}) or a body such as '$0 $1 add'");
      } else {
        // A terminal: an argument is named by its value (renameArguments renames the value, not the
        // name), anything else is a number.
        nb::object value = attr(node, k_value);
        if (!value.is_valid()) PyErr_Clear();
        PyObject* v =
            value.is_valid() && PyUnicode_Check(value.ptr()) ? PyDict_GetItem(args.ptr(), value.ptr()) : nullptr;
        if (v != nullptr) {
          out = gp::Node::variable(static_cast<int32_t>(PyLong_AsLong(v)));
        } else {
          double d = value.is_valid() && !PyUnicode_Check(value.ptr()) ? PyFloat_AsDouble(value.ptr()) : -1.0;
          if (!value.is_valid() || PyUnicode_Check(value.ptr()) || PyErr_Occurred()) {
            PyErr_Clear();
            throw TypeError("gp: terminal '" + nb::cast<std::string>(nb::str(name)) +
                            "' is neither an argument of the primitive set nor a number");
          }
          out = gp::Node::constant(d);
        }
      }
      // Primitives and arguments are shared by every tree; constants (ephemerals) rarely are.
      if (out.code != kPostfixConst) seen.emplace(node, out);
      nodes.push_back(out);
    }
    pop.add_prefix(nodes);
  }
}

}  // namespace

void bind_gp(nb::module_& m) {
  nb::class_<gp::PrimitiveSet>(m, "PrimitiveSet",
                               "The instruction set of a population: primitive k has code 3 + k; each body is postfix "
                               "over registered elementwise ops ('$0 $1 add').")
      .def(nb::init<>())
      .def_static("standard", &gp::PrimitiveSet::standard)
      .def("add", &gp::PrimitiveSet::add, nb::arg("name"), nb::arg("body"))
      .def("find", &gp::PrimitiveSet::find, nb::arg("name"))
      .def("code", &gp::PrimitiveSet::code, nb::arg("name"))
      .def("arity", &gp::PrimitiveSet::arity, nb::arg("code"))
      .def_prop_ro("names",
                   [](const gp::PrimitiveSet& s) {
                     std::vector<std::string> v;
                     for (const auto& p : s.primitives()) v.push_back(p.name);
                     return v;
                   })
      .def("body",
           [](const gp::PrimitiveSet& s, const std::string& name) {
             return s.primitives()[static_cast<size_t>(s.code(name) - kPostfixFirstPrimitive)].body;
           })
      .def_prop_ro("attribute", &gp::PrimitiveSet::attribute)
      .def("__len__", [](const gp::PrimitiveSet& s) { return s.primitives().size(); });

  nb::class_<gp::Population>(m, "Population",
                             "Programs held as arrays (postfix codes, operand slots, per-program constants).")
      .def(nb::init<gp::PrimitiveSet, int64_t>(), nb::arg("primitives"), nb::arg("num_vars"))
      .def("add_prefix_text", &gp::Population::add_prefix_text, nb::arg("text"),
           nb::arg("var_names") = std::vector<std::string>{})
      .def(
          "add_prefix", [](gp::Population& p, const NodeList& nodes) { return p.add_prefix(to_nodes(nodes)); },
          nb::arg("nodes"), "Nodes (code, arg, value) in prefix order.")
      .def(
          "add_postfix", [](gp::Population& p, const NodeList& nodes) { return p.add_postfix(to_nodes(nodes)); },
          nb::arg("nodes"), "Nodes (code, arg, value) in postfix order.")
      .def("_add_deap", &add_deap, nb::arg("trees"), nb::arg("primitives"), nb::arg("args"))
      .def("clear", &gp::Population::clear)
      .def("__len__", &gp::Population::size)
      .def_prop_ro("num_vars", &gp::Population::num_vars)
      .def_prop_ro("max_length", &gp::Population::max_length)
      .def_prop_ro("max_constants", &gp::Population::max_constants)
      .def("program",
           [](const gp::Population& p, size_t i) {
             std::vector<std::tuple<int32_t, int32_t, double>> out;
             for (const gp::Node& n : p.program(i)) out.emplace_back(n.code, n.arg, n.value);
             return out;
           })
      .def("constants",
           [](const gp::Population& p, size_t i) {
             std::span<const double> c = p.constants(i);
             return std::vector<double>(c.begin(), c.end());
           })
      .def("set_constants",
           [](gp::Population& p, size_t i, const std::vector<double>& v) {
             std::span<double> c = p.constants(i);
             if (v.size() != c.size())
               throw ValidationError("Population.set_constants: program " + std::to_string(i) + " has " +
                                     std::to_string(c.size()) + " constants, got " + std::to_string(v.size()));
             std::copy(v.begin(), v.end(), c.begin());
           })
      .def("codes", &gp::Population::codes)
      .def("args", &gp::Population::args)
      .def(
          "consts", [](const gp::Population& p, nb::handle dtype) { return p.consts(dtype_arg(dtype)); },
          nb::arg("dtype") = "float32")
      .def(
          "to_graph",
          [](const gp::Population& p, size_t i, nb::handle cases, nb::handle dtype) {
            return p.to_graph(i, cases_arg(cases), dtype_arg(dtype));
          },
          nb::arg("index"), nb::arg("cases"), nb::arg("dtype") = "float32")
      .def(
          "to_graphs",
          [](const gp::Population& p, nb::handle cases, nb::handle dtype) {
            return p.to_graphs(cases_arg(cases), dtype_arg(dtype));
          },
          nb::arg("cases"), nb::arg("dtype") = "float32",
          "Each program as a graph ([x0, ..., x_{V-1}], consts) -> (cases,), one signature for all.")
      .def(
          "jacobian_graph",
          [](const gp::Population& p, const std::vector<size_t>& programs, nb::handle cases, nb::handle dtype) {
            return gp::jacobian_graph(p, programs, cases_arg(cases), dtype_arg(dtype));
          },
          nb::arg("programs"), nb::arg("cases"), nb::arg("dtype") = "float32",
          "One graph ([x0, ...], consts (K, C)) -> (predictions (K, cases), jacobian (K, cases, C)) of the given "
          "programs with respect to their own constants (row k of consts is programs[k]'s).");

  nb::class_<gp::Evaluator>(m, "Evaluator",
                            "One executable for every population of a primitive set (postfix_eval, symbolic extents).")
      .def(
          "__init__",
          [](gp::Evaluator* self, const gp::PrimitiveSet& s, int64_t num_vars, const std::string& loss,
             nb::handle dtype, const std::string& backend) {
            new (self) gp::Evaluator(s, num_vars, loss_from(loss), dtype_arg(dtype), backend);
          },
          nb::arg("primitives"), nb::arg("num_vars"), nb::arg("loss") = "mse", nb::arg("dtype") = "float32",
          nb::arg("backend") = "interp")
      .def(
          "evaluate",
          [](const gp::Evaluator& e, const gp::Population& p, const Tensor& x, std::optional<Tensor> y) {
            nb::gil_scoped_release release;
            return e.evaluate(p, x, y ? *y : Tensor());
          },
          nb::arg("population"), nb::arg("x"), nb::arg("y") = nb::none())
      .def(
          "_evaluate_deap",
          [](const gp::Evaluator& e, gp::Population& p, nb::handle trees, const nb::dict& prims, const nb::dict& args,
             const Tensor& x, std::optional<Tensor> y) {
            p.clear();
            add_deap(p, trees, prims, args);
            Tensor f;
            {
              nb::gil_scoped_release release;
              f = e.evaluate(p, x, y ? *y : Tensor());
            }
            // DEAP's fitness values: one tuple per individual.
            const auto n = static_cast<size_t>(f.numel());
            nb::list out;
            visit_dtype(f.dtype(), [&](auto tag) {
              using T = decltype(tag);
              if constexpr (std::is_floating_point_v<T>) {
                const T* d = f.data<T>();
                for (size_t i = 0; i < n; ++i) out.append(nb::make_tuple(static_cast<double>(d[i])));
              } else {
                throw ValidationError("gp: DEAP fitness needs a float32 or float64 evaluator");
              }
            });
            return out;
          },
          nb::arg("population"), nb::arg("trees"), nb::arg("primitives"), nb::arg("args"), nb::arg("x"),
          nb::arg("y") = nb::none())
      .def_prop_ro("graph", &gp::Evaluator::graph)
      .def_prop_ro("executable", &gp::Evaluator::executable);
}

}  // namespace evoxc::py
