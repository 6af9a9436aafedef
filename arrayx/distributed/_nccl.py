"""NCCL through ctypes on libnccl.so.2, on arrayx's CUDA streams.

Why ctypes and not nccl4py: the dozen calls used here (init, abort, the collectives, send and
receive, the asynchronous error query) are plain C with a stable ABI, so the binding costs one
small module and no dependency beyond the library itself (pip ``nvidia-nccl-cu13``). nccl4py 0.6
pins cuda-core ~= 1.0 and, through its cu13 extra, nvidia-cutlass-dsl, and its compiled bindings
expect the NCCL release they were built against; ``ncclConfig_t`` is versioned instead (NCCL
reads ``size``/``version`` and fills the fields an older caller lacks with defaults), so the
short prefix below works with every NCCL since 2.19.

Communicators are non-blocking (``blocking = 0``): every call returns at once, possibly with
``ncclInProgress``, and ``wait_ready`` polls ``ncclCommGetAsyncError`` until the communicator is
ready, for at most the group's timeout, then aborts it (``ncclCommAbort``) and raises. Work
already on the GPU (a collective whose peer died) is watched by ``Watchdog``: each collective
records an event after itself; one still pending past the timeout, or an asynchronous error,
aborts the communicator (which ends its kernels) and raises ``DistributedError`` in the thread
that queued the collective.

Multicast (NVLink SHARP) is switched off before the library loads (``NCCL_NVLS_ENABLE=0``): on
the shared machines arrayx is tested on, a multicast object can take the host's GPUs out of
service.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import threading
import time
from pathlib import Path

import numpy as np

from ._sockets import DistributedError

SUCCESS, IN_PROGRESS = 0, 7
_RESULT_NAMES = {0: "ncclSuccess", 1: "ncclUnhandledCudaError", 2: "ncclSystemError",
                 3: "ncclInternalError", 4: "ncclInvalidArgument", 5: "ncclInvalidUsage",
                 6: "ncclRemoteError", 7: "ncclInProgress", 8: "ncclTimeout"}

REDUCE_OPS = {"sum": 0, "prod": 1, "max": 2, "min": 3}

# ncclDataType_t of the dtypes NCCL reduces natively; the others are carried as described in
# ``reduction_view``.
_TYPES = {np.dtype(np.int8): 0, np.dtype(np.uint8): 1, np.dtype(np.int32): 2,
          np.dtype(np.uint32): 3, np.dtype(np.int64): 4, np.dtype(np.uint64): 5,
          np.dtype(np.float32): 7, np.dtype(np.float64): 8}
BYTES = 1  # ncclUint8: data movement (gather, broadcast, send) of any dtype as its bytes

_CONFIG_MAGIC = 0xCAFEBEEF
_CONFIG_VERSION = 21900  # the layout of _Config: NCCL_VERSION(2, 19, 0)
_UNDEF_INT = -(2 ** 31)


class _UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_ubyte * 128)]


class _Config(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("magic", ctypes.c_uint), ("version", ctypes.c_uint),
                ("blocking", ctypes.c_int), ("cgaClusterSize", ctypes.c_int),
                ("minCTAs", ctypes.c_int), ("maxCTAs", ctypes.c_int),
                ("netName", ctypes.c_char_p), ("splitShare", ctypes.c_int),
                ("trafficClass", ctypes.c_int)]


_lib = None
_lib_lock = threading.Lock()


def _library_paths():
    env = os.environ.get("ARRAYX_NCCL_LIBRARY")
    if env:
        yield env
    spec = importlib.util.find_spec("nvidia.nccl") if importlib.util.find_spec("nvidia") else None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        yield str(Path(folder) / "lib" / "libnccl.so.2")
    yield "libnccl.so.2"


def library():
    """libnccl.so.2 with its argument types declared (loaded once)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        os.environ["NCCL_NVLS_ENABLE"] = "0"
        tried = []
        for path in _library_paths():
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError as e:
                tried.append(f"{path}: {e}")
        else:
            raise ImportError("arrayx.distributed needs NCCL for arrays on a GPU: pip install "
                              "'arrayx[distributed]' (nvidia-nccl-cu13), or set "
                              "ARRAYX_NCCL_LIBRARY to libnccl.so.2. Tried: " + "; ".join(tried))
        p, i, sz, res = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_int
        signatures = {
            "ncclGetVersion": [ctypes.POINTER(i)],
            "ncclGetUniqueId": [ctypes.POINTER(_UniqueId)],
            "ncclCommInitRankConfig": [ctypes.POINTER(p), i, _UniqueId, i, ctypes.POINTER(_Config)],
            "ncclCommGetAsyncError": [p, ctypes.POINTER(res)],
            "ncclCommAbort": [p],
            "ncclCommFinalize": [p],
            "ncclCommDestroy": [p],
            "ncclAllReduce": [p, p, sz, i, i, p, p],
            "ncclReduceScatter": [p, p, sz, i, i, p, p],
            "ncclAllGather": [p, p, sz, i, p, p],
            "ncclBroadcast": [p, p, sz, i, i, p, p],
            "ncclSend": [p, sz, i, i, p, p],
            "ncclRecv": [p, sz, i, i, p, p],
        }
        for name, argtypes in signatures.items():
            fn = getattr(lib, name)
            fn.argtypes = argtypes
            fn.restype = res
        lib.ncclGetErrorString.argtypes = [res]
        lib.ncclGetErrorString.restype = ctypes.c_char_p
        lib.ncclGetLastError.argtypes = [p]
        lib.ncclGetLastError.restype = ctypes.c_char_p
        _lib = lib
    return _lib


