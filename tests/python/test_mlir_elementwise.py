"""The mlir backend's unary elementwise family beyond the generic catalogue test: edge values (NaN, +-inf, +-0,
subnormals, huge and tiny magnitudes, domain edges, the poles and zeros of lgamma and digamma), integer edges
(INT_MIN, unsigned sign and abs), bool, attributes (gelu's approximate, nan_to_num's replacements), bfloat16,
symbolic shapes, and what the lowered text is made of. Every graph is lowered to MLIR, compiled, run, and compared
with the interpreter."""

import numpy as np
import pytest

from mlir_util import TOLERANCE, check_fn, check_graph, run_both  # skips the module without the mlir backend
from ir_text import FLOATS, INTS, MLIR, ir_graph, ttype  # noqa: F401

import evoxc


FLOAT_MATH = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "reciprocal", "sin",
              "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf",
              "erfc", "erf_inv", "lgamma", "digamma", "softplus"]
FLOAT_EXACT = ["floor", "ceil", "round", "trunc", "neg", "abs", "sign", "square", "relu", "nan_to_num"]
PREDICATES = ["isnan", "isinf", "isfinite"]

# The negative zeros of lgamma: there any float64 reflection formula keeps an absolute error of an ULP of its
# terms (test_lgamma_digamma_negative bounds it), so the relative tests leave them out.
LGAMMA_NEGATIVE_ZEROS = [-2.4570247382208006, -2.7476826467274127, -3.1435808883499797]


# Attributes the ops require, where a test does not give its own: gelu's erf form, numpy's nan_to_num.
DEFAULT_ATTRS = {"gelu": "approximate = false", "nan_to_num": "nan = 0.0, neginf = -1e300, posinf = 1e300"}


def unary_graph(ops, n, dtype, result=None, attrs=None):
    """One input of `n` elements and each op of `ops` applied to it, every result an output; `attrs` for every op
    (gelu's default: the erf form)."""
    def attrs_of(op):
        return attrs if attrs is not None else DEFAULT_ATTRS.get(op, "")
    return ir_graph([((n,), dtype)], [(op, [0], ((n,), result or dtype), attrs_of(op)) for op in ops])


def float_edges(dtype):
    """Signed zeros, NaN, infinities, subnormals, the ends of each function's domain, the overflow thresholds of
    exp, sinh and cosh in every float type, huge arguments of sin and cos, and a grid over [-12, 12]."""
    v = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.0, 2.5, -2.5, 3.0, -3.0, -7.0,
         0.1, -0.1, 0.99, -0.99, 0.999999, -0.999999, 1.0000001, 1e-3, -1e-3, 1e-5, -1e-5, 1e-8, 1e-20, -1e-20, 1e-30,
         1e-38, 1e-40, -1e-40, 5e-45, 6e-8, 20.0, -20.0, 30.0, 50.0, 88.5, -88.5, 89.5, -89.5, 100.0, -100.0, 300.0,
         -300.0, 709.0, -710.0, 711.0, 1e3, 1e4, -1e4, 1e5, 1e6, 1.5e7, 1e10, 1e20, 1e30, -1e30, 3.4e38, -3.4e38,
         1e300, -1e300, 1e-300, -1e-300, 5e-324, -5e-324, 65504.0, -65504.0, 1.4616321449683622, 0.9, 1.1, 1.9,
         2.1, 4.5, 9.99, 10.01, -0.3, -1.5, -4.5, -10.3, -100.5, 0.4, 0.6, 0.25, -0.25, 0.7, -0.7, 3.14159265,
         1.5707963, 6.2831853, 12345.678, -12345.678, 2.0**24, 2.0**31, 2.0**53, 2.0**60, -(2.0**60)]
    v += list(np.linspace(-12, 12, 241))
    with np.errstate(over="ignore"):
        return np.array(v, np.float64).astype(dtype)


def magnitudes(dtype, n=1200):
    """+-10^k from the smallest subnormal to the largest finite value of the dtype."""
    lo, hi = {"float16": (-7.7, 4.8), "float32": (-44.8, 38.5), "float64": (-323, 308.2)}[dtype]
    m = 10.0 ** np.linspace(lo, hi, n)
    return np.concatenate([m, -m]).astype(dtype)


