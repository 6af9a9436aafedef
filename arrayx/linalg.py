"""The linalg extension of the standard: ``arrayx.linalg``.

Validation (dtype categories, at least 2-D, square matrices, broadcast batch dimensions, ``ord``,
``rtol``, ``mode``) is done here, once. Decompositions and solvers are backend primitives
(cholesky, det, eig, eigh, eigvals, eigvalsh, inv, pinv, qr, slogdet, solve, svd, svdvals,
diagonal, matmul); everything else (cross, matrix_norm, matrix_power, matrix_rank, outer, trace,
vector_norm, and tensordot / vecdot from the main namespace) is composed here from primitives and
namespace functions, so every backend has it.

dtypes: functions the standard says "should have a floating-point data type" raise TypeError for
integer and boolean arrays (no silent cast to float64); results keep the input's precision
(float32 -> float32, complex64 -> complex64, with float32 for real-valued parts such as
eigenvalues of ``eigh``, singular values and norms). cross, diagonal, matmul, matrix_transpose,
outer, tensordot, trace and vecdot accept every numeric dtype (diagonal and matrix_transpose any
dtype).

Failures: a matrix that is singular (``inv``, ``solve``, ``matrix_power`` with n < 0), not
positive definite (``cholesky``), or an iteration that does not converge (``eig``, ``svd``...)
raises :class:`arrayx.linalg.LinAlgError`, a subclass of ``ValueError``; every backend raises it
(the CPU backend translates ``numpy.linalg.LinAlgError``). ``det`` and ``slogdet`` of a singular
matrix return 0 and (0, -inf) without raising.

Empty matrices (M or N equal to 0) are valid everywhere: ``det`` gives 1, ``matrix_rank`` 0, and
every ``matrix_norm`` 0.
"""

from __future__ import annotations

import math
import operator
from collections import namedtuple

from . import _dtypes as dt
from ._backend import LinAlgError

LinAlgError.__module__ = __name__  # users meet it as arrayx.linalg.LinAlgError
from ._array_object import Array
from ._linear_algebra_functions import _numeric_pair, matmul, matrix_transpose, tensordot, vecdot
from ._validation import (broadcast_shapes, check_array, check_device, check_dtype,
                          check_dtype_category, check_int, normalize_axes, same_device)




EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


# --- shared checks --------------------------------------------------------------------------

def _matrices(x, fname, square=False, category="floating-point"):
    check_array(x, fname)
    check_dtype_category(x, category, fname)
    if x.ndim < 2:
        raise ValueError(f"{fname}() needs an array of at least 2 dimensions (a stack of "
                         f"matrices), got {x.ndim}-D")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{fname}() needs square matrices, got shape {x.shape}")
    return x


def _new(native, x):
    return Array._new(native, x._device)


def _stats():
    from . import _statistical_functions
    return _statistical_functions


def _rtol(rtol, x, fname):
    """rtol of matrix_rank / pinv -> None, a Python float, or an Array broadcastable to the
    batch shape shape(x)[:-2] without changing it."""
    if rtol is None:
        return None
    if type(rtol) is Array:
        check_device(rtol, "rtol", x._device, "x", fname)
        if rtol.dtype not in dt.CATEGORIES["real floating"]:
            raise TypeError(f"{fname}(): an rtol array must have a real floating-point dtype, "
                            f"got {rtol.dtype}")
        batch = x.shape[:-2]
        if len(rtol.shape) > len(batch) or broadcast_shapes(rtol.shape, batch) != batch:
            raise ValueError(f"{fname}(): rtol of shape {rtol.shape} does not broadcast to the "
                             f"batch shape {batch} of x")
        return rtol
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float)):
        raise TypeError(f"{fname}(): rtol must be None, a real Python number or an arrayx array, "
                        f"got {type(rtol).__name__}")
    return float(rtol)


def _default_rtol(x):
    from ._data_type_functions import finfo
    return max(x.shape[-2:]) * finfo(dt.real_dtype_of(x.dtype)).eps


# --- decompositions and solvers: backend primitives ---------------------------------------

def cholesky(x, /, *, upper=False):
    _matrices(x, "cholesky", square=True)
    return _new(x._device.backend.cholesky(x._data, bool(upper)), x)


def det(x, /):
    _matrices(x, "det", square=True)
    return _new(x._device.backend.det(x._data), x)


def eigh(x, /):
    _matrices(x, "eigh", square=True)
    w, v = x._device.backend.eigh(x._data)
    return EighResult(_new(w, x), _new(v, x))


def eigvalsh(x, /):
    _matrices(x, "eigvalsh", square=True)
    return _new(x._device.backend.eigvalsh(x._data), x)


def eig(x, /):
    _matrices(x, "eig", square=True)
    w, v = x._device.backend.eig(x._data)
    return EigResult(_new(w, x), _new(v, x))


def eigvals(x, /):
    _matrices(x, "eigvals", square=True)
    return _new(x._device.backend.eigvals(x._data), x)


