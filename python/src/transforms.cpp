// Bindings of the graph transforms: each over a Graph (returns a Graph) and over a traceable function.
#include "evoxc/transforms/transforms.h"

#include <string>
#include <vector>

#include "bind.h"

namespace evoxc::py {

namespace {

ArgNums arg_nums(nb::handle h) {
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return ArgNums(nb::cast<int64_t>(h));
  if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) {
    std::vector<int64_t> ns;
    for (nb::handle x : nb::borrow<nb::sequence>(h)) ns.push_back(nb::cast<int64_t>(x));
    return ArgNums::tuple(std::move(ns));
  }
  throw ValidationError("argnums must be an int or a tuple of ints, got " + nb::cast<std::string>(nb::repr(h)));
}

std::optional<DimExpr> axis_size(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  if (nb::isinstance<DimExpr>(h)) return nb::cast<DimExpr>(h);
  return DimExpr(nb::cast<int64_t>(h));
}

}  // namespace

void bind_transforms(nb::module_& m) {
  m.def(
      "_vectorize",
      [](const Graph& g, nb::handle in_axes, nb::handle out_axes, nb::handle size) {
        return vectorize(g, axis_tree_from_python(in_axes, "in_axes"), axis_tree_from_python(out_axes, "out_axes"),
                         axis_size(size));
      },
      nb::arg("graph"), nb::arg("in_axes").none(), nb::arg("out_axes").none(), nb::arg("axis_size").none());
  m.def(
      "_jvp", [](const Graph& g) { return jvp(g); }, nb::arg("graph"));
  m.def(
      "_vjp", [](const Graph& g) { return vjp(g); }, nb::arg("graph"));
  m.def(
      "_grad", [](const Graph& g, nb::handle a, bool aux) { return grad(g, arg_nums(a), aux); }, nb::arg("graph"),
      nb::arg("argnums"), nb::arg("has_aux"));
  m.def(
      "_value_and_grad", [](const Graph& g, nb::handle a, bool aux) { return value_and_grad(g, arg_nums(a), aux); },
      nb::arg("graph"), nb::arg("argnums"), nb::arg("has_aux"));
  m.def(
      "_jacfwd", [](const Graph& g, nb::handle a) { return jacfwd(g, arg_nums(a)); }, nb::arg("graph"),
      nb::arg("argnums"));
  m.def(
      "_jacrev", [](const Graph& g, nb::handle a) { return jacrev(g, arg_nums(a)); }, nb::arg("graph"),
      nb::arg("argnums"));
  m.def(
      "_hessian", [](const Graph& g, nb::handle a) { return hessian(g, arg_nums(a)); }, nb::arg("graph"),
      nb::arg("argnums"));
}

}  // namespace evoxc::py
