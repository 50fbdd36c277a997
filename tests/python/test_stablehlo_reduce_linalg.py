"""StableHLO export of the reduction and linear-algebra ops, beyond the catalogue's samples: edge values (NaN, +-inf,
empty sets, integer wrap-around), attributes other than the sample's, bool operands, symbolic shapes, the
LU/QR/Jacobi loops on matrices that exercise pivoting, singularity and rank deficiency, and golden checks of the
exported text. Each case is exported, parsed and verified by jaxlib, compiled and run by XLA's CPU compiler, and
compared with the interpreter (exact for ints and bools, stablehlo_util.TOLERANCE for floats)."""

import re

import numpy as np
import pytest

from stablehlo_util import check_graph, verify_text, xla_run

import evoxc


RNG = np.random.default_rng(20240611)
NAN, INF = np.nan, np.inf

DT = {"bool": evoxc.bool_, "int8": evoxc.int8, "int16": evoxc.int16, "int32": evoxc.int32, "int64": evoxc.int64,
      "uint8": evoxc.uint8, "uint16": evoxc.uint16, "uint32": evoxc.uint32, "uint64": evoxc.uint64,
      "float16": evoxc.float16, "float32": evoxc.float32, "float64": evoxc.float64}


def spec(a):
    return evoxc.TensorSpec(a.shape, DT[str(a.dtype)])


def check(fn, *arrays, what=None):
    """Traces fn on specs of the arrays and checks the export against the interpreter on them."""
    g = evoxc.trace(fn, *[spec(a) for a in arrays])
    return check_graph(g, [evoxc.tensor(a) for a in arrays], what or getattr(fn, "__name__", "case"))


def check_symbolic(fn, specs, arrays, what="symbolic"):
    """A graph with symbolic extents: the exported text keeps `?` extents (check_graph verifies it as it is and
    refines it to the arrays' shapes for XLA, as jax.export's shape polymorphism does)."""
    g = evoxc.trace(fn, *specs)
    text = check_graph(g, arrays, what)
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
    check(lambda t: (evoxc.any(t, 0), evoxc.all(t, 0), evoxc.max(t, 0), evoxc.min(t, 0)), np.zeros((0, 2), bool))


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
    assert "tensor<4096xf32>" in text


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
    for ax in (0, 1, 2):
        for rev in (False, True):
            check(lambda t: SCANS[name](t, ax, rev), x, what=f"{name} {dt} axis {ax} reverse {rev}")


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
                                   ((4, 2, 3), (3, 5)), ((3,), (2, 3, 4))])
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
    check(lambda a, b: evoxc.conv_general(a, b, feature_group_count=2), rand((2, 4, 5, 5)), rand((6, 2, 3, 3)))
    check(lambda a, b: evoxc.conv_general(a, b, window_strides=[2], padding=[(1, 1)]), rand((1, 3, 9)), rand((2, 3, 4)))
    check(lambda a, b: evoxc.conv_general(a, b, padding=[(0, 1), (1, 0), (0, 0)]), rand((1, 2, 3, 4, 3)),
          rand((2, 2, 2, 2, 2)))
    check(lambda a, b: evoxc.conv_general(a, b), rand((1, 2, 2, 2)), rand((3, 2, 3, 3)), what="window too big: empty")
    check(lambda a, b: evoxc.conv_general(a, b), rand((1, 0, 4, 4)), rand((3, 0, 2, 2)), what="no features: zeros")
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


