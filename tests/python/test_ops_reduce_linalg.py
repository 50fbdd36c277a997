# Tests of the reduction, statistics, product and linear-algebra bindings against numpy/scipy on the interpreter.
import math

import numpy as np
import pytest
import scipy.linalg
import scipy.special

import evoxc
import oputil
from evoxc import _core

RNG = np.random.default_rng(1234)


run = oputil.run
rand = oputil.make_rand(RNG)


def spd(n, batch=(), dtype=np.float64):
    a = RNG.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def assert_exact(got, want):
    """Same dtype and bitwise-equal values (NaN == NaN)."""
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- reductions

REDUCTIONS = ["sum", "prod", "max", "min", "any", "all"]
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]
AXES = [None, 0, -1, (0, 2), (1,), ()]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axes", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(name, dtype, axes, keepdims):
    x = rand((2, 3, 4), dtype)
    if name == "prod" and np.dtype(dtype).kind in "iu":
        x = (x % 3).astype(dtype)  # keep products small enough to compare
    if name in ("any", "all"):
        x.flat[::5] = 0  # zeros (False) among the values; non-bool operands test as x != 0
        x[1] = 0 if name == "any" else 1  # a slice that is all zero (any) or all non-zero (all)
    got = run(lambda t: getattr(evoxc, name)(t, axes, keepdims), x)
    want = getattr(np, name)(x, axis=axes, keepdims=keepdims)
    if np.dtype(dtype).kind == "f" and name in ("sum", "prod"):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    else:
        assert_exact(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("axes", [None, 1, (0, 1)])
def test_mean(dtype, axes):
    x = rand((3, 5), dtype)
    got = run(lambda t: evoxc.mean(t, axes=axes), x)
    want = np.mean(x, axis=axes)
    # jax.numpy's rule (docs/numpy.md): ints and bool average in float32, not numpy's float64.
    want_dtype = np.float64 if dtype == np.float64 else np.float32
    assert got.dtype == want_dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_reductions_nan_inf_and_signed_zero():
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, np.inf], [-0.0, -0.0, -0.0]], np.float32)
    for name in ["sum", "prod", "max", "min", "any", "all"]:
        got = run(lambda t: getattr(evoxc, name)(t, axes=1), x)
        with np.errstate(invalid="ignore"):
            want = getattr(np, name)(x, axis=1)
        assert_exact(got, want)
    # numpy's sum of -0.0 values is +0.0 (it starts from the identity 0).
    assert_exact(run(lambda t: evoxc.sum(t), np.array([-0.0], np.float32)), np.sum(np.array([-0.0], np.float32)))


def test_reductions_empty():
    x = np.zeros((0, 3), np.float32)
    assert_exact(run(lambda t: evoxc.sum(t, axes=0), x), np.zeros(3, np.float32))
    assert_exact(run(lambda t: evoxc.prod(t, axes=0), x), np.ones(3, np.float32))
    # numpy raises for max/min of an empty set; evoxc gives the identity (docs/semantics.md "Reductions").
    assert_exact(run(lambda t: evoxc.max(t, axes=0), x), np.full(3, -np.inf, np.float32))
    assert_exact(run(lambda t: evoxc.min(t, axes=0), x), np.full(3, np.inf, np.float32))
    xi = np.zeros((0,), np.int32)
    assert_exact(run(lambda t: evoxc.max(t), xi), np.array(np.iinfo(np.int32).min, np.int32))
    assert_exact(run(lambda t: evoxc.min(t), xi), np.array(np.iinfo(np.int32).max, np.int32))
    mean = run(lambda t: evoxc.mean(t, axes=0), x)
    assert mean.shape == (3,) and np.isnan(mean).all()
    b = np.zeros((0, 2), np.bool_)
    assert_exact(run(lambda t: evoxc.any(t, axes=0), b), np.zeros(2, np.bool_))
    assert_exact(run(lambda t: evoxc.all(t, axes=0), b), np.ones(2, np.bool_))


