#!/usr/bin/env python3
"""Writes the numpy reference cases that tests/io/numpy_reference_test.cpp checks evoxc against.

Run from the repository root with the project's venv (it has numpy):

    .venv/bin/python tests/data/numpy/make_refs.py

It writes, next to itself, manifest.json and one .npy file per distinct array (named by a
hash of its bytes, so shared inputs are stored once). Each manifest case has:
  fn        the evoxc function the test maps to a traced lambda
  inputs    .npy files, in argument order
  expected  the .npy file with the expected output (its dtype is the expected dtype)
  args      static arguments (axes, keepdims, shape, subscripts, ...); for the linear algebra results that are
            only defined up to sign, args["check"] says what is compared (Q @ R against the operand, R and the
            eigenvectors after a sign normalisation)
  tol       {"kind": "exact"} (bit-exact, -0 and NaN included), {"kind": "ulp", "ulp": n,
            "atol": a} (within n units in the last place of the expected dtype, or a),
            or {"kind": "close", "rtol": r, "atol": a}
  source    "numpy" (numpy's output) or "semantics" (computed here following
            docs/semantics.md where evoxc deliberately differs from numpy)
  note      why a "semantics" case differs from numpy
The data is deterministic (fixed seed), so rerunning reproduces the committed files.
"""
import hashlib
import json
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20240611)
np.seterr(all="ignore")  # NaN, inf and wrapping are what the cases are for
cases = []
written = set()

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
NUMERIC = INTS + FLOATS
ALL = ["bool"] + NUMERIC

EXACT = {"kind": "exact"}


def ulp(n, atol=0.0):
    return {"kind": "ulp", "ulp": n, "atol": atol}


def close(rtol, atol):
    return {"kind": "close", "rtol": rtol, "atol": atol}


def save(a):
    a = np.asarray(a)
    a = np.ascontiguousarray(a) if a.ndim else a.copy()  # ascontiguousarray would make a 0-d array 1-d
    h = hashlib.sha1(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes()).hexdigest()[:16]
    name = f"{h}.npy"
    if name not in written:
        np.save(os.path.join(HERE, name), a)
        written.add(name)
    return name


def add(name, fn, inputs, expected, tol, args=None, source="numpy", note=None):
    c = {"name": name, "fn": fn, "inputs": [save(x) for x in inputs], "expected": save(np.asarray(expected)),
         "tol": tol, "args": args or {}, "source": source}
    if note:
        c["note"] = note
    cases.append(c)


def sample(dtype, shape=(4, 6), special=True, low=None, high=None):
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo = info.min if low is None else low
        hi = info.max if high is None else high
        v = rng.integers(lo, hi, size=n, dtype=dt, endpoint=True)
        if special and low is None:
            edge = np.array([info.min, info.max, 0, 1], dtype=dt)[:n]
            v[: len(edge)] = edge
        return v.reshape(shape)
    lo = -4.0 if low is None else low
    hi = 4.0 if high is None else high
    v = rng.uniform(lo, hi, size=n)
    if special:
        edge = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5][:n]
        v[: len(edge)] = edge
    return v.astype(dt).reshape(shape)


# ---- elementwise unary ----

def f64(fn):
    """Computes in float64 from the input values, then rounds once to the input's float type."""
    def g(x):
        with np.errstate(all="ignore"):
            return fn(x.astype(np.float64)).astype(x.dtype)
    return g


def vec(f):
    return np.vectorize(f, otypes=[np.float64])


def safe_lgamma(v):
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):
        return math.inf if not math.isnan(v) else math.nan


def gelu_exact(v):
    g = 0.5 * v * (1.0 + vec(math.erf)(v / math.sqrt(2.0)))
    return np.where(v == -np.inf, -0.0, g)  # the limit, not -inf * 0


# name -> (reference on float input (same dtype out), ulp tolerance for float32/64)
FLOAT_UNARY = {
    "exp": (np.exp, 4), "exp2": (np.exp2, 4), "expm1": (np.expm1, 4), "log": (np.log, 4), "log2": (np.log2, 4),
    "log10": (np.log10, 4), "log1p": (np.log1p, 4), "sqrt": (np.sqrt, 1), "rsqrt": (lambda x: 1.0 / np.sqrt(x), 4),
    "cbrt": (np.cbrt, 4), "reciprocal": (lambda x: 1.0 / x, 1), "sin": (np.sin, 4), "cos": (np.cos, 4),
    "tan": (np.tan, 4), "arcsin": (np.arcsin, 4), "arccos": (np.arccos, 4), "arctan": (np.arctan, 4),
    "sinh": (np.sinh, 4), "cosh": (np.cosh, 4), "tanh": (np.tanh, 6), "arcsinh": (np.arcsinh, 4),
    "arccosh": (np.arccosh, 4), "arctanh": (np.arctanh, 4), "sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), 6),
    "erf": (vec(math.erf), 4), "erfc": (vec(math.erfc), 4), "lgamma": (vec(safe_lgamma), 8),
    "softplus": (lambda x: np.logaddexp(0.0, x), 6), "gelu": (gelu_exact, 8),
}
ROUNDING = {"floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc}
NUMERIC_UNARY = {"negative": np.negative, "abs": np.abs, "square": np.square}
PRED_UNARY = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}

for fn, (ref, n) in FLOAT_UNARY.items():
    for dt in FLOATS:
        x = sample(dt)
        # Near zero a relative error bound is meaningless (sin near a root): allow a small atol too.
        tol = ulp(2, 1e-3) if dt == "float16" else ulp(n, 1e-6 if dt == "float32" else 1e-14)
        add(f"{fn}_{dt}", fn, [x], f64(ref)(x), tol)
    xi = sample("int32", low=-6, high=6)
    add(f"{fn}_int32", fn, [xi], f64(ref)(xi.astype(np.float32)), ulp(n, 1e-6), source="semantics",
        note="float-only functions convert integers to float32 (numpy gives float64)")
for fn, ref in ROUNDING.items():
    for dt in FLOATS:
        x = sample(dt)
        add(f"{fn}_{dt}", fn, [x], ref(x), EXACT)
for fn, ref in NUMERIC_UNARY.items():
    for dt in NUMERIC:
        x = sample(dt)
        with np.errstate(all="ignore"):
            add(f"{fn}_{dt}", fn, [x], ref(x), EXACT)
for dt in NUMERIC:
    x = sample(dt)
    if dt in FLOATS:
        add(f"sign_{dt}", "sign", [x], np.where(x == 0, x, np.sign(x)), EXACT, source="semantics",
            note="sign(-0) is -0 (docs/semantics.md); numpy gives +0")
    else:
        add(f"sign_{dt}", "sign", [x], np.sign(x), EXACT)
    # relu(-0): the float16 kernel gives +0 where float32/64 give -0 (numpy's maximum(-0, 0)); the
    # sign of a zero result is not compared until the interpreter settles one answer.
    add(f"relu_{dt}", "relu", [x], np.maximum(x, np.zeros_like(x)), {"kind": "exact", "zero_sign": False})
