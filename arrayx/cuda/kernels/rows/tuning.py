"""The row-function family's tuning knobs, each with its reason. They are first choices made
without a GPU measurement (the family is new): benchmarks/rows_bench.py measures them, and a
sweep that changes one records why in benchmarks/README.md.

The family reads them as ``tuning.NAME`` when it builds a plan (plans.py), and every knob that
shapes a kernel is part of the plan's key, so a sweep can set them at run time.
"""

from __future__ import annotations

# threads of a block whose rows are short enough for a group of at most 32 lanes (a warp or
# part of one) each: 8 warps, several rows a block, no barrier anywhere in the kernel
GROUP_BLOCK = 256
# a short row's group takes lanes for at least this many 16-byte vectors each (T = the least
# power of two with T * GROUP_MIN_VECTORS covering the row, at most 32): each lane has several
# loads in flight and the row fewer shuffle steps (rows of 128 float32: 8 lanes of 4 vectors,
# not 32 lanes of one)
GROUP_MIN_VECTORS = 4
# a row held in registers by a group of at most 32 lanes takes up to this many 16-byte vectors
# a lane (8 x float4: 1024 float32, as PyTorch's and MLX's warp-per-row kernels stop near there)
GROUP_VECTORS = 8
# a longer row held in registers by a block: vectors a thread aims at, so that a block is
# T = next power of two of (vectors / BLOCK_VECTORS) threads, at least 64 and at most 1024
BLOCK_VECTORS = 4
MAX_BLOCK = 1024
# rows of at most this many bytes are held in registers (read once, written once): 8192 float32
# or 4096 float64, 32 bytes a thread of a 1024-thread block; longer rows are read twice
REGISTER_ROW_BYTES = 32768
# PTX cache qualifier of the rows' 16-byte loads: every element is read once, so streaming
# past L1 leaves it to the weight and bias every row reads again (as the reduction family's
# LOAD_HINT; "" gives plain loads)
LOAD_HINT = ".L1::no_allocate"
# softmax and log_softmax rows held in a block's registers may take their max and sum across
# the warps in one barrier instead of two (each warp's max and sum of exponentials, merged by
# every thread as the online algorithm merges pairs; softmax rescales a warp's exponentials
# once); off: the merge's exponentials cost registers (48 -> 52 a thread on 4096 float32,
# 48 -> 67 on 8192: a block fewer an SM), to be measured against the barrier it saves
MERGED_STATISTICS = False
# threads an SM that ptxas keeps registers for in kernels holding at most OCCUPANCY_ROW_BYTES of
# a row a thread in registers (launch bounds: OCCUPANCY_THREADS // block blocks an SM; 0: one):
# without a bound, softmax of 4096 float32 takes 48 registers (5 blocks of 256 an SM) and
# log_softmax 56 (4), with it 40, spilling nothing; kernels holding more spill under it. Off:
# bounded to 1536, softmax and log_softmax ran slower on the H200 (benchmarks/README.md,
# 2026-12-02 rows), so the bound waits for rows_bench --sweep to pick it per function
OCCUPANCY_THREADS = 0
OCCUPANCY_ROW_BYTES = 64
# layer_norm and rms_norm rows held in registers may load their weight and bias with the row
# (in flight together) instead of after the statistics (a second wait, on L2, before the
# stores); off: the early values hold registers through the reductions (4096 float32 with
# weight and bias: 48 more a thread), to be measured against the wait they save
EARLY_AFFINE = False

# long rows (and logsumexp's rows, never written back) are streamed by a block of this many
# threads, a row a block ...
STREAM_BLOCK = 512
# ... each thread loading this many 16-byte vectors back to back before folding them, so that
# the loads are in flight together (and the online max and sum rescales once per chunk)
STREAM_UNROLL = 4
# logsumexp of rows up to this many vectors streams them with a group of at most 32 lanes a row
# (several rows a block), as the reduction family's row sums do
STREAM_GROUP_VECTORS = 256

# logsumexp of fewer rows than a wave of this many STREAM_BLOCK blocks an SM splits each row
# over S blocks, in one launch (the last block of a row folds the partials), as the reduction
# family splits its long rows: a block a row would leave most SMs idle (axis=None is one row) ...
SPLIT_BLOCKS_PER_SM = 4
# ... each block taking at least this many chunks a lane (fewer make the fold the larger part)
SPLIT_MIN_CHUNKS = 4
# a stream's split counters: a split launch has fewer rows than a wave of blocks
SPLIT_COUNTERS = 4096
