"""An opaque kernel with evoxc.external_call: the graph names the kernel and its result spec, the implementation (here
numpy's) is registered out of band and resolved when an executable loads — on the interpreter and on the mlir backend,
which calls it from compiled code. vmap adds a batch level that the kernel's batch variant takes whole, and a
backend that cannot call host code (the StableHLO export) runs the registered portable form instead, with a warning.
"""

import warnings

import numpy as np

import evoxc
from evoxc import TensorSpec

N = evoxc.dim("N")
calls = {"plain": 0, "batched": 0}


def soft_threshold(x, t):
    calls["plain"] += 1
    return np.sign(x) * np.maximum(np.abs(x) - t, 0).astype(x.dtype)


kernel = evoxc.register_external_kernel("example.soft_threshold", soft_threshold)


@kernel.batch_variant
def soft_threshold_rows(x, t):  # x (B, N), t (B, 1) or (1, 1): numpy broadcasts
    calls["batched"] += 1
    return np.sign(x) * np.maximum(np.abs(x) - t, 0).astype(x.dtype)


@kernel.portable
def soft_threshold_graph(x, t):
    return evoxc.sign(x) * evoxc.maximum(evoxc.abs(x) - t, 0.0)


@evoxc.defn
def denoise(x, t):
    y = evoxc.external_call("example.soft_threshold", x, t, result=TensorSpec(x.shape, evoxc.float32))
    return evoxc.sum(y * y)


def main():
    x = np.linspace(-2, 2, 9).astype(np.float32)
    t = np.float32(0.5)
    want = np.sum((np.sign(x) * np.maximum(np.abs(x) - t, 0)) ** 2)
    specs = (TensorSpec((N,), evoxc.float32), TensorSpec((), evoxc.float32))
    for backend in ("interp", "mlir"):
        if backend in evoxc.backends():
            got = evoxc.run(evoxc.build(denoise, *specs, backend=backend), x, t).numpy()
            print(f"{backend}: {got:.6f} (numpy {want:.6f}), the kernel called {calls['plain']} time(s) so far")
            assert abs(got - want) < 1e-5
    rows = np.stack([x, 2 * x, -x])
    batched = evoxc.vmap(denoise, in_axes=(0, None))
    got = evoxc.run(evoxc.build(batched, TensorSpec((3, 9), evoxc.float32), specs[1]), rows, t).numpy()
    print(f"vmap over 3 rows: {np.round(got, 4).tolist()}, batch variant called {calls['batched']} time(s)")
    assert calls["batched"] == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = evoxc.backends.stablehlo.export(evoxc.trace(denoise, *specs))
    print(f"StableHLO export: the portable form inlined ({len(text.splitlines())} lines), warned: "
          f"{any('portable' in str(w.message) for w in caught)}")


if __name__ == "__main__":
    main()
