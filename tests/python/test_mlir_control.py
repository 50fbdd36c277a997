"""The mlir backend's control flow (cond -> scf.if / scf.index_switch, while_loop -> scf.while, scan -> scf.while over
its steps with slices) and row_switch, checked against the interpreter: both branch kinds, clamped indices, captured
values, multiple results, zero-step loops, reversed scans, symbolic lengths, nesting, row_switch runs, and run
limits."""

import re
import time

import numpy as np
import pytest

from mlir_util import assert_same, check_fn, check_graph, run_both

import evoxc
from evoxc import TensorSpec

RNG = np.random.default_rng(5)
N = evoxc.dim("N")


def t(a):
    return evoxc.tensor(np.asarray(a))


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- cond


def test_cond_bool_both_branches_and_captures():
    def f(p, x, y):
        return evoxc.cond(p, lambda a: evoxc.tanh(a) * y, lambda a: evoxc.exp(a) + y, x)

    g = evoxc.trace(f, TensorSpec((), evoxc.bool_), TensorSpec((4,)), TensorSpec((4,)))
    x, y = t(np.linspace(-1, 1, 4, dtype=np.float32)), t(np.arange(4, dtype=np.float32))
    for p in (True, False):
        text = check_graph(g, [t(np.array(p)), x, y], f"cond {p}")
    assert "scf.if" in text


def test_cond_several_results_of_mixed_dtypes():
    def f(p, x, n):
        return evoxc.cond(p, lambda a, b: (a * 2.0, b + b, a), lambda a, b: (evoxc.exp(a), b * b, a + 1.0), x, n)

    g = evoxc.trace(f, TensorSpec((), evoxc.bool_), TensorSpec((2, 3), evoxc.float64), TensorSpec((5,), evoxc.int32))
    x, n = t(RNG.standard_normal((2, 3))), t(np.arange(-2, 3, dtype=np.int32))
    for p in (True, False):
        check_graph(g, [t(np.array(p)), x, n], f"cond results {p}")


def test_cond_returning_captures_only():
    # Branches that compute nothing of their own: they yield a captured value and an operand unchanged.
    def f(p, x, y):
        return evoxc.cond(p, lambda a: (y, a), lambda a: (a, y), x)

    g = evoxc.trace(f, TensorSpec((), evoxc.bool_), TensorSpec((3,)), TensorSpec((3,)))
    for p in (True, False):
        check_graph(g, [t(np.array(p)), t(f32(3)), t(f32(3))], f"captures {p}")


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_switch_index_is_clamped(dtype):
    def f(i, x):
        return evoxc.switch(i, [lambda a: a + 1.0, lambda a: a * 2.0, lambda a: evoxc.tanh(a)], x)

    g = evoxc.trace(f, TensorSpec((), getattr(evoxc, np.dtype(dtype).name)), TensorSpec((3,)))
    x = t(np.array([1.0, 2.0, 3.0], np.float32))
    cases = [-5, 0, 1, 2, 3, 2**31 - 1, -(2**31)]
    if dtype == np.int64:
        cases += [2**40, -(2**40), 2**63 - 1, -(2**63)]  # must not wrap into range when narrowed
    for i in cases:
        text = check_graph(g, [t(np.array(i, dtype)), x], f"switch {i}")
    assert "scf.index_switch" in text


def test_switch_with_one_branch():
    g = evoxc.trace(lambda i, x: evoxc.switch(i, [lambda a: a * 3.0], x), TensorSpec((), evoxc.int32), TensorSpec((2,)))
    for i in (-1, 0, 7):
        check_graph(g, [t(np.array(i, np.int32)), t(f32(2))], f"one branch {i}")


def test_cond_symbolic_extents():
    def f(p, x):
        return evoxc.cond(p, lambda a: a * a, lambda a: a + 1.0, x)

    g = evoxc.trace(f, TensorSpec((), evoxc.bool_), TensorSpec((N, 2)))
    for rows in (0, 1, 3):
        for p in (True, False):
            check_graph(g, [t(np.array(p)), t(f32(rows, 2))], f"symbolic {rows} {p}")


# ---------------------------------------------------------------- while_loop


