# Tests of the indexing bindings (gather, scatter, take, index, put, dynamic slices) and numpy-style x[key] / x.at[key].
import numpy as np
import pytest

import evoxc
from evoxc import _core, _indexing

getitem = _indexing.getitem
RNG = np.random.default_rng(0)


def run(fn, *arrays):
    out = evoxc.evaluate(fn, *arrays)
    if isinstance(out, (list, tuple)):
        return [np.asarray(o.numpy()) for o in out]
    return np.asarray(out.numpy())


def assert_same(got, want):
    """Indexing copies values: exact equality, same shape and dtype, and the sign of zeros kept."""
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def check_key(a, key):
    assert_same(run(lambda x: getitem(x, key), a), a[key])


# A float array with NaN, +-inf and -0.0 among random values, so that copies are checked bit for bit.
def special_f32(shape):
    a = RNG.standard_normal(shape).astype(np.float32)
    flat = a.reshape(-1)
    for i, v in enumerate([np.nan, np.inf, -np.inf, -0.0, 0.0]):
        if i < flat.size:
            flat[(7 * i + 3) % flat.size] = v
    return a


A3 = special_f32((4, 5, 6))
A4 = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)

BASIC_KEYS = [
    0,
    -1,
    3,
    (1, 2),
    (-4, -5, -6),
    (1, 2, 3),
    slice(None),
    slice(1, 3),
    slice(None, None, 2),
    slice(None, None, -1),
    slice(3, 0, -2),
    slice(-1, None, -3),
    slice(-100, 100),
    slice(100, 200),
    slice(2, 1),
    slice(0, 0, -1),
    (slice(None), slice(1, None, 3), slice(None, None, -2)),
    (Ellipsis, 0),
    (Ellipsis, slice(None, None, -1)),
    (0, Ellipsis),
    (1, Ellipsis, 2),
    (None,),
    (None, 0, None),
    (Ellipsis, None),
    (slice(None), None, Ellipsis, None, -1),
    (Ellipsis,),
    (),
    (np.int64(2), np.int32(-1)),
    (slice(1, -1), -2, slice(None, None, -4)),
    True,
    False,
    (slice(None), True),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_basic_keys(key):
    check_key(A3, key)


ADVANCED_KEYS = [
    [0, 2, 3],
    [-1, 0, -4, 2],
    [[0, 1], [2, 3]],
    [],
    np.array([3, 3, 1], np.int32),
    np.array([[1], [2]], np.uint8),
    ([0, 1], [2, 3]),  # two arrays over the leading axes
    ([0, 1], slice(None), [2, 3]),  # separated: the broadcast axes go first
    (slice(None), [0, 1], [2, 3]),  # adjacent, not leading: in place
    (slice(None), [[0], [1]], [2, 3]),  # broadcasting index arrays
    (1, [0, 4], slice(None)),  # an int is an advanced index too: adjacent
    (1, slice(None), [0, 4]),  # separated by a slice: first
    (slice(None), 2, [0, -1]),
    (Ellipsis, [0, 5]),
    ([1, 2], None),
    (None, [1, 2]),
    ([1, 2], None, [0, 1]),  # None separates them
    (slice(None, None, -1), [4, 0], slice(1, None, 2)),
    ([0, 1], Ellipsis, [0, 2]),
    (True, [0, 1]),
    (slice(None), False, [0]),
    (slice(None), False, [[0], [1]]),
    (1, [[0, 1]], np.array(2)),
]


@pytest.mark.parametrize("key", ADVANCED_KEYS, ids=repr)
def test_advanced_keys(key):
    check_key(A3, key)


@pytest.mark.parametrize(
    "key",
    [
        (slice(None), 0, slice(None), [0, 1]),  # numpy: (2, 2, 4)
        (slice(None), 0, [0, 1]),  # numpy: (2, 2, 5)
        (slice(None), [0, 1], None, [0, 1]),
        ([0, 1], slice(None), [0, 2]),
        (np.array(1), slice(None), [0, 1]),
        (slice(None), [[0, 1]], slice(1, 3), [[1], [2], [0]]),
        (Ellipsis, [0, 1], [1, 2]),
        (slice(None), 0, Ellipsis, [1, 2], slice(None)),  # an Ellipsis of 1 axis separates: first
        (slice(None), 0, [1, 2], Ellipsis, 1),  # numpy: an Ellipsis of no axes still separates
        (None, -1, Ellipsis, np.array([True, False, True]), 1, 2),
    ],
    ids=repr,
)
def test_advanced_placement_rank4(key):
    check_key(A4, key)


def test_bool_masks():
    a = special_f32((3, 4))
    m = RNG.random((3, 4)) > 0.5
    check_key(a, m)
    check_key(a, (slice(None), m[0]))
    check_key(a, [True, False, True])
    check_key(a, (np.array([False, True, True]), [0, 3]))
    check_key(a, np.zeros((3, 4), bool))  # empty result
    check_key(A4, (slice(None), RNG.random((3, 4)) > 0.3))  # a 2-D mask over the middle axes


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.uint16, np.int64, np.bool_])
def test_dtypes(dtype):
    a = (RNG.standard_normal((5, 3)) * 4).astype(dtype)
    for key in [(slice(None, None, -1), 1), ([4, 0, 2],), (slice(1, 4), [2, 0]), (None, -1)]:
        check_key(a, key)


