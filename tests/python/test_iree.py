"""backend="iree": the StableHLO export compiled by IREE's compiler and run by its runtime, through the pipeline's
stages: results against the interpreter, decompositions of what IREE cannot take, artifacts and the disk cache,
the opt-level mapping, errors, and the GIL released while a module runs. (The whole catalogue runs in
test_conformance.py.)"""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import evoxc
from compare_util import assert_same

ok, why = evoxc.iree.available()
if not ok:
    pytest.skip(why, allow_module_level=True)

F32 = evoxc.float32
F64 = evoxc.float64


def both(fn, *arrays, tolerance=None, **build):
    specs = [evoxc.TensorSpec(a.shape, getattr(evoxc, str(a.dtype) if a.dtype != np.bool_ else "bool_"))
             for a in arrays]
    got = evoxc.build(fn, *specs, backend="iree", **build)(*arrays)
    want = evoxc.build(fn, *specs)(*arrays)
    got = got if isinstance(got, (tuple, list)) else [got]
    want = want if isinstance(want, (tuple, list)) else [want]
    for i, (g, w) in enumerate(zip(got, want)):
        assert_same(np.asarray(g.numpy()), np.asarray(w.numpy()), f"result {i}", tolerance)


def test_elementwise_reduction_and_matmul_match_the_interpreter():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((64, 32)).astype(np.float32)
    both(lambda x, y: evoxc.tanh(x * y + x), a, b)
    both(lambda x: evoxc.sum(x, axes=1), a)
    both(lambda x, y: x @ y.T, a, b, tolerance=(1e-5, 1e-5))


def test_control_flow_and_symbolic_batch_from_one_module():
    g = evoxc.trace(lambda x: evoxc.fori_loop(0, 5, lambda i, c: c * 0.5 + evoxc.sin(c), x),
                    evoxc.TensorSpec((evoxc.Dim("B"), 4), F64))
    exe = evoxc.build(g, backend="iree")
    ref = evoxc.build(g)
    for n in (0, 1, 7):
        x = np.linspace(-1, 1, n * 4).reshape(n, 4)
        assert_same(exe(x).numpy(), ref(x).numpy(), f"batch {n}")


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "int64", "uint8", "uint32", "uint64", "float16",
                                   "float32", "float64"])
def test_every_exchanged_dtype_round_trips(dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 5)) * 10).astype(dtype)
    both(lambda v: evoxc.where(v == v, v, v), x)


def test_cholesky_and_solves_are_decomposed_for_iree():
    a = np.array([[4.0, 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]])
    b = np.arange(6.0).reshape(3, 2)
    g = evoxc.trace(lambda m, r: (evoxc.linalg.cholesky(m), evoxc.linalg.solve(m, r), evoxc.linalg.inv(m),
                                  evoxc.linalg.det(m), evoxc.linalg.matrix_exp(m * 0.1)),
                    evoxc.TensorSpec((3, 3), F64), evoxc.TensorSpec((3, 2), F64))
    text = evoxc.lower(g, "iree").text
    assert "stablehlo.cholesky" not in text and "stablehlo.triangular_solve" not in text
    assert "stablehlo.cholesky" in evoxc.lower(g, "stablehlo").text
    got = evoxc.build(g, backend="iree")(a, b)
    want = evoxc.build(g)(a, b)
    for i, (x, y) in enumerate(zip(got, want)):
        assert_same(x.numpy(), y.numpy(), f"result {i}", (1e-10, 1e-12))


def test_artifacts_carry_the_module_and_refuse_another_compiler(tmp_path):
    g = evoxc.trace(lambda x: evoxc.exp(x) * 2.0, evoxc.TensorSpec((8,), F32))
    art = evoxc.compile(evoxc.lower(g, "iree"))
    assert art.backend == "iree" and art.target == "llvm-cpu"
    path = str(tmp_path / "m.evoxcartifact")
    art.save(path)
    back = evoxc.load(evoxc.CompiledArtifact.load(path))
    x = np.linspace(-2, 2, 8).astype(np.float32)
    assert_same(back(x).numpy(), np.exp(x) * 2.0, "reloaded")
    # The same bytes under another compiler version: refused, never run.
    data = open(path, "rb").read()
    other = data.replace(evoxc.iree.identity().encode(), b"iree-compiler 0.0.0-other", 1)
    assert other != data
    with pytest.raises(evoxc.PersistenceError, match="compiled by 'iree-compiler 0.0.0-other"):
        evoxc.CompiledArtifact.from_bytes(other)


def test_disk_cache_keeps_compiled_modules(tmp_path):
    cache = evoxc.DiskCache(str(tmp_path / "cache"))
    low = evoxc.lower(evoxc.trace(lambda x: x * 3.0 + 1.0, evoxc.TensorSpec((4,), F32)), "iree")
    a1, hit1 = cache.compile(low)
    a2, hit2 = cache.compile(low)
    assert (hit1, hit2) == (False, True)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(evoxc.load(a2)(x).numpy(), x * 3 + 1)


class _Recorder:
    """Wraps iree.compiler.compile_str and records the flags each compile passed."""

    def __init__(self, monkeypatch):
        import iree.compiler as ic
        self.calls = []
        real = ic.compile_str

        def spy(text, **kw):
            self.calls.append(list(kw.get("extra_args") or []))
            return real(text, **kw)

        monkeypatch.setattr(ic, "compile_str", spy)

    def levels(self):
        return [[f for f in c if f.startswith("--iree-opt-level")] for c in self.calls]


