"""Custom ops (evoxc.block): the portable body where nothing is registered, a numpy implementation on the
interpreter (decided at load), the body in saved graphs, on the compiled backends and under vmap and grad, and the
typed errors."""

import numpy as np
import pytest

import evoxc
from evoxc import TensorSpec


@evoxc.block("test.scaled_softplus")
def scaled_softplus(x, s):
    return evoxc.log1p(evoxc.exp(x)) * s


def f(x, s):
    return scaled_softplus(x, s) + 1.0


X = np.array([-1.0, 0.0, 0.5, 3.0])
S = np.array(2.0)
WANT = np.log1p(np.exp(X)) * 2 + 1


def test_the_body_runs_where_nothing_is_registered():
    g = evoxc.trace(f, TensorSpec((4,), evoxc.float64), TensorSpec((), evoxc.float64))
    assert "evoxc.block_call" in g.text and "test.scaled_softplus" in g.text
    np.testing.assert_allclose(evoxc.evaluate(f, X, S).numpy(), WANT, rtol=1e-15)


def test_a_numpy_implementation_replaces_the_body_on_the_interpreter():
    calls = []

    @scaled_softplus.impl
    def _(x, s):
        calls.append(x.shape)
        return np.full_like(x, 1000.0) + x * s  # distinguishable from the body

    try:
        assert "test.scaled_softplus" in evoxc.registered_blocks()
        exe = evoxc.build(f, TensorSpec((4,), evoxc.float64), TensorSpec((), evoxc.float64))
        np.testing.assert_array_equal(exe(X, S).numpy(), 1000.0 + X * 2 + 1)
        assert calls == [(4,)]
    finally:
        assert scaled_softplus.unregister()
    # The executable keeps what it found at load; a new one runs the body again.
    np.testing.assert_array_equal(exe(X, S).numpy(), 1000.0 + X * 2 + 1)
    np.testing.assert_allclose(evoxc.evaluate(f, X, S).numpy(), WANT, rtol=1e-15)


def test_a_wrong_implementation_result_is_a_validation_error():
    scaled_softplus.impl(lambda x, s: x.astype(np.float32))
    try:
        with pytest.raises(evoxc.ValidationError, match="float32"):
            evoxc.evaluate(f, X, S)
    finally:
        scaled_softplus.unregister()
    bad = evoxc.block("test.raises", lambda x: x * 2)
    bad.impl(lambda x: (_ for _ in ()).throw(KeyError("boom")))
    try:
        with pytest.raises(evoxc.BackendError, match="test.raises"):
            evoxc.evaluate(lambda x: bad(x), X)
    finally:
        bad.unregister()


def test_the_body_travels_with_the_saved_graph(tmp_path):
    g = evoxc.trace(f, TensorSpec((4,), evoxc.float64), TensorSpec((), evoxc.float64))
    p = tmp_path / "g.evoxcgraph"
    g.save(str(p))
    back = evoxc.Graph.load(str(p))
    np.testing.assert_allclose(evoxc.run(evoxc.build(back), X, S).numpy(), WANT, rtol=1e-15)


@pytest.mark.parametrize("backend", ["mlir", "xla"])
def test_compiled_backends_inline_the_body(backend):
    if backend not in evoxc.backends():
        pytest.skip(f"the {backend} backend is not in this build")
    got = evoxc.evaluate(f, X, S, backend=backend).numpy()
    np.testing.assert_allclose(got, WANT, rtol=1e-12)


def test_vmap_and_grad_work_on_the_body():
    sq = evoxc.block("test.square", lambda x: x * x)
    g = evoxc.grad(lambda x: evoxc.sum(sq(x)))
    np.testing.assert_array_equal(evoxc.evaluate(g, np.array([1.0, -2.0, 0.5])).numpy(), [2.0, -4.0, 1.0])
    v = evoxc.vmap(lambda x: evoxc.sum(sq(x)))
    np.testing.assert_array_equal(evoxc.evaluate(v, np.arange(6.0).reshape(2, 3)).numpy(), [5.0, 50.0])


def test_several_results_and_bare_decorator():
    @evoxc.block
    def minmax(x):
        return evoxc.min(x), evoxc.max(x)

    assert minmax.name == "minmax"
    lo, hi = evoxc.evaluate(lambda x: minmax(x), X)
    assert lo.numpy() == -1.0 and hi.numpy() == 3.0


def test_bad_blocks_are_typed_errors():
    with pytest.raises(evoxc.ValidationError, match="name"):
        evoxc.block("", lambda x: x)
    empty = evoxc.block("test.empty", lambda x: ())
    with pytest.raises(evoxc.TraceError, match="no values"):
        evoxc.trace(lambda x: empty(x), TensorSpec((2,)))
