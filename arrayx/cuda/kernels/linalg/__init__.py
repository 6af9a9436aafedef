"""Linear algebra primitives on CUDA: cuBLAS for products, cuSOLVER for factorisations and solvers.

Layouts. arrayx matrices are row-major and the libraries are column-major; a row-major buffer read
column-major is the transpose, and the code uses that instead of transposing copies:

* ``matmul`` computes out^T = b^T a^T in column-major terms. Each operand is passed with the
  operation flag (N or T) and leading dimension its strides allow, so transposed views (``x.mT``)
  and row slices cost nothing; an operand whose strides cuBLAS cannot express (two non-unit
  strides, negative or zero strides inside a matrix) is copied first. Batch dimensions are
  collapsed and covered by strided-batched calls (stride 0 for a broadcast operand). One matrix
  times one vector goes to ``cublas<t>gemv`` (it reaches the copy bandwidth; gemm with n = 1 does
  not). All of this depends only on the layouts and is cached per (shapes, strides):
  the host time of a call is what small and batched products cost beyond the GPU's.
  Integer dtypes, which cuBLAS lacks, run a kernel.
* Solvers overwrite their input, so each makes one copy anyway. A C-contiguous copy (a memcpy)
  holds A^T column-major: the LU factors of A^T give det, inv (inv(A^T) read row-major is inv(A))
  and solve (getrs with op T). For Hermitian A, A^T = conj(A): cholesky and eigh factorise conj(A)
  and read the results back accordingly (see each function). QR, eig and the SVD of a tall matrix
  need A itself column-major: a transposing copy.

Batches: cuSOLVER's 64-bit API factorises one matrix per call, so a stack is a loop of calls on
the stream (a few microseconds of host time per matrix), each with its own ``info`` slot.

Failures: a singular matrix (inv, solve), a matrix that is not positive definite (cholesky) or an
iteration that does not converge (eigh, eig, svd) raises ``arrayx.linalg.LinAlgError``, as on the
CPU. Knowing it means reading cuSOLVER's info back: one synchronisation of the stream per call of
those functions. det and slogdet never raise (a singular matrix gives 0 and (0, -inf)).

Precision: float32/complex64 products use full float32 arithmetic (results match float32
references); TF32 tensor cores (several times the float32 rate on Hopper's datasheet, errors near
3e-4 relative) only after ``set_allow_tf32(True)`` or with ``ARRAYX_ALLOW_TF32=1``.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
from typing import NamedTuple

import numpy as np

from .. import elementwise
from ...engine import layout, runtime
from ... import libraries
from . import kernels
from ...engine.array import CudaArray, new_array
from ...engine.layout import c_strides

# TF32 tensor cores for float32 products: opt-in, as they round the inputs to 10 mantissa bits.
_allow_tf32 = os.environ.get("ARRAYX_ALLOW_TF32", "0") not in ("", "0", "false", "False")
# Products with a vector operand skip gemm: a matrix times a vector goes through gemv (it reaches
# the copy bandwidth, gemm does not), two vectors through dot (the first gemv or gemm of a
# process spends 0.1 s in cuBLAS's set-up, the first dot little beyond the library's load).
USE_GEMV = True

_INT64 = np.dtype(np.int64)
_GEMV = {np.dtype(np.float32): libraries.cublas.sgemv,
         np.dtype(np.float64): libraries.cublas.dgemv,
         np.dtype(np.complex64): libraries.cublas.cgemv,
         np.dtype(np.complex128): libraries.cublas.zgemv}
_DOT = {np.dtype(np.float32): libraries.cublas.sdot,
        np.dtype(np.float64): libraries.cublas.ddot,
        np.dtype(np.complex64): libraries.cublas.cdotu,
        np.dtype(np.complex128): libraries.cublas.zdotu}
_ORGQR = {np.dtype(np.float32): "sorgqr", np.dtype(np.float64): "dorgqr",
          np.dtype(np.complex64): "cungqr", np.dtype(np.complex128): "zungqr"}
# LAPACK's job letters of gesvd: all columns, the min(M, N) first ones, none.
_JOB_ALL, _JOB_SOME, _JOB_NONE = ord("A"), ord("S"), ord("N")


def set_allow_tf32(allow: bool) -> bool:
    """Let cuBLAS use TF32 tensor cores for float32 and complex64 products; returns the old
    setting."""
    global _allow_tf32
    old, _allow_tf32 = _allow_tf32, bool(allow)
    return old


# ---- helpers --------------------------------------------------------------------------------

def _real(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in (np.float32, np.complex64) else np.dtype(np.float64)


def _complex(dtype: np.dtype) -> np.dtype:
    single = dtype in (np.float32, np.complex64)
    return np.dtype(np.complex64) if single else np.dtype(np.complex128)


def _device(a: CudaArray):
    return runtime.get_device(a.device_index)


def _empty(dev, shape, dtype) -> CudaArray:
    return new_array(dev.index, tuple(shape), np.dtype(dtype), dev.allocator)


def _swap_last(a: CudaArray) -> CudaArray:
    """The view with the last two axes swapped (a matrix transpose; no copy)."""
    shape, strides = list(a.shape), list(a.strides)
    shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return a.view(shape, strides, a.offset)


def _column_major_copy(a: CudaArray, dtype=None) -> CudaArray:
    """A C-contiguous copy of a's matrix transpose, i.e. `a` itself in column-major order (a
    memcpy when `a` is a transposed view), cast to `dtype`."""
    return elementwise.astype(_swap_last(a), a.dtype if dtype is None else dtype, True)


def _diagonal_view(a: CudaArray, offset: int) -> CudaArray:
    rows, cols = a.shape[-2:]
    rs, cs = a.strides[-2:]
    if offset >= 0:
        length, start = max(0, min(rows, cols - offset)), offset * cs
    else:
        length, start = max(0, min(rows + offset, cols)), -offset * rs
    return a.view(a.shape[:-2] + (length,), a.strides[:-2] + (rs + cs,),
                  a.offset + (start if length else 0))


def _identity(dev, batch: tuple, n: int, dtype) -> CudaArray:
    out = _empty(dev, batch + (n, n), dtype)
    if out.size:
        elementwise.fill(out, 0)
        elementwise.fill(_diagonal_view(out, 0), 1)
    return out


def _zeros(dev, shape, dtype) -> CudaArray:
    out = _empty(dev, shape, dtype)
    if out.size:
        elementwise.fill(out, 0)
    return out


def _matrix_copy(out: CudaArray, src: CudaArray, part: str = "all", conjugate: bool = False):
    """out (C-contiguous) = the matrices of `src` (any strides; shape of out), keeping `part`
    ('all', 'lower', 'upper') and zeroing the rest, conjugated if asked. `src` may be `out`."""
    rows, cols = out.shape[-2:]
    kernels.launch(kernels.matrix_copy_spec, (out.dtype, part, conjugate), _device(out), out.size,
                   [out, src, out.size, rows, cols, _matrix_batch_stride(src), *src.strides[-2:]],
                   keep=(out, src))
    return out


def _ptr(a) -> int:
    return 0 if a is None else a.ptr


def _stacked(count: int, *arrays):
    """For each of `count` matrices, the device pointers of its part of each C-contiguous stack
    (matrices, vectors or status slots; None gives 0)."""
    steps = [0 if a is None else a.size // count * a.dtype.itemsize for a in arrays]
    for i in range(count):
        yield tuple(0 if a is None else a.ptr + i * step for a, step in zip(arrays, steps))


class _Solver:
    """cuSOLVER calls for a stack of `count` matrices on the device's current stream, with
    `slots` info entries per matrix and the workspaces and arrays to keep alive."""

    def __init__(self, dev, count: int, slots: int = 1):
        self.dev = dev
        self.count = count
        self.stream = dev.stream
        self.handle, self.params = libraries.cusolver.handle(dev, self.stream)
        self.info = libraries.cusolver.info_array(dev, count * slots)
        self.keep = [self.info]

    def workspace(self, sizes) -> tuple:
        """Device and host workspaces for the (device bytes, host bytes) an X*_buffer_size call
        returned, as the four arguments the X routines take."""
        device_bytes, host_bytes = (int(s) for s in sizes)
        on_device = libraries.device_workspace(self.dev, device_bytes)
        on_host = libraries.host_workspace(host_bytes)
        self.keep += [on_device, on_host]
        return _ptr(on_device), device_bytes, on_host.ctypes.data, host_bytes

    def __call__(self, routine: str, *args):
        """Call a cuSOLVER routine (libraries/cusolver.py) on this handle, after the kernels queued
        before it."""
        self.stream.encoder.flush()
        return getattr(libraries.cusolver, routine)(self.handle, *args)

    def finish(self, *arrays):
        """Hand everything the calls use to the encoder (no synchronisation)."""
        libraries.end(self.stream, *self.keep, *arrays)

    def check(self, fname: str, failure: str):
        """Raise LinAlgError(`failure`) if a matrix failed (one synchronisation)."""
        libraries.cusolver.check_info(self.info, fname, failure)


def _lu_factor(solver: _Solver, lu: CudaArray) -> CudaArray:
    """LU-factorise every matrix of the C-contiguous stack `lu` in place (as column-major, so
    these are the factors of the transposes); returns the 1-based pivots (int64). Info slot 0 of
    each matrix says whether U has a zero pivot."""
    n = lu.shape[-1]
    dt = libraries.data_type(lu.dtype)
    ipiv = _empty(solver.dev, lu.shape[:-1], _INT64)
    ws = solver.workspace(solver("xgetrf_buffer_size", solver.params, n, n, dt, lu.ptr, n, dt))
    for p, piv, info in _stacked(solver.count, lu, ipiv, solver.info):
        solver("xgetrf", solver.params, n, n, dt, p, n, piv, dt, *ws, info)
    solver.keep += [lu, ipiv]
    return ipiv


# ---- products ---------------------------------------------------------------------------------

def _gemm_layout(rows: int, cols: int, rs: int, cs: int):
    """How cuBLAS reads the transpose of a rows x cols matrix with element strides (rs, cs):
    (op, ld) with op 0 (N: the transpose is stored column-major, i.e. the matrix row-major) or
    1 (T: the matrix is stored column-major), or None when the strides allow neither. A stride
    along a dimension of size 1 does not matter."""
    if (cols == 1 or cs == 1) and (rows == 1 or rs >= max(cols, 1)):
        return 0, rs if rows > 1 else max(cols, 1)
    if (rows == 1 or rs == 1) and (cols == 1 or cs >= max(rows, 1)):
        return 1, cs if cols > 1 else max(rows, 1)
    return None


def _operand_layout(shape: tuple, strides: tuple, batch: tuple):
    """(needs a copy, op, ld, batch strides broadcast to `batch`, strides) of a cuBLAS operand,
    the copy being C-contiguous, made when cuBLAS cannot read the strides as they are."""
    rows, cols = shape[-2:]
    op_ld = _gemm_layout(rows, cols, *strides[-2:])
    batch_strides = layout.broadcast_strides(shape[:-2], strides[:-2], batch)
    copy = op_ld is None or min(batch_strides, default=0) < 0
    if copy:
        strides = c_strides(shape)
        op_ld = _gemm_layout(rows, cols, *strides[-2:])
        batch_strides = layout.broadcast_strides(shape[:-2], strides[:-2], batch)
    return (copy,) + op_ld + (batch_strides, strides)


def _batches(batch: tuple, *batch_strides):
    """Collapse the batch dimensions jointly for every operand; yield (count, element offsets,
    inner strides) for each strided-batched call covering them."""
    shape, strides = layout.collapse(batch, *batch_strides)
    for index in itertools.product(*(range(n) for n in shape[:-1])):
        offsets = [sum(i * s for i, s in zip(index, st)) for st in strides]
        yield shape[-1], offsets, [st[-1] for st in strides]


class _ProductPlan(NamedTuple):
    """How cuBLAS computes a @ b for operands of given shapes and strides (see _product_plan)."""
    out_shape: tuple
    out_size: int
    copy_a: bool
    copy_b: bool
    gemv: tuple | None   # (a is the matrix, trans, m, n, ld, vector increment)
    dot: tuple | None    # (a's increment, b's increment): (1 x K) @ (K x 1)
    op_a: int
    ld_a: int
    op_b: int
    ld_b: int
    calls: tuple         # (count, offsets of a, b, out, batch strides of a, b, out), in elements


@functools.lru_cache(maxsize=1024)
def _product_plan(a_shape, a_strides, b_shape, b_strides, use_gemv) -> _ProductPlan:
    """Everything about a product that depends only on the layouts, worked out once per layout:
    for small or batched products the host time of a call is what it costs beyond the GPU's."""
    M, K = a_shape[-2:]
    N = b_shape[-1]
    batch = layout.broadcast_shape(a_shape[:-2], b_shape[:-2])
    out_shape = batch + (M, N)
    copy_a, op_a, ld_a, a_batch, a_strides = _operand_layout(a_shape, a_strides, batch)
    copy_b, op_b, ld_b, b_batch, b_strides = _operand_layout(b_shape, b_strides, batch)
    gemv = dot = None
    if use_gemv and math.prod(batch) == 1 and M == N == 1:
        incs = (a_strides[-1], b_strides[-2]) if K > 1 else (1, 1)
        if min(incs) >= 1:
            dot = incs
    if use_gemv and dot is None and math.prod(batch) == 1 and 1 in (M, N):
        if N == 1:   # (M x K) @ (K x 1): the matrix is a, the vector b's column
            a_is_matrix, rows, rs, cs, inc = True, M, a_strides[-2], a_strides[-1], b_strides[-2]
        else:        # (1 x K) @ (K x N) = (b^T @ a^T)^T: the matrix is b^T
            a_is_matrix, rows, rs, cs, inc = False, N, b_strides[-1], b_strides[-2], a_strides[-1]
        op_ld = _gemm_layout(rows, K, rs, cs)
        inc = 1 if K == 1 else inc
        if op_ld is not None and inc >= 1:
            op, ld = op_ld
            # op N: the matrix's transpose is stored column-major (K x rows): y = stored^T v.
            trans, m, n = (1, K, rows) if op == 0 else (0, rows, K)
            gemv = (a_is_matrix, trans, m, n, ld, inc)
    calls = tuple((count,) + tuple(offsets) + tuple(inner) for count, offsets, inner in
                  _batches(batch, a_batch, b_batch, c_strides(out_shape)[:-2]))
    return _ProductPlan(out_shape, math.prod(out_shape), copy_a, copy_b, gemv, dot, op_a, ld_a,
                        op_b, ld_b, calls)


