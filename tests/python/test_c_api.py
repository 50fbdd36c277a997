"""The C ABI from Python: get_include/get_library/check_abi, Executable.c_executable(), and the out-of-tree
extension module examples/external/python/native_loop.c built against the installed package and run on every
backend in a native loop without the GIL."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import threading

import numpy as np
import pytest

import evoxc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "external", "python")


def test_paths_and_abi():
    assert os.path.isfile(os.path.join(evoxc.get_include(), "evoxc", "c_api.h"))
    assert os.path.isfile(os.path.join(evoxc.get_include(), "evoxc", "evoxc.h"))
    assert os.path.basename(evoxc.get_library()) == "libevoxc.so"
    with open(os.path.join(evoxc.get_include(), "evoxc", "c_api.h")) as f:
        assert f"#define EVOXC_ABI_VERSION {evoxc.ABI_VERSION}\n" in f.read()
    assert evoxc.abi_version() == evoxc.ABI_VERSION
    evoxc.check_abi(evoxc.ABI_VERSION)
    with pytest.raises(ImportError, match=f"ABI version {evoxc.ABI_VERSION + 1}, but the installed evoxc has ABI "
                                          f"version {evoxc.ABI_VERSION}"):
        evoxc.check_abi(evoxc.ABI_VERSION + 1)


def test_the_package_runs_on_the_library_it_names():
    # _core links the libevoxc.so that get_library() names, so an extension linked against it shares the process's
    # one copy (its backends, plugin and caches).
    with open("/proc/self/maps") as f:
        mapped = {line.split()[-1] for line in f if line.rstrip().endswith(".so")}
    assert os.path.realpath(evoxc.get_library()) in {os.path.realpath(p) for p in mapped}


@pytest.fixture(scope="module")
def native_loop(tmp_path_factory):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) on PATH to build the example extension")
    sys.path.insert(0, EXAMPLE)
    try:
        import build as example_build
    finally:
        sys.path.remove(EXAMPLE)
    path = example_build.build(str(tmp_path_factory.mktemp("ext")))
    spec = importlib.util.spec_from_file_location("native_loop", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.ABI_VERSION == evoxc.ABI_VERSION
    return module


def _backends():
    out = ["interp"]
    if "mlir" in evoxc.backends.available():
        out.append("mlir")
    if evoxc.xla.available()[0]:
        out.append("xla")
    return out


def _f(x, y):
    return {"s": evoxc.sum(x * y + x), "z": x * y + x}


@pytest.mark.parametrize("backend", _backends())
def test_extension_runs_an_executable_without_the_gil(native_loop, backend):
    spec = evoxc.TensorSpec((4,), evoxc.float32)
    exe = evoxc.build(_f, spec, spec, backend=backend)
    x = np.arange(4, dtype=np.float32)
    y = np.array([0.5, -1, 2, 3], dtype=np.float32)
    s = np.zeros((), np.float32)
    z = np.zeros(4, np.float32)
    gil_held = native_loop.run(exe.c_executable(), [x, y], [s, z], 1000)
    assert gil_held is False
    np.testing.assert_array_equal(z, x * y + x)
    assert s == pytest.approx(float((x * y + x).sum()))
    # The same arrays refilled in place, as a solver loop does: the next call sees the new values.
    x[:] = [4, 5, 6, 7]
    native_loop.run(exe.c_executable(), [x, y], [s, z], 1)
    np.testing.assert_array_equal(z, x * y + x)


def test_extension_loads_a_saved_artifact_itself(native_loop, tmp_path):
    spec = evoxc.TensorSpec((evoxc.Dim("B"), 3), evoxc.float64)
    art = evoxc.compile(evoxc.lower(evoxc.trace(lambda a: evoxc.sum(a * a, axes=1), spec)))
    path = str(tmp_path / "rows.evoxcartifact")
    art.save(path)
    exe = native_loop.load(path)
    a = np.arange(15, dtype=np.float64).reshape(5, 3)
    out = np.zeros(5, np.float64)
    native_loop.run(exe, [a], [out], 3)
    np.testing.assert_array_equal(out, (a * a).sum(axis=1))


def test_extension_errors_carry_the_c_abi_message(native_loop):
    spec = evoxc.TensorSpec((4,), evoxc.float32)
    exe = evoxc.build(lambda x: x + 1, spec)
    with pytest.raises(RuntimeError, match=r"evoxc status 2: input 0 \(\[0\]\): the buffer says dtype float64, "
                                           r"the program takes float32"):
        native_loop.run(exe.c_executable(), [np.zeros(4)], [np.zeros(4, np.float32)], 1)
    with pytest.raises(RuntimeError, match=r"evoxc status 3: .*nope\.evoxcartifact"):
        native_loop.load("/nonexistent/nope.evoxcartifact")
    with pytest.raises(ValueError):  # a capsule of another kind is refused by name
        native_loop.run(_other_capsule(), [], [], 1)


def _other_capsule():
    import ctypes

    ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
    ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return ctypes.pythonapi.PyCapsule_New(ctypes.c_void_p(1), b"something_else", None)


def test_extension_from_many_python_threads(native_loop):
    spec = evoxc.TensorSpec((256,), evoxc.float32)
    exe = evoxc.build(lambda x, y: x * y + x, spec, spec, backend=_backends()[-1])
    cap = exe.c_executable()
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(20):
                x = rng.standard_normal(256).astype(np.float32)
                y = rng.standard_normal(256).astype(np.float32)
                z = np.zeros(256, np.float32)
                native_loop.run(cap, [x, y], [z], 50)
                np.testing.assert_allclose(z, x * y + x, rtol=1e-6, atol=1e-6)
        except Exception as e:  # noqa: BLE001 - reported on the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_cython_extension_on_the_shipped_pxd(tmp_path):
    pytest.importorskip("Cython", reason="Cython builds the example (requirements.txt installs it)")
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) on PATH to build the example extension")
    assert os.path.isfile(os.path.join(os.path.dirname(evoxc.__file__), "c_api.pxd"))
    here = os.path.join(ROOT, "examples", "external", "cython")
    sys.path.insert(0, here)
    try:
        spec = importlib.util.spec_from_file_location("cython_example_build", os.path.join(here, "build.py"))
        example_build = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(example_build)
    finally:
        sys.path.remove(here)
    path = example_build.build(str(tmp_path))
    spec = importlib.util.spec_from_file_location("solver_loop", path)
    solver_loop = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(solver_loop)
    # x <- 0.5 * x + 1 converges to 2 from anywhere; 60 steps in the nogil loop get within float32's resolution.
    n = evoxc.TensorSpec((8,), evoxc.float32)
    for backend in _backends():
        exe = evoxc.build(lambda x: x * 0.5 + 1.0, n, backend=backend)
        x = np.linspace(-100, 100, 8, dtype=np.float32)
        out = solver_loop.iterate(exe.c_executable(), x, 60)
        np.testing.assert_allclose(np.asarray(out), np.full(8, 2.0, np.float32), rtol=0, atol=1e-5)
        np.testing.assert_array_equal(x, np.asarray(out))  # in place
        three = np.asarray(solver_loop.iterate(exe.c_executable(), np.zeros(8, np.float32), 3))
        np.testing.assert_allclose(three, [1.75] * 8)  # 0 -> 1 -> 1.5 -> 1.75: exactly three calls
    bad = evoxc.build(lambda x: x * 0.5 + 1.0, evoxc.TensorSpec((4,), evoxc.float32))
    with pytest.raises(RuntimeError, match=r"evoxc status 2: input 0 \(\[0\]\): the buffer's extents \(8,\) do not "
                                           r"fit the program's \(4,\)"):
        solver_loop.iterate(bad.c_executable(), np.zeros(8, np.float32), 1)
