"""The staging API over evoxc._core: defn, trace, lower, compile, load, run, build, evaluate, bind, build_cached."""

from __future__ import annotations

import collections
import enum
import functools
import threading

import numpy as np

from . import _core
from ._core import (BackendError, TransformError, CompiledArtifact, Device, DeviceError, Executable, Graph, LoweredProgram,
                    TieredExecutable,
                    Tensor, TensorSpec, TraceError, ValidationError)
from ._pytree import _NODES as _pytree_nodes
from ._pytree import TreeDef, flatten, is_static_config, to_plain

# ---------------------------------------------------------------- values


def tensor(data, dtype=None) -> Tensor:
    """A host Tensor from data: an evoxc Tensor (returned as is, or converted when `dtype` differs), a numpy
    array (viewed without copying when it is C-contiguous and aligned, copied otherwise), anything with
    __dlpack__ (see from_dlpack), or Python data. Python floats become float32 and Python ints int64 (evoxc's
    defaults: no silent float64); numpy arrays keep their dtype unless `dtype` is given."""
    if isinstance(data, Tensor):
        if dtype is None or _core.dtype(dtype) == data.dtype:
            return data
        return tensor(data.numpy(), dtype)
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        a = np.asarray(data)
        if dtype is not None:
            a = a.astype(np.dtype(_core.dtype(dtype).name), copy=False)
    elif hasattr(data, "__dlpack__") and not isinstance(data, (list, tuple)):
        t = from_dlpack(data)
        return t if dtype is None else tensor(t, dtype)
    else:
        a = np.asarray(data)
        if dtype is not None:
            a = a.astype(np.dtype(_core.dtype(dtype).name))
        elif a.dtype == np.float64:
            a = a.astype(np.float32)
        elif a.dtype.kind == "i" and a.dtype != np.int64:
            a = a.astype(np.int64)
        elif a.dtype.kind in "OUS":
            raise _core.DTypeError(f"evoxc.tensor: cannot make a tensor of {type(data).__name__} data")
    _check_array_dtype(a, "evoxc.tensor")
    if not (a.flags.c_contiguous and a.flags.aligned):
        a = a.copy(order="C")  # a fresh, aligned, contiguous copy
    return _core._tensor_from_array(a)


