"""The CUDA backend's primitives (names and semantics: arrayx/_backend.py).

Views (getitem with basic keys, reshape when the layout allows, permute_dims, broadcast_to) only
change metadata; keys with index arrays go to the gather/scatter kernels (indexing.py).
"""

from __future__ import annotations

import numpy as np

from .engine import dlpack, layout, transfer
from .kernels import elementwise, gather_scatter as indexing
from .kernels.gather_scatter import basic_view
from .kernels.elementwise import ops as ops
from .engine.array import CudaArray, array_from_dlpack, array_from_host, new_array
from .engine.layout import c_strides
from .engine import runtime


_I64 = np.dtype("int64")


# ---- transfers and creation ---------------------------------------------------------------

def from_host(device, host, copy=None):
    if copy is False:
        raise ValueError(f"moving a host array to {device} needs a copy, and copy=False was given")
    return array_from_host(device.index, host)


def to_host(a):
    return transfer.to_host(a if a.c_contig else elementwise.copy(a))


def empty(device, shape, dtype):
    dev = runtime.get_device(device.index)
    return new_array(dev.index, tuple(shape), np.dtype(dtype), dev.allocator)


def full(device, shape, fill_value, dtype):
    out = empty(device, shape, dtype)
    if out.size:
        elementwise.fill(out, fill_value)
    return out


def _index_op(device, name, op, scalars, dtypes, shape):
    """A new array computed from its element index alone (creation kernels)."""
    return elementwise.launch(name, op, scalars, dtypes, tuple(shape), device_index=device.index)


def arange(device, start, step, length, dtype):
    dtype = np.dtype(dtype)
    op, dts = ops.arange_op(dtype)
    if dtype.kind in "iu":
        start, step = start % (1 << 64), step % (1 << 64)
    return _index_op(device, "arange", op, (start, step), dts, (length,))


def linspace(device, start, stop, num, dtype, endpoint, precision):
    dtype, precision = np.dtype(dtype), np.dtype(precision)
    op, dts = ops.linspace_op(dtype, precision)
    # the step as NumPy works it out: in the precision's scalars (real ones for real bounds,
    # even into a complex dtype), each operation rounded
    complex_bounds = isinstance(start, complex) or isinstance(stop, complex)
    scalar = dts[0].type if complex_bounds else precision.type
    start, stop = scalar(start), scalar(stop)
    div = (num - 1) if endpoint else num
    with np.errstate(all="ignore"):
        delta = stop - start
        step = delta / scalar(div) if div > 0 else delta
    scale, divisor = (step, 1.0) if div <= 0 or step != 0 else (delta, float(div))
    last = num - 1 if endpoint and num > 1 else -1
    return _index_op(device, "linspace", op, (start, scale, divisor, stop, last), dts, (num,))


def eye(device, n_rows, n_cols, k, dtype):
    dtype = np.dtype(dtype)
    k = max(-n_rows, min(k, n_cols))  # a diagonal outside the matrix: all zeros, k fits int64
    return _index_op(device, "eye", ops.eye_op(dtype), (n_cols, k), (_I64, _I64), (n_rows, n_cols))


def triangle(a, k, upper):
    rows, cols = a.shape[-2], a.shape[-1]
    k = max(-rows, min(k, cols))  # beyond the matrix every column is on one side: k fits int64
    return elementwise.launch("triu" if upper else "tril", ops.triangle_op(a.dtype, upper),
                              (a, cols, rows, k), (a.dtype, _I64, _I64, _I64), a.shape)


def copy(a):
    return elementwise.copy(a)


def astype(a, dtype, copy=True):
    return elementwise.astype(a, dtype, copy)


def from_dlpack(device, obj, copy=None):
    dl_dev = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (dlpack.kDLCUDA, device.index)
    if int(dl_dev[0]) in (dlpack.kDLCPU, dlpack.kDLCUDAHost):
        if copy is False:
            raise BufferError(f"a host array cannot be imported to {device} without a copy")
        return array_from_host(device.index, np.from_dlpack(obj))
    if int(dl_dev[1]) != device.index:
        if copy is False:
            raise BufferError(f"array is on cuda:{dl_dev[1]}, not {device}, and copy=False was given")
        return array_from_host(device.index, to_host(array_from_dlpack(int(dl_dev[1]), obj)))
    imported = array_from_dlpack(device.index, obj)
    return elementwise.copy(imported) if copy else imported


def to_dlpack(a, stream=None, max_version=None, dl_device=None, copy=None):
    # dlpack exports memory as it is: the device copies an export needs are made here
    if dl_device is not None and tuple(dl_device)[0] == dlpack.kDLCPU:
        if copy is not False and not a.c_contig:
            a = elementwise.copy(a)
    elif copy:
        a = elementwise.copy(a)
    return dlpack.to_dlpack(a, stream, max_version, dl_device, copy)


def dlpack_device(a):
    return dlpack.dlpack_device(a)


# ---- elementwise ----------------------------------------------------------------------------

def unary(name, a):
    plan = elementwise.unary_plan(name, a.dtype)
    if plan[0] == "launch":
        return elementwise.unary(name, plan[1], a)
    if plan[0] == "copy":
        return elementwise.copy(a)
    out = new_array(a.device_index, a.shape, plan[2], runtime.get_device(a.device_index).allocator)
    return elementwise.fill(out, plan[1]) if out.size else out


def binary(name, a, b, dtype, out=None):
    return elementwise.binary(name, a, b, dtype, out)


def where(condition, a, b, dtype):
    return elementwise.where(condition, a, b, dtype)


def clip(a, lo, hi):
    if lo is None and hi is None:
        return elementwise.copy(a)
    if lo is None:
        return elementwise.binary("minimum", a, hi, a.dtype)
    if hi is None:
        return elementwise.binary("maximum", a, lo, a.dtype)
    return elementwise.launch("clip", ops.clip_op(a.dtype), (a, lo, hi), (a.dtype,) * 3, a.shape)


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
    """Whether a key (normalised by arrayx/_indexing.py) selects a view: no index arrays."""
    for k in key:
        if k.__class__ is CudaArray:
            return False
    return True


def getitem(a, key):
    if _is_basic(key):
        return basic_view(a, key)
    return indexing.getitem(a, key)


def setitem(a, key, value):
    if _is_basic(key):
        if len(key) == a.ndim and all(k.__class__ is int for k in key) and \
                (value.__class__ is not CudaArray or not value.shape):  # x[i, j] = v
            offset = 0
            for k, stride in zip(key, a.strides):
                offset += k * stride
            elementwise.set_element(a, offset, value)
            return
        elementwise.assign(basic_view(a, key), value)
        return
    indexing.setitem(a, key, value)


PRIMITIVES = {
    "from_host": from_host, "to_host": to_host, "empty": empty, "full": full, "copy": copy,
    "astype": astype, "arange": arange, "linspace": linspace, "eye": eye, "triangle": triangle,
    "from_dlpack": from_dlpack, "to_dlpack": to_dlpack, "dlpack_device": dlpack_device,
    "unary": unary, "binary": binary, "where": where, "clip": clip,
    "elementwise_program": elementwise.elementwise_program, "reshape": reshape,
    "permute_dims": permute_dims, "broadcast_to": broadcast_to, "getitem": getitem,
    "setitem": setitem,
}
