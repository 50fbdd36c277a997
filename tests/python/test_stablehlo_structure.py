"""StableHLO export of the structure and creation families, checked on XLA against the interpreter where the
generated catalogue test does not reach: out-of-range and unsigned indices, scatter duplicates in every mode (order
of float combinations, last-wins set, NaN and signed zeros), sort order (NaN last, -0 == +0 stable, descending
top_k ties), searchsorted sides on unsorted input, exact arange/linspace values (folded and by formula), pad modes,
row_switch runs, symbolic extents (the module refined to the inputs' shapes as jax does before XLA compiles it),
bool samples with many ties, and golden checks of the ops each rule writes."""

import re

import numpy as np
import pytest

from stablehlo_util import assert_same, run_both, runnable, xla_run

import evoxc
from evoxc import TensorSpec


def bits(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return a.view(f"u{a.dtype.itemsize}")
    return a


def check_exact(graph, inputs, what=""):
    """Exported, run on XLA and compared with the interpreter bit for bit (NaN payloads and zero signs included)."""
    text, got, want = run_both(graph, inputs)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, f"{what} result {i}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        assert np.array_equal(bits(g), bits(w)), f"{what} result {i}:\nxla  {g!r}\ninterp {w!r}\n{text}"
    return text


def check_close(graph, inputs, what=""):
    text, got, want = run_both(graph, inputs)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, f"{what} result {i}")
    return text


def trace(fn, *specs):
    return evoxc.trace(fn, *specs)


B = evoxc.dim("B")
N = evoxc.dim("N")
RNG = np.random.default_rng(7)


def ops_written(text):
    return set(re.findall(r'"((?:stablehlo|chlo)\.[a-z_]+)"', text))


# ---------------------------------------------------------------- the catalogue samples on bool

FAMILY = ["reshape", "transpose", "broadcast_in_dim", "expand_dims", "squeeze", "slice", "concatenate", "pad", "tril",
          "triu", "diagonal", "flip", "roll", "tile", "repeat", "gather", "scatter", "dynamic_slice",
          "dynamic_update_slice", "sort", "argsort", "top_k", "searchsorted", "row_switch", "iota", "full", "constant"]


@pytest.mark.parametrize("op", FAMILY)
def test_sample_on_bool(op):
    # The catalogue samples on bool with this file's inputs (few distinct values, so ties and duplicates occur).
    g = evoxc._core._op_sample_graph(op, evoxc.bool_)
    ins = []
    for s in g.input_specs:
        shape = tuple(int(d) for d in s.shape)
        if s.dtype.name == "bool":
            ins.append(RNG.integers(0, 2, shape).astype(np.bool_))
        else:
            ins.append(RNG.integers(-3, 6, shape).astype(s.dtype.name))
    check_exact(g, ins, op)


# ---------------------------------------------------------------- gather, scatter, dynamic slices


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint32", "uint64"])
def test_gather_clamps_every_index_dtype(dtype):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx = {"int8": [-128, -1, 0, 3, 4, 127], "int32": [-2**31, -5, 2, 3, 4, 2**31 - 1],
           "int64": [-2**63, -1, 1, 3, 9, 2**63 - 1], "uint8": [0, 1, 3, 4, 200, 255],
           "uint32": [0, 2, 3, 4, 2**31, 2**32 - 1], "uint64": [0, 3, 4, 2**63 - 1, 2**63, 2**64 - 1]}[dtype]
    i = np.array(idx, dtype=dtype).reshape(6, 1)
    g = trace(lambda a, j: _gather(a, j, [0]), TensorSpec((4, 3)), TensorSpec((6, 1), getattr(evoxc, dtype)))
    text = check_exact(g, [x, i], dtype)
    assert '"stablehlo.gather"' in text


def _gather(a, i, axes):
    return evoxc.gather(a, i, axes)


def _scatter(a, i, u, axes, mode):
    return evoxc.scatter(a, i, u, axes, mode)


def test_gather_two_axes_any_order_and_batch():
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    i = np.array([[[2, 0], [9, -1]], [[1, 3], [0, 4]], [[-7, 2], [2, 2]]], np.int32)  # (3, 2, 2): axes [2, 0]
    g = trace(lambda a, j: _gather(a, j, [2, 0]), TensorSpec((3, 4, 5)), TensorSpec((3, 2, 2), evoxc.int32))
    check_exact(g, [x, i])


