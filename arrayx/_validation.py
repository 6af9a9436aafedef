"""Checks shared by every group of the namespace: written once, used everywhere."""

from __future__ import annotations

import math
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


def check_device(a: Array, argname: str, device, refname: str, fname: str) -> None:
    """ValueError unless the array argument `argname` is on `device`, the device of `refname`."""
    if a._device is not device:
        raise ValueError(f"{fname}(): {argname} is on {a._device} but {refname} is on {device}")


def resolve_device(device):
    return default_device() if device is None else parse_device(device)


def normalize_axis(axis, ndim: int, fname: str, argname: str = "axis") -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fname}(): {argname} must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= axis < ndim:
        # NumPy's wording ("axis 3 is out of bounds for array of dimension 2"), which clients'
        # tests match.
        what = "axis" if argname == "axis" else f"{argname} axis"
        raise IndexError(f"{fname}(): {what} {axis} is out of bounds for array of dimension "
                         f"{ndim}")
    return axis + ndim if axis < 0 else axis


def check_int(value, fname: str, argname: str) -> int:
    """An integer argument (a bool is refused: it is almost always a mistake) as a Python int."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{fname}(): {argname} must be an int, got {type(value).__name__} {value!r}")
    return operator.index(value)


def index_tuple(value, fname: str, argname: str) -> tuple:
    """An int, or a tuple or list of ints (the standard says tuple; clients such as SciPy pass
    lists), as a tuple of Python ints. Every shape and axes argument goes through here so that a
    wrong type is a TypeError naming the argument, never an error from deep inside a loop."""
    if isinstance(value, (tuple, list)):
        items = value
    elif hasattr(value, "__index__") and not isinstance(value, bool):
        items = (value,)
    else:
        raise TypeError(f"{fname}(): {argname} must be an int or a tuple of ints, "
                        f"got {type(value).__name__} {value!r}")
    out = []
    for v in items:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{fname}(): {argname} must hold ints only, got "
                            f"{type(v).__name__} {v!r} in {value!r}")
        out.append(operator.index(v))
    return tuple(out)


def normalize_axes(axis, ndim: int, fname: str, argname: str = "axis") -> tuple:
    """None -> all axes; int, tuple or list -> sorted, non-negative, unique axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(normalize_axis(a, ndim, fname, argname) for a in index_tuple(axis, fname, argname))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}(): repeated axis in {argname}={axis!r}")
    return tuple(sorted(axes))


def normalize_shape(shape, fname: str, argname: str = "shape") -> tuple:
    shape = index_tuple(shape, fname, argname)
    if any(s < 0 for s in shape):
        raise ValueError(f"{fname}(): negative dimension in {argname} {shape}; sizes must be >= 0")
    return shape


#: The largest array in bytes (NumPy's limit, the largest signed 64-bit offset). A result size
#: computed past it wraps around in NumPy's and the kernels' 64-bit arithmetic.
MAX_NBYTES = 2 ** 63 - 1


def check_result_size(shape, dtype, fname: str) -> None:
    """Refuse a result no 64-bit offset can address, before any backend computes its size."""
    n = math.prod(shape)
    if n * dtype.itemsize > MAX_NBYTES:
        raise ValueError(f"{fname}(): the result would have {n} elements of {dtype} "
                         f"({n * dtype.itemsize} bytes), more than the {MAX_NBYTES} bytes an array "
                         f"can address")


def check_dtype(dtype, fname: str, argname: str = "dtype"):
    """The arrayx dtype for a dtype argument, or a TypeError naming the argument."""
    try:
        return dt.canonical_dtype(dtype)
    except TypeError:  # also an unhashable value (a list, a dict) tested against the dtype set
        raise TypeError(f"{fname}(): {argname} must be an array API dtype (xp.float64, xp.int32, "
                        f"xp.bool, ...), got {type(dtype).__name__} {dtype!r}") from None


def broadcast_shapes(*shapes) -> tuple:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n != out[i]:
                if out[i] == 1:
                    out[i] = n
                elif n != 1:
                    # NumPy's wording, which clients' tests match
                    raise ValueError("operands could not be broadcast together with shapes "
                                     + " ".join(str(tuple(x)) for x in shapes))
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
