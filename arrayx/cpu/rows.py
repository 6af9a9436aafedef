"""The fused row functions on the CPU (the `row_function` primitive): NumPy, in the input's
dtype, over the last axis.

The formulas are the stable ones the CUDA kernels compute (arrayx/_row_functions.py states them
and their non-finite cases): softmax and logsumexp shift by the row's maximum, layer_norm
shifts the row by its first element before summing, so that a large common offset (1e4 + noise
in float32) does not cost the mean its precision, and takes the variance of the deviations
from the mean (two passes), never E[x^2] - E[x]^2.
"""

import numpy as np

from ._quiet import quiet


def _max_and_log_sum(a):
    """(m, log(sum(exp(a - m)))) over the last axis of a non-empty row set, both kept as a
    size-1 axis, m the row's maximum; the log-sum is 0 where m is not finite (+inf, -inf for a
    row of -inf only, NaN): there logsumexp is m itself and log_softmax x - m."""
    m = np.max(a, axis=-1, keepdims=True)
    log_sum = np.log(np.sum(np.exp(a - m), axis=-1, keepdims=True))
    return m, np.where(np.isfinite(m), log_sum, a.dtype.type(0))


def _logsumexp(a):
    m, log_sum = _max_and_log_sum(a)
    return (m + log_sum)[..., 0]


def _log_softmax(a):
    # (x - m) - log(sum), not x - logsumexp: the shifted values keep the precision that
    # m + log(sum) would round away at the scale of m
    m, log_sum = _max_and_log_sum(a)
    return (a - m) - log_sum


def _softmax(a):
    e = np.exp(a - np.max(a, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _layer_norm(a, weight, bias, eps):
    k = a.shape[-1]
    shifted = a - a[..., :1]
    d = shifted - np.sum(shifted, axis=-1, keepdims=True) / a.dtype.type(k)
    var = np.sum(d * d, axis=-1, keepdims=True) / a.dtype.type(k)
    out = d / np.sqrt(var + a.dtype.type(eps))
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def _rms_norm(a, weight, eps):
    k = a.shape[-1]
    mean_square = np.sum(a * a, axis=-1, keepdims=True) / a.dtype.type(k)
    out = a / np.sqrt(mean_square + a.dtype.type(eps))
    return out if weight is None else out * weight


@quiet
def row_function(name, a, weight, bias, eps):
    if a.size == 0:  # no element to compute: empty rows, or no rows
        if name == "logsumexp":
            return np.full(a.shape[:-1], -np.inf, dtype=a.dtype)
        return np.empty(a.shape, dtype=a.dtype)
    if name == "softmax":
        out = _softmax(a)
    elif name == "log_softmax":
        out = _log_softmax(a)
    elif name == "logsumexp":
        out = _logsumexp(a)
    elif name == "layer_norm":
        out = _layer_norm(a, weight, bias, eps)
    else:
        out = _rms_norm(a, weight, eps)
    return np.asarray(out, dtype=a.dtype)
