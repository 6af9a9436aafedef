"""CUB's radix sort through cuda-cccl's ``cuda.compute`` (sort, argsort, unique and isin past one
short row: the block sort of kernels/sort/block.py takes those).

cuda.compute is imported on first use (it raises AttributeError without a GPU). Arrays are
handed to it as ``_Device`` views (pointer, dtype, size) rather than CudaArrays, because a built
algorithm keeps the last arrays it saw; their lifetimes are the encoder's (``calls.end``).
Temporary storage comes from arrayx's caching allocator (size query with temp_storage=None, then
the call), and every call runs on arrayx's current stream after the queued kernels are submitted
(``calls.begin``).

Built algorithms are cached per (device, algorithm, dtypes, order) in ``_algorithms``, and on
disk beside the kernel cache (compiler.cache_dir(), files ``cccl-<hash>.bin``) through
cuda.compute's ``serialize``/``deserialize``: a build compiles CUB through NVRTC (seconds each),
and cuda.compute itself caches builds only within a process, so without the disk copy every test
process and every program run would pay that again. The package ships the builds of the commonest
calls too (``prebuilt/cccl-sm_<cc>.zip``, members named as the disk files; made on a GPU by
``python -m arrayx.cuda.precompile --ship-libraries``): looked up after the disk cache, so a new
user's first sort loads one instead of building it. ``BUILD_SECONDS`` records the time of each
first build or load in this process.

Threads: a built algorithm holds the arguments of its current call (the arrays, the sizes) as its
own state between setting them and launching, so two threads calling it at once can launch one
with the other's arrays. ``_lock`` serialises each call (the query, the workspace, the launch:
host work of microseconds; the GPU work stays asynchronous on each caller's stream) and the builds.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import zipfile
from types import SimpleNamespace

from ..engine import compiler
from ..engine.array import CudaArray
from .calls import begin, device_workspace, end

_compute = None
_algorithms: dict = {}
_lock = threading.RLock()
BUILD_SECONDS: dict = {}  # "radix_sort float32->int64 ascending" -> seconds of its first build


def compute():
    """The ``cuda.compute`` module, imported on first use."""
    global _compute
    if _compute is None:
        try:
            import cuda.compute as cc
            cc.make_radix_sort  # raises AttributeError when the CUDA bindings are unavailable
        except (ImportError, AttributeError) as exc:
            raise ImportError(f"arrayx's CUDA sort, unique and isin need cuda-cccl (pip install "
                              f"'arrayx[cuda]' or 'cuda-cccl>=1.2.1,<1.3'): {exc}") from None
        _compute = cc
    return _compute


class _Device:
    """A contiguous device array as cuda.compute reads it: ``dtype``, ``size``, ``data.ptr`` (its
    fast path for the pointer) and the CUDA array interface (read while building)."""

    __slots__ = ("dtype", "size", "nbytes", "shape", "data")

    def __init__(self, a: CudaArray, dtype=None):
        self.dtype = a.dtype if dtype is None else dtype
        self.size = a.size
        self.shape = (a.size,)
        self.nbytes = a.nbytes
        self.data = SimpleNamespace(ptr=a.ptr)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.data.ptr, False),
                "version": 3, "strides": None}


def _device(a):
    return None if a is None else _Device(a)


def blob_name(cc: tuple, key: tuple) -> str:
    """The file name of the build `key` for compute capability `cc` (in the disk cache and in
    the shipped archive): the installed cuda-cccl's version is part of it, as its builds are
    read back only by the same version."""
    from importlib.metadata import version
    ident = repr((key, tuple(cc), version("cuda-cccl")))
    return f"cccl-{hashlib.sha256(ident.encode()).hexdigest()}.bin"


def shipped_archive_path(cc: tuple) -> str:
    return os.path.join(compiler.SHIPPED_DIR, f"cccl-sm_{cc[0]}{cc[1]}.zip")


_shipped: dict = {}  # cc -> the open shipped archive, or None when the package has none


def _read_shipped(cc: tuple, name: str) -> bytes | None:
    if not compiler.shipping_on():
        return None
    if cc not in _shipped:
        try:
            _shipped[cc] = zipfile.ZipFile(shipped_archive_path(cc))
        except (OSError, zipfile.BadZipFile):
            _shipped[cc] = None
    archive = _shipped[cc]
    try:
        return None if archive is None else archive.read(name)
    except KeyError:
        return None


def _read_disk(path: str | None) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except (OSError, TypeError):
        return None


def _deserialize(cc, blob: bytes | None):
    try:
        return None if blob is None else cc.deserialize(blob)
    except (ValueError, TypeError):
        return None


def _store(cc, path, algo):
    try:
        blob = cc.serialize(algo)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        pass  # the cache is an optimisation: an unwritable folder only costs the next build


def _algorithm(dev, key: tuple, label: str, make):
    """The built algorithm `key` on `dev`: from memory, the disk cache, the shipped builds, or
    built by `make` (the caller holds ``_lock``)."""
    algo = _algorithms.get((dev.index,) + key)
    if algo is None:
        cc = compute()
        start = time.perf_counter()
        capability = tuple(dev.compute_capability)
        name = blob_name(capability, key)
        folder = compiler.cache_dir()
        path = os.path.join(folder, name) if folder else None
        algo = _deserialize(cc, _read_disk(path)) or \
            _deserialize(cc, _read_shipped(capability, name))
        if algo is None:
            algo = make()
            if path:
                _store(cc, path, algo)
        BUILD_SECONDS.setdefault(label, time.perf_counter() - start)
        _algorithms[(dev.index,) + key] = algo
    return algo


def _run(dev, algo, stream, args: dict, buffers):
    """Query the temporary storage, allocate it from arrayx's allocator, run, and keep every
    buffer alive until the stream is past the call (the caller holds ``_lock``)."""
    nbytes = algo(temp_storage=None, **args)
    temp = device_workspace(dev, max(1, int(nbytes)))
    algo(temp_storage=_Device(temp), **args)
    end(stream, temp, *buffers)


def radix_sort(dev, keys_in: CudaArray, keys_out: CudaArray, values_in: CudaArray | None = None,
               values_out: CudaArray | None = None, descending: bool = False,
               end_bit: int | None = None) -> None:
    """Stable radix sort of the contiguous `keys_in` into `keys_out` (and `values_in` carried
    into `values_out`), on bits [0, end_bit) of the keys (all by default)."""
    cc = compute()
    stream = begin(dev)
    kin, kout, vin, vout = _Device(keys_in), _Device(keys_out), _device(values_in), _device(values_out)
    vdt = None if vin is None else vin.dtype
    order = cc.SortOrder.DESCENDING if descending else cc.SortOrder.ASCENDING
    label = f"radix_sort {kin.dtype}" + (f"->{vdt}" if vdt is not None else "") + \
        (" descending" if descending else " ascending")
    args = dict(d_in_keys=kin, d_out_keys=kout, d_in_values=vin, d_out_values=vout,
                num_items=keys_in.size, begin_bit=0, end_bit=end_bit, stream=stream)
    with _lock:
        algo = _algorithm(dev, ("radix_sort", kin.dtype.str, None if vdt is None else vdt.str,
                                descending), label,
                          lambda: cc.make_radix_sort(d_in_keys=kin, d_out_keys=kout,
                                                     d_in_values=vin, d_out_values=vout,
                                                     order=order))
        _run(dev, algo, stream, args, (keys_in, keys_out, values_in, values_out))