def test_gather_empty_axis_gives_zeros_and_no_axes_broadcasts():
    g = trace(lambda a, j: _gather(a, j, [1]), TensorSpec((3, 0)), TensorSpec((2, 1), evoxc.int64))
    check_exact(g, [np.zeros((3, 0), np.float32), np.array([[0], [5]], np.int64)])
    g = trace(lambda a, j: _gather(a, j, []), TensorSpec((2, 3)), TensorSpec((4, 0), evoxc.int64))
    check_exact(g, [RNG.standard_normal((2, 3)).astype(np.float32), np.zeros((4, 0), np.int64)])


def test_gather_symbolic_indexed_axis_including_empty():
    g = trace(lambda a, j: _gather(a, j, [0]), TensorSpec((N, 3)), TensorSpec((5, 1), evoxc.int64))
    i = np.array([[-1], [0], [2], [7], [1]], np.int64)
    for n in (4, 1, 0):
        check_exact(g, [np.arange(n * 3, dtype=np.float32).reshape(n, 3) + 1, i], f"N={n}")


def test_gather_symbolic_batch_and_rest():
    g = trace(lambda a, j: _gather(a, j, [1]), TensorSpec((B, 6)), TensorSpec((N, 1), evoxc.int32))
    for b, n in ((3, 4), (1, 0), (2, 1)):
        x = RNG.standard_normal((b, 6)).astype(np.float32)
        i = RNG.integers(-3, 9, (n, 1)).astype(np.int32)
        check_exact(g, [x, i], f"B={b} N={n}")


