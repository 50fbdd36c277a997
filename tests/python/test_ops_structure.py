# Tests of the structure bindings (reshape ... pad, sort, scans, conv) against numpy on the interpreter.
import itertools
import math

import numpy as np
import pytest

import evoxc
import oputil

RNG = np.random.default_rng(4321)


run = oputil.run
rand = oputil.make_rand(RNG)


def assert_exact(got, want):
    """Same dtype, same shape and bitwise-equal values (NaN == NaN, -0.0 != 0.0)."""
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)


DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.0, np.nan], np.float32)


# ---------------------------------------------------------------- shape and layout


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,new", [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((2, 3, 4), (4, -1, 2)), ((0, 3), (3, 0)), ((6,), (2, 3))]
)
def test_reshape(dtype, shape, new):
    x = rand(shape, dtype)
    assert_exact(run(lambda a: evoxc.reshape(a, new), x), x.reshape(new))


def test_reshape_lone_int_and_bad():
    x = rand((2, 3), np.float32)
    assert_exact(run(lambda a: evoxc.reshape(a, -1), x), x.reshape(-1))
    with pytest.raises(ValueError):  # ShapeError: 6 elements do not fill 4
        run(lambda a: evoxc.reshape(a, (4, -1)), x)


@pytest.mark.parametrize("perm", [None, (1, 0, 2), (2, 0, 1), (-1, 0, 1)])
def test_transpose(perm):
    x = rand((2, 3, 4), np.int32)
    assert_exact(run(lambda a: evoxc.transpose(a, perm), x), np.transpose(x, perm))
    assert_exact(run(lambda a: evoxc.transpose(a, axes=perm), x), np.transpose(x, perm))


def test_transpose_perm_and_axes():
    x = rand((2, 3), np.float32)
    with pytest.raises(TypeError):
        run(lambda a: evoxc.transpose(a, (1, 0), axes=(1, 0)), x)


@pytest.mark.parametrize("shape,target", [((3,), (2, 3)), ((1, 3), (4, 3)), ((2, 1), (2, 5)), ((), (2, 2)), ((1,), (0,))])
def test_broadcast_to(shape, target):
    x = rand(shape, np.float32)
    assert_exact(run(lambda a: evoxc.broadcast_to(a, target), x), np.broadcast_to(x, target))


def test_broadcast_to_scalar_and_bad():
    got = run(lambda a: evoxc.broadcast_to(7, (2, 3)), np.zeros(2, np.int64))  # a weak int scalar: int64
    assert_exact(got, np.full((2, 3), 7, np.int64))
    with pytest.raises(ValueError):
        run(lambda a: evoxc.broadcast_to(a, (4,)), np.zeros(3, np.float32))


def test_broadcast_in_dim():
    x = rand((3, 1), np.float32)
    got = run(lambda a: evoxc.broadcast_in_dim(a, (2, 3, 4), [1, 2]), x)
    assert_exact(got, np.broadcast_to(x[None], (2, 3, 4)))
    got = run(lambda a: evoxc.broadcast_in_dim(a, (3, 5, 2), [0, 2]), rand((3, 2), np.int32))
    assert got.shape == (3, 5, 2)


@pytest.mark.parametrize("axes", [0, -1, (0, 2), (1,), (-1, 0)])
def test_expand_dims(axes):
    x = rand((2, 3), np.float64)
    assert_exact(run(lambda a: evoxc.expand_dims(a, axes), x), np.expand_dims(x, axes))


@pytest.mark.parametrize("axes", [None, 0, (0, 2), -1])
def test_squeeze(axes):
    x = rand((1, 3, 1), np.uint8)
    assert_exact(run(lambda a: evoxc.squeeze(a, axes), x), np.squeeze(x, axes))


def test_squeeze_non_unit_axis():
    with pytest.raises(ValueError):
        run(lambda a: evoxc.squeeze(a, 1), rand((1, 3), np.float32))


