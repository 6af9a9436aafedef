"""Searching functions. argmax/argmin, nonzero, searchsorted and where are backend primitives;
count_nonzero is written here (cast to bool, sum as int64)."""

from __future__ import annotations

from . import _dtypes as dt
from ._array_object import Array
from ._elementwise_functions import _scalar_dtype, binary_operands
from ._validation import (broadcast_shapes, check_array, check_device, normalize_axes,
                          normalize_axis)

_REAL_NUMERIC = dt.CATEGORIES["real numeric"]


def check_argreduce(name, x, axis, argname="x"):
    """argmax/argmin and their nan forms: the checks, and the normalised axis (or None)."""
    check_array(x, name, argname)
    if x.dtype not in _REAL_NUMERIC:
        raise TypeError(f"{name}() requires a real numeric dtype, got {x.dtype}")
    if axis is None:
        if x.size == 0:
            raise ValueError(f"{name}() of an empty array: there is no element to point to")
        return None
    axis = normalize_axis(axis, x.ndim, name)
    if x.shape[axis] == 0:
        raise ValueError(f"{name}(): axis {axis} of the array of shape {x.shape} has size 0, "
                         f"so there is no element to point to")
    return axis


def _argreduce(name, x, axis, keepdims):
    axis = check_argreduce(name, x, axis)
    device = x._device
    return Array._new(device.backend.argreduce(name, x._data, axis, bool(keepdims)), device)


def argmax(x, /, *, axis=None, keepdims=False):
    return _argreduce("argmax", x, axis, keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    return _argreduce("argmin", x, axis, keepdims)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    check_array(x, "count_nonzero")
    axes = normalize_axes(axis, x.ndim, "count_nonzero")
    device = x._device
    backend = device.backend
    a = x._data
    if a.dtype is not dt.bool:
        a = backend.astype(a, dt.bool, False)
    if not axes:
        return Array._new(backend.astype(a, dt.int64, True), device)
    return Array._new(backend.reduce("sum", a, axes, bool(keepdims), dt.int64), device)


def nonzero(x, /):
    check_array(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero() of a 0-d array is not supported; use nonzero(reshape(x, (1,))) "
                         "or convert it with bool()")
    device = x._device
    return tuple(Array._new(i, device) for i in device.backend.nonzero(x._data))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    check_array(x1, "searchsorted", "x1")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted(): x1 must be one-dimensional, got shape {x1.shape}")
    if x1.dtype not in _REAL_NUMERIC:
        raise TypeError(f"searchsorted() requires a real numeric dtype for x1, got {x1.dtype}")
    if side != "left" and side != "right":
        raise ValueError(f"searchsorted(): side must be 'left' or 'right', got {side!r}")
    device = x1._device
    backend = device.backend
    a = x1._data
    if type(x2) is Array:
        check_device(x2, "x2", device, "x1", "searchsorted")
        # Mixed kinds compare in NumPy's promoted dtype, as the elementwise comparisons do.
        dtype = dt.promote(x1.dtype, x2.dtype)
        if dtype not in _REAL_NUMERIC:
            raise TypeError(f"searchsorted(): x1 ({x1.dtype}) and x2 ({x2.dtype}) promote to "
                            f"{dtype}, which is not real numeric; cast x2 with astype() first")
        v = x2._data if x2.dtype is dtype else backend.astype(x2._data, dtype, True)
    else:
        if isinstance(x2, bool):
            raise TypeError("searchsorted(): x2 must be an arrayx array or a real Python number, "
                            "not bool")
        dtype = _scalar_dtype("searchsorted", x2, x1.dtype, "real numeric")
        v = backend.full(device, (), x2, dtype)
    if sorter is not None:
        check_array(sorter, "searchsorted", "sorter")
        check_device(sorter, "sorter", device, "x1", "searchsorted")
        if sorter.dtype.kind not in "iu":
            raise TypeError(f"searchsorted(): sorter must have an integer dtype, got {sorter.dtype}")
        if sorter.shape != x1.shape:
            raise ValueError(f"searchsorted(): sorter of shape {sorter.shape} does not match x1's "
                             f"shape {x1.shape}")
        a = backend.take(a, sorter._data, 0)
    if a.dtype is not dtype:
        a = backend.astype(a, dtype, True)
    return Array._new(backend.searchsorted(a, v, side), device)


_where_operands = binary_operands("where", "any")


def where(condition, x1, x2, /):
    check_array(condition, "where", "condition")
    if condition.dtype is not dt.bool:
        raise TypeError(f"where(): condition must have dtype bool, got {condition.dtype}")
    a, b, dtype, device = _where_operands(x1, x2)
    check_device(condition, "condition", device, "x1" if type(x1) is Array else "x2", "where")
    broadcast_shapes(condition.shape, *(v.shape for v in (a, b) if not isinstance(v, _SCALARS)))
    return Array._new(device.backend.where(condition._data, a, b, dtype), device)


_SCALARS = (bool, int, float, complex)


__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"]
