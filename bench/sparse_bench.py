"""evoxc.sparse against the libraries a user would pick instead, in one run: sparse @ dense with scipy.sparse (CSR)
and torch.sparse (CSR and COO), for an n x n float32 matrix at 1% and 0.1% density times an (n, 64) dense block.
evoxc runs one built executable per format and backend (the interpreter's CSR kernel; the mlir backend runs the
op's decomposition: gather, multiply, scatter-add). Ratios are times over scipy's.

Usage: .venv/bin/python bench/sparse_bench.py [--quick]"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import evoxc  # noqa: E402
from compare import time_call  # noqa: E402
from evoxc import sparse  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    import scipy.sparse as sp
    n, cols = (2048, 64) if args.quick else (8192, 64)
    batch_s, reps = (0.05, 3) if args.quick else (0.2, 5)
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((n, cols)).astype(np.float32)
    print(f"sparse @ dense: ({n} x {n}) float32 @ ({n} x {cols}), median of {reps}; ratio = time / scipy's")
    print(f"{'density':>8} {'nnz':>9}  {'runner':<28} {'ms':>9} {'ratio':>7}")
    for density in (0.01, 0.001):
        a = sp.random(n, n, density=density, format="csr", dtype=np.float32, random_state=rng)
        a.indices = a.indices.astype(np.int64)
        a.indptr = a.indptr.astype(np.int64)
        want = a @ dense
        rows = {"scipy CSR": lambda a=a: a @ dense}
        try:
            import torch
            tc = torch.sparse_csr_tensor(torch.from_numpy(a.indptr), torch.from_numpy(a.indices),
                                         torch.from_numpy(a.data), size=a.shape)
            to = tc.to_sparse_coo()
            td = torch.from_numpy(dense)
            rows["torch.sparse CSR"] = lambda: torch.sparse.mm(tc, td)
            rows["torch.sparse COO"] = lambda: torch.sparse.mm(to, td)
        except ImportError:
            pass
        for fmt in ("csr", "coo"):
            s = sparse.from_scipy(a.asformat(fmt))
            if fmt == "coo":
                s = sparse.coo(s.indices.astype(np.int64), s.values, s.shape)
            spec = sparse.SparseTensorSpec.from_concrete(s)
            for backend in ("interp", "mlir"):
                if backend not in evoxc.backends():
                    continue
                exe = evoxc.build(sparse.matmul, spec, evoxc.TensorSpec((n, cols), evoxc.float32), backend=backend)
                got = evoxc.run(exe, s, dense).numpy()
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
                rows[f"evoxc {fmt.upper()} {backend}"] = lambda exe=exe, s=s: evoxc.run(exe, s, dense)
        times = {name: time_call(fn, batch_s, reps) for name, fn in rows.items()}
        base = times["scipy CSR"]
        for name, t in times.items():
            print(f"{density:>8} {a.nnz:>9}  {name:<28} {t * 1e3:>9.3f} {t / base:>7.2f}")


if __name__ == "__main__":
    main()
