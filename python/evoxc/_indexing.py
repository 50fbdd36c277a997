# numpy-style indexing of SymbolicTensors (x[key]) and JAX-style functional updates (x.at[key].set(v)).
"""numpy indexing on SymbolicTensors, lowered to slice / flip / squeeze / dynamic_slice / gather / scatter.

``getitem(x, key)`` implements ``x[key]`` with numpy's rules:

* ints (negative count from the end; out of range on a static extent is an IndexError at trace time);
* slices with any step (a negative step slices forward, then flips);
* ``None`` (new axis), one ``Ellipsis``, ``True``/``False`` (numpy's 0-d boolean index);
* integer index arrays: int SymbolicTensors, lists / tuples of ints, numpy int arrays, evoxc Tensors;
* boolean masks given as host data (numpy arrays, lists): static, converted with ``numpy.nonzero``. A
  SymbolicTensor boolean mask is a TraceError (the result shape would depend on data: use evoxc.where);
* a rank-0 int SymbolicTensor is a run-time int: ``dynamic_slice`` + ``squeeze``.

Advanced (array) indices follow numpy's placement rule: when they are adjacent in the key their broadcast
dimensions replace them in place, otherwise they go first. Static indices are checked and negative ones wrapped
at trace time. Run-time (symbolic) indices wrap a negative value once by the static extent and then clamp into
range, as the gather op does (docs/semantics.md, "Gather/slice indices"): an out-of-range run-time index reads
the nearest edge element rather than raising.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _core

_INT64_MAX = 2**63 - 1


class _Adv:
    """One advanced index of the normalised key: a host int64 array or an int SymbolicTensor (one axis)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _op(name):
    try:
        return getattr(_core, name)
    except AttributeError:  # pragma: no cover - only while the bindings are incomplete
        raise _core.TraceError(f"indexing needs evoxc._core.{name}, which this build does not bind") from None


def _is_static(d) -> bool:
    return isinstance(d, int)


def _is_symbolic(v) -> bool:
    return isinstance(v, _core.SymbolicTensor)


def _is_host_array(v) -> bool:
    return isinstance(v, (list, tuple, np.ndarray, _core.Tensor)) or (
        hasattr(v, "__array__") and not isinstance(v, (np.generic,))
    )


def _as_int(v):
    """operator.index of a static int (Python or numpy int, not bool), else None."""
    if isinstance(v, (bool, np.bool_, _core.SymbolicTensor)):  # SymbolicTensor.__index__ is a TraceError
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def _host_array(v) -> np.ndarray:
    if isinstance(v, _core.Tensor):
        if hasattr(v, "numpy"):
            return np.asarray(v.numpy())
        cap = v._ndarray()

        class _View:
            def __dlpack__(self, **_):
                return cap

            def __dlpack_device__(self):
                return (1, 0)

        return np.from_dlpack(_View())
    arr = np.asarray(v)
    if arr.size == 0 and arr.dtype == np.float64 and isinstance(v, (list, tuple)):
        arr = arr.astype(np.int64)  # numpy: an empty list is an empty integer index
    return arr


_INDEX_ERROR = (
    "only integers, slices (`:`), ellipsis (`...`), None (`numpy.newaxis`) and integer or boolean arrays are valid "
    "indices"
)


