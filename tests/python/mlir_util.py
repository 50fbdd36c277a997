"""The mlir backend checked against the interpreter: conformance.py's helpers with backend "mlir" (one comparison and
tolerance table for every compiled backend)."""

import numpy as np
import pytest

import conformance
import evoxc
from compare_util import TOLERANCE, assert_same, random_input  # noqa: F401  (re-exported to the tests)
from conformance import as_numpy, flat_outputs  # noqa: F401  (re-exported to the tests)

if "mlir" not in evoxc.backends():
    pytest.skip("this build has no mlir backend (configured with -DEVOXC_MLIR=OFF)", allow_module_level=True)

def run_both(graph, inputs, opt_level=None):
    """(lowered text, the mlir backend's outputs, the interpreter's outputs) as numpy arrays."""
    text, got = conformance.run_on("mlir", graph, inputs, opt_level)
    return text, got, conformance.interpreter(graph, inputs)


def check_graph(graph, inputs, what, tolerance=None, opt_level=None):
    """conformance.check_graph on the mlir backend; returns the lowered text."""
    return conformance.check_graph("mlir", graph, inputs, what, tolerance, opt_level)


def check_fn(fn, *arrays, what="", tolerance=None, opt_level=None):
    """Traces fn over the arrays' specs and check_graph's it."""
    return conformance.check_fn("mlir", fn, *arrays, what=what, tolerance=tolerance, opt_level=opt_level)
