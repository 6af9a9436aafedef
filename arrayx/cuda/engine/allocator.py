"""Caching device-memory allocator, one per device.

Sizes are rounded into classes (tuning.py): at most 8 bytes come from a small pool of 8-byte slots
carved out of 16 KiB slabs; under 16 KiB, the next power of two (at least 16); above, a whole number
of 16 KiB pages. Freed blocks go to a cache keyed by size and are handed out again without a driver
call. A block is only ever freed here once the GPU has finished with it: the encoder holds the
buffers of queued kernels until their batch's event has completed (see encoder.py), so a cached
block can be reused by any stream at once. That is what makes the cache stream-ordered.

Limits: `memory_limit` (default ``tuning.MEMORY_FRACTION`` of the device's memory) caps the
bytes held from the driver (active + cached); `cache_limit` caps the cached bytes (oldest freed
first). When a request would pass the limit, or the driver says out of memory, the allocator
(1) reclaims buffers of finished GPU work, (2) frees its cache, (3) waits for the device's queued
work and retries once, then raises `MemoryError` naming the requested size and the current usage.
Nothing is left half-done, so the next operation works.

The driver calls are injected (``raw_alloc``/``raw_free``; runtime.Device builds them), so this
module knows nothing of the driver and its logic is tested without a GPU.
"""

from __future__ import annotations

import bisect
import threading
from collections import deque

from .tuning import BEST_FIT_SLACK_PAGES, MEMORY_FRACTION, PAGE_BYTES, SLAB_BYTES, SMALL_BYTES


