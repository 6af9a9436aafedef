"""Which kernel serves rows of a length: `layout` (a `RowKernel`), cached per (function, dtype,
row length, vector access, weight, bias) while the knobs stay as they are (a sweep that sets
them calls `layout.cache_clear()`); the row count only sets the grid.

* Rows that fit in registers (at most REGISTER_ROW_BYTES; logsumexp never needs them: it writes
  no row back) are read once and written once: up to GROUP_VECTORS vectors a lane over a group
  of T <= 32 lanes (T the least power of two giving each lane GROUP_MIN_VECTORS vectors or
  fewer, several rows a block), else a block of T lanes (64 to MAX_BLOCK, about BLOCK_VECTORS
  vectors a lane).
* Longer rows are streamed by a block of STREAM_BLOCK threads, read twice.
* logsumexp streams every row: a group of T <= 32 lanes a row up to STREAM_GROUP_VECTORS
  vectors, else a block of up to STREAM_BLOCK lanes.

logsumexp of few long rows splits each over S blocks (`split_count`), so the launch fills the GPU.

V is 16 bytes of the dtype when the host found every row and operand 16-byte aligned and the
row length a multiple of V (`vec`), else 1 (scalar loads, still coalesced across the lanes).
"""

from __future__ import annotations

import functools

from . import tuning
from .source import MERGEABLE, RowKernel


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _kernel(func, dtype, mode, T, C, V, block, weight, bias) -> RowKernel:
    """The RowKernel of this layout with the fields its knobs set: the hinted loads (16-byte
    vectors only), the merged statistics (softmax and log_softmax rows held in a block's
    registers: a group's reductions are shuffles, with no barrier to save), the blocks an SM the
    registers must allow (for kernels holding at most OCCUPANCY_ROW_BYTES of row, and early
    weight and bias, a thread) and the early weight and bias."""
    early = tuning.EARLY_AFFINE and mode == "regs" and (weight or bias)
    held = C * V * dtype.itemsize * (1 + (weight + bias if early else 0))
    bounded = mode == "regs" and held <= tuning.OCCUPANCY_ROW_BYTES
    return RowKernel(func, dtype, mode, T, C, V, block, weight, bias,
                     hint=tuning.LOAD_HINT if V > 1 else "",
                     merged=(tuning.MERGED_STATISTICS and mode == "regs" and T > 32
                             and func in MERGEABLE),
                     occupancy=max(1, tuning.OCCUPANCY_THREADS // block) if bounded else 1,
                     early=early)


def _group(func, dtype, mode, nv, V, weight, bias):
    """Several rows a block: T <= 32 lanes a row, the least power of two with
    GROUP_MIN_VECTORS vectors a lane covering its nv vectors."""
    T = min(32, _pow2_at_least(-(-nv // tuning.GROUP_MIN_VECTORS)))
    C = -(-nv // T) if mode == "regs" else tuning.STREAM_UNROLL
    return _kernel(func, dtype, mode, T, C, V, tuning.GROUP_BLOCK, weight, bias)


@functools.lru_cache(maxsize=1024)
def layout(func, dtype, K, vec, weight, bias) -> RowKernel:
    """The kernel of rows of length K >= 1 (see the module docstring)."""
    V = 16 // dtype.itemsize if vec else 1
    nv = -(-K // V)
    if func != "logsumexp" and K * dtype.itemsize <= tuning.REGISTER_ROW_BYTES:
        if nv <= 32 * tuning.GROUP_VECTORS:
            return _group(func, dtype, "regs", nv, V, weight, bias)
        T = min(tuning.MAX_BLOCK, max(64, _pow2_at_least(-(-nv // tuning.BLOCK_VECTORS))))
        return _kernel(func, dtype, "regs", T, -(-nv // T), V, T, weight, bias)
    if func == "logsumexp" and nv <= tuning.STREAM_GROUP_VECTORS:
        return _group(func, dtype, "stream", nv, V, weight, bias)
    T = tuning.STREAM_BLOCK
    if func == "logsumexp":  # rows of a few chunks a lane take fewer lanes than long ones
        T = min(T, max(64, _pow2_at_least(-(-nv // (2 * tuning.STREAM_UNROLL)))))
    return _kernel(func, dtype, "stream", T, tuning.STREAM_UNROLL, V, T, weight, bias)


def split_count(k: RowKernel, M: int, nv: int, sms: int) -> int:
    """Blocks S to share each of M rows of nv vectors of kernel `k` among (1: no split): only
    logsumexp's block-streamed rows, fewer than a wave of SPLIT_BLOCKS_PER_SM blocks an SM, S
    the least filling the wave, each block keeping SPLIT_MIN_CHUNKS chunks a lane."""
    wave = tuning.SPLIT_BLOCKS_PER_SM * sms
    if k.func != "logsumexp" or k.T != k.block or M >= wave or M > tuning.SPLIT_COUNTERS:
        return 1
    most = nv // (k.T * k.C * tuning.SPLIT_MIN_CHUNKS)
    return max(1, min(-(-wave // M), most))