def from_dlpack(x) -> Tensor:
    """A Tensor sharing the memory of a DLPack producer (torch, jax, numpy, ...): no copy. Only cpu tensors can be
    imported in this build (DeviceError otherwise)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        _check_array_dtype(x, "from_dlpack")
        if not (x.flags.c_contiguous and x.flags.aligned):
            raise ValidationError("from_dlpack: the array is not C-contiguous and aligned (use evoxc.tensor to copy)")
    elif not hasattr(x, "__dlpack__"):
        raise _core.DTypeError(f"from_dlpack: a {type(x).__name__} is not a DLPack producer (it has no __dlpack__)")
    return _core._tensor_from_array(x)


def _check_array_dtype(a, what):
    """DTypeError naming numpy dtypes evoxc has no type for (object, strings, complex, datetimes, structured)."""
    if (a.dtype.kind not in "biuf" and a.dtype.name != "bfloat16") or a.dtype.fields is not None:
        raise _core.DTypeError(f"{what}: evoxc has no dtype for numpy's {a.dtype} (bool, int8-64, uint8-64, float16, "
                               "float32 and float64 arrays are taken)")


def _tensor_numpy(self) -> np.ndarray:
    """The data as a numpy array viewing this tensor's storage (no copy; the storage stays alive while the
    array does). DeviceError for a tensor that is not on the cpu: use .to(evoxc.Device('cpu', 0)) first."""
    if self.dtype == _core.bfloat16:
        raise _core.DTypeError("numpy has no bfloat16: convert inside the graph (evoxc.astype) first")
    return self._ndarray()


def _tensor_array(self, dtype=None, copy=None):
    a = _tensor_numpy(self)
    if dtype is not None:
        a = a.astype(dtype, copy=False)
    if copy:
        a = a.copy()
    return a


def _tensor_dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    if copy:
        raise BufferError("evoxc.Tensor.__dlpack__: copy=True is not supported (the export is zero-copy)")
    a = _tensor_numpy(self)
    if max_version is not None:
        try:
            return a.__dlpack__(max_version=max_version)
        except TypeError:  # numpy 1.26 knows only the unversioned protocol
            pass
    return a.__dlpack__()


def _tensor_dlpack_device(self):
    d = self.device
    if d.kind != "cpu":
        raise DeviceError(f"{d!r}: only cpu tensors are exported through DLPack in this build")
    return (1, 0)  # kDLCPU


_tensor_to_device = Tensor.to


def _tensor_to(self, device) -> Tensor:
    """The only transfer primitive: a copy on `device` ('cpu', 'cuda:1' or a Device)."""
    return _tensor_to_device(self, _device(device))


Tensor.numpy = _tensor_numpy
Tensor.__array__ = _tensor_array
Tensor.__dlpack__ = _tensor_dlpack
Tensor.__dlpack_device__ = _tensor_dlpack_device
Tensor.to = _tensor_to
Tensor.tolist = lambda self: _tensor_numpy(self).tolist()
Tensor.item = lambda self: _tensor_numpy(self).item()


def _device(d) -> Device:
    if isinstance(d, Device):
        return d
    if isinstance(d, str):
        kind, _, idx = d.partition(":")
        return Device(kind, int(idx) if idx else 0)
    raise ValidationError(f"not a device: {d!r} (use 'cpu', 'cuda:1' or evoxc.Device(kind, index))")


# ---------------------------------------------------------------- defn and trace


class Defn:
    """A Python function marked as a graph definition (@evoxc.defn). Calling it on data is a TraceError: trace it
    (evoxc.trace / build) or run it on data with evoxc.evaluate. Inside a trace it is an ordinary call."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        if not _core._in_trace():
            raise TraceError(
                f"{getattr(self.fn, '__name__', 'function')} is an evoxc.defn graph definition: it does not run "
                "eagerly. Trace it with evoxc.trace(fn, *specs) (or build it), or run it on data with "
                "evoxc.evaluate(fn, *tensors).")
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"<evoxc.defn {getattr(self.fn, '__qualname__', self.fn)!r}>"


def defn(fn) -> Defn:
    """Marks `fn` as a graph definition: evoxc.trace(fn, *specs) turns it into a Graph. No eager mode."""
    return fn if isinstance(fn, Defn) else Defn(fn)


def _unwrap(fn):
    return fn.fn if isinstance(fn, Defn) else fn


_STATIC_SCALARS = (bool, int, float, str)


def _static_leaf(x):
    """What C++ snapshots for a static leaf (the traced function still receives the original object)."""
    if isinstance(x, _STATIC_SCALARS) or isinstance(x, _core.DType):
        if isinstance(x, enum.Enum):
            return f"{type(x).__qualname__}.{x.name}"
        return x
    if isinstance(x, enum.Enum):
        return f"{type(x).__qualname__}.{x.name}"
    if isinstance(x, slice):
        return repr(x)
    if is_static_config(x):
        return f"{type(x).__qualname__}{repr(x)[len(type(x).__name__):]}"
    if isinstance(x, np.dtype) or (isinstance(x, type) and issubclass(x, np.generic)):
        return _core.dtype(x)
    if isinstance(x, (Tensor, np.ndarray)) or hasattr(x, "__dlpack__"):
        raise TraceError(
            f"trace takes TensorSpecs and static values, not data: got a {type(x).__name__} (run a function on "
            "data with evoxc.evaluate, or pass evoxc.TensorSpec(x.shape, x.dtype))")
    if isinstance(x, _core.SymbolicTensor):
        raise TraceError("trace takes TensorSpecs and static values: a SymbolicTensor belongs to another trace")
    raise TraceError(f"trace: a {type(x).__name__} is neither a TensorSpec nor a static value (None, bool, int, "
                     "float, str, Enum, dtype, slice, frozen dataclass)")


