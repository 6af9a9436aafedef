"""Utility functions: all/any are the backend's `reduce` primitive; diff is written here from
slicing views and subtract (prepend/append joined with concat first)."""

from __future__ import annotations

import operator

import numpy as np

from . import _dtypes as dt
from ._array_object import Array
from ._creation_functions import full
from ._elementwise_functions import _python_scalar, _scalar_dtype
from ._manipulation_functions import broadcast_to, concat
from ._statistical_functions import _reduce
from ._validation import check_array, check_device, normalize_axis

_NUMERIC = dt.CATEGORIES["numeric"]


def all(x, /, *, axis=None, keepdims=False):
    check_array(x, "all")
    return _reduce("all", x, axis, keepdims, dt.bool, "all")


def any(x, /, *, axis=None, keepdims=False):
    check_array(x, "any")
    return _reduce("any", x, axis, keepdims, dt.bool, "any")


def _edge(x, edge, axis, label):
    """prepend/append as the array to join to x: an array of x's device, shape (but along
    `axis`) and a compatible dtype. A Python scalar (weak, as the standard's scalar operands) or a
    0-d array stands for x's shape with length 1 along `axis`, as NumPy, CuPy and JAX take it
    (Cubed's groupby appends an int)."""
    one_slice = x.shape[:axis] + (1,) + x.shape[axis + 1:]
    if type(edge) is not Array and isinstance(edge, (bool, int, float, complex, np.generic)):
        value = _python_scalar(edge)
        return full(one_slice, value, dtype=_scalar_dtype("diff", value, x.dtype, "numeric"),
                    device=x._device)
    check_array(edge, "diff", label)
    check_device(edge, label, x._device, "x", "diff")
    if edge.ndim == 0:
        edge = broadcast_to(edge, one_slice)
    if edge.ndim != x.ndim or [n for i, n in enumerate(edge.shape) if i != axis] != \
            [n for i, n in enumerate(x.shape) if i != axis]:
        raise ValueError(f"diff(): {label} of shape {edge.shape} must match x's shape {x.shape} "
                         f"except along axis {axis}")
    if edge.dtype not in _NUMERIC:  # numeric pairs always promote (_dtypes.promote)
        raise TypeError(f"diff(): {label} must have a numeric dtype, like x ({x.dtype}); "
                        f"got {edge.dtype}")
    return edge


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
            parts.insert(0, _edge(x, prepend, axis, "prepend"))
        if append is not None:
            parts.append(_edge(x, append, axis, "append"))
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
