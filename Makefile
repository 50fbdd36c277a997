# Thin wrapper over the CMake presets: `make` builds, `make run` runs the main job, `make test` runs every test.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PRESET ?= default

.PHONY: all build deps venv bench-venv run test test-sanitize bench format clean

all: build

deps:
	@bash scripts/install-deps.sh

$(VENV)/.base-stamp: requirements.txt
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	@touch $@

venv: $(VENV)/.base-stamp

$(VENV)/.bench-stamp: requirements-bench.txt $(VENV)/.base-stamp
	$(PY) -m pip install -q -r requirements-bench.txt
	@touch $@

bench-venv: $(VENV)/.bench-stamp

build: deps venv
	cmake --preset $(PRESET) >/dev/null
	cmake --build --preset $(PRESET)

# The main job: the quickstart, the symbolic-batch and control-flow examples, then a short benchmark summary.
run: build bench-venv
	./build/bin/quickstart
	./build/bin/batch_dict
	./build/bin/newton_sqrt
	$(PY) bench/compare.py --quick

test: build
	ctest --preset $(PRESET)

# The C++ suite under AddressSanitizer + UndefinedBehaviorSanitizer; any finding fails.
test-sanitize: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan
	ctest --preset asan

# The full benchmark set, side by side with numpy, PyTorch and JAX.
bench: build bench-venv
	$(PY) bench/compare.py

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp')

clean:
	rm -rf build build-asan