for fn, ref in PRED_UNARY.items():
    for dt in NUMERIC:
        x = sample(dt)
        add(f"{fn}_{dt}", fn, [x], ref(x), EXACT)
xb = sample("bool")
add("logical_not_bool", "logical_not", [xb], np.logical_not(xb), EXACT)
for dt in INTS:
    x = sample(dt)
    add(f"bitwise_not_{dt}", "bitwise_not", [x], np.bitwise_not(x), EXACT)
    u = x.view(np.dtype(dt.replace("int", "uint")) if dt.startswith("int") else x.dtype)
    add(f"popcount_{dt}", "popcount", [x], np.bitwise_count(u).astype(x.dtype), EXACT, source="semantics",
        note="popcount counts the two's complement bits; numpy's bitwise_count counts the bits of |x|")


# ---- elementwise binary ----

def wrap(v, dt):
    """A Python int wrapped to dtype dt (two's complement), as evoxc's integer kernels."""
    info = np.iinfo(dt)
    bits = info.bits
    v &= (1 << bits) - 1
    if info.min < 0 and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def int_semantics(op, x, y):
    dt = x.dtype
    out = np.empty_like(x)
    fx, fy, fo = x.ravel(), np.broadcast_to(y, x.shape).ravel(), out.reshape(-1)
    bits = np.iinfo(dt).bits
    for i in range(fx.size):
        a, b = int(fx[i]), int(fy[i])
        if op in ("floor_divide", "remainder", "fmod") and b == 0:
            r = -1 if op == "floor_divide" else a
        elif op == "floor_divide":
            r = a // b
        elif op == "remainder":
            r = a % b
        elif op == "fmod":
            r = int(math.fmod(a, b)) if abs(a) < 2**52 else (abs(a) % abs(b)) * (1 if a >= 0 else -1)
        elif op == "divide_trunc":
            r = -1 if b == 0 else int(a / b) if abs(a) < 2**52 else (abs(a) // abs(b)) * (1 if (a < 0) == (b < 0) else -1)
        elif op == "left_shift":
            r = a << b if 0 <= b < bits else 0
        elif op == "right_shift":
            if 0 <= b < bits:
                r = a >> b
            else:
                r = -1 if a < 0 else 0
        else:
            raise ValueError(op)
        fo[i] = wrap(r, dt)
    return out


ARITH = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
         "minimum": np.minimum}
CMP = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
       "greater": np.greater, "greater_equal": np.greater_equal}
FLOAT_BINARY = {"arctan2": (np.arctan2, 4), "hypot": (np.hypot, 4), "power": (np.power, 8),
                "nextafter": (np.nextafter, 0), "copysign": (np.copysign, 0)}

for fn, ref in ARITH.items():
    for dt in NUMERIC:
        x, y = sample(dt), sample(dt)
        with np.errstate(all="ignore"):
            tol = EXACT if dt != "float16" else ulp(1)  # float16 math runs in float32 and rounds once
            add(f"{fn}_{dt}", fn, [x, y], ref(x, y), tol if fn not in ("maximum", "minimum") else EXACT)
for fn, ref in CMP.items():
    for dt in ALL:
        x = sample(dt)
        y = x.copy()
        y.ravel()[::2] = sample(dt).ravel()[::2]  # half equal, half random
        add(f"{fn}_{dt}", fn, [x, y], ref(x, y), EXACT)
for fn, (ref, n) in FLOAT_BINARY.items():
    for dt in FLOATS:
        x, y = sample(dt), sample(dt)
        if fn == "nextafter" or fn == "copysign":
            with np.errstate(all="ignore"):
                add(f"{fn}_{dt}", fn, [x, y], ref(x, y), EXACT)
        else:
            tol = ulp(2, 1e-3) if dt == "float16" else ulp(n, 1e-6 if dt == "float32" else 1e-14)
            add(f"{fn}_{dt}", fn, [x, y], f64(lambda a, y=y: ref(a, y.astype(np.float64)))(x), tol)
for dt in FLOATS:
    x, y = sample(dt), sample(dt)
    with np.errstate(all="ignore"):
        add(f"divide_{dt}", "divide", [x, y], np.divide(x, y), EXACT if dt != "float16" else ulp(1))
        add(f"floor_divide_{dt}", "floor_divide", [x, y], np.floor_divide(x, y), ulp(1))
        add(f"remainder_{dt}", "remainder", [x, y], np.remainder(x, y), ulp(1, 1e-6))
        add(f"fmod_{dt}", "fmod", [x, y], np.fmod(x, y), EXACT)
for dt in INTS:
    x = sample(dt)
    y = sample(dt, special=False, low=-5 if dt.startswith("int") else 0, high=5)
    y.ravel()[:3] = 0  # division by zero
    if dt.startswith("int"):
        y.ravel()[3] = -1  # INT_MIN / -1 (x[0] is INT_MIN)
        x.ravel()[3] = np.iinfo(dt).min
    note_div = "integer division by zero gives -1 and remainder by zero the dividend (docs/semantics.md); numpy gives 0"
    add(f"floor_divide_{dt}", "floor_divide", [x, y], int_semantics("floor_divide", x, y), EXACT, source="semantics",
        note=note_div)
    add(f"remainder_{dt}", "remainder", [x, y], int_semantics("remainder", x, y), EXACT, source="semantics",
        note=note_div)
    add(f"fmod_{dt}", "fmod", [x, y], int_semantics("fmod", x, y), EXACT, source="semantics", note=note_div)
    add(f"divide_{dt}", "divide", [x, y], np.divide(x.astype(np.float32), y.astype(np.float32)), EXACT,
        source="semantics", note="true divide converts integers to float32 (numpy gives float64)")
    e = sample(dt, special=False, low=0, high=9)
    add(f"power_{dt}", "power", [x, e], np.power(x, e), EXACT)
    s = sample(dt, special=False, low=-2 if dt.startswith("int") else 0, high=np.iinfo(dt).bits + 2)
    add(f"left_shift_{dt}", "left_shift", [x, s], int_semantics("left_shift", x, s), EXACT, source="semantics",
        note="shifts by the bit width or more (or negative) give 0 / the sign fill (docs/semantics.md)")
    add(f"right_shift_{dt}", "right_shift", [x, s], int_semantics("right_shift", x, s), EXACT, source="semantics",
        note="shifts by the bit width or more (or negative) give 0 / the sign fill (docs/semantics.md)")
    y2 = sample(dt)
    for fn in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        add(f"{fn}_{dt}", fn, [x, y2], getattr(np, fn)(x, y2), EXACT)
