"""batch_functions: the seed's two measurements. (a) 32 programs of a 10-deep elementwise chain (merged op counts,
time per evaluation separate vs merged, through Python and C++); (b) 100 unrelated random expression trees over two
(64,) inputs: separate, flat, banded. Usage: .venv/bin/python bench/batch_functions.py [--quick]"""

import argparse
import time

import numpy as np

import evoxc
from evoxc import TensorSpec

BIN = [evoxc.add, evoxc.multiply, evoxc.subtract, evoxc.maximum]
UN = [evoxc.sin, evoxc.tanh, evoxc.cos]


def best(fn, repeats, number):
    b = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        b = min(b, (time.perf_counter() - t0) / number)
    return b


def chain(i):
    def f(x, c):
        y = x
        for k in range(10):
            y = BIN[(i * 7 + k * 3) % 4](y, c)
            y = UN[(i + k) % 3](y)
        return y
    return f


def random_tree(rng, depth):
    def node(x, y, d):
        if d >= depth or (d > 1 and rng.random() < 0.3):
            k = rng.integers(3)
            return x if k == 0 else y if k == 1 else float(rng.integers(-9, 10)) / 4
        if rng.random() < 0.3:
            a = node(x, y, d + 1)
            return UN[rng.integers(3)](a if not isinstance(a, float) else evoxc.add(x, a))
        a, b = node(x, y, d + 1), node(x, y, d + 1)
        if isinstance(a, float) and isinstance(b, float):
            a = evoxc.add(x, a)
        return BIN[rng.integers(4)](a, b)

    seed = int(rng.integers(1 << 30))

    def f(x, y):
        nonlocal rng
        saved, rng = rng, np.random.default_rng(seed)
        try:
            out = node(x, y, 0)
        finally:
            rng = saved
        return out if not isinstance(out, float) else evoxc.add(x, out)
    return f


def time_separate(exes, args_per_program, repeats, number):
    def go():
        for e, a in zip(exes, args_per_program):
            evoxc.run(e, *a)
    py = best(go, repeats, number)
    native = sum(min(evoxc._core._time_run_native(e, tuple(a), number) for _ in range(repeats))
                 for e, a in zip(exes, args_per_program))
    return py, native


def time_merged(exe, args, repeats, number):
    py = best(lambda: evoxc.run(exe, *args), repeats, number)
    native = min(evoxc._core._time_run_native(exe, tuple(args), number) for _ in range(repeats))
    return py, native


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    repeats, number = (3, 100) if a.quick else (5, 400)
    rng = np.random.default_rng(0)

    print("(a) 32 programs, a 10-deep elementwise chain each, x mapped (32, 64), c shared")
    graphs = [evoxc.trace(chain(i), TensorSpec((64,)), TensorSpec((1,))) for i in range(32)]
    x = rng.standard_normal((32, 64)).astype(np.float32)
    c = np.array([0.7], np.float32)
    exes = [evoxc.build(g) for g in graphs]
    sep = time_separate(exes, [(evoxc.tensor(x[i]), evoxc.tensor(c)) for i in range(32)], repeats, number)
    ref = np.stack([evoxc.run(e, x[i], c).numpy() for i, e in enumerate(exes)])
    print(f"{'':>22} {'ops':>6} {'Python us':>10} {'C++ us':>9} {'bit-exact':>10}")
    print(f"{'separate (32 runs)':>22} {sum(g.num_ops for g in graphs):>6} {sep[0] * 1e6:>10.1f} {sep[1] * 1e6:>9.1f}")
    for sw in (None, True):
        m = evoxc.batch_functions(graphs, axes=(0, None), switch_ops=sw)
        exe = evoxc.build(m)
        t = time_merged(exe, (evoxc.tensor(x), evoxc.tensor(c)), repeats, number * 4)
        exact = evoxc.run(exe, x, c).numpy().tobytes() == ref.tobytes()
        name = f"merged switch_ops={sw}"
        print(f"{name:>22} {m.batch_report['emitted_ops']:>6} {t[0] * 1e6:>10.1f} {t[1] * 1e6:>9.1f} {str(exact):>10}")

    n = 100
    print(f"\n(b) {n} unrelated random expression trees over two (64,) inputs (shared)")
    fns = [random_tree(rng, 5) for _ in range(n)]
    graphs = [evoxc.trace(f, TensorSpec((64,)), TensorSpec((64,))) for f in fns]
    xa = evoxc.tensor(rng.standard_normal(64).astype(np.float32))
    ya = evoxc.tensor(rng.standard_normal(64).astype(np.float32))
    exes = [evoxc.build(g) for g in graphs]
    ref = np.stack([evoxc.run(e, xa, ya).numpy() for e in exes])
    sep = time_separate(exes, [(xa, ya)] * n, repeats, max(1, number // 4))
    print(f"{'':>30} {'ops':>6} {'Python ms':>10} {'C++ ms':>9} {'bit-exact':>10}")
    print(f"{'separate (100 runs)':>30} {sum(g.num_ops for g in graphs):>6} {sep[0] * 1e3:>10.3f} {sep[1] * 1e3:>9.3f}")
    for sw in (None, True):
        for bands in (None, 4, 10, "auto"):
            m = evoxc.batch_functions(graphs, axes=(None, None), switch_ops=sw, bands=bands)
            exe = evoxc.build(m)
            t = time_merged(exe, (xa, ya), repeats, number)
            exact = evoxc.run(exe, xa, ya).numpy().tobytes() == ref.tobytes()
            name = f"switch_ops={sw} bands={bands}"
            print(f"{name:>30} {m.batch_report['emitted_ops']:>6} {t[0] * 1e3:>10.3f} {t[1] * 1e3:>9.3f} "
                  f"{str(exact):>10}")


if __name__ == "__main__":
    main()
