"""Transform staging against JAX, in one run (issue 22, item 1): for the GP population's programs (17-node trees,
fitness = MSE over 1,024 cases), the time to trace each program, and to stage its vmap and its gradient, in evoxc
(trace from Python; vectorize/grad are Graph -> Graph) and in JAX (jax.make_jaxpr of f, vmap(f), grad(f)).
Per-op tracing from Python is timed on a 1,000-op function too.
Usage: .venv/bin/python bench/staging_transforms.py [--quick] [--trees N]"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gp_population as gpp  # noqa: E402

import evoxc  # noqa: E402
from evoxc import TensorSpec  # noqa: E402


def best(fn, repeats):
    t = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def jax_fn(jnp, t):
    ops = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
           "div": lambda a, b: jnp.where(jnp.abs(b) > gpp.EPS, a / b, 1.0), "sin": jnp.sin, "cos": jnp.cos,
           "tanh": jnp.tanh, "log": lambda a: jnp.where(jnp.abs(a) > gpp.EPS, jnp.log(jnp.abs(a)), 0.0)}

    def rec(t, xs):
        k = t[0]
        if k == "var":
            return xs[t[1]]
        if k == "const":
            return jnp.float32(t[1])
        return ops[k](*[rec(c, xs) for c in t[1:]])

    def fitness(x0, x1, y):
        return jnp.mean(jnp.square(rec(t, (x0, x1)) - y))

    return fitness


def chain(lib, n):
    def f(x):
        for k in range(n // 2):
            x = lib.sin(x) * 1.0001 if k % 2 else x + 0.5
            x = x * 0.999
        return x
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--trees", type=int, default=200)
    a = ap.parse_args()
    repeats = 3 if a.quick else 7
    trees = gpp.population(2025, a.trees, 17)
    spec = TensorSpec((1024,), evoxc.float32)
    graphs = gpp.evoxc_trace_all(evoxc, trees, spec)
    ops = sum(g.num_ops for g in graphs) / len(graphs)
    rows = {}
    rows["evoxc trace (Python)"] = best(lambda: gpp.evoxc_trace_all(evoxc, trees, spec), repeats)
    rows["evoxc vmap staging (vectorize(graph))"] = best(lambda: [evoxc.vectorize(g) for g in graphs], repeats)
    rows["evoxc grad staging (grad(graph))"] = best(lambda: [evoxc.grad(g) for g in graphs], repeats)
    rows["evoxc vjp staging (vjp(graph))"] = best(lambda: [evoxc.vjp(g) for g in graphs], repeats)
    rows["evoxc trace + vmap"] = rows["evoxc trace (Python)"] + rows["evoxc vmap staging (vectorize(graph))"]
    rows["evoxc trace + grad"] = rows["evoxc trace (Python)"] + rows["evoxc grad staging (grad(graph))"]
    one = evoxc.trace(chain(evoxc, 1000), spec)
    per_op = best(lambda: evoxc.trace(chain(evoxc, 1000), spec), repeats) / one.num_ops
    try:
        import jax
        import jax.numpy as jnp
        x = jnp.zeros((1024,), jnp.float32)
        xb = jnp.zeros((8, 1024), jnp.float32)
        fns = [jax_fn(jnp, t) for t in trees]
        rows["jax make_jaxpr(f)"] = best(lambda: [jax.make_jaxpr(f)(x, x, x) for f in fns], repeats)
        rows["jax make_jaxpr(vmap(f))"] = best(lambda: [jax.make_jaxpr(jax.vmap(f))(xb, xb, xb) for f in fns],
                                               repeats)
        rows["jax make_jaxpr(grad(f))"] = best(lambda: [jax.make_jaxpr(jax.grad(f))(x, x, x) for f in fns], repeats)
        jax_per_op = best(lambda: jax.make_jaxpr(chain(jnp, 1000))(x), repeats) / 1000
        jax_version = jax.__version__
    except ImportError as e:
        print(f"[jax: {e}]")
        jax_per_op, jax_version = None, None
    n = len(trees)
    print(f"{n} GP programs ({ops:.1f} evoxc ops each on average), best of {repeats}; per program, µs"
          + (f" (jax {jax_version})" if jax_version else ""))
    for k, v in rows.items():
        print(f"  {k:42} {v / n * 1e6:9.1f}")
    tr = rows["evoxc trace (Python)"]
    print(f"evoxc staging / evoxc trace: vmap {rows['evoxc vmap staging (vectorize(graph))'] / tr:.2f}x, "
          f"grad {rows['evoxc grad staging (grad(graph))'] / tr:.2f}x, vjp {rows['evoxc vjp staging (vjp(graph))'] / tr:.2f}x "
          "(target <= 3x; against a trace from C++, `build/bin/bench_staging --transforms-only 5`, they are higher)")
    if "jax make_jaxpr(vmap(f))" in rows:
        print(f"JAX / evoxc, trace + transform: vmap {rows['jax make_jaxpr(vmap(f))'] / rows['evoxc trace + vmap']:.2f}x,"
              f" grad {rows['jax make_jaxpr(grad(f))'] / rows['evoxc trace + grad']:.2f}x (target > 1: evoxc faster)")
    print(f"tracing a 1,000-op function from Python: {per_op * 1e6:.2f} µs per op (target <= 1)"
          + (f"; jax.make_jaxpr {jax_per_op * 1e6:.2f} µs per op" if jax_per_op else ""))


if __name__ == "__main__":
    main()
