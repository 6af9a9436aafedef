"""NaN-aware statistics, median and quantile: NumPy's functions of these names, beyond the
standard (the 2025.12 standard allows a namespace names of its own).

Names, signatures and results follow NumPy's (`out`, `where`, `initial`, `overwrite_input` and
`weights` are not taken), but nothing warns: an all-NaN slice gives NaN from nanmax, nanmin,
nanmean, nanvar, nanstd, nanmedian and nanquantile, 0 from nansum and 1 from nanprod, and
nanargmax/nanargmin raise ValueError("All-NaN slice encountered"). Integer and bool input has no
NaN: each function is its plain counterpart there, as in NumPy (nansum of int32 is sum's int64).
Two deliberate differences: nansum of negative zeros is -0.0, as arrayx's sum; quantile of an
empty slice raises ValueError (NumPy: IndexError), and nanquantile of an empty array keeps q's
dimensions in front like every other result (NumPy drops them there).

* nansum, nanprod, nanmax, nanmin, nanmean, nanargmax, nanargmin: the backend's `reduce` and
  `argreduce` primitives (one pass on cuda); nanargmax/nanargmin read back the smallest index
  (one sync) to raise on an all-NaN slice.
* nancumsum, nancumprod: the `cumulative` primitive; axis=None scans the flattened array.
* nanvar, nanstd: the backend's `moments` primitive, as var and std (one pass on cuda), NaN
  treated as absent. A slice holding an infinity gives NaN, as in NumPy.
* median, quantile, nanmedian, nanquantile: the reduced axes are moved last and merged into one
  (M rows of K), each row is sorted (NaNs last), and the wanted ranks are gathered and
  interpolated as NumPy does (its `_quantile`: virtual index, floor/ceil neighbours, `_lerp`).
  With no NaN to skip the ranks are the same for every row and computed on the host; the nan
  forms compute them per row from the row's count of non-NaN elements, on the device. q is read
  on the host (a small copy when it is an arrayx array) to check it lies in [0, 1].
"""

from __future__ import annotations

import math

import numpy as np

from . import _dtypes as dt
from ._array_object import Array
from ._creation_functions import asarray, full, zeros
from ._data_type_functions import astype
from ._elementwise_functions import ceil, floor, isnan, round as round_half_to_even
from ._indexing_functions import take, take_along_axis
from ._manipulation_functions import concat, permute_dims, reshape
from ._searching_functions import check_argreduce, where
from ._sorting_functions import sort
from ._statistical_functions import (_accumulation_dtype, _extremum, _mean_dtype, _reduce,
                                     sum as _sum)
from ._validation import check_array, check_dtype, normalize_axes, normalize_axis

_REAL_NUMERIC = dt.CATEGORIES["real numeric"]
_NAN = float("nan")


def _has_nan(a) -> bool:
    """Whether `a` can hold NaN (floating dtypes): the nan functions differ only there."""
    return a.dtype.kind in "fc"


# --- reductions -------------------------------------------------------------------------------

def _nan_reduce(name, a, axis, keepdims, dtype, fname):
    """Reduce with the backend's `name` (nansum, nanprod, nanmean) for floating `a`, with its
    plain counterpart otherwise."""
    if not _has_nan(a):
        return _reduce(name[3:], a, axis, keepdims, dtype, fname)
    axes = normalize_axes(axis, a.ndim, fname)
    device = a._device
    backend = device.backend
    data = a._data
    if not axes:  # each element is its own slice: a NaN becomes the identity (nanmean: 0 / 0)
        fill = {"nansum": 0.0, "nanprod": 1.0, "nanmean": _NAN}[name]
        if name != "nanmean" or data.dtype.kind == "c":
            fill = complex(fill, fill if name == "nanmean" else 0) if data.dtype.kind == "c" \
                else fill
            data = backend.where(backend.unary("isnan", data), fill, data, data.dtype)
        return Array._new(backend.astype(data, dtype, data is a._data), device)
    return Array._new(backend.reduce(name, data, axes, bool(keepdims), dtype), device)


def nansum(a, axis=None, dtype=None, *, keepdims=False):
    """The sum of the elements that are not NaN (0 for none); dtype as sum's."""
    check_array(a, "nansum", "a")
    return _nan_reduce("nansum", a, axis, keepdims, _accumulation_dtype(a, dtype, "nansum"),
                       "nansum")


