"""Kernel launches through the driver with pre-packed arguments, bypassing numba's dispatcher.

Each loaded kernel owns one argument block: a buffer with one slot per parameter and a ``void**``
array pointing at the slots, built once. A launch writes the values into the slots with one
``struct.pack_into`` call and passes the ``void**`` address to ``cuLaunchKernel`` as an int, so
cuda.bindings does no per-argument conversion, the largest part of a launch's host cost when it
is given a tuple of values and types. The driver copies the parameters at launch, so the block is
reused at once.

Two launch paths, chosen by ``set_launch_api`` (benchmarks/runtime_bench.py measures both):
'bindings' (cuda.bindings.driver.cuLaunchKernel) and 'ctypes' (libcuda's cuLaunchKernel through
ctypes). Launches go through the stream's encoder, which keeps the buffers alive until the GPU is
done with them and reports which kernel faulted (encoder.py).
"""

from __future__ import annotations

import ctypes
import struct
import threading

from .driver import driver, raise_error

# struct codes per argument type; every slot is aligned to its own size
_CODES = {"int8": "b", "uint8": "B", "bool": "B", "int16": "h", "uint16": "H", "int32": "i",
          "uint32": "I", "int64": "q", "uint64": "Q", "float32": "f", "float64": "d"}

_api = "bindings"
_cu_launch = None


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


class Kernel:
    """A loaded kernel with its pre-packed argument block."""

    def __init__(self, name, function, argtypes, device, module=None):
        self.name = name
        self.function = function
        self.function_ptr = int(function)
        self.device = device
        self.module = module
        self.argtypes = tuple(argtypes)
        fmt = "<"
        offsets = []
        off = 0
        for t in self.argtypes:
            code = "Q" if t.endswith("*") else _CODES[t]
            size = struct.calcsize(code)
            pad = (-off) % size
            fmt += "x" * pad + code
            off += pad
            offsets.append(off)
            off += size
        self._struct = struct.Struct(fmt)
        self._buf = ctypes.create_string_buffer(max(8, off))
        base = ctypes.addressof(self._buf)
        n = len(self.argtypes)
        self._ptrs = (ctypes.c_void_p * max(1, n))(*[base + o for o in offsets])
        self.params = ctypes.addressof(self._ptrs)
        self.pack = self._struct.pack_into
        self._launch = driver().cuLaunchKernel
        # the argument block is this kernel's one: threads launching it take turns
        self._lock = threading.Lock()

    def __repr__(self):
        return f"<arrayx kernel {self.name}>"

    def launch_raw(self, grid, block, stream_handle, args, shared=0):
        """Pack `args` and call cuLaunchKernel now (no encoder bookkeeping)."""
        with self._lock:
            self.pack(self._buf, 0, *args)
            if _api == "bindings":
                err = self._launch(self.function, grid, 1, 1, block, 1, 1, shared, stream_handle,
                                   self.params, 0)[0]
            else:
                err = _cu_launch(self.function_ptr, grid, 1, 1, block, 1, 1, shared,
                                 int(stream_handle), self.params, None)
        if err != 0:
            raise_error(err, f"launching kernel {self.name}", self.device)

    def __call__(self, stream, grid, block, args, keep, nbytes=0):
        """Queue a launch on `stream` (a runtime.Stream); `keep`: buffers it reads or writes;
        `nbytes`: bytes it touches (for the encoder's batch size and DIRECT_BYTES)."""
        if grid == 0:
            return
        enc = stream.encoder
        with enc.lock:
            deferred = enc.deferred
            if deferred is not None and nbytes < enc.direct_bytes:
                deferred.append((self, grid, block, args))  # graph mode: captured at commit
            else:
                if deferred:  # a large launch in graph mode: what was recorded before it goes first
                    enc.commit()
                self.launch_raw(grid, block, stream.handle, args)
            # The encoder's record of the launch (encoder.py), written here rather than through
            # a method: this is the per-op hot path.
            enc.keep.append((self, keep))
            enc.ops += 1
            enc.bytes += nbytes
            if enc.ops >= enc.batch_ops or enc.bytes >= enc.batch_bytes:
                enc.commit()
