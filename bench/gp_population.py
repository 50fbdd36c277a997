"""GP population benchmark (issue 10, item 9): fitness of 500 random symbolic-regression trees, in one run, with numpy
tree by tree, DEAP, PyTorch eager, Operon (pyoperon) and evoxc (one by one, and merged by batch_functions).
Usage: .venv/bin/python bench/gp_population.py [--quick] [--trees N] [--nodes K] [--cases M] [--seed S]"""

import argparse
import math
import os
import sys
import time

import numpy as np

BINARY = ("add", "sub", "mul", "div")
UNARY = ("sin", "cos", "tanh", "log")
EPS = 1e-6  # protected div: x / y where |y| > EPS else 1; protected log: log(|x|) where |x| > EPS else 0


# ---------------------------------------------------------------------------------------------------------------------
# The population, in a neutral representation: nested tuples ("add", a, b), ("sin", a), ("var", i), ("const", c),
# with c a Python float that is exactly a float32 value. Same scheme as bench/gp_population.h: exactly `size` nodes,
# operators uniform over the 4 binary / 4 unary ones, leaves are inputs (2/3) or constants in [-1, 1] (1/3).

def grow(rng, size, num_vars):
    if size == 1:
        if rng.integers(3) == 0:
            return ("const", float(np.float32(rng.uniform(-1.0, 1.0))))
        return ("var", int(rng.integers(num_vars)))
    if size >= 3 and (size == 3 or rng.integers(2) == 0):
        left = 1 + int(rng.integers(size - 2))
        return (BINARY[rng.integers(4)], grow(rng, left, num_vars), grow(rng, size - 1 - left, num_vars))
    return (UNARY[rng.integers(4)], grow(rng, size - 1, num_vars))


def population(seed, count, size, num_vars=2):
    rng = np.random.default_rng(seed)
    return [grow(rng, size, num_vars) for _ in range(count)]


def tree_size(t):
    return 1 + sum(tree_size(c) for c in t[1:]) if t[0] not in ("var", "const") else 1


def best_of(fn, repeats):
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


# ---------------------------------------------------------------------------------------------------------------------
# numpy, tree by tree (a recursive interpreter of the tuples). `protect=False` gives Operon's semantics (plain
# division, log(|x|)) for checking Operon.

def np_pdiv(a, b):
    return np.where(np.abs(b) > EPS, np.divide(a, b), np.float32(1.0))


def np_plog(a):
    aa = np.abs(a)
    return np.where(aa > EPS, np.log(aa), np.float32(0.0))


NP_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np_pdiv, "sin": np.sin, "cos": np.cos,
          "tanh": np.tanh, "log": np_plog}
NP_RAW = dict(NP_OPS, div=np.divide, log=lambda a: np.log(np.abs(a)))


def np_tree(t, xs, ops):
    k = t[0]
    if k == "var":
        return xs[t[1]]
    if k == "const":
        return np.float32(t[1])
    return ops[k](*[np_tree(c, xs, ops) for c in t[1:]])


def numpy_fitness(trees, xs, y, ops=NP_OPS):
    with np.errstate(all="ignore"):
        return np.array([np.mean(np.square(np_tree(t, xs, ops) - y)) for t in trees], np.float32)


def protection_triggers(t, xs):
    """Whether the protected div or log takes its fallback on some fitness case (numpy, float32)."""
    hit = False

    def rec(t):
        nonlocal hit
        k = t[0]
        if k == "var":
            return xs[t[1]]
        if k == "const":
            return np.float32(t[1])
        args = [rec(c) for c in t[1:]]
        if k == "div" and np.any(~(np.abs(args[1]) > EPS)):
            hit = True
        if k == "log" and np.any(~(np.abs(args[0]) > EPS)):
            hit = True
        return NP_OPS[k](*args)

    with np.errstate(all="ignore"):
        rec(t)
    return hit


# ---------------------------------------------------------------------------------------------------------------------
# DEAP: a PrimitiveSet over numpy functions, trees rebuilt as PrimitiveTree, gp.compile per tree per evaluation (what
# DEAP's symbolic-regression example does in its evaluate function), fitness with numpy arrays.

