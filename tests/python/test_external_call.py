"""evoxc.external_call: opaque kernels registered out of band — numpy kernels on the interpreter and the mlir
backend, slots (exact, then default), batch levels under vmap (batch variant or one call per row), the portable
decomposition where a backend cannot call host code, saved graphs that need their kernels again, and errors."""

import numpy as np
import pytest

import evoxc
from evoxc import TensorSpec

import conformance

f32 = evoxc.float32
N = evoxc.dim("N")
HOST = ["interp", "mlir"]


@pytest.fixture
def axpy():
    calls = {"n": 0, "batched": 0}

    def kernel(x, y):
        calls["n"] += 1
        return 2 * x + y

    handle = evoxc.register_external_kernel("py.axpy", kernel)
    handle.calls = calls
    yield handle
    for slot in ("default", "interp", "mlir"):
        handle.unregister(slot)
    handle.unregister_portable()


def model(x, y):
    h = evoxc.external_call("py.axpy", x, y, result=TensorSpec((N,), f32))
    return evoxc.exp(h * 0.1)


def data(n=5):
    x = np.linspace(-1, 1, n).astype(np.float32)
    y = np.arange(n, dtype=np.float32)
    return x, y


@pytest.mark.parametrize("backend", HOST)
def test_a_numpy_kernel_runs_inside_the_graph(axpy, backend):
    conformance.require(backend)
    exe = evoxc.build(model, TensorSpec((N,), f32), TensorSpec((N,), f32), backend=backend)
    assert 'kernel = "py.axpy"' in evoxc.trace(model, TensorSpec((N,), f32), TensorSpec((N,), f32)).text
    for n in (1, 7, 300):
        x, y = data(n)
        got = evoxc.run(exe, x, y).numpy()
        np.testing.assert_allclose(got, np.exp((2 * x + y) * 0.1), rtol=1e-6)
    assert axpy.calls["n"] == 3


@pytest.mark.parametrize("backend", HOST)
def test_the_backend_slot_comes_before_the_default(axpy, backend):
    conformance.require(backend)

    @axpy.impl(backend)
    def only_here(x, y):
        return x - y

    x, y = data()
    exe = evoxc.build(model, TensorSpec((N,), f32), TensorSpec((N,), f32), backend=backend)
    np.testing.assert_allclose(evoxc.run(exe, x, y).numpy(), np.exp((x - y) * 0.1), rtol=1e-6)
    assert ("py.axpy", backend) in evoxc.registered_external_kernels()
    assert axpy.unregister(backend)
    exe = evoxc.build(model, TensorSpec((N,), f32), TensorSpec((N,), f32), backend=backend)
    np.testing.assert_allclose(evoxc.run(exe, x, y).numpy(), np.exp((2 * x + y) * 0.1), rtol=1e-6)


@pytest.mark.parametrize("backend", HOST)
def test_a_saved_graph_needs_its_kernel_registered_at_load(axpy, backend, tmp_path):
    conformance.require(backend)
    g = evoxc.trace(model, TensorSpec((N,), f32), TensorSpec((N,), f32))
    path = str(tmp_path / "g.evoxcgraph")
    g.save(path)
    axpy.unregister()
    art = evoxc.compile(evoxc.lower(evoxc.Graph.load(path), backend))
    with pytest.raises(evoxc.BackendError, match="no kernel 'py.axpy' is registered"):
        evoxc.load(art)
    evoxc.register_external_kernel("py.axpy", lambda x, y: x + y)
    x, y = data()
    np.testing.assert_allclose(evoxc.run(evoxc.load(art), x, y).numpy(), np.exp((x + y) * 0.1), rtol=1e-6)


@pytest.mark.parametrize("backend", HOST)
def test_wrong_results_and_kernel_exceptions_are_typed(axpy, backend):
    conformance.require(backend)
    x, y = data()
    spec = (TensorSpec((N,), f32), TensorSpec((N,), f32))
    evoxc.register_external_kernel("py.axpy", lambda x, y: (x + y).astype(np.float64))
    with pytest.raises(evoxc.ValidationError, match="result 0 of the implementation is float64"):
        evoxc.run(evoxc.build(model, *spec, backend=backend), x, y)
    evoxc.register_external_kernel("py.axpy", lambda x, y: (x, y))
    with pytest.raises(evoxc.ValidationError, match="returned 2 values for 1 results"):
        evoxc.run(evoxc.build(model, *spec, backend=backend), x, y)

    def boom(x, y):
        raise KeyError("nope")

    evoxc.register_external_kernel("py.axpy", boom)
    with pytest.raises(Exception, match="nope"):
        evoxc.run(evoxc.build(model, *spec, backend=backend), x, y)


