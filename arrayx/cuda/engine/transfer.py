"""Host <-> device transfers.

Small and medium transfers go straight from/to the NumPy array (pageable memory): the driver
stages pageable host-to-device copies itself and returns once the host buffer may be reused.
Large ones can go through a pair of pinned staging chunks, pipelined (copy chunk k into pinned
memory on the host, with several threads, while the DMA of chunk k-1 runs). Whether staging pays
depends on the machine: benchmarks/runtime_bench.py measures both and the threshold
``PINNED_MIN_BYTES`` (env ARRAYX_PINNED_MIN, bytes; 0 = never) is set from that measurement.

Device-to-host copies end with a stream synchronisation, which is where an asynchronous kernel
fault surfaces (as CudaKernelError naming the kernel).
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

from . import runtime
from .array import CudaArray, new_array

# From benchmarks/results/runtime-2026-11-29.md (H200 machine): pageable copies run at 6-13 GB/s
# there; pinned staging loses at 1-4 MiB (6-9 GB/s), wins from 16 MiB (15-16 GB/s against 10-13)
# and runs at 23-31 GB/s from 64 MiB up.
PINNED_MIN_BYTES = int(os.environ.get("ARRAYX_PINNED_MIN", str(16 << 20)))
CHUNK_BYTES = 32 << 20
COPY_THREADS = int(os.environ.get("ARRAYX_COPY_THREADS", "8"))

_staging: dict = {}
_pool = None


class _Staging:
    """Two pinned host chunks and their events, per device."""

    def __init__(self, dev):
        d = runtime.driver()
        self.dev = dev
        self.ptrs = [int(runtime.check(d.cuMemHostAlloc(CHUNK_BYTES, 0), "cuMemHostAlloc", dev))
                     for _ in range(2)]
        self.events = [runtime.check(d.cuEventCreate(2), "cuEventCreate", dev) for _ in range(2)]
        self.used = [False, False]


def _get_staging(dev):
    st = _staging.get(dev.index)
    if st is None:
        st = _staging[dev.index] = _Staging(dev)
    return st


def _memcpy(dst: int, src: int, n: int):
    """Host memcpy, split across threads for large chunks (ctypes.memmove releases the GIL)."""
    global _pool
    if COPY_THREADS <= 1 or n < (4 << 20):
        ctypes.memmove(dst, src, n)
        return
    if _pool is None:
        from concurrent.futures import ThreadPoolExecutor
        _pool = ThreadPoolExecutor(COPY_THREADS, thread_name_prefix="arrayx-copy")
    part = -(-n // COPY_THREADS)
    part = -(-part // 4096) * 4096
    futs = [_pool.submit(ctypes.memmove, dst + o, src + o, min(part, n - o)) for o in range(0, n, part)]
    for f in futs:
        f.result()


def _check_copy(err, what, stream):
    if err != 0:
        stream.encoder._fail(err, what, stream.encoder.inflight[0][1] if stream.encoder.inflight else [])


def h2d(dev, dst: int, src: int, nbytes: int, staged: bool | None = None):
    """Copy `nbytes` from host address `src` to device address `dst` on the current stream."""
    d = runtime.driver()
    stream = dev.stream
    stream.encoder.flush()
    if staged is None:
        staged = PINNED_MIN_BYTES > 0 and nbytes >= PINNED_MIN_BYTES
    if not staged:
        _check_copy(d.cuMemcpyHtoDAsync(dst, src, nbytes, stream.handle)[0], "cuMemcpyHtoDAsync", stream)
        return
    st = _get_staging(dev)
    for i, off in enumerate(range(0, nbytes, CHUNK_BYTES)):
        k = i & 1
        n = min(CHUNK_BYTES, nbytes - off)
        if st.used[k]:
            _check_copy(d.cuEventSynchronize(st.events[k])[0], "cuEventSynchronize", stream)
        _memcpy(st.ptrs[k], src + off, n)
        _check_copy(d.cuMemcpyHtoDAsync(dst + off, st.ptrs[k], n, stream.handle)[0], "cuMemcpyHtoDAsync", stream)
        _check_copy(d.cuEventRecord(st.events[k], stream.handle)[0], "cuEventRecord", stream)
        st.used[k] = True


def d2h(dev, dst: int, src: int, nbytes: int, staged: bool | None = None):
    """Copy `nbytes` from device address `src` to host address `dst`; waits for completion."""
    d = runtime.driver()
    stream = dev.stream
    enc = stream.encoder
    enc.flush()
    if staged is None:
        staged = PINNED_MIN_BYTES > 0 and nbytes >= PINNED_MIN_BYTES
    if not staged:
        _check_copy(d.cuMemcpyDtoHAsync(dst, src, nbytes, stream.handle)[0], "cuMemcpyDtoHAsync", stream)
        enc.synchronize()
        return
    st = _get_staging(dev)
    pending = None
    for i, off in enumerate(range(0, nbytes, CHUNK_BYTES)):
        k = i & 1
        n = min(CHUNK_BYTES, nbytes - off)
        _check_copy(d.cuMemcpyDtoHAsync(st.ptrs[k], src + off, n, stream.handle)[0], "cuMemcpyDtoHAsync", stream)
        _check_copy(d.cuEventRecord(st.events[k], stream.handle)[0], "cuEventRecord", stream)
        st.used[k] = True
        if pending is not None:
            pk, poff, pn = pending
            _check_copy(d.cuEventSynchronize(st.events[pk])[0], "cuEventSynchronize", stream)
            _memcpy(dst + poff, st.ptrs[pk], pn)
        pending = (k, off, n)
    if pending is not None:
        pk, poff, pn = pending
        _check_copy(d.cuEventSynchronize(st.events[pk])[0], "cuEventSynchronize", stream)
        _memcpy(dst + poff, st.ptrs[pk], pn)
    enc.synchronize()


def _c_order(host) -> np.ndarray:
    """A C-contiguous array of the same shape (np.ascontiguousarray turns 0-d into 1-d)."""
    host = np.asarray(host)
    return host if host.flags.c_contiguous else host.copy(order="C")


def from_host(device_index: int, host: np.ndarray) -> CudaArray:
    """A new device array holding the data of a host array (any layout)."""
    host = _c_order(host)
    dev = runtime.get_device(device_index)
    out = new_array(dev.index, host.shape, host.dtype, dev.allocator)
    if out.size:
        h2d(dev, out.buffer.ptr, host.ctypes.data, host.nbytes)
        dev.stream.encoder.hold(out.buffer)
    return out


def to_host(a: CudaArray) -> np.ndarray:
    """A new NumPy array with the data of `a` (waits for the work that produces it)."""
    dev = runtime.get_device(a.device_index)
    if not a.c_contig:
        from ..kernels.elementwise import copy
        a = copy(a)
    out = np.empty(a.shape, a.dtype)
    if a.size:
        d2h(dev, out.ctypes.data, a.ptr, a.nbytes)
    else:
        dev.stream.encoder.synchronize()
    return out


def write_from_host(a: CudaArray, host: np.ndarray):
    """Write host data (shape of `a`) into the memory of the device array `a` (may be a view)."""
    dev = runtime.get_device(a.device_index)
    host = _c_order(np.asarray(host, dtype=a.dtype))
    if a.c_contig:
        if a.size:
            h2d(dev, a.ptr, host.ctypes.data, host.nbytes)
            dev.stream.encoder.hold(a.buffer)
        return
    tmp = from_host(dev.index, host)
    from ..kernels.elementwise import assign
    assign(a, tmp)
