"""The xla backend through a real PJRT plugin (XLA's CPU plugin, installed into .venv by make): programs with control
flow, transforms and merged populations; artifacts; the plugin API from Python; the GIL released while a program
runs. (The catalogue on every dtype runs in test_conformance.py.)"""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import evoxc
from compare_util import assert_same

OK, WHY = evoxc.xla.available()
pytestmark = pytest.mark.skipif(not OK, reason=f"no PJRT plugin loads here: {WHY}")

def leaves(out):
    if isinstance(out, (list, tuple)):
        return [x for o in out for x in leaves(o)]
    return [out]


def check(graph, inputs, what):
    want = leaves(evoxc.run(evoxc.build(graph), *inputs))
    got = leaves(evoxc.run(evoxc.build(graph, backend="xla"), *inputs))
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_same(g.numpy(), w.numpy(), f"{what} result {i}")


def test_control_flow_and_transforms():
    def f(x, n):
        return evoxc.fori_loop(0, 5, lambda i, c: c * 0.5 + evoxc.sin(x), x) + evoxc.sum(x) * n

    spec = evoxc.TensorSpec((16,), evoxc.float32)
    g = evoxc.trace(f, spec, evoxc.TensorSpec((), evoxc.float32))
    x = evoxc.tensor(np.linspace(-2, 2, 16, dtype=np.float32))
    n = evoxc.tensor(np.float32(3.0))
    check(g, [x, n], "fori_loop")
    check(evoxc.vectorize(g, in_axes=(0, None), axis_size=3), [evoxc.tensor(np.stack([x.numpy()] * 3)), n], "vmap")
    loss = evoxc.trace(lambda x: evoxc.sum(evoxc.tanh(x) ** 2), spec)
    check(evoxc.grad(loss), [x], "grad")


def test_merged_population_matches():
    specs = (evoxc.TensorSpec((64,)), evoxc.TensorSpec((64,)))
    fns = [lambda a, b: evoxc.sin(a) * b, lambda a, b: a * a - b, lambda a, b: evoxc.exp(-a * a) + b]
    merged = evoxc.batch_functions([evoxc.trace(f, *specs) for f in fns])
    rng = np.random.default_rng(1)
    a, b = (evoxc.tensor(rng.standard_normal((3, 64)).astype(np.float32)) for _ in range(2))
    check(merged, [a, b], "merged")


def test_artifacts_save_and_reload(tmp_path):
    g = evoxc.trace(lambda a: evoxc.cos(a) + 1.0, evoxc.TensorSpec((8,)))
    art = evoxc.compile(evoxc.lower(g, "xla"))
    path = str(tmp_path / "p.evoxcartifact")
    art.save(path)
    back = evoxc.load(evoxc.CompiledArtifact.load(path))
    x = evoxc.tensor(np.arange(8, dtype=np.float32))
    np.testing.assert_array_equal(evoxc.run(back, x).numpy(), evoxc.run(evoxc.load(art), x).numpy())
    # A second process that never compiles: it loads the artifact and runs it.
    code = ("import evoxc, numpy as np, sys\n"
            "e = evoxc.load(evoxc.CompiledArtifact.load(sys.argv[1]))\n"
            "print(float(evoxc.run(e, evoxc.tensor(np.arange(8, dtype=np.float32))).numpy()[3]))\n")
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert abs(float(out.stdout) - (np.cos(3.0) + 1.0)) < 1e-6


def test_plugin_api():
    info = evoxc.xla.plugin_info()
    assert info["platform"] == "cpu" and os.path.exists(info["path"])
    assert info["api_version"][0] == evoxc.xla.header_api_version()[0]
    assert any(c["path"] == info["path"] for c in evoxc.xla.discover()) or os.environ.get("EVOXC_PJRT_PLUGIN")
    with pytest.raises(evoxc.BackendError, match="before the first use"):
        evoxc.initialize(platform="cpu")
    with pytest.raises(TypeError):
        evoxc.xla.initialize(options={"x": [1, 2]})


def test_plugin_choice_in_a_fresh_process():
    # initialize() before first use takes a path and client options; a platform the plugin is not for fails.
    path = evoxc.xla.plugin_info()["path"]
    code = ("import evoxc\n"
            f"evoxc.initialize(platform='cpu', path={path!r}, options={{'cpu_device_count': 2}})\n"
            "print(len(evoxc.xla.plugin_info()['devices']))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2"
    code = ("import evoxc\n"
            f"evoxc.initialize(platform='cuda', path={path!r})\n"
            "ok, why = evoxc.xla.available()\n"
            "print(ok); print(why)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("False") and "not the 'cuda' asked for" in out.stdout
    out = subprocess.run([sys.executable, "-m", "evoxc"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "loaded: " in out.stdout, out.stdout + out.stderr


def test_run_releases_the_gil():
    # A 2-second program on another thread must not stop this one from running Python.
    g = evoxc.trace(lambda x: evoxc.fori_loop(0, 60, lambda i, c: evoxc.tanh(c @ c) * 0.5, x),
                    evoxc.TensorSpec((256, 256)))
    exe = evoxc.build(g, backend="xla")
    x = evoxc.tensor(np.eye(256, dtype=np.float32))
    evoxc.run(exe, x)
    t0 = time.perf_counter()
    evoxc.run(exe, x)
    single = time.perf_counter() - t0
    ticks = 0
    th = threading.Thread(target=lambda: evoxc.run(exe, x))
    th.start()
    while th.is_alive():
        ticks += 1
        time.sleep(0.001)
    th.join()
    assert single < 0.01 or ticks > 3, (single, ticks)


def test_symbolic_graph_is_refused_with_the_remedy():
    g = evoxc.trace(lambda x: x * 2.0, evoxc.TensorSpec((evoxc.Dim("N"),)))
    with pytest.raises(evoxc.BackendError, match="symbolic"):
        evoxc.lower(g, "xla")


def test_disk_cache_second_process_loads_instead_of_compiling(tmp_path):
    # Executables in EVOXC_CACHE_DIR-style storage, keyed with the plugin's identity: the second process hits.
    code = ("import sys, time, evoxc, numpy as np\n"
            "g = evoxc.trace(lambda x: evoxc.tanh(x * x + x), evoxc.TensorSpec((64,)))\n"
            "t = time.perf_counter()\n"
            "art, hit = evoxc.DiskCache(sys.argv[1]).compile(evoxc.lower(g, 'xla'))\n"
            "exe = evoxc.load(art)\n"
            "print(hit, float(evoxc.run(exe, evoxc.ones((64,))).numpy()[0]), time.perf_counter() - t)\n")
    runs = [subprocess.run([sys.executable, "-c", code, str(tmp_path / "c")], capture_output=True, text=True,
                           timeout=120) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    (h1, v1, _), (h2, v2, _) = (r.stdout.split() for r in runs)
    assert (h1, h2) == ("False", "True") and v1 == v2
