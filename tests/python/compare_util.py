"""Comparing a backend's results with the interpreter's (no JAX needed): the tolerance per float dtype, the
comparison, and the random inputs the catalogue checks feed every backend."""

import numpy as np


# bfloat16 is left out: numpy has no bfloat16 to exchange inputs and outputs with (.numpy() refuses it).
DTYPES = {
    "any": ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
            "float64"],
    "numeric": ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
                "float64"],
    "float": ["float16", "float32", "float64"],
    "int": ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"],
    "int or bool": ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"],
    "bool": ["bool"],
    "random key": ["int32", "int64", "uint32", "uint64"],
}

# Float tolerances (relative, absolute). The compiled backends' float32 math runs polynomial approximations or
# another library's functions (a few ULP); 16-bit floats compute in float32 and round once, so they may differ by
# an ULP of their own; float64 math is within an ULP or so on each side.
TOLERANCE = {"float64": (1e-12, 1e-300), "float32": (2e-5, 1e-6), "float16": (2e-3, 1e-4), "bfloat16": (2e-2, 1e-3)}


def assert_same(got, want, what, tolerance=None):
    """Integers, bools and comparisons exactly; floats within the dtype's tolerance (NaN where NaN)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs {want.shape}"
    name = str(want.dtype)
    if name not in TOLERANCE:
        assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs {want.dtype}"
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    rtol, atol = tolerance or TOLERANCE[name]
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def random_input(spec_shape, dtype_name, rng):
    shape = tuple(int(d) for d in spec_shape)
    if dtype_name == "bool":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype_name.startswith("int") or dtype_name.startswith("uint"):
        info = np.iinfo(np.dtype(dtype_name))
        lo, hi = max(info.min, -20), min(info.max, 20)
        return rng.integers(lo, hi + 1, shape).astype(dtype_name)
    if dtype_name == "bfloat16":
        return (rng.standard_normal(shape) * 2).astype(np.float32)  # converted by evoxc.tensor
    return (rng.standard_normal(shape) * 2).astype(dtype_name)
