"""Several processes, one array program: collectives and messages between ranks (beyond the
standard).

    # python -m arrayx.distributed.run -n 2 train.py
    import arrayx as xp
    import arrayx.distributed as dist

    part = xp.asarray(local_data)          # on this rank's device (cuda:<local rank> or cpu)
    total = dist.all_reduce(xp.sum(part, axis=0))

A job is one process per rank, started by the launcher (``python -m arrayx.distributed.run -n
N script.py``), which tells each process its rank, the job's size and rank 0's address through
``ARRAYX_DISTRIBUTED_*`` variables and gives it its device. A process started without them is a
job of one rank. The group is set up by ``init()`` or by the first call that needs it.

Every rank must make the same calls in the same order, with arrays of the same shape and dtype
(``recv`` names what it expects), as with NCCL and ``torch.distributed``:

* ``all_reduce(x, op)``: the elementwise reduction over ranks ("sum", "prod", "max", "min");
  bool sums and products are logical or / and, complex arrays take "sum" only.
* ``all_gather(x)``: every rank's x stacked along a new first axis (shape ``(size, *x.shape)``).
* ``reduce_scatter(x, op)``: x of shape ``(size, ...)``; rank r gets the reduction over ranks of
  ``x[r]``, so ``all_gather(reduce_scatter(x))`` is ``all_reduce(x)``.
* ``broadcast(x, root)``: the root's x on every rank (the others' x give shape and dtype).
* ``send(x, peer)`` / ``recv(shape, dtype, peer)``: one array from one rank to another.
* ``barrier()``: returns when every rank has called it (host only: it does not wait for GPUs).

Results are new arrays on the input's device. Arrays on a GPU go through NCCL, queued on the
device's current stream after the work queued there and returning at once, like every arrayx
operation; host arrays go through the job's TCP mesh and return when done. Host results are
exact: reductions combine the ranks' parts in rank order, as ``functools.reduce`` over NumPy's
ufunc would. On a GPU the order of a reduction over more than two ranks is NCCL's, and NaN in
max/min follows NCCL.

Failures raise ``DistributedError`` instead of hanging: a peer that dies or stays silent for
``ARRAYX_DISTRIBUTED_TIMEOUT`` seconds (default 300) breaks the group on every rank still
running. On a GPU, a collective still unfinished after the timeout is aborted
(``ncclCommAbort``, which ends its kernels) and the error is raised in the thread that queued
it, as soon as that thread runs Python code again; its result is undefined, and later calls on
GPU arrays raise too. One thread at a time may call the collectives of GPU arrays. Arguments that differ across ranks (shapes, dtypes, ops, roots) are a ValueError on
every rank for host arrays and leave the group usable; for GPU arrays they are not checked.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from .._array_object import Array
from .._devices import CPU
from .._validation import check_array, check_dtype, check_int, normalize_shape, resolve_device
from ._group import Group, reduce_parts
from ._sockets import DistributedError

__all__ = ["DistributedError", "init", "is_initialized", "shutdown", "rank", "size",
           "all_reduce", "all_gather", "reduce_scatter", "broadcast", "send", "recv", "barrier"]

_OPS = ("sum", "prod", "max", "min")
_INT32 = np.dtype(np.int32)

_group: Group | None = None
_init_lock = threading.Lock()


def init(*, timeout: float | None = None) -> None:
    """Join the job this process belongs to (a job of one without the launcher's variables).
    `timeout`: seconds any wait on a peer may take (default ARRAYX_DISTRIBUTED_TIMEOUT, else
    300). Calling it again does nothing."""
    global _group
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not timeout > 0):
        raise ValueError(f"init(): timeout must be a positive number of seconds, got {timeout!r}")
    with _init_lock:
        if _group is None:
            _group = Group(None if timeout is None else float(timeout))


def is_initialized() -> bool:
    return _group is not None


def shutdown() -> None:
    """Leave the job: close the connections and the NCCL communicator. ``init()`` may join again
    a job started afresh."""
    global _group
    with _init_lock:
        if _group is not None:
            _group.close()
            _group = None


def _current() -> Group:
    if _group is None:
        init()
    return _group


def rank() -> int:
    """This process's rank in the job, 0 <= rank() < size()."""
    return _current().rank


def size() -> int:
    """The number of ranks in the job."""
    return _current().size


# ---- validation -------------------------------------------------------------------------

def _check_op(op, fname: str, dtype) -> str:
    if not isinstance(op, str):
        raise TypeError(f"{fname}(): op must be a str ({', '.join(map(repr, _OPS))}), got "
                        f"{type(op).__name__} {op!r}")
    if op not in _OPS:
        raise ValueError(f"{fname}(): op must be one of {', '.join(map(repr, _OPS))}, got {op!r}")
    if dtype.kind == "c" and op != "sum":
        raise TypeError(f"{fname}(): complex arrays can only be summed across ranks, not "
                        f"reduced with {op!r}")
    return op


def _check_rank(value, group: Group, fname: str, argname: str) -> int:
    value = check_int(value, fname, argname)
    if not 0 <= value < group.size:
        raise ValueError(f"{fname}(): {argname}={value} is not a rank of this job of "
                         f"{group.size}")
    return value


def _check_peer(value, group: Group, fname: str) -> int:
    peer = _check_rank(value, group, fname, "peer")
    if peer == group.rank:
        raise ValueError(f"{fname}(): peer={peer} is this rank itself")
    return peer


def _host(x: Array) -> np.ndarray:
    a = x._data
    return a if a.flags.c_contiguous else a.copy(order="C")


# ---- GPU plumbing -----------------------------------------------------------------------

class _Gpu:
    """One NCCL call's operands on a GPU: the contiguous input, the stream, the library."""

    def __init__(self, group: Group, x: Array):
        from . import _nccl
        from ..cuda.engine import runtime
        self.nccl = _nccl
        self.device = x._device
        self.backend = x._device.backend
        self.comm = group.communicator(x._device.index)
        self.stream = runtime.get_device(x._device.index).stream
        a = x._data
        self.input = a if a.c_contig else self.backend.copy(a)

    def empty(self, shape: tuple, dtype):
        return self.backend.empty(self.device, shape, dtype)

    def reduce(self, what: str, fn, a, out_shape: tuple, op: str, count: int):
        """Queue a reduction (ncclAllReduce or ncclReduceScatter, by `fn`) of the native array
        `a` into a new array of `out_shape`; `count` is NCCL's element count per element of
        `a`'s dtype (the output's for a reduce-scatter)."""
        view = self.nccl.reduction_view(a.dtype, op)
        if view is None:  # int16/uint16: reduced as int32, whose low 16 bits are the result
            wide = self.reduce(what, fn, self.backend.astype(a, _INT32, True), out_shape, op,
                               count)
            return self.backend.astype(wide, a.dtype, True)
        dtype, code, per_element = view
        out = self.empty(out_shape, a.dtype)
        if count:
            self.comm.call(what, fn, (a.ptr, out.ptr, count * per_element,
                                      self.nccl.nccl_type(dtype), code),
                           self.stream, (a.buffer, out.buffer))
        return out

    def result(self, native) -> Array:
        return Array._new(native, self.device)


# ---- collectives ------------------------------------------------------------------------

def all_reduce(x: Array, op: str = "sum") -> Array:
    """The elementwise reduction of every rank's x (see the module docstring)."""
    check_array(x, "all_reduce")
    op = _check_op(op, "all_reduce", x.dtype)
    group = _current()
    if x._device is CPU:
        out = group.host_collective("all_reduce", _host(x), {"reduce": op},
                                    lambda parts: [reduce_parts(parts, op)] * group.size)
        return Array._new(out, CPU)
    gpu = _Gpu(group, x)
    a = gpu.input
    return gpu.result(gpu.reduce("all_reduce", gpu.nccl.library().ncclAllReduce, a, a.shape,
                                 op, a.size))


def all_gather(x: Array) -> Array:
    """Every rank's x, stacked in rank order along a new first axis."""
    check_array(x, "all_gather")
    group = _current()
    if x._device is CPU:
        out = group.host_collective("all_gather", _host(x), {},
                                    lambda parts: [np.stack(parts)] * group.size)
        return Array._new(out, CPU)
    gpu = _Gpu(group, x)
    a = gpu.input
    out = gpu.empty((group.size,) + a.shape, a.dtype)
    if a.nbytes:
        lib = gpu.nccl.library()
        gpu.comm.call("all_gather", lib.ncclAllGather, (a.ptr, out.ptr, a.nbytes, gpu.nccl.BYTES),
                      gpu.stream, (a.buffer, out.buffer))
    return gpu.result(out)


def reduce_scatter(x: Array, op: str = "sum") -> Array:
    """Rank r's share of the reduction: the reduction over ranks of x[r], for x of shape
    (size(), ...)."""
    check_array(x, "reduce_scatter")
    op = _check_op(op, "reduce_scatter", x.dtype)
    group = _current()
    if x.ndim == 0 or x.shape[0] != group.size:
        raise ValueError(f"reduce_scatter(): x must have a first axis of length size() = "
                         f"{group.size} (one block a rank), got shape {x.shape}")
    if x._device is CPU:
        def scatter(parts):
            total = reduce_parts(parts, op)
            return [np.array(total[r], copy=True) for r in range(group.size)]
        return Array._new(group.host_collective("reduce_scatter", _host(x), {"reduce": op},
                                                scatter), CPU)
    gpu = _Gpu(group, x)
    a = gpu.input
    block = a.shape[1:]
    return gpu.result(gpu.reduce("reduce_scatter", gpu.nccl.library().ncclReduceScatter, a,
                                 block, op, math.prod(block)))


def broadcast(x: Array, root: int = 0) -> Array:
    """The root's x, on every rank; on the others x gives the shape and dtype."""
    check_array(x, "broadcast")
    group = _current()
    root = _check_rank(root, group, "broadcast", "root")
    if x._device is CPU:
        agree = {"root": root, "shape": list(x.shape), "dtype": x.dtype.name}
        part = _host(x) if group.rank == root else None
        out = group.host_collective("broadcast", part, agree,
                                    lambda parts: [parts[root]] * group.size)
        return Array._new(np.array(out, copy=True) if group.rank == root else out, CPU)
    gpu = _Gpu(group, x)
    a = gpu.input
    out = gpu.empty(a.shape, a.dtype)
    if a.nbytes:
        lib = gpu.nccl.library()
        gpu.comm.call("broadcast", lib.ncclBroadcast,
                      (a.ptr, out.ptr, a.nbytes, gpu.nccl.BYTES, root), gpu.stream,
                      (a.buffer, out.buffer))
    return gpu.result(out)


def barrier() -> None:
    """Return when every rank has called barrier() (the host's work only)."""
    group = _current()
    group.host_collective("barrier", None, {}, lambda parts: [None] * group.size)


# ---- point to point ---------------------------------------------------------------------

def send(x: Array, peer: int) -> None:
    """Send x to rank `peer`, which receives it with ``recv(x.shape, x.dtype, rank)`` on the
    same kind of device. On a GPU it is queued on the current stream (NCCL's send completes
    when the peer receives)."""
    check_array(x, "send")
    group = _current()
    peer = _check_peer(peer, group, "send")
    if x._device is CPU:
        group.host_send(_host(x), peer)
        return
    gpu = _Gpu(group, x)
    a = gpu.input
    if a.nbytes:
        gpu.comm.call("send", gpu.nccl.library().ncclSend,
                      (a.ptr, a.nbytes, gpu.nccl.BYTES, peer), gpu.stream, (a.buffer,))


def recv(shape, dtype, peer: int, *, device=None) -> Array:
    """The array rank `peer` sends with ``send``, as a new array on `device` (default: the
    default device); `shape` and `dtype` must be those of the array sent."""
    shape = normalize_shape(shape, "recv")
    dtype = check_dtype(dtype, "recv")
    device = resolve_device(device)
    group = _current()
    peer = _check_peer(peer, group, "recv")
    if device is CPU:
        return Array._new(group.host_recv(shape, dtype, peer), CPU)
    from ..cuda.engine import runtime
    from . import _nccl
    comm = group.communicator(device.index)
    out = device.backend.empty(device, shape, dtype)
    if out.nbytes:
        comm.call("recv", _nccl.library().ncclRecv, (out.ptr, out.nbytes, _nccl.BYTES, peer),
                  runtime.get_device(device.index).stream, (out.buffer,))
    return Array._new(out, device)
