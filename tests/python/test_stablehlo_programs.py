"""Whole programs through StableHLO on XLA, against the interpreter: transformed graphs (vmap, grad, jvp, vjp,
hessian), batch_functions merges (flat, banded, switch classes) and the examples' programs."""

import numpy as np

from stablehlo_util import check_graph

import evoxc
from evoxc import TensorSpec

RNG = np.random.default_rng(11)


def rand(*shape):
    return evoxc.tensor(RNG.standard_normal(shape).astype(np.float32))


def mlp_loss(w1, b1, w2, x, y):
    h = evoxc.tanh(evoxc.dot(x, w1) + b1)
    out = evoxc.dot(h, w2)
    return evoxc.mean((out - y) ** 2)


SPECS = (TensorSpec((3, 5)), TensorSpec((5,)), TensorSpec((5, 2)), TensorSpec((4, 3)), TensorSpec((4, 2)))


def mlp_inputs():
    return [rand(3, 5), rand(5), rand(5, 2), rand(4, 3), rand(4, 2)]


def test_quickstart_and_mlp():
    g = evoxc.trace(lambda x, w: evoxc.sum(evoxc.tanh(evoxc.dot(x, w)), axes=1), TensorSpec((4, 8)), TensorSpec((8, 4)))
    check_graph(g, [rand(4, 8), rand(8, 4)], "quickstart")
    check_graph(evoxc.trace(mlp_loss, *SPECS), mlp_inputs(), "mlp loss")


def test_grad_and_value_and_grad():
    g = evoxc.trace(mlp_loss, *SPECS)
    check_graph(evoxc.grad(g, argnums=(0, 1, 2)), mlp_inputs(), "grad")
    check_graph(evoxc.value_and_grad(g, argnums=(0, 2)), mlp_inputs(), "value_and_grad")


def test_jvp_vjp_hessian():
    f = evoxc.trace(lambda x: evoxc.sum(evoxc.sin(x) * x ** 2), TensorSpec((3,)))
    check_graph(evoxc.jvp(f), [(rand(3),), (rand(3),)], "jvp")
    check_graph(evoxc.vjp(f), [(rand(3),), evoxc.tensor(np.float32(1.5))], "vjp")
    check_graph(evoxc.hessian(f), [rand(3)], "hessian")


def test_per_sample_grad_vmap():
    g = evoxc.trace(lambda w, x, y: evoxc.sum((evoxc.dot(x, w) - y) ** 2), TensorSpec((3,)), TensorSpec((3,)),
                    TensorSpec(()))
    psg = evoxc.vmap(evoxc.grad(g, argnums=(0,)), in_axes=(None, 0, 0))
    check_graph(psg, [rand(3), rand(6, 3), rand(6)], "per-sample grad")


def test_batch_functions_merges():
    def prog(i):
        def f(x, c):
            y = x
            for k in range(6):
                y = [evoxc.sin, evoxc.tanh, evoxc.cos][(i + k) % 3](y * c + float(k))
            return y
        return evoxc.trace(f, TensorSpec((8,)), TensorSpec(()))

    graphs = [prog(i) for i in range(6)]
    xs, c = rand(6, 8), evoxc.tensor(np.float32(0.7))
    for kw in ({}, {"switch_ops": True}, {"bands": 2}, {"bands": "auto", "switch_ops": True}):
        m = evoxc.batch_functions(graphs, axes=(0, None), **kw)
        check_graph(m, [xs, c], f"batch_functions {kw}")


def test_gp_population_merge():
    # The GP primitives with their protected division and log, as bench/gp_population.py writes them.
    def pdiv(a, b):
        return evoxc.where(evoxc.abs(b) > 1e-6, a / evoxc.where(evoxc.abs(b) > 1e-6, b, 1.0), 1.0)

    def plog(a):
        return evoxc.where(evoxc.abs(a) > 1e-6, evoxc.log(evoxc.abs(evoxc.where(evoxc.abs(a) > 1e-6, a, 1.0))), 0.0)

    fns = [lambda x, y: x * y + evoxc.sin(x), lambda x, y: pdiv(x, y) - evoxc.tanh(y),
           lambda x, y: plog(x * 3.0) + y, lambda x, y: evoxc.cos(x - y) * 0.5]
    graphs = [evoxc.trace(f, TensorSpec((64,)), TensorSpec((64,))) for f in fns]
    m = evoxc.batch_functions(graphs, axes=None, switch_ops=True)
    check_graph(m, [rand(64), rand(64)], "gp merge")