def test_ravel_swapaxes_moveaxis():
    x = rand((2, 3, 4), np.float32)
    assert_exact(run(evoxc.ravel, x), np.ravel(x))
    assert_exact(run(lambda a: evoxc.swapaxes(a, 0, -1), x), np.swapaxes(x, 0, -1))
    assert_exact(run(lambda a: evoxc.swapaxes(a, 1, 1), x), x)
    for src, dst in [(0, -1), (-1, 0), ((0, 1), (-1, -2)), ([2, 0], [0, 1]), ((), ())]:
        assert_exact(run(lambda a: evoxc.moveaxis(a, src, dst), x), np.moveaxis(x, src, dst))
    with pytest.raises(ValueError):
        run(lambda a: evoxc.moveaxis(a, 3, 0), x)
    with pytest.raises(ValueError):
        run(lambda a: evoxc.moveaxis(a, (0, 0), (1, 2)), x)


# ---------------------------------------------------------------- slicing and joining


@pytest.mark.parametrize(
    "start,limit,strides",
    [([0, 1], [2, 3], None), ([1], [3], None), ([0, 0], [3, 5], [2, 2]), ([-2, -4], [3, -1], None), ([1, 2], [1, 2], None)],
)
def test_slice(start, limit, strides):
    x = rand((3, 5), np.int64)
    idx = tuple(slice(s, l, None if strides is None else strides[i]) for i, (s, l) in enumerate(zip(start, limit)))
    assert_exact(run(lambda a: evoxc.slice(a, start, limit, strides), x), x[idx])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_stack(dtype, axis):
    a, b, c = rand((2, 3), dtype), rand((2, 3), dtype), rand((2, 3), dtype)
    assert_exact(run(lambda *xs: evoxc.concatenate(list(xs), axis), a, b, c), np.concatenate([a, b, c], axis))
    assert_exact(run(lambda *xs: evoxc.stack(xs, axis=axis), a, b, c), np.stack([a, b, c], axis))


def test_concatenate_uneven_and_empty():
    a, b = rand((2, 3), np.float32), rand((0, 3), np.float32)
    assert_exact(run(lambda x, y: evoxc.concatenate([x, y, x]), a, b), np.concatenate([a, b, a]))
    c = rand((4, 3), np.float32)
    assert_exact(run(lambda x, y: evoxc.concatenate((x, y), axis=0), a, c), np.concatenate([a, c]))
    with pytest.raises(ValueError):
        run(lambda x, y: evoxc.concatenate([x, y], axis=1), a, c)


def test_hstack_vstack():
    v, w = rand((3,), np.int32), rand((4,), np.int32)
    assert_exact(run(lambda a, b: evoxc.hstack([a, b]), v, w), np.hstack([v, w]))
    assert_exact(run(lambda a, b: evoxc.vstack([a, b]), v, v), np.vstack([v, v]))
    m, n = rand((2, 3), np.float32), rand((2, 1), np.float32)
    assert_exact(run(lambda a, b: evoxc.hstack([a, b]), m, n), np.hstack([m, n]))
    k = rand((1, 3), np.float32)
    assert_exact(run(lambda a, b, c: evoxc.vstack([a, b, c]), m, k, v.astype(np.float32)), np.vstack([m, k, v.astype(np.float32)]))
    s = np.array(5, np.int32)
    assert_exact(run(lambda a, b: evoxc.hstack([a, b]), s, v), np.hstack([s, v]))


@pytest.mark.parametrize("arg", [3, [1, 4], [0, 2, 2, 5], [-2], [10]])
@pytest.mark.parametrize("axis", [0, 1])
def test_split(arg, axis):
    x = rand((6, 6), np.float32)
    got = run(lambda a: evoxc.split(a, arg, axis), x)
    want = np.split(x, arg, axis)
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        assert_exact(g, w)


@pytest.mark.parametrize("arg", [4, 1, 7, [2, 3]])
def test_array_split(arg):
    x = rand((7, 2), np.int64)
    got = run(lambda a: evoxc.array_split(a, arg), x)
    want = np.array_split(x, arg)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_exact(g, w)


def test_split_uneven():
    with pytest.raises(ValueError):  # ShapeError, as numpy's ValueError
        run(lambda a: evoxc.split(a, 4), rand((6,), np.float32))
    got = run(lambda a: evoxc.split(a, sections=2, axis=-1), rand((2, 4), np.float32))
    assert [g.shape for g in got] == [(2, 2), (2, 2)]


# ---------------------------------------------------------------- padding