def test_amax_amin_aliases():
    x = rand((4, 5), np.float32)
    assert_exact(run(lambda t: evoxc.amax(t, 1, True), x), np.amax(x, axis=1, keepdims=True))
    assert_exact(run(lambda t: evoxc.amin(t, axes=0), x), np.amin(x, axis=0))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin(name, dtype, axis, keepdims):
    x = rand((4, 6), dtype)
    if np.dtype(dtype).kind != "b":
        x[1, :] = x[1, 0]  # ties: the first index wins
    got = run(lambda t: getattr(evoxc, name)(t, axis=axis, keepdims=keepdims), x)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert_exact(got, want.astype(np.int64))


def test_argmax_nan_is_extreme():
    x = np.array([[1.0, np.nan, 5.0, np.nan], [np.inf, -np.inf, 2.0, 3.0]], np.float64)
    assert_exact(run(lambda t: evoxc.argmax(t, axis=1), x), np.argmax(x, axis=1).astype(np.int64))
    assert_exact(run(lambda t: evoxc.argmin(t, axis=1), x), np.argmin(x, axis=1).astype(np.int64))
    assert_exact(run(lambda t: evoxc.argmax(t), x), np.array(np.argmax(x), np.int64))


def test_argmax_empty_axis_is_shape_error():
    with pytest.raises(_core.ShapeError):
        evoxc.trace(lambda t: evoxc.argmax(t, axis=0), evoxc.TensorSpec((0, 3), evoxc.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axes", [None, 0, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp(dtype, axes, keepdims):
    x = (rand((3, 4), dtype) * 30).astype(dtype)
    got = run(lambda t: evoxc.logsumexp(t, axes=axes, keepdims=keepdims), x)
    want = scipy.special.logsumexp(x.astype(np.float64), axis=axes, keepdims=keepdims)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-13)


def test_logsumexp_special_values():
    # docs/semantics.md reduce_logsumexp: empty or all -inf -> -inf, +inf -> +inf, NaN -> NaN.
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [np.nan, np.inf], [1e30, 1e30]], np.float32)
    got = run(lambda t: evoxc.logsumexp(t, axes=1), x)
    np.testing.assert_allclose(got, [-np.inf, np.inf, np.nan, 1e30 + math.log(2)], rtol=1e-6)
    empty = run(lambda t: evoxc.logsumexp(t, axes=0), np.zeros((0, 2), np.float32))
    assert_exact(empty, np.full(2, -np.inf, np.float32))
    ints = run(lambda t: evoxc.logsumexp(t), np.array([1, 2, 3], np.int32))
    assert ints.dtype == np.float32
    np.testing.assert_allclose(ints, scipy.special.logsumexp([1.0, 2.0, 3.0]), rtol=1e-6)


# ---------------------------------------------------------------- normalisation and statistics


@pytest.mark.parametrize("axes", [-1, 0, (0, 1)])
def test_softmax_log_softmax(axes):
    x = rand((3, 5), np.float32) * 50
    x[0, 0] = 1e4  # large inputs do not overflow
    got = run(lambda t: evoxc.softmax(t, axes=axes), x)
    np.testing.assert_allclose(got, scipy.special.softmax(x.astype(np.float64), axis=axes), rtol=1e-5, atol=1e-30)
    got = run(lambda t: evoxc.log_softmax(t, axes=axes), x)
    np.testing.assert_allclose(got, scipy.special.log_softmax(x.astype(np.float64), axis=axes), rtol=1e-5, atol=1e-3)
    default = run(lambda t: evoxc.softmax(t), x)
    np.testing.assert_allclose(default, scipy.special.softmax(x.astype(np.float64), axis=-1), rtol=1e-5, atol=1e-30)


def test_softmax_int_converts_to_float32():
    got = run(lambda t: evoxc.softmax(t), np.array([1, 2, 3], np.int64))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, scipy.special.softmax([1.0, 2.0, 3.0]), rtol=1e-6)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("axes", [None, 0, (0, 2)])
