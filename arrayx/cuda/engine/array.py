"""The CUDA backend's native array: a device buffer with shape, strides and an element offset,
and the ways to make one.

``Buffer`` owns one device allocation (or, for imported arrays, keeps the producer alive) and is
shared by every view of it; Python's reference count is the buffer's: when the last array and the
last queued kernel using it (the encoder holds those) are gone, ``__del__`` returns the block to
the caching allocator. ``CudaArray`` is metadata over a buffer: shape, strides *in elements*,
element offset, dtype (a numpy dtype), device index. Views share the buffer.

Arrays are made here: ``new_array`` (fresh, uninitialised), ``array_from_host`` (a copy of host
data) and ``array_from_dlpack`` (foreign device memory, no copy); views with ``CudaArray.view``.
Copies that need a kernel (a strided view made contiguous) are the kernel families' work: the
export functions below (``__array__``, ``__dlpack__``) take the memory as it is.
"""

from __future__ import annotations

import numpy as np

from . import dlpack, runtime, transfer
from .layout import c_strides, is_c_contiguous


class Buffer:
    """A device allocation. `size` is the allocator's size class (0 for foreign memory)."""

    __slots__ = ("ptr", "nbytes", "size", "device_index", "_release", "owner", "__weakref__")

    def __init__(self, ptr: int, nbytes: int, device_index: int, allocator=None, size: int = 0,
                 owner=None):
        self.ptr = ptr
        self.nbytes = nbytes
        self.size = size
        self.device_index = device_index
        # the allocator's lock-free return queue (deque.append), or None for foreign memory
        self._release = allocator.release if allocator is not None else None
        self.owner = owner  # producer object of imported memory, kept alive with the buffer

    def __del__(self):
        r = self._release
        if r is not None:
            r((self.ptr, self.size))

    def __repr__(self):
        kind = "owned" if self._release is not None else "imported"
        return f"<Buffer 0x{self.ptr:x} {self.nbytes} bytes on cuda:{self.device_index} ({kind})>"


class CudaArray:
    """The CUDA backend's native array (see module docstring)."""

    __slots__ = ("buffer", "ptr", "shape", "strides", "offset", "dtype", "ndim", "size",
                 "device_index", "c_contig", "__weakref__")

    def __init__(self, buffer: Buffer, shape: tuple, dtype: np.dtype, strides: tuple | None = None,
                 offset: int = 0, c_contig: bool | None = None):
        self.buffer = buffer
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)
        size = 1
        for n in shape:
            size *= n
        self.size = size
        if strides is None:
            strides = c_strides(shape)
            c_contig = True
        self.strides = strides
        self.offset = offset
        self.ptr = buffer.ptr + offset * dtype.itemsize  # device address of the first element
        self.device_index = buffer.device_index
        self.c_contig = is_c_contiguous(shape, strides) if c_contig is None else c_contig

    # -- pointers ------------------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def byte_strides(self) -> tuple:
        isz = self.dtype.itemsize
        return tuple(s * isz for s in self.strides)

    def view(self, shape, strides, offset, c_contig=None) -> "CudaArray":
        """A view of the same buffer."""
        return CudaArray(self.buffer, tuple(shape), self.dtype, tuple(strides), offset, c_contig)

    def __repr__(self):
        return (f"CudaArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides}, "
                f"offset={self.offset}, device=cuda:{self.device_index})")

    # -- interop: the memory as it is (the namespace's functions copy where they must) -----
    @property
    def __cuda_array_interface__(self) -> dict:
        dev = runtime.get_device(self.device_index)
        stream = dev.stream
        stream.encoder.flush()
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr if self.size else 0, False),
            "version": 3,
            "strides": None if self.c_contig else self.byte_strides,
            "descr": [("", self.dtype.str)],
            "stream": stream.ptr or None,
        }

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("a native CudaArray exports its own memory; copy it with "
                              "arrayx.cuda.primitives.copy (or export an arrayx array) first")
        return dlpack.to_dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        return (dlpack.kDLCUDA, self.device_index)

    def __array__(self, dtype=None, copy=None):
        out = transfer.to_host(self)
        return out if dtype is None else out.astype(dtype, copy=False)


# ---- constructors -----------------------------------------------------------------------

_STRIDES_CACHE_SIZE = 4096  # shapes whose C strides are kept: bounded for programs of many shapes
_strides_cache: dict = {}
_new = object.__new__


def new_array(device_index: int, shape: tuple, dtype: np.dtype, allocator, size: int | None = None
              ) -> CudaArray:
    """A fresh C-contiguous array (uninitialised) from `allocator` (anything with ``alloc`` and
    ``release``). `size`, the element count, may be given by callers that computed it.

    Every kernel's output comes from here, so it fills the slots directly instead of calling
    the classes' ``__init__`` (which would recompute strides and contiguity it knows)."""
    if size is None:
        size = 1
        for n in shape:
            size *= n
    nbytes = size * dtype.itemsize
    # the block first: a Buffer that exists must be able to give it back (its __del__)
    ptr, size_class = allocator.alloc(nbytes) if nbytes else (0, 0)
    buf = _new(Buffer)
    buf._release = allocator.release if nbytes else None
    buf.ptr = ptr
    buf.nbytes = nbytes
    buf.size = size_class
    buf.device_index = device_index
    buf.owner = None
    a = _new(CudaArray)
    a.buffer = buf
    a.ptr = ptr
    a.shape = shape
    a.dtype = dtype
    a.ndim = len(shape)
    a.size = size
    strides = _strides_cache.get(shape)
    if strides is None:
        strides = c_strides(shape)
        if len(_strides_cache) < _STRIDES_CACHE_SIZE:
            _strides_cache[shape] = strides
    a.strides = strides
    a.offset = 0
    a.device_index = device_index
    a.c_contig = True
    return a


def array_from_host(device_index: int, host: np.ndarray) -> CudaArray:
    """A new device array holding the data of a host array (any layout)."""
    host = np.asarray(host)
    if not host.flags.c_contiguous:
        host = host.copy(order="C")  # not np.ascontiguousarray: that turns 0-d into 1-d
    dev = runtime.get_device(device_index)
    out = new_array(dev.index, host.shape, host.dtype, dev.allocator)
    if out.size:
        transfer.h2d(dev, out.buffer.ptr, host.ctypes.data, host.nbytes)
        dev.stream.encoder.hold(out.buffer)
    return out


def array_from_dlpack(device_index: int, obj) -> CudaArray:
    """The memory of a CUDA DLPack producer (CuPy, PyTorch, JAX...) or of an object with
    ``__cuda_array_interface__`` on `device_index`, as an array (no copy; the producer is kept
    alive, and released, with the buffer)."""
    dev = runtime.get_device(device_index)
    ptr, shape, dtype, strides, owner = dlpack.import_memory(dev, obj)
    size = 1
    for n in shape:
        size *= n
    return CudaArray(Buffer(ptr, size * dtype.itemsize, device_index, owner=owner), shape, dtype,
                     strides, 0)
