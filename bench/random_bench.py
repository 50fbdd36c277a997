"""evoxc.random against the generators a user would pick instead, in one run: numpy's Generator (PCG64 and Philox),
torch.rand/randn and jax.random (jit), for 2^20 and 2^24 float32 uniform and normal draws. evoxc runs each algorithm
(splitmix64, threefry2x32, philox4x32_10) on the interpreter and on the mlir backend; the time is one call of a
built executable from a key. Ratios are times over the fastest peer's.

Usage: .venv/bin/python bench/random_bench.py [--quick]"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import evoxc  # noqa: E402
from compare import time_call  # noqa: E402
from evoxc import TensorSpec  # noqa: E402

KEY_SPECS = {"splitmix64": TensorSpec((), evoxc.int64), "threefry2x32": TensorSpec((2,), evoxc.uint32),
             "philox4x32_10": TensorSpec((4,), evoxc.uint32)}


def peers(n, kind):
    out = {}
    rng_pcg, rng_philox = np.random.Generator(np.random.PCG64(0)), np.random.Generator(np.random.Philox(0))
    if kind == "uniform":
        out["numpy PCG64"] = lambda: rng_pcg.random(n, dtype=np.float32)
        out["numpy Philox"] = lambda: rng_philox.random(n, dtype=np.float32)
    else:
        out["numpy PCG64"] = lambda: rng_pcg.standard_normal(n, dtype=np.float32)
        out["numpy Philox"] = lambda: rng_philox.standard_normal(n, dtype=np.float32)
    try:
        import torch
        g = torch.Generator().manual_seed(0)
        out["torch"] = (lambda: torch.rand(n, generator=g)) if kind == "uniform" else (lambda: torch.randn(n, generator=g))
    except ImportError:
        pass
    try:
        import jax
        f = jax.jit((lambda k: jax.random.uniform(k, (n,))) if kind == "uniform" else (lambda k: jax.random.normal(k, (n,))))
        k = jax.random.PRNGKey(0)
        out["jax.random (jit)"] = lambda: f(k).block_until_ready()
    except ImportError:
        pass
    return out


def ours(n, kind, backends):
    out = {}
    for alg, spec in KEY_SPECS.items():
        sample = evoxc.random.uniform if kind == "uniform" else evoxc.random.normal
        for backend in backends:
            try:
                exe = evoxc.build(lambda k: sample(k, (n,)), spec, backend=backend)
            except evoxc.EvoxcError as e:
                print(f"  evoxc {alg} on {backend}: not built ({e})")
                continue
            key = evoxc.random.key(0, alg)
            out[f"evoxc {alg} ({backend})"] = lambda exe=exe, key=key: exe(key)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    batch_s, reps = (0.05, 3) if args.quick else (0.2, 5)
    backends = [b for b in ("interp", "mlir") if b in evoxc.backends()]
    print(f"evoxc.random vs peers, float32, median of {reps} batches; ratio = time / fastest peer's")
    for log2n in (20, 24):
        n = 1 << log2n
        for kind in ("uniform", "normal"):
            p = {name: time_call(f, batch_s, reps) for name, f in peers(n, kind).items()}
            o = {name: time_call(f, batch_s, reps) for name, f in ours(n, kind, backends).items()}
            best = min(p.values())
            print(f"\n{kind} 2^{log2n}:")
            for name, t in sorted({**p, **o}.items(), key=lambda kv: kv[1]):
                print(f"  {name:34s} {t * 1e3:9.3f} ms   {t / best:5.2f}x")


if __name__ == "__main__":
    main()
