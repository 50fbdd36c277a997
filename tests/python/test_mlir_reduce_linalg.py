"""The mlir backend's reduction and linear-algebra rules, beyond the catalogue's samples: edge values (NaN, +-inf,
empty sets, integer wrap-around), attributes other than the sample's, bool operands, symbolic shapes, the scalar LU/QR/
Cholesky loops on matrices that exercise pivoting, singularity and failure, a large reduction at O0 and O2, and golden
checks of the lowered text. Each case is lowered to upstream MLIR, compiled, run, and compared with the interpreter
(exact for ints and bools, mlir_util.TOLERANCE for floats)."""

import numpy as np
import pytest

from mlir_util import check_fn, check_graph  # skips the module without the mlir backend

import evoxc


RNG = np.random.default_rng(20240611)
NAN, INF = np.nan, np.inf

DT = {"bool": evoxc.bool_, "int8": evoxc.int8, "int16": evoxc.int16, "int32": evoxc.int32, "int64": evoxc.int64,
      "uint8": evoxc.uint8, "uint16": evoxc.uint16, "uint32": evoxc.uint32, "uint64": evoxc.uint64,
      "float16": evoxc.float16, "float32": evoxc.float32, "float64": evoxc.float64}


def spec(a):
    return evoxc.TensorSpec(a.shape, DT[str(a.dtype)])


def check(fn, *arrays, what=None, opt_level=None):
    """Traces fn on specs of the arrays and checks the mlir backend against the interpreter on them."""
    g = evoxc.trace(fn, *[spec(a) for a in arrays])
    return check_graph(g, [evoxc.tensor(a) for a in arrays], what or getattr(fn, "__name__", "case"),
                       opt_level=opt_level)


def check_symbolic(fn, specs, arrays, what="symbolic"):
    """A graph with symbolic extents: the lowered text keeps `?` extents and runs on the arrays' shapes."""
    g = evoxc.trace(fn, *specs)
    text = check_graph(g, [evoxc.tensor(a) for a in arrays], what)
    assert "?" in text, text
    return text


def rand(shape, dtype="float32", scale=2.0):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -20), min(info.max, 20) + 1, shape).astype(dtype)
    if dtype == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def well_conditioned(n, batch=(), dtype="float64"):
    return (RNG.standard_normal(batch + (n, n)) + 2 * n * np.eye(n)).astype(dtype)


def spd(n, batch=(), dtype="float64"):
    a = RNG.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


# ---------------------------------------------------------------- reductions

REDUCERS = {"sum": evoxc.sum, "prod": evoxc.prod, "max": evoxc.max, "min": evoxc.min, "mean": evoxc.mean}


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
@pytest.mark.parametrize("axes,keepdims",
                         [((0, 2), False), ((1,), True), ((), False), (None, True), ((0, 1, 2), False)])
def test_reductions_axes_keepdims(name, axes, keepdims):
    dtypes = ["float32", "float64", "float16"] + ([] if name == "mean" else ["int32", "uint8", "int64"])
    for dt in dtypes:
        x = rand((2, 3, 4), dt)
        if name == "prod" and dt != "float16":
            x = (x % 3).astype(dt)
        check(lambda t: REDUCERS[name](t, axes, keepdims), x, what=f"{name} {dt} {axes} {keepdims}")


def test_reductions_of_empty_sets_give_identities():
    for dt in ["float32", "int16", "uint32", "float16"]:
        x = np.zeros((0, 3), dt)
        for name in ["sum", "prod", "max", "min"]:
            check(lambda t: REDUCERS[name](t, 0), x, what=f"{name} empty {dt}")
    check(lambda t: evoxc.mean(t, 0), np.zeros((0, 3), "float32"), what="mean empty is NaN")
    # One op per graph (on bool, max is any and min is all), so a failure names its op. (Returning one value
    # twice is the calling convention's concern: test_mlir_abi.py.)
    for fn in (evoxc.any, evoxc.all, evoxc.max, evoxc.min):
        check(lambda t: fn(t, 0), np.zeros((0, 2), bool), what=f"{fn.__name__} empty bool")


def test_reductions_nan_and_inf():
    x = np.array([[1.0, NAN, -INF], [INF, 2.0, 3.0], [-0.0, 0.0, NAN]], "float32")
    for name in ["sum", "prod", "max", "min", "mean"]:
        for ax in (0, 1):
            check(lambda t: REDUCERS[name](t, ax), x, what=f"{name} nan/inf axis {ax}")
    check(lambda t: evoxc.max(t, 0), np.array([-INF, -INF], "float64"))


