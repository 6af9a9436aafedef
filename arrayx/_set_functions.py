"""Set functions: unique_* share the backend's `unique` primitive (over the flattened array,
NaNs distinct, signed zeros one value); isin is a primitive too."""

from __future__ import annotations

from typing import NamedTuple

from . import _dtypes as dt
from ._array_object import Array
from ._elementwise_functions import _scalar_dtype
from ._validation import check_array, check_device, int_limits


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _unique(x, fname, return_index, return_inverse, return_counts):
    check_array(x, fname)
    device = x._device
    backend = device.backend
    values, index, inverse, counts = backend.unique(x._data, return_index, return_inverse,
                                                    return_counts)
    if inverse is not None and inverse.shape != x.shape:
        inverse = backend.reshape(inverse, x.shape, None)
    return tuple(None if r is None else Array._new(r, device) for r in (values, index, inverse, counts))


def unique_all(x, /):
    return UniqueAllResult(*_unique(x, "unique_all", True, True, True))


def unique_counts(x, /):
    values, _, _, counts = _unique(x, "unique_counts", False, False, True)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /):
    values, _, inverse, _ = _unique(x, "unique_inverse", False, True, False)
    return UniqueInverseResult(values, inverse)


def unique_values(x, /):
    return _unique(x, "unique_values", False, False, False)[0]


def _out_of_range(value, dtype):
    """A Python int that no element of an integer array of `dtype` can equal."""
    if dtype.kind in "iu" and type(value) is int:
        lo, hi = int_limits(dtype)
        return not lo <= value <= hi
    return False


def isin(x1, x2, /, *, invert=False):
    invert = bool(invert)
    if type(x1) is Array:
        device = x1._device
        backend = device.backend
        a = x1._data
        if type(x2) is Array:
            check_device(x2, "x2", device, "x1", "isin")
            b = x2._data
            dtype = dt.promote(a.dtype, b.dtype)
            if b.dtype is not dtype:
                b = backend.astype(b, dtype, True)
        else:
            if _out_of_range(x2, a.dtype):  # no element can equal it
                return Array._new(backend.full(device, a.shape, invert, dt.bool), device)
            dtype = _scalar_dtype("isin", x2, a.dtype, "any")
            b = backend.full(device, (), x2, dtype)
        if a.dtype is not dtype:
            a = backend.astype(a, dtype, True)
    elif type(x2) is Array:
        device = x2._device
        backend = device.backend
        b = x2._data
        if _out_of_range(x1, b.dtype):
            return Array._new(backend.full(device, (), invert, dt.bool), device)
        dtype = _scalar_dtype("isin", x1, b.dtype, "any")
        a = backend.full(device, (), x1, dtype)
        if b.dtype is not dtype:
            b = backend.astype(b, dtype, True)
    else:
        raise TypeError(f"isin(): at least one of x1 and x2 must be an arrayx array, got "
                        f"{type(x1).__name__} and {type(x2).__name__}")
    return Array._new(backend.isin(a, b, invert), device)


__all__ = ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"]
