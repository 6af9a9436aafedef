"""The encoder: one per stream. It queues launches, keeps what they use alive, and batches.

Every launch is recorded with the buffers it reads and writes (``track``). The records of a batch
are kept in one list; when the batch is committed (``batch_ops`` launches, or ``batch_bytes`` bytes
touched, or a sync/transfer), one event is recorded on the stream for the whole batch and the list
moves to the in-flight queue. ``poll`` (run at every commit) pops batches whose event completed and
drops their references: temporaries and the inputs of queued kernels are released then, not
before, and with one event per batch rather than one callback per op (SEEDS.md). Backpressure: when
the in-flight batches hold more than ``max_inflight_bytes``, the host waits for the oldest one.

Two submission modes (``set_mode``; benchmarks/runtime_bench.py measures both, see
benchmarks/results/):
* 'graph' (default): launches are recorded and, at commit, captured into a CUDA graph (stream
  capture) that is launched as one; instantiated graphs are cached by topology and updated in
  place (cuGraphExecUpdate), least recently used out. Kernels reach the GPU at commit: after
  ``batch_ops`` launches, ``batch_bytes`` touched, or any sync, transfer, event or interop export.
  Launches touching ``DIRECT_BYTES`` or more go to the driver at once even in this mode, and a
  batch of fewer than ``GRAPH_MIN_LAUNCHES`` launches is launched directly at commit.
* 'direct': each launch goes to the driver at once; batching only groups the events.

``synchronize`` commits and waits; an asynchronous kernel fault surfaces there (or at the next
transfer) as ``runtime.CudaKernelError`` naming the kernels of the batch that failed.
"""

from __future__ import annotations

import os
import weakref
from collections import deque

from . import runtime

# Defaults from benchmarks/results/runtime-2026-11-29.md (H200): per small op (add of 1000 float32),
# a CUDA graph per batch of 128 launches costs the host 4.1 us against 8.0 us for direct launches
# (a bare cuLaunchKernel is 5.0 us there; a launch recorded under stream capture is far cheaper,
# and one cuGraphExecUpdate + cuGraphLaunch per 128 ops amortises). 32: 4.6, 256: 4.3, 512: 5.3.
BATCH_OPS = int(os.environ.get("ARRAYX_BATCH_OPS", "128"))
BATCH_BYTES = int(os.environ.get("ARRAYX_BATCH_BYTES", str(256 << 20)))
MODE = os.environ.get("ARRAYX_SUBMIT", "graph")
# In graph mode a launch touching at least this many bytes goes to the driver at once (after the
# launches recorded before it): it keeps the GPU busy for longer than a direct launch costs the
# host (16 MiB at 4 TB/s is 4 us), so nothing is gained by capturing it into a graph of its own,
# which costs a capture, an instantiation or update, and a graph launch before the GPU starts.
# Chosen by that reasoning, not measured against capturing (benchmarks/README.md).
DIRECT_BYTES = int(os.environ.get("ARRAYX_DIRECT_BYTES", str(16 << 20)))
# A batch of fewer launches than this is submitted as direct launches, not as a graph. From the
# same runtime-2026-11-29 figures, a graph costs the host about 22 us per batch (capture, update,
# launch) plus 0.9 us per launch, a direct launch 5 us: direct is cheaper below 5.4 launches.
# benchmarks/results/latency-2026-11-30.md: a 1-launch graph before cumulative_sum's large launch
# held the GPU idle for 48 us.
GRAPH_MIN_LAUNCHES = int(os.environ.get("ARRAYX_GRAPH_MIN_LAUNCHES", "6"))

_encoders: dict = {}  # device index -> WeakSet of encoders


def all_encoders(device_index: int):
    return list(_encoders.get(device_index, ()))


