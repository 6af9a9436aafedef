"""Host-side layout helpers shared by every kernel family.

* ``c_strides`` / ``is_c_contiguous``: C-order strides of a shape, and whether strides are those.
* ``broadcast_strides``: strides of an operand broadcast to a result shape (0 on broadcast axes).
* ``collapse``: merge adjacent dimensions whose strides chain in *every* operand, so a strided
  kernel loops over as few dimensions as possible (a contiguous array of any shape becomes 1-D).
* ``index_bits``: 32 or 64-bit indexing: 32 while every offset fits, else 64.
* ``vector_width``: elements per 16-byte vector for the widest operand (decided on the host, so a
  kernel specialised for it has no per-thread check).
* ``launch_1d``: grid and block for a 1-D launch.
* ``reshape_strides``: the strides of a reshape without a copy, or None when one is needed.
"""

from __future__ import annotations

INT32_MAX = 2**31 - 1
VECTOR_BYTES = 16
MAX_GRID = 2**31 - 1  # blocks of a 1-D launch (CUDA's gridDim.x limit)


def c_strides(shape) -> tuple:
    """C-contiguous strides, in elements."""
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n if n > 0 else 1
    return tuple(reversed(strides))


def is_c_contiguous(shape, strides) -> bool:
    if 0 in shape:
        return True
    acc = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != acc:
            return False
        acc *= n
    return True


def broadcast_strides(shape, strides, out_shape) -> tuple:
    """Strides of an array of `shape`/`strides` broadcast to `out_shape` (in elements)."""
    pad = len(out_shape) - len(shape)
    res = [0] * pad
    for n, s, m in zip(shape, strides, out_shape[pad:]):
        res.append(0 if n == 1 and m != 1 else s)
    return tuple(res)


def collapse(shape, *strides_list):
    """Merge adjacent dims that are contiguous with each other in every operand.

    Returns (shape, [strides...]) with size-1 dims dropped; at least 1-D.
    """
    dims = [i for i, n in enumerate(shape) if n != 1]
    if not dims:
        return (1,), [(0,) for _ in strides_list]
    new_shape = [shape[dims[0]]]
    new_strides = [[s[dims[0]]] for s in strides_list]
    for i in dims[1:]:
        n = shape[i]
        # dim i merges into the previous one when prev_stride == stride * n for every operand
        if all(ns[-1] == s[i] * n for ns, s in zip(new_strides, strides_list)):
            new_shape[-1] *= n
            for ns, s in zip(new_strides, strides_list):
                ns[-1] = s[i]
        else:
            new_shape.append(n)
            for ns, s in zip(new_strides, strides_list):
                ns.append(s[i])
    return tuple(new_shape), [tuple(ns) for ns in new_strides]


def index_bits(size, shape=(), *strides_list) -> int:
    """32 if every element offset (and the element count) fits in a signed 32-bit int, else 64."""
    if size > INT32_MAX:
        return 64
    for strides in strides_list:
        span = 0
        for n, s in zip(shape, strides):
            span += (n - 1) * abs(s)
        if span > INT32_MAX:
            return 64
    return 32


def vector_width(*itemsizes) -> int:
    """Elements per thread-vector: 16 bytes of the widest operand, so no operand's vector is
    wider than one 16-byte access."""
    return max(1, VECTOR_BYTES // max(itemsizes))


def launch_1d(threads: int, block: int = 256):
    """(grid, block) covering `threads` threads, block a multiple of 32."""
    if threads <= 0:
        return 0, 0
    if threads < block:
        block = max(32, -(-threads // 32) * 32)
    return -(-threads // block), block


def reshape_strides(shape, strides, new_shape):
    """Strides (in elements) viewing an array of `shape`/`strides` as `new_shape` without a copy,
    or None when impossible (NumPy's _attempt_nocopy_reshape)."""
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    size = 1
    for n in shape:
        size *= n
    if size == 0:
        return c_strides(new_shape)
    new_strides = [0] * len(new_shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    o_n = len(old)
    n_n = len(new_shape)
    olds = [n for n, _ in old]
    oldst = [s for _, s in old]
    while ni < n_n and oi < o_n:
        np_ = new_shape[ni]
        op = olds[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= olds[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if oldst[ok] != olds[ok + 1] * oldst[ok + 1]:
                return None
        new_strides[nj - 1] = oldst[oj - 1]
        for nk in range(nj - 1, ni, -1):
            new_strides[nk - 1] = new_strides[nk] * new_shape[nk]
        ni = nj
        nj += 1
        oi = oj
        oj += 1
    last = new_strides[ni - 1] if ni >= 1 else 1
    for nk in range(ni, n_n):
        new_strides[nk] = last
    return tuple(new_strides)


def broadcast_shape(*shapes) -> tuple:
    """The shape `shapes` broadcast to, for shapes known to broadcast (no check: the namespace
    validated them; callers checking user input use np.broadcast_shapes)."""
    nd = max(len(s) for s in shapes)
    res = [1] * nd
    for s in shapes:
        for i, n in enumerate(s, nd - len(s)):
            if n != 1:
                res[i] = n
    return tuple(res)