def deap_setup(trees):
    from deap import gp
    pset = gp.PrimitiveSet("MAIN", 2)
    for name in BINARY:
        pset.addPrimitive(NP_OPS[name], 2, name=name)
    for name in UNARY:
        pset.addPrimitive(NP_OPS[name], 1, name=name)
    pset.renameArguments(ARG0="x0", ARG1="x1")

    def to_list(t, out):
        k = t[0]
        if k == "var":
            out.append(pset.mapping[f"x{t[1]}"])
        elif k == "const":
            out.append(gp.Terminal(t[1], False, object))
        else:
            out.append(pset.mapping[k])
            for c in t[1:]:
                to_list(c, out)
        return out

    return gp, pset, [gp.PrimitiveTree(to_list(t, [])) for t in trees]


def deap_fitness(gp, pset, dtrees, xs, y, funcs=None):
    out = np.empty(len(dtrees), np.float32)
    with np.errstate(all="ignore"):
        for i, tr in enumerate(dtrees):
            f = funcs[i] if funcs is not None else gp.compile(tr, pset)
            out[i] = np.mean(np.square(f(xs[0], xs[1]) - y))
    return out


# ---------------------------------------------------------------------------------------------------------------------
# PyTorch eager, CPU, tree by tree.

def torch_fitness(torch, trees, xs, y):
    ops = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
           "div": lambda a, b: torch.where(b.abs() > EPS, a / b, 1.0), "sin": torch.sin, "cos": torch.cos,
           "tanh": torch.tanh, "log": lambda a: torch.where(a.abs() > EPS, torch.log(a.abs()), 0.0)}

    def rec(t):
        k = t[0]
        if k == "var":
            return xs[t[1]]
        if k == "const":
            return torch.tensor(t[1], dtype=torch.float32)
        return ops[k](*[rec(c) for c in t[1:]])

    with torch.inference_mode():
        return torch.stack([torch.mean(torch.square(rec(t) - y)) for t in trees]).numpy()


# ---------------------------------------------------------------------------------------------------------------------
# Operon: postfix Node lists (Operon's children are stored right to left: for op(a, b) the list is b, a, op), one
# Dataset, EvaluateTrees into a (trees, cases) float32 buffer, MSE in numpy. Operon has no protected division or
# log: div maps to Div (plain x / y) and log to Logabs (log |x|), so trees whose protection triggers differ.

def operon_trees(op, trees, ds):
    kinds = {"add": op.NodeType.Add, "sub": op.NodeType.Sub, "mul": op.NodeType.Mul, "div": op.NodeType.Div,
             "sin": op.NodeType.Sin, "cos": op.NodeType.Cos, "tanh": op.NodeType.Tanh, "log": op.NodeType.Logabs}
    hashes = [v.Hash for v in sorted(ds.Variables, key=lambda v: v.Index)]

    def post(t, out):
        k = t[0]
        if k == "var":
            n = op.Node(op.NodeType.Variable)
            n.HashValue = hashes[t[1]]
            n.Value = 1.0
            out.append(n)
        elif k == "const":
            n = op.Node(op.NodeType.Constant)
            n.Value = t[1]
            out.append(n)
        else:
            for c in reversed(t[1:]):
                post(c, out)
            out.append(op.Node(kinds[k]))
        return out

    res = []
    for t in trees:
        tr = op.Tree(post(t, []))
        tr.UpdateNodes()  # (its return value is a reference into tr: do not keep it)
        res.append(tr)
    return res


def operon_fitness(op, otrees, ds, rg, buf, tmp, y, threads):
    op.EvaluateTrees(otrees, ds, rg, buf, threads)
    np.subtract(buf, y, out=tmp)
    return np.einsum("ij,ij->i", tmp, tmp) / np.float32(y.shape[0])  # MSE per row, without temporaries


# ---------------------------------------------------------------------------------------------------------------------
# evoxc: each tree traced as a function (x0, x1, y) -> MSE (the fitness is in the graph).

