"""Moving arrays between devices."""

from __future__ import annotations

from ._array_object import Array
from ._validation import resolve_device


def _to_device(x: Array, device, stream=None) -> Array:
    if stream is not None and not isinstance(stream, int) and not hasattr(stream, "__cuda_stream__"):
        raise TypeError(f"to_device(): unsupported stream object {type(stream).__name__}")
    target = resolve_device(device)
    if target is x._device:
        return x
    source_backend = x._device.backend
    host = source_backend.to_host(x._data)
    # A CPU view may be non-contiguous or read-only (a broadcast): from_host copies either way.
    return Array._new(target.backend.from_host(target, host, True), target)
