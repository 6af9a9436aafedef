"""The random primitive on the CPU: Philox4x32-10 rounds on NumPy arrays of counter blocks.

The bits are those ``_backend.RANDOM_STREAM`` defines, so the CUDA backend's kernels give the
same arrays. 32-bit words are held in uint64 arrays: a 32 x 32-bit product is exact there, its
high word a shift away. A round is ten in-place NumPy calls on contiguous arrays (strided
views of the products' halves are slower than the shift and the mask), over chunks of
`CHUNK_BLOCKS` counter blocks that keep the arrays in the cache; chunking changes nothing in the
result (each block depends only on its own counter). Each distribution's values are computed on
contiguous arrays and written into their interleaved places of the result directly.
"""

from __future__ import annotations

import numpy as np

from .._backend import (PHILOX_M0, PHILOX_M1, PHILOX_ROUNDS, PHILOX_W0, PHILOX_W1,
                        random_values_per_block)

# counter blocks a pass: arrays of 256 KiB, small enough to stay in the caches, large enough
# that NumPy's cost per call is small beside the work
CHUNK_BLOCKS = 1 << 15

_U64 = np.dtype("uint64")
_LOW32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)


def _round_keys(key: int) -> list:
    k0, k1 = key & 0xFFFFFFFF, key >> 32
    return [(np.uint64((k0 + r * PHILOX_W0) & 0xFFFFFFFF),
             np.uint64((k1 + r * PHILOX_W1) & 0xFFFFFFFF)) for r in range(PHILOX_ROUNDS)]


def philox4x32_10(blocks: np.ndarray, offset: int, key: int):
    """The output words (x0, x1, x2, x3), uint64 arrays of 32-bit values, of the counter
    blocks (block index, offset) for the uint64 array `blocks` under the 64-bit `key`."""
    blocks = np.asarray(blocks, _U64)
    x0 = blocks & _LOW32
    x1 = blocks >> _SHIFT32
    x2 = np.full(blocks.shape, offset & 0xFFFFFFFF, _U64)
    x3 = np.full(blocks.shape, offset >> 32, _U64)
    p0, p1 = np.empty_like(x0), np.empty_like(x0)
    m0, m1 = np.uint64(PHILOX_M0), np.uint64(PHILOX_M1)
    for k0, k1 in _round_keys(key):
        np.multiply(x0, m0, out=p0)
        np.multiply(x2, m1, out=p1)
        # x0' = hi(p1) ^ x1 ^ k0, x2' = hi(p0) ^ x3 ^ k1, x1' = lo(p1), x3' = lo(p0)
        np.right_shift(p1, _SHIFT32, out=x0)
        x0 ^= x1
        x0 ^= k0
        np.right_shift(p0, _SHIFT32, out=x2)
        x2 ^= x3
        x2 ^= k1
        np.bitwise_and(p1, _LOW32, out=x1)
        np.bitwise_and(p0, _LOW32, out=x3)
    return x0, x1, x2, x3


def mulhi_range(draws: np.ndarray, range_: int) -> np.ndarray:
    """floor(draws * range_ / 2**64) exactly, for uint64 `draws` and 1 <= range_ <= 2**64, in
    uint64 arithmetic (range_ - 1 fits in 64 bits; the product is split in 32-bit halves)."""
    m = range_ - 1
    a, b = draws >> _SHIFT32, draws & _LOW32
    if m <= 0xFFFFFFFF:
        # u * (m + 1) = (a * 2**32 + b) * (m + 1): every partial sum below stays under 2**64
        mm = np.uint64(m)
        low = b * mm + b
        return (a * mm + a + (low >> _SHIFT32)) >> _SHIFT32
    c, d = np.uint64(m >> 32), np.uint64(m & 0xFFFFFFFF)
    bd, ad, bc = b * d, a * d, b * c
    middle = (bd >> _SHIFT32) + (ad & _LOW32) + (bc & _LOW32)
    high = a * c + (ad >> _SHIFT32) + (bc >> _SHIFT32) + (middle >> _SHIFT32)
    low = (middle << _SHIFT32) | (bd & _LOW32)
    # u * (m + 1) = u * m + u: add u to the 128-bit product, carrying into the high word
    return high + ((low + draws) < draws).astype(_U64)


