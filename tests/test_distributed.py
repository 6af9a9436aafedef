"""arrayx.distributed on host arrays: jobs of 1, 2 and 3 ranks started by the launcher in
subprocesses, every collective exact against NumPy, argument errors, and a rank that dies or
stays silent making the others raise instead of hang.

This file is also the ranks' program: ``python -m arrayx.distributed.run -n N --device cpu
tests/test_distributed.py WORKER`` runs ``WORKER`` (a function below) on every rank, which
prints "ok" and its count of checks when all pass. Each rank makes every rank's data from a seed
of its own, so each can compute the expected results with NumPy alone.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import time

import numpy as np
import pytest

import arrayx as xp
import arrayx.distributed as dist
from conftest import ALL_DTYPES, assert_array_equal, distributed_ops, make_data, run_python

CPU = xp.Device("cpu")
_UFUNCS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


# ---- the ranks' side --------------------------------------------------------------------

def _part(dtype, shape, r, seed):
    """Rank r's data, as an arrayx array and as NumPy; shape "view" is an offset, strided view."""
    rng = np.random.default_rng([seed, r])
    if shape == "view":
        h = make_data(dtype, (dist.size() + 1, 9), rng)
        return xp.asarray(h)[1:, ::2], h[1:, ::2]
    h = make_data(dtype, shape, rng)
    return xp.asarray(h), h


def _reference(parts, op):
    with np.errstate(all="ignore"):
        return np.asarray(functools.reduce(_UFUNCS[op], parts))


def worker_collectives():
    n, me = dist.size(), dist.rank()
    checks = 0
    shapes = [(), (0,), (7,), (3, 4), (2, 0, 3), "view"]
    for seed, dtype in enumerate(ALL_DTYPES):
        for shape in shapes:
            x, _ = _part(dtype, shape, me, seed)
            parts = [_part(dtype, shape, r, seed)[1] for r in range(n)]
            for op in distributed_ops(dtype):
                assert_array_equal(dist.all_reduce(x, op), _reference(parts, op), device=CPU)
                checks += 1
            assert_array_equal(dist.all_gather(x), np.stack(parts), device=CPU)
            for root in range(n):
                assert_array_equal(dist.broadcast(x, root), parts[root], device=CPU)
            checks += 1 + n
            if n > 1:  # a ring: each rank sends to the next and receives from the previous
                nxt, prev = (me + 1) % n, (me - 1) % n
                if me % 2 == 0:
                    dist.send(x, nxt)
                    got = dist.recv(x.shape, x.dtype, prev, device="cpu")
                else:
                    got = dist.recv(x.shape, x.dtype, prev, device="cpu")
                    dist.send(x, nxt)
                assert_array_equal(got, parts[prev], device=CPU)
                checks += 1
        for block in [(), (0,), (3, 2), "view"]:
            shape = "view" if block == "view" else (n,) + block
            x, _ = _part(dtype, shape, me, seed + 100)
            parts = [_part(dtype, shape, r, seed + 100)[1] for r in range(n)]
            for op in distributed_ops(dtype):
                total = _reference(parts, op)
                got = dist.reduce_scatter(x, op)
                assert_array_equal(got, total[me], device=CPU)
                assert_array_equal(dist.all_gather(got), total, device=CPU)
                checks += 2
    # every rank's view of the group, and the inputs left as they were
    assert_array_equal(dist.all_gather(xp.asarray(me)), np.arange(n), device=CPU)
    x = xp.asarray(np.arange(5.0))
    dist.all_reduce(x)
    assert_array_equal(x, np.arange(5.0), device=CPU)
    print(f"rank {me} ok {checks + 2}", flush=True)


