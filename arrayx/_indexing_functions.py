"""Indexing functions: take and take_along_axis, the backend's gather primitives.

Indices in [-n, n) are valid (negative ones count from the end); the gather primitive wraps them
as it reads, which costs nothing extra on a GPU. Indices out of that range raise IndexError from
the backend.
"""

from __future__ import annotations

import numpy as np

from ._array_object import Array
from ._validation import broadcast_shapes, check_array, check_device, normalize_axis


def _check_indices(x, indices, fname):
    check_array(indices, fname, "indices")
    check_device(indices, "indices", x._device, "x", fname)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{fname}(): indices must have an integer dtype, got {indices.dtype}")


def take(x, indices, /, *, axis=None):
    check_array(x, "take")
    # One integer index, as NumPy (and Cubed's var/std) take it: the axis is dropped.
    one_index = isinstance(indices, (int, np.integer)) and not isinstance(indices, (bool, np.bool_))
    if not one_index:
        _check_indices(x, indices, "take")
    if x.ndim == 0:
        raise ValueError("take() needs an array of at least one dimension, got a 0-d array")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take(): axis must be given for an array of {x.ndim} dimensions")
        axis = 0
    else:
        axis = normalize_axis(axis, x.ndim, "take")
    if one_index:
        return _take_one(x, int(indices), axis)
    if indices.ndim != 1:
        raise ValueError(f"take(): indices must be one-dimensional, got shape {indices.shape}")
    device = x._device
    backend = device.backend
    return Array._new(backend.take(x._data, indices._data, axis), device)


def _take_one(x, index, axis):
    size = x.shape[axis]
    if not -size <= index < size:
        raise IndexError(f"take(): index {index} is out of bounds for axis {axis} with size {size}")
    backend = x._device.backend
    view = backend.getitem(x._data, (slice(None),) * axis + (index % size,))
    # A new array, as take's result always is (a view would let writes reach x).
    return Array._new(backend.copy(view), x._device)


def take_along_axis(x, indices, /, *, axis=-1):
    check_array(x, "take_along_axis")
    _check_indices(x, indices, "take_along_axis")
    ndim = x.ndim
    if ndim == 0:
        raise ValueError("take_along_axis() needs an array of at least one dimension, got a 0-d array")
    if indices.ndim != ndim:
        raise ValueError(f"take_along_axis(): indices must have as many dimensions as x ({ndim}), "
                         f"got shape {indices.shape}")
    axis = normalize_axis(axis, ndim, "take_along_axis")
    device = x._device
    backend = device.backend
    a = x._data
    idx = indices._data
    # Every axis but `axis` broadcasts; the primitive gets both operands at the common shape.
    xs, js = x.shape, indices.shape
    if xs[:axis] != js[:axis] or xs[axis + 1:] != js[axis + 1:]:
        try:
            common = list(broadcast_shapes(xs[:axis] + (1,) + xs[axis + 1:],
                                           js[:axis] + (1,) + js[axis + 1:]))
        except ValueError:
            raise ValueError(f"take_along_axis(): x of shape {xs} and indices of shape {js} do not "
                             f"broadcast together outside axis {axis}") from None
        common[axis] = xs[axis]
        if tuple(common) != xs:
            a = backend.broadcast_to(a, tuple(common))
        common[axis] = js[axis]
        if tuple(common) != js:
            idx = backend.broadcast_to(idx, tuple(common))
    return Array._new(backend.take_along_axis(a, idx, axis), device)


__all__ = ["take", "take_along_axis"]
