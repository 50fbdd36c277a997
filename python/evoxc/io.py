"""Asynchronous host <-> device copies: Tensor.to run on one process-wide FIFO worker, handed back as handles.

    copy = evoxc.io.prefetch(host_tensor, evoxc.Device("cpu", 1))   # -> AsyncCopy
    copy.direction                                                  # "host_to_device"
    t = copy.result()                                               # waits; the device Tensor
    out = evoxc.io.sink(device_tensor)                              # -> AsyncCopy, "device_to_host"
    evoxc.io.wait_all()

Validation is synchronous (an undefined tensor, a device nothing serves: raised by prefetch/sink); a transfer's own
error is raised by wait/result, unchanged; a timeout raises evoxc.TimeoutError (or returns False from wait) and never
cancels the copy. Devices other than the host (cpu:0) are the xla backend's PJRT plugin's: its CPU devices 1.. (the
client option cpu_device_count, set with evoxc.initialize before first use) and its GPUs. Waiting releases the GIL.
"""

from __future__ import annotations

from . import _core
from ._core import AsyncCopy, Tensor

__all__ = ["AsyncCopy", "prefetch", "sink", "wait_all", "pending"]


def _as_tensor(x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    from ._api import tensor
    return tensor(x)


def prefetch(tensor, device) -> AsyncCopy:
    """Queues tensor.to(device) (a numpy array is viewed as a host Tensor first, without a copy: keep it unchanged
    until the copy is done)."""
    return _core._io_prefetch(_as_tensor(tensor), device)  # a string ("cpu:1") converts to a Device


def sink(tensor) -> AsyncCopy:
    """Queues tensor.to(Device('cpu', 0)): the copy's result() is a host Tensor."""
    return _core._io_sink(_as_tensor(tensor))


def wait_all(timeout: float | None = None) -> None:
    """Waits until every copy queued before the call has finished; evoxc.TimeoutError when `timeout` seconds pass
    first. A failed copy's error stays with its handle."""
    _core._io_wait_all(timeout)


def pending() -> int:
    """Copies queued and not finished."""
    return _core._io_pending()