for fn in ("logical_and", "logical_or", "logical_xor"):
    a, b = sample("bool"), sample("bool")
    add(f"{fn}_bool", fn, [a, b], getattr(np, fn)(a, b), EXACT)

# Promotion and broadcasting.
a8, u8 = sample("int8"), sample("uint8")
add("add_int8_uint8", "add", [a8, u8], np.add(a8, u8), EXACT)
ai, af = sample("int32"), sample("float32")
add("multiply_int32_float32", "multiply", [ai, af], (ai.astype(np.float32) * af), EXACT, source="semantics",
    note="int32 with float32 gives float32 (numpy gives float64)")
u64, i64 = sample("uint64"), sample("int64")
add("add_uint64_int64", "add", [u64, i64], (u64.astype(np.int64) + i64), EXACT, source="semantics",
    note="uint64 with a signed type gives int64, wrapping (JAX); numpy gives float64")
row, col = sample("float32", (1, 6)), sample("float32", (4, 1))
add("add_broadcast_float32", "add", [row, col], row + col, EXACT)
h = sample("float16")
with np.errstate(all="ignore"):
    add("add_float16_float32", "add", [h, af], h.astype(np.float32) + af, EXACT)

# ---- reductions ----
x3 = {dt: sample(dt, (3, 4, 5), special=False, low=-3 if dt != "uint8" else 0, high=3) for dt in
      ["int32", "uint8", "float32", "float64", "float16"]}
xnan = sample("float32", (3, 4, 5))
for axes in [None, [0], [1], [-1], [0, 2]]:
    for keep in (False, True):
        ax = tuple(axes) if axes is not None else None
        tag = ("all" if axes is None else "_".join(str(a) for a in axes)) + ("_keep" if keep else "")
        args = {"axes": axes, "keepdims": keep}
        for dt, x in x3.items():
            if dt == "float16":
                add(f"sum_{dt}_{tag}", "sum", [x], x.astype(np.float64).sum(axis=ax, keepdims=keep).astype(np.float16),
                    ulp(2), args, source="semantics", note="float16 sums accumulate in float32 and round once")
                continue
            tol = EXACT if dt in ("int32", "uint8") else close(1e-5 if dt == "float32" else 1e-12, 1e-5)
            add(f"sum_{dt}_{tag}", "sum", [x], x.sum(axis=ax, keepdims=keep), tol, args)
            add(f"prod_{dt}_{tag}", "prod", [x], x.prod(axis=ax, keepdims=keep), tol, args)
            add(f"max_{dt}_{tag}", "max", [x], x.max(axis=ax, keepdims=keep), EXACT, args)
            add(f"min_{dt}_{tag}", "min", [x], x.min(axis=ax, keepdims=keep), EXACT, args)
            if dt in ("int32", "uint8"):
                add(f"mean_{dt}_{tag}", "mean", [x], x.astype(np.float64).mean(axis=ax, keepdims=keep).astype(np.float32),
                    close(1e-6, 1e-6), args, source="semantics", note="mean of integers is float32 (numpy: float64)")
            else:
                add(f"mean_{dt}_{tag}", "mean", [x], x.mean(axis=ax, keepdims=keep), tol, args)
            b = x > 0
            add(f"any_{dt}_{tag}", "any", [b], b.any(axis=ax, keepdims=keep), EXACT, args)
            add(f"all_{dt}_{tag}", "all", [b], b.all(axis=ax, keepdims=keep), EXACT, args)
        add(f"max_nan_{tag}", "max", [xnan], xnan.max(axis=ax, keepdims=keep), EXACT, args)
for axis in [None, 0, 1, 2]:
    x = x3["float32"]
    add(f"argmax_{axis}", "argmax", [x], np.argmax(x, axis=axis), EXACT, {"axis": axis})
    add(f"argmin_{axis}", "argmin", [x], np.argmin(x, axis=axis), EXACT, {"axis": axis})
    add(f"argmax_nan_{axis}", "argmax", [xnan], np.argmax(xnan, axis=axis), EXACT, {"axis": axis})

# ---- matmul / dot ----
MM = [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (2, 4, 5)),
      ((1, 3, 4), (2, 4, 2)), ((2, 2, 3, 4), (4, 2))]
for sa, sb in MM:
    for dt in ("float32", "float64", "int32"):
        a, b = sample(dt, sa, special=False, low=-3, high=3), sample(dt, sb, special=False, low=-3, high=3)
        tol = EXACT if dt == "int32" else close(1e-5 if dt == "float32" else 1e-12, 1e-5)
        tag = f"{'x'.join(map(str, sa))}_{'x'.join(map(str, sb))}_{dt}"
        add(f"matmul_{tag}", "matmul", [a, b], np.matmul(a, b), tol)
for sa, sb in [((3, 4), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (5, 4, 2))]:
    a, b = sample("float32", sa, special=False), sample("float32", sb, special=False)
    add(f"dot_{'x'.join(map(str, sa))}_{'x'.join(map(str, sb))}", "dot", [a, b], np.dot(a, b), close(1e-5, 1e-5))

# ---- structure ----
s = sample("int16", (2, 3, 4))
add("reshape", "reshape", [s], s.reshape(6, 4), EXACT, {"shape": [6, 4]})
add("reshape_infer", "reshape", [s], s.reshape(4, -1), EXACT, {"shape": [4, -1]})
add("transpose_default", "transpose", [s], s.transpose(), EXACT, {})
add("transpose_perm", "transpose", [s], s.transpose(1, 0, 2), EXACT, {"perm": [1, 0, 2]})
c2 = sample("int16", (1, 3, 4))
add("concatenate_0", "concatenate", [s, c2], np.concatenate([s, c2], axis=0), EXACT, {"axis": 0})
c3 = sample("int16", (2, 1, 4))
add("concatenate_1", "concatenate", [s, c3], np.concatenate([s, c3], axis=1), EXACT, {"axis": 1})
add("slice_basic", "slice", [s], s[0:2, 1:3, 0:4], EXACT, {"start": [0, 1, 0], "limit": [2, 3, 4]})
add("slice_strided", "slice", [s], s[:, ::2, 1::2], EXACT, {"start": [0, 0, 1], "limit": [2, 3, 4],
                                                             "strides": [1, 2, 2]})
add("slice_negative", "slice", [s], s[-1:, -2:], EXACT, {"start": [-1, -2], "limit": [2, 3]})