@pytest.mark.parametrize("mode", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint64", "bool"])
def test_scatter_duplicates_out_of_range_every_mode(mode, dtype):
    # Rows 0, 2, 4, 6 hit index 1; rows 3 and 7 are out of range (dropped); row-major order decides float results.
    i = np.array([[1], [0], [1], [-1], [1], [3], [1], [4]], np.int64)
    if dtype == "bool":
        x = np.array([[True, False], [False, True], [True, True], [False, False]])
        u = RNG.integers(0, 2, (8, 2)).astype(np.bool_)
    elif dtype in ("float32", "float16"):
        x = np.array([[1.0, -0.0], [2.0, 0.0], [np.nan, 5.0], [0.0, -0.0]], dtype)
        u = np.array([[1e4, 0.0], [3.0, np.nan], [1.0, -0.0], [7.0, 7.0], [-1e4, -0.0], [np.nan, 2.0],
                      [1e-3, 0.0], [9.0, 9.0]], dtype)
    else:
        info = np.iinfo(dtype)
        x = np.array([[info.max, 3], [info.min, 7], [5, 5], [0, 1]], dtype)
        u = np.array([[info.max, 2], [1, 1], [3, info.max], [4, 4], [2, 9], [1, 0], [7, 3], [8, 8]], dtype)
    t = evoxc.bool_ if dtype == "bool" else getattr(evoxc, dtype)
    g = trace(lambda a, j, v: _scatter(a, j, v, [0], mode), TensorSpec((4, 2), t), TensorSpec((8, 1), evoxc.int64),
              TensorSpec((8, 2), t))
    check_exact(g, [x, i, u], f"{mode} {dtype}")


def test_scatter_float_add_follows_row_order():
    # 1e8 + 1 + 1 - 1e8 is 0 in row order in float32 (each 1 is lost), 2 in another order: evoxc is the former.
    i = np.array([[0], [0], [0], [0], [2]], np.int32)
    u = np.array([1e8, 1.0, 1.0, -1e8, 5.0], np.float32).reshape(5, 1)
    g = trace(lambda a, j, v: _scatter(a, j, v, [0], "add"), TensorSpec((3, 1)), TensorSpec((5, 1), evoxc.int32),
              TensorSpec((5, 1)))
    text = check_exact(g, [np.zeros((3, 1), np.float32), i, u])
    assert '"stablehlo.while"' in text  # rounds over duplicate positions


def test_scatter_set_last_wins_two_axes_batch():
    x = np.zeros((3, 4, 2), np.float32)
    i = np.array([[[0, 1], [2, 3]], [[0, 1], [5, 0]], [[2, 3], [0, 1]]], np.uint16)  # (3, 2, 2); axes [0, 1]
    u = np.arange(3 * 2 * 2, dtype=np.float32).reshape(3, 2, 2) + 1
    g = trace(lambda a, j, v: _scatter(a, j, v, [0, 1], "set"), TensorSpec((3, 4, 2)),
              TensorSpec((3, 2, 2), evoxc.uint16), TensorSpec((3, 2, 2)))
    check_exact(g, [x, i, u])


def test_scatter_uint64_huge_index_is_dropped_and_symbolic():
    i = np.array([[2**64 - 1], [1], [2**63]], np.uint64)
    g = trace(lambda a, j, v: _scatter(a, j, v, [0], "add"), TensorSpec((N,)), TensorSpec((3, 1), evoxc.uint64),
              TensorSpec((3,)))
    for n in (3, 1, 0):
        check_exact(g, [np.ones(n, np.float32), i, np.array([5.0, 2.0, 7.0], np.float32)], f"N={n}")


def test_scatter_symbolic_rows_set():
    g = trace(lambda a, j, v: _scatter(a, j, v, [0], "set"), TensorSpec((4, 2)), TensorSpec((B, 1), evoxc.int32),
              TensorSpec((B, 2)))
    for b in (5, 1, 0):
        i = RNG.integers(-1, 5, (b, 1)).astype(np.int32)
        check_exact(g, [np.zeros((4, 2), np.float32), i, RNG.standard_normal((b, 2)).astype(np.float32)], f"B={b}")


@pytest.mark.parametrize("mode", ["set", "add", "max"])
def test_scatter_no_axes_and_symbolic_indexed_set(mode):
    # No indexed axes: every row updates the whole operand, in row order.
    u = np.array([[1e8, -0.0], [1.0, 0.0], [-1e8, np.nan]], np.float32)
    g = trace(lambda a, j, v: _scatter(a, j, v, [], mode), TensorSpec((2,)), TensorSpec((3, 0), evoxc.int64),
              TensorSpec((3, 2)))
    check_exact(g, [np.array([1.0, 0.0], np.float32), np.zeros((3, 0), np.int64), u])
    g = trace(lambda a, j, v: _scatter(a, j, v, [1], mode), TensorSpec((2, N)), TensorSpec((4, 1), evoxc.int8),
              TensorSpec((4, 2)))
    i = np.array([[1], [0], [1], [-1]], np.int8)
    for n in (3, 1, 0):
        check_exact(g, [np.ones((2, n), np.float32), i, RNG.standard_normal((4, 2)).astype(np.float32)], f"N={n}")


def test_constants_of_every_kind():
    consts = [np.array([True, False, True]), np.array([[1.5, -0.0], [np.inf, np.nan]], np.float16),
              np.array([2**64 - 1, 0, 7], np.uint64), np.array([], np.int32), np.array(-3, np.int8)]
    g = trace(lambda a: [a] + [evoxc.constant(evoxc.tensor(c)) for c in consts], TensorSpec((1,)))
    check_exact(g, [np.zeros(1, np.float32)])


@pytest.mark.parametrize("starts", [(-5, 1), (1, 1), (3, 9), (2**31 - 1, -2**31)])
def test_dynamic_slice_and_update_clamp(starts):
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    s = [np.array(v, np.int32) for v in starts]
    g = trace(lambda a, i, j: evoxc.dynamic_slice(a, (i, j), (2, 3)), TensorSpec((4, 5)),
              TensorSpec((), evoxc.int32), TensorSpec((), evoxc.int32))
    check_exact(g, [x, *s])
    g = trace(lambda a, u, i, j: evoxc.dynamic_update_slice(a, u, (i, j)), TensorSpec((4, 5)), TensorSpec((2, 3)),
              TensorSpec((), evoxc.int32), TensorSpec((), evoxc.int32))
    check_exact(g, [x, -np.ones((2, 3), np.float32), *s])


def test_dynamic_slice_uint64_start_and_symbolic_operand():
    g = trace(lambda a, i: evoxc.dynamic_slice(a, (i,), (2,)), TensorSpec((N,)), TensorSpec((), evoxc.uint64))
    for n, s in ((6, 2**64 - 1), (6, 3), (2, 2**63)):
        check_exact(g, [np.arange(n, dtype=np.float32), np.array(s, np.uint64)], f"N={n} s={s}")


# ---------------------------------------------------------------- sorting

SPECIAL = np.array([np.nan, 1.0, -0.0, 0.0, -np.inf, np.inf, 1.0, -0.0, np.nan, -2.0, 0.0, 3.0], np.float32)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_sort_argsort_nan_last_signed_zeros_stable(dtype):
    x = SPECIAL.astype(dtype).reshape(2, 6)
    sdt = getattr(evoxc, dtype)
    for axis in (0, 1):
        check_exact(trace(lambda a: evoxc.sort(a, axis=axis), TensorSpec((2, 6), sdt)), [x], f"sort {axis}")
        check_exact(trace(lambda a: evoxc.argsort(a, axis=axis), TensorSpec((2, 6), sdt)), [x], f"argsort {axis}")


def test_sort_multi_key_lexicographic_with_payload():
    k1 = np.array([1, 0, 1, 0, 1, 0, 2, 2], np.int8)
    k2 = np.array([np.nan, 1.0, -0.0, 1.0, 0.0, -1.0, 2.0, np.nan], np.float32)
    pay = np.arange(8, dtype=np.uint32)
    g = trace(lambda a, b, c: evoxc.sort([a, b, c], axis=0, num_keys=2), TensorSpec((8,), evoxc.int8),
              TensorSpec((8,)), TensorSpec((8,), evoxc.uint32))
    check_exact(g, [k1, k2, pay])


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "bool_"])
def test_top_k_descending_ties_lower_index_first(dtype):
    if dtype == "bool_":
        x = np.array([[True, False, True, False, True, True]])
    elif dtype == "float32":
        x = np.array([[1.0, np.nan, -0.0, 3.0, 0.0, 3.0], [np.nan, np.nan, -np.inf, 2.0, 2.0, -0.0]], np.float32)
    else:
        x = np.array([[3, 1, 3, 0, 1, 3], [0, 0, 0, 5, 0, 5]], dtype)
    for k in (0, 1, 3, 6):
        g = trace(lambda a: evoxc.top_k(a, k), TensorSpec(x.shape, getattr(evoxc, dtype)))
        check_exact(g, [x], f"k={k}")