def evoxc_fn(evoxc, t):
    f32 = evoxc.float32
    ops = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
           "div": lambda a, b: evoxc.where(evoxc.abs(b) > EPS, a / b, 1.0), "sin": evoxc.sin, "cos": evoxc.cos,
           "tanh": evoxc.tanh, "log": lambda a: evoxc.where(evoxc.abs(a) > EPS, evoxc.log(evoxc.abs(a)), 0.0)}

    def rec(t, xs):
        k = t[0]
        if k == "var":
            return xs[t[1]]
        if k == "const":
            return evoxc.fill((), t[1], f32)
        return ops[k](*[rec(c, xs) for c in t[1:]])

    def fitness(x0, x1, y):
        return evoxc.mean(evoxc.square(rec(t, (x0, x1)) - y))

    return fitness


def evoxc_trace_all(evoxc, trees, spec):
    return [evoxc.trace(evoxc_fn(evoxc, t), spec, spec, spec) for t in trees]


def evoxc_run_each(evoxc, exes, args):
    return np.array([evoxc.run(e, *args).numpy() for e in exes], np.float32)


# ---------------------------------------------------------------------------------------------------------------------

def rel_diff(a, b):
    """Max relative difference of fitness a against reference b (both non-finite and equal counts as agreement),
    and the number of trees above 1e-3."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    same_nonfinite = (~np.isfinite(a)) & (~np.isfinite(b)) & ((a == b) | (np.isnan(a) & np.isnan(b)))
    with np.errstate(all="ignore"):
        r = np.abs(a - b) / np.maximum(np.abs(b), 1e-30)
    r = np.where(same_nonfinite, 0.0, r)
    r = np.where(np.isnan(r), np.inf, r)
    return float(r.max()) if r.size else 0.0, int((r > 1e-3).sum())


class Row:
    """One engine: `fn` evaluates the population's fitness; `gen` is a generation time in seconds, if any."""

    def __init__(self, name, fn=None, gen=None, note="", error=None, check=None):
        self.name, self.fn, self.gen, self.note, self.error, self.check = name, fn, gen, note, error, check
        self.best = float("inf")
        self.fitness = None


