"""The encoder: one per stream. It queues launches, keeps what they use alive, and batches.

Every launch is recorded with the buffers it reads and writes (``launcher.Kernel.__call__``
writes the record into ``keep``/``ops``/``bytes``; ``hold`` does for copies and library calls).
The records of a batch are kept in one list; when the batch is committed (``batch_ops`` launches,
or ``batch_bytes`` bytes touched, or a sync/transfer), one event is recorded on the stream for the
whole batch and the list moves to the in-flight queue. ``poll`` (run at every commit) pops batches
whose event completed and drops their references: temporaries and the inputs of queued kernels
are released then, not before, and with one event per batch rather than one host callback per
launch. Backpressure: when the in-flight batches hold more than ``max_inflight_bytes``, the host
waits for the oldest one.

Two submission modes (``set_mode``; benchmarks/runtime_bench.py measures both):
* 'graph' (default): launches are recorded and, when submitted, captured into a CUDA graph
  (stream capture) that is launched as one; instantiated graphs are cached by topology and
  updated in place (cuGraphExecUpdate), least recently used out. Kernels reach the GPU at commit
  (after ``batch_ops`` launches, ``batch_bytes`` touched, or any sync) and at a ``flush``: before
  a transfer, copy, library call, event or interop export, which submits the recorded launches
  and leaves the batch open. Launches touching ``tuning.DIRECT_BYTES`` or more go to the driver
  at once even in this mode, and fewer than ``tuning.GRAPH_MIN_LAUNCHES`` recorded launches are
  launched directly.
* 'direct': each launch goes to the driver at once; batching only groups the events.

``synchronize`` commits and waits; an asynchronous kernel fault surfaces there (or at the next
transfer) as ``driver.CudaKernelError`` naming the kernels of the batch that failed.

Threads: any number may queue work on one stream. ``lock`` (re-entrant) guards the encoder's
state: every method here holds it, and so does a launch while it records itself
(``launcher.Kernel.__call__``) and while it packs its parameters into the encoder's one
``arguments`` block (``launcher.ArgumentBlock``) and hands them to the driver. A batch is captured on a private stream of the encoder's own
(``_capture_stream``), never on the stream itself: a capture on a stream that other threads use
would take in their copies, events and library calls, which invalidates it
(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, CUDA_ERROR_CAPTURED_EVENT). The graph is then launched on
the stream like any other work. Work that threads queue concurrently reaches the stream in some
interleaving; work a thread queues after another thread's (a join, a lock, a queue between them)
reaches it after.
"""

from __future__ import annotations

import threading
import weakref
from collections import deque

from . import tuning
from .driver import check, driver, raise_error
from .launcher import ArgumentBlock

_encoders: dict = {}  # device index -> WeakSet of encoders


def all_encoders(device_index: int):
    return list(_encoders.get(device_index, ()))


def set_batch(ops: int | None = None, nbytes: int | None = None):
    """Set the batch size (launches and/or bytes) of every encoder, and the default for new ones."""
    if ops is not None:
        tuning.BATCH_OPS = int(ops)
    if nbytes is not None:
        tuning.BATCH_BYTES = int(nbytes)
    for encs in _encoders.values():
        for e in encs:
            e.batch_ops = tuning.BATCH_OPS
            e.batch_bytes = tuning.BATCH_BYTES


