// Bindings of the staging pipeline: lower, compile, load, run (GIL released), the stage objects and backends.
#include "evoxc/pipeline/pipeline.h"

#include <nanobind/stl/chrono.h>
#include <nanobind/stl/shared_ptr.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "bind.h"
#include "evoxc/backends/stablehlo.h"
#include "evoxc/capi/handle.h"
#include "evoxc/pipeline/cache.h"
#include "evoxc/pipeline/tiered.h"

namespace evoxc::py {

namespace {

// A run input: Tensors (no conversion) in tuples (namedtuples too), lists, dicts and None; any
// other object goes through evoxc._api._run_input (numpy arrays -> zero-copy Tensors,
// dataclasses -> dicts), whose result is converted again.
Tree<Tensor> input_tree(nb::handle h, int depth) {
  if (nb::isinstance<Tensor>(h)) return Tree<Tensor>(nb::cast<Tensor>(h));
  if (depth > kMaxNestingDepth) throw ValidationError("run: inputs nested too deep");
  if (h.is_none()) return Tree<Tensor>();
  if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) {
    std::vector<Tree<Tensor>> kids;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(h.ptr());
    kids.reserve(static_cast<size_t>(n));
    PyObject** items = PySequence_Fast_ITEMS(h.ptr());
    for (Py_ssize_t i = 0; i < n; ++i) kids.push_back(input_tree(nb::handle(items[i]), depth + 1));
    return PyTuple_Check(h.ptr()) ? Tree<Tensor>::tuple(std::move(kids)) : Tree<Tensor>::list(std::move(kids));
  }
  if (PyDict_Check(h.ptr())) {
    std::map<std::string, Tree<Tensor>> kids;
    for (auto [k, v] : nb::borrow<nb::dict>(h)) {
      if (!nb::isinstance<nb::str>(k)) throw ValidationError("run: pytree dict keys must be str");
      kids.emplace(nb::cast<std::string>(k), input_tree(v, depth + 1));
    }
    return Tree<Tensor>::dict(std::move(kids));
  }
  if (nb::isinstance<SymbolicTensor>(h))
    throw TraceError("run takes Tensors, not SymbolicTensors: an executable runs outside any trace");
  // Leaked on purpose: a static nb::object would be released after the interpreter is gone.
  static nb::handle convert = nb::object(nb::module_::import_("evoxc._api").attr("_run_input")).release();
  nb::object r = convert(h);
  if (nb::isinstance<Tensor>(r)) return Tree<Tensor>(nb::cast<Tensor>(r));
  return input_tree(r, depth + 1);
}

Tree<Tensor> inputs_from_python(const nb::tuple& args) {
  std::vector<Tree<Tensor>> kids;
  kids.reserve(args.size());
  for (nb::handle a : args) kids.push_back(input_tree(a, 0));
  return Tree<Tensor>::tuple(std::move(kids));
}

RunOptions run_options(std::optional<double> timeout, int64_t max_loop_iterations) {
  RunOptions o;
  if (timeout) {
    if (*timeout < 0) throw ValidationError("timeout must be >= 0 seconds");
    o.deadline = RunOptions::Clock::now() +
                 std::chrono::duration_cast<RunOptions::Clock::duration>(std::chrono::duration<double>(*timeout));
  }
  o.max_loop_iterations = max_loop_iterations;
  return o;
}

CompileOptions compile_options(nb::handle opt_level, const std::vector<std::string>& flags) {
  CompileOptions o;
  if (!opt_level.is_none()) {
    if (PyLong_Check(opt_level.ptr()))
      o.opt_level = OptLevel(nb::cast<int>(opt_level));
    else
      o.opt_level = OptLevel(nb::cast<std::string>(opt_level));
  }
  o.flags = flags;
  return o;
}

nb::object run_exe(const Executable& exe, const nb::tuple& args, std::optional<double> timeout,
                   int64_t max_loop_iterations) {
  Tree<Tensor> inputs = inputs_from_python(args);
  RunOptions opts = run_options(timeout, max_loop_iterations);
  Tree<Tensor> out;
  {
    nb::gil_scoped_release release;
    out = exe.run(inputs, opts);
  }
  return tensor_tree_to_python(out);
}

}  // namespace