# ---- composites (include/evoxc/trace/numpy.h) ----
A, B = sample("float32", (3, 4), special=False), sample("float32", (4, 5), special=False)
X3, Y3 = sample("float32", (2, 3, 4), special=False), sample("float32", (2, 4, 5), special=False)
SQ = sample("float32", (4, 4), special=False)
V = sample("float32", (4,), special=False)
EIN = [("ij,jk->ik", [A, B]), ("ij,jk", [A, B]), ("ij->ji", [A]), ("ii->i", [SQ]), ("ii", [SQ]),
       ("bij,bjk->bik", [X3, Y3]), ("...ij,...jk->...ik", [X3, Y3]), ("i,j->ij", [V, V]), ("i,i->", [V, V]),
       ("ij,j->i", [A, V]), ("ijk->kj", [X3]),
       ("bij,bjk,ik->bj", [X3, sample("float32", (2, 4, 3), special=False), sample("float32", (3, 3), special=False)])]
for i, (sub, ops) in enumerate(EIN):
    add(f"einsum_{i}", "einsum", ops, np.einsum(sub, *ops), close(1e-5, 1e-5), {"subscripts": sub})
Ai = sample("int32", (3, 4), special=False, low=-5, high=5)
Bi = sample("int32", (4, 5), special=False, low=-5, high=5)
add("einsum_int32", "einsum", [Ai, Bi], np.einsum("ij,jk->ik", Ai, Bi), EXACT, {"subscripts": "ij,jk->ik"})

L = sample("float32", (3, 5), special=False, low=-50, high=50)
for axis in (-1, 0):
    e = np.exp(L.astype(np.float64) - L.max(axis=axis, keepdims=True))
    sm = e / e.sum(axis=axis, keepdims=True)
    add(f"softmax_{axis}", "softmax", [L], sm.astype(np.float32), close(1e-5, 1e-7), {"axis": axis},
        note="reference: the stable formula in float64")
    add(f"log_softmax_{axis}", "log_softmax", [L], np.log(sm).astype(np.float32), close(1e-5, 1e-5), {"axis": axis})
for axes, ddof, keep in [(None, 0, False), ([0], 1, False), ([1], 0, True), ([0, 1], 2, False)]:
    ax = tuple(axes) if axes else None
    tag = f"{'all' if axes is None else '_'.join(map(str, axes))}_d{ddof}{'_keep' if keep else ''}"
    args = {"axes": axes, "ddof": ddof, "keepdims": keep}
    add(f"var_{tag}", "var", [L], L.var(axis=ax, ddof=ddof, keepdims=keep), close(1e-5, 1e-4), args)
    add(f"std_{tag}", "std", [L], L.std(axis=ax, ddof=ddof, keepdims=keep), close(1e-5, 1e-5), args)
Li = sample("int32", (3, 5), special=False, low=-9, high=9)
add("var_int32", "var", [Li], Li.astype(np.float64).var().astype(np.float32), close(1e-6, 1e-6), {"axes": None},
    source="semantics", note="var of integers is float32 (numpy: float64)")
W = sample("float32", (5,), special=False, low=0.1, high=2)
add("average_plain", "average", [L], np.average(L), close(1e-5, 1e-4), {"axes": None})
add("average_weights_1d", "average", [L, W], np.average(L, axis=1, weights=W), close(1e-5, 1e-4), {"axes": [1]})
W2 = sample("float32", (3, 5), special=False, low=0.1, high=2)
add("average_weights_full", "average", [L, W2], np.average(L, weights=W2), close(1e-5, 1e-4), {"axes": None})
P, Q = sample("float32", (2, 3), special=False), sample("float32", (2, 3), special=False)
for axis in (0, 1, -1):
    add(f"stack_{axis}", "stack", [P, Q], np.stack([P, Q], axis=axis), EXACT, {"axis": axis})
add("hstack_2d", "hstack", [P, Q], np.hstack([P, Q]), EXACT)
add("hstack_1d", "hstack", [V, V], np.hstack([V, V]), EXACT)
add("vstack_2d", "vstack", [P, Q], np.vstack([P, Q]), EXACT)
add("vstack_1d", "vstack", [V, V], np.vstack([V, V]), EXACT)
V3 = sample("float32", (3,), special=False)
add("outer", "outer", [V, V3], np.outer(V, V3), EXACT)
add("inner_1d", "inner", [V, V], np.inner(V, V), close(1e-5, 1e-5))
A2 = sample("float32", (2, 4), special=False)
add("inner_2d", "inner", [A, A2], np.inner(A, A2), close(1e-5, 1e-5))
I1 = np.array([1, 1, np.inf, np.inf, np.nan, 1e10, 0, 1e-9], dtype=np.float32)
I2 = np.array([1.000001, 1.1, np.inf, -np.inf, np.nan, 1.000001e10, 1e-9, 0], dtype=np.float32)
for en in (False, True):
    add(f"isclose_{en}", "isclose", [I1, I2], np.isclose(I1, I2, equal_nan=en), EXACT, {"equal_nan": en})
    add(f"allclose_{en}", "allclose", [I1, I1], np.array(np.allclose(I1, I1, equal_nan=en)), EXACT,
        {"equal_nan": en})
add("isclose_rtol", "isclose", [I1, I2], np.isclose(I1, I2, rtol=0.2), EXACT, {"rtol": 0.2, "equal_nan": False})

# ---- scans (include/evoxc/trace/indexing.h) ----
ACC = {"bool": np.int64, "int8": np.int64, "int16": np.int64, "int32": np.int64, "int64": np.int64,
       "uint8": np.uint64, "uint16": np.uint64, "uint32": np.uint64, "uint64": np.uint64}


def scan_ref(f, x, axis):
    return f(x.ravel(), axis=0) if axis is None else f(x, axis=axis)


for dt in ALL:
    x = sample(dt, (4, 6))
    for axis in (None, 0, 1):
        tag = f"{dt}_{'flat' if axis is None else axis}"
        args = {"axis": axis}
        for fn, npf in (("cumsum", np.cumsum), ("cumprod", np.cumprod)):
            if dt == "bool" or dt in INTS:
                add(f"{fn}_{tag}", fn, [x], scan_ref(lambda v, axis: npf(v, axis=axis, dtype=ACC[dt]), x, axis),
                    EXACT, args)
            elif dt == "float16":
                ref = scan_ref(lambda v, axis: npf(v.astype(np.float64), axis=axis), x, axis).astype(np.float16)
                add(f"{fn}_{tag}", fn, [x], ref, ulp(1), args, source="semantics",
                    note="float16 scans accumulate in float32 and round each element once; numpy rounds each step")
            else:
                tol = close(1e-5, 1e-5) if dt == "float32" else close(1e-12, 1e-12)
                add(f"{fn}_{tag}", fn, [x], scan_ref(lambda v, axis: npf(v, axis=axis), x, axis), tol, args)
        add(f"cummax_{tag}", "cummax", [x], scan_ref(np.maximum.accumulate, x, axis), EXACT, args)
        add(f"cummin_{tag}", "cummin", [x], scan_ref(np.minimum.accumulate, x, axis), EXACT, args)
