# Tests of the elementwise op bindings and in-trace creation functions against numpy (and scipy.special).
import math

import mpmath
import numpy as np
import pytest
import scipy.special as sp

import evoxc

F32_EPS = float(np.finfo(np.float32).eps)
F64_EPS = float(np.finfo(np.float64).eps)


def run(fn, *arrays):
    """Evaluates fn on the interpreter; numpy results (a tuple when fn returns a tuple)."""
    out = evoxc.evaluate(fn, *[np.asarray(a) for a in arrays])
    if isinstance(out, (tuple, list)):
        return tuple(t.numpy() for t in out)
    return out.numpy()


def assert_same(got, want):
    """Exact equality including dtype, shape, NaN positions and the sign of zeros."""
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)


def float_inputs(dtype, seed=0):
    rng = np.random.default_rng(seed)
    edges = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-30, -1e-30, 1e30,
             -1e30, 100.0, -100.0, 3.0, 0.99, -0.99]
    rand = np.concatenate([rng.normal(0, 3, 200), rng.uniform(-1, 1, 100),
                           np.exp(rng.uniform(-20, 20, 100)) * rng.choice([-1, 1], 100)])
    with np.errstate(over="ignore"):  # 1e30 overflows float16 to inf, another edge value
        return np.concatenate([edges, rand]).astype(dtype)


def mp_ref(f, prec=113):
    """A float64 reference from mpmath at 113 bits (scipy's float64 erfc, digamma, ... are off by many ULPs in
    places); NaN where mpmath raises or the function is undefined. `prec` bits must cover any cancellation."""

    def one(v):
        if math.isnan(v):
            return math.nan
        try:
            with mpmath.workprec(prec):
                r = f(mpmath.mpf(v))
                return float(r) if mpmath.im(r) == 0 else math.nan
        except (ValueError, ZeroDivisionError):
            return math.nan

    return lambda x: np.array([one(float(v)) for v in np.ravel(x)], np.float64).reshape(np.shape(x))


def mp_erfinv(v):
    if abs(v) == 1:
        return mpmath.inf * mpmath.sign(v)
    return mpmath.erfinv(v)


# name -> (float64 reference, tolerance in ULPs)
UNARY_FLOAT = {
    "negative": (np.negative, 0),
    "abs": (np.abs, 0),
    "sign": (np.sign, 0),
    "exp": (np.exp, 4),
    "exp2": (np.exp2, 4),
    "expm1": (np.expm1, 4),
    "log": (np.log, 4),
    "log2": (np.log2, 4),
    "log10": (np.log10, 4),
    "log1p": (np.log1p, 4),
    "sqrt": (np.sqrt, 1),
    "rsqrt": (lambda x: 1 / np.sqrt(x), 4),
    "cbrt": (np.cbrt, 4),
    "square": (np.square, 1),
    "reciprocal": (np.reciprocal, 1),
    "sin": (np.sin, 4),
    "cos": (np.cos, 4),
    "tan": (np.tan, 4),
    "arcsin": (np.arcsin, 4),
    "arccos": (np.arccos, 4),
    "arctan": (np.arctan, 4),
    "sinh": (np.sinh, 4),
    "cosh": (np.cosh, 4),
    "tanh": (np.tanh, 4),
    "arcsinh": (np.arcsinh, 4),
    "arccosh": (np.arccosh, 4),
    "arctanh": (np.arctanh, 4),
    "sigmoid": (sp.expit, 4),
    "erf": (mp_ref(mpmath.erf), 4),
    "erfc": (mp_ref(mpmath.erfc), 4),
    "erf_inv": (mp_ref(mp_erfinv), 4),
    "relu": (lambda x: np.maximum(x, 0), 0),
    "softplus": (lambda x: np.logaddexp(0, x), 4),
    "floor": (np.floor, 0),
    "ceil": (np.ceil, 0),
    "round": (np.round, 0),
    "trunc": (np.trunc, 0),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
def test_unary_float_vs_numpy(name, dtype):
    ref, ulps = UNARY_FLOAT[name]
    x = float_inputs(dtype)
    got = run(getattr(evoxc, name), x)
    assert got.dtype == dtype and got.shape == x.shape
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(dtype)
    if ulps == 0:
        # exact ops: bit-for-bit (numpy's sign(-0.0) is +0.0 while evoxc's is -0.0, checked below)
        np.testing.assert_array_equal(got, want)
        if name != "sign":
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    else:
        eps = F32_EPS if dtype == np.float32 else F64_EPS
        tiny = float(np.finfo(dtype).smallest_subnormal) * 8
        np.testing.assert_allclose(got, want, rtol=ulps * eps, atol=tiny)


@pytest.mark.parametrize("dtype,eps", [(np.float32, F32_EPS), (np.float64, F64_EPS)])
def test_lgamma_digamma(dtype, eps):
    # positive arguments: relative error; negative non-integers: absolute near the function's zeros
    # (docs/semantics.md accuracy table)
    rng = np.random.default_rng(1)
    pos = np.concatenate([[np.nan, np.inf, 1.0, 2.0, 0.5, 1e-20, 100.0, 1e30], rng.uniform(0, 50, 200)]).astype(dtype)
    neg = (-rng.uniform(0.01, 20, 200)).astype(dtype)
    neg = neg[np.abs(neg - np.round(neg)) > 0.01]
    refs = [("lgamma", mp_ref(lambda v: mpmath.log(abs(mpmath.gamma(v))))), ("digamma", mp_ref(mpmath.digamma))]
    for name, ref in refs:
        got = run(getattr(evoxc, name), pos)
        np.testing.assert_allclose(got, ref(pos.astype(np.float64)).astype(dtype), rtol=8 * eps, atol=0, err_msg=name)
        got = run(getattr(evoxc, name), neg)
        want = ref(neg.astype(np.float64))
        np.testing.assert_allclose(got, want.astype(dtype), rtol=8 * eps, atol=64 * eps, err_msg=name)


def test_unary_float16_rounds_once():
    x = float_inputs(np.float16)
    for name, ref in [("exp", np.exp), ("sin", np.sin), ("tanh", np.tanh), ("sqrt", np.sqrt), ("log1p", np.log1p)]:
        got = run(getattr(evoxc, name), x)
        assert got.dtype == np.float16
        with np.errstate(all="ignore"):
            want = ref(x.astype(np.float64)).astype(np.float16)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2.0**-10, atol=2.0**-24,
                                   err_msg=name)


