"""Device tensors and evoxc.io on XLA's CPU plugin made to have two devices (cpu_device_count=2, in a fresh process:
one plugin per process): Tensor.to both ways, executables on device 1 fed their own outputs, host inputs refused,
prefetch/sink/wait_all on the FIFO worker with the GIL released; and what needs no device: validation, timeouts'
types, Device parsing."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import evoxc

OK, WHY = evoxc.xla.available()

SCRIPT = textwrap.dedent("""
    import threading, time
    import numpy as np
    import evoxc

    evoxc.initialize(platform="cpu", path=PATH, options={"cpu_device_count": 2})
    d1 = evoxc.Device("cpu", 1)
    assert evoxc.Device("cpu:1") == d1 and d1 in evoxc.devices(), evoxc.devices()

    # Tensor.to: a copy on device 1, read in place on the host (the CPU plugin's memory), and back.
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = evoxc.tensor(x).to(d1)
    assert t.device == d1 and np.array_equal(t.numpy(), x)
    x[0, 0] = 99.0                                   # the device copy is its own
    assert t.numpy()[0, 0] == 0.0
    h = t.to(evoxc.Device("cpu", 0))
    assert h.device == evoxc.Device("cpu", 0) and np.array_equal(h.numpy()[1], [4, 5, 6, 7])
    for dt in ["bool_", "int8", "uint16", "int64", "float16", "bfloat16", "float64"]:
        a = evoxc.full((7,), 1.5, getattr(evoxc, dt))
        assert str(a.to(d1).to("cpu")) == str(a), dt
    print("to ok")

    # An executable on device 1: host tensors refused, its own outputs fed back (device-resident iteration).
    def step(state, v):
        return state + v * 0.5, v * 0.9
    spec = evoxc.TensorSpec((3, 4), evoxc.float32)
    exe = evoxc.build(step, spec, spec, backend="xla", device=d1)
    assert exe.device == d1
    s0 = np.ones((3, 4), np.float32)
    try:
        evoxc.run(exe, s0, s0)
        raise SystemExit("a host tensor ran on device 1")
    except evoxc.DeviceError as e:
        assert "cpu:1" in str(e), e
    state, v = evoxc.tensor(s0).to(d1), evoxc.tensor(s0).to(d1)
    ws, wv = s0.copy(), s0.copy()
    for _ in range(10):
        state, v = evoxc.run(exe, state, v)
        ws, wv = ws + wv * np.float32(0.5), wv * np.float32(0.9)
    assert state.device == d1 and v.device == d1
    np.testing.assert_allclose(state.to("cpu").numpy(), ws, rtol=1e-6)
    print("exe ok")

    # evoxc.io: directions, FIFO order, results on the target, wait_all.
    c = evoxc.io.prefetch(x, d1)
    assert c.direction == "host_to_device" and c.target == d1
    dt = c.result(timeout=30)
    assert dt.device == d1 and np.array_equal(dt.numpy(), x)
    s = evoxc.io.sink(dt)
    assert s.direction == "device_to_host" and s.result().device == evoxc.Device("cpu", 0)
    assert evoxc.io.prefetch(dt, d1).direction == "device_to_device"
    big = [np.full((256, 256), k, np.float32) for k in range(40)]
    copies = [evoxc.io.prefetch(b, d1) for b in big]
    evoxc.io.wait_all(timeout=60)
    assert evoxc.io.pending() == 0 and all(cp.done() for cp in copies)
    assert [float(cp.result().numpy()[0, 0]) for cp in copies] == list(range(40))
    print("io ok")

    # Waiting releases the GIL: a Python thread keeps counting while the main thread waits on 200 copies.
    count = [0]
    stop = threading.Event()
    def spin():
        while not stop.is_set():
            count[0] += 1
    th = threading.Thread(target=spin); th.start()
    copies = [evoxc.io.prefetch(np.full((512, 512), 1.0, np.float32), d1) for _ in range(200)]
    before = count[0]
    copies[-1].result()
    stop.set(); th.join()
    assert count[0] > before, (before, count[0])
    print("gil ok")

    # Synchronous validation: a device the plugin does not have, a platform it is not for.
    for bad, words in [(evoxc.Device("cpu", 2), "cpu_device_count"), (evoxc.Device("cuda", 0), "for cpu devices")]:
        for attempt in (lambda: evoxc.io.prefetch(x, bad), lambda: evoxc.tensor(x).to(bad)):
            try:
                attempt()
                raise SystemExit(f"moved to {bad}")
            except evoxc.DeviceError as e:
                assert words in str(e), e
    print("errors ok")