def nanprod(a, axis=None, dtype=None, *, keepdims=False):
    """The product of the elements that are not NaN (1 for none); dtype as prod's."""
    check_array(a, "nanprod", "a")
    return _nan_reduce("nanprod", a, axis, keepdims, _accumulation_dtype(a, dtype, "nanprod"),
                       "nanprod")


def nanmean(a, axis=None, dtype=None, *, keepdims=False):
    """The mean of the elements that are not NaN (NaN for none); dtype as mean's."""
    check_array(a, "nanmean", "a")
    return _nan_reduce("nanmean", a, axis, keepdims, _mean_dtype(a, dtype, "nanmean"),
                       "nanmean")


def _nan_extremum(name, a, axis, keepdims):
    return _extremum(name, a, axis, keepdims, name if _has_nan(a) else name[3:], "a")


def nanmax(a, axis=None, *, keepdims=False):
    """The maximum ignoring NaNs (NaN where a slice is all NaN); ValueError for an empty slice."""
    return _nan_extremum("nanmax", a, axis, keepdims)


def nanmin(a, axis=None, *, keepdims=False):
    """The minimum ignoring NaNs (NaN where a slice is all NaN); ValueError for an empty slice."""
    return _nan_extremum("nanmin", a, axis, keepdims)


def _nan_argreduce(name, a, axis, keepdims):
    axis = check_argreduce(name, a, axis, "a")
    device = a._device
    backend = device.backend
    if not _has_nan(a):
        return Array._new(backend.argreduce(name[3:], a._data, axis, bool(keepdims)), device)
    out = backend.argreduce(name, a._data, axis, bool(keepdims))
    if out.size:  # -1 marks an all-NaN slice: one read of the smallest index
        worst = out if out.ndim == 0 else backend.reduce("min", out, tuple(range(out.ndim)),
                                                          False, dt.int64)
        if int(backend.to_host(worst)) < 0:
            raise ValueError("All-NaN slice encountered")
    return Array._new(out, device)


def nanargmax(a, axis=None, *, keepdims=False):
    """The index of the maximum ignoring NaNs (NumPy's rule: a NaN ranks as -inf); ValueError
    when a slice is all NaN."""
    return _nan_argreduce("nanargmax", a, axis, keepdims)


def nanargmin(a, axis=None, *, keepdims=False):
    """The index of the minimum ignoring NaNs (NumPy's rule: a NaN ranks as +inf); ValueError
    when a slice is all NaN."""
    return _nan_argreduce("nanargmin", a, axis, keepdims)


# --- variance ---------------------------------------------------------------------------------

def _degrees_of_freedom(ddof, correction, fname):
    """NumPy's ddof, or the standard's name for it, correction (not both)."""
    if correction is not None:
        if ddof != 0:
            raise ValueError(f"{fname}(): ddof and correction can't be provided simultaneously")
        ddof, name = correction, "correction"
    else:
        name = "ddof"
    if isinstance(ddof, bool) or not isinstance(ddof, (int, float)):
        raise TypeError(f"{fname}(): {name} must be a Python int or float, "
                        f"got {type(ddof).__name__}")
    return ddof


def _nanvar(a, axis, dtype, ddof, keepdims, correction, fname):
    check_array(a, fname, "a")
    ddof = _degrees_of_freedom(ddof, correction, fname)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{fname}() requires a real floating-point (or integer) dtype, "
                        f"got {a.dtype}")
    if dtype is None:
        dtype = a.dtype if a.dtype.kind == "f" else dt.float64
    else:
        dtype = check_dtype(dtype, fname)
        if dtype.kind != "f":
            raise TypeError(f"{fname}(): dtype must be a real floating-point dtype, got {dtype}")
    axes = normalize_axes(axis, a.ndim, fname)
    name = fname if _has_nan(a) else fname[3:]  # nanvar/nanstd, or var/std for integers
    return a._device.backend.moments(name, a._data, axes, float(ddof), bool(keepdims), dtype)


