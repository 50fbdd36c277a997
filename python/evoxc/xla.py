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