@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_var_std(name, dtype, axes, ddof, keepdims):
    x = rand((3, 4, 5), dtype)
    got = run(lambda t: getattr(evoxc, name)(t, axes, ddof, keepdims), x)
    want = getattr(np, name)(x.astype(np.float64), axis=axes, ddof=ddof, keepdims=keepdims)
    assert got.dtype == (np.float64 if dtype == np.float64 else np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype != np.float64 else 1e-12)


def test_var_ddof_past_count_gives_inf_or_nan():
    x = np.array([[1.0, 2.0], [3.0, 3.0]], np.float64)
    got = run(lambda t: evoxc.var(t, axes=1, ddof=2), x)
    with np.errstate(divide="ignore", invalid="ignore"), pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        want = np.var(x, axis=1, ddof=2)
    assert_exact(got, want)


def test_average():
    x = rand((3, 4), np.float64)
    w = RNG.random((3, 4))
    np.testing.assert_allclose(run(lambda t: evoxc.average(t), x), np.average(x), rtol=1e-12)
    got = run(lambda t, u: evoxc.average(t, axes=1, weights=u), x, w)
    np.testing.assert_allclose(got, np.average(x, axis=1, weights=w), rtol=1e-12)
    w1 = RNG.random(3)
    got = run(lambda t, u: evoxc.average(t, axes=0, weights=u, keepdims=True), x, w1)
    np.testing.assert_allclose(got, np.average(x, axis=0, weights=w1, keepdims=True), rtol=1e-12)


# ---------------------------------------------------------------- products


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize(
    "sa,sb",
    [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((5, 1, 2, 3), (4, 3, 2))],
)
def test_matmul(dtype, sa, sb):
    a, b = rand(sa, dtype), rand(sb, dtype)
    got = run(lambda x, y: evoxc.matmul(x, y), a, b)
    want = np.matmul(a, b)
    if np.dtype(dtype).kind == "i":
        assert_exact(got, want)
    else:
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3, 4)), ((2, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3))])
def test_dot(sa, sb):
    a, b = rand(sa, np.int32), rand(sb, np.int32)
    assert_exact(run(lambda x, y: evoxc.dot(x, y), a, b), np.dot(a, b))


def test_dot_matmul_with_scalar_and_promotion():
    a = rand((2, 3), np.float32)
    assert_exact(run(lambda x: evoxc.dot(x, 2.0), a), np.dot(a, np.float32(2.0)))
    b = rand((3, 2), np.float64)
    got = run(lambda x, y: evoxc.matmul(x, y), a, b)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-12)


def test_matmul_empty_contraction_is_zero():
    a, b = np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)
    assert_exact(run(lambda x, y: evoxc.matmul(x, y), a, b), np.zeros((2, 3), np.float32))


def test_dot_general():
    a, b = rand((5, 2, 3), np.int64), rand((5, 3, 4), np.int64)
    got = run(lambda x, y: evoxc.dot_general(x, y, [2], [1], [0], [0]), a, b)
    assert_exact(got, np.einsum("bij,bjk->bik", a, b))
    # no batch, negative axes, two contractions
    c, d = rand((2, 3, 4), np.int32), rand((4, 3, 6), np.int32)
    got = run(lambda x, y: evoxc.dot_general(x, y, lhs_contracting=[-1, 1], rhs_contracting=[0, 1]), c, d)
    assert_exact(got, np.tensordot(c, d, axes=([2, 1], [0, 1])))
    # no contraction: an outer product
    e, f = rand((2,), np.float32), rand((3,), np.float32)
    assert_exact(run(lambda x, y: evoxc.dot_general(x, y, [], []), e, f), np.multiply.outer(e, f))


