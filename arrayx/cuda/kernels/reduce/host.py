"""The `reduce` and `argreduce` primitives: output geometry, empty reductions, the split
scratch of a stream, and the launch of a layout's plan."""

from __future__ import annotations

import functools
import math

import numpy as np

from ...engine import compiler, copies, runtime
from ...engine.array import new_array
from .. import elementwise
from .._common import BOOL
from . import tuning
from .plans import plan

SPLIT_SCRATCH = "reduce split"  # the scratch's key in runtime.Stream.scratch
_INT64 = np.dtype("int64")
_UINT8 = np.dtype(np.uint8)


class _Scratch:
    """A stream's split-reduction scratch (its Stream.scratch[SPLIT_SCRATCH]): COUNTERS uint32
    group counters (zeroed once, left at 0 by every launch) then SCRATCH_PARTIAL_BYTES for
    partials."""

    __slots__ = ("buffer", "counters", "partials")


def _scratch(stream) -> _Scratch:
    sc = stream.scratch.get(SPLIT_SCRATCH)
    if sc is None:
        counter_bytes = tuning.COUNTERS * 4
        dev = stream.device
        a = new_array(dev.index, (counter_bytes + tuning.SCRATCH_PARTIAL_BYTES,), _UINT8,
                      dev.allocator)
        # queued on this stream ahead of the first launch that takes a ticket
        copies.zero_scratch(stream, a.view((counter_bytes,), (1,), 0, True))
        sc = _Scratch()
        sc.buffer, sc.counters, sc.partials = a.buffer, a.ptr, a.ptr + counter_bytes
        stream.scratch[SPLIT_SCRATCH] = sc
    return sc


def _reduce_into(dev, name, a, reduced_axes, out, order_free, correction=0.0):
    """Reduce `a` over `reduced_axes` with operation `name` into the fresh C-contiguous `out`
    (the kept elements in C order, of the result dtype): look up the layout's plan (which holds
    the operation and, per device, the loaded kernel: nothing is built per call), launch."""
    p = plan(name, a.dtype, out.dtype, a.shape, a.strides, reduced_axes, order_free,
             a.ptr % 16, dev.multiprocessor_count, correction)
    kern = p.kernels.get(dev.index)
    if kern is None:
        kern = p.kernels[dev.index] = compiler.cached_kernel(dev.index, "reduce", p.key, p.build)
    stream = dev.stream
    block = tuning.BLOCK
    if p.parts is None:
        kern(stream, p.grid, block, (a.ptr + p.shift, out.ptr) + p.tail, (a.buffer, out.buffer),
             p.nbytes)
        return
    sc = _scratch(stream)
    if p.partial_bytes <= tuning.SCRATCH_PARTIAL_BYTES:
        partials = sc.partials
        keep = (a.buffer, out.buffer, sc.buffer)
    else:  # partials too many for the scratch (huge column tiles): a temporary of their own
        t = new_array(dev.index, (p.partial_bytes,), _UINT8, dev.allocator)
        partials = t.ptr
        keep = (a.buffer, out.buffer, sc.buffer, t.buffer)
    kern(stream, p.grid, block, (a.ptr + p.shift, out.ptr)
         + tuple([partials + o for o in p.parts]) + (sc.counters,) + p.tail, keep, p.nbytes)


@functools.lru_cache(maxsize=1024)
def out_geometry(shape, axes, keepdims):
    """(result shape, its size, whether the reduced dims hold no element)."""
    out = tuple(1 if i in axes else n for i, n in enumerate(shape)) if keepdims else \
        tuple(n for i, n in enumerate(shape) if i not in axes)
    return out, math.prod(out), math.prod(shape[i] for i in axes) == 0


_EMPTY_VALUE = {"sum": 0, "prod": 1, "all": True, "any": False, "nansum": 0, "nanprod": 1}


def reduce(name, a, axes, keepdims, dtype, correction=0.0):
    """The `reduce` primitive (see _backend.PRIMITIVES), and the moments' reduction
    (`correction`: theirs)."""
    dtype = BOOL if name in ("all", "any") else np.dtype(dtype)
    if type(axes) is not tuple:
        axes = tuple(axes)
    dev = runtime.get_device(a.device_index)
    shape, size, empty = out_geometry(a.shape, axes, keepdims)
    if size == 0:
        return new_array(a.device_index, shape, dtype, dev.allocator)
    out = new_array(dev.index, shape, dtype, dev.allocator, size)
    if empty:  # an empty reduction: its identity
        value = _EMPTY_VALUE.get(name)
        if value is None:  # (nan)mean: 0 / 0, the moments: no mean; (nan)max and (nan)min of
            # nothing are rejected by the namespace
            value = complex(math.nan, math.nan) if dtype.kind == "c" else math.nan
        return elementwise.fill(out, value)
    _reduce_into(dev, name, a, axes, out, True, correction)
    return out


def argreduce(name, a, axis, keepdims):
    """The `argreduce` primitive: argmax/argmin, int64, first index on ties and first NaN;
    nanargmax/nanargmin, -1 for an all-NaN slice."""
    dev = runtime.get_device(a.device_index)
    axes = tuple(range(a.ndim)) if axis is None else (axis,)
    shape, size, _ = out_geometry(a.shape, axes, keepdims)
    if size == 0:
        return new_array(a.device_index, shape, _INT64, dev.allocator)
    out = new_array(dev.index, shape, _INT64, dev.allocator, size)
    _reduce_into(dev, name, a, axes, out, False)
    return out


def moments(name, a, axes, correction, keepdims, dtype):
    """The `moments` primitive: var, std, nanvar, nanstd in one launch. With no reduced axis
    each element is its own slice: a trailing axis of length 1 is reduced instead."""
    if not axes:
        a = a.view(a.shape + (1,), a.strides + (1,), a.offset)
        axes, keepdims = (a.ndim - 1,), False
    return reduce(name, a, tuple(axes), keepdims, dtype, float(correction))
