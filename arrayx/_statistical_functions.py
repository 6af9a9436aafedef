"""Statistical functions: reductions (sum, prod, max, min, mean), the moments (var, std: one
`moments` primitive call, NaN where the count less the correction is not positive) and scans
(cumulative_sum, cumulative_prod) are backend primitives. Beyond the standard, mean takes
NumPy's `dtype=` (the accumulation and result dtype).

Result dtypes follow the standard: sum/prod/cumulative_* of a signed integer (or bool) array
give int64, of an unsigned one uint64, of a floating one the same dtype, unless `dtype` is given;
mean/var/std keep a floating dtype and give float64 for integer input.
"""

from __future__ import annotations

from . import _dtypes as dt
from ._array_object import Array
from ._validation import check_array, check_dtype, normalize_axes, normalize_axis

_REAL_NUMERIC = dt.CATEGORIES["real numeric"]


def _accumulation_dtype(x, dtype, fname):
    """The result dtype of sum/prod/cumulative_* (see the module docstring)."""
    if dtype is None:
        kind = x.dtype.kind
        if kind == "i" or kind == "b":
            return dt.int64
        if kind == "u":
            return dt.uint64
        return x.dtype
    dtype = check_dtype(dtype, fname)
    kind, target = x.dtype.kind, dtype.kind
    if target not in "iufc":
        raise TypeError(f"{fname}(): dtype must be a numeric dtype, got {dtype}")
    if (kind == "c" and target != "c") or (kind == "f" and target not in "fc"):
        raise TypeError(f"{fname}(): cannot accumulate a {x.dtype} array in {dtype} "
                        f"(that would discard part of each value); cast it with astype() first")
    return dtype


def _floating_dtype(x, fname):
    """mean/var/std: floating input keeps its dtype, integer input gives float64."""
    kind = x.dtype.kind
    if kind == "f" or (kind == "c" and fname == "mean"):
        return x.dtype
    if kind in "iu":
        return dt.float64
    wanted = "a real floating-point" if fname != "mean" else "a floating-point"
    raise TypeError(f"{fname}() requires {wanted} (or integer) dtype, got {x.dtype}")


def _reduce(name, x, axis, keepdims, dtype, fname):
    """Validate the axes and run the backend's `reduce` primitive."""
    axes = normalize_axes(axis, x.ndim, fname)
    device = x._device
    if not axes:  # nothing to reduce (0-d input, or axis=()): each element is its own result
        return Array._new(device.backend.astype(x._data, dtype, True), device)
    return Array._new(device.backend.reduce(name, x._data, axes, bool(keepdims), dtype), device)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    check_array(x, "sum")
    return _reduce("sum", x, axis, keepdims, _accumulation_dtype(x, dtype, "sum"), "sum")


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    check_array(x, "prod")
    return _reduce("prod", x, axis, keepdims, _accumulation_dtype(x, dtype, "prod"), "prod")


# The extremum of booleans (beyond the standard, which says "should" be real numeric; NumPy,
# CuPy and PyTorch take bool, and SciPy's describe() passes it): the largest is any(), the
# smallest all().
_BOOL_EXTREMUM = {"max": "any", "nanmax": "any", "min": "all", "nanmin": "all"}


def _extremum(name, x, axis, keepdims, reduction=None, argname="x"):
    """max/min and nanmax/nanmin: validate, then the backend's `reduction` (default `name`)."""
    check_array(x, name, argname)
    if x.dtype is dt.bool:
        reduction = _BOOL_EXTREMUM[name]
    elif x.dtype not in _REAL_NUMERIC:
        raise TypeError(f"{name}() requires a real numeric or bool dtype, got {x.dtype}")
    axes = normalize_axes(axis, x.ndim, name)
    device = x._device
    if not axes:
        return Array._new(device.backend.copy(x._data), device)
    shape = x.shape
    for i in axes:
        if shape[i] == 0:
            raise ValueError(f"{name}() of an empty selection: axis {i} of the array of shape "
                             f"{shape} has size 0, and the {name.removeprefix('nan')}imum of no "
                             f"elements is undefined")
    return Array._new(device.backend.reduce(reduction or name, x._data, axes, bool(keepdims),
                                            x.dtype), device)


def max(x, /, *, axis=None, keepdims=False):
    return _extremum("max", x, axis, keepdims)


def min(x, /, *, axis=None, keepdims=False):
    return _extremum("min", x, axis, keepdims)


def _mean_dtype(x, dtype, fname):
    """The result (and accumulation) dtype of mean/nanmean: `dtype` when given (beyond the
    standard, as NumPy's: any floating dtype that keeps the values' kind), else the standard's."""
    if x.dtype.kind not in "iufc":
        raise TypeError(f"{fname}() requires a floating-point (or integer) dtype, got {x.dtype}")
    if dtype is None:
        return x.dtype if x.dtype.kind in "fc" else dt.float64
    dtype = check_dtype(dtype, fname)
    if dtype.kind not in "fc":
        raise TypeError(f"{fname}(): dtype must be a floating-point dtype, got {dtype}")
    if x.dtype.kind == "c" and dtype.kind != "c":
        raise TypeError(f"{fname}(): cannot average a {x.dtype} array in {dtype} (that would "
                        f"discard the imaginary parts)")
    return dtype


def mean(x, /, *, axis=None, keepdims=False, dtype=None):
    check_array(x, "mean")
    return _reduce("mean", x, axis, keepdims, _mean_dtype(x, dtype, "mean"), "mean")


def _var(x, axis, correction, keepdims, fname):
    """var/std: validate, then the backend's `moments` primitive (one pass on cuda)."""
    check_array(x, fname)
    dtype = _floating_dtype(x, fname)
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        raise TypeError(f"{fname}(): correction must be a Python int or float, "
                        f"got {type(correction).__name__}")
    axes = normalize_axes(axis, x.ndim, fname)
    return x._device.backend.moments(fname, x._data, axes, float(correction), bool(keepdims),
                                     dtype)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    return Array._new(_var(x, axis, correction, keepdims, "var"), x._device)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    return Array._new(_var(x, axis, correction, keepdims, "std"), x._device)


def _cumulative(name, x, axis, dtype, include_initial):
    check_array(x, name)
    ndim = x.ndim
    if ndim == 0:
        raise ValueError(f"{name}() needs an array of at least one dimension, got a 0-d array")
    if axis is None:
        if ndim > 1:
            raise ValueError(f"{name}(): axis must be given for an array of {ndim} dimensions")
        axis = 0
    else:
        axis = normalize_axis(axis, ndim, name)
    dtype = _accumulation_dtype(x, dtype, name)
    device = x._device
    return Array._new(device.backend.cumulative(name, x._data, axis, dtype, bool(include_initial)),
                      device)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative("cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative("cumulative_prod", x, axis, dtype, include_initial)


__all__ = ["cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"]
