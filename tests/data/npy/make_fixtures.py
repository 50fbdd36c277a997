#!/usr/bin/env python3
"""Writes the numpy-made .npy fixtures that tests/io/npy_test.cpp reads and compares byte for byte.

Run once from the repository root: .venv/bin/python tests/data/npy/make_fixtures.py
The values are also written out by hand in the test, so the test does not trust this script.
"""
import os

import numpy as np
from numpy.lib import format as npformat

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, arr):
    np.save(os.path.join(HERE, name), arr)


save("f32_2x3.npy", (np.arange(6, dtype=np.float32) / 4).reshape(2, 3))
save("f64_scalar.npy", np.array(-2.5, dtype=np.float64))
save("bool_5.npy", np.array([True, False, True, True, False]))
save("i8_4.npy", np.array([-128, -1, 0, 127], dtype=np.int8))
save("u16_3.npy", np.array([0, 1, 65535], dtype=np.uint16))
save("i64_2x2.npy", np.array([[-(2**63), -1], [1, 2**63 - 1]], dtype=np.int64))
save("u64_2.npy", np.array([0, 2**64 - 1], dtype=np.uint64))
save("f16_3.npy", np.array([1.0, -2.0, 0.5], dtype=np.float16))
save("i32_0x3.npy", np.zeros((0, 3), dtype=np.int32))
# Big-endian and Fortran-ordered inputs: evoxc swaps / transposes them on read.
save("be_i32_3.npy", np.array([1, -2, 65536], dtype=">i4"))
save("be_f64_2.npy", np.array([1.5, -0.25], dtype=">f8"))
save("fortran_f32_2x3.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
with open(os.path.join(HERE, "v2_u8_3.npy"), "wb") as f:
    npformat.write_array(f, np.array([7, 8, 9], dtype=np.uint8), version=(2, 0))
# Must-fail inputs that numpy itself writes.
save("c8_2.npy", np.array([1 + 2j, 3 - 4j], dtype=np.complex64))
save("structured.npy", np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]))
