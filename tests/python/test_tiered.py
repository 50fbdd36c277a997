"""evoxc.build_tiered: the interpreter at once, mlir compiled in the background, the switch, pinning, the report,
and the compile's per-stage times (CompiledArtifact.stage_times)."""

import threading

import numpy as np
import pytest

import evoxc
from evoxc import TensorSpec

HAVE_MLIR = "mlir" in evoxc.backends()
needs_mlir = pytest.mark.skipif(not HAVE_MLIR, reason="this build has no mlir backend (EVOXC_MLIR=OFF)")


def f(x, y):
    return {"out": evoxc.tanh(x) * y + evoxc.log(evoxc.abs(x) + 1.0), "sum": evoxc.sum(x * y)}


SPECS = (TensorSpec((8, 128), evoxc.float32), TensorSpec((8, 128), evoxc.float32))


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((8, 128)).astype(np.float32) for _ in range(2)]


@needs_mlir
def test_runs_at_once_then_switches_to_mlir():
    t = evoxc.build_tiered(f, *SPECS)
    x, y = inputs()
    ref = evoxc.run(evoxc.build(f, *SPECS), x, y)
    first = t(x, y)  # whatever tier: the interpreter until the compile is loaded
    assert set(first) == {"out", "sum"}
    assert t.wait(timeout=120), t.report["error"]
    assert t.ready and t.tier == "compiled"
    got = evoxc.run(t, x, y)
    np.testing.assert_allclose(got["out"].numpy(), ref["out"].numpy(), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(got["sum"].numpy(), ref["sum"].numpy(), rtol=2e-5, atol=1e-5)
    r = t.report
    assert r["compile"] == "ready" and r["error"] == ""
    assert r["first_backend"] == "interp" and r["compiled_backend"] == "mlir"
    assert list(r["stages"]) == ["context", "parse", "mlir passes", "translate", "llvm opt", "codegen"]
    assert r["compile_seconds"] >= sum(r["stages"].values()) * 0.5
    assert r["first_calls"] + r["compiled_calls"] == 2 and r["compiled_calls"] >= 1
    assert t.compiled.backend == "mlir" and t.first.backend == "interp" and t.executable.backend == "tiered"
    assert "TieredExecutable interp -> mlir (compile ready)" in repr(t)


@needs_mlir
def test_pin_first_keeps_the_interpreter_bit_for_bit():
    t = evoxc.build_tiered(f, *SPECS)
    t.pin("first")
    assert t.wait(timeout=120)
    x, y = inputs(1)
    got = t(x, y)
    ref = evoxc.run(evoxc.build(f, *SPECS), x, y)
    assert np.array_equal(got["out"].numpy().view(np.uint32), ref["out"].numpy().view(np.uint32))
    assert t.tier == "first" and t.report["pinned"] == "first"
    t.pin(None)
    assert t.tier == "compiled" and t.report["pinned"] is None


@needs_mlir
def test_compile_after_calls_defers_the_compile():
    t = evoxc.build_tiered(f, *SPECS, compile_after_calls=2)
    x, y = inputs()
    t(x, y)
    assert t.report["compile"] == "not started"
    t(x, y)
    assert t.report["compile"] in ("running", "ready")
    assert t.wait(timeout=120)


def test_a_failed_compile_stays_on_the_first_tier():
    # stablehlo lowers but does not run: the background step fails, calls keep running on the interpreter.
    t = evoxc.build_tiered(f, *SPECS, backend="stablehlo")
    assert not t.wait(timeout=60)
    r = t.report
    assert r["compile"] == "failed" and r["error"]
    x, y = inputs()
    t(x, y)
    assert t.tier == "first" and t.report["first_calls"] == 1
    with pytest.raises(evoxc.BackendError, match="cannot pin the compiled tier"):
        t.pin("compiled")


def test_bad_arguments_are_typed_errors():
    with pytest.raises(evoxc.ValidationError):
        evoxc.build_tiered(f, *SPECS, compile_after_calls=-1)
    with pytest.raises(evoxc.BackendError):
        evoxc.build_tiered(f, *SPECS, backend="no_such_backend")
    t = evoxc.build_tiered(f, *SPECS, backend="interp")
    with pytest.raises(evoxc.ValidationError, match="tier must be"):
        t.pin("fast")
    with pytest.raises(evoxc.ValidationError):
        t.wait(timeout=-1)


def test_interp_to_interp_from_many_threads():
    # Both tiers on the interpreter: every call, before and after the switch, gives the serial result bit for bit.
    t = evoxc.build_tiered(f, *SPECS, backend="interp")
    x, y = inputs(2)
    want = evoxc.run(evoxc.build(f, *SPECS), x, y)["out"].numpy()
    bad = []

    def worker():
        for _ in range(40):
            got = t(x, y)["out"].numpy()
            if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
                bad.append(1)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not bad
    assert t.wait(timeout=60)
    r = t.report
    assert r["first_calls"] + r["compiled_calls"] == 160


@needs_mlir
def test_compile_stage_times_on_the_artifact():
    a = evoxc.compile(evoxc.lower(evoxc.trace(f, *SPECS), "mlir"))
    st = a.stage_times
    assert list(st) == ["context", "parse", "mlir passes", "translate", "llvm opt", "codegen"]
    assert all(v >= 0 for v in st.values()) and sum(st.values()) > 0
    # read back from bytes, an artifact has no compile to report
    assert evoxc.CompiledArtifact.from_bytes(a.to_bytes()).stage_times == {}
    assert evoxc.compile(evoxc.lower(evoxc.trace(f, *SPECS))).stage_times == {}  # the interpreter times none