def set_batch(ops: int | None = None, nbytes: int | None = None):
    """Set the batch size (launches and/or bytes) of every encoder, and the default for new ones."""
    global BATCH_OPS, BATCH_BYTES
    if ops is not None:
        BATCH_OPS = int(ops)
    if nbytes is not None:
        BATCH_BYTES = int(nbytes)
    for encs in _encoders.values():
        for e in encs:
            e.batch_ops = BATCH_OPS
            e.batch_bytes = BATCH_BYTES


def set_mode(mode: str):
    """'direct' or 'graph' for every encoder (pending work is committed first)."""
    global MODE
    if mode not in ("direct", "graph"):
        raise ValueError(mode)
    MODE = mode
    for encs in _encoders.values():
        for e in encs:
            e.commit()
            e.deferred = [] if mode == "graph" else None


class Encoder:
    def __init__(self, stream):
        self.stream = stream
        self.device = stream.device
        self.keep = []            # (kernel, buffers) of the open batch
        self.ops = 0
        self.bytes = 0
        self.batch_ops = BATCH_OPS
        self.batch_bytes = BATCH_BYTES
        self.direct_bytes = DIRECT_BYTES
        self.inflight = deque()   # [event, records, bytes]
        self.inflight_bytes = 0
        self.max_inflight_bytes = None  # set from the allocator's limit on first use
        self._events = []         # pool of spare events
        self.deferred = [] if MODE == "graph" else None
        self._graphs = {}         # topology -> CUgraphExec (graph mode)
        self.stats = {"batches": 0, "launches": 0, "graphs_instantiated": 0, "graphs_updated": 0}
        _encoders.setdefault(stream.device_index, weakref.WeakSet()).add(self)

    # -- recording ---------------------------------------------------------------------------
    def track(self, kernel, keep, nbytes):
        """Record a launch (already submitted) and the buffers it uses."""
        self.keep.append((kernel, keep))
        self.ops += 1
        self.bytes += nbytes
        if self.ops >= self.batch_ops or self.bytes >= self.batch_bytes:
            self.commit()

    def hold(self, *objs):
        """Keep arbitrary objects (device buffers of copies and library calls, pinned staging
        buffers, plans) until the GPU has done the work queued so far. They count towards the
        batch like a launch's buffers: a loop of copies or library calls with no kernel between
        them commits its batches, so its buffers come back to the allocator as the GPU finishes
        (uncounted, a loop of 1000 products held all 1000 outputs until the next sync and
        allocated each from the driver)."""
        self.keep.append((None, objs))
        self.ops += 1
        self.bytes += sum([getattr(o, "nbytes", 0) for o in objs])
        if self.ops >= self.batch_ops or self.bytes >= self.batch_bytes:
            self.commit()

    def defer(self, kernel, grid, block, args, keep, nbytes):
        self.deferred.append((kernel, grid, block, args))
        self.track(kernel, keep, nbytes)

    def flush(self):
        """Before a non-kernel stream operation (copy, memset, event): submit deferred launches."""
        if self.deferred:
            self.commit()

    # -- batches -----------------------------------------------------------------------------
    def commit(self):
        """Close the open batch: submit it (graph mode) and record its completion event."""
        if not self.ops:
            return
        d = runtime.driver()
        if self.deferred:
            if len(self.deferred) < GRAPH_MIN_LAUNCHES:
                self._submit_direct()
            else:
                self._submit_graph(d)
        ev = self._events.pop() if self._events else \
            runtime.check(d.cuEventCreate(2), "cuEventCreate", self.device)  # DISABLE_TIMING
        err = d.cuEventRecord(ev, self.stream.handle)[0]
        if err != 0:
            runtime.raise_error(err, "cuEventRecord", self.device, self._names(self.keep))
        self.inflight.append((ev, self.keep, self.bytes))
        self.inflight_bytes += self.bytes
        self.stats["batches"] += 1
        self.stats["launches"] += self.ops
        self.keep = []
        self.ops = 0
        self.bytes = 0
        self.poll()
        limit = self.max_inflight_bytes
        if limit is None:
            limit = self.max_inflight_bytes = max(1 << 30, self.device.allocator.memory_limit // 4)
        while self.inflight_bytes > limit and len(self.inflight) > 1:
            self._wait_oldest(d)

    def poll(self):
        """Release the batches whose work has finished (never blocks)."""
        if not self.inflight:
            return
        d = runtime.driver()
        inflight = self.inflight
        while inflight:
            ev, records, nbytes = inflight[0]
            err = d.cuEventQuery(ev)[0]
            if err == 0:
                inflight.popleft()
                self.inflight_bytes -= nbytes
                self._events.append(ev)
            elif int(err) == 600:  # NOT_READY
                return
            else:
                self._fail(err, "a kernel", records)

    def _wait_oldest(self, d):
        ev, records, nbytes = self.inflight[0]
        err = d.cuEventSynchronize(ev)[0]
        if err != 0:
            self._fail(err, "cuEventSynchronize", records)
        self.inflight.popleft()
        self.inflight_bytes -= nbytes
        self._events.append(ev)

    def synchronize(self):
        """Commit and wait for everything queued on this stream; raise its asynchronous errors."""
        self.commit()
        d = runtime.driver()
        err = d.cuStreamSynchronize(self.stream.handle)[0]
        if err != 0:
            oldest = self.inflight[0][1] if self.inflight else []
            self._fail(err, "cuStreamSynchronize", oldest)
        for ev, _, _ in self.inflight:
            self._events.append(ev)
        self.inflight.clear()
        self.inflight_bytes = 0

    def drain(self):
        """Commit and wait for this encoder's own batches, by their events, not for the stream:
        for a wrapper of a foreign stream (runtime.Stream.external) going away."""
        self.commit()
        d = runtime.driver()
        while self.inflight:
            self._wait_oldest(d)

    def _fail(self, err, what, records):
        names = self._names(records)
        # the context is gone: drop everything queued (the memory went with the context)
        self.inflight.clear()
        self.inflight_bytes = 0
        self.keep = []
        self.ops = 0
        self.bytes = 0
        runtime.raise_error(err, what, self.device, names)

    @staticmethod
    def _names(records):
        seen = []
        for kernel, _ in records:
            if kernel is not None and kernel.name not in seen:
                seen.append(kernel.name)
        return seen[:8]

    def release_all(self):
        self.keep = []
        self.inflight.clear()

    # -- graph mode --------------------------------------------------------------------------
    def _submit_direct(self):
        launches = self.deferred
        self.deferred = []
        stream = self.stream.handle
        for kernel, grid, block, args in launches:
            kernel.launch_raw(grid, block, stream, args)

    def _submit_graph(self, d):
        launches = self.deferred
        self.deferred = []
        stream = self.stream.handle
        runtime.check(d.cuStreamBeginCapture(stream, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                      "cuStreamBeginCapture", self.device)
        try:
            for kernel, grid, block, args in launches:
                kernel.launch_raw(grid, block, stream, args)
        finally:
            graph = runtime.check(d.cuStreamEndCapture(stream), "cuStreamEndCapture", self.device)
        key = tuple([(id(k), g, b) for k, g, b, _ in launches])
        exe = self._graphs.get(key)
        if exe is not None:
            res = d.cuGraphExecUpdate(exe, graph)
            if res[0] != 0:
                d.cuGraphExecDestroy(exe)
                exe = None
            else:
                self.stats["graphs_updated"] += 1
                self._graphs[key] = self._graphs.pop(key)  # most recently used last
        if exe is None:
            exe = runtime.check(d.cuGraphInstantiate(graph, 0), "cuGraphInstantiate", self.device)
            if len(self._graphs) > 64:  # least recently used out (not the whole cache)
                old = next(iter(self._graphs))
                d.cuGraphExecDestroy(self._graphs.pop(old))
            self._graphs[key] = exe
            self.stats["graphs_instantiated"] += 1
        d.cuGraphDestroy(graph)
        runtime.check(d.cuGraphLaunch(exe, stream), "cuGraphLaunch", self.device)
