#!/usr/bin/env bash
# The PJRT C API and XLA FFI headers the xla backend compiles against, taken from the tensorflow-cpu wheel on PyPI
# (never copied into this repository): extracted into <venv>/pjrt-include, the wheel discarded. Without them the
# build leaves the xla backend out and says so; so a failure here warns and does not stop `make`.
set -euo pipefail
venv=${1:-.venv}
version=2.21.0
dest=$venv/pjrt-include
if [ "$(cat "$dest/.version" 2>/dev/null)" = "$version" ]; then exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$dest.new"' EXIT
if ! "$venv/bin/python" -m pip download -q --no-deps --only-binary=:all: "tensorflow-cpu==$version" -d "$tmp"; then
  echo "warning: could not download tensorflow-cpu==$version for the PJRT C API header; the xla backend is left out" >&2
  exit 0
fi
rm -rf "$dest.new"
"$venv/bin/python" - "$tmp" "$dest.new" <<'PY'
import glob, os, sys, zipfile
tmp, dest = sys.argv[1], sys.argv[2]
prefix = "tensorflow/include/"
wheel = glob.glob(os.path.join(tmp, "tensorflow_cpu-*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        rel = name[len(prefix):]
        if name.startswith(prefix) and name.endswith(".h") and (rel.startswith("xla/pjrt/c/") or rel.startswith("xla/ffi/api/")):
            path = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(z.read(name))
if not os.path.exists(os.path.join(dest, "xla/pjrt/c/pjrt_c_api.h")):
    sys.exit("the tensorflow-cpu wheel has no xla/pjrt/c/pjrt_c_api.h")
PY
echo "$version" >"$dest.new/.version"
rm -rf "$dest"
mv "$dest.new" "$dest"
echo "PJRT C API headers (tensorflow-cpu $version) in $dest"
