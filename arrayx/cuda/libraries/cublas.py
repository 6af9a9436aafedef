"""cuBLAS through ctypes (calls.py): the functions arrayx calls, their constants, and one handle
per device and host thread (calls.PerThread: a handle is not meant for concurrent use by several
threads), created in the device's primary context on first use, bound to the stream arrayx
queues work on now (rebound only when that stream changes: the handle is arrayx's own, so
nothing else rebinds it).

pathfinder's "cublas" loads libcublasLt first (libcublas needs it). Several cuBLAS functions are
exported under a ``_v2`` name, which cublas_v2.h maps the plain names to."""

from __future__ import annotations

from ctypes import c_int, c_longlong, c_void_p
from enum import IntEnum

from .calls import Library, PerThread


class Status(IntEnum):
    """cublasStatus_t (cublas_api.h)."""
    CUBLAS_STATUS_SUCCESS = 0
    CUBLAS_STATUS_NOT_INITIALIZED = 1
    CUBLAS_STATUS_ALLOC_FAILED = 3
    CUBLAS_STATUS_INVALID_VALUE = 7
    CUBLAS_STATUS_ARCH_MISMATCH = 8
    CUBLAS_STATUS_MAPPING_ERROR = 11
    CUBLAS_STATUS_EXECUTION_FAILED = 13
    CUBLAS_STATUS_INTERNAL_ERROR = 14
    CUBLAS_STATUS_NOT_SUPPORTED = 15
    CUBLAS_STATUS_LICENSE_ERROR = 16


class FillMode(IntEnum):
    """cublasFillMode_t (cublas_api.h): the triangle a routine reads; cuSOLVER takes it too."""
    LOWER = 0
    UPPER = 1


class ComputeType(IntEnum):
    """cublasComputeType_t (cublas_api.h), the ones arrayx uses."""
    COMPUTE_32F = 68
    COMPUTE_64F = 70
    COMPUTE_32F_FAST_TF32 = 77


class PointerMode(IntEnum):
    """cublasPointerMode_t (cublas_api.h): where scalars and scalar results live."""
    HOST = 0
    DEVICE = 1


GEMM_DEFAULT = -1  # cublasGemmAlgo_t CUBLAS_GEMM_DEFAULT (cublas_api.h): cuBLAS's heuristics

library = Library("cublas", Status, Status.CUBLAS_STATUS_ALLOC_FAILED)
# cublasHandle_t, cudaStream_t and every array are pointers; cublasOperation_t, cudaDataType,
# cublasComputeType_t and cublasGemmAlgo_t are enums (int); strides are long long.
_p, _i, _ll = c_void_p, c_int, c_longlong

create = library.function("cublasCreate_v2", out=(_p,))
set_stream = library.function("cublasSetStream_v2", _p, _p)
set_pointer_mode = library.function("cublasSetPointerMode_v2", _p, _i)
# (handle, n, x, incx, y, incy, result); the complex ones unconjugated (cdotu, zdotu)
_DOT = (_p, _i, _p, _i, _p, _i, _p)
sdot = library.function("cublasSdot_v2", *_DOT)
ddot = library.function("cublasDdot_v2", *_DOT)
cdotu = library.function("cublasCdotu_v2", *_DOT)
zdotu = library.function("cublasZdotu_v2", *_DOT)
# (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy)
_GEMV = (_p, _i, _i, _i, _p, _p, _i, _p, _i, _p, _p, _i)
sgemv = library.function("cublasSgemv_v2", *_GEMV)
dgemv = library.function("cublasDgemv_v2", *_GEMV)
cgemv = library.function("cublasCgemv_v2", *_GEMV)
zgemv = library.function("cublasZgemv_v2", *_GEMV)
# (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
#  computeType, algo)
gemm_ex = library.function("cublasGemmEx", _p, _i, _i, _i, _i, _i, _p, _p, _i, _i, _p, _i, _i,
                           _p, _p, _i, _i, _i, _i)
# (handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta,
#  C, Ctype, ldc, strideC, batchCount, computeType, algo)
gemm_strided_batched_ex = library.function(
    "cublasGemmStridedBatchedEx", _p, _i, _i, _i, _i, _i, _p, _p, _i, _i, _ll, _p, _i, _i, _ll,
    _p, _p, _i, _i, _ll, _i, _i, _i)

# [handle, pointer of the stream it is bound to], one per device and thread
_handles = PerThread(lambda dev: [create(), None])


def handle(dev, stream) -> int:
    """The calling thread's cuBLAS handle on the device, bound to `stream`."""
    entry = _handles.get(dev)
    if entry[1] != stream.ptr:
        set_stream(entry[0], stream.ptr)
        entry[1] = stream.ptr
    return entry[0]
