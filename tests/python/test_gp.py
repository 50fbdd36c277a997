"""evoxc.gp: populations held as data, the evaluator, DEAP populations in one line; and the seed's spellings
(graph.batch_report as an object with attributes, evoxc.backends.stablehlo.export)."""

import functools
import operator
import random

import numpy as np
import pytest

import evoxc
import evoxc.gp


def np_pdiv(a, b):
    return np.where(np.abs(b) > 1e-6, np.divide(a, b), np.float32(1))


def test_population_arrays_and_values():
    s = evoxc.gp.PrimitiveSet.standard()
    pop = evoxc.gp.Population(s, 2)
    pop.add_prefix_text("sub x0 (mul x1 2.5)")
    pop.add_prefix_text("pdiv x0 0")
    assert len(pop) == 2 and pop.max_length == 5 and pop.max_constants == 1
    codes = pop.codes().numpy()
    assert codes.shape == (2, 5) and codes.dtype == np.int32
    assert list(codes[0]) == [1, 1, 2, s.code("mul"), s.code("sub")]
    assert list(codes[1]) == [1, 2, s.code("pdiv"), 0, 0]
    x = np.array([[1, 2, 3], [4, 5, -6]], np.float32)
    ev = evoxc.gp.Evaluator(s, 2, "none")
    y = ev.evaluate(pop, evoxc.tensor(x)).numpy()
    np.testing.assert_array_equal(y[0], x[0] - x[1] * np.float32(2.5))
    np.testing.assert_array_equal(y[1], np.ones(3, np.float32))
    pop.set_constants(0, [0.5])
    y2 = ev.evaluate(pop, evoxc.tensor(x)).numpy()
    np.testing.assert_array_equal(y2[0], x[0] - x[1] * np.float32(0.5))
    with pytest.raises(evoxc.ValidationError, match="has 1 constants, got 2"):
        pop.set_constants(0, [1.0, 2.0])


def test_to_graphs_merge_to_the_same_values():
    s = evoxc.gp.PrimitiveSet.standard()
    pop = evoxc.gp.Population(s, 2)
    for t in ("aq x0 (cos x1)", "plog (sub x0 0.25)", "tanh (add (sqrtabs x1) (exp x0))", "0.5"):
        pop.add_prefix_text(t)
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, (2, 33)).astype(np.float32)
    y = evoxc.gp.Evaluator(s, 2, "none").evaluate(pop, evoxc.tensor(x)).numpy()
    graphs = pop.to_graphs(33)
    consts = pop.consts().numpy()
    for i, g in enumerate(graphs):
        out = evoxc.run(evoxc.build(g), [x[0], x[1]], consts[i]).numpy()
        assert out.tobytes() == y[i].tobytes()
    merged = evoxc.batch_functions(graphs, axes=([None, None], 0))
    out = evoxc.run(evoxc.build(merged), [x[0], x[1]], consts).numpy()
    assert out.tobytes() == y.tobytes()
    # The seed's spelling: the report is an object with attributes that is also a dict.
    rep = merged.batch_report
    assert rep.emitted_ops == rep["emitted_ops"] and isinstance(rep.value_classes, int | list | dict)
    assert isinstance(dict(rep), dict) and rep.to_dict()["program_ops"] == rep.program_ops
    assert evoxc.batch_report(merged) is rep
    for sw in rep.switched:
        assert isinstance(sw, evoxc.SwitchRecord)
    with pytest.raises(AttributeError, match="has no field 'nope'"):
        rep.nope


def test_backends_namespace():
    assert "interp" in evoxc.backends.available()
    assert evoxc.backends() == evoxc.backends.available()
    g = evoxc.trace(lambda a: evoxc.sin(a) + 1.0, evoxc.TensorSpec((3,), evoxc.float32))
    text = evoxc.backends.stablehlo.export(g)
    assert "stablehlo.sine" in text and text == evoxc.lower(g, "stablehlo").text
    assert not hasattr(evoxc.backends, "no_such_backend")


def test_bad_codes_and_primitives_are_typed_errors():
    s = evoxc.gp.PrimitiveSet.standard()
    exe = evoxc.build(evoxc.gp.Evaluator(s, 1, "none").graph)
    bad = np.array([[1, 1]], np.int32)
    with pytest.raises(evoxc.ValidationError, match="program 0, position 2: the program leaves 2 values"):
        evoxc.run(exe, [bad, np.zeros((1, 2), np.int32), np.zeros((1, 1), np.float32), np.ones((1, 4), np.float32)])
    with pytest.raises(evoxc.DTypeError, match="unknown op 'nope'"):
        s.add("f", "$0 nope")
    pop = evoxc.gp.Population(s, 1)
    with pytest.raises(evoxc.ValidationError, match="token 'x3'|variable 3 is outside"):
        pop.add_prefix_text("add x0 x3")


@pytest.mark.skipif("mlir" not in evoxc.backends(), reason="this build has no mlir backend (EVOXC_MLIR=OFF)")
def test_the_evaluator_on_mlir_equals_the_interpreter():
    # postfix_eval compiled: the same engine, so predictions are bit for bit the interpreter's; one executable for
    # populations of any size.
    s = evoxc.gp.PrimitiveSet.standard()
    rng = np.random.default_rng(4)
    x = evoxc.tensor(rng.uniform(-2, 2, (2, 700)).astype(np.float32))
    on = {b: evoxc.gp.Evaluator(s, 2, "none", "float32", b) for b in ("interp", "mlir")}
    for n in (3, 50):
        pop = evoxc.gp.Population(s, 2)
        for i in range(n):
            pop.add_prefix_text(["aq x0 (cos x1)", "plog (sub x0 0.25)", "tanh (add (sqrtabs x1) (exp x0))",
                                 "pdiv x1 (mul x0 0.3)"][i % 4])
        a, b = (on[k].evaluate(pop, x).numpy() for k in ("interp", "mlir"))
        assert a.tobytes() == b.tobytes()


