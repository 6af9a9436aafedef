"""Driver copies and memsets on a stream: engine operations, not kernels. Each flushes the
stream's queued launches first (the driver call goes straight to the stream, behind them) and
holds the buffers it touches until the GPU has run it."""

from __future__ import annotations

from . import runtime
from .array import CudaArray


def memcpy_d2d(dev, dst: CudaArray, src: CudaArray):
    """Copy the contiguous `src` into the contiguous `dst` (as many bytes as `src` has) on the
    device's current stream."""
    stream = dev.local.stream or dev.default_stream
    stream.encoder.flush()
    err = runtime.driver().cuMemcpyDtoDAsync(dst.ptr, src.ptr, src.nbytes, stream.handle)[0]
    if err != 0:
        runtime.raise_error(err, "cuMemcpyDtoDAsync", dev)
    stream.encoder.hold(dst.buffer, src.buffer)


def zero_scratch(stream, a: CudaArray):
    """Zero the contiguous scratch array `a` on `stream` (a runtime.Stream: the one whose
    launches will use it, passed in, as another thread may switch the device's current stream
    meanwhile). The driver's memset costs a fraction of a fill kernel's host time."""
    stream.encoder.flush()
    err = runtime.driver().cuMemsetD8Async(a.ptr, 0, a.nbytes, stream.handle)[0]
    if err != 0:
        runtime.raise_error(err, "cuMemsetD8Async", stream.device)
    stream.encoder.hold(a.buffer)