def test_integer_sums_and_products_wrap():
    check(lambda t: (evoxc.sum(t, 0), evoxc.prod(t, 0)), np.array([100, 100, 27], "int8"))
    check(lambda t: (evoxc.sum(t, 0), evoxc.prod(t, 0)), np.array([200, 200, 3], "uint8"))
    big = np.array([2**62, 2**62, 2**62], "int64")
    check(lambda t: (evoxc.sum(t, 0), evoxc.prod(t, 0)), big)
    check(lambda t: (evoxc.max(t, 0), evoxc.min(t, 0)), np.array([-128, 127, 0], "int8"))
    check(lambda t: (evoxc.max(t, 0), evoxc.min(t, 0)), np.array([0, 2**64 - 1, 7], "uint64"))


def test_half_float_sum_accumulates_in_float32():
    # 4096 ones: a float16 accumulator sticks at 2048; the semantics accumulate in float32 and round once.
    text = check(lambda t: (evoxc.sum(t, 0), evoxc.mean(t, 0), evoxc.cumsum(t, 0)), np.ones(4096, "float16"))
    assert "arith.extf" in text and "tensor<f32>" in text and "tensor<1xf32>" in text  # sums and the running value


def test_bool_reductions():
    x = rand((3, 5), "bool")
    x[0] = True
    x[1] = False
    for fn in (evoxc.any, evoxc.all, evoxc.max, evoxc.min):
        for ax in (0, 1, None):
            check(lambda t: fn(t, ax), x, what=f"{fn.__name__} bool {ax}")


# ---------------------------------------------------------------- argmax / argmin

def test_argmax_argmin_first_index_and_nan():
    x = np.array([[1.0, 3.0, 3.0, -1.0], [NAN, 2.0, NAN, 5.0], [-INF, -INF, -INF, -INF], [0.0, -0.0, 0.0, 7.0]],
                 "float32")
    for ax in (0, 1):
        check(lambda t: (evoxc.argmax(t, ax), evoxc.argmin(t, ax)), x, what=f"arg nan axis {ax}")
        check(lambda t: (evoxc.argmax(t, ax, True), evoxc.argmin(t, ax, True)), x.astype("float16"))


@pytest.mark.parametrize("dt", ["int8", "uint16", "int64", "uint64", "bool", "float64"])
def test_argmax_argmin_ties(dt):
    x = rand((4, 6), dt)
    x[:, 1] = x[:, 4] = x.max() if dt != "bool" else True  # ties: the first one wins
    for ax in (0, 1, None):
        check(lambda t: (evoxc.argmax(t, ax), evoxc.argmin(t, ax)), x, what=f"arg {dt} {ax}")


# ---------------------------------------------------------------- scans

SCANS = {"cumsum": evoxc.cumsum, "cumprod": evoxc.cumprod, "cummax": evoxc.cummax, "cummin": evoxc.cummin}


@pytest.mark.parametrize("name", list(SCANS))
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int8", "uint32", "int64"])
def test_scans_axis_and_reverse(name, dt):
    x = rand((3, 5, 2), dt, scale=1.0)
    if name == "cumprod" and dt[0] in "iu":
        x = (x % 4).astype(dt)
    # every axis, both directions, in one program (one compile)
    check(lambda t: tuple(SCANS[name](t, ax, rev) for ax in (0, 1, 2) for rev in (False, True)), x,
          what=f"{name} {dt} every axis and direction")


def test_scans_edge_values():
    x = np.array([1.0, NAN, 3.0, -INF, 0.5], "float32")
    for name, fn in SCANS.items():
        for rev in (False, True):
            check(lambda t: fn(t, 0, rev), x, what=f"{name} nan {rev}")
    check(lambda t: (evoxc.cumsum(t, 0), evoxc.cumprod(t, 0)), np.array([100, 100, 100, 3], "int8"), what="wrap")
    b = np.array([False, True, False, True, True])
    check(lambda t: (evoxc.cummax(t, 0), evoxc.cummin(t, 0), evoxc.cummax(t, 0, True), evoxc.cummin(t, 0, True)), b)
    for name, fn in SCANS.items():
        check(lambda t: fn(t, 1), np.zeros((2, 0), "float32"), what=f"{name} empty")


# ---------------------------------------------------------------- logsumexp

