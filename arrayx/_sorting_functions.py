"""Sorting functions: sort and argsort are backend primitives.

Order: ascending puts NaNs last; descending is the exact reverse by value (NaNs first), and a
stable sort keeps equal elements in their original order in both directions.
"""

from __future__ import annotations

from . import _dtypes as dt
from ._array_object import Array
from ._validation import check_array, normalize_axis

_REAL_NUMERIC = dt.CATEGORIES["real numeric"]


def _sort_args(x, axis, fname):
    check_array(x, fname)
    if x.dtype not in _REAL_NUMERIC:
        raise TypeError(f"{fname}() requires a real numeric dtype, got {x.dtype}")
    if x.ndim == 0:
        raise ValueError(f"{fname}() needs an array of at least one dimension, got a 0-d array")
    return normalize_axis(axis, x.ndim, fname)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    axis = _sort_args(x, axis, "sort")
    device = x._device
    return Array._new(device.backend.sort(x._data, axis, bool(descending), bool(stable)), device)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    axis = _sort_args(x, axis, "argsort")
    device = x._device
    return Array._new(device.backend.argsort(x._data, axis, bool(descending), bool(stable)), device)


__all__ = ["argsort", "sort"]