def failed(name, e):
    return Row(name, error=f"failed: {type(e).__name__}: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats and merge configurations")
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--nodes", type=int, default=17, help="nodes per tree (exact)")
    ap.add_argument("--cases", type=int, default=1024, help="fitness cases")
    ap.add_argument("--seed", type=int, default=2024)
    a = ap.parse_args()
    repeats = 5 if a.quick else 15
    gen_repeats = 1 if a.quick else 3
    band_list = (None, 4, "auto") if a.quick else (None, 2, 4, 8, 16, 32, "auto")

    rng = np.random.default_rng(a.seed)
    X = rng.uniform(-3.0, 3.0, (2, a.cases)).astype(np.float32)
    x0, x1 = X[0], X[1]
    y = (np.square(x0) + np.sin(x1)).astype(np.float32)
    trees = population(a.seed + 1, a.trees, a.nodes)
    nodes = sum(tree_size(t) for t in trees)
    node_evals = nodes * a.cases
    triggered = [protection_triggers(t, (x0, x1)) for t in trees]
    n_trig = sum(triggered)
    unprotected = [i for i in range(a.trees) if not triggered[i]]

    print(f"GP population: {a.trees} trees, {nodes} nodes in all ({nodes / a.trees:.1f} per tree), {a.cases} fitness "
          f"cases, 2 inputs, target y = x0^2 + sin(x1), float32, MSE fitness. {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f} before the run (machine shared: timings are the best of {repeats} rounds, each "
          "round timing every engine once in turn, so that load from others hits every engine alike).")

    rows = []
    rows.append(Row("numpy, tree by tree", lambda: numpy_fitness(trees, (x0, x1), y), gen="eval"))

    try:
        import deap
        gp, pset, dtrees = deap_setup(trees)
        funcs = [gp.compile(tr, pset) for tr in dtrees]
        note = "constant-only subtrees are float64 in DEAP (Python floats)"
        rows.append(Row(f"DEAP {deap.__version__}, gp.compile + eval", gen="eval", note="compiles per eval; " + note,
                        fn=lambda: deap_fitness(gp, pset, dtrees, (x0, x1), y)))
        rows.append(Row("DEAP, precompiled lambdas", note="gp.compile not timed; " + note,
                        fn=lambda: deap_fitness(gp, pset, dtrees, (x0, x1), y, funcs)))
    except Exception as e:  # noqa: BLE001
        rows.append(failed("DEAP", e))

    # Programs as data: the DEAP population (PrimitiveTrees) in, fitness tuples out, through one evaluator built once
    # (evoxc.gp.evaluator). Each call packs the trees and evaluates them, so its eval time is a whole generation.
    data_row = None
    try:
        import evoxc.gp
        ev = evoxc.gp.evaluator(pset, X.T, y, primitives={"div": "pdiv", "log": "plog"})
        data_row = Row("evoxc.gp.evaluator (DEAP trees -> fitness tuples)", gen="eval",
                       note="programs as data: pack + postfix_eval + MSE, no staging",
                       fn=lambda: np.array([f[0] for f in ev(dtrees)], np.float32))
        rows.append(data_row)
    except Exception as e:  # noqa: BLE001
        rows.append(failed("evoxc.gp.evaluator", e))

    try:
        import torch
        tx = tuple(torch.from_numpy(v) for v in (x0, x1))
        ty = torch.from_numpy(y)
        rows.append(Row(f"PyTorch {torch.__version__.split('+')[0]} eager CPU ({torch.get_num_threads()} thr)",
                        gen="eval", fn=lambda: torch_fitness(torch, trees, tx, ty)))
    except Exception as e:  # noqa: BLE001
        rows.append(failed("PyTorch eager", e))

    op_rows = {}
    try:
        import pyoperon as op
        ds = op.Dataset(np.asfortranarray(X.T))
        rg = op.Range(0, a.cases)
        t_conv, otrees = best_of(lambda: operon_trees(op, trees, ds), 1)
        buf = np.zeros((a.trees, a.cases), np.float32)
        tmp = np.empty_like(buf)
        with np.errstate(all="ignore"):
            f_raw = numpy_fitness(trees, (x0, x1), y, NP_RAW)  # numpy with Operon's semantics
        for threads in (1, 2):
            r = Row(f"Operon (pyoperon) EvaluateTrees, {threads} thr", check=unprotected,
                    fn=lambda th=threads: operon_fitness(op, otrees, ds, rg, buf, tmp, y, th))
            r.gen = ("plus", t_conv)
            r.raw_ref = f_raw
            op_rows[threads] = r
            rows.append(r)
        for threads in (1, 2):
            rows.append(Row(f"  (Operon EvaluateTrees alone, no MSE, {threads} thr)", check=[],
                            fn=lambda th=threads: op.EvaluateTrees(otrees, ds, rg, buf, th)))
    except Exception as e:  # noqa: BLE001
        rows.append(failed("Operon", e))

    merged_info, gen_breakdown = [], []
    try:
        import evoxc
        spec = evoxc.TensorSpec((a.cases,), evoxc.float32)
        args = tuple(evoxc.tensor(v) for v in (x0, x1, y))
        graphs = evoxc_trace_all(evoxc, trees, spec)
        exes = [evoxc.build(g) for g in graphs]

        def gen_separate(seed):
            new = population(seed, a.trees, a.nodes)
            t0 = time.perf_counter()
            ex = [evoxc.build(g) for g in evoxc_trace_all(evoxc, new, spec)]
            evoxc_run_each(evoxc, ex, args)
            return time.perf_counter() - t0

        sep = Row(f"evoxc one by one ({a.trees} executables)", fn=lambda: evoxc_run_each(evoxc, exes, args))
        sep.gen = min(gen_separate(a.seed + 100 + r) for r in range(gen_repeats))
        rows.append(sep)
        sep_fit = sep.fn()

        for sw in (None, True):
            for bands in band_list:
                label = f"evoxc merged switch_ops={sw} bands={bands}"
                try:
                    t0 = time.perf_counter()
                    m = evoxc.batch_functions(graphs, axes=(None, None, None), switch_ops=sw, bands=bands)
                    t_merge = time.perf_counter() - t0
                    t0 = time.perf_counter()
                    exe = evoxc.build(m)
                    t_build = time.perf_counter() - t0
                    f_m = evoxc.run(exe, *args).numpy().copy()
                    nbad = int(np.sum(f_m.view(np.uint32) != sep_fit.view(np.uint32)))
                    rep = m.batch_report
                    note = (f"{rep['emitted_ops']}/{rep['program_ops']} ops; "
                            + ("== one-by-one bit for bit" if nbad == 0 else f"NOT bit-exact: {nbad} trees differ"))

                    def gen_merged(seed, sw=sw, bands=bands):
                        new = population(seed, a.trees, a.nodes)
                        t0 = time.perf_counter()
                        gs = evoxc_trace_all(evoxc, new, spec)
                        t1 = time.perf_counter()
                        mm = evoxc.batch_functions(gs, axes=(None, None, None), switch_ops=sw, bands=bands)
                        t2 = time.perf_counter()
                        ex = evoxc.load(evoxc.compile(evoxc.lower(mm)))
                        t3 = time.perf_counter()
                        evoxc.run(ex, *args).numpy()
                        t4 = time.perf_counter()
                        return (t4 - t0, t1 - t0, t2 - t1, t3 - t2, t4 - t3)

                    g = min((gen_merged(a.seed + 100 + k) for k in range(gen_repeats)), key=lambda v: v[0])
                    gen_breakdown.append((label, g))
                    merged_info.append((label, rep, t_merge, t_build))
                    rows.append(Row(label, fn=lambda exe=exe: evoxc.run(exe, *args).numpy().copy(), gen=g[0],
                                    note=note))
                except Exception as e:  # noqa: BLE001
                    rows.append(failed(label, e))
    except Exception as e:  # noqa: BLE001
        rows.append(failed("evoxc", e))

    # ---- timing: round robin over the engines
    live = [r for r in rows if r.error is None]
    for r in live:
        with np.errstate(all="ignore"):
            try:
                r.fitness = r.fn()  # warm-up, and the values checked
            except Exception as e:  # noqa: BLE001
                r.error = f"failed: {type(e).__name__}: {e}"
    live = [r for r in live if r.error is None]
    with np.errstate(all="ignore"):
        for _ in range(repeats):
            for r in live:
                t0 = time.perf_counter()
                r.fn()
                r.best = min(r.best, time.perf_counter() - t0)

    f_np = rows[0].fitness
    t_np = rows[0].best
    t_op2 = op_rows[2].best if 2 in op_rows and op_rows[2].error is None else None

    # ---- the table
    print()
    print("Columns: eval ms = wall time of one fitness evaluation of the whole population (predictions + MSE of every"
          " tree, fitness values back in numpy); G nev/s = nodes x fitness cases / eval time, in 10^9 "
          "node-evaluations per second; xOp2 = Operon-2-threads eval time / this eval time (> 1: faster than Operon "
          "on 2 threads); gen ms = a whole generation starting from the neutral trees: evoxc traces "
          f"{a.trees} NEW programs, (merges,) lowers/compiles/loads and runs; Operon builds its trees and evaluates; "
          "numpy, PyTorch and DEAP (gp.compile included) have nothing to build, so their eval time; maxrel = max "
          f"relative difference of the {a.trees} fitness values against numpy's, #>1e-3 = trees above 1e-3. Operon has"
          " no protected division or log (div -> Div = plain x / y, log -> Logabs = log|x|), so for Operon maxrel is "
          f"over the {len(unprotected)} trees where protection never takes its fallback ({n_trig} trees do); its "
          "note gives maxrel over all trees against numpy computing Operon's semantics.")
    w = 52
    print(f"{'engine':<{w}} {'eval ms':>9} {'G nev/s':>8} {'xOp2':>6} {'gen ms':>9} {'maxrel':>8} {'#>1e-3':>6}  note")
    for r in rows:
        if r.error is not None:
            print(f"{r.name:<{w}} {r.error}")
            continue
        t = r.best
        g = t if r.gen == "eval" else (t + r.gen[1] if isinstance(r.gen, tuple) else r.gen)
        gs = f"{g * 1e3:9.2f}" if g is not None else f"{'-':>9}"
        ratio = f"{t_op2 / t:6.2f}" if t_op2 else f"{'-':>6}"
        note = r.note
        if r is rows[0]:
            ds_ = f"{'reference':>15}"
        elif r.check == []:
            ds_ = f"{'':>15}"
        else:
            idx = r.check if r.check is not None else slice(None)
            d = rel_diff(np.asarray(r.fitness)[idx], f_np[idx])
            ds_ = f"{d[0]:8.1e} {d[1]:>6}"
            if hasattr(r, "raw_ref"):
                note = f"all trees vs numpy w/ Operon semantics: {rel_diff(r.fitness, r.raw_ref)[0]:.1e}"
        print(f"{r.name:<{w}} {t * 1e3:9.2f} {node_evals / t / 1e9:8.2f} {ratio} {gs} {ds_}  {note}")

    print()
    # The generation targets of the staging issue, side by side with Operon in this run.
    staging = None
    exe_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin", "bench_staging")
    if os.path.exists(exe_path):
        import json
        import subprocess
        try:
            out = subprocess.run([exe_path, "--quick", "--json", "--programs", str(a.trees)], check=True,
                                 capture_output=True, text=True, timeout=600).stdout
            staging = json.loads(out.strip().splitlines()[-1])
        except Exception as e:  # noqa: BLE001
            print(f"bench_staging failed: {e}")
    deap_row = next((r for r in rows if r.name.startswith("DEAP") and r.error is None and r.gen == "eval"), None)
    if t_op2:
        print(f"Generation targets (Operon EvaluateTrees + MSE on 2 threads: {t_op2 * 1e3:.2f} ms in this run):")
        if staging:
            g = staging["data_gen_ms"]
            print(f"  C++ (build/bin/bench_staging, its own {a.trees} random 17-node trees, 1024 cases): pack + "
                  f"evaluate {g:.2f} ms = {g / (t_op2 * 1e3):.2f}x Operon (target <= 1); evaluation alone "
                  f"{staging['data_eval_ms']:.2f} ms")
        if data_row is not None and data_row.error is None:
            g = data_row.best
            line = (f"  Python (evoxc.gp.evaluator, DEAP population in, fitness tuples out): {g * 1e3:.2f} ms = "
                    f"{g / t_op2:.2f}x Operon (target <= 1.5)")
            if deap_row is not None:
                line += f"; DEAP's own evaluation {deap_row.best * 1e3:.2f} ms = {deap_row.best / g:.1f}x it (target >= 5)"
            print(line)
    print(f"numpy evaluation alone: {t_np * 1e3:.2f} ms; a whole evoxc generation must take <= {t_np / 3 * 1e3:.2f} ms"
          " to be 3x faster than it (issue target); load average after the run "
          f"{os.getloadavg()[0]:.2f}")
    if gen_breakdown:
        print(f"evoxc merged generation breakdown, ms (best of {gen_repeats}; trace {a.trees} / merge / "
              "lower+compile+load / run):")
        for label, g in gen_breakdown:
            print(f"  {label:<{w}} {g[1] * 1e3:8.1f} {g[2] * 1e3:8.1f} {g[3] * 1e3:8.1f} {g[4] * 1e3:8.2f}"
                  f"   total {g[0] * 1e3:8.1f}  ({t_np / g[0]:.2f}x numpy eval)")
    if merged_info:
        print("evoxc merge reports (this population): merge ms, build ms, emitted/program ops, switched classes, "
              "muxes, cost_estimate vs separate_cost:")
        for label, rep, tm, tb in merged_info:
            print(f"  {label:<{w}} {tm * 1e3:7.1f} {tb * 1e3:7.1f}  {rep['emitted_ops']}/{rep['program_ops']}  "
                  f"switched={len(rep['switched'])} muxes={rep['muxes']} cost={rep['cost_estimate']} "
                  f"separate={rep['separate_cost']}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
