"""Utility functions: all/any are the backend's `reduce` primitive; diff is written here from
slicing views and subtract (prepend/append joined with concat first)."""

from __future__ import annotations

import operator

from . import _dtypes as dt
from ._array_object import Array
from ._manipulation_functions import concat
from ._statistical_functions import _reduce
from ._validation import check_array, normalize_axis

_NUMERIC = dt.CATEGORIES["numeric"]


def all(x, /, *, axis=None, keepdims=False):
    check_array(x, "all")
    return _reduce("all", x, axis, keepdims, dt.bool, "all")


def any(x, /, *, axis=None, keepdims=False):
    check_array(x, "any")
    return _reduce("any", x, axis, keepdims, dt.bool, "any")


def _check_edge(x, edge, axis, label):
    """prepend/append: an array of x's device, shape (but along `axis`) and a compatible dtype."""
    check_array(edge, "diff", label)
    if edge._device is not x._device:
        raise ValueError(f"diff(): {label} is on {edge._device} but x is on {x._device}")
    if edge.ndim != x.ndim or [n for i, n in enumerate(edge.shape) if i != axis] != \
            [n for i, n in enumerate(x.shape) if i != axis]:
        raise ValueError(f"diff(): {label} of shape {edge.shape} must match x's shape {x.shape} "
                         f"except along axis {axis}")
    if edge.dtype not in _NUMERIC:  # numeric pairs always promote (_dtypes.promote)
        raise TypeError(f"diff(): {label} must have a numeric dtype, like x ({x.dtype}); "
                        f"got {edge.dtype}")


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    check_array(x, "diff")
    if x.dtype not in _NUMERIC:
        raise TypeError(f"diff() requires a numeric dtype, got {x.dtype}")
    if x.ndim == 0:
        raise ValueError("diff() needs an array of at least one dimension, got a 0-d array")
    axis = normalize_axis(axis, x.ndim, "diff")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"diff(): n must be an integer, got {type(n).__name__}") from None
    if n < 0:
        raise ValueError(f"diff(): n must be non-negative, got {n}")
    if prepend is not None or append is not None:
        parts = [x]
        if prepend is not None:
            _check_edge(x, prepend, axis, "prepend")
            parts.insert(0, prepend)
        if append is not None:
            _check_edge(x, append, axis, "append")
            parts.append(append)
        x = concat(parts, axis=axis)
    if n == 0:
        return x
    device = x._device
    backend = device.backend
    dtype = x.dtype
    a = x._data
    lead = (slice(None),) * axis
    upper = lead + (slice(1, None),)
    lower = lead + (slice(None, -1),)
    for _ in range(n):
        if a.shape[axis] == 0:
            break
        a = backend.binary("subtract", backend.getitem(a, upper), backend.getitem(a, lower), dtype)
    return Array._new(a, device)


__all__ = ["all", "any", "diff"]
