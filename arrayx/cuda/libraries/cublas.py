"""cuBLAS: one handle per device, created in the device's primary context on first use and kept
for the process, bound to the stream arrayx queues work on now (rebound only when that stream
changes: the handle is arrayx's own, so nothing else rebinds it). A handle is not meant for
concurrent use by several host threads."""

from __future__ import annotations

from .calls import bindings

_handles: dict = {}  # device index -> [handle, pointer of the stream it is bound to]


def handle(dev, stream) -> int:
    """The device's cuBLAS handle, bound to `stream`."""
    entry = _handles.get(dev.index)
    if entry is None:
        entry = _handles[dev.index] = [bindings("cublas").create(), None]
    if entry[1] != stream.ptr:
        bindings("cublas").set_stream(entry[0], stream.ptr)
        entry[1] = stream.ptr
    return entry[0]
