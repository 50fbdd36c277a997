"""Whole programs on the mlir backend, against the interpreter: transformed graphs (grad, value_and_grad, jvp, vjp,
hessian, vmap), batch_functions merges (flat, banded, switch classes), the GP population primitives (bench/
gp_population.py's trees and protected operators) and the programs of examples/*.py."""

import importlib.util
import pathlib
import random

import numpy as np
import pytest

from mlir_util import assert_same, check_graph

import evoxc
from evoxc import TensorSpec

ROOT = pathlib.Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(11)
B = evoxc.dim("B")


def rand(*shape):
    return evoxc.tensor(RNG.standard_normal(shape).astype(np.float32))


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- models and their transforms


def mlp_loss(w1, b1, w2, x, y):
    h = evoxc.tanh(evoxc.dot(x, w1) + b1)
    out = evoxc.dot(h, w2)
    return evoxc.mean((out - y) ** 2)


SPECS = (TensorSpec((3, 5)), TensorSpec((5,)), TensorSpec((5, 2)), TensorSpec((4, 3)), TensorSpec((4, 2)))


def mlp_inputs():
    return [rand(3, 5), rand(5), rand(5, 2), rand(4, 3), rand(4, 2)]


def test_elementwise_programs_and_their_derivatives():
    # Programs of add, multiply, tanh and exp only, and their transforms.
    def f(x, y):
        return evoxc.tanh(x * y + 1.0) * evoxc.exp(x * 0.5) + y

    g = evoxc.trace(f, TensorSpec((4, 3)), TensorSpec((3,)))
    check_graph(g, [rand(4, 3), rand(3)], "elementwise")
    s = evoxc.trace(lambda x, y: evoxc.sum(f(x, y)), TensorSpec((4, 3)), TensorSpec((3,)))
    check_graph(evoxc.grad(s, argnums=(0, 1)), [rand(4, 3), rand(3)], "grad")
    check_graph(evoxc.jvp(g), [(rand(4, 3), rand(3)), (rand(4, 3), rand(3))], "jvp")
    check_graph(evoxc.vjp(g), [(rand(4, 3), rand(3)), rand(4, 3)], "vjp")
    check_graph(evoxc.vmap(g, in_axes=(0, None)), [rand(5, 4, 3), rand(3)], "vmap")


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


def test_grad_of_a_scan_and_a_loop():
    # Reverse mode through scan and fori_loop (a scan of static length), on top of the control rules.
    def f(w, xs):
        c, ys = evoxc.scan(lambda c, x: (evoxc.tanh(c * w + x), c * c), evoxc.zeros_like(w), xs)
        c = evoxc.fori_loop(0, 3, lambda i, a: a * 0.5 + evoxc.exp(a * 0.1), c)
        return evoxc.sum(c) + evoxc.sum(ys)

    g = evoxc.trace(f, TensorSpec((3,)), TensorSpec((5, 3)))
    check_graph(g, [rand(3), rand(5, 3)], "scan program")
    check_graph(evoxc.grad(g, argnums=(0, 1)), [rand(3), rand(5, 3)], "grad of scan")
    check_graph(evoxc.vmap(g, in_axes=(0, None)), [rand(4, 3), rand(5, 3)], "vmap of scan")


# ---------------------------------------------------------------- batch_functions merges


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


def pdiv(a, b):
    return evoxc.where(evoxc.abs(b) > 1e-6, a / evoxc.where(evoxc.abs(b) > 1e-6, b, 1.0), 1.0)


def plog(a):
    return evoxc.where(evoxc.abs(a) > 1e-6, evoxc.log(evoxc.abs(evoxc.where(evoxc.abs(a) > 1e-6, a, 1.0))), 0.0)


def test_gp_primitives_merge():
    # The GP primitives with their protected division and log.
    fns = [lambda x, y: x * y + evoxc.sin(x), lambda x, y: pdiv(x, y) - evoxc.tanh(y),
           lambda x, y: plog(x * 3.0) + y, lambda x, y: evoxc.cos(x - y) * 0.5]
    graphs = [evoxc.trace(f, TensorSpec((64,)), TensorSpec((64,))) for f in fns]
    x, y = rand(64), rand(64)
    for kw in ({}, {"switch_ops": True}):
        m = evoxc.batch_functions(graphs, axes=None, **kw)
        check_graph(m, [x, y], f"gp merge {kw}")
    y_zeros = evoxc.tensor(np.where(np.arange(64) % 3 == 0, 0.0, RNG.standard_normal(64)).astype(np.float32))
    check_graph(evoxc.batch_functions(graphs, axes=None, switch_ops=True), [x, y_zeros], "protections taken")