@pytest.mark.parametrize(
    "subscripts,shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("ij,jk", [(2, 3), (3, 4)]),
        ("ii->i", [(3, 3)]),
        ("ii", [(3, 3)]),
        ("ij->ji", [(2, 3)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
        ("i,i->", [(4,), (4,)]),
        ("i,j->ij", [(3,), (4,)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
        ("ab,ab->a", [(3, 1), (3, 4)]),
    ],
)
def test_einsum(subscripts, shapes):
    ops = [rand(s, np.int64) for s in shapes]
    got = run(lambda *xs: evoxc.einsum(subscripts, *xs), *ops)
    assert_exact(got, np.einsum(subscripts, *ops))


def test_einsum_float_and_errors():
    a, b = rand((3, 4), np.float32), rand((4, 2), np.float32)
    got = run(lambda x, y: evoxc.einsum("ij,jk->ik", x, y), a, b)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-6)
    spec = evoxc.TensorSpec((3, 4), evoxc.float32)
    with pytest.raises(_core.ShapeError):  # label j is 4 in one operand and 3 in the other
        evoxc.trace(lambda x, y: evoxc.einsum("ij,ij->", x, y), spec, evoxc.TensorSpec((4, 3), evoxc.float32))
    with pytest.raises(_core.TraceError):
        evoxc.trace(lambda x: evoxc.einsum("ij->k", x), spec)
    with pytest.raises(_core.TraceError):  # host data is not an operand
        evoxc.trace(lambda x: evoxc.einsum("ij,ij->", x, np.ones((3, 4), np.float32)), spec)


@pytest.mark.parametrize("sa,sb", [((3,), (4,)), ((2, 3), (2, 2)), ((), (3,))])
def test_outer(sa, sb):
    a, b = rand(sa, np.int32), rand(sb, np.int32)
    assert_exact(run(lambda x, y: evoxc.outer(x, y), a, b), np.outer(a, b))


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (4, 3)), ((2, 5, 3), (3,)), ((), (2, 3))])
def test_inner(sa, sb):
    a, b = rand(sa, np.int64), rand(sb, np.int64)
    assert_exact(run(lambda x, y: evoxc.inner(x, y), a, b), np.inner(a, b))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_, np.float64])
@pytest.mark.parametrize("offset,axis1,axis2", [(0, 0, 1), (1, 0, 1), (-1, 0, 1), (0, 1, 2), (2, -1, 0), (9, 0, 1)])
def test_trace(dtype, offset, axis1, axis2):
    a = rand((3, 4, 5), dtype)
    got = run(lambda x: evoxc.linalg.trace(x, offset, axis1, axis2), a)
    want = np.trace(a, offset, axis1, axis2)
    if dtype == np.float64:
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)
    else:
        assert_exact(got, want)


# ---------------------------------------------------------------- linear algebra

LINALG_NAMES = [
    "cholesky", "solve", "triangular_solve", "inv", "det", "slogdet", "qr", "eigh", "eigvalsh", "svd", "svdvals",
    "matrix_rank", "norm", "matrix_norm", "lu", "matrix_exp", "expm", "trace", "matmul", "outer",
]  # fmt: skip


def test_linalg_submodule_and_docstrings():
    for name in LINALG_NAMES:
        assert callable(getattr(evoxc.linalg, name)), name
        assert getattr(_core.linalg, name).__doc__, name
    for name in REDUCTIONS + ["mean", "argmax", "argmin", "logsumexp", "softmax", "log_softmax", "var", "std",
                              "average", "dot", "dot_general", "einsum", "inner", "amax", "amin"]:  # fmt: skip
        assert getattr(_core, name).__doc__, name


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_cholesky(dtype, batch):
    a = spd(4, batch, dtype)
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    l = run(lambda x: evoxc.linalg.cholesky(x), a)
    assert l.dtype == dtype
    np.testing.assert_allclose(l, np.linalg.cholesky(a), rtol=rtol, atol=rtol)
    u = run(lambda x: evoxc.linalg.cholesky(x, upper=True), a)
    # (the upper factor is L^H: numpy 1.26's cholesky has no `upper`)
    np.testing.assert_allclose(u, np.swapaxes(np.linalg.cholesky(a), -1, -2).conj(), rtol=rtol, atol=rtol)


