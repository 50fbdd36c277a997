"""Helpers shared by the per-family op tests: run a function on numpy arrays, random inputs per dtype."""

import numpy as np

import evoxc


def run(fn, *arrays):
    """evoxc.evaluate with the result pytree converted to numpy arrays."""
    out = evoxc.evaluate(fn, *arrays)

    def to_np(t):
        if isinstance(t, (tuple, list)):
            return type(t)(to_np(x) for x in t)
        return np.asarray(t.numpy())

    return to_np(out)


def make_rand(rng):
    """rand(shape, dtype): random values of a dtype (bools, small ints, standard normal floats) from `rng`."""

    def rand(shape, dtype):
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return rng.random(shape) < 0.5
        if dtype.kind == "u":
            return rng.integers(0, 20, shape).astype(dtype)
        if dtype.kind == "i":
            return rng.integers(-20, 20, shape).astype(dtype)
        return rng.standard_normal(shape).astype(dtype)

    return rand
