"""evoxc.block: custom ops. A block is a name and a portable body (an ordinary traced function); the graph records
both, so it runs anywhere. An implementation registered for a backend (`Block.impl`, numpy in and numpy out for
the interpreter) replaces the body there, decided when an executable is loaded. vmap, jvp and grad, and the compiled
backends, work on the body."""

from __future__ import annotations

import numpy as np

from . import _core


def copy_results(what: str, res, outputs) -> None:
    """Writes what a host implementation returned (one array, or a tuple or list of them) into `outputs` (evoxc
    Tensors of the expected types); a ValidationError naming `what` when the count, a shape or a dtype differs."""
    res = list(res) if isinstance(res, (tuple, list)) else [res]
    if len(res) != len(outputs):
        raise _core.ValidationError(f"{what}: the implementation returned {len(res)} values for {len(outputs)} "
                                    "results")
    for i, (o, r) in enumerate(zip(outputs, res)):
        dst = o.numpy()
        r = np.asarray(r)
        if r.shape != dst.shape or r.dtype != dst.dtype:
            raise _core.ValidationError(f"{what}: result {i} of the implementation is {r.dtype}{list(r.shape)}, "
                                        f"the call expects {dst.dtype}{list(dst.shape)}")
        np.copyto(dst, r)


class Block:
    """A custom op: call it inside a traced function like any op function."""

    def __init__(self, name: str, body):
        if not isinstance(name, str) or not name:
            raise _core.ValidationError("evoxc.block: a block needs a non-empty name")
        self.name = name
        self.body = body

    def __call__(self, *operands):
        single = []

        def traced(args):
            out = self.body(*args)
            single.append(not isinstance(out, (tuple, list)))
            return [out] if single[-1] else list(out)

        outs = _core._block_call(self.name, traced, list(operands))
        return outs[0] if single and single[0] else tuple(outs)

    def impl(self, fn=None, *, backend: str = "interp"):
        """Registers `fn(*numpy_inputs) -> numpy result(s)` as this block's implementation on `backend` (a
        decorator, or a call). The results must have the body's shapes and dtypes (a ValidationError otherwise).
        The GIL is held only while `fn` runs."""
        if fn is None:
            return lambda f: self.impl(f, backend=backend)
        what = f"block '{self.name}'"

        def run(inputs, outputs):
            copy_results(what, fn(*[t.numpy() for t in inputs]), outputs)

        _core._register_block_impl(self.name, backend, run)
        return fn

    def unregister(self, backend: str = "interp") -> bool:
        """Removes the implementation registered on `backend`; executables loaded before keep theirs."""
        return _core._unregister_block_impl(self.name, backend)

    def __repr__(self):
        return f"<evoxc.block {self.name!r}>"


def block(name=None, body=None):
    """`@evoxc.block("name")` (or `evoxc.block("name", fn)`, or bare `@evoxc.block` naming it after the function):
    a custom op with `fn` as its portable body."""
    if callable(name) and body is None:
        return Block(name.__name__, name)
    if body is not None:
        return Block(name, body)
    return lambda fn: Block(name or fn.__name__, fn)


def registered_blocks(backend: str = "interp") -> list:
    """The names with an implementation on `backend`."""
    return list(_core._registered_blocks(backend))
