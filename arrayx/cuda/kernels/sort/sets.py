"""Sets on CUDA: unique (all four forms through one primitive) and isin, built on radix sort.

Both work on *radix words*: unsigned integers whose order is an order of the values, made by
one elementwise pass over the data's bits (``radix_word_op``): bool and unsigned integers as
they are, signed integers with the sign bit flipped, floats with -0.0 made +0.0 and every NaN the
positive quiet NaN, then the sign bit set (positive) or every bit flipped (negative). Equal
values get equal words, and a NaN gets NAN_WORD, which no other value has. A complex64 value is
one 64-bit word (real part's word above the imaginary part's); a complex128 value is two 64-bit
words, sorted lexicographically by two stable passes (least significant word first, the more
significant one gathered through the permutation so far).

unique (over the flattened array): stable sort of (words, 0..n-1) (CUB's radix sort, or for one
short row the block sort of block.py) -> sorted words and the permutation -> boundary flags (the
word differs from the previous one, or is a NaN: each NaN is its own value) -> inclusive sum of
the flags (group number + 1; the scan family's row scan) -> one synchronisation to read
the number of unique values -> one kernel (``unique_scatter``) writing, at each group's first
element, the value (gathered from the input through the permutation: the first occurrence,
signed zero as written), its index (the permutation there: the stable sort keeps a group's
indices ascending) and its start; and for every element its group number at its original
position (the inverse). counts = next start - start. Values come out in ascending order with
NaNs last, as NumPy's. Bool and integer values without index or inverse (unique_values,
unique_counts) sort the words alone, and ``unique_words_scatter`` turns each group's word back
into its value.

isin: sort the words of x2, then one kernel (``isin_search``) binary-searches each word of x1
(lower bound, lexicographic over the words) and tests equality; a NaN never matches.

precompile_specs() lists the kernels of the whole sort family (sort's passes too).
"""

from __future__ import annotations

import numpy as np

from ...engine import compiler, layout, runtime, transfer
from ...engine.array import CudaArray, new_array
from ...libraries.cub import radix_sort
from .. import elementwise
from ..scan import row_scan
from . import block
from .._common import DIM_BUCKETS
from ..elementwise.ops import Op
from .._common import PREAMBLE
from .keys import (I32, I64, U32, U64, as_dtype, float_bits, iota, nan_canon_op, position_op,
                   radix_word_expr, row_op, unsigned)

BLOCK = 256  # threads per block of the set kernels (one thread per element, no shared memory)


# ---- radix words ----------------------------------------------------------------------------

def nan_word(dt: np.dtype) -> int:
    """The radix word of a NaN of float dtype `dt`."""
    b = float_bits(dt)
    return b["qnan"] | b["sign"]


def radix_word_op(dt: np.dtype) -> Op:
    """Real `dt`: x0 (its bits) -> its word. complex64: x0, x1 (the parts' bits) -> one uint64."""
    if dt.kind == "c":
        f32 = np.dtype(np.float32)
        return Op(f"(uint64({radix_word_expr('x0', f32)}) << uint64(32)) | uint64({radix_word_expr('x1', f32)})",
                  (), U64)
    return Op(radix_word_expr("x0", dt), (), unsigned(dt))


def _parts(a: CudaArray):
    """The real and imaginary parts of complex `a` as views of their bits."""
    u = unsigned(np.dtype(np.float32 if a.dtype == np.complex64 else np.float64))
    strides = [2 * s for s in a.strides]
    return (CudaArray(a.buffer, a.shape, u, tuple(strides), 2 * a.offset),
            CudaArray(a.buffer, a.shape, u, tuple(strides), 2 * a.offset + 1))