def inv(x, /):
    _matrices(x, "inv", square=True)
    return _new(x._device.backend.inv(x._data), x)


def pinv(x, /, *, rtol=None):
    _matrices(x, "pinv")
    rtol = _rtol(rtol, x, "pinv")
    native_rtol = rtol._data if type(rtol) is Array else rtol
    return _new(x._device.backend.pinv(x._data, native_rtol), x)


def qr(x, /, *, mode="reduced"):
    _matrices(x, "qr")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr(): mode must be 'reduced' or 'complete', got {mode!r}")
    q, r = x._device.backend.qr(x._data, mode)
    return QRResult(_new(q, x), _new(r, x))


def slogdet(x, /):
    _matrices(x, "slogdet", square=True)
    sign, logabsdet = x._device.backend.slogdet(x._data)
    return SlogdetResult(_new(sign, x), _new(logabsdet, x))


def solve(x1, x2, /):
    from ._data_type_functions import astype
    from ._manipulation_functions import broadcast_to, reshape

    check_array(x1, "solve", "x1")
    check_array(x2, "solve", "x2")
    same_device((x1, x2), "solve")
    _matrices(x1, "solve", square=True)
    check_dtype_category(x2, "floating-point", "solve")
    dtype = dt.promote(x1.dtype, x2.dtype)
    m = x1.shape[-1]
    if x2.ndim == 0:
        raise ValueError("solve(): x2 must have at least one dimension")
    if x2.ndim == 1:
        # (M,) is one right-hand side for every matrix of the stack x1.
        if x2.shape[0] != m:
            raise ValueError(f"solve(): x1 of shape {x1.shape} and x2 of shape {x2.shape} differ in M")
        batch = x1.shape[:-2]
        b = reshape(x2, (m, 1))
        b_shape = batch + (m, 1)
    else:
        if x2.shape[-2] != m:
            raise ValueError(f"solve(): x1 of shape {x1.shape} and x2 of shape {x2.shape} differ in M")
        batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
        b = x2
        b_shape = batch + x2.shape[-2:]
    a = broadcast_to(astype(x1, dtype, copy=False), batch + (m, m))
    b = broadcast_to(astype(b, dtype, copy=False), b_shape)
    out = Array._new(x1._device.backend.solve(a._data, b._data), x1._device)
    if x2.ndim == 1:
        out = reshape(out, batch + (m,))
    return out


def svd(x, /, *, full_matrices=True):
    _matrices(x, "svd")
    u, s, vh = x._device.backend.svd(x._data, bool(full_matrices))
    return SVDResult(_new(u, x), _new(s, x), _new(vh, x))


def svdvals(x, /):
    _matrices(x, "svdvals")
    return _new(x._device.backend.svdvals(x._data), x)


def diagonal(x, /, *, offset=0):
    check_array(x, "diagonal")
    if x.ndim < 2:
        raise ValueError(f"diagonal() needs an array of at least 2 dimensions, got {x.ndim}-D")
    return _new(x._device.backend.diagonal(x._data, check_int(offset, "diagonal", "offset")), x)


# --- composites -------------------------------------------------------------------------------

def cross(x1, x2, /, *, axis=-1):
    from ._elementwise_functions import multiply, subtract
    from ._manipulation_functions import moveaxis, stack

    _numeric_pair(x1, x2, "cross")
    n = min(x1.ndim, x2.ndim)
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"cross(): axis must be an integer, got {type(axis).__name__}") from None
    if x1.ndim == x2.ndim and 0 <= axis < n:
        axis -= n  # unambiguous for arrays of one rank (NumPy accepts it)
    if not -n <= axis <= -1:
        raise ValueError(f"cross(): axis must be a negative integer in [{-n}, -1] for arrays of "
                         f"{x1.ndim} and {x2.ndim} dimensions, got {axis}")
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"cross(): axis {axis} must have size 3 in both arrays, got shapes "
                         f"{x1.shape} and {x2.shape}")
    broadcast_shapes(x1.shape, x2.shape)
    a = moveaxis(x1, axis, -1) if axis != -1 else x1
    b = moveaxis(x2, axis, -1) if axis != -1 else x2
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return stack([subtract(multiply(a1, b2), multiply(a2, b1)),
                  subtract(multiply(a2, b0), multiply(a0, b2)),
                  subtract(multiply(a0, b1), multiply(a1, b0))], axis=axis)


def outer(x1, x2, /):
    from ._elementwise_functions import multiply
    from ._manipulation_functions import reshape

    _numeric_pair(x1, x2, "outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer() needs two 1-D arrays, got {x1.ndim}-D and {x2.ndim}-D")
    return multiply(reshape(x1, (x1.shape[0], 1)), reshape(x2, (1, x2.shape[0])))