def test_sort_family_symbolic():
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    check_exact(trace(lambda a: evoxc.sort(a, axis=0), TensorSpec((N, 3))), [x])
    check_exact(trace(lambda a: evoxc.argsort(a, axis=0), TensorSpec((N, 3))), [x])
    check_exact(trace(lambda a: evoxc.top_k(a, 2), TensorSpec((3, N))), [x.T.copy()])


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_sides_nan_duplicates_unsorted(side):
    a = np.array([-np.inf, -1.0, 0.0, 0.0, 2.0, 2.0, 2.0, np.inf, np.nan, np.nan], np.float32)
    v = np.array([[np.nan, -np.inf, -0.0, 0.0], [2.0, 5.0, np.inf, -3.0]], np.float32)
    g = trace(lambda s, q: evoxc.searchsorted(s, q, side=side), TensorSpec((10,)), TensorSpec((2, 4)))
    check_exact(g, [a, v])
    # An unsorted operand: unspecified, but the export follows the interpreter's binary search exactly.
    u = RNG.standard_normal(10).astype(np.float32)
    check_exact(g, [u, v])
    gi = trace(lambda s, q: evoxc.searchsorted(s, q, side=side), TensorSpec((N,), evoxc.int16),
               TensorSpec((5,), evoxc.int16))
    for n in (0, 1, 7):
        s = np.sort(RNG.integers(-5, 5, n)).astype(np.int16)
        check_exact(gi, [s, np.array([-6, -1, 0, 3, 9], np.int16)], f"N={n}")


# ---------------------------------------------------------------- layout


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_pad_modes_wide_and_cropping(mode):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    widths = [(5, 2), (-1, 6)] if mode != "constant" else [(2, -1), (-2, 3)]
    g = trace(lambda a: evoxc.pad(a, widths, mode=mode), TensorSpec((3, 4), evoxc.int32))
    check_exact(g, [x], mode)
    one = trace(lambda a: evoxc.pad(a, [(3, 2)], mode=mode), TensorSpec((1,), evoxc.int32))
    check_exact(one, [np.array([7], np.int32)], mode + " n=1")
    sym = trace(lambda a: evoxc.pad(a, [(3, 4), (0, 0)], mode=mode), TensorSpec((N, 2), evoxc.int32))
    for n in (1, 2, 5):
        check_exact(sym, [np.arange(2 * n, dtype=np.int32).reshape(n, 2)], f"{mode} N={n}")


