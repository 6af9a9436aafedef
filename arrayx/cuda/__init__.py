"""arrayx's CUDA backend: arrays on NVIDIA GPUs, kernels written in Python for numba-cuda.

Importing this package is cheap: it imports neither numba nor the CUDA driver bindings (those
come on first use), so ``arrayx._devices`` can ask ``runtime.device_count()`` while arrayx loads.

Modules, one per concern:
  runtime      devices, primary contexts, streams, events, error checking (cuda.bindings)
  allocator    caching allocator: size classes, limits, statistics, OOM recovery
  array        Buffer (a device allocation) and CudaArray (the native array: view metadata)
  encoder      per-stream launch queue: buffer lifetimes, batches, async error reporting
  compiler     numba-cuda -> PTX -> cubin, memory + disk kernel cache, compile counter
  launcher     cuLaunchKernel with pre-packed arguments
  vector       device helpers: 16-byte vector load/store intrinsics
  layout       host helpers: broadcasting, dim collapsing, index width, alignment, launch shapes
  elementwise  the elementwise template and its host-side layout dispatch (contiguous vectors,
               strided, transposing tiles): every elementwise function, astype/copy, fill,
               where, clip and the creation kernels (arange, linspace, eye, tril/triu)
  elementwise_ops  what each of those computes on one element (NumPy's semantics, C99 Annex G)
  precompile   fills the kernel disk cache for a compute capability without a GPU
  transfer     host <-> device copies (pinned staging where it pays)
  dlpack       DLPack export/import, __cuda_array_interface__ import
  reduce       reductions (sum, prod, max, min, mean, all, any) and argmax/argmin
  scan         cumulative sums/products and the flag scans (ranks) that masks build on
  mask         nonzero, boolean-mask selection and assignment
  search       searchsorted (binary search)
  indexing     gather/scatter: take, take_along_axis, integer-array and boolean keys
  manipulation concat, roll, repeat
  sort         sort and argsort (CUB radix sort through cuda-cccl)
  sets         unique_* and isin, built on sort
  primitives   the backend's primitives, registered below
"""

from __future__ import annotations

from .._registry import register_backend
from .kernels import (fft as _fft, gather_scatter as _indexing, linalg as _linalg,
                      manipulation as _manipulation, mask as _mask, reduce as _reduce,
                      scan as _scan, search as _search, sort as _sort)
from . import primitives as _primitives
from .engine.runtime import (CudaContextLost, CudaError, CudaKernelError, Event, Stream,  # noqa: F401
                             device_count, synchronize, unavailable_reason)
from .engine.array import CudaArray  # noqa: F401

register_backend("cuda", {**_primitives.PRIMITIVES, **_linalg.PRIMITIVES, **_fft.PRIMITIVES,
                          **_reduce.PRIMITIVES, **_scan.PRIMITIVES, **_mask.PRIMITIVES,
                          **_search.PRIMITIVES, **_indexing.PRIMITIVES, **_manipulation.PRIMITIVES,
                          **_sort.PRIMITIVES})


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
