#!/usr/bin/env bash
# Installs the Debian packages evoxc builds against, only those that are missing (needs root or sudo).
set -euo pipefail

packages=(g++ make cmake ninja-build pkg-config libopenblas-dev liblapacke-dev libsleef-dev nlohmann-json3-dev
          libgtest-dev libcli11-dev clang-format python3-venv ccache clang-22 libclang-rt-22-dev
          llvm-22-dev libmlir-22-dev mlir-22-tools)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# A cmake already on PATH (for example from pip) is fine if it is new enough for our presets.
if [[ " ${missing[*]} " == *" cmake "* ]] && command -v cmake >/dev/null; then
  missing=("${missing[@]/cmake/}")
fi
# python3-venv only matters when the python3 on PATH is Debian's.
if [[ " ${missing[*]} " == *" python3-venv "* ]] && python3 -c 'import venv, ensurepip' 2>/dev/null; then
  missing=("${missing[@]/python3-venv/}")
fi
read -r -a missing <<< "${missing[*]}"
if (( ${#missing[@]} )); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
