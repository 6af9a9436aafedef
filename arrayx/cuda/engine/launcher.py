"""Kernel launches through the driver with pre-packed arguments, bypassing numba's dispatcher.

A launch packs its values with one ``struct.pack_into`` call (a format per kernel, built once)
into an ``ArgumentBlock`` and passes the block to ``cuLaunchKernel`` as its ``extra`` array
(CU_LAUNCH_PARAM_BUFFER_POINTER / _BUFFER_SIZE) by address, so cuda.bindings does no per-argument
conversion, the largest part of a launch's host cost when it is given a tuple of values and
types. The driver copies the parameters at launch, so the block serves the next launch at once.
Each encoder owns one block, and every launch of a stream goes through its encoder's lock: the
block needs no lock of its own, and one kernel may be launched on several streams at once.

Two launch paths, chosen by ``set_launch_api`` (benchmarks/runtime_bench.py measures both):
'bindings' (cuda.bindings.driver.cuLaunchKernel) and 'ctypes' (libcuda's cuLaunchKernel through
ctypes). Launches go through the stream's encoder, which keeps the buffers alive until the GPU is
done with them and reports which kernel faulted (encoder.py).
"""

from __future__ import annotations

import ctypes
import struct

from .driver import driver, raise_error

# struct codes per argument type; every slot is aligned to its own size
_CODES = {"int8": "b", "uint8": "B", "bool": "B", "int16": "h", "uint16": "H", "int32": "i",
          "uint32": "I", "int64": "q", "uint64": "Q", "float32": "f", "float64": "d"}

_api = "bindings"
_cu_launch = None

# The most parameter bytes a kernel takes (CUDA's classic limit; arrayx's take a few hundred).
MAX_PARAM_BYTES = 4096
# cuda.h: CU_LAUNCH_PARAM_END, CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE
_PARAM_END, _PARAM_BUFFER_POINTER, _PARAM_BUFFER_SIZE = 0, 1, 2


def _ctypes_launcher():
    global _cu_launch
    if _cu_launch is None:
        lib = ctypes.CDLL("libcuda.so.1")
        f = lib.cuLaunchKernel
        u = ctypes.c_uint
        f.argtypes = [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p, ctypes.c_void_p,
                      ctypes.c_void_p]
        f.restype = ctypes.c_int
        _cu_launch = f
    return _cu_launch


def set_launch_api(api: str) -> str:
    """'bindings' or 'ctypes'; returns the previous choice."""
    global _api
    if api not in ("bindings", "ctypes"):
        raise ValueError(api)
    old = _api
    if api == "ctypes":
        _ctypes_launcher()
    _api = api
    return old


def launch_api() -> str:
    return _api


class ArgumentBlock:
    """The parameters of one launch at a time: 8 bytes holding their size (the size_t that
    CU_LAUNCH_PARAM_BUFFER_SIZE points at), then the parameters; ``extra`` is the address of the
    ``extra`` array that hands both to cuLaunchKernel. Its owner launches through it one launch
    at a time (an encoder, under its lock)."""

    __slots__ = ("buffer", "_extra", "extra")

    def __init__(self):
        self.buffer = ctypes.create_string_buffer(8 + MAX_PARAM_BYTES)
        base = ctypes.addressof(self.buffer)
        self._extra = (ctypes.c_void_p * 5)(_PARAM_BUFFER_POINTER, base + 8, _PARAM_BUFFER_SIZE,
                                            base, _PARAM_END)
        self.extra = ctypes.addressof(self._extra)


class Kernel:
    """A loaded kernel with the packing format of its parameters."""

    def __init__(self, name, function, argtypes, device, module=None):
        self.name = name
        self.function = function
        self.function_ptr = int(function)
        self.device = device
        self.module = module
        self.argtypes = tuple(argtypes)
        # the size, then each parameter aligned to its own size; the size is the end of the last
        # one (the kernel's own parameter size: the driver refuses a launch given a padded one)
        fmt = "<Q"
        off = 0
        for t in self.argtypes:
            code = "Q" if t.endswith("*") else _CODES[t]
            size = struct.calcsize(code)
            pad = (-off) % size
            fmt += "x" * pad + code
            off += pad + size
        self.param_bytes = off
        if self.param_bytes > MAX_PARAM_BYTES:
            raise ValueError(f"kernel {name} takes {self.param_bytes} bytes of parameters, more "
                             f"than the {MAX_PARAM_BYTES} a launch passes")
        self.pack = struct.Struct(fmt).pack_into
        self._launch = driver().cuLaunchKernel

    def __repr__(self):
        return f"<arrayx kernel {self.name}>"

    def launch_raw(self, arguments: ArgumentBlock, grid, block, stream_handle, args, shared=0):
        """Pack `args` into `arguments` and call cuLaunchKernel now (no encoder bookkeeping)."""
        self.pack(arguments.buffer, 0, self.param_bytes, *args)
        if _api == "bindings":
            err = self._launch(self.function, grid, 1, 1, block, 1, 1, shared, stream_handle, 0,
                               arguments.extra)[0]
        else:
            err = _cu_launch(self.function_ptr, grid, 1, 1, block, 1, 1, shared,
                             int(stream_handle), None, arguments.extra)
        if err != 0:
            raise_error(err, f"launching kernel {self.name}", self.device)

    def __call__(self, stream, grid, block, args, keep, nbytes=0):
        """Queue a launch on `stream` (a runtime.Stream); `keep`: buffers it reads or writes;
        `nbytes`: bytes it touches (for the encoder's batch size and DIRECT_BYTES)."""
        if grid == 0:
            return
        enc = stream.encoder
        lock = enc.lock
        lock.acquire()  # not `with`: its __enter__/__exit__ calls cost more than the lock
        try:
            deferred = enc.deferred
            if deferred is not None and nbytes < enc.direct_bytes:
                deferred.append((self, grid, block, args))  # graph mode: captured at commit
            else:
                if deferred:  # a large launch in graph mode: what was recorded before it goes first
                    enc.flush()
                self.launch_raw(enc.arguments, grid, block, stream.handle, args)
            # The encoder's record of the launch (encoder.py), written here rather than through
            # a method: this is the per-op hot path.
            enc.keep.append((self, keep))
            enc.ops += 1
            enc.bytes += nbytes
            if enc.ops >= enc.batch_ops or enc.bytes >= enc.batch_bytes:
                enc.commit()
        finally:
            lock.release()