def test_empty_tensor():
    # The empty operand is made inside the graph (x[3:3] of a (3, 3) input), then indexed.
    a = special_f32((3, 3))
    e = a[3:3]
    for key in [(slice(None), 1), (slice(None, None, -1),), (Ellipsis, [0, 2]), (None, slice(None), slice(1, 2))]:
        assert_same(run(lambda x: getitem(getitem(x, slice(3, 3)), key), a), e[key])


def test_dynamic_int_index():
    a = special_f32((5, 4))
    for i in [0, 3, -1, -5]:
        assert_same(run(lambda x, j: getitem(x, j), a, np.array(i, np.int64)), a[i])
        assert_same(run(lambda x, j: getitem(x, (slice(None), j)), a, np.array(i % 4, np.int32)), a[:, i % 4])
    # Documented evoxc behaviour (docs/semantics.md): run-time indices clamp into range instead of raising.
    assert_same(run(lambda x, j: getitem(x, j), a, np.array(9, np.int64)), a[4])
    assert_same(run(lambda x, j: getitem(x, j), a, np.array(-9, np.int64)), a[0])
    # a run-time int next to an array index is an advanced index (numpy's rule for ints)
    assert_same(run(lambda x, j: getitem(x, (j, [0, 2])), a, np.array(2, np.int64)), a[2, [0, 2]])


def test_symbolic_int_array_index():
    a = special_f32((6, 3))
    idx = np.array([[0, -1], [5, 2]], np.int64)
    assert_same(run(lambda x, i: getitem(x, i), a, idx), a[idx])
    assert_same(run(lambda x, i: getitem(x, (slice(None, None, -1), getitem(i, 0))), a, idx), a[::-1, idx[0]])
    # Documented: out-of-range run-time indices clamp.
    assert_same(run(lambda x, i: getitem(x, i), a, np.array([7, -8], np.int64)), a[[5, 0]])


# ---- must-fail cases ----


def spec(a):
    return evoxc.TensorSpec(a.shape, a.dtype)


def test_symbolic_bool_mask_is_trace_error():
    a = np.zeros((3, 4), np.float32)
    m = np.zeros((3, 4), bool)
    with pytest.raises(_core.TraceError, match="where"):
        evoxc.trace(lambda x, k: getitem(x, k), spec(a), spec(m))
    with pytest.raises(_core.TraceError, match="depend on data"):
        evoxc.trace(lambda x: getitem(x, x > 0), spec(a))


