"""The mlir backend's binary elementwise ops, comparisons, select, clamp, convert and bitcast_convert beyond the
generic catalogue test: edge values (integer division by zero and INT_MIN / -1, shifts by the width and more,
NaN, +-inf, -0, subnormals, large exponents), every dtype pair of convert (single rounding of float64 -> 16-bit
floats and of wide integers -> bfloat16), bfloat16, numpy broadcasting, symbolic and empty shapes. Each graph
is lowered to upstream MLIR, compiled, run, and compared with the interpreter."""

import numpy as np
import pytest

from mlir_util import TOLERANCE, flat_outputs, run_both  # skips the module without the mlir backend
from ir_text import FLOATS, INTS, MLIR, ir_graph, ttype  # noqa: F401

import evoxc

ALL = ["bool"] + INTS + FLOATS


def mismatches(got, want, rtol=0.0):
    """Elements that differ. Floats: NaN where NaN; with rtol 0 the same value and sign of zero (subnormals
    included: the compiled code does not flush them), else within rtol (infinities exactly)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind != "f":
        return got != want
    with np.errstate(all="ignore"):
        g, w = got.astype(np.float64), want.astype(np.float64)
        if rtol == 0:
            same = (g == w) & (np.signbit(g) == np.signbit(w))
        else:
            same = np.where(np.isinf(w) | np.isinf(g), g == w, np.abs(g - w) <= rtol * np.abs(w))
    return ~(same | (np.isnan(g) & np.isnan(w)))


def assert_match(got, want, arrays, what, rtol=0.0):
    bad = mismatches(got, want, rtol)
    if np.any(bad):
        idx = np.argwhere(bad)[:8]
        rows = [f"({', '.join(repr(np.broadcast_to(a, bad.shape)[tuple(i)].item()) for a in arrays)}) -> "
                f"mlir {got[tuple(i)]!r}, interpreter {want[tuple(i)]!r}" for i in idx]
        pytest.fail(f"{what}: {int(bad.sum())} of {bad.size} differ:\n  " + "\n  ".join(rows))


def float_edges(dtype):
    """Signed zeros, infinities, NaNs, subnormals, overflow thresholds and rounding-sensitive values."""
    v = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, 3.0, -7.0, 0.1, -0.1,
         0.99, -0.99, 1e-5, 1e-30, -1e-30, 1e30, -1e30, 20.0, -20.0, 88.5, -88.5, 100.0, -100.0, 300.0, -300.0, 709.0,
         -710.0, 65504.0, 65520.0, 1e300, -1e300, 3.4028234663852886e38, -3.4028234663852886e38, 2.0**31,
         -(2.0**31) - 1, 2.0**32, 2.0**63, -(2.0**63), 2.0**64, 1 - 2.0**-24, 1 + 2.0**-23, -6.0, 6.0, 1e-7, -6e-8,
         1e-40, -1e-45, 1e-310, -5e-324]
    with np.errstate(over="ignore", under="ignore"):
        return np.unique(np.array(v, np.float64).astype(dtype))


def int_edges(dtype):
    info = np.iinfo(dtype)
    v = [0, 1, -1, 2, -2, 3, -3, 7, -7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, -100, 127, 128, 255, 256,
         info.min, info.min + 1, info.max, info.max - 1]
    return np.array(sorted({x for x in v if info.min <= x <= info.max}), dtype=dtype)


def edges(dtype):
    if dtype == "bool":
        return np.array([False, True])
    return float_edges(dtype) if dtype.startswith("float") else int_edges(dtype)


def all_pairs(a):
    return np.repeat(a, len(a)), np.tile(a, len(a))


# Ops whose lowerings coincide on some dtypes (unsigned remainder and fmod, or divide and floor_divide; bitwise
# and logical ops on bool): MLIR's CSE then makes them one value, and a function returning one tensor twice
# crashes buffer-results-to-out-params in MLIR 22, so such ops go to separate graphs.
SAME_RESULT = [{"remainder", "fmod"}, {"divide", "floor_divide"}, {"bitwise_and", "logical_and"},
               {"bitwise_or", "logical_or"}, {"bitwise_xor", "logical_xor"}]


def graph_groups(ops):
    groups = []
    for op in ops:
        clash = lambda g: any(op in s and o in s for s in SAME_RESULT for o in g)  # noqa: E731
        target = next((g for g in groups if not clash(g)), None)
        if target is None:
            groups.append(target := [])
        target.append(op)
    return groups


def check_ops(ops, dtype, arrays, result_dtype=None, attrs="", rtol=0.0):
    """Runs every op of `ops` on the same operands (all of `dtype`) in as few graphs as SAME_RESULT allows and
    compares each output."""
    n = arrays[0].shape
    res = result_dtype or dtype
    for group in graph_groups(ops):
        g = ir_graph([(n, dtype)] * len(arrays), [(op, list(range(len(arrays))), (n, res), attrs) for op in group])
        _, got, want = run_both(g, arrays)
        for op, gv, wv in zip(group, got, want):
            assert_match(gv, wv, arrays, f"{op} {dtype}", rtol)


# ---------------------------------------------------------------- integers

INT_BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "power", "maximum",
              "minimum", "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right_logical",
              "shift_right_arithmetic"]


@pytest.mark.parametrize("dtype", INTS)
def test_integer_binary_edges(dtype):
    """Wrapping arithmetic, x / 0 = -1, INT_MIN / -1 = INT_MIN, x % 0 = x, INT_MIN % -1 = 0, numpy's floor and
    remainder signs, power over every exponent bit, shifts by >= the width or a negative amount (0, or the sign
    fill), arithmetic shifts of unsigned patterns: every pair of edge values, exactly."""
    check_ops(INT_BINARY, dtype, list(all_pairs(edges(dtype))))


def test_integer_division_guards_by_value():
    """The guarded cases by value, not only as agreement: x / 0 is all ones, INT_MIN / -1 is INT_MIN, INT_MIN % -1
    is 0, x % 0 is x, 1 << 32 and 1 >> 40 are 0, -8 >> 40 (arithmetic) is -1."""
    a = np.array([7, -7, -2**31, -2**31, 5, -8], np.int32)
    b = np.array([0, 0, -1, -1, 32, 40], np.int32)
    ops = ["divide", "floor_divide", "remainder", "fmod", "shift_left", "shift_right_logical",
           "shift_right_arithmetic"]
    g = ir_graph([((6,), "int32")] * 2, [(op, [0, 1], ((6,), "int32"), "") for op in ops])
    _, got, want = run_both(g, [a, b])
    for op, gv, wv in zip(ops, got, want):
        assert_match(gv, wv, [a, b], op)
    div, fdiv, rem, fmod, shl, shr, sra = got
    assert list(div[:4]) == [-1, -1, -2**31, -2**31] and list(fdiv[:4]) == [-1, -1, -2**31, -2**31]
    assert list(rem[:4]) == [7, -7, 0, 0] and list(fmod[:4]) == [7, -7, 0, 0]
    assert shl[4] == 0 and shr[5] == 0 and sra[5] == -1
    u = np.array([7, 0x80, 0x80, 0xFF], np.uint8)
    v = np.array([0, 1, 8, 200], np.uint8)
    g = ir_graph([((4,), "uint8")] * 2, [(op, [0, 1], ((4,), "uint8"), "") for op in
                                         ["divide", "shift_right_arithmetic"]])
    _, got, want = run_both(g, [u, v])
    assert got[0][0] == 255 and list(got[1][1:]) == [0xC0, 0xFF, 0xFF]
    for gv, wv in zip(got, want):
        assert_match(gv, wv, [u, v], "uint8")


def test_integer_power_large_exponents():
    """Odd bases never wrap to 0, so 3 ** 64 and 3 ** 65 need all the exponent's bits; negative exponents give 0
    except for bases 1 and -1."""
    for dtype in ["int64", "uint64", "int32", "uint8", "int8", "uint16"]:
        info = np.iinfo(dtype)
        base = [3, 3, 3, 5, 7, 1, 2, 2, 255 % (info.max + 1), 0]
        exp = [64, 65, 127, min(1000, info.max), info.max, info.max, 63 % (info.max + 1), 64, 2, 0]
        if info.min:
            base, exp = base + [-1, -1, -3, 1, 2, 0], exp + [-1, -2, -1, -7, info.min, -1]
        check_ops(["power"], dtype, [np.array(base, dtype), np.array(exp, dtype)])


@pytest.mark.parametrize("dtype", ["bool"] + INTS)
def test_bitwise_and_logical(dtype):
    ops = ["bitwise_and", "bitwise_or", "bitwise_xor"]
    if dtype == "bool":
        ops += ["logical_and", "logical_or", "logical_xor"]
    check_ops(ops, dtype, list(all_pairs(edges(dtype))))


# ---------------------------------------------------------------- comparisons

COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


@pytest.mark.parametrize("dtype", ALL)
def test_comparisons_edges(dtype):
    """Unsigned compares for unsigned ints and bool (0 < UINT_MAX, false < true), IEEE compares for floats (with
    a NaN only != is true) and -0 == +0."""
    check_ops(COMPARISONS, dtype, list(all_pairs(edges(dtype))), result_dtype="bool")


def test_comparisons_by_value():
    x = np.array([np.nan, 0.0, -0.0, 1.0], np.float32)
    y = np.array([np.nan, -0.0, 0.0, np.nan], np.float32)
    g = ir_graph([((4,), "float32")] * 2, [(op, [0, 1], ((4,), "bool"), "") for op in COMPARISONS])
    _, got, _ = run_both(g, [x, y])
    eq, ne, lt, le, gt, ge = (list(v) for v in got)
    assert eq == [False, True, True, False] and ne == [True, False, False, True]
    assert lt == gt == [False, False, False, False] and le == ge == [False, True, True, False]
    u = np.array([0, 2**32 - 1], np.uint32)
    g = ir_graph([((2,), "uint32")] * 2, [("less", [0, 1], ((2,), "bool"), "")])
    _, got, _ = run_both(g, [u, u[::-1].copy()])
    assert list(got[0]) == [True, False]


# ---------------------------------------------------------------- floats

FLOAT_EXACT_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "fmod", "remainder",
                      "floor_divide", "nextafter", "copysign"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_exact_binary_edges(dtype):
    """Bit-exact on every pair of edge values: maximum/minimum propagate NaN and order -0 < +0 (IEEE 754-2019);
    fmod is exact, remainder and floor_divide follow numpy's npy_divmod, including the sign of zero results and
    division by zero; nextafter steps in the operand's own format (subnormals included); copysign works on the
    bits."""
    check_ops(FLOAT_EXACT_BINARY, dtype, list(all_pairs(edges(dtype))))


def test_maximum_minimum_signed_zeros():
    x = np.array([0.0, -0.0, np.nan, 1.0], np.float32)
    y = np.array([-0.0, 0.0, 1.0, np.nan], np.float32)
    g = ir_graph([((4,), "float32")] * 2, [(op, [0, 1], ((4,), "float32"), "") for op in ["maximum", "minimum"]])
    _, (mx, mn), _ = run_both(g, [x, y])
    assert not np.signbit(mx[:2]).any() and np.signbit(mn[:2]).all()
    assert np.isnan(mx[2:]).all() and np.isnan(mn[2:]).all()


def test_fmod_and_floor_divide_where_the_quotient_overflows():
    """docs/semantics.md: fmod(3.4028235e38f, -0.1f) is 0.05000002 and floor_divide(1, 1e-38) is finite as numpy."""
    a = np.array([3.4028235e38, 1.0, -3.0e38, 1e38, 1.0], np.float32)
    b = np.array([-0.1, 1.2e-38, 0.3, -7.0, 1e-45], np.float32)
    check_ops(["fmod", "remainder", "floor_divide"], "float32", [a, b])
    _, got, _ = run_both(ir_graph([((5,), "float32")] * 2, [("fmod", [0, 1], ((5,), "float32"), ""),
                                                            ("floor_divide", [0, 1], ((5,), "float32"), "")]), [a, b])
    assert got[0][0] == np.float32(0.05000002) and got[1][4] == np.inf


EDGE_RTOL = {"float16": 1e-3, "float32": 2e-6, "float64": 1e-13}


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_math_edges(dtype):
    """power, atan2 and hypot: NaN, +-inf, zeros and overflow exactly where the interpreter has them (hypot(inf,
    NaN) = inf, pow(1, NaN) = 1, atan2 of signed zeros), values within a few ULPs."""
    check_ops(["power", "atan2", "hypot"], dtype, list(all_pairs(edges(dtype))), rtol=EDGE_RTOL[dtype])


def _sample(dtype, n, rng):
    v = np.concatenate([rng.standard_normal(n // 4) * 2, rng.standard_normal(n // 4) * 30,
                        np.exp(rng.uniform(-12, 12, n - n // 2)) * rng.choice([-1, 1], n - n // 2)])
    with np.errstate(over="ignore"):
        return v.astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_math_accuracy(dtype):
    """Every float binary op on 4096 pairs spread over magnitudes 1e-5 to 1e5 agrees with the interpreter within
    the tolerance of the generic test; power also on positive bases with fractional exponents."""
    rng = np.random.default_rng(7)
    rtol, atol = TOLERANCE[dtype]
    ops = ["power", "atan2", "hypot", "floor_divide", "remainder", "fmod", "divide", "nextafter"]
    arrays = [_sample(dtype, 4096, rng) for _ in range(2)]
    base = np.abs(arrays[0])
    expo = (rng.uniform(-4, 4, 4096)).astype(dtype)
    for xs, names in [(arrays, ops), ([base, expo], ["power"])]:
        n = xs[0].shape
        g = ir_graph([(n, dtype)] * 2, [(op, [0, 1], (n, dtype), "") for op in names])
        _, got, want = run_both(g, xs)
        for op, gv, wv in zip(names, got, want):
            gv, wv = gv.astype(np.float64), wv.astype(np.float64)
            with np.errstate(all="ignore"):
                ok = (np.abs(gv - wv) <= atol + rtol * np.abs(wv)) | (np.isnan(gv) & np.isnan(wv)) | (gv == wv)
            if not ok.all():
                i = np.nonzero(~ok)[0][:5]
                pytest.fail(f"{op} {dtype}: {int((~ok).sum())} out of tolerance, e.g. "
                            + "; ".join(f"{[a[j].item() for a in xs]}: mlir {gv[j]!r} interp {wv[j]!r}" for j in i))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "uint64", "float16", "float32", "float64"])
def test_clamp_edges(dtype):
    """min(max(x, lo), hi): NaN from any operand propagates, lo > hi gives hi, -0 < +0."""
    e = edges(dtype)
    x = np.repeat(e, len(e))
    lo = np.tile(e, len(e))
    hi = np.roll(lo, 7)
    n = x.shape
    g = ir_graph([(n, dtype)] * 3, [("clamp", [0, 1, 2], (n, dtype), "")])
    _, got, want = run_both(g, [x, lo, hi])
    assert_match(got[0], want[0], [x, lo, hi], f"clamp {dtype}")


@pytest.mark.parametrize("dtype", ALL)
def test_select_edges(dtype):
    """select moves the chosen element unchanged (NaN payloads and -0 included)."""
    e = edges(dtype)
    x, y = all_pairs(e)
    p = (np.arange(len(x)) * 7 % 3 == 0)
    n = x.shape
    g = ir_graph([(n, "bool"), (n, dtype), (n, dtype)], [("select", [0, 1, 2], (n, dtype), "")])
    _, got, want = run_both(g, [p, x, y])
    assert got[0].tobytes() == want[0].tobytes()


# ---------------------------------------------------------------- convert, bitcast_convert


def _convert_graph(src, n, targets):
    """Converts an input of `src` to each target (bfloat16 included: a bfloat16 source comes from a float32
    input, bfloat16 results go on to float32, both exact)."""
    if src == "bfloat16":
        ops = [("convert", [0], (n, "bfloat16"), "dtype = bf16")]
        first, inputs = "%0", [(n, "float32")]
    else:
        ops, first, inputs = [], 0, [(n, src)]
    outputs = []
    for t in targets:
        ops.append(("convert", [first], (n, t), f"dtype = {MLIR[t]}"))
        if t == "bfloat16":
            ops.append(("convert", [f"%{len(ops) - 1}"], (n, "float32"), "dtype = f32"))
        outputs.append(len(ops) - 1)
    return ir_graph(inputs, ops, outputs)


@pytest.mark.parametrize("src", ALL + ["bfloat16"])
def test_convert_every_pair(src):
    """Every target of one source dtype, exactly: float -> int truncates and saturates, NaN -> 0; x -> bool is
    x != 0 (NaN -> true, -0 -> false); ints wrap; bool -> 0/1; narrowing floats and wide ints -> 16-bit floats
    round once to nearest even. (Signed and unsigned targets go to two graphs: a conversion to int32 and to uint32
    can be one value, see SAME_RESULT.)"""
    x = edges("float32" if src == "bfloat16" else src)
    others = [t for t in ALL + ["bfloat16"] if t != src]
    for targets in [[t for t in others if not t.startswith("uint")], [t for t in others if t.startswith("uint")]]:
        _, got, want = run_both(_convert_graph(src, x.shape, targets), [x])
        for t, gv, wv in zip(targets, got, want):
            assert_match(gv, wv, [x], f"convert {src} -> {t}")


@pytest.mark.parametrize("src", ["int16", "int32", "int64", "uint16", "uint32", "uint64", "float32", "float64"])
def test_convert_random_to_16_bit_floats(src):
    """Many values of every magnitude to float16 and bfloat16: a rounding done twice (through float32) would show
    as a difference of one ULP at the halfway points."""
    rng = np.random.default_rng(11)
    if src.startswith("float"):
        x = (rng.standard_normal(20000) * np.exp(rng.uniform(-20, 20, 20000))).astype(src)
    else:
        # random bit patterns shifted right by random amounts: every magnitude, wrapped into the dtype
        bits = rng.integers(0, 2**64, 20000, dtype=np.uint64) >> rng.integers(0, 64, 20000).astype(np.uint64)
        x = bits.astype(src)
    n = x.shape
    g = ir_graph([(n, src)], [("convert", [0], (n, "float16"), "dtype = f16"),
                              ("convert", [0], (n, "bfloat16"), "dtype = bf16"),
                              ("convert", ["%1"], (n, "float32"), "dtype = f32")], outputs=[0, 2])
    _, got, want = run_both(g, [x])
    assert_match(got[0], want[0], [x], f"{src} -> float16")
    assert_match(got[1], want[1], [x], f"{src} -> bfloat16")


def test_convert_rounds_once():
    """float64 -> float16/bfloat16 and int32/int64 -> bfloat16 round once, by value: 1 + 2^-11 + 2^-40 is
    1 + 2^-10 in float16 (through float32 it would be 1), 2^30 + 2^22 + 1 is 2^30 + 2^23 in bfloat16."""
    f64 = np.array([1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40), 1 + 2**-8 + 2**-40, 65519.99, 65520.0,
                    float.fromhex("0x1.ffffffp127"), float.fromhex("0x1.fe1p127"), 1e-300, np.nan, -np.inf, -0.0,
                    2.0**-25 + 2.0**-60, 2.0**-133 + 2.0**-170])
    n = f64.shape
    g = ir_graph([(n, "float64")], [("convert", [0], (n, "float16"), "dtype = f16"),
                                    ("convert", [0], (n, "bfloat16"), "dtype = bf16"),
                                    ("convert", ["%1"], (n, "float32"), "dtype = f32")], outputs=[0, 2])
    _, got, want = run_both(g, [f64])
    assert got[0][0] == np.float16(1 + 2**-10) and got[1][2] == np.float32(1 + 2**-7)
    assert_match(got[0], want[0], [f64], "float64 -> float16")
    assert_match(got[1], want[1], [f64], "float64 -> bfloat16")
    for src, vals in [("int32", [2**30 + 2**22 + 1, -(2**30 + 2**22 + 1), 2**31 - 1, -(2**31), 2**24 + 1, 0, 255]),
                      ("int64", [2**31 + 2**23 + 1, 2**62 + 2**54 + 1, 2**63 - 1, -(2**63), -(2**31 + 2**23), 7]),
                      ("uint32", [2**31 + 2**23 + 1, 2**32 - 1, 2**24 + 2**16, 1]),
                      ("uint64", [2**63 + 2**55 + 1, 2**64 - 1, 2**56 + 2**48, 0])]:
        x = np.array(vals, dtype=src)
        n = x.shape
        g = ir_graph([(n, src)], [("convert", [0], (n, "bfloat16"), "dtype = bf16"),
                                  ("convert", ["%0"], (n, "float32"), "dtype = f32")], outputs=[1])
        _, got, want = run_both(g, [x])
        assert_match(got[0], want[0], [x], f"{src} -> bfloat16")
    x = np.array([2**30 + 2**22 + 1], np.int32)
    g = ir_graph([((1,), "int32")], [("convert", [0], ((1,), "bfloat16"), "dtype = bf16"),
                                     ("convert", ["%0"], ((1,), "float32"), "dtype = f32")], outputs=[1])
    assert run_both(g, [x])[1][0][0] == np.float32(2**30 + 2**23)


@pytest.mark.parametrize("src", ["int8", "uint8", "int16", "uint16", "float16", "int32", "uint32", "float32",
                                 "int64", "uint64", "float64"])
def test_bitcast_convert(src):
    x = edges(src)
    n = x.shape
    same = [t for t in INTS + FLOATS if np.dtype(t).itemsize == np.dtype(src).itemsize and t != src]
    for t in same:  # one graph each: to int32 and to uint32 are one value (see SAME_RESULT)
        _, (gv,), (wv,) = run_both(ir_graph([(n, src)], [("bitcast_convert", [0], (n, t), f"dtype = {MLIR[t]}")]),
                                   [x])
        # bits, NaN payloads included
        assert np.array_equal(gv.view(f"u{gv.itemsize}"), wv.view(f"u{wv.itemsize}")), f"{src} -> {t}"
        assert np.array_equal(gv.view(f"u{gv.itemsize}"), x.view(f"u{x.itemsize}")), f"{src} -> {t}"


def test_bitcast_convert_bfloat16():
    """uint16 -> bfloat16 -> float16 -> int16 and uint16 -> bfloat16 -> int16 keep the bits (two graphs: both
    chains fold to the input, see SAME_RESULT)."""
    x = np.array([0, 1, 0x7F80, 0xFF80, 0x7FC1, 0x8000, 0x3F80, 0x1234, 0xFFFF], np.uint16)
    n = x.shape
    first = ("bitcast_convert", [0], (n, "bfloat16"), "dtype = bf16")
    for chain in [[first, ("bitcast_convert", ["%0"], (n, "float16"), "dtype = f16"),
                   ("bitcast_convert", ["%1"], (n, "int16"), "dtype = i16")],
                  [first, ("bitcast_convert", ["%0"], (n, "int16"), "dtype = i16")]]:
        _, (gv,), (wv,) = run_both(ir_graph([(n, "uint16")], chain, outputs=[len(chain) - 1]), [x])
        assert np.array_equal(gv.view(np.uint16), x) and np.array_equal(wv.view(np.uint16), x)


# ---------------------------------------------------------------- bfloat16

BF16_OPS = FLOAT_EXACT_BINARY + ["power", "atan2", "hypot", "clamp", "select", "less", "not_equal"]


@pytest.mark.parametrize("op", BF16_OPS)
def test_bfloat16(op):
    """bfloat16 operands (numpy has none, so the graph converts from and to float32 around the op)."""
    arity = 3 if op in ("clamp", "select") else 2
    e = edges("float32")
    arrays = list(all_pairs(e)) if arity == 2 else [np.repeat(e, len(e)), np.tile(e, len(e)),
                                                    np.roll(np.tile(e, len(e)), 5)]
    n = arrays[0].shape
    ops = [("convert", [i], (n, "bfloat16"), "dtype = bf16") for i in range(arity)]
    operands = [f"%{i}" for i in range(arity)]
    if op == "select":
        ops.append(("less", ["%0", "%1"], (n, "bool"), ""))
        operands = [f"%{arity}", "%1", "%2"]
    res = "bool" if op in ("less", "not_equal") else "bfloat16"
    ops.append((op, operands, (n, res), ""))
    if res == "bfloat16":
        ops.append(("convert", [f"%{len(ops) - 1}"], (n, "float32"), "dtype = f32"))
    g = ir_graph([(n, "float32")] * arity, ops, outputs=[len(ops) - 1])
    _, got, want = run_both(g, arrays)
    exact = op not in ("power", "atan2", "hypot")
    assert_match(got[0], want[0], arrays, f"{op} bfloat16", rtol=0.0 if exact else 8e-3)


# ---------------------------------------------------------------- shapes


def test_broadcasting():
    """numpy broadcasting: (3, 1) with (4,), a scalar with a vector and a matrix, in binaries, comparisons,
    select and clamp."""
    rng = np.random.default_rng(0)
    a = rng.integers(-9, 9, (3, 1)).astype(np.int32)
    b = rng.integers(-3, 3, (4,)).astype(np.int32)
    s = np.array(5, np.int32)
    p = np.array([[True], [False], [True]])
    g = ir_graph([((3, 1), "int32"), ((4,), "int32"), ((), "int32"), ((3, 1), "bool")],
                 [("floor_divide", [0, 1], ((3, 4), "int32"), ""),
                  ("power", [2, 1], ((4,), "int32"), ""),
                  ("less", [0, 2], ((3, 1), "bool"), ""),
                  ("select", [3, 2, 1], ((3, 4), "int32"), ""),
                  ("clamp", [1, 0, 2], ((3, 4), "int32"), ""),
                  ("shift_left", [2, 1], ((4,), "int32"), ""),
                  ("remainder", [2, 2], ((), "int32"), "")])
    text, got, want = run_both(g, [a, b, s, p])
    for i, (gv, wv) in enumerate(zip(got, want)):
        assert_match(gv, wv, [], f"output {i}")
    assert "linalg.generic" in text and "affine_map<(d0, d1) -> (d0, 0)>" in text


def test_broadcasting_floats_traced():
    """The tracer's broadcasting and weak scalars: (3, 1) float32 with (4,), x * 2.5, maximum with 0."""
    x = np.array([[1.0], [-0.0], [np.nan]], np.float32)
    y = np.array([0.5, -2.0, np.inf, 0.0], np.float32)

    def fn(x, y):
        return (evoxc.arctan2(x, y), evoxc.hypot(x, y), evoxc.maximum(x, 0.0), evoxc.copysign(y, x),
                evoxc.where(evoxc.less(x, y), x, y), evoxc.clip(y, -1.0, x))

    g = evoxc.trace(fn, evoxc.TensorSpec((3, 1), evoxc.float32), evoxc.TensorSpec((4,), evoxc.float32))
    _, got, want = run_both(g, [x, y])
    for i, (gv, wv) in enumerate(zip(got, want)):
        assert_match(gv, wv, [], f"output {i}", rtol=2e-6)