def check_ops(ops, x, what, result=None, attrs=None, tolerance=None, opt_level=None):
    """Every op of `ops` on x at once, each compared with the interpreter (assert_same)."""
    g = unary_graph(ops, x.shape[0], str(x.dtype), result, attrs)
    _, got, want = run_both(g, [x], opt_level)
    for op, gv, wv in zip(ops, got, want):
        bad = ~close(gv, wv, *(tolerance or TOLERANCE.get(str(wv.dtype), (0, 0))))
        if bad.any():
            i = np.nonzero(bad)[0][:6]
            pytest.fail(f"{op} {what}: {int(bad.sum())} of {bad.size} differ, e.g. "
                        + "; ".join(f"{x[j]!r}: mlir {gv[j]!r} interpreter {wv[j]!r}" for j in i))


def strict(dtype, rtol):
    """A relative tolerance; below the smallest normal number only absolute (the interpreter's float32 and
    float16 kernels lose bits in subnormal results that a float64 computation keeps)."""
    return rtol, float(np.finfo(dtype).tiny)


def close(got, want, rtol, atol):
    """Per element: NaN where NaN, infinities exactly, finite values within atol + rtol |want|; integers and bools
    exactly."""
    if want.dtype.kind not in "f":
        return got == want
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(all="ignore"):
        return (np.isnan(g) & np.isnan(w)) | (g == w) | (np.isfinite(w) & (np.abs(g - w) <= atol + rtol * np.abs(w)))


def same_bits(got, want, what):
    """Exact equality, the sign of zero included (NaN where NaN)."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype, what
    if g.dtype.kind == "f":
        ok = ((g == w) & (np.signbit(g) == np.signbit(w))) | (np.isnan(g) & np.isnan(w))
        assert ok.all(), f"{what}: {g[~ok][:6]} vs {w[~ok][:6]}"
    else:
        np.testing.assert_array_equal(g, w, err_msg=what)


# ---------------------------------------------------------------- float math


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_math_edges(dtype):
    """NaN, +-inf and overflow exactly where the interpreter has them, values within the generic tolerance:
    exp and sinh/cosh at their overflow thresholds, log of subnormals, log1p/expm1 of tiny values (float64's are
    compensated: MLIR lowers them to log(1 + x) and exp(x) - 1), asin/acos/atanh at +-1 and beyond, acosh below
    1, sin and cos of huge arguments, sigmoid and softplus in both tails, lgamma's and digamma's poles."""
    x = float_edges(dtype)
    x = x[~np.isin(x.astype(np.float64), LGAMMA_NEGATIVE_ZEROS)]
    check_ops(FLOAT_MATH, x, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_math_magnitudes(dtype):
    """Every float op from the smallest subnormal to the largest finite value, both signs."""
    check_ops(FLOAT_MATH + ["gelu"], magnitudes(dtype), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_math_random(dtype):
    """4096 values over magnitudes 1e-5 to 1e5, as the generic test's tolerance."""
    rng = np.random.default_rng(11)
    v = np.concatenate([rng.standard_normal(1024) * 2, rng.standard_normal(1024) * 30,
                        np.exp(rng.uniform(-12, 12, 2048)) * rng.choice([-1, 1], 2048)])
    with np.errstate(over="ignore"):
        x = v.astype(dtype)
    x = x[np.abs(x[:, None].astype(np.float64) - np.array(LGAMMA_NEGATIVE_ZEROS)).min(axis=1) > 1e-3]
    check_ops(FLOAT_MATH + ["gelu"], x, dtype)


