#!/usr/bin/env bash
# Builds the Python extension in its own tree and assembles an importable package there, for working on the
# bindings without reinstalling: scripts/dev-python.sh build-py-dev  ->  PYTHONPATH=build-py-dev/pkg
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-py-dev}
py=${PYTHON:-.venv/bin/python}
if [[ ! -f $dir/build.ninja ]]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-g1 -DEVOXC_PYTHON=ON \
    -DEVOXC_PYTHON_ONLY=ON -DEVOXC_BUILD_TESTS=OFF -DPython_EXECUTABLE="$(cd "$(dirname "$py")" && pwd)/$(basename "$py")" >/dev/null
fi
cmake --build "$dir" -j 2 --target _core
mkdir -p "$dir/pkg/evoxc"
for f in python/evoxc/*.py; do ln -sf "$(realpath "$f")" "$dir/pkg/evoxc/"; done
ln -sf "$(realpath "$dir"/python/_core*.so)" "$dir/pkg/evoxc/"
cmake --build "$dir" -j 2 --target _core_stub >/dev/null && ln -sf "$(realpath "$dir"/python/_core.pyi)" "$dir/pkg/evoxc/"
echo "PYTHONPATH=$dir/pkg"