def test_singular_solve_is_non_finite_where_the_interpreter_is():
    # A zero pivot divides by zero in the substitutions. LAPACK's trsm substitutes entry by entry (x1 = 1 / 0 = inf,
    # then x0 = (1 - 0 * inf) / 2 = NaN); XLA's triangular-solve expander multiplies by the inverse of the diagonal
    # block, so the inf arrives as NaN. The same entries are non-finite; which of inf and NaN each is may differ.
    cases = [(np.array([[2.0, 0.0], [0.0, 0.0]]), np.array([[1.0], [1.0]])),
             (np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]), rand((3, 2), "float64")),
             (np.array([[0.0, 1.0], [0.0, 1.0]]), np.eye(2))]
    for a, b in cases:
        g = evoxc.trace(lambda x, y: (evoxc.solve(x, y), evoxc.inv(x)), spec(a), spec(b))
        text = evoxc.export_stablehlo(g)
        assert verify_text(text) is None
        got = xla_run(text, [a, b])
        want = [o.numpy() for o in evoxc.run(evoxc.build(g), evoxc.tensor(a), evoxc.tensor(b))]
        for x, y in zip(got, want):
            assert not np.isfinite(y).all()
            np.testing.assert_array_equal(np.isfinite(x), np.isfinite(y))
            np.testing.assert_allclose(x[np.isfinite(y)], y[np.isfinite(y)], rtol=1e-12)


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


# ---------------------------------------------------------------- norm and matrix_rank

@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, INF, -INF])
def test_matrix_norms(ord):
    for shape in [(3, 4), (4, 3), (2, 3, 3)]:
        for dt in ["float64", "float32", "float16"]:
            check(lambda x: evoxc.linalg.norm(x, ord, (-2, -1)), rand(shape, dt), what=f"norm {ord} {shape} {dt}")
    x = rand((2, 3, 3), "float64")
    x[0, 1, 1] = NAN
    check(lambda t: evoxc.linalg.norm(t, ord, (-2, -1)), x, what=f"norm {ord} NaN")


@pytest.mark.parametrize("p", [None, 0, 1, 2, 3, -1, 0.5, INF, -INF])
def test_vector_norms(p):
    for dt in ["float64", "float32"]:
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


# ---------------------------------------------------------------- symbolic shapes

B = evoxc.dim("B")


def test_symbolic_reductions_and_scans():
    x = rand((5, 3), "float32")
    sp = evoxc.TensorSpec((B, 3), evoxc.float32)
    check_symbolic(lambda t: (evoxc.sum(t, 0), evoxc.mean(t, 0), evoxc.max(t, 1, True), evoxc.argmax(t, 0),
                              evoxc.argmin(t, 1), evoxc.logsumexp(t, 0)), [sp], [x])
    # A scan over a symbolic axis is the masked O(n^2) form; over a static one, reduce_window.
    text = check_symbolic(lambda t: (evoxc.cumsum(t, 0), evoxc.cummax(t, 0, True), evoxc.cumprod(t, 1)), [sp], [x])
    assert '"stablehlo.reduce_window"' in text and '"stablehlo.dynamic_iota"' in text


def test_symbolic_linear_algebra():
    a, b = well_conditioned(3, (4,)), rand((4, 3, 2), "float64")
    sa, sb = evoxc.TensorSpec((B, 3, 3), evoxc.float64), evoxc.TensorSpec((B, 3, 2), evoxc.float64)
    check_symbolic(lambda x, y: (evoxc.solve(x, y), evoxc.det(x), *evoxc.lu(x), evoxc.matmul(x, y),
                                 evoxc.linalg.trace(x), evoxc.cholesky(x @ evoxc.transpose(x, (0, 2, 1)))),
                   [sa, sb], [a, b])
    check_symbolic(lambda x: (evoxc.qr(x), evoxc.matrix_exp(x), evoxc.linalg.norm(x, "nuc", (-2, -1))), [sa], [a])


def test_symbolic_tall_qr_conv_and_empty_batches():
    t = rand((2, 4, 3), "float64")
    st = evoxc.TensorSpec((B, 4, 3), evoxc.float64)
    text = check_symbolic(lambda x: (evoxc.qr(x), evoxc.linalg.norm(x, 2, (-2, -1)), evoxc.matrix_rank(x)), [st], [t])
    assert '"stablehlo.dynamic_gather"' in text  # R's first 3 of 4 rows (the qr decomposition's take), symbolic batch
    x, w = rand((3, 2, 6, 5), "float32"), rand((4, 2, 3, 2), "float32")
    check_symbolic(lambda a, b: (evoxc.conv_general(a, b, padding=[(1, -1), (0, 2)], lhs_dilation=[2, 1]),
                                 evoxc.conv_general(a, b, window_strides=[2, 2])),
                   [evoxc.TensorSpec((B, 2, 6, 5), evoxc.float32), spec(w)], [x, w])
    e = np.zeros((0, 3, 3))
    check(lambda a: (evoxc.det(a), evoxc.inv(a), *evoxc.lu(a), *evoxc.qr(a), evoxc.matrix_exp(a), evoxc.cholesky(a),
                     evoxc.matrix_rank(a), evoxc.linalg.norm(a, "nuc", (-2, -1))), e, what="empty batch")