def test_logsumexp_edges():
    x = np.array([[1000.0, 1000.0, -INF], [-INF, -INF, -INF], [INF, 1.0, 2.0], [NAN, 1.0, INF], [-3.0, 0.0, 2.0]])
    for dt in ["float64", "float32", "float16"]:
        xs = x.astype(dt)
        check(lambda t: (evoxc.logsumexp(t, 1), evoxc.logsumexp(t, 0, True)), xs, what=f"lse {dt}")
    check(lambda t: evoxc.logsumexp(t, (0, 2)), rand((3, 2, 4), "float32"))
    check(lambda t: evoxc.logsumexp(t, 0), np.zeros((0, 3), "float32"), what="lse empty is -inf")


# ---------------------------------------------------------------- dot and dot_general

@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 1, 3, 4), (5, 4, 2)),
                                   ((4, 2, 3), (3, 5)), ((3,), (2, 3, 4)), ((5, 4), (3, 2, 4, 6)),
                                   ((2, 3, 0, 4), (2, 3, 4, 5)), ((3, 2, 0), (3, 0, 4)), ((1, 6, 7), (4, 7, 1))])
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int8", "uint32"])
def test_dot_matmul_shapes(sa, sb, dt):
    check(evoxc.dot, rand(sa, dt), rand(sb, dt), what=f"dot {dt} {sa} {sb}")


def test_dot_integer_wraps():
    a = np.full((2, 8), 100, "int8")
    check(evoxc.dot, a, a.T.copy())
    u = np.full((3, 4), 2**31 + 5, "uint32")
    check(evoxc.dot, u, u.T.copy())


def test_dot_general_batch_and_multi_contracting():
    a, b = rand((2, 3, 4, 5)), rand((5, 2, 4, 6))
    check(lambda x, y: evoxc.dot_general(x, y, [2, 3], [2, 0], [0], [1]), a, b)
    check(lambda x, y: evoxc.dot_general(x, y, [], []), rand((2, 3)), rand((4,)))  # outer product
    check(lambda x, y: evoxc.dot_general(x, y, [0], [0]), rand((0, 3)), rand((0, 2)))  # empty contraction: 0
    ai, bi = rand((2, 3, 4), "int16"), rand((2, 4, 3), "int16")
    check(lambda x, y: evoxc.dot_general(x, y, [2], [1], [0], [0]), ai, bi)


# ---------------------------------------------------------------- conv

@pytest.mark.parametrize("kw", [
    dict(window_strides=[2, 1]),
    dict(padding=[(1, 2), (0, 1)]),
    dict(padding=[(-1, 0), (2, -2)]),  # negative padding crops
    dict(padding=[(-1, 1), (1, -1)], lhs_dilation=[2, 1]),
    dict(lhs_dilation=[2, 3], rhs_dilation=[1, 2], padding=[(1, 1), (2, 0)]),
    dict(window_strides=[2, 3], rhs_dilation=[2, 1]),
])
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int32", "uint8"])
def test_conv_attributes(kw, dt):
    x, w = rand((2, 2, 6, 7), dt), rand((3, 2, 2, 3), dt)
    check(lambda a, b: evoxc.conv_general(a, b, **kw), x, w, what=f"conv {dt} {kw}")


def test_conv_groups_1d_3d_and_empty():
    # Integer-valued floats: every summation order gives the same sums, so the grouping is checked exactly (random
    # floats cancelled past float32's tolerance on one draw: the loop nest and the interpreter add in other orders).
    whole = lambda shape: rand(shape, "int8").astype("float32")  # noqa: E731
    check(lambda a, b: evoxc.conv_general(a, b, feature_group_count=2), whole((2, 4, 5, 5)), whole((6, 2, 3, 3)))
    check(lambda a, b: evoxc.conv_general(a, b, window_strides=[2], padding=[(1, 1)]), rand((1, 3, 9)), rand((2, 3, 4)))
    check(lambda a, b: evoxc.conv_general(a, b, padding=[(0, 1), (1, 0), (0, 0)]), rand((1, 2, 3, 4, 3)),
          rand((2, 2, 2, 2, 2)))
    check(lambda a, b: evoxc.conv_general(a, b), rand((1, 2, 2, 2)), rand((3, 2, 3, 3)), what="window too big: empty")
    check(lambda a, b: evoxc.conv_general(a, b), rand((1, 0, 4, 4)), rand((3, 0, 2, 2)), what="no features: zeros")
    check(lambda a, b: evoxc.conv_general(a, b, padding=[(2, 2), (2, 2)]), rand((1, 2, 0, 3)), rand((3, 2, 2, 2)),
          what="empty input, padded: zeros")
    check(lambda a, b: evoxc.conv_general(a, b), np.full((1, 4, 3, 3), 100, "int8"), np.full((1, 4, 3, 3), 3, "int8"))


