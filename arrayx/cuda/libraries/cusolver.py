"""cuSOLVER (the dense 64-bit API): one handle per device with its ``cusolverDnParams``, made and
bound to streams as cublas.py's handle is; and the status every routine reports.

Status: cuSOLVER writes one ``info`` per matrix into device memory. ``check_info`` reads it
back, which is one device-to-host copy and so one synchronisation of the stream per call; it is
the price of raising LinAlgError for a singular or non-positive-definite matrix.
"""

from __future__ import annotations

import numpy as np

from ..engine.array import new_array
from .calls import bindings

_INT32 = np.dtype(np.int32)
_handles: dict = {}  # device index -> [handle, params, pointer of the stream it is bound to]


def handle(dev, stream) -> tuple:
    """(the device's cuSOLVER handle bound to `stream`, its cusolverDnParams)."""
    lib = bindings("cusolverDn")
    entry = _handles.get(dev.index)
    if entry is None:
        entry = _handles[dev.index] = [lib.create(), lib.create_params(), None]
    if entry[2] != stream.ptr:
        lib.set_stream(entry[0], stream.ptr)
        entry[2] = stream.ptr
    return entry[0], entry[1]


def info_array(dev, count: int):
    """Device int32 status slots, one per matrix, for cuSOLVER's `info` outputs."""
    return new_array(dev.index, (max(1, count),), _INT32, dev.allocator)


def check_info(info, fname: str, failure: str) -> None:
    """Wait for the stream and read `info`: a positive entry (the matrix property the routine
    needs does not hold) raises LinAlgError; a negative one (an argument cuSOLVER rejected) is a
    bug in arrayx and raises RuntimeError."""
    from ..engine.transfer import to_host
    values = to_host(info)
    if (values < 0).any():
        raise RuntimeError(f"{fname}(): cuSOLVER rejected argument {-int(values.min())} "
                           f"(an arrayx bug; please report it)")
    if (values > 0).any():
        from ..._backend import LinAlgError
        raise LinAlgError(f"{fname}(): {failure}")
