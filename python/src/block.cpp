// Bindings of custom ops (evoxc.block): emitting a block_call whose body is a Python function, and registering
// Python implementations (called under the GIL, with the interpreter's buffers as evoxc Tensors).
#include "evoxc/trace/block.h"

#include <memory>
#include <string>
#include <vector>

#include "bind.h"

namespace evoxc::py {

std::function<void(std::span<const Tensor>, std::span<Tensor>)> python_tensor_callback(nb::callable fn,
                                                                                       std::string what) {
  auto ref = std::make_shared<PyRef>(std::move(fn));
  return [ref, what = std::move(what)](std::span<const Tensor> in, std::span<Tensor> out) {
    nb::gil_scoped_acquire gil;
    nb::list ins, outs;
    for (const Tensor& t : in) ins.append(nb::cast(t));
    for (const Tensor& t : out) outs.append(nb::cast(t));
    try {
      ref->get()(ins, outs);
    } catch (const nb::python_error& e) {
      rethrow_python_error(e, what);
    }
  };
}

void bind_block(nb::module_& m) {
  def_op(
      m, "_block_call",
      [](const std::string& name, nb::callable body, const std::vector<SymbolicTensor>& operands) {
        BlockBody b = [&](const std::vector<SymbolicTensor>& args) {
          nb::object r = body(nb::cast(args));
          Tree<SymbolicTensor> t = tree_from_python<SymbolicTensor>(r, output_leaf);
          return t.flatten();
        };
        return block_call(name, b, operands);
      },
      nb::arg("name"), nb::arg("body"), nb::arg("operands"));
  m.def(
      "_register_block_impl",
      [](const std::string& name, const std::string& backend, nb::callable fn) {
        register_block_impl(name, backend, python_tensor_callback(std::move(fn), "block '" + name + "': "));
      },
      nb::arg("name"), nb::arg("backend"), nb::arg("fn"));
  m.def("_unregister_block_impl", &unregister_block_impl, nb::arg("name"), nb::arg("backend"));
  m.def(
      "_registered_blocks", [](const std::string& backend) { return registered_blocks(backend); }, nb::arg("backend"));
}

}  // namespace evoxc::py
