// Bindings of the xla backend's process-wide plugin choice (evoxc.initialize, evoxc.xla.*); absent from builds
// without the backend (evoxc.xla then says so).
#include "bind.h"

#if EVOXC_HAS_XLA
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include "evoxc/backends/xla.h"
#endif

namespace evoxc::py {

void bind_xla(nb::module_& m) {
#if EVOXC_HAS_XLA
  m.attr("_has_xla") = true;
  m.def(
      "_xla_initialize",
      [](const std::string& platform, const std::string& path, const std::map<std::string, xla::OptionValue>& options) {
        xla::initialize({platform, path, options});
      },
      nb::arg("platform"), nb::arg("path"), nb::arg("options"));
  m.def("_xla_discover", [] {
    nb::list out;
    for (const xla::Candidate& c : xla::discover()) out.append(nb::make_tuple(c.path, c.platform, c.rejected));
    return out;
  });
  m.def("_xla_add_search_directories", &xla::add_search_directories, nb::arg("dirs"));
  m.def("_xla_plugin_info", [] {
    const xla::PluginInfo* info = nullptr;
    {
      nb::gil_scoped_release release;  // loading a plugin takes a while and starts its threads
      info = &xla::plugin_info();
    }
    nb::dict d;
    d["path"] = info->path;
    d["platform"] = info->platform;
    d["platform_version"] = info->platform_version;
    d["api_version"] = nb::make_tuple(info->api_major, info->api_minor);
    d["devices"] = info->devices;
    return d;
  });
  m.def("_xla_available", [] {
    std::string why;
    bool ok = false;
    {
      nb::gil_scoped_release release;
      ok = xla::available(&why);
    }
    return nb::make_tuple(ok, why);
  });
  m.def("_xla_header_api_version", &xla::header_api_version);
  m.def(
      "_xla_register_ffi_target",
      [](const std::string& target, nb::handle capsule, const std::string& platform) {
        PyObject* c = capsule.ptr();
        if (!PyCapsule_CheckExact(c))
          throw nb::type_error(("xla: register_ffi_target '" + target +
                                "': the handler must be a PyCapsule of an "
                                "XLA_FFI_Handler*, got " +
                                py_type_name(capsule))
                                   .c_str());
        void* handler = PyCapsule_GetPointer(c, PyCapsule_GetName(c));
        if (handler == nullptr) throw nb::python_error();
        xla::register_ffi_target(target, handler, platform);
      },
      nb::arg("target"), nb::arg("handler"), nb::arg("platform") = "");
  m.def("_xla_ffi_targets", &xla::ffi_targets);
  m.def(
      "_xla_program_from_text",
      [](std::string text, bool single_output) {
        return xla::Program::from_text(std::move(text), single_output).graph();
      },
      nb::arg("text"), nb::arg("single_output") = false);
  m.def(
      "_xla_program_text", [](const Graph& g) { return xla::Program::from_graph(g).text(); }, nb::arg("graph"));
#else
  m.attr("_has_xla") = false;
#endif
}

}  // namespace evoxc::py