class _BlasTypes(NamedTuple):
    data: int            # cudaDataType of the operands
    compute: int         # cublasComputeType_t
    one: int             # host pointers to alpha = 1 and beta = 0 in the scale type
    zero: int
    gemv: object         # cublas<t>gemv
    scalars: tuple       # keeps the arrays behind `one` and `zero` alive


_blas_types_cache: dict = {}


def _blas_types(dtype: np.dtype) -> _BlasTypes:
    key = (dtype, _allow_tf32)
    types = _blas_types_cache.get(key)
    if types is None:
        kinds = libraries.cublas.ComputeType
        if dtype in (np.float64, np.complex128):
            compute = kinds.COMPUTE_64F
        else:
            compute = kinds.COMPUTE_32F_FAST_TF32 if _allow_tf32 else kinds.COMPUTE_32F
        one, zero = np.ones((), dtype), np.zeros((), dtype)
        types = _blas_types_cache[key] = _BlasTypes(
            libraries.data_type(dtype), int(compute), one.ctypes.data, zero.ctypes.data,
            _GEMV[dtype], (one, zero))
    return types


def matmul(a, b):
    dev = _device(a)
    plan = _product_plan(a.shape, a.strides, b.shape, b.strides, USE_GEMV)
    if plan.out_size == 0:
        return _empty(dev, plan.out_shape, a.dtype)
    out = new_array(dev.index, plan.out_shape, a.dtype, dev.allocator, plan.out_size)
    if a.shape[-1] == 0:
        elementwise.fill(out, 0)
    elif a.dtype.kind in "iu":
        _integer_matmul(dev, out, a, b)
    else:
        _blas_product(dev, out, a, b, plan)
    return out


