"""`launch`: the layout a call runs in (template.py describes vec, rows, strided and tile), decided
on the host from the operands' shapes, strides and pointers, and the launch of its kernel."""

from __future__ import annotations

import numpy as np

from ...engine import compiler, layout, runtime
from ...engine.array import CudaArray, new_array
from .._common import BOOL, padded_dims
from . import template, tuning
from .ops import Op


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def scalar_args(value, dt):
    """A Python scalar operand as kernel arguments of dtype `dt` (complex: two reals)."""
    if dt.kind == "c":
        v = complex(value)
        return [v.real, v.imag]
    if dt == BOOL:
        return [1 if value else 0]
    if dt.kind in "iu":
        return [int(value) % (1 << (8 * dt.itemsize)) if dt.kind == "u" else int(value)]
    # a weak float scalar rounds to the array's precision (errstate, a few microseconds, only
    # where float32 overflows)
    v = float(value)
    if dt.itemsize == 8:
        return [v]
    if -_FLOAT32_MAX <= v <= _FLOAT32_MAX:
        return [float(np.float32(v))]
    with np.errstate(over="ignore"):
        return [float(np.float32(v))]


def head_elements(ptr: int, itemsize: int, N: int) -> int:
    """Elements before `ptr` reaches a multiple of the vector size (-1: never, misaligned)."""
    if ptr % itemsize:
        return -1
    return (-ptr) % (N * itemsize) // itemsize


def new_output(dev, device_index, shape, dt, head, N):
    """A fresh contiguous output whose first `head` elements precede a 16-byte boundary."""
    if not head:
        return new_array(device_index, shape, dt, dev.allocator)
    n = 1
    for s in shape:
        n *= s
    base = new_array(device_index, (n + N,), dt, dev.allocator)
    offset = next(o for o in range(N)
                  if head_elements(base.ptr + o * dt.itemsize, dt.itemsize, N) == head)
    return CudaArray(base.buffer, shape, dt, None, offset)


def _args(operands, dtypes, ptrs):
    args = []
    it = iter(ptrs)
    for o, dt in zip(operands, dtypes):
        if isinstance(o, CudaArray):
            args.append(next(it))
        else:
            args += scalar_args(o, dt)
    return args


def launch(name: str, op: Op, operands, dtypes, shape, out: CudaArray | None = None,
           device_index: int | None = None) -> CudaArray:
    """Compute `op` over `operands` (CudaArrays of the given `dtypes` on one device, or Python
    scalars taken as those dtypes) broadcast to `shape`, into `out` (a new array if None).
    Returns `out`."""
    kinds = tuple("a" if isinstance(o, CudaArray) else "s" for o in operands)
    arrays = [o for o in operands if isinstance(o, CudaArray)]
    if device_index is None:
        device_index = out.device_index if out is not None else arrays[0].device_index
    dev = runtime.get_device(device_index)
    out_dt = op.out
    n = 1
    for s in shape:
        n *= s
    contiguous = (out is None or out.c_contig) and all(a.c_contig and a.shape == shape for a in arrays)
    if contiguous and n:
        N = layout.vector_width(out_dt.itemsize, *(a.dtype.itemsize for a in arrays))
        if n < tuning.BLOCK * N:
            # too short for a full block of vectors: the vec kernel takes its scalar path only
            if out is None:
                out = new_array(device_index, tuple(shape), out_dt, dev.allocator)
            _launch_vec(dev, name, op, operands, kinds, dtypes, out, n, N, 0)
            return out
        heads = {head_elements(a.ptr, a.dtype.itemsize, N) for a in arrays}
        uses_index = "IDX" in op.expr
        if out is None:
            head = next(iter(heads)) if len(heads) == 1 and not uses_index else 0
            out = new_output(dev, device_index, tuple(shape), out_dt, max(head, 0), N)
        heads.add(head_elements(out.ptr, out_dt.itemsize, N))
        if len(heads) == 1 and -1 not in heads and (heads == {0} or not uses_index):
            _launch_vec(dev, name, op, operands, kinds, dtypes, out, n, N, heads.pop())
            return out
    if out is None:
        out = new_array(device_index, tuple(shape), out_dt, dev.allocator)
    if n == 0:
        return out
    strides = [out.strides] + [layout.broadcast_strides(a.shape, a.strides, shape) for a in arrays]
    cshape, cstrides = layout.collapse(shape, *strides)
    if len(arrays) == 1 and len(cshape) == 2 and "IDX" not in op.expr and \
            cstrides[0] == (cshape[1], 1) and cstrides[1][0] == 1 and cstrides[1][1] != 1:
        _launch_tile(dev, name, op, operands, kinds, dtypes, out, arrays[0], cshape, cstrides[1])
        return out
    if cshape[-1] >= tuning.ROWS_MIN_COLS:
        _launch_rows(dev, name, op, operands, kinds, dtypes, out, arrays, cshape, cstrides)
        return out
    _launch_strided(dev, name, op, operands, kinds, dtypes, out, arrays, n, cshape, cstrides)
    return out


