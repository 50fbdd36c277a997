"""StableHLO export of control flow (cond -> if/case, while_loop -> while, scan -> a counted while), checked on
XLA against the interpreter: both branch kinds, clamped indices, captured values, zero-step loops, reversed scans,
nesting, symbolic extents."""

import numpy as np
import pytest

from stablehlo_util import check_graph

import evoxc
from evoxc import TensorSpec


def test_cond_bool_both_branches_and_captures():
    def f(p, x, y):
        return evoxc.cond(p, lambda a: evoxc.sin(a) * y, lambda a: evoxc.cos(a) + y, x)

    g = evoxc.trace(f, TensorSpec((), evoxc.bool_), TensorSpec((4,)), TensorSpec((4,)))
    x = evoxc.tensor(np.linspace(-1, 1, 4, dtype=np.float32))
    y = evoxc.tensor(np.arange(4, dtype=np.float32))
    for p in (True, False):
        text = check_graph(g, [evoxc.tensor(np.array(p)), x, y], f"cond {p}")
    assert '"stablehlo.if"' in text


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_switch_index_is_clamped(dtype):
    def f(i, x):
        return evoxc.switch(i, [lambda a: a + 1.0, lambda a: a * 2.0, lambda a: a - 3.0], x)

    g = evoxc.trace(f, TensorSpec((), getattr(evoxc, np.dtype(dtype).name)), TensorSpec((3,)))
    x = evoxc.tensor(np.array([1.0, 2.0, 3.0], np.float32))
    for i in (-5, 0, 1, 2, 3, 2**31 - 1):
        if dtype == np.int32 or abs(i) < 2**31:
            text = check_graph(g, [evoxc.tensor(np.array(i, dtype)), x], f"switch {i}")
    assert '"stablehlo.case"' in text and '"stablehlo.clamp"' in text


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

    g = evoxc.trace(f, TensorSpec((), evoxc.float32))
    check_graph(g, [evoxc.tensor(np.float32(2.0))], "newton")

    def never(x):
        return evoxc.while_loop(lambda s: s > 100.0, lambda s: s + 1.0, x)

    check_graph(evoxc.trace(never, TensorSpec(())), [evoxc.tensor(np.float32(3.0))], "zero steps")


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_carry_and_stacked_ys(reverse):
    def f(c0, xs):
        def body(c, x):
            c = c * 0.5 + x
            return c, c * 2.0

        return evoxc.scan(body, c0, xs, reverse=reverse)

    g = evoxc.trace(f, TensorSpec((3,)), TensorSpec((5, 3)))
    rng = np.random.default_rng(0)
    text = check_graph(g, [evoxc.tensor(rng.standard_normal(3).astype(np.float32)),
                           evoxc.tensor(rng.standard_normal((5, 3)).astype(np.float32))], f"scan {reverse}")
    assert '"stablehlo.while"' in text and '"stablehlo.dynamic_update_slice"' in text


def test_scan_symbolic_length_and_fori_loop():
    n = evoxc.dim("N")

    def f(xs):
        return evoxc.scan(lambda c, x: (c + x, c), evoxc.fill((2,), 0.0), xs)

    g = evoxc.trace(f, TensorSpec((n, 2)))
    for rows in (0, 1, 4):
        check_graph(g, [evoxc.tensor(np.arange(rows * 2, dtype=np.float32).reshape(rows, 2))], f"scan N={rows}")

    def h(x):
        return evoxc.fori_loop(0, 4, lambda i, acc: acc * 2.0 + 1.0, x)

    check_graph(evoxc.trace(h, TensorSpec((2,))), [evoxc.tensor(np.ones(2, np.float32))], "fori_loop")


def test_nested_control_flow():
    def f(p, x):
        def inner(a):
            return evoxc.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * a), (evoxc.fill((), 0, evoxc.int32), a))[1]

        return evoxc.cond(p, inner, lambda a: -a, x)

    g = evoxc.trace(f, TensorSpec((), evoxc.bool_), TensorSpec((2,)))
    for p in (True, False):
        check_graph(g, [evoxc.tensor(np.array(p)), evoxc.tensor(np.array([1.5, -2.0], np.float32))], f"nested {p}")