""")


@pytest.mark.skipif(not OK, reason=f"no PJRT plugin loads here: {WHY}")
def test_devices_of_the_cpu_plugin_in_a_fresh_process(tmp_path):
    path = evoxc.xla.plugin_info()["path"]
    script = tmp_path / "devices.py"
    script.write_text(f"PATH = {path!r}\n" + SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "EVOXC_PJRT_PLUGIN": ""})
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["to", "ok", "exe", "ok", "io", "ok", "gil", "ok", "errors", "ok"], out.stdout


def test_host_copies_and_validation_need_no_device():
    x = np.arange(6, dtype=np.float64)
    c = evoxc.io.prefetch(x, "cpu")
    assert c.direction == "host_to_host" and c.source == evoxc.Device("cpu", 0)
    t = c.result()
    assert np.array_equal(t.numpy(), x)
    assert np.array_equal(evoxc.io.sink(t).result(timeout=10).numpy(), x)
    assert "host_to_host" in repr(c)
    with pytest.raises(evoxc.DeviceError, match="vulkan:0"):
        evoxc.io.prefetch(x, evoxc.Device("vulkan", 0))
    with pytest.raises(evoxc.ValidationError, match="timeout"):
        evoxc.io.wait_all(timeout=-1.0)
    evoxc.io.wait_all()
    assert evoxc.io.pending() == 0


def test_timeout_error_is_both_evoxc_and_builtin():
    assert issubclass(evoxc.TimeoutError, evoxc.EvoxcError)
    assert issubclass(evoxc.TimeoutError, TimeoutError)


def test_device_strings_carry_their_index():
    assert evoxc.Device("cuda:1").index == 1
    assert evoxc.Device("cuda:1", 1) == evoxc.Device("cuda", 1)
    assert evoxc.Device("rocm", 2).index == 2 and evoxc.Device("hip:3").kind == "rocm"
    with pytest.raises(evoxc.ValidationError, match="two different indices"):
        evoxc.Device("cuda:1", 2)
    with pytest.raises(evoxc.ValidationError):
        evoxc.Device("cpu", -1)
    # A host tensor's .numpy() works; one on a device nothing serves cannot be made.
    with pytest.raises(evoxc.DeviceError):
        evoxc.ones((2,)).to("vulkan:0")


GPU_SCRIPT = textwrap.dedent("""
    import numpy as np
    import evoxc

    evoxc.initialize(platform=PLATFORM)
    dev = evoxc.Device(PLATFORM, 0)
    assert dev in evoxc.devices(), evoxc.devices()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = evoxc.tensor(x).to(dev)
    assert t.device == dev
    try:
        t.numpy()
        raise SystemExit("read a GPU tensor on the host")
    except evoxc.DeviceError:
        pass
    assert np.array_equal(t.to("cpu").numpy(), x)

    def step(state, v):
        return state + v * 0.5, v * 0.9
    spec = evoxc.TensorSpec((3, 4), evoxc.float32)
    exe = evoxc.build(step, spec, spec, backend="xla", device=dev)
    try:
        evoxc.run(exe, x, x)
        raise SystemExit("a host tensor ran on the GPU")
    except evoxc.DeviceError:
        pass
    state, v = t, evoxc.tensor(np.ones((3, 4), np.float32)).to(dev)
    ws, wv = x.copy(), np.ones((3, 4), np.float32)
    for _ in range(10):
        state, v = evoxc.run(exe, state, v)
        ws, wv = ws + wv * np.float32(0.5), wv * np.float32(0.9)
    assert state.device == dev
    np.testing.assert_allclose(evoxc.io.sink(state).result(timeout=60).numpy(), ws, rtol=1e-6)
    d = evoxc.io.prefetch(x, dev).result(timeout=60)
    assert d.device == dev and np.array_equal(d.to("cpu").numpy(), x)
    print("gpu ok")
""")


def _gpu_platform():
    """The GPU platform whose plugin discovery finds usable, with a GPU driver present; else the reason to skip."""
    import shutil
    try:
        found = evoxc.xla.discover()
    except evoxc.EvoxcError as e:
        return None, f"no xla backend: {e}"
    for platform, tool in (("cuda", "nvidia-smi"), ("rocm", "rocm-smi")):
        plugins = [c for c in found if c["platform"] == platform and not c["rejected"]]
        if plugins and shutil.which(tool):
            return platform, ""
    return None, ("no GPU here: no CUDA/ROCm PJRT plugin installed with its driver (pip install jax-cuda12-pjrt "
                  "on an NVIDIA machine runs this test)")


@pytest.mark.skipif(_gpu_platform()[0] is None, reason=_gpu_platform()[1])
def test_device_buffers_on_a_gpu(tmp_path):
    platform = _gpu_platform()[0]
    script = tmp_path / "gpu.py"
    script.write_text(f"PLATFORM = {platform!r}\n" + GPU_SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "EVOXC_PJRT_PLUGIN": ""})
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split()[-2:] == ["gpu", "ok"], out.stdout
