"""Reductions, arg-reductions, moments and scans on the CPU: NumPy's ufunc reductions and
accumulations.

The namespace has validated every argument; `axes` is a sorted tuple of non-negative ints and
`dtype` the result dtype. Zero-d results come back as 0-d ndarrays, never NumPy scalars.

The NaN-ignoring forms (floating input only) follow NumPy's nan-functions: NaN replaced by the
operation's identity (nansum, nanprod, nancumsum, nancumprod, nanmean's sum and count; -inf /
+inf for nanargmax / nanargmin), nanmax/nanmin as np.fmax/np.fmin reductions. They are written
from the ufuncs rather than called as np.nansum etc. so that they warn of nothing (NumPy's warn
of all-NaN slices with warnings.warn, which the error state does not silence) and so that
nansum starts from -0.0 as sum does.
"""

import math

import numpy as np

from ._quiet import quiet

_ndarray = np.ndarray

# Reductions whose result dtype is the input's (max/min) or bool (all/any).
_SELECTING = {"max": np.maximum.reduce, "min": np.minimum.reduce, "all": np.all, "any": np.any}


def _as_accumulated(a, dtype):
    # ufunc reductions cast the input with 'same_kind'; a cast the caller asked for explicitly
    # (uint8 summed as int8, int16 as uint32) is done first instead.
    if a.dtype != dtype and not np.can_cast(a.dtype, dtype, "same_kind"):
        return a.astype(dtype)
    return a


# A floating sum starts from -0.0, the exact additive identity, so that a sum of negative zeros
# is -0.0 as successive `add`s give (NumPy's own start, +0.0, would make it +0.0). An empty sum
# stays +0.0.
_NEG_ZERO = {"f": -0.0, "c": complex(-0.0, -0.0)}


def _sum(a, axes, keepdims, dtype):
    a = _as_accumulated(a, dtype)
    start = _NEG_ZERO.get(dtype.kind)
    if start is not None and a.size:
        return np.add.reduce(a, axis=axes, dtype=dtype, keepdims=keepdims, initial=start)
    return np.add.reduce(a, axis=axes, dtype=dtype, keepdims=keepdims)


def _without_nan(a, fill):
    """`a` with its NaNs (complex: either part NaN) replaced by `fill`."""
    mask = np.isnan(a)
    return np.where(mask, a.dtype.type(fill), a) if mask.any() else a


def _nan_reduce(name, a, axes, keepdims, dtype):
    if name == "nansum":
        return _sum(_without_nan(a, 0), axes, keepdims, dtype)
    if name == "nanprod":
        return _reduce("prod", _without_nan(a, 1), axes, keepdims, dtype)
    if name == "nanmean":
        total = _sum(_without_nan(a, 0), axes, keepdims, dtype)
        count = np.add.reduce(~np.isnan(a), axis=axes, keepdims=keepdims, dtype=np.int64)
        return np.divide(total, count, dtype=dtype)
    fold = np.fmax if name == "nanmax" else np.fmin
    return fold.reduce(a, axis=axes, keepdims=keepdims)


def _reduce(name, a, axes, keepdims, dtype):
    if name.startswith("nan"):
        return _nan_reduce(name, a, axes, keepdims, dtype)
    if name == "sum":
        return _sum(a, axes, keepdims, dtype)
    if name == "prod":
        return np.multiply.reduce(_as_accumulated(a, dtype), axis=axes, dtype=dtype, keepdims=keepdims)
    if name == "mean":
        count = math.prod(a.shape[i] for i in axes)
        out = _sum(a, axes, keepdims, dtype)
        if out.__class__ is _ndarray:
            return np.divide(out, count, out=out)
        return out / count  # a NumPy scalar of `dtype` (a Python int divisor keeps it)
    return _SELECTING[name](a, axis=axes, keepdims=keepdims)


@quiet
def reduce(name, a, axes, keepdims, dtype):
    out = _reduce(name, a, axes, keepdims, dtype)
    return out if out.__class__ is _ndarray else np.asarray(out, dtype=dtype)


def argreduce(name, a, axis, keepdims):
    nan = name.startswith("nan")
    if nan:  # NaN ranked as -inf / +inf (NumPy's rule); -1 where the slice is all NaN
        mask = np.isnan(a)
        a = np.where(mask, -np.inf if name == "nanargmax" else np.inf, a)
    out = (np.argmax if name.endswith("argmax") else np.argmin)(a, axis=axis, keepdims=keepdims)
    if out.__class__ is not _ndarray or out.dtype != np.int64:
        out = np.asarray(out, dtype=np.int64)
    if nan:
        out[mask.all(axis=axis, keepdims=keepdims)] = -1
    return out


@quiet
def moments(name, a, axes, correction, keepdims, dtype):
    """var/std (nanvar/nanstd: NaN as absent) in two passes, the mean then the sum of squared
    deviations d, computed in float64 (complex128) and rounded to `dtype`, less |sum(d)|^2 / n
    (the corrected two-pass form): sums along an outer axis add row after row, and the mean's
    error e adds n e^2 to the squares, a visible part of the variance when the mean is large
    beside the spread (NumPy's own var keeps it); the sum of d removes it to first order."""
    work = np.dtype(np.complex128 if a.dtype.kind == "c" else np.float64)
    x = a if a.dtype == work else a.astype(work)
    if name.startswith("nan"):
        absent = np.isnan(x)
        x = np.where(absent, x.dtype.type(0), x)
        count = np.add.reduce(~absent, axis=axes, keepdims=True, dtype=np.int64)
    else:
        absent = None
        count = math.prod(a.shape[i] for i in axes)
    mean = np.asarray(np.add.reduce(x, axis=axes, keepdims=True))  # (0-d input: a scalar)
    mean = np.divide(mean, count, out=mean, casting="unsafe")
    d = x - mean
    if absent is not None:
        d = np.where(absent, d.dtype.type(0), d)
    m2 = np.add.reduce(_abs2(d), axis=axes, keepdims=keepdims)
    if absent is not None and not keepdims:
        count = np.squeeze(count, axis=axes)
    m2 = np.maximum(m2 - _abs2(np.add.reduce(d, axis=axes, keepdims=keepdims)) / count, 0)
    dof = np.subtract(count, float(correction))
    out = np.where((dof > 0) & (np.asarray(count) > 0), m2 / dof, np.nan)
    if name.endswith("std"):
        out = np.sqrt(out)
    return np.asarray(out, dtype=dtype)


def _abs2(d):
    return d.real * d.real + d.imag * d.imag if d.dtype.kind == "c" else d * d


# the cumulative functions: (ufunc, the value include_initial puts first and a NaN becomes in
# the NaN-ignoring ones)
_SCANS = {"sum": (np.add, 0), "prod": (np.multiply, 1), "nansum": (np.add, 0),
          "nanprod": (np.multiply, 1)}


@quiet
def cumulative(name, a, axis, dtype, include_initial):
    op = name[len("cumulative_"):]
    ufunc, initial = _SCANS[op]
    if op.startswith("nan"):
        a = _without_nan(a, initial)
    a = _as_accumulated(a, dtype)
    return _scan(ufunc, initial, a, axis, dtype, include_initial)


def _scan(ufunc, initial, a, axis, dtype, include_initial):
    if not include_initial:
        return ufunc.accumulate(a, axis=axis, dtype=dtype)
    shape = list(a.shape)
    shape[axis] += 1
    out = np.empty(shape, dtype=dtype)
    lead = (slice(None),) * axis
    out[lead + (0,)] = initial
    ufunc.accumulate(a, axis=axis, dtype=dtype, out=out[lead + (slice(1, None),)])
    return out
