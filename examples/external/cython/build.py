"""Builds solver_loop.pyx into an extension module against the installed evoxc package: python build.py [OUT_DIR].
Cython finds evoxc/c_api.pxd in the installed package; the C compiler takes evoxc.get_include() and links
evoxc.get_library() with its directory as run path (one libevoxc in the process, shared with the evoxc package)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig

import evoxc

HERE = os.path.dirname(os.path.abspath(__file__))


def build(out_dir: str, compiler: str = "cc") -> str:
    """Cythonizes and compiles solver_loop.pyx into out_dir; returns the module's path."""
    c_file = os.path.join(out_dir, "solver_loop.c")
    subprocess.run([sys.executable, "-m", "cython", "-3", "-o", c_file, os.path.join(HERE, "solver_loop.pyx")],
                   check=True)
    lib = evoxc.get_library()
    out = os.path.join(out_dir, "solver_loop" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-I", sysconfig.get_paths()["include"],
                    "-I", evoxc.get_include(), c_file, "-o", out, lib, "-Wl,-rpath," + os.path.dirname(lib)],
                   check=True)
    return out


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else HERE))
