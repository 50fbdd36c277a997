"""Constant tuning for GP programs with Levenberg-Marquardt, the jacobians from one evoxc graph.

A population of random expression programs (held as data: evoxc.gp.Population) is evaluated on a target with
constants in it; the best programs of the generation then get their constants tuned, as Operon does: one graph,
Population.jacobian_graph, gives every selected program's predictions and their jacobian with respect to its own
constants (jacfwd of each program's graph, merged by batch_functions), and a few Levenberg-Marquardt steps
(the small C x C solves in numpy) move the constants. The constants are data, so the population is evaluated
again with the tuned values without rebuilding anything.

Usage: .venv/bin/python examples/gp_tune_constants.py [--programs N] [--best K] [--steps S] [--seed S]
"""

import argparse
import sys

import numpy as np

import evoxc
import evoxc.gp

UNARY = ("sin", "cos", "tanh", "square")
BINARY = ("add", "sub", "mul", "aq")


def random_program(rng, size):
    """A random expression in prefix text with exactly `size` nodes; leaves are x0, x1 or a constant."""
    if size == 1:
        r = rng.integers(3)
        return f"{rng.uniform(-2, 2):.3f}" if r == 2 else f"x{r}"
    if size >= 3 and (size == 3 or rng.integers(2) == 0):
        left = 1 + int(rng.integers(size - 2))
        return f"({BINARY[rng.integers(4)]} {random_program(rng, left)} {random_program(rng, size - 1 - left)})"
    return f"({UNARY[rng.integers(4)]} {random_program(rng, size - 1)})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=400)
    ap.add_argument("--best", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    n = 256
    x = rng.uniform(-2, 2, (2, n))
    y = 1.7 * np.sin(0.8 * x[0]) + 0.4 * x[1] * x[1] - 0.3  # a target with constants to find

    s = evoxc.gp.PrimitiveSet.standard()
    pop = evoxc.gp.Population(s, 2)
    for _ in range(a.programs):
        pop.add_prefix_text(random_program(rng, int(rng.integers(5, 14))))
    evaluate = evoxc.gp.Evaluator(s, 2, "mse", "float64")  # built once, for every population
    xt, yt = evoxc.tensor(x), evoxc.tensor(y)
    fit = evaluate.evaluate(pop, xt, yt).numpy().copy()
    fit[~np.isfinite(fit)] = np.inf
    # The best programs that have constants to tune.
    order = [int(i) for i in np.argsort(fit) if pop.max_constants and len(pop.constants(int(i))) > 0][:a.best]
    c = max(1, pop.max_constants)
    jac = evoxc.build(pop.jacobian_graph(order, n, "float64"))  # predictions and d(prediction)/d(constants)
    k = np.zeros((len(order), c))
    for r, p in enumerate(order):
        k[r, :len(pop.constants(p))] = pop.constants(p)
    lam = np.full(len(order), 1e-2)
    xs = [x[0].copy(), x[1].copy()]

    def mse(pred):
        return np.mean((pred - y) ** 2, axis=1)

    pred, J = (t.numpy() for t in evoxc.run(jac, xs, k))
    before = mse(pred)
    for _ in range(a.steps):
        cur = mse(pred)
        for r, p in enumerate(order):  # one damped Gauss-Newton step per program, accepted if it lowers the MSE
            m = len(pop.constants(p))
            Jr, res = J[r, :, :m], pred[r] - y
            A = Jr.T @ Jr
            step = np.linalg.solve(A + lam[r] * np.diag(np.diag(A) + 1e-12), -Jr.T @ res)
            trial = k.copy()
            trial[r, :m] += step
            tpred, _ = (t.numpy() for t in evoxc.run(jac, xs, trial))
            if np.mean((tpred[r] - y) ** 2) < cur[r]:
                k[r] = trial[r]
                lam[r] = max(lam[r] / 3, 1e-9)
            else:
                lam[r] *= 4
        pred, J = (t.numpy() for t in evoxc.run(jac, xs, k))
    after = mse(pred)
    for r, p in enumerate(order):  # constants are data: write them back, evaluate the population again
        pop.set_constants(p, list(k[r, :len(pop.constants(p))]))
    refit = evaluate.evaluate(pop, xt, yt).numpy()

    print(f"{a.programs} random programs, target 1.7 sin(0.8 x0) + 0.4 x1^2 - 0.3 on {n} cases; the {len(order)} best "
          f"with constants tuned by {a.steps} Levenberg-Marquardt steps (jacobians from one evoxc graph)")
    print(f"{'program':>7} {'MSE before':>11} {'MSE after':>11}  constants after")
    for r, p in enumerate(order):
        print(f"{p:>7} {before[r]:>11.5f} {after[r]:>11.5f}  {np.round(k[r, :len(pop.constants(p))], 4).tolist()}")
    assert np.allclose(refit[order], after, rtol=1e-9, atol=1e-12), "the evaluator disagrees with the graph"
    worse = int(np.sum(after > before * (1 + 1e-12)))
    print(f"best MSE {before.min():.5f} -> {after.min():.5f}; {int(np.sum(after < before))} of {len(order)} improved")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