def trace(x, /, *, offset=0, dtype=None):
    _matrices(x, "trace", category="numeric")
    if dtype is not None:
        dtype = check_dtype(dtype, "trace")
    return _stats().sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def matrix_power(x, n, /):
    from ._creation_functions import eye

    _matrices(x, "matrix_power", square=True)
    if isinstance(n, bool):
        raise TypeError("matrix_power(): n must be an integer, not bool")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power(): n must be an integer, got {type(n).__name__}") from None
    backend = x._device.backend
    if n == 0:
        identity = eye(x.shape[-1], dtype=x.dtype, device=x._device)
        return _new(backend.copy(backend.broadcast_to(identity._data, x.shape)), x)
    if n < 0:
        x = inv(x)
        n = -n
    elif n == 1:
        return _new(backend.copy(x._data), x)
    # Repeated squaring: about 2*log2(n) products.
    result = None
    base = x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result
        base = matmul(base, base)


def matrix_rank(x, /, *, rtol=None):
    from ._creation_functions import zeros
    from ._data_type_functions import astype
    from ._elementwise_functions import greater, multiply
    from ._manipulation_functions import expand_dims

    _matrices(x, "matrix_rank")
    rtol = _rtol(rtol, x, "matrix_rank")
    batch = x.shape[:-2]
    if min(x.shape[-2:]) == 0:
        return zeros(batch, dtype=dt.int64, device=x._device)
    s = svdvals(x)
    stats = _stats()
    s_max = stats.max(s, axis=-1, keepdims=True)
    if rtol is None:
        rtol = _default_rtol(x)
    if type(rtol) is Array:
        rtol = expand_dims(rtol, axis=-1)
    tol = multiply(s_max, rtol)
    return stats.sum(astype(greater(s, tol), dt.int64), axis=-1, dtype=dt.int64)


def _check_ord(ord, fname):
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"{fname}(): ord must be a real number, got {ord!r}")
    if math.isnan(ord):
        raise ValueError(f"{fname}(): ord must not be NaN")


def _reduced_shape(shape, axes, keepdims):
    return tuple(1 if i in axes else n for i, n in enumerate(shape) if keepdims or i not in axes)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    from ._creation_functions import full, zeros
    from ._data_type_functions import astype
    from ._elementwise_functions import abs, not_equal, pow, sqrt, square

    check_array(x, "vector_norm")
    check_dtype_category(x, "floating-point", "vector_norm")
    _check_ord(ord, "vector_norm")
    axes = normalize_axes(axis, x.ndim, "vector_norm")
    keepdims = bool(keepdims)
    real = dt.real_dtype_of(x.dtype)
    stats = _stats()
    if ord == 0:
        return stats.sum(astype(not_equal(x, 0), real), axis=axes, keepdims=keepdims, dtype=real)
    a = abs(x)
    if ord in (math.inf, -math.inf):
        if math.prod(x.shape[i] for i in axes) == 0:
            # max/min of no values: the norm of an empty vector is 0 (and -inf's "norm" inf).
            out_shape = _reduced_shape(x.shape, axes, keepdims)
            if ord > 0:
                return zeros(out_shape, dtype=real, device=x._device)
            return full(out_shape, math.inf, dtype=real, device=x._device)
        reduce = stats.max if ord > 0 else stats.min
        return reduce(a, axis=axes, keepdims=keepdims)
    if ord == 1:
        return stats.sum(a, axis=axes, keepdims=keepdims, dtype=real)
    if ord == 2:
        return sqrt(stats.sum(square(a), axis=axes, keepdims=keepdims, dtype=real))
    p = float(ord)
    return pow(stats.sum(pow(a, p), axis=axes, keepdims=keepdims, dtype=real), 1.0 / p)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    from ._creation_functions import zeros
    from ._elementwise_functions import abs
    from ._manipulation_functions import reshape

    _matrices(x, "matrix_norm")
    real = dt.real_dtype_of(x.dtype)
    batch = x.shape[:-2]
    m, n = x.shape[-2:]
    stats = _stats()
    if isinstance(ord, str):
        if ord == "fro":
            out = vector_norm(x, axis=(-2, -1), ord=2)
        elif ord == "nuc":
            out = stats.sum(svdvals(x), axis=-1, dtype=real)
        else:
            raise ValueError(f"matrix_norm(): ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, "
                             f"got {ord!r}")
    else:
        _check_ord(ord, "matrix_norm")
        if ord in (1, -1, math.inf, -math.inf):
            # 1: largest column sum of |x| (sum over rows); inf: largest row sum.
            summed_axis, other = (-2, n) if ord in (1, -1) else (-1, m)
            if other == 0:
                out = zeros(batch, dtype=real, device=x._device)
            else:
                sums = stats.sum(abs(x), axis=summed_axis, dtype=real)
                out = (stats.max if ord > 0 else stats.min)(sums, axis=-1)
        elif ord in (2, -2):
            if min(m, n) == 0:
                out = zeros(batch, dtype=real, device=x._device)
            else:
                out = svdvals(x)[..., 0 if ord == 2 else -1]
        else:
            raise ValueError(f"matrix_norm(): ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, "
                             f"got {ord!r}")
    if keepdims:
        out = reshape(out, batch + (1, 1))
    return out


__all__ = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm"]