# ---------------------------------------------------------------- trace

def test_trace_offsets_axes_and_wrap():
    x = rand((3, 4, 5), "float32")
    for off in (0, 1, -2, 4, -3, 10, -(2**62)):
        check(lambda t: evoxc.linalg.trace(t, off, 2, 0), x, what=f"trace offset {off}")
    check(lambda t: evoxc.linalg.trace(t, 1, 1, 2), rand((2, 3, 3), "int32"))
    check(lambda t: evoxc.linalg.trace(t), np.full((3, 3), 100, "int8").astype("int8"))
    check(lambda t: evoxc.linalg.trace(t), np.array([[1.0, NAN], [INF, 2.0]], "float16"),
          what="off-diagonal NaN ignored")


# ---------------------------------------------------------------- cholesky and triangular_solve

@pytest.mark.parametrize("dt", ["float32", "float64", "float16"])
def test_cholesky_lower_upper_and_failures(dt):
    a = spd(4, (3,), dt)
    for upper in (False, True):
        check(lambda t: evoxc.cholesky(t, upper), a, what=f"cholesky {dt} upper={upper}")
    bad = a.copy()
    bad[1] = -bad[1]  # not positive definite: that matrix only is NaN
    bad[2, 0, 3] = NAN  # in the upper triangle, which the lower factor does not read
    for upper in (False, True):
        check(lambda t: evoxc.cholesky(t, upper), bad, what=f"cholesky failure {dt} upper={upper}")
    singular = np.array([[1.0, 1.0], [1.0, 1.0]], dt)  # a zero pivot: potrf fails
    check(evoxc.cholesky, singular)


@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_triangular_solve_attributes(left, lower, trans, unit):
    a = well_conditioned(4, (2,))
    a[:, 0, 3] = NAN  # outside the lower triangle
    a[:, 3, 0] = NAN  # outside the upper triangle
    if not lower:
        a[:, 0, 3], a[:, 3, 0] = 0.5, NAN
    else:
        a[:, 0, 3], a[:, 3, 0] = NAN, 0.5
    if unit:
        a[:, 1, 1] = NAN  # the diagonal is not read
    b = rand((2, 4, 3) if left else (2, 3, 4), "float64")
    for dt in ["float64", "float32"]:
        check(lambda x, y: evoxc.triangular_solve(x, y, left, lower, trans, unit), a.astype(dt), b.astype(dt),
              what=f"trsm {dt} {left} {lower} {trans} {unit}")


# ---------------------------------------------------------------- LU family

@pytest.mark.parametrize("dt", ["float64", "float32", "float16"])
def test_lu_family_batched(dt):
    a = well_conditioned(5, (2, 3), dt)
    b = rand((2, 3, 5, 2), dt)
    check(lambda x, y: (evoxc.solve(x, y), evoxc.inv(x), evoxc.det(x), *evoxc.slogdet(x), *evoxc.lu(x)), a, b,
          what=f"lu family {dt}")


def test_lu_pivoting_and_shapes():
    # Every step has to swap (the largest entry of each column sits low), and the determinant is negative.
    p = np.array([[0.0, 1.0, 2.0, 3.0], [1.0, 0.0, 5.0, 1.0], [4.0, 2.0, 0.0, 1.0], [9.0, 3.0, 1.0, 0.0]])
    check(lambda x: (*evoxc.lu(x), evoxc.det(x), *evoxc.slogdet(x), evoxc.inv(x)), p)
    for shape in [(3, 5), (5, 3), (1, 4), (4, 1), (2, 6, 4)]:
        check(lambda x: evoxc.lu(x), rand(shape, "float64"), what=f"lu {shape}")
    check(lambda x: (evoxc.det(x), *evoxc.slogdet(x)), np.zeros((2, 0, 0)), what="0x0: det 1, slogdet (1, 0)")


