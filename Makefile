# Thin wrapper over the CMake presets: `make` builds, `make run` runs the main job, `make test` runs every test.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PRESET ?= default

.PHONY: all build python deps venv bench-venv run test test-sanitize test-tsan fuzz bench format clean

all: build

deps:
	@bash scripts/install-deps.sh

$(VENV)/.base-stamp: requirements.txt
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	@touch $@

# The PJRT C API header the xla backend builds against (from a PyPI wheel; scripts/fetch-pjrt-headers.sh).
$(VENV)/.pjrt-stamp: scripts/fetch-pjrt-headers.sh $(VENV)/.base-stamp
	bash scripts/fetch-pjrt-headers.sh $(VENV)
	@touch $@

venv: $(VENV)/.base-stamp $(VENV)/.pjrt-stamp

$(VENV)/.bench-stamp: requirements-bench.txt $(VENV)/.base-stamp
	$(PY) -m pip install -q -r requirements-bench.txt
	@touch $@

bench-venv: $(VENV)/.bench-stamp

build: deps venv
	cmake --preset $(PRESET) >/dev/null
	cmake --build --preset $(PRESET)
	@$(MAKE) --no-print-directory python

# The Python package, installed into .venv the way a user installs it (pip install .): scikit-build-core
# builds the extension in build-py/ (incrementally; ccache shares the library objects with build/).
python: venv
	$(PY) -m pip install -q --no-build-isolation --no-deps .

# The main job: the quickstart, the symbolic-batch, control-flow and transform examples, then a short benchmark summary.
run: build bench-venv
	./build/bin/quickstart
	./build/bin/batch_dict
	./build/bin/newton_sqrt
	./build/bin/per_sample_grad
	./build/bin/population --generations 3
	$(PY) examples/quickstart.py
	$(PY) examples/per_sample_grad.py
	$(PY) examples/newton_sqrt.py
	$(PY) examples/batch_dict.py
	$(PY) examples/deap_gp.py --generations 2
	$(PY) examples/gp_tune_constants.py
	$(PY) examples/tiered.py
	$(PY) examples/random_walk.py
	$(PY) examples/sparse_graph.py
	$(PY) examples/external_kernel.py
	$(PY) examples/custom_op.py
	./build/bin/custom_op
	$(PY) bench/python_overhead.py --quick
	$(PY) bench/staging_transforms.py --quick --trees 50
	$(PY) bench/batch_functions.py --quick
	$(PY) bench/gp_population.py --quick
	$(PY) bench/compare.py --quick

test: build bench-venv
	ctest --preset $(PRESET)
	$(PY) -m pytest tests/python -q -rs

# The C++ suite under AddressSanitizer + UndefinedBehaviorSanitizer (clang-22), with a short run of
# every fuzzer (EVOXC_FUZZ_SECONDS each); any finding fails.
test-sanitize: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan
	ctest --preset asan

# The concurrency tests under ThreadSanitizer: only these test programs are built with TSan.
# OpenBLAS's own threads are not instrumented, so they run single-threaded: a precaution against
# false reports (none were seen without it on these tests).
TSAN_TESTS := pipeline_concurrency_stress_test pipeline_tiered_test interp_streams_test io_async_test backends_async_runtime_test backends_scratch_memory_test gp_gp_test $(if $(wildcard tests/pipeline/run_budget_test.cpp),pipeline_run_budget_test)
test-tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan --target $(TSAN_TESTS)
	@set -e; for t in $(TSAN_TESTS); do \
	  echo "== $$t (ThreadSanitizer)"; \
	  OPENBLAS_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 $$TSAN_OPTIONS" \
	    ./build-tsan/tests/$$t --gtest_brief=1; \
	done

# Every fuzzer (fuzz/) for FUZZ_SECONDS each under ASan+UBSan, one after another; the corpus
# grows in build-asan/fuzz/corpus/<target>. A crash is a finding: its reproducer goes into
# tests/data/fuzz/<target>/regressions/.
FUZZ_SECONDS ?= 300
FUZZ_TARGETS := ir_text graph_json artifact npy dim_expr graph_gen
fuzz: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
	  UBSAN_OPTIONS=$${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	  cmake -DFUZZER=build-asan/fuzz/fuzz_$$t -DLIBFUZZER=ON -DMODE=fuzz -DSECONDS=$(FUZZ_SECONDS) \
	    -DSEEDS=tests/data/fuzz/$$t/seeds -DREGRESSIONS=tests/data/fuzz/$$t/regressions \
	    -DCORPUS=build-asan/fuzz/corpus/$$t -P fuzz/run_fuzzer.cmake; \
	done

# The full benchmark set, side by side with numpy, PyTorch and JAX.
bench: build bench-venv
	$(PY) bench/compare.py

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp')

clean:
	rm -rf build build-asan build-tsan build-py