PAD_WIDTHS = [0, 2, (1,), (1, 2), ((1, 2),), ((0, 1), (2, 0)), [[3, 3], [1, 4]], ((2,), (1,)), np.array([[1, 0], [0, 2]])]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
@pytest.mark.parametrize("pw", PAD_WIDTHS, ids=str)
def test_pad(mode, pw):
    x = rand((3, 4), np.int32)
    assert_exact(run(lambda a: evoxc.pad(a, pw, mode), x), np.pad(x, pw, mode))


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "edge"])
def test_pad_wider_than_axis(mode):
    # numpy pads iteratively; evoxc's periodic rule gives the same result (docs/semantics.md)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    assert_exact(run(lambda a: evoxc.pad(a, 5, mode), x), np.pad(x, 5, mode))
    y = np.array([7], np.int64)
    assert_exact(run(lambda a: evoxc.pad(a, (2, 3), mode), y), np.pad(y, (2, 3), mode))


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_constant_value(dtype):
    x = rand((2, 3), dtype)
    v = True if dtype == np.bool_ else 5
    got = run(lambda a: evoxc.pad(a, ((1, 0), (0, 2)), constant_value=v), x)
    assert_exact(got, np.pad(x, ((1, 0), (0, 2)), constant_values=v))


def test_pad_float_specials_and_empty():
    assert_exact(run(lambda a: evoxc.pad(a, 2, "reflect"), SPECIALS), np.pad(SPECIALS, 2, "reflect"))
    assert_exact(run(lambda a: evoxc.pad(a, 1, constant_value=-np.inf), SPECIALS), np.pad(SPECIALS, 1, constant_values=-np.inf))
    e = np.zeros((0, 2), np.float32)
    assert_exact(run(lambda a: evoxc.pad(a, 1), e), np.pad(e, 1))


def test_pad_negative_crops():
    # evoxc extension: negative widths crop (numpy refuses them)
    x = rand((5, 6), np.float32)
    assert_exact(run(lambda a: evoxc.pad(a, ((-1, 2), (1, -3))), x), np.pad(x[1:, :-3], ((0, 2), (1, 0))))


def test_pad_bad_args():
    x = rand((3,), np.float32)
    with pytest.raises(TypeError):
        run(lambda a: evoxc.pad(a, "wide"), x)
    with pytest.raises(TypeError):
        run(lambda a: evoxc.pad(a, (1, 2, 3)), x)
    with pytest.raises(Exception):
        run(lambda a: evoxc.pad(a, 1, "linear_ramp"), x)


def test_pad_general():
    x = rand((3, 4), np.int32)
    got = run(lambda a: evoxc.pad_general(a, -1, [1, 0], [2, -1], [1, 2]), x)
    # reference: interior padding by scattering into a larger array, then low/high (negative crops)
    inner = np.full((3 + 2 * 1, 4 + 3 * 2), -1, np.int32)
    inner[::2, ::3] = x
    want = np.pad(inner, ((1, 2), (0, 0)), constant_values=-1)[:, :-1]
    assert_exact(got, want)
    assert_exact(run(lambda a: evoxc.pad_general(a, 0, [1, 1], [0, 0]), x), np.pad(x, ((1, 0), (1, 0))))


# ---------------------------------------------------------------- tril, triu, diagonal, flip, roll, tile, repeat


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (2, 3, 4), (4,), (0, 3)])
def test_tril_triu(k, shape):
    x = rand(shape, np.float32)
    assert_exact(run(lambda a: evoxc.tril(a, k), x), np.tril(x, k))
    assert_exact(run(lambda a: evoxc.triu(a, k=k), x), np.triu(x, k))


@pytest.mark.parametrize("offset,axis1,axis2", [(0, 0, 1), (1, 0, 1), (-1, 0, 1), (0, 1, 2), (2, -1, 0), (5, 0, 1)])
def test_diagonal(offset, axis1, axis2):
    x = rand((3, 4, 5), np.int64)
    assert_exact(run(lambda a: evoxc.diagonal(a, offset, axis1, axis2), x), np.diagonal(x, offset, axis1, axis2))


@pytest.mark.parametrize("axes", [None, 0, -1, (0, 2), ()])
def test_flip(axes):
    x = rand((2, 3, 4), np.float64)
    assert_exact(run(lambda a: evoxc.flip(a, axes), x), np.flip(x, axes))