def test_lu_singular_and_nan():
    sing = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    check(lambda x: (*evoxc.lu(x), evoxc.det(x), *evoxc.slogdet(x)), sing, what="singular: a zero pivot")
    check(lambda x: (*evoxc.lu(x), evoxc.det(x), *evoxc.slogdet(x)), np.zeros((3, 3)), what="zero matrix")
    nan = well_conditioned(3)
    nan[1, 2] = NAN
    check(lambda x: (evoxc.det(x), *evoxc.slogdet(x), evoxc.inv(x)), nan, what="NaN propagates")


# ---------------------------------------------------------------- qr

@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 5, 2), (1, 3), (3, 1)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_shapes_and_modes(shape, mode):
    for dt in ["float64", "float32"]:
        check(lambda x: evoxc.qr(x, mode), rand(shape, dt), what=f"qr {shape} {mode} {dt}")


def test_qr_zero_and_negative_columns():
    a = np.array([[0.0, 1.0, 2.0], [0.0, -3.0, 1.0], [0.0, 2.0, -2.0]])  # a zero column: tau = 0, H = I
    check(lambda x: evoxc.qr(x, "complete"), a)
    check(lambda x: evoxc.qr(x), np.array([[-2.0, 1.0], [0.0, 3.0], [0.0, 0.0]]), what="x = 0 below alpha < 0")


# ---------------------------------------------------------------- matrix_exp

def test_matrix_exp_scaling_and_nan():
    small = rand((3, 3), "float64", scale=0.1)
    large = rand((3, 3), "float64", scale=0.1) + np.diag([8.0, -20.0, 3.0])  # several squarings
    both = np.stack([small, large, np.zeros((3, 3))])  # each matrix squares as often as its own norm asks
    check(evoxc.matrix_exp, both)
    check(evoxc.matrix_exp, both.astype("float32"))
    check(evoxc.matrix_exp, both[:2].astype("float16") / 4)
    nan = both.copy()
    nan[1, 0, 0] = INF
    check(evoxc.matrix_exp, nan, what="inf anywhere: that matrix is NaN")


def test_singular_solve_is_non_finite_where_the_interpreter_is():
    # A zero pivot divides by zero in the substitutions; the loops substitute entry by entry as LAPACK's trsm, so the
    # same entries are non-finite (which of inf and NaN may differ where LAPACK's kernels skip a zero multiplier).
    cases = [(np.array([[2.0, 0.0], [0.0, 0.0]]), np.array([[1.0], [1.0]])),
             (np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]), rand((3, 2), "float64")),
             (np.array([[0.0, 1.0], [0.0, 1.0]]), np.eye(2))]
    for a, b in cases:
        g = evoxc.trace(lambda x, y: (evoxc.solve(x, y), evoxc.inv(x)), spec(a), spec(b))
        exe = evoxc.load(evoxc.compile(evoxc.lower(g, "mlir")))
        args = [evoxc.tensor(a), evoxc.tensor(b)]
        got = [o.numpy() for o in evoxc.run(exe, *args)]
        want = [o.numpy() for o in evoxc.run(evoxc.build(g), *args)]
        for x, y in zip(got, want):
            assert not np.isfinite(y).all()
            np.testing.assert_array_equal(np.isfinite(x), np.isfinite(y))
            np.testing.assert_allclose(x[np.isfinite(y)], y[np.isfinite(y)], rtol=1e-12)


def test_inputs_are_not_written():
    # The factorizations update their matrices in place inside loops; the caller's inputs must stay as they were
    # (the mlir program runs first here, the interpreter after it on the same tensors).
    a, b = well_conditioned(3, (2,)), rand((2, 3, 2), "float64")
    for rank3 in (True, False):
        xs, ys = (a, b) if rank3 else (a[0].copy(), b[0].copy())
        perm = (0, 2, 1) if rank3 else (1, 0)
        fns = [lambda x, y: (*evoxc.lu(x), evoxc.solve(x, y), evoxc.inv(x), evoxc.det(x)),
               lambda x, y: (evoxc.cholesky(x @ evoxc.transpose(x, perm)), evoxc.cholesky(x), *evoxc.qr(x),
                             evoxc.matrix_exp(x)),
               lambda x, y: (evoxc.triangular_solve(x, y, True, True, False, False), evoxc.matrix_rank(x),
                             evoxc.cumsum(y, 1))]
        for fn in fns:
            g = evoxc.trace(fn, spec(xs), spec(ys))
            exe = evoxc.load(evoxc.compile(evoxc.lower(g, "mlir")))
            tx, ty = evoxc.tensor(xs), evoxc.tensor(ys)
            evoxc.run(exe, tx, ty)
            np.testing.assert_array_equal(tx.numpy(), xs)
            np.testing.assert_array_equal(ty.numpy(), ys)


