"""Rows of at most ``MAX_ROW`` elements sorted in shared memory: one bitonic network per row, one
launch for every row.

CUB's radix sort is several launches and, on its first use in a process, the import of
cuda.compute and the load of a built algorithm; a row that fits a block sorts faster in one
launch of a kernel that ships with the package. Each row is padded to P, the power of two
at or above its length, and handled by P / 2 threads (several rows a block while P / 2 < 256).

Keys are the rows' bits made order-preserving unsigned integers (``keys.radix_word_expr``, the
set kernels' radix words: every NaN one key above +inf, -0.0 one key with +0.0). Descending
order XORs that with all ones. Each key travels with its position in the row, and
ties are broken by position, which makes the network stable in both orders and puts the padding
(all ones, at positions past the row) last. The order is the radix path's: NaNs last ascending,
first descending, equal elements in their original order; the values written are the input's
bits (a NaN keeps its sign and payload, as in NumPy; the radix path writes canonical NaNs).
"""

from __future__ import annotations

import numpy as np

from ...engine import compiler, runtime
from ...engine.array import CudaArray
from .._common import PREAMBLE, kernel_name
from .keys import radix_word_expr

MAX_ROW = 2048        # the longest row sorted here: P / 2 = 1024 threads, a block's most
# Past this length a row's network (log2(P) * (log2(P) + 1) / 2 steps over every element) costs
# more than CUB's radix passes once there are many rows (measured: benchmarks/results/
# short-sort-2026-12-04.md), so longer rows come here only while the whole sort is small, where
# launches, not passes, are the cost.
LONG_ROW = 512
SMALL_SORT = 1 << 20  # elements
_ROWS_THREADS = 256   # threads a block while rows are short: 256 // (P / 2) rows each
_SHARED = MAX_ROW     # keys a block holds: 2 * its threads, at most MAX_ROW
KINDS = {"b": "u", "u": "u", "i": "i", "f": "f"}


def kernel_spec(width: int, kind: str, indices: bool) -> compiler.KernelSpec:
    """The kernel sorting rows of `width`-byte keys of `kind` ('u' unsigned or bool, 'i' signed,
    'f' float), writing the sorted bits (indices=False) or int64 positions (True)."""
    bits = 8 * width
    word_bits = 64 if width == 8 else 32
    word = f"uint{word_bits}"  # the key in shared memory
    dt = np.dtype({"u": "uint", "i": "int", "f": "float"}[kind] + str(bits))
    order = f"u = {word}({radix_word_expr('b', dt)})"
    result = "int64(si[e])" if indices else "keys[first + si[e]]"
    name = kernel_name("sort_block", f"u{bits}", kind, "indices" if indices else "values")
    out_t = "int64*" if indices else f"uint{bits}*"
    source = f"""{PREAMBLE}
def {name}(out, keys, rows, n, p, half, rows_per_block, flip):
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    row0 = int64(cuda.blockIdx.x) * rows_per_block
    sk = cuda.shared.array({_SHARED}, {word})
    si = cuda.shared.array({_SHARED}, int32)
    flip_w = {word}(flip)
    # -- load: two keys a thread, padding past the row (all ones, positions >= n sort last)
    for q in range(2):
        e = t + q * nt
        r = e // p
        pos = e - r * p
        row = row0 + r
        u = {word}({(1 << word_bits) - 1:#x})
        if row < rows and pos < n:
            b = keys[row * n + pos]
            {order}
            u = (u ^ flip_w) & {word}({(1 << bits) - 1:#x})
        sk[e] = u
        si[e] = pos
    cuda.syncthreads()
    # -- the bitonic network: stage k merges runs of k, step j compares elements j apart
    r = t // half
    tt = t - r * half
    base = r * p
    k = 2
    while k <= p:
        j = k >> 1
        while j > 0:
            i = base + 2 * (tt - (tt & (j - 1))) + (tt & (j - 1))
            l = i + j
            ki = sk[i]
            kl = sk[l]
            ii = si[i]
            il = si[l]
            after = ki > kl or (ki == kl and ii > il)
            if after == (((i - base) & k) == 0):
                sk[i] = kl
                sk[l] = ki
                si[i] = il
                si[l] = ii
            cuda.syncthreads()
            j >>= 1
        k <<= 1
    # -- write each row's sorted keys (gathered by position) or the positions
    for q in range(2):
        e = t + q * nt
        r = e // p
        pos = e - r * p
        row = row0 + r
        if row < rows and pos < n:
            first = row * n
            out[first + pos] = {result}
"""
    argtypes = (out_t, f"uint{bits}*", "int64", "int32", "int32", "int32", "int32", "uint64")
    return compiler.KernelSpec(name, source, name, argtypes)


def geometry(rows: int, n: int, width: int, descending: bool):
    """(blocks, threads a block, the kernel's scalar arguments) for `rows` rows of `n`."""
    p = 1 << (n - 1).bit_length()
    half = p // 2
    per_block = max(1, _ROWS_THREADS // half)
    flip = (1 << (8 * width)) - 1 if descending else 0
    return -(-rows // per_block), per_block * half, (rows, n, p, half, per_block, flip)


def sort_rows(keys: CudaArray, out: CudaArray, descending: bool, indices: bool) -> None:
    """Sort each contiguous row (the last axis, 2 to MAX_ROW elements) of `keys` into the
    contiguous `out`: the sorted elements (of keys' dtype) or their int64 positions."""
    dev = runtime.get_device(keys.device_index)
    n = keys.shape[-1]
    dt = keys.dtype
    width, kind = dt.itemsize, KINDS[dt.kind]
    kern = compiler.cached_kernel(dev.index, "sort_block", (width, kind, indices),
                                  lambda: kernel_spec(width, kind, indices))
    grid, threads, args = geometry(keys.size // n, n, width, descending)
    kern(dev.stream, grid, threads, (out.ptr, keys.ptr) + args, (out.buffer, keys.buffer),
         keys.nbytes + out.nbytes)


def precompile_specs() -> list:
    """Every key width and kind, both results."""
    kinds = [(1, "u"), (2, "u"), (4, "u"), (8, "u"), (1, "i"), (2, "i"), (4, "i"), (8, "i"),
             (4, "f"), (8, "f")]
    return [kernel_spec(w, k, ix) for w, k in kinds for ix in (False, True)]


def fits(n: int, size: int) -> bool:
    """Whether rows of `n` elements, `size` elements in all, sort here."""
    return 2 <= n <= MAX_ROW and (n <= LONG_ROW or size <= SMALL_SORT)