def test_while_loop_newton_and_zero_steps():
    def f(x):
        def cond_fn(s):
            y, prev = s
            return evoxc.abs(y - prev) > 1e-6

        def body_fn(s):
            y, _ = s
            return 0.5 * (y + x / y), y

        y, _ = evoxc.while_loop(cond_fn, body_fn, (x, evoxc.fill((), 0.0)))
        return y

    check_graph(evoxc.trace(f, TensorSpec((), evoxc.float32)), [t(np.float32(2.0))], "newton")

    def never(x):
        return evoxc.while_loop(lambda s: s > 100.0, lambda s: s + 1.0, x)

    g = evoxc.trace(never, TensorSpec(()))
    text = check_graph(g, [t(np.float32(3.0))], "zero steps")
    check_graph(g, [t(np.float32(99.5))], "one step")
    assert "scf.while" in text


def test_while_loop_int_counter_and_tensor_carry():
    def f(x, n):
        def body(s):
            i, acc = s
            return i + 1, acc * 0.5 + x

        return evoxc.while_loop(lambda s: s[0] < n, body, (evoxc.fill((), 0, evoxc.int64), evoxc.zeros_like(x)))

    g = evoxc.trace(f, TensorSpec((2, 3)), TensorSpec((), evoxc.int64))
    for n in (-3, 0, 1, 6):
        check_graph(g, [t(f32(2, 3)), t(np.int64(n))], f"counter {n}")


def test_while_loop_symbolic_carry():
    def f(x):
        return evoxc.while_loop(lambda s: evoxc.sum(s) < 100.0, lambda s: s * 2.0 + 1.0, x)

    g = evoxc.trace(f, TensorSpec((N,)))
    for rows in (1, 4):
        check_graph(g, [t(np.abs(f32(rows)))], f"symbolic while {rows}")


# ---------------------------------------------------------------- scan


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_carry_and_stacked_ys(reverse):
    def f(c0, xs):
        def body(c, x):
            c = c * 0.5 + x
            return c, c * 2.0

        return evoxc.scan(body, c0, xs, reverse=reverse)

    g = evoxc.trace(f, TensorSpec((3,)), TensorSpec((5, 3)))
    text = check_graph(g, [t(f32(3)), t(f32(5, 3))], f"scan {reverse}")
    assert "scf.while" in text and "tensor.insert_slice" in text


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_several_xs_and_ys_scalar_rows(reverse):
    # Scalar rows (xs of rank 1, ys of rank-0 slices), an int carry, two xs of different dtypes.
    def f(c0, k0, a, b):
        def body(c, x):
            s, k = c
            u, v = x
            s = s + u * evoxc.convert(v, evoxc.float32)
            return (s, k + v), (s, k * v, u)

        return evoxc.scan(body, (c0, k0), (a, b), reverse=reverse)

    g = evoxc.trace(f, TensorSpec(()), TensorSpec((), evoxc.int32), TensorSpec((6,)), TensorSpec((6,), evoxc.int32))
    check_graph(g, [t(np.float32(0.5)), t(np.int32(2)), t(f32(6)), t(np.arange(6, dtype=np.int32) - 2)],
                f"scan scalars {reverse}")


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_symbolic_length(reverse):
    def f(xs):
        return evoxc.scan(lambda c, x: (c + x, c * x), evoxc.fill((2,), 1.0), xs, reverse=reverse)

    g = evoxc.trace(f, TensorSpec((N, 2)))
    for rows in (0, 1, 4):
        check_graph(g, [t(np.arange(rows * 2, dtype=np.float32).reshape(rows, 2))], f"scan N={rows}")


def test_scan_symbolic_inner_extent():
    def f(c0, xs):
        return evoxc.scan(lambda c, x: (c * x, c + x), c0, xs)

    g = evoxc.trace(f, TensorSpec((N,)), TensorSpec((3, N)))
    for n in (0, 2, 5):
        check_graph(g, [t(f32(n)), t(f32(3, n))], f"inner N={n}")


