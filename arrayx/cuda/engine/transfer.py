"""Host <-> device copies.

Small and medium transfers go straight from/to the NumPy array (pageable memory): the driver
stages pageable host-to-device copies itself and returns once the host buffer may be reused.
Large ones (``tuning.PINNED_MIN_BYTES`` and up) go through a pair of pinned staging chunks,
pipelined: chunk k is copied into pinned memory on the host, with several threads, while the DMA
of chunk k-1 runs. benchmarks/runtime_bench.py measures both ways.

Device-to-host copies end with a stream synchronisation, which is where an asynchronous kernel
fault surfaces (as CudaKernelError naming the kernel).
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from . import runtime, tuning

_staging: dict = {}
_staging_lock = threading.Lock()
_pool = None


class _Staging:
    """Two pinned host chunks and their events, per device; ``lock``: held by the transfer
    using them (threads take turns)."""

    def __init__(self, dev):
        d = runtime.driver()
        self.dev = dev
        chunk = tuning.STAGING_CHUNK_BYTES
        self.ptrs = [int(runtime.check(d.cuMemHostAlloc(chunk, 0), "cuMemHostAlloc", dev))
                     for _ in range(2)]
        self.events = [runtime.check(d.cuEventCreate(2), "cuEventCreate", dev) for _ in range(2)]
        self.used = [False, False]
        self.lock = threading.Lock()


def _get_staging(dev):
    st = _staging.get(dev.index)
    if st is None:
        with _staging_lock:
            st = _staging.get(dev.index)
            if st is None:
                st = _staging[dev.index] = _Staging(dev)
    return st


def _memcpy(dst: int, src: int, n: int):
    """Host memcpy, split across threads for large chunks (ctypes.memmove releases the GIL)."""
    global _pool
    threads = tuning.COPY_THREADS
    if threads <= 1 or n < tuning.THREADED_COPY_MIN_BYTES:
        ctypes.memmove(dst, src, n)
        return
    if _pool is None:
        from concurrent.futures import ThreadPoolExecutor
        _pool = ThreadPoolExecutor(threads, thread_name_prefix="arrayx-copy")
    part = -(-n // threads)
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
        staged = 0 < tuning.PINNED_MIN_BYTES <= nbytes
    if not staged:
        _check_copy(d.cuMemcpyHtoDAsync(dst, src, nbytes, stream.handle)[0], "cuMemcpyHtoDAsync", stream)
        return
    st = _get_staging(dev)
    chunk = tuning.STAGING_CHUNK_BYTES
    with st.lock:
        for i, off in enumerate(range(0, nbytes, chunk)):
            k = i & 1
            n = min(chunk, nbytes - off)
            if st.used[k]:
                _check_copy(d.cuEventSynchronize(st.events[k])[0], "cuEventSynchronize", stream)
            _memcpy(st.ptrs[k], src + off, n)
            _check_copy(d.cuMemcpyHtoDAsync(dst + off, st.ptrs[k], n, stream.handle)[0],
                        "cuMemcpyHtoDAsync", stream)
            _check_copy(d.cuEventRecord(st.events[k], stream.handle)[0], "cuEventRecord", stream)
            st.used[k] = True


def d2h(dev, dst: int, src: int, nbytes: int, staged: bool | None = None):
    """Copy `nbytes` from device address `src` to host address `dst`; waits for completion."""
    d = runtime.driver()
    stream = dev.stream
    enc = stream.encoder
    enc.flush()
    if staged is None:
        staged = 0 < tuning.PINNED_MIN_BYTES <= nbytes
    if not staged:
        _check_copy(d.cuMemcpyDtoHAsync(dst, src, nbytes, stream.handle)[0], "cuMemcpyDtoHAsync", stream)
        enc.synchronize()
        return
    st = _get_staging(dev)
    pending = None
    chunk = tuning.STAGING_CHUNK_BYTES
    with st.lock:
        for i, off in enumerate(range(0, nbytes, chunk)):
            k = i & 1
            n = min(chunk, nbytes - off)
            if st.used[k]:  # an upload still reading this chunk
                _check_copy(d.cuEventSynchronize(st.events[k])[0], "cuEventSynchronize", stream)
            _check_copy(d.cuMemcpyDtoHAsync(st.ptrs[k], src + off, n, stream.handle)[0],
                        "cuMemcpyDtoHAsync", stream)
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


def to_host(a) -> np.ndarray:
    """A new NumPy array with the data of the device array `a` (waits for the work that produces
    it). `a` must be C-contiguous or of at most one element: gathering a strided view is a
    kernel, which the caller runs first (primitives.to_host)."""
    if not a.c_contig and a.size > 1:
        raise ValueError(f"transfer.to_host needs a C-contiguous array, got strides {a.strides} "
                         f"for shape {a.shape}: copy it on the device first")
    dev = runtime.get_device(a.device_index)
    out = np.empty(a.shape, a.dtype)
    if a.size:
        d2h(dev, out.ctypes.data, a.ptr, a.nbytes)
    else:
        dev.stream.encoder.synchronize()
    return out
