"""Layout analysis: how to reduce one layout in one launch, cached as a `Plan`.

The input's kept dims (one output element each, written C-contiguously) and reduced dims are
collapsed. Reductions other than argmax/argmin are order-free, so first negative reduced
strides are flipped and reduced dims sorted by stride (``x[::-1].sum()`` is a contiguous row);
arg reductions keep C order, so an element's index is its flat index in the reduced axes. Then:

* reduced elements of every output one contiguous run: the contig kernel (source.group_spec),
  T = 1, 32 or 256 lanes a row by its length;
* one strided reduced dim over at most two kept dims, the last contiguous: the column kernel;
* anything else: the general kernel (kept and reduced dims through strided offsets, padded to
  `_common.DIM_BUCKETS`, or compiled for the exact count past the last bucket).

Few long rows or few column tiles are split over S blocks each (`split_count`), so that the
launch fills whole waves of blocks.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...engine.layout import c_strides, collapse, vector_width
from .._common import padded_dims
from . import tuning
from .reduction import Reduction
from .source import column_spec, column_width, group_spec


class Plan:
    """How to reduce one layout, in one launch: the input pointer's shift (bytes; flipped
    negative strides), the kernel (`key`, `build`) and its launch (grid, `tail`: the arguments
    after the pointers, `nbytes` read), and for a split kernel the byte offsets of its partial
    arrays in the scratch area (`parts`, None when not split) and their total `partial_bytes`.
    `kernels`: the loaded kernel per device, resolved on the first call."""

    __slots__ = ("shift", "key", "build", "grid", "tail", "nbytes", "parts", "partial_bytes",
                 "kernels")

    def __init__(self):
        self.shift, self.parts, self.partial_bytes, self.kernels = 0, None, 0, {}


def _pad(shape, strides, D):
    pad = D - len(shape)
    return (1,) * pad + tuple(shape), (0,) * pad + tuple(strides)


def _lay_out_partials(plan, red, n):
    """A split kernel's partials: `n` of each accumulator part, each array 256-byte aligned."""
    offsets, off = [], 0
    for t in red.parts:
        offsets.append(off)
        off += -(-n * np.dtype(t).itemsize // 256) * 256
    plan.parts, plan.partial_bytes = tuple(offsets), off


def split_count(units, most, sms):
    """Blocks S (1 <= S <= most) to split each of `units` equal work units over, so that the
    units * S equal blocks fill whole waves of BLOCKS_PER_SM blocks on every SM: the least S
    making at least one wave whose waves are SPLIT_FILL full on average, else the fullest S up
    to 8 times the least (a last wave a third full costs as much as a full one). Units beyond
    the scratch counters (never, below COUNTERS // BLOCKS_PER_SM SMs) are not split."""
    wave = tuning.BLOCKS_PER_SM * sms
    if units >= wave or units > tuning.COUNTERS:
        return 1
    least = -(-wave // units)
    if least >= most:
        return max(1, most)
    best, best_fill = least, 0.0
    for S in range(least, min(most, 8 * least) + 1):
        blocks = units * S
        fill = blocks / (-(-blocks // wave) * wave)
        if fill >= tuning.SPLIT_FILL:
            return S
        if fill > best_fill:
            best, best_fill = S, fill
    return best


def _plan_rows(plan, sms, red, lay, ksh, kst, rsh, rst, K, scalar, vec, align):
    """Contig or general reduction of M rows of K into M outputs: groups of T lanes a row, and
    rows split over S blocks each when they are few and long (`scalar`: the kernel's float64
    argument, `red.scalar`)."""
    block = tuning.BLOCK
    M = math.prod(ksh)
    N = vector_width(red.in_dt.itemsize) if vec else 1
    wave = tuning.BLOCKS_PER_SM * sms
    unroll = tuning.contig_unroll(red)
    T = 1 if K < 32 else (32 if K < tuning.ROW_BLOCK_MIN_K or (lay == "general" and M >= 4 * wave)
                          else block)
    S = split_count(M, K // (block * N * unroll * 2), sms) if T == block else 1
    Dk = padded_dims(len(ksh))
    Dr = padded_dims(len(rsh)) if lay == "general" else 0
    ksh, kst = _pad(ksh, kst, Dk)
    bits = 32 if M < 2**31 and K < 2**31 else 64
    split = S > 1
    plan.key = ("group", red.key(), lay, T, N, vec, Dk, Dr, split, bits, unroll,
                tuning.LOAD_HINT, tuning.launch_bounds(red))
    plan.build = lambda: group_spec(red, lay, T, N, vec, Dk, Dr, split, bits)
    tail = [align, K, S, scalar, M] + list(ksh) + list(kst)
    if lay == "general":
        rsh, rst = _pad(rsh, rst, Dr)
        tail += list(rsh) + list(rst)
    plan.tail = tuple(tail)
    plan.grid = -(-M // (block // T)) * S
    plan.nbytes = M * K * red.in_dt.itemsize
    if split:
        _lay_out_partials(plan, red, M * S)


def _plan_column(plan, sms, red, K, sK, M, B, sB, scalar, vec):
    """Column reduction of B batches (stride sB) of K rows (stride sK) of M contiguous columns:
    tiles of 32 lanes * N columns, split over S blocks each when the tiles are few."""
    N = column_width(red, vec)
    tiles = -(-M // (32 * N))
    S = split_count(B * tiles, K // (tuning.WARPS * tuning.COLUMN_UNROLL * 2), sms)
    split = S > 1
    plan.key = ("column", red.key(), N, vec, split, tuning.COLUMN_UNROLL,
                tuning.launch_bounds(red, split))
    plan.build = lambda: column_spec(red, N, vec, split)
    plan.tail = (K, sK, M, B, sB, S, tiles, scalar)
    plan.grid = B * tiles * S
    plan.nbytes = K * M * B * red.in_dt.itemsize
    if split:
        _lay_out_partials(plan, red, S * B * M)


@functools.lru_cache(maxsize=4096)
def plan(name, in_dt, out_dt, shape, strides, reduced_axes, order_free, align, sms,
         correction=0.0) -> Plan:
    """The plan reducing an array of this layout (`align`: its pointer mod 16) over
    `reduced_axes` into a contiguous 1-D output (the kept elements in C order) on a GPU of
    `sms` SMs (`correction`: the moments' degrees-of-freedom correction)."""
    red = Reduction(name, in_dt, out_dt)
    isz = in_dt.itemsize
    kept = [i for i in range(len(shape)) if i not in reduced_axes]
    kshape = [shape[i] for i in kept]
    ksh, (kst, _) = collapse(kshape, [strides[i] for i in kept], c_strides(kshape))
    rdims = [(shape[i], strides[i]) for i in reduced_axes if shape[i] != 1]
    count = math.prod(shape[i] for i in reduced_axes)
    result = Plan()
    shift = 0
    if order_free:  # flip negative reduced strides, outermost (largest stride) first
        flipped = []
        for n, st in rdims:
            if st < 0:
                shift += (n - 1) * st
                st = -st
            flipped.append((n, st))
        rdims = sorted(flipped, key=lambda d: -d[1])
    rsh, (rst,) = collapse([n for n, _ in rdims], [st for _, st in rdims])
    scalar = float(correction) if red.moments else float(count)
    result.shift = shift * isz
    ptr = (align + result.shift) % 16
    # a 16-byte vector path needs element-aligned pointers (16-byte ones for 16-byte elements)
    vec_ok = ptr % isz == 0 and (isz < 16 or ptr == 0)
    if len(rsh) == 1 and rst[0] == 1:
        _plan_rows(result, sms, red, "contig", ksh, kst, (), (), count, scalar, vec_ok, ptr)
    elif len(rsh) == 1 and kst[-1] == 1 and ksh[-1] > 1 and len(ksh) <= 2:
        M = ksh[-1]
        B, sB = (ksh[0], kst[0]) if len(ksh) == 2 else (1, 0)
        sK = rst[0]
        vec = ptr == 0 and (sK * isz) % 16 == 0 and (sB * isz) % 16 == 0
        _plan_column(result, sms, red, count, sK, M, B, sB, scalar, vec)
    else:
        _plan_rows(result, sms, red, "general", ksh, kst, rsh, rst, count, scalar, False, ptr)
    return result
