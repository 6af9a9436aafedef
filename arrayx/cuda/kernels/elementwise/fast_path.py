"""The fast path of unary(), binary(), where() and astype(): contiguous inputs of one shape at one
phase of the vector size skip launch()'s layout analysis (most of a small call's host time), with
everything but the pointers looked up once per (operation, input dtypes, device) as a Plan; and of
``x[i, j] = v`` (set_element)."""

from __future__ import annotations

from ...engine import layout, runtime
from ...engine.array import CudaArray, new_array
from . import tuning
from .dispatch import new_output, scalar_args, vec_kernel
from .ops import cast_op

_tls = runtime._tls


class Plan:
    """What a vec launch over contiguous inputs needs besides their pointers."""

    __slots__ = ("kernel", "vector_bytes", "out_dtype", "block", "per_block", "device",
                 "allocator", "bytes_per_element", "width")

    def __init__(self, kernel, vector_bytes, out_dtype, block, per_block, device, allocator,
                 bytes_per_element, width):
        self.kernel = kernel
        self.vector_bytes = vector_bytes    # bytes of one vector of the first input
        self.out_dtype = out_dtype
        self.block = block                  # threads a block
        self.per_block = per_block          # elements a block moves on the vector path
        self.device = device
        self.allocator = allocator
        self.bytes_per_element = bytes_per_element  # read and written, for the encoder's batching
        self.width = width                  # elements a vector


# (name or key, input dtypes..., device index) -> Plan
plans: dict = {}


def make(dev_index, name, dtypes, op, key=None, kinds=None) -> Plan:
    """The Plan of `op` over contiguous arrays of `dtypes` (`kinds`: 'a' an array, 's' a scalar,
    default all arrays), registered under `key` (default `name`) with the operand dtypes and the
    device."""
    dev = runtime.get_device(dev_index)
    N = layout.vector_width(op.out.itemsize, *(d.itemsize for d in dtypes))
    kinds = kinds or ("a",) * len(dtypes)
    kern = vec_kernel(dev_index, name, op, kinds, dtypes, N)
    dev.default_stream  # created now, so run() can read dev._default_stream
    arrays = [d for k, d in zip(kinds, dtypes) if k == "a"]
    plan = Plan(kern, N * arrays[0].itemsize, op.out, tuning.BLOCK, tuning.BLOCK * N * tuning.VEC_UNROLL, dev,
                dev.allocator, sum(d.itemsize for d in arrays) + op.out.itemsize, N)
    plans[(key or name, *dtypes, dev_index)] = plan
    return plan


def run(plan: Plan, shape, n, ptrs, bufs, phase):
    """The vec kernel of `plan` over n > 0 elements of contiguous inputs at `ptrs` (with a
    scalar operand's arguments in its place, `phase` 0), all `phase` bytes past a vector
    boundary (inputs of one dtype when `phase` is not 0), into a new array;
    None when the phase is not a whole number of elements (launch() takes those). An offset view
    such as x[1:] runs its aligned body, then its head through the same kernel's scalar path."""
    dev = plan.device
    if _tls.current is not dev:
        dev.activate()
    stream = dev.local.stream or dev._default_stream
    if not phase:
        res = new_array(dev.index, shape, plan.out_dtype, plan.allocator, n)
        plan.kernel(stream, -(-n // plan.per_block), plan.block, (res.ptr, *ptrs, n),
                    (res.buffer, *bufs), n * plan.bytes_per_element)
        return res
    N = plan.width
    isz = plan.vector_bytes // N
    if phase % isz:
        return None
    out_dt = plan.out_dtype
    head = min((plan.vector_bytes - phase) // isz, n)
    res = new_output(dev, dev.index, shape, out_dt, head, N)
    keep = (res.buffer, *bufs)
    body = n - head
    nb = plan.bytes_per_element
    plan.kernel(stream, -(-body // plan.per_block), plan.block,
                (res.ptr + head * out_dt.itemsize, *[p + head * isz for p in ptrs], body), keep,
                body * nb)
    plan.kernel(stream, 1, plan.block, (res.ptr, *ptrs, head), keep, head * nb)
    return res


def run_unary(key, a):
    """run() of the one-input plan registered under `key` (with a's dtype) over `a`, or None when
    there is none or `a` does not fit it."""
    plan = plans.get((key, a.dtype, a.device_index))
    if plan is not None and a.c_contig and a.size:
        return run(plan, a.shape, a.size, (a.ptr,), (a.buffer,), a.ptr % plan.vector_bytes)
    return None


_element_kernels: dict = {}  # (source dtype or None for a scalar, dtype, device index) -> kernel


def set_element(a, offset: int, value) -> None:
    """Element `offset` (in elements, from a.ptr) of `a` = `value`, a Python scalar or a 0-d
    CudaArray of any dtype (cast to a's): x[i, j] = v with every index an int, which
    scikit-learn's diagonal fill runs once per row with a 0-d array. The kernel is the vec fill
    or cast launch() picks for one element, launched on one warp without its layout analysis
    (one element: only its scalar path runs, so neither pointer need be aligned)."""
    dt = a.dtype
    source = value.dtype if value.__class__ is CudaArray else None
    kern = _element_kernels.get((source, dt, a.device_index))
    if kern is None:
        if source is None:
            kern = vec_kernel(a.device_index, "fill", cast_op(dt, dt), ("s",), (dt,),
                              layout.vector_width(dt.itemsize))
        else:
            kern = vec_kernel(a.device_index, "cast", cast_op(source, dt), ("a",), (source,),
                              layout.vector_width(dt.itemsize, source.itemsize))
        _element_kernels[(source, dt, a.device_index)] = kern
    dev = runtime.get_device(a.device_index)
    if _tls.current is not dev:
        dev.activate()
    stream = dev.local.stream or dev.default_stream
    if source is None:
        kern(stream, 1, 32, [a.ptr + offset * dt.itemsize, *scalar_args(value, dt), 1],
             (a.buffer,), dt.itemsize)
    else:
        kern(stream, 1, 32, [a.ptr + offset * dt.itemsize, value.ptr, 1],
             (a.buffer, value.buffer), dt.itemsize + source.itemsize)