def test_pad_interior_and_negative():
    x = RNG.standard_normal((3, 2)).astype(np.float32)
    g = trace(lambda a: evoxc.pad_general(a, -1.5, [1, -2], [-1, 2], [2, 1]), TensorSpec((3, 2)))
    check_exact(g, [x])
    g = trace(lambda a: evoxc.pad_general(a, 7.0, [2, 0], [1, -1], [1, 0]), TensorSpec((N, 2)))
    for n in (3, 1, 0):
        check_exact(g, [x[:n]], f"N={n}")


def test_gathers_with_symbolic_slice_sizes():
    # A static axis taken from while another axis is symbolic: dynamic_gather with a shape-tensor slice size.
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    for mode in ("edge", "reflect", "symmetric"):
        text = check_exact(trace(lambda a: evoxc.pad(a, [(0, 0), (2, 3)], mode=mode), TensorSpec((N, 3))), [x], mode)
        assert '"stablehlo.dynamic_gather"' in text
    check_exact(trace(lambda a: evoxc.repeat(a, [2, 0, 3], axis=1), TensorSpec((N, 3))), [x])
    check_exact(trace(lambda a: evoxc.diagonal(a, 1, 1, 2), TensorSpec((N, 3, 3))), [np.stack([x[:3]] * 4)])
    check_exact(trace(lambda a, i: _gather(a, i, [1]), TensorSpec((N, 3)), TensorSpec((2, 1), evoxc.int32)),
                [x, np.array([[2], [-4]], np.int32)])


@pytest.mark.parametrize("k", [-5, -1, 0, 2, 7])
def test_tril_triu_diagonal_offsets(k):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    check_exact(trace(lambda a: evoxc.tril(a, k), TensorSpec((2, 3, 4))), [x])
    check_exact(trace(lambda a: evoxc.triu(a, k), TensorSpec((2, 3, 4))), [x])
    for a1, a2 in ((0, 1), (2, 0), (1, 2)):
        g = trace(lambda a: evoxc.diagonal(a, offset=k, axis1=a1, axis2=a2), TensorSpec((2, 3, 4)))
        check_exact(g, [x], f"diagonal {k} {a1} {a2}")


def test_tri_diagonal_symbolic():
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    check_exact(trace(lambda a: evoxc.tril(a, -1), TensorSpec((N, 3))), [x])
    check_exact(trace(lambda a: evoxc.diagonal(a, offset=1), TensorSpec((N, 3))), [x])
    check_exact(trace(lambda a: evoxc.diagonal(a, offset=-2), TensorSpec((N, 3))), [x])


def test_roll_tile_repeat_flip():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    for shifts, axes in ((5, 0), (-7, 1), ((2**62, -1), (0, 1)), (0, 1), (4, 1)):
        check_exact(trace(lambda a: evoxc.roll(a, shifts, axes), TensorSpec((3, 4))), [x], f"roll {shifts}")
    for n in (3, 1, 0):
        check_exact(trace(lambda a: evoxc.roll(a, -5, 0), TensorSpec((N, 4))), [x[:n]], f"N={n}")
        check_exact(trace(lambda a: evoxc.roll(a, 2**62 + 1, 0), TensorSpec((N, 4))), [x[:n]], f"N={n}")
    check_exact(trace(lambda a: evoxc.tile(a, (2, 3)), TensorSpec((3, 4))), [x])
    check_exact(trace(lambda a: evoxc.tile(a, (2, 1)), TensorSpec((N, 4))), [x])
    check_exact(trace(lambda a: evoxc.repeat(a, 3, axis=1), TensorSpec((3, 4))), [x])
    check_exact(trace(lambda a: evoxc.repeat(a, [0, 2, 1], axis=0), TensorSpec((3, 4))), [x])
    check_exact(trace(lambda a: evoxc.repeat(a, 2, axis=0), TensorSpec((N, 4))), [x])
    check_exact(trace(lambda a: evoxc.flip(a, (0, 1)), TensorSpec((N, 4))), [x])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "uint64", "int64"])
