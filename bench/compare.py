#!/usr/bin/env python3
"""Runs the evoxc benchmark workloads side by side with numpy, PyTorch and JAX, and prints ratios.

Usage: .venv/bin/python bench/compare.py [--quick] [--json out.json]
Times are medians of per-call times; the table's ratio columns are peer time / evoxc time
(above 1 means evoxc is faster). Absolute times are not comparable across machines or runs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = 1 << 20


def time_call(fn, batch_s, reps):
    for _ in range(3):
        fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 >= batch_s:
            break
        n *= 2
    per_call = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        per_call.append((time.perf_counter() - t0) / n)
    return statistics.median(per_call)


def rand(shape, seed):
    import numpy as np
    return np.random.default_rng(seed).random(shape, dtype=np.float32) - 0.5


def sort_gather_chol_inputs():
    import numpy as np
    rng = np.random.default_rng(10)
    s_in = rand(N, 10)
    g_in = rand(N, 12)
    g_idx = rng.integers(0, N, N, dtype=np.int64)
    m = rand((512, 512), 13).astype(np.float64)
    spd = (m @ m.T + 512 * np.eye(512)).astype(np.float32)
    return s_in, g_in, g_idx, spd


def numpy_workloads():
    import numpy as np
    x, c = rand(64, 1), rand(64, 2)

    def chain():
        y = x
        for _ in range(50):
            y = (y * c) + c
        return y

    a, b = rand(N, 3), rand(N, 4)
    m = rand((1024, 1024), 5)
    p, q = rand((512, 512), 6), rand((512, 512), 7)
    cx, cw = rand((8, 64, 56, 56), 8), rand((64, 64, 3, 3), 9)

    def conv():  # numpy has no conv: im2col through a sliding window view, then one tensordot (BLAS)
        xp = np.pad(cx, ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # (8, 64, 56, 56, 3, 3)
        return np.tensordot(win, cw, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)

    s_in, g_in, g_idx, spd = sort_gather_chol_inputs()
    return {
        "dispatch_chain100_64": chain,
        "tanh_fma_1M": lambda: np.tanh(a * b + a),
        "sum_axis1_1024": lambda: m.sum(axis=1),
        "matmul_512": lambda: p @ q,
        "conv2d_8x64x56": conv,
        "sort_1M": lambda: np.sort(s_in),
        "gather_1M": lambda: np.take(g_in, g_idx),
        "cholesky_512": lambda: np.linalg.cholesky(spd),
    }


def torch_workloads():
    import torch
    t = lambda arr: torch.from_numpy(arr)
    x, c = t(rand(64, 1)), t(rand(64, 2))

    def chain():
        y = x
        for _ in range(50):
            y = (y * c) + c
        return y

    a, b = t(rand(N, 3)), t(rand(N, 4))
    m = t(rand((1024, 1024), 5))
    p, q = t(rand((512, 512), 6)), t(rand((512, 512), 7))
    cx, cw = t(rand((8, 64, 56, 56), 8)), t(rand((64, 64, 3, 3), 9))
    s_in, g_in, g_idx, spd = (torch.from_numpy(v) for v in sort_gather_chol_inputs())
    return {
        "dispatch_chain100_64": chain,
        "tanh_fma_1M": lambda: torch.tanh(a * b + a),
        "sum_axis1_1024": lambda: m.sum(dim=1),
        "matmul_512": lambda: p @ q,
        "conv2d_8x64x56": lambda: torch.nn.functional.conv2d(cx, cw, padding=1),
        "sort_1M": lambda: torch.sort(s_in),
        "gather_1M": lambda: torch.take(g_in, g_idx),
        "cholesky_512": lambda: torch.linalg.cholesky(spd),
    }


def jax_workloads():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")

    def chain(y, c):
        for _ in range(50):
            y = (y * c) + c
        return y

    x, c = jnp.asarray(rand(64, 1)), jnp.asarray(rand(64, 2))
    a, b = jnp.asarray(rand(N, 3)), jnp.asarray(rand(N, 4))
    m = jnp.asarray(rand((1024, 1024), 5))
    p, q = jnp.asarray(rand((512, 512), 6)), jnp.asarray(rand((512, 512), 7))
    jc = jax.jit(chain)
    jt = jax.jit(lambda a, b: jnp.tanh(a * b + a))
    js = jax.jit(lambda m: m.sum(axis=1))
    jm = jax.jit(lambda p, q: p @ q)
    cx, cw = jnp.asarray(rand((8, 64, 56, 56), 8)), jnp.asarray(rand((64, 64, 3, 3), 9))
    jconv = jax.jit(lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME"))
    s_in, g_in, g_idx, spd = (jnp.asarray(v) for v in sort_gather_chol_inputs())
    jsort = jax.jit(jnp.sort)
    jtake = jax.jit(jnp.take)
    jchol = jax.jit(jnp.linalg.cholesky)
    return {
        "conv2d_8x64x56": lambda: jconv(cx, cw).block_until_ready(),
        "sort_1M": lambda: jsort(s_in).block_until_ready(),
        "gather_1M": lambda: jtake(g_in, g_idx).block_until_ready(),
        "cholesky_512": lambda: jchol(spd).block_until_ready(),
        "dispatch_chain100_64": lambda: jc(x, c).block_until_ready(),
        "tanh_fma_1M": lambda: jt(a, b).block_until_ready(),
        "sum_axis1_1024": lambda: js(m).block_until_ready(),
        "matmul_512": lambda: jm(p, q).block_until_ready(),
    }


LABELS = {
    "dispatch_chain100_64": "100 elementwise ops on (64,) f32",
    "tanh_fma_1M": "tanh(a*b+a), 2^20 f32",
    "sum_axis1_1024": "sum(axis=1), 1024x1024 f32",
    "matmul_512": "matmul 512x512 f32",
    "conv2d_8x64x56": "conv2d 8x64x56x56, 3x3 SAME",
    "sort_1M": "sort 2^20 f32",
    "gather_1M": "take 2^20 indices",
    "cholesky_512": "cholesky 512x512 f32",
}


def numpy_generation(path, cases=1024, reps=5):
    """Seconds numpy takes to evaluate once every program of the population bench_staging dumped.

    The programs and inputs are the ones evoxc stages and runs; numpy has no staging, so this is
    what a numpy-based GP system pays per generation (Koza's protected division and log, as in
    bench/gp_population.h).
    """
    import numpy as np
    xs = [(np.arange(cases, dtype=np.float32) / np.float32(cases) * np.float32(v + 1) - np.float32(0.5))
          for v in range(2)]
    progs = [line.split() for line in open(path) if line.strip()]
    eps, one = np.float32(1e-6), np.float32(1)

    def ev(toks, pos):
        t = toks[pos]
        pos += 1
        if t in ("sin", "cos", "tanh", "log"):
            a, pos = ev(toks, pos)
            if t == "log":
                return np.log(np.abs(a) + eps), pos
            return getattr(np, t)(a), pos
        if t not in ("add", "sub", "mul", "div"):  # a leaf: v<index> or c<value>
            if t[0] == "v":
                return xs[int(t[1:])], pos
            return np.full(cases, np.float32(float(t[1:]))), pos
        a, pos = ev(toks, pos)
        b, pos = ev(toks, pos)
        if t == "add":
            return a + b, pos
        if t == "sub":
            return a - b, pos
        if t == "mul":
            return a * b, pos
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.where(np.abs(b) > eps, a / b, one), pos

    def generation():
        with np.errstate(all="ignore"):
            for p in progs:
                ev(p, 0)

    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        generation()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(progs)


def staging_report(args):
    """A new generation of GP programs: evoxc's trace + build + run against numpy's evaluation."""
    binary = os.path.join(os.path.dirname(args.bench_binary), "bench_staging")
    if not os.path.exists(binary):
        print("[bench_staging not built; staging row skipped]", file=sys.stderr)
        return None
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        dump = os.path.join(d, "population.txt")
        cmd = [binary, "--json", "--dump", dump] + (["--quick"] if args.quick else [])
        st = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        try:
            np_s, n = numpy_generation(dump)
        except ImportError:
            np_s, n = None, 500
    evoxc_s = (st["trace_us"] + st["build_us"] + st["run_us"]) * 1e-6 * n
    print(f"\na new generation of {n} GP programs (17 nodes, 1024 float32 cases):")
    print(f"  evoxc: trace {st['trace_us']:.2f} us + lower/compile/load {st['build_us']:.2f} us"
          f" + run {st['run_us']:.2f} us per program = {evoxc_s * 1e3:.2f} ms")
    if np_s is not None:
        print(f"  numpy: evaluating each program once = {np_s * 1e3:.2f} ms   ({np_s / evoxc_s:.2f}x evoxc's time)")
    return {"staging": st, "numpy_generation_s": np_s}


def fmt_time(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    return f"{s * 1e3:.3f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="shorter timing batches")
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--bench-binary", default=os.path.join(ROOT, "build", "bin", "evoxc_bench"))
    args = ap.parse_args()
    batch_s, reps = (0.02, 5) if args.quick else (0.1, 9)

    cmd = [args.bench_binary] + (["--quick"] if args.quick else [])
    evoxc = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)

    peers = {}
    for name, make in (("numpy", numpy_workloads), ("torch", torch_workloads), ("jax.jit", jax_workloads)):
        try:
            fns = make()
        except ImportError as e:
            print(f"[{name} not installed: {e}; column left empty]", file=sys.stderr)
            continue
        peers[name] = {k: time_call(f, batch_s, reps) for k, f in fns.items()}

    names = list(peers)
    head = f"{'workload':36} {'evoxc':>11} " + " ".join(f"{n:>11}" for n in names)
    head += "   " + " ".join(f"{'vs ' + n:>11}" for n in names)
    print(f"evoxc interpreter vs peers on this machine ({evoxc.get('threads')} threads; ratio = peer time / evoxc time)")
    print(head)
    for key, label in LABELS.items():
        e = evoxc.get(key)
        row = f"{label:36} {fmt_time(e):>11} " + " ".join(f"{fmt_time(peers[n].get(key)):>11}" for n in names)
        row += "   " + " ".join(f"{peers[n][key] / e:>10.2f}x" for n in names)
        print(row)
    per_op = evoxc["dispatch_chain100_64"] / 100
    np_per_op = peers.get("numpy", {}).get("dispatch_chain100_64")
    line = f"per-op dispatch: evoxc {per_op * 1e9:.1f} ns"
    if np_per_op:
        line += f", numpy {np_per_op / 100 * 1e9:.1f} ns"
    print(line)
    staging = staging_report(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"evoxc": evoxc, **peers, "staging": staging}, f, indent=1)


if __name__ == "__main__":
    main()