def test_scan_static_zero_length_and_fori_loops():
    g = evoxc.trace(lambda c, xs: evoxc.scan(lambda c, x: (c + x, c), c, xs), TensorSpec((3,)), TensorSpec((0, 3)))
    check_graph(g, [t(f32(3)), t(np.zeros((0, 3), np.float32))], "zero rows")

    def h(x):
        return evoxc.fori_loop(0, 4, lambda i, acc: acc * 2.0 + evoxc.convert(i, evoxc.float32), x)

    check_graph(evoxc.trace(h, TensorSpec((2,))), [t(np.ones(2, np.float32))], "fori_loop")
    check_graph(evoxc.trace(lambda x: evoxc.fori_loop(3, 3, lambda i, a: a * 2.0, x), TensorSpec((2,))),
                [t(f32(2))], "fori_loop zero steps")

    def dyn(x, n):
        return evoxc.fori_loop(0, n, lambda i, acc: acc + evoxc.convert(i, evoxc.float32), x)

    g = evoxc.trace(dyn, TensorSpec((2,)), TensorSpec((), evoxc.int32))
    for n in (-1, 0, 5):
        check_graph(g, [t(f32(2)), t(np.int32(n))], f"fori_loop to {n}")


def test_scan_given_length_and_symbolic_xs():
    g = evoxc.trace(lambda c, xs: evoxc.scan(lambda c, x: (c + x, c * 2.0), c, xs, length=3, reverse=True),
                    TensorSpec((2,)), TensorSpec((N, 2)))
    check_graph(g, [t(f32(2)), t(f32(3, 2))], "length 3, N = 3")
    # A mismatch is the interpreter's ValidationError on both (the compiled program runs its checks first).
    messages = []
    for exe in (evoxc.build(g), evoxc.load(evoxc.compile(evoxc.lower(g, "mlir")))):
        with pytest.raises(evoxc.ValidationError, match="leading extent of xs operand 1 and the scan length") as e:
            evoxc.run(exe, t(f32(2)), t(np.zeros((0, 2), np.float32)))
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_scan_length_without_xs():
    def f(c0):
        return evoxc.scan(lambda c, _: (c * 1.5, c), c0, None, length=4)

    check_graph(evoxc.trace(f, TensorSpec((2,))), [t(f32(2))], "length only")


# ---------------------------------------------------------------- loop-carried buffers


def test_loop_carries_swapped_viewed_and_captured():
    # Each step's carry is copied into the loop's own buffers: a swap, a reshaped (view) swap, a captured value
    # and an unchanged carry must all read the step's old values.
    def f(a, b, w):
        def body(s):
            i, x, y, z, u = s
            return i + 1, evoxc.reshape(y, (6,)), evoxc.reshape(x, (2, 3)) + 1.0, w, u

        return evoxc.while_loop(lambda s: s[0] < 3, body, (evoxc.fill((), 0, evoxc.int32), a, b, a, b))

    g = evoxc.trace(f, TensorSpec((6,)), TensorSpec((2, 3)), TensorSpec((6,)))
    check_graph(g, [t(f32(6)), t(f32(2, 3)), t(f32(6))], "swaps")

    def h(a, b, xs):
        return evoxc.scan(lambda c, x: ((c[1], c[0] + x), c[0]), (a, b), xs)

    g = evoxc.trace(h, TensorSpec((3,)), TensorSpec((3,)), TensorSpec((4, 3)))
    check_graph(g, [t(f32(3)), t(f32(3)), t(f32(4, 3))], "scan swap, y the old carry")
    g = evoxc.trace(lambda c, xs: evoxc.scan(lambda c, x: (x, c), c, xs), TensorSpec((3,)), TensorSpec((4, 3)))
    check_graph(g, [t(f32(3)), t(f32(4, 3))], "scan carry a row of xs")


def test_loops_leave_their_inputs_unchanged():
    def f(c0, xs):
        return evoxc.scan(lambda c, x: (c + x, c), c0, xs)

    def w(x):
        return evoxc.while_loop(lambda s: evoxc.sum(s) < 100.0, lambda s: s * 2.0 + 1.0, x)

    for g, inputs in ((evoxc.trace(f, TensorSpec((3,)), TensorSpec((4, 3))), [f32(3), f32(4, 3)]),
                      (evoxc.trace(w, TensorSpec((3,))), [np.ones(3, np.float32)])):
        exe = evoxc.load(evoxc.compile(evoxc.lower(g, "mlir")))
        tensors = [t(a.copy()) for a in inputs]
        evoxc.run(exe, *tensors)
        for a, b in zip(tensors, inputs):
            np.testing.assert_array_equal(a.numpy(), b)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float64"])
