"""The reduction family's tuning knobs, each with its reason (measured on the H200; the numbers
are in benchmarks/README.md, "Reduce: facts moved out of code comments", and the sweep that
sets them is benchmarks/probes/reduce_sweep.py).

The family reads them as ``tuning.NAME`` when it builds a plan or a kernel, so the sweep and the
simulator (tests/cuda/reduce_sim.py) can set them at run time; the plan keys include the ones
that change a kernel's source.
"""

from __future__ import annotations

from ...engine.layout import vector_width

# threads a block of every reduction kernel (8 warps: the block trees and shared arrays use it)
BLOCK = 256
WARPS = BLOCK // 32

# contig: 16-byte vectors a lane loads back to back before adding them (16 beat 4 on all-reduces
# and row sums)
UNROLL = 16
# the same for argmax/argmin: their (value, index) compare chain is longer, and 16 lost to 4
ARG_UNROLL = 4
# ... and for the moments: a block's row of 8192 float32 (2048 vectors) takes this loop twice,
# where 16 (4096 vectors a block) would leave it all to the one-vector loop
MOMENTS_UNROLL = 4
# ...capped at this many elements a lane: numba's compile time grows steeply with the unrolled
# body (16 vectors of uint8 max took 111 s)
UNROLLED_ELEMENTS = 64
# column: rows each warp loads back to back before adding them (4 lost 9% of a single call; 8
# and 16 tie)
COLUMN_UNROLL = 8

# a split reduction launches whole waves of this many blocks per SM (8 was slower everywhere)
BLOCKS_PER_SM = 4
# contiguous rows at least this long get a block of lanes each; shorter ones a warp
ROW_BLOCK_MIN_K = 1024
# the least useful fraction of its last wave a split accepts (plans.split_count): fuller last
# waves cost more blocks and lost on column sums
SPLIT_FILL = 0.0

# shared memory the column kernel's warp combine may take (its vector width halves to fit)
COLUMN_SHARED_BYTES = 32768
# blocks an SM must hold of a split column kernel (its registers are capped to fit): its fold
# would otherwise cost it a block an SM, and 7% on 16k x 16k column sums
COLUMN_SPLIT_BLOCKS_PER_SM = 5
# blocks an SM must hold of every moments kernel: the wave split_count plans for (their float64
# merges would take 66-82 registers, 3 or 2 blocks; at 4 ptxas spills a few of the merges'
# values, at the sums' 5 the column kernel's main loop)
MOMENTS_BLOCKS_PER_SM = 4

# a stream's split scratch: group counters (a split has fewer groups than one wave of blocks, so
# this is generous) ...
COUNTERS = 65536
# ... and the partials of one launch (2^28 float32: 528; 16k x 16k column sums: 5 x 16384);
# more take a temporary
SCRATCH_PARTIAL_BYTES = 1 << 20

# PTX cache qualifier of the contig kernels' 16-byte loads of real inputs, which are read once:
# streaming past L1 beat plain and ".nc" loads ("" gives plain loads; the column kernels keep
# plain loads, which beat both hints there)
LOAD_HINT = ".L1::no_allocate"


def contig_unroll(red) -> int:
    """Vectors a contig lane of reduction `red` loads at once: the knob, capped at
    UNROLLED_ELEMENTS elements."""
    per_vector = vector_width(red.in_dt.itemsize)
    knob = ARG_UNROLL if red.arg else (MOMENTS_UNROLL if red.moments else UNROLL)
    return max(1, min(knob, UNROLLED_ELEMENTS // per_vector))


def hinted_loads(red) -> bool:
    """Whether the contig kernel of `red` loads its vectors with LOAD_HINT (real inputs only)."""
    return bool(LOAD_HINT) and red.in_dt.kind in "iuf"


def launch_bounds(red, split_column=False) -> tuple:
    """(threads a block, blocks an SM must hold) of a kernel of reduction `red` (a split column
    kernel: `split_column`), or () to leave its registers to ptxas."""
    if red.moments:
        return (BLOCK, MOMENTS_BLOCKS_PER_SM)
    return (BLOCK, COLUMN_SPLIT_BLOCKS_PER_SM) if split_column else ()
