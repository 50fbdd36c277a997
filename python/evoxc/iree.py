"""backend="iree": evoxc's StableHLO export compiled by IREE's compiler and run by IREE's runtime.

It needs the PyPI packages `iree-base-compiler` and `iree-base-runtime` (3.13; `pip install "evoxc[iree]"`); the
backend is registered when both are installed (`available()` says why not otherwise). Everything else is the
pipeline's: `lower` checks the graph and expands what IREE cannot take (cholesky, triangular_solve) with their
EvoXIR decompositions, `compile` runs `iree-compile` on the export (the module's bytes go into the artifact, so
`.evoxcartifact` files and `DiskCache` hold compiled modules; one compiled by another IREE version is a
PersistenceError), `load` makes a runtime module on the device, and calls release the GIL while IREE computes.

Targets: `llvm-cpu` for the host (tuned for this CPU), `cuda`, `rocm` and `vulkan-spirv` for GPU devices, chosen by
a raw flag `--iree-hal-target-device=...` (or `--iree-hal-target-backends=...`); the opt level maps to
`--iree-opt-level=O<n>` unless the flags give it themselves (the explicit flag wins, never both)."""

from __future__ import annotations

import atexit as _atexit
import importlib.util as _ilu
import itertools as _itertools
import re as _re
import threading as _threading
import weakref as _weakref

import numpy as _np

from . import _core

NAME = "iree"
VERSION = "3.13"

# IREE 3.13's compiler marks these StableHLO ops illegal ("failed to legalize operation 'stablehlo.cholesky' that
# was explicitly marked illegal"), so lower() expands them first.
_NOT_NATIVE = [
    ("cholesky", "IREE's compiler does not legalize stablehlo.cholesky"),
    ("triangular_solve", "IREE's compiler does not legalize stablehlo.triangular_solve"),
    # Measured with the catalogue's samples: out-of-range start indices read garbage from gather and crash scatter
    # (StableHLO clamps them, and skips an update window out of range); until the export clamps explicitly, no
    # program with either runs on IREE.
    ("gather", "IREE reads out of bounds where StableHLO clamps a gather's start indices (wrong values measured); "
               "run indexing on backend=\"mlir\" or \"xla\""),
    ("scatter", "IREE writes out of bounds where StableHLO skips a scatter's out-of-range updates (a crash "
                "measured); run indexing on backend=\"mlir\" or \"xla\""),
]
# evoxc device kind -> (IREE compile target, runtime driver). The CPU runs on local-sync: IREE 3.13's threaded
# local-task driver fails about one call in fifteen of some modules (the inverse of a float16 matrix) with "transient
# buffer has not been committed" (a race in its asynchronous allocations, measured 1/15 with local-task, 0/15 with
# local-sync); local-sync also costs less per call (3 us against 23 us in iree-benchmark-module).
_TARGETS = {"cpu": ("llvm-cpu", "local-sync"), "cuda": ("cuda", "cuda"), "rocm": ("rocm", "hip"),
            "vulkan": ("vulkan-spirv", "vulkan")}
_KIND_OF_TARGET = {t: k for k, (t, _) in _TARGETS.items()}
_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
           "float64"]


def available() -> tuple[bool, str]:
    """(True, "") when IREE's compiler and runtime are installed, else (False, what to install)."""
    missing = [p for p, m in (("iree-base-compiler", "iree.compiler"), ("iree-base-runtime", "iree.runtime"))
               if _find(m) is None]
    if missing:
        return False, (f"iree: {' and '.join(missing)} not installed; pip install 'iree-base-compiler=={VERSION}.*' "
                       f"'iree-base-runtime=={VERSION}.*' (or \"evoxc[iree]\")")
    return True, ""


def _find(module):
    try:
        return _ilu.find_spec(module)
    except ModuleNotFoundError:
        return None


def identity() -> str:
    """The compiler's name and version, recorded in every artifact."""
    from iree.compiler import version
    return f"iree-compiler {version.VERSION}"


def _flag_value(flags, *names):
    for f in flags:
        for n in names:
            if f.startswith(n + "="):
                return f.split("=", 1)[1]
    return None


