"""batch_functions from Python: merged rows equal separate runs bit for bit, the knobs, the report, the errors."""

import numpy as np
import pytest

import evoxc
from evoxc import TensorSpec

OPS2 = [evoxc.add, evoxc.subtract, evoxc.multiply, evoxc.maximum, evoxc.minimum]
OPS1 = [evoxc.sin, evoxc.cos, evoxc.tanh, evoxc.negative]


def random_tree(rng, depth, dtype):
    """A random expression over x (mapped) and y (shared) with constants, as a traceable function."""
    floats = np.dtype(dtype.name).kind == "f"

    def node(x, y, d):
        r = rng.random()
        if d >= depth or (d > 0 and r < 0.25):
            k = rng.integers(3)
            if k == 0:
                return x
            if k == 1:
                return y
            return evoxc.fill((), float(rng.integers(-9, 10)) / 4 if floats else int(rng.integers(-9, 10)), dtype)
        if floats and rng.random() < 0.3:
            return OPS1[rng.integers(len(OPS1))](node(x, y, d + 1))
        return OPS2[rng.integers(len(OPS2))](node(x, y, d + 1), node(x, y, d + 1))

    plan = int(rng.integers(1 << 30))

    def f(x, y):
        local = np.random.default_rng(plan)
        nonlocal rng
        saved, rng = rng, local
        try:
            out = node(x, y, 0)
        finally:
            rng = saved
        return out if out.ndim == x.ndim else evoxc.broadcast_to(out, x.shape)

    return f


def run_separate(graphs, xs, y):
    return [evoxc.run(evoxc.build(g), xs[i], y).numpy() for i, g in enumerate(graphs)]


@pytest.mark.parametrize("dtype", [evoxc.float32, evoxc.float64, evoxc.int32])
@pytest.mark.parametrize("depth", [1, 4, 8, 12])
def test_random_populations_bit_exact_for_every_knob(dtype, depth):
    rng = np.random.default_rng(depth * 100 + dtype.itemsize)
    n = 10
    fns = [random_tree(rng, depth, dtype) for _ in range(n)]
    spec = TensorSpec((6,), dtype)
    graphs = [evoxc.trace(f, spec, spec) for f in fns]
    npdt = np.dtype(dtype.name)
    xs = (rng.standard_normal((n, 6)) * 3).astype(npdt)
    y = (rng.standard_normal(6) * 3).astype(npdt)
    sep = run_separate(graphs, xs, y)
    for switch_ops in (None, True):
        for bands in (None, 3, "auto"):
            for alignment in ("variant", "occurrence", "auto") if switch_ops else ("variant",):
                m = evoxc.batch_functions(graphs, axes=(0, None), switch_ops=switch_ops, bands=bands,
                                          alignment=alignment)
                out = evoxc.run(evoxc.build(m), xs, y).numpy()
                for i in range(n):
                    assert out[i].tobytes() == sep[i].tobytes(), (switch_ops, bands, alignment, i)


def test_functions_form_and_report():
    fns = [lambda x, c, k=k: evoxc.tanh(x * c + k) for k in range(4)]
    merged_fn = evoxc.batch_functions(fns, axes=(0, None))
    g = merged_fn(TensorSpec((4, 8)), TensorSpec(()))
    assert isinstance(g, evoxc.Graph)
    rep = evoxc.batch_report(g)
    assert rep["programs"] == 4 and rep["muxes"] == 0 and rep["emitted_ops"] < rep["program_ops"]
    x = np.arange(32, dtype=np.float32).reshape(4, 8) / 10
    out = evoxc.run(evoxc.build(g), x, np.float32(0.5)).numpy()
    for k in range(4):
        assert out[k].tobytes() == np.asarray(evoxc.evaluate(fns[k], x[k], np.float32(0.5)).numpy()).tobytes()
    with pytest.raises(evoxc.ValidationError, match="function axis"):
        merged_fn(TensorSpec((3, 8)), TensorSpec(()))


