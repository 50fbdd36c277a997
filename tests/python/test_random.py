"""evoxc.random: keys, the three counter-based streams (splitmix64, threefry2x32, philox4x32_10) checked bit for bit
against the numpy reference (random_reference.py, itself checked against the published known-answer vectors and
against jax.random), JAX parity for threefry keys, determinism across processes and backends, batched keys and vmap,
the distributions' statistics at fixed seeds, gradients through draws, and the typed errors of bad input."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import evoxc
import random_reference as ref
from evoxc import TensorSpec

HERE = os.path.dirname(os.path.abspath(__file__))

ALGS = ("splitmix64", "threefry2x32", "philox4x32_10")
BITS = ("uint8", "uint16", "uint32", "uint64")
SHAPES = ((), (7,), (3, 5), (0,), (4, 0))
SEEDS = (0, 42, 2**31 - 1)
N_STAT = 2**16  # samples per distribution test


def ev(fn, *args, backend="interp"):
    """evoxc.evaluate(fn, *args) with every output as a numpy array (a tuple when fn returns several)."""
    out = evoxc.evaluate(fn, *args, backend=backend)
    if isinstance(out, (tuple, list)):
        return tuple(np.array(o.numpy()) for o in out)
    return np.array(out.numpy())


def npdt(name):
    return np.dtype(name)


def key_of(seed, alg):
    """A reference key as numpy (what evoxc.random.key(seed, alg) must equal)."""
    return ref.ref_key(seed, alg)


def jax_modules():
    """(jax, jax.numpy), or a pytest skip naming why (callers pin jax.threefry_partitionable(True), JAX's default)."""
    jax = pytest.importorskip("jax", reason="jax is not installed: the JAX parity checks need it")
    import jax.numpy as jnp  # noqa: PLC0415

    return jax, jnp


def jax_key_data(jax, seed):
    return np.asarray(jax.random.key_data(jax.random.PRNGKey(seed)))


def assert_normal_close(got, want, what=""):
    """float32 normals from two erf_inv implementations: rtol 1e-6 in the bulk (|z| < 3); in the tails XLA's float32
    erf_inv (Giles' polynomial, no refinement) is up to ~6e-6 relative off the exact value, so rtol 1e-5 there."""
    assert got.shape == want.shape and got.dtype == want.dtype
    bulk = np.abs(want) < 3
    np.testing.assert_allclose(got[bulk], want[bulk], rtol=1e-6, atol=1e-7, err_msg=f"{what} (|z| < 3)")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7, err_msg=what)


# ---------------------------------------------------------------- the reference itself


def test_reference_reproduces_published_known_answer_vectors():
    assert ref.self_check() == 7
    # A wrong rotation schedule or key injection must not pass: perturbing the key changes the output.
    assert tuple(int(v) for v in ref.threefry2x32(1, 0, 0, 0)) != ref.KATS["threefry2x32_20"][0][2]
    assert tuple(int(v) for v in ref.philox4x32_10(0, 0, 0, 0, 1, 0)) != ref.KATS["philox4x32_10"][0][2]


@pytest.mark.parametrize("seed", SEEDS)
def test_reference_threefry_stream_matches_jax(seed):
    jax, jnp = jax_modules()
    with jax.threefry_partitionable(True):
        k = jax.random.PRNGKey(seed)
        np.testing.assert_array_equal(ref.ref_key(seed, "threefry2x32"), jax_key_data(jax, seed))
        key = ref.ref_key(seed, "threefry2x32")
        for shape in ((7,), (3, 5), (1000,)):
            for name in ("uint8", "uint16", "uint32"):
                want = np.asarray(jax.random.bits(k, shape, getattr(jnp, name)))
                np.testing.assert_array_equal(ref.ref_bits(key, shape, name), want, err_msg=f"{name}{shape}")
        for num in (1, 2, 5):
            np.testing.assert_array_equal(ref.ref_split(key, num), np.asarray(jax.random.key_data(
                jax.random.split(k, num))))
        for d in (0, 1, 12345, 2**31 - 1):
            np.testing.assert_array_equal(ref.ref_fold_in(key, d), np.asarray(jax.random.fold_in(k, d)))
        for d in (0, 1, 6):
            np.testing.assert_array_equal(ref.ref_fold_in(key, d), ref.ref_split(key, 7)[d])
        for lo, hi in ((0.0, 1.0), (-2.5, 4.0)):
            for name, jdt in (("float32", jnp.float32), ("float16", jnp.float16), ("bfloat16", jnp.bfloat16)):
                got = ref.ref_uniform(key, (1000,), name, lo, hi)
                with jax.disable_jit():  # op by op: jitted XLA CPU fuses unit * (hi - lo) + lo into an FMA
                    want = np.asarray(jax.random.uniform(k, (1000,), jdt, lo, hi))
                assert got.dtype == want.dtype
                as_uint = np.uint16 if got.itemsize == 2 else np.uint32
                np.testing.assert_array_equal(got.view(as_uint), want.view(as_uint),
                                              err_msg=f"uniform {name} [{lo}, {hi})")
                jitted = np.asarray(jax.random.uniform(k, (1000,), jdt, lo, hi))
                if (lo, hi) == (0.0, 1.0):  # unit * 1 + 0 is exact: the FMA changes nothing
                    np.testing.assert_array_equal(got.astype(np.float32), jitted.astype(np.float32))
                else:  # one rounding instead of two: at most an ulp of unit * (hi - lo) apart
                    tol = float(np.finfo(got.dtype).eps) * (hi - lo)
                    np.testing.assert_allclose(got.astype(np.float64), jitted.astype(np.float64), rtol=0, atol=tol)
        pytest.importorskip("scipy", reason="scipy is not installed: the reference normal uses scipy.special.erfinv")
        want = np.asarray(jax.random.normal(k, (1000,), jnp.float32))
        assert_normal_close(ref.ref_normal(key, (1000,), np.float32), want, "reference normal vs jax")


