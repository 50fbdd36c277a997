"""In-graph control flow with pytrees: cond, switch, while_loop, scan, fori_loop (JAX semantics) over _core's flat forms."""

from __future__ import annotations

from . import _core
from ._core import SymbolicTensor, TraceError
from ._pytree import flatten, structure_path_mismatch


def _leaves(tree, what):
    leaves, td = flatten(tree)
    out = []
    for i, l in enumerate(leaves):
        if isinstance(l, SymbolicTensor):
            out.append(l)
        elif isinstance(l, (bool, int, float)):
            out.append(_core.fill((), l))
        else:
            raise TraceError(f"{what}: leaf {i} is a {type(l).__name__}; control-flow values must be SymbolicTensors "
                             "or Python scalars")
    return out, td


class _Region:
    """Calls a user function on rebuilt pytrees and flattens what it returns, keeping the first structure seen."""

    def __init__(self, op):
        self.op = op
        self.out_def = None

    def result(self, out, who):
        leaves, td = _leaves(out, f"{self.op}: {who}")
        if self.out_def is None:
            self.out_def = td
        elif td != self.out_def:
            path = structure_path_mismatch(self.out_def, td)
            raise TraceError(f"{self.op}: {who} returns a different structure at {path}: {td} where the first returns "
                             f"{self.out_def}")
        return leaves


def cond(pred, true_fn, false_fn, *operands):
    """lax.cond: true_fn(*operands) if pred (a rank-0 bool) else false_fn(*operands), both traced into one
    evoxc.cond op. Both must return the same pytree structure and leaf types."""
    flat, td = _leaves(operands, "cond operands")
    region = _Region("cond")

    def branch(fn, who):
        return lambda args: region.result(fn(*td.unflatten(args)), who)

    out = _core._cond(pred, branch(true_fn, "true_fn"), branch(false_fn, "false_fn"), flat)
    return region.out_def.unflatten(out)


def switch(index, branches, *operands):
    """lax.switch: branches[clamp(index, 0, len-1)](*operands) for a rank-0 integer index; one evoxc.cond op."""
    branches = list(branches)
    flat, td = _leaves(operands, "switch operands")
    region = _Region("switch")
    fns = [(lambda f, k: (lambda args: region.result(f(*td.unflatten(args)), f"branch {k}")))(f, k)
           for k, f in enumerate(branches)]
    out = _core._switch(index, fns, flat)
    return region.out_def.unflatten(out)


def while_loop(cond_fn, body_fn, init):
    """lax.while_loop: carry = init; while cond_fn(carry): carry = body_fn(carry). body_fn returns the carry's
    structure and types; cond_fn a rank-0 bool. Unbounded unless run with timeout/max_loop_iterations."""
    flat, td = _leaves(init, "while_loop init")

    def body(args):
        out = body_fn(td.unflatten(args))
        leaves, otd = _leaves(out, "while_loop body_fn")
        if otd != td:
            path = structure_path_mismatch(td, otd)
            raise TraceError(f"while_loop: body_fn returns {otd} where the carry is {td} (first difference at {path})")
        return leaves

    out = _core._while_loop(lambda args: cond_fn(td.unflatten(args)), body, flat)
    return td.unflatten(out)


def scan(f, init, xs=None, length=None, reverse=False):
    """lax.scan: for each slice x of xs along axis 0, (carry, y) = f(carry, x); returns (carry, stacked ys).
    xs=None needs length."""
    cflat, ctd = _leaves(init, "scan init")
    xflat, xtd = _leaves(xs, "scan xs")
    if not xflat and length is None:
        raise TraceError("scan: without xs, pass length=")
    region = _Region("scan")

    def body(c, x):
        out = f(ctd.unflatten(c), xtd.unflatten(x))
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TraceError("scan: f must return a pair (carry, y)")
        cl, otd = _leaves(out[0], "scan carry")
        if otd != ctd:
            path = structure_path_mismatch(ctd, otd)
            raise TraceError(f"scan: f returns a carry {otd} where init is {ctd} (first difference at {path})")
        return cl, region.result(out[1], "f's y")

    c, y = _core._scan(body, cflat, xflat, length, reverse)
    return ctd.unflatten(c), region.out_def.unflatten(y)


def fori_loop(lower, upper, body_fn, init):
    """lax.fori_loop: carry = init; for i in [lower, upper): carry = body_fn(i, carry). Python int bounds: a scan of
    static length (i is int32); a SymbolicTensor bound: a while_loop."""
    flat, td = _leaves(init, "fori_loop init")

    def body(i, args):
        out = body_fn(i, td.unflatten(args))
        leaves, otd = _leaves(out, "fori_loop body_fn")
        if otd != td:
            path = structure_path_mismatch(td, otd)
            raise TraceError(f"fori_loop: body_fn returns {otd} where the carry is {td} (first difference at {path})")
        return leaves

    return td.unflatten(_core._fori_loop(lower, upper, body, flat))