def test_sign_of_zero_and_nan():
    # evoxc: sign(+-0) is +-0 (numpy gives +0 for -0), sign(NaN) is NaN (docs/semantics.md)
    x = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, -3.0, 2.0], np.float32)
    assert_same(run(evoxc.sign, x), np.array([-0.0, 0.0, np.nan, -1, 1, -1, 1], np.float32))
    assert_same(run(evoxc.negative, x), -x)
    assert_same(run(evoxc.neg, x), -x)
    assert_same(run(evoxc.abs, x), np.abs(x))
    assert_same(run(evoxc.absolute, x), np.abs(x))


def test_round_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5000002, 1e20], np.float32)
    assert_same(run(evoxc.round, x), np.round(x))
    assert_same(run(evoxc.round, x), np.rint(x))


def test_gelu_exact_and_tanh():
    x = float_inputs(np.float64)
    x = x[np.isfinite(x) & (np.abs(x) < 30)]
    gelu_ref = mp_ref(lambda v: v * mpmath.erfc(-v / mpmath.sqrt(2)) / 2)
    exact = gelu_ref(x)
    # the tanh form's constants sqrt(2/pi) and 0.044715 as float64 (the tail amplifies their rounding ~x^3 times)
    c0, c1 = mpmath.mpf(math.sqrt(2 / math.pi)), mpmath.mpf(0.044715)
    tanh_form = mp_ref(lambda v: v * (1 + mpmath.tanh(c0 * (v + c1 * v**3))) / 2, prec=1500)(x)
    np.testing.assert_allclose(run(evoxc.gelu, x), exact, rtol=32 * F64_EPS, atol=1e-300)
    np.testing.assert_allclose(run(lambda v: evoxc.gelu(v, approximate=True), x), tanh_form, rtol=32 * F64_EPS,
                               atol=1e-300)
    x32 = x.astype(np.float32)
    exact32 = gelu_ref(x32.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(run(lambda v: evoxc.gelu(v, False), x32), exact32, rtol=16 * F32_EPS, atol=1e-44)
    special = np.array([np.nan, np.inf, -np.inf, 0.0], np.float32)
    got = run(evoxc.gelu, special)
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == 0 and got[3] == 0


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32])
def test_unary_int_exact(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(2)
    x = np.concatenate([[info.min, info.max, 0, 1], rng.integers(info.min, info.max, 50, endpoint=True)]).astype(dtype)
    with np.errstate(all="ignore"):
        for name, ref in [("negative", np.negative), ("abs", np.abs), ("square", np.square),
                          ("bitwise_not", np.bitwise_not), ("invert", np.invert),
                          ("relu", lambda v: np.maximum(v, 0).astype(dtype))]:
            assert_same(run(getattr(evoxc, name), x), ref(x))
        # popcount counts the set bits of the two's complement pattern in x's own dtype (numpy's bitwise_count
        # counts |x| and returns uint8; docs/numpy.md, docs/semantics.md)
        unsigned = x.view(np.dtype(f"u{x.itemsize}"))
        # (bit counting by unpackbits: numpy 1.26 has no bitwise_count)
        want = np.unpackbits(unsigned.reshape(unsigned.shape + (1,)).view(np.uint8), axis=-1).sum(-1).astype(dtype)
        assert_same(run(evoxc.popcount, x), want)
        assert_same(run(evoxc.bitwise_count, x), want)
        if np.issubdtype(dtype, np.signedinteger):
            assert_same(run(evoxc.sign, x), np.sign(x))
            # abs(INT_MIN) wraps to INT_MIN, as numpy
            assert run(evoxc.abs, np.array([info.min], dtype))[0] == info.min


def test_float_only_ops_convert_ints_to_float32():
    # evoxc converts int and bool operands of float-only functions to float32 (numpy gives float64;
    # docs/semantics.md "Functions that only make sense on floats")
    x = np.array([0, 1, 2, 5, -3], np.int32)
    for name, ref in [("exp", np.exp), ("sqrt", np.sqrt), ("sin", np.sin), ("floor", np.floor), ("log1p", np.log1p)]:
        got = run(getattr(evoxc, name), x)
        assert got.dtype == np.float32, name
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(got, ref(x.astype(np.float32)), rtol=4 * F32_EPS, err_msg=name)
    b = np.array([True, False])
    got = run(evoxc.exp, b)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.exp(b.astype(np.float32)), rtol=4 * F32_EPS)


