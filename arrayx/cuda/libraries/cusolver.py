"""cuSOLVER's dense API through ctypes (calls.py): the functions arrayx calls (the 64-bit X API,
and the legacy orgqr/ungqr and gesvdj, which the X API lacks), their constants, and one handle
per device with its ``cusolverDnParams``, made and bound to streams as cublas.py's handle is;
and the status every routine reports.

Status: cuSOLVER writes one ``info`` per matrix into device memory. ``check_info`` reads it
back, which is one device-to-host copy and so one synchronisation of the stream per call; it is
the price of raising LinAlgError for a singular or non-positive-definite matrix.
"""

from __future__ import annotations

from ctypes import POINTER, byref, c_byte, c_int, c_int64, c_size_t, c_void_p
from enum import IntEnum

import numpy as np

from ..engine.array import new_array
from .calls import Library, PerThread

_INT32 = np.dtype(np.int32)


class Status(IntEnum):
    """cusolverStatus_t (cusolver_common.h)."""
    CUSOLVER_STATUS_SUCCESS = 0
    CUSOLVER_STATUS_NOT_INITIALIZED = 1
    CUSOLVER_STATUS_ALLOC_FAILED = 2
    CUSOLVER_STATUS_INVALID_VALUE = 3
    CUSOLVER_STATUS_ARCH_MISMATCH = 4
    CUSOLVER_STATUS_MAPPING_ERROR = 5
    CUSOLVER_STATUS_EXECUTION_FAILED = 6
    CUSOLVER_STATUS_INTERNAL_ERROR = 7
    CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED = 8
    CUSOLVER_STATUS_NOT_SUPPORTED = 9
    CUSOLVER_STATUS_ZERO_PIVOT = 10
    CUSOLVER_STATUS_INVALID_LICENSE = 11
    CUSOLVER_STATUS_IRS_PARAMS_NOT_INITIALIZED = 12
    CUSOLVER_STATUS_IRS_PARAMS_INVALID = 13
    CUSOLVER_STATUS_IRS_PARAMS_INVALID_PREC = 14
    CUSOLVER_STATUS_IRS_PARAMS_INVALID_REFINE = 15
    CUSOLVER_STATUS_IRS_PARAMS_INVALID_MAXITER = 16
    CUSOLVER_STATUS_IRS_INTERNAL_ERROR = 20
    CUSOLVER_STATUS_IRS_NOT_SUPPORTED = 21
    CUSOLVER_STATUS_IRS_OUT_OF_RANGE = 22
    CUSOLVER_STATUS_IRS_NRHS_NOT_SUPPORTED_FOR_REFINE_GMRES = 23
    CUSOLVER_STATUS_IRS_INFOS_NOT_INITIALIZED = 25
    CUSOLVER_STATUS_IRS_INFOS_NOT_DESTROYED = 26
    CUSOLVER_STATUS_IRS_MATRIX_SINGULAR = 30
    CUSOLVER_STATUS_INVALID_WORKSPACE = 31


class EigMode(IntEnum):
    """cusolverEigMode_t (cusolver_common.h): eigenvalues only, or eigenvectors too."""
    NOVECTOR = 0
    VECTOR = 1


library = Library("cusolver", Status, Status.CUSOLVER_STATUS_ALLOC_FAILED)
# Handles, params, streams and arrays (device ipiv and info too) are pointers; enums
# (cudaDataType, cublasFillMode_t, cublasOperation_t, cusolverEigMode_t) are int; the X API's
# sizes are int64_t, its workspace sizes size_t; gesvd's jobs are signed char; the legacy API is
# int throughout.
_p, _i, _i64, _sz = c_void_p, c_int, c_int64, c_size_t
# The X routines' trailing arguments: bufferOnDevice and its bytes, bufferOnHost and its bytes,
# info.
_X_WORK = (_p, _sz, _p, _sz, _p)