# ---------------------------------------------------------------- norm and matrix_rank

@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, INF, -INF])
def test_matrix_norms(ord):
    for shape in [(3, 4), (4, 3), (2, 3, 3)]:
        for dt in ["float64", "float32", "float16"]:
            check(lambda x: evoxc.linalg.norm(x, ord, (-2, -1)), rand(shape, dt), what=f"norm {ord} {shape} {dt}")
    x = rand((2, 3, 3), "float64")
    x[0, 1, 1] = NAN
    check(lambda t: evoxc.linalg.norm(t, ord, (-2, -1)), x, what=f"norm {ord} NaN")
    check(lambda t: evoxc.linalg.norm(t, ord, (-2, -1)), np.zeros((2, 0, 3)), what=f"norm {ord} empty")


@pytest.mark.parametrize("p", [None, 0, 1, 2, 3, -1, 0.5, INF, -INF])
def test_vector_norms(p):
    for dt in ["float64", "float32", "float16"]:
        check(lambda x: evoxc.linalg.norm(x, p, -1), rand((3, 5), dt), what=f"vector norm {p} {dt}")
    x = np.array([[1.0, NAN, 2.0], [0.0, -0.0, 3.0]])
    check(lambda t: evoxc.linalg.norm(t, p, -1), x, what=f"vector norm {p} nan/zeros")
    check(lambda t: evoxc.linalg.norm(t, p, -1), np.zeros((2, 0)), what=f"vector norm {p} empty")


def test_matrix_rank_deficient_tolerances_and_nan():
    low = rand((4, 2), "float64") @ rand((2, 5), "float64")  # rank 2
    batch = np.stack([low, rand((4, 5), "float64"), np.zeros((4, 5))])
    check(evoxc.matrix_rank, batch)
    check(evoxc.matrix_rank, batch.astype("float32"))
    check(lambda x: evoxc.matrix_rank(x, tol=1.0), batch)
    check(lambda x: evoxc.matrix_rank(x, rtol=0.3), batch)
    check(evoxc.matrix_rank, low.T.copy(), what="wide")
    bad = batch.copy()
    bad[1, 0, 0] = NAN
    check(evoxc.matrix_rank, bad, what="NaN: rank 0")
    check(lambda x: (evoxc.matrix_rank(x), evoxc.linalg.norm(x, 2, (-2, -1))), np.diag([1.0, 1e-200, 1e200]),
          what="extreme scales")
    check(evoxc.matrix_rank, np.zeros((2, 0, 3)), what="empty")


@pytest.mark.parametrize("fn", [lambda x: evoxc.eigh(x), lambda x: evoxc.svd(x), lambda x: evoxc.linalg.svdvals(x)])
def test_deferred_ops_say_why(fn):
    g = evoxc.trace(fn, evoxc.TensorSpec((3, 3), evoxc.float32))
    with pytest.raises(evoxc.BackendError, match=r"has no mlir rule or decomposition in this build \(.*interp backend"):
        evoxc.lower(g, "mlir")


# ---------------------------------------------------------------- a large reduction at O0 and O2

@pytest.mark.parametrize("opt_level", ["O0", "O2"])
def test_large_row_sum_within_tolerance(opt_level):
    # 1024 x 1024, each row summed: O2 may reassociate (vectorise) the float sum, O0 sums in order; both stay within
    # the float32 tolerance of the interpreter's pairwise sum (positive terms, so no cancellation hides the error).
    x = RNG.random((1024, 1024)).astype("float32")
    check(lambda t: (evoxc.sum(t, 1), evoxc.mean(t, 1), evoxc.max(t, 1)), x, what=f"row sums {opt_level}",
          opt_level=opt_level)
    check(lambda t: evoxc.sum(t, 0), x, what=f"column sums {opt_level}", opt_level=opt_level)


# ---------------------------------------------------------------- symbolic shapes

B = evoxc.dim("B")