def test_loops_over_dtypes(dtype):
    dt = getattr(evoxc, "bool_" if dtype == "bool" else dtype)

    def f(c0, xs):
        def body(c, x):
            n = evoxc.logical_xor(c, x) if dtype == "bool" else c * x + c
            return n, evoxc.cond(evoxc.any(n) if dtype == "bool" else evoxc.sum(n) > evoxc.sum(c), lambda a: a,
                                 lambda a: x, n)

        return evoxc.scan(body, c0, xs, reverse=True)

    g = evoxc.trace(f, TensorSpec((3,), dt), TensorSpec((5, 3), dt))
    rng = np.random.default_rng(1)
    if dtype == "bool":
        c0, xs = rng.integers(0, 2, 3).astype(bool), rng.integers(0, 2, (5, 3)).astype(bool)
    else:
        c0, xs = (rng.integers(-2, 3, 3)).astype(dtype), rng.integers(-2, 3, (5, 3)).astype(dtype)
    check_graph(g, [t(c0), t(xs)], f"scan {dtype}")


def test_control_flow_at_O0():
    def f(p, xs):
        c, ys = evoxc.scan(lambda c, x: (c * 0.5 + x, evoxc.tanh(c)), evoxc.zeros_like(xs[0]), xs)
        return evoxc.cond(p, lambda a: a * 2.0, lambda a: evoxc.exp(a), c), ys

    g = evoxc.trace(f, TensorSpec((), evoxc.bool_), TensorSpec((4, 3)))
    for p in (True, False):
        check_graph(g, [t(np.array(p)), t(f32(4, 3))], f"O0 {p}", opt_level=0)


# ---------------------------------------------------------------- nesting


def test_cond_without_operands():
    def f(p, x):
        return evoxc.cond(p, lambda: x * 2.0, lambda: evoxc.exp(x))

    g = evoxc.trace(f, TensorSpec((), evoxc.bool_), TensorSpec((3,)))
    for p in (True, False):
        check_graph(g, [t(np.array(p)), t(f32(3))], f"no operands {p}")


def test_nested_loops_and_switch_in_loop():
    def f(x):
        def outer(s):
            i, acc = s
            inner = evoxc.while_loop(lambda r: r[0] < i, lambda r: (r[0] + 1, r[1] * 0.5 + 1.0),
                                     (evoxc.fill((), 0, evoxc.int32), acc))[1]
            # i - 2 runs from -2 to 2: clamped to the first branch, then each branch, then the last again.
            acc = evoxc.switch(i - 2, [lambda a: a + 1.0, lambda a: a * 3.0, lambda a: evoxc.tanh(a)], inner)
            return i + 1, acc

        return evoxc.while_loop(lambda s: s[0] < 5, outer, (evoxc.fill((), 0, evoxc.int32), x))

    check_graph(evoxc.trace(f, TensorSpec((3,))), [t(f32(3))], "nested loops")


def test_nested_control_flow():
    def f(p, x):
        def inner(a):
            return evoxc.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * a),
                                    (evoxc.fill((), 0, evoxc.int32), a))[1]

        return evoxc.cond(p, inner, lambda a: -a, x)

    g = evoxc.trace(f, TensorSpec((), evoxc.bool_), TensorSpec((2,)))
    for p in (True, False):
        check_graph(g, [t(np.array(p)), t(np.array([1.5, -2.0], np.float32))], f"nested {p}")


def test_cond_and_scan_inside_scan():
    def f(c0, xs, w):
        def body(c, x):
            c = evoxc.cond(evoxc.sum(x) > 0.0, lambda a: a * w + x, lambda a: a - x, c)
            inner, ys = evoxc.scan(lambda d, r: (d + r * c, d), evoxc.zeros_like(c), evoxc.stack([x, c]))
            return c, inner + ys[1]

        return evoxc.scan(body, c0, xs)

    g = evoxc.trace(f, TensorSpec((3,)), TensorSpec((6, 3)), TensorSpec((3,)))
    check_graph(g, [t(f32(3)), t(f32(6, 3)), t(f32(3))], "cond in scan")


# ---------------------------------------------------------------- row_switch


