"""evoxc: an explicit tensor-graph compiler frontend and runtime. Trace a function into a Graph, transform it
(vmap, grad, jvp, vjp, ...), lower, compile, load and run it: every stage a public function returning a public
object. The work is done by the C++ library (evoxc._core); this package adds pytrees and the Python sugar."""

from __future__ import annotations

import os as _os

from . import _core

_core._set_package_dir(_os.path.dirname(_os.path.abspath(__file__)) + _os.sep)

from ._core import *  # noqa: E402,F401,F403  (dtypes, Dim, Device, TensorSpec, Tensor, errors, every op function)
from ._core import EvoxcError, InternalError, ParseError, RunLimitError, ShapeError, VerifyError  # noqa: E402,F401

from . import _symbolic  # noqa: E402
from ._api import (CompileCache, Defn, GraphFunction, batch_functions, batch_report, bind, call, build, build_cached, build_tiered, compile, defn, evaluate,  # noqa: E402
                   from_dlpack, grad, hessian, jacfwd, jacrev, jvp, lower, load, run, tensor, trace,
                   value_and_grad, vectorize, vjp, vmap)
from ._control import cond, fori_loop, scan, switch, while_loop  # noqa: E402
from ._pytree import flatten as tree_flatten, tree_map  # noqa: E402,F401
from ._pytree import register_leaf_type as _pytree_register_leaf  # noqa: E402

_symbolic.install()
for _t in (TensorSpec, SymbolicTensor, Tensor, DType, Dim, Device):  # noqa: F405
    _pytree_register_leaf(_t)
try:
    from . import _indexing  # noqa: E402

    SymbolicTensor.__getitem__ = _indexing.getitem  # noqa: F405
    if hasattr(_indexing, "AtHelper"):
        SymbolicTensor.at = property(lambda self: _indexing.AtHelper(self))  # noqa: F405
except ImportError:  # pragma: no cover - the indexing module is part of the package
    pass

from . import numpy  # noqa: E402,F401
from . import gp  # noqa: E402,F401
from ._api import BatchReport, SwitchRecord  # noqa: E402,F401
from ._backends import backends  # noqa: E402,F401  (a namespace: evoxc.backends.stablehlo.export, .available())
from . import io  # noqa: E402,F401  (async host/device copies: evoxc.io.prefetch, sink, wait_all)
from . import xla  # noqa: E402,F401  (the xla backend's PJRT plugin: evoxc.xla.plugin_info(), .discover())
from ._block import Block, block, registered_blocks  # noqa: E402,F401  (custom ops: evoxc.block)
from ._external import (  # noqa: E402,F401  (opaque kernels: evoxc.external_call)
    ExternalKernel, external_call, register_external_kernel, registered_external_kernels)
from . import sparse  # noqa: E402,F401  (sparse tensors: evoxc.sparse.coo, csr, matmul, ...)
from . import random  # noqa: E402,F401  (key-based random numbers: evoxc.random.key, split, uniform, normal, ...)
from . import iree  # noqa: E402,F401  (backend="iree" when IREE's packages are installed: evoxc.iree.available())
iree.register()
from .xla import initialize  # noqa: E402,F401  (the seed's spelling: evoxc.initialize(platform=..., path=...))
from ._native import ABI_VERSION, abi_version, check_abi, get_include, get_library  # noqa: E402,F401  (the C ABI)

Error = EvoxcError


class NotAvailableError(EvoxcError, AttributeError):  # noqa: F405
    """A part of the seed's API that this build does not have yet (the message names it and what exists)."""


_NOT_YET = {
    "dist": "evoxc.dist (collectives) is not implemented yet",
    "persist": "evoxc.persist (disk caches) is not implemented yet; Graph.save/CompiledArtifact.save persist objects",
}


def __getattr__(name):
    if name in _NOT_YET:
        raise NotAvailableError(f"evoxc.{name}: {_NOT_YET[name]} (this build has the interp backend; see the README's "
                                "Status section)")
    raise AttributeError(f"module 'evoxc' has no attribute {name!r}")
__version__ = "0.1.0"