def _with_buffer_size(symbol: str, args: tuple, sizes: tuple, work: tuple):
    """(<symbol>_bufferSize, <symbol>): the size query takes `args` and returns the `sizes`; the
    routine takes `args`, then `work`."""
    return (library.function(f"{symbol}_bufferSize", *args, out=sizes),
            library.function(symbol, *args, *work))


create = library.function("cusolverDnCreate", out=(_p,))
create_params = library.function("cusolverDnCreateParams", out=(_p,))
set_stream = library.function("cusolverDnSetStream", _p, _p)
# (handle, params, m, n, dataTypeA, A, lda, computeType) -> (device bytes, host bytes)
xgetrf_buffer_size = library.function("cusolverDnXgetrf_bufferSize", _p, _p, _i64, _i64, _i, _p,
                                      _i64, _i, out=(_sz, _sz))
# (handle, params, m, n, dataTypeA, A, lda, ipiv, computeType, *work)
xgetrf = library.function("cusolverDnXgetrf", _p, _p, _i64, _i64, _i, _p, _i64, _p, _i, *_X_WORK)
# (handle, params, trans, n, nrhs, dataTypeA, A, lda, ipiv, dataTypeB, B, ldb, info)
xgetrs = library.function("cusolverDnXgetrs", _p, _p, _i, _i64, _i64, _i, _p, _i64, _p, _i, _p,
                          _i64, _p)
# (handle, params, m, n, dataTypeA, A, lda, dataTypeTau, tau, computeType)
xgeqrf_buffer_size, xgeqrf = _with_buffer_size(
    "cusolverDnXgeqrf", (_p, _p, _i64, _i64, _i, _p, _i64, _i, _p, _i), (_sz, _sz), _X_WORK)
# (handle, params, uplo, n, dataTypeA, A, lda, computeType)
xpotrf_buffer_size, xpotrf = _with_buffer_size(
    "cusolverDnXpotrf", (_p, _p, _i, _i64, _i, _p, _i64, _i), (_sz, _sz), _X_WORK)
# (handle, params, jobz, uplo, n, dataTypeA, A, lda, dataTypeW, W, computeType)
xsyevd_buffer_size, xsyevd = _with_buffer_size(
    "cusolverDnXsyevd", (_p, _p, _i, _i, _i64, _i, _p, _i64, _i, _p, _i), (_sz, _sz), _X_WORK)
# (handle, params, jobu, jobvt, m, n, dataTypeA, A, lda, dataTypeS, S, dataTypeU, U, ldu,
#  dataTypeVT, VT, ldvt, computeType)
xgesvd_buffer_size, xgesvd = _with_buffer_size(
    "cusolverDnXgesvd", (_p, _p, c_byte, c_byte, _i64, _i64, _i, _p, _i64, _i, _p, _i, _p, _i64,
                         _i, _p, _i64, _i), (_sz, _sz), _X_WORK)
# (handle, params, jobvl, jobvr, n, dataTypeA, A, lda, dataTypeW, W, dataTypeVL, VL, ldvl,
#  dataTypeVR, VR, ldvr, computeType)
xgeev_buffer_size, xgeev = _with_buffer_size(
    "cusolverDnXgeev", (_p, _p, _i, _i, _i64, _i, _p, _i64, _i, _p, _i, _p, _i64, _i, _p, _i64,
                        _i), (_sz, _sz), _X_WORK)
# (handle, m, n, k, A, lda, tau) -> lwork in elements; the routine then takes (work, lwork, info)
_ORGQR_ARGS, _ORGQR_WORK = (_p, _i, _i, _i, _p, _i, _p), (_p, _i, _p)
sorgqr_buffer_size, sorgqr = _with_buffer_size("cusolverDnSorgqr", _ORGQR_ARGS, (_i,), _ORGQR_WORK)
dorgqr_buffer_size, dorgqr = _with_buffer_size("cusolverDnDorgqr", _ORGQR_ARGS, (_i,), _ORGQR_WORK)
cungqr_buffer_size, cungqr = _with_buffer_size("cusolverDnCungqr", _ORGQR_ARGS, (_i,), _ORGQR_WORK)
zungqr_buffer_size, zungqr = _with_buffer_size("cusolverDnZungqr", _ORGQR_ARGS, (_i,), _ORGQR_WORK)

