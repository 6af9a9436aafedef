"""The mask family's host side: nonzero, x[mask] and x[mask] = value on a flag scan's ranks.

Flags (nonzero, masks): the scan family's row scan with "x != 0" as the input transform (NaN and
complex numbers with either part nonzero count), into int32 ranks (int64 past 2^31 elements);
the total is the last rank (one device-to-host read), then one kernel writes coordinates
(nonzero) or the selected rows (x[mask] with a mask over x's leading dims only). x[mask] with a
mask of x's shape is one fused kernel: the flag scan's second pass moves each selected element of
x (16-byte vector reads) to out[rank - 1] instead of storing ranks, and writes the count to the
status area's second word (the one sync). The output is allocated at x.size elements before the
count is known; the result is a view of its first `count` when at least half is selected, else a
copy of it, so the oversized allocation goes back to the cache at once.
x[mask] = value with a Python scalar, or a value constant along the selection, is one where
kernel over x with the mask broadcast (no ranks, no sync); a value with one row per selected
element needs the ranks (one sync checks its length) and a scatter kernel.
"""

from __future__ import annotations

import numpy as np

from ...engine import compiler, layout, runtime, transfer
from ...engine.array import CudaArray, new_array
from .. import _common, elementwise
from ..elementwise.ops import where_op
from ..scan import flat_view, ranks, row_scan
from .source import coords_spec, compact_spec, masked_scatter_spec
from .tuning import BLOCK

_I64 = np.dtype("int64")


def _count(incl: CudaArray) -> int:
    """The total of an inclusive rank array: one device-to-host read (the one sync)."""
    if incl.size == 0:
        return 0
    last = incl.view((1,), (1,), incl.offset + incl.size - 1)
    return int(transfer.to_host(last)[0])


def nonzero(a):
    """The `nonzero` primitive: one int64 array per dim, row-major order (one sync)."""
    dev = runtime.get_device(a.device_index)
    incl = ranks(a)
    count = _count(incl)
    ndim = a.ndim
    out = new_array(dev.index, (ndim, count), _I64, dev.allocator)
    if count:
        n = a.size
        bits = 32 if n <= layout.INT32_MAX else 64
        rank = incl.dtype
        kern = compiler.cached_kernel(dev.index, "scan", ("coords", rank, ndim, bits),
                                      lambda: coords_spec(rank, ndim, bits))
        grid, block = layout.launch_1d(n, BLOCK)
        kern(dev.stream, grid, block, (out.ptr, incl.ptr, n, count) + tuple(a.shape[1:]),
             (out.buffer, incl.buffer), n * rank.itemsize + count * ndim * 8)
    return tuple(out.view((count,), (1,), out.offset + d * count) for d in range(ndim))


