"""JAX programs without JAX at run time (the seed's cx.lower + compile_program): evoxc.xla.lower_jax exports a JAX
function to a Program, which saves, loads, compiles and runs on the xla backend in a process that never imports JAX,
with the program's real dtypes; evoxc.stablehlo_call places such a program inside an evoxc graph."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import evoxc

if not evoxc.xla.available()[0]:
    pytest.skip(f"no PJRT plugin loads here: {evoxc.xla.available()[1]}", allow_module_level=True)
jax = pytest.importorskip("jax", reason="lower_jax needs JAX (requirements.txt installs it)")
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _sds(shape, dtype):
    return jax.ShapeDtypeStruct(shape, dtype)


def test_the_seed_example():
    program = evoxc.xla.lower_jax(lambda x: jnp.sin(x) * 2, [_sds((3,), jnp.float32)])
    exe = program.compile()
    x = np.array([0.0, 1.0, 2.0], np.float32)
    out = evoxc.run(exe, x).numpy()
    np.testing.assert_allclose(out, np.sin(x) * 2, rtol=1e-6)
    assert "stablehlo_call" in program.graph.to_string()
    assert repr(program) == "<evoxc.xla.Program (TensorSpec(tensor<3xf32>)) -> (TensorSpec(tensor<3xf32>))>"


DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16",
          "float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_goes_in_and_comes_out_as_itself(dtype):
    jdt = jnp.dtype(dtype)

    def f(x, y):
        if jdt == jnp.bool_:
            return x ^ y, x & y
        return x + y, jnp.maximum(x, y)

    program = evoxc.xla.lower_jax(f, [_sds((2, 3), jdt), _sds((2, 3), jdt)])
    assert [str(s.dtype) for s in program.input_specs] == [dtype, dtype]
    assert [str(s.dtype) for s in program.output_specs] == [dtype, dtype]
    rng = np.random.default_rng(7)
    if dtype == "bool":
        a, b = rng.random((2, 3)) > 0.5, rng.random((2, 3)) > 0.5
    elif dtype in ("float16", "bfloat16", "float32", "float64"):
        a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    else:
        a, b = rng.integers(0, 50, (2, 3)), rng.integers(0, 50, (2, 3))
    # Inputs through DLPack, which carries bfloat16 too.
    a, b = jnp.asarray(a, jdt), jnp.asarray(b, jdt)
    want = jax.jit(f)(a, b)
    if dtype == "bfloat16":
        # numpy has no bfloat16, so evoxc hands no bfloat16 tensor out: the program's results are converted to
        # float32 by evoxc ops around the stablehlo_call (exact: every bfloat16 is a float32).
        spec = evoxc.TensorSpec((2, 3), evoxc.bfloat16)
        exe = evoxc.build(lambda x, y: [evoxc.astype(r, evoxc.float32) for r in evoxc.stablehlo_call(program.text,
                                                                                                     [x, y])],
                          spec, spec, backend="xla")
        got = [r.numpy() for r in evoxc.run(exe, a, b)]
        want = [np.asarray(w.astype(jnp.float32)) for w in want]
    else:
        got = [r.numpy() for r in evoxc.run(program.compile(), a, b)]
    for g, w in zip(got, want):
        assert g.dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, np.asarray(w))


def test_pytrees_are_flattened_in_and_out():
    def f(a, pair):
        b, c = pair
        return {"s": a * b, "t": (a + c, jnp.sum(c))}

    program = evoxc.xla.lower_jax(f, [_sds((2,), jnp.float32), (_sds((2,), jnp.float32), _sds((2,), jnp.float32))])
    assert len(program.input_specs) == 3 and len(program.output_specs) == 3
    a, b, c = (np.arange(2, dtype=np.float32) + k for k in range(3))
    out = evoxc.run(program.compile(), a, b, c)
    flat = jax.tree_util.tree_leaves(jax.jit(f)(a, (b, c)))
    assert len(out) == 3
    for g, w in zip(out, flat):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w))


def test_a_saved_program_runs_in_a_process_without_jax(tmp_path):
    program = evoxc.xla.lower_jax(lambda x, y: jnp.tanh(x @ y), [_sds((3, 4), jnp.float64), _sds((4, 2), jnp.float64)])
    path = tmp_path / "prog.evoxcgraph"
    program.save(path)
    script = f"""