def test_symbolic_shapes():
    """A named extent: broadcasting against it, the guards' constants inside the loop body, conversions; run at
    two sizes (and 1, which broadcasts against nothing)."""

    def fn(x, y, f, p):
        return (evoxc.floor_divide(x, y), evoxc.power(x, y), evoxc.left_shift(x, y), evoxc.less(x, y),
                evoxc.maximum(f, 0.5), evoxc.convert(f, evoxc.int16),
                evoxc.convert(evoxc.convert(x, evoxc.int64), evoxc.bfloat16).astype(evoxc.float32),
                evoxc.where(p, x, y), evoxc.clip(f, -1.0, f), evoxc.remainder(f, f * 0.5 + 1.0))

    B = evoxc.dim("B")
    g = evoxc.trace(fn, evoxc.TensorSpec((B, 3), evoxc.int32), evoxc.TensorSpec((3,), evoxc.int32),
                    evoxc.TensorSpec((B, 1), evoxc.float32), evoxc.TensorSpec((B, 1), evoxc.bool_))
    text = evoxc.lower(g, "mlir").text
    assert "tensor<?x3xi32>" in text and "tensor.dim" in text
    exe = evoxc.load(evoxc.compile(evoxc.lower(g, "mlir")))
    ref = evoxc.build(g)
    rng = np.random.default_rng(1)
    for b in [5, 1, 0]:
        x = rng.integers(-40, 40, (b, 3)).astype(np.int32)
        y = np.array([0, -1, 33], np.int32)
        f = np.array([np.nan, np.inf, -np.inf, -0.0, 2.5][:b], np.float32).reshape(b, 1)
        p = rng.integers(0, 2, (b, 1)).astype(bool)
        inputs = [evoxc.tensor(a) for a in [x, y, f, p]]
        want = [np.asarray(t.numpy()) for t in flat_outputs(evoxc.run(ref, *inputs))]
        got = [np.asarray(t.numpy()) for t in flat_outputs(evoxc.run(exe, *inputs))]
        for i, (gv, wv) in enumerate(zip(got, want)):
            assert_match(gv, wv, [], f"B={b} output {i}", rtol=1e-6)


