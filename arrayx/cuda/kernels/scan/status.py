"""The row scan's tile status words: their layout, the kernel source that publishes and reads
them, and the per-stream area that holds them between launches.

A tile's status is flag 1 (aggregate: the tile's own total, no segment head in it) or 2
(inclusive prefix: complete, nothing before it matters), tagged with the launch's epoch
(flag + 4 x epoch, one more epoch a launch): the words of earlier launches read as not yet
published, so no launch clears the area. The tile counter (word 0) is never reset either: a
launch's tile ids count from the counter's value before it (`first`). Values of at most 32
bits share one 64-bit word with the flag (relaxed strong loads and stores: the word is
self-contained); wider and complex values are stored first and the flag released after them
(acquire loads).
"""

from __future__ import annotations

import numpy as np

from ...engine import copies
from ...engine.array import new_array

FLAG_AGGREGATE = 1
FLAG_PREFIX = 2
EPOCH_LIMIT = (1 << 30) - 1  # flag + 4 x epoch must fit the 32 flag bits of a one-word status
STATUS_HEAD = 2  # words before the tiles' statuses: the tile counter, x[mask]'s count
STATUS_SCRATCH = "scan status"  # (it, words a tile): a status area's key in Stream.scratch
_U64 = np.dtype("uint64")


def _lanes(D: np.dtype):
    """The value's lanes as stored in status words: (count, real lane dtype)."""
    if D.kind == "c":
        return 2, np.dtype("float32" if D == np.complex64 else "float64")
    return 1, D


def status_words(D: np.dtype) -> int:
    """uint64 words per tile: 1 when flag and value share a word, else flag + 2 value slots."""
    count, L = _lanes(D)
    return 1 if count == 1 and L.itemsize <= 4 else 1 + 2 * count


def _to_bits(L: np.dtype, v: str) -> str:
    """uint64 holding the bits of a lane value (zero-extended when narrower)."""
    if L.kind == "f":
        if L.itemsize == 4:
            return f"uint64(bitcast({v}, uint32(0)))"
        return f"bitcast({v}, uint64(0))"
    if L.itemsize < 8:
        return f"(uint64({v}) & uint64(0xffffffff))"
    return f"uint64({v})"


def _from_bits(L: np.dtype, w: str) -> str:
    if L.kind == "f":
        if L.itemsize == 4:
            return f"bitcast(uint32({w} & uint64(0xffffffff)), float32(0))"
        return f"bitcast({w}, float64(0))"
    return f"{L.name}({w})"


def status_source(D: np.dtype) -> str:
    """publish(t, flag, value) and read(t) -> (flag, value) of tile t's status word(s), flags
    tagged with the launch's epoch (e4) (a kernel's inner functions)."""
    count, L = _lanes(D)
    words = status_words(D)
    if words == 1:
        # flag and value in one word: relaxed (strong, L2-coherent) accesses suffice, the word
        # is self-contained and nothing else is read through it
        return f"""    def publish(t, fl, val):
        st_relaxed(status, int64({STATUS_HEAD}) + t,
                   (uint64(e4 + fl) << uint64(32)) | {_to_bits(L, 'val')})

    def read(t):
        w = ld_relaxed(status, int64({STATUS_HEAD}) + t)
        while (w >> uint64(32)) <= uint64(e4):
            w = ld_relaxed(status, int64({STATUS_HEAD}) + t)
        return int32((w >> uint64(32)) & uint64(3)), {_from_bits(L, 'w')}"""
    parts = ["val.real", "val.imag"] if count == 2 else ["val"]
    stores = "\n".join(f"        status[slot + {k}] = {_to_bits(L, p)}"
                       for k, p in enumerate(parts))
    loads = [_from_bits(L, f"ld_relaxed(status, slot + {k})") for k in range(count)]
    value = f"{D.name}(complex({loads[0]}, {loads[1]}))" if count == 2 else loads[0]
    return f"""    def publish(t, fl, val):
        base = int64({STATUS_HEAD}) + t * {words}
        slot = base + 1 + (0 if fl == {FLAG_AGGREGATE} else {count})
{stores}
        st_release(status, base, uint64(e4 + fl))

    def read(t):
        base = int64({STATUS_HEAD}) + t * {words}
        fl = ld_acquire(status, base)
        while fl <= uint64(e4):
            fl = ld_acquire(status, base)
        fl = fl & uint64(3)
        slot = base + 1 + (0 if fl == uint64({FLAG_AGGREGATE}) else {count})
        return int32(fl), {value}"""


class _StatusArea:
    """A stream's row-scan status words for one status size (words a tile): the tile counter,
    x[mask]'s count, then `tiles` tile statuses; `taken`: tile ids handed out so far (the
    counter's value), `epoch`: the next launch's."""

    __slots__ = ("array", "tiles", "taken", "epoch")


def status_area(stream, words: int, tiles: int):
    """(the status array, first tile id, 4 x epoch) for a launch of `tiles` tiles on `stream`,
    the current one (the caller holds its scratch_lock): launches on one stream run in order, so
    each finds the words of the ones before it complete and tagged with older epochs. A separate
    area per status size keeps every word of a tile's status in the same role (a flag word never
    holds a value). Grown (and zeroed, on the stream) by doubling; the old array is kept alive
    by the launches that used it."""
    key = (STATUS_SCRATCH, words)
    area = stream.scratch.get(key)
    if area is None or area.tiles < tiles or area.epoch > EPOCH_LIMIT:
        size = 1024 if area is None else area.tiles * (2 if area.tiles < tiles else 1)
        area = _StatusArea()
        area.tiles = max(tiles, size)
        dev = stream.device
        area.array = new_array(dev.index, (STATUS_HEAD + area.tiles * words,), _U64,
                               dev.allocator)
        copies.zero_scratch(stream, area.array)
        area.taken, area.epoch = 0, 1  # epoch 0 would match the zeroed words
        stream.scratch[key] = area
    first, e4 = area.taken, 4 * area.epoch
    area.taken += tiles
    area.epoch += 1
    return area.array, first, e4