import sys, numpy as np, evoxc
p = evoxc.xla.Program.load({str(path)!r})
x = np.arange(12, dtype=np.float64).reshape(3, 4) / 10
y = np.arange(8, dtype=np.float64).reshape(4, 2) / 10
out = evoxc.run(p.compile(), x, y).numpy()
np.testing.assert_allclose(out, np.tanh(x @ y), rtol=1e-12)
assert "jax" not in sys.modules and "jaxlib" not in sys.modules, sorted(m for m in sys.modules if "jax" in m)
print("ok", out.dtype)
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok float64"


def test_a_program_inside_an_evoxc_graph():
    program = evoxc.xla.lower_jax(lambda x: jnp.cumsum(jnp.sin(x)), [_sds((5,), jnp.float32)])

    def g(x, w):
        (y,) = evoxc.stablehlo_call(program.text, [x * w])
        return evoxc.sum(y * y)

    spec = evoxc.TensorSpec((5,), evoxc.float32)
    exe = evoxc.build(g, spec, spec, backend="xla")
    x = np.linspace(-1, 1, 5).astype(np.float32)
    w = np.full(5, 2.0, np.float32)
    got = float(evoxc.run(exe, x, w).numpy())
    want = float(np.sum(np.cumsum(np.sin(x * w)) ** 2))
    assert got == pytest.approx(want, rel=1e-5)
    with pytest.raises(evoxc.BackendError, match='build the graph with backend="xla"'):
        evoxc.build(g, spec, spec)  # the interpreter
    with pytest.raises(evoxc.TransformError, match="opaque to evoxc's transforms"):
        evoxc.vmap(evoxc.trace(g, spec, spec))


def test_a_compiled_program_goes_through_the_c_abi_and_the_disk_cache(tmp_path):
    program = evoxc.xla.lower_jax(lambda x: x * 3 + 1, [_sds((4,), jnp.int32)])
    art = evoxc.compile(evoxc.lower(program.graph, "xla"))
    path = str(tmp_path / "p.evoxcartifact")
    art.save(path)
    exe = evoxc.load(evoxc.CompiledArtifact.load(path))
    np.testing.assert_array_equal(evoxc.run(exe, np.arange(4, dtype=np.int32)).numpy(), np.arange(4) * 3 + 1)
    cache = evoxc.DiskCache(str(tmp_path / "cache"))
    _, hit = cache.compile(evoxc.lower(program.graph, "xla"))
    _, hit2 = cache.compile(evoxc.lower(program.graph, "xla"))
    assert (hit, hit2) == (False, True)


def test_bad_programs_are_typed_errors(tmp_path):
    with pytest.raises(evoxc.BackendError, match="not one stablehlo_call of its inputs"):
        evoxc.xla.Program(evoxc.trace(lambda x: x + 1, evoxc.TensorSpec((2,), evoxc.float32)))
    other = tmp_path / "other.evoxcgraph"
    evoxc.trace(lambda x: x + 1, evoxc.TensorSpec((2,), evoxc.float32)).save(str(other))
    with pytest.raises(evoxc.BackendError, match="not one stablehlo_call"):
        evoxc.xla.Program.load(other)
    with pytest.raises(evoxc.DTypeError, match="dynamic extent"):
        evoxc.xla.Program.from_text("module { func.func public @main(%a: tensor<?xf32>) -> tensor<f32> { } }")


LINALG = {
    "cholesky": (jnp.linalg.cholesky, lambda a: [np.linalg.cholesky(a)]),
    "solve": (lambda a, b: jnp.linalg.solve(a, b), None),
    "qr": (jnp.linalg.qr, None),
    "eigh": (jnp.linalg.eigh, None),
    "svd": (lambda a: jnp.linalg.svd(a, full_matrices=False), None),
    "lu": (jax.scipy.linalg.lu, None),
}