@pytest.mark.parametrize("backend", HOST)
def test_vmap_runs_the_batch_variant_or_one_call_per_row(axpy, backend):
    conformance.require(backend)

    def row(x, y):
        return evoxc.external_call("py.axpy", x, y, result=TensorSpec((3,), f32))

    batched = evoxc.vmap(row, in_axes=(0, None))
    g = evoxc.trace(batched, TensorSpec((4, 3), f32), TensorSpec((3,), f32))
    assert "batch_dims = 1" in g.text
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = np.array([1, 2, 3], np.float32)
    exe = evoxc.load(evoxc.compile(evoxc.lower(g, backend)))
    axpy.calls["n"] = 0
    np.testing.assert_array_equal(evoxc.run(exe, x, y).numpy(), 2 * x + y)
    assert axpy.calls["n"] == 4
    seen = []

    @axpy.batch_variant
    def fused(xb, yb):
        seen.append((xb.shape, yb.shape))
        return 2 * xb + yb  # numpy broadcasting over the extent-1 axis

    exe = evoxc.load(evoxc.compile(evoxc.lower(g, backend)))
    np.testing.assert_array_equal(evoxc.run(exe, x, y).numpy(), 2 * x + y)
    assert seen == [((4, 3), (1, 3))]


def test_the_portable_runs_where_host_code_cannot(axpy):
    @axpy.portable
    @evoxc.defn
    def portable(x, y):
        return 2 * x + y

    g = evoxc.trace(model, TensorSpec((N,), f32), TensorSpec((N,), f32))
    with pytest.warns(UserWarning, match="portable decomposition runs instead"):
        text = evoxc.backends.stablehlo.export(g)
    assert "evoxc.external_call" not in text and "stablehlo.exponential" in text
    x, y = data(6)
    if conformance.unavailable("xla") is None:
        spec = TensorSpec((6,), f32)
        with pytest.warns(UserWarning, match="portable"):
            exe = evoxc.build(model_static, spec, spec, backend="xla")
        np.testing.assert_allclose(evoxc.run(exe, x, y).numpy(), np.exp((2 * x + y) * 0.1), rtol=1e-6)
    # vmapped: the portable is vmapped over the call's batch level.
    vm = evoxc.vmap(lambda x, y: evoxc.external_call("py.axpy", x, y, result=TensorSpec((6,), f32)),
                    in_axes=(0, None))
    gb = evoxc.trace(vm, TensorSpec((3, 6), f32), TensorSpec((6,), f32))
    with pytest.warns(UserWarning, match="portable"):
        assert "evoxc.external_call" not in evoxc.backends.stablehlo.export(gb)
    axpy.unregister_portable()
    with pytest.raises(evoxc.BackendError, match="no portable decomposition is registered"):
        evoxc.backends.stablehlo.export(g)


def model_static(x, y):
    h = evoxc.external_call("py.axpy", x, y, result=TensorSpec((6,), f32))
    return evoxc.exp(h * 0.1)


def test_no_derivative_and_bad_calls(axpy):
    def loss(x):
        return evoxc.sum(evoxc.external_call("py.axpy", x, x, result=TensorSpec((3,), f32)))

    with pytest.raises(evoxc.TransformError, match="an external kernel is opaque"):
        evoxc.trace(evoxc.grad(loss), TensorSpec((3,), f32))
    with pytest.raises(evoxc.TraceError, match="at least one result type"):
        evoxc.trace(lambda x: evoxc.external_call("py.axpy", x, result=[]), TensorSpec((3,), f32))
    with pytest.raises(evoxc.ValidationError, match="non-empty name"):
        evoxc.register_external_kernel("", lambda x: x)