def test_row_switch_sample_graphs():
    for dtype in ("float32", "int16", "uint8", "bool"):
        g = evoxc._core._op_sample_graph("row_switch", getattr(evoxc, "bool_" if dtype == "bool" else dtype))
        x = [np.asarray(RNG.integers(0, 2, tuple(int(d) for d in s.shape)).astype(bool)) if dtype == "bool"
             else (RNG.standard_normal(tuple(int(d) for d in s.shape)) * 9).astype(dtype) for s in g.input_specs]
        text = check_graph(g, [t(a) for a in x], f"row_switch {dtype}")
    assert "tensor.insert_slice" in text


def test_row_switch_runs_binary_shared_and_unary():
    fns = [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: x * y, lambda x, y: evoxc.maximum(x, y),
           lambda x, y: x + y]
    g = evoxc.batch_functions(fns, axes=(0, None), switch_ops=True)(TensorSpec((5, 3)), TensorSpec((3,)))
    x = np.array([[1.0, np.nan, -0.0]] * 5, np.float32) * np.arange(1, 6, dtype=np.float32)[:, None]
    _, got, want = run_both(g, [x, np.array([0.5, 2.0, 0.0], np.float32)])
    for a, b in zip(got, want):  # bit for bit: NaN and signed zeros included
        assert a.dtype == b.dtype and np.array_equal(a.view(np.uint32), b.view(np.uint32))
    fns = [evoxc.tanh, evoxc.exp, evoxc.exp, evoxc.tanh]
    g = evoxc.batch_functions(fns, switch_ops=True)(TensorSpec((4, 6)))
    check_graph(g, [f32(4, 6)], "unary runs")


def test_row_switch_comparisons_and_alternating_rows():
    fns = [lambda x, y: x < y, lambda x, y: x >= y] * 4
    g = evoxc.batch_functions(fns, axes=(0, 0), switch_ops=True)(TensorSpec((8, 2, 3)), TensorSpec((8, 2, 3)))
    a = f32(8, 2, 3)
    b = np.where(RNG.integers(0, 2, (8, 2, 3)) == 1, a, f32(8, 2, 3))  # ties too
    check_graph(g, [a, b], "comparisons")


