"""The C functions behind arrayx's DLPack capsules: the tensors' deleters and the capsules'
destructors, compiled by numba's CPU target (numba-cuda depends on numba) on first export.

They cannot be Python callbacks. A consumer that refuses a capsule (NumPy refusing a CUDA
tensor) drops it while its own exception is pending; a ctypes callback run then returns into C
with that exception set, which Python turns into a SystemError that replaces the consumer's
error. These functions call no Python code: a deleter drops one reference to the tensor's holder
(``Py_DecRef``, which a pending exception does not disturb: finalisers save and restore it), and
a destructor calls the deleter only if the capsule was never consumed (its name unchanged).
A deleter takes the GIL itself: a consumer may free its tensor from a thread that does not hold
it.
"""

from __future__ import annotations

import ctypes

import numpy as np

_api = ctypes.pythonapi


def _c_function(name, restype, *argtypes):
    """A CPython C-API function as a plain function pointer numba can call."""
    address = ctypes.cast(getattr(_api, name), ctypes.c_void_p).value
    return ctypes.CFUNCTYPE(restype, *argtypes)(address)


# C strings that live as long as the process: the destructors compare capsule names with them.
_NAMES = {name: ctypes.create_string_buffer(name) for name in (b"dltensor", b"dltensor_versioned")}

_compiled: dict = {}


def _compile(manager_ctx_offset: int, capsule_name: bytes):
    """(deleter, capsule destructor) addresses for a managed-tensor struct whose ``manager_ctx``
    (a PyObject* holding one reference) sits at `manager_ctx_offset`."""
    from numba import carray, cfunc, types

    gil_ensure = _c_function("PyGILState_Ensure", ctypes.c_int)
    gil_release = _c_function("PyGILState_Release", None, ctypes.c_int)
    decref = _c_function("Py_DecRef", None, ctypes.c_void_p)
    is_valid = _c_function("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    get_pointer = _c_function("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_void_p)
    name = ctypes.addressof(_NAMES[capsule_name])
    word = manager_ctx_offset // 8

    # Not cache=True: the C-API pointers and the name's address above are this process's
    # constants compiled into the code (numba refuses to cache such "dynamic globals"), and a
    # cached cfunc would still start numba's CPU target, the larger part of the first compile.

    @cfunc(types.void(types.voidptr), nopython=True)
    def deleter(managed):
        holder = carray(managed, (word + 1,), np.intp)[word]
        state = gil_ensure()
        decref(holder)
        gil_release(state)

    deleter_address = deleter.address
    release = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(deleter_address)

    @cfunc(types.void(types.voidptr), nopython=True)
    def destructor(capsule):
        if is_valid(capsule, name):  # still "dltensor[_versioned]": never consumed
            release(get_pointer(capsule, name))

    return deleter, destructor


def functions(manager_ctx_offset: int, capsule_name: bytes) -> tuple[int, int]:
    """(deleter address, capsule destructor address) for one managed-tensor layout; compiled
    once a process, kept for the process (a consumer may free a tensor at exit)."""
    key = (manager_ctx_offset, capsule_name)
    pair = _compiled.get(key)
    if pair is None:
        pair = _compiled[key] = _compile(manager_ctx_offset, capsule_name)
    return pair[0].address, pair[1].address
