"""evoxc.sparse: sparse tensors as values. A SparseTensor (COO), CSRTensor or CSCTensor holds its components —
numpy arrays or evoxc Tensors outside a trace, TensorSpecs as a spec, traced values inside a traced function — and
its dense shape; it is a pytree node, so it is an argument and a result of traced functions like any tree of
tensors, and vmap, grad (with respect to the stored values), cond, while_loop and scan take it. The operations work
inside traced functions; each is written with dense ops (docs/sparse.md), so every backend runs them.

    s = evoxc.sparse.coo(np.array([[0, 0], [1, 2]]), np.array([1.5, 2.5], np.float32), (3, 4))

    @evoxc.defn
    def step(s):
        return evoxc.sparse.to_dense(evoxc.sparse.multiply(s, s))

    exe = evoxc.build(step, evoxc.sparse.SparseTensorSpec.from_concrete(s))
    evoxc.run(exe, s).numpy()      # [[2.25 0 0 0] [0 0 6.25 0] [0 0 0 0]]
"""

from __future__ import annotations

import numpy as np

from . import _api, _core
from ._pytree import register_node

__all__ = ["SparseTensor", "CSRTensor", "CSCTensor", "SparseTensorSpec", "coo", "csr", "csc", "from_scipy",
           "to_dense", "from_dense", "to_coo", "to_csr", "to_csc", "coo_from_dense", "coo_to_csr", "csr_to_coo",
           "coo_to_csc", "csc_to_coo", "add", "multiply", "multiply_dense", "reduce_sum", "sum", "transpose",
           "reshape", "concatenate", "matmul"]


def _dims(shape):
    return tuple(d if isinstance(d, _core.Dim) else int(d) for d in shape)


def _traced(x) -> bool:
    return isinstance(x, _core.SymbolicTensor)


def _numpy(x):
    return x.numpy() if isinstance(x, _core.Tensor) else np.asarray(x)


class _Sparse:
    """Shared by the three formats: the components, the dense shape, and conversions of concrete values."""

    format = ""
    _fields = ()

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def nse(self):
        """The number of stored entries (repeated and explicit-zero entries included)."""
        return self.values.shape[-1]

    @property
    def ndim(self):
        return len(self.shape)

    def _parts(self):
        return (self.format, self.shape, getattr(self, "indptr", None), self.indices, self.values)

    def to_scipy(self):
        """The scipy.sparse matrix (coo_matrix, csr_matrix, csc_matrix) of a concrete 2-D value."""
        import scipy.sparse as sp  # noqa: PLC0415
        comps = [_numpy(getattr(self, f)) for f in self._fields]
        if self.format == "coo":
            return sp.coo_matrix((comps[1], (comps[0][:, 0], comps[0][:, 1])), shape=self.shape)
        cls = sp.csr_matrix if self.format == "csr" else sp.csc_matrix
        return cls((comps[2], comps[1], comps[0]), shape=self.shape)

    def todense(self) -> np.ndarray:
        """The dense numpy array of a concrete value (repeated entries add up)."""
        if any(_traced(getattr(self, f)) for f in self._fields):
            raise _core.TraceError("todense() is for concrete values; inside a traced function use "
                                   "evoxc.sparse.to_dense")
        if self.format == "coo":
            idx, vals = _numpy(self.indices), _numpy(self.values)
            out = np.zeros(self.shape, vals.dtype)
            np.add.at(out, tuple(idx[:, a] for a in range(idx.shape[1])), vals)
            return out
        return np.asarray(self.to_scipy().toarray())

    def __repr__(self):
        comps = ", ".join(f"{f}={_describe(getattr(self, f))}" for f in self._fields)
        return f"{type(self).__name__}({comps}, shape={self.shape})"


def _describe(x):
    if isinstance(x, np.ndarray):
        return f"array({x.dtype}{list(x.shape)})"
    return repr(x)


class SparseTensor(_Sparse):
    """COO: `indices` (nse, ndim) integers, `values` (nse,); entries in any order, repeated indices add up."""

    format = "coo"
    _fields = ("indices", "values")

    def __init__(self, indices, values, shape):
        self.indices, self.values, self.shape = indices, values, _dims(shape)


