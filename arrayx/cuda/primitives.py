"""The CUDA backend's primitives (names and semantics: arrayx/_backend.py).

Views (getitem with basic keys, reshape when the layout allows, permute_dims, broadcast_to) only
change metadata. Anything this backend does not implement yet goes through
``_registry.host_fallback`` (a host round trip that warns once, or raises under
``set_host_fallback('error')``).
"""

from __future__ import annotations

import operator

import numpy as np

from . import dlpack, elementwise, layout, transfer
from .array import CudaArray, c_strides, new_array
from . import runtime


def _fallback(name):
    from .._registry import host_fallback
    return host_fallback("cuda", name)


# ---- transfers and creation ---------------------------------------------------------------

def from_host(device, host, copy=None):
    if copy is False:
        raise ValueError(f"moving a host array to {device} needs a copy, and copy=False was given")
    return transfer.from_host(device.index, np.asarray(host))


def to_host(a):
    return transfer.to_host(a)


def empty(device, shape, dtype):
    dev = runtime.get_device(device.index)
    return new_array(dev.index, tuple(shape), np.dtype(dtype), dev.allocator)


def full(device, shape, fill_value, dtype):
    out = empty(device, shape, dtype)
    if out.size:
        elementwise.fill(out, fill_value)
    return out


def copy(a):
    return elementwise.copy(a)


def astype(a, dtype, copy=True):
    return elementwise.astype(a, dtype, copy)


def from_dlpack(device, obj, copy=None):
    dl_dev = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (dlpack.kDLCUDA, device.index)
    if int(dl_dev[0]) in (dlpack.kDLCPU, dlpack.kDLCUDAHost):
        if copy is False:
            raise BufferError(f"a host array cannot be imported to {device} without a copy")
        return transfer.from_host(device.index, np.from_dlpack(obj))
    if int(dl_dev[1]) != device.index:
        if copy is False:
            raise BufferError(f"array is on cuda:{dl_dev[1]}, not {device}, and copy=False was given")
        src = dlpack.from_dlpack(int(dl_dev[1]), obj)
        return transfer.from_host(device.index, transfer.to_host(src))
    return dlpack.from_dlpack(device.index, obj, copy)


def to_dlpack(a, stream=None, max_version=None, dl_device=None, copy=None):
    return dlpack.to_dlpack(a, stream, max_version, dl_device, copy)


def dlpack_device(a):
    return dlpack.dlpack_device(a)


# ---- elementwise --------------------------------------------------------------------------

_EW_BINARY = elementwise.BINARY
_ew_binary = elementwise.binary


def binary(name, a, b, dtype, out=None):
    if out is None and name in _EW_BINARY:
        try:
            return _ew_binary(name, a, b, dtype)
        except NotImplementedError:
            return _fallback("binary")(name, a, b, dtype)
    return _binary_general(name, a, b, dtype, out)


def _binary_general(name, a, b, dtype, out):
    if name in elementwise.BINARY and (isinstance(a, CudaArray) or isinstance(b, CudaArray)):
        if out is not None and isinstance(b, CudaArray) and b is not out and \
                elementwise._overlaps(out, b):
            b = elementwise.copy(b)  # in-place op reading another view of its own memory
        try:
            return elementwise.binary(name, a, b, dtype, out)
        except NotImplementedError:
            pass
    return _fallback("binary")(name, a, b, dtype, out=out)


# ---- views and data movement --------------------------------------------------------------

def reshape(a, shape, copy=None):
    shape = tuple(shape)
    if copy:
        a = elementwise.copy(a)
        return a.view(shape, c_strides(shape), 0, True)
    if a.c_contig:
        return a.view(shape, c_strides(shape), a.offset, True)
    st = layout.reshape_strides(a.shape, a.strides, shape)
    if st is None:
        if copy is False:
            raise ValueError("reshape with copy=False is impossible for this layout")
        a = elementwise.copy(a)
        return a.view(shape, c_strides(shape), 0, True)
    return a.view(shape, st, a.offset)


def permute_dims(a, axes):
    return a.view([a.shape[i] for i in axes], [a.strides[i] for i in axes], a.offset)


def broadcast_to(a, shape):
    shape = tuple(shape)
    return a.view(shape, layout.broadcast_strides(a.shape, a.strides, shape), a.offset)


def _is_basic(key) -> bool:
    for k in key:
        if not (k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))):
            return False
        if isinstance(k, bool):
            return False
    return True


def basic_view(a: CudaArray, key: tuple) -> CudaArray:
    """The view selected by a tuple of int, slice, None and Ellipsis (ints already in range)."""
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    shape, strides = [], []
    offset = a.offset
    dim = 0
    seen_ellipsis = False
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
        elif k is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            for _ in range(a.ndim - n_real):
                shape.append(a.shape[dim])
                strides.append(a.strides[dim])
                dim += 1
        elif isinstance(k, slice):
            start, stop, step = k.indices(a.shape[dim])
            length = len(range(start, stop, step))
            if length:
                offset += start * a.strides[dim]
            shape.append(length)
            strides.append(a.strides[dim] * step)
            dim += 1
        else:
            i = operator.index(k)
            if i < 0:
                i += a.shape[dim]
            if not 0 <= i < a.shape[dim]:
                raise IndexError(f"index {k} is out of bounds for axis {dim} with size {a.shape[dim]}")
            offset += i * a.strides[dim]
            dim += 1
    while dim < a.ndim:
        shape.append(a.shape[dim])
        strides.append(a.strides[dim])
        dim += 1
    return a.view(shape, strides, offset)


def getitem(a, key):
    if not isinstance(key, tuple):
        key = (key,)
    if _is_basic(key):
        return basic_view(a, key)
    return _fallback("getitem")(a, key)


def setitem(a, key, value):
    if not isinstance(key, tuple):
        key = (key,)
    if _is_basic(key):
        view = basic_view(a, key)
        if isinstance(value, CudaArray) and value.device_index != a.device_index:
            value = transfer.from_host(a.device_index, transfer.to_host(value))
        elementwise.assign(view, value)
        return
    # Advanced keys: run the CPU backend's setitem on a host copy and write it back. A native
    # value keeps the fallback's device bookkeeping (it needs one native array among the args).
    host = transfer.to_host(a)
    if not isinstance(value, CudaArray):
        value = full(runtime_device(a.device_index), (), value, a.dtype)
    _fallback("setitem")(host, key, value)
    transfer.write_from_host(a, host)


def runtime_device(index):
    from .._devices import cuda_device
    return cuda_device(index)


PRIMITIVES = {
    "from_host": from_host, "to_host": to_host, "empty": empty, "full": full, "copy": copy,
    "astype": astype, "from_dlpack": from_dlpack, "to_dlpack": to_dlpack,
    "dlpack_device": dlpack_device, "binary": binary, "reshape": reshape,
    "permute_dims": permute_dims, "broadcast_to": broadcast_to, "getitem": getitem,
    "setitem": setitem,
}