def nanvar(a, axis=None, dtype=None, *, ddof=0, keepdims=False, correction=None):
    """The variance of the elements that are not NaN, over N - ddof (N their count; NaN where
    N - ddof <= 0). `correction` is the standard's name for ddof."""
    return Array._new(_nanvar(a, axis, dtype, ddof, keepdims, correction, "nanvar"), a._device)


def nanstd(a, axis=None, dtype=None, *, ddof=0, keepdims=False, correction=None):
    """The square root of nanvar."""
    return Array._new(_nanvar(a, axis, dtype, ddof, keepdims, correction, "nanstd"), a._device)


# --- cumulative -------------------------------------------------------------------------------

def _nan_cumulative(op, a, axis, dtype, fname):
    check_array(a, fname, "a")
    device = a._device
    backend = device.backend
    data = a._data
    if axis is None:  # NumPy's: the flattened array (a 0-d array is one element)
        data = backend.reshape(data, (a.size,), None)
        axis = 0
    else:
        axis = normalize_axis(axis, a.ndim, fname)
    dtype = _accumulation_dtype(a, dtype, fname)
    name = f"cumulative_{op if _has_nan(a) else op[3:]}"
    return Array._new(backend.cumulative(name, data, axis, dtype, False), device)


def nancumsum(a, axis=None, dtype=None):
    """The cumulative sum with NaN read as 0; axis=None scans the flattened array."""
    return _nan_cumulative("nansum", a, axis, dtype, "nancumsum")


def nancumprod(a, axis=None, dtype=None):
    """The cumulative product with NaN read as 1; axis=None scans the flattened array."""
    return _nan_cumulative("nanprod", a, axis, dtype, "nancumprod")


# --- median and quantile ----------------------------------------------------------------------

# NumPy's methods computed here: the interpolating ones, and those that pick an element
_INTERPOLATING = ("linear", "midpoint")
_PICKING = ("lower", "higher", "nearest")


class _Rows:
    """`a` with the reduced axes moved last and merged: `x` (M rows of K), the shape of the
    result without and with keepdims (`kept`, `kept_dims`)."""

    def __init__(self, a, axis, fname):
        axes = normalize_axes(axis, a.ndim, fname)
        kept = [i for i in range(a.ndim) if i not in axes]
        order = kept + list(axes)
        x = a if order == list(range(a.ndim)) else permute_dims(a, tuple(order))
        if x.dtype == dt.bool:  # sorted and gathered as 0/1
            x = astype(x, dt.uint8)
        self.K = math.prod(a.shape[i] for i in axes)
        self.M = math.prod(a.shape[i] for i in kept)
        self.x = reshape(x, (self.M, self.K))
        self.kept = tuple(a.shape[i] for i in kept)
        self.kept_dims = tuple(1 if i in axes else n for i, n in enumerate(a.shape))

    def shape(self, keepdims):
        return self.kept_dims if keepdims else self.kept


def _check_real(a, fname):
    check_array(a, fname, "a")
    if a.dtype.kind == "c":
        raise TypeError(f"{fname}(): a must be an array of real numbers, got {a.dtype}")


