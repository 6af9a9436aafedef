"""CUDA devices, primary contexts, streams and events: the engine's objects, assembled here.

A ``Device`` is put together in this module from the layers below it: its context (driver.py),
the encoder of each of its streams (encoder.py) and its caching allocator (allocator.py, given
the driver calls it needs), so none of those modules knows of the others or of this one.

``device_count()`` is called by ``arrayx._devices`` while arrayx is being imported: this module
imports nothing heavy at import time and never imports numba. A device whose context a kernel
fault poisoned is marked lost (driver.raise_error); every later use of it raises
``CudaContextLost`` with the original cause.
"""

from __future__ import annotations

import os
import threading
import weakref

from .allocator import Allocator, OutOfDeviceMemory
# The kernel families and the package reach the driver layer through this module: its checking,
# its errors and the codes of the errors that poison a context.
from .driver import (STICKY_ERRORS, CudaContextLost, CudaError, CudaKernelError,  # noqa: F401
                     check, driver, error_name, loaded_driver, raise_error)
from .encoder import Encoder, all_encoders

_count: int | None = None
_init_error: str | None = None
_devices: list = []
_lock = threading.Lock()
# Work for a thread of its own while the process's first device creates its context, joined
# before that device is returned (the package registers the loading of cuBLAS, cuSOLVER and
# cuFFT): the context's creation and a dlopen both wait in C with the GIL released, so the loads
# overlap it instead of adding to the first library call. Joined, so that no thread is left
# loading when the process exits (a daemon inside dlopen then crashes it) or loads its first
# kernel module. Each entry is called on the creating thread and returns the work, so that its
# imports happen there: one on the helper could wait for a module the creating thread imports.
beside_first_context: list = []
_beside_started = False

_OUT_OF_MEMORY = 2  # CUDA_ERROR_OUT_OF_MEMORY: the allocator frees its cache and retries


def _init():
    """cuInit once; sets the device count (0 with a reason when no driver / GPU)."""
    global _count, _init_error
    if _count is not None:
        return _count
    with _lock:
        if _count is not None:
            return _count
        if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
            _init_error = "NUMBA_ENABLE_CUDASIM=1: the simulator has no driver"
            _count = 0
            return 0
        try:
            d = driver()
        except ImportError as e:
            _init_error = f"cuda-bindings is not installed ({e})"
            _count = 0
            return 0
        try:
            err = d.cuInit(0)[0]
        except Exception as e:  # driver library missing: cuda.pathfinder raises
            _init_error = f"no CUDA driver ({e})"
            _count = 0
            return 0
        if err != 0:
            _init_error = f"cuInit failed: {error_name(err)}"
            _count = 0
            return 0
        res = d.cuDeviceGetCount()
        _count = int(res[1]) if res[0] == 0 else 0
        if _count == 0:
            _init_error = "the driver reports no CUDA device"
        _devices.extend([None] * _count)
    return _count


def device_count() -> int:
    """Number of CUDA devices (0 without a driver or GPU). Cheap after the first call."""
    if _count is not None:
        return _count
    return _init()


def unavailable_reason() -> str | None:
    """Why ``device_count()`` is 0, if it is."""
    _init()
    return _init_error


