"""The mlir backend checked against the interpreter: build a graph on both, run the same inputs, compare."""

import numpy as np
import pytest

import evoxc
from compare_util import TOLERANCE, assert_same, random_input  # noqa: F401  (re-exported to the tests)

if "mlir" not in evoxc.backends():
    pytest.skip("this build has no mlir backend (configured with -DEVOXC_MLIR=OFF)", allow_module_level=True)

def flat_outputs(out):
    if isinstance(out, (list, tuple)):
        return [leaf for o in out for leaf in flat_outputs(o)]
    return [out]


def as_numpy(t):
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


def run_both(graph, inputs, opt_level=None):
    """(lowered text, the mlir backend's outputs, the interpreter's outputs) as numpy arrays."""
    lowered = evoxc.lower(graph, "mlir")
    exe = evoxc.load(evoxc.compile(lowered, opt_level=opt_level))
    run_inputs = [evoxc.tensor(x) if isinstance(x, np.ndarray) else x for x in inputs]
    leaves = evoxc.tree_flatten(tuple(run_inputs))[0]
    before = [as_numpy(x).copy() for x in leaves]
    # The compiled program runs first, and its inputs must be untouched after it (it never writes
    # into the caller's tensors), so the interpreter then sees the same values.
    got = [as_numpy(t).copy() for t in flat_outputs(evoxc.run(exe, *run_inputs))]
    for i, (x, b) in enumerate(zip(leaves, before)):
        np.testing.assert_array_equal(as_numpy(x), b, err_msg=f"the mlir program changed its input {i}")
    want = [as_numpy(t) for t in flat_outputs(evoxc.run(evoxc.build(graph), *run_inputs))]
    assert len(got) == len(want)
    return lowered.text, got, want


def check_graph(graph, inputs, what, tolerance=None, opt_level=None):
    """run_both, then every result compared with assert_same; returns the lowered text."""
    text, got, want = run_both(graph, inputs, opt_level)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, f"{what} result {i}", tolerance)
    return text


def check_fn(fn, *arrays, what="", tolerance=None, opt_level=None):
    """Traces fn over the arrays' specs and check_graph's it."""
    specs = [evoxc.TensorSpec(a.shape, getattr(evoxc, "bool_" if a.dtype == np.bool_ else str(a.dtype)))
             for a in arrays]
    return check_graph(evoxc.trace(fn, *specs), list(arrays), what or getattr(fn, "__name__", "fn"), tolerance,
                       opt_level)
