"""Fused row functions, beyond the standard: softmax, log_softmax and logsumexp (here, at the top
level of the namespace, as in PyTorch and MLX), and the checks arrayx.nn's layer_norm and
rms_norm share. One backend primitive computes them all, ``row_function``, over the last axis
of an array: on CUDA one kernel a call, which reads the row once and writes it once.

Formulas, computed in the input's dtype (float32 accumulates in float32, float64 in float64),
over a row x of length K along `axis`:

* ``softmax``: exp(x - max(x)) / sum(exp(x - max(x))), so softmax([1e4, 1e4]) is [0.5, 0.5].
* ``logsumexp``: m + log(sum(exp(x - m))) with m = max(x) when m is finite; otherwise m: +inf for
  a row holding +inf (even beside -inf), -inf for a row of -inf only, NaN for a row holding NaN.
  An empty row gives -inf (the log of an empty sum).
* ``log_softmax``: x - logsumexp(x), computed as (x - m) - log(sum(exp(x - m))) where m is
  finite (so values near 0 keep their precision), x - m elsewhere.
* ``layer_norm``: (x - mean) / sqrt(var + eps) * weight + bias, var the biased variance (the
  mean of the squared deviations from the mean, not E[x^2] - E[x]^2).
* ``rms_norm``: x / sqrt(mean(x^2) + eps) * weight.

Non-finite values follow these formulas evaluated as NumPy evaluates them, which is what
SciPy's ``special.softmax``, ``log_softmax`` and ``logsumexp`` return too: a row holding NaN is
all NaN; softmax of a row holding +inf is all NaN, and of a row of -inf only is all NaN (0/0);
log_softmax of a row holding +inf is NaN at the infinities and -inf elsewhere; layer_norm of a
row holding an infinity is all NaN. float32 rows are accumulated in float32: rms_norm and
layer_norm of rows whose squares overflow float32 (|x| beyond about 1e19) lose the row; cast
such data to float64 first.

Shapes: softmax, log_softmax and the norms return x's shape; logsumexp reduces `axis` (an int, a
tuple of ints, or None for every axis) and keeps it as size 1 with ``keepdims=True``. A 0-d
array is a row of one element (as in NumPy's and SciPy's formulas: softmax gives 1.0, NaN for a
non-finite value; logsumexp gives the value itself); an empty row gives an empty result
(logsumexp: -inf). Only real floating-point arrays are accepted (TypeError otherwise).
Along an axis that is not the last, x is moved to make it last (on CUDA that costs a copy).
"""

from __future__ import annotations

import math
import numbers

from . import _dtypes as dt
from ._array_object import Array
from ._validation import check_array, normalize_axes, normalize_axis, same_device

_REAL_FLOATING = dt.CATEGORIES["real floating"]


def _check_real_floating(x, fname, argname="x"):
    check_array(x, fname, argname)
    if x.dtype not in _REAL_FLOATING:
        raise TypeError(f"{fname}() requires a real floating-point dtype for {argname!r}, got "
                        f"{x.dtype}")


def check_eps(eps, fname):
    """The norms' epsilon: a real Python (or NumPy) number, finite and >= 0, as a float."""
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"{fname}(): eps must be a Python float, got {type(eps).__name__} {eps!r}")
    eps = float(eps)
    if not (math.isfinite(eps) and eps >= 0.0):
        raise ValueError(f"{fname}(): eps must be finite and >= 0, got {eps!r}")
    return eps


def _permutation_moving_last(ndim, axes):
    """The permutation of `ndim` axes that keeps the others in order and puts `axes` last."""
    return tuple(i for i in range(ndim) if i not in axes) + tuple(axes)


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def row_call(name, fname, x, axis, weight=None, bias=None, eps=0.0):
    """`name` (softmax, log_softmax, layer_norm, rms_norm) of each row of x along one int `axis`:
    the checks, the result dtype (x, weight and bias promoted), the move of `axis` to the end
    and back, then the backend's row_function primitive. A 0-d x is one row of one element."""
    _check_real_floating(x, fname)
    operands = [x]
    for argname, p in (("weight", weight), ("bias", bias)):
        if p is not None:
            _check_real_floating(p, fname, argname)
            operands.append(p)
    device = same_device(operands, fname)
    ndim = x.ndim
    axis = normalize_axis(axis, max(ndim, 1), fname)
    k = x.shape[axis] if ndim else 1
    for argname, p in (("weight", weight), ("bias", bias)):
        if p is not None and not (p.ndim <= 1 and p.size in (1, k)):
            raise ValueError(f"{fname}(): {argname} must have the row's length {k} (shape "
                             f"({k},)) or broadcast to it (shape (1,) or ()), got shape {p.shape}")
    dtype = x.dtype
    for p in operands[1:]:
        dtype = dt.promote(dtype, p.dtype)
    backend = device.backend

    def native(p, shape):
        a = backend.astype(p._data, dtype, False)
        return a if p.shape == shape else backend.broadcast_to(backend.reshape(a, (p.size,), None),
                                                               shape)

    a = native(x, x.shape)
    w = None if weight is None else native(weight, (k,))
    b = None if bias is None else native(bias, (k,))
    if ndim == 0:
        out = backend.row_function(name, backend.reshape(a, (1,), None), w, b, eps)
        return Array._new(backend.reshape(out, (), None), device)
    last = ndim - 1
    if axis == last:
        return Array._new(backend.row_function(name, a, w, b, eps), device)
    perm = _permutation_moving_last(ndim, (axis,))
    out = backend.row_function(name, backend.permute_dims(a, perm), w, b, eps)
    return Array._new(backend.permute_dims(out, _inverse(perm)), device)


def softmax(x, /, *, axis=-1):
    """exp(x - max) / sum(exp(x - max)) along `axis` (beyond the standard; see the module
    docstring for non-finite rows)."""
    return row_call("softmax", "softmax", x, axis)


def log_softmax(x, /, *, axis=-1):
    """x - logsumexp(x) along `axis` (beyond the standard)."""
    return row_call("log_softmax", "log_softmax", x, axis)


def logsumexp(x, /, *, axis=-1, keepdims=False):
    """log(sum(exp(x))) over `axis` (an int, a tuple of ints, or None: every axis), computed
    stably as max + log(sum(exp(x - max))) (beyond the standard; SciPy's special.logsumexp
    without its `b` and `return_sign`)."""
    _check_real_floating(x, "logsumexp")
    ndim = x.ndim
    device = x._device
    backend = device.backend
    axes = normalize_axes(axis, max(ndim, 1), "logsumexp")
    if ndim == 0 or not axes:  # each element is its own row: log(exp(v)) is v
        return Array._new(backend.copy(x._data), device)
    shape = x.shape
    kept = tuple(n for i, n in enumerate(shape) if i not in axes)
    k = math.prod(shape[i] for i in axes)
    a = x._data
    perm = _permutation_moving_last(ndim, axes)
    if perm != tuple(range(ndim)):
        a = backend.permute_dims(a, perm)
    out = backend.row_function("logsumexp", backend.reshape(a, kept + (k,), None), None, None, 0.0)
    if keepdims:
        out = backend.reshape(out, tuple(1 if i in axes else n for i, n in enumerate(shape)), None)
    return Array._new(out, device)


__all__ = ["log_softmax", "logsumexp", "softmax"]