def test_switch_classes_compute_each_row_with_its_variant():
    def chain(i):
        def f(x, c):
            y = x
            for k in range(10):
                y = OPS2[(i * 7 + k * 3) % 4](y, c)
                y = evoxc.tanh(y) if (i + k) % 2 else evoxc.sin(y)
            return y
        return f

    graphs = [evoxc.trace(chain(i), TensorSpec((64,)), TensorSpec((1,))) for i in range(32)]
    flat = evoxc.batch_functions(graphs, axes=(0, None))
    sw = evoxc.batch_functions(graphs, axes=(0, None), switch_ops=True)
    r = sw.batch_report
    assert r["emitted_ops"] <= 25 and r["switched"], r["text"]
    assert r["cost_estimate"]["work"] <= 1.1 * r["separate_cost"]["work"]  # no wasted work
    assert flat.batch_report["emitted_ops"] > r["emitted_ops"]
    for rec in r["switched"]:
        assert sorted(sum(rec["rows"], [])) == list(range(32)) or len(sum(rec["rows"], [])) <= 32
    x = np.random.default_rng(1).standard_normal((32, 64)).astype(np.float32)
    c = np.array([0.7], np.float32)
    sep = np.stack(run_separate(graphs, x, c))
    for m in (flat, sw):
        assert evoxc.run(evoxc.build(m), x, c).numpy().tobytes() == sep.tobytes()


def test_errors():
    a = evoxc.trace(lambda x: evoxc.sin(x), TensorSpec((3,)))
    b = evoxc.trace(lambda x: evoxc.sin(x), TensorSpec((4,)))
    with pytest.raises(evoxc.TransformError, match="program 1"):
        evoxc.batch_functions([a, b])
    with pytest.raises(evoxc.TransformError, match="at least one"):
        evoxc.batch_functions([])
    with pytest.raises(evoxc.TransformError, match="mix"):
        evoxc.batch_functions([a, lambda x: x])
    with pytest.raises(evoxc.ValidationError, match="'auto'"):
        evoxc.batch_functions([a, a], bands="fast")
    with pytest.raises(evoxc.ValidationError, match="alignment"):
        evoxc.batch_functions([a, a], alignment="positional")
    with pytest.raises(evoxc.ValidationError, match="not made by batch_functions"):
        evoxc.batch_report(a)


def test_alignment_variant_collapses_reordered_siblings():
    def prog(i):
        def f(x, c):
            if i % 2:
                b = x - c
                a = x + c
            else:
                a = x + c
                b = x - c
            return a * b
        return evoxc.trace(f, TensorSpec((5,)), TensorSpec(()))

    graphs = [prog(i) for i in range(6)]
    x = np.random.default_rng(3).standard_normal((6, 5)).astype(np.float32)
    c = np.float32(0.25)
    sep = np.stack(run_separate(graphs, x, c))
    reports = {}
    for align in ("variant", "occurrence", "auto"):
        m = evoxc.batch_functions(graphs, axes=(0, None), switch_ops=True, alignment=align)
        assert evoxc.run(evoxc.build(m), x, c).numpy().tobytes() == sep.tobytes()
        reports[align] = m.batch_report
    assert reports["variant"]["alignment"] == "variant" and reports["variant"]["switched"] == []
    assert len(reports["occurrence"]["switched"]) == 2
    assert reports["auto"]["alignment"] == "variant"
    assert reports["variant"]["emitted_ops"] < reports["occurrence"]["emitted_ops"]


def test_cost_model_per_backend():
    cost = evoxc.capabilities("interp")["batch_cost"]
    assert cost["dispatch_seconds"] > 0 and cost["element_seconds"] > 0
    # A model where dispatch is everything merges every group it can; the rows stay exact.
    rng = np.random.default_rng(5)
    graphs = [evoxc.trace(random_tree(rng, 5, evoxc.float32), TensorSpec((6,)), TensorSpec((6,))) for _ in range(8)]
    xs = rng.standard_normal((8, 6)).astype(np.float32)
    y = rng.standard_normal(6).astype(np.float32)
    sep = run_separate(graphs, xs, y)
    for cm in (None, "interp", {"dispatch_seconds": 1.0, "element_seconds": 0.0}):
        m = evoxc.batch_functions(graphs, axes=(0, None), bands="auto", cost_model=cm)
        out = evoxc.run(evoxc.build(m), xs, y).numpy()
        assert all(out[i].tobytes() == sep[i].tobytes() for i in range(8))
    with pytest.raises(evoxc.ValidationError, match="cost_model"):
        evoxc.batch_functions(graphs, cost_model={"dispatch": 1})
    with pytest.raises(evoxc.BackendError):
        evoxc.batch_functions(graphs, cost_model="no-such-backend")
