"""Elementwise primitives on the CPU: the standard's names map onto NumPy's ufuncs."""

import numpy as np

_ndarray = np.ndarray
_UFUNCS = {name: getattr(np, name) for name in (
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil", "conj", "cos",
    "cosh", "exp", "expm1", "floor", "isfinite", "isinf", "isnan", "log", "log1p", "log2", "log10",
    "logical_not", "negative", "positive", "round", "sign", "signbit", "sin", "sinh", "sqrt", "square",
    "tan", "tanh", "trunc", "reciprocal",
    "add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal", "hypot",
    "less", "less_equal", "logaddexp", "logical_and", "logical_or", "logical_xor", "maximum", "minimum",
    "multiply", "nextafter", "not_equal", "pow", "remainder", "subtract")}


def _real(a):
    return a.real.copy() if a.dtype.kind == "c" else a.copy()


def _imag(a):
    return a.imag.copy() if a.dtype.kind == "c" else np.zeros_like(a)


_UFUNCS["real"] = _real
_UFUNCS["imag"] = _imag


def unary(name, a):
    out = _UFUNCS[name](a)
    return out if out.__class__ is _ndarray else np.asarray(out)


def binary(name, a, b, dtype, out=None):
    if out is not None:
        return _UFUNCS[name](a, b, out=out)
    result = _UFUNCS[name](a, b)
    if result.__class__ is not _ndarray:
        result = np.asarray(result)
    return result


def where(condition, a, b, dtype):
    out = np.where(condition, a, b)
    return out if out.dtype == dtype else out.astype(dtype)


def clip(a, lo, hi):
    if lo is None and hi is None:
        return a.copy()
    return np.asarray(np.clip(a, lo, hi))


def astype(a, dtype, copy):
    return a.astype(dtype, copy=copy)


def copy(a):
    return a.copy()