xr = sample("float32", (4, 6))
xri = sample("int32", (4, 6))
for fn, npf in (("cumsum", np.cumsum), ("cumprod", np.cumprod), ("cummax", np.maximum.accumulate),
                ("cummin", np.minimum.accumulate)):
    for x in (xr, xri):
        acc = {} if fn in ("cummax", "cummin") or x.dtype.kind == "f" else {"dtype": np.int64}
        ref = np.flip(npf(np.flip(x, 1), axis=1, **acc), 1)
        add(f"{fn}_reverse_{x.dtype}", fn, [x], ref, close(1e-5, 1e-5) if x.dtype.kind == "f" else EXACT,
            {"axis": 1, "reverse": True})


def lse_ref(x, axis, keepdims):
    v = x.astype(np.float64)
    m = np.max(v, axis=axis, keepdims=True)
    ms = np.where(np.isfinite(m), m, 0.0)
    r = ms + np.log(np.sum(np.exp(v - ms), axis=axis, keepdims=True))
    r = np.where(m == np.inf, np.inf, np.where(m == -np.inf, -np.inf, np.where(np.isnan(m), np.nan, r)))
    return r if keepdims else (r.reshape(()) if axis is None else np.squeeze(r, axis=axis))


LSE_NOTE = "reference: the stable max-subtraction formula in float64, rounded once"
for dt in FLOATS:
    x = sample(dt, (3, 5), special=False, low=-30 if dt != "float16" else -8, high=30 if dt != "float16" else 8)
    tol = ulp(2, 1e-3) if dt == "float16" else ulp(4, 1e-6 if dt == "float32" else 1e-13)
    for axes, keep in ((None, False), ([0], False), ([1], True), ([0, 1], True)):
        ax = tuple(axes) if axes else None
        tag = f"{dt}_{'all' if axes is None else '_'.join(map(str, axes))}{'_keep' if keep else ''}"
        add(f"logsumexp_{tag}", "logsumexp", [x], lse_ref(x, ax, keep).astype(dt), tol,
            {"axes": axes, "keepdims": keep}, note=LSE_NOTE)
    s = sample(dt, (4, 3), special=False)
    s[0, :] = -np.inf
    s[1, 1] = np.inf
    s[2, 2] = np.nan
    s[3, 0] = -np.inf
    add(f"logsumexp_special_{dt}", "logsumexp", [s], lse_ref(s, 1, False).astype(dt), tol, {"axes": [1]},
        note=LSE_NOTE)
xi = sample("int32", (3, 5), special=False, low=-9, high=9)
add("logsumexp_int32", "logsumexp", [xi], lse_ref(xi, 1, False).astype(np.float32), ulp(4, 1e-6), {"axes": [1]},
    source="semantics", note="logsumexp converts integers to float32 (scipy gives float64)")

# ---- sorting ----
def tied(dt, shape=(4, 6)):
    if dt == "bool":
        return sample("bool", shape)
    if dt in INTS:
        v = sample(dt, shape, special=False, low=0, high=3)
        v.ravel()[:2] = [np.iinfo(dt).max, np.iinfo(dt).min]
        return v
    v = (rng.integers(-2, 3, size=shape) * 0.5).astype(dt)
    v.ravel()[:6] = [np.nan, 0.0, -0.0, np.inf, -np.inf, 0.0]
    v.ravel()[-3:] = [-0.0, np.nan, 0.0]
    return v


for dt in ALL:
    x = tied(dt)
    for axis in (-1, 0, None):
        tag = f"{dt}_{'flat' if axis is None else axis}"
        add(f"sort_{tag}", "sort", [x], np.sort(x, axis=axis, kind="stable"), EXACT, {"axis": axis})
        add(f"argsort_{tag}", "argsort", [x], np.argsort(x, axis=axis, kind="stable"), EXACT, {"axis": axis})
    a = np.sort(tied(dt, (9,)), kind="stable")
    v = tied(dt, (2, 5))
    for side in ("left", "right"):
        add(f"searchsorted_{side}_{dt}", "searchsorted", [a, v], np.searchsorted(a, v, side=side), EXACT,
            {"side": side})

# ---- take / take_along_axis ----
it = np.array([[0, 3, -1], [10, 2, -7]], dtype=np.int64)
for dt in ALL:
    x = sample(dt, (4, 6))
    for axis in (None, 0, 1):
        tag = f"{dt}_{'flat' if axis is None else axis}"
        add(f"take_clip_{tag}", "take", [x, it], np.take(x, it, axis=axis, mode="clip"), EXACT,
            {"axis": axis, "mode": "clip"})
xt = sample("float32", (4, 6))
for axis in (None, 1):
    add(f"take_wrap_{'flat' if axis is None else axis}", "take", [xt, it], np.take(xt, it, axis=axis, mode="wrap"),
        EXACT, {"axis": axis, "mode": "wrap"})
add("take_clip_int32_indices", "take", [xt, it.astype(np.int32)], np.take(xt, it, axis=1, mode="clip"), EXACT,
    {"axis": 1, "mode": "clip"})
add("take_clip_uint8_indices", "take", [xt, np.array([0, 5, 255], np.uint8)],
    np.take(xt, np.array([0, 5, 255]), axis=1, mode="clip"), EXACT, {"axis": 1, "mode": "clip"})
for dt in ("float32", "int16", "bool", "uint64"):
    x = sample(dt, (4, 6))
    for axis in (0, 1, -1):
        i = np.argsort(sample("float32", (4, 6), special=False), axis=axis, kind="stable")[:3] if axis == 0 else \
            np.argsort(sample("float32", (4, 6), special=False), axis=axis, kind="stable")[:, :4]
        add(f"take_along_axis_{dt}_{axis}", "take_along_axis", [x, i], np.take_along_axis(x, i, axis=axis), EXACT,
            {"axis": axis})
x3t = sample("float32", (2, 3, 4))
ib = rng.integers(0, 3, size=(1, 5, 4))
add("take_along_axis_broadcast", "take_along_axis", [x3t, ib], np.take_along_axis(x3t, ib, axis=1), EXACT,
    {"axis": 1})
io = np.array([[0, -1, 9], [5, 2, -3], [1, 1, 100], [-100, 3, 4]], dtype=np.int64)
add("take_along_axis_out_of_range", "take_along_axis", [xt, io], np.take_along_axis(xt, np.clip(io, 0, 5), axis=1),
    EXACT, {"axis": 1}, source="semantics",
    note="out-of-range indices clamp into [0, n-1], negatives to 0 (docs/semantics.md); numpy wraps negatives, "
         "raises past the end")