@pytest.mark.parametrize("rows", [12, 40])
def test_row_switch_many_runs(rows):
    # More runs than are written out one by one: a loop over the table of runs switching on the variant.
    rng = np.random.default_rng(rows)
    binary = [lambda x, y: x + y, lambda x, y: x * y, evoxc.maximum, lambda x, y: x - y]
    picks = np.arange(rows) % 4 if rows <= 12 else rng.integers(0, 4, rows)
    picks[: rows // 4] = 2  # one long run among the short ones
    g = evoxc.batch_functions([binary[k] for k in picks], axes=(0, None), switch_ops=True)(
        TensorSpec((rows, 2, 5)), TensorSpec((5,)))
    assert "evoxc.row_switch" in g.to_string()
    x = f32(rows, 2, 5)
    x[0, 0, 0], x[-1, 1, 1] = np.nan, -0.0
    text, got, want = run_both(g, [x, f32(5)])
    assert "scf.index_switch" in text
    for a, b in zip(got, want):  # bit for bit
        assert a.dtype == b.dtype and np.array_equal(a.view(np.uint32), b.view(np.uint32))
    unary = [evoxc.tanh, evoxc.exp, evoxc.neg]
    g = evoxc.batch_functions([unary[k % 3] for k in picks], switch_ops=True)(TensorSpec((rows, 3)))
    check_graph(g, [f32(rows, 3)], "unary runs")
    compare = [lambda x, y: x < y, lambda x, y: x == y, lambda x, y: x >= y]
    g = evoxc.batch_functions([compare[k % 3] for k in picks], axes=(0, 0), switch_ops=True)(
        TensorSpec((rows, 4), evoxc.int16), TensorSpec((rows, 4), evoxc.int16))
    a = rng.integers(-3, 3, (rows, 4)).astype(np.int16)
    check_graph(g, [a, np.where(rng.integers(0, 2, (rows, 4)) == 1, a, 1).astype(np.int16)], "comparison runs")


def test_row_switch_chain_loops_over_one_partition():
    # A merged population: consecutive row_switch ops share one partition of rows (the common refinement of
    # their runs: the first position has a long run the others split), marked as one group that codegen runs
    # in blocks of rows on the pool (O2) or loop by loop (O1), bit for bit the same.
    rows = 40
    rng = np.random.default_rng(11)
    binary = [lambda x, y: x + y, lambda x, y: x * y, evoxc.maximum, lambda x, y: x - y]
    unary = [evoxc.tanh, evoxc.sin, evoxc.neg]
    picks = rng.integers(0, 12, (rows, 6))
    picks[:12, 0] = 2

    def program(p):
        def f(x, c):
            y = x
            for k in range(3):
                y = unary[p[2 * k + 1] % 3](binary[p[2 * k] % 4](y, c))
            return y
        return f

    g = evoxc.batch_functions([program(p) for p in picks], axes=(0, None), switch_ops=True)(
        TensorSpec((rows, 2, 33)), TensorSpec((33,)))
    assert g.to_string().count("evoxc.row_switch") == 6
    x = f32(rows, 2, 33)
    x[0, 0, 0], x[-1, 1, 1] = np.nan, -0.0
    c = f32(33)
    outs = {}
    for level in (1, 2):
        text, outs[level], want = run_both(g, [x, c], opt_level=level)
        groups = re.findall(r'evoxc.row_runs = "([^"]+)"', text)
        assert len(groups) == 6 and len(set(groups)) == 1, groups
        assert_same(outs[level][0], want[0], f"row_switch chain O{level}")
    # The blocks on the pool compute exactly what the loops one after another do.
    assert np.array_equal(outs[1][0].view(np.uint32), outs[2][0].view(np.uint32))


def test_row_switch_group_ends_at_a_whole_read():
    # %1 broadcasts %0 (rank 2) against its rank-3 rows: it reads every row of %0, not its own, so it
    # starts a group of its own (run in the same blocks as %0 it would read rows not yet written).
    rows = ", ".join(str(i % 2) for i in range(10))
    text = f"""module @"main" version 1 attributes {{inputs = "(*, *, *)", outputs = "*"}} {{
  func @main(%arg0: tensor<10x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<10x10x3xf32>) -> tensor<10x10x3xf32> {{
    %0 = evoxc.row_switch(%arg0, %arg1) attributes {{rows = [{rows}], variants = "add,multiply"}} : tensor<10x3xf32>
    %1 = evoxc.row_switch(%arg2, %0) attributes {{rows = [{rows}], variants = "subtract,add"}} : tensor<10x10x3xf32>
    evoxc.return(%1)
  }}
}}
"""
    g = evoxc.Graph.parse(text)
    low, got, want = run_both(g, [f32(10, 3), f32(3), f32(10, 10, 3)], opt_level=2)
    assert len(set(re.findall(r'evoxc.row_runs = "([^"]+)"', low))) == 2
    for a, b in zip(got, want):
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


def test_row_switch_symbolic_inner_extent():
    # The interpreter needs static non-leading extents, so numpy is the reference here.
    fns = [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: x * y, lambda x, y: evoxc.maximum(x, y)]
    ops = [np.add, np.multiply, np.multiply, np.maximum]
    for rows in ([0, 1, 1, 3], [0, 1, 3, 0, 1, 0, 3, 0, 1, 3, 1, 0]):  # written out, and a loop over runs
        g = evoxc.batch_functions([fns[k] for k in rows], axes=(0, None), switch_ops=True)(
            TensorSpec((len(rows), N)), TensorSpec((N,)))
        exe = evoxc.load(evoxc.compile(evoxc.lower(g, "mlir")))
        for n in (0, 3):
            x = np.arange(len(rows) * n, dtype=np.float32).reshape(len(rows), n) - 5
            y = np.linspace(-2, 2, n).astype(np.float32)
            got = evoxc.run(exe, t(x), t(y))
            got = got[0] if isinstance(got, (list, tuple)) else got
            assert_same(np.asarray(got.numpy()), np.stack([ops[k](x[i], y) for i, k in enumerate(rows)]),
                        f"symbolic row_switch {len(rows)} rows, N={n}")


def test_grad_through_control_flow():
    # Transformed graphs put control flow inside control flow (jvp of a scan, reverse mode of a cond).
    def f(x):
        c, ys = evoxc.scan(lambda c, r: (evoxc.tanh(c * r), c * 2.0), x, evoxc.stack([x, x * 0.5, x + 1.0]))
        return evoxc.sum(evoxc.cond(evoxc.sum(c) > 0.0, lambda a: a * a, lambda a: evoxc.exp(a), c) + ys)

    g = evoxc.trace(f, TensorSpec((3,)))
    for x in (f32(3), -np.abs(f32(3)) - 1.0, np.abs(f32(3)) + 1.0):
        check_graph(evoxc.grad(g), [t(x)], "grad")
        check_graph(evoxc.jvp(g), [(t(x),), (t(f32(3)),)], "jvp")


# ---------------------------------------------------------------- run limits


def test_run_limits_stop_compiled_loops():
    # A while loop that never ends stops at max_loop_iterations or the timeout with the interpreter's
    # RunLimitError; the count is the body's iterations on both backends.
    forever = evoxc.trace(lambda x: evoxc.while_loop(lambda c: c < 1e30, lambda c: c * 1.0 + 0.0, x),
                          TensorSpec(()))
    ten = evoxc.trace(lambda x: evoxc.while_loop(lambda c: c < 10.0, lambda c: c + 1.0, x), TensorSpec(()))
    zero = t(np.float32(0.0))
    for level in (1, 2):
        exe = evoxc.load(evoxc.compile(evoxc.lower(forever, "mlir"), opt_level=level))
        with pytest.raises(evoxc.RunLimitError, match="while_loop at .*max_loop_iterations = 1000"):
            evoxc.run(exe, zero, max_loop_iterations=1000)
        with pytest.raises(evoxc.RunLimitError, match="deadline passed"):
            evoxc.run(exe, zero, timeout=0.05)
        for e in (evoxc.load(evoxc.compile(evoxc.lower(ten, "mlir"), opt_level=level)), evoxc.build(ten)):
            assert float(evoxc.run(e, zero, max_loop_iterations=10).numpy()) == 10.0
            with pytest.raises(evoxc.RunLimitError, match="max_loop_iterations = 9"):
                evoxc.run(e, zero, max_loop_iterations=9)
        # The executable serves the next call, unlimited or not.
        assert float(evoxc.run(evoxc.load(evoxc.compile(evoxc.lower(ten, "mlir"))), zero).numpy()) == 10.0


def test_run_limits_count_scan_steps_and_nested_loops():
    # A scan's steps and the loops inside them count together, exactly as on the interpreter.
    def f(c0, xs):
        def step(c, x):
            inner = evoxc.while_loop(lambda v: v < 3.0, lambda v: v + 1.0, evoxc.zeros_like(c))
            return c + x + inner, c
        return evoxc.scan(step, c0, xs)

    g = evoxc.trace(f, TensorSpec(()), TensorSpec((5,)))
    args = [t(np.float32(1.0)), t(np.arange(5, dtype=np.float32))]
    exe = evoxc.load(evoxc.compile(evoxc.lower(g, "mlir")))
    want = [np.asarray(r.numpy()) for r in evoxc.run(evoxc.build(g), *args)]
    got = [np.asarray(r.numpy()) for r in evoxc.run(exe, *args, max_loop_iterations=20)]  # 5 steps + 15 inner
    for a, b in zip(got, want):
        assert_same(a, b, "scan under a loop limit")
    for e in (exe, evoxc.build(g)):
        with pytest.raises(evoxc.RunLimitError, match="max_loop_iterations = 19"):
            evoxc.run(e, *args, max_loop_iterations=19)


def test_run_limits_stop_a_long_scan():
    # A fori_loop of 10^9 steps is a scan: the timeout stops it at once, not after its remaining steps.
    g = evoxc.trace(lambda x: evoxc.fori_loop(0, 10**9, lambda i, a: a * 0.999 + 1.0, x), TensorSpec(()))
    exe = evoxc.load(evoxc.compile(evoxc.lower(g, "mlir")))
    start = time.perf_counter()
    with pytest.raises(evoxc.RunLimitError, match="scan at .*deadline passed"):
        evoxc.run(exe, t(np.float32(1.0)), timeout=0.05)
    assert time.perf_counter() - start < 2.0