@pytest.mark.parametrize(
    "key, err",
    [
        (3, IndexError),
        (-4, IndexError),
        ((0, 4), IndexError),
        ((0, 0, 0), IndexError),  # too many indices
        ((Ellipsis, 0, 0, 0), IndexError),
        ((Ellipsis, Ellipsis), IndexError),
        ([0, 3], IndexError),
        ((slice(None), [-5]), IndexError),
        (1.5, IndexError),
        ("a", IndexError),
        (np.array([0.0, 1.0]), IndexError),
        (np.ones((2, 4), bool), IndexError),  # mask shape mismatch
        (slice(None, None, 0), ValueError),
        (([0, 1], [0, 1, 2]), IndexError),  # index arrays that do not broadcast
        ((slice(None), False, [0, 1]), IndexError),
    ],
    ids=repr,
)
def test_bad_keys(key, err):
    a = np.zeros((3, 4), np.float32)
    with pytest.raises(err):
        evoxc.trace(lambda x: getitem(x, key), spec(a))
    with pytest.raises(err):  # numpy agrees
        a[key]


def test_float_symbolic_index_is_index_error():
    a = np.zeros((3, 4), np.float32)
    with pytest.raises(IndexError):
        evoxc.trace(lambda x, i: getitem(x, i), spec(a), spec(np.zeros((2,), np.float32)))


def test_symbolic_extent_slices():
    n = evoxc.Dim("n")
    s = evoxc.TensorSpec((n, 4), evoxc.float32)
    for key, tail in [
        ((slice(None), 1), ()),
        ((slice(None, None, -1), slice(1, 3)), (2,)),
        ((-1,), (4,)),
        ((slice(2, None, 2), None), (1, 4)),
        ((Ellipsis, [0, 3]), (2,)),
    ]:
        out = tuple(evoxc.trace(lambda x: getitem(x, key), s).output_specs[0].shape)
        assert out[len(out) - len(tail) :] == tail
    i = evoxc.TensorSpec((), evoxc.int64)
    out = evoxc.trace(lambda x, j: getitem(x, j), s, i).output_specs[0].shape  # dynamic_slice needs static sizes
    assert tuple(out) == (4,)
    out = evoxc.trace(lambda x, j: getitem(x, (slice(None), j)), s, i).output_specs[0].shape  # take instead
    assert len(out) == 1 and not isinstance(out[0], int)
    with pytest.raises(_core.TraceError):
        evoxc.trace(lambda x: getitem(x, slice(-2, None)), s)
    with pytest.raises(_core.TraceError):
        evoxc.trace(lambda x: getitem(x, [-1, 0]), s)


# ---- the bound ops ----


def test_take_and_take_along_axis():
    a = special_f32((4, 5))
    i = np.array([[0, 3], [4, 1]], np.int64)
    assert_same(run(lambda x, j: _core.take(x, j, axis=1), a, i), np.take(a, i, axis=1))
    assert_same(run(lambda x, j: _core.take(x, j), a, i), np.take(a, i))
    # mode="clip" (default) clamps, so -1 reads element 0 (documented, unlike numpy's default)
    neg = np.array([-1, 7], np.int64)
    assert_same(run(lambda x, j: _core.take(x, j, axis=0), a, neg), np.take(a, neg, axis=0, mode="clip"))
    assert_same(run(lambda x, j: _core.take(x, j, 0, "wrap"), a, neg), np.take(a, neg, axis=0, mode="wrap"))
    ta = RNG.integers(0, 5, (4, 3))
    assert_same(run(lambda x, j: _core.take_along_axis(x, j, axis=1), a, ta), np.take_along_axis(a, ta, axis=1))


def test_gather_scatter_index():
    a = special_f32((4, 5, 2))
    i = np.array([[0, 1], [3, 4], [2, 0]], np.int64)
    got = run(lambda x, j: _core.gather(x, j, axes=[0, 1]), a, i)
    assert_same(got, a[i[:, 0], i[:, 1]])
    u = RNG.standard_normal((3, 2)).astype(np.float32)
    want = a.copy()
    np.add.at(want, (i[:, 0], i[:, 1]), u)
    got = run(lambda x, j, v: _core.scatter(x, j, v, [0, 1], mode="add"), a, i, u)
    np.testing.assert_allclose(got, want, rtol=0, atol=0)
    got = run(lambda x, j: _core.scatter(x, j, 7.0, [0, 1]), a, i)
    want = a.copy()
    want[i[:, 0], i[:, 1]] = 7.0
    assert_same(got, want)
    i0, i1 = np.array([[1], [3]]), np.array([0, 4, 2])
    assert_same(run(lambda x, p, q: _core.index(x, [p, q]), a, i0, i1), a[i0, i1])