def test_symbolic_matrix_extent_in_singular_values_is_refused():
    n = evoxc.dim("N")
    g = evoxc.trace(evoxc.matrix_rank, evoxc.TensorSpec((n, 3), evoxc.float32))
    with pytest.raises(evoxc.BackendError, match="static matrix extents"):
        evoxc.export_stablehlo(g)


# ---------------------------------------------------------------- deferrals and golden text

@pytest.mark.parametrize("fn", [lambda x: evoxc.eigh(x), lambda x: evoxc.svd(x), lambda x: evoxc.linalg.svdvals(x)])
def test_deferred_ops_say_why(fn):
    g = evoxc.trace(fn, evoxc.TensorSpec((3, 3), evoxc.float32))
    with pytest.raises(evoxc.BackendError, match="has no stablehlo rule.*LAPACK"):
        evoxc.export_stablehlo(g)


def _text(fn, *specs):
    return evoxc.export_stablehlo(evoxc.trace(fn, *specs))


F32 = evoxc.float32


def test_golden_reduce_and_argmax():
    t = _text(lambda x: evoxc.sum(x, 1), evoxc.TensorSpec((2, 3), F32))
    assert re.search(r'"stablehlo.reduce"\(%arg0, %v\d+\) \(', t)
    assert "stablehlo.add" in t and "{dimensions = array<i64: 1>}" in t
    t = _text(lambda x: evoxc.argmax(x, 0), evoxc.TensorSpec((4,), F32))
    assert re.search(r'%v\d+:2 = "stablehlo.reduce"', t)  # variadic: (value, index)
    assert "(tensor<4xf32>, tensor<4xi64>, tensor<f32>, tensor<i64>) -> (tensor<f32>, tensor<i64>)" in t


def test_golden_scan_dot_conv():
    t = _text(lambda x: evoxc.cumsum(x, 1, True), evoxc.TensorSpec((2, 5), F32))
    assert "padding = dense<[[0, 0], [0, 4]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 5>" in t
    t = _text(evoxc.matmul, evoxc.TensorSpec((7, 2, 3), F32), evoxc.TensorSpec((3, 4), F32))
    assert ("#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
            "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>") in t
    assert "#stablehlo<precision HIGHEST>" in t
    t = _text(lambda x: evoxc.sum(x, 0), evoxc.TensorSpec((3,), evoxc.float16))
    assert '"stablehlo.convert"(%arg0) : (tensor<3xf16>) -> tensor<3xf32>' in t
    t = _text(lambda a, b: evoxc.conv_general(a, b, window_strides=[2, 1], feature_group_count=2),
              evoxc.TensorSpec((1, 4, 5, 5), F32), evoxc.TensorSpec((2, 2, 3, 3), F32))
    assert "dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>" in t
    assert "feature_group_count = 2 : i64" in t and "window_strides = array<i64: 2, 1>" in t


def test_golden_linalg():
    sq = evoxc.TensorSpec((3, 3), F32)
    assert '"stablehlo.cholesky"' in _text(evoxc.cholesky, sq)
    t = _text(lambda a, b: evoxc.triangular_solve(a, b, True, True, True, False), sq, sq)
    assert "transpose_a = #stablehlo<transpose TRANSPOSE>" in t
    t = _text(evoxc.solve, sq, sq)
    assert '"stablehlo.while"' in t and t.count('"stablehlo.triangular_solve"') == 2