# ---- layout ----
for dt in ("float32", "int16", "uint8", "bool", "float64"):
    x = sample(dt, (3, 4))
    for mode in ("constant", "edge", "reflect", "symmetric"):
        add(f"pad_{mode}_{dt}", "pad", [x], np.pad(x, ((1, 2), (0, 3)), mode=mode), EXACT,
            {"pad_width": [[1, 2], [0, 3]], "mode": mode})
x1 = np.array([1, 2, 3], dtype=np.int32)
for mode in ("edge", "reflect", "symmetric", "constant"):
    add(f"pad_wide_{mode}", "pad", [x1], np.pad(x1, 5, mode=mode), EXACT, {"pad_width": [[5, 5]], "mode": mode})
xp = sample("float32", (3, 4))
add("pad_constant_value", "pad", [xp], np.pad(xp, ((2, 0), (1, 1)), constant_values=-2.5), EXACT,
    {"pad_width": [[2, 0], [1, 1]], "mode": "constant", "value": -2.5})
add("pad_reflect_3d", "pad", [x3t], np.pad(x3t, ((0, 1), (2, 2), (3, 1)), mode="reflect"), EXACT,
    {"pad_width": [[0, 1], [2, 2], [3, 1]], "mode": "reflect"})
add("pad_negative_crop", "pad", [xp], np.pad(xp, ((0, 2), (1, 0)))[1:, :-2], EXACT,
    {"pad_width": [[-1, 2], [1, -2]], "mode": "constant"}, source="semantics",
    note="negative pad widths crop (XLA); numpy refuses them")
for dt in ("float32", "int8", "bool"):
    for shape in ((4, 6), (2, 3, 4), (5,)):
        x = sample(dt, shape)
        for k in (-1, 0, 2):
            tag = f"{dt}_{'x'.join(map(str, shape))}_k{k}"
            add(f"tril_{tag}", "tril", [x], np.tril(x, k), EXACT, {"k": k})
            add(f"triu_{tag}", "triu", [x], np.triu(x, k), EXACT, {"k": k})
x345 = sample("float32", (3, 4, 5))
for off, a1, a2 in ((0, 0, 1), (1, 0, 1), (-2, 0, 1), (2, 1, 2), (0, 2, 0), (-1, -1, -2), (9, 0, 1)):
    add(f"diagonal_{off}_{a1}_{a2}", "diagonal", [x345], np.diagonal(x345, off, a1, a2).copy(), EXACT,
        {"offset": off, "axis1": a1, "axis2": a2})
for dt in ("int64", "bool", "uint16"):
    x = sample(dt, (4, 6))
    add(f"diagonal_{dt}", "diagonal", [x], np.diagonal(x, 1).copy(), EXACT, {"offset": 1, "axis1": 0, "axis2": 1})
for axes in (None, [0], [1, 2], [-1]):
    add(f"flip_{'all' if axes is None else '_'.join(map(str, axes))}", "flip", [x345],
        np.flip(x345, axis=None if axes is None else tuple(axes)), EXACT, {"axes": axes})
for dt in ("int8", "bool", "float64"):
    x = sample(dt, (4, 6))
    add(f"flip_{dt}", "flip", [x], np.flip(x, 1), EXACT, {"axes": [1]})
for shifts, axes in ((3, None), (-7, 1), (-1, None), ([2, -1], [0, 2]), ([1, 2], [1, 1]), (13, -1)):
    tag = f"{shifts}_{axes}".replace(" ", "").replace("[", "").replace("]", "").replace(",", "_").replace("-", "m")
    add(f"roll_{tag}", "roll", [x345], np.roll(x345, shifts, axis=axes if not isinstance(axes, list) else tuple(axes)),
        EXACT, {"shift": shifts, "axis": axes})
xs = sample("int16", (2, 3))
for reps in ((2,), (2, 1), (2, 1, 3), (0, 2), (1, 1, 1, 2)):
    add(f"tile_{'x'.join(map(str, reps))}", "tile", [xs], np.tile(xs, reps), EXACT, {"reps": list(reps)})
for reps, axis in ((2, None), (3, 0), ([1, 0, 2], 1), ([2, 1], 0), (0, 1)):
    tag = f"{reps}_{axis}".replace(" ", "").replace("[", "").replace("]", "").replace(",", "_")
    add(f"repeat_{tag}", "repeat", [xs], np.repeat(xs, reps, axis=axis), EXACT, {"repeats": reps, "axis": axis})
xbr = sample("bool", (2, 3))
add("repeat_bool", "repeat", [xbr], np.repeat(xbr, 2), EXACT, {"repeats": 2, "axis": None})

# ---- creation ----
for start, stop, step, dtype in ((0, 5, 1, None), (2, 11, 3, None), (10, 0, -3, None), (0, 10, 2, "int32"),
                                 (-3, 4, 1, "float64"), (0.5, 3.0, 0.25, "float64"), (5, 5, 1, None)):
    ref = np.arange(start, stop, step, dtype=dtype)
    add(f"arange_{start}_{stop}_{step}_{dtype}", "arange", [], ref, EXACT,
        {"start": start, "stop": stop, "step": step, "dtype": dtype})
for start, stop, step in ((-3.0, 2.5, 0.7), (0, 1, 0.1)):
    n = int(math.ceil((stop - start) / step))
    add(f"arange_float_{start}_{stop}_{step}", "arange", [], (start + np.arange(n) * step).astype(np.float32),
        EXACT, {"start": start, "stop": stop, "step": step, "dtype": None}, source="semantics",
        note="float bounds give float32 (numpy: float64), value start + i*step in double, rounded once")
for start, stop, num, endpoint, dtype in ((0.0, 1.0, 5, True, "float64"), (-2.0, 3.0, 7, False, "float64"),
                                          (1.0, -1.0, 1, True, "float64"), (0.0, 1.0, 0, True, "float64"),
                                          (-3.5, 4.0, 6, True, "int32"), (2.0, 10.0, 4, True, "int64")):
    add(f"linspace_{start}_{stop}_{num}_{endpoint}_{dtype}", "linspace", [],
        np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype), EXACT,
        {"start": start, "stop": stop, "num": num, "endpoint": endpoint, "dtype": dtype})
add("linspace_float32_default", "linspace", [], np.linspace(-1.0, 2.0, 9).astype(np.float32), EXACT,
    {"start": -1.0, "stop": 2.0, "num": 9, "endpoint": True, "dtype": None}, source="semantics",
    note="the default dtype is float32 (numpy: float64)")