def select_by_mask(x: CudaArray, mask: CudaArray) -> CudaArray:
    """NumPy's x[mask] for a boolean mask over x's leading dims (mask.shape ==
    x.shape[:mask.ndim]): shape (count, *x.shape[mask.ndim:]), one sync for the count."""
    dev = runtime.get_device(x.device_index)
    k = mask.ndim
    inner = x.shape[k:]
    if k == 0:  # a new axis of length 1 or 0
        keep = bool(transfer.to_host(mask)[()])
        if not keep:
            return new_array(dev.index, (0,) + x.shape, x.dtype, dev.allocator)
        res = elementwise.copy(x)
        return res.view((1,) + x.shape, (0,) + res.strides, res.offset)
    if not inner and x.size:
        # one element per mask element: the fused scan + compaction reads the mask and x once
        # and writes the selection once, into an allocation of x.size elements (the count is
        # known only after the kernel). A sparse selection is copied out so that allocation
        # goes back to the cache now instead of living as long as the result; that copy moves
        # at most the selection's bytes again.
        if not x.c_contig:
            x = elementwise.copy(x)
        full = new_array(dev.index, (x.size,), x.dtype, dev.allocator)
        count = row_scan("sum", flat_view(mask), full, flag=True, x=flat_view(x))
        selected = full.view((count,), (1,), full.offset)
        return selected if 2 * count >= x.size else elementwise.copy(selected)
    incl = ranks(mask)
    count = _count(incl)
    out = new_array(dev.index, (count,) + inner, x.dtype, dev.allocator)
    if count == 0 or out.size == 0:
        return out
    if not x.c_contig:
        x = elementwise.copy(x)
    B = out.size // count
    n = x.size
    elem = _common.storage_type(x.dtype)
    rank = incl.dtype
    N = layout.vector_width(x.dtype.itemsize, rank.itemsize)
    vec = B == 1 and N > 1 and x.ptr % (N * x.dtype.itemsize) == 0 and \
        incl.ptr % (N * rank.itemsize) == 0
    if vec:
        kern = compiler.cached_kernel(dev.index, "scan", ("compact", elem, rank, N),
                                      lambda: compact_spec(elem, rank, N))
        grid = -(-n // (BLOCK * N))
        block = BLOCK
    else:
        kern = compiler.cached_kernel(dev.index, "scan", ("compact", elem, rank, 1),
                                      lambda: compact_spec(elem, rank, 1))
        grid, block = layout.launch_1d(n, BLOCK)
    kern(dev.stream, grid, block, (out.ptr, x.ptr, incl.ptr, n, B),
         (out.buffer, x.buffer, incl.buffer),
         n * (x.dtype.itemsize + rank.itemsize) + out.nbytes)
    return out


def _broadcast_view(mask: CudaArray, shape) -> CudaArray:
    """The mask over x's leading dims seen with x's shape (zero strides on the inner dims; a 0-d
    mask broadcasts to everything)."""
    pad = len(shape) - mask.ndim
    return mask.view(shape, tuple(mask.strides) + (0,) * pad, mask.offset)


def _where_assign(x: CudaArray, mask: CudaArray, value):
    """x = where(mask, value, x) in place: no ranks, no sync."""
    m = _broadcast_view(mask, x.shape)
    operands = (m, value, x)
    dtypes = (_common.BOOL, x.dtype, x.dtype)
    elementwise.launch("where", where_op(x.dtype), operands, dtypes, x.shape, out=x)


def assign_by_mask(x: CudaArray, mask: CudaArray, value):
    """x[mask] = value. A Python scalar, or a value that does not vary along the selection
    (leading dim 1 or absent): one elementwise kernel, no sync. A value of `count` rows: ranks of
    the mask, one sync to check the count, a scatter kernel."""
    if x.size == 0:
        return
    k = mask.ndim
    inner = x.shape[k:]
    if mask.size and elementwise.overlaps(x, mask):
        mask = elementwise.copy(mask)
    if isinstance(value, CudaArray):
        if value.dtype != x.dtype:
            value = elementwise.astype(value, x.dtype)
        if value.size and elementwise.overlaps(x, value):
            value = elementwise.copy(value)
        while value.ndim > len(inner) and value.shape[0] == 1:  # leading 1s: one value
            value = value.view(value.shape[1:], value.strides[1:], value.offset)
        if value.ndim <= len(inner):
            pad = x.ndim - value.ndim
            value = value.view(x.shape, (0,) * pad + layout.broadcast_strides(
                value.shape, value.strides, x.shape[pad:]), value.offset)
        else:
            _scatter_rows(x, mask, value, inner)
            return
    _where_assign(x, mask, value)


def _scatter_rows(x: CudaArray, mask: CudaArray, value: CudaArray, inner):
    """x[mask] = value where value has one row per selected element: value.shape[0] must be
    the count (NumPy's error otherwise; the namespace checked the rest of value's shape, but
    the count is known only here)."""
    dev = runtime.get_device(x.device_index)
    if mask.ndim == 0:
        count = 1 if bool(transfer.to_host(mask)[()]) else 0
        incl = None
    else:
        incl = ranks(mask)
        count = _count(incl)
    if value.shape[0] != count:
        raise ValueError(f"boolean index assignment cannot assign {value.shape[0]} input values "
                         f"to the {count} output values where the mask is true")
    vshape = (count,) + tuple(inner)
    if count == 0:
        return
    if incl is None:  # a 0-d True mask: x = value[0]
        elementwise.assign(x, value.view(value.shape[1:], value.strides[1:], value.offset))
        return
    vst = layout.broadcast_strides(value.shape, value.strides, vshape)
    value = value.view(vshape, vst, value.offset)
    B = 1
    for m in inner:
        B *= m
    if B == 0:
        return
    if inner:
        cshape, (cst,) = layout.collapse(inner, value.strides[1:])
        if len(cshape) != 1:
            value = elementwise.copy(value)
            cst = (1,)
        vis = cst[0] if B > 1 else 0
    else:
        vis = 0
    vrs = value.strides[0]
    cshape, (xst,) = layout.collapse(x.shape, x.strides)
    D = _common.padded_dims(len(cshape))
    pad = D - len(cshape)
    cshape = (1,) * pad + tuple(cshape)
    xst = (0,) * pad + tuple(xst)
    n = x.size
    bits = layout.index_bits(n, cshape, xst)
    elem = _common.storage_type(x.dtype)
    rank = incl.dtype
    kern = compiler.cached_kernel(dev.index, "scan", ("scatter", elem, rank, D, bits),
                                  lambda: masked_scatter_spec(elem, rank, D, bits))
    grid, block = layout.launch_1d(n, BLOCK)
    kern(dev.stream, grid, block,
         (x.ptr, value.ptr, incl.ptr, n, B, vrs, vis) + cshape + xst,
         (x.buffer, value.buffer, incl.buffer),
         n * rank.itemsize + 2 * count * B * x.dtype.itemsize)
