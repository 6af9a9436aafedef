"""Elementwise primitives on the CPU: the standard's names map onto NumPy's ufuncs."""

import numpy as np

from ._quiet import quiet

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


def _tanh(z):
    out = np.asarray(np.tanh(z))
    if z.dtype.kind == "c":
        # NumPy (like C99) signs the zero imaginary part of tanh(+-inf + iy) by sin(2y); the
        # standard by y: tanh(+inf + iy) is 1 + 0j for y > 0.
        saturated = np.isinf(z.real) & np.isfinite(z.imag)
        if saturated.any():
            out.imag = np.where(saturated, np.copysign(0.0, z.imag), out.imag)
    return out


def _tan(z):
    # tan(z) = -i tanh(iz), so the standard's tanh special cases carry over (parts are moved one
    # by one: multiplying infinities by 1j would make NaNs).
    if z.dtype.kind != "c":
        return np.tan(z)
    rotated = np.empty_like(z)
    rotated.real, rotated.imag = -z.imag, z.real
    t = _tanh(rotated)
    out = np.empty_like(z)
    out.real, out.imag = t.imag, -t.real
    return out


def _reciprocal(a):
    # The standard defines reciprocal as 1 / x; np.reciprocal differs for complex 0 and infinity.
    return np.divide(a.dtype.type(1), a) if a.dtype.kind == "c" else np.reciprocal(a)


def _real(a):
    return a.real.copy() if a.dtype.kind == "c" else a.copy()


def _imag(a):
    return a.imag.copy() if a.dtype.kind == "c" else np.zeros_like(a)


def _floor_divide(a, b, out=None):
    result = np.floor_divide(a, b)
    if result.dtype.kind == "f":
        # NumPy gives NaN for inf // finite and -1 for -1 // inf; the standard wants floor(a / b)
        # whenever an operand is infinite.
        infinite = np.isinf(a) | np.isinf(b)
        if infinite.any():
            result = np.where(infinite, np.floor(np.divide(a, b)), result)
    if out is not None:
        out[...] = result
        return out
    return result


def _expm1(z):
    if z.dtype.kind != "c":
        return np.expm1(z)
    # exp(a) cis(b) - 1 = expm1(a) cos(b) - 2 sin^2(b/2) + i exp(a) sin(b): no cancellation near 0.
    a, b = z.real, z.imag
    real = np.expm1(a) * np.cos(b) - 2 * np.sin(b / 2) ** 2 + 0.0
    imag = np.exp(a) * np.sin(b)
    # The standard's special cases that the formula gets wrong (inf * 0, inf - inf, cis(inf)).
    zero_b = b == 0
    real = np.where(zero_b, np.expm1(a) + 0.0, real)
    imag = np.where(zero_b, b, imag)
    minus_inf = a == -np.inf
    real = np.where(minus_inf, -1.0, real)
    imag = np.where(minus_inf, np.where(np.isfinite(b), 0.0 * np.sin(b), 0.0), imag)
    plus_inf_nonfinite_b = (a == np.inf) & ~np.isfinite(b)
    real = np.where(plus_inf_nonfinite_b, np.inf, real)
    imag = np.where(plus_inf_nonfinite_b, np.nan, imag)
    out = np.empty(z.shape, z.dtype)
    out.real = real
    out.imag = imag
    return out


_COMPLEX128 = np.dtype(np.complex128)
_COMPLEX64 = np.dtype(np.complex64)


def _pow(a, b, out=None):
    # complex64 powers are computed in complex128 and rounded once: NumPy's float cpowf decides
    # the sign of an overflowing part by the rounding of a float32 angle, which no other library
    # reproduces (the CUDA backend computes the same way, so both devices agree).
    if np.result_type(a, b) != _COMPLEX64:
        return np.power(a, b) if out is None else np.power(a, b, out=out)
    result = np.power(np.asarray(a, _COMPLEX128), np.asarray(b, _COMPLEX128)).astype(_COMPLEX64)
    if out is not None:
        out[...] = result
        return out
    return result


_UFUNCS["pow"] = _pow
_UFUNCS["real"] = _real
_UFUNCS["imag"] = _imag
_UFUNCS["floor_divide"] = _floor_divide
_UFUNCS["expm1"] = _expm1
_UFUNCS["reciprocal"] = _reciprocal
_UFUNCS["tanh"] = _tanh
_UFUNCS["tan"] = _tan


@quiet
def unary(name, a):
    out = _UFUNCS[name](a)
    return out if out.__class__ is _ndarray else np.asarray(out)


@quiet
def binary(name, a, b, dtype, out=None):
    if out is not None:
        return _UFUNCS[name](a, b, out=out)
    result = _UFUNCS[name](a, b)
    if result.__class__ is not _ndarray:
        result = np.asarray(result)
    return result


@quiet
def where(condition, a, b, dtype):
    out = np.where(condition, a, b)
    return out if out.dtype == dtype else out.astype(dtype)


@quiet
def clip(a, lo, hi):
    if lo is None and hi is None:
        return a.copy()
    return np.asarray(np.clip(a, lo, hi))


@quiet
def astype(a, dtype, copy):
    return a.astype(dtype, copy=copy)


def copy(a):
    return a.copy()


def elementwise_program(program, operands, shape):
    """The steps one by one, as the eager primitives (PROGRAM_FORMAT): NumPy has no fusion."""
    values = list(operands)
    for kind, name, refs, dtype in program:
        args = [None if r is None else values[r] for r in refs]
        if kind == "unary":
            values.append(unary(name, *args))
        elif kind == "binary":
            values.append(binary(name, *args, dtype))
        elif kind == "where":
            values.append(where(*args, dtype))
        elif kind == "astype":
            values.append(astype(args[0], dtype, True))
        elif kind == "clip":
            values.append(clip(*args))
        else:
            raise ValueError(f"unknown program step {kind!r}")
    return values[-1]  # every step's result is new and of `shape` (PROGRAM_FORMAT)