class CSRTensor(_Sparse):
    """CSR (2-D): row r holds entries indptr[r] .. indptr[r+1]-1; `indices` their column ids, sorted per row."""

    format = "csr"
    _fields = ("indptr", "indices", "values")

    def __init__(self, indptr, indices, values, shape):
        self.indptr, self.indices, self.values, self.shape = indptr, indices, values, _dims(shape)


class CSCTensor(CSRTensor):
    """CSC (2-D): the CSR arrays of the transpose — indptr over columns, `indices` the row ids."""

    format = "csc"


_CLASSES = {"coo": SparseTensor, "csr": CSRTensor, "csc": CSCTensor}

for _cls in (SparseTensor, CSRTensor, CSCTensor):
    register_node(_cls, lambda s: ([getattr(s, f) for f in s._fields], (s.format, s.shape)),
                  lambda aux, kids: _CLASSES[aux[0]](*kids, aux[1]))


def _wrap(parts):
    """A traced value from the C++ parts: checked (made by coo/csr/csc, or by an operation from checked values)."""
    fmt, shape, indptr, indices, values = parts
    shape = tuple(shape)
    out = SparseTensor(indices, values, shape) if fmt == "coo" else _CLASSES[fmt](indptr, indices, values, shape)
    out._checked = out
    return out


class SparseTensorSpec:
    """Specs of sparse arguments: a sparse value whose components are TensorSpecs."""

    def __new__(cls, shape, dtype, nse, format: str = "coo", index_dtype=None):  # noqa: A002
        """The spec of a `format` value of dense `shape` and `dtype` with `nse` stored entries (an int or an
        evoxc.dim, so one executable serves every count)."""
        it = index_dtype or _core.int64
        shape = _dims(shape)
        if format == "coo":
            return SparseTensor(_core.TensorSpec((nse, len(shape)), it), _core.TensorSpec((nse,), dtype), shape)
        if format not in ("csr", "csc"):
            raise _core.ValidationError(f"evoxc.sparse.SparseTensorSpec: unknown format {format!r}")
        major = shape[0] if format == "csr" else shape[1]
        return _CLASSES[format](_core.TensorSpec((major + 1,), it), _core.TensorSpec((nse,), it),
                                _core.TensorSpec((nse,), dtype), shape)

    @staticmethod
    def from_concrete(s: _Sparse, nse=None):
        """The spec of a concrete sparse value (its dtypes and counts; `nse` overrides the count, e.g. a dim)."""
        def spec(x, lead=None):
            t = x if isinstance(x, _core.Tensor) else _api.tensor(np.asarray(x))
            shape = tuple(t.shape) if lead is None else (lead,) + tuple(t.shape[1:])
            return _core.TensorSpec(shape, t.dtype)
        if s.format == "coo":
            return SparseTensor(spec(s.indices, nse), spec(s.values, nse), s.shape)
        return _CLASSES[s.format](spec(s.indptr), spec(s.indices, nse), spec(s.values, nse), s.shape)


# ---- making values ----

def coo(indices, values, shape) -> SparseTensor:
    """A COO value. Concrete components (arrays) give a concrete value; traced ones a traced value whose structure
    the graph checks when it runs (a ValidationError naming the entry)."""
    if _traced(indices) or _traced(values):
        return _wrap(_core._sparse_coo(_as_traced(indices), _as_traced(values), _dims(shape)))
    return SparseTensor(np.asarray(indices), np.asarray(values), shape)


def csr(indptr, indices, values, shape) -> CSRTensor:
    return _compressed("csr", indptr, indices, values, shape)


def csc(indptr, indices, values, shape) -> CSCTensor:
    return _compressed("csc", indptr, indices, values, shape)


def _compressed(fmt, indptr, indices, values, shape):
    if any(_traced(x) for x in (indptr, indices, values)):
        return _wrap(_core._sparse_compressed(fmt, _as_traced(indptr), _as_traced(indices), _as_traced(values),
                                              _dims(shape)))
    return _CLASSES[fmt](np.asarray(indptr), np.asarray(indices), np.asarray(values), shape)


def from_scipy(m) -> _Sparse:
    """A concrete value from a scipy.sparse matrix or array (coo, csr and csc keep their format; others become
    csr). The arrays are scipy's own (no copy)."""
    fmt = m.format if m.format in ("coo", "csr", "csc") else "csr"
    if fmt != m.format:
        m = m.tocsr()
    if fmt == "coo":
        return SparseTensor(np.stack([m.row, m.col], axis=1), m.data, m.shape)
    return _CLASSES[fmt](m.indptr, m.indices, m.data, m.shape)


