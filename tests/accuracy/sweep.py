# Accuracy sweep of evoxc's transcendental ops against mpmath; checks or regenerates docs/semantics.md's table.
"""Measures the worst-case error of every transcendental unary op and `power` per float dtype.

Each op runs through `evoxc run` on a one-op EvoXIR graph; every result is compared with
mpmath at a precision well beyond float64. Inputs: every finite float16/bfloat16 value, and
for float32/float64 a log-spaced sample over the whole range plus edge values (overflow
thresholds, zeros of lgamma/digamma, subnormals, +-0, +-inf, NaN).

The table in docs/semantics.md (between the accuracy-table markers) is the one statement of
the bounds: the default mode runs a small sample and fails when an op exceeds the bound the
table states for it; `--full` runs the whole sweep and prints the table (`--write-docs`
rewrites it in place).

Error metric: |got - exact| / ulp(exact) in the result dtype (ulp of a subnormal is the
smallest subnormal). An op with an `abs` part in its cell (lgamma, digamma) is measured so
for x > 0 only; for x < 0, where the results cross zero infinitely often and a relative
error means nothing near those zeros, the `abs` figure is |got - exact| / ulp(max(|exact|, 1)):
absolute error in units of the dtype's epsilon below 1, ULP above. A NaN/inf where the exact result is
finite, or the reverse, is an infinite error.
"""

import argparse
import math
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile

import mpmath
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs", "semantics.md")
BEGIN, END = "<!-- accuracy-table:begin -->", "<!-- accuracy-table:end -->"
DTYPES = ["f16", "bf16", "f32", "f64"]
# precision (significand bits), smallest normal exponent, largest finite value
FORMAT = {
    "f16": (11, -14, 65504.0),
    "bf16": (8, -126, float.fromhex("0x1.fep127")),
    "f32": (24, -126, float.fromhex("0x1.fffffep127")),
    "f64": (53, -1022, sys.float_info.max),
}

mp = mpmath.mp


def _real(z):
    """mpmath value -> real mpf, or None (NaN) when the exact result is not real."""
    if z is None:
        return None
    if isinstance(z, mpmath.mpc):
        if z.imag != 0:
            return None
        z = z.real
    return None if mpmath.isnan(z) else z


def _cbrt(x):
    return mpmath.sign(x) * mpmath.cbrt(abs(x))


def _lgamma(x):
    if x <= 0 and x == mpmath.floor(x):
        return mpmath.inf
    return mpmath.log(abs(mpmath.gamma(x)))


def _digamma(x):
    if x == 0:
        return -mpmath.inf  # evoxc's convention (the limit from above, as torch)
    if x < 0 and x == mpmath.floor(x):
        return None
    return mpmath.digamma(x)


def _erfc(z):
    # mpmath overflows on huge arguments; erfc(1e4) = exp(-1e8)/... underflows every dtype.
    if abs(z) > 1e4:
        return mpmath.mpf(0) if z > 0 else mpmath.mpf(2)
    return mpmath.erfc(z)


def _gelu(x):
    if mpmath.isinf(x):
        return x if x > 0 else mpmath.mpf(0)  # evoxc's limit at -inf: -0
    return x / 2 * _erfc(-x / mpmath.sqrt(2))


def _gelu_tanh(x):
    # x sigmoid(2u) = x (1 + tanh u) / 2 without the cancellation of 1 + tanh(u) for u << 0.
    if mpmath.isinf(x):
        return x if x > 0 else mpmath.mpf(0)
    u = mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf("0.044715") * x**3)
    return x / (1 + mpmath.exp(-2 * u))


def _acosh(x):
    return mpmath.acosh(x) if x >= 1 else None


def _atanh(x):
    if abs(x) > 1:
        return None
    if abs(x) == 1:
        return mpmath.sign(x) * mpmath.inf
    return mpmath.atanh(x)


def _log_family(fn):
    def f(x):
        if x < 0:
            return None
        if x == 0:
            return -mpmath.inf
        return fn(x)

    return f