class Device:
    """Per-device state: primary context, compute capability, streams, allocator, kernels."""

    def __init__(self, index: int):
        d = driver()
        self.index = index
        self.lost = None  # message once a sticky error poisoned the context
        self.handle = check(d.cuDeviceGet(index), "cuDeviceGet")
        self.context = check(d.cuDevicePrimaryCtxRetain(self.handle), "cuDevicePrimaryCtxRetain")
        check(d.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        attr = d.CUdevice_attribute
        get = lambda a: int(check(d.cuDeviceGetAttribute(a, self.handle), "cuDeviceGetAttribute"))
        self.compute_capability = (get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                                   get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
        self.multiprocessor_count = get(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        self.max_threads_per_block = get(attr.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        self.max_grid_x = get(attr.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)
        self.name = check(d.cuDeviceGetName(256, self.handle), "cuDeviceGetName").split(b"\0")[0].decode()
        self.total_memory = int(check(d.cuDeviceTotalMem(self.handle), "cuDeviceTotalMem"))
        self._default_stream = None
        self.local = _PerThread()  # .stream: the calling thread's current stream (None: default)
        self._allocator = None
        self.modules = {}  # kernel key -> Kernel loaded in this context

    def __repr__(self):
        return f"<arrayx.cuda device {self.index}: {self.name}, sm_{self.compute_capability[0]}{self.compute_capability[1]}>"

    def activate(self):
        """Make this device's primary context current on the calling thread."""
        _tls_activate(self)

    @property
    def default_stream(self) -> "Stream":
        """The stream every thread queues on unless it entered another (``with stream:``)."""
        if self._default_stream is None:
            with _lock:
                if self._default_stream is None:
                    self._default_stream = Stream(self.index, _default=True)
        return self._default_stream

    @property
    def stream(self) -> "Stream":
        """The stream the calling thread queues work for this device on now."""
        return self.local.stream or self.default_stream

    @property
    def allocator(self) -> Allocator:
        if self._allocator is None:
            self._allocator = _device_allocator(self)
        return self._allocator

    def synchronize(self):
        """Wait for every stream of this device, surfacing asynchronous errors."""
        for enc in all_encoders(self.index):
            enc.synchronize()
        self.activate()
        d = driver()
        err = d.cuCtxSynchronize()[0]
        if err != 0:
            raise_error(err, "cuCtxSynchronize", self)


def _device_allocator(dev: Device) -> Allocator:
    """The caching allocator of `dev`, over the driver's allocation calls in its context."""
    d = driver()

    def raw_alloc(nbytes):
        dev.activate()
        res = d.cuMemAlloc(nbytes)
        if res[0] != 0:
            if int(res[0]) == _OUT_OF_MEMORY:
                raise OutOfDeviceMemory()
            raise_error(res[0], f"cuMemAlloc({nbytes})", dev)
        return int(res[1])

    def raw_free(ptr):
        dev.activate()
        err = d.cuMemFree(ptr)[0]
        if err != 0:
            raise_error(err, "cuMemFree", dev)

    def reclaim(wait):
        for enc in all_encoders(dev.index):
            if wait:
                enc.synchronize()
            else:
                enc.poll()

    def device_free():
        return mem_get_info(dev.index)[0]

    return Allocator(dev.index, dev.total_memory, raw_alloc, raw_free, reclaim, device_free)


class _PerThread(threading.local):
    """A device's per-thread state: the stream a ``with stream:`` block of this thread entered
    (None outside one) and the streams it left to enter it."""
    stream = None

    def __init__(self):
        self.entered = []


class _ThreadState(threading.local):
    current = None  # the Device whose context is current on this thread


_tls = _ThreadState()


def _tls_activate(dev):
    if _tls.current is not dev:
        if dev.lost:
            raise CudaContextLost(dev.lost)
        check(driver().cuCtxSetCurrent(dev.context), "cuCtxSetCurrent")
        _tls.current = dev


def get_device(index: int = 0) -> Device:
    """The runtime state of CUDA device `index` (created, with its context, on first use), made
    current on the calling thread."""
    if index >= 0:
        try:
            dev = _devices[index]
        except IndexError:
            dev = None
        if dev is not None:
            if _tls.current is not dev:
                _tls_activate(dev)
            return dev
    return _create_device(index)


def _create_device(index: int) -> Device:
    count = _init()
    if not 0 <= index < count:
        raise ValueError(f"CUDA device {index} does not exist ({count} available"
                         + (f": {_init_error}" if _init_error else "") + ")")
    with _lock:
        dev = _devices[index]
        if dev is None:
            helper = _start_beside_first_context()
            try:
                dev = _devices[index] = Device(index)
            finally:
                if helper is not None:
                    helper.join()
            _tls.current = dev
    _tls_activate(dev)
    return dev


def _start_beside_first_context():
    """The thread running ``beside_first_context``, started once a process (None after)."""
    global _beside_started
    if _beside_started or not beside_first_context:
        return None
    _beside_started = True
    work = []
    for prepare in beside_first_context:
        try:
            work.append(prepare())
        except Exception:  # nothing to report here: what failed raises again at its first use
            pass

    def run():
        for fn in work:
            try:
                fn()
            except Exception:  # likewise
                pass
    helper = threading.Thread(target=run, name="arrayx-beside-first-context")
    helper.start()
    return helper


# Stream.external's wrappers, one per (device index, handle) while any is referenced, so that
# the wrappers of one foreign stream share one encoder and one scratch. Weak values: an entry,
# and with its wrapper the scratch, goes with the last reference to the wrapper; a plain dict
# would keep every foreign stream's scratch (and encoder) for the process.
_external_streams: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_external_lock = threading.Lock()


class Stream:
    """A CUDA stream of one device, with its encoder (the queue of launches and their buffers).

    ``Stream(device)`` creates a new non-blocking stream; ``with stream:`` makes it the stream that
    the calling thread queues work for that device on (per device and per thread, as PyTorch's
    and CuPy's current stream). Any number of threads may queue work on one stream: its encoder
    takes their launches in turn (encoder.py).

    ``scratch``: persistent device scratch of kernel families on this stream, each under a key of
    its own (reduce.SPLIT_SCRATCH, scan.STATUS_SCRATCH), created on first use and zeroed once on
    the stream. Launches on one stream run in order, so a family may leave state in its scratch
    for the next launch (counters reset to zero, epoch-tagged status words); a scratch shared by
    two streams would see their launches interleave. It lives and dies with this object: a new
    stream starts with none, even where the driver reuses the handle of a destroyed one; the
    default stream, held by its Device, keeps its scratch for the process.
    ``scratch_lock``: held by a family that must queue its launches in the order it took their
    state from the scratch (scan.row_scan), by threads sharing this stream.
    """

    def __init__(self, device: int = 0, _default: bool = False, _handle=None):
        d = driver()
        dev = get_device(device)
        self.device = dev
        self.device_index = dev.index
        self._owned = _handle is None
        if _handle is None:
            _handle = check(d.cuStreamCreate(d.CUstream_flags.CU_STREAM_NON_BLOCKING.value), "cuStreamCreate")
        self.handle = _handle
        self.ptr = int(_handle)
        self.encoder = Encoder(self)
        self.scratch = {}
        self.scratch_lock = threading.Lock()

    @classmethod
    def external(cls, device: int, handle: int) -> "Stream":
        """Wrap a stream created by another library (not destroyed by arrayx). While a wrapper
        of (device, handle) is referenced, this returns that one: one encoder per stream, so
        work queued through any wrapper reaches the stream in the order it was queued (two
        encoders would submit their batches in either order), and one scratch. The handle must
        name the same stream while a wrapper of it lives."""
        key = (int(device), int(handle))
        with _external_lock:
            stream = _external_streams.get(key)
            if stream is None:
                stream = _external_streams[key] = cls(device, _handle=driver().CUstream(handle))
        return stream

    def __cuda_stream__(self):
        """The CUDA stream protocol: (version, handle)."""
        return (0, self.ptr)

    def __repr__(self):
        return f"<arrayx.cuda.Stream 0x{self.ptr:x} on cuda:{self.device_index}>"

    def __enter__(self):
        local = self.device.local
        local.entered.append(local.stream)
        local.stream = self
        return self

    def __exit__(self, *exc):
        local = self.device.local
        local.stream = local.entered.pop()

    def synchronize(self):
        """Submit queued work and wait for it; raises the asynchronous error of a kernel if any."""
        self.encoder.synchronize()

    def wait_event(self, event: "Event"):
        check(driver().cuStreamWaitEvent(self.handle, event.handle, 0), "cuStreamWaitEvent", self.device)

    def wait_stream(self, other: "Stream"):
        """Make future work on this stream wait for work queued so far on `other`."""
        other.encoder.commit()
        ev = Event(self.device_index)
        ev.record(other)
        self.wait_event(ev)

    def __del__(self):
        # The encoder's keep lists hold the buffers of queued launches (the scratch included: it
        # is passed as `keep` to every launch that uses it) only while the encoder lives, and it
        # goes with this object's attributes, scratch too, once __del__ has returned. So the
        # queued work is waited for here first.
        try:
            d = loaded_driver()
            if d is None or self.handle is None:
                return
            if not self._owned:
                # a foreign stream may be destroyed by now, or hold work not ours to wait for
                self.encoder.drain()
                return
            try:
                self.encoder.synchronize()
            finally:
                self.encoder.close()
                d.cuStreamDestroy(self.handle)
        except Exception:
            pass


class Event:
    """A CUDA event (timing disabled unless ``timing=True``)."""

    __slots__ = ("handle", "device_index", "__weakref__")

    def __init__(self, device: int = 0, timing: bool = False):
        d = driver()
        get_device(device)
        flags = 0 if timing else d.CUevent_flags.CU_EVENT_DISABLE_TIMING.value
        self.handle = check(d.cuEventCreate(flags), "cuEventCreate")
        self.device_index = device

    def record(self, stream: Stream | None = None):
        if stream is None:
            stream = get_device(self.device_index).stream
        stream.encoder.commit()
        check(driver().cuEventRecord(self.handle, stream.handle), "cuEventRecord")
        return self

    def query(self) -> bool:
        """True when the work before the record has finished."""
        err = driver().cuEventQuery(self.handle)[0]
        if err == 0:
            return True
        if int(err) == 600:  # CUDA_ERROR_NOT_READY
            return False
        raise_error(err, "cuEventQuery", _devices[self.device_index])

    def synchronize(self):
        err = driver().cuEventSynchronize(self.handle)[0]
        if err != 0:
            raise_error(err, "cuEventSynchronize", _devices[self.device_index])

    def elapsed_ms(self, end: "Event") -> float:
        return float(check(driver().cuEventElapsedTime(self.handle, end.handle), "cuEventElapsedTime"))

    def __del__(self):
        try:
            d = loaded_driver()
            if d is not None:
                d.cuEventDestroy(self.handle)
        except Exception:
            pass


def current_stream(device: int = 0) -> Stream:
    return get_device(device).stream


def synchronize(device: int | None = None):
    """Wait for all queued work (on every initialised device, or one), raising async errors."""
    if device is not None:
        get_device(device).synchronize()
        return
    for dev in list(_devices):
        if dev is not None:
            _tls_activate(dev)
            dev.synchronize()


def mem_get_info(device: int = 0):
    """(free, total) bytes as the driver sees them."""
    get_device(device)
    free, total = check(driver().cuMemGetInfo(), "cuMemGetInfo")
    return int(free), int(total)
