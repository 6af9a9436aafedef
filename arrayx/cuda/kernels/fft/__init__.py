"""The FFT primitive on CUDA: cuFFT, one 1-D transform along one axis (arrayx/_backend.py).

The axis is moved last (a view). Rows that are already contiguous are transformed where they lie
(cropping to n only changes the distance between rows); anything else is copied once into
contiguous rows, padded with zeros when n is longer. The output rows are contiguous and come back
as a view with the axis in its place. cuFFT does not normalise: the factor that `norm` asks for
is one in-place multiply.

C2R (irfft) overwrites its input, so it always works on a copy. NumPy's irfft ignores the
imaginary parts of the zero-frequency term and, for even n, of the Nyquist term; cuFFT assumes
them zero, so the copy zeroes them and results match NumPy for any input, Hermitian or not.

Plans are cached per device (libraries/cufft.py, least recently used out); their work area is a
temporary from arrayx's allocator.
"""

from __future__ import annotations

import math

import numpy as np

from .. import elementwise
from ... import libraries
from ...libraries import cufft
from ...engine import runtime
from ...engine.array import CudaArray, new_array

_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
# (kind, input dtype) -> (cufftType, exec routine, direction of a C2C transform)
_TRANSFORMS = {
    ("fft", _C64): (cufft.Type.C2C, cufft.exec_c2c, cufft.FORWARD),
    ("fft", _C128): (cufft.Type.Z2Z, cufft.exec_z2z, cufft.FORWARD),
    ("ifft", _C64): (cufft.Type.C2C, cufft.exec_c2c, cufft.INVERSE),
    ("ifft", _C128): (cufft.Type.Z2Z, cufft.exec_z2z, cufft.INVERSE),
    ("rfft", _F32): (cufft.Type.R2C, cufft.exec_r2c, None),
    ("rfft", _F64): (cufft.Type.D2Z, cufft.exec_d2z, None),
    ("irfft", _C64): (cufft.Type.C2R, cufft.exec_c2r, None),
    ("irfft", _C128): (cufft.Type.Z2D, cufft.exec_z2d, None),
}


def _permuted(a: CudaArray, axes) -> CudaArray:
    return a.view([a.shape[i] for i in axes], [a.strides[i] for i in axes], a.offset)


def _prefix(x: CudaArray, length: int) -> CudaArray:
    """The view of the first `length` elements of every row (last axis)."""
    return x.view(x.shape[:-1] + (length,), x.strides, x.offset)


def _scale(kind: str, norm: str, n: int) -> float:
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    inverse = kind in ("ifft", "irfft")
    return 1.0 / n if (norm == "backward") == inverse else 1.0


def _input_rows(x: CudaArray, length: int, fresh: bool):
    """(rows, distance): `x`'s rows (last axis) cropped or zero-padded to `length`, as rows
    `distance` elements apart with unit stride; a new array when `fresh` or when the layout asks."""
    m = x.shape[-1]
    if x.c_contig and m >= length and not fresh:
        return x, m
    if m >= length:
        return elementwise.copy(_prefix(x, length)), length
    rows = new_array(x.device_index, x.shape[:-1] + (length,), x.dtype,
                     runtime.get_device(x.device_index).allocator)
    elementwise.fill(rows, 0)
    elementwise.assign(_prefix(rows, m), x)
    return rows, length


def _component(rows: CudaArray, column: int, imaginary: bool) -> CudaArray:
    """A real view of the real or imaginary parts of one column of C-contiguous complex rows."""
    real = _F32 if rows.dtype == _C64 else _F64
    return CudaArray(rows.buffer, rows.shape[:-1], real, tuple(2 * s for s in rows.strides[:-1]),
                     2 * (rows.offset + column) + int(imaginary))


def fft(kind, a, n, axis, norm):
    fft_type, execute, direction = _TRANSFORMS[kind, a.dtype]
    dev = runtime.get_device(a.device_index)
    in_length = n // 2 + 1 if kind == "irfft" else n
    out_length = n // 2 + 1 if kind == "rfft" else n
    if kind == "irfft":
        out_dtype = _F32 if a.dtype == _C64 else _F64
    else:
        out_dtype = _C64 if a.dtype in (_F32, _C64) else _C128
    axes = [d for d in range(a.ndim) if d != axis] + [axis]
    rows, distance = _input_rows(_permuted(a, axes), in_length, fresh=kind == "irfft")
    out = new_array(dev.index, rows.shape[:-1] + (out_length,), out_dtype, dev.allocator)
    batch = out.size // out_length
    if batch and n == 1:
        # cuFFT rejects length-1 transforms; each output is its row's first element (scale 1).
        first = _component(rows, 0, False) if kind == "irfft" else _prefix(rows, 1)
        elementwise.assign(out.view(first.shape, out.strides[:first.ndim], out.offset), first)
    elif batch:
        if kind == "irfft":
            elementwise.fill(_component(rows, 0, True), 0)
            if n % 2 == 0:
                elementwise.fill(_component(rows, n // 2, True), 0)
        # After the kernels above are submitted, and before the plan is made: cuFFT creates the
        # plan in the current context, so this device's must be current.
        stream = libraries.begin(dev)
        plan = cufft.plan(dev, fft_type, n, distance, out_length, batch)
        work = libraries.device_workspace(dev, plan.work_bytes)
        cufft.set_stream(plan.handle, stream.ptr)
        if work is not None:
            cufft.set_work_area(plan.handle, work.ptr)
        extra = () if direction is None else (direction,)
        execute(plan.handle, rows.ptr, out.ptr, *extra)
        libraries.end(stream, plan, work, rows, out)
        scale = _scale(kind, norm, n)
        if scale != 1.0:
            elementwise.binary("multiply", out, scale, out_dtype, out)
    return _permuted(out, [axes.index(d) for d in range(a.ndim)])


PRIMITIVES = {"fft": fft}