def _normalise(x, key):
    """The key as a list of entries over the axes of `x` expanded by the new unit axes.

    Returns (x', entries, gap): x' is x with a unit axis inserted for every None / True / False, and entries has
    one item per axis of x': a slice, a static int, a rank-0 int SymbolicTensor ("dynamic int") or an _Adv.
    True / False become an _Adv over their new unit axis ([0] or [] as numpy's 0-d boolean index). gap is the
    position in entries of an Ellipsis that stands for no axis (None if there is none): numpy still counts it
    as separating the advanced indices around it.
    """
    if not isinstance(key, tuple):
        key = (key,)
    items = []  # (kind, value, consumed axes)
    n_ellipsis = 0
    for k in key:
        if k is None:
            items.append(("new", None, 0))
        elif k is Ellipsis:
            n_ellipsis += 1
            if n_ellipsis > 1:
                raise IndexError("an index can only have a single ellipsis ('...')")
            items.append(("ellipsis", None, 0))
        elif isinstance(k, slice):
            items.append(("slice", k, 1))
        elif isinstance(k, (bool, np.bool_)):
            items.append(("new", bool(k), 0))
        elif _as_int(k) is not None:
            items.append(("int", _as_int(k), 1))
        elif _is_symbolic(k):
            dt = k.dtype
            if dt.name == "bool":
                raise _core.TraceError(
                    "boolean mask indexing with a SymbolicTensor mask: the result shape would depend on data; use "
                    "evoxc.where(mask, x, fill) to keep the shape (or pass the mask as a static numpy array)"
                )
            if not dt.is_integer:
                raise IndexError(_INDEX_ERROR + f" (got a SymbolicTensor of dtype {dt.name})")
            if k.ndim == 0:
                items.append(("dynint", k, 1))
            else:
                items.append(("adv", k, 1))
        elif _is_host_array(k):
            arr = _host_array(k)
            if arr.dtype == np.bool_:
                if arr.ndim == 0:
                    items.append(("new", bool(arr), 0))
                else:
                    items.append(("mask", arr, arr.ndim))
            elif np.issubdtype(arr.dtype, np.integer):
                items.append(("adv", arr.astype(np.int64), 1))
            else:
                raise IndexError(_INDEX_ERROR + f" (got an array of dtype {arr.dtype})")
        else:
            raise IndexError(_INDEX_ERROR + f" (got {type(k).__name__})")

    consumed = sum(c for _, _, c in items)
    rank = x.ndim
    if consumed > rank:
        raise IndexError(f"too many indices for tensor: tensor is {rank}-dimensional, but {consumed} were indexed")
    if n_ellipsis == 0:
        items.append(("ellipsis", None, 0))
    fill = rank - consumed

    # Insert the unit axes, then map every entry to one axis of the expanded tensor.
    new_axes = []
    entries = []
    gap = None
    src_axis = 0
    shape = x.shape
    for kind, v, c in items:
        if kind == "ellipsis":
            if fill == 0 and n_ellipsis:
                gap = len(entries)
            for _ in range(fill):
                entries.append(slice(None))
                src_axis += 1
        elif kind == "new":
            new_axes.append(len(entries))
            entries.append(slice(None) if v is None else _Adv(np.zeros(1 if v else 0, np.int64)))
        elif kind == "mask":
            ext = shape[src_axis : src_axis + c]
            if any(not _is_static(e) for e in ext):
                raise _core.TraceError("a boolean mask needs static extents on the axes it indexes")
            if tuple(ext) != v.shape:
                raise IndexError(
                    f"boolean index of shape {v.shape} does not match the indexed extents {tuple(ext)} "
                    f"(axes {src_axis}..{src_axis + c - 1})"
                )
            for nz in np.nonzero(v):
                entries.append(_Adv(nz.astype(np.int64)))
            src_axis += c
        elif kind == "adv":
            entries.append(_Adv(v))
            src_axis += 1
        else:  # slice, int, dynint
            entries.append(v)
            src_axis += 1
    if new_axes:
        x = _op("expand_dims")(x, new_axes)
    return x, entries, gap


def _embed_indices(arr: np.ndarray):
    """A static int64 array as a SymbolicTensor: fill for constant arrays, a sliced iota for arithmetic runs
    (no host data embedded), else constant()."""
    arr = np.require(arr, np.int64, "C")  # (ascontiguousarray would make a 0-d array 1-d)
    flat = arr.reshape(-1)
    if flat.size == 0 or np.all(flat == flat[0]):
        return _op("fill")(list(arr.shape), int(flat[0]) if flat.size else 0, _core.int64)
    if arr.ndim == 1 and flat.min() >= 0:
        step = int(flat[1] - flat[0])
        if step != 0 and np.all(np.diff(flat) == step):
            lo, hi = int(flat.min()), int(flat.max())
            seq = _op("slice")(_op("iota")([hi + 1], 0, _core.int64), [lo], [hi + 1], [abs(step)])
            return _op("flip")(seq, 0) if step < 0 else seq
    return _op("constant")(_core._tensor_from_array(arr))