def _median(a, axis, keepdims, skip_nan, fname):
    _check_real(a, fname)
    rows = _Rows(a, axis, fname)
    result_dtype = a.dtype if a.dtype.kind == "f" else dt.float64
    shape = rows.shape(keepdims)
    if rows.K == 0 or rows.M == 0:  # NumPy: the mean of nothing, NaN
        return full(shape, _NAN, dtype=result_dtype, device=a._device)
    K = rows.K
    ordered = sort(rows.x, axis=1, stable=False)
    # NumPy's mean of the middle pair, and of one middle element that element
    if skip_nan and _has_nan(a):  # the middle of each row's n non-NaN elements
        n = K - _sum(isnan(rows.x), axis=1, keepdims=True)
        low, high = (n - 1) // 2, n // 2  # n = 0: -1 (the row's end) and 0, both NaN
        pair = astype(take_along_axis(ordered, concat([low, high], axis=1), axis=1),
                      result_dtype)
        lo, hi = pair[:, 0], pair[:, 1]
        mid = where(low[:, 0] == high[:, 0], lo, (lo + hi) / 2)
    else:
        picks = astype(take(ordered, asarray(np.array([(K - 1) // 2, K // 2, K - 1]),
                                             device=a._device), axis=1), result_dtype)
        lo, hi, last = picks[:, 0], picks[:, 1], picks[:, 2]
        mid = lo if K % 2 else (lo + hi) / 2
        if _has_nan(a):  # a row holding NaN (sorted last) is NaN
            mid = where(isnan(last), last, mid)
    return reshape(mid, shape)


def median(a, axis=None, *, keepdims=False):
    """NumPy's median: the middle element, or the mean of the middle two (NaN where a slice
    holds NaN, or is empty)."""
    return _median(a, axis, keepdims, False, "median")


def nanmedian(a, axis=None, *, keepdims=False):
    """The median of the elements that are not NaN (NaN where there are none)."""
    return _median(a, axis, keepdims, True, "nanmedian")


def _quantiles(q, fname):
    """(q as a NumPy float array, whether it was a Python scalar: NumPy's weak q, whose result
    keeps a floating a's dtype)."""
    weak = type(q) in (int, float)
    if isinstance(q, Array):
        if q.dtype.kind not in "iuf":
            raise TypeError(f"{fname}(): q must hold real numbers, got {q.dtype}")
        host = np.asarray(q.to_device("cpu"))
    else:
        try:
            host = np.asarray(q)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{fname}(): q must be a real number, a sequence of them or an "
                            f"arrayx array, got {type(q).__name__} ({e})") from None
        if host.dtype.kind not in "iuf":
            raise TypeError(f"{fname}(): q must hold real numbers, got {type(q).__name__} "
                            f"{q!r}")
    if host.dtype not in (dt.float32, dt.float64):
        host = host.astype(dt.float64)
    if not ((host >= 0) & (host <= 1)).all():
        raise ValueError(f"{fname}(): quantiles must be in the range [0, 1]")
    return host, weak


def _quantile(a, q, axis, method, keepdims, skip_nan, fname):
    _check_real(a, fname)
    if method not in _INTERPOLATING + _PICKING:
        raise ValueError(f"{fname}(): method {method!r} is not supported; use one of "
                         f"{', '.join(_INTERPOLATING + _PICKING)}")
    qh, weak = _quantiles(q, fname)
    if method in _PICKING:
        result_dtype = a.dtype
    elif a.dtype == dt.bool:
        raise TypeError(f"{fname}(): method {method!r} interpolates, which a bool array cannot; "
                        f"use lower, higher or nearest, or cast it")
    elif weak:
        result_dtype = a.dtype if a.dtype.kind == "f" else dt.float64
    else:
        result_dtype = dt.promote(a.dtype, qh.dtype)
    device = a._device
    rows = _Rows(a, axis, fname)
    shape = qh.shape + rows.shape(keepdims)
    nan_rows = skip_nan and _has_nan(a)
    if rows.K == 0:
        if not nan_rows:
            raise ValueError(f"{fname}() of an empty slice: the reduced axes of the array of "
                             f"shape {a.shape} hold no element")
        return full(shape, _NAN, dtype=result_dtype, device=device)
    if rows.M == 0:
        return zeros(shape, dtype=result_dtype, device=device)
    if qh.size == 0:
        return zeros(shape, dtype=result_dtype, device=device)
    ordered = sort(rows.x, axis=1, stable=False)
    if nan_rows:
        picked = _ranks_per_row(ordered, rows, qh.reshape(-1), method, result_dtype)
    else:
        picked = _ranks_of_all_rows(ordered, rows.K, qh.reshape(-1), method, result_dtype)
    if result_dtype == dt.bool:
        picked = astype(picked, dt.bool)
    if qh.ndim:  # q's dimensions first
        picked = permute_dims(picked, (1, 0))
    return reshape(picked, shape)


def _lerp(lo, hi, gamma, one_minus_gamma, upper, dtype):
    """NumPy's _lerp: lo + (hi - lo) * gamma, or hi - (hi - lo) * (1 - gamma) where gamma >= 0.5
    (`upper`), in `dtype`. The difference of floating neighbours is taken in their own dtype, as
    NumPy does (float32 data under a float64 q); of integers in `dtype`, where it cannot wrap."""
    floating = lo.dtype.kind == "f"
    diff = hi - lo if floating else None
    lo, hi = astype(lo, dtype), astype(hi, dtype)
    diff = astype(diff, dtype) if floating else hi - lo
    return where(upper, hi - diff * one_minus_gamma, lo + diff * gamma)


def _ranks_of_all_rows(ordered, K, q, method, dtype):
    """(M, Q) quantiles of rows of K sorted elements, NaN where a row holds NaN: the ranks and
    weights are the same for every row, computed on the host as NumPy's _quantile does."""
    device = ordered._device
    scaled = (K - 1) * q  # in q's dtype
    if method in _PICKING:
        ranks = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}[method](scaled)
        picks = take(ordered, asarray(np.append(ranks.astype(np.int64), -1), device=device),
                     axis=1)
        picked, last = picks[:, :-1], picks[:, -1:]
    else:
        if method == "midpoint":
            virtual = 0.5 * (np.floor(scaled) + np.ceil(scaled))
        else:
            virtual = scaled
        prev = np.floor(virtual)
        nxt = prev + 1
        above = virtual >= K - 1  # the last element on both sides
        prev[above], nxt[above] = -1, -1
        gamma = (virtual - prev).astype(virtual.dtype)
        if method == "midpoint":
            gamma = np.where(virtual % 1 == 0, 0.0, 0.5).astype(virtual.dtype)
        Q = q.size
        index = np.concatenate([prev, nxt, [-1]]).astype(np.int64)
        picks = take(ordered, asarray(index, device=device), axis=1)
        picked = _lerp(picks[:, :Q], picks[:, Q:2 * Q],
                       asarray(gamma.astype(dtype), device=device),
                       asarray((1 - gamma).astype(dtype), device=device),
                       asarray(gamma >= 0.5, device=device), dtype)
        last = picks[:, -1:]
    if ordered.dtype.kind == "f":  # NumPy: a row holding NaN (sorted last) gives that NaN
        picked = where(isnan(last), astype(last, dtype), picked)
    return picked


