"""The mlir backend's conformance, generated from the op catalogue: every op on every dtype it accepts is lowered
to upstream MLIR, compiled to object code, run, and compared with the interpreter; an op the table defers is a
BackendError giving its reason."""

import zlib

import numpy as np
import pytest

from mlir_util import check_graph, random_input  # skips the module without the mlir backend

import evoxc
from compare_util import DTYPES

CASES = [(name, dt) for (name, cat, cls, regions) in evoxc._core._op_catalogue() if regions == 0 and cat != "extension"
         for dt in DTYPES[cls]]


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_op_matches_interpreter(op, dtype):
    g = evoxc._core._op_sample_graph(op, getattr(evoxc, "bool_" if dtype == "bool" else dtype))
    try:
        evoxc.lower(g, "mlir")
    except evoxc.BackendError as e:
        # A deliberate deferral gives its reason in parentheses after the table's words; a missing rule is a failure.
        assert "has no mlir rule in this build (" in str(e), str(e)
        pytest.skip(f"deferred: {e}")
    rng = np.random.default_rng(zlib.crc32(f"{op}-{dtype}".encode()))
    inputs = [evoxc.tensor(random_input(s.shape, s.dtype.name, rng)) for s in g.input_specs]
    try:
        evoxc.run(evoxc.build(g), *inputs)
    except evoxc.ValidationError as e:
        # Random data the op refuses (postfix_eval's codes): the compiled program refuses it with the same error.
        with pytest.raises(evoxc.ValidationError) as got:
            evoxc.run(evoxc.build(g, backend="mlir"), *inputs)
        assert str(got.value) == str(e)
        return
    check_graph(g, inputs, f"{op} {dtype}")