def test_cholesky_not_positive_definite_is_nan():
    # numpy raises LinAlgError; evoxc gives NaN in that matrix only (docs/semantics.md "Numerical failures").
    a = np.stack([spd(3), -np.eye(3)])
    got = run(lambda x: evoxc.linalg.cholesky(x), a)
    np.testing.assert_allclose(got[0], np.linalg.cholesky(a[0]), rtol=1e-10)
    assert np.isnan(got[1]).all()


def test_int_operand_converts_to_float32():
    a = np.array([[2, 1], [1, 3]], np.int32)
    got = run(lambda x: evoxc.linalg.inv(x), a)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.linalg.inv(a), rtol=1e-6)


@pytest.mark.parametrize("bshape", [(4,), (4, 2), (3, 4, 2)])
def test_solve(bshape):
    a = RNG.standard_normal((3, 4, 4)) + 4 * np.eye(4)
    b = RNG.standard_normal(bshape)
    got = run(lambda x, y: evoxc.linalg.solve(x, y), a, b)
    np.testing.assert_allclose(got, np2_solve(a, b), rtol=1e-10, atol=1e-12)


def np2_solve(a, b):
    """numpy 2's solve on numpy 1.26 too: b is a vector only when it is 1-D, else a stack of matrices."""
    if b.ndim == 1:
        return np.linalg.solve(a, np.broadcast_to(b[:, None], a.shape[:-2] + (b.shape[0], 1)))[..., 0]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:]))


def test_solve_singular_gives_inf_or_nan():
    # numpy raises LinAlgError; evoxc divides by the zero pivot (docs/semantics.md).
    got = run(lambda x, y: evoxc.linalg.solve(x, y), np.zeros((2, 2)), np.ones(2))
    assert not np.isfinite(got).any()