def version() -> int:
    v = ctypes.c_int()
    _check(library().ncclGetVersion(ctypes.byref(v)), "ncclGetVersion")
    return v.value


def unique_id() -> bytes:
    uid = _UniqueId()
    _check(library().ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
    return bytes(uid)


def _message(code: int, comm=None) -> str:
    lib = library()
    text = f"{_RESULT_NAMES.get(code, code)}: {lib.ncclGetErrorString(code).decode()}"
    last = lib.ncclGetLastError(comm) if comm is not None else None
    return f"{text} ({last.decode()})" if last else text


def _check(code: int, what: str):
    if code not in (SUCCESS, IN_PROGRESS):
        raise DistributedError(f"{what} failed: {_message(code)}")


def reduction_view(dtype: np.dtype, op: str):
    """(dtype NCCL computes in, NCCL op, elements per element) for reducing `dtype` with `op`.

    bool is uint8 with max for sum (logical or) and min for prod (and), so a result stays 0 or
    1; complex sums are sums of their real and imaginary parts (two floats an element); int16
    and uint16 are reduced widened to int32 (None: the caller widens and narrows), which keeps
    every op's result in the low 16 bits exact, wrapping as NumPy's does.
    """
    if dtype.kind == "b":
        return np.dtype(np.uint8), REDUCE_OPS[{"sum": "max", "prod": "min"}.get(op, op)], 1
    if dtype.kind == "c":
        return np.dtype(np.float32 if dtype.itemsize == 8 else np.float64), REDUCE_OPS[op], 2
    if dtype not in _TYPES:
        return None
    return dtype, REDUCE_OPS[op], 1


def nccl_type(dtype: np.dtype) -> int:
    return _TYPES[dtype]


class Communicator:
    """One non-blocking NCCL communicator of this rank on one device."""

    def __init__(self, uid: bytes, size: int, rank: int, device_index: int, timeout: float):
        from ..cuda.engine import runtime
        self.runtime = runtime
        self.device_index = device_index
        self.timeout = timeout
        self.failure = None  # the message once the communicator was aborted
        self.lock = threading.RLock()
        runtime.get_device(device_index)  # its context current on this thread
        lib = library()
        config = _Config(size=ctypes.sizeof(_Config), magic=_CONFIG_MAGIC,
                         version=_CONFIG_VERSION, blocking=0, cgaClusterSize=_UNDEF_INT,
                         minCTAs=_UNDEF_INT, maxCTAs=_UNDEF_INT, netName=None,
                         splitShare=_UNDEF_INT, trafficClass=_UNDEF_INT)
        handle = ctypes.c_void_p()
        code = lib.ncclCommInitRankConfig(ctypes.byref(handle), size,
                                          _UniqueId.from_buffer_copy(uid), rank,
                                          ctypes.byref(config))
        _check(code, "ncclCommInitRankConfig")
        self.handle = handle
        self.wait_ready("ncclCommInitRankConfig")
        self.watchdog = Watchdog(self)

    def async_error(self) -> int:
        """The communicator's state (ncclSuccess, ncclInProgress or an error). Under the lock:
        an aborted communicator is freed, and the watchdog may abort it from its thread."""
        with self.lock:
            self.check_usable()
            state = ctypes.c_int()
            code = library().ncclCommGetAsyncError(self.handle, ctypes.byref(state))
            return code if code != SUCCESS else state.value

    def wait_ready(self, what: str):
        """Poll the communicator until the last call has been queued (or initialisation has
        finished); abort it and raise after the timeout or on an error."""
        deadline = time.monotonic() + self.timeout
        pause = 1e-6
        while True:
            state = self.async_error()
            if state == SUCCESS:
                return
            if state != IN_PROGRESS:
                self.abort(f"{what} failed: {_message(state, self.handle)}")
                raise DistributedError(self.failure)
            if time.monotonic() > deadline:
                self.abort(f"{what} did not complete within {self.timeout:g} s "
                           f"(ARRAYX_DISTRIBUTED_TIMEOUT): a peer is dead or did not call it")
                raise DistributedError(self.failure)
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)

    def abort(self, message: str):
        with self.lock:
            if self.failure is None:
                self.failure = message
                library().ncclCommAbort(self.handle)

    def check_usable(self):
        if self.failure is not None:
            raise DistributedError(f"the NCCL communicator was aborted: {self.failure}")

    def call(self, what: str, fn, args, stream, holds):
        """Queue one NCCL call on `stream` (a runtime.Stream) behind the work queued there."""
        stream.encoder.flush()
        with self.lock:
            self.check_usable()
            code = fn(*args, self.handle, ctypes.c_void_p(stream.ptr))
            if code not in (SUCCESS, IN_PROGRESS):
                self.abort(f"{what} failed: {_message(code, self.handle)}")
                raise DistributedError(self.failure)
        self.wait_ready(what)
        stream.encoder.hold(*holds)
        self.watchdog.watch(what, stream)

    def destroy(self):
        self.watchdog.stop()
        if self.failure is None:
            lib = library()
            self.runtime.get_device(self.device_index)
            if lib.ncclCommFinalize(self.handle) in (SUCCESS, IN_PROGRESS):
                try:
                    self.wait_ready("ncclCommFinalize")
                except DistributedError:
                    return  # aborted by wait_ready
            lib.ncclCommDestroy(self.handle)
            self.failure = "the group was shut down"