def test_predicates_and_logical_not():
    x = float_inputs(np.float32)
    assert_same(run(evoxc.isnan, x), np.isnan(x))
    assert_same(run(evoxc.isinf, x), np.isinf(x))
    assert_same(run(evoxc.isfinite, x), np.isfinite(x))
    i = np.array([0, -1, 7], np.int16)
    assert_same(run(evoxc.isnan, i), np.isnan(i))
    assert_same(run(evoxc.isfinite, i), np.isfinite(i))
    b = np.array([True, False, True])
    assert_same(run(evoxc.logical_not, b), np.logical_not(b))
    assert_same(run(evoxc.bitwise_not, b), np.bitwise_not(b))


def test_nan_to_num():
    for dtype in [np.float32, np.float64, np.float16]:
        x = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0], dtype)
        assert_same(run(evoxc.nan_to_num, x), np.nan_to_num(x))
        assert_same(run(lambda v: evoxc.nan_to_num(v, nan=-1.0, posinf=9.0, neginf=-9.0), x),
                    np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0))
        assert_same(run(lambda v: evoxc.nan_to_num(v, 2.0, neginf=-5.0), x), np.nan_to_num(x, nan=2.0, neginf=-5.0))
    i = np.array([1, -2, 3], np.int32)
    assert_same(run(evoxc.nan_to_num, i), np.nan_to_num(i))


# ---- binary ----

EXACT_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal", "less", "less_equal",
                "greater", "greater_equal"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint8,
                                   np.uint64])
@pytest.mark.parametrize("name", EXACT_BINARY)
def test_binary_exact_vs_numpy(name, dtype):
    rng = np.random.default_rng(3)
    if np.issubdtype(dtype, np.floating):
        a = float_inputs(dtype, 3)[:80].reshape(8, 10)
        b = float_inputs(dtype, 4)[[1, 2, 3, 4, 0, 5, 6, 7, 8, 9]]  # NaN, +-inf, +-0 in every row
    else:
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, (8, 10), endpoint=True, dtype=dtype)
        b = rng.integers(info.min, info.max, 10, endpoint=True, dtype=dtype)
        b[:3] = [info.min, info.max, 0]
    for x, y in [(a, b), (b, a)]:
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x, y)
        got = run(getattr(evoxc, name), x, y)
        if name in ("maximum", "minimum"):
            # which zero maximum(+0, -0) returns is not specified (numpy's depends on the operand order)
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype
        else:
            assert_same(got, want)


def test_divide():
    a = float_inputs(np.float32, 5)[:100]
    b = float_inputs(np.float32, 6)[:100]
    with np.errstate(all="ignore"):
        assert_same(run(evoxc.divide, a, b), a / b)
        assert_same(run(evoxc.true_divide, a, b), a / b)
    # integer operands of true division are converted to float32 first (numpy gives float64)
    i = np.array([7, -7, 1, 0], np.int32)
    j = np.array([2, 2, 3, 0], np.int32)
    with np.errstate(all="ignore"):
        assert_same(run(evoxc.divide, i, j), i.astype(np.float32) / j.astype(np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floor_divide_remainder_fmod_float(dtype):
    a = float_inputs(dtype, 7)[:150]
    b = float_inputs(dtype, 8)[:150]
    b = np.concatenate([b, [3.0, -3.0, 0.1, -0.1]]).astype(dtype)
    a = np.concatenate([a, [np.finfo(dtype).max] * 4]).astype(dtype)
    with np.errstate(all="ignore"):
        for name in ["floor_divide", "remainder", "mod", "fmod"]:
            ref = getattr(np, name)
            assert_same(run(getattr(evoxc, name), a, b), ref(a, b))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32])
