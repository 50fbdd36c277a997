"""Tiered execution: a program evaluated many times starts on the interpreter at once while the mlir backend
compiles it on a background thread; calls switch to the compiled code when it is loaded.

Here: 64 GP expression programs merged into one graph (batch_functions), evaluated over and over (as constant
tuning or a growing data set would), timed per tier.
Usage: .venv/bin/python examples/tiered.py [--seconds S]"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import gp_population as gpp  # noqa: E402  (the bench's random trees and their evoxc form)

import evoxc  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="stop after this long if the compile is not done")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    x0, x1 = rng.uniform(-3, 3, (2, 1024)).astype(np.float32)
    y = (x0 * x0 + np.sin(x1)).astype(np.float32)
    spec = evoxc.TensorSpec((1024,), evoxc.float32)
    graphs = gpp.evoxc_trace_all(evoxc, gpp.population(7, 64, 17), spec)
    merged = evoxc.batch_functions(graphs, axes=(None, None, None), switch_ops=True)
    if "mlir" not in evoxc.backends():
        print("this build has no mlir backend: the tiered executable would stay on the interpreter")
        return
    t0 = time.perf_counter()
    tiered = evoxc.build_tiered(merged)  # returns at once: the interpreter tier is ready
    print(f"built in {(time.perf_counter() - t0) * 1e3:.1f} ms; {tiered}")
    first_result = None
    times = {"first": [], "compiled": []}
    start = time.perf_counter()
    while time.perf_counter() - start < a.seconds:
        tier = tiered.tier
        t = time.perf_counter()
        fit = tiered(x0, x1, y).numpy()
        times[tier].append(time.perf_counter() - t)
        if first_result is None:
            first_result = fit.copy()
        if tier == "compiled" and len(times["compiled"]) >= 200:
            break
    r = tiered.report
    print(f"compile {r['compile']} after {r['lower_seconds'] + r['compile_seconds'] + r['load_seconds']:.2f} s "
          f"(lower {r['lower_seconds']:.2f}, compile {r['compile_seconds']:.2f}, load {r['load_seconds']:.3f}); "
          f"stages: " + ", ".join(f"{k} {v:.2f}" for k, v in r["stages"].items()))
    for tier, ts in times.items():
        if ts:
            print(f"  {len(ts):5d} calls on the {tier:8} tier, median {np.median(ts) * 1e6:8.1f} us")
    if times["compiled"]:
        diff = np.max(np.abs(fit - first_result) / np.maximum(np.abs(first_result), 1e-6))
        print(f"  compiled vs interpreter fitness: max relative difference {diff:.2e}")


if __name__ == "__main__":
    main()
