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
    try:
        exported = jex.export(jax.jit(fn), platforms=[platform], disabled_checks=checks)(*specs)
    except NotImplementedError as e:
        if "host_callbacks" not in str(e):
            raise
        raise _core.BackendError("xla: lower_jax: the function makes Python callbacks (jax.pure_callback, "
                                 "jax.experimental.io_callback), which run in the exporting process only; a PJRT "
                                 "plugin cannot call them") from e
    single = exported.out_tree.num_leaves == 1 and exported.out_tree.num_nodes == 1
    return Program.from_text(exported.mlir_module(), single_output=single)


def register_ffi_target(name: str, handler, platform: str | None = None, api_version: int = 1) -> None:
    """Registers a typed XLA FFI handler (a PyCapsule of an XLA_FFI_Handler*, as `jax.ffi` and jaxlib make them)
    for the custom calls to `name`, with the loaded plugin or with the one that loads later (the seed's
    `cx.register_ffi_target`). Only typed handlers run (api_version=1, jax.ffi's); an untyped custom call
    (api_version=0) is refused with a BackendError."""
    _need()
    if api_version != 1:
        raise _core.BackendError(f"xla: register_ffi_target {name!r}: api_version={api_version} is an untyped custom "
                                 f"call, which evoxc does not run; register a typed FFI handler (api_version=1)")
    _core._xla_register_ffi_target(str(name), handler, platform or "")


def ffi_targets() -> list:
    """The custom-call targets registered so far (register_ffi_target, register_jax_targets)."""
    _need()
    return list(_core._xla_ffi_targets())


_JAX_TARGETS_REGISTERED = False


def register_jax_targets() -> list:
    """Registers jaxlib's CPU LAPACK FFI handlers (the custom calls jnp.linalg and jax.scipy.linalg lower to on the
    CPU: lapack_*_ffi) with the plugin, once per process, and returns their names. Needs jaxlib (its LAPACK kernel
    module; JAX itself is not imported) and scipy (whose LAPACK jaxlib calls)."""
    global _JAX_TARGETS_REGISTERED
    _need()
    from jaxlib.cpu import _lapack  # noqa: PLC0415 - jaxlib is optional: only programs with LAPACK calls need it

    names = [n for n in _lapack.registrations() if n.endswith("_ffi")]
    if not _JAX_TARGETS_REGISTERED:
        _lapack.initialize()  # binds jaxlib's kernels to scipy's LAPACK
        for name, capsule in _lapack.registrations().items():
            if name.endswith("_ffi"):
                _core._xla_register_ffi_target(name, capsule, "cpu")
        _JAX_TARGETS_REGISTERED = True
    return names


def _before_compile(text: str) -> None:
    """Called by evoxc.compile for the xla backend: a program with jaxlib's LAPACK custom calls gets their handlers
    registered first (when jaxlib is installed; else the plugin's error names the target)."""
    if _HAS and not _JAX_TARGETS_REGISTERED and "custom_call @lapack_" in text:
        try:
            register_jax_targets()
        except ImportError:
            pass