def radix_words(a: CudaArray) -> list:
    """The words of `a`'s values (contiguous arrays of a.shape, most significant first)."""
    dt = a.dtype
    if dt == np.complex64:
        re, im = _parts(a)
        return [elementwise.launch("radix_word_complex64", radix_word_op(dt), (re, im),
                                   (re.dtype, im.dtype), a.shape)]
    if dt == np.complex128:
        f64 = np.dtype(np.float64)
        return [elementwise.launch("radix_word_float64", radix_word_op(f64), (p,), (p.dtype,),
                                   a.shape) for p in _parts(a)]
    u = unsigned(dt)
    return [elementwise.launch(f"radix_word_{dt.name}", radix_word_op(dt), (as_dtype(a, u),), (u,),
                               a.shape)]


def nan_test(dt: np.dtype, words: list) -> str:
    """A condition over the word expressions `words` (of one value of `dt`): a NaN part."""
    if dt.kind == "f":
        return f"{words[0]} == {unsigned(dt).name}({nan_word(dt):#x})"
    if dt == np.complex64:
        w = f"uint64({nan_word(np.dtype(np.float32)):#x})"
        return f"({words[0]} >> uint64(32)) == {w} or ({words[0]} & uint64(0xffffffff)) == {w}"
    if dt == np.complex128:
        w = f"uint64({nan_word(np.dtype(np.float64)):#x})"
        return f"{words[0]} == {w} or {words[1]} == {w}"
    return "False"


# ---- kernels ----------------------------------------------------------------------------------

def gather_spec(t: str) -> compiler.KernelSpec:
    """out[i] = src[index[i]] for elements of numba type `t`."""
    name = f"gather_{t}"
    src = PREAMBLE + f"""def {name}(out, src, index, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = src[index[i]]
"""
    return compiler.KernelSpec(name, src, name, (f"{t}*", f"{t}*", "int64*", "int64"))


def unique_scatter_spec(t: str, parts: int) -> compiler.KernelSpec:
    """Element i of the sorted order, in group g = groups[i] - 1, original position p = perm[i]:
    at a group's first element (flags[i]) writes values[g] = src[p] (`parts` words of type `t`
    per value), starts[g] = i and, if asked, index[g] = p; if asked, inverse[p] = g."""
    name = f"unique_scatter_{t}x{parts}"
    copy = "\n".join(f"            values[g * {parts} + {w}] = src[p * {parts} + {w}]"
                     for w in range(parts))
    src = PREAMBLE + f"""def {name}(values, starts, index, inverse, flags, groups, perm, src, n,
        want_index, want_inverse):
    i = cuda.grid(1)
    if i < n:
        g = groups[i] - 1
        p = perm[i]
        if flags[i] != 0:
{copy}
            starts[g] = i
            if want_index != 0:
                index[g] = p
        if want_inverse != 0:
            inverse[p] = g
"""
    argtypes = (f"{t}*", "int64*", "int64*", "int64*", "int64*", "int64*", "int64*", f"{t}*",
                "int64", "int32", "int32")
    return compiler.KernelSpec(name, src, name, argtypes)


def unique_flags_spec(dt: np.dtype) -> compiler.KernelSpec:
    """flags[i] = 1 where a new value starts in the sorted words of values of `dt` (i = 0, a
    word differing from the one before, or a NaN: each NaN is its own value), else 0."""
    t = _word_type(dt).name
    nw = 2 if dt == np.complex128 else 1
    name = f"unique_flags_{dt.name}"
    words = ", ".join(f"words{w}" for w in range(nw))
    differs = " or ".join(f"words{w}[i] != words{w}[i - 1]" for w in range(nw))
    nan = nan_test(dt, [f"words{w}[i]" for w in range(nw)])
    src = PREAMBLE + f"""def {name}(flags, {words}, n):
    i = cuda.grid(1)
    if i < n:
        flags[i] = int64(1) if i == 0 or {differs} or {nan} else int64(0)
"""
    argtypes = ("int64*",) + (f"{t}*",) * nw + ("int64",)
    return compiler.KernelSpec(name, src, name, argtypes)


