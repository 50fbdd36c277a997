"""Calibrates batch_functions' cost model for the interpreter: seconds per op dispatch (a chain of rank-0 ops) and
per element produced (a few large ops of the GP primitive mix), timed in C++ through the same Executable::run.
Prints the BatchCostModel constants (include/evoxc/transforms/batch.h holds the interpreter's).
Usage: .venv/bin/python bench/calibrate_batch.py"""

import numpy as np

import evoxc
from evoxc import TensorSpec

MIX = [evoxc.add, evoxc.multiply, evoxc.subtract, evoxc.sin, evoxc.tanh, evoxc.cos]


def chain(n_ops):
    def f(x):
        y = x
        for k in range(n_ops):
            op = MIX[k % len(MIX)]
            y = op(y, x) if op in (evoxc.add, evoxc.multiply, evoxc.subtract) else op(y)
        return y
    return f


def per_run(n_ops, numel, iterations):
    g = evoxc.trace(chain(n_ops), TensorSpec((numel,)))
    exe = evoxc.build(g)
    x = evoxc.tensor(np.linspace(-1, 1, numel, dtype=np.float32))
    return min(evoxc._core._time_run_native(exe, (x,), iterations) for _ in range(5)), g.num_ops


def main():
    # Dispatch: tiny ops, where the element work is negligible.
    t, ops = per_run(600, 1, 200)
    dispatch = t / ops
    # Elements: large ops, minus their dispatch cost.
    numel = 1 << 16
    t2, ops2 = per_run(24, numel, 50)
    element = (t2 - ops2 * dispatch) / (ops2 * numel)
    print(f"interp cost model: dispatch_seconds = {dispatch:.3g}, element_seconds = {element:.3g}")
    print(f"(from {ops} rank-0 ops in {t * 1e6:.1f} us and {ops2} ops of {numel} float32 elements in "
          f"{t2 * 1e6:.1f} us)")


if __name__ == "__main__":
    main()