def round_size(nbytes: int) -> int:
    """The size class of a request: 8 (small pool), a power of two below 16 KiB, else pages."""
    if nbytes <= SMALL_BYTES:
        return SMALL_BYTES
    if nbytes < PAGE_BYTES:
        return max(16, 1 << (nbytes - 1).bit_length())
    return -(-nbytes // PAGE_BYTES) * PAGE_BYTES


def fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


class OutOfDeviceMemory(Exception):
    """Raised by a raw_alloc when the driver reports out of memory."""


class Allocator:
    """Caching allocator over injected ``raw_alloc(nbytes) -> ptr`` / ``raw_free(ptr)``.

    ``reclaim(wait: bool)`` releases buffers held for finished (wait=False) or all queued
    (wait=True) GPU work; ``device_free()`` returns the driver's free bytes (for messages).
    """

    def __init__(self, device_index: int, total_bytes: int, raw_alloc, raw_free,
                 reclaim=None, device_free=None):
        self.device_index = device_index
        self.total_bytes = total_bytes
        self.memory_limit = int(total_bytes * MEMORY_FRACTION)
        self.cache_limit = self.memory_limit
        self._raw_alloc = raw_alloc
        self._raw_free = raw_free
        self._reclaim = reclaim
        self._device_free = device_free
        self._lock = threading.RLock()
        self._free: dict[int, list[int]] = {}      # size -> cached block pointers (LIFO)
        self._large_sizes: list[int] = []          # sorted page-multiple sizes with cached blocks
        self._lru: dict[int, int] = {}             # ptr -> size; insertion order = oldest freed first
        self._small_free: list[int] = []
        # Freed blocks are appended here without a lock (deque.append is atomic) and filed into
        # the cache by the next alloc/stats/trim: a free costs one append, and freeing from a
        # finaliser inside an allocation can never deadlock or corrupt the counters.
        self._returned: deque = deque()
        self.release = self._returned.append
        self._small_slabs: list[int] = []
        self.active = 0      # bytes handed out and not yet returned (size classes)
        self.peak = 0
        self.reserved = 0    # bytes held from the driver (active + cached + free small slots)
        self.cached = 0      # bytes of blocks in the cache
        self.n_alloc = 0
        self.n_cache_hits = 0
        self.n_driver_allocs = 0
        self.n_driver_frees = 0
        self.n_oom_recoveries = 0

    # ---- statistics ------------------------------------------------------------------------
    def stats(self) -> dict:
        with self._lock:
            self._file_returned()
        return {
            "active": self.active, "peak": self.peak, "cached": self.reserved - self.active,
            "reserved": self.reserved, "memory_limit": self.memory_limit,
            "cache_limit": self.cache_limit,
            "cache_hits": self.n_cache_hits, "driver_allocations": self.n_driver_allocs,
            "driver_frees": self.n_driver_frees, "oom_recoveries": self.n_oom_recoveries,
        }

    def reset_peak(self):
        with self._lock:
            self._file_returned()
            self.peak = self.active

    # ---- allocation ------------------------------------------------------------------------
    def alloc(self, nbytes: int):
        """Return (ptr, size_class) for at least `nbytes` bytes (nbytes > 0)."""
        if nbytes <= SMALL_BYTES:
            size = SMALL_BYTES
        elif nbytes < PAGE_BYTES:
            size = 1 << (nbytes - 1).bit_length()
            if size < 16:
                size = 16
        else:
            size = -(-nbytes // PAGE_BYTES) * PAGE_BYTES
        # acquire/release rather than `with`: this runs for every kernel output, and the with
        # statement's __enter__/__exit__ calls cost more than the lock itself
        lock = self._lock
        lock.acquire()
        try:
            ret = self._returned
            if ret:
                if ret[0][1] == size:
                    # Direct recycle, the steady state of a loop: the block returned first (its
                    # last user, GPU work included, is gone) has the class asked for. `active`
                    # and `peak` are unchanged: one block of this class out, one back.
                    self.n_cache_hits += 1
                    return ret.popleft()
                self._file_returned()
            if size == SMALL_BYTES:
                ptr = self._alloc_small()
            else:
                lst = self._free.get(size)
                if lst:  # the common case: an exact hit in the cache
                    ptr = lst.pop()
                    del self._lru[ptr]
                    if not lst and size >= PAGE_BYTES:
                        self._drop_large_size(size)
                    self.cached -= size
                    self.n_cache_hits += 1
                else:
                    ptr, size = self._from_cache(size)
                    if ptr is None:
                        ptr, size = self._alloc_new(size, nbytes)
            active = self.active + size
            self.active = active
            if active > self.peak:
                self.peak = active
            return ptr, size
        finally:
            lock.release()

    def _from_cache(self, size):
        if self._returned:
            self._file_returned()
        lst = self._free.get(size)
        if lst:
            ptr = lst.pop()
            del self._lru[ptr]
            if not lst and size >= PAGE_BYTES:
                self._drop_large_size(size)
            self.cached -= size
            self.n_cache_hits += 1
            return ptr, size
        if size >= PAGE_BYTES and self._large_sizes:
            # best fit among larger cached blocks, wasting at most a few pages (or half the block)
            i = bisect.bisect_left(self._large_sizes, size)
            if i < len(self._large_sizes):
                cand = self._large_sizes[i]
                if cand <= size + min(size, BEST_FIT_SLACK_PAGES * PAGE_BYTES):
                    return self._from_cache(cand)
        return None, size

    def _drop_large_size(self, size):
        i = bisect.bisect_left(self._large_sizes, size)
        if i < len(self._large_sizes) and self._large_sizes[i] == size:
            del self._large_sizes[i]

    def _alloc_new(self, size, nbytes):
        # Over the limit: first release what finished GPU work held, then (second pass) wait for
        # all queued work; after each, a cached block may fit, else cached blocks go back to the
        # driver, oldest first.
        for wait in (False, True):
            if self.reserved + size <= self.memory_limit:
                break
            if wait:
                self.n_oom_recoveries += 1
            if self._reclaim is not None:
                self._reclaim(wait)
                ptr, got = self._from_cache(size)
                if ptr is not None:
                    return ptr, got
            self._trim(max(0, self.memory_limit - size - (self.reserved - self.cached)))
        if self.reserved + size > self.memory_limit:
            self._raise_oom(nbytes, size, f"over the memory limit of {fmt_bytes(self.memory_limit)}")
        ptr = self._raw_alloc_or_recover(size, nbytes)
        self.n_driver_allocs += 1
        self.reserved += size
        return ptr, size

    def _raw_alloc_or_recover(self, size, nbytes):
        """The driver's allocation. When the driver is out of memory (other processes,
        fragmentation): release what queued work holds, free the whole cache, and retry once."""
        try:
            return self._raw_alloc(size)
        except OutOfDeviceMemory:
            self.n_oom_recoveries += 1
            self._release_everything()
            try:
                return self._raw_alloc(size)
            except OutOfDeviceMemory:
                self._raise_oom(nbytes, size, "the device is out of memory")

    def _release_everything(self):
        if self._reclaim is not None:
            self._reclaim(True)
        self._trim(0)

    def _raise_oom(self, nbytes, size, why):
        free = ""
        if self._device_free is not None:
            try:
                free = f", device free {fmt_bytes(self._device_free())}"
            except Exception:
                pass
        raise MemoryError(
            f"arrayx: out of memory on cuda:{self.device_index}: cannot allocate "
            f"{fmt_bytes(nbytes)} ({nbytes} bytes, size class {size}): {why}; "
            f"active {fmt_bytes(self.active)}, cached {fmt_bytes(self.reserved - self.active)}, "
            f"limit {fmt_bytes(self.memory_limit)}{free}")

    def _alloc_small(self):
        if not self._small_free:
            if self.reserved + SLAB_BYTES > self.memory_limit:
                self._release_everything()
                if self.reserved + SLAB_BYTES > self.memory_limit:
                    self._raise_oom(SMALL_BYTES, SMALL_BYTES, f"over the memory limit of {fmt_bytes(self.memory_limit)}")
            slab = self._raw_alloc_or_recover(SLAB_BYTES, SMALL_BYTES)
            self.n_driver_allocs += 1
            self.reserved += SLAB_BYTES
            self._small_slabs.append(slab)
            self._small_free.extend(range(slab + SLAB_BYTES - SMALL_BYTES, slab - 1, -SMALL_BYTES))
        return self._small_free.pop()

    # ---- release ---------------------------------------------------------------------------
    def free(self, ptr: int, size: int):
        """Return a block (the GPU must be done with it: the encoder guarantees that)."""
        self._returned.append((ptr, size))

    def _file_returned(self):
        """File returned blocks into the cache (lock held)."""
        ret = self._returned
        free_lists = self._free
        lru = self._lru
        while ret:
            ptr, size = ret.popleft()
            self.active -= size
            if size == SMALL_BYTES:
                self._small_free.append(ptr)
                continue
            lst = free_lists.get(size)
            if lst is None:
                lst = free_lists[size] = []
            if not lst and size >= PAGE_BYTES:
                bisect.insort(self._large_sizes, size)
            lst.append(ptr)
            lru[ptr] = size
            self.cached += size
        if self.cached > self.cache_limit:
            self._trim(self.cache_limit)

    def _trim(self, target_cached: int):
        """Free the oldest cached blocks until at most `target_cached` bytes stay cached."""
        if self._returned:
            self._file_returned()
        while self.cached > target_cached and self._lru:
            ptr = next(iter(self._lru))
            size = self._lru.pop(ptr)
            lst = self._free[size]
            lst.remove(ptr)
            if not lst and size >= PAGE_BYTES:
                self._drop_large_size(size)
            self.cached -= size
            self.reserved -= size
            self.n_driver_frees += 1
            self._raw_free(ptr)
        if target_cached == 0 and self._small_slabs and \
                len(self._small_free) == len(self._small_slabs) * (SLAB_BYTES // SMALL_BYTES):
            for slab in self._small_slabs:
                self._raw_free(slab)
                self.n_driver_frees += 1
                self.reserved -= SLAB_BYTES
            self._small_slabs.clear()
            self._small_free.clear()

    def clear_cache(self):
        """Return every cached block to the driver (after releasing finished GPU work)."""
        with self._lock:
            if self._reclaim is not None:
                self._reclaim(False)
            self._trim(0)

    def set_memory_limit(self, limit: int) -> int:
        """Set the cap on bytes held from the driver; returns the previous one."""
        with self._lock:
            old = self.memory_limit
            self.memory_limit = int(limit)
            if self.reserved > self.memory_limit:
                self._trim(max(0, self.memory_limit - (self.reserved - self.cached)))
            return old

    def set_cache_limit(self, limit: int) -> int:
        with self._lock:
            old = self.cache_limit
            self.cache_limit = int(limit)
            self._trim(self.cache_limit)
            return old
