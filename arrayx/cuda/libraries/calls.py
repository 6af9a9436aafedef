"""What every library call shares: nvmath's bindings, ordering on arrayx's stream, lifetimes and
workspaces.

nvmath-python's low-level bindings (``nvmath.bindings.cublas``, ``cusolverDn``, ``cufft``) take
raw device pointers and stream handles, so library calls work on arrayx buffers with no copy.
nvmath is imported on first use, never when arrayx loads (CI has no GPU; ``pip install
arrayx[cuda]`` brings it).

Ordering and lifetimes: ``begin(dev)`` submits the kernels the encoder has queued (in graph mode
they wait for the batch's commit) before a library call is enqueued on the same stream, so the
call sees their results and our later kernels see its results. ``end(stream, ...)`` hands every
buffer the call reads or writes (inputs, outputs, workspaces, plans) to the encoder, which keeps
them alive until the GPU has passed that point, exactly as for our own kernels.
"""

from __future__ import annotations

import numpy as np

from ..engine.array import new_array

_UINT8 = np.dtype(np.uint8)
_modules: dict = {}
_DATA_TYPES: dict = {}


def bindings(name: str):
    """``nvmath.bindings.<name>`` (cublas, cusolverDn, cusolver, cufft), imported on first use."""
    module = _modules.get(name)
    if module is None:
        import importlib
        try:
            module = importlib.import_module(f"nvmath.bindings.{name}")
        except ImportError as exc:
            raise ImportError(f"arrayx's CUDA linear algebra and FFT need nvmath-python (pip "
                              f"install 'arrayx[cuda]' or 'nvmath-python>=1.0'): {exc}") from None
        _modules[name] = module
    return module


def data_type(dtype: np.dtype) -> int:
    """The cudaDataType code of a floating-point dtype (CUDA_R_32F, CUDA_R_64F, CUDA_C_32F...)."""
    if not _DATA_TYPES:
        from nvmath import CudaDataType as T
        _DATA_TYPES.update({np.dtype(np.float32): T.CUDA_R_32F.value,
                            np.dtype(np.float64): T.CUDA_R_64F.value,
                            np.dtype(np.complex64): T.CUDA_C_32F.value,
                            np.dtype(np.complex128): T.CUDA_C_64F.value})
    return _DATA_TYPES[dtype]


def begin(dev):
    """The stream the next library call goes on, after submitting the kernels queued before it."""
    dev.activate()
    stream = dev.stream
    stream.encoder.flush()
    return stream


def end(stream, *objects):
    """Keep `objects` (CudaArrays, plans, host workspaces) alive until the GPU is past the
    library calls enqueued since `begin`."""
    stream.encoder.hold(*[getattr(o, "buffer", o) for o in objects if o is not None])


def device_workspace(dev, nbytes: int):
    """A temporary device buffer of `nbytes` (None for 0): pass ``.ptr``, then give it to end()."""
    if nbytes <= 0:
        return None
    return new_array(dev.index, (int(nbytes),), _UINT8, dev.allocator)


def host_workspace(nbytes: int) -> np.ndarray:
    """A host buffer of at least one byte (cuSOLVER's X API asks for some host workspace)."""
    return np.empty(max(1, int(nbytes)), _UINT8)