# One-sided Jacobi SVD (legacy API, 32-bit sizes): gesvdj_bufferSize's lwork (an int, in
# elements) comes before its params argument, so it is passed as a pointer, not as an `out`.
# (handle, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv)
_GESVDJ_ARGS = (_p, _i, _i, _i, _i, _p, _i, _p, _p, _i, _p, _i)


def _gesvdj(letter: str):
    """(<t>gesvdj_buffer_size, <t>gesvdj): the size query takes (handle ... ldv, params) and
    returns lwork; the routine takes (handle ... ldv, work, lwork, info, params)."""
    size = library.function(f"cusolverDn{letter}gesvdj_bufferSize", *_GESVDJ_ARGS, POINTER(_i),
                            _p)

    def buffer_size(*args):
        lwork = _i()
        size(*args[:-1], byref(lwork), args[-1])
        return lwork.value

    return buffer_size, library.function(f"cusolverDn{letter}gesvdj", *_GESVDJ_ARGS, _p, _i, _p, _p)


sgesvdj_buffer_size, sgesvdj = _gesvdj("S")
dgesvdj_buffer_size, dgesvdj = _gesvdj("D")
cgesvdj_buffer_size, cgesvdj = _gesvdj("C")
zgesvdj_buffer_size, zgesvdj = _gesvdj("Z")
create_gesvdj_info = library.function("cusolverDnCreateGesvdjInfo", out=(_p,))
gesvdj_set_max_sweeps = library.function("cusolverDnXgesvdjSetMaxSweeps", _p, _i)
gesvdj_set_sort = library.function("cusolverDnXgesvdjSetSortEig", _p, _i)
_gesvdj_infos: dict = {}  # max sweeps -> gesvdjInfo_t (host-side settings, shared by devices)


def gesvdj_info(max_sweeps: int):
    """gesvdj's settings: singular values sorted in descending order (as LAPACK's), the default
    tolerance (machine precision) and at most `max_sweeps` sweeps."""
    info = _gesvdj_infos.get(max_sweeps)
    if info is None:
        info = create_gesvdj_info()
        gesvdj_set_sort(info, 1)
        gesvdj_set_max_sweeps(info, max_sweeps)
        info = _gesvdj_infos.setdefault(max_sweeps, info)
    return info


# [handle, params, pointer of the stream it is bound to], one per device and thread
_handles = PerThread(lambda dev: [create(), create_params(), None])


def handle(dev, stream) -> tuple:
    """(the calling thread's cuSOLVER handle on the device, bound to `stream`, its
    cusolverDnParams)."""
    entry = _handles.get(dev)
    if entry[2] != stream.ptr:
        set_stream(entry[0], stream.ptr)
        entry[2] = stream.ptr
    return entry[0], entry[1]


def info_array(dev, count: int):
    """Device int32 status slots, one per matrix, for cuSOLVER's `info` outputs."""
    return new_array(dev.index, (max(1, count),), _INT32, dev.allocator)


def read_info(info, fname: str) -> np.ndarray:
    """Wait for the stream and read `info` back; a negative entry (an argument cuSOLVER
    rejected) is a bug in arrayx and raises RuntimeError."""
    from ..engine.transfer import to_host
    values = to_host(info)
    if (values < 0).any():
        raise RuntimeError(f"{fname}(): cuSOLVER rejected argument {-int(values.min())} "
                           f"(an arrayx bug; please report it)")
    return values


def check_info(info, fname: str, failure: str) -> None:
    """read_info, and LinAlgError(`failure`) for a positive entry (the matrix property the
    routine needs does not hold)."""
    if (read_info(info, fname) > 0).any():
        from ..._backend import LinAlgError
        raise LinAlgError(f"{fname}(): {failure}")