@pytest.mark.parametrize("spelling,want", [("O0", "O0"), ("3", "O3"), (1, "O1")])
def test_opt_level_maps_to_irees_flag(monkeypatch, spelling, want):
    rec = _Recorder(monkeypatch)
    low = evoxc.lower(evoxc.trace(lambda x: x + 1.0, evoxc.TensorSpec((4,), F32)), "iree")
    art = evoxc.compile(low, opt_level=spelling)
    assert rec.levels() == [[f"--iree-opt-level={want}"]]
    assert f"opt_level={want} (option)" in art.options


def test_an_explicit_raw_flag_wins_over_the_derived_one_never_both(monkeypatch):
    rec = _Recorder(monkeypatch)
    low = evoxc.lower(evoxc.trace(lambda x: x + 1.0, evoxc.TensorSpec((4,), F32)), "iree")
    evoxc.compile(low, opt_level="O1", flags=["--iree-opt-level=O3"])
    assert rec.levels() == [["--iree-opt-level=O3"]]


def test_env_opt_level(monkeypatch):
    rec = _Recorder(monkeypatch)
    monkeypatch.setenv("EVOXC_OPT_LEVEL", "O0")
    low = evoxc.lower(evoxc.trace(lambda x: x + 2.0, evoxc.TensorSpec((4,), F32)), "iree")
    art = evoxc.compile(low)
    assert rec.levels() == [["--iree-opt-level=O0"]]
    assert "opt_level=O0 (env)" in art.options


def test_errors_name_the_op_and_the_remedy():
    g = evoxc.trace(lambda a: evoxc.linalg.eigh(a)[0], evoxc.TensorSpec((3, 3), F64))
    with pytest.raises(evoxc.BackendError, match=r"iree: evoxc\.eigh at .* has no iree rule or decomposition"):
        evoxc.lower(g, "iree")
    # A compiler error (an unknown flag) is a BackendError naming the backend, not IREE's exception type.
    low = evoxc.lower(evoxc.trace(lambda x: x + 1.0, evoxc.TensorSpec((4,), F32)), "iree")
    with pytest.raises(evoxc.BackendError, match="iree: compile: IREE's compiler failed"):
        evoxc.compile(low, flags=["--no-such-iree-flag"])
    with pytest.raises(evoxc.DeviceError, match="compiled for llvm-cpu"):
        evoxc.load(evoxc.compile(low), "cuda:0")


def test_gpu_targets():
    import iree.runtime as rt
    drivers = set(rt.query_available_drivers())
    gpu = [d for d in ("cuda", "hip", "vulkan") if d in drivers]
    for d in gpu:
        try:
            rt.get_driver(d).query_available_devices()
            devices = rt.get_driver(d).query_available_devices()
        except Exception:  # noqa: BLE001  (no driver library or no device)
            devices = []
        if devices:
            break
    else:
        pytest.skip("no GPU here: IREE's cuda, hip and vulkan drivers find no device on this machine")
    kind = {"cuda": "cuda", "hip": "rocm", "vulkan": "vulkan"}[d]
    target = {"cuda": "cuda", "rocm": "rocm", "vulkan": "vulkan-spirv"}[kind]
    low = evoxc.lower(evoxc.trace(lambda x: evoxc.tanh(x) * 2.0, evoxc.TensorSpec((16,), F32)), "iree")
    exe = evoxc.load(evoxc.compile(low, flags=[f"--iree-hal-target-device={target}"]), f"{kind}:0")
    x = np.linspace(-1, 1, 16).astype(np.float32)
    assert_same(exe(x).numpy(), np.tanh(x) * 2.0, "gpu")


def test_the_gil_is_released_while_a_module_runs():
    n = 1024
    g = evoxc.trace(lambda a: evoxc.fori_loop(0, 8, lambda i, c: evoxc.tanh(c @ a), a), evoxc.TensorSpec((n, n), F32))
    exe = evoxc.build(g, backend="iree")
    a = (np.eye(n) * 0.5).astype(np.float32)
    exe(a)  # warm
    t0 = time.perf_counter()
    exe(a)
    alone = time.perf_counter() - t0
    count = 0
    done = threading.Event()

    def work():
        exe(a)
        done.set()

    th = threading.Thread(target=work)
    th.start()
    while not done.is_set():
        count += 1
    th.join()
    # The main thread kept running Python while the module ran (with the GIL held it would count ~0 switches' worth).
    assert alone > 0.01, f"the module ran too briefly ({alone:.4f} s) to tell"
    assert count > 1000, f"the main thread counted {count} while the module ran {alone:.3f} s"


def test_backend_listed_and_absent_without_iree():
    assert "iree" in evoxc.backends()
    code = ("import sys; sys.modules['iree'] = None\n"
            "import evoxc; ok, why = evoxc.iree.available(); print(ok, 'iree' in evoxc.backends(), why)\n"
            "g = evoxc.trace(lambda x: x + 1.0, evoxc.TensorSpec((2,)))\n"
            "try:\n    evoxc.lower(g, 'iree')\nexcept evoxc.BackendError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                         check=True).stdout
    assert out.startswith("False False iree:"), out
    assert "backend 'iree' is not registered in this process: iree: iree-base-compiler" in out, out