deap = pytest.importorskip("deap")


def make_pset(with_unknown=False):
    from deap import gp
    pset = gp.PrimitiveSet("MAIN", 2)
    pset.addPrimitive(np.add, 2, name="add")
    pset.addPrimitive(np.subtract, 2, name="sub")
    pset.addPrimitive(np.multiply, 2, name="mul")
    pset.addPrimitive(np_pdiv, 2, name="protectedDiv")
    pset.addPrimitive(np.sin, 1, name="sin")
    pset.addPrimitive(np.tanh, 1, name="tanh")
    if with_unknown:
        pset.addPrimitive(lambda a, b: np.sin(a + b), 2, name="sinsum")
    pset.addEphemeralConstant("c", functools.partial(random.uniform, -1, 1))
    pset.addTerminal(0.5)
    return pset


def deap_population(pset, n, seed):
    from deap import gp
    random.seed(seed)
    return [gp.PrimitiveTree(gp.genHalfAndHalf(pset, 1, 4)) for _ in range(n)]


def test_deap_evaluator_matches_deap():
    from deap import gp
    pset = make_pset()
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, (300, 2)).astype(np.float32)
    y = (X[:, 0] ** 2 + np.sin(X[:, 1])).astype(np.float32)
    evaluate = evoxc.gp.evaluator(pset, X, y)
    trees = deap_population(pset, 200, 3)
    fits = evaluate(trees)
    assert len(fits) == 200 and all(isinstance(f, tuple) and len(f) == 1 for f in fits)
    rel = []
    with np.errstate(all="ignore"):
        for tree, (f,) in zip(trees, fits):
            pred = np.broadcast_to(np.asarray(gp.compile(tree, pset)(X[:, 0], X[:, 1]), np.float32), y.shape)
            ref = float(np.mean(np.square(pred - y)))
            same = f == ref or (np.isnan(f) and np.isnan(ref))
            rel.append(0.0 if same else abs(f - ref) / max(abs(ref), 1e-30))
    # numpy's and SLEEF's sin/tanh differ by an ULP or so, which ill-conditioned trees (a protected division by a
    # value near zero) amplify: every tree within 1e-3, nearly all within 1e-5.
    rel = np.array(rel)
    assert rel.max() < 1e-3, str(trees[int(rel.argmax())])
    assert (rel < 1e-5).mean() >= 0.98
    # The packed population turns into graphs whose values are the evaluator's predictions.
    pred = evaluate.predictions(trees[:5])
    assert pred.shape == (5, 300)


def test_deap_unknown_primitive_and_user_mapping():
    pset = make_pset(with_unknown=True)
    X = np.ones((4, 2), np.float32)
    with pytest.raises(evoxc.DTypeError, match="unknown DEAP primitive 'sinsum'"):
        evoxc.gp.evaluator(pset, X, np.zeros(4, np.float32))
    evaluate = evoxc.gp.evaluator(pset, X, np.zeros(4, np.float32), primitives={"sinsum": "$0 $1 add sin"})
    from deap import gp
    tree = gp.PrimitiveTree.from_string("sinsum(ARG0, ARG1)", pset)
    (f,) = evaluate([tree])[0]
    assert f == pytest.approx(np.sin(np.float32(2)) ** 2, rel=1e-5)
    with pytest.raises(evoxc.ValidationError, match="X has 3 columns"):
        evoxc.gp.evaluator(pset, np.ones((4, 3)), np.zeros(4))


def test_deap_renamed_arguments_and_terminals():
    from deap import gp
    pset = gp.PrimitiveSet("MAIN", 2)
    pset.addPrimitive(np.subtract, 2, name="sub")
    pset.addTerminal(3.0)
    pset.renameArguments(ARG0="a", ARG1="b")  # renames the terminals' values, not their names
    X = np.array([[1, 10], [2, 20], [3, 30]], np.float32)
    ev = evoxc.gp.evaluator(pset, X, np.zeros(3, np.float32), loss="none")
    tree = gp.PrimitiveTree.from_string("sub(b, sub(a, 3.0))", pset)
    np.testing.assert_array_equal(ev.predictions([tree])[0], X[:, 1] - (X[:, 0] - 3))


def test_jacobian_graph_against_finite_differences():
    s = evoxc.gp.PrimitiveSet.standard()
    pop = evoxc.gp.Population(s, 1)
    pop.add_prefix_text("mul 2.0 (sin (mul x0 0.5))")
    x = np.linspace(-1, 1, 5)
    k = np.array([[2.0, 0.5]])
    pred, jac = (t.numpy() for t in evoxc.run(evoxc.build(pop.jacobian_graph([0], 5, "float64")), [x], k))
    np.testing.assert_allclose(pred[0], 2.0 * np.sin(0.5 * x), rtol=1e-12)
    np.testing.assert_allclose(jac[0, :, 0], np.sin(0.5 * x), rtol=1e-12)          # d/d(2.0)
    np.testing.assert_allclose(jac[0, :, 1], 2.0 * x * np.cos(0.5 * x), rtol=1e-12)  # d/d(0.5)