def unique_words_scatter_spec(dt: np.dtype) -> compiler.KernelSpec:
    """unique_scatter without index and inverse for a bool or integer `dt`, from the sorted
    words alone (no permutation): at a group's first element i writes values[g] = the value of
    words[i] (for these dtypes the word transform is its own inverse) and starts[g] = i."""
    t = unsigned(dt).name
    name = f"unique_words_scatter_{dt.name}"
    src = PREAMBLE + f"""def {name}(values, starts, flags, groups, words, n):
    i = cuda.grid(1)
    if i < n and flags[i] != 0:
        g = groups[i] - 1
        values[g] = {radix_word_expr("words[i]", dt)}
        starts[g] = i
"""
    argtypes = (f"{t}*", "int64*", "int64*", "int64*", f"{t}*", "int64")
    return compiler.KernelSpec(name, src, name, argtypes)


def isin_search_spec(dt: np.dtype) -> compiler.KernelSpec:
    """out[i] = (a's value i is among the sorted words of b) != invert, for values of `dt`."""
    t = _word_type(dt).name
    nw = 2 if dt == np.complex128 else 1
    name = f"isin_search_{dt.name}"
    loads = "\n".join(f"        a{w} = a_words{w}[i]" for w in range(nw))
    if nw == 1:
        before = "b_words0[mid] < a0"
        equal = "b_words0[lo] == a0"
    else:
        before = "b_words0[mid] < a0 or (b_words0[mid] == a0 and b_words1[mid] < a1)"
        equal = "b_words0[lo] == a0 and b_words1[lo] == a1"
    nan = nan_test(dt, [f"a{w}" for w in range(nw)])
    args = ", ".join([f"a_words{w}" for w in range(nw)] + [f"b_words{w}" for w in range(nw)])
    src = PREAMBLE + f"""def {name}(out, {args}, n, nb, invert):
    i = cuda.grid(1)
    if i < n:
{loads}
        lo = int64(0)
        hi = nb
        while lo < hi:
            mid = (lo + hi) >> 1
            if {before}:
                lo = mid + 1
            else:
                hi = mid
        found = lo < nb and {equal}
        if found and ({nan}):
            found = False
        out[i] = uint8(1) if found != (invert != 0) else uint8(0)
"""
    argtypes = ("uint8*",) + (f"{t}*",) * (2 * nw) + ("int64", "int64", "int32")
    return compiler.KernelSpec(name, src, name, argtypes)


def _word_type(dt: np.dtype) -> np.dtype:
    return U64 if dt.kind == "c" else unsigned(dt)


def _launch(dev, spec_fn, spec_args: tuple, n: int, args: list, keep: tuple, nbytes: int):
    kern = compiler.cached_kernel(dev.index, "sets", (spec_fn, spec_args),
                                  lambda: spec_fn(*spec_args))
    grid, block = layout.launch_1d(n, BLOCK)
    kern(dev.stream, grid, block, args, keep, nbytes)


def _gather(dev, src: CudaArray, index: CudaArray) -> CudaArray:
    out = new_array(dev.index, index.shape, src.dtype, dev.allocator)
    n = index.size
    _launch(dev, gather_spec, (src.dtype.name,), n, [out.ptr, src.ptr, index.ptr, n],
            (out.buffer, src.buffer, index.buffer), n * (2 * src.dtype.itemsize + 8))
    return out


def _sort_words(dev, words: list, with_perm: bool):
    """(the words in lexicographic order, the stable permutation or None)."""
    n = words[0].size
    if n < 2 or block.fits(n, n):
        return _sort_words_in_block(dev, words, with_perm)
    alloc = dev.allocator
    if len(words) == 1 and not with_perm:
        out = new_array(dev.index, (n,), words[0].dtype, alloc)
        radix_sort(dev, words[0], out)
        return [out], None
    perm = iota(dev.index, n)
    first = None
    for j in reversed(range(len(words))):  # least significant word first
        keys = words[j] if j == len(words) - 1 else _gather(dev, words[j], perm)
        first = new_array(dev.index, (n,), keys.dtype, alloc)
        moved = new_array(dev.index, (n,), I64, alloc)
        radix_sort(dev, keys, first, perm, moved)
        perm = moved
    return [first] + [_gather(dev, w, perm) for w in words[1:]], perm


