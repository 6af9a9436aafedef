"""Indexing functions: take and take_along_axis, the backend's gather primitives.

Negative indices count from the end; they are mapped to non-negative ones here (compare, add,
select), so a backend sees indices in [0, n) whenever the caller's were in [-n, n). Indices out
of that range reach the backend unchanged: NumPy raises IndexError for them (the standard leaves
the behaviour unspecified).
"""

from __future__ import annotations

from . import _dtypes as dt
from ._array_object import Array
from ._validation import broadcast_shapes, check_array, int_limits, normalize_axis


def _check_indices(x, indices, fname):
    check_array(indices, fname, "indices")
    if indices._device is not x._device:
        raise ValueError(f"{fname}(): indices are on {indices._device} but x is on {x._device}")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{fname}(): indices must have an integer dtype, got {indices.dtype}")


def _wrap_negative(backend, idx, n):
    """Map indices in [-n, 0) to [0, n); unsigned indices are returned unchanged."""
    if idx.dtype.kind == "u" or idx.size == 0:
        return idx
    if n > int_limits(idx.dtype)[1]:  # idx + n would overflow the index dtype
        idx = backend.astype(idx, dt.int64, True)
    dtype = idx.dtype
    negative = backend.binary("less", idx, 0, dtype)
    return backend.where(negative, backend.binary("add", idx, n, dtype), idx, dtype)


def take(x, indices, /, *, axis=None):
    check_array(x, "take")
    _check_indices(x, indices, "take")
    if x.ndim == 0:
        raise ValueError("take() needs an array of at least one dimension, got a 0-d array")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take(): axis must be given for an array of {x.ndim} dimensions")
        axis = 0
    else:
        axis = normalize_axis(axis, x.ndim, "take")
    if indices.ndim != 1:
        raise ValueError(f"take(): indices must be one-dimensional, got shape {indices.shape}")
    device = x._device
    backend = device.backend
    idx = _wrap_negative(backend, indices._data, x.shape[axis])
    return Array._new(backend.take(x._data, idx, axis), device)


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
    idx = _wrap_negative(backend, idx, xs[axis])
    return Array._new(backend.take_along_axis(a, idx, axis), device)


__all__ = ["take", "take_along_axis"]
