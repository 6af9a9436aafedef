"""The `row_function` primitive on CUDA: the rows' layout, the operands' alignment, the launch
(and a split logsumexp's partials and counters).

Rows are read in place when their last axis is contiguous and the other axes collapse to one
stride (offset and sliced views, every C-contiguous array); any other layout (a permuted view:
an axis that is not the last) is first copied to C order by the elementwise family's copy.
"""

from __future__ import annotations

import math

import numpy as np

from ...engine import compiler, copies, runtime
from ...engine.array import new_array
from ...engine.layout import collapse
from .. import elementwise
from . import tuning
from .plans import layout, split_count
from .source import kernel_spec

VECTOR_BYTES = 16
SPLIT_SCRATCH = "rows split"  # the split counters' key in runtime.Stream.scratch
_UINT32 = np.dtype("uint32")


def _rows(a):
    """(a, row stride): `a` itself when its rows can be read in place, else a C-order copy."""
    K = a.shape[-1]
    batch, (strides,) = collapse(a.shape[:-1], a.strides[:-1])
    if len(batch) == 1 and (K == 1 or a.strides[-1] == 1):
        return a, strides[0]
    return elementwise.copy(a), K


def _contiguous(p):
    return p if p is None or p.c_contig else elementwise.copy(p)


def prepare(name, a, weight, bias):
    """(kernel, a, row stride, [weight and bias given]) of rows `a` (M, K >= 1 elements): `a`
    read in place or copied, weight and bias contiguous, 16-byte vectors when every row and
    operand is 16-byte aligned and K a multiple of the vector (the output always is: the
    allocator's blocks of more than 8 bytes are driver allocations, 256-byte aligned)."""
    a, row_stride = _rows(a)
    operands = [p for p in (_contiguous(weight), _contiguous(bias)) if p is not None]
    K, isz = a.shape[-1], a.dtype.itemsize
    vec = (K % (VECTOR_BYTES // isz) == 0 and (row_stride * isz) % VECTOR_BYTES == 0
           and all(p.ptr % VECTOR_BYTES == 0 for p in [a] + operands))
    return layout(name, a.dtype, K, vec, weight is not None, bias is not None), a, row_stride, \
        operands


def row_function(name, a, weight, bias, eps):
    """The `row_function` primitive (see _backend.PRIMITIVES)."""
    dev = runtime.get_device(a.device_index)
    K = a.shape[-1]
    M = math.prod(a.shape[:-1])
    out = new_array(dev.index, a.shape[:-1] if name == "logsumexp" else a.shape, a.dtype,
                    dev.allocator)
    if M == 0 or K == 0:  # nothing to read: empty rows (logsumexp: -inf) or no rows
        return elementwise.fill(out, -math.inf) if name == "logsumexp" and out.size else out
    k, a, row_stride, operands = prepare(name, a, weight, bias)
    nbytes = M * K * a.dtype.itemsize * (1 if name == "logsumexp" else 2)
    S = split_count(k, M, K // k.V, dev.multiprocessor_count)
    stream = dev.stream
    if S > 1:
        k = k._replace(split=True)
        kern = compiler.cached_kernel(dev.index, "rows", k, lambda: kernel_spec(k))
        counters = _split_counters(stream)
        partials = new_array(dev.index, (2 * M * S,), a.dtype, dev.allocator)
        kern(stream, M * S, k.block,
             (a.ptr, out.ptr, partials.ptr, partials.ptr + M * S * a.dtype.itemsize,
              counters.ptr, M, K, row_stride, 0.0, S),
             (a.buffer, out.buffer, partials.buffer, counters.buffer), nbytes)
        return out
    kern = compiler.cached_kernel(dev.index, "rows", k, lambda: kernel_spec(k))
    kern(stream, -(-M // (k.block // k.T)), k.block,
         (a.ptr, out.ptr) + tuple(p.ptr for p in operands) + (M, K, row_stride, float(eps)),
         (a.buffer, out.buffer) + tuple(p.buffer for p in operands), nbytes)
    return out


def _split_counters(stream):
    """The stream's SPLIT_COUNTERS uint32 ticket counters of split launches (its
    Stream.scratch[SPLIT_SCRATCH]): zeroed once, queued ahead of the first launch using them;
    every launch leaves them at 0."""
    counters = stream.scratch.get(SPLIT_SCRATCH)
    if counters is None:
        dev = stream.device
        counters = new_array(dev.index, (tuning.SPLIT_COUNTERS,), _UINT32, dev.allocator)
        copies.zero_scratch(stream, counters)
        stream.scratch[SPLIT_SCRATCH] = counters
    return counters