@pytest.mark.parametrize("kw", [{}, {"switch_ops": True}, {"bands": "auto", "switch_ops": True}],
                         ids=["flat", "switch", "bands"])
def test_gp_population_fitness(kw):
    # bench/gp_population.py's population (random trees over add, sub, mul, protected div, sin, cos, tanh,
    # protected log) and its evoxc fitness functions (x0, x1, y) -> MSE, merged as the benchmark merges them.
    gp = load_module("bench/gp_population.py", "gp_population")
    trees = gp.population(3, 24, 9)
    cases = 32
    spec = TensorSpec((cases,))
    graphs = gp.evoxc_trace_all(evoxc, trees, spec)
    x0, x1 = RNG.uniform(-3.0, 3.0, (2, cases)).astype(np.float32)
    y = (x0 * x0 + np.sin(x1)).astype(np.float32)
    m = evoxc.batch_functions(graphs, axes=(None, None, None), **kw)
    check_graph(m, [x0, x1, y], f"gp population {kw}", tolerance=(1e-4, 1e-5))


def test_same_skeleton_population_switches():
    # Programs of one shape with their own operators at each node: switch_ops merges them into row_switch ops
    # (row i computed by program i's operator only), with few runs per table and with many.
    unary = [evoxc.sin, evoxc.cos, evoxc.tanh, evoxc.exp]
    binary = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, evoxc.maximum]

    def prog(seed):
        r = np.random.default_rng(seed)
        us, bs = r.integers(0, 4, 4), r.integers(0, 4, 4)

        def f(x0, x1, y):
            h = x0
            for k in range(4):
                h = unary[us[k]](binary[bs[k]](h, x1) * 0.25)
            return evoxc.mean(evoxc.square(h - y))
        return f

    x0, x1 = RNG.uniform(-3.0, 3.0, (2, 32)).astype(np.float32)
    y = (x0 * x0 + np.sin(x1)).astype(np.float32)
    spec = TensorSpec((32,))
    for count in (6, 40):
        graphs = [evoxc.trace(prog(i), spec, spec, spec) for i in range(count)]
        m = evoxc.batch_functions(graphs, axes=(None, None, None), switch_ops=True)
        assert "evoxc.row_switch" in m.to_string()
        check_graph(m, [x0, x1, y], f"same skeleton {count}", tolerance=(1e-4, 1e-5))


# ---------------------------------------------------------------- examples/*.py


def test_example_quickstart():
    def f(x, w):
        return evoxc.sum(evoxc.tanh(evoxc.dot(x, w)), axes=1)

    g = evoxc.trace(f, TensorSpec((4, 8), evoxc.float32), TensorSpec((8, 4), evoxc.float32))
    check_graph(g, [evoxc.ones((4, 8)), evoxc.ones((8, 4))], "quickstart ones")
    check_graph(g, [rand(4, 8), rand(8, 4)], "quickstart")


def test_example_batch_dict():
    def model(params, batch):
        h = evoxc.tanh(evoxc.dot(batch["x"], params["w1"]) + params["b1"])
        return {"logits": evoxc.dot(h, params["w2"]), "hidden": h}

    spec = ({"w1": TensorSpec((4, 8), evoxc.float32), "b1": TensorSpec((8,), evoxc.float32),
             "w2": TensorSpec((8, 3), evoxc.float32)},
            {"x": TensorSpec((B, 4), evoxc.float32)})
    g = evoxc.trace(model, *spec)
    # One executable for every batch size; its dict outputs compared key by key (check_graph flattens lists only).
    exe, ref = evoxc.load(evoxc.compile(evoxc.lower(g, "mlir"))), evoxc.build(g)
    params = {"w1": rand(4, 8), "b1": rand(8), "w2": rand(8, 3)}
    for n in (5, 2, 0):
        batch = {"x": rand(n, 4)}
        got, want = evoxc.run(exe, params, batch), evoxc.run(ref, params, batch)
        assert sorted(got) == sorted(want) == ["hidden", "logits"]
        for k in want:
            assert_same(got[k].numpy(), want[k].numpy(), f"batch_dict B={n} {k}")