def test_int_division_family(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(9)
    a = rng.integers(info.min, info.max, 200, endpoint=True, dtype=dtype)
    b = rng.integers(-20 if info.min < 0 else 1, 20, 200, dtype=dtype)
    b[b == 0] = 3
    for name in ["floor_divide", "remainder", "mod", "fmod"]:
        assert_same(run(getattr(evoxc, name), a, b), getattr(np, name)(a, b))
    # by zero (evoxc differs from numpy, docs/semantics.md "Integer arithmetic"): floor_divide gives -1
    # (all bits set), remainder gives the dividend; the fmod kernel does the same as remainder.
    z = np.zeros_like(a)
    assert_same(run(evoxc.floor_divide, a, z), np.full_like(a, -1 if info.min < 0 else info.max))
    assert_same(run(evoxc.remainder, a, z), a)
    assert_same(run(evoxc.fmod, a, z), a)
    if info.min < 0:
        # INT_MIN // -1 wraps to INT_MIN, INT_MIN % -1 is 0
        m = np.array([info.min], dtype)
        assert_same(run(evoxc.floor_divide, m, np.array([-1], dtype)), m)
        assert_same(run(evoxc.remainder, m, np.array([-1], dtype)), np.zeros(1, dtype))


def test_power():
    rng = np.random.default_rng(10)
    for dtype in [np.float32, np.float64]:
        a = np.concatenate([rng.uniform(0, 10, 100), [0.0, -0.0, np.inf, -np.inf, np.nan, -2.0, -2.0, 1.0]])
        b = np.concatenate([rng.uniform(-8, 8, 100), [-1.0, 3.0, -0.5, 3.0, 0.0, 3.0, 0.5, np.nan]])
        a, b = a.astype(dtype), b.astype(dtype)
        eps = F32_EPS if dtype == np.float32 else F64_EPS
        with np.errstate(all="ignore"):
            want = np.power(a.astype(np.float64), b.astype(np.float64)).astype(dtype)
        for fn in [evoxc.power, evoxc.pow]:
            np.testing.assert_allclose(run(fn, a, b), want, rtol=2 * eps, atol=0)
    # ints wrap as numpy's repeated squaring does
    a = np.array([2, 3, -3, 7, 0, 1, -1], np.int32)
    b = np.array([31, 5, 3, 20, 0, 9, 7], np.int32)
    assert_same(run(evoxc.power, a, b), np.power(a, b))
    # negative int exponent: 0 except bases 1 and -1 (numpy raises; docs/semantics.md)
    a = np.array([2, 1, -1, -1, 0, 5], np.int64)
    b = np.array([-1, -5, -3, -2, -1, -2], np.int64)
    assert_same(run(evoxc.power, a, b), np.array([0, 1, -1, 1, 0, 0], np.int64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_binary(dtype):
    a = float_inputs(dtype, 11)[:120]
    b = float_inputs(dtype, 12)[:120]
    eps = F32_EPS if dtype == np.float32 else F64_EPS
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(run(evoxc.arctan2, a, b), np.arctan2(a.astype(float), b).astype(dtype),
                                   rtol=4 * eps, atol=0)
        np.testing.assert_allclose(run(evoxc.hypot, a, b), np.hypot(a.astype(float), b).astype(dtype),
                                   rtol=2 * eps, atol=0)
    assert_same(run(evoxc.copysign, a, b), np.copysign(a, b))
    assert_same(run(evoxc.nextafter, a, b), np.nextafter(a, b))
    # arctan2 at signed zeros
    z = np.array([0.0, -0.0, 0.0, -0.0], dtype)
    w = np.array([0.0, 0.0, -0.0, -0.0], dtype)
    assert_same(run(evoxc.arctan2, z, w), np.arctan2(z, w))


def test_nextafter_of_equal_operands_gives_the_second_in_every_float_type():
    # C99 and IEEE 754 (and XLA's lax.nextafter, float16 included): x == y gives y, so +-0 meet with y's sign. numpy
    # agrees for float32/float64 but its float16 kernel returns x; evoxc follows the standard in every type.
    z = np.array([-0.0, 0.0, 1.5, -2.0], np.float32)
    w = np.array([0.0, -0.0, 1.5, -2.0], np.float32)
    want_bits = np.array([0.0, -0.0, 1.5, -2.0], np.float32)
    for dt in (evoxc.float16, evoxc.bfloat16, evoxc.float32, evoxc.float64):
        g = evoxc.trace(lambda a, b: evoxc.astype(evoxc.nextafter(evoxc.astype(a, dt), evoxc.astype(b, dt)),
                                                  evoxc.float32),
                        evoxc.TensorSpec((4,), evoxc.float32), evoxc.TensorSpec((4,), evoxc.float32))
        got = evoxc.run(evoxc.build(g), z, w).numpy()
        assert got.tobytes() == want_bits.tobytes(), (dt, got)
    assert np.nextafter(np.float32(-0.0), np.float32(0.0)).tobytes() == np.float32(0.0).tobytes()


def test_logical_and_bitwise():
    rng = np.random.default_rng(13)
    p = rng.random((4, 5)) < 0.5
    q = rng.random(5) < 0.5
    for name in ["logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "equal",
                 "not_equal"]:
        assert_same(run(getattr(evoxc, name), p, q), getattr(np, name)(p, q))
    for dtype in [np.int8, np.uint16, np.int64, np.uint64]:
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, (3, 7), endpoint=True, dtype=dtype)
        b = rng.integers(info.min, info.max, (3, 7), endpoint=True, dtype=dtype)
        for name in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
            assert_same(run(getattr(evoxc, name), a, b), getattr(np, name)(a, b))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64])
