"""The staging API, the value model and the errors: the seed README's Python examples and rules, one test each."""

import collections
import dataclasses
import enum
import gc
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import evoxc
from evoxc import TensorSpec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@evoxc.defn
def f(x, w):
    return evoxc.sum(evoxc.tanh(evoxc.dot(x, w)), axes=1)


SX, SW = TensorSpec((4, 8), evoxc.float32), TensorSpec((8, 4), evoxc.float32)


# ---- the explicit pipeline (seed quickstart) ----

def test_quickstart_pipeline_objects_and_values():
    graph = evoxc.trace(f, SX, SW)
    lowered = evoxc.lower(graph)
    artifact = evoxc.compile(lowered)
    exe = evoxc.load(artifact, device="cpu")
    y = evoxc.run(exe, evoxc.ones((4, 8)), evoxc.ones((8, 4)))
    assert isinstance(graph, evoxc.Graph) and isinstance(lowered, evoxc.LoweredProgram)
    assert isinstance(artifact, evoxc.CompiledArtifact) and isinstance(exe, evoxc.Executable)
    assert isinstance(y, evoxc.Tensor)
    np.testing.assert_allclose(y.numpy(), np.full(4, 4 * np.tanh(8.0), np.float32), rtol=1e-6)  # 3.999999 each
    assert str(graph) == "<Graph 2 tensor inputs, 0 static values>"


def test_build_and_evaluate_are_the_documented_shorthands():
    exe = evoxc.build(f, SX, SW, device="cpu")
    a = evoxc.run(exe, evoxc.ones((4, 8)), evoxc.ones((8, 4))).numpy()
    b = evoxc.evaluate(f, evoxc.ones((4, 8)), evoxc.ones((8, 4))).numpy()
    np.testing.assert_array_equal(a, b)
    assert exe(evoxc.ones((4, 8)), evoxc.ones((8, 4))).numpy().tolist() == a.tolist()


def test_graph_print_verify_save_load_roundtrip(tmp_path, capsys):
    g = evoxc.trace(f, SX, SW)
    g.print()
    text = capsys.readouterr().out
    assert "evoxc.dot(%arg0, %arg1) : tensor<4x4xf32>" in text
    assert 'loc("test_api.py":' in text  # Python file and line
    g.verify()
    path = tmp_path / "f.evoxcgraph"
    g.save(str(path))
    g2 = evoxc.Graph.load(str(path))
    assert g2 == g and g2.to_string() == g.to_string()
    assert evoxc.Graph.parse(g.to_string()) == g


def test_locations_are_python_lines():
    @evoxc.defn
    def h(x):
        a = evoxc.exp(x)  # line A
        return a * 2.0  # line B

    g = evoxc.trace(h, TensorSpec((3,)))
    lines = [l for l in g.to_string().splitlines() if "evoxc.exp" in l or "evoxc.multiply" in l]
    import inspect
    src, start = inspect.getsourcelines(h.fn)
    a_line = start + [i for i, l in enumerate(src) if "line A" in l][0]
    b_line = start + [i for i, l in enumerate(src) if "line B" in l][0]
    assert f'loc("test_api.py":{a_line}:0)' in lines[0]
    assert f'loc("test_api.py":{b_line}:0)' in lines[1]


def test_locations_through_many_functions_and_loops():
    # More functions than python_location's per-thread cache of code objects (8), each called at two sites, in
    # a loop: every op still carries its own line, whichever cache entry served it.
    import inspect
    fns = []
    for k in range(12):
        def step(x, k=k):
            return x + float(k)  # the op's line
        fns.append(step)

    def body(x):
        for _ in range(3):
            for fn in fns:
                x = fn(x)
            x = evoxc.sin(x)  # line S
        return x

    g = evoxc.trace(body, TensorSpec((3,)))
    src, start = inspect.getsourcelines(fns[0])
    step_line = start + [i for i, l in enumerate(src) if "the op's line" in l][0]
    src, start = inspect.getsourcelines(body)
    s_line = start + [i for i, l in enumerate(src) if "line S" in l][0]
    text = g.to_string().splitlines()
    adds = [l for l in text if "evoxc.add" in l]
    sins = [l for l in text if "evoxc.sin" in l]
    assert len(adds) == 36 and len(sins) == 3
    assert all(f'loc("test_api.py":{step_line}:0)' in l for l in adds), adds[0]
    assert all(f'loc("test_api.py":{s_line}:0)' in l for l in sins), sins[0]


