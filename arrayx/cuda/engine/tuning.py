"""The engine's tuning knobs in one place, each with the reason for its value.

Their measurements (machine, date, figures) are in benchmarks/README.md, "Engine: facts moved out
of code comments". Knobs read from the environment are read once, at import; ``set_batch`` and
``set_mode`` (encoder.py) change the batch and submission knobs at run time.
"""

from __future__ import annotations

import os

# ---- encoder: batches and submission -----------------------------------------------------
# Launches per batch: one event and one graph per 128 launches cost the host least per small op.
BATCH_OPS = int(os.environ.get("ARRAYX_BATCH_OPS", "128"))
# Bytes touched per batch: bounds what an open batch keeps alive before its event is recorded.
BATCH_BYTES = int(os.environ.get("ARRAYX_BATCH_BYTES", str(256 << 20)))
# 'graph' (a CUDA graph per batch) costs the host about half what 'direct' launches do per op.
SUBMIT_MODE = os.environ.get("ARRAYX_SUBMIT", "graph")
# Launches this large outrun a direct launch's host cost on the GPU: graph mode sends them at once.
DIRECT_BYTES = int(os.environ.get("ARRAYX_DIRECT_BYTES", str(16 << 20)))
# Fewer launches than this cost the host less, and idle the GPU less, as direct launches.
GRAPH_MIN_LAUNCHES = int(os.environ.get("ARRAYX_GRAPH_MIN_LAUNCHES", "6"))
# Graphs kept per encoder: a program's loops repeat a few topologies, updated in place then.
GRAPH_CACHE_SIZE = 64
# Queued batches may hold max(this, memory limit // divisor): a host loop can't fill the device.
INFLIGHT_MIN_BYTES = 1 << 30
INFLIGHT_LIMIT_DIVISOR = 4

# ---- allocator: size classes and limits --------------------------------------------------
# Requests this small (scalars, counters) share 16 KiB slabs instead of a driver allocation each.
SMALL_BYTES = 8
# Power-of-two classes below a page reuse a loop's temporaries exactly; whole pages above it.
PAGE_BYTES = 16384
SLAB_BYTES = PAGE_BYTES
# Of the device's memory; the rest is left to the context, library workspaces, other processes.
MEMORY_FRACTION = 0.9
# A cached block this many pages larger may serve a request: reuse beats a driver call.
BEST_FIT_SLACK_PAGES = 2

# ---- transfers ---------------------------------------------------------------------------
# Pinned staging wins from 16 MiB on an H200 and loses below; 0 turns it off.
PINNED_MIN_BYTES = int(os.environ.get("ARRAYX_PINNED_MIN", str(16 << 20)))
# Each of the two staging chunks: the host copy of one overlaps the DMA of the other.
STAGING_CHUNK_BYTES = 32 << 20
# One thread's memmove does not reach the host's memory bandwidth.
COPY_THREADS = int(os.environ.get("ARRAYX_COPY_THREADS", "8"))
# Below this, one memmove is faster than handing parts to the thread pool.
THREADED_COPY_MIN_BYTES = 4 << 20