def test_put_scatter_add():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    i = np.array([0, 5, 11, 5], np.int64)
    want = a.copy()
    np.put(want, i, [10, 20, 30, 40])
    got = run(lambda x, j, v: _core.put(x, j, v), a, i, np.array([10, 20, 30, 40], np.int32))
    assert_same(got, want)
    # mode "drop" (default): an out-of-range write is dropped (documented evoxc behaviour)
    got = run(lambda x, j: _core.put(x, j, -1), a, np.array([1, 12], np.int64))
    want = a.copy()
    want.flat[1] = -1
    assert_same(got, want)
    j = np.array([2, 0, 2], np.int64)
    u = np.ones((3, 3), np.int32)
    want = a.copy()
    np.add.at(want, (slice(None), j), u)
    assert_same(run(lambda x, k, v: _core.scatter_add(x, k, v, axis=1), a, j, u), want)


def test_dynamic_slices():
    a = special_f32((5, 6))
    got = run(lambda x, s: _core.dynamic_slice(x, [s, 2], [2, 3]), a, np.array(1, np.int64))
    assert_same(got, a[1:3, 2:5])
    # starts clamp so the window fits (documented)
    got = run(lambda x, s: _core.dynamic_slice(x, [s, -3], [2, 3]), a, np.array(9, np.int64))
    assert_same(got, a[3:5, 0:3])
    u = np.full((2, 2), -0.0, np.float32)
    got = run(lambda x, v, s: _core.dynamic_update_slice(x, v, [s, 4]), a, u, np.array(2, np.int32))
    want = a.copy()
    want[2:4, 4:6] = u
    assert_same(got, want)


# ---- x.at[key] ----

UFUNC = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


@pytest.mark.parametrize("mode", ["add", "multiply", "min", "max"])
@pytest.mark.parametrize(
    "key",
    [
        [0, 2, 0],  # duplicates accumulate
        ([1, 1, 3], [0, 0, 2]),
        (Ellipsis,),
        (slice(None), [1, 0, 1]),  # non-leading: the general scatter path
        (slice(None, None, -2), 1),
        (None, 2, slice(1, 3)),
        (np.array([True, False, True, True]),),
    ],
    ids=repr,
)
def test_at_accumulating(mode, key):
    a = np.arange(1, 13, dtype=np.int64).reshape(4, 3)
    shape = a[key].shape
    v = RNG.integers(-5, 5, shape).astype(np.int64)
    want = a.copy()
    UFUNC[mode].at(want, key, v)
    got = run(lambda x, w: getattr(_indexing.AtHelper(x)[key], mode)(w), a, v)
    assert_same(got, want)


@pytest.mark.parametrize(
    "key",
    [0, -1, [3, 1], (slice(1, 3), slice(None, None, -1)), (Ellipsis, 1), ([0, 1], [2, 0]), (1, slice(None))],
    ids=repr,
)
def test_at_set_get(key):
    a = special_f32((4, 3))
    v = RNG.standard_normal(a[key].shape).astype(np.float32)
    want = a.copy()
    want[key] = v
    at = lambda x, w: _indexing.AtHelper(x)[key].set(w)  # noqa: E731
    assert_same(run(at, a, v), want)
    assert_same(run(lambda x: _indexing.AtHelper(x)[key].get(), a), a[key])
    want = a.copy()
    want[key] = 2.5  # a scalar broadcasts
    assert_same(run(lambda x: _indexing.AtHelper(x)[key].set(2.5), a), want)


