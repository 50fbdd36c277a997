"""Whether TVM's StableHLO frontend can serve as an evoxc backend: evoxc's exports of the bench programs imported
with tvm.relax.frontend.stablehlo.from_stablehlo, built for the CPU and run on the Relax VM, compared with the
interpreter (the record behind docs/backends.md, "tvm: not provided").

TVM's importer needs jax's MLIR bindings of an older jax than this project tests with, so it runs in an interpreter
of its own: python3 -m venv tvm-venv && tvm-venv/bin/pip install "apache-tvm==0.27.*" "jax==0.8.3"
"jaxlib==0.8.3" numpy, then

    .venv/bin/python bench/tvm_probe.py --tvm-python tvm-venv/bin/python"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import evoxc
from evoxc import TensorSpec

F32 = evoxc.float32

PROGRAMS = {
    "add": (lambda a, b: a + b, [(4,), (4,)]),
    "tanh(a*b+a)": (lambda a, b: evoxc.tanh(a * b + a), [(1024,), (1024,)]),
    "sum(axis=1)": (lambda x: evoxc.sum(x, axes=1), [(64, 128)]),
    "matmul": (lambda a, b: a @ b, [(64, 64), (64, 64)]),
    "conv2d": (lambda x, w: evoxc.conv(x, w, padding="SAME"), [(1, 4, 16, 16), (8, 4, 3, 3)]),
    "while_loop": (lambda x: evoxc.fori_loop(0, 5, lambda i, c: c * 0.5 + 1.0, x), [(8,)]),
    "symbolic batch": (lambda x: evoxc.tanh(x) * 2.0, [(evoxc.Dim("B"), 16)]),
}

TVM_SIDE = r'''
import json, sys, time, numpy as np
import tvm
from tvm import relax
from tvm.relax.frontend.stablehlo import from_stablehlo
d = sys.argv[1]
cases = json.load(open(f"{d}/cases.json"))
out = {"tvm": tvm.__version__}
for name, n in cases.items():
    text = open(f"{d}/{n}.mlir").read()
    z = np.load(f"{d}/{n}.npz")
    ins = [z[f"in{i}"] for i in range(int(z["n"]))]
    try:
        t0 = time.perf_counter(); mod = from_stablehlo(text); ex = relax.build(mod, target=tvm.target.Target("llvm"))
        tb = time.perf_counter() - t0
        vm = relax.VirtualMachine(ex, tvm.cpu())
        got = vm["main"](*[tvm.runtime.tensor(x, tvm.cpu()) for x in ins]).numpy()
        err = float(np.max(np.abs(got.astype(np.float64) - z["want"]))) if got.size else 0.0
        out[name] = f"ran: import+build {tb * 1e3:.0f} ms, max |diff| vs the interpreter {err:.1e}"
    except Exception as e:  # noqa: BLE001
        out[name] = f"failed: {type(e).__name__}: " + " ".join(str(e).split())[:160]
print(json.dumps(out))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tvm-python", required=True, help="an interpreter with apache-tvm and jax 0.8.3")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        cases = {}
        for k, (name, (fn, shapes)) in enumerate(PROGRAMS.items()):
            g = evoxc.trace(fn, *[TensorSpec(s, F32) for s in shapes])
            ins = [rng.standard_normal([5 if not isinstance(e, int) else e for e in s]).astype(np.float32)
                   for s in shapes]
            want = evoxc.build(g)(*ins).numpy()
            with open(os.path.join(d, f"p{k}.mlir"), "w") as f:
                f.write(evoxc.export_stablehlo(g))
            np.savez(os.path.join(d, f"p{k}.npz"), n=len(ins), want=want, **{f"in{i}": x for i, x in enumerate(ins)})
            cases[name] = f"p{k}"
        with open(os.path.join(d, "cases.json"), "w") as f:
            json.dump(cases, f)
        r = subprocess.run([a.tvm_python, "-c", TVM_SIDE, d], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"the TVM interpreter failed:\n{r.stderr[-2000:]}")
        res = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"apache-tvm {res.pop('tvm')}, evoxc's StableHLO exports:")
    for name, v in res.items():
        print(f"  {name:16} {v}")


if __name__ == "__main__":
    main()