def _integer_matmul(dev, out, a, b):
    M, K = a.shape[-2:]
    N = b.shape[-1]
    batch = out.shape[:-2]
    isz = out.dtype.itemsize
    a_batch = layout.broadcast_strides(a.shape[:-2], a.strides[:-2], batch)
    b_batch = layout.broadcast_strides(b.shape[:-2], b.strides[:-2], batch)
    for count, (oa, ob, oc), (sa, sb, _) in _batches(batch, a_batch, b_batch, out.strides[:-2]):
        total = count * M * N
        kernels.launch(kernels.integer_matmul_spec, (out.dtype,), dev, total,
                       [out.ptr + oc * isz, a.ptr + oa * isz, b.ptr + ob * isz, total, M, N, K,
                        sa, a.strides[-2], a.strides[-1], sb, b.strides[-2], b.strides[-1]],
                       keep=(out, a, b))


def _blas_product(dev, out, a, b, plan: _ProductPlan):
    M, K = a.shape[-2:]
    N = b.shape[-1]
    if plan.copy_a:
        a = elementwise.copy(a)
    if plan.copy_b:
        b = elementwise.copy(b)
    types = _blas_types(out.dtype)
    stream = libraries.begin(dev)
    handle = libraries.cublas.handle(dev, stream)
    if plan.dot is not None:
        cublas = libraries.cublas
        cublas.set_pointer_mode(handle, cublas.PointerMode.DEVICE)  # the result stays on the GPU
        try:
            _DOT[out.dtype](handle, K, a.ptr, plan.dot[0], b.ptr, plan.dot[1], out.ptr)
        finally:
            cublas.set_pointer_mode(handle, cublas.PointerMode.HOST)
    elif plan.gemv is not None:
        a_is_matrix, trans, m, n, ld, inc = plan.gemv
        matrix, vector = (a, b) if a_is_matrix else (b, a)
        types.gemv(handle, trans, m, n, types.one, matrix.ptr, ld, vector.ptr, inc, types.zero,
                   out.ptr, 1)
    else:
        cublas = libraries.cublas
        dt, isz = types.data, out.dtype.itemsize
        # out^T (N x M, column-major) = b^T (N x K) @ a^T (K x M)
        for count, oa, ob, oc, sa, sb, sc in plan.calls:
            pa, pb, pc = a.ptr + oa * isz, b.ptr + ob * isz, out.ptr + oc * isz
            if count == 1:
                cublas.gemm_ex(handle, plan.op_b, plan.op_a, N, M, K, types.one, pb, dt,
                               plan.ld_b, pa, dt, plan.ld_a, types.zero, pc, dt, N, types.compute,
                               cublas.GEMM_DEFAULT)
            else:
                cublas.gemm_strided_batched_ex(handle, plan.op_b, plan.op_a, N, M, K, types.one,
                                               pb, dt, plan.ld_b, sb, pa, dt, plan.ld_a, sa,
                                               types.zero, pc, dt, N, sc, count, types.compute,
                                               cublas.GEMM_DEFAULT)
    libraries.end(stream, a, b, out)


