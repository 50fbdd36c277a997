// Bindings of external kernels (evoxc.external_call): emitting the op, and registering Python kernels (numpy in,
// numpy out, under the GIL only while they run), batch variants and portable decompositions.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bind.h"
#include "evoxc/ops/external.h"
#include "evoxc/trace/extension.h"

namespace evoxc::py {

void bind_external_call(nb::module_& m) {
  def_op(
      m, "_external_call",
      [](const std::string& kernel, const std::vector<SymbolicTensor>& operands,
         const std::vector<TensorSpec>& results) {
        std::vector<TensorType> types;
        for (const TensorSpec& s : results) types.emplace_back(s.dtype, s.shape);
        return external_call(kernel, operands, types);
      },
      nb::arg("kernel"), nb::arg("operands"), nb::arg("results"));
  m.def(
      "_register_external_kernel",
      [](const std::string& name, const std::string& slot, nb::callable fn) {
        register_external_kernel(name, tensor_kernel(python_tensor_callback(std::move(fn), "kernel '" + name + "': ")),
                                 slot);
      },
      nb::arg("name"), nb::arg("slot"), nb::arg("fn"));
  m.def(
      "_register_external_batch_variant",
      [](const std::string& name, const std::string& slot, nb::callable fn) {
        register_external_batch_variant(
            name, tensor_kernel(python_tensor_callback(std::move(fn), "kernel '" + name + "' (batch variant): ")),
            slot);
      },
      nb::arg("name"), nb::arg("slot"), nb::arg("fn"));
  m.def(
      "_unregister_external_kernel",
      [](const std::string& name, const std::string& slot) { return unregister_external_kernel(name, slot); },
      nb::arg("name"), nb::arg("slot"));
  m.def(
      "_register_external_portable",
      [](const std::string& name, nb::object fn) {
        if (fn.is_none()) return register_external_portable(name, nullptr);
        auto ref = std::make_shared<PyRef>(std::move(fn));
        register_external_portable(name, [ref, name](std::span<const SymbolicTensor> operands) {
          nb::gil_scoped_acquire gil;
          std::vector<SymbolicTensor> args(operands.begin(), operands.end());
          try {
            nb::object r = ref->get()(nb::cast(args));
            return nb::cast<std::vector<SymbolicTensor>>(r);
          } catch (const nb::python_error& e) {
            rethrow_python_error(e, "kernel '" + name + "' (portable): ");
          }
        });
      },
      nb::arg("name"), nb::arg("fn").none());
  m.def("_registered_external_kernels", &registered_external_kernels);
}

}  // namespace evoxc::py