class _AsyncFailure(DistributedError):
    """Raised in a thread that queued a collective which the watchdog had to abort."""

    message = "an NCCL collective failed"

    def __init__(self, *args):
        super().__init__(*(args or (self.message,)))


class Watchdog:
    """Watches the collectives on the GPU (see the module docstring)."""

    _POLL_S = 0.05

    def __init__(self, comm: Communicator):
        self.comm = comm
        self.pending = []  # [event, start time, what, thread id]
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread = None

    def watch(self, what: str, stream):
        event = self.comm.runtime.Event(stream.device_index).record(stream)
        with self.lock:
            self.pending.append((event, time.monotonic(), what, threading.get_ident()))
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="arrayx-nccl-watchdog",
                                               daemon=True)
                self.thread.start()

    def stop(self):
        self.stopped.set()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join()

    def _run(self):
        self.comm.runtime.get_device(self.comm.device_index)
        while not self.stopped.wait(self._POLL_S):
            with self.lock:
                while self.pending and self.pending[0][0].query():
                    self.pending.pop(0)
                oldest = self.pending[0] if self.pending else None
            if oldest is None:
                continue
            _, start, what, thread_id = oldest
            try:
                state = self.comm.async_error()
            except DistributedError:  # aborted by the thread that queued the work
                return
            if state not in (SUCCESS, IN_PROGRESS):
                message = f"{what} failed on the GPU: {_message(state, self.comm.handle)}"
            elif time.monotonic() - start > self.comm.timeout:
                message = (f"{what} did not finish on the GPU within {self.comm.timeout:g} s "
                           f"(ARRAYX_DISTRIBUTED_TIMEOUT): a peer is dead or did not call it")
            else:
                continue
            self.comm.abort(message)
            failure = type("DistributedError", (_AsyncFailure,), {"message": message})
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                                       ctypes.py_object(failure))
            return