class _OutputBox:
    __slots__ = ("treedef",)


def _trace_callback(fn, treedef: TreeDef, leaves, box: _OutputBox):
    spec_pos = [i for i, l in enumerate(leaves) if isinstance(l, TensorSpec)]

    def callback(inputs):
        vals = list(leaves)
        for i, t in zip(spec_pos, inputs):
            vals[i] = t
        args = treedef.unflatten(vals)
        out = fn(*args)
        out_leaves, out_def = flatten(out)
        box.treedef = out_def
        return to_plain(out_def, out_leaves)

    return callback


def _normalise_args(args):
    leaves, treedef = flatten(tuple(args))
    plain_leaves = [l if isinstance(l, TensorSpec) else _static_leaf(l) for l in leaves]
    return leaves, treedef, list(to_plain(treedef, plain_leaves))


def trace(fn, *args) -> Graph:
    """Traces fn(*args) into a Graph. Each argument is a pytree (tuple, list, dict, None, namedtuple, dataclass) of
    TensorSpecs (graph inputs; fn receives SymbolicTensors there) and static values (None, bool, int, float, str,
    Enum, dtype, slice, frozen dataclass configs: passed to fn unchanged and snapshotted into the graph, so a new
    value means a new graph). Ops record the Python file:line they were called from."""
    if isinstance(fn, GraphFunction):
        return fn(*args)
    leaves, treedef, plain = _normalise_args(args)
    box = _OutputBox()
    g = _core._trace(_trace_callback(_unwrap(fn), treedef, leaves, box), plain)
    if not box.treedef.plain:
        g._py_out = box.treedef
    return g


# ---------------------------------------------------------------- stages


def _carry_tree(src, dst):
    t = getattr(src, "_py_out", None)
    if t is not None:
        dst._py_out = t
    return dst


_PLANNED_BACKENDS = {
    "mlir": "the MLIR/LLVM compiled backend, configured out of this build",
    "xla": "XLA (PJRT), configured out of this build",
    "tvm": "TVM, not offered: its StableHLO importer takes too few ops (docs/backends.md)",
}


def _check_backend(backend: str):
    if backend in _core.backends():
        return
    if backend == "iree":
        from . import iree  # noqa: PLC0415

        raise BackendError(f"backend 'iree' is not registered in this process: {iree.available()[1]}")
    if backend in _PLANNED_BACKENDS:
        raise BackendError(
            f"backend '{backend}' ({_PLANNED_BACKENDS[backend]}) is not in this build; this build has "
            f"{', '.join(_core.backends())}. Use backend='interp' (the default).")


def lower(graph: Graph, backend: str = "interp") -> LoweredProgram:
    """Lowers a Graph for a backend: verifies it and checks every op against the backend's capabilities
    (BackendError naming the op otherwise). The default backend is the C++ interpreter."""
    _check_backend(backend)
    return _carry_tree(graph, _core.lower(graph, backend))


def compile(lowered: LoweredProgram, opt_level=None, flags=(), **options) -> CompiledArtifact:  # noqa: A001
    """Compiles a LoweredProgram into a CompiledArtifact. opt_level: "O0".."O3", "0".."3" or an int (a raw "-O<n>"
    in `flags` wins; else opt_level; else EVOXC_OPT_LEVEL; else O2)."""
    if options:
        raise ValidationError(f"compile: unknown option(s) {sorted(options)} for backend '{lowered.backend}'")
    if lowered.backend == "xla":
        from . import xla  # noqa: PLC0415 - custom calls the program makes get their handlers before the compile

        xla._before_compile(lowered.text)
    return _carry_tree(lowered, _core._compile(lowered, opt_level, list(flags)))


def load(artifact: CompiledArtifact, device="cpu") -> Executable:
    """Loads an artifact onto a device: an Executable (DeviceError for a device the backend cannot run on)."""
    if artifact.backend == "xla":
        from . import xla  # noqa: PLC0415 - an artifact read from disk runs custom calls that need their handlers

        xla._before_compile(artifact.graph.to_string())
    return _carry_tree(artifact, _core._load(artifact, _device(device)))


