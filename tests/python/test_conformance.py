"""The compiled backends' conformance, one suite for all of them (conformance.BACKENDS: mlir, the stablehlo export on
XLA, xla, iree), against the interpreter with one tolerance table (compare_util.TOLERANCE): every op of the catalogue
on every dtype it accepts (an op a backend defers is a BackendError giving its reason), then whole programs —
transformed graphs (grad, value_and_grad, jvp, vjp, hessian, vmap), batch_functions merges (flat, banded, switch
classes), the GP population (bench/gp_population.py's trees and protected operators) and the programs of
examples/*.py. A backend that cannot run here skips with its reason."""

import importlib.util
import pathlib
import random
import zlib

import numpy as np
import pytest

import evoxc
from compare_util import DTYPES
from conformance import BACKENDS, check_graph, random_input, require
from evoxc import TensorSpec

ROOT = pathlib.Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(11)
B = evoxc.dim("B")


@pytest.fixture(params=BACKENDS)
def backend(request):
    require(request.param)
    return request.param


def size(backend, n):
    """vmap's batch extent for `backend`: a fresh symbol where it compiles symbolic shapes, else n (xla)."""
    return n if backend == "xla" else None


# Programs a backend's own compiler refuses (a BackendError at compile, measured); each must still be refused.
PROGRAM_GAPS = {
    ("iree", "per-sample grad"): "IREE does not compile these reshapes of vmap's symbolic batch B",
    ("iree", "vmap newton"): "IREE does not compile these reshapes of vmap's symbolic batch B",
    ("iree", "vmap of scan"): "IREE does not legalize stablehlo.dynamic_reshape (vmap's symbolic batch in a scan)",
    ("iree", "deap_gp"): "the merged population indexes its constants with gather (docs/backends.md)",
}


def check(backend, graph, inputs, what, tolerance=None):
    """check_graph, or for a known gap of the backend the BackendError it must still raise."""
    gap = PROGRAM_GAPS.get((backend, what))
    if gap:
        with pytest.raises(evoxc.BackendError, match=f"{backend}: "):
            evoxc.compile(evoxc.lower(graph, backend))
        pytest.skip(f"a known gap of {backend}: {gap}")
    return check_graph(backend, graph, inputs, what, tolerance)


def rand(*shape):
    return evoxc.tensor(RNG.standard_normal(shape).astype(np.float32))


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- the catalogue

SPARSE_OPS = {name for (name, cat, cls, regions) in evoxc._core._op_catalogue() if cat == "sparse"}
CASES = [(name, dt) for (name, cat, cls, regions) in evoxc._core._op_catalogue() if regions == 0 and cat != "extension"
         for dt in DTYPES[cls]]

# What a backend's own compiler refuses (a BackendError at compile naming the op), measured with these cases; each
# must still be refused, so a compiler that learns it shows up here. (IREE 3.13's compiler on our export.)
_UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
KNOWN_GAPS = {
    **{("iree", "cbrt", "float64"): "IREE does not legalize math.cbrt on f64"},
    **{("iree", op, dt): "IREE's compiler fails on unsigned element types in reduce_window and reverse (an "
       "unresolved ui8 -> i8 materialization)" for op in ("cumsum", "cumprod", "cummax", "cummin", "flip")
       for dt in _UNSIGNED},
    **{("iree", op, "bool"): "IREE's compiler fails on a bool reduce_window (arith.ori over mismatched types)"
       for op in ("cummax", "cummin")},
}


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_op_matches_interpreter(backend, op, dtype):
    g = evoxc._core._op_sample_graph(op, getattr(evoxc, "bool_" if dtype == "bool" else dtype))
    try:
        evoxc.lower(g, backend)
    except evoxc.BackendError as e:
        # A deliberate deferral gives its reason in parentheses after the table's words; a missing rule is a failure.
        # xla compiles static shapes only.
        assert "rule or decomposition in this build (" in str(e) or (backend == "xla" and "symbolic" in str(e)), str(e)
        pytest.skip(f"deferred: {e}")
    gap = KNOWN_GAPS.get((backend, op, dtype))
    if gap:
        with pytest.raises(evoxc.BackendError, match=f"{backend}: compile: "):
            evoxc.compile(evoxc.lower(g, backend))
        pytest.skip(f"a known gap of {backend}'s compiler: {gap}")
    # A seed from the case's name, not hash(): the same inputs in every process.
    rng = np.random.default_rng(zlib.crc32(f"{op}-{dtype}".encode()))
    inputs = [evoxc.tensor(random_input(s.shape, s.dtype.name, rng)) for s in g.input_specs]
    if op in SPARSE_OPS:
        # A sparse structure the interpreter accepts (ones, as the C++ catalogue tests take): the compiled backends
        # run the decompositions, which do not check structures (docs/sparse.md).
        inputs = [evoxc.tensor(np.ones(s.shape, s.dtype.name)) if s.dtype.name.startswith(("int", "uint")) else x
                  for s, x in zip(g.input_specs, inputs)]
    try:
        evoxc.run(evoxc.build(g), *inputs)
    except evoxc.ValidationError as e:
        # Random data the op refuses (postfix_eval's codes): a compiled program refuses it with the same error.
        if backend == "stablehlo":
            pytest.skip("the interpreter refuses the sample's random data, and the export has no run-time checks")
        with pytest.raises(evoxc.ValidationError) as got:
            evoxc.run(evoxc.build(g, backend=backend), *inputs)
        assert str(got.value) == str(e)
        return
    check_graph(backend, g, inputs, f"{op} {dtype}")