def test_shifts(dtype):
    info = np.iinfo(dtype)
    bits = np.dtype(dtype).itemsize * 8
    rng = np.random.default_rng(14)
    a = rng.integers(info.min, info.max, 60, endpoint=True, dtype=dtype)
    a[:2] = [info.min, info.max]
    s = rng.integers(0, bits, 60, dtype=dtype)
    assert_same(run(evoxc.left_shift, a, s), np.left_shift(a, s))
    assert_same(run(evoxc.right_shift, a, s), np.right_shift(a, s))
    unsigned = a.view(np.dtype(f"u{bits // 8}"))
    assert_same(run(evoxc.shift_right_logical, a, s), (unsigned >> s.astype(unsigned.dtype)).view(dtype))
    signed = a.view(np.dtype(f"i{bits // 8}"))
    # shift_right_arithmetic on unsigned shifts the bits as the same-width signed type (docs/semantics.md)
    assert_same(run(evoxc.shift_right_arithmetic, a, s), (signed >> s.astype(signed.dtype)).view(dtype))
    # shifts by the bit width or more: 0 for left and logical shifts, the sign fill for arithmetic
    # (numpy leaves this to the C compiler; documented evoxc behaviour)
    big = np.full(2, bits, dtype)
    two = np.array([info.min, info.max], dtype)
    assert_same(run(evoxc.left_shift, two, big), np.zeros(2, dtype))
    assert_same(run(evoxc.shift_right_logical, two, big), np.zeros(2, dtype))
    sfill = np.where(two.view(signed.dtype) < 0, -1, 0).astype(signed.dtype).view(dtype)
    assert_same(run(evoxc.shift_right_arithmetic, two, big), sfill)


def test_comparisons_with_nan_and_mixed_dtypes():
    a = np.array([np.nan, 1.0, -0.0, np.inf], np.float32)
    b = np.array([np.nan, np.nan, 0.0, np.inf], np.float32)
    for name in ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]:
        assert_same(run(getattr(evoxc, name), a, b), getattr(np, name)(a, b))
    i = np.array([1, 2, 3], np.int32)
    f = np.array([1.0, 2.5, 2.0], np.float64)
    assert_same(run(evoxc.less, i, f), np.less(i, f))


def test_broadcasting():
    a = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    b = np.arange(4, dtype=np.float32).reshape(4, 1)
    assert_same(run(evoxc.add, a, b), a + b)
    assert_same(run(evoxc.multiply, a, np.float32(2.0)), a * np.float32(2.0))
    with pytest.raises(evoxc.ShapeError):
        run(evoxc.add, np.ones(3, np.float32), np.ones(4, np.float32))


def test_empty_arrays():
    e = np.zeros((0, 3), np.float32)
    assert_same(run(evoxc.add, e, np.ones(3, np.float32)), e + 1)
    assert_same(run(evoxc.exp, e), np.exp(e))
    assert_same(run(evoxc.less, np.zeros((2, 0), np.int32), np.zeros((1, 0), np.int32)), np.zeros((2, 0), bool))