def run(exe: Executable, *args, timeout=None, max_loop_iterations=0):
    """Runs an executable: one argument per argument of the traced function (pytrees of Tensors; numpy arrays
    are viewed without copying; static positions may be None). Returns the outputs in the traced pytree shape.
    The GIL is released while the program runs. timeout (seconds) and max_loop_iterations stop runaway loops
    with RunLimitError."""
    src = exe
    if isinstance(exe, TieredExecutable):
        exe = exe.executable
    out = _core._run(exe, args, timeout=timeout, max_loop_iterations=max_loop_iterations)
    t = getattr(src, "_py_out", None)
    return out if t is None else t.restore(out)


def _exe_call(self, *args, **kw):
    return run(self, *args, **kw)


Executable.__call__ = _exe_call


def _run_input(x):
    """Converts a run input that is not a Tensor/tuple/list/dict/None (called from C++)."""
    import dataclasses
    if type(x) in _pytree_nodes:
        return tuple(_pytree_nodes[type(x)][0](x)[0])  # a registered node (a sparse value): its children
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}
    if isinstance(x, np.generic):
        return tensor(x)  # numpy scalars are data (rank-0 tensors), as evaluate takes them; np.float64 is a float
    if isinstance(x, (bool, int, float, str)):
        return None  # a static position
    return tensor(x)


def build(fn, *specs, backend: str = "interp", device="cpu", opt_level=None, flags=(), **options) -> Executable:
    """Shorthand: load(compile(lower(trace(fn, *specs), backend), opt_level=..., flags=...), device). `fn` may
    also be a Graph (then no specs)."""
    _check_backend(backend)
    graph = fn if isinstance(fn, Graph) else trace(fn, *specs)
    return load(compile(lower(graph, backend), opt_level=opt_level, flags=flags, **options), device)


def build_tiered(fn, *specs, backend: str = "mlir", first: str = "interp", device="cpu", opt_level=None, flags=(),
                 compile_after_calls: int = 0) -> TieredExecutable:
    """Tiered execution: the program runs on `first` (the interpreter: no compile) from the first call while
    `backend` lowers, compiles and loads it on a background thread; later calls switch to the compiled code.
    compile_after_calls=N starts the compile only on the Nth call (a program run once or twice never pays for
    it). The result is called like an Executable (evoxc.run takes it too); .tier, .ready, .wait(timeout),
    .pin('first' | 'compiled' | None) and .report (compile state and error, per-stage compile seconds, calls per
    tier) tell and steer what it does. `fn` may be a Graph (then no specs)."""
    _check_backend(backend)
    _check_backend(first)
    graph = fn if isinstance(fn, Graph) else trace(fn, *specs)
    t = _core._build_tiered(graph, first, backend, _device(device), opt_level, list(flags), int(compile_after_calls))
    return _carry_tree(graph, t)


def _tiered_call(self, *args, **kw):
    return run(self, *args, **kw)


TieredExecutable.__call__ = _tiered_call


def _spec_of(x):
    if isinstance(x, Tensor):
        return TensorSpec(x.shape, x.dtype)
    return x


def _eval_leaf(x):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, np.generic)) or hasattr(x, "__dlpack__"):
        return tensor(x)  # numpy scalars are data (rank-0 tensors); Python scalars are static values
    return x  # a static value


def evaluate(fn, *args, backend: str = "interp", device="cpu", opt_level=None, timeout=None):
    """Shorthand: specs from the tensors (Tensor and numpy leaves; other leaves are static values) -> build ->
    run. Exactly run(build(fn, *specs, backend=..., device=...), *tensors)."""
    leaves, treedef = flatten(tuple(args))
    leaves = [_eval_leaf(l) for l in leaves]
    specs = treedef.unflatten([_spec_of(l) for l in leaves])
    exe = build(fn, *specs, backend=backend, device=device, opt_level=opt_level)
    inputs = treedef.unflatten([l if isinstance(l, Tensor) else None for l in leaves])
    return run(exe, *inputs, timeout=timeout)


