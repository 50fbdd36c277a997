"""DEAP symbolic regression whose population is evaluated by evoxc: trees traced, merged by batch_functions, run once.

A standard DEAP GP loop (DEAP's symbreg example, written out as eaSimple does it): PrimitiveSet with add, sub, mul,
protected div, sin, cos and ephemeral constants; tournament selection, one-point crossover, uniform mutation, height
limit 17. Each generation, the individuals without a valid fitness are translated to evoxc functions
(x0, x1, y) -> MSE, traced, merged into one graph by evoxc.batch_functions (x0, x1 and y shared by every program),
built and run in one call: row i of the result is individual i's fitness. For comparison the same individuals are
also evaluated the DEAP way (gp.compile per individual, then numpy on float32 arrays) and the two fitness vectors
are checked to agree within float32 tolerance.

Usage: .venv/bin/python examples/deap_gp.py [--generations N] [--population N] [--cases N] [--seed S]
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

F32 = np.float32
EPS = 1e-6  # protected division: a / b where |b| > EPS, else 1


def np_protected_div(a, b):
    return np.where(np.abs(b) > EPS, np.divide(a, b, dtype=F32), F32(1))


def evoxc_protected_div(a, b):
    return evoxc.where(evoxc.abs(b) > EPS, a / b, 1.0)


# name: (arity, numpy implementation run by DEAP's compiled lambdas, evoxc implementation). The numpy ones compute
# in float32 (dtype=F32) like evoxc, so that the two evaluations can be compared.
PRIMITIVES = {
    "add": (2, lambda a, b: np.add(a, b, dtype=F32), operator.add),
    "sub": (2, lambda a, b: np.subtract(a, b, dtype=F32), operator.sub),
    "mul": (2, lambda a, b: np.multiply(a, b, dtype=F32), operator.mul),
    "protected_div": (2, np_protected_div, evoxc_protected_div),
    "sin": (1, lambda a: np.sin(a, dtype=F32), evoxc.sin),
    "cos": (1, lambda a: np.cos(a, dtype=F32), evoxc.cos),
}


def make_pset():
    pset = gp.PrimitiveSet("MAIN", 2)
    for name, (arity, fn, _) in PRIMITIVES.items():
        pset.addPrimitive(fn, arity, name=name)
    # A partial, as DEAP advises: deap.gp keeps the generator, and a function of this module would keep this module's
    # globals (evoxc included) alive past evoxc's shutdown, which nanobind then reports as leaks at exit.
    pset.addEphemeralConstant("const", functools.partial(random.uniform, -2.0, 2.0))
    pset.renameArguments(ARG0="x0", ARG1="x1")
    return pset


def to_evoxc(individual):
    """The evoxc function (x0, x1, y) -> MSE of a DEAP tree (a prefix-order list of Primitives and Terminals)."""

    def fitness(x0, x1, y):
        args = {"x0": x0, "x1": x1}
        pos = 0

        def build():
            nonlocal pos
            node = individual[pos]
            pos += 1
            if isinstance(node, gp.Primitive):
                operands = [build() for _ in range(node.arity)]
                return PRIMITIVES[node.name][2](*operands)
            if isinstance(node.value, str):
                return args[node.value]
            return evoxc.fill((), float(node.value), evoxc.float32)

        return evoxc.mean(evoxc.square(build() - y))

    return fitness


def evoxc_fitness(individuals, data):
    """Fitness of every individual with evoxc (one merged graph, one run), and the time of each stage."""
    spec = evoxc.TensorSpec((data[0].shape[0],), evoxc.float32)
    t0 = time.perf_counter()
    graphs = [evoxc.trace(to_evoxc(ind), spec, spec, spec) for ind in individuals]
    t1 = time.perf_counter()
    merged = evoxc.batch_functions(graphs, axes=(None, None, None))
    t2 = time.perf_counter()
    exe = evoxc.build(merged)
    t3 = time.perf_counter()
    fit = evoxc.run(exe, *data).numpy()
    t4 = time.perf_counter()
    return fit, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)


def deap_fitness(individuals, pset, data):
    """Fitness of every individual the DEAP way: gp.compile, then the lambda on numpy arrays."""
    x0, x1, y = data
    fit = np.empty(len(individuals), F32)
    with np.errstate(all="ignore"):
        for i, ind in enumerate(individuals):
            pred = np.asarray(gp.compile(ind, pset)(x0, x1), F32)
            fit[i] = np.mean(np.square(pred - y))
    return fit


def disagreements(a, b):
    """Fitness values that differ beyond float32 tolerance (equal non-finite values agree)."""
    close = np.isclose(a, b, rtol=1e-4, atol=1e-6) | (a == b) | (np.isnan(a) & np.isnan(b))
    return int(np.sum(~close))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generations", type=int, default=4)
    ap.add_argument("--population", type=int, default=300)
    ap.add_argument("--cases", type=int, default=256)
    ap.add_argument("--seed", type=int, default=318)
    a = ap.parse_args()
    random.seed(a.seed)
    rng = np.random.default_rng(a.seed)
    x0, x1 = rng.uniform(-3.0, 3.0, (2, a.cases)).astype(F32)
    data = (x0, x1, (np.square(x0) + np.sin(x1)).astype(F32))

    pset = make_pset()
    creator.create("FitnessMin", base.Fitness, weights=(-1.0,))
    creator.create("Individual", gp.PrimitiveTree, fitness=creator.FitnessMin)
    toolbox = base.Toolbox()
    toolbox.register("expr", gp.genHalfAndHalf, pset=pset, min_=1, max_=2)
    toolbox.register("individual", tools.initIterate, creator.Individual, toolbox.expr)
    toolbox.register("population", tools.initRepeat, list, toolbox.individual)
    toolbox.register("select", tools.selTournament, tournsize=3)
    toolbox.register("mate", gp.cxOnePoint)
    toolbox.register("expr_mut", gp.genFull, min_=0, max_=2)
    toolbox.register("mutate", gp.mutUniform, expr=toolbox.expr_mut, pset=pset)
    for op in ("mate", "mutate"):
        toolbox.decorate(op, gp.staticLimit(key=operator.attrgetter("height"), max_value=17))

    print(f"DEAP GP, {a.population} individuals, {a.cases} fitness cases, target y = x0^2 + sin(x1); evaluation "
          "times in ms (evoxc: trace + merge + build + run; DEAP: gp.compile + numpy)")
    print(f"{'gen':>3} {'nevals':>6} {'best MSE':>10} {'evoxc':>8} {'trace':>7} {'merge':>7} {'build':>7} {'run':>7} "
          f"{'DEAP':>8} {'differ':>6}")
    pop = toolbox.population(n=a.population)
    hof = tools.HallOfFame(1)
    failures = 0
    for gen in range(a.generations + 1):
        if gen > 0:  # eaSimple: select, vary, evaluate the individuals whose fitness the variation invalidated
            pop = algorithms.varAnd(toolbox.select(pop, len(pop)), toolbox, cxpb=0.5, mutpb=0.1)
        invalid = [ind for ind in pop if not ind.fitness.valid]
        fit, times = evoxc_fitness(invalid, data)
        t0 = time.perf_counter()
        ref = deap_fitness(invalid, pset, data)
        t_deap = time.perf_counter() - t0
        differ = disagreements(fit, ref)
        failures += differ
        for ind, f in zip(invalid, fit):
            ind.fitness.values = (float(f) if np.isfinite(f) else float("inf"),)
        hof.update(pop)
        print(f"{gen:>3} {len(invalid):>6} {hof[0].fitness.values[0]:>10.6f} {sum(times) * 1e3:>8.1f} "
              + " ".join(f"{t * 1e3:>7.1f}" for t in times) + f" {t_deap * 1e3:>8.1f} {differ:>6}")
    print(f"best: {hof[0]}")
    if failures:
        print(f"{failures} fitness values differ between evoxc and DEAP beyond float32 tolerance", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
