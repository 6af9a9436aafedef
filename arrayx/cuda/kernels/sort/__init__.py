"""The sort family on CUDA: sort and argsort (here), unique and isin (sets.py), built on CUB's
device radix sort (libraries/cub.py, through cuda-cccl's ``cuda.compute``), and on a bitonic sort
in shared memory for short rows (``block.fits``: up to 512 elements, or 2048 in a small sort;
block.py: one launch, no cuda.compute, and the same order as the radix path).

CUB's radix sort is stable in both orders and compares floats by value except that it orders
them by bit pattern beyond that: -0.0 and +0.0 are one key (CUB maps -0.0 to +0.0 when it
extracts digits), but a NaN with the sign bit set sorts before -inf and a positive one after
+inf. NumPy puts every NaN last, so the keys of a float array are first rewritten with one
elementwise pass (``nan_canon``: every NaN -> the positive quiet NaN, other bits unchanged, done
on the unsigned-integer view of the data); then ascending order puts NaNs last and descending
order (CUB's own, still stable) puts them first, with equal elements (-0.0 and +0.0 included) in
their original order in both directions, as the CPU backend does. Integers are sorted as they
are (no pass when the rows are already contiguous).

Layouts. The sorted axis is moved last (a view); its rows, contiguous, are what block.py sorts
when they are short enough, and otherwise CUB:

* one row (a 1-D array, or every other dimension of length 1): one radix sort, keys only for
  ``sort`` and (keys, 0..n-1) pairs for ``argsort``;
* R > 1 rows of K: two stable passes. Pass 1 sorts every element by value, carrying its flat
  index p; pass 2 sorts by row, p // K (only the bits R - 1 needs), carrying the sorted values
  (``sort``) or p % K (``argsort``). Stability of pass 2 keeps pass 1's value order within each
  row. A single sort of a combined (row, value) key would save pass 1's payload for 8- to 32-bit
  values, and CUB's segmented sort exists too; neither is measured against this on many short
  rows yet, which a second path would need first.

The result is moved back (a permuted view copied to C order) when the axis was not last.

Argsort carries int32 positions through CUB when the array has fewer than 2^31 elements and
widens them afterwards (``keys.index_dtype``: half the payload bytes).

Modules: this one (sort, argsort, and the family's API), ``keys`` (the elementwise passes that
make keys and payloads), ``block`` (short rows), ``sets`` (unique and isin, and the family's
precompile specs).
"""

from __future__ import annotations

from ...engine import runtime
from ...engine.array import CudaArray, new_array
from ...libraries.cub import radix_sort
from .. import elementwise
from . import block
from .keys import (I64, U32, U64, as_dtype, index_dtype, iota, nan_canon_op, position_op,
                   row_op, unsigned)
from .sets import isin, precompile_specs, unique  # noqa: F401  (the family's API)


def _rows_last(a: CudaArray, axis: int):
    """(a with `axis` moved last, the axis order of that view)."""
    order = [d for d in range(a.ndim) if d != axis] + [axis]
    return a.view([a.shape[d] for d in order], [a.strides[d] for d in order], a.offset), order


def _sort_keys(moved: CudaArray) -> CudaArray:
    """The keys CUB sorts: `moved`'s elements, contiguous, floats with NaNs made canonical."""
    dt = moved.dtype
    if dt.kind == "f":
        u = unsigned(dt)
        keys = elementwise.launch("nan_canon", nan_canon_op(dt), (as_dtype(moved, u),), (u,),
                                  moved.shape)
        return as_dtype(keys, dt)
    return moved if moved.c_contig else elementwise.copy(moved)


def _move_back(out: CudaArray, order: list) -> CudaArray:
    """`out` (contiguous, axes in `order`) with its axes put back, C-contiguous."""
    if order == sorted(order):
        return out
    back = [order.index(d) for d in range(len(order))]
    return elementwise.copy(out.view([out.shape[i] for i in back], [out.strides[i] for i in back],
                                     out.offset))


def _sorted(a: CudaArray, axis: int, descending: bool, indices: bool) -> CudaArray:
    """sort (indices=False) or argsort (True) of a non-empty `a` with shape[axis] > 1."""
    dev = runtime.get_device(a.device_index)
    moved, order = _rows_last(a, axis)
    n = a.size
    K = a.shape[axis]
    R = n // K
    alloc = dev.allocator
    if block.fits(K, n):  # the kernel makes its own keys (NaNs included)
        rows = moved if moved.c_contig else elementwise.copy(moved)
        out = new_array(dev.index, moved.shape, I64 if indices else a.dtype, alloc)
        block.sort_rows(rows, out, descending, indices)
        return _move_back(out, order)
    keys = _sort_keys(moved)
    idx_dt = index_dtype(n)
    out = new_array(dev.index, moved.shape, idx_dt if indices else a.dtype, alloc)
    if R == 1:
        if indices:
            radix_sort(dev, keys, new_array(dev.index, (n,), keys.dtype, alloc),
                       iota(dev.index, n, idx_dt), out, descending)
        else:
            radix_sort(dev, keys, out, descending=descending)
    else:
        # pass 1: every element by value, carrying its flat index
        sorted_keys = new_array(dev.index, (n,), keys.dtype, alloc)
        flat = new_array(dev.index, (n,), idx_dt, alloc)
        radix_sort(dev, keys, sorted_keys, iota(dev.index, n, idx_dt), flat, descending)
        # pass 2: stably by row, carrying the values or the positions within the rows
        row_dt = U32 if R <= 1 << 32 else U64
        rows = elementwise.launch("sort_row", row_op(row_dt), (flat, K), (idx_dt, U64), (n,))
        payload = elementwise.launch("sort_pos", position_op(idx_dt), (flat, K), (idx_dt, U64),
                                     (n,)) if indices else sorted_keys
        radix_sort(dev, rows, new_array(dev.index, (n,), row_dt, alloc), payload, out,
                   end_bit=(R - 1).bit_length())
    if indices and idx_dt != I64:
        out = elementwise.astype(out, I64)
    return _move_back(out, order)


# ---- the primitives ------------------------------------------------------------------------

def sort(a, axis, descending, stable):
    # CUB's radix sort is stable, so `stable` needs nothing more
    if a.size == 0 or a.shape[axis] == 1:
        return elementwise.copy(a)
    return _sorted(a, axis, descending, False)


def argsort(a, axis, descending, stable):
    if a.size == 0 or a.shape[axis] == 1:
        out = new_array(a.device_index, a.shape, I64, runtime.get_device(a.device_index).allocator)
        return elementwise.fill(out, 0) if out.size else out
    return _sorted(a, axis, descending, True)


PRIMITIVES = {"sort": sort, "argsort": argsort, "unique": unique, "isin": isin}