@pytest.mark.parametrize("left_side", [False, True])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_triangular_solve(left_side, lower, transpose_a, unit_diagonal):
    a = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal((2, 3, 4) if left_side else (2, 4, 3))
    got = run(lambda x, y: evoxc.linalg.triangular_solve(x, y, left_side, lower, transpose_a, unit_diagonal), a, b)
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t.copy()
        t[:, np.arange(3), np.arange(3)] = 1.0
    op = np.swapaxes(t, -1, -2) if transpose_a else t
    if left_side:  # op(a) x = b
        want = np2_solve(op, b)
    else:  # x op(a) = b  <=>  op(a)^T x^T = b^T
        want = np.swapaxes(np2_solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_inv_det_slogdet():
    a = RNG.standard_normal((3, 4, 4))
    np.testing.assert_allclose(run(lambda x: evoxc.linalg.inv(x), a), np.linalg.inv(a), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(run(lambda x: evoxc.linalg.det(x), a), np.linalg.det(a), rtol=1e-10)
    sign, logabs = run(lambda x: evoxc.linalg.slogdet(x), a)
    want = np.linalg.slogdet(a)
    assert_exact(sign, want.sign)
    np.testing.assert_allclose(logabs, want.logabsdet, rtol=1e-12)
    # top-level and linalg names are the same function
    np.testing.assert_allclose(run(lambda x: evoxc.det(x), a), np.linalg.det(a), rtol=1e-10)


def test_det_slogdet_singular_and_empty():
    z = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert run(lambda x: evoxc.linalg.det(x), z) == 0.0
    sign, logabs = run(lambda x: evoxc.linalg.slogdet(x), z)
    assert sign == 0.0 and logabs == -np.inf  # as numpy
    e = np.zeros((0, 0))
    assert run(lambda x: evoxc.linalg.det(x), e) == 1.0
    sign, logabs = run(lambda x: evoxc.linalg.slogdet(x), e)
    assert (sign, logabs) == (1.0, 0.0)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(shape, mode):
    a = RNG.standard_normal(shape)
    q, r = run(lambda x: evoxc.linalg.qr(x, mode), a)
    wq, wr = np.linalg.qr(a, mode=mode)
    assert q.shape == wq.shape and r.shape == wr.shape
    np.testing.assert_allclose(q @ r, a, rtol=1e-10, atol=1e-12)
    k = q.shape[-1]
    eye = np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k))
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, eye, atol=1e-12)  # orthonormal columns
    assert_exact(np.triu(r), r)
    # Same LAPACK routines as numpy: the same signs, up to rounding.
    np.testing.assert_allclose(np.abs(r), np.abs(wr), rtol=1e-9, atol=1e-12)
    r_only = run(lambda x: evoxc.linalg.qr(x, mode="r"), a)
    np.testing.assert_allclose(np.abs(r_only), np.abs(np.linalg.qr(a, mode="r")), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("UPLO", ["L", "U"])
def test_eigh_eigvalsh(UPLO):
    a = RNG.standard_normal((2, 5, 5))
    a = a + np.swapaxes(a, -1, -2)
    # garbage in the triangle that is not read
    garbled = np.tril(a) + 7 * np.triu(a, 1) if UPLO == "L" else np.triu(a) + 7 * np.tril(a, -1)
    w, v = run(lambda x: evoxc.linalg.eigh(x, UPLO), garbled)
    ww, _ = np.linalg.eigh(a, UPLO)
    np.testing.assert_allclose(w, ww, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(v @ (w[..., None] * np.swapaxes(v, -1, -2)), a, atol=1e-10)
    vals = run(lambda x: evoxc.linalg.eigvalsh(x, UPLO=UPLO), a)
    np.testing.assert_allclose(vals, np.linalg.eigvalsh(a, UPLO), rtol=1e-10, atol=1e-12)


def test_eigh_nan_gives_nan():
    a = np.eye(3)
    a[0, 0] = np.nan
    w, v = run(lambda x: evoxc.linalg.eigh(x), a)
    assert np.isnan(w).all() and np.isnan(v).all()


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd(shape, full_matrices):
    a = RNG.standard_normal(shape)
    u, s, vh = run(lambda x: evoxc.linalg.svd(x, full_matrices), a)
    wu, ws, wvh = np.linalg.svd(a, full_matrices=full_matrices)
    assert (u.shape, s.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape)
    np.testing.assert_allclose(s, ws, rtol=1e-10, atol=1e-12)
    k = s.shape[-1]
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-10)
    s_only = run(lambda x: evoxc.linalg.svd(x, compute_uv=False), a)
    np.testing.assert_allclose(s_only, ws, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(run(lambda x: evoxc.linalg.svdvals(x), a), ws, rtol=1e-10, atol=1e-12)


def test_matrix_rank():
    a = RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 5))
    assert_exact(run(lambda x: evoxc.linalg.matrix_rank(x), a), np.array(np.linalg.matrix_rank(a), np.int64))
    assert run(lambda x: evoxc.linalg.matrix_rank(x, tol=1e9), a) == 0
    assert run(lambda x: evoxc.linalg.matrix_rank(x, rtol=0.0), a) == np.linalg.matrix_rank(a, tol=0.0)  # rtol 0 is tol 0 (numpy 1.26 has no rtol)
    batch = np.stack([np.eye(3), np.diag([1.0, 1.0, 0.0]), np.zeros((3, 3))])
    assert_exact(run(lambda x: evoxc.linalg.matrix_rank(x), batch), np.linalg.matrix_rank(batch).astype(np.int64))
    assert run(lambda x: evoxc.linalg.matrix_rank(x), np.array([0.0, 1.0, 2.0])) == 1  # 1-D: one row


