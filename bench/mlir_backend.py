"""Every compiling backend (mlir; xla through its PJRT plugin and iree through IREE's packages, when they are here)
against the peers a user would pick instead, in one run: numpy, PyTorch eager, torch.compile, jax.jit, and evoxc's
own interpreter, on the issues' workloads: tanh(a*b+a) over 2^20 float32, sum(axis=1) of a 1024x1024 float32,
matmul 512x512, conv2d (8x64x56x56 by 64x64x3x3), the seed's merged 32-program population (per evaluation and its
compile time, merged and separately, on each backend), the GP population of bench/gp_population.py against Operon,
and the host cost of one call of a small program (a + b on f32[4]). Ratios are times over evoxc-mlir's. (TVM has no
row: its StableHLO importer does not take these programs, docs/backends.md.)

Usage: .venv/bin/python bench/mlir_backend.py [--quick]"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import evoxc  # noqa: E402
from compare import time_call  # noqa: E402
from evoxc import TensorSpec  # noqa: E402


def native(exe, args, reps):
    """Per-call seconds through the C++ entry (no Python in the loop): the best of `reps` batches."""
    number = 1
    while evoxc._core._time_run_native(exe, tuple(args), number) * number < 0.02:
        number *= 2
    return min(evoxc._core._time_run_native(exe, tuple(args), number) for _ in range(reps))


def fmt(s):
    if s is None:
        return "-"
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.3f} ms"


XLA = evoxc.xla.available()[0]
IREE = evoxc.iree.available()[0]
BACKENDS = ("interp", "mlir") + (("xla",) if XLA else ()) + (("iree",) if IREE else ())


def kernels(batch_s, reps):
    rng = np.random.default_rng(0)
    a = rng.random(1 << 20, dtype=np.float32) - 0.5
    b = rng.random(1 << 20, dtype=np.float32) - 0.5
    m = rng.random((1024, 1024), dtype=np.float32) - 0.5
    p = rng.random((512, 512), dtype=np.float32) - 0.5
    q = rng.random((512, 512), dtype=np.float32) - 0.5
    ci = rng.random((8, 64, 56, 56), dtype=np.float32) - 0.5
    cw = (rng.random((64, 64, 3, 3), dtype=np.float32) - 0.5) * 0.1
    rows = {}

    def conv_ref(np_, x, w):  # the interpreter's result: numpy has no convolution
        return evoxc.build(lambda a, b: evoxc.conv(a, b, padding="SAME"), TensorSpec(x.shape), TensorSpec(w.shape))(
            x, w).numpy()

    def jax_conv(j, x, w):
        import jax
        return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")

    # name: (evoxc function, arrays, numpy reference, the same in torch, the same in jax.numpy)
    work = {
        "tanh(a*b+a), 2^20 f32": (lambda x, y: evoxc.tanh(x * y + x), (a, b), lambda np_, x, y: np_.tanh(x * y + x),
                                  lambda t, x, y: t.tanh(x * y + x), lambda j, x, y: j.tanh(x * y + x)),
        "sum(axis=1), 1024x1024 f32": (lambda x: evoxc.sum(x, axes=1), (m,), lambda np_, x: x.sum(1),
                                       lambda t, x: x.sum(dim=1), lambda j, x: x.sum(axis=1)),
        "matmul, 512x512 f32": (lambda x, y: evoxc.matmul(x, y), (p, q), lambda np_, x, y: x @ y,
                                lambda t, x, y: x @ y, lambda j, x, y: x @ y),
        "conv2d 3x3 SAME, 8x64x56x56 f32": (lambda x, w: evoxc.conv(x, w, padding="SAME"), (ci, cw), conv_ref,
                                             lambda t, x, w: t.nn.functional.conv2d(x, w, padding=1), jax_conv),
    }
    for name, (fn, arrays, ref, torch_fn, jax_fn) in work.items():
        r = {}
        specs = [TensorSpec(x.shape, evoxc.float32) for x in arrays]
        ts = [evoxc.tensor(x) for x in arrays]
        g = evoxc.trace(fn, *specs)
        want = ref(np, *arrays)
        for backend in BACKENDS:
            try:
                exe = evoxc.build(g, backend=backend)
            except evoxc.BackendError as e:
                print(f"[{name} on {backend}: {str(e)[:200]}]", file=sys.stderr)
                continue
            np.testing.assert_allclose(evoxc.run(exe, *ts).numpy(), want, rtol=2e-4, atol=2e-4)
            r["evoxc " + backend] = native(exe, ts, reps)
        if ref is not conv_ref:
            r["numpy"] = time_call(lambda: ref(np, *arrays), batch_s, reps)
        try:
            import torch
            tt = [torch.from_numpy(x) for x in arrays]
            def tfn(*xs):
                return torch_fn(torch, *xs)
            r["torch eager"] = time_call(lambda: tfn(*tt), batch_s, reps)
            cfn = torch.compile(tfn)
            r["torch.compile"] = time_call(lambda: cfn(*tt), batch_s, reps)
        except Exception as e:  # noqa: BLE001
            print(f"[torch: {type(e).__name__}: {e}]", file=sys.stderr)
        try:
            import jax
            import jax.numpy as jnp
            jfn = jax.jit(lambda *xs: jax_fn(jnp, *xs))
            ja = [jax.device_put(x) for x in arrays]
            r["jax.jit"] = time_call(lambda: jfn(*ja).block_until_ready(), batch_s, reps)
        except Exception as e:  # noqa: BLE001
            print(f"[jax: {type(e).__name__}: {e}]", file=sys.stderr)
        rows[name] = r
    return rows


def population32(reps):
    from batch_functions import chain
    rng = np.random.default_rng(0)
    graphs = [evoxc.trace(chain(i), TensorSpec((64,)), TensorSpec((1,))) for i in range(32)]
    x = evoxc.tensor(rng.standard_normal((32, 64)).astype(np.float32))
    c = evoxc.tensor(np.array([0.7], np.float32))
    merged = evoxc.batch_functions(graphs, axes=(0, None), switch_ops=True)
    ref = evoxc.run(evoxc.build(merged), x, c).numpy()
    out = {"ops": f"{merged.batch_report['emitted_ops']} merged ops from {sum(g.num_ops for g in graphs)}",
           "eval merged interp": native(evoxc.build(merged), (x, c), reps)}
    for backend in BACKENDS[1:]:
        t0 = time.perf_counter()
        try:
            exe = evoxc.load(evoxc.compile(evoxc.lower(merged, backend), opt_level=2))
        except evoxc.BackendError as e:
            out[f"{backend}"] = f"refused: {str(e)[:160]}"
            continue
        out[f"{backend}: compile merged (lower+compile+load, O2)"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        for g in graphs:
            evoxc.load(evoxc.compile(evoxc.lower(g, backend)))
        out[f"{backend}: compile 32 separately (O2)"] = time.perf_counter() - t0
        got = evoxc.run(exe, x, c).numpy()
        out[f"{backend}: max rel diff vs interpreter"] = float(
            np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-6)))
        out[f"{backend}: eval merged"] = native(exe, (x, c), reps)
    return out


def gp(reps):
    import gp_population as gpp
    rng = np.random.default_rng(2024)
    X = rng.uniform(-3.0, 3.0, (2, 1024)).astype(np.float32)
    y = (np.square(X[0]) + np.sin(X[1])).astype(np.float32)
    trees = gpp.population(2025, 500, 17)
    spec = TensorSpec((1024,), evoxc.float32)
    graphs = gpp.evoxc_trace_all(evoxc, trees, spec)
    args = tuple(evoxc.tensor(v) for v in (X[0], X[1], y))
    merged = evoxc.batch_functions(graphs, axes=(None, None, None), switch_ops=True, bands="auto")
    out = {}
    # Repeated evaluation, tiered (first, while nothing else runs): N evaluations from the moment the population
    # exists, on the interpreter at once while mlir compiles on a background thread, then on the compiled code.
    for n in (1000, 10000):
        t0 = time.perf_counter()
        tiered = evoxc.build_tiered(merged)
        exe_t = tiered.executable
        evoxc._core._time_run_native(exe_t, tuple(args), n)
        out[f"{n} evaluations, tiered (interp -> mlir)"] = time.perf_counter() - t0
        rep = tiered.report
        out[f"  {n}: calls on mlir / on interp"] = f"{rep['compiled_calls']} / {rep['first_calls']}"
        del tiered, exe_t  # cancels a compile still running (waits for its stage in progress)
    t0 = time.perf_counter()
    # O2: the trees' stacked results run in groups on both cores (O1 runs on one thread, not vectorised).
    art = evoxc.compile(evoxc.lower(merged, "mlir"), opt_level=2)
    exe = evoxc.load(art)
    out["compile merged GP population (O2)"] = time.perf_counter() - t0
    out["  stages, s"] = ", ".join(f"{k} {v:.2f}" for k, v in art.stage_times.items())
    ref = evoxc.run(evoxc.build(merged), *args).numpy()
    got = evoxc.run(exe, *args).numpy()
    fin = np.isfinite(ref)
    out["max rel diff vs interpreter (finite)"] = float(
        np.max(np.abs(got[fin] - ref[fin]) / np.maximum(np.abs(ref[fin]), 1e-6)))
    out["eval merged mlir"] = native(exe, args, reps)
    out["eval merged interp"] = native(evoxc.build(merged), args, reps)
    for backend in BACKENDS[2:]:  # xla, iree: their own compilers on the export
        t0 = time.perf_counter()
        try:
            exe_b = evoxc.load(evoxc.compile(evoxc.lower(merged, backend)))
        except evoxc.BackendError as e:
            out[f"{backend}"] = f"refused: {str(e)[:160]}"
            continue
        out[f"compile merged GP population ({backend})"] = time.perf_counter() - t0
        gb = evoxc.run(exe_b, *args).numpy()
        out[f"max rel diff {backend} vs interpreter (finite)"] = float(
            np.max(np.abs(gb[fin] - ref[fin]) / np.maximum(np.abs(ref[fin]), 1e-6)))
        out[f"eval merged {backend}"] = native(exe_b, args, reps)
    try:
        import pyoperon as op
        ds = op.Dataset(np.asfortranarray(X.T))
        rg = op.Range(0, 1024)
        otrees = gpp.operon_trees(op, trees, ds)
        buf = np.zeros((500, 1024), np.float32)
        tmp = np.empty_like(buf)
        out["Operon EvaluateTrees+MSE 2 thr"] = time_call(
            lambda: gpp.operon_fitness(op, otrees, ds, rg, buf, tmp, y, 2), 0.05, reps)
        out["Operon / mlir (above 2: target met)"] = f"{out['Operon EvaluateTrees+MSE 2 thr'] / out['eval merged mlir']:.2f}"
        for n in (1000, 10000):
            out[f"{n} evaluations, Operon 2 thr"] = n * out["Operon EvaluateTrees+MSE 2 thr"]
    except Exception as e:  # noqa: BLE001
        print(f"[Operon: {type(e).__name__}: {e}]", file=sys.stderr)
    return out


def host_cost(reps):
    """One call of a + b on f32[4]: the host's cost per call, from C++ (the native entry) and from Python (run)."""
    g = evoxc.trace(lambda a, b: a + b, TensorSpec((4,)), TensorSpec((4,)))
    x = evoxc.tensor(np.ones(4, np.float32))
    y = evoxc.tensor(np.full(4, 2.0, np.float32))
    out = {}
    for backend in BACKENDS:
        exe = evoxc.build(g, backend=backend)
        out[f"evoxc {backend}: C++ execute"] = native(exe, (x, y), reps)
        out[f"evoxc {backend}: Python run"] = time_call(lambda: evoxc.run(exe, x, y), 0.05, reps)
        if backend == "xla":
            # Inputs already the plugin's (a run's outputs, fed back), as jax.device_put's arrays are jax.jit's.
            z = evoxc.run(exe, x, y)
            w = evoxc.run(exe, z, z)
            out["evoxc xla: C++ execute, plugin's buffers"] = native(exe, (z, w), reps)
            out["evoxc xla: Python run, plugin's buffers"] = time_call(lambda: evoxc.run(exe, z, w), 0.05, reps)
    try:
        import jax
        f = jax.jit(lambda a, b: a + b)
        ja, jb = jax.device_put(np.ones(4, np.float32)), jax.device_put(np.full(4, 2.0, np.float32))
        f(ja, jb).block_until_ready()
        out["jax.jit dispatch + block_until_ready"] = time_call(lambda: f(ja, jb).block_until_ready(), 0.05, reps)
    except Exception as e:  # noqa: BLE001
        print(f"[jax: {type(e).__name__}: {e}]", file=sys.stderr)
    return out


