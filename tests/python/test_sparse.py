"""evoxc.sparse against scipy.sparse: values and specs, every operation on the interpreter and the compiled backends,
structure errors, vmap, grad with respect to the stored values, control flow, and interop."""

import numpy as np
import pytest

import evoxc
from evoxc import sparse

import conformance

sp = pytest.importorskip("scipy.sparse")

f32, f64 = evoxc.float32, evoxc.float64


def random_csr(m, n, density, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return sp.random(m, n, density=density, format="csr", dtype=dtype, random_state=rng)


def test_the_seed_example():
    s = sparse.coo(np.array([[0, 0], [1, 2]]), np.array([1.5, 2.5], np.float32), (3, 4))

    @evoxc.defn
    def step(s):
        return sparse.to_dense(sparse.multiply(s, s))

    exe = evoxc.build(step, sparse.SparseTensorSpec.from_concrete(s))
    np.testing.assert_array_equal(evoxc.run(exe, s).numpy(),
                                  [[2.25, 0, 0, 0], [0, 0, 6.25, 0], [0, 0, 0, 0]])


@pytest.mark.parametrize("backend", ["interp", "mlir", "xla"])
@pytest.mark.parametrize("fmt", ["coo", "csr", "csc"])
def test_matmul_both_orders_matches_scipy(backend, fmt):
    conformance.require(backend)
    a = random_csr(7, 5, 0.3, 1).asformat(fmt)
    s = sparse.from_scipy(a)
    b = np.random.default_rng(2).standard_normal((5, 3))
    c = np.random.default_rng(3).standard_normal((4, 7))
    v = np.random.default_rng(4).standard_normal(5)

    def f(s, b, c, v):
        return sparse.matmul(s, b), sparse.matmul(c, s), sparse.matmul(s, v)

    spec = sparse.SparseTensorSpec.from_concrete(s)
    specs = [evoxc.TensorSpec(x.shape, f64) for x in (b, c, v)]
    exe = evoxc.build(f, spec, *specs, backend=backend)
    got = [t.numpy() for t in evoxc.run(exe, s, b, c, v)]
    np.testing.assert_allclose(got[0], a @ b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], c @ a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[2], a @ v, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", ["interp", "mlir"])
def test_every_operation_matches_scipy(backend):
    conformance.require(backend)
    a = random_csr(6, 5, 0.4, 5)
    b = random_csr(6, 5, 0.4, 6)
    sa, sb = sparse.from_scipy(a.tocoo()), sparse.from_scipy(b)
    d = np.random.default_rng(7).standard_normal((6, 5))

    def f(sa, sb, d):
        return (sparse.to_dense(sparse.add(sa, sb)),
                sparse.to_dense(sparse.multiply(sa, sb)),
                sparse.to_dense(sparse.multiply_dense(sa, d)),
                sparse.to_dense(sparse.reduce_sum(sa, 1)),
                sparse.sum(sb),
                sparse.to_dense(sparse.transpose(sb)),
                sparse.to_dense(sparse.reshape(sa, (10, 3))),
                sparse.to_dense(sparse.concatenate([sa, sb], axis=0)),
                sparse.to_dense(sparse.to_csc(sa)),
                sparse.to_dense(sparse.from_dense(d * (d > 0.5))))

    specs = [sparse.SparseTensorSpec.from_concrete(sa), sparse.SparseTensorSpec.from_concrete(sb),
             evoxc.TensorSpec((6, 5), f64)]
    got = [t.numpy() for t in evoxc.run(evoxc.build(f, *specs, backend=backend), sa, sb, d)]
    A, B = a.toarray(), b.toarray()
    want = [A + B, A * B, A * d, A.sum(axis=1), B.sum(), B.T, A.reshape(10, 3), np.concatenate([A, B]), A,
            d * (d > 0.5)]
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=f"output {i}")