def test_float32_subnormals_relative():
    """MLIR's float32 log, log2 and cbrt read the exponent field (log(1e-40) came out as log of the smallest normal):
    scaled into the normal range, they keep their relative accuracy down to the smallest subnormal."""
    x = np.float32(2.0) ** -np.arange(126, 150, dtype=np.float32)
    x = np.concatenate([x, x * np.float32(1.7), -x]).astype(np.float32)
    check_ops(["log", "log2", "cbrt"], x, "float32 subnormals", tolerance=(2e-6, 0.0))  # results are normal


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sin_cos_huge_arguments(dtype):
    """MLIR's float32 sin/cos reduce with a float32 pi/2 (1.5e-4 off at cos(89.5)); they run in float64 on libm,
    exact in relative terms however large the argument."""
    x = np.concatenate([np.array([89.5, -89.5, 300.0, 1e4, 1e5, 1e6, 1.5e7, 1e10, 1e20, 3e38], np.float64),
                        np.float64(2.0) ** np.arange(0, 120, 3)]).astype(dtype)
    check_ops(["sin", "cos", "tan"], x, dtype, tolerance=strict(dtype, 1e-6 if dtype == "float32" else 1e-13))


def test_log1p_expm1_tiny_float64():
    """float64 log1p and expm1 keep every digit for tiny x (MLIR's lowering to log(1 + x) / exp(x) - 1 would give 0
    or one digit), and -0 stays -0."""
    x = np.concatenate([10.0 ** -np.arange(1, 320, 7.0), -(10.0 ** -np.arange(1, 320, 7.0)), [0.0, -0.0, 5e-324]])
    check_ops(["log1p", "expm1"], x, "float64", tolerance=strict("float64", 1e-14))
    _, got, want = run_both(unary_graph(["log1p", "expm1"], x.shape[0], "float64"), [x])
    for g, w in zip(got, want):
        same_bits(g[-3:-1], w[-3:-1], "log1p/expm1 at zeros")
        assert g[-1] == 5e-324  # exact (the interpreter's SLEEF log1p flushes it to 0)


def test_lgamma_digamma_near_their_zeros():
    """Next to the zeros of lgamma (1, 2) and digamma (1.4616...) the series keep the relative accuracy."""
    x = np.concatenate([1 + np.linspace(-0.6, 0.6, 601), 2 + np.linspace(-0.6, 0.6, 601),
                        1.4616321449683622 + np.linspace(-0.15, 0.15, 301), [1.0, 2.0]])
    for dtype, rtol in [("float16", 2e-3), ("float32", 2e-6), ("float64", 1e-13)]:
        xd = x.astype(dtype)
        check_ops(["lgamma", "digamma"], xd, dtype, tolerance=strict(dtype, rtol))
        _, got, _ = run_both(unary_graph(["lgamma"], xd.shape[0], dtype), [xd])
        assert (got[0][-2:] == 0).all(), "lgamma(1) and lgamma(2) are exactly 0"


def test_lgamma_digamma_negative():
    """For x < 0 both cross zero infinitely often; next to those zeros only the absolute error is bounded (the
    reflection subtracts terms of size 1). Poles: lgamma gives +inf at the negative integers, digamma NaN."""
    rng = np.random.default_rng(3)
    x = -np.abs(rng.standard_normal(20000) * 4)
    x = np.concatenate([x, LGAMMA_NEGATIVE_ZEROS, [-1.0, -2.0, -50.0, -(2.0**52), -(2.0**60), -1e300, -1e-300,
                                                   -5e-324, -np.inf]])
    g = unary_graph(["lgamma", "digamma"], x.shape[0], "float64")
    _, got, want = run_both(g, [x])
    for op, gv, wv in zip(["lgamma", "digamma"], got, want):
        with np.errstate(invalid="ignore"):
            err = np.abs(gv - wv) / np.maximum(np.abs(wv), 1.0)
        finite = np.isfinite(wv)
        assert np.max(err[finite]) < 2e-14, (op, np.max(err[finite]), x[finite][np.argmax(err[finite])])
        same_bits(gv[~finite], wv[~finite], f"{op} poles")


