"""Every compiled backend against the interpreter, through one helper: how each backend runs a graph (mlir, xla and
iree through evoxc.build; stablehlo's export through jaxlib's parser and XLA's compiler, its real consumer), when a
backend cannot run here and why, and the comparison with compare_util's one tolerance table. test_conformance.py
generates the cases; the per-family tests of each backend check through the same `check_graph`."""

import numpy as np
import pytest

import evoxc
from compare_util import TOLERANCE, assert_same, random_input  # noqa: F401  (re-exported to the tests)

# The compiled backends, in the order the suite runs them.
BACKENDS = ["mlir", "stablehlo", "xla", "iree"]


def unavailable(backend):
    """Why `backend` cannot run here (a skip reason), or None."""
    if backend == "stablehlo":
        try:
            import jax  # noqa: F401,PLC0415
        except ImportError:
            return ("the StableHLO checks need jax (its MLIR parser and XLA's compiler): `make bench-venv` installs "
                    "it into .venv")
        return None
    if backend == "xla":
        ok, why = evoxc.xla.available()
        return None if ok else f"no PJRT plugin loads here: {why}"
    if backend == "iree":
        ok, why = evoxc.iree.available()
        return None if ok else why
    if backend not in evoxc.backends():
        return f"this build has no {backend} backend"
    return None


def require(backend):
    why = unavailable(backend)
    if why:
        pytest.skip(why)


def flat_outputs(out):
    """The leaves of evoxc.run's result, in flattening order (dict keys sorted)."""
    if isinstance(out, dict):
        return [leaf for k in sorted(out) for leaf in flat_outputs(out[k])]
    if isinstance(out, (list, tuple)):
        return [leaf for o in out for leaf in flat_outputs(o)]
    return [out]


def as_numpy(t):
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


def _tensors(inputs):
    return [evoxc.tensor(x) if isinstance(x, np.ndarray) else x for x in inputs]


def interpreter(graph, inputs):
    return [as_numpy(t) for t in flat_outputs(evoxc.run(evoxc.build(graph), *_tensors(inputs)))]


def run_on(backend, graph, inputs, opt_level=None, strict=False):
    """(the backend's program text, its outputs as numpy arrays). A compiled program must leave its inputs as they
    were (it never writes into the caller's tensors). strict (stablehlo): XLA without excess precision
    (stablehlo_util.xla_run)."""
    run_inputs = _tensors(inputs)
    if backend == "stablehlo":
        import stablehlo_util  # noqa: PLC0415  (jax's private modules, imported only when jax is here)
        text = evoxc.export_stablehlo(graph)
        err = stablehlo_util.verify_text(text)
        assert err is None, f"{err}\n{text}"
        leaves = evoxc.tree_flatten(tuple(run_inputs))[0]
        arrays = [as_numpy(x) for x in leaves]
        return text, stablehlo_util.xla_run(stablehlo_util.runnable(text, arrays), arrays, strict)
    lowered = evoxc.lower(graph, backend)
    exe = evoxc.load(evoxc.compile(lowered, opt_level=opt_level))
    leaves = evoxc.tree_flatten(tuple(run_inputs))[0]
    before = [as_numpy(x).copy() for x in leaves]
    got = [as_numpy(t).copy() for t in flat_outputs(evoxc.run(exe, *run_inputs))]
    for i, (x, b) in enumerate(zip(leaves, before)):
        np.testing.assert_array_equal(as_numpy(x), b, err_msg=f"the {backend} program changed its input {i}")
    return lowered.text, got


def check_graph(backend, graph, inputs, what, tolerance=None, opt_level=None):
    """The graph on `backend` and on the interpreter, every result compared (assert_same: integers exactly, floats
    within the dtype's tolerance); returns the backend's program text."""
    text, got = run_on(backend, graph, inputs, opt_level)
    want = interpreter(graph, inputs)
    assert len(got) == len(want), f"{what}: {len(got)} results, the interpreter {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, f"{what} on {backend}, result {i}", tolerance)
    return text


def check_fn(backend, fn, *arrays, what="", tolerance=None, opt_level=None):
    """Traces fn over the arrays' specs and check_graph's it."""
    specs = [evoxc.TensorSpec(a.shape, getattr(evoxc, "bool_" if a.dtype == np.bool_ else str(a.dtype)))
             for a in arrays]
    return check_graph(backend, evoxc.trace(fn, *specs), list(arrays), what or getattr(fn, "__name__", "fn"),
                       tolerance, opt_level)