# ---- factorisations ---------------------------------------------------------------------------

def cholesky(a, upper):
    dev = _device(a)
    out = elementwise.copy(a)
    n = a.shape[-1]
    count = out.size // max(1, n * n)
    if out.size == 0:
        return out
    # The copy holds conj(A) column-major. potrf on its upper triangle gives conj(A) = U'^H U',
    # i.e. A = (U'^T)(U'^T)^H, and U' read row-major is U'^T: the lower factor L, read from A's
    # lower triangle (as NumPy does). With FillMode LOWER, likewise, the upper factor U.
    fill = libraries.cublas.FillMode
    uplo = fill.LOWER if upper else fill.UPPER
    dt = libraries.data_type(a.dtype)
    solver = _Solver(dev, count)
    ws = solver.workspace(solver("xpotrf_buffer_size", solver.params, uplo, n, dt, out.ptr, n, dt))
    for p, info in _stacked(count, out, solver.info):
        solver("xpotrf", solver.params, uplo, n, dt, p, n, dt, *ws, info)
    solver.finish(out)
    # The other triangle still holds the input: zero it, in place.
    _matrix_copy(out, out, "upper" if upper else "lower")
    solver.check("cholesky", "the matrix is not positive definite")
    return out


def _determinant(a, want_det: bool):
    """(det,) or (sign, logabsdet) of every matrix, from LU factors."""
    dev = _device(a)
    n = a.shape[-1]
    batch = a.shape[:-2]
    count = math.prod(batch)
    outputs = [_empty(dev, batch, a.dtype)] if want_det else \
        [_empty(dev, batch, a.dtype), _empty(dev, batch, _real(a.dtype))]
    if count == 0:
        return outputs
    lu = ipiv = None
    if n:
        lu = elementwise.copy(a)
        solver = _Solver(dev, count)
        ipiv = _lu_factor(solver, lu)
        solver.finish()  # no info check: a zero pivot is a singular matrix, det 0
    det, sign, logabs = (outputs[0], None, None) if want_det else (None, *outputs)
    kernels.launch(kernels.lu_det_spec, (a.dtype,), dev, count,
                   [sign, logabs, det, lu, ipiv, count, n, int(want_det)],
                   keep=tuple(x for x in (sign, logabs, det, lu, ipiv) if x is not None))
    return outputs


