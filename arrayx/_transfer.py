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
    host = x._device.backend.to_host(x._data)
    # Either the source is the CPU and the target a device (whose from_host copies anyway), or
    # the source is a device whose to_host made a fresh host array: no second copy is needed.
    return Array._new(target.backend.from_host(target, host, None), target)