def test_promotion_and_weak_scalars():
    # docs/semantics.md "Element types and promotion"
    i8 = np.array([1, -2, 127], np.int8)
    u8 = np.array([1, 2, 255], np.uint8)
    f16 = np.array([0.5, 1.5, 2.0], np.float16)
    b = np.array([True, False, True])
    assert_same(run(lambda x: evoxc.add(x, 1), i8), (i8 + np.int8(1)))  # weak int keeps int8 (and wraps)
    assert_same(run(lambda x: evoxc.multiply(x, 0.5), f16), f16 * np.float16(0.5))
    assert_same(run(lambda x: evoxc.add(x, 0.5), i8), i8.astype(np.float32) + np.float32(0.5))
    assert_same(run(lambda x: evoxc.add(x, 2), b), b.astype(np.int64) + 2)
    assert_same(run(lambda x: evoxc.subtract(3, x), i8), (np.int8(3) - i8))
    assert_same(run(evoxc.add, i8, u8), i8.astype(np.int16) + u8.astype(np.int16))
    assert_same(run(evoxc.add, f16, np.array([1, 2, 3], np.int64)), f16 + np.array([1, 2, 3], np.float16))
    assert_same(run(evoxc.maximum, b, i8), np.maximum(b.astype(np.int8), i8))
    # numpy scalars are numbers (weakly typed) inside a trace
    assert_same(run(lambda x: evoxc.add(x, np.float64(1.0)), f16), f16 + np.float16(1))


def test_where_select_clip_clamp():
    rng = np.random.default_rng(15)
    c = rng.random((3, 4)) < 0.5
    x = rng.normal(size=(3, 4)).astype(np.float32)
    y = rng.normal(size=4).astype(np.float32)
    assert_same(run(evoxc.where, c, x, y), np.where(c, x, y))
    assert_same(run(evoxc.select, c, x, y), np.where(c, x, y))
    assert_same(run(lambda cc, xx: evoxc.where(cc, xx, 0.0), c, x), np.where(c, x, np.float32(0)))
    assert_same(run(lambda cc: evoxc.where(cc, 1, 2), c), np.where(c, 1, 2).astype(np.int64))
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert_same(run(lambda cc, a: evoxc.where(cc, a, -1), c, i), np.where(c, i, np.int32(-1)))

    v = np.array([np.nan, -np.inf, np.inf, -2.0, 0.5, 3.0, -0.0], np.float32)
    lo = np.array([-1.0], np.float32)
    hi = np.float32(1.0)
    assert_same(run(evoxc.clip, v, lo, hi), np.clip(v, lo, hi))
    assert_same(run(evoxc.clamp, v, lo, hi), np.clip(v, lo, hi))
    assert_same(run(lambda a: evoxc.clip(a, -1.0, 1.0), v), np.clip(v, np.float32(-1), np.float32(1)))
    assert_same(run(lambda a: evoxc.clip(a, None, 1.0), v), np.clip(v, None, np.float32(1)))
    assert_same(run(lambda a: evoxc.clip(a, lo=0.0, hi=None), v), np.clip(v, np.float32(0), None))
    with pytest.raises(ValueError):
        run(lambda a: evoxc.clip(a, None, None), v)
    iv = np.array([-5, 0, 5, 100], np.int16)
    assert_same(run(lambda a: evoxc.clip(a, -2, 3), iv), np.clip(iv, np.int16(-2), np.int16(3)))


def test_astype_convert_bitcast():
    f = np.array([1.7, -1.7, 0.5, -0.0, 300.0, -300.0, 1e9], np.float32)
    for fn in [evoxc.astype, evoxc.convert]:
        assert_same(run(lambda a, fn=fn: fn(a, np.int32), f), f.astype(np.int32))
        assert_same(run(lambda a, fn=fn: fn(a, evoxc.float64), f), f.astype(np.float64))
        with np.errstate(over="ignore"):  # 1e9 -> inf
            assert_same(run(lambda a, fn=fn: fn(a, "float16"), f), f.astype(np.float16))
    # float -> int saturates and NaN -> 0 (numpy's result is undefined there; docs/semantics.md "Conversion")
    g = np.array([np.nan, np.inf, -np.inf, 300.0, -300.0, 1e10], np.float32)
    assert_same(run(lambda a: evoxc.astype(a, np.int8), g), np.array([0, 127, -128, 127, -128, 127], np.int8))
    assert_same(run(lambda a: evoxc.astype(a, np.uint8), g), np.array([0, 255, 0, 255, 0, 255], np.uint8))
    # anything -> bool is x != 0 (NaN -> True)
    assert_same(run(lambda a: evoxc.astype(a, bool), g), g.astype(bool))
    i = np.array([-1, 256, 300, 7], np.int32)
    assert_same(run(lambda a: evoxc.astype(a, np.uint8), i), i.astype(np.uint8))  # int -> int wraps
    assert_same(run(lambda a: evoxc.astype(a, np.float32), np.array([True, False])), np.array([1.0, 0.0], np.float32))
    v = np.array([1.0, -0.0, np.inf, np.nan], np.float32)
    assert_same(run(lambda a: evoxc.bitcast_convert(a, np.int32), v), v.view(np.int32))
    assert_same(run(lambda a: evoxc.bitcast_convert(a, evoxc.uint32), v), v.view(np.uint32))
    w = np.array([1, -1, 0x7FF0000000000000], np.int64)
    assert_same(run(lambda a: evoxc.bitcast_convert(a, np.float64), w), w.view(np.float64))
    with pytest.raises(Exception):
        run(lambda a: evoxc.bitcast_convert(a, np.int16), v)  # width mismatch


