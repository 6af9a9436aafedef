"""What every library call shares: the libraries through ctypes, ordering on arrayx's stream,
lifetimes and workspaces.

cuBLAS, cuSOLVER and cuFFT are called through ctypes: arrayx uses a handful of functions of each,
and a library's own Python bindings cost far more to import than its calls (nvmath-python's
import loads six libraries, cuBLAS to cuTENSOR, where a product needs cuBLAS alone). A
``Library`` is found by cuda.pathfinder (installed with cuda-bindings; ``pip install
'arrayx[cuda]'`` brings the libraries) and loaded on the first call of one of its functions,
never when arrayx loads: CI has no GPU. The library modules (cublas.py, cusolver.py, cufft.py)
declare the functions they use with ``Library.function`` and the C types of the headers; every
argument is a Python int (a device pointer, a host pointer such as ``ndarray.ctypes.data``, a
handle, a size, an enum) or, for an array argument, a ctypes array. A non-zero status raises:
MemoryError for the library's allocation failure, RuntimeError naming the C function and status
otherwise.

Ordering and lifetimes: ``begin(dev)`` submits the kernels the encoder has queued (in graph mode
they wait for the batch's commit) before a library call is enqueued on the same stream, so the
call sees their results and our later kernels see its results. ``end(stream, ...)`` hands every
buffer the call reads or writes (inputs, outputs, workspaces, plans) to the encoder, which keeps
them alive until the GPU has passed that point, exactly as for our own kernels.
"""

from __future__ import annotations

import ctypes
import threading
from enum import IntEnum

import numpy as np

from ..engine.array import new_array

_UINT8 = np.dtype(np.uint8)

# cudaDataType_t (library_types.h) of the floating-point dtypes: CUDA_R_32F, CUDA_R_64F,
# CUDA_C_32F, CUDA_C_64F.
_DATA_TYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1,
               np.dtype(np.complex64): 4, np.dtype(np.complex128): 5}


class Library:
    """One NVIDIA library (`name` as cuda.pathfinder knows it), loaded on the first call of one
    of its functions. `status` holds the codes its functions return, `alloc_failed` the one that
    raises MemoryError."""

    def __init__(self, name: str, status: type[IntEnum], alloc_failed: int):
        self.name = name
        self.status = status
        self.alloc_failed = alloc_failed
        self.symbols: dict = {}  # C symbol -> argument types, out-parameters included
        self._cdll = None

    def cdll(self) -> ctypes.CDLL:
        """The library, loaded on first use. Two threads may both load it: pathfinder and dlopen
        hand both the same library, so no lock is needed."""
        if self._cdll is None:
            try:
                from cuda.pathfinder import load_nvidia_dynamic_lib
                self._cdll = ctypes.CDLL(load_nvidia_dynamic_lib(self.name).abs_path)
            except (ImportError, OSError, RuntimeError) as exc:  # pathfinder's errors: RuntimeError
                raise ImportError(f"arrayx's CUDA linear algebra and FFT need lib{self.name} "
                                  f"(pip install 'arrayx[cuda]'): {exc}") from None
        return self._cdll

    def check(self, symbol: str, status: int) -> None:
        """Raise for a non-zero `status` returned by `symbol`."""
        if not status:
            return
        try:
            name = self.status(status).name
        except ValueError:  # a code newer than the header these statuses were taken from
            name = "unknown status"
        error = MemoryError if status == self.alloc_failed else RuntimeError
        raise error(f"{symbol} failed: {name} ({status})")

    def function(self, symbol: str, *argtypes, out: tuple = ()):
        """A Python function calling `symbol` with arguments of the ctypes `argtypes`, followed by
        one pointer per type of `out` (the C function's trailing out-parameters), whose values it
        returns: None without `out`, the value for one, a tuple for several. The symbol is looked
        up on the first call."""
        self.symbols[symbol] = argtypes + tuple(ctypes.POINTER(t) for t in out)
        c_function = None

        def call(*args):
            nonlocal c_function
            if c_function is None:
                c_function = getattr(self.cdll(), symbol)
                c_function.argtypes = self.symbols[symbol]
                c_function.restype = ctypes.c_int
            if not out:  # the common case, on every library call: nothing to allocate
                status = c_function(*args)
                if status:
                    self.check(symbol, status)
                return None
            values = [t() for t in out]
            status = c_function(*args, *[ctypes.byref(v) for v in values])
            if status:
                self.check(symbol, status)
            if len(values) > 1:
                return tuple(v.value for v in values)
            return values[0].value

        call.__name__ = call.__qualname__ = symbol
        return call


class PerThread:
    """Library state that two host threads must not use at once (a cuBLAS or cuSOLVER handle,
    whose stream binding and workspace are the handle's; a cache of cuFFT plans, which cuFFT
    supports only one thread executing at a time): one object per device and thread, made by
    `make(dev)` on first use. A thread's objects go back to a pool when the thread ends, for the
    next thread to take, so a pool of worker threads makes each once per worker, however many
    threads come and go."""

    def __init__(self, make):
        self._make = make
        self._pool: dict = {}  # device index -> objects no thread holds
        self._lock = threading.Lock()
        self._local = threading.local()

    def get(self, dev):
        """The calling thread's object for `dev`."""
        held = getattr(self._local, "held", None)
        if held is None:
            held = self._local.held = _Held(self)
        obj = held.objects.get(dev.index)
        if obj is None:
            with self._lock:
                free = self._pool.get(dev.index)
                obj = free.pop() if free else None
            if obj is None:
                obj = self._make(dev)
            held.objects[dev.index] = obj
        return obj

    def _give_back(self, objects: dict):
        with self._lock:
            for index, obj in objects.items():
                self._pool.setdefault(index, []).append(obj)


class _Held:
    """A thread's objects of one PerThread; its thread-local slot is cleared when the thread
    ends, and then they return to the pool (work they queued stays in order on its stream)."""

    __slots__ = ("owner", "objects")

    def __init__(self, owner: PerThread):
        self.owner = owner
        self.objects: dict = {}

    def __del__(self):
        self.owner._give_back(self.objects)


def data_type(dtype: np.dtype) -> int:
    """The cudaDataType code of a floating-point dtype (CUDA_R_32F, CUDA_R_64F, CUDA_C_32F...)."""
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