@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("opt_level", [0, 3])
def test_gelu(dtype, approximate, opt_level):
    """Both forms in float64 with the interpreter's exact-product corrections (which survive LLVM at every
    optimisation level: no multiply-add is contracted): the negative tail keeps its relative accuracy and
    gelu(-inf) is -0."""
    x = np.concatenate([float_edges(dtype), np.linspace(-40, 12, 521).astype(dtype)])
    attrs = f"approximate = {'true' if approximate else 'false'}"
    rtol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-13}[dtype]
    check_ops(["gelu"], x, dtype, attrs=attrs, tolerance=strict(dtype, rtol), opt_level=opt_level)
    _, got, _ = run_both(unary_graph(["gelu"], x.shape[0], dtype, attrs=attrs), [x])
    assert np.signbit(got[0][np.isneginf(x)]).all()


# ---------------------------------------------------------------- rounding, sign, nan_to_num: bit-exact


@pytest.mark.parametrize("dtype", FLOATS)
def test_exact_float_ops(dtype):
    """Rounding (round is half to even), neg, abs, sign (keeps +-0 and NaN), square, relu (relu(-0) is +0, NaN
    passes) and nan_to_num's defaults agree bit for bit, zeros' signs included."""
    x = np.concatenate([float_edges(dtype), (np.arange(-40, 41) / 4).astype(dtype)])
    g = unary_graph(FLOAT_EXACT, x.shape[0], dtype)
    _, got, want = run_both(g, [x])
    for op, gv, wv in zip(FLOAT_EXACT, got, want):
        same_bits(gv, wv, f"{op} {dtype}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_predicates(dtype):
    x = float_edges(dtype)
    g = unary_graph(PREDICATES, x.shape[0], dtype, result="bool")
    _, got, want = run_both(g, [x])
    for op, gv, wv in zip(PREDICATES, got, want):
        same_bits(gv, wv, f"{op} {dtype}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_to_num_attributes(dtype):
    """The replacement values round once to the dtype as the interpreter does (70000 is inf in float16, 1e300 in
    float32)."""
    x = float_edges(dtype)
    for attrs in ["nan = 0.0, neginf = -65504.0, posinf = 65504.0", "nan = 1e30, neginf = 70000.0, posinf = -2.5",
                  "nan = -0.0, neginf = 1e-3, posinf = 3.0e38", "nan = 1.0000001, neginf = -inf, posinf = inf",
                  "nan = 1.5, neginf = -7.25, posinf = 1e300"]:
        _, got, want = run_both(unary_graph(["nan_to_num"], x.shape[0], dtype, attrs=attrs), [x])
        same_bits(got[0], want[0], f"nan_to_num {dtype} {attrs}")


# ---------------------------------------------------------------- integers and bool


def int_edges(dtype):
    info = np.iinfo(dtype)
    v = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3, 7, 100, info.max // 2, info.max // 2 + 1]
    if info.min < 0:
        v += [-1, -2, -3, -100, info.min // 2]
    return np.array(v, dtype=dtype)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_ops(dtype):
    """Integers wrap (neg, abs and square of INT_MIN); unsigned abs is x and sign is x != 0; relu of unsigned is
    x; popcount and bitwise_not on the bit pattern; the float predicates are constants."""
    x = int_edges(dtype)
    ops = ["neg", "abs", "sign", "square", "relu", "popcount", "bitwise_not"]
    _, got, want = run_both(unary_graph(ops, x.shape[0], dtype), [x])
    for op, gv, wv in zip(ops, got, want):
        same_bits(gv, wv, f"{op} {dtype}")
    # One graph each: isnan and isinf are the same constant here, and a function returning one computed
    # tensor twice crashes MLIR's buffer-results-to-out-params (a pipeline issue, not the rules').
    for op in PREDICATES:
        _, got, want = run_both(unary_graph([op], x.shape[0], dtype, result="bool"), [x])
        same_bits(got[0], want[0], f"{op} {dtype}")


@pytest.mark.parametrize("op", ["logical_not", "bitwise_not"] + PREDICATES)
def test_bool_ops(op):
    x = np.array([True, False, False, True])
    _, got, want = run_both(unary_graph([op], 4, "bool"), [x])
    same_bits(got[0], want[0], f"{op} bool")
    if op in ("logical_not", "bitwise_not"):
        assert (got[0] == ~x).all()


# ---------------------------------------------------------------- bfloat16, shapes, text


@pytest.mark.parametrize("op", FLOAT_MATH + FLOAT_EXACT + ["gelu"])
def test_bfloat16(op):
    """bfloat16 computes in float32 (float64 for lgamma, digamma, erf_inv, gelu, sin, cos) and rounds once, as the
    interpreter (numpy has no bfloat16: the graph converts from and to float32 around the op)."""
    x = float_edges("float32")
    x = x[~np.isin(x.astype(np.float64), np.float32(LGAMMA_NEGATIVE_ZEROS).astype(np.float64))]
    # No subnormal inputs: the convert to bfloat16 flushes them on CPUs with AVX512-BF16 (vcvtneps2bf16 is
    # flush-to-zero), in the convert's rule as in every f32 -> bf16 truncf; subnormal results compare absolutely.
    x = x[~((np.abs(x) < np.finfo(np.float32).tiny) & (x != 0))]
    n = x.shape
    g = ir_graph([(n, "float32")], [("convert", [0], (n, "bfloat16"), "dtype = bf16"),
                                    (op, ["%0"], (n, "bfloat16"), DEFAULT_ATTRS.get(op, "")),
                                    ("convert", ["%1"], (n, "float32"), "dtype = f32")], outputs=[2])
    _, got, want = run_both(g, [x])
    # bfloat16's ULP is 2^-8 to 2^-7 relative; the float32 or float64 result rounds once (to a zero where it is
    # subnormal, as the convert above flushes)
    bad = ~close(got[0], want[0], 0.0 if op in FLOAT_EXACT else 8e-3, float(np.finfo(np.float32).tiny))
    assert not bad.any(), (op, x[bad][:6], got[0][bad][:6], want[0][bad][:6])


def test_symbolic_shape():
    """A symbolic extent: tensor.empty takes it from the input (tensor.dim)."""
    spec = evoxc.TensorSpec((evoxc.dim("B"), 3), evoxc.float32)
    g = evoxc.trace(lambda x: evoxc.lgamma(evoxc.sigmoid(x)) + evoxc.numpy.abs(x), spec)
    for b in (1, 5):
        x = np.random.default_rng(b).standard_normal((b, 3)).astype(np.float32)
        check_graph(g, [x], f"B={b}")


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (2, 3, 4)])
def test_scalar_and_empty_shapes(shape):
    """Rank 0 and empty tensors: the generic has no loop or no iteration."""
    x = np.linspace(-3, 3, int(np.prod(shape))).reshape(shape).astype(np.float32) if shape else np.float32(-2.25)
    x = np.asarray(x)
    check_fn(lambda a: (evoxc.lgamma(a), evoxc.exp(a), evoxc.numpy.abs(a)), x, what=f"shape {shape}")
    i = np.asarray(np.arange(int(np.prod(shape)), dtype=np.int16).reshape(shape))
    check_fn(lambda a: (evoxc.popcount(a), evoxc.bitwise_not(a)), i, what=f"int16 shape {shape}")


def test_lowered_text():
    """A chain of elementwise ops is one linalg.generic (the lowering fuses it), with the math dialect's ops in the
    body (MLIR approximates them later); float32 sin stays float32 (the compiler vectorises it through SLEEF); 16-bit floats widen to float32
    and round once."""
    spec = evoxc.TensorSpec((4, 3), evoxc.float32)
    text = evoxc.lower(evoxc.trace(lambda x: evoxc.tanh(evoxc.exp(x)), spec), "mlir").text
    assert text.count("linalg.generic") == 1
    assert text.index("math.exp") < text.index("math.tanh")
    text = evoxc.lower(evoxc.trace(evoxc.numpy.sin, spec), "mlir").text
    assert "math.sin" in text and ": f64" not in text
    text = evoxc.lower(evoxc.trace(evoxc.tanh, evoxc.TensorSpec((4,), evoxc.float16)), "mlir").text
    assert text.count("arith.extf") == 1 and text.count("arith.truncf") == 1 and "math.tanh" in text
    text = evoxc.lower(evoxc.trace(evoxc.popcount, evoxc.TensorSpec((4,), evoxc.uint8)), "mlir").text
    assert "math.ctpop" in text