def test_one_hot_out_of_range_rows(dtype):
    info = np.iinfo(dtype)
    i = np.array([0, 3, 4, info.max, info.min, 2], dtype)
    for out in (evoxc.float32, evoxc.bool_, evoxc.int16):
        g = trace(lambda a: evoxc.one_hot(a, 4, dtype=out), TensorSpec((6,), getattr(evoxc, dtype)))
        check_exact(g, [i], f"{dtype} -> {out}")
    g = trace(lambda a: evoxc.one_hot(a, 300, dtype=evoxc.float32), TensorSpec((6,), getattr(evoxc, dtype)))
    check_exact(g, [i], "300 classes")


def test_shape_ops_symbolic():
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    check_exact(trace(lambda a: evoxc.reshape(a, (-1,)), TensorSpec((N, 6))), [x])
    check_exact(trace(lambda a: evoxc.reshape(a, (-1, 3, 2)), TensorSpec((N, 6))), [x])
    check_exact(trace(lambda a: evoxc.expand_dims(a, 1), TensorSpec((N, 6))), [x])
    check_exact(trace(lambda a: evoxc.squeeze(evoxc.expand_dims(a, 0), 0), TensorSpec((N, 6))), [x])
    check_exact(trace(lambda a: evoxc.transpose(a), TensorSpec((N, 6))), [x])
    check_exact(trace(lambda a: evoxc.broadcast_to(a[:, None, :], (a.shape[0], 3, 6)), TensorSpec((N, 6))), [x])
    check_exact(trace(lambda a: evoxc.concatenate([a, a * 2.0, a[:1]], 0), TensorSpec((N, 6))), [x])
    check_exact(trace(lambda a: a[1:, ::2], TensorSpec((N, 6))), [x])
    check_exact(trace(lambda a: a[:, 1:5:3], TensorSpec((N, 6))), [x])


def test_slice_strides_and_empty():
    x = RNG.standard_normal((5, 7)).astype(np.float32)
    check_exact(trace(lambda a: a[1:5:3, ::4], TensorSpec((5, 7))), [x])
    check_exact(trace(lambda a: a[3:3, :], TensorSpec((5, 7))), [x])
    check_exact(trace(lambda a: evoxc.concatenate([a[:0], a[2:]], 0), TensorSpec((5, 7))), [x])


# ---------------------------------------------------------------- creation


NUMERIC = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", NUMERIC)
def test_arange_linspace_exact(dtype):
    t = getattr(evoxc, dtype)
    cases = [lambda: evoxc.arange(-3, 17, 3, dtype=t), lambda: evoxc.arange(0.1, 2.0, 0.3, dtype=t),
             lambda: evoxc.arange(300, -300, -7, dtype=t), lambda: evoxc.linspace(-2.5, 300.25, 13, dtype=t),
             lambda: evoxc.linspace(1e30, -1e30, 5, dtype=t), lambda: evoxc.linspace(0, 1, 7, endpoint=False, dtype=t),
             lambda: evoxc.linspace(3, 5, 1, dtype=t), lambda: evoxc.linspace(3, 5, 0, dtype=t)]
    for k, c in enumerate(cases):
        check_exact(trace(c), [], f"{dtype} case {k}")


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "uint64", "float16", "float32", "float64"])
def test_long_ranges(dtype):
    t = getattr(evoxc, dtype)
    n = (1 << 20) + 3
    g = trace(lambda: evoxc.arange(-5, n - 5, 1, dtype=t))
    text = check_exact(g, [], "int arange")
    if dtype.startswith(("int", "uint")):
        # A long all-int range into an int dtype is written as its (exact, wrapping int64) formula.
        assert '"stablehlo.iota"' in text and len(text) < 100000
    # Float-valued ranges are constants: XLA contracts start + i * step into an fma, so no formula is exact.
    check_exact(trace(lambda: evoxc.arange(-1e3, 1e3, 2e3 / n, dtype=t)), [], "float arange")
    check_exact(trace(lambda: evoxc.linspace(-7.25, 1e5, n, dtype=t)), [], "linspace")


@pytest.mark.parametrize("dtype", ["bool_", "int8", "uint8", "float16", "float32", "int64"])
def test_iota_full_symbolic(dtype):
    t = getattr(evoxc, dtype)
    g = trace(lambda a: (evoxc.iota((a.shape[0], 300), 1, t), evoxc.full_like(a, 2.75, dtype=t),
                         evoxc.zeros_like(a)), TensorSpec((N,)))
    check_exact(g, [np.zeros(4, np.float32)])
    check_exact(trace(lambda: evoxc.iota((2, 300), 1, t)), [])


