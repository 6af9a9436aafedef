"""The scan family's knobs, each with why it has its value (the measurements behind them:
benchmarks/README.md, "Scan and mask: facts moved out of code comments").

The probes and the simulator change these module attributes at run time (benchmarks/probes/
scan_sweep.py, scan_rows_probe.py, tests/cuda/scan_sim.py): the host reads them on every call,
through `tile_knobs()` and `ALIGNED_MIN_VECTORS`, so a change takes effect at the next scan.
"""

from __future__ import annotations

# Column scan: threads a block.
BLOCK = 256
# Row-scan tile: SCAN_BLOCK threads x SCAN_VECTORS 16-byte vectors each: larger tiles mean fewer
# look-backs on the critical path, smaller ones more resident blocks; 256 x 8 was the best shape.
SCAN_BLOCK = 256
SCAN_VECTORS = 8
# One plain row keeps no per-element head flags, so its tile holds more vectors (45 KiB of
# float32 values at 11).
ONE_ROW_VECTORS = 11
# One row: a warp of its own publishes the tile's sum and looks back while the tile's warps scan,
# instead of warp 0 doing both in turn.
LOOKBACK_WARP = True
# Each row-scan block prefetches into L2 the input of the tile this many bytes of traffic ahead:
# more bytes in flight than resident tiles hold, without holding any (beyond 12 MiB L2 drops
# the lines before use). 0: no prefetch.
PREFETCH_BYTES = 8 << 20
# One plain row's kernel is compiled for this many resident blocks an SM (launch bounds): what
# shared memory holds of its tile, and what its registers would not allow unbounded (3 blocks).
PLAIN_ROW_BLOCKS = 4
# Flat rows whose length is a multiple of a one-row tile of at least this many vectors a thread
# run the one-row kernel (a tile starting a row publishes its prefix at once; no head bytes):
# it is 1.6-1.8x the segmented kernel's rate. 0: never.
ALIGNED_MIN_VECTORS = 4
# Static shared memory a block may use, and what the tile's small arrays (warp totals, the
# prefix) take of it.
SHARED_LIMIT = 48 * 1024
SHARED_RESERVE = 2048
# Columns needed to fill the GPU with one thread per column; fewer are transposed to rows.
COLUMN_MIN = 1 << 16
# Loads in flight a thread of the column scan.
COLUMN_UNROLL = 8


def tile_knobs() -> tuple:
    """The knobs the row-scan kernels depend on, as one value (part of the host's cache keys):
    (SCAN_BLOCK, SCAN_VECTORS, ONE_ROW_VECTORS, LOOKBACK_WARP, PREFETCH_BYTES)."""
    return SCAN_BLOCK, SCAN_VECTORS, ONE_ROW_VECTORS, LOOKBACK_WARP, PREFETCH_BYTES