# ---------------------------------------------------------------- models and their transforms


def mlp_loss(w1, b1, w2, x, y):
    h = evoxc.tanh(evoxc.dot(x, w1) + b1)
    out = evoxc.dot(h, w2)
    return evoxc.mean((out - y) ** 2)


SPECS = (TensorSpec((3, 5)), TensorSpec((5,)), TensorSpec((5, 2)), TensorSpec((4, 3)), TensorSpec((4, 2)))


def mlp_inputs():
    return [rand(3, 5), rand(5), rand(5, 2), rand(4, 3), rand(4, 2)]


def test_elementwise_programs_and_their_derivatives(backend):
    # Programs of add, multiply, tanh and exp only, and their transforms.
    def f(x, y):
        return evoxc.tanh(x * y + 1.0) * evoxc.exp(x * 0.5) + y

    g = evoxc.trace(f, TensorSpec((4, 3)), TensorSpec((3,)))
    check(backend, g, [rand(4, 3), rand(3)], "elementwise")
    s = evoxc.trace(lambda x, y: evoxc.sum(f(x, y)), TensorSpec((4, 3)), TensorSpec((3,)))
    check(backend, evoxc.grad(s, argnums=(0, 1)), [rand(4, 3), rand(3)], "grad")
    check(backend, evoxc.jvp(g), [(rand(4, 3), rand(3)), (rand(4, 3), rand(3))], "jvp")
    check(backend, evoxc.vjp(g), [(rand(4, 3), rand(3)), rand(4, 3)], "vjp")
    check(backend, evoxc.vmap(g, in_axes=(0, None), axis_size=size(backend, 5)), [rand(5, 4, 3), rand(3)], "vmap")


def test_quickstart_and_mlp(backend):
    g = evoxc.trace(lambda x, w: evoxc.sum(evoxc.tanh(evoxc.dot(x, w)), axes=1), TensorSpec((4, 8)), TensorSpec((8, 4)))
    check(backend, g, [rand(4, 8), rand(8, 4)], "quickstart")
    check(backend, evoxc.trace(mlp_loss, *SPECS), mlp_inputs(), "mlp loss")


def test_grad_and_value_and_grad(backend):
    g = evoxc.trace(mlp_loss, *SPECS)
    check(backend, evoxc.grad(g, argnums=(0, 1, 2)), mlp_inputs(), "grad")
    check(backend, evoxc.value_and_grad(g, argnums=(0, 2)), mlp_inputs(), "value_and_grad")


