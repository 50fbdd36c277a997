"""What an extension module built against evoxc's C ABI (evoxc/c_api.h) needs: where the headers and libevoxc are,
and the ABI check to call when it is imported."""

from __future__ import annotations

import os

from . import _core

ABI_VERSION: int = _core.ABI_VERSION
"""The C ABI version of the headers this package ships (EVOXC_ABI_VERSION in evoxc/c_api.h)."""

_HERE = os.path.dirname(os.path.abspath(__file__))


def abi_version() -> int:
    """The C ABI version of the loaded libevoxc."""
    return _core.abi_version()


def check_abi(version: int) -> None:
    """Raises ImportError unless an extension compiled against evoxc/c_api.h of ABI `version` may use this evoxc.

    Call it from the extension's import with the EVOXC_ABI_VERSION it was compiled with (the C function
    evoxc_check_abi does the same from C)."""
    if version != _core.abi_version():
        raise ImportError(f"this extension was compiled against evoxc/c_api.h of ABI version {version}, but the "
                          f"installed evoxc has ABI version {_core.abi_version()}; rebuild it against this evoxc "
                          f"(evoxc.get_include(), evoxc.get_library())")


def get_include() -> str:
    """The directory to pass with -I: it holds evoxc/c_api.h (the C ABI) and the C++ API's headers."""
    path = os.path.join(_HERE, "include")
    if not os.path.isfile(os.path.join(path, "evoxc", "c_api.h")):
        raise FileNotFoundError(f"evoxc's headers are not installed at {path}; reinstall evoxc (pip install .)")
    return path


def get_library() -> str:
    """The path of libevoxc.so, the library this package runs on: link an extension against it (and give the
    linker its directory as a run path) so that extension and package share one library in the process."""
    path = os.path.join(_HERE, "lib", "libevoxc.so")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"libevoxc.so is not installed at {path}; reinstall evoxc (pip install .)")
    return path