def worker_mismatches():
    """Arguments that differ across ranks: a ValueError on every rank, the group still usable."""
    me = dist.rank()
    cases = [
        lambda: dist.all_reduce(xp.ones((me + 1,))),
        lambda: dist.all_reduce(xp.ones(3, dtype=xp.float32 if me else xp.float64)),
        lambda: dist.all_reduce(xp.ones(3), "max" if me else "sum"),
        lambda: dist.broadcast(xp.ones(3), root=me),
        lambda: dist.broadcast(xp.ones((2, me + 1)), root=0),
        lambda: dist.recv((4,), xp.float64, 0) if me else dist.send(xp.ones(3), 1),
    ]
    for case in cases:
        try:
            case()
        except ValueError as e:
            print(f"rank {me} ValueError: {e}", flush=True)
        else:
            if not (me == 0 and case is cases[-1]):  # the sender cannot know
                raise AssertionError(f"rank {me}: no ValueError")
    assert_array_equal(dist.all_reduce(xp.asarray([me, 1])), np.array([1, 2]), device=CPU)
    print(f"rank {me} ok", flush=True)


def _all_reduce_reporting_failure(me, n) -> bool:
    """all_reduce of n ones; prints how long a DistributedError took and returns whether one came."""
    start = time.monotonic()
    try:
        dist.all_reduce(xp.ones(n))
    except dist.DistributedError as e:
        print(f"rank {me} raised DistributedError after {time.monotonic() - start:.2f} s: {e}",
              flush=True)
        return True
    return False


def worker_dies():
    """Rank 1 dies before the collective; the others must raise DistributedError quickly."""
    me = dist.rank()
    dist.barrier()
    if me == 1:
        os._exit(3)
    _all_reduce_reporting_failure(me, 1000)
    try:
        dist.all_reduce(xp.ones(3))
    except dist.DistributedError as e:
        print(f"rank {me} then: {e}", flush=True)


def worker_silent():
    """Rank 1 stops answering; the others raise after the timeout."""
    me = dist.rank()
    dist.barrier()
    if me == 1:
        time.sleep(120)
    if _all_reduce_reporting_failure(me, 10):
        sys.exit(5)


def worker_environment():
    print(f"rank {dist.rank()} size {dist.size()} device {xp.asarray(1).device} local "
          f"{os.environ['ARRAYX_DISTRIBUTED_LOCAL_RANK']} nvls {os.environ['NCCL_NVLS_ENABLE']}",
          flush=True)
    sys.exit(int(os.environ.get("EXIT_STATUS_OF_RANK_%d" % dist.rank(), "0")))


# ---- the test side ----------------------------------------------------------------------

def _launch(n, worker, *launcher_args, timeout=240, **env):
    """The launcher's job of n ranks running `worker`, outside any job of this process's own."""
    unset = {k: None for k in os.environ if k.startswith("ARRAYX_DISTRIBUTED_")}
    start = time.monotonic()
    r = run_python("-m", "arrayx.distributed.run", "-n", n, "--device", "cpu", *launcher_args,
                   os.path.abspath(__file__), worker, timeout=timeout, **{**unset, **env})
    r.elapsed = time.monotonic() - start
    return r


def _report(r):
    return f"status {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-6000:]}"


@pytest.mark.parametrize("n", [1, 2, 3])
def test_every_collective_is_exact(n):
    r = _launch(n, "worker_collectives")
    assert r.returncode == 0, _report(r)
    for rank in range(n):
        assert f"rank {rank} ok" in r.stdout, _report(r)


def test_arguments_that_differ_across_ranks_raise_value_error_on_every_rank():
    r = _launch(2, "worker_mismatches")
    assert r.returncode == 0, _report(r)
    assert r.stdout.count("rank 0 ValueError") == 5 and r.stdout.count("rank 1 ValueError") == 6
    assert "rank 0 ok" in r.stdout and "rank 1 ok" in r.stdout, _report(r)
    assert "differ in shape or dtype" in r.stdout and "different root" in r.stdout


def test_a_rank_that_dies_makes_the_others_raise_at_once():
    r = _launch(3, "worker_dies", ARRAYX_DISTRIBUTED_TIMEOUT="100")
    assert r.returncode == 3, _report(r)  # the dead rank's status
    for rank in (0, 2):
        assert f"rank {rank} raised DistributedError" in r.stdout, _report(r)
        assert f"rank {rank} then: the group is broken" in r.stdout, _report(r)
    assert r.elapsed < 60, _report(r)  # far below the timeout: a closed connection is seen


