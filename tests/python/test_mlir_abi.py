"""The mlir backend's calling convention: results are written into the caller's buffers, a value returned twice
or an input returned as is gets its own copy, inputs are never written, constants can be results, and bad
extents of a symbolic program raise as on the interpreter."""

import numpy as np
import pytest

from mlir_util import check_fn

import evoxc


def test_the_same_value_returned_twice():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((2, 3), np.float32)
    check_fn(lambda a, b: ((a + b), (a + b)), x, y, what="add twice")
    check_fn(lambda a: (evoxc.sum(a, axes=0), evoxc.sum(a, axes=0)), x, what="sum twice")
    # Two ops that CSE merges only inside the compiler (the same unsigned remainder twice).
    u = np.arange(1, 7, dtype=np.uint32)
    check_fn(lambda a, b: (evoxc.remainder(a, b), evoxc.fmod(a, b)), u, u[::-1].copy(), what="urem/fmod")


def test_an_input_returned_as_is_and_a_constant_result():
    x = np.linspace(-1, 1, 7).astype(np.float32)
    check_fn(lambda a: (a, a * 2.0, a), x, what="passthrough")
    check_fn(lambda a: (a, evoxc.constant(evoxc.tensor(np.array([1.5, -2.0], np.float32)))), x, what="constant")


def test_outputs_are_written_in_place_and_inputs_untouched():
    n = 4096
    g = evoxc.trace(lambda a: (evoxc.tanh(a), a + 1.0), evoxc.TensorSpec((n,), evoxc.float32))
    exe = evoxc.load(evoxc.compile(evoxc.lower(g, "mlir")))
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    before = x.copy()
    out = evoxc.run(exe, x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(out[0].numpy(), np.tanh(x), rtol=2e-6, atol=1e-6)
    np.testing.assert_array_equal(out[1].numpy(), x + np.float32(1))


def test_symbolic_extents_size_the_outputs():
    g = evoxc.trace(lambda a: (a * a, evoxc.sum(a, axes=0)), evoxc.TensorSpec((evoxc.dim("N"), 3), evoxc.float32))
    exe = evoxc.load(evoxc.compile(evoxc.lower(g, "mlir")))
    for n in (0, 1, 5, 40000):
        x = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)
        sq, s = evoxc.run(exe, x)
        np.testing.assert_array_equal(sq.numpy(), x * x)
        np.testing.assert_allclose(s.numpy(), x.sum(0), rtol=1e-4, atol=1e-4)


def test_results_with_equal_initial_values_get_their_own_buffers():
    # Two sums start from equal zero-filled inits; merged by CSE before the results' buffers are
    # chosen, both would be written into the first output.
    x = np.arange(6, dtype=np.float32)
    y = np.arange(6, dtype=np.float32) * -3.0
    check_fn(lambda a, b: (evoxc.sum(a), evoxc.sum(b), evoxc.max(a), evoxc.max(b)), x, y, what="two sums")


def test_bad_extents_raise_as_on_the_interpreter():
    # The compiled code assumes each op's extent conditions; a symbolic program checks them per call with the
    # interpreter's checks. H = 2 gives a conv result extent H - 2 = 0, not negative: without the check the
    # compiled program returned an empty result where the interpreter raises.
    H = evoxc.dim("H")
    g = evoxc.trace(lambda x, w: evoxc.conv(x, w), evoxc.TensorSpec((2, 3, H, 7)), evoxc.TensorSpec((4, 3, 3, 3)))
    exes = {"interp": evoxc.build(g), "mlir": evoxc.load(evoxc.compile(evoxc.lower(g, "mlir")))}
    w = evoxc.tensor(np.ones((4, 3, 3, 3), np.float32))
    for h in (1, 2):
        x = evoxc.tensor(np.ones((2, 3, h, 7), np.float32))
        messages = {}
        for name, exe in exes.items():
            with pytest.raises(evoxc.ValidationError, match="window of spatial dim 0 within the padded lhs") as e:
                evoxc.run(exe, x, w)
            messages[name] = str(e.value)
        assert messages["interp"] == messages["mlir"]
    x = evoxc.tensor(np.ones((2, 3, 3, 7), np.float32))  # the smallest good extent runs on both
    got = evoxc.run(exes["mlir"], x, w).numpy()
    assert got.shape == (2, 4, 1, 5) and np.array_equal(got, evoxc.run(exes["interp"], x, w).numpy())