# ---------------------------------------------------------------- row_switch


def test_row_switch_runs_binary_shared_and_unary():
    fns = [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: x * y, lambda x, y: evoxc.maximum(x, y),
           lambda x, y: x + y]
    g = evoxc.batch_functions(fns, axes=(0, None), switch_ops=True)(TensorSpec((5, 3)), TensorSpec((3,)))
    x = np.array([[1.0, np.nan, -0.0]] * 5, np.float32) * np.arange(1, 6, dtype=np.float32)[:, None]
    text = check_exact(g, [x, np.array([0.5, 2.0, 0.0], np.float32)])
    assert text.count('"stablehlo.concatenate"') >= 1
    fns = [evoxc.sin, evoxc.cos, evoxc.cos, evoxc.exp]
    g = evoxc.batch_functions(fns, switch_ops=True)(TensorSpec((4, 6)))
    check_close(g, [RNG.standard_normal((4, 6)).astype(np.float32)])


def test_row_switch_symbolic_row_extent():
    # The interpreter needs static non-leading extents, so numpy is the reference here.
    fns = [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: x * y, lambda x, y: evoxc.maximum(x, y)]
    g = evoxc.batch_functions(fns, axes=(0, None), switch_ops=True)(TensorSpec((4, N)), TensorSpec((N,)))
    text = evoxc.export_stablehlo(g)
    assert '"stablehlo.real_dynamic_slice"' in text
    x = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
    y = np.array([1.5, -2.0, 0.25], np.float32)
    got = xla_run(runnable(text, [x, y]), [x, y])[0]
    np.testing.assert_array_equal(got, np.stack([x[0] + y, x[1] * y, x[2] * y, np.maximum(x[3], y)]))


# ---------------------------------------------------------------- golden checks of the ops written


def test_golden_ops():
    def written(fn, *specs):
        return ops_written(evoxc.export_stablehlo(trace(fn, *specs)))

    assert written(lambda a: evoxc.reshape(a, (-1,)), TensorSpec((N, 2))) >= {"stablehlo.dynamic_reshape",
                                                                                 "stablehlo.get_dimension_size"}
    assert "stablehlo.real_dynamic_slice" in written(lambda a: a[1:], TensorSpec((N, 2)))
    assert "stablehlo.slice" in written(lambda a: a[1:, ::2], TensorSpec((4, 3)))
    assert "stablehlo.reverse" in written(lambda a: evoxc.flip(a, 0), TensorSpec((4, 3)))
    assert written(lambda a: evoxc.roll(a, 1, 0), TensorSpec((4, 3))) >= {"stablehlo.slice", "stablehlo.concatenate"}
    assert written(lambda a: evoxc.sort(a), TensorSpec((4, 3))) >= {"stablehlo.sort", "stablehlo.compare"}
    text = evoxc.export_stablehlo(trace(lambda a: evoxc.argsort(a), TensorSpec((4, 3))))
    assert "is_stable = true" in text and '"stablehlo.iota"' in text
    text = evoxc.export_stablehlo(trace(lambda a, i: _gather(a, i, [1]), TensorSpec((4, 3)),
                                        TensorSpec((2, 1), evoxc.uint64)))
    assert "offset_dims = [1], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1" in text
    assert '"stablehlo.minimum"' in text  # uint64 indices saturate at INT64_MAX before the int64 convert
    text = evoxc.export_stablehlo(trace(lambda a, i, u: _scatter(a, i, u, [0], "add"), TensorSpec((4,), evoxc.int32),
                                        TensorSpec((2, 1), evoxc.int32), TensorSpec((2,), evoxc.int32)))
    assert text.count('"stablehlo.scatter"') == 1 and '"stablehlo.while"' not in text  # ints commute
    text = evoxc.export_stablehlo(trace(lambda: evoxc.linspace(0.0, 1.0, 5)))
    assert ops_written(text) == {"stablehlo.constant"}
    assert "stablehlo.dynamic_iota" in written(lambda a: evoxc.iota((a.shape[0],), 0, evoxc.int32), TensorSpec((N,)))
    assert "stablehlo.pad" in written(lambda a: evoxc.pad(a, [(1, 2)]), TensorSpec((4,)))
    assert "stablehlo.gather" in written(lambda a: evoxc.pad(a, [(1, 2)], mode="reflect"), TensorSpec((4,)))