def test_a_silent_rank_times_out_and_the_launcher_kills_it():
    r = _launch(3, "worker_silent", "--grace", "1", ARRAYX_DISTRIBUTED_TIMEOUT="2")
    assert r.returncode == 5, _report(r)
    for rank in (0, 2):
        assert f"rank {rank} raised DistributedError" in r.stdout, _report(r)
    assert "within 2 s" in r.stdout, _report(r)
    assert "killing rank 1" in r.stderr, _report(r)
    assert r.elapsed < 60, _report(r)  # not the silent rank's 120 s


def test_launcher_environment_and_exit_status():
    r = _launch(3, "worker_environment", EXIT_STATUS_OF_RANK_2="7")
    assert r.returncode == 7, _report(r)
    for rank in range(3):
        assert f"rank {rank} size 3 device cpu local {rank} nvls 0" in r.stdout, _report(r)
    r = _launch(2, "worker_environment")
    assert r.returncode == 0, _report(r)


def test_launcher_refuses_bad_arguments():
    r = run_python("-m", "arrayx.distributed.run", "-n", "0", "x.py", timeout=60)
    assert r.returncode == 2 and "-n must be at least 1" in r.stderr


@pytest.mark.skipif(xp._devices.cuda_device_count() > 0, reason="this host has a GPU")
def test_launcher_on_cuda_without_gpus_says_why():
    r = run_python("-m", "arrayx.distributed.run", "-n", "2", "--device", "cuda", "x.py",
                   timeout=60)
    assert r.returncode == 1 and "need 2 GPUs" in r.stderr and "--device cpu" in r.stderr


# ---- one process: a job of one rank, and argument errors --------------------------------

@pytest.fixture
def single(monkeypatch):
    for k in list(os.environ):
        if k.startswith("ARRAYX_DISTRIBUTED_"):
            monkeypatch.delenv(k)
    dist.shutdown()
    dist.init()
    yield
    dist.shutdown()


def test_without_the_launcher_a_process_is_a_job_of_one(single):
    assert (dist.rank(), dist.size()) == (0, 1)
    h = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_array_equal(dist.all_reduce(xp.asarray(h, device="cpu"), "prod"), h, device=CPU)
    assert_array_equal(dist.all_gather(xp.asarray(h, device="cpu")), h[None], device=CPU)
    assert_array_equal(dist.reduce_scatter(xp.asarray(h[:1], device="cpu")), h[0], device=CPU)
    dist.barrier()


def test_bad_arguments(single):
    x = xp.ones(3, device="cpu")
    with pytest.raises(TypeError, match="arrayx array"):
        dist.all_reduce(np.ones(3))
    with pytest.raises(TypeError, match="op must be a str"):
        dist.all_reduce(x, op=None)
    with pytest.raises(ValueError, match="op must be one of"):
        dist.all_reduce(x, op="mean")
    with pytest.raises(TypeError, match="complex arrays can only be summed"):
        dist.all_reduce(xp.ones(3, dtype=xp.complex64, device="cpu"), "max")
    with pytest.raises(ValueError, match="first axis of length"):
        dist.reduce_scatter(xp.ones((2, 3), device="cpu"))
    with pytest.raises(ValueError, match="first axis of length"):
        dist.reduce_scatter(xp.asarray(1.0, device="cpu"))
    with pytest.raises(ValueError, match="not a rank"):
        dist.broadcast(x, root=1)
    with pytest.raises(TypeError, match="root must be an int"):
        dist.broadcast(x, root=0.0)
    with pytest.raises(TypeError, match="root must be an int"):
        dist.broadcast(x, root=True)
    with pytest.raises(ValueError, match="this rank itself"):
        dist.send(x, 0)
    with pytest.raises(ValueError, match="not a rank"):
        dist.recv((3,), xp.float64, -1)
    with pytest.raises(TypeError, match="dtype"):
        dist.recv((3,), "float16", 0)
    with pytest.raises(ValueError, match="negative dimension"):
        dist.recv((-1,), xp.float64, 0)
    with pytest.raises(TypeError, match="shape"):
        dist.recv("3", xp.float64, 0)
    with pytest.raises(ValueError, match="timeout"):
        dist.init(timeout=0)