def _spd(n, dtype, seed=3):
    m = np.random.default_rng(seed).standard_normal((n, n))
    return (m @ m.T + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(LINALG))
def test_jax_linalg_runs_on_the_plugin_with_jaxlibs_lapack_handlers(name, dtype):
    fn, _ = LINALG[name]
    a = _spd(4, dtype)
    b = np.arange(4, dtype=dtype)
    args = (a, b) if name == "solve" else (a,)
    program = evoxc.xla.lower_jax(fn, [_sds(x.shape, x.dtype) for x in args])
    assert "custom_call @lapack_" in program.text, "JAX lowered this without LAPACK: the test checks nothing"
    got = [np.asarray(r.numpy() if hasattr(r, "numpy") else r) for r in _leaves(evoxc.run(program.compile(), *args))]
    want = [np.asarray(w) for w in jax.tree_util.tree_leaves(jax.jit(fn)(*args))]
    tol = 1e-4 if dtype == "float32" else 1e-10
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    # Against numpy too, where the answer is unique.
    if name == "cholesky":
        np.testing.assert_allclose(got[0], np.linalg.cholesky(a), rtol=tol, atol=tol)
    if name == "solve":
        np.testing.assert_allclose(got[0], np.linalg.solve(a, b), rtol=tol, atol=tol)
    if name == "eigh":
        np.testing.assert_allclose(got[0], np.linalg.eigvalsh(a), rtol=tol, atol=tol)
    if name == "svd":
        np.testing.assert_allclose(got[1], np.linalg.svd(a, compute_uv=False), rtol=tol, atol=tol)
    assert set(evoxc.xla.register_jax_targets()) <= set(evoxc.xla.ffi_targets())


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def test_a_linalg_program_runs_in_a_process_without_jax(tmp_path):
    program = evoxc.xla.lower_jax(lambda a, b: jnp.linalg.solve(a, b), [_sds((3, 3), jnp.float64),
                                                                         _sds((3,), jnp.float64)])
    path = tmp_path / "solve.evoxcgraph"
    program.save(path)
    script = f"""
import sys, numpy as np, evoxc
p = evoxc.xla.Program.load({str(path)!r})
a = np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]])
b = np.array([1.0, 2, 3])
x = evoxc.run(p.compile(), a, b).numpy()
np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-12)
assert "jax" not in sys.modules, "JAX was imported"
print("ok", "jaxlib" in sys.modules)
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok True"  # jaxlib's LAPACK kernels, not JAX


def test_custom_calls_without_a_typed_handler_are_backend_errors_naming_the_target():
    text = """module {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.custom_call @evoxc_no_such_target(%arg0) {api_version = 4 : i32} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}"""
    with pytest.raises(evoxc.BackendError, match="evoxc_no_such_target"):
        evoxc.xla.Program.from_text(text).compile()
    with pytest.raises(evoxc.BackendError, match="api_version=0 is an untyped custom call"):
        evoxc.xla.register_ffi_target("legacy_target", object(), api_version=0)
    with pytest.raises(TypeError, match="must be a PyCapsule"):
        evoxc.xla.register_ffi_target("bad_target", object())
    # A Python callback (jax.pure_callback) cannot leave the process: lower_jax refuses it, and such a call in
    # module text has no handler in the plugin, refused at compile naming its target.
    with pytest.raises(evoxc.BackendError, match="Python callbacks"):
        evoxc.xla.lower_jax(lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((2,), jnp.float32), x),
                            [_sds((2,), jnp.float32)])
    callback = text.replace("evoxc_no_such_target", "xla_ffi_python_cpu_callback")
    with pytest.raises(evoxc.BackendError, match="xla_ffi_python_cpu_callback"):
        evoxc.xla.Program.from_text(callback).compile()