def _wrap_dynamic(i, extent):
    """A run-time int index with numpy's negative wrap applied once (static extent); clamped later by the op."""
    if not _is_static(extent):
        return i
    return _op("where")(_op("less")(i, 0), _op("add")(i, extent), i)


def _static_index(v: int, extent, axis: int) -> int:
    if _is_static(extent):
        if not -extent <= v < extent:
            raise IndexError(f"index {v} is out of bounds for axis {axis} with size {extent}")
        return v + extent if v < 0 else v
    return v


def _check_host_indices(arr: np.ndarray, extent, axis: int) -> np.ndarray:
    if arr.size == 0:
        return arr
    if not _is_static(extent):
        if arr.min() < 0:
            raise _core.TraceError(f"a negative index on axis {axis} needs a static extent")
        return arr
    lo, hi = int(arr.min()), int(arr.max())
    if lo < -extent or hi >= extent:
        bad = lo if lo < -extent else hi
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {extent}")
    return np.where(arr < 0, arr + extent, arr)


def getitem(x, key):
    """x[key] with numpy's indexing rules (see the module docstring for what is supported)."""
    x, entries, gap = _normalise(x, key)
    shape = x.shape
    rank = len(entries)
    advanced = any(isinstance(e, _Adv) for e in entries)
    if advanced:
        # numpy: with any array index, ints are advanced indices too (0-d arrays).
        entries = [
            _Adv(np.asarray(e, np.int64)) if isinstance(e, int) else (_Adv(e) if _is_symbolic(e) else e)
            for e in entries
        ]

    # 1. Slices (one strided slice for all axes, then one flip for the negative steps) and static basic ints.
    starts, limits, strides, flips, squeeze_axes = [], [], [], [], []
    dyn = []  # (axis, rank-0 index) of run-time ints in basic indexing
    sliced = False
    for ax, e in enumerate(entries):
        ext = shape[ax]
        start, limit, stride = 0, _INT64_MAX, 1
        if isinstance(e, slice):
            if e != slice(None):
                step = 1 if e.step is None else operator.index(e.step)
                if step == 0:
                    raise ValueError("slice step cannot be zero")
                if _is_static(ext):
                    b, s, _ = e.indices(ext)
                    m = len(range(b, s, step))
                    if step > 0:
                        start, limit, stride = b, b + max(m - 1, 0) * step + (1 if m else 0), step
                    else:
                        last = b + (m - 1) * step if m else 0
                        start, limit, stride = last, (b + 1) if m else 0, -step
                        flips.append(ax)
                    if m == 0:
                        start, limit = 0, 0
                elif step > 0:
                    b = 0 if e.start is None else operator.index(e.start)
                    s = _INT64_MAX if e.stop is None else operator.index(e.stop)
                    if b < 0 or s < 0:
                        raise _core.TraceError(f"a negative slice bound on axis {ax} needs a static extent")
                    start, limit, stride = b, s, step
                elif e.start is None and e.stop is None:
                    flips.append(ax)  # x[::-k] on a symbolic extent: flip first, then stride
                    stride = -step
                else:
                    raise _core.TraceError(
                        f"a negative-step slice with bounds on axis {ax} needs a static extent (use [::-k] or flip)"
                    )
                sliced = True
        elif isinstance(e, int):
            if _is_static(ext):
                v = _static_index(e, ext, ax)
                start, limit = v, v + 1
            elif e >= 0:
                start, limit = e, e + 1
            else:
                flips.append(ax)  # x[-k] on a symbolic extent: element k-1 of the flipped axis
                start, limit = -e - 1, -e
            squeeze_axes.append(ax)
            sliced = True
        elif _is_symbolic(e):
            dyn.append((ax, e))
            squeeze_axes.append(ax)
        starts.append(start)
        limits.append(limit)
        strides.append(stride)

    # Flips of symbolic-extent axes must come before their slice; static ones were sliced forward first.
    pre_flip = [ax for ax in flips if not _is_static(shape[ax])]
    post_flip = [ax for ax in flips if _is_static(shape[ax])]
    if pre_flip:
        x = _op("flip")(x, pre_flip)
    identity = all(
        st == 0 and sd == 1 and (lim == _INT64_MAX or (_is_static(ext) and lim == ext))
        for st, lim, sd, ext in zip(starts, limits, strides, shape)
    )
    if sliced and not identity:
        x = _op("slice")(x, starts, limits, strides)
    if post_flip:
        x = _op("flip")(x, post_flip)

    # 2. Run-time ints (basic indexing): dynamic_slice of extent 1 (take when another extent is symbolic).
    if dyn:
        cur = x.shape
        if all(_is_static(d) for d in cur):
            dstarts = [0] * rank
            sizes = list(cur)
            for ax, i in dyn:
                dstarts[ax] = _wrap_dynamic(i, cur[ax])
                sizes[ax] = 1
            x = _op("dynamic_slice")(x, dstarts, sizes)
        else:
            for ax, i in dyn:  # take drops the axis; expand_dims keeps the numbering for the squeeze below
                x = _op("expand_dims")(_op("take")(x, _wrap_dynamic(i, cur[ax]), ax), [ax])
    if squeeze_axes and not advanced:
        x = _op("squeeze")(x, squeeze_axes)
    if not advanced:
        return x

    # 3. Advanced indices: gather over them (moved to the front), then numpy's placement.
    cur = x.shape
    adv_axes = [ax for ax, e in enumerate(entries) if isinstance(e, _Adv)]
    idx = []
    for ax in adv_axes:
        v = entries[ax].value
        if isinstance(v, np.ndarray):
            idx.append(_embed_indices(_check_host_indices(v, cur[ax], ax)))
        else:
            idx.append(_wrap_dynamic(v, cur[ax]))
    shapes = [tuple(i.shape) for i in idx]
    if all(_is_static(d) for s in shapes for d in s):
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError(
                "shape mismatch: indexing arrays could not be broadcast together with shapes "
                + " ".join(str(s) for s in shapes)
            ) from None
    rest = [ax for ax in range(rank) if ax not in adv_axes]
    if adv_axes != list(range(len(adv_axes))):
        x = _op("transpose")(x, adv_axes + rest)
    out = _op("index")(x, idx)
    contiguous = adv_axes == list(range(adv_axes[0], adv_axes[0] + len(adv_axes)))
    if gap is not None and adv_axes[0] < gap <= adv_axes[-1]:
        contiguous = False  # numpy: even an Ellipsis of no axes separates advanced indices
    k = adv_axes[0]  # non-advanced axes before the block
    if contiguous and k > 0:
        nb = out.ndim - len(rest)
        perm = list(range(nb, nb + k)) + list(range(nb)) + list(range(nb + k, out.ndim))
        out = _op("transpose")(out, perm)
    return out