def det(a):
    return _determinant(a, True)[0]


def slogdet(a):
    return tuple(_determinant(a, False))


def _lu_solve(a, x, trans: int, fname: str):
    """Solve with the LU factors of a copy of `a` (which hold A^T column-major) for the
    right-hand sides in `x`, C-contiguous (..., K, M), i.e. column-major M x K, overwritten with
    the solutions: trans 0 solves A^T X = B, trans 1 (op T) solves (A^T)^T X = A X = B."""
    dev = _device(a)
    m = a.shape[-1]
    count = math.prod(a.shape[:-2])
    lu = elementwise.copy(a)
    dt = libraries.data_type(a.dtype)
    solver = _Solver(dev, count, slots=2)
    ipiv = _lu_factor(solver, lu)
    for p, piv, xp, info in _stacked(count, lu, ipiv, x, solver.info):
        solver("xgetrs", solver.params, trans, m, x.shape[-2], dt, p, m, piv, dt, xp, m, info + 4)
    solver.finish(x)
    solver.check(fname, "the matrix is singular")
    return x


def inv(a):
    if a.size == 0:
        return _empty(_device(a), a.shape, a.dtype)
    # A^T X = I gives X = inv(A^T) column-major, which read row-major is inv(A).
    return _lu_solve(a, _identity(_device(a), a.shape[:-2], a.shape[-1], a.dtype), 0, "inv")


def solve(a, b):
    # x starts as b column-major ((..., K, M) row-major); getrs overwrites it with the solution.
    x = _column_major_copy(b)
    if x.size == 0 or a.size == 0:
        return _swap_last(x)
    return _swap_last(_lu_solve(a, x, 1, "solve"))