def test_jvp_vjp_hessian(backend):
    f = evoxc.trace(lambda x: evoxc.sum(evoxc.sin(x) * x ** 2), TensorSpec((3,)))
    check(backend, evoxc.jvp(f), [(rand(3),), (rand(3),)], "jvp")
    check(backend, evoxc.vjp(f), [(rand(3),), evoxc.tensor(np.float32(1.5))], "vjp")
    check(backend, evoxc.hessian(f), [rand(3)], "hessian")


def test_per_sample_grad_vmap(backend):
    g = evoxc.trace(lambda w, x, y: evoxc.sum((evoxc.dot(x, w) - y) ** 2), TensorSpec((3,)), TensorSpec((3,)),
                    TensorSpec(()))
    psg = evoxc.vmap(evoxc.grad(g, argnums=(0,)), in_axes=(None, 0, 0), axis_size=size(backend, 6))
    check(backend, psg, [rand(3), rand(6, 3), rand(6)], "per-sample grad")


def test_grad_of_a_scan_and_a_loop(backend):
    # Reverse mode through scan and fori_loop (a scan of static length), on top of the control rules.
    def f(w, xs):
        c, ys = evoxc.scan(lambda c, x: (evoxc.tanh(c * w + x), c * c), evoxc.zeros_like(w), xs)
        c = evoxc.fori_loop(0, 3, lambda i, a: a * 0.5 + evoxc.exp(a * 0.1), c)
        return evoxc.sum(c) + evoxc.sum(ys)

    g = evoxc.trace(f, TensorSpec((3,)), TensorSpec((5, 3)))
    check(backend, g, [rand(3), rand(5, 3)], "scan program")
    check(backend, evoxc.grad(g, argnums=(0, 1)), [rand(3), rand(5, 3)], "grad of scan")
    check(backend, evoxc.vmap(g, in_axes=(0, None), axis_size=size(backend, 4)), [rand(4, 3), rand(5, 3)], "vmap of scan")


# ---------------------------------------------------------------- batch_functions merges


def test_batch_functions_merges(backend):
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
        check(backend, m, [xs, c], f"batch_functions {kw}")


def pdiv(a, b):
    return evoxc.where(evoxc.abs(b) > 1e-6, a / evoxc.where(evoxc.abs(b) > 1e-6, b, 1.0), 1.0)


def plog(a):
    return evoxc.where(evoxc.abs(a) > 1e-6, evoxc.log(evoxc.abs(evoxc.where(evoxc.abs(a) > 1e-6, a, 1.0))), 0.0)


def test_gp_primitives_merge(backend):
    # The GP primitives with their protected division and log.
    fns = [lambda x, y: x * y + evoxc.sin(x), lambda x, y: pdiv(x, y) - evoxc.tanh(y),
           lambda x, y: plog(x * 3.0) + y, lambda x, y: evoxc.cos(x - y) * 0.5]
    graphs = [evoxc.trace(f, TensorSpec((64,)), TensorSpec((64,))) for f in fns]
    x, y = rand(64), rand(64)
    for kw in ({}, {"switch_ops": True}):
        m = evoxc.batch_functions(graphs, axes=None, **kw)
        check(backend, m, [x, y], f"gp merge {kw}")
    y_zeros = evoxc.tensor(np.where(np.arange(64) % 3 == 0, 0.0, RNG.standard_normal(64)).astype(np.float32))
    check(backend, evoxc.batch_functions(graphs, axes=None, switch_ops=True), [x, y_zeros], "protections taken")


@pytest.mark.parametrize("kw", [{}, {"switch_ops": True}, {"bands": "auto", "switch_ops": True}],
                         ids=["flat", "switch", "bands"])
def test_gp_population_fitness(backend, kw):
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
    check(backend, m, [x0, x1, y], f"gp population {kw}", tolerance=(1e-4, 1e-5))


def test_same_skeleton_population_switches(backend):
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
        check(backend, m, [x0, x1, y], f"same skeleton {count}", tolerance=(1e-4, 1e-5))


# ---------------------------------------------------------------- examples/*.py


def test_example_quickstart(backend):
    def f(x, w):
        return evoxc.sum(evoxc.tanh(evoxc.dot(x, w)), axes=1)

    g = evoxc.trace(f, TensorSpec((4, 8), evoxc.float32), TensorSpec((8, 4), evoxc.float32))
    check(backend, g, [evoxc.ones((4, 8)), evoxc.ones((8, 4))], "quickstart ones")
    check(backend, g, [rand(4, 8), rand(8, 4)], "quickstart")