# ---- x.at[key] ----

_SCATTER_MODE = {"set": "set", "add": "add", "multiply": "mul", "min": "min", "max": "max"}


def _leading_advanced(x, key):
    """The index list for the C++ IndexUpdate when `key` is integer indices over the leading axes only (ints,
    int arrays, static masks, then nothing or whole slices / Ellipsis), else None."""
    if not isinstance(key, tuple):
        key = (key,)
    n_lead = 0
    while n_lead < len(key) and not (
        key[n_lead] is None or key[n_lead] is Ellipsis or isinstance(key[n_lead], (slice, bool, np.bool_))
    ):
        n_lead += 1
    tail = key[n_lead:]
    if n_lead == 0 or not all(k is Ellipsis or (isinstance(k, slice) and k == slice(None)) for k in tail):
        return None
    xe, entries, _ = _normalise(x, key[:n_lead])
    if xe.ndim != x.ndim:
        return None
    n_adv = sum(1 for e in entries if not isinstance(e, slice))
    if n_adv + sum(1 for k in tail if k is not Ellipsis) > x.ndim:
        raise IndexError(f"too many indices for tensor: tensor is {x.ndim}-dimensional")
    cur = x.shape
    idx = []
    for ax, e in enumerate(entries):
        if isinstance(e, slice):
            break
        if isinstance(e, int):
            idx.append(_embed_indices(np.asarray(_static_index(e, cur[ax], ax), np.int64)))
        elif isinstance(e, _Adv) and isinstance(e.value, np.ndarray):
            idx.append(_embed_indices(_check_host_indices(e.value, cur[ax], ax)))
        else:
            v = e.value if isinstance(e, _Adv) else e
            idx.append(_wrap_dynamic(v, cur[ax]))
    return idx