def bind(exe_or_fn, *args, **build_options):
    """Argument-passing sugar: bind(exe, *first) returns f with f(*rest) = run(exe, *first, *rest). With a function
    instead of an Executable, bind(fn, *specs, **build_options) = bind(build(fn, *specs, **build_options))."""
    if isinstance(exe_or_fn, Executable):
        exe, first = exe_or_fn, args
    else:
        exe, first = build(exe_or_fn, *args, **build_options), ()

    def bound(*rest, **kw):
        return run(exe, *first, *rest, **kw)

    bound.executable = exe
    return bound


# ---------------------------------------------------------------- build_cached


class CompileCache:
    """An in-memory LRU of Executables for build_cached. The key is computed before tracing from the function's
    identity, the specs and static values, the backend, the device and the compile options, so a hit costs no
    trace. hits/misses count lookups."""

    def __init__(self, maxsize: int = 128):
        if maxsize < 1:
            raise ValidationError("CompileCache: maxsize must be >= 1")
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    def __len__(self):
        return len(self._entries)

    def clear(self):
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0

    def __repr__(self):
        return f"CompileCache(maxsize={self.maxsize}, entries={len(self)}, hits={self.hits}, misses={self.misses})"


_default_cache = CompileCache(128)


def _key_leaf(x):
    if isinstance(x, TensorSpec):
        return x
    try:
        hash(x)
        return (type(x), x)
    except TypeError:
        return (type(x), repr(x))


def build_cached(fn, *specs, cache: CompileCache | None = None, backend: str = "interp", device="cpu",
                 opt_level=None, flags=()) -> Executable:
    """build(fn, *specs, ...) memoized in `cache` (a module-wide CompileCache(128) by default). The key (function
    identity, specs, static values, backend, device, options) is computed before tracing."""
    cache = _default_cache if cache is None else cache
    if all(type(s) is TensorSpec for s in specs):
        # The common call, specs only: no pytree to flatten.
        key = (fn, specs, backend, str(device), opt_level, tuple(flags))
    else:
        leaves, treedef = flatten(specs)
        key = (fn, treedef, tuple(_key_leaf(l) for l in leaves), backend, str(device), opt_level, tuple(flags))
    entries = cache._entries
    with cache._lock:
        exe = entries.get(key)
        if exe is not None:
            entries.move_to_end(key)
            cache.hits += 1
            return exe
        cache.misses += 1
    exe = build(fn, *specs, backend=backend, device=device, opt_level=opt_level, flags=flags)
    with cache._lock:
        entries[key] = exe
        entries.move_to_end(key)
        while len(entries) > cache.maxsize:
            entries.popitem(last=False)
    return exe


# ---------------------------------------------------------------- transforms


class GraphFunction:
    """What a transform returns for a function: called with specs (and statics), it builds the transformed
    Graph. `expansion` says what it computes."""

    def __init__(self, build_graph, expansion: str):
        self._build = build_graph
        self.expansion = expansion

    def __call__(self, *specs):
        leaves, td = flatten(specs)
        if any(isinstance(l, _core.SymbolicTensor) for l in leaves):
            # Inside another trace: build the graph for these values' types, then inline it.
            graph = self._build(td.unflatten([TensorSpec(l.shape, l.dtype) if isinstance(l, _core.SymbolicTensor)
                                              else l for l in leaves]))
            return call(graph, *specs)
        return self._build(specs)

    def __repr__(self):
        return f"<evoxc transformed function: {self.expansion}>"


def call(graph: Graph, *args):
    """Uses a Graph as a function inside the function being traced: its ops are inlined and its outputs
    returned in its output structure. Each argument must have the graph's input type exactly (static
    positions None). A transformed function called on SymbolicTensors does this for you:
    grad(f)(x) inside a trace = call(grad(f)(*specs of x), x)."""
    leaves, td = flatten(args)
    plain = to_plain(td, [None if not isinstance(l, _core.SymbolicTensor) else l for l in leaves])
    out = _core._call_graph(graph, tuple(plain))
    t = getattr(graph, "_py_out", None)
    return out if t is None else t.restore(out)


