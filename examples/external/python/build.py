"""Builds native_loop.c into an extension module with the C compiler, against the installed evoxc package:
python build.py [OUT_DIR]. The whole recipe is evoxc.get_include() for -I and evoxc.get_library() to link, with its
directory as run path, so that the extension and the evoxc package share one libevoxc in the process."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig

import evoxc

HERE = os.path.dirname(os.path.abspath(__file__))


def build(out_dir: str, compiler: str = "cc") -> str:
    """Compiles native_loop.c into out_dir; returns the module's path."""
    lib = evoxc.get_library()
    out = os.path.join(out_dir, "native_loop" + sysconfig.get_config_var("EXT_SUFFIX"))
    cmd = [compiler, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
           "-I", sysconfig.get_paths()["include"], "-I", evoxc.get_include(),
           os.path.join(HERE, "native_loop.c"), "-o", out, lib, "-Wl,-rpath," + os.path.dirname(lib)]
    subprocess.run(cmd, check=True)
    return out


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else HERE))
