"""cuFFT through ctypes (calls.py): the functions arrayx calls, their constants, and plans
cached per device and host thread (cuFFT supports one thread executing a plan at a time) and
keyed by transform and layout, least recently used out beyond
``PLAN_CACHE_SIZE``. Plans are made with auto-allocation off: each execution gets its work area
from arrayx's caching allocator as a temporary (so it returns to the cache, not to cuFFT)."""

from __future__ import annotations

from collections import OrderedDict
from ctypes import POINTER, c_int, c_longlong, c_size_t, c_void_p
from enum import IntEnum

from .calls import Library, PerThread


class Result(IntEnum):
    """cufftResult (cufft.h of CUDA 13, which dropped 0xA, 0xC and 0xF)."""
    CUFFT_SUCCESS = 0x0
    CUFFT_INVALID_PLAN = 0x1
    CUFFT_ALLOC_FAILED = 0x2
    CUFFT_INVALID_TYPE = 0x3
    CUFFT_INVALID_VALUE = 0x4
    CUFFT_INTERNAL_ERROR = 0x5
    CUFFT_EXEC_FAILED = 0x6
    CUFFT_SETUP_FAILED = 0x7
    CUFFT_INVALID_SIZE = 0x8
    CUFFT_UNALIGNED_DATA = 0x9
    CUFFT_INVALID_DEVICE = 0xB
    CUFFT_NO_WORKSPACE = 0xD
    CUFFT_NOT_IMPLEMENTED = 0xE
    CUFFT_NOT_SUPPORTED = 0x10
    CUFFT_MISSING_DEPENDENCY = 0x11
    CUFFT_NVRTC_FAILURE = 0x12
    CUFFT_NVJITLINK_FAILURE = 0x13
    CUFFT_NVSHMEM_FAILURE = 0x14


class Type(IntEnum):
    """cufftType (cufft.h): the transform and its precision (Z, D: double)."""
    R2C = 0x2A
    C2R = 0x2C
    C2C = 0x29
    D2Z = 0x6A
    Z2D = 0x6C
    Z2Z = 0x69


FORWARD, INVERSE = -1, 1  # CUFFT_FORWARD, CUFFT_INVERSE (cufft.h): the sign of the exponent

library = Library("cufft", Result, Result.CUFFT_ALLOC_FAILED)
# cufftHandle is int; streams and arrays are pointers; the 64-bit plan's sizes are long long.
_h, _p, _ll = c_int, c_void_p, c_longlong

create = library.function("cufftCreate", out=(_h,))
destroy = library.function("cufftDestroy", _h)
set_auto_allocation = library.function("cufftSetAutoAllocation", _h, c_int)
# (plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch) -> work bytes;
# n, inembed and onembed are host arrays of `rank` long longs.
make_plan_many64 = library.function(
    "cufftMakePlanMany64", _h, c_int, POINTER(_ll), POINTER(_ll), _ll, _ll, POINTER(_ll), _ll, _ll,
    c_int, _ll, out=(c_size_t,))
set_stream = library.function("cufftSetStream", _h, _p)
set_work_area = library.function("cufftSetWorkArea", _h, _p)
# (plan, idata, odata, direction) for complex to complex, (plan, idata, odata) otherwise
exec_c2c = library.function("cufftExecC2C", _h, _p, _p, c_int)
exec_z2z = library.function("cufftExecZ2Z", _h, _p, _p, c_int)
exec_r2c = library.function("cufftExecR2C", _h, _p, _p)
exec_d2z = library.function("cufftExecD2Z", _h, _p, _p)
exec_c2r = library.function("cufftExecC2R", _h, _p, _p)
exec_z2d = library.function("cufftExecZ2D", _h, _p, _p)
_ONE = c_longlong * 1  # the n, inembed, onembed of a 1-D plan

# Plans kept per device: enough for the layouts a program cycles through; a plan's work area is
# allocated per execution, so a cached plan holds only cuFFT's own state for it.
PLAN_CACHE_SIZE = 32

# per device and thread (cuFFT executes a plan for one thread at a time): an OrderedDict of
# plans, least recently used first
_caches = PerThread(lambda dev: OrderedDict())


class Plan:
    """A cuFFT plan; destroyed when the last reference goes, which the encoder holds until the
    GPU has finished every execution of it (an evicted plan may still be in flight)."""

    __slots__ = ("handle", "work_bytes")

    def __init__(self, handle: int, work_bytes: int):
        self.handle = handle
        self.work_bytes = work_bytes

    def __del__(self):
        try:
            destroy(self.handle)
        except Exception:
            pass


def plan_cache(dev) -> OrderedDict:
    """The calling thread's cached plans on the device, least recently used first."""
    return _caches.get(dev)


def plan(dev, fft_type: int, n: int, idist: int, odist: int, batch: int) -> Plan:
    """A 1-D plan of length `n` over `batch` rows, input rows `idist` elements apart and output
    rows `odist` apart (unit stride inside a row)."""
    cache = plan_cache(dev)
    key = (fft_type, n, idist, odist, batch)
    found = cache.get(key)
    if found is not None:
        cache.move_to_end(key)
        return found
    handle = create()
    try:
        set_auto_allocation(handle, 0)
        work = make_plan_many64(handle, 1, _ONE(n), _ONE(idist), 1, idist, _ONE(odist), 1, odist,
                                fft_type, batch)
    except Exception:
        destroy(handle)
        raise
    made = cache[key] = Plan(handle, work)
    while len(cache) > PLAN_CACHE_SIZE:
        cache.popitem(last=False)
    return made