def test_example_batch_dict(backend):
    if backend == "xla":
        pytest.skip("xla compiles static shapes only; this example's batch extent is symbolic")

    def model(params, batch):
        h = evoxc.tanh(evoxc.dot(batch["x"], params["w1"]) + params["b1"])
        return {"logits": evoxc.dot(h, params["w2"]), "hidden": h}

    spec = ({"w1": TensorSpec((4, 8), evoxc.float32), "b1": TensorSpec((8,), evoxc.float32),
             "w2": TensorSpec((8, 3), evoxc.float32)},
            {"x": TensorSpec((B, 4), evoxc.float32)})
    g = evoxc.trace(model, *spec)
    params = {"w1": rand(4, 8), "b1": rand(8), "w2": rand(8, 3)}
    for n in (5, 2, 0):
        check(backend, g, [params, {"x": rand(n, 4)}], f"batch_dict B={n}")


def test_example_newton_sqrt(backend):
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
        check(backend, g, [evoxc.tensor(np.float32(v))], f"newton {v}")


def test_vmap_of_control_flow(backend):
    # vmap turns a batched predicate into loops and branches over the whole batch (with selects).
    def newton(x):
        def body(s):
            y, _ = s
            return 0.5 * (y + x / y), y

        return evoxc.while_loop(lambda s: evoxc.abs(s[0] - s[1]) > 1e-6, body, (x, evoxc.fill((), 0.0)))[0]

    g = evoxc.trace(newton, TensorSpec(()))
    check(backend, evoxc.vmap(g, axis_size=size(backend, 4)), [evoxc.tensor(np.array([2.0, 0.25, 9.0, 1e4], np.float32))], "vmap newton")
    h = evoxc.trace(lambda p, x: evoxc.cond(p, lambda a: evoxc.tanh(a), lambda a: a * 2.0, x),
                    TensorSpec((), evoxc.bool_), TensorSpec((3,)))
    check(backend, evoxc.vmap(h, axis_size=size(backend, 3)), [evoxc.tensor(np.array([True, False, True])), rand(3, 3)], "vmap cond")


def test_example_per_sample_grad(backend):
    def loss(x, y, w):
        d = evoxc.subtract(evoxc.tanh(evoxc.dot(x, w)), y)
        return evoxc.mean(evoxc.multiply(d, d))

    psg = evoxc.vmap(evoxc.grad(loss, argnums=(2,)), in_axes=(0, 0, None), out_axes=(0,))
    graph = psg(TensorSpec((8, 4, 8), evoxc.float32), TensorSpec((8, 4, 4), evoxc.float32),
                TensorSpec((8, 4), evoxc.float32))
    check(backend, graph, [evoxc.ones((8, 4, 8)), evoxc.zeros((8, 4, 4)), evoxc.ones((8, 4))], "per_sample_grad ones")
    check(backend, graph, [rand(8, 4, 8), rand(8, 4, 4), rand(8, 4)], "per_sample_grad")


def test_example_deap_gp(backend):
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
    check(backend, merged, [[x0, x1], pop.consts().numpy()], "deap_gp", tolerance=(1e-4, 1e-5))


def test_example_random_walk(backend):
    # examples/random_walk.py's programs: vmap over split keys (pi) and bernoulli walks, the same bits everywhere.
    ex = load_module("examples/random_walk.py", "random_walk_example")
    keys = evoxc.evaluate(lambda k: evoxc.random.split(k, 4), evoxc.random.key(2026))
    g = evoxc.vmap(evoxc.trace(ex.pi_batch, TensorSpec((), evoxc.int64)), axis_size=4)
    check(backend, g, [keys], "random_walk pi", tolerance=(0.0, 0.0))
    w = evoxc.trace(ex.walks, TensorSpec((2,), evoxc.uint32))
    check(backend, w, [evoxc.random.key(7, "threefry2x32")], "random_walk walks", tolerance=(1e-6, 1e-6))