class _AtIndexed:
    """x.at[key]: .get() is x[key]; .set/.add/.multiply/.min/.max(v) return the updated copy."""

    __slots__ = ("_x", "_key")

    def __init__(self, x, key):
        self._x = x
        self._key = key

    def get(self):
        """x[key] (numpy indexing)."""
        return getitem(self._x, self._key)

    def _update(self, mode, v):
        x, key = self._x, self._key
        idx = _leading_advanced(x, key)
        if idx is not None:
            return _core._at_update(x, idx, mode, v)
        shape = x.shape
        if not all(_is_static(d) for d in shape):
            raise _core.TraceError(
                "x.at[key] with slices, None or non-leading array indices needs a static shape (integer-array "
                "indices over the leading axes work on any shape)"
            )
        n = int(np.prod(shape, dtype=np.int64))
        ids = _op("reshape")(_op("iota")([n], 0, _core.int64), list(shape))
        pos = getitem(ids, key)  # flat positions of the selected elements, in x[key]'s layout
        flat = _op("reshape")(x, [n])
        pos = _op("expand_dims")(pos, [pos.ndim])
        out = _op("scatter")(flat, pos, v, [0], _SCATTER_MODE[mode])
        return _op("reshape")(out, list(shape))

    def set(self, v):
        """x with x[key] = v (duplicate positions: the last in row-major order wins)."""
        return self._update("set", v)

    def add(self, v):
        """x with v added at x[key] (duplicates accumulate, numpy.add.at)."""
        return self._update("add", v)

    def multiply(self, v):
        """x with x[key] multiplied by v (duplicates accumulate, numpy.multiply.at)."""
        return self._update("multiply", v)

    def min(self, v):
        """x with x[key] = minimum(x[key], v) (duplicates accumulate, numpy.minimum.at)."""
        return self._update("min", v)

    def max(self, v):
        """x with x[key] = maximum(x[key], v) (duplicates accumulate, numpy.maximum.at)."""
        return self._update("max", v)


class AtHelper:
    """JAX's functional updates, x.at[key].set(v) / .add / .multiply / .min / .max / .get.

    key is normalised as for x[key]. Integer indices over the leading axes (ints, int arrays, int
    SymbolicTensors, static boolean masks, optionally followed by ``...`` or whole ``:``) use the C++ IndexUpdate
    (any shape, symbolic extents included). Any other key numpy accepts (slices with steps, None, Ellipsis,
    non-leading or separated array indices) goes through a scatter on the flattened tensor, which needs a static
    shape (TraceError otherwise). v broadcasts to x[key]'s shape and converts to x's dtype; where positions repeat,
    set keeps the last value in row-major order and the others accumulate (numpy's ufunc.at). Static indices are
    checked at trace time (IndexError). Run-time indices wrap a negative value once; beyond that, on the
    IndexUpdate path an out-of-range one is dropped by set/add/... (scatter) and clamped by get (gather), and on
    the general path it is clamped (docs/semantics.md, "Gather/slice indices").
    """

    __slots__ = ("_x",)

    def __init__(self, x):
        self._x = x

    def __getitem__(self, key):
        return _AtIndexed(self._x, key)
