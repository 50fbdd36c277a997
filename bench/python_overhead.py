"""Host cost of the Python layer: evoxc.run per tensor leaf against the C++ no-op baseline, tracing a 1,000-op Python
function, and a build_cached hit. Usage: .venv/bin/python bench/python_overhead.py [--quick]"""

import argparse
import time

import numpy as np

import evoxc
from evoxc import TensorSpec


def best_of(fn, repeats, number):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def identity(*xs):
    return tuple(xs)


def run_overhead(leaves, repeats, number):
    specs = [TensorSpec((4,))] * leaves
    exe = evoxc.build(identity, *specs)
    args = tuple(evoxc.ones((4,)) for _ in range(leaves))
    py = best_of(lambda: evoxc.run(exe, *args), repeats, number)
    native = min(evoxc._core._time_run_native(exe, args, number) for _ in range(repeats))
    return py, native


def chain(x):
    for i in range(250):
        x = evoxc.tanh(x * 1.0001 + 0.5) - x  # 4 ops per iteration: 1,000 ops
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    repeats, number = (3, 2000) if a.quick else (7, 5000)

    print("evoxc Python layer: host cost per call (best of %d x %d calls)" % (repeats, number))
    print(f"{'tensor leaves':>14} {'evoxc.run us':>13} {'C++ run us':>11} {'Python adds us':>15}")
    rows = []
    for n in (1, 4, 16, 64):
        py, native = run_overhead(n, repeats, number)
        rows.append((n, py - native))
        print(f"{n:>14} {py * 1e6:>13.2f} {native * 1e6:>11.2f} {(py - native) * 1e6:>15.2f}")
    n = np.array([r[0] for r in rows], float)
    extra = np.array([r[1] for r in rows]) * 1e6
    slope, intercept = np.polyfit(n, extra, 1)
    print(f"fit: Python adds {slope:.3f} us per tensor leaf + {intercept:.2f} us per call "
          "(targets: <= 1.5 us per leaf, <= 3 us per call)")

    t = best_of(lambda: evoxc.trace(chain, TensorSpec((8,))), 3, 3 if a.quick else 10)
    g = evoxc.trace(chain, TensorSpec((8,)))
    print(f"trace a {g.num_ops}-op Python function: {t * 1e3:.2f} ms (target <= 20 ms)")

    cache = evoxc.CompileCache(8)
    spec = TensorSpec((4, 8))
    evoxc.build_cached(chain, spec, cache=cache)
    hit = best_of(lambda: evoxc.build_cached(chain, spec, cache=cache), repeats, number)
    print(f"build_cached hit: {hit * 1e6:.2f} us (target <= 5 us); hits={cache.hits} misses={cache.misses}")


if __name__ == "__main__":
    main()