def set_mode(mode: str):
    """'direct' or 'graph' for every encoder (pending work is committed first)."""
    if mode not in ("direct", "graph"):
        raise ValueError(mode)
    tuning.SUBMIT_MODE = mode
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
        self.batch_ops = tuning.BATCH_OPS
        self.batch_bytes = tuning.BATCH_BYTES
        self.direct_bytes = tuning.DIRECT_BYTES
        self.inflight = deque()   # [event, records, bytes]
        self.inflight_bytes = 0
        self.max_inflight_bytes = None  # set from the allocator's limit on first use
        self._events = []         # pool of spare events
        self.deferred = [] if tuning.SUBMIT_MODE == "graph" else None  # graph mode: launches to capture
        self._graphs = {}         # topology -> CUgraphExec (graph mode)
        self._capture_stream = None  # graph mode: the private stream batches are captured on
        self.lock = threading.RLock()
        self.arguments = ArgumentBlock()  # the parameters of this encoder's launches, under lock
        self.stats = {"batches": 0, "launches": 0, "graphs_instantiated": 0, "graphs_updated": 0}
        _encoders.setdefault(stream.device_index, weakref.WeakSet()).add(self)

    # -- recording ---------------------------------------------------------------------------
    def hold(self, *objs):
        """Keep arbitrary objects (device buffers of copies and library calls, pinned staging
        buffers, plans) until the GPU has done the work queued so far. They count towards the
        batch like a launch's buffers, so a loop of copies or library calls with no kernel
        between them still commits batches and gets its buffers back as the GPU finishes."""
        with self.lock:
            self.keep.append((None, objs))
            self.ops += 1
            self.bytes += sum([getattr(o, "nbytes", 0) for o in objs])
            if self.ops >= self.batch_ops or self.bytes >= self.batch_bytes:
                self.commit()

    def flush(self):
        """Before a non-kernel stream operation (copy, memset, library call, event): submit the
        deferred launches. The batch stays open: its records and byte count go on, and its
        event, recorded at the commit, comes after that operation too, so a library call between
        two kernels costs no event of its own. Always under the lock, even with nothing
        recorded: another thread may be submitting this thread's launches right now (it took them
        off ``deferred`` and has not launched them yet), and the operation that follows must
        reach the stream after them."""
        with self.lock:
            if self.deferred:
                self._submit_deferred(driver())

    # -- batches -----------------------------------------------------------------------------
    def commit(self):
        """Close the open batch: submit it (graph mode) and record its completion event."""
        with self.lock:
            if not self.ops:
                return
            d = driver()
            self._submit_deferred(d)
            ev = self._events.pop() if self._events else \
                check(d.cuEventCreate(2), "cuEventCreate", self.device)  # DISABLE_TIMING
            err = d.cuEventRecord(ev, self.stream.handle)[0]
            if err != 0:
                raise_error(err, "cuEventRecord", self.device, self._names(self.keep))
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
                share = self.device.allocator.memory_limit // tuning.INFLIGHT_LIMIT_DIVISOR
                limit = self.max_inflight_bytes = max(tuning.INFLIGHT_MIN_BYTES, share)
            while self.inflight_bytes > limit and len(self.inflight) > 1:
                self._wait_oldest(d)

    def poll(self):
        """Release the batches whose work has finished (never blocks)."""
        with self.lock:
            if not self.inflight:
                return
            d = driver()
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
        # Waited for without the lock: other threads keep queueing on the stream meanwhile. The
        # batches committed before the wait have completed after it, so poll releases them.
        err = driver().cuStreamSynchronize(self.stream.handle)[0]
        with self.lock:
            if err != 0:
                oldest = self.inflight[0][1] if self.inflight else []
                self._fail(err, "cuStreamSynchronize", oldest)
            self.poll()

    def drain(self):
        """Commit and wait for this encoder's own batches, by their events, not for the stream:
        for a wrapper of a foreign stream (runtime.Stream.external) going away."""
        with self.lock:
            self.commit()
            d = driver()
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
        raise_error(err, what, self.device, names)

    @staticmethod
    def _names(records):
        seen = []
        for kernel, _ in records:
            if kernel is not None and kernel.name not in seen:
                seen.append(kernel.name)
        return seen[:8]

    def close(self):
        """Drop every record (the stream's work has been waited for) and the capture stream."""
        with self.lock:
            self.keep = []
            self.inflight.clear()
            if self._capture_stream is not None:
                driver().cuStreamDestroy(self._capture_stream)
                self._capture_stream = None

    # -- graph mode --------------------------------------------------------------------------
    def _submit_deferred(self, d):
        """Send the launches recorded since the last submission to the stream (under the lock)."""
        if self.deferred:
            if len(self.deferred) < tuning.GRAPH_MIN_LAUNCHES:
                self._submit_direct()
            else:
                self._submit_graph(d)

    def _submit_direct(self):
        launches = self.deferred
        self.deferred = []
        stream = self.stream.handle
        for kernel, grid, block, args in launches:
            kernel.launch_raw(self.arguments, grid, block, stream, args)

    def _submit_graph(self, d):
        launches = self.deferred
        self.deferred = []
        stream = self.stream.handle
        capture = self._capture_stream
        if capture is None:
            capture = self._capture_stream = check(
                d.cuStreamCreate(d.CUstream_flags.CU_STREAM_NON_BLOCKING.value),
                "cuStreamCreate", self.device)
        check(d.cuStreamBeginCapture(capture, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
              "cuStreamBeginCapture", self.device)
        try:
            for kernel, grid, block, args in launches:
                kernel.launch_raw(self.arguments, grid, block, capture, args)
        finally:
            graph = check(d.cuStreamEndCapture(capture), "cuStreamEndCapture", self.device)
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
            exe = check(d.cuGraphInstantiate(graph, 0), "cuGraphInstantiate", self.device)
            if len(self._graphs) > tuning.GRAPH_CACHE_SIZE:  # least recently used out
                old = next(iter(self._graphs))
                d.cuGraphExecDestroy(self._graphs.pop(old))
            self._graphs[key] = exe
            self.stats["graphs_instantiated"] += 1
        d.cuGraphDestroy(graph)
        check(d.cuGraphLaunch(exe, stream), "cuGraphLaunch", self.device)