def _log1p(x):
    if x < -1:
        return None
    if x == -1:
        return -mpmath.inf
    return mpmath.log1p(x)


def _erf_inv(x):
    if abs(x) > 1:
        return None
    if abs(x) == 1:
        return mpmath.sign(x) * mpmath.inf
    return mpmath.erfinv(x)


def _asin(x):
    return mpmath.asin(x) if abs(x) <= 1 else None


def _acos(x):
    return mpmath.acos(x) if abs(x) <= 1 else None


def _rsqrt(x):
    if x < 0:
        return None
    return mpmath.inf if x == 0 else 1 / mpmath.sqrt(x)


def _power(a, b):
    """IEEE 754 pow (C99 Annex F) for the special cases; mpmath for the rest."""
    if b == 0 or a == 1:
        return mpmath.mpf(1)
    if mpmath.isinf(b):
        if abs(a) == 1:
            return mpmath.mpf(1)
        return mpmath.inf if (abs(a) > 1) == (b > 0) else mpmath.mpf(0)
    odd = b == mpmath.floor(b) and int(b) % 2 == 1
    if a == 0 and b < 0:
        return mpmath.inf  # -0 with an odd exponent gives -inf; the inputs here have +0
    if a < 0 and b != mpmath.floor(b):
        return None
    if mpmath.isinf(a):
        r = mpmath.inf if b > 0 else mpmath.mpf(0)
        return -r if (a < 0 and odd) else r
    return mpmath.power(a, b)


# op -> (mpmath reference, IR attributes, extra edge points, has an abs region for x < 0)
UNARY = {
    "exp": (mpmath.exp, "", [88.7, 88.73, 709.78, 709.79, -87.3, -103.9, -745.1]),
    "exp2": (lambda x: mpmath.power(2, x), "", [127.99, 128, 1023.99, -149, -1074]),
    "expm1": (mpmath.expm1, "", [1e-8, -1e-8, 88.7, 709.7]),
    "log": (_log_family(mpmath.log), "", [1, 1 + 2**-20, 1 - 2**-20]),
    "log2": (_log_family(lambda x: mpmath.log(x, 2)), "", [1, 1 + 2**-20]),
    "log10": (_log_family(mpmath.log10), "", [1, 1 + 2**-20]),
    "log1p": (_log1p, "", [-1 + 2**-20, 1e38, 3e38, 1e307, 1.7e308]),
    "sqrt": (lambda x: mpmath.sqrt(x) if x >= 0 else None, "", []),
    "cbrt": (_cbrt, "", []),
    "rsqrt": (_rsqrt, "", []),
    "sin": (mpmath.sin, "", [math.pi, 1e22, 3.0e38]),
    "cos": (mpmath.cos, "", [math.pi / 2, 1e22, 3.0e38]),
    "tan": (mpmath.tan, "", [math.pi / 2, 1e22]),
    "asin": (_asin, "", [1, -1, 1 - 2**-20]),
    "acos": (_acos, "", [1, -1, 1 - 2**-20]),
    "atan": (mpmath.atan, "", []),
    "sinh": (mpmath.sinh, "", [88.72, 89.0, 89.41, 89.42, 710.0, 710.47, 710.48, -89.4]),
    "cosh": (mpmath.cosh, "", [88.72, 89.0, 89.41, 89.42, 710.0, 710.47, 710.48, -89.4]),
    "tanh": (mpmath.tanh, "", [1e-8, 9.0, 20.0]),
    "asinh": (mpmath.asinh, "", [2.0**63, 2.0**64, 3e38, 2.0**511, 2.0**512, 1.7e308, -2.0**64]),
    "acosh": (_acosh, "", [1, 1 + 2**-20, 2.0**63, 2.0**64, 3e38, 2.0**512, 1.7e308]),
    "atanh": (_atanh, "", [1 - 2**-20, -1 + 2**-20]),
    "erf": (mpmath.erf, "", [1e-8, 3.9, 5.9]),
    "erfc": (_erfc, "", [9.0, 10.05, 26.5, 27.2, -5.0]),
    "lgamma": (_lgamma, "", [-2.4570247382208006, -2.7476826467274127, -3.1435808883499800]),
    "digamma": (_digamma, "", [1.4616321449683623, -0.5040830082644554, -1.5734321186274637, -2.6107208684441446]),
    "erf_inv": (_erf_inv, "", [1 - 2**-24, 1 - 2**-53, -1 + 2**-53, 0.9999]),
    "sigmoid": (lambda x: 1 / (1 + mpmath.exp(-x)), "", [-88, -103, -745]),
    "softplus": (lambda x: mpmath.log1p(mpmath.exp(x)), "", [-88, -103, 88.8, -745]),
    "gelu": (_gelu, "attributes {approximate = false}", [-12, -13, -14, -38, -9]),
    "gelu(approximate)": (_gelu_tanh, "attributes {approximate = true}", [-12, -13, -9]),
}
ABS_BELOW_ZERO = {"lgamma", "digamma"}
BINARY = {"power": _power}
ALL_OPS = list(UNARY) + list(BINARY)