def _graph_of(fn, specs) -> Graph:
    if isinstance(fn, GraphFunction):
        return fn(*specs)
    return trace(fn, *specs)


def _fn_name(fn):
    f = _unwrap(fn)
    return getattr(f, "__name__", None) or repr(f)


def _transform(name, graph_fn, fn, **kw):
    args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    if isinstance(fn, Graph):
        return graph_fn(fn)
    expansion = f"{name}(trace({_fn_name(fn)}, *specs){', ' + args if args else ''})"
    return GraphFunction(lambda specs: graph_fn(_graph_of(fn, specs)), expansion)


def grad(fn, argnums=0, has_aux=False):
    """Gradient of a scalar float output w.r.t. the arguments `argnums` (an int: that argument's gradient tree; a
    tuple: a tuple of them). Over a Graph: a Graph; over a function: specs -> Graph, i.e.
    grad(f)(*specs) = grad(trace(f, *specs)). Reverse mode = jvp, then transposition (one graph)."""
    return _transform("grad", lambda g: _core._grad(g, argnums, has_aux), fn, argnums=argnums, has_aux=has_aux)


def value_and_grad(fn, argnums=0, has_aux=False):
    """(value, gradients); with has_aux ((value, aux), gradients). Graph in/Graph out, or function -> specs -> Graph."""
    return _transform("value_and_grad", lambda g: _core._value_and_grad(g, argnums, has_aux), fn, argnums=argnums,
                      has_aux=has_aux)


def jvp(fn):
    """Forward mode: a graph (primals, tangents) -> (outputs, output tangents); non-float leaves get None tangents."""
    return _transform("jvp", _core._jvp, fn)


def vjp(fn):
    """Reverse mode as ONE graph: (primals, cotangents) -> (outputs, input cotangents)."""
    return _transform("vjp", _core._vjp, fn)


def jacfwd(fn, argnums=0):
    """Jacobian by forward mode (a vectorized basis of tangents): output shape O + input shape I per pair."""
    return _transform("jacfwd", lambda g: _core._jacfwd(g, argnums), fn, argnums=argnums)


def jacrev(fn, argnums=0):
    """Jacobian by reverse mode (a vectorized basis of cotangents)."""
    return _transform("jacrev", lambda g: _core._jacrev(g, argnums), fn, argnums=argnums)


def hessian(fn, argnums=0):
    """hessian = jacfwd(jacrev(fn, argnums), argnums)."""
    return _transform("hessian", lambda g: _core._hessian(g, argnums), fn, argnums=argnums)


def _strip_axis(spec, axis, path):
    if not isinstance(spec, TensorSpec):
        raise ValidationError(f"vmap: the mapped argument at {path} is not a TensorSpec")
    shape = list(spec.shape)
    n = len(shape)
    a = axis + n if axis < 0 else axis
    if not 0 <= a < n:
        raise ValidationError(f"vmap: in_axes {axis} is out of range for {spec!r} at {path}")
    size = shape.pop(a)
    return TensorSpec(tuple(shape), spec.dtype, spec.device), size


def _broadcast_axes(axes, tree, path, out):
    """Walks `tree` (specs) with the prefix tree `axes`; appends (path, spec, axis or None) per spec leaf."""
    if axes is None or isinstance(axes, int):
        leaves, td = flatten(tree)
        for p, l in zip(td.leaf_paths(path), leaves):
            out.append((p or "<root>", l, axes))
        return
    if isinstance(axes, dict):
        if not isinstance(tree, dict) or set(axes) != set(tree):
            raise ValidationError(f"vmap: in_axes at {path or '<root>'} is a dict whose keys do not match the argument")
        for k in sorted(axes):
            _broadcast_axes(axes[k], tree[k], f"{path}[{k!r}]", out)
        return
    if isinstance(axes, (tuple, list)):
        if not isinstance(tree, (tuple, list)) or len(axes) != len(tree):
            raise ValidationError(f"vmap: in_axes at {path or '<root>'} has {len(axes)} entries, the arguments there "
                                  f"have {len(tree) if isinstance(tree, (tuple, list)) else 'none'}")
        for i, (a, t) in enumerate(zip(axes, tree)):
            _broadcast_axes(a, t, f"{path}[{i}]", out)
        return
    raise ValidationError(f"vmap: in_axes leaves must be ints or None, got {axes!r}")


