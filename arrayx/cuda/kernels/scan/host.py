"""The scan family's host side: which kernel a cumulative sum or product launches, its layout
arguments, and the launch.

Row scan (the scanned axis is the last one of a (M rows, K) view): row_kernel.py. Column scan
(the axis is not last and there are at least COLUMN_MIN columns): source.column_spec. With
fewer columns the axis is made last by one copy of the permuted view and the row scan runs; the
result is then a permuted view of a contiguous array.
"""

from __future__ import annotations

import functools

import numpy as np

from ...engine import compiler, layout, runtime, transfer
from ...engine.array import CudaArray, new_array
from .. import _common, elementwise
from . import tuning
from .row_kernel import (TRACE_PHASES, PhaseTrace, RowScan, has_lookback_warp, prefetch_ahead,
                         row_params, row_spec)
from .source import column_spec
from .status import status_area, status_words

_I32 = np.dtype("int32")
_I64 = np.dtype("int64")


def rank_dtype(n: int) -> np.dtype:
    """The dtype of the ranks of a flag scan of `n` elements."""
    return _I32 if n <= layout.INT32_MAX else _I64


def _kind(a: CudaArray, flat: bool, N: int) -> str:
    return "v" if flat and a.ptr % (N * a.dtype.itemsize) == 0 else "s"


def _rows(a: CudaArray):
    """(row stride, column stride) of `a` seen as (M, K) rows along its last axis, or None when
    its leading dims do not collapse into one stride."""
    K = a.shape[-1]
    lead_shape = a.shape[:-1]
    if not lead_shape or all(m == 1 for m in lead_shape):
        return 0, a.strides[-1]
    cshape, (cst,) = layout.collapse(lead_shape, a.strides[:-1])
    if len(cshape) != 1:
        return None
    return cst[0], a.strides[-1] if K > 1 else 1


@functools.lru_cache(maxsize=1024)
def _aligned_row_vectors(src: np.dtype, D: np.dtype, K: int, knobs: tuple,
                         min_vectors: int) -> int:
    """Vectors a thread of the largest one-row tile (of at least `min_vectors`,
    ALIGNED_MIN_VECTORS, at most the one-row kernel's) that rows of length K fill exactly; 0
    when there is none. Cached: it is on every flat row scan's host path."""
    if not min_vectors:
        return 0
    N, V, T = row_params(src, D, plain_row=True, knobs=knobs)
    return next((v for v in range(V, min_vectors - 1, -1) if K % (T * v * N) == 0), 0)


def aligned_precompiled(src: np.dtype, D: np.dtype):
    """The vectors a thread of the aligned-row kernels worth compiling ahead: the tiles that
    rows of a power-of-two length fill (8 and 4 vectors, within the aligned range)."""
    V = row_params(src, D, plain_row=True)[1]
    least = tuning.ALIGNED_MIN_VECTORS
    return [v for v in (8, 4) if least and least <= v <= V]


@functools.lru_cache(maxsize=1024)
def _row_shape(src: np.dtype, D: np.dtype, moved: int, segmented: bool, knobs: tuple,
               vectors: int | None = None):
    """A row scan's launch shape under the tile settings `knobs` (tile_knobs()), with `vectors`
    a thread when given: (N, V, T) of row_params, the tile's elements, whether it has the
    look-back warp, threads a block, status words a tile, tiles ahead the block prefetches."""
    N, V, T = row_params(src, D, moved, not segmented and not moved, knobs, vectors)
    lookback_warp = has_lookback_warp(segmented, knobs)
    return (N, V, T, T * V * N, lookback_warp, T + 32 if lookback_warp else T, status_words(D),
            prefetch_ahead(T * V * N * (src.itemsize + (moved or D.itemsize)), knobs))


