"""Linear algebra primitives on the CPU: numpy.linalg.

Results keep the input's precision (NumPy's LAPACK wrappers have float32/complex64 routines; the
casts below only fix the cases where NumPy picks another dtype, e.g. real eigenvalues of ``eig``)
and are always ``np.ndarray`` (0-d arrays, never NumPy scalars). ``numpy.linalg.LinAlgError`` is
raised again as ``arrayx.linalg.LinAlgError`` (a ValueError), which every backend raises.
"""

import functools

import numpy as np
import numpy.linalg as npl

from .._backend import LinAlgError
from .._dtypes import complex_dtype_of, real_dtype_of


def _translate_errors(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        try:
            return fn(*args)
        except npl.LinAlgError as exc:
            raise LinAlgError(f"{fn.__name__}(): {exc}") from None

    return wrapper


def _as(a, dtype):
    return np.asarray(a, dtype=dtype)


def matmul(a, b):
    return np.asarray(np.matmul(a, b))


@_translate_errors
def cholesky(a, upper):
    return _as(npl.cholesky(a, upper=upper), a.dtype)


@_translate_errors
def det(a):
    return _as(npl.det(a), a.dtype)


@_translate_errors
def eigh(a):
    w, v = npl.eigh(a)
    return _as(w, real_dtype_of(a.dtype)), _as(v, a.dtype)


@_translate_errors
def eigvalsh(a):
    return _as(npl.eigvalsh(a), real_dtype_of(a.dtype))


@_translate_errors
def eig(a):
    # NumPy returns real arrays when every eigenvalue of a real matrix is real.
    w, v = npl.eig(a)
    cdt = complex_dtype_of(real_dtype_of(a.dtype))
    return _as(w, cdt), _as(v, cdt)


@_translate_errors
def eigvals(a):
    return _as(npl.eigvals(a), complex_dtype_of(real_dtype_of(a.dtype)))


@_translate_errors
def inv(a):
    return _as(npl.inv(a), a.dtype)


@_translate_errors
def qr(a, mode):
    q, r = npl.qr(a, mode=mode)
    return _as(q, a.dtype), _as(r, a.dtype)


@_translate_errors
def slogdet(a):
    sign, logabsdet = npl.slogdet(a)
    return _as(sign, a.dtype), _as(logabsdet, real_dtype_of(a.dtype))


@_translate_errors
def solve(a, b):
    # b is (..., M, K) with the batch dimensions of a: NumPy treats it as a stack of matrices.
    return _as(npl.solve(a, b), a.dtype)


@_translate_errors
def svd(a, full_matrices):
    u, s, vh = npl.svd(a, full_matrices=full_matrices)
    return _as(u, a.dtype), _as(s, real_dtype_of(a.dtype)), _as(vh, a.dtype)


@_translate_errors
def svdvals(a):
    return _as(npl.svd(a, compute_uv=False), real_dtype_of(a.dtype))


@_translate_errors
def pinv(a, rtol):
    # rtol=None asks NumPy for the standard's default, max(M, N) * eps.
    return _as(npl.pinv(a, rtol=rtol), a.dtype)