@pytest.mark.parametrize(
    "shift,axis",
    [(1, None), (-7, None), (2, 0), (-1, 1), (13, -1), ((1, 2), (0, 1)), ((1, 1), (1, 1)), (2, (0, 1)), ((1, -2), 1),
     ((1, 2), None), (0, 0)],
)
def test_roll(shift, axis):
    x = rand((3, 4), np.int32)
    assert_exact(run(lambda a: evoxc.roll(a, shift, axis), x), np.roll(x, shift, axis))


def test_roll_specials_and_empty():
    assert_exact(run(lambda a: evoxc.roll(a, 3), SPECIALS), np.roll(SPECIALS, 3))
    e = np.zeros((0, 3), np.float32)
    assert_exact(run(lambda a: evoxc.roll(a, 2, 1), e), np.roll(e, 2, 1))


@pytest.mark.parametrize("reps", [2, (2,), (1, 3), (2, 1, 2), [0, 2], 1])
def test_tile(reps):
    x = rand((2, 3), np.bool_)
    assert_exact(run(lambda a: evoxc.tile(a, reps), x), np.tile(x, reps))


@pytest.mark.parametrize("repeats,axis", [(2, None), (3, 0), (2, -1), ([1, 0, 2], 1), ([2, 1], 0), (0, 0), ([1] * 6, None)])
def test_repeat(repeats, axis):
    x = rand((2, 3), np.float32)
    assert_exact(run(lambda a: evoxc.repeat(a, repeats, axis), x), np.repeat(x, repeats, axis))


@pytest.mark.parametrize("dtype", [None, np.float32, np.int32, np.bool_, evoxc.float64, "int64"])
def test_one_hot(dtype):
    x = np.array([[0, 2, 5], [-1, 1, 3]], np.int32)  # -1 and 5 are out of range for 4 classes: zero rows
    want_dtype = np.float32 if dtype is None else np.dtype(str(dtype) if not isinstance(dtype, type) else dtype)
    want = (x[..., None] == np.arange(4)).astype(want_dtype)
    if dtype is None:
        got = run(lambda a: evoxc.one_hot(a, 4), x)
    else:
        got = run(lambda a: evoxc.one_hot(a, 4, dtype=dtype), x)
    assert_exact(got, want)


# ---------------------------------------------------------------- sorting


SORT_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8, np.bool_]


@pytest.mark.parametrize("dtype", SORT_DTYPES)
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_argsort(dtype, axis):
    x = rand((4, 7), dtype)
    if dtype in (np.int32, np.int64, np.int8, np.uint8):
        x = (x % 4).astype(dtype)  # many ties: stability matters for argsort
    assert_exact(run(lambda a: evoxc.sort(a, axis), x), np.sort(x, axis, kind="stable"))
    assert_exact(run(lambda a: evoxc.argsort(a, axis=axis), x), np.argsort(x, axis, kind="stable").astype(np.int64))


def test_sort_specials():
    # NaN last, -inf first; -0.0 and 0.0 compare equal so stable order keeps them as given (numpy's order too)
    x = SPECIALS
    assert_exact(run(evoxc.sort, x), np.sort(x, kind="stable"))
    assert_exact(run(evoxc.argsort, x), np.argsort(x, kind="stable"))
    e = np.zeros((2, 0), np.float32)
    assert_exact(run(evoxc.sort, e), np.sort(e))
    assert_exact(run(evoxc.argsort, e), np.argsort(e).astype(np.int64))


def test_sort_multi():
    k1 = RNG.integers(0, 3, (2, 9)).astype(np.int32)
    k2 = rand((2, 9), np.float32)
    v = rand((2, 9), np.int64)
    got = run(lambda a, b, c: evoxc.sort([a, b, c], axis=-1, num_keys=2), k1, k2, v)
    assert isinstance(got, list) and len(got) == 3
    order = np.stack([np.lexsort((k2[i], k1[i])) for i in range(2)])
    for g, w in zip(got, (k1, k2, v)):
        assert_exact(g, np.take_along_axis(w, order, -1))
    got = run(lambda a, c: evoxc.sort([a, c], axis=0), k1.T.copy(), v.T.copy())  # one key: stable
    order = np.argsort(k1.T, axis=0, kind="stable")
    assert_exact(got[1], np.take_along_axis(v.T, order, 0))


