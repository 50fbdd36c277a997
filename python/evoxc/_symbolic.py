"""Python operators and numpy-style methods of SymbolicTensor, each one op of the catalogue."""

from __future__ import annotations

from . import _core
from ._core import SymbolicTensor, TraceError


def _op(name):
    return getattr(_core, name)


def _binary(name, reflected=False):
    def fwd(self, other):
        return _op(name)(self, other)

    def rev(self, other):
        return _op(name)(other, self)

    return rev if reflected else fwd


_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "power", "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or",
    "xor": "bitwise_xor", "lshift": "left_shift", "rshift": "right_shift",
}
_COMPARE = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal", "eq": "equal",
            "ne": "not_equal"}


def _no_data(what):
    def f(self, *a, **k):
        raise TraceError(f"SymbolicTensor has no data ({what}): it is a value of the graph being traced. Run the "
                         "graph (evoxc.build / evoxc.evaluate) to get a Tensor.")
    return f


def _no_python_value(what):
    def f(self, *a, **k):
        raise TraceError(f"SymbolicTensor cannot be used as a Python {what} at trace time (if/while/bool()/int() on a "
                         "symbolic value): its value exists only when the graph runs. Runtime tensor control flow must "
                         "use evoxc.cond / evoxc.while_loop (or evoxc.where for elementwise choices).")
    return f


def _setitem(self, key, value):
    raise TraceError("SymbolicTensors are immutable: use x.at[idx].set(value) (or .add/.multiply/.min/.max), which "
                     "returns the updated tensor")


def _len(self):
    shape = self.shape
    if not shape:
        raise TraceError("len() of a rank-0 SymbolicTensor")
    if not isinstance(shape[0], int):
        raise TraceError(f"len() of a SymbolicTensor with a symbolic leading extent ({shape[0]})")
    return shape[0]


def _iter(self):
    n = _len(self)
    for i in range(n):
        yield self[i]


def install():
    S = SymbolicTensor
    for py, op in _BINARY.items():
        setattr(S, f"__{py}__", _binary(op))
        setattr(S, f"__r{py}__", _binary(op, reflected=True))
    for py, op in _COMPARE.items():
        setattr(S, f"__{py}__", _binary(op))
    S.__hash__ = lambda self: id(self)
    S.__bool__ = _no_python_value("bool")
    S.__neg__ = lambda self: _core.negative(self)
    S.__pos__ = lambda self: self
    S.__abs__ = lambda self: _core.abs(self)
    S.__invert__ = lambda self: _core.bitwise_not(self)
    S.__setitem__ = _setitem
    S.__len__ = _len
    S.__iter__ = _iter
    S.__array__ = _no_data("__array__")
    S.numpy = _no_data("numpy()")
    S.__dlpack__ = _no_data("__dlpack__")
    S.tolist = _no_data("tolist()")
    S.item = _no_data("item()")
    S.__float__ = _no_python_value("float")
    S.__int__ = _no_python_value("int")
    S.__index__ = _no_python_value("int")
    S.__complex__ = _no_python_value("complex")
    # numpy-style methods: x.sum(axis) etc. (numpy keyword names)
    S.T = property(lambda self: _core.transpose(self))
    S.mT = property(lambda self: _core.swapaxes(self, -1, -2) if hasattr(_core, "swapaxes")
                    else _core.transpose(self, list(range(self.ndim - 2)) + [self.ndim - 1, self.ndim - 2]))
    S.size = property(lambda self: _size(self))
    S.astype = lambda self, dtype: _core.astype(self, dtype)
    S.reshape = lambda self, *shape: _core.reshape(self, shape[0] if len(shape) == 1 and
                                                  isinstance(shape[0], (tuple, list)) else shape)
    S.transpose = lambda self, *axes: _core.transpose(self, None if not axes else (
        list(axes[0]) if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else list(axes)))
    S.flatten = S.ravel = lambda self: _core.reshape(self, (-1,))
    S.squeeze = lambda self, axis=None: _core.squeeze(self, axis)
    for red in ("sum", "prod", "max", "min", "mean", "any", "all"):
        setattr(S, red, (lambda r: lambda self, axis=None, keepdims=False: getattr(_core, r)(self, axis, keepdims))(red))
    S.argmax = lambda self, axis=None, keepdims=False: _core.argmax(self, axis, keepdims)
    S.argmin = lambda self, axis=None, keepdims=False: _core.argmin(self, axis, keepdims)
    S.dot = lambda self, other: _core.dot(self, other)
    S.clip = lambda self, min=None, max=None: _clip(self, min, max)
    S.round = lambda self: _core.round(self)
    S.conj = S.conjugate = lambda self: self


def _size(self):
    n = 1
    for d in self.shape:
        n = n * d
    return n


def _clip(x, lo, hi):
    if lo is None and hi is None:
        raise ValueError("clip: at least one of min and max must be given")
    if lo is None:
        return _core.minimum(x, hi)
    if hi is None:
        return _core.maximum(x, lo)
    return _core.clip(x, lo, hi)