@pytest.mark.parametrize(
    "shape,ord,axis",
    [
        ((5,), None, None),
        ((3, 4), None, None),
        ((5,), 1, None),
        ((5,), np.inf, None),
        ((5,), -np.inf, None),
        ((5,), 0, None),
        ((5,), 3.5, None),
        ((3, 4), "fro", None),
        ((3, 4), "nuc", None),
        ((3, 4), 1, None),
        ((3, 4), -1, None),
        ((3, 4), 2, None),
        ((3, 4), -2, None),
        ((3, 4), np.inf, None),
        ((3, 4), -np.inf, None),
        ((2, 3, 4), None, 1),
        ((2, 3, 4), 3, -1),
        ((2, 3, 4), "fro", (0, 2)),
        ((2, 3, 4), 2, (2, 1)),
        ((2, 3, 4), None, (1, 2)),
    ],
)
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm(shape, ord, axis, keepdims):
    x = RNG.standard_normal(shape)
    x.flat[0] = 0.0
    got = run(lambda t: evoxc.linalg.norm(t, ord, axis, keepdims), x)
    want = np.linalg.norm(x, ord, axis, keepdims)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_norm_flattens_nd_and_matrix_norm_and_errors():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    got = run(lambda t: evoxc.norm(t), x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.linalg.norm(x), rtol=1e-6)
    got = run(lambda t: evoxc.linalg.matrix_norm(t, ord="nuc"), x)
    # (numpy 2's matrix_norm is norm over the last two axes: numpy 1.26 has no matrix_norm)
    np.testing.assert_allclose(got, np.linalg.norm(x, ord="nuc", axis=(-2, -1)), rtol=1e-5)
    got = run(lambda t: evoxc.linalg.matrix_norm(t, keepdims=True), x)
    np.testing.assert_allclose(got, np.linalg.norm(x, axis=(-2, -1), keepdims=True), rtol=1e-6)
    nanx = np.array([1.0, np.nan])
    assert np.isnan(run(lambda t: evoxc.linalg.norm(t, np.inf), nanx))
    assert run(lambda t: evoxc.linalg.norm(t), np.zeros((0,))) == 0.0
    spec = evoxc.TensorSpec((3, 4), evoxc.float32)
    with pytest.raises(TypeError):
        evoxc.trace(lambda t: evoxc.linalg.norm(t, ord=[1]), spec)
    with pytest.raises(TypeError):
        evoxc.trace(lambda t: evoxc.linalg.norm(t, axis="x"), spec)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 4)])
def test_lu(shape):
    a = RNG.standard_normal(shape)
    lu, piv, perm = run(lambda x: evoxc.linalg.lu(x), a)
    assert piv.dtype == np.int32 and perm.dtype == np.int32
    m, n = shape[-2:]
    k = min(m, n)
    lower = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    upper = np.triu(lu)[..., :k, :]
    permuted = np.take_along_axis(a, perm[..., :, None].astype(np.int64), axis=-2)
    np.testing.assert_allclose(lower @ upper, permuted, atol=1e-12)
    # scipy's getrf has the same partial pivoting: the same factors.
    if len(shape) == 2:
        wlu, wpiv = scipy.linalg.lu_factor(a)
        np.testing.assert_allclose(lu, wlu, rtol=1e-10, atol=1e-12)
        assert_exact(piv, wpiv[:k].astype(np.int32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matrix_exp(dtype):
    a = (RNG.standard_normal((2, 4, 4)) * 2).astype(dtype)
    want = np.stack([scipy.linalg.expm(m.astype(np.float64)) for m in a])
    rtol = 1e-5 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(run(lambda x: evoxc.linalg.matrix_exp(x), a), want, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(run(lambda x: evoxc.linalg.expm(x), a), want, rtol=rtol, atol=rtol)
    # exp(0) = I up to the Pade solve's rounding (scipy gives I exactly).
    zero = np.zeros((3, 3), dtype)
    np.testing.assert_allclose(run(lambda x: evoxc.linalg.matrix_exp(x), zero), np.eye(3), atol=1e-15)


def test_linalg_locations_point_at_the_caller():
    g = evoxc.trace(lambda x: evoxc.linalg.inv(x), evoxc.TensorSpec((3, 3), evoxc.float32))
    assert "test_ops_reduce_linalg.py" in g.to_string()