def test_at_set_duplicates_last_wins():
    a = np.zeros(4, np.int32)
    got = run(lambda x, v: _indexing.AtHelper(x)[[1, 1, 2]].set(v), a, np.array([5, 6, 7], np.int32))
    assert_same(got, np.array([0, 6, 7, 0], np.int32))


def test_at_dynamic_index():
    a = special_f32((5, 3))
    got = run(lambda x, i: _indexing.AtHelper(x)[i].add(1.0), a, np.array(-2, np.int64))
    want = a.copy()
    want[-2] += 1.0
    assert_same(got, want)


def test_at_errors():
    a = np.zeros((3, 4), np.float32)
    with pytest.raises(IndexError):
        evoxc.trace(lambda x: _indexing.AtHelper(x)[0, 0, 0].set(1.0), spec(a))
    with pytest.raises(IndexError):
        evoxc.trace(lambda x: _indexing.AtHelper(x)[5].set(1.0), spec(a))
    with pytest.raises(_core.TraceError):
        evoxc.trace(lambda x: _indexing.AtHelper(x)[x > 0].set(1.0), spec(a))
    with pytest.raises(_core.TraceError):
        evoxc.trace(lambda x: _core._at_update(x, [], "bogus", 1.0), spec(a))
    with pytest.raises(_core.TraceError, match="needs a value"):
        evoxc.trace(lambda x: _core._at_update(x, [], "set"), spec(a))
    s = evoxc.TensorSpec((evoxc.Dim("n"), 4), evoxc.float32)
    with pytest.raises(_core.TraceError, match="static shape"):
        evoxc.trace(lambda x: _indexing.AtHelper(x)[:, 1].set(1.0), s)
    evoxc.trace(lambda x: _indexing.AtHelper(x)[[0, 2]].set(1.0), s)  # leading indices: any shape


def random_key(rng, shape):
    """A random numpy key over `shape`: ints, slices (any step), None, one Ellipsis, int arrays, bool masks."""
    key, axis, used_ellipsis = [], 0, False
    while axis < len(shape) and rng.random() < 0.85:
        n = shape[axis]
        r = rng.random()
        if r < 0.1:
            key.append(None)
            continue
        if r < 0.17 and not used_ellipsis:
            used_ellipsis = True
            key.append(Ellipsis)
            axis = len(shape) - int(rng.integers(0, len(shape) - axis + 1))
            continue
        if r < 0.35:
            key.append(int(rng.integers(-n, n)))
        elif r < 0.7:
            pick = lambda: None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))  # noqa: E731
            key.append(slice(pick(), pick(), [None, 1, 2, 3, -1, -2, -3][int(rng.integers(0, 7))]))
        elif r < 0.9:
            key.append(rng.integers(-n, n, size=tuple(rng.integers(1, 3, size=int(rng.integers(0, 3))))).tolist())
        else:
            key.append(rng.random(n) < 0.5)
        axis += 1
    return tuple(key)


@pytest.mark.parametrize("seed", range(60))
def test_random_keys(seed):
    rng = np.random.default_rng(seed)
    a = A4 if seed % 2 else A3
    key = random_key(rng, a.shape)
    try:
        want = a[key]
    except IndexError:  # e.g. index arrays that do not broadcast: evoxc must refuse too
        with pytest.raises(IndexError):
            evoxc.trace(lambda x: getitem(x, key), spec(a))
        return
    assert_same(run(lambda x: getitem(x, key), a), want)


def test_operator_syntax_and_locations():
    a = special_f32((3, 4))
    assert_same(run(lambda x: x[1:, ::-1][[0, 1], None], a), a[1:, ::-1][[0, 1], None])
    want = a.copy()
    want[0, 1:3] += 1.5
    assert_same(run(lambda x: x.at[0, 1:3].add(1.5), a), want)
    g = evoxc.trace(lambda x: x[::-1, 2], spec(a))
    assert "test_indexing.py" in g.text  # ops emitted by the indexing sugar carry the user's line
    assert g.num_ops == 3  # flip, slice, squeeze: no identity slice