def test_bad_environment(monkeypatch):
    dist.shutdown()
    monkeypatch.setenv("ARRAYX_DISTRIBUTED_SIZE", "2")
    monkeypatch.setenv("ARRAYX_DISTRIBUTED_RANK", "2")
    with pytest.raises(ValueError, match="do not describe a rank"):
        dist.init()
    monkeypatch.setenv("ARRAYX_DISTRIBUTED_RANK", "1")
    monkeypatch.delenv("ARRAYX_DISTRIBUTED_ADDRESS", raising=False)
    with pytest.raises(ValueError, match="ARRAYX_DISTRIBUTED_ADDRESS"):
        dist.init()
    monkeypatch.setenv("ARRAYX_DISTRIBUTED_ADDRESS", "nowhere")
    with pytest.raises(ValueError, match="host:port"):
        dist.init()
    monkeypatch.setenv("ARRAYX_DISTRIBUTED_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="ARRAYX_DISTRIBUTED_TIMEOUT"):
        dist.init()
    assert not dist.is_initialized()


# ---- the GPU path's plumbing, with stand-ins for the device and NCCL ---------------------

class _StandInArray:
    """What the GPU path uses of a CudaArray, over host memory."""

    def __init__(self, h):
        self.h, self.dtype, self.shape, self.size, self.ndim = h, h.dtype, h.shape, h.size, h.ndim
        self.nbytes, self.c_contig, self.ptr, self.buffer = (h.nbytes, h.flags.c_contiguous,
                                                             h.ctypes.data, h)


class _StandInBackend:
    kind = "cuda"

    def copy(self, a):
        return _StandInArray(a.h.copy(order="C"))

    def astype(self, a, dtype, copy):
        return _StandInArray(a.h.astype(dtype))

    def empty(self, device, shape, dtype):
        return _StandInArray(np.empty(shape, dtype))


class _StandInDevice:
    kind, index, backend = "cuda", 0, _StandInBackend()


class _StandInNccl:
    """libnccl for a job of one rank: every call copies `count` elements of its type, so a
    wrong count, type or pointer shows as a wrong result (or a fault). `state` is what
    ncclCommGetAsyncError reports."""

    SIZES = {0: 1, 1: 1, 2: 4, 3: 4, 4: 8, 5: 8, 7: 4, 8: 8}  # ncclDataType_t -> bytes
    STREAM = 0x1234

    def __init__(self):
        self.reductions = []  # (ncclDataType_t, ncclRedOp_t) of each reduction
        self.state = 0
        self.aborts = 0

    def _copy(self, send, recv, count, datatype, stream):
        assert stream.value == self.STREAM
        ctypes.memmove(recv, send, count * self.SIZES[datatype])
        return 0

    def ncclCommInitRankConfig(self, handle, size, uid, rank, config):
        return 7  # ncclInProgress: the caller polls

    def ncclCommGetAsyncError(self, comm, state):
        ctypes.cast(state, ctypes.POINTER(ctypes.c_int))[0] = self.state
        return 0

    def ncclAllReduce(self, send, recv, count, datatype, op, comm, stream):
        self.reductions.append((datatype, op))
        return self._copy(send, recv, count, datatype, stream)

    ncclReduceScatter = ncclAllReduce

    def ncclAllGather(self, send, recv, count, datatype, comm, stream):
        return self._copy(send, recv, count, datatype, stream)

    def ncclBroadcast(self, send, recv, count, datatype, root, comm, stream):
        return self._copy(send, recv, count, datatype, stream)

    def ncclCommAbort(self, comm):
        self.aborts += 1
        return 0

    def ncclCommFinalize(self, comm):
        return 0

    def ncclCommDestroy(self, comm):
        return 0

    def ncclGetUniqueId(self, uid):
        return 0

    def ncclGetErrorString(self, code):
        return b"stand-in error"

    def ncclGetLastError(self, comm):
        return b""


@pytest.fixture
def stand_in_gpu(single, monkeypatch):
    """(stand-in libnccl, stand-in cuda device); `events_done` says whether the GPU has
    finished the work before an event."""
    from types import SimpleNamespace

    from arrayx.cuda.engine import runtime
    from arrayx.distributed import _nccl
    lib = _StandInNccl()
    lib.events_done = True
    stream = SimpleNamespace(ptr=lib.STREAM, device_index=0,
                             encoder=SimpleNamespace(flush=lambda: None, hold=lambda *o: None))
    event = SimpleNamespace(record=lambda s: event, query=lambda: lib.events_done)
    monkeypatch.setattr(_nccl, "_lib", lib)
    monkeypatch.setattr(runtime, "get_device", lambda index=0: SimpleNamespace(stream=stream))
    monkeypatch.setattr(runtime, "Event", lambda device: event)
    return lib, _StandInDevice()


def _stand_in_array(h, device):
    from arrayx._array_object import Array
    return Array._new(_StandInArray(h), device)


def test_gpu_path_counts_types_and_ops_with_a_stand_in_nccl(stand_in_gpu, rng):
    """The calls the GPU path makes (element counts, NCCL types and ops, output shapes and
    dtypes) on every dtype and layout, with the device and NCCL replaced by host stand-ins."""
    lib, device = stand_in_gpu
    for dtype in ALL_DTYPES:
        for shape in [(), (0,), (7,), (3, 4), (2, 0, 3), "view"]:
            h = make_data(dtype, (7, 9), rng)[1:, ::2] if shape == "view" else \
                make_data(dtype, shape, rng)
            x = _stand_in_array(h, device)
            for op in distributed_ops(dtype):
                for got in (dist.all_reduce(x, op),
                            dist.reduce_scatter(_stand_in_array(h[None], device), op)):
                    assert got._device is device and got.dtype == h.dtype
                    np.testing.assert_array_equal(got._data.h, h)
            np.testing.assert_array_equal(dist.all_gather(x)._data.h, h[None])
            np.testing.assert_array_equal(dist.broadcast(x, 0)._data.h, h)
    # bool: uint8 (1) with max (2) for sum and min (3) for prod; int16 goes as int32 (2);
    # complex as twice as many floats (7, 8)
    assert {(1, 2), (1, 3)} <= set(lib.reductions) and (2, 0) in lib.reductions
    assert not {t for t, _ in lib.reductions} - {0, 1, 2, 3, 4, 5, 7, 8}


def test_a_collective_unfinished_past_the_timeout_is_aborted_and_raised(stand_in_gpu):
    lib, device = stand_in_gpu
    x = _stand_in_array(np.ones(5), device)
    dist.all_reduce(x)
    dist._current().nccl.timeout = 0.3
    lib.events_done = False  # the GPU never gets past the next collective
    start = time.monotonic()
    with pytest.raises(dist.DistributedError, match="did not finish on the GPU within 0.3 s"):
        dist.all_reduce(x)
        while time.monotonic() - start < 10:  # the watchdog raises here, in this thread
            time.sleep(0.01)
    assert time.monotonic() - start < 5 and lib.aborts == 1
    with pytest.raises(dist.DistributedError, match="communicator was aborted"):
        dist.all_reduce(x)


@pytest.mark.parametrize("when", ["queued", "on the GPU"])
def test_an_asynchronous_nccl_error_is_raised(stand_in_gpu, when):
    lib, device = stand_in_gpu
    x = _stand_in_array(np.ones(5), device)
    dist.all_reduce(x)
    lib.events_done = False
    if when == "queued":
        lib.state = 6  # ncclRemoteError, found when the next call is queued
        with pytest.raises(dist.DistributedError, match="all_reduce failed: ncclRemoteError"):
            dist.all_reduce(x)
    else:
        with pytest.raises(dist.DistributedError, match="failed on the GPU: ncclRemoteError"):
            dist.all_reduce(x)
            lib.state = 6  # while the collective runs: the watchdog raises it in this thread
            start = time.monotonic()
            while time.monotonic() - start < 10:
                time.sleep(0.01)
    assert lib.aborts == 1


def test_a_communicator_that_never_becomes_ready_is_aborted(stand_in_gpu):
    lib, device = stand_in_gpu
    lib.state = 7  # ncclInProgress for ever: initialisation waits for a peer that never comes
    dist._current().timeout = 0.3
    with pytest.raises(dist.DistributedError, match="ncclCommInitRankConfig did not complete "
                                                    "within 0.3 s"):
        dist.all_reduce(_stand_in_array(np.ones(5), device))
    assert lib.aborts == 1


if __name__ == "__main__":
    globals()[sys.argv[1]]()