def _block_values(distribution, dtype, per_block, words, params, out=None):
    """The `per_block` values of each block, interleaved, from philox4x32_10's `words` (which
    this overwrites), into `out` (blocks * per_block elements of `dtype`) when given."""
    m = words[0].size
    if out is None:
        out = np.empty(m * per_block, dtype)
    values = out.reshape(m, per_block)
    if per_block == 2:
        x0, x1, x2, x3 = words  # the 64-bit draws d0 = x0 | x1 << 32, d1 likewise, in x1, x3
        for low, high in ((x0, x1), (x2, x3)):
            np.left_shift(high, _SHIFT32, out=high)
            high |= low
        words = (x1, x3)
    if distribution == "bits":
        for q, w in enumerate(words):
            values[:, q] = w
        return out
    if distribution == "integers":
        low, range_ = params
        for q, draws in enumerate(words):
            v = mulhi_range(draws, range_)
            v += np.uint64(low % 2**64)
            values[:, q] = v.astype(dtype)
        return out
    shift = np.uint64(8 if dtype.itemsize == 4 else 11)
    scale = dtype.type(2.0 ** -24 if dtype.itemsize == 4 else 2.0 ** -53)
    for w in words:
        np.right_shift(w, shift, out=w)
    if distribution in ("random", "uniform"):
        for q, w in enumerate(words):
            values[:, q] = w
        values *= scale
        if distribution == "uniform":
            _affine(values, params)
        return out
    # standard_normal / normal: uniforms in (0, 1]; pair j takes words 2j and 2j + 1
    u = []
    for w in words:
        w += np.uint64(1)
        uq = w.astype(dtype)
        uq *= scale
        u.append(uq)
    for j in range(per_block // 2):
        cos_t, sin_t = _box_muller(u[2 * j], u[2 * j + 1])
        values[:, 2 * j] = cos_t
        values[:, 2 * j + 1] = sin_t
    if distribution == "normal":
        _affine(values, params)
    return out


def _box_muller(u1, u2):
    """(r cos t, r sin t) with r = sqrt(-2 log u1), t = 2pi u2, in the arrays' float type;
    overwrites u1 and u2."""
    ftype = u1.dtype.type
    r = np.log(u1, out=u1)
    r *= ftype(-2.0)
    np.sqrt(r, out=r)
    t = np.multiply(u2, ftype(2.0 * np.pi), out=u2)
    cos_t = np.cos(t)
    cos_t *= r
    sin_t = np.sin(t, out=t)
    sin_t *= r
    return cos_t, sin_t


def _affine(values, params):
    """values <- b * values + a in place: one rounded product, then one rounded sum."""
    a, b = params
    ftype = values.dtype.type
    values *= ftype(b)
    values += ftype(a)


def random(device, shape, dtype, distribution, key, offset, params):
    """The `random` primitive (see _backend.PRIMITIVES and RANDOM_STREAM)."""
    dtype = np.dtype(dtype)
    n = 1
    for s in shape:
        n *= s
    per_block = random_values_per_block(distribution, dtype)
    out = np.empty(n, dtype)
    blocks_total = -(-n // per_block)
    with np.errstate(all="ignore"):
        for start in range(0, blocks_total, CHUNK_BLOCKS):
            stop = min(start + CHUNK_BLOCKS, blocks_total)
            words = philox4x32_10(np.arange(start, stop, dtype=_U64), offset, key)
            first, last = start * per_block, stop * per_block
            if last <= n:
                _block_values(distribution, dtype, per_block, words, params, out[first:last])
            else:  # the last, partial block
                out[first:] = _block_values(distribution, dtype, per_block, words,
                                            params)[:n - first]
    return out.reshape(shape)
