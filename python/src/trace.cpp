// Bindings of tracing: SymbolicTensor and its operators, the trace entry over Python functions, Graph, constant.
#include "evoxc/trace/trace.h"

#include <nanobind/stl/map.h>

#include <sstream>
#include <string>
#include <vector>

#include "bind.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/trace/call.h"

namespace evoxc::py {

namespace {

ArgLeaf arg_leaf_from_python(nb::handle h) {
  if (nb::isinstance<TensorSpec>(h)) return nb::cast<TensorSpec>(h);
  if (PyBool_Check(h.ptr())) return h.ptr() == Py_True;
  if (PyLong_Check(h.ptr())) return nb::cast<int64_t>(h);
  if (PyFloat_Check(h.ptr())) return PyFloat_AS_DOUBLE(h.ptr());
  if (nb::isinstance<nb::str>(h)) return nb::cast<std::string>(h);
  if (nb::isinstance<DTypeBox>(h)) return nb::cast<DTypeBox&>(h).t;
  if (is_host_data(h))
    throw TraceError("trace takes TensorSpecs and static values, not data: got a " + py_type_name(h) +
                     " (use evoxc.evaluate to run a function on data, or TensorSpec(x.shape, x.dtype))");
  throw TraceError("trace: cannot use a " + py_type_name(h) + " as a trace argument");
}

nb::object static_to_python(const Attribute& a) {
  return std::visit(
      [](const auto& v) -> nb::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nb::none();
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t> || std::is_same_v<T, double> ||
                             std::is_same_v<T, std::string> || std::is_same_v<T, DType>) {
          return nb::cast(v);
        } else {
          return nb::str("<attribute>");
        }
      },
      a);
}

}  // namespace

SymbolicTensor output_leaf(nb::handle h) {
  if (nb::isinstance<SymbolicTensor>(h)) return nb::cast<SymbolicTensor>(h);
  if (is_host_data(h)) host_data_error();
  throw TraceError(
      "a traced function must return SymbolicTensors (in tuples, lists, dicts), got a " + py_type_name(h) +
      (PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr()) ? " (wrap a constant in evoxc.full((), value))" : ""));
}

TraceFunction python_trace_function(nb::callable cb) {
  return [cb](const std::vector<TracedArg>& args) -> Tree<SymbolicTensor> {
    PyTraceScope scope(TraceContext::current());
    nb::list inputs;
    for (const auto& a : args)
      for (const auto& leaf : a.flatten())
        if (const auto* t = std::get_if<SymbolicTensor>(&leaf)) inputs.append(nb::cast(*t));
    nb::object out = cb(inputs);
    return tree_from_python<SymbolicTensor>(out, output_leaf);
  };
}

std::vector<TraceArg> trace_args_from_python(const nb::list& args) {
  std::vector<TraceArg> out;
  out.reserve(args.size());
  for (nb::handle a : args) out.push_back(tree_from_python<ArgLeaf>(a, arg_leaf_from_python));
  return out;
}

void bind_trace(nb::module_& m) {
  nb::class_<SymbolicTensor>(m, "SymbolicTensor",
                             "An SSA value inside a graph being traced: dtype, symbolic shape, no data. Arithmetic "
                             "appends ops to its trace.")
      .def_prop_ro("shape", [](const SymbolicTensor& t) { return t.shape(); })
      .def_prop_ro("dtype", [](const SymbolicTensor& t) { return t.dtype(); })
      .def_prop_ro("ndim", [](const SymbolicTensor& t) { return t.rank(); })
      .def_prop_ro("type", [](const SymbolicTensor& t) { return t.type().to_string(); })
      .def("__repr__",
           [](const SymbolicTensor& t) {
             return t.defined() ? "SymbolicTensor(" + t.type().to_string() + ")" : std::string("SymbolicTensor()");
           })
      .def("__bool__", [](const SymbolicTensor& t) { return static_cast<bool>(t); })
      .def("__hash__", [](const SymbolicTensor& t) { return reinterpret_cast<uintptr_t>(t.value()); });

  m.def(
      "_trace",
      [](nb::callable fn, nb::list args) {
        return trace_dynamic(python_trace_function(std::move(fn)), trace_args_from_python(args));
      },
      nb::arg("fn"), nb::arg("args"),
      "trace_dynamic over a Python callback: fn(list of input SymbolicTensors in flattening order) returns the "
      "normalised output pytree.");

  m.def(
      "_in_trace", [] { return TraceContext::current_or_null() != nullptr; },
      "Whether a trace is active on this thread.");

  nb::class_<Graph>(m, "Graph", nb::dynamic_attr(),
                    "A traced program: an EvoXIR module with its input/output pytree structure and snapshotted "
                    "static values. Immutable; print, verify, save, transform and lower it.")
      .def(
          "print", [](const Graph& g) { nb::module_::import_("sys").attr("stdout").attr("write")(g.to_string()); },
          "Prints the EvoXIR module, one op per line.")
      .def("to_string", &Graph::to_string, "The printed EvoXIR module (Graph.parse reads it back).")
      .def_prop_ro("text", &Graph::to_string)
      .def(
          "verify", [](const Graph& g) { verify(g); }, "Full IR verification (VerifyError naming the op on failure).")
      .def("save", &Graph::save, nb::arg("path"), "Writes the .evoxcgraph JSON container atomically.")
      .def_static("load", &Graph::load, nb::arg("path"), "Reads a .evoxcgraph file (PersistenceError if malformed).")
      .def_static("parse", &Graph::parse, nb::arg("text"), "Parses printed EvoXIR text.")
      .def("to_json", &Graph::to_json)
      .def_static("from_json", &Graph::from_json, nb::arg("json"))
      .def_prop_ro("input_specs", &Graph::input_specs)
      .def_prop_ro("output_specs", &Graph::output_specs)
      .def_prop_ro("input_paths", &Graph::input_paths)
      .def_prop_ro("output_paths", &Graph::output_paths)
      .def_prop_ro("input_structure", [](const Graph& g) { return g.input_tree().structure_string(); })
      .def_prop_ro("output_structure", [](const Graph& g) { return g.output_tree().structure_string(); })
      .def_prop_ro("num_inputs", &Graph::num_inputs)
      .def_prop_ro("num_outputs", &Graph::num_outputs)
      .def_prop_ro(
          "num_ops", [](const Graph& g) { return g.main().entry().num_operations() - 1; },
          "Ops of main's body, not counting its return (region bodies count as one op).")
      .def_prop_ro("static_values",
                   [](const Graph& g) {
                     nb::dict d;
                     for (const auto& [k, v] : g.static_values()) d[nb::str(k.c_str())] = static_to_python(v);
                     return d;
                   })
      .def("__repr__", &Graph::summary)
      .def("__str__", &Graph::summary)
      .def("__eq__", [](const Graph& a, const Graph& b) { return graphs_equal(a, b, false); });

  def_op(
      m, "_call_graph",
      [](const Graph& g, nb::handle inputs) {
        Tree<SymbolicTensor> in = tree_from_python<SymbolicTensor>(inputs, output_leaf);
        return tree_to_python(call(g, in));
      },
      nb::arg("graph"), nb::arg("inputs").none());
  def_op(
      m, "constant", [](const Tensor& t) { return constant(t); }, nb::arg("value"),
      "Embeds host data in the graph being traced (copied now, with a warning): the one explicit way data enters "
      "a graph other than as an input.");
}

}  // namespace evoxc::py
