// Bindings of evoxc::io: asynchronous Tensor.to copies on the process's FIFO worker; every wait releases the GIL.
#include <chrono>
#include <optional>

#include "bind.h"
#include "evoxc/io/async.h"

namespace evoxc::py {

namespace {

io::Timeout timeout_of(std::optional<double> seconds) {
  if (!seconds) return std::nullopt;
  if (!(*seconds >= 0)) throw ValidationError("evoxc.io: a timeout is a number of seconds >= 0");
  return std::chrono::duration<double>(*seconds);
}

}  // namespace

void bind_io(nb::module_& m) {
  using io::AsyncCopy;
  nb::class_<AsyncCopy>(m, "AsyncCopy",
                        "One queued copy (evoxc.io.prefetch/sink): copies run one at a time, in the order queued, on "
                        "one worker thread. A timeout never cancels a copy.")
      .def_prop_ro(
          "direction", [](const AsyncCopy& c) { return std::string(io::direction_name(c.direction())); },
          "'host_to_device', 'device_to_host', 'device_to_device' or 'host_to_host'.")
      .def_prop_ro("source", &AsyncCopy::source, "Where the tensor was.")
      .def_prop_ro("target", &AsyncCopy::target, "Where the copy goes.")
      .def("done", &AsyncCopy::done, "Whether the copy finished (with its tensor or its error); never blocks.")
      .def(
          "wait",
          [](const AsyncCopy& c, std::optional<double> timeout) {
            io::Timeout t = timeout_of(timeout);
            nb::gil_scoped_release release;
            return c.wait(t);
          },
          nb::arg("timeout") = nb::none(),
          "Waits up to `timeout` seconds (None: as long as it takes): True when the copy finished, False when the "
          "time ran out; a failed copy raises its own error here.")
      .def(
          "result",
          [](const AsyncCopy& c, std::optional<double> timeout) {
            io::Timeout t = timeout_of(timeout);
            nb::gil_scoped_release release;
            return c.result(t);
          },
          nb::arg("timeout") = nb::none(),
          "Waits, then the copy on its target device; the transfer's own error when it failed; evoxc.TimeoutError "
          "when `timeout` seconds pass first (the copy goes on).")
      .def("__repr__", [](const AsyncCopy& c) {
        return "AsyncCopy(" + std::string(io::direction_name(c.direction())) + ", " + c.source().to_string() + " -> " +
               c.target().to_string() + (c.done() ? ", done)" : ", pending)");
      });
  m.def("_io_prefetch", &io::prefetch, nb::arg("tensor"), nb::arg("device"));
  m.def("_io_sink", &io::sink, nb::arg("tensor"));
  m.def(
      "_io_wait_all",
      [](std::optional<double> timeout) {
        io::Timeout t = timeout_of(timeout);
        nb::gil_scoped_release release;
        io::wait_all(t);
      },
      nb::arg("timeout") = nb::none());
  m.def("_io_pending", &io::pending);
}

}  // namespace evoxc::py