def qr(a, mode):
    dev = _device(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    count = math.prod(batch)
    complete = mode == "complete"
    q_cols, r_rows = (m, m) if complete else (k, k)
    if count == 0 or k == 0:
        q = _identity(dev, batch, m, a.dtype) if complete else _empty(dev, batch + (m, k), a.dtype)
        return q, _zeros(dev, batch + (r_rows, n), a.dtype)
    qa = _column_major_copy(a)          # A column-major (m x n, ld m); geqrf factorises it
    tau = _empty(dev, batch + (k,), a.dtype)
    dt = libraries.data_type(a.dtype)
    solver = _Solver(dev, count)
    ws = solver.workspace(solver("xgeqrf_buffer_size", solver.params, m, n, dt, qa.ptr, m, dt,
                                 tau.ptr, dt))
    for p, t, info in _stacked(count, qa, tau, solver.info):
        solver("xgeqrf", solver.params, m, n, dt, p, m, dt, t, dt, *ws, info)
    # R: the upper triangle of the first r_rows rows (rows past n, in complete mode, are zero).
    qa_rows = qa.view(batch + (r_rows, n), _batch_strides(batch, m * n) + (1, m), 0)
    r = _matrix_copy(_empty(dev, batch + (r_rows, n), a.dtype), qa_rows, "upper")
    # Q: orgqr expands the reflectors in place; a complete Q of a tall matrix needs m x m room.
    if q_cols > n:
        qbuf = _empty(dev, batch + (m, m), a.dtype)
        elementwise.assign(qbuf.view(batch + (n, m), qbuf.strides[:-2] + (m, 1), 0), qa)
    else:
        qbuf = qa
    orgqr = _ORGQR[a.dtype]
    lwork = solver(orgqr + "_buffer_size", m, q_cols, k, qbuf.ptr, m, tau.ptr)
    work = _empty(dev, (max(1, lwork),), a.dtype)
    for p, t, info in _stacked(count, qbuf, tau, solver.info):
        solver(orgqr, m, q_cols, k, p, m, t, work.ptr, lwork, info)
    # No info check (and so no synchronisation): geqrf and orgqr cannot fail on valid input.
    solver.finish(qa, tau, qbuf, work)
    # qbuf holds Q column-major with ld m: the view of its first q_cols columns, read row-major.
    q = qbuf.view(batch + (m, q_cols), _batch_strides(batch, qbuf.size // count) + (1, m), 0)
    return q, r


def _batch_strides(batch: tuple, step: int) -> tuple:
    """C-order strides of batch dimensions over matrices `step` elements apart."""
    strides = []
    for n in reversed(batch):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


# The SVD with vectors goes to one-sided Jacobi (gesvdj, PyTorch's default driver too) when the
# smaller side k is in [JACOBI_SVD_MIN_K, JACOBI_SVD_MAX_K]: there it is faster than gesvd's
# bidiagonalisation (benchmarks/probes/svd_probe.py), for the tall-skinny matrices of PCA,
# Ridge and LDA among them. gesvd stays for smaller k, for larger k (not measured there), for
# singular values alone (gesvd without vectors is faster than Jacobi, which costs the same
# with or without them), for sizes past gesvdj's 32-bit arguments, and for a matrix Jacobi does
# not converge on in JACOBI_SVD_MAX_SWEEPS sweeps.
JACOBI_SVD_MIN_K = 17
JACOBI_SVD_MAX_K = 1024
JACOBI_SVD_MAX_SWEEPS = 100
_GESVDJ = {np.dtype(np.float32): "sgesvdj", np.dtype(np.float64): "dgesvdj",
           np.dtype(np.complex64): "cgesvdj", np.dtype(np.complex128): "zgesvdj"}
_INT32_MAX = 2**31 - 1


def _svd(a, full_matrices: bool, compute_uv: bool):
    dev = _device(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    count = math.prod(batch)
    if count == 0 or k == 0:
        s = _empty(dev, batch + (k,), _real(a.dtype))
        if not compute_uv:
            return s
        if full_matrices:
            return _identity(dev, batch, m, a.dtype), s, _identity(dev, batch, n, a.dtype)
        return _empty(dev, batch + (m, k), a.dtype), s, _empty(dev, batch + (k, n), a.dtype)
    side = max(m, n) if full_matrices else k
    if compute_uv and JACOBI_SVD_MIN_K <= k <= JACOBI_SVD_MAX_K and max(m, n) * side <= _INT32_MAX:
        out = _svd_jacobi(a, dev, count, full_matrices)
        if out is not None:
            return out
    return _svd_gesvd(a, dev, count, full_matrices, compute_uv)


def _svd_jacobi(a, dev, count: int, full_matrices: bool):
    """(U, S, Vh) by gesvdj of each matrix; None when one did not converge (after one
    synchronisation)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    work = _column_major_copy(a)        # A column-major (ld m); gesvdj overwrites it
    s = _empty(dev, batch + (k,), _real(a.dtype))
    u_cols, v_cols = (m, n) if full_matrices else (k, k)
    u = _empty(dev, batch + (u_cols, m), a.dtype)     # column-major m x u_cols
    v = _empty(dev, batch + (v_cols, n), a.dtype)     # column-major n x v_cols
    jobz, econ = libraries.cusolver.EigMode.VECTOR, 0 if full_matrices else 1
    params = libraries.cusolver.gesvdj_info(JACOBI_SVD_MAX_SWEEPS)
    routine = _GESVDJ[a.dtype]
    solver = _Solver(dev, count)
    lwork = solver(routine + "_buffer_size", jobz, econ, m, n, work.ptr, m, s.ptr, u.ptr, m,
                   v.ptr, n, params)
    ws = _empty(dev, (max(1, lwork),), a.dtype)
    for p, sp, up, vp, info in _stacked(count, work, s, u, v, solver.info):
        solver(routine, jobz, econ, m, n, p, m, sp, up, m, vp, n, ws.ptr, lwork, info, params)
    solver.finish(work, s, u, v, ws)
    if (libraries.cusolver.read_info(solver.info, "svd") > 0).any():
        return None
    # u read row-major is U^T, v read row-major is V^T, and Vh = conj(V^T).
    if a.dtype.kind == "c":
        v = _matrix_copy(v, v, conjugate=True)
    return _swap_last(u), s, v


def _svd_gesvd(a, dev, count: int, full_matrices: bool, compute_uv: bool):
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    real = _real(a.dtype)
    s = _empty(dev, batch + (k,), real)
    u_cols = m if full_matrices else k
    # gesvd needs rows >= columns. A wide matrix is used as stored: the copy is A^T (n x m)
    # column-major, and A^T = U' S Vh' gives A = Vh'^T S U'^T, where Vh' and U' read row-major are
    # exactly Vh'^T and U'^T. A tall matrix is copied column-major and factorised as is.
    wide = n >= m
    work = elementwise.copy(a) if wide else _column_major_copy(a)
    rows, cols = (n, m) if wide else (m, n)
    if compute_uv:
        left_cols = (rows if full_matrices else cols) if wide else u_cols
        left = _empty(dev, batch + (left_cols, rows), a.dtype)      # column-major rows x left_cols
        right = _empty(dev, batch + (cols, cols), a.dtype)           # column-major cols x cols
        job_left, job_right = (_JOB_ALL if full_matrices else _JOB_SOME), _JOB_ALL
    else:
        left = right = None
        job_left = job_right = _JOB_NONE
    dt, dt_s = libraries.data_type(a.dtype), libraries.data_type(real)
    solver = _Solver(dev, count)
    ws = solver.workspace(solver("xgesvd_buffer_size", solver.params, job_left, job_right, rows,
                                 cols, dt, work.ptr, rows, dt_s, s.ptr, dt, _ptr(left), rows, dt,
                                 _ptr(right), cols, dt))
    for p, sp, lp, rp, info in _stacked(count, work, s, left, right, solver.info):
        solver("xgesvd", solver.params, job_left, job_right, rows, cols, dt, p, rows, dt_s, sp,
               dt, lp, rows, dt, rp, cols, dt, *ws, info)
    solver.finish(work, s, left, right)
    solver.check("svd", "the SVD did not converge")
    if not compute_uv:
        return s
    if wide:
        return right, s, left          # U = Vh'^T (m x m), Vh = U'^T, both C-contiguous already
    return _swap_last(left), s, _swap_last(right)


def svd(a, full_matrices):
    return _svd(a, bool(full_matrices), True)


def svdvals(a):
    return _svd(a, False, False)


def _eigh(a, vectors: bool):
    dev = _device(a)
    n = a.shape[-1]
    batch = a.shape[:-2]
    count = math.prod(batch)
    buf = elementwise.copy(a)           # conj(A) column-major; syevd overwrites it with vectors
    w = _empty(dev, batch + (n,), _real(a.dtype))
    if buf.size:
        mode = libraries.cusolver.EigMode
        jobz = mode.VECTOR if vectors else mode.NOVECTOR
        # The upper triangle of conj(A) column-major is A's lower triangle (NumPy's default).
        uplo = libraries.cublas.FillMode.UPPER
        dt, dt_w = libraries.data_type(a.dtype), libraries.data_type(w.dtype)
        solver = _Solver(dev, count)
        ws = solver.workspace(solver("xsyevd_buffer_size", solver.params, jobz, uplo, n, dt,
                                     buf.ptr, n, dt_w, w.ptr, dt))
        for p, wp, info in _stacked(count, buf, w, solver.info):
            solver("xsyevd", solver.params, jobz, uplo, n, dt, p, n, dt_w, wp, dt, *ws, info)
        solver.finish(buf, w)
        solver.check("eigh", "the eigenvalue iteration did not converge")
    if not vectors:
        return w
    # conj(A) V = V diag(w) gives A conj(V) = conj(V) diag(w): A's eigenvectors are conj(V).
    v = _swap_last(buf)
    if a.dtype.kind == "c":
        v = _matrix_copy(_empty(dev, v.shape, v.dtype), v, conjugate=True)
    return w, v


def eigh(a):
    return _eigh(a, True)


def eigvalsh(a):
    return _eigh(a, False)


def _eig(a, vectors: bool):
    """cuSOLVER's Xgeev (CUDA 12.6 and later). A real matrix stays real: geev then works in real
    arithmetic and returns its complex eigenvalues in exact conjugate pairs, as LAPACK (and so
    NumPy) does, which clients test for (SciPy's zpk2tf keeps real coefficients only for exact
    pairs); its eigenvectors come as LAPACK's real pairs of columns, unpacked by a kernel."""
    dev = _device(a)
    n = a.shape[-1]
    batch = a.shape[:-2]
    count = math.prod(batch)
    cdt = _complex(a.dtype)
    real = a.dtype.kind == "f"
    work = _column_major_copy(a, a.dtype if real else cdt)   # A column-major (a transposing copy)
    w = _empty(dev, batch + (n,), cdt)
    vr = _empty(dev, batch + (n, n), cdt) if vectors else None
    pairs = _empty(dev, batch + (n, n), a.dtype) if vectors and real else vr  # geev writes here
    if work.size:
        mode = libraries.cusolver.EigMode
        job_vr = mode.VECTOR if vectors else mode.NOVECTOR
        dt, dtw = libraries.data_type(work.dtype), libraries.data_type(cdt)
        solver = _Solver(dev, count)
        ws = solver.workspace(solver("xgeev_buffer_size", solver.params, mode.NOVECTOR, job_vr, n,
                                     dt, work.ptr, n, dtw, w.ptr, dt, 0, n, dt, _ptr(pairs), n,
                                     dt))
        for p, wp, vp, info in _stacked(count, work, w, pairs, solver.info):
            solver("xgeev", solver.params, mode.NOVECTOR, job_vr, n, dt, p, n, dtw, wp, dt, 0, n,
                   dt, vp, n, dt, *ws, info)
        solver.finish(work, w, pairs)
        solver.check("eig", "the eigenvalue iteration did not converge")
        if pairs is not vr:
            kernels.launch(kernels.real_eigenvectors_spec, (pairs.dtype,), dev, vr.size,
                           [vr.ptr, pairs.ptr, w.ptr, vr.size, n], keep=(vr, pairs, w))
    return (w, _swap_last(vr)) if vectors else w


def eig(a):
    return _eig(a, True)


def eigvals(a):
    return _eig(a, False)


def pinv(a, rtol):
    dev = _device(a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    count = math.prod(batch)
    real = _real(a.dtype)
    if count == 0 or min(m, n) == 0:
        return _zeros(dev, batch + (n, m), a.dtype)
    u, s, vh = _svd(a, False, True)
    k = s.shape[-1]
    # rtol per matrix: NumPy's default max(M, N) * eps, a Python float, or an array over the batch.
    if isinstance(rtol, CudaArray):
        rtol = elementwise.astype(rtol.view(batch, layout.broadcast_strides(
            rtol.shape, rtol.strides, batch), rtol.offset), real, True)
        rtol_batch = 1
    else:
        value = max(m, n) * float(np.finfo(real).eps) if rtol is None else float(rtol)
        rtol = _empty(dev, (1,), real)
        elementwise.fill(rtol, value)
        rtol_batch = 0
    y = _empty(dev, batch + (k, m), a.dtype)   # diag(1/s, cut off) @ U^H
    kernels.launch(kernels.pinv_scale_spec, (a.dtype,), dev, y.size,
                   [y, u, s, rtol, y.size, k, m, _matrix_batch_stride(u), u.strides[-2],
                    u.strides[-1], rtol_batch], keep=(y, u, s, rtol))
    # pinv = Vh^H @ y = conj(Vh)^T @ y
    if a.dtype.kind == "c":
        vh = _matrix_copy(_empty(dev, vh.shape, vh.dtype), vh, conjugate=True)
    return matmul(_swap_last(vh), y)


def _matrix_batch_stride(x: CudaArray) -> int:
    """The element distance between consecutive matrices of a stack with its batch dimensions
    flattened (the stacks made here are evenly spaced); 0 for a single matrix."""
    batch_ndim = x.ndim - 2
    return x.strides[batch_ndim - 1] if batch_ndim else 0


def diagonal(a, offset):
    return elementwise.copy(_diagonal_view(a, offset))


PRIMITIVES = {
    "matmul": matmul, "cholesky": cholesky, "det": det, "slogdet": slogdet, "inv": inv,
    "solve": solve, "qr": qr, "svd": svd, "svdvals": svdvals, "eigh": eigh, "eigvalsh": eigvalsh,
    "eig": eig, "eigvals": eigvals, "pinv": pinv, "diagonal": diagonal,
}
