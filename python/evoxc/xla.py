"""The xla backend's plugin: which PJRT C API plugin this process compiles and runs `backend="xla"` programs with.

A process loads one plugin, on the first use of the backend, found by `discover()`: the library named by
`initialize(path=...)` or EVOXC_PJRT_PLUGIN, else the known plugin packages installed in this interpreter's
site-packages (XLA's CPU plugin from `lammps-jax-pjrt-cpu` first, then JAX's CUDA 13/12 and ROCm plugins), keeping
the platform asked for (`initialize(platform=...)` or EVOXC_PLATFORM)."""

from __future__ import annotations

import site as _site
import sys as _sys

from . import _core

_HAS = bool(getattr(_core, "_has_xla", False))


def _need():
    if not _HAS:
        raise _core.BackendError("xla: this build of evoxc has no xla backend (it was built without the PJRT C API "
                                 "header; `make` fetches it with scripts/fetch-pjrt-headers.sh)")


def initialize(platform: str | None = None, path: str | None = None, options: dict | None = None) -> None:
    """Chooses the plugin (a platform, "cpu"/"cuda"/"rocm", or a library path) and its client options (for example
    {"cpu_device_count": 2}; ints, floats, bools, strings) before the backend's first use; a BackendError after it."""
    _need()
    opts = {}
    for k, v in (options or {}).items():
        if isinstance(v, (bool, int, float, str)):
            opts[str(k)] = v
        else:
            raise TypeError(f"xla plugin option {k!r}: {type(v).__name__} is not a bool, int, float or str")
    _core._xla_initialize(platform or "", str(path) if path else "", opts)


def discover() -> list:
    """The plugin libraries this process would try, in order: dicts with path, platform and why a candidate is
    rejected (empty when usable as far as discovery can tell)."""
    _need()
    return [{"path": p, "platform": pl, "rejected": r} for (p, pl, r) in _core._xla_discover()]


def plugin_info() -> dict:
    """The loaded plugin (loading it when needed): path, platform, platform_version, api_version, devices."""
    _need()
    return _core._xla_plugin_info()


def available() -> tuple:
    """(True, "") when a plugin loads (loading it), else (False, why)."""
    if not _HAS:
        return False, "this build has no xla backend"
    return _core._xla_available()


def header_api_version() -> tuple:
    """The PJRT C API version (major, minor) this build was compiled against."""
    _need()
    return _core._xla_header_api_version()


def _add_interpreter_site_packages():
    dirs = []
    try:
        dirs += _site.getsitepackages()
    except AttributeError:  # some embedded interpreters have no site.getsitepackages
        pass
    try:
        dirs.append(_site.getusersitepackages())
    except AttributeError:
        pass
    dirs += [p for p in _sys.path if p.endswith("site-packages") or p.endswith("dist-packages")]
    _core._xla_add_search_directories(dirs)


if _HAS:
    _add_interpreter_site_packages()


class Program:
    """A StableHLO program from outside evoxc (the seed's lowered JAX program): a graph whose inputs are the arguments
    of the module's @main and whose outputs are its results, with one `stablehlo_call` op between. It saves and loads
    as that graph (a .evoxcgraph file: no JAX needed to read it back), compiles on the xla backend like any graph,
    and runs through the usual Executable. Make one with `lower_jax` (needs JAX) or `Program.from_text`."""

    def __init__(self, graph):
        self._text = _core._xla_program_text(graph)  # checks that the graph is such a program
        self._graph = graph

    @classmethod
    def from_text(cls, text: str, single_output: bool = False) -> "Program":
        """From StableHLO module text (jax.export's `mlir_module()`, say). The outputs are a tuple, or the one result
        itself when `single_output`."""
        _need()
        return cls(_core._xla_program_from_text(text, single_output))

    @classmethod
    def load(cls, path) -> "Program":
        """Reads a program saved by `save` (a BackendError when the file holds another graph)."""
        _need()
        return cls(_core.Graph.load(str(path)))

    @property
    def graph(self):
        return self._graph

    @property
    def text(self) -> str:
        """The module's StableHLO text."""
        return self._text

    @property
    def input_specs(self) -> list:
        return list(self._graph.input_specs)

    @property
    def output_specs(self) -> list:
        return list(self._graph.output_specs)

    def save(self, path) -> None:
        """Writes the program's graph (.evoxcgraph, atomically)."""
        self._graph.save(str(path))

    def compile(self, device=None, opt_level=None):
        """lower(graph, "xla") -> compile -> load: an Executable, run like any other (evoxc.run, exe(*args))."""
        from . import _api

        exe = _api.compile(_api.lower(self._graph, "xla"), opt_level=opt_level)
        return _api.load(exe, device) if device is not None else _api.load(exe)

    def __repr__(self) -> str:
        ins = ", ".join(str(s) for s in self.input_specs)
        outs = ", ".join(str(s) for s in self.output_specs)
        return f"<evoxc.xla.Program ({ins}) -> ({outs})>"


def _jax_shape(s):
    """A jax.ShapeDtypeStruct for a ShapeDtypeStruct, an evoxc.TensorSpec or an array."""
    import jax

    if isinstance(s, jax.ShapeDtypeStruct):
        return s
    if isinstance(s, _core.TensorSpec):
        return jax.ShapeDtypeStruct(tuple(int(d) for d in s.shape), str(s.dtype))
    return jax.ShapeDtypeStruct(tuple(s.shape), s.dtype)


def lower_jax(fn, shapes, custom_calls=(), platform: str = "cpu") -> Program:
    """Exports a JAX function to a StableHLO Program (the seed's `cx.lower`): jax.export of jax.jit(fn) for
    `platform` at `shapes`, one per argument (pytrees of jax.ShapeDtypeStruct, evoxc.TensorSpec or arrays; static
    shapes). JAX is needed here
    only: the Program saves, loads, compiles and runs in a process that never imports JAX. `custom_calls` names the
    custom-call targets the function may call beyond those jax.export accepts by itself. The program's inputs are
    the function's arguments flattened (a tuple); its outputs the results flattened (the one array itself when the
    function returns one array)."""
    _need()
    import jax
    from jax import export as jex

    specs = jax.tree_util.tree_map(_jax_shape, list(shapes))
    checks = [jex.DisabledSafetyCheck.custom_call(str(n)) for n in custom_calls]
    exported = jex.export(jax.jit(fn), platforms=[platform], disabled_checks=checks)(*specs)
    single = exported.out_tree.num_leaves == 1 and exported.out_tree.num_nodes == 1
    return Program.from_text(exported.mlir_module(), single_output=single)