SAMPLE = 1000  # points per op and dtype in the default (test-suite) mode, edges on top

# ---- inputs ------------------------------------------------------------------------------


def _all_finite(dt):
    bits = np.arange(0, 1 << 16, dtype=np.uint16)
    if dt == "f16":
        v = bits.view(np.float16).astype(np.float32)
    else:
        v = (bits.astype(np.uint32) << 16).view(np.float32)
    return v[np.isfinite(v)]


def _log_spaced(dt, n, rng):
    """n values spread evenly over the bit patterns of each sign (log-spaced), jittered."""
    if dt == "f32":
        top = np.frombuffer(np.float32(np.finfo(np.float32).max).tobytes(), np.uint32)[0]
        pos = np.linspace(0, int(top), n // 2, dtype=np.float64).astype(np.uint32)
        pos = np.minimum(pos + rng.integers(0, 1 << 12, pos.size).astype(np.uint32), top)
        v = pos.view(np.float32).astype(np.float64)
    else:
        top = np.frombuffer(np.float64(sys.float_info.max).tobytes(), np.uint64)[0]
        pos = np.linspace(0, float(top), n // 2).astype(np.uint64)
        pos = np.minimum(pos + rng.integers(0, 1 << 40, pos.size).astype(np.uint64), top)
        v = pos.view(np.float64)
    return np.concatenate([v, -v])


def inputs(op, dt, size, rng):
    """The sweep's inputs of a unary op in dtype dt (as float64, exactly representable in dt)."""
    edges = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, 2.0]
    edges += UNARY[op][2] if op in UNARY else []
    if dt in ("f16", "bf16"):
        v = _all_finite(dt).astype(np.float64)
    else:
        n = 60_000 if dt == "f32" else 30_000
        v = _log_spaced(dt, n, rng)
        # The busy middle gets a linear sample too: most of every function's structure is there.
        lin = rng.uniform(-30, 30, n // 4)
        if op in ("lgamma", "digamma"):
            lin = np.concatenate([lin, rng.uniform(-12, 3, n // 2)])
        if op in ("erf_inv", "atanh", "asin", "acos"):
            lin = np.concatenate([lin, rng.uniform(-1, 1, n // 4), 1 - rng.uniform(0, 1e-6, n // 16)])
        tiny = np.array([5e-324, 1e-310, 1.4e-45, 1e-40, 1.1754944e-38, 2.2250738585072014e-308])
        v = np.concatenate([v, lin, tiny, -tiny])
    # The sample is a subset of the full sweep's points (plus every edge), so it can never
    # find an error the full sweep that wrote the table did not see.
    if size != "full":
        v = v[np.random.default_rng(7).choice(v.size, SAMPLE, replace=False)]
    v = np.concatenate([v, np.array(edges, np.float64)])
    return _to_dtype(v, dt).astype(np.float64)


def _to_dtype(v, dt):
    if dt == "f16":
        return v.astype(np.float16)
    if dt == "bf16":
        f = v.astype(np.float32)
        b = f.view(np.uint32).astype(np.uint64)
        b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint32) << 16  # round to nearest even
        out = b.view(np.float32)
        return np.where(np.isnan(f), f, out)
    return v.astype(np.float32 if dt == "f32" else np.float64)


# ---- running evoxc -----------------------------------------------------------------------

NPY_DT = {"f16": "<f2", "f32": "<f4", "f64": "<f8", "bf16": "<f4"}


def run_evoxc(evoxc, op, dt, args, workdir):
    """Runs one op on arrays `args` (float64 holding dt values); returns float64 results.

    .npy has no bfloat16, so a bfloat16 op reads and writes float32 and converts around the
    op (both conversions are exact here)."""
    name, attrs = (op.split("(")[0], UNARY[op][1]) if op in UNARY else (op, "")
    io = "f32" if dt == "bf16" else dt
    params = ", ".join("%%arg%d: tensor<Nx%s>" % (i, io) for i in range(len(args)))
    ins = "(" + ",".join("*" for _ in args) + ",)"
    body, operands = [], []
    for i in range(len(args)):
        if dt == "bf16":
            body.append("%%c%d = evoxc.convert(%%arg%d) attributes {dtype = bf16} : tensor<Nxbf16>" % (i, i))
            operands.append("%%c%d" % i)
        else:
            operands.append("%%arg%d" % i)
    body.append("%%r = evoxc.%s(%s) %s : tensor<Nx%s>" % (name, ", ".join(operands), attrs, dt))
    res = "%r"
    if dt == "bf16":
        body.append("%o = evoxc.convert(%r) attributes {dtype = f32} : tensor<Nxf32>")
        res = "%o"
    text = 'module @sweep version 1 attributes {inputs = "%s", outputs = "*"} {\n' % ins
    text += "  func @main(%s) -> tensor<Nx%s> {\n" % (params, io)
    text += "".join("    %s\n" % b for b in body)
    text += "    evoxc.return(%s)\n  }\n}\n" % res
    g = os.path.join(workdir, "g.evoxcir")
    with open(g, "w") as f:
        f.write(text)
    cmd = [evoxc, "run", g, "-o", os.path.join(workdir, "out")]
    for i, a in enumerate(args):
        path = os.path.join(workdir, "in%d.npy" % i)
        np.save(path, a.astype(NPY_DT[dt]))
        cmd += ["--input", "%d=%s" % (i, path)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("evoxc run failed for %s %s: %s" % (op, dt, r.stderr.strip()))
    out = np.load(os.path.join(workdir, "out", "out0.npy")).astype(np.float64)
    assert out.size == args[0].size
    return out


# ---- comparing ---------------------------------------------------------------------------


def _ulp(r, dt):
    """ulp in dtype dt of the exact value r (a float64 rounding of it: only its exponent counts)."""
    p, emin, _ = FORMAT[dt]
    if r == 0:
        return math.ldexp(1.0, emin - p + 1)
    e = math.frexp(abs(r))[1] - 1
    return math.ldexp(1.0, max(e, emin) - p + 1)


def _error(got, ref, dt, absolute):
    """Error of one result: in ULP, or absolute when `absolute`."""
    p, _, fmax = FORMAT[dt]
    if ref is None:
        return 0.0 if math.isnan(got) else math.inf
    if mpmath.isinf(ref):
        return 0.0 if (math.isinf(got) and (got > 0) == (ref > 0)) else math.inf
    # The exact value rounds to inf from fmax + ulp(fmax)/2 on.
    if abs(ref) >= mpmath.mpf(fmax) + mpmath.ldexp(1, math.frexp(fmax)[1] - 1 - p):
        return 0.0 if (math.isinf(got) and (got > 0) == (ref > 0)) else math.inf
    if math.isnan(got) or math.isinf(got):
        return math.inf
    if dt == "f64":
        d = float(abs(mpmath.mpf(got) - ref))  # the difference is exact enough in mpmath only
        r64 = float(ref)
    else:
        r64 = float(ref)  # 2^-53 relative: far below the dtype's ULP
        d = abs(got - r64)
    if absolute:
        return d / _ulp(max(abs(r64), 1.0), dt)
    return d / _ulp(r64, dt)


def _measure_chunk(job):
    op, dt, xs, ys = job
    mp.prec = 113 if dt == "f64" else 64
    worst_ulp = (0.0, None)
    worst_abs = (0.0, None)
    for i, x in enumerate(xs):
        try:
            if op in BINARY:
                ref = None if (math.isnan(x[0]) or math.isnan(x[1])) else _real(BINARY[op](mpmath.mpf(x[0]), mpmath.mpf(x[1])))
            elif math.isnan(x):
                ref = None
            elif x == 0 and op == "rsqrt":
                ref = math.copysign(1, x) * mpmath.inf  # 1/sqrt(-0) = 1/-0 (mpmath has no -0)
            else:
                ref = _real(UNARY[op][0](mpmath.mpf(x)))
        except (ValueError, ZeroDivisionError, OverflowError):
            ref = None
        absolute = op in ABS_BELOW_ZERO and not (x > 0)
        e = _error(ys[i], ref, dt, absolute)
        if absolute:
            if e > worst_abs[0] or (e != e):
                worst_abs = (e, x)
        elif e > worst_ulp[0] or (e != e):
            worst_ulp = (e, x)
    return worst_ulp, worst_abs


def power_inputs(dt, size, rng):
    n = 20_000
    if dt in ("f16", "bf16"):
        a = _all_finite(dt).astype(np.float64)
        a = rng.choice(a, n)
    else:
        a = _log_spaced(dt, n, rng)
        rng.shuffle(a)
    b = np.concatenate([rng.uniform(-4, 4, n // 2), rng.uniform(-300, 300, n - n // 2)])
    b[: n // 8] = np.round(b[: n // 8])
    a = np.abs(a)  # negative bases with integral exponents: added below
    edges_a = [1.7976931348623157e308, 3.4028235e38, 65504.0, 2.0, 10.0, -2.0, -3.0, 0.0, 1.0]
    edges_b = [1.0, 1.0, 1.0, 1023.99, 127.9, 3.0, 3.0, -1.0, math.inf]
    if size != "full":
        keep = np.random.default_rng(7).choice(a.size, SAMPLE, replace=False)
        a, b = a[keep], b[keep]
    a = np.concatenate([a, edges_a])
    b = np.concatenate([b, edges_b])
    return _to_dtype(a, dt).astype(np.float64), _to_dtype(b, dt).astype(np.float64)


def measure(evoxc, op, dt, size, pool, seed=1):
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as wd:
        if op in BINARY:
            a, b = power_inputs(dt, size, rng)
            y = run_evoxc(evoxc, op, dt, [a, b], wd)
            xs = list(zip(a.tolist(), b.tolist()))
        else:
            x = inputs(op, dt, size, rng)
            y = run_evoxc(evoxc, op, dt, [x], wd)
            xs = x.tolist()
    ys = y.tolist()
    k = max(1, len(xs) // 2000)
    jobs = [(op, dt, xs[i::k], ys[i::k]) for i in range(k)]
    parts = pool.map(_measure_chunk, jobs) if pool else map(_measure_chunk, jobs)
    wu, wa = (0.0, None), (0.0, None)
    for u, a_ in parts:
        if u[0] > wu[0] or u[0] != u[0]:
            wu = u
        if a_[0] > wa[0] or a_[0] != a_[0]:
            wa = a_
    return wu, wa


# ---- the docs table ----------------------------------------------------------------------

CELL = re.compile(r"^\s*(inf|[0-9.]+)\s*(?:;\s*abs\s+(inf|[0-9.]+)\s*)?$")


def parse_docs():
    text = open(DOCS, encoding="utf-8").read()
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < 0:
        raise SystemExit("docs/semantics.md has no accuracy table markers")
    bounds = {}
    for line in text[i:j].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 1 + len(DTYPES) or cells[0] not in ALL_OPS:
            continue
        op = cells[0]
        bounds[op] = {}
        for dt, c in zip(DTYPES, cells[1:]):
            m = CELL.match(c)
            if not m:
                raise SystemExit("bad accuracy cell %r for %s %s" % (c, op, dt))
            bounds[op][dt] = (float(m.group(1)), float(m.group(2)) if m.group(2) else None)
    return bounds


# Measured errors carry the float64 rounding of the reference (2^-53 relative, so a
# correctly rounded float16 result can measure 0.5000001 ULP): the table rounds up to
# 0.1 past that slack and the check allows it.
SLACK = 1e-3


def _round_up(v):
    if math.isinf(v):
        return "inf"
    return "%.1f" % (math.ceil((v - SLACK) * 10) / 10)


def format_table(results):
    lines = ["| op | float16 | bfloat16 | float32 | float64 |", "|---|---|---|---|---|"]
    for op in ALL_OPS:
        cells = []
        for dt in DTYPES:
            (u, _), (a, _) = results[op][dt]
            c = _round_up(u)
            if op in ABS_BELOW_ZERO:
                c += "; abs " + _round_up(a)
            cells.append(c)
        # Plain names: backquoted words in a table's first column are the op catalogue to
        # cmake/check_op_names.cmake, and "gelu(approximate)" is no op.
        lines.append("| %s | %s |" % (op, " | ".join(cells)))
    return "\n".join(lines)


def write_docs(table):
    text = open(DOCS, encoding="utf-8").read()
    i, j = text.find(BEGIN), text.find(END)
    text = text[: i + len(BEGIN)] + "\n" + table + "\n" + text[j:]
    with open(DOCS, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evoxc", default=os.path.join(ROOT, "build", "bin", "evoxc"))
    ap.add_argument("--full", action="store_true", help="the whole sweep; prints the markdown table")
    ap.add_argument("--write-docs", action="store_true", help="with --full: rewrite the docs table")
    ap.add_argument("--ops", default="", help="comma-separated subset of ops")
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    ops = [o for o in args.ops.split(",") if o] or ALL_OPS
    dts = args.dtypes.split(",")
    bounds = None if args.full else parse_docs()
    size = "full" if args.full else "sample"
    pool = multiprocessing.Pool(args.jobs) if args.jobs > 1 else None
    results, failures = {}, []
    for op in ops:
        results[op] = {}
        for dt in dts:
            (u, ux), (a, ax) = measure(args.evoxc, op, dt, size, pool)
            results[op][dt] = ((u, ux), (a, ax))
            line = "%-18s %-5s %10.3g ULP at %r" % (op, dt, u, ux)
            if op in ABS_BELOW_ZERO:
                line += "; abs %.3g at %r" % (a, ax)
            if bounds is not None:
                if op not in bounds:
                    failures.append("%s: no row in the docs table" % op)
                else:
                    bu, ba = bounds[op][dt]
                    if not (u <= bu + SLACK) or (ba is not None and not (a <= ba + SLACK)):
                        failures.append("%s %s: measured %s exceeds the documented %s" % (op, dt, line.split(None, 2)[2], bounds[op][dt]))
                        line += "   <-- exceeds the documented bound"
            print(line, flush=True)
    if args.full and set(ops) == set(ALL_OPS) and set(dts) == set(DTYPES):
        table = format_table(results)
        print(table)
        if args.write_docs:
            write_docs(table)
    if failures:
        print("\n".join(["FAILED:"] + failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