def test_empty_tensors():
    x = np.zeros((0, 3), np.float32)
    i = np.zeros((0, 3), np.int8)
    n = (0, 3)
    g = ir_graph([(n, "float32"), (n, "int8")],
                 [("power", [1, 1], (n, "int8"), ""), ("convert", [0], (n, "uint8"), "dtype = ui8"),
                  ("less", [1, 1], (n, "bool"), ""), ("clamp", [0, 0, 0], (n, "float32"), ""),
                  ("hypot", [0, 0], (n, "float32"), "")])
    _, got, want = run_both(g, [x, i])
    for gv, wv in zip(got, want):
        assert gv.shape == wv.shape == n and gv.dtype == wv.dtype


@pytest.mark.parametrize("opt_level", [0, 3])
def test_opt_levels_and_vector_tails(opt_level):
    """The guarded integer ops, the power loop, the float formulas and the bfloat16 roundings at O0 and O3, on
    1027 elements (vectorised loops and their remainder) with a broadcast scalar operand (loop-invariant)."""
    rng = np.random.default_rng(5)
    x = rng.integers(-2**31, 2**31, 1027, dtype=np.int64).astype(np.int32)
    x[:8] = [0, -1, -2**31, 2**31 - 1, 3, -3, 1, 2]
    y = rng.integers(-40, 40, 1027).astype(np.int32)
    s = np.array(-3, np.int32)
    f = _sample("float32", 1028, rng)[:1027]
    n = x.shape
    g = ir_graph([(n, "int32"), (n, "int32"), ((), "int32"), (n, "float32")],
                 [("floor_divide", [0, 1], (n, "int32"), ""), ("remainder", [0, 2], (n, "int32"), ""),
                  ("power", [2, 1], (n, "int32"), ""), ("power", [0, 2], (n, "int32"), ""),
                  ("shift_right_arithmetic", [0, 1], (n, "int32"), ""),
                  ("convert", [0], (n, "bfloat16"), "dtype = bf16"), ("convert", ["%5"], (n, "float32"), "dtype = f32"),
                  ("convert", [3], (n, "int16"), "dtype = i16"), ("floor_divide", [3, 3], (n, "float32"), ""),
                  ("maximum", [3, 3], (n, "float32"), ""), ("hypot", [3, 3], (n, "float32"), "")],
                 outputs=[0, 1, 2, 3, 4, 6, 7, 8, 9, 10])
    _, got, want = run_both(g, [x, y, s, f], opt_level=opt_level)
    for i, (gv, wv) in enumerate(zip(got, want)):
        assert_match(gv, wv, [], f"O{opt_level} output {i}", rtol=1e-6 if i == 9 else 0.0)


# ---------------------------------------------------------------- the lowered text


def _lower(op, operands, result, attrs=""):
    return evoxc.lower(ir_graph(operands, [(op, list(range(len(operands))), result, attrs)]), "mlir").text


def test_lowered_text():
    """The arith op each rule is built on: unsigned predicates for unsigned ints and bool, an unordered compare
    for not_equal, guarded unsigned division, arith.bitcast only between an int and a float type."""
    for dtype, pred in [("uint32", "ult"), ("bool", "ult"), ("int8", "slt")]:
        assert f"arith.cmpi {pred}" in _lower("less", [((2,), dtype)] * 2, ((2,), "bool"))
    assert "arith.cmpf une" in _lower("not_equal", [((2,), "float32")] * 2, ((2,), "bool"))
    assert "arith.divui" in _lower("divide", [((2,), "uint16")] * 2, ((2,), "uint16"))
    assert "arith.bitcast" not in _lower("bitcast_convert", [((2,), "int32")], ((2,), "uint32"), "dtype = ui32")
    assert "arith.bitcast" in _lower("bitcast_convert", [((2,), "float32")], ((2,), "int32"), "dtype = i32")