def test_isclose_allclose():
    a = np.array([1.0, 1.0 + 1e-6, np.nan, np.inf, -np.inf, np.inf, 0.0, 1e-9, 100.0], np.float64)
    b = np.array([1.0, 1.0, np.nan, np.inf, np.inf, 1e308, 1e-9, 0.0, 100.01], np.float64)
    assert_same(run(evoxc.isclose, a, b), np.isclose(a, b))
    assert_same(run(lambda x, y: evoxc.isclose(x, y, equal_nan=True), a, b), np.isclose(a, b, equal_nan=True))
    assert_same(run(lambda x, y: evoxc.isclose(x, y, rtol=1e-3, atol=0.0), a, b), np.isclose(a, b, 1e-3, 0.0))
    assert_same(run(lambda x: evoxc.isclose(x, 1.0), a), np.isclose(a, 1.0))
    ok = a[[0, 1, 3]]
    assert_same(run(evoxc.allclose, ok, ok + 1e-9), np.array(np.allclose(ok, ok + 1e-9)))
    assert_same(run(evoxc.allclose, a, b), np.array(np.allclose(a, b)))
    assert_same(run(lambda x, y: evoxc.allclose(x, y, equal_nan=True), a[2:4], b[2:4]), np.array(True))
    i = np.array([1, 2, 3], np.int32)
    assert_same(run(evoxc.isclose, i, np.array([1, 3, 3], np.int32)), np.array([True, False, True]))


# ---- creation inside a trace ----

def test_iota_fill_like():
    x = np.zeros((2, 3), np.float16)
    got = run(lambda _: (evoxc.iota((2, 3), 1), evoxc.iota((2, 3), 0, np.int32), evoxc.iota([4], -1, evoxc.float32),
                         evoxc.iota((3,), 0, bool)), x)
    assert_same(got[0], np.broadcast_to(np.arange(3), (2, 3)))
    assert_same(got[1], np.broadcast_to(np.arange(2, dtype=np.int32)[:, None], (2, 3)))
    assert_same(got[2], np.arange(4, dtype=np.float32))
    assert_same(got[3], np.arange(3).astype(bool))
    got = run(lambda _: (evoxc.fill((2, 2), 7), evoxc.fill((2,), 1.5), evoxc.fill((), True),
                         evoxc.fill((3,), 2, np.uint8), evoxc.fill((0, 2), 1.0)), x)
    assert_same(got[0], np.full((2, 2), 7, np.int64))
    assert_same(got[1], np.full(2, 1.5, np.float32))
    assert_same(got[2], np.array(True))
    assert_same(got[3], np.full(3, 2, np.uint8))
    assert_same(got[4], np.ones((0, 2), np.float32))
    got = run(lambda v: (evoxc.zeros_like(v), evoxc.ones_like(v), evoxc.full_like(v, 2.5),
                         evoxc.full_like(v, 3, dtype=np.int32), evoxc.fill((2, 2, 3), v)), x)
    assert_same(got[0], np.zeros_like(x))
    assert_same(got[1], np.ones_like(x))
    assert_same(got[2], np.full_like(x, 2.5))
    assert_same(got[3], np.full(x.shape, 3, np.int32))
    assert_same(got[4], np.broadcast_to(x, (2, 2, 3)))


def test_arange():
    x = np.zeros(1, np.float32)
    cases = [((5,), {}), ((2, 9), {}), ((2, 9, 3), {}), ((10, 0, -3), {}), ((5, 5), {}), ((5, 2), {}),
             ((0, 1, 0.1), {}), ((1.5,), {}), ((-1.0, 1.0, 0.25), {}), ((5,), {"dtype": np.float64}),
             ((0, 10, 2), {"dtype": np.int32}), ((2,), {"step": 1})]
    for args, kw in cases:
        got = run(lambda _, a=args, k=kw: evoxc.arange(*a, **k), x)
        want = np.arange(*args, **kw)
        if "dtype" not in kw and want.dtype == np.float64:
            # no silent float64: float bounds give float32 (docs/semantics.md "arange")
            want = np.arange(*args, **kw).astype(np.float32)
        assert_same(got, want)
    # one argument with a step is stop, as numpy: arange(6, step=2) = [0, 2, 4]
    assert_same(run(lambda _: evoxc.arange(6, step=2), x), np.arange(6, step=2))


