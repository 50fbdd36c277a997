"""evoxc's op functions under numpy's names and keywords (axis=, numpy aliases), for code written against numpy."""

from __future__ import annotations

from . import _core
from ._core import *  # noqa: F401,F403  (every op function, as in the evoxc namespace)


def _reduction(name):
    op = getattr(_core, name)

    def f(a, axis=None, dtype=None, keepdims=False):
        if dtype is not None:
            a = _core.astype(a, dtype)
        return op(a, axis, keepdims)

    f.__name__ = name
    f.__doc__ = f"numpy.{name}(a, axis=None, dtype=None, keepdims=False) = evoxc.{name}(a.astype(dtype), axes=axis, " \
                f"keepdims=keepdims)"
    return f


sum = _reduction("sum")  # noqa: A001
prod = _reduction("prod")
max = _reduction("max")  # noqa: A001
min = _reduction("min")  # noqa: A001
mean = _reduction("mean")
amax, amin = max, min


def any(a, axis=None, keepdims=False):  # noqa: A001
    """numpy.any = evoxc.any(a, axes=axis, keepdims=keepdims)"""
    return _core.any(a, axis, keepdims)


def all(a, axis=None, keepdims=False):  # noqa: A001
    """numpy.all = evoxc.all(a, axes=axis, keepdims=keepdims)"""
    return _core.all(a, axis, keepdims)


def var(a, axis=None, ddof=0, keepdims=False):
    """numpy.var = evoxc.var(a, axes=axis, ddof=ddof, keepdims=keepdims)"""
    return _core.var(a, axis, ddof=ddof, keepdims=keepdims)


def std(a, axis=None, ddof=0, keepdims=False):
    """numpy.std = evoxc.std(a, axes=axis, ddof=ddof, keepdims=keepdims)"""
    return _core.std(a, axis, ddof=ddof, keepdims=keepdims)


def expand_dims(a, axis):
    """numpy.expand_dims = evoxc.expand_dims(a, axes=axis)"""
    return _core.expand_dims(a, axis)


def squeeze(a, axis=None):
    """numpy.squeeze = evoxc.squeeze(a, axes=axis)"""
    return _core.squeeze(a, axis)


def flip(m, axis=None):
    """numpy.flip = evoxc.flip(m, axes=axis)"""
    return _core.flip(m, axis)


def transpose(a, axes=None):
    """numpy.transpose = evoxc.transpose(a, perm=axes)"""
    return _core.transpose(a, None if axes is None else list(axes))


absolute = _core.abs
true_divide = _core.divide
concat = _core.concatenate
asin, acos, atan = getattr(_core, "arcsin", None), getattr(_core, "arccos", None), getattr(_core, "arctan", None)
atan2 = getattr(_core, "arctan2", None)


def shape(a):
    """numpy.shape: the (static or symbolic) shape tuple."""
    return tuple(a.shape)


def ndim(a):
    """numpy.ndim"""
    return a.ndim


linalg = getattr(_core, "linalg", None)