def vec_kernel(device_index, name, op, kinds, dtypes, N):
    """The vec layout's kernel of `op` with N-element vectors (what launch(), the fast path's
    plans and the one-element fill launch)."""
    U = tuning.VEC_UNROLL
    return compiler.cached_kernel(device_index, "elementwise", (name, op, kinds, dtypes, "vec", N, U),
                                  lambda: template.kernel_spec(name, op, kinds, dtypes, "vec", N, U))


def _launch_vec(dev, name, op, operands, kinds, dtypes, out, n, N, head):
    """The contiguous layout: vectors over the aligned body, then the `head` elements before it
    (views whose pointers share a phase) through the same kernel's scalar path."""
    arrays = [o for o in operands if isinstance(o, CudaArray)]
    U = tuning.VEC_UNROLL
    stream = dev.local.stream or dev.default_stream
    keep = (out.buffer,) + tuple(a.buffer for a in arrays)
    kern = vec_kernel(dev.index, name, op, kinds, dtypes, N)
    body = n - head
    isz = [a.dtype.itemsize for a in arrays]
    ptrs = [a.ptr + head * s for a, s in zip(arrays, isz)]
    args = [out.ptr + head * out.dtype.itemsize] + _args(operands, dtypes, ptrs) + [body]
    nbytes = out.dtype.itemsize + sum(isz)
    kern(stream, -(-body // (tuning.BLOCK * U * N)), tuning.BLOCK, args, keep, body * nbytes)
    if head:  # after the body, whose large launch goes out at once; this one waits in the batch
        args = [out.ptr] + _args(operands, dtypes, [a.ptr for a in arrays]) + [head]
        kern(stream, 1, tuning.BLOCK, args, keep, head * nbytes)


def _launch_strided(dev, name, op, operands, kinds, dtypes, out, arrays, n, cshape, cstrides):
    D = padded_dims(len(cshape))
    pad = D - len(cshape)
    cshape = (1,) * pad + tuple(cshape)
    cstrides = [(0,) * pad + tuple(st) for st in cstrides]
    bits = layout.index_bits(n, cshape, *cstrides)
    debug = compiler.DEBUG
    key = (name, op, kinds, dtypes, "strided", D, bits, debug)
    kern = compiler.cached_kernel(dev.index, "elementwise", key,
                                  lambda: template.kernel_spec(name, op, kinds, dtypes, "strided",
                                                               D=D, index_bits=bits, debug=debug))
    args = [out.ptr] + _args(operands, dtypes, [a.ptr for a in arrays]) + [n] + list(cshape)
    for st in cstrides:
        args += list(st)
    if debug:
        for st in cstrides:
            lo = sum(min(0, (m - 1) * s) for m, s in zip(cshape, st))
            hi = sum(max(0, (m - 1) * s) for m, s in zip(cshape, st)) + 1
            args += [lo, hi]
    grid, block = layout.launch_1d(n, tuning.BLOCK)
    stream = dev.local.stream or dev.default_stream
    keep = (out.buffer,) + tuple(a.buffer for a in arrays)
    nbytes = n * (out.dtype.itemsize + sum(a.dtype.itemsize for a in arrays))
    kern(stream, grid, block, args, keep, nbytes)


def _rows_kinds(kinds, out, arrays, outer, outer_strides, inner, N):
    """The operand kinds of the rows layout's vector variant (an array contiguous along its rows
    'a', constant along them 'r'), or None when an operand (or the output) has neither form with
    every row on an N-element vector boundary."""
    def aligned(a, strides):
        return a.ptr % (N * a.dtype.itemsize) == 0 and \
            all(s % N == 0 for s, m in zip(strides, outer) if m > 1)
    if inner[0] != 1 or not aligned(out, outer_strides[0]):
        return None
    forms = []
    for a, strides, step in zip(arrays, outer_strides[1:], inner[1:]):
        if step == 0:
            forms.append("r")
        elif step == 1 and aligned(a, strides):
            forms.append("a")
        else:
            return None
    it = iter(forms)
    return tuple(next(it) if k == "a" else k for k in kinds)


def _launch_rows(dev, name, op, operands, kinds, dtypes, out, arrays, cshape, cstrides):
    """The rows layout over the collapsed `cshape` (its last dim a row, the rest padded to a
    DIM_BUCKETS count of outer dims): the vector kernel when _rows_kinds allows it, else one
    element a thread; a row's threads in blocks of at most BLOCK, gx blocks a row, gy rows at
    once (the kernel loops over the rest)."""
    cols = cshape[-1]
    D = padded_dims(max(1, len(cshape) - 1))
    pad = D - (len(cshape) - 1)
    outer = (1,) * pad + tuple(cshape[:-1])
    outer_strides = [(0,) * pad + tuple(st[:-1]) for st in cstrides]
    inner = [st[-1] for st in cstrides]
    rows = 1
    for m in outer:
        rows *= m
    N = layout.vector_width(out.dtype.itemsize, *(a.dtype.itemsize for a in arrays))
    forms = _rows_kinds(kinds, out, arrays, outer, outer_strides, inner, N) if N > 1 else None
    if forms is None:
        N, U, forms = 1, tuning.ROWS_UNROLL, kinds
    else:
        U = tuning.ROWS_VEC_UNROLL
    key = (name, op, forms, dtypes, "rows", N, U, D)
    kern = compiler.cached_kernel(dev.index, "elementwise", key,
                                  lambda: template.kernel_spec(name, op, forms, dtypes, "rows", N,
                                                               U, D))
    threads = -(-cols // (N * U))  # a row's
    block = min(tuning.BLOCK, -(-threads // 32) * 32)
    gx = -(-threads // block)
    gy = min(rows, layout.MAX_GRID // gx)
    args = [out.ptr] + _args(operands, dtypes, [a.ptr for a in arrays]) + \
        [rows * cols, rows, cols, gx, gy] + list(outer)
    for st, step in zip(outer_strides, inner):
        args += list(st) + ([step] if N == 1 else [])
    stream = dev.local.stream or dev.default_stream
    keep = (out.buffer,) + tuple(a.buffer for a in arrays)
    nbytes = rows * cols * (out.dtype.itemsize + sum(a.dtype.itemsize for a in arrays))
    kern(stream, gx * gy, block, args, keep, nbytes)


def _launch_tile(dev, name, op, operands, kinds, dtypes, out, src, cshape, src_strides):
    rows, cols = cshape
    pitch = src_strides[1]
    V = template.tile_vector(src.dtype.itemsize, out.dtype.itemsize)
    # vectors need every run and output row to start on a vector boundary (rows, cols and the
    # input's pitch multiples of V, both pointers aligned); otherwise one element at a time
    if V > 1 and (rows % V or cols % V or pitch % V or src.ptr % (V * src.dtype.itemsize)
                  or out.ptr % (V * out.dtype.itemsize)):
        V = 1
    tile = template.tile_design(src.dtype.itemsize, V)
    bits = 64
    if tuning.TILE_INDEX_32:
        bits = layout.index_bits(rows * cols, cshape, (cols, 1), (1, pitch))
    key = (name, op, kinds, dtypes, "tile", V, tile, bits)
    kern = compiler.cached_kernel(dev.index, "elementwise", key,
                                  lambda: template.kernel_spec(name, op, kinds, dtypes, "tile", V,
                                                               index_bits=bits, tile=tile))
    tiles_c = -(-cols // tile[1])
    grid = -(-rows // tile[0]) * tiles_c
    args = [out.ptr] + _args(operands, dtypes, [src.ptr]) + [rows * cols, rows, cols, pitch,
                                                            tiles_c]
    stream = dev.local.stream or dev.default_stream
    kern(stream, grid, tile[2], args, (out.buffer, src.buffer),
         rows * cols * (out.dtype.itemsize + src.dtype.itemsize))

