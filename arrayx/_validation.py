"""Checks shared by every group of the namespace: written once, used everywhere."""

from __future__ import annotations

import operator

import numpy as np

from . import _dtypes as dt
from ._array_object import Array
from ._devices import default_device, parse_device


def check_array(x, fname: str, argname: str = "x") -> Array:
    if type(x) is not Array:
        raise TypeError(f"{fname}() expects an arrayx array for {argname!r}, got {type(x).__name__}")
    return x


def check_dtype_category(x: Array, category: str, fname: str) -> None:
    if x.dtype not in dt.CATEGORIES[category]:
        raise TypeError(f"{fname}() requires {dt.describe_category(category)} dtype, got {x.dtype}")


def same_device(arrays, fname: str):
    device = arrays[0]._device
    for a in arrays[1:]:
        if a._device is not device:
            raise ValueError(f"{fname}(): arrays are on different devices ({device} and {a._device}); "
                             f"move them with to_device() first")
    return device


def resolve_device(device):
    return default_device() if device is None else parse_device(device)


def normalize_axis(axis, ndim: int, fname: str) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fname}(): axis must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= axis < ndim:
        raise IndexError(f"{fname}(): axis {axis} is out of bounds for an array of {ndim} dimension(s)")
    return axis + ndim if axis < 0 else axis


def normalize_axes(axis, ndim: int, fname: str) -> tuple:
    """None -> all axes; int or tuple -> sorted, non-negative, unique axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        axes = tuple(normalize_axis(a, ndim, fname) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{fname}(): repeated axis in {axis}")
        return tuple(sorted(axes))
    return (normalize_axis(axis, ndim, fname),)


def normalize_shape(shape, fname: str) -> tuple:
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{fname}(): shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{fname}(): negative dimension in shape {shape}")
    return shape


def broadcast_shapes(*shapes) -> tuple:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n != out[i]:
                if out[i] == 1:
                    out[i] = n
                elif n != 1:
                    raise ValueError("shapes " + ", ".join(str(tuple(x)) for x in shapes)
                                     + " cannot be broadcast together")
    return tuple(out)


def python_scalar_fits(value, dtype) -> bool:
    """Whether a Python scalar may be mixed with an array of `dtype` (the standard's rules)."""
    if isinstance(value, bool):
        return dtype is dt.bool
    if isinstance(value, int):
        return dtype.kind in "iufc"
    if isinstance(value, float):
        return dtype.kind in "fc"
    if isinstance(value, complex):
        return dtype.kind == "c"
    return False


def check_int_in_range(value, dtype, fname: str) -> None:
    if dtype.kind in "iu" and type(value) is int:
        info = int_limits(dtype)
        if not info[0] <= value <= info[1]:
            raise OverflowError(f"{fname}(): Python int {value} is out of range for {dtype}")


_LIMITS = {}


def int_limits(dtype):
    lim = _LIMITS.get(dtype)
    if lim is None:
        info = np.iinfo(dtype)
        lim = _LIMITS[dtype] = (int(info.min), int(info.max))
    return lim
