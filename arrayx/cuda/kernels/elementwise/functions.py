"""The elementwise family's functions (what primitives.py and the other families call): each picks
the operation (ops.py) and hands it to the fast path (fast_path.py) or to launch() (dispatch.py).
Arguments are valid (arrayx/_backend.py): shapes broadcast, arrays share a device."""

from __future__ import annotations

import numpy as np

from ...engine import copies, layout, runtime
from ...engine.array import CudaArray, new_array
from .._common import BOOL
from . import fast_path
from .dispatch import launch, scalar_args
from ...._backend import unary_result_dtype
from .ops import (binary_op, cast_op, compute_dtype, constant_unary, is_identity_unary,
                  unary_op, where_op)

_binary_ops: dict = {}


def _binary_op(name, dt):
    op = _binary_ops.get((name, dt))
    if op is None:
        op = _binary_ops[(name, dt)] = binary_op(name, dt)
    return op


_unary_plans: dict = {}


def unary_plan(name, dtype):
    """How unary function `name` runs on `dtype`: ("copy",) for identities (positive, real of a
    real array...), ("fill", value, result dtype) for constants (isnan of integers...), or
    ("launch", Op)."""
    plan = _unary_plans.get((name, dtype))
    if plan is None:
        out_dt = unary_result_dtype(name, dtype)
        constant = constant_unary(name, dtype)
        if is_identity_unary(name, dtype):
            plan = ("copy",)
        elif constant is not None:
            plan = ("fill", constant, out_dt)
        else:
            plan = ("launch", unary_op(name, dtype, out_dt))
        _unary_plans[(name, dtype)] = plan
    return plan


def as_dtype(x, dt):
    """An array operand cast to the dtype the operation computes in (a scalar as is)."""
    if isinstance(x, CudaArray) and x.dtype != dt:
        return astype(x, dt)
    return x


def binary(name, a, b, dtype, out=None):
    """The `binary` primitive (see _backend.PRIMITIVES)."""
    if out is None and a.__class__ is CudaArray and b.__class__ is CudaArray:
        # the common case: two contiguous arrays of one shape and dtype, in one phase of the
        # vector size
        plan = fast_path.plans.get((name, a.dtype, b.dtype, a.device_index)) \
            if a.dtype == dtype else None
        if plan is not None and a.c_contig and b.c_contig and a.shape == b.shape:
            phase = a.ptr % plan.vector_bytes
            if a.size and phase == b.ptr % plan.vector_bytes:
                res = fast_path.run(plan, a.shape, a.size, (a.ptr, b.ptr), (a.buffer, b.buffer),
                                    phase)
                if res is not None:
                    return res
    elif out is None and (a.__class__ is CudaArray) is not (b.__class__ is CudaArray):
        # an array and a Python scalar (2 * x, x / n, 1 + e): the scalar passed by value
        array, side = (a, "as") if a.__class__ is CudaArray else (b, "sa")
        plan = fast_path.plans.get(((name, side), dtype, dtype, array.device_index)) \
            if array.dtype == dtype else None
        if plan is not None and array.c_contig and array.size and \
                not array.ptr % plan.vector_bytes:
            scalar = scalar_args(b if side == "as" else a, dtype)
            return fast_path.run(plan, array.shape, array.size,
                                 (array.ptr, *scalar) if side == "as" else (*scalar, array.ptr),
                                 (array.buffer,), 0)
    a_arr = isinstance(a, CudaArray)
    b_arr = isinstance(b, CudaArray)
    if a_arr and b_arr:
        shape = a.shape if a.shape == b.shape else layout.broadcast_shape(a.shape, b.shape)
    else:
        shape = a.shape if a_arr else b.shape
    if out is not None:
        if out.shape != shape:
            raise ValueError(f"output shape {out.shape} does not match the broadcast shape {shape}")
        if b_arr and b is not out and overlaps(out, b):
            b = copy(b)  # an in-place op reading another view of its own memory
    dtype = compute_dtype(name, dtype)
    array = a if a_arr else b
    scalar_plan = out is None and a_arr is not b_arr and array.dtype == dtype and array.c_contig
    a, b = as_dtype(a, dtype), as_dtype(b, dtype)
    op = _binary_op(name, dtype)
    if out is None and a_arr and b_arr and a.dtype == b.dtype == dtype and a.c_contig \
            and b.c_contig and a.shape == b.shape:
        fast_path.make(a.device_index, name, (dtype, dtype), op)
    elif scalar_plan:
        fast_path.make(array.device_index, name, (dtype, dtype), op,
                       (name, "as" if a_arr else "sa"), ("a", "s") if a_arr else ("s", "a"))
    return launch(name, op, (a, b), (dtype, dtype), shape, out)