def test_symbolic_reductions_and_scans():
    x = rand((5, 3), "float32")
    sp = evoxc.TensorSpec((B, 3), evoxc.float32)
    check_symbolic(lambda t: (evoxc.sum(t, 0), evoxc.mean(t, 0), evoxc.max(t, 1, True), evoxc.argmax(t, 0),
                              evoxc.argmin(t, 1), evoxc.logsumexp(t, 0), evoxc.logsumexp(t, 0, True)), [sp], [x])
    check_symbolic(lambda t: (evoxc.cumsum(t, 0), evoxc.cummax(t, 0, True), evoxc.cumprod(t, 1)), [sp], [x])
    check_symbolic(lambda t: evoxc.cumsum(t, 0), [sp], [np.zeros((0, 3), "float32")], what="empty symbolic scan")


def test_symbolic_linear_algebra():
    a, b = well_conditioned(3, (4,)), rand((4, 3, 2), "float64")
    sa, sb = evoxc.TensorSpec((B, 3, 3), evoxc.float64), evoxc.TensorSpec((B, 3, 2), evoxc.float64)
    check_symbolic(lambda x, y: (evoxc.solve(x, y), evoxc.det(x), *evoxc.lu(x), evoxc.matmul(x, y),
                                 evoxc.linalg.trace(x), evoxc.cholesky(x @ evoxc.transpose(x, (0, 2, 1)))),
                   [sa, sb], [a, b])
    check_symbolic(lambda x: (*evoxc.qr(x), evoxc.matrix_exp(x), evoxc.inv(x), *evoxc.slogdet(x),
                              evoxc.linalg.norm(x, "fro", (-2, -1)), evoxc.linalg.norm(x, "nuc", (-2, -1)),
                              evoxc.matrix_rank(x)), [sa], [a])
    n = evoxc.dim("N")
    sn = evoxc.TensorSpec((n, n), evoxc.float64)
    m = well_conditioned(4)
    check_symbolic(lambda x: (evoxc.inv(x), *evoxc.lu(x), *evoxc.qr(x, "complete"), evoxc.det(x),
                              evoxc.triangular_solve(x, x @ x, True, True, False, False)), [sn], [m],
                   what="symbolic matrix extents")
    # The singular values (matrix_rank, norm ord 2/-2/nuc) come from their decomposition, a Jacobi iteration over
    # static matrix extents: a symbolic one is a BackendError naming the op and the remedy.
    for fn in (lambda x: evoxc.matrix_rank(x), lambda x: evoxc.linalg.norm(x, 2, (-2, -1))):
        with pytest.raises(evoxc.BackendError, match="decomposed for static matrix extents only.*interp backend"):
            evoxc.lower(evoxc.trace(fn, sn), "mlir")
    t = rand((2, 4, 3), "float64")
    check_symbolic(lambda x: (*evoxc.qr(x), evoxc.linalg.norm(x, -2, (-2, -1)), evoxc.matrix_rank(x)),
                   [evoxc.TensorSpec((B, 4, 3), evoxc.float64)], [t], what="tall symbolic batch")


def test_symbolic_dot_conv_and_empty_batches():
    check_symbolic(lambda x, y: (evoxc.matmul(x, y), evoxc.dot_general(x, y, [1], [0])),
                   [evoxc.TensorSpec((B, 3), evoxc.float32), evoxc.TensorSpec((3, 4), evoxc.float32)],
                   [rand((5, 3)), rand((3, 4))])
    for n in (5, 0):  # a stack of matrices (gemm per matrix) with a symbolic batch extent, empty included
        check_symbolic(evoxc.matmul, [evoxc.TensorSpec((B, 3, 4), evoxc.float64), evoxc.TensorSpec((4, B), evoxc.float64)],
                       [rand((n, 3, 4), "float64"), rand((4, n), "float64")], what=f"symbolic stack of {n}")
    x, w = rand((3, 2, 6, 5), "float32"), rand((4, 2, 3, 2), "float32")
    check_symbolic(lambda a, b: (evoxc.conv_general(a, b, padding=[(1, -1), (0, 2)], lhs_dilation=[2, 1]),
                                 evoxc.conv_general(a, b, window_strides=[2, 2])),
                   [evoxc.TensorSpec((B, 2, 6, 5), evoxc.float32), spec(w)], [x, w])
    check_symbolic(lambda a, b: evoxc.conv_general(a, b, padding=[(1, 0), (0, 1)]),
                   [evoxc.TensorSpec((B, 2, 6, 5), evoxc.float32), spec(w)], [x[:0], w], what="symbolic empty batch")
    for h in (2, 9):  # a symbolic spatial extent: the padded input's extent is an expression of it
        check_symbolic(lambda a, b: evoxc.conv_general(a, b, padding=[(1, -1), (0, 2)], lhs_dilation=[2, 1],
                                                       rhs_dilation=[1, 2]),
                       [evoxc.TensorSpec((2, 2, B, 5), evoxc.float32), spec(w)], [rand((2, 2, h, 5)), w],
                       what=f"symbolic spatial extent {h}")
    # An empty batch, one op per graph, so a failure names its op (several ops' empty results would be one value
    # returned several times, which test_mlir_abi.py covers).
    e = np.zeros((0, 3, 3))
    for fn in (evoxc.det, evoxc.inv, evoxc.lu, evoxc.qr, evoxc.matrix_exp, evoxc.cholesky, evoxc.slogdet,
               evoxc.matrix_rank, lambda a: evoxc.linalg.norm(a, "fro", (-2, -1)),
               lambda a: evoxc.linalg.norm(a, "nuc", (-2, -1))):
        check(fn, e, what="empty batch")


