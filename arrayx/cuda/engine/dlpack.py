"""DLPack export and import for CUDA arrays (pure ctypes; no copy either way).

This module reads and writes the DLPack structures; it makes no array and runs no kernel: the
device copies an export or import may need are made by the caller (primitives.py), and
array.array_from_dlpack wraps imported memory in an array.

Export: ``to_dlpack`` builds a ``DLManagedTensorVersioned`` (or the legacy ``DLManagedTensor``
when the consumer asks for no ``max_version`` of 1 or more) in memory owned by a Python holder that
keeps the array (so its buffer) alive; the tensor's deleter drops the holder, and the capsule's
destructor calls the deleter if the capsule was never consumed. Both are C functions
(``dlpack_deleters``), so that a consumer refusing a capsule keeps its own exception. Stream semantics
follow the standard: work queued on arrayx's stream is made visible to the consumer's `stream`
with an event and ``cuStreamWaitEvent`` (no host synchronisation).

Import: ``import_memory`` asks the producer for a capsule on arrayx's stream (so the producer
orders its pending work before ours), reads the DLTensor, renames the capsule to
``used_dltensor*`` and returns the memory with an owner that calls the producer's deleter when
the last arrayx array (and the last queued kernel) using it is gone. Producers with only
``__cuda_array_interface__`` are imported through that, the owner being the producer object.
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import runtime
from . import dlpack_deleters, transfer

kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
_IS_COPIED = 2  # DLManagedTensorVersioned.flags bit: the tensor is a copy made for the consumer


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _Deleter)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _Deleter), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_CODES = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}
_FROM_CODE = {(6, 8): np.dtype(bool), (1, 8): np.dtype(np.uint8), (1, 16): np.dtype(np.uint16),
              (1, 32): np.dtype(np.uint32), (1, 64): np.dtype(np.uint64),
              (0, 8): np.dtype(np.int8), (0, 16): np.dtype(np.int16), (0, 32): np.dtype(np.int32),
              (0, 64): np.dtype(np.int64), (2, 32): np.dtype(np.float32),
              (2, 64): np.dtype(np.float64), (5, 64): np.dtype(np.complex64),
              (5, 128): np.dtype(np.complex128)}

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_NAME = b"dltensor"
_NAME_V = b"dltensor_versioned"
_USED = b"used_dltensor"
_USED_V = b"used_dltensor_versioned"

class _Holder:
    __slots__ = ("array", "managed", "shape", "strides")


_api.Py_IncRef.argtypes = [ctypes.py_object]


def _dtype_code(dt: np.dtype) -> DLDataType:
    return DLDataType(_CODES[dt.kind], dt.itemsize * 8, 1)


def _sync_to_consumer(a, stream):
    """Order arrayx's queued work before the consumer's `stream` (standard's stream argument)."""
    dev = runtime.get_device(a.device_index)
    ours = dev.stream
    ours.encoder.commit()
    if stream == -1:
        return
    d = runtime.driver()
    handle = {None: 1, 1: 1, 2: 2}.get(stream, stream)  # None/1: legacy default, 2: per-thread
    if handle == ours.ptr:
        return
    ev = runtime.check(d.cuEventCreate(2), "cuEventCreate", dev)
    runtime.check(d.cuEventRecord(ev, ours.handle), "cuEventRecord", dev)
    runtime.check(d.cuStreamWaitEvent(d.CUstream(handle), ev, 0), "cuStreamWaitEvent", dev)
    d.cuEventDestroy(ev)  # destroying a recorded event is safe: resources freed on completion


def to_dlpack(a, stream=None, max_version=None, dl_device=None, copy=None):
    """A PyCapsule over the memory of the device array `a` (the standard's ``__dlpack__``), or
    for ``dl_device`` (kDLCPU, 0) NumPy's capsule over a host copy (`a` C-contiguous then).
    `copy` True: `a` is a copy the caller made for this export (the tensor is flagged so)."""
    if dl_device is not None and tuple(dl_device) != (kDLCUDA, a.device_index):
        if tuple(dl_device)[0] == kDLCPU:
            if copy is False:
                raise BufferError("a CUDA array cannot be exported to the CPU without a copy")
            host = transfer.to_host(a)
            return host.__dlpack__(max_version=max_version) if max_version else host.__dlpack__()
        raise BufferError(f"cannot export to DLPack device {tuple(dl_device)}")
    _sync_to_consumer(a, stream)
    return export_capsule(a, max_version is not None and tuple(max_version)[0] >= 1, copy)


def export_capsule(a, versioned: bool, copy):
    """The capsule of `a`'s memory as it is, after the caller ordered the consumer's stream."""
    h = _Holder()
    h.array = a
    nd = a.ndim
    h.shape = (ctypes.c_int64 * max(1, nd))(*a.shape)
    h.strides = (ctypes.c_int64 * max(1, nd))(*a.strides)
    m = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    h.managed = m
    t = m.dl_tensor
    t.data = a.buffer.ptr or None
    t.device = DLDevice(kDLCUDA, a.device_index)
    t.ndim = nd
    t.dtype = _dtype_code(a.dtype)
    t.shape = ctypes.cast(h.shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(h.strides, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = a.offset * a.dtype.itemsize
    layout = DLManagedTensorVersioned if versioned else DLManagedTensor
    name = _NAME_V if versioned else _NAME
    deleter, destructor = dlpack_deleters.functions(layout.manager_ctx.offset, name)
    m.deleter = _Deleter(deleter)
    m.manager_ctx = id(h)
    if versioned:
        m.version = DLPackVersion(1, 0)
        m.flags = _IS_COPIED if copy else 0
    _api.Py_IncRef(h)  # the deleter's reference: it keeps the array, the structs and the shape
    return _api.PyCapsule_New(ctypes.addressof(m), name, destructor)


class _ImportOwner:
    """Calls the producer's deleter once arrayx no longer uses the memory."""

    __slots__ = ("addr", "deleter", "producer")

    def __init__(self, addr, deleter, producer):
        self.addr = addr
        self.deleter = deleter
        self.producer = producer

    def __del__(self):
        if self.deleter:
            try:
                self.deleter(self.addr)
            except Exception:
                pass


def dlpack_device(a):
    return (kDLCUDA, a.device_index)


def import_memory(dev, obj):
    """(address, shape, dtype, strides in elements or None, owner) of the memory of a CUDA
    DLPack producer (CuPy, PyTorch, JAX...) or ``__cuda_array_interface__`` object on the
    runtime.Device `dev`, ordered before the work arrayx queues next. `owner` must live as long
    as the memory is used."""
    stream = dev.stream
    stream.encoder.commit()
    if hasattr(obj, "__dlpack__"):
        try:
            cap = obj.__dlpack__(stream=stream.ptr, max_version=(1, 0))
        except TypeError:
            cap = obj.__dlpack__(stream=stream.ptr)
        return _from_capsule(cap, dev.index, obj)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cai(obj, dev)
    raise TypeError(f"{type(obj).__name__} is neither a DLPack producer nor a CUDA array")


def _from_capsule(cap, device_index, producer):
    if _api.PyCapsule_IsValid(cap, _NAME_V):
        ptr = _api.PyCapsule_GetPointer(cap, _NAME_V)
        m = DLManagedTensorVersioned.from_address(ptr)
        if m.version.major > 1:
            raise BufferError(f"unsupported DLPack version {m.version.major}.{m.version.minor}")
        used = _USED_V
    elif _api.PyCapsule_IsValid(cap, _NAME):
        ptr = _api.PyCapsule_GetPointer(cap, _NAME)
        m = DLManagedTensor.from_address(ptr)
        used = _USED
    else:
        raise BufferError("not a DLPack capsule (or already consumed)")
    t = m.dl_tensor
    if t.device.device_type not in (kDLCUDA, kDLCUDAManaged):
        raise BufferError(f"DLPack tensor is on device type {t.device.device_type}, not CUDA")
    if t.device.device_id != device_index:
        raise BufferError(f"DLPack tensor is on cuda:{t.device.device_id}, not cuda:{device_index}")
    key = (t.dtype.code, t.dtype.bits)
    if t.dtype.lanes != 1 or key not in _FROM_CODE:
        raise BufferError(f"unsupported DLPack dtype code={t.dtype.code} bits={t.dtype.bits} lanes={t.dtype.lanes}")
    dt = _FROM_CODE[key]
    nd = t.ndim
    shape = tuple(t.shape[i] for i in range(nd))
    strides = tuple(t.strides[i] for i in range(nd)) if t.strides else None
    deleter = m.deleter
    _api.PyCapsule_SetName(cap, used)
    owner = _ImportOwner(ptr, deleter if deleter else None, producer)
    return (t.data or 0) + t.byte_offset, shape, dt, strides, owner


def _from_cai(obj, dev):
    cai = obj.__cuda_array_interface__
    dt = np.dtype(cai["typestr"])
    shape = tuple(cai["shape"])
    ptr = cai["data"][0] or 0
    st = cai.get("strides")
    strides = None
    if st is not None:
        if any(s % dt.itemsize for s in st):
            raise BufferError("strides are not a multiple of the item size")
        strides = tuple(s // dt.itemsize for s in st)
    their = cai.get("stream")
    if their is not None and cai.get("version", 0) >= 3:
        d = runtime.driver()
        ev = runtime.check(d.cuEventCreate(2), "cuEventCreate", dev)
        runtime.check(d.cuEventRecord(ev, d.CUstream(their)), "cuEventRecord", dev)
        dev.stream.wait_event(_EventRef(ev))
        d.cuEventDestroy(ev)
    return ptr, shape, dt, strides, obj


class _EventRef:
    __slots__ = ("handle",)

    def __init__(self, h):
        self.handle = h