def _sort_words_in_block(dev, words: list, with_perm: bool):
    """_sort_words for one short row: the block sort (block.py), whose ties keep their order,
    so the words of a complex128 sort least significant first as in the radix path; no CUB
    build to load on a process's first small unique or isin."""
    n = words[0].size
    alloc = dev.allocator
    if n < 2:
        return words, iota(dev.index, n) if with_perm else None
    if len(words) == 1 and not with_perm:
        out = new_array(dev.index, (n,), words[0].dtype, alloc)
        block.sort_rows(words[0], out, False, False)
        return [out], None
    perm = None
    for j in reversed(range(len(words))):
        keys = words[j] if perm is None else _gather(dev, words[j], perm)
        order = new_array(dev.index, (n,), I64, alloc)
        block.sort_rows(keys, order, False, True)
        perm = order if perm is None else _gather(dev, perm, order)
    return [_gather(dev, w, perm) for w in words], perm


def _flat(a: CudaArray) -> CudaArray:
    """`a` as a contiguous 1-D array (a view when it already is contiguous)."""
    if not a.c_contig:
        a = elementwise.copy(a)
    return a.view((a.size,), (1,), a.offset, True)


# ---- the primitives ---------------------------------------------------------------------------

def unique(a, return_index, return_inverse, return_counts):
    dev = runtime.get_device(a.device_index)
    alloc = dev.allocator
    n = a.size
    if n == 0:
        empty = lambda dt: new_array(dev.index, (0,), dt, alloc)  # noqa: E731
        return (empty(a.dtype), empty(I64) if return_index else None,
                empty(I64) if return_inverse else None, empty(I64) if return_counts else None)
    flat = _flat(a)
    # Without index and inverse, bool and integer values come back from their sorted words: the
    # sort moves keys alone, not (key, position) pairs.
    from_words = a.dtype.kind in "biu" and not (return_index or return_inverse)
    words, perm = _sort_words(dev, radix_words(flat), not from_words)
    flags = new_array(dev.index, (n,), I64, alloc)
    _launch(dev, unique_flags_spec, (a.dtype,), n, [flags.ptr] + [w.ptr for w in words] + [n],
            (flags.buffer,) + tuple(w.buffer for w in words), n * (8 + a.dtype.itemsize))
    groups = new_array(dev.index, (n,), I64, alloc)
    row_scan("sum", flags, groups)
    m = int(transfer.to_host(groups.view((1,), (1,), n - 1))[0])  # the one synchronisation

    values = new_array(dev.index, (m,), a.dtype, alloc)
    starts = new_array(dev.index, (m + 1,), I64, alloc)
    index = new_array(dev.index, (m,), I64, alloc) if return_index else None
    inverse = new_array(dev.index, (n,), I64, alloc) if return_inverse else None
    if from_words:
        sorted_words = words[0]
        _launch(dev, unique_words_scatter_spec, (a.dtype,), n,
                [values.ptr, starts.ptr, flags.ptr, groups.ptr, sorted_words.ptr, n],
                (values.buffer, starts.buffer, flags.buffer, groups.buffer, sorted_words.buffer),
                n * (8 * 2 + a.dtype.itemsize))
        return values, None, None, _counts(starts, m, n) if return_counts else None
    t = _word_type(a.dtype)
    parts = a.dtype.itemsize // t.itemsize
    args = [values.ptr, starts.ptr, index.ptr if index is not None else 0,
            inverse.ptr if inverse is not None else 0, flags.ptr, groups.ptr, perm.ptr, flat.ptr,
            n, int(return_index), int(return_inverse)]
    keep = tuple(x.buffer for x in (values, starts, index, inverse, flags, groups, perm, flat)
                 if x is not None)
    _launch(dev, unique_scatter_spec, (t.name, parts), n, args, keep, n * (8 * 5 + a.dtype.itemsize))
    return values, index, inverse, _counts(starts, m, n) if return_counts else None


