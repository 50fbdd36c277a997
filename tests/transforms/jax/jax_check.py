"""Cross-checks evoxc's graph transforms against JAX on the fixtures jax_fixtures writes.

Usage: jax_check.py FOLDER   (FOLDER holds manifest.json and the .npy files jax_fixtures wrote)
       jax_check.py --probe  (exit 77 with an install hint when jax cannot be imported, 0 otherwise)

Each case of jax_fixtures.cpp is written here again, once, in jax.numpy / jax.lax, following evoxc's semantics
where they differ from jnp's (clamped gather indices, dropped out-of-range scatter rows). The same transform is
applied with JAX on the same inputs, and every output leaf is compared with evoxc's: |evoxc - jax| <= atol + rtol *
|jax| elementwise (float64: rtol 1e-9, atol 1e-11 unless the case states otherwise and why). One line per
(case, transform) with the max abs error; exit 1 on any mismatch or error, 0 otherwise.
"""

import json
import os
import sys

SKIP = 77
INSTALL_HINT = ".venv/bin/python -m pip install -r requirements.txt   (or: .venv/bin/python -m pip install jax)"


def probe():
    try:
        import jax  # noqa: F401
    except Exception as e:  # ImportError, or a broken jaxlib
        print(f"SKIPPED: the JAX cross-check needs jax in {sys.executable}: {e}")
        print(f"  install it with: {INSTALL_HINT}")
        sys.exit(SKIP)
    sys.exit(0)


if len(sys.argv) == 2 and sys.argv[1] == "--probe":
    probe()

try:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    from jax.scipy.linalg import expm
    from jax.scipy.special import logsumexp
except Exception as e:
    print(f"SKIPPED: the JAX cross-check needs jax in {sys.executable}: {e}")
    print(f"  install it with: {INSTALL_HINT}")
    sys.exit(SKIP)

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

RTOL, ATOL = 1e-9, 1e-11


# ---- the programs (same names and argument order as jax_fixtures.cpp) ----


def mlp(x, w1, b1, w2, y):
    return jnp.mean(jnp.square(jnp.tanh(x @ w1 + b1) @ w2 - y))


def per_sample(x, y, w):
    return jnp.mean(jnp.square(x @ w - y))


def softmax_xent(x, w, y):
    logits = x @ w
    nll = jnp.mean(logsumexp(logits, axis=1) - jnp.sum(logits * y, axis=1))
    return nll + jnp.sum(jnp.square(jax.nn.softmax(logits))) * 0.1 + jnp.mean(jnp.max(jax.nn.log_softmax(logits), 1))


def scan_rnn(h0, xs, wx, wh):
    def body(h, x):
        hn = jnp.tanh(x @ wx + h @ wh)
        return hn, jnp.sum(jnp.square(hn))

    hf, ys = lax.scan(body, h0, xs)
    return jnp.sum(ys) + jnp.sum(hf)


def scan_reverse_ys(h0, xs, wh):
    def body(h, x):
        hn = jnp.sin(h * x + h @ wh)
        return hn, hn * x

    return lax.scan(body, h0, xs, reverse=True)[1]


def cond_case(x, w):
    p = jnp.sum(x * w)
    r = lax.cond(p > 0, lambda a, b: jnp.sum(jnp.sin(a * b)) + jnp.sum(jnp.exp(b)),
                 lambda a, b: jnp.sum(jnp.square(a) * b) * 3.0, x, w)
    return r * p


def fori_case(c0, w):
    c = lax.fori_loop(0, 4, lambda i, c: c * 0.9 + jnp.tanh(c @ w) * (i.astype(jnp.float64) + 1.0), c0)
    return jnp.sum(jnp.square(c))


def while_case(x, a):
    return lax.while_loop(lambda c: jnp.sum(jnp.square(c)) < 10.0, lambda c: c * a + 0.1, x)


def cumsum_cumprod(x):
    return jnp.cumsum(x, 1) * 0.5 + jnp.cumprod(x * 0.5 + 1.0, 0) + jnp.flip(jnp.cumsum(jnp.flip(x, 0), 0), 0)


def sort_top_k(x, w):
    return jnp.sum(jnp.sort(x, -1) * w) + jnp.sum(jnp.square(lax.top_k(x * w, 3)[0]))


def gather_scatter(x, idx, idx2, u):
    # evoxc's gather clamps every index component into [0, n-1] (no negative wrap); its scatter drops a row
    # with any component out of [0, n-1]. Written out explicitly so jnp's own index rules play no part.
    n0, n1 = x.shape
    t = x[jnp.clip(idx, 0, n0 - 1)]
    g = x[jnp.clip(idx2[:, 0], 0, n0 - 1), jnp.clip(idx2[:, 1], 0, n1 - 1)]
    keep = (idx >= 0) & (idx < n0)
    s = x.at[jnp.clip(idx, 0, n0 - 1)].add(jnp.where(keep[:, None], u, 0.0))
    return jnp.sum(jnp.square(t) * 0.5) + jnp.sum(jnp.sin(g)) + jnp.sum(s * s * x)