def test_linspace():
    x = np.zeros(1, np.float32)
    for args, kw in [((0.0, 1.0, 5), {}), ((0, 10), {}), ((-2.0, 3.0, 7), {"endpoint": False}), ((1.0, 2.0, 1), {}),
                     ((1.0, 2.0, 0), {}), ((0.0, 1.0, 4), {"dtype": np.float64}),
                     ((-3.0, 7.0, 6), {"dtype": np.int32})]:
        got = run(lambda _, a=args, k=kw: evoxc.linspace(*a, **k), x)
        kw2 = dict(kw)
        dtype = kw2.pop("dtype", np.float32)
        want = np.linspace(*args, **kw2, dtype=np.float64)
        # int dtypes floor (numpy >= 1.20)
        want = np.floor(want).astype(dtype) if np.issubdtype(dtype, np.integer) else want.astype(dtype)
        assert_same(got, want)
    with pytest.raises(ValueError):
        run(lambda _: evoxc.linspace(0.0, 1.0, -1), x)


# ---- binding conventions ----

def test_keyword_names_and_aliases():
    a = np.array([5, -7, 9], np.int32)
    b = np.array([3, 3, -4], np.int32)
    assert_same(run(lambda x, y: evoxc.mod(a=x, b=y), a, b), np.mod(a, b))
    assert_same(run(lambda x, y: evoxc.pow(x, b=y), a, np.abs(b)), np.power(a, np.abs(b)))
    np.testing.assert_allclose(run(lambda x: evoxc.exp(x=x), a.astype(np.float32)), np.exp(a.astype(np.float64)),
                               rtol=4 * F32_EPS)
    c = a > 0
    assert_same(run(lambda cc, x, y: evoxc.where(cond=cc, on_true=x, on_false=y), c, a, b), np.where(c, a, b))
    assert_same(run(lambda x: evoxc.astype(x, dtype="float64"), a), a.astype(np.float64))


def test_docstrings():
    names = ["exp", "add", "where", "clip", "clamp", "astype", "isclose", "allclose", "iota", "fill", "arange",
             "linspace", "zeros_like", "ones_like", "full_like", "gelu", "nan_to_num", "neg", "mod", "pow",
             "erf_inv", "popcount", "shift_right_arithmetic", "bitcast_convert", "select", "convert"]
    for n in names:
        doc = getattr(evoxc, n).__doc__
        assert doc and len(doc.strip().splitlines()[-1]) > 10, n
    assert "= clip(x, lo, hi)" in evoxc.clamp.__doc__
    assert "= remainder(a, b)" in evoxc.mod.__doc__


def test_host_data_in_trace_is_trace_error():
    captured = evoxc.tensor(np.ones(3, np.float32))
    with pytest.raises(evoxc.TraceError):
        run(lambda x: evoxc.add(x, captured), np.ones(3, np.float32))
    with pytest.raises(evoxc.TraceError):
        run(lambda x: evoxc.exp(np.ones(3)), np.ones(3, np.float32))


def test_records_python_location():
    g = evoxc.trace(lambda x: evoxc.exp(x), evoxc.TensorSpec((3,), evoxc.float32))
    assert "test_ops_elementwise.py" in g.to_string()


def test_symbolic_extents():
    B = evoxc.dim("B")
    f32 = evoxc.float32

    def fn(x, y):
        return evoxc.where(evoxc.greater(x, 0), evoxc.add(x, y), evoxc.full_like(x, -1.0)), evoxc.iota(x.shape, 0)

    exe = evoxc.build(fn, evoxc.TensorSpec((B, 3), f32), evoxc.TensorSpec((3,), f32))
    assert [str(s) for s in exe.graph.output_specs] == ["TensorSpec(tensor<Bx3xf32>)", "TensorSpec(tensor<Bx3xi64>)"]
    y = np.arange(3, dtype=np.float32)
    for n in [1, 4]:
        x = np.random.default_rng(n).normal(size=(n, 3)).astype(np.float32)
        got, idx = evoxc.run(exe, x, y)
        assert_same(got.numpy(), np.where(x > 0, x + y, np.float32(-1)))
        assert_same(idx.numpy(), np.broadcast_to(np.arange(n)[:, None], (n, 3)))
    # two different symbolic extents cannot be proven equal (docs/semantics.md "Broadcasting")
    with pytest.raises(evoxc.ShapeError):
        evoxc.trace(evoxc.add, evoxc.TensorSpec((B,), f32), evoxc.TensorSpec((evoxc.dim("C"),), f32))