def test_conversions_keep_scipys_arrays():
    a = random_csr(5, 6, 0.5, 8)
    s = sparse.from_scipy(a.tocoo())

    def f(s):
        c = sparse.to_csr(s)
        return c.indptr, c.indices, c.values

    indptr, indices, values = [t.numpy() for t in evoxc.run(evoxc.build(f, sparse.SparseTensorSpec.from_concrete(s)),
                                                            s)]
    np.testing.assert_array_equal(indptr, a.indptr)
    np.testing.assert_array_equal(indices, a.indices)
    np.testing.assert_array_equal(values, a.data)
    # And back to scipy from a run's result.
    out = evoxc.run(evoxc.build(lambda s: sparse.to_csr(s), sparse.SparseTensorSpec.from_concrete(s)), s)
    assert isinstance(out, sparse.CSRTensor)
    np.testing.assert_array_equal(out.to_scipy().toarray(), a.toarray())
    np.testing.assert_array_equal(out.todense(), a.toarray())
    # The components are DLPack-friendly: numpy views them without a copy.
    assert np.from_dlpack(out.values).shape == (a.nnz,)


def test_symbolic_nse_serves_every_count():
    # scipy keeps int32 indices; a spec states the index dtype the graph takes (default int64).
    spec = sparse.SparseTensorSpec((4, 3), f64, evoxc.dim("nse"), format="csr", index_dtype=evoxc.int32)
    exe = evoxc.build(lambda s, v: sparse.matmul(s, v), spec, evoxc.TensorSpec((3,), f64))
    v = np.array([1.0, 2.0, 3.0])
    for seed, density in ((1, 0.2), (2, 0.9)):
        a = random_csr(4, 3, density, seed)
        np.testing.assert_allclose(evoxc.run(exe, sparse.from_scipy(a), v).numpy(), a @ v, rtol=1e-12)


@pytest.mark.parametrize("backend", ["interp", "mlir"])
def test_bad_structure_is_a_validation_error_naming_the_entry(backend):
    conformance.require(backend)
    spec = sparse.SparseTensorSpec((3, 4), f64, 3, format="csr", index_dtype=evoxc.int64)
    exe = evoxc.build(lambda s, v: sparse.matmul(s, v), spec, evoxc.TensorSpec((4,), f64), backend=backend)
    v = np.ones(4)
    good = sparse.csr(np.array([0, 2, 2, 3]), np.array([1, 3, 0]), np.array([1.0, 2.0, 3.0]), (3, 4))
    np.testing.assert_allclose(evoxc.run(exe, good, v).numpy(), [3.0, 0.0, 3.0])
    if backend != "interp":
        return  # the compiled backends run the decomposition, which clamps instead of checking
    unsorted = sparse.csr(np.array([0, 2, 2, 3]), np.array([3, 1, 0]), np.array([1.0, 2.0, 3.0]), (3, 4))
    with pytest.raises(evoxc.ValidationError, match=r"entry 1 \(row 0\) has index 1 after 3"):
        evoxc.run(exe, unsorted, v)
    out_of_range = sparse.csr(np.array([0, 2, 2, 3]), np.array([1, 4, 0]), np.array([1.0, 2.0, 3.0]), (3, 4))
    with pytest.raises(evoxc.ValidationError, match=r"has index 4, out of range \[0, 4\)"):
        evoxc.run(exe, out_of_range, v)
    coo_spec = sparse.SparseTensorSpec((3, 4), f64, 2)
    exe = evoxc.build(sparse.to_dense, coo_spec)
    with pytest.raises(evoxc.ValidationError, match=r"COO entry 1 has index -1 on axis 1"):
        evoxc.run(exe, sparse.coo(np.array([[0, 0], [2, -1]]), np.array([1.0, 2.0]), (3, 4)))


def test_vmap_over_dense_operands_and_over_values():
    a = random_csr(5, 4, 0.5, 9)
    s = sparse.from_scipy(a)
    bs = np.random.default_rng(1).standard_normal((3, 4, 2))
    f = evoxc.vmap(lambda s, b: sparse.matmul(s, b), in_axes=(None, 0))
    out = evoxc.run(evoxc.build(f, sparse.SparseTensorSpec.from_concrete(s), evoxc.TensorSpec((3, 4, 2), f64)), s, bs)
    np.testing.assert_allclose(out.numpy(), np.stack([a @ b for b in bs]), rtol=1e-12)
    # A batch of value vectors on one structure.
    vals = np.random.default_rng(2).standard_normal((3, a.nnz))

    def with_values(v, x):
        return sparse.matmul(sparse.csr(s.indptr, s.indices, v, s.shape), x)

    g = evoxc.vmap(with_values, in_axes=(0, None))
    x = np.arange(4.0)
    out = evoxc.run(evoxc.build(g, evoxc.TensorSpec((3, a.nnz), f64), evoxc.TensorSpec((4,), f64)), vals, x)
    want = [sp.csr_matrix((v, a.indices, a.indptr), shape=a.shape) @ x for v in vals]
    np.testing.assert_allclose(out.numpy(), np.stack(want), rtol=1e-12)