def test_artifact_save_load_and_corruption(tmp_path):
    art = evoxc.compile(evoxc.lower(evoxc.trace(f, SX, SW)), opt_level="O1")
    p = tmp_path / "f.evoxcartifact"
    art.save(str(p))
    back = evoxc.CompiledArtifact.load(str(p))
    assert back.content_hash == art.content_hash and back.backend == "interp"
    y = evoxc.run(evoxc.load(back), evoxc.ones((4, 8)), evoxc.ones((8, 4)))
    assert y.shape == (4,)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(evoxc.PersistenceError):
        evoxc.CompiledArtifact.load(str(p))
    with pytest.raises(evoxc.PersistenceError):
        evoxc.CompiledArtifact.from_bytes(b"not an artifact")


# ---- the value model and its errors ----

def test_calling_a_defn_on_data_is_a_trace_error():
    with pytest.raises(evoxc.TraceError, match="evoxc.trace.*evoxc.evaluate"):
        f(evoxc.ones((4, 8)), evoxc.ones((8, 4)))


def test_python_if_on_a_symbolic_value_is_a_trace_error():
    @evoxc.defn
    def g(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(evoxc.TraceError, match="evoxc.cond"):
        evoxc.trace(g, TensorSpec(()))

    @evoxc.defn
    def w(x):
        while x < 3:
            x = x + 1
        return x

    with pytest.raises(evoxc.TraceError, match="while_loop"):
        evoxc.trace(w, TensorSpec(()))
    with pytest.raises(evoxc.TraceError):
        evoxc.trace(lambda x: int(x), TensorSpec(()))


def test_capturing_a_tensor_is_a_trace_error():
    t = evoxc.ones((3,))
    arr = np.ones(3, np.float32)
    for captured in (t, arr):
        with pytest.raises(evoxc.TraceError, match="constant"):
            evoxc.trace(lambda x: evoxc.add(x, captured), TensorSpec((3,)))
        with pytest.raises(evoxc.TraceError, match="constant"):
            evoxc.trace(lambda x: x * captured, TensorSpec((3,)))
    with pytest.raises(evoxc.TraceError, match="constant"):
        evoxc.trace(lambda x: evoxc.sum(t), TensorSpec((3,)))


def test_trace_rejects_data_arguments():
    with pytest.raises(evoxc.TraceError, match="evaluate"):
        evoxc.trace(f, evoxc.ones((4, 8)), SW)


def test_symbolic_tensor_used_after_its_trace_is_a_trace_error():
    kept = []

    def g(x):
        kept.append(x)
        return x + 1

    evoxc.trace(g, TensorSpec((2,)))
    with pytest.raises(evoxc.TraceError):
        evoxc.trace(lambda y: y + kept[0], TensorSpec((2,)))
    with pytest.raises(evoxc.TraceError):
        kept[0].shape  # noqa: B018
    with pytest.raises(evoxc.TraceError):
        evoxc.exp(kept[0])


def test_symbolic_tensor_has_no_data():
    def g(x):
        with pytest.raises(evoxc.TraceError):
            x.numpy()
        with pytest.raises(evoxc.TraceError):
            np.asarray(x)
        with pytest.raises(evoxc.TraceError, match="at\\[idx\\]"):
            x[0] = 1.0
        return x

    evoxc.trace(g, TensorSpec((2,)))


def test_constant_warns_and_embeds():
    with pytest.warns(UserWarning, match="embeds"):
        g = evoxc.trace(lambda x: x + evoxc.constant(evoxc.tensor(np.arange(3, dtype=np.float32))), TensorSpec((3,)))
    y = evoxc.run(evoxc.build(g), evoxc.zeros((3,)))
    assert y.numpy().tolist() == [0.0, 1.0, 2.0]


def test_python_scalars_are_weakly_typed():
    for dt in (evoxc.float16, evoxc.float64, evoxc.int8, evoxc.int32, evoxc.uint8):
        g = evoxc.trace(lambda x: x + 1, TensorSpec((2,), dt))
        assert g.output_specs[0].dtype == dt
    g = evoxc.trace(lambda x: x * 2.5, TensorSpec((2,), evoxc.int32))
    assert g.output_specs[0].dtype == evoxc.float32  # int tensor * float scalar -> default float


class Mode(enum.Enum):
    A = 1
    B = 2


@dataclasses.dataclass(frozen=True)
class Config:
    scale: float
    depth: int


def test_static_values_are_snapshotted_and_change_the_graph():
    def g(x, k, mode, cfg, sl, name, dt):
        y = x * k * cfg.scale
        for _ in range(cfg.depth):
            y = evoxc.tanh(y)
        y = y if mode is Mode.A else -y
        return evoxc.astype(y, dt)

    args = (TensorSpec((4,)), 3, Mode.A, Config(2.0, 2), slice(0, 2), "n", evoxc.float64)
    g1 = evoxc.trace(g, *args)
    sv = g1.static_values
    assert sv["[1]"] == 3 and sv["[2]"] == "Mode.A" and "scale=2.0" in sv["[3]"] and sv["[5]"] == "n"
    assert sv["[6]"] == evoxc.float64
    g2 = evoxc.trace(g, TensorSpec((4,)), 3, Mode.B, Config(2.0, 2), slice(0, 2), "n", evoxc.float64)
    g3 = evoxc.trace(g, TensorSpec((4,)), 3, Mode.A, Config(2.0, 3), slice(0, 2), "n", evoxc.float64)
    assert g1 != g2 and g1 != g3
    y = evoxc.run(evoxc.build(g1), evoxc.ones((4,)), None, None, None, None, None, None)
    np.testing.assert_allclose(y.numpy(), np.tanh(np.tanh(6.0)), rtol=1e-6)


Pair = collections.namedtuple("Pair", "a b")


@dataclasses.dataclass
class State:
    pos: object
    vel: object


def test_pytrees_namedtuple_dataclass_dict_list_none():
    def step(s, p, extra):
        return State(pos=s.pos + s.vel, vel=s.vel * p.a), Pair(a=p.b, b=None), [extra["k"]]

    spec = TensorSpec((3,))
    g = evoxc.trace(step, State(spec, spec), Pair(spec, spec), {"k": spec})
    exe = evoxc.build(g)
    ones = evoxc.ones((3,))
    out = evoxc.run(exe, State(ones, ones), Pair(evoxc.full((3,), 2.0), ones), {"k": ones})
    s, p, lst = out
    assert isinstance(s, State) and isinstance(p, Pair) and isinstance(lst, list)
    assert s.pos.numpy().tolist() == [2.0] * 3 and s.vel.numpy().tolist() == [2.0] * 3 and p.b is None


def test_run_input_mismatch_names_the_path():
    exe = evoxc.build(lambda d: d["x"] + d["y"], {"x": TensorSpec((2,)), "y": TensorSpec((2,))})
    with pytest.raises(evoxc.ValidationError, match="y"):
        evoxc.run(exe, {"x": evoxc.ones((2,)), "z": evoxc.ones((2,))})
    with pytest.raises(evoxc.ValidationError):
        evoxc.run(exe, {"x": evoxc.ones((2,)), "y": evoxc.ones((3,))})


def test_symbolic_dims_seed_model():
    B = evoxc.dim("B")

    @evoxc.defn
    def model(params, batch):
        h = evoxc.tanh(evoxc.dot(batch["x"], params["w1"]) + params["b1"])
        return {"logits": evoxc.dot(h, params["w2"]), "hidden": h}

    spec = ({"w1": TensorSpec((4, 8)), "b1": TensorSpec((8,)), "w2": TensorSpec((8, 3))}, {"x": TensorSpec((B, 4))})
    exe = evoxc.build(model, *spec, device="cpu")
    params = {"w1": evoxc.ones((4, 8)), "b1": evoxc.zeros((8,)), "w2": evoxc.ones((8, 3))}
    out = evoxc.run(exe, params, {"x": evoxc.ones((5, 4))})
    assert {k: v.shape for k, v in out.items()} == {"hidden": (5, 8), "logits": (5, 3)}
    assert str(B * 2 + 1) == "(2*B+1)" or "B" in str(B * 2 + 1)


def test_error_classes_share_one_base():
    for name in ("TraceError", "TransformError", "BackendError", "PersistenceError", "DeviceError",
                 "ValidationError", "ShapeError", "ParseError", "VerifyError", "RunLimitError", "InternalError"):
        cls = getattr(evoxc, name)
        assert issubclass(cls, evoxc.EvoxcError), name
    assert issubclass(evoxc.ValidationError, ValueError)
    assert issubclass(evoxc.DTypeError, TypeError)


def test_shape_and_dtype_errors_are_typed():
    with pytest.raises(evoxc.ShapeError):
        evoxc.trace(lambda a, b: a + b, TensorSpec((3,)), TensorSpec((4,)))
    with pytest.raises(evoxc.DTypeError):
        evoxc.trace(lambda a: evoxc.bitwise_and(a, a), TensorSpec((3,), evoxc.float32))


def test_unknown_and_future_backends_are_backend_errors():
    g = evoxc.trace(f, SX, SW)
    with pytest.raises(evoxc.BackendError, match="TVM, not offered.*not in this build"):
        evoxc.lower(g, "tvm")
    with pytest.raises(evoxc.BackendError, match="interp"):
        evoxc.lower(g, "nonsense")
    with pytest.raises(evoxc.DeviceError):
        evoxc.build(f, SX, SW, device=evoxc.Device("cuda", 0))


def test_devices_and_capabilities():
    ds = evoxc.devices()
    assert ds[0] == evoxc.Device("cpu", 0) and repr(ds[0]) == "Device(kind='cpu', index=0)"
    caps = evoxc.capabilities("interp")
    assert caps["symbolic_shapes"] and caps["regions"] and evoxc.float32 in caps["dtypes"]
    assert "interp" in evoxc.backends()


def test_run_limits():
    @evoxc.defn
    def forever(x):
        return evoxc.while_loop(lambda c: c < 1e30, lambda c: c * 1.0 + 0.0, x)

    exe = evoxc.build(forever, TensorSpec(()))
    with pytest.raises(evoxc.RunLimitError):
        evoxc.run(exe, evoxc.tensor(0.0), max_loop_iterations=1000)
    with pytest.raises(evoxc.RunLimitError):
        evoxc.run(exe, evoxc.tensor(0.0), timeout=0.05)


# ---- control flow ----

def test_newton_sqrt_while_loop_seed_example():
    @evoxc.defn
    def sqrt_newton(x):
        def cond_fn(s):
            y, prev = s
            return evoxc.greater(evoxc.abs(evoxc.subtract(y, prev)), 1e-6)

        def body_fn(s):
            y, prev = s
            return 0.5 * (y + x / y), y

        y, _prev = evoxc.while_loop(cond_fn, body_fn, (x, evoxc.constant(evoxc.zeros((), evoxc.float32))))
        return y

    exe = evoxc.build(sqrt_newton, TensorSpec((), evoxc.float32), device="cpu")
    assert abs(float(evoxc.run(exe, evoxc.tensor(2.0)).numpy()) - 1.4142135) < 1e-6


def test_cond_switch_scan_fori():
    def g(x, i):
        a = evoxc.cond(evoxc.greater(evoxc.sum(x), 0.0), lambda v: {"r": v * 2.0}, lambda v: {"r": v - 1.0}, x)
        b = evoxc.switch(i, [lambda v: v + 1.0, lambda v: v + 2.0, lambda v: v + 3.0], x)
        c, ys = evoxc.scan(lambda c, xi: (c + xi, c * xi), evoxc.fill((), 0.0), x)
        d = evoxc.fori_loop(0, 3, lambda k, acc: acc + evoxc.astype(k, evoxc.float32), evoxc.fill((), 0.0))
        return a["r"], b, c, ys, d

    exe = evoxc.build(g, TensorSpec((3,)), TensorSpec((), evoxc.int32))
    x = np.array([1.0, 2.0, 3.0], np.float32)
    a, b, c, ys, d = evoxc.run(exe, x, np.array(1, np.int32))
    assert a.numpy().tolist() == [2.0, 4.0, 6.0] and b.numpy().tolist() == [3.0, 4.0, 5.0]
    assert float(c.numpy()) == 6.0 and ys.numpy().tolist() == [0.0, 2.0, 9.0] and float(d.numpy()) == 3.0
    a, b, *_ = evoxc.run(exe, -x, np.array(7, np.int32))  # index clamps to the last branch
    assert a.numpy().tolist() == [-2.0, -3.0, -4.0] and b.numpy().tolist() == [2.0, 1.0, 0.0]


def test_cond_branches_must_agree():
    with pytest.raises(evoxc.TraceError, match="structure"):
        evoxc.trace(lambda x: evoxc.cond(x[0] > 0, lambda v: (v, v), lambda v: v, x), TensorSpec((2,)))


# ---- transforms ----

def test_per_sample_grad_seed_example():
    @evoxc.defn
    def loss(x, y, w):
        d = evoxc.subtract(evoxc.tanh(evoxc.dot(x, w)), y)
        return evoxc.mean(evoxc.multiply(d, d))

    psg = evoxc.vmap(evoxc.grad(loss, argnums=(2,)), in_axes=(0, 0, None), out_axes=(0,))
    specs = (TensorSpec((8, 4, 8)), TensorSpec((8, 4, 4)), TensorSpec((8, 4)))
    graph = psg(*specs)
    assert isinstance(graph, evoxc.Graph)
    exe = evoxc.load(evoxc.compile(evoxc.lower(graph)), device="cpu")
    dw, = evoxc.run(exe, evoxc.ones((8, 4, 8)), evoxc.zeros((8, 4, 4)), evoxc.ones((8, 4)))
    assert dw.shape == (8, 8, 4) and dw.dtype == evoxc.float32 and dw.device == evoxc.Device("cpu", 0)


def test_transforms_on_graphs_and_functions_agree():
    def sl(x, y, w):
        d = evoxc.subtract(evoxc.dot(x, w), y)
        return evoxc.mean(evoxc.multiply(d, d))

    specs = (TensorSpec((4, 3)), TensorSpec((4,)), TensorSpec((3,)))
    g = evoxc.trace(sl, *specs)
    gw_graph = evoxc.grad(g, argnums=(2,))
    gw_fn = evoxc.grad(sl, argnums=(2,))(*specs)
    assert gw_graph == gw_fn
    gb = evoxc.vmap(g, in_axes=(0, 0, None))
    assert gb.input_specs[0].shape[1:] == (4, 3)
    rng = np.random.default_rng(0)
    x, y, w = (rng.standard_normal(s.shape).astype(np.float32) for s in specs)
    dw, = evoxc.run(evoxc.build(gw_graph), x, y, w)
    np.testing.assert_allclose(dw.numpy(), 2 * x.T @ (x @ w - y) / 4, rtol=1e-5, atol=1e-6)
    vg = evoxc.value_and_grad(sl, argnums=2)(*specs)
    v, gw = evoxc.run(evoxc.build(vg), x, y, w)
    np.testing.assert_allclose(float(v.numpy()), np.mean((x @ w - y) ** 2), rtol=1e-5)
    np.testing.assert_allclose(gw.numpy(), dw.numpy(), rtol=1e-6)


def test_jvp_vjp_jacobians_hessian():
    def h(x):
        return evoxc.sum(x * x * x)

    s = TensorSpec((3,), evoxc.float64)
    x = np.array([1.0, 2.0, -1.0])
    (val, tan) = evoxc.run(evoxc.build(evoxc.jvp(h)(s)), (x,), (np.ones(3),))
    assert float(tan.numpy()) == pytest.approx(3 * np.sum(x ** 2))
    out, (ct,) = evoxc.run(evoxc.build(evoxc.vjp(h)(s)), (x,), np.array(1.0))
    np.testing.assert_allclose(ct.numpy(), 3 * x ** 2)
    jf = evoxc.run(evoxc.build(evoxc.jacfwd(lambda v: v * v)(s)), x)
    jr = evoxc.run(evoxc.build(evoxc.jacrev(lambda v: v * v)(s)), x)
    np.testing.assert_allclose(jf.numpy(), np.diag(2 * x))
    np.testing.assert_allclose(jr.numpy(), np.diag(2 * x))
    hs = evoxc.run(evoxc.build(evoxc.hessian(h)(s)), x)
    np.testing.assert_allclose(hs.numpy(), np.diag(6 * x))


def test_transform_errors_are_typed():
    with pytest.raises(evoxc.TransformError):
        evoxc.grad(lambda x: x * 2.0)(TensorSpec((3,)))  # not a scalar loss
    with pytest.raises(evoxc.ValidationError, match="differ"):
        evoxc.vmap(lambda a, b: a + b)(TensorSpec((3, 2)), TensorSpec((4, 2)))


# ---- caches and bind ----

def test_build_cached_seed_example():
    cache = evoxc.CompileCache(maxsize=64)
    exe_a = evoxc.build_cached(f, SX, SW, cache=cache, device="cpu")
    exe_b = evoxc.build_cached(f, SX, SW, cache=cache, device="cpu")
    assert exe_a is exe_b and cache.hits == 1 and cache.misses == 1
    evoxc.build_cached(f, SX, TensorSpec((8, 4), evoxc.float64), cache=cache)
    assert cache.misses == 2 and len(cache) == 2
    small = evoxc.CompileCache(maxsize=1)
    evoxc.build_cached(f, SX, SW, cache=small)
    evoxc.build_cached(f, TensorSpec((2, 8)), SW, cache=small)
    evoxc.build_cached(f, SX, SW, cache=small)
    assert small.misses == 3 and len(small) == 1


def test_bind_is_argument_sugar():
    exe = evoxc.build(f, SX, SW)
    run_w = evoxc.bind(exe, evoxc.ones((4, 8)))
    y = run_w(evoxc.ones((8, 4)))
    assert y.numpy().tolist() == evoxc.run(exe, evoxc.ones((4, 8)), evoxc.ones((8, 4))).numpy().tolist()


# ---- numpy and DLPack interop ----

def test_numpy_view_without_copy_and_lifetime():
    exe = evoxc.build(lambda x: x * 2.0, TensorSpec((1000,)))
    y = evoxc.run(exe, np.ones(1000, np.float32))
    a = y.numpy()
    b = y.numpy()
    assert np.shares_memory(a, b)  # both view the tensor's storage
    del y
    gc.collect()
    assert a.sum() == 2000.0  # the storage outlives the Tensor while the array lives


def test_tensor_from_numpy_copies_only_when_needed():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = evoxc.tensor(a)
    assert np.shares_memory(t.numpy(), a)
    t2 = evoxc.tensor(a.T)  # not contiguous -> copied
    assert not np.shares_memory(t2.numpy(), a) and t2.numpy().tolist() == a.T.tolist()
    buf = np.zeros(41, np.uint8)
    mis = np.frombuffer(buf.data, dtype=np.float32, count=10, offset=1)
    assert not mis.flags.aligned
    t3 = evoxc.tensor(mis)
    assert t3.shape == (10,) and not np.shares_memory(t3.numpy(), buf)
    assert evoxc.tensor(2.0).dtype == evoxc.float32 and evoxc.tensor(3).dtype == evoxc.int64
    assert evoxc.tensor([1.5, 2.5]).dtype == evoxc.float32
    assert evoxc.tensor(np.float64(1.0)).dtype == evoxc.float64
    assert np.asarray(evoxc.ones((2,))).tolist() == [1.0, 1.0]


def test_dlpack_numpy_roundtrip_without_copy():
    a = np.arange(6, dtype=np.int32)
    t = evoxc.from_dlpack(a)
    assert np.shares_memory(t.numpy(), a)
    assert t.__dlpack_device__() == (1, 0)
    back = np.from_dlpack(t)
    assert np.shares_memory(back, a)


def test_dlpack_torch_and_jax():
    torch = pytest.importorskip("torch")
    tt = torch.arange(5, dtype=torch.float32)
    t = evoxc.from_dlpack(tt)
    assert t.numpy().tolist() == [0, 1, 2, 3, 4]
    tt[0] = 42.0
    assert t.numpy()[0] == 42.0  # shared memory
    back = torch.from_dlpack(t)
    back[1] = 7.0
    assert t.numpy()[1] == 7.0


def test_dlpack_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    t = evoxc.tensor(np.arange(4, dtype=np.float32))
    j = jnp.from_dlpack(t)
    assert j.tolist() == [0.0, 1.0, 2.0, 3.0]
    back = evoxc.from_dlpack(jnp.arange(3, dtype=jnp.float32))
    assert back.numpy().tolist() == [0.0, 1.0, 2.0]
    del jax


def test_tensor_to_and_device_errors():
    t = evoxc.ones((2,))
    c = t.to("cpu")
    assert c.numpy().tolist() == [1.0, 1.0] and not np.shares_memory(c.numpy(), t.numpy())
    with pytest.raises(evoxc.DeviceError):
        t.to(evoxc.Device("cuda", 0))


# ---- packaging ----

def test_import_needs_only_numpy():
    code = ("import sys, evoxc; bad = [m for m in ('jax', 'torch', 'jaxlib') if m in sys.modules]; "
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_type_stubs_ship_with_the_package():
    pkg = os.path.dirname(evoxc.__file__)
    stub = os.path.join(pkg, "_core.pyi")
    assert os.path.exists(stub)
    text = open(stub).read()
    assert "class SymbolicTensor" in text and "def lower(" in text


# ---- the run path ----

def test_run_releases_the_gil():
    import threading

    @evoxc.defn
    def spin(x):
        return evoxc.fori_loop(0, 3_000_000, lambda i, c: c * 1.0000001 + 1e-9, x)

    exe = evoxc.build(spin, TensorSpec((), evoxc.float64))
    done = threading.Event()

    def worker():
        evoxc.run(exe, np.array(1.0))
        done.set()

    th = threading.Thread(target=worker)
    counter = 0
    th.start()
    while not done.is_set():
        counter += 1  # runs only while the worker does not hold the GIL
    th.join()
    assert counter > 10_000


def test_execute_writes_outputs_in_place():
    exe = evoxc.build(lambda a, b: (a + b, a * b), TensorSpec((3,)), TensorSpec((3,)))
    a, b = evoxc.tensor([1.0, 2.0, 3.0]), evoxc.tensor([4.0, 5.0, 6.0])
    out = [evoxc.zeros((3,)), evoxc.zeros((3,))]
    views = [o.numpy() for o in out]
    res = evoxc.execute(exe, [a, b], out)
    assert views[0].tolist() == [5.0, 7.0, 9.0] and views[1].tolist() == [4.0, 10.0, 18.0]
    assert res[0].numpy().tolist() == [5.0, 7.0, 9.0]
    fresh = evoxc.execute(exe, [a, b])
    assert fresh[1].numpy().tolist() == [4.0, 10.0, 18.0]


def test_missing_subsystems_are_named_errors():
    for name in ("dist",):
        with pytest.raises(evoxc.NotAvailableError, match=name):
            getattr(evoxc, name)
    assert issubclass(evoxc.NotAvailableError, evoxc.EvoxcError)
    with pytest.raises(AttributeError):
        evoxc.no_such_thing  # noqa: B018


def test_transformed_functions_compose_inside_a_trace():
    def loss(w, x):
        return evoxc.sum(evoxc.tanh(x * w))

    dloss = evoxc.grad(loss)

    @evoxc.defn
    def sgd_step(w, x):
        return w - 0.1 * dloss(w, x)  # grad of a function, called on SymbolicTensors: built and inlined

    s = TensorSpec((3,))
    g = evoxc.trace(sgd_step, s, s)
    w = np.array([0.1, -0.2, 0.3], np.float32)
    x = np.array([1.0, 2.0, -1.0], np.float32)
    out = evoxc.run(evoxc.build(g), w, x).numpy()
    expected = w - 0.1 * x * (1 - np.tanh(x * w) ** 2)
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    inner = evoxc.trace(lambda a: a * 2.0, TensorSpec((3,)))
    with pytest.raises(evoxc.TraceError, match="takes tensor<3xf32>"):
        evoxc.trace(lambda a: evoxc.call(inner, a), TensorSpec((4,)))
    assert evoxc.trace(lambda a: evoxc.call(inner, a) + 1.0, s).num_ops >= 2


def test_disk_cache_shared_between_processes(tmp_path):
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import time, evoxc
        g = evoxc.trace(lambda x: evoxc.tanh(x * x + 1.0), evoxc.TensorSpec((4,)))
        t0 = time.perf_counter()
        art, hit = evoxc.DiskCache({str(tmp_path)!r}).compile(evoxc.lower(g))
        dt = time.perf_counter() - t0
        print(hit, evoxc.run(evoxc.load(art), evoxc.ones((4,))).numpy().tolist(), dt)
    """)
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
            for _ in range(2)]
    assert runs[0][0] == "False" and runs[1][0] == "True"
    assert runs[0][1:-1] == runs[1][1:-1]
    assert len(list(tmp_path.iterdir())) == 1
    assert "features" in evoxc.DiskCache.host_cpu()


def test_disk_cache_is_private_and_refuses_what_others_could_write(tmp_path):
    # The seed's cache rule, tried as a user would: a directory or an entry others could write is never loaded.
    import stat
    d = tmp_path / "cache"
    g = evoxc.trace(lambda x: evoxc.sin(x) * 3.0, evoxc.TensorSpec((4,)))
    cache = evoxc.DiskCache(str(d))
    art, hit = cache.compile(evoxc.lower(g))
    assert not hit
    (entry,) = list(d.iterdir())
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    os.chmod(d, 0o777)
    with pytest.raises(evoxc.PersistenceError, match="writable by its group or others"):
        cache.compile(evoxc.lower(g))
    os.chmod(d, 0o700)
    os.chmod(entry, 0o666)
    with pytest.raises(evoxc.PersistenceError, match="mode 0666"):
        cache.compile(evoxc.lower(g))
    os.chmod(entry, 0o600)
    assert cache.compile(evoxc.lower(g))[1]


# ---- what a new user trips over (issue 24's read-through) ----

def test_a_negative_extent_in_a_spec_is_a_shape_error():
    with pytest.raises(evoxc.ShapeError, match="extent -3 of axis 0 is negative"):
        TensorSpec((-3,), evoxc.float32)
    TensorSpec((0, evoxc.Dim("N")), evoxc.float32)  # zero and symbolic extents are fine


def test_vmap_extent_mismatch_names_the_arguments():
    f = evoxc.vmap(lambda a, b: a + b)
    with pytest.raises(evoxc.ValidationError, match=r"mapped extents differ: 3 at \[0\], 5 at \[1\]"):
        f(TensorSpec((3, 2)), TensorSpec((5, 2)))
    g = evoxc.vmap(lambda d: d["x"] * d["y"], in_axes=0)
    with pytest.raises(evoxc.ValidationError, match=r"3 at \[0\]\['x'\], 4 at \[0\]\['y'\]"):
        g({"x": TensorSpec((3,)), "y": TensorSpec((4,))})


def test_arrays_evoxc_has_no_dtype_for_are_dtype_errors():
    with pytest.raises(evoxc.DTypeError, match="object"):
        evoxc.tensor(np.array([1, "a"], dtype=object))
    with pytest.raises(evoxc.DTypeError, match="complex128"):
        evoxc.tensor(np.ones(3, np.complex128))
    with pytest.raises(evoxc.DTypeError, match="not a DLPack producer"):
        evoxc.from_dlpack(object())
    with pytest.raises(evoxc.DTypeError, match="object"):
        evoxc.from_dlpack(np.array([None, None]))


def test_eye_and_identity_as_in_numpy():
    for args in [(3,), (3, 4), (4, 3, 1), (4, 3, -2), (2, 2, 5), (0,)]:
        g = evoxc.trace(lambda: evoxc.eye(*args))
        np.testing.assert_array_equal(evoxc.run(evoxc.build(g)).numpy(), np.eye(*args, dtype=np.float32))
    g = evoxc.trace(lambda: (evoxc.identity(3, evoxc.int32), evoxc.numpy.eye(2, dtype=evoxc.bool_)))
    i3, e2 = evoxc.run(evoxc.build(g))
    np.testing.assert_array_equal(i3.numpy(), np.identity(3, np.int32))
    np.testing.assert_array_equal(e2.numpy(), np.eye(2, dtype=bool))
    with pytest.raises(evoxc.ShapeError):
        evoxc.trace(lambda: evoxc.eye(-1))


def test_examples_print_no_warnings():
    out = subprocess.run([sys.executable, "-W", "error::UserWarning", "examples/newton_sqrt.py"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr, out.stderr


def test_numpy_scalars_are_data_in_run_as_in_evaluate():
    # np.float64 subclasses float; a Python float in a run position is a static value, a numpy scalar is a rank-0
    # input (what evaluate makes of it too).
    exe = evoxc.build(lambda x, s: x * s, TensorSpec((2,), evoxc.float64), TensorSpec((), evoxc.float64))
    x = np.array([1.0, 2.0])
    assert exe(x, np.float64(3.0)).numpy().tolist() == [3.0, 6.0]
    assert evoxc.evaluate(lambda x, s: x * s, x, np.float64(3.0)).numpy().tolist() == [3.0, 6.0]
