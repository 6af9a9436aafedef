"""NVIDIA's math libraries (cuBLAS, cuSOLVER, cuFFT) on arrayx's streams, through nvmath-python.

nvmath-python's low-level bindings (``nvmath.bindings.cublas``, ``cusolverDn``, ``cufft``) take
raw device pointers and stream handles, so library calls work on arrayx buffers with no copy.
nvmath is imported on first use, never when arrayx loads (CI has no GPU; ``pip install
arrayx[cuda]`` brings it).

* Handles: one cuBLAS handle and one cuSOLVER handle (with its ``cusolverDnParams``) per device,
  created in the device's primary context on first use and kept for the process; each is bound
  to the stream arrayx queues work on now (rebound only when that stream changes). A handle is
  not meant for concurrent use by several host threads.
* cuFFT plans: cached per device, keyed by transform and layout, least recently used out beyond
  ``PLAN_CACHE_SIZE``. Plans are made with auto-allocation off: each execution gets its work area
  from arrayx's caching allocator as a temporary (so it returns to the cache, not to cuFFT).
* Ordering and lifetimes: ``begin(dev)`` submits the kernels the encoder has queued (in graph mode
  they wait for the batch's commit) before a library call is enqueued on the same stream, so the
  call sees their results and our later kernels see its results. ``end(stream, ...)`` hands every
  buffer the call reads or writes (inputs, outputs, workspaces, plans) to the encoder, which keeps
  them alive until the GPU has passed that point, exactly as for our own kernels.
* Status: cuSOLVER writes one ``info`` per matrix into device memory. ``check_info`` reads it
  back, which is one device-to-host copy and so one synchronisation of the stream per call; it is
  the price of raising LinAlgError for a singular or non-positive-definite matrix.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..engine.array import new_array

PLAN_CACHE_SIZE = 32

_UINT8 = np.dtype(np.uint8)
_INT32 = np.dtype(np.int32)
_modules: dict = {}
_devices: dict = {}  # device index -> _DeviceLibraries


def bindings(name: str):
    """``nvmath.bindings.<name>`` (cublas, cusolverDn, cufft), imported on first use."""
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


_DATA_TYPES: dict = {}


def data_type(dtype: np.dtype) -> int:
    """The cudaDataType code of a floating-point dtype (CUDA_R_32F, CUDA_R_64F, CUDA_C_32F...)."""
    if not _DATA_TYPES:
        from nvmath import CudaDataType as T
        _DATA_TYPES.update({np.dtype(np.float32): T.CUDA_R_32F.value,
                            np.dtype(np.float64): T.CUDA_R_64F.value,
                            np.dtype(np.complex64): T.CUDA_C_32F.value,
                            np.dtype(np.complex128): T.CUDA_C_64F.value})
    return _DATA_TYPES[dtype]


class _FftPlan:
    """A cuFFT plan; destroyed when the last reference goes, which the encoder holds until the
    GPU has finished every execution of it (an evicted plan may still be in flight)."""

    __slots__ = ("handle", "work_bytes")

    def __init__(self, handle: int, work_bytes: int):
        self.handle = handle
        self.work_bytes = work_bytes

    def __del__(self):
        try:
            bindings("cufft").destroy(self.handle)
        except Exception:
            pass


class _DeviceLibraries:
    def __init__(self, dev):
        self.dev = dev
        self._cublas = None
        self._cublas_stream = None
        self._cusolver = None
        self._cusolver_stream = None
        self._params = None
        self.plans: OrderedDict = OrderedDict()

    def cublas(self, stream) -> int:
        """The device's cuBLAS handle, bound to `stream` (set only when it changes: the handle
        is arrayx's own, so nothing else rebinds it)."""
        if self._cublas is None:
            self._cublas = bindings("cublas").create()
        if self._cublas_stream != stream.ptr:
            bindings("cublas").set_stream(self._cublas, stream.ptr)
            self._cublas_stream = stream.ptr
        return self._cublas

    def cusolver(self, stream) -> tuple:
        """(the device's cuSOLVER handle bound to `stream`, its cusolverDnParams)."""
        lib = bindings("cusolverDn")
        if self._cusolver is None:
            self._cusolver = lib.create()
            self._params = lib.create_params()
        if self._cusolver_stream != stream.ptr:
            lib.set_stream(self._cusolver, stream.ptr)
            self._cusolver_stream = stream.ptr
        return self._cusolver, self._params

    def fft_plan(self, fft_type: int, n: int, idist: int, odist: int, batch: int) -> _FftPlan:
        """A 1-D plan of length `n` over `batch` rows, input rows `idist` elements apart and
        output rows `odist` apart (unit stride inside a row)."""
        key = (fft_type, n, idist, odist, batch)
        plan = self.plans.get(key)
        if plan is not None:
            self.plans.move_to_end(key)
            return plan
        lib = bindings("cufft")
        handle = lib.create()
        try:
            lib.set_auto_allocation(handle, 0)
            work = lib.make_plan_many64(handle, 1, [n], [idist], 1, idist, [odist], 1, odist,
                                        fft_type, batch)
        except Exception:
            lib.destroy(handle)
            raise
        plan = self.plans[key] = _FftPlan(handle, int(work))
        while len(self.plans) > PLAN_CACHE_SIZE:
            self.plans.popitem(last=False)
        return plan


def for_device(dev) -> _DeviceLibraries:
    libs = _devices.get(dev.index)
    if libs is None:
        libs = _devices[dev.index] = _DeviceLibraries(dev)
    return libs


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