def _counts(starts: CudaArray, m: int, n: int) -> CudaArray:
    """The m group sizes from the groups' m starts (starts holds m + 1 slots)."""
    elementwise.fill(starts.view((1,), (1,), m), n)
    return elementwise.binary("subtract", starts.view((m,), (1,), 1), starts.view((m,), (1,), 0),
                              I64)


def isin(a, b, invert):
    dev = runtime.get_device(a.device_index)
    out = new_array(dev.index, a.shape, np.dtype(bool), dev.allocator)
    n = a.size
    if n == 0:
        return out
    if b.size == 0:
        return elementwise.fill(out, bool(invert))
    sorted_b, _ = _sort_words(dev, radix_words(_flat(b)), False)
    words_a = radix_words(_flat(a))
    args = [out.ptr] + [w.ptr for w in words_a] + [w.ptr for w in sorted_b] + \
        [n, b.size, int(invert)]
    keep = (out.buffer,) + tuple(w.buffer for w in words_a + sorted_b)
    _launch(dev, isin_search_spec, (a.dtype,), n, args, keep, n * (1 + a.dtype.itemsize))
    return out


PRIMITIVES = {"unique": unique, "isin": isin}


def precompile_specs() -> list:
    """The kernels sort, argsort, unique and isin launch on arrays under 2**31 elements (for
    precompile.py): NaN canonicalisation, row/position, radix words, flags and the set kernels."""
    from ..elementwise import kernel_spec

    def family(name, op, kinds, dtypes, dims=DIM_BUCKETS):
        from ...engine.layout import vector_width
        arrays = [d.itemsize for k, d in zip(kinds, dtypes) if k == "a"]
        n = vector_width(op.out.itemsize, *arrays)
        return [kernel_spec(name, op, kinds, dtypes, "vec", n, 1)] + \
            [kernel_spec(name, op, kinds, dtypes, "strided", D=d, index_bits=32) for d in dims]

    out = []
    for dt in (np.dtype(np.float32), np.dtype(np.float64)):
        u = unsigned(dt)
        out += family("nan_canon", nan_canon_op(dt), ("a",), (u,))
    for idx_dt in (I32, I64):  # argsort's positions: int32 below 2**31 elements
        for row_dt in (U32, U64):
            out += family("sort_row", row_op(row_dt), ("a", "s"), (idx_dt, U64), ())
        out += family("sort_pos", position_op(idx_dt), ("a", "s"), (idx_dt, U64), ())
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float32", "float64", "complex64", "complex128"):
        dt = np.dtype(name)
        if dt.kind == "c":
            real = unsigned(np.dtype(np.float32 if dt == np.complex64 else np.float64))
            op = radix_word_op(dt if dt == np.complex64 else np.dtype(np.float64))
            kinds = ("a", "a") if dt == np.complex64 else ("a",)
            out += family(f"radix_word_{'complex64' if dt == np.complex64 else 'float64'}", op,
                          kinds, (real,) * len(kinds), (1,))
        else:
            out += family(f"radix_word_{dt.name}", radix_word_op(dt), ("a",), (unsigned(dt),), ())
        t = _word_type(dt)
        out.append(unique_flags_spec(dt))
        out.append(unique_scatter_spec(t.name, dt.itemsize // t.itemsize))
        if dt.kind in "biu":
            out.append(unique_words_scatter_spec(dt))
        out.append(isin_search_spec(dt))
    out += [gather_spec(t) for t in ("uint8", "uint16", "uint32", "uint64", "int64")]  # words, perm
    out += block.precompile_specs()
    return list({spec.source: spec for spec in out}.values())  # float64 and complex128 share one