void bind_pipeline(nb::module_& m) {
  nb::class_<LoweredProgram>(m, "LoweredProgram", nb::dynamic_attr(),
                             "A graph lowered for one backend: its text is the backend's input program.")
      .def_prop_ro("backend", &LoweredProgram::backend)
      .def_prop_ro("graph", &LoweredProgram::graph)
      .def_prop_ro("text", &LoweredProgram::text)
      .def("save", &LoweredProgram::save, nb::arg("path"),
           "Writes the text atomically, then one '// evoxc-lowered' comment line (backend and graph) for load().")
      .def_static("load", &LoweredProgram::load, nb::arg("path"),
                  "Reads a file written by save(); the text is compiled as written (PersistenceError for a file "
                  "without the trailer line, truncated, or for a backend this build does not have).")
      .def("__str__", &LoweredProgram::text)
      .def("__repr__", [](const LoweredProgram& l) { return "<LoweredProgram backend='" + l.backend() + "'>"; });

  nb::class_<CompiledArtifact>(m, "CompiledArtifact", nb::dynamic_attr(),
                               "The compiler's output: a versioned header and the backend's payload; save/load as "
                               ".evoxcartifact (PersistenceError on any mismatch, never a silent recompile).")
      .def_prop_ro("backend", &CompiledArtifact::backend)
      .def_prop_ro("target", &CompiledArtifact::target)
      .def_prop_ro("options", &CompiledArtifact::options)
      .def_prop_ro("graph", &CompiledArtifact::graph)
      .def_prop_ro("content_hash", &CompiledArtifact::content_hash)
      .def_prop_ro(
          "stage_times",
          [](const CompiledArtifact& a) {
            nb::dict d;
            for (const StageTime& s : a.stage_times()) d[nb::str(s.stage.c_str())] = s.seconds;
            return d;
          },
          "Where the compile spent its time: {stage: seconds}, in order (empty when read back from a file).")
      .def_ro_static("format_version", &CompiledArtifact::kFormatVersion)
      .def_ro_static("abi", &CompiledArtifact::kAbi)
      .def("save", &CompiledArtifact::save, nb::arg("path"))
      .def_static("load", &CompiledArtifact::load, nb::arg("path"))
      .def("to_bytes",
           [](const CompiledArtifact& a) {
             std::string b = a.to_bytes();
             return nb::bytes(b.data(), b.size());
           })
      .def_static("from_bytes",
                  [](nb::bytes b) { return CompiledArtifact::from_bytes(std::string_view(b.c_str(), b.size())); })
      .def("__repr__", [](const CompiledArtifact& a) {
        return "<CompiledArtifact backend='" + a.backend() + "' target='" + a.target() + "' options='" + a.options() +
               "'>";
      });

  nb::class_<Executable>(m, "Executable", nb::dynamic_attr(),
                         "A device-bound callable program. exe(*args) = evoxc.run(exe, *args); safe to call from "
                         "many threads (the GIL is released while it runs).")
      .def_prop_ro("device", &Executable::device)
      .def_prop_ro("graph", &Executable::graph)
      .def_prop_ro("backend", &Executable::backend)
      .def_prop_ro("num_inputs", &Executable::num_inputs)
      .def_prop_ro("num_outputs", &Executable::num_outputs)
      .def(
          "c_executable",
          [](const Executable& e) {
            // The capsule owns one reference of a C ABI handle sharing this executable (evoxc/c_api.h).
            return nb::capsule(capi::make_handle(e), "evoxc_executable",
                               [](void* p) noexcept { evoxc_executable_release(static_cast<evoxc_executable*>(p)); });
          },
          "A PyCapsule named 'evoxc_executable' holding an evoxc_executable* of the C ABI (evoxc/c_api.h) that "
          "shares this executable, for extension modules: they take the pointer with PyCapsule_GetPointer and "
          "call evoxc_executable_execute on it, without the GIL. The capsule holds a reference; an extension "
          "that keeps the pointer past the capsule's life takes its own with evoxc_executable_retain.")
      .def("__repr__", [](const Executable& e) {
        return "<Executable backend='" + e.backend() + "' device=" + e.device().to_string() + " " +
               std::to_string(e.num_inputs()) + " inputs>";
      });

  m.def("_run", &run_exe, nb::arg("exe"), nb::arg("args"), nb::kw_only(), nb::arg("timeout") = nb::none(),
        nb::arg("max_loop_iterations") = 0);
  m.def(
      "execute",
      [](const Executable& exe, const std::vector<Tensor>& inputs, std::vector<Tensor> outputs) {
        if (outputs.empty()) outputs.resize(exe.num_outputs());
        {
          nb::gil_scoped_release release;
          exe.execute(inputs, outputs);
        }
        return outputs;
      },
      nb::arg("exe"), nb::arg("inputs"), nb::arg("outputs") = std::vector<Tensor>{},
      "The flat entry: inputs in graph order; outputs written in place when given with the right shape and dtype "
      "(allocated otherwise). Returns the output list.");

  m.def(
      "lower", [](const Graph& g, const std::string& backend) { return lower(g, backend); }, nb::arg("graph"),
      nb::arg("backend") = "interp", "Lowers a graph for a backend (verifies it and checks every op first).");
  m.def(
      "_compile",
      [](const LoweredProgram& l, nb::handle opt_level, const std::vector<std::string>& flags) {
        return compile(l, compile_options(opt_level, flags));
      },
      nb::arg("lowered"), nb::arg("opt_level") = nb::none(), nb::arg("flags") = std::vector<std::string>{});
  nb::class_<DiskCache>(m, "DiskCache",
                        "Compiled artifacts on disk (EVOXC_CACHE_DIR, else ~/.cache/evoxc), keyed by a hash of the "
                        "lowered text, the compile options, the backend and this CPU; written atomically, shared by "
                        "processes. compile(lowered) returns (artifact, hit).")
      .def(nb::init<std::string>(), nb::arg("dir") = "")
      .def_prop_ro("dir", &DiskCache::dir)
      .def(
          "key",
          [](const DiskCache& c, const LoweredProgram& l, nb::handle opt_level, const std::vector<std::string>& flags) {
            return c.key(l, compile_options(opt_level, flags));
          },
          nb::arg("lowered"), nb::arg("opt_level") = nb::none(), nb::arg("flags") = std::vector<std::string>{})
      .def("path", &DiskCache::path, nb::arg("key"))
      .def(
          "compile",
          [](const DiskCache& c, const LoweredProgram& l, nb::handle opt_level, const std::vector<std::string>& flags) {
            bool hit = false;
            CompiledArtifact a = c.compile(l, compile_options(opt_level, flags), &hit);
            return nb::make_tuple(a, hit);
          },
          nb::arg("lowered"), nb::arg("opt_level") = nb::none(), nb::arg("flags") = std::vector<std::string>{})
      .def_static("host_cpu", &DiskCache::host_cpu)
      .def("__repr__", [](const DiskCache& c) { return "DiskCache(dir='" + c.dir() + "')"; });
  m.def(
      "_load", [](const CompiledArtifact& a, const Device& d) { return load(a, d); }, nb::arg("artifact"),
      nb::arg("device"));
  // The no-op baseline of bench/python_overhead.py: the same Executable::run entry timed in C++,
  // with inputs converted once, so the difference to evoxc.run is the cost of going through Python.
  m.def(
      "_time_run_native",
      [](const Executable& exe, const nb::tuple& args, int64_t iterations) {
        Tree<Tensor> inputs = inputs_from_python(args);
        nb::gil_scoped_release release;
        auto t0 = std::chrono::steady_clock::now();
        for (int64_t i = 0; i < iterations; ++i) exe.run(inputs);
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
               static_cast<double>(iterations);
      },
      nb::arg("exe"), nb::arg("args"), nb::arg("iterations"),
      "Seconds per Executable::run call on these inputs, timed in C++ (benchmark support).");
  nb::class_<TieredExecutable>(
      m, "TieredExecutable", nb::dynamic_attr(),
      "A graph on two tiers: it runs on the first backend (the interpreter) at once while the compiled backend "
      "(mlir) lowers, compiles and loads it on a background thread; later calls switch to the compiled code. "
      "Call it like an Executable; .executable is one. Built by evoxc.build_tiered.")
      .def_prop_ro("executable", &TieredExecutable::executable)
      .def_prop_ro("first", &TieredExecutable::first)
      .def_prop_ro("compiled", &TieredExecutable::compiled, "The compiled tier's Executable once ready, else None.")
      .def_prop_ro(
          "tier", [](const TieredExecutable& t) { return std::string(tier_name(t.tier())); },
          "The tier the next call runs on: 'first' or 'compiled'.")
      .def_prop_ro("ready", &TieredExecutable::ready)
      .def("start_compile", &TieredExecutable::start_compile)
      .def(
          "wait",
          [](const TieredExecutable& t, std::optional<double> timeout) {
            nb::gil_scoped_release release;
            if (timeout && *timeout < 0) throw ValidationError("wait: timeout must be >= 0 seconds");
            return t.wait(timeout ? std::optional<std::chrono::duration<double>>(*timeout) : std::nullopt);
          },
          nb::arg("timeout") = nb::none(),
          "Starts the compile if needed and waits for it (at most `timeout` seconds); True when the compiled tier "
          "is ready.")
      .def(
          "pin",
          [](const TieredExecutable& t, std::optional<std::string> tier) {
            std::optional<Tier> pin;
            if (tier) {
              if (*tier == "first") {
                pin = Tier::First;
              } else if (*tier == "compiled") {
                pin = Tier::Compiled;
              } else {
                throw ValidationError("pin: tier must be 'first', 'compiled' or None, not '" + *tier + "'");
              }
            }
            nb::gil_scoped_release release;
            t.pin(pin);
          },
          nb::arg("tier").none(),
          "Pins later calls to 'first' or 'compiled' (None: automatic). Pinning 'compiled' waits for the compile "
          "and raises its error (BackendError) when it failed.")
      .def_prop_ro(
          "report",
          [](const TieredExecutable& t) {
            TierReport r = t.report();
            nb::dict d;
            d["first_backend"] = r.first_backend;
            d["compiled_backend"] = r.compiled_backend;
            d["compile"] = std::string(compile_state_name(r.compile));
            d["error"] = r.error;
            d["lower_seconds"] = r.lower_seconds;
            d["compile_seconds"] = r.compile_seconds;
            d["load_seconds"] = r.load_seconds;
            nb::dict stages;
            for (const StageTime& s : r.stages) stages[nb::str(s.stage.c_str())] = s.seconds;
            d["stages"] = stages;
            d["first_calls"] = r.first_calls;
            d["compiled_calls"] = r.compiled_calls;
            d["pinned"] = r.pinned ? nb::object(nb::str(tier_name(*r.pinned))) : nb::none();
            return d;
          },
          "What it has done: compile state and error, per-stage compile seconds, calls per tier, the pin.")
      .def("__repr__", [](const TieredExecutable& t) {
        TierReport r = t.report();
        return "<TieredExecutable " + r.first_backend + " -> " + r.compiled_backend + " (compile " +
               compile_state_name(r.compile) + "), next call on the " + tier_name(t.tier()) + " tier>";
      });
  m.def(
      "_build_tiered",
      [](const Graph& g, const std::string& first, const std::string& compiled, const Device& device,
         nb::handle opt_level, const std::vector<std::string>& flags, int64_t compile_after_calls) {
        TieredOptions o;
        o.first_backend = first;
        o.compiled_backend = compiled;
        o.device = device;
        o.compile = compile_options(opt_level, flags);
        o.compile_after_calls = compile_after_calls;
        return TieredExecutable(g, o);
      },
      nb::arg("graph"), nb::arg("first"), nb::arg("compiled"), nb::arg("device"), nb::arg("opt_level").none(),
      nb::arg("flags"), nb::arg("compile_after_calls"));
  m.def("backends", &backend_names, "The backends this build has, sorted.");
  m.def("devices", &devices, "The devices this host can run on.");
  m.def(
      "capabilities",
      [](const std::string& name) {
        const Capabilities& c = get_backend(name).capabilities();
        nb::dict d;
        d["backend"] = c.backend;
        nb::list kinds;
        for (auto k : c.device_kinds) kinds.append(std::string(Device(k, 0).kind_name()));
        d["device_kinds"] = kinds;
        d["symbolic_shapes"] = c.symbolic_shapes;
        d["regions"] = c.regions;
        d["serializable_artifact"] = c.serializable_artifact;
        nb::list dts;
        for (auto t : c.dtypes) dts.append(dtype_object(t));
        d["dtypes"] = dts;
        nb::dict cost;
        cost["dispatch_seconds"] = c.batch_cost.dispatch_seconds;
        cost["element_seconds"] = c.batch_cost.element_seconds;
        d["batch_cost"] = cost;
        return d;
      },
      nb::arg("backend") = "interp", "What a backend can do, as plain data.");
  m.def("export_stablehlo", &export_stablehlo, nb::arg("graph"),
        "The graph as StableHLO MLIR text (lower(graph, 'stablehlo').text): a public @main over the input leaves "
        "returning the output leaves; BackendError naming an op StableHLO cannot express.");
  // The op catalogue for generated checks: (name, category, dtype class name, number of regions).
  m.def("_op_catalogue", [] {
    nb::list out;
    for (const OpDef* d : all_ops())
      if (!d->terminator)
        out.append(nb::make_tuple(d->name, std::string(op_category_name(d->category)),
                                  std::string(dtype_class_name(d->operand_dtypes)), d->num_regions));
    return out;
  });
  m.def(
      "_op_sample_graph",
      [](const std::string& name, DType t) {
        const OpDef& d = get_op(name);
        if (!d.sample) throw ValidationError("op '" + name + "' has no sample call");
        return sample_graph(d, d.sample(t));
      },
      nb::arg("op"), nb::arg("dtype"), "The graph of one call of `op` on the catalogue's sample operands of `dtype`.");
}

}  // namespace evoxc::py