# ---------------------------------------------------------------- golden text

def _text(fn, *specs):
    return evoxc.lower(evoxc.trace(fn, *specs), "mlir").text


F32 = evoxc.float32


def test_golden_reductions():
    t = _text(lambda x: evoxc.sum(x, 1), evoxc.TensorSpec((2, 3), F32))
    assert 'iterator_types = ["parallel", "reduction"]' in t
    assert "arith.addf" in t and "fastmath<reassoc>" in t and "linalg.fill" in t
    t = _text(lambda x: evoxc.sum(x, 1, True), evoxc.TensorSpec((2, 3), F32))
    assert "affine_map<(d0, d1) -> (d0, 0)>" in t  # keepdims: the unit axis written by the output map
    t = _text(lambda x: evoxc.max(x, 0), evoxc.TensorSpec((3,), F32))
    assert "arith.maximumf" in t  # NaN propagates
    t = _text(lambda x: evoxc.sum(x, 0), evoxc.TensorSpec((3,), evoxc.float16))
    assert "arith.extf" in t and "tensor<f32>" in t  # half floats accumulate in float32


def test_golden_scan_dot_and_loops():
    t = _text(lambda x: evoxc.cumsum(x, 1, True), evoxc.TensorSpec((2, 5), F32))
    assert "scf.for" in t and "tensor.extract_slice" in t and "tensor.insert_slice" in t
    t = _text(evoxc.matmul, evoxc.TensorSpec((7, 2, 3), evoxc.int32), evoxc.TensorSpec((3, 4), evoxc.int32))
    assert "affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>" in t and "affine_map<(d0, d1, d2, d3) -> (d3, d2)>" in t
    # float stacks of matrices: one gemm per matrix in a loop over the batch dims
    t = _text(evoxc.matmul, evoxc.TensorSpec((7, 2, 3), F32), evoxc.TensorSpec((3, 4), F32))
    assert "scf.for" in t and "@evoxc_gemm_f32" in t and "linalg.generic" not in t
    # ungrouped float convs: patches gathered through an affine read, then gemm; other convs read with bounds checks
    t = _text(evoxc.conv_general, evoxc.TensorSpec((1, 2, 5, 5), F32), evoxc.TensorSpec((3, 2, 2, 2), F32))
    assert "@evoxc_gemm_f32" in t and "tensor.collapse_shape" in t and "tensor.extract " not in t
    t = _text(evoxc.conv_general, evoxc.TensorSpec((1, 2, 5, 5), evoxc.int32),
              evoxc.TensorSpec((3, 2, 2, 2), evoxc.int32))
    assert "gemm" not in t and "tensor.extract " in t
    t = _text(evoxc.solve, evoxc.TensorSpec((3, 3), F32), evoxc.TensorSpec((3, 3), F32))
    assert "scf.for" in t and "tensor.insert" in t


def test_a_chain_of_matmuls_never_reads_an_overwritten_operand():
    # A read by three matmuls (BLAS calls reading buffers of tensors) with an elementwise loop between them: two
    # reads of one tensor once merged into the first by CSE, so the loop wrote into A's buffer in place and the last
    # matmul read the loop's values (1e3 off here; matrix_exp's decomposition by 1e17).
    def f(a0, s):
        a = a0 * s * s
        a2 = a @ a
        return a @ (a2 @ (a2 * 3.0 + a * 2.0))

    rng = np.random.default_rng(0)
    check_fn(f, rng.standard_normal((3, 3)) * 2, np.array(1.0), tolerance=(1e-12, 1e-9))