def vectorize(fn, in_axes=0, out_axes=0, axis_size=None):
    """Adds a batch axis. Over a Graph: in_axes/out_axes are prefix trees of its input/output trees (None = not
    mapped); the batch extent is axis_size (int or Dim) or a fresh symbol B. Over a function (or a transformed
    function): the returned function takes the BATCHED specs, i.e.
    vmap(f, in_axes)(*specs) = vectorize(trace(f, *unbatched specs), in_axes, out_axes, axis_size=<mapped extent>)."""
    if isinstance(fn, Graph):
        return _core._vectorize(fn, in_axes, out_axes, axis_size)
    expansion = f"vmap({_fn_name(fn) if not isinstance(fn, GraphFunction) else fn.expansion}, in_axes={in_axes!r}, " \
                f"out_axes={out_axes!r})"

    def build_graph(specs):
        axes = in_axes if not isinstance(in_axes, list) else tuple(in_axes)
        if isinstance(axes, tuple) and len(axes) != len(specs):
            raise ValidationError(f"vmap: in_axes has {len(axes)} entries for {len(specs)} arguments")
        marks = []
        _broadcast_axes(axes, tuple(specs), "", marks)
        leaves, td = flatten(tuple(specs))
        stripped, size, size_path = [], None, None
        for (path, leaf, ax) in marks:
            if ax is None or not isinstance(leaf, TensorSpec):
                stripped.append(leaf)
                continue
            s, n = _strip_axis(leaf, ax, path)
            if size is None:
                size, size_path = n, path
            elif not (n == size):
                raise ValidationError(f"vmap: mapped extents differ: {size} at {size_path}, {n} at {path}")
            stripped.append(s)
        if size is None:
            raise ValidationError("vmap: no argument is mapped (every in_axes is None)")
        inner = td.unflatten(stripped)
        g = _graph_of(fn, inner)
        return _core._vectorize(g, _plain_axes(in_axes), _plain_axes(out_axes),
                                size if axis_size is None else axis_size)

    return GraphFunction(build_graph, expansion)


def _plain_axes(axes):
    if isinstance(axes, (list, tuple)):
        return tuple(_plain_axes(a) for a in axes) if isinstance(axes, tuple) else [_plain_axes(a) for a in axes]
    if isinstance(axes, dict):
        return {k: _plain_axes(v) for k, v in axes.items()}
    return axes


vmap = vectorize


# ---------------------------------------------------------------- batch_functions


