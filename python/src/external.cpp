// Backends whose compiler and runtime are Python packages (evoxc/iree.py): the C++ adapter of
// include/evoxc/backends/external.h calling Python callbacks, each under the GIL.
#include "evoxc/backends/external.h"

#include <cstring>

#include "bind.h"

namespace evoxc::py {
namespace {

// A module loaded by the Python load callback: `run(list[Tensor]) -> sequence of Tensors`.
class PyExecutable final : public ExecutableImpl {
 public:
  PyExecutable(std::string backend, nb::object run, const Graph& graph)
      : backend_(std::move(backend)), run_(std::make_shared<PyRef>(std::move(run))) {
    for (TensorType t : graph.main().result_types()) results_.push_back(std::move(t));
  }

  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    nb::gil_scoped_acquire gil;
    nb::list args;
    for (const Tensor& t : inputs) args.append(nb::cast(t));
    nb::object res;
    try {
      res = run_->get()(args);
    } catch (const nb::python_error& e) {
      rethrow_python_error(e, backend_ + ": run: ");
    }
    size_t n = nb::len(res);
    if (n != outputs.size())
      throw BackendError(backend_ + ": the module returned " + std::to_string(n) + " values for the graph's " +
                         std::to_string(outputs.size()) + " outputs");
    for (size_t i = 0; i < n; ++i) {
      Tensor r = nb::cast<Tensor>(res[i]);
      const TensorType& want = results_[i];
      bool shape_ok = r.shape().size() == want.shape.rank();
      for (size_t d = 0; shape_ok && d < r.shape().size(); ++d)
        shape_ok = !want.shape[d].is_const() || want.shape[d].value() == r.shape()[d];
      if (r.dtype() != want.dtype || !shape_ok)
        throw BackendError(backend_ + ": the module's output " + std::to_string(i) + " is " +
                           std::string(dtype_name(r.dtype())) + " " + shape_text(r.shape()) + ", the graph's " +
                           want.to_string());
      Tensor& out = outputs[i];
      if (out.defined() && out.dtype() == r.dtype() && out.shape() == r.shape()) {
        if (r.nbytes() > 0) std::memcpy(out.raw_data(), r.raw_data(), r.nbytes());
      } else {
        out = std::move(r);
      }
    }
  }

 private:
  static std::string shape_text(const std::vector<int64_t>& s) {
    std::string t = "(";
    for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + ")";
  }
  std::string backend_;
  std::shared_ptr<PyRef> run_;
  std::vector<TensorType> results_;
};

Device::Kind device_kind(const std::string& name) { return Device::parse(name).kind; }

}  // namespace

void bind_external(nb::module_& m) {
  m.def(
      "_register_external_backend",
      [](const std::string& name, const std::vector<std::string>& device_kinds, const std::vector<nb::object>& dtypes,
         const std::vector<std::pair<std::string, std::string>>& not_native, nb::object identity, nb::object compile,
         nb::object load) {
        ExternalCompiler c;
        c.name = name;
        for (const auto& k : device_kinds) c.device_kinds.push_back(device_kind(k));
        for (const auto& d : dtypes) {
          std::optional<DType> t = dtype_from_python(d);
          if (!t) throw ValidationError("_register_external_backend: not a dtype: " + py_type_name(d));
          c.dtypes.push_back(*t);
        }
        c.not_native = not_native;
        auto id = std::make_shared<PyRef>(std::move(identity));
        auto comp = std::make_shared<PyRef>(std::move(compile));
        auto ld = std::make_shared<PyRef>(std::move(load));
        c.identity = [id, name]() {
          nb::gil_scoped_acquire gil;
          try {
            return nb::cast<std::string>(id->get()());
          } catch (const nb::python_error& e) {
            rethrow_python_error(e, name + ": identity: ");
          }
        };
        c.compile = [comp, name](const std::string& text, int level, const std::vector<std::string>& flags) {
          nb::gil_scoped_acquire gil;
          try {
            nb::tuple r = nb::cast<nb::tuple>(comp->get()(text, level, flags));
            if (r.size() != 2) throw BackendError(name + ": compile must return (target, module bytes)");
            nb::bytes bytes = nb::cast<nb::bytes>(r[1]);
            return ExternalModule{nb::cast<std::string>(r[0]), std::string(bytes.c_str(), bytes.size())};
          } catch (const nb::python_error& e) {
            rethrow_python_error(e, name + ": compile: ");
          }
        };
        c.load = [ld, name](const ExternalModule& mod, const Graph& g,
                            Device device) -> std::shared_ptr<const ExecutableImpl> {
          nb::gil_scoped_acquire gil;
          try {
            nb::bytes data(mod.bytes.data(), mod.bytes.size());
            nb::object run = ld->get()(mod.target, data, device.to_string());
            return std::make_shared<PyExecutable>(name, std::move(run), g);
          } catch (const nb::python_error& e) {
            rethrow_python_error(e, name + ": load: ");
          }
        };
        return register_external_backend(std::move(c));
      },
      nb::arg("name"), nb::arg("device_kinds"), nb::arg("dtypes"), nb::arg("not_native"), nb::arg("identity"),
      nb::arg("compile"), nb::arg("load"),
      "Registers a backend whose compiler and runtime are Python callables: identity() -> str; compile(stablehlo, "
      "level, flags) -> (target, bytes); load(target, bytes, device) -> run(list[Tensor]) -> list[Tensor].");
}

}  // namespace evoxc::py
