"""arrayx's CUDA backend: arrays on NVIDIA GPUs, kernels written in Python for numba-cuda.

Importing this package is cheap: it imports neither numba nor the CUDA driver bindings (those
come on first use), so ``arrayx._devices`` can ask ``runtime.device_count()`` while arrayx loads.

Layers, bottom up (CONTRIBUTING.md says where new code goes):
  engine/      the runtime: driver (cuda.bindings, errors), runtime (devices, contexts, streams,
               events), encoder (per-stream launch queue, buffer lifetimes, CUDA-graph batches),
               allocator (caching, limits, OOM recovery), launcher (pre-packed cuLaunchKernel),
               compiler (numba-cuda -> PTX -> cubin, memory and disk cache), array (Buffer and
               CudaArray, the native array), layout, transfer, dlpack, copies, tuning
  device/      device helpers as real modules (vector loads/stores, memory-order accesses,
               atomics, cache-hinted loads, prefetch, timer, bit casts), resolved by name
  kernels/     one package per kernel family: elementwise (every elementwise function, astype,
               fill, where, clip, creation kernels), reduce (reductions, argmax/argmin), scan
               (cumulative sums/products, flag scans), mask (nonzero, boolean-mask selection and
               assignment), gather_scatter (take, take_along_axis, index-array keys), sort (sort,
               argsort, unique_*, isin), search (searchsorted), manipulation (concat, roll,
               repeat), linalg, fft, random (arrayx.random's Philox streams), rows
               (softmax, logsumexp, layer and RMS norms); _common holds what they share
  libraries/   cuBLAS, cuSOLVER, cuFFT (ctypes, loaded beside the first context's creation) and
               CUB (cuda-cccl)
  primitives   the backend's own primitives (transfers, creation, views, elementwise dispatch)
  precompile   fills the kernel disk cache for a compute capability without a GPU

Each family's ``PRIMITIVES`` maps primitive names (``arrayx/_backend.py``) to its functions;
they are registered below, so ``PRIMITIVES`` of a family is where a primitive runs on CUDA.
"""

from __future__ import annotations

from .._registry import register_backend
from .kernels import (fft as _fft, gather_scatter as _indexing, linalg as _linalg,
                      manipulation as _manipulation, mask as _mask, reduce as _reduce,
                      scan as _scan, search as _search, sort as _sort)
from .kernels import random as _random
from .kernels import rows as _rows
from . import primitives as _primitives
from .engine.runtime import (CudaContextLost, CudaError, CudaKernelError, Event, Stream,  # noqa: F401
                             device_count, synchronize, unavailable_reason)
from .engine.array import CudaArray  # noqa: F401
from .engine import runtime as _runtime


def _library_loads():
    from .libraries import load_all
    return load_all


_runtime.beside_first_context.append(_library_loads)

register_backend("cuda", {**_primitives.PRIMITIVES, **_linalg.PRIMITIVES, **_fft.PRIMITIVES,
                          **_reduce.PRIMITIVES, **_scan.PRIMITIVES, **_mask.PRIMITIVES,
                          **_search.PRIMITIVES, **_indexing.PRIMITIVES, **_manipulation.PRIMITIVES,
                          **_sort.PRIMITIVES, **_random.PRIMITIVES, **_rows.PRIMITIVES})


def is_available() -> bool:
    return device_count() > 0


def get_device(index: int = 0):
    """Runtime information of a device (name, compute capability, total memory...)."""
    from .engine.runtime import get_device as _get
    return _get(index)


def current_stream(device: int = 0) -> Stream:
    """The stream arrayx queues work for `device` on (``with stream:`` changes it)."""
    from .engine.runtime import current_stream as _cs
    return _cs(device)


def memory_stats(device: int = 0) -> dict:
    """Allocator statistics in bytes: active, peak, cached, reserved, limits, counters."""
    from .engine.runtime import get_device as _get
    return _get(device).allocator.stats()


def reset_peak_memory(device: int = 0) -> None:
    from .engine.runtime import get_device as _get
    _get(device).allocator.reset_peak()


def clear_cache(device: int | None = None) -> None:
    """Return cached device memory to the driver (all initialised devices by default)."""
    from .engine import runtime
    for dev in ([runtime.get_device(device)] if device is not None else
                [d for d in runtime._devices if d is not None]):
        runtime._tls_activate(dev)
        dev.allocator.clear_cache()


def set_memory_limit(limit, device: int = 0) -> int:
    """Cap the device memory arrayx holds: bytes (int) or a fraction of the device (float <= 1).
    Returns the previous limit in bytes."""
    from .engine.runtime import get_device as _get
    dev = _get(device)
    if isinstance(limit, float) and limit <= 1.0:
        limit = int(limit * dev.total_memory)
    return dev.allocator.set_memory_limit(int(limit))


def set_cache_limit(limit: int, device: int = 0) -> int:
    from .engine.runtime import get_device as _get
    return _get(device).allocator.set_cache_limit(int(limit))


def compile_count() -> int:
    """Kernels numba compiled in this process (0 when the kernel caches served everything)."""
    from .engine.compiler import compile_count as _cc
    return _cc()


def kernel_cache_stats() -> dict:
    from .engine.compiler import stats
    return stats()


def set_submit_mode(mode: str) -> None:
    """'direct' (launch at once) or 'graph' (a CUDA graph per batch)."""
    from .engine.encoder import set_mode
    set_mode(mode)


def set_batch_size(ops: int | None = None, nbytes: int | None = None) -> None:
    """Launches (and/or bytes touched) per encoder batch: one completion event per batch."""
    from .engine.encoder import set_batch
    set_batch(ops, nbytes)
