"""cuFFT plans, cached per device and keyed by transform and layout, least recently used out
beyond ``PLAN_CACHE_SIZE``. Plans are made with auto-allocation off: each execution gets its work
area from arrayx's caching allocator as a temporary (so it returns to the cache, not to cuFFT)."""

from __future__ import annotations

from collections import OrderedDict

from .calls import bindings

# Plans kept per device: enough for the layouts a program cycles through; a plan's work area is
# allocated per execution, so a cached plan holds only cuFFT's own state for it.
PLAN_CACHE_SIZE = 32

_caches: dict = {}  # device index -> OrderedDict of plans, least recently used first


class Plan:
    """A cuFFT plan; destroyed when the last reference goes, which the encoder holds until the
    GPU has finished every execution of it (an evicted plan may still be in flight)."""

    __slots__ = ("handle", "work_bytes")

    def __init__(self, handle: int, work_bytes: int):
        self.handle = handle
        self.work_bytes = work_bytes

    def __del__(self):
        try:
            bindings("cufft").destroy(self.handle)
        except Exception:
            pass


def plan_cache(dev) -> OrderedDict:
    """The device's cached plans, least recently used first."""
    cache = _caches.get(dev.index)
    if cache is None:
        cache = _caches[dev.index] = OrderedDict()
    return cache


def plan(dev, fft_type: int, n: int, idist: int, odist: int, batch: int) -> Plan:
    """A 1-D plan of length `n` over `batch` rows, input rows `idist` elements apart and output
    rows `odist` apart (unit stride inside a row)."""
    cache = plan_cache(dev)
    key = (fft_type, n, idist, odist, batch)
    found = cache.get(key)
    if found is not None:
        cache.move_to_end(key)
        return found
    lib = bindings("cufft")
    handle = lib.create()
    try:
        lib.set_auto_allocation(handle, 0)
        work = lib.make_plan_many64(handle, 1, [n], [idist], 1, idist, [odist], 1, odist,
                                    fft_type, batch)
    except Exception:
        lib.destroy(handle)
        raise
    made = cache[key] = Plan(handle, int(work))
    while len(cache) > PLAN_CACHE_SIZE:
        cache.popitem(last=False)
    return made
