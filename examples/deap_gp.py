"""DEAP symbolic regression on scikit-learn's diabetes data, its population evaluated by evoxc in one line.

A standard DEAP GP loop (DEAP's symbreg example, written out as eaSimple does it: tournament selection, one-point
crossover, uniform mutation, height limit 17) over the 10 features of the diabetes data set (442 cases, shipped with
scikit-learn). The fitness of the individuals without a valid one is computed by

    evaluate = evoxc.gp.evaluator(pset, X, y, loss="mse")     # once
    fitnesses = evaluate(invalid_individuals)                  # every generation: [(mse,), ...]

which packs the trees as postfix arrays and runs one executable built once (no trace, no compile per generation).
For comparison the same individuals are evaluated the DEAP way (gp.compile per individual, then numpy, float32) and
by Operon's evaluator (pyoperon: the trees converted to Operon trees, EvaluateTrees on 2 threads, MSE in numpy),
when pyoperon is installed; the evoxc and DEAP fitness vectors must agree within float32 tolerance. Prints the
evaluation time of each per generation.

Usage: .venv/bin/python examples/deap_gp.py [--generations N] [--population N] [--seed S]
"""

import argparse
import functools
import operator
import random
import sys
import time

import numpy as np
from deap import algorithms, base, creator, gp, tools

import evoxc
import evoxc.gp

F32 = np.float32
EPS = 1e-6


def protected_div(a, b):
    return np.where(np.abs(b) > EPS, np.divide(a, b, dtype=F32), F32(1))


def make_pset(nvars):
    pset = gp.PrimitiveSet("MAIN", nvars)
    pset.addPrimitive(lambda a, b: np.add(a, b, dtype=F32), 2, name="add")
    pset.addPrimitive(lambda a, b: np.subtract(a, b, dtype=F32), 2, name="sub")
    pset.addPrimitive(lambda a, b: np.multiply(a, b, dtype=F32), 2, name="mul")
    pset.addPrimitive(protected_div, 2, name="protectedDiv")  # evoxc.gp maps this name to its 'pdiv'
    pset.addPrimitive(lambda a: np.sin(a, dtype=F32), 1, name="sin")
    pset.addPrimitive(lambda a: np.cos(a, dtype=F32), 1, name="cos")
    pset.addPrimitive(lambda a: np.tanh(a, dtype=F32), 1, name="tanh")
    # A partial, as DEAP advises: deap.gp keeps the generator, and a function of this module would keep this module's
    # globals (evoxc included) alive past evoxc's shutdown.
    pset.addEphemeralConstant("const", functools.partial(random.uniform, -1.0, 1.0))
    return pset


def deap_fitness(individuals, pset, cols, y):
    """The DEAP way: gp.compile, then the lambda on numpy float32 arrays."""
    fit = np.empty(len(individuals), F32)
    with np.errstate(all="ignore"):
        for i, ind in enumerate(individuals):
            pred = np.broadcast_to(np.asarray(gp.compile(ind, pset)(*cols), F32), y.shape)
            fit[i] = np.mean(np.square(pred - y))
    return fit


class OperonEvaluator:
    """Operon's evaluator on the same trees: DEAP prefix trees -> Operon postfix Node lists (children right to left),
    EvaluateTrees into a (trees, cases) buffer on 2 threads, MSE in numpy. Operon has no protected division: its Div
    is plain a / b, so trees whose divisor comes within 1e-6 of zero give other values than the other two."""

    def __init__(self, op, X, y):
        self.op, self.y = op, y
        self.ds = op.Dataset(np.asfortranarray(X.astype(F32)))
        self.rg = op.Range(0, X.shape[0])
        self.hashes = [v.Hash for v in sorted(self.ds.Variables, key=lambda v: v.Index)]
        t = op.NodeType
        self.kinds = {"add": t.Add, "sub": t.Sub, "mul": t.Mul, "protectedDiv": t.Div, "sin": t.Sin, "cos": t.Cos,
                      "tanh": t.Tanh}

    def trees(self, individuals):
        op, out = self.op, []
        for ind in individuals:
            nodes, pos = [], 0

            def post():
                nonlocal pos
                node = ind[pos]
                pos += 1
                if isinstance(node, gp.Primitive):
                    kids = [post() for _ in range(node.arity)]
                    return [n for k in reversed(kids) for n in k] + [op.Node(self.kinds[node.name])]
                if isinstance(node.value, str):
                    n = op.Node(op.NodeType.Variable)
                    n.HashValue = self.hashes[int(node.value[3:])]
                    n.Value = 1.0
                    return [n]
                n = op.Node(op.NodeType.Constant)
                n.Value = float(node.value)
                return [n]

            nodes = post()
            tr = op.Tree(nodes)
            tr.UpdateNodes()
            out.append(tr)
        return out

    def fitness(self, individuals):
        trees = self.trees(individuals)
        buf = np.zeros((len(trees), self.y.shape[0]), F32)
        self.op.EvaluateTrees(trees, self.ds, self.rg, buf, 2)
        d = buf - self.y
        return np.einsum("ij,ij->i", d, d) / F32(self.y.shape[0])