def disk_cache(backend="mlir"):
    """A second process finds the compiled program in the disk cache: its lookup + load time."""
    code = (
        "import time,evoxc,sys\n"
        "g=evoxc.trace(lambda x: evoxc.tanh(x*x+x), evoxc.TensorSpec((1024,), evoxc.float32))\n"
        f"low=evoxc.lower(g,'{backend}'); c=evoxc.DiskCache(sys.argv[1])\n"
        "t=time.perf_counter(); a,hit=c.compile(low); e=evoxc.load(a); print(hit, time.perf_counter()-t)\n")
    with tempfile.TemporaryDirectory() as d:
        runs = [subprocess.run([sys.executable, "-c", code, d], capture_output=True, text=True, check=True).stdout
                for _ in range(2)]
    (h1, t1), (h2, t2) = (r.split() for r in runs)
    return {"first process (miss: compile + store + load)": float(t1), "second process (hit: read + load)": float(t2),
            "hits": f"{h1}, {h2}"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    batch_s, reps = (0.02, 5) if a.quick else (0.1, 9)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; medians/bests of {reps} batches")
    for name, r in kernels(batch_s, reps).items():
        base = r["evoxc mlir"]
        print(f"\n{name}")
        for k, v in r.items():
            print(f"  {k:16} {fmt(v):>12}   {v / base:6.2f}x mlir's time" if k != "evoxc mlir" else
                  f"  {k:16} {fmt(v):>12}")
    print("\nseed population: 32 programs of a 10-deep elementwise chain, x (32, 64), switch_ops=True")
    for k, v in population32(reps).items():
        print(f"  {k:48} {fmt(v) if isinstance(v, float) and 'diff' not in k else v}")
    print("\nGP population: 500 trees x 17 nodes, 1024 cases, merged (switch_ops=True, bands='auto'), mlir at O2")
    for k, v in gp(reps).items():
        print(f"  {k:40} {fmt(v) if isinstance(v, float) and 'diff' not in k else v}")
    print("\nhost cost of one call of a + b on f32[4] (build/bin/bench_xla_call compares xla with raw PJRT calls)")
    for k, v in host_cost(reps).items():
        print(f"  {k:40} {fmt(v)}")
    for backend in BACKENDS[1:]:
        print(f"\ndisk cache, {backend} (EVOXC_CACHE_DIR-style directory, two processes)")
        for k, v in disk_cache(backend).items():
            print(f"  {k:48} {fmt(v) if isinstance(v, float) else v}")


if __name__ == "__main__":
    main()