def _as_traced(x):
    if _traced(x):
        return x
    return _core.constant(x if isinstance(x, _core.Tensor) else _api.tensor(np.asarray(x)))


def _traced_value(s: _Sparse, what: str):
    """`s` with traced, checked components: a graph input's structure is checked (sparse_validate) the first time
    an operation reads it, a concrete value is embedded as constants first."""
    if not isinstance(s, _Sparse):
        raise _core.TraceError(f"evoxc.sparse.{what}: expected a sparse value, got {type(s).__name__}")
    checked = getattr(s, "_checked", None)
    if checked is not None:
        return checked
    comps = [_as_traced(getattr(s, f)) for f in s._fields]
    s._checked = coo(*comps, s.shape) if s.format == "coo" else _compressed(s.format, *comps, s.shape)
    return s._checked


def _p(s, what):
    return _traced_value(s, what)._parts()


# ---- operations (inside traced functions) ----

def to_dense(a):
    """The dense tensor (repeated entries add up)."""
    return _core._sparse_to_dense(_p(a, "to_dense"))


def from_dense(x, nse=None) -> SparseTensor:
    """The COO value of x's nonzeros in row-major order with `nse` entries (default: x's size, so nothing is lost;
    fewer nonzeros leave explicit zeros, more than nse keep the first nse)."""
    return _wrap(_core._sparse_from_dense(x, nse))


def to_coo(a) -> SparseTensor:
    return _wrap(_core._sparse_convert(_p(a, "to_coo"), "coo"))


def to_csr(a) -> CSRTensor:
    return _wrap(_core._sparse_convert(_p(a, "to_csr"), "csr"))


def to_csc(a) -> CSCTensor:
    return _wrap(_core._sparse_convert(_p(a, "to_csc"), "csc"))


coo_from_dense = from_dense
coo_to_csr = csc_to_csr = to_csr
csr_to_coo = csc_to_coo = to_coo
coo_to_csc = csr_to_csc = to_csc


def add(a, b):
    """a + b: the union of the entries (nse adds up), in a's format."""
    return _wrap(_core._sparse_add(_p(a, "add"), _p(b, "add")))


def multiply(a, b):
    """a * b elementwise: a's structure, each value times b's at its index (zero where b has none)."""
    return _wrap(_core._sparse_multiply(_p(a, "multiply"), _p(b, "multiply")))


def multiply_dense(a, d):
    """a * d for a dense d of a's shape: a's structure."""
    return _wrap(_core._sparse_multiply_dense(_p(a, "multiply_dense"), d))


def reduce_sum(a, axes):
    """The sum over `axes` (an int or a sequence): a COO value of the remaining axes."""
    axes = [axes] if isinstance(axes, int) else list(axes)
    return _wrap(_core._sparse_reduce_sum(_p(a, "reduce_sum"), axes))


def sum(a):  # noqa: A001  (evoxc.sparse.sum, as numpy's)
    """The sum of every entry (a dense scalar)."""
    return _core._sparse_sum(_p(a, "sum"))


def transpose(a, axes=None):
    """Axes permuted (default reversed); a CSR value's transpose is the CSC value of the same arrays."""
    return _wrap(_core._sparse_transpose(_p(a, "transpose"), None if axes is None else list(axes)))


def reshape(a, shape):
    """The entries in another static shape of the same size (row-major); COO."""
    return _wrap(_core._sparse_reshape(_p(a, "reshape"), _dims(shape)))


def concatenate(xs, axis=0):
    """Along `axis` (static extents before the last value); COO."""
    return _wrap(_core._sparse_concatenate([_p(x, "concatenate") for x in xs], axis))


def matmul(a, b):
    """a @ b with one sparse 2-D operand and one dense (1-D or 2-D) one; a dense result. CSR and CSC run the
    sparse_csr_matmul kernel; COO scatter-adds."""
    if isinstance(a, _Sparse) and isinstance(b, _Sparse):
        raise _core.ValidationError("evoxc.sparse.matmul: sparse @ sparse is not implemented yet; densify one "
                                    "operand with evoxc.sparse.to_dense")
    if isinstance(a, _Sparse):
        return _core._sparse_matmul_sd(_p(a, "matmul"), b)
    return _core._sparse_matmul_ds(a, _p(b, "matmul"))