def _compile(text: str, level: int, flags: list) -> tuple:
    import iree.compiler as ic
    flags = list(flags)
    target = _flag_value(flags, "--iree-hal-target-device", "--iree-hal-target-backends") or "llvm-cpu"
    if target not in _KIND_OF_TARGET:
        raise _core.BackendError(f"unknown target '{target}'; evoxc runs {', '.join(_KIND_OF_TARGET)}")
    extra = []
    if _flag_value(flags, "--iree-opt-level") is None:
        extra.append(f"--iree-opt-level=O{level}")
    # evoxc's float64 and int64 are what they say: IREE demotes float64 to float32 unless told not to.
    for f in ("--iree-input-demote-f64-to-f32", "--iree-input-demote-i64-to-i32"):
        if _flag_value(flags, f) is None:
            extra.append(f + "=false")
    if target == "llvm-cpu":
        if _flag_value(flags, "--iree-llvmcpu-target-cpu") is None:
            extra.append("--iree-llvmcpu-target-cpu=host")
        # A system library: float64 math calls the C library (the embedded linker has no libm: "undefined symbol:
        # sin").
        if _flag_value(flags, "--iree-llvmcpu-link-embedded") is None:
            extra.append("--iree-llvmcpu-link-embedded=false")
    given = _flag_value(flags, "--iree-hal-target-device", "--iree-hal-target-backends") is not None
    try:
        vmfb = ic.compile_str(text, input_type="stablehlo", target_backends=None if given else [target],
                              extra_args=extra + flags)
    except ic.CompilerToolError as e:
        raise _core.BackendError(_explain(str(e))) from None
    return target, bytes(vmfb)


def _explain(message: str) -> str:
    """IREE's diagnostic as a BackendError message naming the op and the remedy."""
    m = _re.search(r"failed to legalize operation '([\w.]+)'", message) or _re.search(r"'([\w.]+)' op", message)
    first = next((ln.strip() for ln in message.splitlines() if "error:" in ln), message.strip()[:400])
    op = f" on {m.group(1)}" if m else ""
    return (f"IREE's compiler failed{op}: {first}; build this graph with backend=\"mlir\" or \"interp\", "
            f"or express the op with others")


_configs = {}
_configs_lock = _threading.Lock()


def _config(driver: str):
    """One runtime configuration (device and VM instance) per driver, made on first use."""
    import iree.runtime as rt
    with _configs_lock:
        c = _configs.get(driver)
        if c is None:
            try:
                c = rt.Config(driver)
            except Exception as e:  # noqa: BLE001  (IREE raises plain ValueError/RuntimeError for a missing device)
                raise _core.DeviceError(f"iree: no {driver} device: {e}") from None
            _configs[driver] = c
        return c


# The loaded modules' entry functions by key: an executable's run() holds its key, not IREE's objects, so that at
# exit every IREE object can be released while the interpreter still runs (an executable C++ holds is released
# after that, and IREE's runtime would report what it kept as leaked).
_loaded = {}
_keys = _itertools.count()


@_atexit.register
def _release_runtime():
    with _configs_lock:
        _loaded.clear()
        _configs.clear()


def _load(target: str, data: bytes, device: str):
    import iree.runtime as rt
    kind, _, index = device.partition(":")
    if _KIND_OF_TARGET.get(target) != kind:
        raise _core.DeviceError(f"iree: the module was compiled for {target}, which runs on "
                                f"{_KIND_OF_TARGET.get(target, '?')} devices, not {device}")
    if index not in ("", "0"):
        raise _core.DeviceError(f"iree: evoxc places IREE modules on device 0 of a kind only, not {device}")
    config = _config(_TARGETS[kind][1])
    try:
        vm_module = rt.VmModule.copy_buffer(config.vm_instance, data)
    except Exception as e:  # noqa: BLE001  (IREE's loader raises RuntimeError on bytes it cannot read)
        raise _core.PersistenceError(f"iree: the artifact's module does not load: {e}") from None
    key = next(_keys)
    _loaded[key] = rt.load_vm_module(vm_module, config).main
    tensor_from_array = _core._tensor_from_array

    def run(args):
        fn = _loaded.get(key)
        if fn is None:
            raise _core.BackendError("iree: the runtime has been shut down (the interpreter is exiting)")
        out = fn(*[_np.asarray(a) for a in args])  # IREE releases the GIL while it computes
        if not isinstance(out, (tuple, list)):
            out = (out,)
        return [tensor_from_array(o.to_host()) for o in out]

    _weakref.finalize(run, _loaded.pop, key, None)
    return run


def register() -> bool:
    """Registers the backend when IREE is installed (import evoxc does it); False (and nothing registered) when not."""
    ok, _ = available()
    if not ok or NAME in _core.backends():
        return ok
    _core._register_external_backend(NAME, ["cpu", "cuda", "rocm", "vulkan"], _DTYPES, _NOT_NATIVE, identity,
                                     _compile, _load)
    return True