def disagreements(a, b):
    """Fitness values that differ beyond float32 tolerance (equal non-finite values agree)."""
    close = np.isclose(a, b, rtol=1e-4, atol=1e-6) | (a == b) | (np.isnan(a) & np.isnan(b))
    return int(np.sum(~close))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generations", type=int, default=10)
    ap.add_argument("--population", type=int, default=500)
    ap.add_argument("--seed", type=int, default=318)
    a = ap.parse_args()
    random.seed(a.seed)
    from sklearn.datasets import load_diabetes
    X, y = load_diabetes(return_X_y=True)
    X, y = X.astype(F32), ((y - y.mean()) / y.std()).astype(F32)  # a standardised target: MSE 1 is the mean
    cols = [np.ascontiguousarray(X[:, j]) for j in range(X.shape[1])]

    pset = make_pset(X.shape[1])
    creator.create("FitnessMin", base.Fitness, weights=(-1.0,))
    creator.create("Individual", gp.PrimitiveTree, fitness=creator.FitnessMin)
    toolbox = base.Toolbox()
    toolbox.register("expr", gp.genHalfAndHalf, pset=pset, min_=1, max_=3)
    toolbox.register("individual", tools.initIterate, creator.Individual, toolbox.expr)
    toolbox.register("population", tools.initRepeat, list, toolbox.individual)
    toolbox.register("select", tools.selTournament, tournsize=3)
    toolbox.register("mate", gp.cxOnePoint)
    toolbox.register("expr_mut", gp.genFull, min_=0, max_=2)
    toolbox.register("mutate", gp.mutUniform, expr=toolbox.expr_mut, pset=pset)
    for op in ("mate", "mutate"):
        toolbox.decorate(op, gp.staticLimit(key=operator.attrgetter("height"), max_value=17))

    t0 = time.perf_counter()
    evaluate = evoxc.gp.evaluator(pset, X, y, loss="mse")  # the one line: built once for every generation
    t_setup = time.perf_counter() - t0
    try:
        import pyoperon
        operon = OperonEvaluator(pyoperon, X, y)
    except ImportError:
        operon = None

    print(f"DEAP GP on the diabetes data ({X.shape[0]} cases, {X.shape[1]} features, standardised target), "
          f"{a.population} individuals; evoxc.gp.evaluator built in {t_setup * 1e3:.1f} ms. Evaluation time per "
          "generation in ms: evoxc (pack + run), DEAP (gp.compile + numpy), Operon (convert + EvaluateTrees, 2 thr)")
    print(f"{'gen':>3} {'nevals':>6} {'nodes':>6} {'best MSE':>9} {'evoxc':>8} {'DEAP':>8} {'Operon':>8} {'differ':>6}")
    pop = toolbox.population(n=a.population)
    hof = tools.HallOfFame(1)
    failures = 0
    totals = [0.0, 0.0, 0.0]
    for gen in range(a.generations + 1):
        if gen > 0:  # eaSimple: select, vary, evaluate the individuals whose fitness the variation invalidated
            pop = algorithms.varAnd(toolbox.select(pop, len(pop)), toolbox, cxpb=0.5, mutpb=0.1)
        invalid = [ind for ind in pop if not ind.fitness.valid]
        t0 = time.perf_counter()
        fits = evaluate(invalid)
        t_evoxc = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref = deap_fitness(invalid, pset, cols, y)
        t_deap = time.perf_counter() - t0
        t_op = float("nan")
        if operon is not None:
            t0 = time.perf_counter()
            operon.fitness(invalid)
            t_op = time.perf_counter() - t0
        fit = np.array([f[0] for f in fits], F32)
        differ = disagreements(fit, ref)
        failures += differ
        for ind, f in zip(invalid, fits):
            ind.fitness.values = f if np.isfinite(f[0]) else (float("inf"),)
        hof.update(pop)
        totals = [totals[0] + t_evoxc, totals[1] + t_deap, totals[2] + t_op]
        print(f"{gen:>3} {len(invalid):>6} {sum(len(i) for i in invalid):>6} {hof[0].fitness.values[0]:>9.5f} "
              f"{t_evoxc * 1e3:>8.2f} {t_deap * 1e3:>8.2f} {t_op * 1e3:>8.2f} {differ:>6}")
    print(f"all generations: evoxc {totals[0] * 1e3:.1f} ms, DEAP {totals[1] * 1e3:.1f} ms "
          f"({totals[1] / totals[0]:.1f}x evoxc), Operon {totals[2] * 1e3:.1f} ms")
    print(f"best: {hof[0]}")
    if failures:
        print(f"{failures} fitness values differ between evoxc and DEAP beyond float32 tolerance", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