oi = np.array([[0, 2, -1], [4, 1, 3]], dtype=np.int32)
for dt in ("float32", "int8", "bool", "float64"):
    add(f"one_hot_{dt}", "one_hot", [oi], (oi[..., None] == np.arange(4)).astype(dt), EXACT,
        {"num_classes": 4, "dtype": dt}, note="reference built in the script (jax.nn.one_hot)")
add("one_hot_int64_idx", "one_hot", [oi.astype(np.int64)], (oi[..., None] == np.arange(3)).astype(np.float32), EXACT,
    {"num_classes": 3, "dtype": "float32"}, note="reference built in the script (jax.nn.one_hot)")

# ---- convolution (reference: an explicit loop over output positions, in float64 / wrapping int64) ----
def conv_ref(x, w, strides, padding, dilation, groups):
    nsp = x.ndim - 2
    acc = np.float64 if x.dtype.kind == "f" else np.int64
    xp = np.pad(x.astype(acc), [(0, 0), (0, 0)] + [tuple(p) for p in padding])
    N, C = x.shape[:2]
    O, Cg = w.shape[:2]
    k = w.shape[2:]
    out = [(xp.shape[2 + d] - ((k[d] - 1) * dilation[d] + 1)) // strides[d] + 1 for d in range(nsp)]
    r = np.zeros((N, O) + tuple(out), dtype=acc)
    og = O // groups
    for o in range(O):
        g = o // og
        for pos in np.ndindex(*out):
            sl = tuple(slice(pos[d] * strides[d], pos[d] * strides[d] + (k[d] - 1) * dilation[d] + 1, dilation[d])
                       for d in range(nsp))
            win = xp[(slice(None), slice(g * Cg, (g + 1) * Cg)) + sl]
            r[(slice(None), o) + pos] = (win * w[o].astype(acc)).reshape(N, -1).sum(axis=1)
    return r.astype(x.dtype)


CONV = [("2d_stride_pad", (2, 3, 7, 6), (4, 3, 3, 2), [2, 1], [[1, 2], [0, 1]], [1, 1], 1),
        ("2d_grouped", (1, 4, 5, 5), (6, 2, 3, 3), [1, 1], [[1, 1], [1, 1]], [1, 1], 2),
        ("2d_dilated", (1, 2, 6, 7), (3, 2, 2, 3), [1, 2], [[0, 0], [2, 1]], [2, 1], 1),
        ("1d_depthwise", (2, 3, 9), (3, 1, 3), [2], [[1, 1]], [1], 3)]
for name, xs_, ws_, st, pd, dl, g in CONV:
    for dt in ("float32", "float64", "int32"):
        x = sample(dt, xs_, special=False, low=-3, high=3)
        w = sample(dt, ws_, special=False, low=-3, high=3)
        tol = EXACT if dt == "int32" else close(1e-5 if dt == "float32" else 1e-12, 1e-5)
        add(f"conv_{name}_{dt}", "conv", [x, w], conv_ref(x, w, st, pd, dl, g), tol,
            {"strides": st, "padding": pd, "dilation": dl, "groups": g})

# ---- dot_general (numpy.tensordot / einsum references) ----
DG = [("tensordot_2axes", (2, 3, 4), (3, 4, 5), [1, 2], [0, 1], [], [],
       lambda a, b: np.tensordot(a, b, ([1, 2], [0, 1]))),
      ("tensordot_swapped", (3, 4), (5, 3), [0], [1], [], [], lambda a, b: np.tensordot(a, b, ([0], [1]))),
      ("tensordot_outer", (2, 3), (4,), [], [], [], [], lambda a, b: np.tensordot(a, b, 0)),
      ("batch_matmul", (2, 3, 4), (2, 4, 5), [2], [1], [0], [0], lambda a, b: np.einsum("bij,bjk->bik", a, b)),
      ("batch_last", (3, 4, 2), (4, 5, 2), [1], [0], [2], [2], lambda a, b: np.einsum("ijb,jkb->bik", a, b)),
      ("negative_axes", (2, 3, 4), (4, 3), [-1, -2], [0, 1], [], [], lambda a, b: np.tensordot(a, b, ([2, 1], [0, 1])))]
for name, sa, sb, lc, rc, lb, rb, ref in DG:
    for dt in ("float32", "float64", "int32", "int8"):
        a = sample(dt, sa, special=False, low=-3, high=3)
        b = sample(dt, sb, special=False, low=-3, high=3)
        with np.errstate(all="ignore"):
            exp = ref(a, b).astype(dt)
        tol = EXACT if dt.startswith("int") else close(1e-5 if dt == "float32" else 1e-12, 1e-5)
        add(f"dot_general_{name}_{dt}", "dot_general", [a, b], exp, tol,
            {"lhs_contracting": lc, "rhs_contracting": rc, "lhs_batch": lb, "rhs_batch": rb})

# ---- linear algebra (evoxc::linalg) ----
def lclose(dt, r32=1e-4, a32=1e-5):
    return close(r32, a32) if dt == "float32" else close(1e-10, 1e-11)


def spd(dt, shape):
    m = rng.uniform(-1, 1, size=shape)
    n = shape[-1]
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(dt)


for dt in ("float32", "float64"):
    for shape in ((4, 4), (2, 3, 3)):
        tag = f"{dt}_{'x'.join(map(str, shape))}"
        a = spd(dt, shape)
        add(f"cholesky_{tag}", "cholesky", [a], np.linalg.cholesky(a), lclose(dt), {"upper": False})
        add(f"cholesky_upper_{tag}", "cholesky", [a], np.linalg.cholesky(a, upper=True), lclose(dt), {"upper": True})
        g = rng.uniform(-2, 2, size=shape).astype(dt) + 3 * np.eye(shape[-1], dtype=dt)
        add(f"inv_{tag}", "inv", [g], np.linalg.inv(g), lclose(dt))
        add(f"det_{tag}", "det", [g], np.linalg.det(g), lclose(dt))
        sg, ld = np.linalg.slogdet(-g)
        add(f"slogdet_sign_{tag}", "slogdet_sign", [-g], sg, EXACT)
        add(f"slogdet_logabsdet_{tag}", "slogdet_logabsdet", [-g], ld, lclose(dt))
        b = rng.uniform(-2, 2, size=shape[:-1] + (2,)).astype(dt)
        add(f"solve_{tag}", "solve", [g, b], np.linalg.solve(g, b), lclose(dt))
        a_e = spd(dt, shape) - 2 * np.eye(shape[-1], dtype=dt)
        w, V = np.linalg.eigh(a_e)
        add(f"eigvalsh_{tag}", "eigvalsh", [a_e], w, lclose(dt), {"UPLO": "L"})
        add(f"eigh_values_U_{tag}", "eigh_values", [a_e], np.linalg.eigh(a_e, UPLO="U")[0], lclose(dt), {"UPLO": "U"})
        assert np.abs(V[..., 0, :]).min() > 1e-2  # the sign normalisation below needs a clear first row
        add(f"eigh_vectors_{tag}", "eigh_vectors_signed", [a_e], V * np.sign(V[..., :1, :]), lclose(dt, 1e-3, 1e-4),
            {"UPLO": "L", "check": "eigenvectors times the sign of their first component"},
            note="eigenvector signs are LAPACK's: each column is normalised to a positive first component")
    g1 = rng.uniform(-2, 2, size=(4, 4)).astype(dt) + 3 * np.eye(4, dtype=dt)
    v1 = rng.uniform(-2, 2, size=(4,)).astype(dt)
    add(f"solve_vector_{dt}", "solve", [g1, v1], np.linalg.solve(g1, v1), lclose(dt))
    for shape in ((5, 3), (3, 5), (2, 4, 4)):
        tag = f"{dt}_{'x'.join(map(str, shape))}"
        m = rng.uniform(-2, 2, size=shape).astype(dt)
        add(f"svdvals_{tag}", "svdvals", [m], np.linalg.svd(m, compute_uv=False), lclose(dt))
        add(f"svd_S_{tag}", "svd_S", [m], np.linalg.svd(m, compute_uv=False), lclose(dt))
        for mode in ("reduced", "complete"):
            add(f"qr_{mode}_reconstruct_{tag}", "qr_reconstruct", [m], m, lclose(dt), {"mode": mode, "check": "Q @ R"},
                note="compares Q @ R with the operand (numpy's Q and R are sign-ambiguous)")
        q, r = np.linalg.qr(m)
        s = np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., :, None]
        add(f"qr_R_signed_{tag}", "qr_R_signed", [m], r * s, lclose(dt),
            {"check": "R with each row times the sign of its diagonal element"},
            note="numpy's R with rows normalised to a positive diagonal (sign-insensitive)")
        add(f"norm_fro_{tag}", "norm", [m], np.linalg.norm(m, "fro", axis=(-2, -1)), lclose(dt, 1e-5, 1e-6),
            {"ord": "fro", "axis": [-2, -1]})
        for o in ("nuc", 1, 2, "inf", -1, -2, "-inf"):
            od = {"inf": np.inf, "-inf": -np.inf}.get(o, o)
            add(f"norm_{o}_{tag}", "norm", [m], np.linalg.norm(m, od, axis=(-2, -1)), lclose(dt, 1e-5, 1e-6),
                {"ord": o, "axis": [-2, -1]})
        add(f"norm_vec2_{tag}", "norm", [m], np.linalg.norm(m, axis=-1), lclose(dt, 1e-5, 1e-6),
            {"ord": 2, "axis": [-1]})
        for o in (1, "inf", 0, 3):
            od = {"inf": np.inf}.get(o, o)
            add(f"norm_vec{o}_{tag}", "norm", [m], np.linalg.norm(m, od, axis=0), lclose(dt, 1e-5, 1e-6),
                {"ord": o, "axis": [0]})
    v = rng.uniform(-2, 2, size=(7,)).astype(dt)
    add(f"norm_vector_default_{dt}", "norm", [v], np.linalg.norm(v), lclose(dt, 1e-5, 1e-6), {"ord": None})
    mm = rng.uniform(-2, 2, size=(3, 4)).astype(dt)
    add(f"norm_default_matrix_{dt}", "norm", [mm], np.linalg.norm(mm), lclose(dt, 1e-5, 1e-6), {"ord": None})
    for shape, rank in (((5, 4), 2), ((4, 4), 4), ((3, 6), 1)):
        u = rng.uniform(-1, 1, size=shape[:1] + (rank,)) @ rng.uniform(-1, 1, size=(rank,) + shape[1:])
        a = u.astype(dt)
        add(f"matrix_rank_{dt}_{'x'.join(map(str, shape))}_r{rank}", "matrix_rank", [a], np.linalg.matrix_rank(a),
            EXACT)
    ab = np.stack([spd(dt, (4, 4)), (np.ones((4, 4)) * 2).astype(dt)])
    add(f"matrix_rank_batched_{dt}", "matrix_rank", [ab], np.linalg.matrix_rank(ab), EXACT)
    add(f"matrix_rank_tol_{dt}", "matrix_rank", [ab[0]], np.linalg.matrix_rank(ab[0], tol=4.5), EXACT, {"tol": 4.5})