_JAX_X64_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import jax, jax.numpy as jnp
    assert jax.config.jax_enable_x64
    out = {}
    with jax.threefry_partitionable(True):
        for seed in (0, 42, 2**31 - 1, 2**32 - 1):
            k = jax.random.PRNGKey(seed)
            out[str(seed)] = {
                "key": np.asarray(jax.random.key_data(k)).tolist(),
                "bits64": np.asarray(jax.random.bits(k, (3, 5), jnp.uint64)).tolist(),
                "uniform64": np.asarray(jax.random.uniform(k, (3, 5), jnp.float64)).view(np.uint64).tolist(),
                "uniform64_range": np.asarray(jax.random.uniform(k, (64,), jnp.float64, -2.5, 4.0))
                    .view(np.uint64).tolist(),
            }
            with jax.disable_jit():  # op by op: unfused unit * (hi - lo) + lo, two roundings like evoxc's definition
                out[str(seed)]["uniform64_range_nojit"] = np.asarray(
                    jax.random.uniform(k, (64,), jnp.float64, -2.5, 4.0)).view(np.uint64).tolist()
    json.dump(out, sys.stdout)
""")


@pytest.fixture(scope="module")
def jax_x64():
    """jax.random's uint64 bits and float64 uniforms for a few seeds, computed in a subprocess with x64 enabled."""
    pytest.importorskip("jax", reason="jax is not installed: the JAX parity checks need it")
    env = dict(os.environ, JAX_ENABLE_X64="1", JAX_PLATFORMS="cpu")
    r = subprocess.run([sys.executable, "-c", _JAX_X64_SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return {int(s): v for s, v in json.loads(r.stdout).items()}


def test_reference_64bit_stream_matches_jax_x64(jax_x64):
    assert set(jax_x64) == {0, 42, 2**31 - 1, 2**32 - 1}
    for seed, want in jax_x64.items():
        key = ref.ref_key(seed, "threefry2x32")
        np.testing.assert_array_equal(key, np.array(want["key"], np.uint32))
        np.testing.assert_array_equal(ref.ref_bits(key, (3, 5), np.uint64), np.array(want["bits64"], np.uint64))
        np.testing.assert_array_equal(ref.ref_uniform(key, (3, 5), np.float64).view(np.uint64),
                                      np.array(want["uniform64"], np.uint64))
        got = ref.ref_uniform(key, (64,), np.float64, -2.5, 4.0)
        np.testing.assert_array_equal(got.view(np.uint64), np.array(want["uniform64_range_nojit"], np.uint64))
        np.testing.assert_allclose(got, np.array(want["uniform64_range"], np.uint64).view(np.float64), rtol=0,
                                   atol=6.5 * np.finfo(np.float64).eps)  # jitted: one FMA rounding


# ---------------------------------------------------------------- keys


@pytest.mark.parametrize("seed", (0, 1, 42, 2**31 - 1, 2**32 - 1, 2**32, 2**40 + 7, 2**63 - 1, 2**63, 2**64 - 1, -1,
                                  -5))
def test_key_layout(seed):
    k = evoxc.random.key(seed)  # splitmix64 is the default
    assert isinstance(k, evoxc.Tensor) and k.dtype == evoxc.int64 and tuple(k.shape) == ()
    assert int(k.numpy()) == int(np.array(seed & ref.M64, np.uint64).view(np.int64))
    t = evoxc.random.key(seed, algorithm="threefry2x32")
    assert t.dtype == evoxc.uint32 and tuple(t.shape) == (2,)
    s = seed & ref.M64
    assert t.numpy().tolist() == [s >> 32, s & ref.M32]
    p = evoxc.random.key(seed, "philox4x32_10")
    assert p.dtype == evoxc.uint32 and tuple(p.shape) == (4,)
    assert p.numpy().tolist() == [s & ref.M32, s >> 32, 0, 0]
    for alg in ALGS:
        np.testing.assert_array_equal(evoxc.random.key(seed, alg).numpy(), key_of(seed, alg))


@pytest.mark.parametrize("seed", SEEDS)
def test_threefry_key_equals_jax_prngkey(seed):
    jax, _ = jax_modules()
    np.testing.assert_array_equal(evoxc.random.key(seed, "threefry2x32").numpy(), jax_key_data(jax, seed))


# ---------------------------------------------------------------- known answers through evoxc


def test_known_answers_through_evoxc():
    # threefry: split(key, 1)[0] = threefry(k0, k1, 0, 0); fold_in(key, 0) is the same block; bits uint64 (1,) too.
    for (k0, k1), ctr, want in ref.KATS["threefry2x32_20"]:
        if ctr != (0, 0):
            continue  # only counter (0, 0) is reachable through the API (the others are checked in the reference)
        key = np.array([k0, k1], np.uint32)
        assert ev(lambda k: evoxc.random.split(k, 1), key)[0].tolist() == list(want)
        assert ev(lambda k: evoxc.random.fold_in(k, 0), key).tolist() == list(want)
        assert ev(lambda k: evoxc.random.bits(k, (1,), evoxc.uint64), key).tolist() == [(want[0] << 32) | want[1]]
        assert ev(lambda k: evoxc.random.bits(k, (1,), evoxc.uint32), key).tolist() == [want[0] ^ want[1]]
    # philox: the child 0 of split(key=(k0, k1, c2, c3)) is philox(ctr=(0, 0, c2, c3), key=(k0, k1)).
    for ctr, (k0, k1), want in ref.KATS["philox4x32_10"]:
        if ctr[:2] != (0, 0):
            continue
        key = np.array([k0, k1, ctr[2], ctr[3]], np.uint32)
        assert ev(lambda k: evoxc.random.split(k, 1), key)[0].tolist() == list(want)
        assert ev(lambda k: evoxc.random.fold_in(k, 0), key).tolist() == list(want)
        assert ev(lambda k: evoxc.random.bits(k, (4,), evoxc.uint32), key).tolist() == list(want)
        assert ev(lambda k: evoxc.random.bits(k, (2,), evoxc.uint64), key).tolist() == [
            (want[0] << 32) | want[1], (want[2] << 32) | want[3]]
    # splitmix64: the stream of key s is Vigna's splitmix64 seeded with s.
    for seed, want in ref.KATS["splitmix64"]:
        got = ev(lambda k: evoxc.random.bits(k, (5,), evoxc.uint64), evoxc.random.key(seed))
        assert got.dtype == np.uint64 and got.tolist() == list(want)


# ---------------------------------------------------------------- evoxc == the reference


@pytest.mark.parametrize("alg", ALGS)
@pytest.mark.parametrize("dtype", BITS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_bits_match_reference(alg, dtype, shape):
    for seed in (0, 7, 2**32 + 3):
        key = key_of(seed, alg)
        got = ev(lambda k: evoxc.random.bits(k, shape, getattr(evoxc, dtype)), key)
        want = ref.ref_bits(key, shape, dtype)
        assert got.dtype == npdt(dtype) and got.shape == shape
        np.testing.assert_array_equal(got, want, err_msg=f"{alg} seed {seed} {dtype}{shape}")


@pytest.mark.parametrize("alg", ALGS)
def test_bits_default_shape_and_dtype(alg):
    key = key_of(3, alg)
    got = ev(lambda k: evoxc.random.bits(k), key)
    assert got.dtype == np.uint32 and got.shape == ()
    assert got == ref.ref_bits(key, (), np.uint32)


@pytest.mark.parametrize("alg", ALGS)
@pytest.mark.parametrize("num", (1, 2, 5))
def test_split_matches_reference(alg, num):
    for seed in (0, 7, 2**40 + 1):
        key = key_of(seed, alg)
        got = ev(lambda k: evoxc.random.split(k, num), key)
        want = ref.ref_split(key, num)
        assert got.dtype == key.dtype and got.shape == (num,) + key.shape
        np.testing.assert_array_equal(got, want, err_msg=f"{alg} seed {seed}")
        assert len({tuple(np.atleast_1d(r).tolist()) for r in got}) == num  # distinct children
    got2 = ev(lambda k: evoxc.random.split(k), key)  # num defaults to 2
    np.testing.assert_array_equal(got2, ref.ref_split(key, 2))


@pytest.mark.parametrize("alg", ALGS)
def test_fold_in_matches_reference(alg):
    key = key_of(11, alg)
    for d in (0, 1, 5, 2**31 - 1):
        got = ev(lambda k: evoxc.random.fold_in(k, d), key)
        assert got.dtype == key.dtype and got.shape == key.shape
        np.testing.assert_array_equal(got, ref.ref_fold_in(key, d), err_msg=f"{alg} data {d}")
    # fold_in(k, d) is split child d (JAX's partitionable scheme; evoxc's definition for every algorithm).
    children = ev(lambda k: evoxc.random.split(k, 6), key)
    for d in range(6):
        np.testing.assert_array_equal(ev(lambda k: evoxc.random.fold_in(k, d), key), children[d])
    # Data as a rank-0 int32 / uint32 tensor (traced, not static).
    for d in (np.array(-7, np.int32), np.array(0xFFFFFFF0, np.uint32), np.array(3, np.int32)):
        got = ev(lambda k, x: evoxc.random.fold_in(k, x), key, d)
        np.testing.assert_array_equal(got, ref.ref_fold_in(key, int(d)), err_msg=f"{alg} data {d!r}")
    np.testing.assert_array_equal(ev(lambda k, x: evoxc.random.fold_in(k, x), key, np.array(3, np.int32)),
                                  ev(lambda k: evoxc.random.fold_in(k, 3), key))


@pytest.mark.parametrize("alg,other", (("splitmix64", np.uint64), ("threefry2x32", np.int32),
                                       ("philox4x32_10", np.int32)))
def test_key_dtype_variants_name_the_same_stream(alg, other):
    key = key_of(123, alg)
    alt = key.view(other)
    a = ev(lambda k: evoxc.random.bits(k, (9,), evoxc.uint32), key)
    b = ev(lambda k: evoxc.random.bits(k, (9,), evoxc.uint32), alt)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, ref.ref_bits(key, (9,), np.uint32))
    s = ev(lambda k: evoxc.random.split(k, 3), alt)
    assert s.dtype == alt.dtype  # a split keeps the key's dtype
    np.testing.assert_array_equal(s.view(key.dtype), ref.ref_split(key, 3))


@pytest.mark.parametrize("alg", ALGS)
@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
@pytest.mark.parametrize("lo,hi", ((0.0, 1.0), (-2.5, 4.0)))
def test_uniform_matches_reference(alg, dtype, lo, hi):
    key = key_of(2024, alg)
    for shape in ((), (7,), (3, 5), (0,)):
        got = ev(lambda k: evoxc.random.uniform(k, shape, getattr(evoxc, dtype), lo, hi), key)
        want = ref.ref_uniform(key, shape, dtype, lo, hi)
        assert got.dtype == npdt(dtype) and got.shape == shape
        np.testing.assert_array_equal(got, want, err_msg=f"{alg} {dtype}{shape} [{lo}, {hi})")
        assert np.all((got >= lo) & (got < hi))


@pytest.mark.parametrize("alg", ALGS)
def test_uniform_bfloat16_matches_reference(alg):
    key = key_of(5, alg)
    got = ev(lambda k: evoxc.astype(evoxc.random.uniform(k, (64,), evoxc.bfloat16), evoxc.float32), key)
    want = ref.ref_uniform(key, (64,), "bfloat16").astype(np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("alg", ALGS)
def test_uniform_defaults(alg):
    key = key_of(9, alg)
    got = ev(lambda k: evoxc.random.uniform(k), key)
    assert got.dtype == np.float32 and got.shape == ()
    assert got == ref.ref_uniform(key, (), np.float32)


@pytest.mark.parametrize("alg", ALGS)
def test_normal_matches_reference(alg):
    pytest.importorskip("scipy", reason="scipy is not installed: the reference normal uses scipy.special.erfinv")
    key = key_of(77, alg)
    got = ev(lambda k: evoxc.random.normal(k, (500,)), key)
    assert got.dtype == np.float32 and got.shape == (500,)
    np.testing.assert_allclose(got, ref.ref_normal(key, (500,), np.float32), rtol=1e-6, atol=1e-7)
    got64 = ev(lambda k: evoxc.random.normal(k, (200,), evoxc.float64), key)
    assert got64.dtype == np.float64
    np.testing.assert_allclose(got64, ref.ref_normal(key, (200,), np.float64), rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- threefry keys: evoxc == jax.random


@pytest.mark.parametrize("seed", SEEDS)
def test_threefry_matches_jax(seed):
    jax, jnp = jax_modules()
    key = evoxc.random.key(seed, "threefry2x32")
    with jax.threefry_partitionable(True):
        k = jax.random.PRNGKey(seed)
        for shape in ((), (7,), (3, 5)):
            for name in ("uint8", "uint16", "uint32"):
                got = ev(lambda t: evoxc.random.bits(t, shape, getattr(evoxc, name)), key)
                np.testing.assert_array_equal(got, np.asarray(jax.random.bits(k, shape, getattr(jnp, name))),
                                              err_msg=f"bits {name}{shape}")
        for num in (2, 3):
            np.testing.assert_array_equal(ev(lambda t: evoxc.random.split(t, num), key),
                                          np.asarray(jax.random.key_data(jax.random.split(k, num))))
        for d in (0, 1, 12345):
            np.testing.assert_array_equal(ev(lambda t: evoxc.random.fold_in(t, d), key),
                                          np.asarray(jax.random.fold_in(k, d)))
        for name in ("float16", "float32"):
            got = ev(lambda t: evoxc.random.uniform(t, (3, 5), getattr(evoxc, name)), key)
            want = np.asarray(jax.random.uniform(k, (3, 5), getattr(jnp, name)))
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"uniform {name}")
        got = ev(lambda t: evoxc.astype(evoxc.random.uniform(t, (64,), evoxc.bfloat16), evoxc.float32), key)
        np.testing.assert_array_equal(got, np.asarray(jax.random.uniform(k, (64,), jnp.bfloat16), np.float32))
        # A scaled range: evoxc rounds unit * (hi - lo) and then + lo (JAX op by op); jitted XLA CPU fuses an FMA.
        got = ev(lambda t: evoxc.random.uniform(t, (1000,), evoxc.float32, -2.5, 4.0), key)
        with jax.disable_jit():
            want = np.asarray(jax.random.uniform(k, (1000,), jnp.float32, -2.5, 4.0))
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg="uniform [-2.5, 4.0)")
        np.testing.assert_allclose(got, np.asarray(jax.random.uniform(k, (1000,), jnp.float32, -2.5, 4.0)), rtol=0,
                                   atol=6.5 * np.finfo(np.float32).eps)
        got = ev(lambda t: evoxc.random.normal(t, (1000,)), key)
        assert_normal_close(got, np.asarray(jax.random.normal(k, (1000,), jnp.float32)), "normal vs jax")


def test_threefry_64bit_matches_jax_x64(jax_x64):
    for seed, want in jax_x64.items():
        key = evoxc.random.key(seed, "threefry2x32")
        np.testing.assert_array_equal(key.numpy(), np.array(want["key"], np.uint32))
        got = ev(lambda t: evoxc.random.bits(t, (3, 5), evoxc.uint64), key)
        np.testing.assert_array_equal(got, np.array(want["bits64"], np.uint64), err_msg=f"seed {seed}")
        got = ev(lambda t: evoxc.random.uniform(t, (3, 5), evoxc.float64), key)
        np.testing.assert_array_equal(got.view(np.uint64), np.array(want["uniform64"], np.uint64))
        got = ev(lambda t: evoxc.random.uniform(t, (64,), evoxc.float64, -2.5, 4.0), key)
        np.testing.assert_array_equal(got.view(np.uint64), np.array(want["uniform64_range_nojit"], np.uint64))
        np.testing.assert_allclose(got, np.array(want["uniform64_range"], np.uint64).view(np.float64), rtol=0,
                                   atol=6.5 * np.finfo(np.float64).eps)  # jitted: one FMA rounding


# ---------------------------------------------------------------- determinism: processes and backends


@pytest.mark.parametrize("alg", ALGS)
def test_same_key_same_bits_in_a_fresh_process(alg):
    script = textwrap.dedent(f"""
        import evoxc
        k = evoxc.random.key(987654321, {alg!r})
        out = evoxc.evaluate(lambda k: (evoxc.random.bits(k, (16,), evoxc.uint32), evoxc.random.split(k, 3)), k)
        print(repr((out[0].numpy().tolist(), out[1].numpy().tolist())))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=HERE)
    assert r.returncode == 0, r.stderr
    k = evoxc.random.key(987654321, alg)
    bits, children = ev(lambda t: (evoxc.random.bits(t, (16,), evoxc.uint32), evoxc.random.split(t, 3)), k)
    assert r.stdout.strip() == repr((bits.tolist(), children.tolist()))
    np.testing.assert_array_equal(bits, ref.ref_bits(key_of(987654321, alg), (16,), np.uint32))


def _backend_available(backend):
    if backend not in evoxc.backends():
        return False, f"this build has no {backend} backend (it has {', '.join(evoxc.backends())})"
    if backend == "xla":
        ok, why = evoxc.xla.available()
        if not ok:
            return False, f"no PJRT plugin loads here: {why}"
    return True, ""


def _all_draws(k):
    return (evoxc.random.bits(k, (3, 5), evoxc.uint8), evoxc.random.bits(k, (3, 5), evoxc.uint16),
            evoxc.random.bits(k, (3, 5), evoxc.uint32), evoxc.random.bits(k, (3, 5), evoxc.uint64),
            evoxc.random.split(k, 4), evoxc.random.fold_in(k, 9),
            evoxc.random.uniform(k, (33,)), evoxc.random.uniform(k, (33,), evoxc.float64),
            evoxc.random.normal(k, (33,)))


@pytest.mark.parametrize("backend", ("mlir", "xla"))
@pytest.mark.parametrize("alg", ALGS)
def test_compiled_backends_give_the_same_bits(backend, alg):
    ok, why = _backend_available(backend)
    if not ok:
        pytest.skip(why)
    key = key_of(31337, alg)
    want = ev(_all_draws, key)
    got = ev(_all_draws, key, backend=backend)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got[:-1], want[:-1])):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w, err_msg=f"{backend} {alg} output {i}")
    np.testing.assert_allclose(got[-1], want[-1], rtol=1e-6, atol=1e-7)  # normal: erf_inv may be lowered differently
    np.testing.assert_array_equal(got[3], ref.ref_bits(key, (3, 5), np.uint64))


# ---------------------------------------------------------------- batched keys and vmap


def _batch(alg, seeds=(0, 1, 99)):
    return np.stack([key_of(s, alg) for s in seeds])


@pytest.mark.parametrize("alg", ALGS)
def test_batched_keys_are_independent_streams(alg):
    batch = _batch(alg)
    nb = batch.shape[0]
    bits, children, folded, u = ev(lambda k: (evoxc.random.bits(k, (2, 3), evoxc.uint32), evoxc.random.split(k, 4),
                                              evoxc.random.fold_in(k, 5), evoxc.random.uniform(k, (6,))), batch)
    ks = batch.shape[1:]
    assert bits.shape == (nb, 2, 3) and children.shape == (nb, 4) + ks and folded.shape == (nb,) + ks
    assert u.shape == (nb, 6)
    for b in range(nb):
        kb = batch[b]
        single = ev(lambda k: (evoxc.random.bits(k, (2, 3), evoxc.uint32), evoxc.random.split(k, 4),
                               evoxc.random.fold_in(k, 5), evoxc.random.uniform(k, (6,))), kb)
        for got, want in zip((bits[b], children[b], folded[b], u[b]), single):
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(bits[b], ref.ref_bits(kb, (2, 3), np.uint32))
        np.testing.assert_array_equal(children[b], ref.ref_split(kb, 4))
        np.testing.assert_array_equal(folded[b], ref.ref_fold_in(kb, 5))
        np.testing.assert_array_equal(u[b], ref.ref_uniform(kb, (6,)))
    assert not np.array_equal(bits[0], bits[1])


@pytest.mark.parametrize("alg", ALGS)
def test_two_batch_axes(alg):
    batch = _batch(alg, (3, 4, 5, 6)).reshape((2, 2) + key_of(0, alg).shape)
    got = ev(lambda k: evoxc.random.bits(k, (5,), evoxc.uint16), batch)
    assert got.shape == (2, 2, 5)
    for i in range(2):
        for j in range(2):
            np.testing.assert_array_equal(got[i, j], ref.ref_bits(batch[i, j], (5,), np.uint16))


@pytest.mark.parametrize("alg", ALGS)
def test_vmap_over_keys_equals_the_loop(alg):
    batch = _batch(alg, (10, 20, 30, 40))

    def draws(k):
        return (evoxc.random.bits(k, (4,), evoxc.uint32), evoxc.random.split(k, 3), evoxc.random.fold_in(k, 2),
                evoxc.random.uniform(k, (4,)), evoxc.random.normal(k, (4,)))

    got = ev(evoxc.vmap(draws), batch)
    for b in range(batch.shape[0]):
        single = ev(draws, batch[b])
        for i, (g, w) in enumerate(zip(got, single)):
            np.testing.assert_array_equal(g[b], w, err_msg=f"{alg} row {b} output {i}")
    np.testing.assert_array_equal(got[0][2], ref.ref_bits(batch[2], (4,), np.uint32))


# ---------------------------------------------------------------- distributions (fixed seeds)


def _stats():
    return pytest.importorskip("scipy.stats", reason="scipy is not installed: the distribution tests need it")


@pytest.mark.parametrize("alg", ALGS)
def test_uniform_distribution(alg):
    st = _stats()
    x = ev(lambda k: evoxc.random.uniform(k, (N_STAT,)), key_of(101, alg)).astype(np.float64)
    assert x.min() >= 0.0 and x.max() < 1.0
    assert st.kstest(x, "uniform").pvalue > 1e-3
    y = ev(lambda k: evoxc.random.uniform(k, (N_STAT,), evoxc.float32, -2.0, 3.0), key_of(102, alg))
    assert y.min() >= -2.0 and y.max() < 3.0
    assert st.kstest(y.astype(np.float64), "uniform", args=(-2.0, 5.0)).pvalue > 1e-3


@pytest.mark.parametrize("alg", ALGS)
def test_normal_distribution(alg):
    st = _stats()
    x = ev(lambda k: evoxc.random.normal(k, (N_STAT,)), key_of(103, alg)).astype(np.float64)
    assert np.all(np.isfinite(x))
    assert st.kstest(x, "norm").pvalue > 1e-3
    assert abs(x.mean()) < 5 / np.sqrt(N_STAT) and abs(x.std() - 1.0) < 0.02


@pytest.mark.parametrize("alg", ALGS)
def test_randint_distribution(alg):
    st = _stats()
    lo, hi = -3, 7
    x = ev(lambda k: evoxc.random.randint(k, (N_STAT,), lo, hi), key_of(104, alg))
    assert x.dtype == np.int32 and x.shape == (N_STAT,)
    assert x.min() >= lo and x.max() < hi
    counts = np.bincount(x.astype(np.int64) - lo, minlength=hi - lo)
    assert counts.shape == (hi - lo,) and np.all(counts > 0)
    assert st.chisquare(counts).pvalue > 1e-3
    y = ev(lambda k: evoxc.random.randint(k, (1000,), 0, 5, evoxc.int64), key_of(105, alg))
    assert y.dtype == np.int64 and y.min() >= 0 and y.max() < 5


@pytest.mark.parametrize("alg", ALGS)
def test_bernoulli_frequency(alg):
    p = 0.3
    x = ev(lambda k: evoxc.random.bernoulli(k, p, (N_STAT,)), key_of(106, alg))
    assert x.dtype == np.bool_ and x.shape == (N_STAT,)
    sigma = np.sqrt(N_STAT * p * (1 - p))
    assert abs(int(x.sum()) - N_STAT * p) < 5 * sigma
    half = ev(lambda k: evoxc.random.bernoulli(k, shape=(N_STAT,)), key_of(107, alg))  # p defaults to 0.5
    assert abs(int(half.sum()) - N_STAT / 2) < 5 * np.sqrt(N_STAT / 4)
    assert not ev(lambda k: evoxc.random.bernoulli(k, 0.0, (100,)), key_of(108, alg)).any()


@pytest.mark.parametrize("alg", ALGS)
def test_categorical_distribution(alg):
    st = _stats()
    logits = np.array([0.5, -1.0, 2.0, 0.0, 1.0], np.float32)
    x = ev(lambda k, l: evoxc.random.categorical(k, l, shape=(N_STAT,)), key_of(109, alg), logits)
    assert x.shape == (N_STAT,) and x.dtype.kind == "i"
    assert x.min() >= 0 and x.max() < logits.size
    counts = np.bincount(x.astype(np.int64), minlength=logits.size)
    probs = np.exp(logits.astype(np.float64) - logits.max())
    probs /= probs.sum()
    assert st.chisquare(counts, N_STAT * probs).pvalue > 1e-3
    # One draw per row of a batch of logits along axis -1 (shape defaults to the batch shape).
    rows = np.array([[0.0, 50.0, 0.0], [50.0, 0.0, 0.0], [0.0, 0.0, 50.0]], np.float32)
    y = ev(lambda k, l: evoxc.random.categorical(k, l), key_of(110, alg), rows)
    assert y.tolist() == [1, 0, 2]


@pytest.mark.parametrize("alg", ALGS)
def test_truncated_normal_distribution(alg):
    st = _stats()
    lower, upper = -1.5, 0.7
    x = ev(lambda k: evoxc.random.truncated_normal(k, lower, upper, (N_STAT,)), key_of(111, alg))
    assert x.dtype == np.float32 and x.shape == (N_STAT,)
    assert x.min() >= lower and x.max() <= upper
    assert st.kstest(x.astype(np.float64), "truncnorm", args=(lower, upper)).pvalue > 1e-3


@pytest.mark.parametrize("alg", ALGS)
def test_permutation(alg):
    st = _stats()
    key = key_of(112, alg)
    p = ev(lambda k: evoxc.random.permutation(k, 100), key)
    assert p.shape == (100,) and p.dtype.kind == "i"
    assert sorted(p.tolist()) == list(range(100)) and p.tolist() != list(range(100))
    x = (np.arange(12, dtype=np.float32) * 10).reshape(6, 2)
    y = ev(lambda k, a: evoxc.random.permutation(k, a), key, x)
    assert y.shape == x.shape and y.dtype == x.dtype
    assert sorted(map(tuple, y.tolist())) == sorted(map(tuple, x.tolist()))  # whole rows moved along axis 0
    # Position counts over many keys: each value lands at each position uniformly.
    n, m = 6, 6000
    keys = ev(lambda k: evoxc.random.split(k, m), key)
    perms = ev(evoxc.vmap(lambda k: evoxc.random.permutation(k, n)), keys)
    assert perms.shape == (m, n)
    assert np.all(np.sort(perms, axis=1) == np.arange(n))
    counts = np.zeros((n, n), np.int64)
    for pos in range(n):
        counts[pos] = np.bincount(perms[:, pos].astype(np.int64), minlength=n)
    assert min(st.chisquare(counts[pos]).pvalue for pos in range(n)) > 1e-4
    assert len({tuple(r) for r in perms.tolist()}) > 600  # of 720 permutations, nearly all appear in 6000 draws


# ---------------------------------------------------------------- gradients


@pytest.mark.parametrize("alg", ALGS)
def test_grad_through_normal_draws(alg):
    n = 64
    key = key_of(113, alg)

    def loss(mu, sigma, k):
        return evoxc.sum(mu + sigma * evoxc.random.normal(k, (n,)))

    spec_k = TensorSpec(key.shape, getattr(evoxc, key.dtype.name))
    g = evoxc.grad(loss, argnums=(0, 1))(TensorSpec(()), TensorSpec(()), spec_k)
    dmu, dsigma = evoxc.run(evoxc.build(g), np.array(0.5, np.float32), np.array(2.0, np.float32), key)
    z = ev(lambda k: evoxc.random.normal(k, (n,)), key)
    assert float(dmu.numpy()) == pytest.approx(n)
    assert float(dsigma.numpy()) == pytest.approx(float(z.astype(np.float64).sum()), rel=1e-5, abs=1e-4)
    assert float(dsigma.numpy()) != pytest.approx(n)  # the draws are not all 1
    with pytest.raises(evoxc.TransformError, match="float"):
        evoxc.grad(loss, argnums=2)(TensorSpec(()), TensorSpec(()), spec_k)


# ---------------------------------------------------------------- bad input


def test_unknown_algorithm_is_a_validation_error():
    with pytest.raises(evoxc.ValidationError, match="mersenne|algorithm"):
        evoxc.random.key(0, "mersenne_twister")
    with pytest.raises(evoxc.ValidationError, match="mersenne|algorithm"):
        evoxc.evaluate(lambda x: evoxc.random.key(0, "mersenne_twister"), np.zeros(1, np.float32))


@pytest.mark.parametrize("bad", (np.zeros(2, np.float32), np.zeros(3, np.uint32), np.zeros((), np.int32),
                                 np.zeros(2, np.int16), np.zeros(4, np.uint8)),
                         ids=("float32[2]", "uint32[3]", "int32[]", "int16[2]", "uint8[4]"))
def test_a_non_key_is_a_dtype_error(bad):
    for op in (lambda k: evoxc.random.bits(k, (3,)), lambda k: evoxc.random.split(k, 2),
               lambda k: evoxc.random.fold_in(k, 1), lambda k: evoxc.random.uniform(k, (3,))):
        with pytest.raises(evoxc.DTypeError, match="key"):
            evoxc.evaluate(op, bad)


@pytest.mark.parametrize("alg", ALGS)
def test_bad_shapes_and_dtypes(alg):
    key = key_of(0, alg)
    with pytest.raises(evoxc.ShapeError):
        evoxc.evaluate(lambda k: evoxc.random.bits(k, (-1,)), key)
    with pytest.raises(evoxc.ShapeError):
        evoxc.evaluate(lambda k: evoxc.random.uniform(k, (2, -3)), key)
    with pytest.raises(evoxc.DTypeError, match="float32|dtype"):
        evoxc.evaluate(lambda k: evoxc.random.bits(k, (3,), evoxc.float32), key)
    with pytest.raises(evoxc.DTypeError, match="int32|dtype"):
        evoxc.evaluate(lambda k: evoxc.random.uniform(k, (3,), evoxc.int32), key)


# ---------------------------------------------------------------- choice, gamma, multinomial


@pytest.mark.parametrize("alg", ALGS)
@pytest.mark.parametrize("a", (0.3, 1.0, 2.5, 10.0))
def test_gamma_distribution(alg, a):
    st = _stats()
    x = ev(lambda k: evoxc.random.gamma(k, a, (N_STAT,)), key_of(120, alg)).astype(np.float64)
    assert x.min() > 0.0 and np.all(np.isfinite(x))
    assert st.kstest(x, "gamma", args=(a,)).pvalue > 1e-3


def test_gamma_broadcasts_a_and_runs_compiled():
    a = np.array([0.5, 2.0, 7.0], np.float64)
    x = ev(lambda k, a: evoxc.random.gamma(k, a, (20000, 3), dtype=evoxc.float64), key_of(121, "splitmix64"), a)
    assert x.shape == (20000, 3) and x.dtype == np.float64
    np.testing.assert_allclose(x.mean(axis=0), a, rtol=0.05)
    # The mlir backend draws the same bits; its float math may round differently, never by much.
    y = ev(lambda k, a: evoxc.random.gamma(k, a, (20000, 3), dtype=evoxc.float64), key_of(121, "splitmix64"), a,
           backend="mlir")
    np.testing.assert_allclose(y, x, rtol=1e-9)


def test_gamma_gradient_is_refused_with_the_loops_reason():
    g = evoxc.grad(lambda a, k: evoxc.mean(evoxc.random.gamma(k, a, (100,), dtype=evoxc.float64)))
    with pytest.raises(evoxc.TransformError, match="while_loop"):
        evoxc.evaluate(g, np.float64(2.0), key_of(122, "splitmix64"))


@pytest.mark.parametrize("alg", ALGS)
def test_choice_with_replacement(alg):
    st = _stats()
    x = ev(lambda k: evoxc.random.choice(k, 10, (N_STAT,)), key_of(123, alg))
    assert x.min() >= 0 and x.max() < 10
    assert st.chisquare(np.bincount(x, minlength=10)).pvalue > 1e-3
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    y = ev(lambda k, p: evoxc.random.choice(k, 4, (N_STAT,), p=p), key_of(124, alg), p)
    p64 = p.astype(np.float64) / p.astype(np.float64).sum()
    assert st.chisquare(np.bincount(y, minlength=4), N_STAT * p64).pvalue > 1e-3
    # An array population: its rows.
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    z = ev(lambda k, a: evoxc.random.choice(k, a, (5,)), key_of(125, alg), a)
    assert z.shape == (5, 3) and all(any(np.array_equal(r, q) for q in a) for r in z)


@pytest.mark.parametrize("alg", ALGS)
def test_choice_without_replacement(alg):
    x = ev(lambda k: evoxc.random.choice(k, 10, (10,), replace=False), key_of(126, alg))
    assert sorted(x.tolist()) == list(range(10))
    y = ev(lambda k: evoxc.random.choice(k, 50, (2, 5), replace=False), key_of(127, alg))
    assert y.shape == (2, 5) and len(set(y.ravel().tolist())) == 10
    # With p: never a zero-probability item, never a repeat; the heavy item comes first most often.
    p = np.array([0.0, 0.7, 0.1, 0.1, 0.1], np.float32)
    firsts = []
    for s in range(200):
        d = ev(lambda k, p: evoxc.random.choice(k, 5, (3,), replace=False, p=p), key_of(1000 + s, alg), p)
        assert 0 not in d.tolist() and len(set(d.tolist())) == 3
        firsts.append(int(d[0]))
    assert 0.55 < firsts.count(1) / 200 < 0.85
    with pytest.raises(evoxc.ShapeError, match="without replacement"):
        ev(lambda k: evoxc.random.choice(k, 3, (4,), replace=False), key_of(128, alg))


@pytest.mark.parametrize("alg", ALGS)
def test_multinomial_counts(alg):
    p = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], np.float32)
    c = ev(lambda k, p: evoxc.random.multinomial(k, 500, p, (400, 2)), key_of(129, alg), p)
    assert c.shape == (400, 2, 3) and c.dtype == np.int64
    assert np.all(c.sum(axis=-1) == 500) and c.min() >= 0
    np.testing.assert_allclose(c.mean(axis=0) / 500, p, atol=0.01)


def test_samplers_of_several_draws_take_one_key():
    keys = np.stack([key_of(s, "splitmix64") for s in (1, 2)])
    with pytest.raises(evoxc.ShapeError, match="vmap"):
        ev(lambda k: evoxc.random.gamma(k, 2.0, (3,)), keys)
    got = ev(evoxc.vmap(lambda k: evoxc.random.gamma(k, 2.0, (3,))), keys)
    for b in range(2):
        np.testing.assert_array_equal(got[b], ev(lambda k: evoxc.random.gamma(k, 2.0, (3,)), keys[b]))