def unary(name, op, a, key=None):
    """launch() of the one-input `op` over `a` (computing on its dtype) into a new array, with
    binary()'s fast path (`key`: what, with a's dtype, determines op; default `name`)."""
    res = fast_path.run_unary(key or name, a)
    if res is not None:
        return res
    if a.c_contig:
        fast_path.make(a.device_index, name, (a.dtype,), op, key)
    return launch(name, op, (a,), (a.dtype,), a.shape)


def where(condition, a, b, dtype):
    """The `where` primitive: x1 if x0 else x2 broadcast, computing in `dtype`, with binary()'s
    fast path for three contiguous arrays of one shape at vector boundaries."""
    if a.__class__ is CudaArray and b.__class__ is CudaArray and a.dtype == b.dtype == dtype \
            and condition.c_contig and a.c_contig and b.c_contig \
            and condition.shape == a.shape == b.shape and a.size:
        plan = fast_path.plans.get(("where", BOOL, dtype, dtype, a.device_index)) or \
            fast_path.make(a.device_index, "where", (BOOL, dtype, dtype), where_op(dtype))
        cond_bytes = plan.vector_bytes  # the first input's: the bool condition's
        vbytes = cond_bytes * dtype.itemsize
        if not (condition.ptr % cond_bytes or a.ptr % vbytes or b.ptr % vbytes):
            return fast_path.run(plan, a.shape, a.size, (condition.ptr, a.ptr, b.ptr),
                                 (condition.buffer, a.buffer, b.buffer), 0)
    shape = layout.broadcast_shape(condition.shape,
                                   *(x.shape for x in (a, b) if isinstance(x, CudaArray)))
    a, b = as_dtype(a, dtype), as_dtype(b, dtype)
    return launch("where", where_op(dtype), (condition, a, b), (BOOL, dtype, dtype), shape)


def copy(a: CudaArray) -> CudaArray:
    """A new C-contiguous copy (a device-to-device memcpy when `a` is contiguous)."""
    if a.c_contig:
        dev = runtime.get_device(a.device_index)
        out = new_array(a.device_index, a.shape, a.dtype, dev.allocator)
        if a.size:
            copies.memcpy_d2d(dev, out, a)
        return out
    return launch("cast", cast_op(a.dtype, a.dtype), (a,), (a.dtype,), a.shape)


def astype(a: CudaArray, dtype, copy_: bool = True) -> CudaArray:
    dtype = np.dtype(dtype)
    if dtype == a.dtype:
        return copy(a) if copy_ else a
    res = fast_path.run_unary(dtype, a)  # a cast's plan is keyed by its result dtype
    if res is not None:
        return res
    return unary("cast", cast_op(a.dtype, dtype), a, dtype)


def fill(out: CudaArray, value) -> CudaArray:
    """Write a Python scalar into every element of `out` (any layout)."""
    return launch("fill", cast_op(out.dtype, out.dtype), (value,), (out.dtype,), out.shape, out)


def assign(dst: CudaArray, src) -> CudaArray:
    """dst[...] = src (a CudaArray broadcastable to dst.shape, cast to dst.dtype, or a scalar)."""
    if not isinstance(src, CudaArray):
        return fill(dst, src)
    extra = src.ndim - dst.ndim
    if extra > 0 and all(n == 1 for n in src.shape[:extra]):  # NumPy drops leading 1s
        src = src.view(src.shape[extra:], src.strides[extra:], src.offset, src.c_contig)
    if len(src.shape) > len(dst.shape) or any(
            n != m and n != 1 for n, m in zip(src.shape[::-1], dst.shape[::-1])):
        raise ValueError(f"could not broadcast a value of shape {src.shape} into a selection of "
                         f"shape {dst.shape}")
    if dst.size and src.size and overlaps(dst, src) and not (dst.buffer is src.buffer and
                                                             dst.offset == src.offset and
                                                             dst.strides == src.strides):
        src = copy(src)
    return launch("cast", cast_op(src.dtype, dst.dtype), (src,), (src.dtype,), dst.shape, dst)


def overlaps(a: CudaArray, b: CudaArray) -> bool:
    """Whether the memory spans of `a` and `b` intersect (then an output may not be written
    while the other is read)."""
    if a.buffer is not b.buffer and a.buffer.ptr != b.buffer.ptr:
        return False

    def span(x):
        lo = x.offset + sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
        hi = x.offset + sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
        isz = x.dtype.itemsize
        return x.buffer.ptr + lo * isz, x.buffer.ptr + (hi + 1) * isz
    a0, a1 = span(a)
    b0, b1 = span(b)
    return a0 < b1 and b0 < a1