def test_grad_with_respect_to_the_stored_values_matches_jax_style_fd():
    a = random_csr(4, 3, 0.6, 10)
    x = np.array([0.5, -1.0, 2.0])
    s0 = sparse.from_scipy(a)

    def loss(v, x):
        y = sparse.matmul(sparse.csr(s0.indptr, s0.indices, v, s0.shape), x)
        return evoxc.sum(evoxc.tanh(y))

    g = evoxc.evaluate(evoxc.grad(loss), a.data, x).numpy()
    eps = 1e-6
    fd = []
    for k in range(a.nnz):
        vp, vm = a.data.copy(), a.data.copy()
        vp[k] += eps
        vm[k] -= eps
        fd.append((np.tanh(sp.csr_matrix((vp, a.indices, a.indptr), shape=a.shape) @ x).sum()
                   - np.tanh(sp.csr_matrix((vm, a.indices, a.indptr), shape=a.shape) @ x).sum()) / (2 * eps))
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_sparse_values_flow_through_control_flow():
    a = random_csr(4, 4, 0.5, 11)
    s = sparse.from_scipy(a)

    def power(s, v):
        def body(i, v):
            w = sparse.matmul(s, v)
            return w / evoxc.sqrt(evoxc.sum(w * w))
        return evoxc.fori_loop(0, 5, body, v)

    v = np.ones(4)
    out = evoxc.run(evoxc.build(power, sparse.SparseTensorSpec.from_concrete(s), evoxc.TensorSpec((4,), f64)), s, v)
    w = v
    for _ in range(5):
        w = a @ w
        w = w / np.linalg.norm(w)
    np.testing.assert_allclose(out.numpy(), w, rtol=1e-12)


def test_not_yet_and_misuse_are_named():
    s = sparse.coo(np.array([[0, 0]]), np.array([1.0]), (2, 2))
    with pytest.raises(evoxc.ValidationError, match="sparse @ sparse is not implemented yet"):
        evoxc.trace(lambda a: sparse.matmul(a, a), sparse.SparseTensorSpec.from_concrete(s))
    with pytest.raises(evoxc.TraceError, match="expected a sparse value"):
        evoxc.trace(lambda x: sparse.to_dense(x), evoxc.TensorSpec((2, 2), f64))
    with pytest.raises(evoxc.ShapeError, match="shapes"):
        evoxc.trace(lambda a, b: sparse.add(a, b), sparse.SparseTensorSpec((2, 2), f64, 1),
                    sparse.SparseTensorSpec((2, 3), f64, 1))


def test_sparse_values_are_cond_results_and_scan_carries():
    a = random_csr(3, 3, 0.7, 12)
    # int64 indices: sparse.csr makes its indices int64, so a carry keeps its types.
    s = sparse.csr(a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data, a.shape)
    spec = sparse.SparseTensorSpec.from_concrete(s)

    def pick(s, flag):
        t = evoxc.cond(flag, lambda: sparse.csr(s.indptr, s.indices, s.values * 2.0, s.shape),
                       lambda: sparse.csr(s.indptr, s.indices, -s.values, s.shape))
        return sparse.to_dense(t)

    exe = evoxc.build(pick, spec, evoxc.TensorSpec((), evoxc.bool_))
    np.testing.assert_allclose(evoxc.run(exe, s, np.bool_(True)).numpy(), 2 * a.toarray())
    np.testing.assert_allclose(evoxc.run(exe, s, np.bool_(False)).numpy(), -a.toarray())

    def scaled(s, xs):
        def body(carry, x):
            c = sparse.csr(carry.indptr, carry.indices, carry.values * x, carry.shape)
            return c, sparse.sum(c)
        return evoxc.scan(body, s, xs)

    final, sums = evoxc.run(evoxc.build(scaled, spec, evoxc.TensorSpec((4,), f64)), s, np.array([1.0, 2.0, 0.5, 3.0]))
    assert isinstance(final, sparse.CSRTensor)
    np.testing.assert_allclose(final.todense(), 3 * a.toarray())
    np.testing.assert_allclose(sums.numpy(), a.sum() * np.array([1.0, 2.0, 1.0, 3.0]))