def _ranks_per_row(ordered, rows, q, method, dtype):
    """(M, Q) quantiles of each row's n non-NaN elements (sorted first in the row), as NumPy's
    _quantile of the row without its NaNs; every rank computed on the device. A row of NaN only
    (n = 0) gathers NaNs: its ranks come out as 0 or -1 (wrapping to the row's end)."""
    device = ordered._device
    K = rows.K
    qd = dt.canonical_dtype(q.dtype)
    n_minus_1 = astype(K - 1 - _sum(isnan(rows.x), axis=1, keepdims=True), qd)  # (M, 1)
    scaled = n_minus_1 * asarray(q, dtype=qd, device=device)  # (M, Q)
    if method in _PICKING:
        ranks = {"lower": floor, "higher": ceil, "nearest": round_half_to_even}[method](scaled)
        return take_along_axis(ordered, astype(ranks, dt.int64), axis=1)
    virtual = 0.5 * (floor(scaled) + ceil(scaled)) if method == "midpoint" else scaled
    prev = floor(virtual)
    above = virtual >= n_minus_1  # the row's last non-NaN element on both sides
    prev = where(above, n_minus_1, prev)
    nxt = where(above, n_minus_1, prev + 1)
    Q = q.size
    pair = take_along_axis(ordered, astype(concat([prev, nxt], axis=1), dt.int64), axis=1)
    if method == "midpoint":  # 0.5, or 0 at a whole virtual index
        gamma = astype(virtual != floor(virtual), qd) * 0.5
    else:
        gamma = virtual - prev
    return _lerp(pair[:, :Q], pair[:, Q:], astype(gamma, dtype), astype(1 - gamma, dtype),
                 gamma >= 0.5, dtype)


def quantile(a, q, axis=None, *, method="linear", keepdims=False):
    """NumPy's quantile: q (a Python float, a sequence of them or an arrayx array, in [0, 1])
    of the elements along `axis`; q's dimensions come first in the result. Methods: linear,
    midpoint (interpolating), lower, higher, nearest (an element). NaN where a slice holds NaN."""
    return _quantile(a, q, axis, method, keepdims, False, "quantile")


def nanquantile(a, q, axis=None, *, method="linear", keepdims=False):
    """quantile of the elements that are not NaN (NaN where there are none)."""
    return _quantile(a, q, axis, method, keepdims, True, "nanquantile")


__all__ = ["median", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean",
           "nanmedian", "nanmin", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar",
           "quantile"]