def test_example_newton_sqrt():
    def sqrt_newton(x):
        def cond_fn(s):
            y, prev = s
            return evoxc.greater(evoxc.abs(evoxc.subtract(y, prev)), 1e-6)

        def body_fn(s):
            y, prev = s
            return 0.5 * (y + x / y), y

        y, _prev = evoxc.while_loop(cond_fn, body_fn, (x, evoxc.constant(evoxc.zeros((), evoxc.float32))))
        return y

    g = evoxc.trace(sqrt_newton, TensorSpec((), evoxc.float32))
    for v in (2.0, 0.25, 1e6):
        check_graph(g, [evoxc.tensor(np.float32(v))], f"newton {v}")


def test_vmap_of_control_flow():
    # vmap turns a batched predicate into loops and branches over the whole batch (with selects).
    def newton(x):
        def body(s):
            y, _ = s
            return 0.5 * (y + x / y), y

        return evoxc.while_loop(lambda s: evoxc.abs(s[0] - s[1]) > 1e-6, body, (x, evoxc.fill((), 0.0)))[0]

    g = evoxc.trace(newton, TensorSpec(()))
    check_graph(evoxc.vmap(g), [evoxc.tensor(np.array([2.0, 0.25, 9.0, 1e4], np.float32))], "vmap newton")
    h = evoxc.trace(lambda p, x: evoxc.cond(p, lambda a: evoxc.tanh(a), lambda a: a * 2.0, x),
                    TensorSpec((), evoxc.bool_), TensorSpec((3,)))
    check_graph(evoxc.vmap(h), [evoxc.tensor(np.array([True, False, True])), rand(3, 3)], "vmap cond")


def test_example_per_sample_grad():
    def loss(x, y, w):
        d = evoxc.subtract(evoxc.tanh(evoxc.dot(x, w)), y)
        return evoxc.mean(evoxc.multiply(d, d))

    psg = evoxc.vmap(evoxc.grad(loss, argnums=(2,)), in_axes=(0, 0, None), out_axes=(0,))
    graph = psg(TensorSpec((8, 4, 8), evoxc.float32), TensorSpec((8, 4, 4), evoxc.float32),
                TensorSpec((8, 4), evoxc.float32))
    check_graph(graph, [evoxc.ones((8, 4, 8)), evoxc.zeros((8, 4, 4)), evoxc.ones((8, 4))], "per_sample_grad ones")
    check_graph(graph, [rand(8, 4, 8), rand(8, 4, 4), rand(8, 4)], "per_sample_grad")


def test_example_deap_gp():
    # examples/deap_gp.py's population: DEAP trees over its primitive set (add, sub, mul, protectedDiv, sin, cos,
    # tanh, ephemeral constants) packed by evoxc.gp, each program as a graph (Population.to_graphs), merged by
    # batch_functions with the constants mapped.
    pytest.importorskip("deap")
    import evoxc.gp
    from deap import gp

    ex = load_module("examples/deap_gp.py", "deap_gp_example")
    random.seed(318)
    pset = ex.make_pset(2)
    trees = [gp.PrimitiveTree(gp.genHalfAndHalf(pset, min_=1, max_=3)) for _ in range(20)]
    cases = 32
    x0, x1 = RNG.uniform(-3.0, 3.0, (2, cases)).astype(np.float32)
    y = (np.square(x0) + np.sin(x1)).astype(np.float32)
    ev = evoxc.gp.evaluator(pset, np.stack([x0, x1], 1), y)
    pop = ev.population
    pop._add_deap(trees, ev._codes, ev._args)
    merged = evoxc.batch_functions(pop.to_graphs(cases), axes=([None, None], 0))
    check_graph(merged, [[x0, x1], pop.consts().numpy()], "deap_gp", tolerance=(1e-4, 1e-5))