def batch_functions(fns, axes=0, out_axes=0, *, switch_ops=None, bands=None, alignment="variant", cost_model=None):
    """Merges programs with the same input and output specs into ONE graph with a leading, static function axis:
    row i of every output is program i's output (bit for bit as if it ran alone). `fns` is a non-empty list of
    Graphs (returns a Graph) or of traceable functions (returns a function of specs: the mapped specs carry the
    function axis first, i.e. batch_functions(fns)(*specs) = batch_functions([trace(f, *unbatched specs) for f in
    fns])). axes/out_axes: 0 (mapped / stacked) or None (shared) per leaf, as prefix trees. switch_ops: None,
    True (elementwise and comparison ops that differ at the same position become one row_switch op computing each
    row with its own variant), or a list of categories ("elementwise_unary", "elementwise_binary", "comparison")
    and op names. bands: None, an int K (K contiguous bands merged independently), or "auto" (programs grouped by
    structure, each group merged alone, when the interpreter's calibrated cost model estimates it faster than
    the flat merge; never worse than flat by that estimate). alignment: "variant" (the default: in a switch class,
    a program gives the later ready op of the variant most programs have there, so sibling branches written in
    another order collapse), "occurrence" (lock step in program order; byte-stable), or "auto" (both, keeping the
    cheaper estimate). cost_model: the static model deciding merges, bands="auto" and alignment="auto": None (the
    interpreter's calibrated constants), a backend name (its capabilities' batch_cost), or a dict with
    dispatch_seconds and element_seconds. The merge's report is
    graph.batch_report (also evoxc.batch_report(graph)): transform metadata, not saved with the graph."""
    fns = list(fns)
    if not fns:
        raise TransformError("batch_functions: needs at least one program")
    if alignment not in ("variant", "occurrence", "auto"):
        raise ValidationError(f"batch_functions: alignment must be 'variant', 'occurrence' or 'auto', got "
                              f"{alignment!r}")
    if cost_model is None or isinstance(cost_model, str):
        cost_model = _core.capabilities(cost_model or "interp")["batch_cost"]
    try:
        costs = (float(cost_model["dispatch_seconds"]), float(cost_model["element_seconds"]))
    except (TypeError, KeyError, ValueError):
        raise ValidationError("batch_functions: cost_model must be None, a backend name or a dict with "
                              f"dispatch_seconds and element_seconds, got {cost_model!r}") from None
    graphs = [f for f in fns if isinstance(f, Graph)]
    if graphs and len(graphs) != len(fns):
        raise TransformError("batch_functions: pass a list of Graphs or a list of functions, not a mix")

    def merge(gs):
        g, report = _core._batch_functions(gs, _plain_axes(axes), _plain_axes(out_axes), switch_ops, bands,
                                           alignment, *costs)
        g.batch_report = _records(report, BatchReport)
        return g

    if graphs:
        return merge(graphs)
    n = len(fns)

    def build_graph(specs):
        marks = []
        _broadcast_axes(axes if not isinstance(axes, list) else tuple(axes), tuple(specs), "", marks)
        stripped = []
        for (path, leaf, ax) in marks:
            if ax is None or not isinstance(leaf, TensorSpec):
                stripped.append(leaf)
                continue
            s, size = _strip_axis(leaf, ax, path)
            if not (size == n):
                raise ValidationError(f"batch_functions: the function axis of {path} is {size}, but there are {n} "
                                      "programs")
            stripped.append(s)
        inner = flatten(tuple(specs))[1].unflatten(stripped)
        return merge([_graph_of(f, inner) for f in fns])

    return GraphFunction(build_graph, f"batch_functions([{n} functions], axes={axes!r})")


class _Record(dict):
    """A dict whose keys are also attributes (report.emitted_ops == report["emitted_ops"]); dict(r) is plain data."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}; it has {', '.join(self)}") from None

    def __dir__(self):
        return [*super().__dir__(), *self.keys()]

    def to_dict(self) -> dict:
        """The record as plain dicts and lists, all the way down."""
        return _plain(self)


class SwitchRecord(_Record):
    """One switch class of a merge: its variants and the rows that use them."""


class BatchReport(_Record):
    """What batch_functions did, as data: value_classes, shared_classes, switched (SwitchRecords), muxes,
    output_muxes, emitted_ops, program_ops, bands, band_sizes, cost_estimate, separate_cost. Fields read as
    attributes or keys; dict(report) or report.to_dict() gives plain data."""


def _plain(v):
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _records(v, cls=_Record):
    if isinstance(v, dict):
        return cls({k: _records(x, SwitchRecord if k == "switched" else _Record) for k, x in v.items()})
    if isinstance(v, list):
        return [_records(x, cls) for x in v]
    return v


def batch_report(graph) -> BatchReport:
    """The BatchReport of a merged graph as plain data (value_classes, shared_classes, switched, muxes,
    output_muxes, emitted_ops, program_ops, bands, band_sizes, cost_estimate, separate_cost)."""
    r = getattr(graph, "batch_report", None)
    if r is None:
        raise ValidationError("batch_report: this graph was not made by batch_functions in this process (the report "
                              "is transform metadata and is not saved with a graph)")
    return r
