"""evoxc.external_call: opaque kernels. A graph names the kernel and its result specs; the implementation is
registered out of band, per backend slot ("interp", "mlir", ...) with the "default" slot as the fallback, and
resolved when an executable is loaded (a saved graph needs its kernels registered again in the process that loads
it). vmap adds a batch level (JAX's "expand_dims" convention: unbatched operands get a leading axis of extent 1)
that a registered batch variant takes whole, or the kernel is called once per batch position. Backends that cannot
call host code (xla, iree, the StableHLO export) run the registered portable decomposition with a warning."""

from __future__ import annotations

from . import _core
from ._block import copy_results


def external_call(kernel: str, *operands, result):
    """The results of kernel `kernel` on `operands` (traced values): `result` is one TensorSpec (one value back) or
    a tuple/list of them (a tuple back). The specs may use the operands' symbolic dims."""
    single = not isinstance(result, (tuple, list))
    specs = [result] if single else list(result)
    outs = _core._external_call(kernel, list(operands), specs)
    return outs[0] if single else tuple(outs)


def _host(name, fn, variant=""):
    what = f"kernel '{name}'{variant}"

    def run(inputs, outputs):
        copy_results(what, fn(*[t.numpy() for t in inputs]), outputs)

    return run


class ExternalKernel:
    """The handle of an external kernel's registrations (evoxc.register_external_kernel returns one)."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise _core.ValidationError("evoxc.register_external_kernel: a kernel needs a non-empty name")
        self.name = name

    def impl(self, backend: str = "default"):
        """Decorator: registers `fn(*numpy_inputs) -> numpy result(s)` in the slot `backend`. The results must have
        the call's shapes and dtypes (a ValidationError otherwise); the GIL is held only while `fn` runs."""

        def register(fn):
            _core._register_external_kernel(self.name, backend, _host(self.name, fn))
            return fn

        return register

    def batch_variant(self, fn=None, *, backend: str = "default"):
        """Registers the batch variant of the slot's kernel (a decorator, or a call): `fn` receives every operand
        with one leading batch axis (extent 1 where that operand is not batched) and returns the results with the
        batch axis. Without one, a batched call runs the kernel once per batch position."""
        if fn is None:
            return lambda f: self.batch_variant(f, backend=backend)
        _core._register_external_batch_variant(self.name, backend, _host(self.name, fn, " (batch variant)"))
        return fn

    def portable(self, fn):
        """Decorator: `fn` over traced values (an @evoxc.defn works) computes what the kernel computes. Backends
        that cannot call host code run it instead, with a warning."""

        def traced(args):
            out = fn(*args)
            return list(out) if isinstance(out, (tuple, list)) else [out]

        _core._register_external_portable(self.name, traced)
        return fn

    def unregister(self, backend: str = "default") -> bool:
        """Removes the slot's kernel and batch variant; executables loaded before keep theirs."""
        return _core._unregister_external_kernel(self.name, backend)

    def unregister_portable(self) -> None:
        _core._register_external_portable(self.name, None)

    def __repr__(self):
        return f"<evoxc.ExternalKernel {self.name!r}>"


def register_external_kernel(name: str, fn=None, *, backend: str = "default") -> ExternalKernel:
    """Registers `fn` (numpy in, numpy out) as kernel `name` in slot `backend` ("default": every backend without a
    slot of its own) and returns the kernel's handle; with fn None, only the handle."""
    handle = ExternalKernel(name)
    if fn is not None:
        handle.impl(backend)(fn)
    return handle


def registered_external_kernels() -> list:
    """(name, slot) of every registered kernel."""
    return [tuple(p) for p in _core._registered_external_kernels()]