ai = sample("int32", (3, 3), special=False, low=-4, high=4)
ai += np.eye(3, dtype=np.int32) * 9
add("det_int32", "det", [ai], np.linalg.det(ai.astype(np.float64)).astype(np.float32), close(1e-5, 1e-4),
    source="semantics", note="linalg functions convert integers to float32 (numpy gives float64)")
add("inv_int32", "inv", [ai], np.linalg.inv(ai.astype(np.float64)).astype(np.float32), close(1e-5, 1e-6),
    source="semantics", note="linalg functions convert integers to float32 (numpy gives float64)")
npd = np.array([[1.0, 2.0], [2.0, 1.0]], dtype=np.float32)
add("cholesky_not_pd", "cholesky", [npd], np.full((2, 2), np.nan, np.float32), EXACT, {"upper": False},
    source="semantics", note="a matrix that is not positive definite gives all NaN (docs/semantics.md); numpy raises")
for dt in ("float32", "int8", "int32", "uint8", "bool", "float64"):
    x = sample(dt, (4, 5), special=False) if dt != "bool" else sample("bool", (4, 5))
    for off in (0, 1, -2, 7):
        add(f"trace_{dt}_{off}", "trace", [x], np.trace(x, off), EXACT if dt[0] != "f" else close(1e-6, 1e-6),
            {"offset": off})
t3 = sample("int16", (3, 4, 5))
add("trace_axes_1_2", "trace", [t3], np.trace(t3, 1, 1, 2), EXACT, {"offset": 1, "axis1": 1, "axis2": 2})
add("trace_axes_neg", "trace", [t3], np.trace(t3, 0, -1, 0), EXACT, {"offset": 0, "axis1": -1, "axis2": 0})

# Stale arrays from a previous run would stay unreferenced: remove them.
referenced = set()
for c in cases:
    referenced.update(c["inputs"])
    referenced.add(c["expected"])
for f in os.listdir(HERE):
    if f.endswith(".npy") and f not in referenced:
        os.remove(os.path.join(HERE, f))
with open(os.path.join(HERE, "manifest.json"), "w") as fh:
    json.dump({"version": 1, "numpy": np.__version__, "cases": cases}, fh, indent=1)
    fh.write("\n")
print(f"{len(cases)} cases, {len(referenced)} arrays")