def _top_k_ref(x, k):
    # descending, NaN largest, ties: lower index first
    key = np.where(np.isnan(x), np.inf, x).astype(np.float64)
    rank = np.where(np.isnan(x), 1, 0)
    idx = np.lexsort((np.broadcast_to(np.arange(x.shape[-1]), x.shape), -key, -rank), axis=-1)[..., :k]
    return np.take_along_axis(x, idx, -1), idx.astype(np.int64)


@pytest.mark.parametrize("k", [0, 1, 3, 8])
def test_top_k(k):
    x = np.concatenate([SPECIALS[None], np.round(rand((2, 8), np.float32))], 0)  # rounding makes ties
    vals, idx = run(lambda a: evoxc.top_k(a, k), x)
    want_v, want_i = _top_k_ref(x, k)
    assert_exact(vals, want_v)
    assert_exact(idx, want_i)
    xi = (rand((3, 8), np.int32) % 3).astype(np.int32)
    vals, idx = run(lambda a: evoxc.top_k(a, k=k), xi)
    want_v, want_i = _top_k_ref(xi.astype(np.float64), k)
    assert_exact(vals, want_v.astype(np.int32))
    assert_exact(idx, want_i)
    with pytest.raises(ValueError):
        run(lambda a: evoxc.top_k(a, 9), x)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    a = np.array([-np.inf, -1.0, 0.0, 0.0, 2.5, 2.5, 7.0, np.nan], np.float32)
    v = np.array([[-5.0, 0.0, 2.5], [np.inf, np.nan, -np.inf], [-0.0, 8.0, 1.0]], np.float32)
    assert_exact(run(lambda x, y: evoxc.searchsorted(x, y, side), a, v), np.searchsorted(a, v, side).astype(np.int64))
    ai = np.array([1, 3, 3, 3, 9], np.int64)
    for s in [0, 3, 10]:
        assert_exact(run(lambda x: evoxc.searchsorted(x, s, side=side), ai), np.int64(np.searchsorted(ai, s, side)))
    empty = np.zeros(0, np.float32)
    assert_exact(run(lambda x, y: evoxc.searchsorted(x, y, side), empty, v), np.zeros(v.shape, np.int64))


# ---------------------------------------------------------------- scans


SCAN_DTYPES = [np.float32, np.float64, np.int32, np.int8, np.uint8, np.uint32, np.bool_]
NP_SCANS = {
    "cumsum": np.cumsum,
    "cumprod": np.cumprod,
    "cummax": lambda x, axis: np.maximum.accumulate(x.ravel() if axis is None else x, 0 if axis is None else axis),
    "cummin": lambda x, axis: np.minimum.accumulate(x.ravel() if axis is None else x, 0 if axis is None else axis),
}


