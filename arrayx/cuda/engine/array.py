"""The CUDA backend's native array: a device buffer with shape, strides and an element offset.

``Buffer`` owns one device allocation (or, for imported arrays, keeps the producer alive) and is
shared by every view of it; Python's reference count is the buffer's: when the last array and the
last queued kernel using it (the encoder holds those) are gone, ``__del__`` returns the block to
the caching allocator. ``CudaArray`` is metadata over a buffer: shape, strides *in elements*,
element offset, dtype (a numpy dtype), device index. Views share the buffer.
"""

from __future__ import annotations

import numpy as np


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


def c_strides(shape) -> tuple:
    """C-contiguous strides, in elements."""
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n if n > 0 else 1
    return tuple(reversed(strides))


def is_c_contiguous(shape, strides) -> bool:
    if 0 in shape:
        return True
    acc = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != acc:
            return False
        acc *= n
    return True


_EMPTY_BUFFERS: dict = {}


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

    # -- interop -------------------------------------------------------------------------
    @property
    def __cuda_array_interface__(self) -> dict:
        from . import runtime
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
        from .dlpack import to_dlpack
        return to_dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        return (2, self.device_index)

    def __array__(self, dtype=None, copy=None):
        from .transfer import to_host
        out = to_host(self)
        return out if dtype is None else out.astype(dtype, copy=False)


def new_array(device_index: int, shape: tuple, dtype: np.dtype, allocator) -> CudaArray:
    """A fresh C-contiguous array (uninitialised)."""
    size = 1
    for n in shape:
        size *= n
    nbytes = size * dtype.itemsize
    if nbytes == 0:
        buf = Buffer(0, 0, device_index)
    else:
        ptr, cls = allocator.alloc(nbytes)
        buf = Buffer(ptr, nbytes, device_index, allocator, cls)
    return CudaArray(buf, shape, dtype)


_strides_cache: dict = {}
_new = object.__new__


def new_contig(dev, shape: tuple, dtype: np.dtype, size: int, alloc) -> CudaArray:
    """Hot-path constructor of a fresh C-contiguous array of `size` > 0 elements on `dev`."""
    nbytes = size * dtype.itemsize
    ptr, cls = alloc.alloc(nbytes)
    buf = _new(Buffer)
    buf.ptr = ptr
    buf.nbytes = nbytes
    buf.size = cls
    buf.device_index = dev.index
    buf._release = alloc.release
    buf.owner = None
    a = _new(CudaArray)
    a.buffer = buf
    a.ptr = ptr
    a.shape = shape
    a.dtype = dtype
    a.ndim = len(shape)
    a.size = size
    st = _strides_cache.get(shape)
    if st is None:
        st = c_strides(shape)
        if len(_strides_cache) < 4096:
            _strides_cache[shape] = st
    a.strides = st
    a.offset = 0
    a.device_index = dev.index
    a.c_contig = True
    return a