def cholesky_solve(a, b):
    s = a @ a.T + jnp.eye(4) * 4.0
    L = jnp.linalg.cholesky(s)
    x = jnp.linalg.solve(s, b)
    return (jnp.sum(jnp.log(jnp.diagonal(L))) + jnp.sum(jnp.square(x)) + jnp.linalg.slogdet(s)[1] +
            jnp.sum(jnp.linalg.inv(s) * a) + jnp.sum(jax.scipy.linalg.solve_triangular(L, b, lower=True)))


def slogdet_det(a):
    m = a + jnp.eye(3) * 2.0
    return jnp.linalg.slogdet(m)[1] + jnp.linalg.det(m) * 0.5


def eigh_svd(a, b, w):
    ev = jnp.linalg.eigvalsh(a + a.T)
    sv = jnp.linalg.svd(b, compute_uv=False)
    return jnp.sum(ev * w) + jnp.sum(jnp.square(sv)) + jnp.sum(sv)


def qr_case(a, c, d):
    q, r = jnp.linalg.qr(a)
    return jnp.sum(jnp.square(r) * c) + jnp.sum(jnp.square(q) * d)


def matrix_exp(a):
    return expm(a * 0.5)


def conv2d(x, w):
    y = lax.conv_general_dilated(x, w, (2, 2), ((1, 0), (2, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return jnp.mean(jnp.square(jnp.tanh(y)))


def norm_case(x, v):
    return (jnp.linalg.norm(x) + jnp.sum(jnp.linalg.norm(x, 3.0, axis=1)) + jnp.linalg.norm(x, "nuc") +
            jnp.linalg.norm(x, jnp.inf) + jnp.linalg.norm(v))


def multi_output(x, y):
    return jnp.sin(x) * y[0:1], jnp.outer(x, jnp.exp(y))


def elementwise(x, y):
    a = (jnp.power(jnp.abs(x) + 0.5, y) + jnp.arctan2(x, y + 2.0) + jnp.clip(x * 2.0, -0.5, 0.7) +
         jnp.where(x > y, x * y, x - y))
    return (jnp.sum(a * jnp.maximum(x, y * 0.3)) + jnp.sum(jnp.log1p(jnp.square(y))) + jnp.sum(jnp.expm1(x * 0.5)) +
            jnp.sum(jax.scipy.special.erf(x + y)))


def reduce_structure(x):
    p = jnp.pad(x, ((1, 0), (0, 2)))
    c = jnp.concatenate([p, jnp.reshape(x, (3, 2)), x.T], 1)
    return (jnp.sum(jnp.prod(x * 0.5 + 1.0, 0)) + jnp.sum(jnp.min(c, 1)) + jnp.var(x) + jnp.sum(jnp.std(x, 1)) +
            jnp.sum(c * c * 0.25))


def dynamic_slice(x, i, j, u):
    # lax's starts clamp so the window fits, as evoxc's (XLA's rule).
    d = lax.dynamic_slice(x, (i, j), (3, 2))
    w = lax.dynamic_update_slice(x, u * d, (j, i))
    return jnp.sum(jnp.square(d)) + jnp.sum(w * x * x)


def einsum_switch(a, b, k):
    e = jnp.einsum("ij,jk->ik", a, b) + jnp.einsum("ij->j", a)
    # lax.switch clamps the index into range, as evoxc's switch_.
    r = lax.switch(k, [lambda x: jnp.sum(jnp.sin(x)), lambda x: jnp.sum(x * x * x), lambda x: jnp.mean(jnp.exp(x))], e)
    return r + jnp.sum(jnp.einsum("ii", a @ a.T))


# name -> (function, rtol, atol, why looser).
CASES = {
    "mlp": (mlp, RTOL, ATOL, None),
    "per_sample": (per_sample, RTOL, ATOL, None),
    "softmax_xent": (softmax_xent, RTOL, ATOL, None),
    "scan_rnn": (scan_rnn, RTOL, ATOL, None),
    "scan_reverse_ys": (scan_reverse_ys, RTOL, ATOL, None),
    "cond": (cond_case, RTOL, ATOL, None),
    "fori_loop": (fori_case, RTOL, ATOL, None),
    "while_loop": (while_case, RTOL, ATOL, None),
    "cumsum_cumprod": (cumsum_cumprod, RTOL, ATOL, None),
    "sort_top_k": (sort_top_k, RTOL, ATOL, None),
    "gather_scatter": (gather_scatter, RTOL, ATOL, None),
    "cholesky_solve": (cholesky_solve, RTOL, ATOL, None),
    "slogdet_det": (slogdet_det, RTOL, ATOL, None),
    "eigh_svd": (eigh_svd, RTOL, ATOL, None),
    "qr": (qr_case, RTOL, ATOL, None),
    "matrix_exp": (matrix_exp, RTOL, ATOL, None),
    "conv2d": (conv2d, RTOL, ATOL, None),
    "norm": (norm_case, RTOL, ATOL, None),
    "multi_output": (multi_output, RTOL, ATOL, None),
    "elementwise": (elementwise, RTOL, ATOL, None),
    "reduce_structure": (reduce_structure, RTOL, ATOL, None),
    "dynamic_slice": (dynamic_slice, RTOL, ATOL, None),
    "einsum_switch": (einsum_switch, RTOL, ATOL, None),
    "cholesky_solve_batched": (cholesky_solve, RTOL, ATOL, None),
    "eigh_svd_batched": (eigh_svd, RTOL, ATOL, None),
    "scan_rnn_batched": (scan_rnn, RTOL, ATOL, None),
}


def is_float(a):
    return np.issubdtype(a.dtype, np.floating)


def jax_outputs(entry, f, ins):
    """The JAX result of entry's transform as a list of leaves, in evoxc's flattening order."""
    t = entry["transform"]
    n = entry["n_args"]
    argnums = tuple(entry["argnums"])
    primals = ins[:n]
    leaves = jax.tree_util.tree_leaves
    if t == "value":
        return leaves(f(*primals))
    if t == "grad":
        return leaves(jax.grad(f, argnums=argnums)(*primals))
    if t == "jacfwd":
        return leaves(jax.jacfwd(f, argnums=argnums)(*primals))
    if t == "jacrev":
        return leaves(jax.jacrev(f, argnums=argnums)(*primals))
    if t == "hessian":
        return leaves(jax.hessian(f, argnums=tuple(entry.get("hess_argnums", argnums)))(*primals))
    if t == "value_and_grad":
        return leaves(jax.value_and_grad(f, argnums=argnums)(*primals))
    if t == "vmap":
        return leaves(jax.vmap(f, in_axes=tuple(entry["in_axes"]))(*primals))
    if t == "vmap_grad":
        in_axes = tuple(entry["in_axes"])
        return leaves(jax.vmap(jax.grad(f, argnums=entry["vmap_argnum"]), in_axes=in_axes)(*primals))
    # jvp / vjp: evoxc gives tangents and cotangents to float arguments only (None for the integer ones), so JAX
    # differentiates the function of the float arguments with the integer ones fixed.
    fl = [k for k in range(n) if is_float(primals[k])]

    def g(*fargs):
        args = list(primals)
        for k, a in zip(fl, fargs):
            args[k] = a
        return f(*args)

    fprimals = tuple(primals[k] for k in fl)
    rest = ins[n:]
    if t == "jvp":
        out, tout = jax.jvp(g, fprimals, tuple(rest))
        return leaves(out) + leaves(tout)
    if t == "vjp":
        out, pullback = jax.vjp(g, *fprimals)
        tree = jax.tree_util.tree_structure(out)
        cts = pullback(jax.tree_util.tree_unflatten(tree, rest))
        return leaves(out) + leaves(cts)
    raise ValueError(f"unknown transform {t}")


def main(folder):
    with open(os.path.join(folder, "manifest.json")) as fh:
        manifest = json.load(fh)
    failures = 0
    worst = 0.0
    for e in manifest:
        name = f"{e['case']}.{e['transform']}"
        try:
            f, rtol, atol, why = CASES[e["case"]]
            ins = [np.load(os.path.join(folder, p)) for p in e["inputs"]]
            ours = [np.load(os.path.join(folder, p)) for p in e["outputs"]]
            theirs = [np.asarray(v) for v in jax_outputs(e, f, [jnp.asarray(a) for a in ins])]
        except Exception as ex:  # a JAX-side error is a failure of the check, with its message
            print(f"ERROR    {name}: {type(ex).__name__}: {ex}")
            failures += 1
            continue
        problems = []
        if len(ours) != len(theirs):
            problems.append(f"{len(ours)} output leaves, JAX has {len(theirs)}")
        max_abs = 0.0
        for k, (a, b) in enumerate(zip(ours, theirs)):
            if a.shape != b.shape:
                problems.append(f"out{k}: shape {a.shape}, JAX {b.shape}")
                continue
            if a.dtype != b.dtype:
                problems.append(f"out{k}: dtype {a.dtype}, JAX {b.dtype}")
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            if np.any(np.isnan(a64) != np.isnan(b64)):
                problems.append(f"out{k}: NaNs differ")
            ok = ~np.isnan(a64) & ~np.isnan(b64)
            if not np.any(ok):
                continue
            err = np.abs(a64 - b64)[ok]
            max_abs = max(max_abs, float(err.max()))
            bad = err > atol + rtol * np.abs(b64[ok])
            if np.any(bad):
                i = int(np.flatnonzero(ok.ravel())[np.argmax(bad)])
                at = tuple(int(j) for j in np.unravel_index(i, a.shape))
                problems.append(f"out{k}[{at}]: evoxc {a64.ravel()[i]!r}, JAX {b64.ravel()[i]!r}")
        worst = max(worst, max_abs)
        status = "MISMATCH" if problems else "ok"
        tol = f"rtol {rtol:g} atol {atol:g}" + (f" ({why})" if why else "")
        print(f"{status:8} {name:32} max abs err {max_abs:.3e}  [{tol}]")
        for p in problems:
            print(f"         {p}")
        failures += bool(problems)
    print(f"{len(manifest)} checks, {failures} failed; worst max abs err {worst:.3e} (jax {jax.__version__})")
    return 1 if failures or not manifest else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
