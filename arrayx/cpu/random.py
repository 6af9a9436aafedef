"""The random primitive on the CPU: Philox4x32-10 rounds on NumPy arrays of counter blocks.

The bits are those ``_backend.RANDOM_STREAM`` defines, so the CUDA backend's kernels give the
same arrays. 32-bit words are held in uint64 arrays: a 32 x 32-bit product is exact there, its
high word a shift away. Blocks are generated in chunks of `CHUNK_BLOCKS`, which bounds the
temporaries and changes nothing in the result (each block depends only on its own counter).
"""

from __future__ import annotations

import numpy as np

from .._backend import random_values_per_block

PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57   # round multipliers
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85   # key schedule (Weyl sequence) increments
PHILOX_ROUNDS = 10
CHUNK_BLOCKS = 1 << 18  # counter blocks a pass: about 20 MiB of temporaries

_U64 = np.dtype("uint64")
_LOW32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)


def philox4x32_10(blocks: np.ndarray, offset: int, key: int):
    """The output words (x0, x1, x2, x3), uint64 arrays of 32-bit values, of the counter
    blocks (block index, offset) for the uint64 array `blocks` under the 64-bit `key`."""
    m0, m1 = np.uint64(PHILOX_M0), np.uint64(PHILOX_M1)
    x0 = blocks & _LOW32
    x1 = blocks >> _SHIFT32
    x2 = np.full(blocks.shape, offset & 0xFFFFFFFF, _U64)
    x3 = np.full(blocks.shape, offset >> 32, _U64)
    k0, k1 = key & 0xFFFFFFFF, key >> 32
    for r in range(PHILOX_ROUNDS):
        p0 = x0 * m0
        p1 = x2 * m1
        x0 = (p1 >> _SHIFT32) ^ x1 ^ np.uint64((k0 + r * PHILOX_W0) & 0xFFFFFFFF)
        x2 = (p0 >> _SHIFT32) ^ x3 ^ np.uint64((k1 + r * PHILOX_W1) & 0xFFFFFFFF)
        x1 = p1 & _LOW32
        x3 = p0 & _LOW32
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


def _interleave(parts) -> np.ndarray:
    """Part q of block b at position b * P + q."""
    return np.stack(parts, axis=-1).reshape(-1)


def _block_values(distribution, dtype, words, params):
    """The P values of each block, interleaved (`words`: philox4x32_10's output)."""
    x0, x1, x2, x3 = words
    if dtype.itemsize == 4 and distribution != "integers":
        if distribution == "bits":
            return _interleave(words).astype(dtype)
        scale24 = np.float32(2.0 ** -24)
        if distribution in ("random", "uniform"):
            u = _interleave(words) >> np.uint64(8)
            u = u.astype(np.float32) * scale24
            return u if distribution == "random" else _affine(u, params)
        # standard_normal / normal: pairs (x0, x1) and (x2, x3), uniforms in (0, 1]
        one = np.uint64(1)
        u = [((w >> np.uint64(8)) + one).astype(np.float32) * scale24 for w in words]
        z = _box_muller(u[0], u[1], np.float32) + _box_muller(u[2], u[3], np.float32)
        z = _interleave(z)
        return z if distribution == "standard_normal" else _affine(z, params)
    d0 = x0 | (x1 << _SHIFT32)
    d1 = x2 | (x3 << _SHIFT32)
    if distribution == "bits":
        return _interleave((d0, d1))
    if distribution == "integers":
        low, range_ = params
        v = mulhi_range(_interleave((d0, d1)), range_) + np.uint64(low % 2**64)
        return v.astype(dtype)
    scale53 = 2.0 ** -53
    eleven = np.uint64(11)
    if distribution in ("random", "uniform"):
        u = (_interleave((d0, d1)) >> eleven).astype(np.float64) * scale53
        return u if distribution == "random" else _affine(u, params)
    one = np.uint64(1)
    u1 = ((d0 >> eleven) + one).astype(np.float64) * scale53
    u2 = ((d1 >> eleven) + one).astype(np.float64) * scale53
    z = _interleave(_box_muller(u1, u2, np.float64))
    return z if distribution == "standard_normal" else _affine(z, params)


def _box_muller(u1, u2, ftype):
    """(r cos t, r sin t) with r = sqrt(-2 log u1), t = 2pi u2, in `ftype` arithmetic."""
    r = np.sqrt(ftype(-2.0) * np.log(u1))
    t = ftype(2.0 * np.pi) * u2
    return r * np.cos(t), r * np.sin(t)


def _affine(u, params):
    a, b = params
    ftype = u.dtype.type
    return ftype(b) * u + ftype(a)


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
            values = _block_values(distribution, dtype, words, params)
            first = start * per_block
            count = min(n - first, values.size)
            out[first:first + count] = values[:count]
    return out.reshape(shape)