@pytest.mark.parametrize("name", list(NP_SCANS))
@pytest.mark.parametrize("dtype", SCAN_DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("reverse", [False, True])
def test_scans(name, dtype, axis, reverse):
    x = rand((3, 5), dtype)
    if name == "cumprod" and dtype != np.bool_:
        x = (x % 3).astype(dtype)  # keep products small enough to compare exactly
    ref = NP_SCANS[name]
    if reverse:
        ax = axis
        if ax is None:
            want = np.flip(ref(np.flip(x.ravel()), axis=0))
        else:
            want = np.flip(ref(np.flip(x, ax), axis=ax), ax)
    else:
        want = ref(x, axis=axis)
    if name in ("cumsum", "cumprod") and dtype == np.uint32:
        want = want.astype(np.uint64)  # numpy's platform uint accumulator is uint64 here too
    got = run(lambda a: getattr(evoxc, name)(a, axis, reverse=reverse), x)
    if np.dtype(dtype).kind == "f" and name in ("cumsum", "cumprod"):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    else:
        assert_exact(got, want)


def test_scans_specials_and_empty():
    x = SPECIALS
    assert_exact(run(evoxc.cumsum, x), np.cumsum(x))
    assert_exact(run(evoxc.cumprod, x), np.cumprod(x))
    assert_exact(run(evoxc.cummax, x), np.maximum.accumulate(x))
    assert_exact(run(evoxc.cummin, x), np.minimum.accumulate(x))
    e = np.zeros((0, 4), np.int32)
    assert_exact(run(lambda a: evoxc.cumsum(a, 0), e), np.cumsum(e, 0))
    assert_exact(run(evoxc.cummax, e), np.zeros(0, np.int32))


def test_cumsum_int_wraps():
    # ints wrap in the int64 accumulator, as numpy
    x = np.array([2**62, 2**62, 2**62], np.int64)
    assert_exact(run(evoxc.cumsum, x), np.cumsum(x))


# ---------------------------------------------------------------- convolution


def _dilate(x, d, axes):
    for ax, f in zip(axes, d):
        if f == 1 or x.shape[ax] == 0:
            continue
        shape = list(x.shape)
        shape[ax] = (x.shape[ax] - 1) * f + 1
        y = np.zeros(shape, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(None, None, f)
        y[tuple(idx)] = x
        x = y
    return x


def conv_ref(x, w, strides=None, padding="VALID", lhs_dilation=None, rhs_dilation=None, groups=1):
    """XLA conv_general_dilated, NCHW/OIHW, in float64 with numpy."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    ns = x.ndim - 2
    strides = strides or [1] * ns
    ld = lhs_dilation or [1] * ns
    rd = rhs_dilation or [1] * ns
    sp = list(range(2, x.ndim))
    x = _dilate(x, ld, sp)
    w = _dilate(w, rd, sp)
    if padding == "VALID":
        pads = [(0, 0)] * ns
    elif padding == "SAME":
        pads = []
        for i in range(ns):
            n, k, s = x.shape[2 + i], w.shape[2 + i], strides[i]
            out = -(-n // s)
            total = max((out - 1) * s + k - n, 0)
            pads.append((total // 2, total - total // 2))
    elif isinstance(padding, int):
        pads = [(padding, padding)] * ns
    else:
        pads = [(p, p) if isinstance(p, int) else tuple(p) for p in padding]
    for i, (lo, hi) in enumerate(pads):
        ax = 2 + i
        x = np.pad(x, [(0, 0)] * ax + [(max(lo, 0), max(hi, 0))] + [(0, 0)] * (x.ndim - ax - 1))
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(-min(lo, 0), x.shape[ax] + min(hi, 0))
        x = x[tuple(idx)]
    n, c = x.shape[:2]
    o = w.shape[0]
    win = w.shape[2:]
    out_sp = [max((x.shape[2 + i] - win[i]) // strides[i] + 1, 0) for i in range(ns)]
    res = np.zeros((n, o, *out_sp))
    cg, og = c // groups, o // groups
    for pos in itertools.product(*[range(s) for s in out_sp]):
        sl = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, strides, win))
        patch = x[(slice(None), slice(None)) + sl]  # (N, C, win...)
        for g in range(groups):
            pg = patch[:, g * cg:(g + 1) * cg]
            wg = w[g * og:(g + 1) * og]
            res[(slice(None), slice(g * og, (g + 1) * og)) + pos] = np.tensordot(pg, wg, axes=(
                list(range(1, pg.ndim)), list(range(1, wg.ndim))))
    return res


CONV_CASES = [
    # (x shape, w shape, kwargs)
    ((2, 3, 7), (4, 3, 3), {}),
    ((1, 2, 8), (2, 2, 3), {"strides": [2], "padding": "SAME"}),
    ((1, 2, 5, 6), (3, 2, 3, 2), {"padding": "SAME"}),
    ((2, 4, 6, 5), (4, 2, 2, 3), {"strides": [2, 1], "padding": [(1, 0), (2, 1)], "groups": 2}),
    ((1, 1, 7, 7), (2, 1, 3, 3), {"dilation": [2, 1], "padding": 1}),
    ((1, 2, 6, 6), (1, 2, 2, 2), {"padding": [1, (0, -1)], "strides": [3, 2]}),
    ((1, 1, 3, 3, 4), (2, 1, 2, 2, 2), {"padding": "SAME", "strides": [1, 2, 2]}),
    ((1, 1, 2), (1, 1, 3), {}),  # the window does not fit: empty output
]


@pytest.mark.parametrize("xs,ws,kw", CONV_CASES)
def test_conv(xs, ws, kw):
    x, w = rand(xs, np.float32), rand(ws, np.float32)
    want = conv_ref(x, w, kw.get("strides"), kw.get("padding", "VALID"), None, kw.get("dilation"), kw.get("groups", 1))
    got = run(lambda a, b: evoxc.conv(a, b, **kw), x, w)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    named = {3: evoxc.conv1d, 4: evoxc.conv2d, 5: evoxc.conv3d}[len(xs)]
    np.testing.assert_allclose(run(lambda a, b: named(a, b, **kw), x, w), want, rtol=1e-5, atol=1e-5)


def test_conv_rank_check_and_ints():
    x, w = rand((1, 1, 5, 5), np.float32), rand((1, 1, 3, 3), np.float32)
    with pytest.raises(ValueError):
        run(lambda a, b: evoxc.conv1d(a, b), x, w)
    xi, wi = rand((1, 2, 6), np.int32), rand((3, 2, 2), np.int32)
    got = run(lambda a, b: evoxc.conv1d(a, b, padding="SAME"), xi, wi)
    assert_exact(got, conv_ref(xi, wi, padding="SAME").astype(np.int32))
    with pytest.raises(TypeError):
        run(lambda a, b: evoxc.conv(a, b, padding=1.5), x, w)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"window_strides": [2, 1], "padding": "SAME"},
        {"lhs_dilation": [2, 1], "padding": [(1, 1), (0, 0)]},
        {"lhs_dilation": [2, 2], "rhs_dilation": [1, 2], "padding": "SAME"},
        {"rhs_dilation": [2, 2], "feature_group_count": 2, "padding": ((2, 2), (1, 1))},
    ],
)
def test_conv_general(kw):
    groups = kw.get("feature_group_count", 1)
    x, w = rand((2, 4, 5, 6), np.float64), rand((2, 4 // groups, 2, 3), np.float64)
    want = conv_ref(x, w, kw.get("window_strides"), kw.get("padding", "VALID"), kw.get("lhs_dilation"),
                    kw.get("rhs_dilation"), kw.get("feature_group_count", 1))
    got = run(lambda a, b: evoxc.conv_general(a, b, **kw), x, w)
    assert got.dtype == np.float64 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv_nan_inf():
    x = np.array([[[1.0, np.nan, 2.0, np.inf, 3.0]]], np.float32)
    w = np.array([[[1.0, 0.5]]], np.float32)
    got = run(lambda a, b: evoxc.conv1d(a, b), x, w)
    np.testing.assert_array_equal(got, np.array([[[np.nan, np.nan, np.inf, np.inf]]], np.float32))


# ---------------------------------------------------------------- binding behaviour


def test_host_data_in_trace_is_trace_error():
    captured = np.ones(3, np.float32)
    with pytest.raises(evoxc.TraceError):
        run(lambda a: evoxc.concatenate([a, captured]), np.zeros(3, np.float32))
    with pytest.raises(evoxc.TraceError):
        run(lambda a: evoxc.sort(captured), np.zeros(3, np.float32))
    with pytest.raises(evoxc.TraceError):
        run(lambda a: evoxc.sort([a, captured]), np.zeros(3, np.float32))
    with pytest.raises(evoxc.TraceError):
        run(lambda a: evoxc.stack(captured), np.zeros(3, np.float32))
    with pytest.raises(TypeError):
        run(lambda a: evoxc.stack([a, "b"]), np.zeros(3, np.float32))


def test_docstrings():
    for name in ["reshape", "transpose", "pad", "sort", "cumsum", "conv", "conv2d", "top_k", "moveaxis", "split"]:
        doc = getattr(evoxc, name).__doc__
        assert doc and ("numpy" in doc or "lax" in doc or "conv" in doc), name


def test_ops_record_the_callers_line():
    def fn(a, w):
        y = evoxc.conv1d(a, w, padding="SAME")  # each op's location is this file and line
        return evoxc.cumsum(evoxc.pad(evoxc.sort(y), 1, "edge"), -1)

    g = evoxc.trace(fn, evoxc.TensorSpec((1, 1, 5), evoxc.float32), evoxc.TensorSpec((1, 1, 3), evoxc.float32))
    text = g.to_string()
    for op in ["conv", "sort", "pad", "cumsum"]:
        lines = [ln for ln in text.splitlines() if f"evoxc.{op}" in ln]
        assert lines, (op, text)
        assert all('"test_ops_structure.py"' in ln for ln in lines), (op, lines)