def row_scan(op: str, a: CudaArray, dst: CudaArray, flag: bool = False, x: CudaArray = None,
             trace: CudaArray = None):
    """dst = scan of `a` along its last axis (dst has a's shape, any layout, a's leading dims
    collapsible: the caller copies otherwise). Nothing to do when empty.
    With `x` (a flag scan of a 1-D `a`; x contiguous, of a's size): the fused mask compaction:
    dst (1-D, contiguous, room for x.size elements) receives the selected elements of x and the
    count is returned (the one sync).
    `trace` (one row only; a measurement, benchmarks/probes/scan_phase_probe.py): an int64 array
    of len(TRACE_PHASES) words a tile that receives each tile's phase stamps (PhaseTrace)."""
    M = a.size // a.shape[-1] if a.shape[-1] else 0
    K = a.shape[-1]
    total = M * K
    if total == 0:
        return 0
    src, D = a.dtype, (rank_dtype(total) if x is not None else dst.dtype)
    moved = _common.storage_type(x.dtype) if x is not None else None
    segmented = M > 1
    knobs = tuning.tile_knobs()
    N, V, T, TILE, lookback_warp, threads, words, ahead = _row_shape(
        src, D, x.dtype.itemsize if x is not None else 0, segmented, knobs)
    in_rs, in_cs = _rows(a)
    in_kind = _kind(a, in_cs == 1 and (M == 1 or in_rs == K), N)
    if x is None:
        out_rs, out_cs = _rows(dst)
        out_kind = _kind(dst, out_cs == 1 and (M == 1 or out_rs == K), N)
    else:
        out_rs, out_cs = 1, 1
        out_kind = _kind(x, True, N)
    aligned = 0
    if segmented and in_kind == out_kind == "v":  # flat rows: the one-row kernel if they fill tiles
        aligned = _aligned_row_vectors(src, D, K, knobs, tuning.ALIGNED_MIN_VECTORS)
        if aligned:
            segmented = False
            N, V, T, TILE, lookback_warp, threads, words, ahead = _row_shape(
                src, D, 0, False, knobs, aligned)
    tiles = -(-total // TILE)
    bits = 32 if total + TILE <= layout.INT32_MAX else 64
    dev = runtime.get_device(a.device_index)
    traced = trace is not None
    if traced and (not lookback_warp or trace.size < tiles * len(TRACE_PHASES)):
        raise ValueError(f"a trace is of a one-row scan, {len(TRACE_PHASES)} words a tile "
                         f"({tiles} tiles here)")
    cfg = RowScan(op, src, D, flag, in_kind, out_kind, bits, segmented, moved, lookback_warp,
                  ahead, aligned)
    kern = compiler.cached_kernel(dev.index, "scan", ("row", cfg, (N, V, T), traced),
                                  lambda: row_spec(cfg, PhaseTrace() if traced else None))
    stream = dev.stream
    with stream.scratch_lock:  # launches queued in the order their epochs and tile ids were taken
        status, first, e4 = status_area(stream, words, tiles)
        args = (dst.ptr, a.ptr, status.ptr, first, e4, total, K, in_rs, in_cs, out_rs, out_cs)
        keep = (dst.buffer, a.buffer, status.buffer)
        if x is not None:
            args, keep = args + (x.ptr,), keep + (x.buffer,)
        if traced:
            args, keep = args + (trace.ptr,), keep + (trace.buffer,)
        kern(stream, tiles, threads, args, keep,
             total * (src.itemsize + (D if x is None else x.dtype).itemsize))
        if x is None:
            return None
        # read before a later launch on the stream rewrites it
        return int(transfer.to_host(status.view((1,), (1,), status.offset + 1))[0])


def _split(shape, strides, axis):
    """(P, Q, sp, sq): the dims before and after `axis` collapsed to one stride each, or None."""
    res = []
    for part in (slice(0, axis), slice(axis + 1, len(shape))):
        sh, st = shape[part], strides[part]
        if not sh or all(m == 1 for m in sh):
            res.append((1, 0))
            continue
        csh, (cst,) = layout.collapse(sh, st)
        if len(csh) != 1:
            return None
        res.append((csh[0], cst[0]))
    (P, sp), (Q, sq) = res
    return P, Q, sp, sq


def column_scan(op: str, a: CudaArray, dst: CudaArray, axis: int):
    dev = runtime.get_device(a.device_index)
    ia = _split(a.shape, a.strides, axis)
    if ia is None:
        a = elementwise.copy(a)
        ia = _split(a.shape, a.strides, axis)
    P, Q, isp, isq = ia
    _, _, osp, osq = _split(dst.shape, dst.strides, axis)
    C = P * Q
    K = a.shape[axis]
    bits = 32 if C <= layout.INT32_MAX else 64
    src, D = a.dtype, dst.dtype
    kern = compiler.cached_kernel(dev.index, "scan", ("col", op, src, D, bits),
                                  lambda: column_spec(op, src, D, bits))
    grid, block = layout.launch_1d(C, tuning.BLOCK)
    kern(dev.stream, grid, block,
         (dst.ptr, a.ptr, C, Q, K, isp, isq, a.strides[axis], osp, osq, dst.strides[axis]),
         (dst.buffer, a.buffer), C * K * (src.itemsize + D.itemsize))


def _take_along(a: CudaArray, axis: int, start: int) -> CudaArray:
    """The view a[..., start:, ...] along `axis`."""
    offset = a.offset + (start * a.strides[axis] if a.shape[axis] > start else 0)
    shape = a.shape[:axis] + (a.shape[axis] - start,) + a.shape[axis + 1:]
    return a.view(shape, a.strides, offset)


def _permute(a: CudaArray, order) -> CudaArray:
    return a.view([a.shape[d] for d in order], [a.strides[d] for d in order], a.offset)


def cumulative(name, a, axis, dtype, include_initial):
    """The `cumulative` primitive (see _backend.PRIMITIVES)."""
    op = name[len("cumulative_"):]
    D = np.dtype(dtype)
    dev = runtime.get_device(a.device_index)
    if a.ndim == 1 and a.size and not include_initial and a.strides[0] == 1:  # the common case
        out = new_array(dev.index, a.shape, D, dev.allocator, a.size)
        row_scan(op, a, out)
        return out
    K = a.shape[axis]
    extra = 1 if include_initial else 0
    columns = a.size // K if K else 0
    transpose = axis != a.ndim - 1 and columns < tuning.COLUMN_MIN and \
        any(m != 1 for m in a.shape[axis + 1:])
    order = list(range(a.ndim))
    if transpose:  # scan rows of a copy with the axis last; return a permuted view
        order = [d for d in range(a.ndim) if d != axis] + [axis]
        a = elementwise.copy(_permute(a, order))
        axis = a.ndim - 1
    shape = a.shape[:axis] + (K + extra,) + a.shape[axis + 1:]
    out = new_array(dev.index, shape, D, dev.allocator)
    if extra:
        first = out.view(shape[:axis] + (1,) + shape[axis + 1:], out.strides, out.offset)
        if first.size:
            elementwise.fill(first, 0 if op in ("sum", "nansum") else 1)
    if a.size:
        dst = _take_along(out, axis, extra)
        if all(m == 1 for m in a.shape[axis + 1:]):
            # the axis is last once trailing dims of size 1 are dropped
            keep = [d for d in range(a.ndim) if d <= axis]
            a_rows = a.view([a.shape[d] for d in keep], [a.strides[d] for d in keep], a.offset)
            d_rows = dst.view([dst.shape[d] for d in keep], [dst.strides[d] for d in keep],
                              dst.offset)
            if _rows(a_rows) is None:
                a_rows = elementwise.copy(a_rows)
            row_scan(op, a_rows, d_rows)
        else:
            column_scan(op, a, dst, axis)
    if transpose:
        inverse = [order.index(d) for d in range(len(order))]
        out = _permute(out, inverse)
    return out


def ranks(a: CudaArray) -> CudaArray:
    """Inclusive prefix count of the nonzero elements of `a` in C order: a contiguous 1-D int32
    array (int64 past 2^31 elements); the last entry is the count."""
    dev = runtime.get_device(a.device_index)
    n = a.size
    out = new_array(dev.index, (n,), rank_dtype(n), dev.allocator)
    if n:
        row_scan("sum", flat_view(a), out, flag=True)
    return out


def flat_view(a: CudaArray) -> CudaArray:
    """`a` (not empty) as a 1-D view in C order (a copy when its dims do not collapse)."""
    if a.ndim == 1:
        return a
    cshape, (cst,) = layout.collapse(a.shape, a.strides)
    if len(cshape) != 1:
        a = elementwise.copy(a)
        cst = (1,)
    return a.view((a.size,), cst, a.offset)
