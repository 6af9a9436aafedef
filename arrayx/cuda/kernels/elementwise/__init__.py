"""The elementwise kernel family: one template that every elementwise operation instantiates.

An operation is an ``elementwise_ops.Op``: an expression over the operand values ``x0, x1, ...``
and the helpers it calls. ``kernel_spec`` wraps it in kernel source for one layout, CuPy-style:
one template specialised per (operation, operand kinds and dtypes, layout kind), never per shape.
Operands are arrays (pointers) or scalars passed by value (no allocation for a Python scalar).
Layouts, decided on the host by ``launch``:

* ``vec``: every array contiguous with the output's shape, and all pointers at the same phase
  of a 16-byte vector: each thread moves U vectors of N = 16 // (widest itemsize) elements
  with 16-byte loads/stores (vector.py). Covers the four contiguous scalar/vector cases (array or
  by-value scalar on each side). Views such as ``x[1:] + y[1:]`` whose pointers share a phase
  get an output allocated at that phase too; the unaligned first elements then run through a
  second, scalar launch and the body stays vectorised.
* ``strided``: anything else (broadcasting, slices, negative strides, strided outputs, pointers
  of different phases), after collapsing contiguous dims (layout.collapse); specialised on the
  dim count, padded up to 1, 3 or 6, with 32-bit index arithmetic while everything fits.
* ``tile``: a one-input operation whose input is the transpose of its contiguous 2-D output
  (``x.T`` made contiguous, cast or mapped): each block stages a tile (TILE_ROWS x TILE_COLS,
  64 x 64) in shared memory, so both the reads (along the input's rows) and the writes (along the
  output's) are coalesced. When every input row and output row starts on a vector boundary, a
  thread moves vectors of N = 16 // (wider itemsize) elements both ways: a vector read from an
  input row goes into shared memory, and an output vector gathers its N elements from N tile
  rows (XOR-permuted N-element chunks keep those reads free of bank conflicts); otherwise one
  element at a time through a tile padded by a column. Offsets are 32-bit while they fit. The
  TILE_* constants are the design's knobs (benchmarks/tile_sweep.py; TILE_WHOLE_PATH: whole
  tiles skip the bounds checks and issue all of a thread's loads before its shared stores).

Expressions may use ``IDX`` (the flat output index): the creation kernels (arange, eye, tril...)
are elementwise operations without array inputs.
"""

from __future__ import annotations

import itertools
import re

import numpy as np

from ...._backend import BINARY_CATEGORY, UNARY_CATEGORY, unary_result_dtype
from ...._dtypes import CATEGORIES, all_dtypes
from ...engine import compiler, layout, runtime
from ...engine.array import CudaArray, new_array, new_contig
from . import ops
from .ops import (BOOL, PREAMBLE, Op, binary_op, cast_op, compute_dtype, inner_source, ipow_source,
                  vload_statement, where_op)

_tls = runtime._tls
BLOCK = 256
# Vectors per thread on the vec path. 1, 2, 4 within 2% for add (runtime-*.md); 2 for one-input
# operations (exp 0.86 of the copy against 0.96) and 4 for astype float32 -> float64 (0.86
# against 0.95) were slower on the H200 (benchmarks/README.md).
VEC_UNROLL = 1
STRIDED_DIMS = (1, 3, 6)  # strided kernels exist for these dim counts; others are padded up

# The transposing tile's design; benchmarks/tile_sweep.py times the candidates. Every value here
# is part of the kernel's cache key (through tile_vector, tile_design and the index width), so
# changing one builds a new kernel. First sweep (tile-sweep-2026-11-30.log, ratio to the copy
# for 16k x 16k float32 / 16383 x 16385 float32 / 16k x 16k float64): the design before it
# (64-bit offsets, one element an access) 0.717 / 0.679 / 0.923; 32-bit offsets 0.829 / 0.695 /
# 0.916; with 16-byte vectors 0.912 / 0.700 / 0.921; the whole-tile path lost on odd shapes
# (0.636 with vectors) and gained nothing on aligned ones.
TILE_ROWS = 64           # output rows of a tile: the length of each contiguous run it reads
TILE_COLS = 64           # output columns of a tile (input runs), a multiple of 32
TILE_THREADS = 256
TILE_VECTOR_BYTES = 16   # widest global access; below the itemsize, every access is one element
TILE_INDEX_32 = True     # 32-bit offsets while they fit (layout.index_bits), else 64-bit
TILE_WHOLE_PATH = False  # whole tiles skip the bounds checks and issue all their loads first
TILE_SHARED_BYTES = 48 * 1024  # static shared memory a block may use


def tile_vector(in_itemsize: int, out_itemsize: int) -> int:
    """Elements per global access of the transposing tile when everything is aligned."""
    return max(1, TILE_VECTOR_BYTES // max(in_itemsize, out_itemsize))


def tile_design(in_itemsize: int, vector: int) -> tuple:
    """(rows, cols, threads, whole_path) of the transposing tile for input elements of
    `in_itemsize` bytes moved `vector` at a time: TILE_ROWS x TILE_COLS, both halved (columns no
    lower than a warp's 32) until the tile with its padding column fits the static shared memory,
    so 64 x 64 becomes 32 x 32 for 16-byte elements; threads capped at one vector each."""
    rows, cols = TILE_ROWS, TILE_COLS
    while cols * (rows + 1) * in_itemsize > TILE_SHARED_BYTES:
        rows, cols = rows // 2, max(32, cols // 2)
    return rows, cols, min(TILE_THREADS, rows * cols // vector), TILE_WHOLE_PATH


def _elem(dt: np.dtype) -> str:
    """numba scalar type of dtype `dt` in memory (bool is stored as uint8)."""
    return "uint8" if dt == BOOL else dt.name


def _tag(dt: np.dtype) -> str:
    return "bool" if dt == BOOL else dt.name


def _value(raw: str, dt: np.dtype) -> str:
    """An operand's value in the expression, from its stored form."""
    return f"({raw} != 0)" if dt == BOOL else raw


def _store(expr: str, out: np.dtype) -> str:
    return f"{_elem(out)}({expr})"


def padded_dims(d: int) -> int:
    for bucket in STRIDED_DIMS:
        if d <= bucket:
            return bucket
    raise NotImplementedError(f"elementwise kernel over {d} non-collapsible dims")


def kernel_spec(name: str, op: Op, kinds: tuple, dtypes: tuple, lay: str, N: int = 1,
                U: int = 1, D: int = 1, index_bits: int = 64, debug: bool = False,
                tile: tuple = ()):
    """Kernel source for one specialisation. `kinds`: 'a' (array) or 's' (scalar) per operand,
    `dtypes` their dtypes (the op computes on values of these dtypes). `N`: elements per vector
    (vec and tile layouts); `U`: vectors per thread (vec); `D`: dims (strided); `tile`: (rows,
    cols, threads, whole_path) of the tile layout (tile_design)."""
    out_dt = op.out
    args = ["out"]
    argtypes = [_elem(out_dt) + "*"]
    pre = []  # statements building the scalar operands' values
    for k, (kind, dt) in enumerate(zip(kinds, dtypes)):
        if kind == "a":
            args.append(f"in{k}")
            argtypes.append(_elem(dt) + "*")
        elif dt.kind == "c":
            real = "float32" if dt == np.complex64 else "float64"
            args += [f"s{k}re", f"s{k}im"]
            argtypes += [real, real]
            pre.append(f"    s{k} = {dt.name}(complex(s{k}re, s{k}im))")
        else:
            args.append(f"s{k}raw")
            argtypes.append(_elem(dt))
            pre.append(f"    s{k} = {_value(f's{k}raw', dt)}")
    args.append("n")
    argtypes.append("int64")
    idx_t = "uint32" if index_bits == 32 else "int64"
    arrays = ["out"] + [f"in{k}" for k, kind in enumerate(kinds) if kind == "a"]
    if lay == "strided":
        args += [f"sh{j}" for j in range(D)]
        argtypes += [idx_t] * D
        for a in arrays:
            args += [f"{a}_st{j}" for j in range(D)]
            argtypes += ["int64"] * D
        if debug:
            for a in arrays:
                args += [f"{a}_lo", f"{a}_hi"]
                argtypes += ["int64", "int64"]
    elif lay == "tile":
        # the one array operand is read with stride 1 along the output's rows (the layout's
        # definition) and `pitch` along its columns
        args += ["rows", "cols", "pitch", "tiles_c"]
        argtypes += ["int64"] * 3 + ["uint32"]  # 32-bit division of the block index

    def result(load, index):
        """The stored result: `load(k)` is array operand k's raw value, `index` the flat index."""
        def operand(m):
            k = int(m.group(1))
            return f"({_value(load(k), dtypes[k])})" if kinds[k] == "a" else f"s{k}"
        e = re.sub(r"\bIDX\b", f"({index})", op.expr)
        return _store(re.sub(r"\bx(\d)\b", operand, e), out_dt)

    body = []
    helpers = inner_source(op.helpers)
    if helpers:
        body.append(helpers)
    if "_ipow" in op.helpers:
        body.append(ipow_source(op.out).rstrip("\n"))
    body += pre
    if lay == "strided":
        body += ["    i = cuda.grid(1)", "    if i < n:",
                 f"        r = {idx_t}(i)" if index_bits == 32 else "        r = i"]
        for j in range(D - 1, 0, -1):
            body += [f"        c{j} = r % sh{j}", f"        r = r // sh{j}"]
        body.append("        c0 = r")
        for a in arrays:
            body.append(f"        o_{a} = " + " + ".join(f"c{j} * {a}_st{j}" for j in range(D)))
            if debug:
                body += [f"        if o_{a} < {a}_lo or o_{a} >= {a}_hi:", "            trap()"]
        body.append(f"        out[o_out] = {result(lambda k: f'in{k}[o_in{k}]', 'i')}")
    elif lay == "vec":
        body += ["    tid = cuda.threadIdx.x", "    bdim = cuda.blockDim.x", "    blk = cuda.blockIdx.x",
                 f"    v = blk * ({U} * bdim) + tid",
                 f"    if (blk + 1) * ({U * N} * bdim) <= n:"]
        for u in range(U):
            body.append(f"        i{u} = (v + {u} * bdim) * {N}")
        for u in range(U):  # all loads first: U * arrays independent 16-byte loads in flight
            for k, kind in enumerate(kinds):
                if kind == "a":
                    targets = [f"a{k}_{u}_{j}" for j in range(N)]
                    body.append("        " + vload_statement(targets, f"in{k}", f"i{u}"))
        for u in range(U):
            vals = [result(lambda k, u=u, j=j: f"a{k}_{u}_{j}", f"i{u} + {j}") for j in range(N)]
            tup = ", ".join(vals) + ("," if N == 1 else "")
            body.append(f"        vstore{N}(out, i{u}, ({tup}))")
        body += ["    else:", f"        for u in range({U}):", f"            j = (v + u * bdim) * {N}",
                 f"            e = j + {N}", "            if e > n:", "                e = n",
                 "            while j < e:",
                 f"                out[j] = {result(lambda k: f'in{k}[j]', 'j')}",
                 "                j += 1"]
    elif lay == "tile":
        src = kinds.index("a")
        body += _tile_body(f"in{src}", dtypes[src], N, tile, index_bits,
                           lambda tile_value, index: result(lambda k: tile_value, index))
    else:
        raise ValueError(lay)

    tag = "_".join(_tag(d) if kd == "a" else "s" + _tag(d) for kd, d in zip(kinds, dtypes))
    kname = f"ew_{name}_{tag}_to_{_tag(out_dt)}_{lay}"
    if lay == "vec":
        kname += f"{N}x{U}"
    elif lay == "strided":
        kname += f"{D}d{index_bits}"
    elif lay == "tile":
        kname += f"{N}v{tile[0]}x{tile[1]}t{tile[2]}i{index_bits}" + ("w" if tile[3] else "")
    src = PREAMBLE + f"def {kname}({', '.join(args)}):\n" + "\n".join(body) + "\n"
    return compiler.KernelSpec(kname, src, kname, tuple(argtypes))


def _plus(name: str, k: int) -> str:
    return f"({name} + {k})" if k else name


def _tile_body(src: str, in_dt: np.dtype, V: int, tile: tuple, index_bits: int, value) -> list:
    """Body lines of the transposing tile kernel (module docstring). `src` names the input
    pointer, `V` elements move per global access, `tile` is tile_design's (rows, cols, threads,
    whole_path); `value(element, out_index)` is the stored expression of a tile element. The
    local names stay clear of the operands' (s0, in1...)."""
    R, C, T, whole_path = tile
    runs_v = R // V  # vectors along each contiguous input run of the tile
    if R % V or C % 32 or T % 32 or (C * runs_v) % T or \
            any(x & (x - 1) for x in (V, runs_v, C // 32, T)):
        raise ValueError(f"no transposing tile of {R} x {C}, {T} threads, {V}-element vectors")
    I = "int32" if index_bits == 32 else "int64"

    def log2(x):
        return x.bit_length() - 1

    # Shared memory holds the tile as the input lays it out: run j (an output column) is a row
    # of the tile. A thread then reads the V elements of its output vector from V runs, one
    # column of the tile, so rows must not share banks. Scalar elements: the classic padding
    # column. Vectors: padding would misalign them, so the V-element chunks of run j are
    # XOR-permuted by j // V instead: the 32/V runs a warp reads at once hit distinct 16-byte
    # bank groups, and a warp's vector stores into one run stay a permutation of its chunks.
    P = R + 1 if V == 1 else R
    swizzle = min(128 // (V * in_dt.itemsize), runs_v) - 1

    def shared_index(j, a):
        """Index in `tile` of vector a of run j (V consecutive elements)."""
        if V == 1:
            return f"{j} * {P} + {a}"
        return f"{j} * {P} + ({a} ^ (({j} >> {log2(V)}) & {swizzle})) * {V}"

    def load(off):
        return f"vload{V}({src}, {off})" if V > 1 else f"{src}[{off}]"

    # shared indices are uint32 (sums of them and constants known non-negative): a signed one
    # would get numba's negative-index wraparound, a compare and select per access. A vector
    # goes into shared memory element by element: a one-instruction shared vector store needs a
    # helper in vector.py, whose every change recompiles every kernel (its hash is in all cache
    # keys); the global accesses, which the sweep showed to matter, stay 16-byte vectors.
    def to_shared(idx, v, pad):
        if V == 1:
            return [f"{pad}tile[uint32({idx})] = {v}"]
        return [f"{pad}sv = {v}", f"{pad}si = uint32({idx})"] + \
            [f"{pad}tile[{_plus('si', k)}] = sv[{k}]" for k in range(V)]

    per_thread = C * runs_v // T  # vectors each thread moves in, and out
    # loading: vector q of a thread is number tid + T * q of the tile, run-major
    loads = []
    for q in range(per_thread):
        j, a = _plus("lj", (T * q) >> log2(runs_v)), _plus("la", (T * q) & (runs_v - 1))
        loads.append((f"c0 + {j} < ncols and r0 + {V} * {a} < nrows",
                      f"{I}((c0 + {j}) * stride + r0 + {V} * {a})", shared_index(j, a)))
    # storing: a warp writes V output rows x 32 columns (32 // V vectors a row) at once; the
    # warp's q-th such block is number warp + (T // 32) * q of the tile, row-major
    blocks_c = C // 32
    stores = []
    for q in range(per_thread):
        w = (T // 32) * q
        a, b = _plus("wa", w >> log2(blocks_c)), _plus("wb", w & (blocks_c - 1))
        i = f"({V} * {a} + iy)" if V > 1 else a
        j = f"(32 * {b} + {V} * jx)"
        first = shared_index(j, a) + (" + iy" if V > 1 else "")
        stores.append((f"r0 + {i} < nrows and c0 + {j} < ncols",
                       f"{I}((r0 + {i}) * ncols + c0 + {j})", first))

    def store(off, first, pad):
        vals = [value(f"tile[{first} + {k * P}]", f"{off} + {k}") for k in range(V)]
        if V == 1:
            return [f"{pad}out[{off}] = {vals[0]}"]
        return [f"{pad}vstore{V}(out, {off}, ({', '.join(vals)}))"]

    body = [f"    tile = cuda.shared.array({C * P}, {_elem(in_dt)}, alignment=16)",
            "    tid = cuda.threadIdx.x",
            # row-major tile order. Two others were slower for the 16k x 16k float32
            # transpose on the H200 (2026-11-30, ratio to the copy, row-major in the same
            # run): diagonal (concurrent blocks on different tile rows, against partition
            # camping) 0.49 against 0.60; groups of 8 tile rows taken column by column
            # (GEMM-style rasterisation, for input-row locality) 0.48 against 0.56
            "    t = uint32(cuda.blockIdx.x)", "    tr = t // tiles_c",
            f"    r0 = {I}(tr) * {R}", f"    c0 = {I}(t - tr * tiles_c) * {C}",
            f"    nrows = {I}(rows)", f"    ncols = {I}(cols)", f"    stride = {I}(pitch)",
            f"    la = tid & {runs_v - 1}", f"    lj = tid >> {log2(runs_v)}",
            "    jx = tid & 31" if V == 1 else f"    jx = (tid & 31) >> {log2(V)}",
            f"    wa = (tid >> 5) >> {log2(blocks_c)}", f"    wb = (tid >> 5) & {blocks_c - 1}"]
    if V > 1:
        body.append(f"    iy = tid & {V - 1}")
    # whole tiles (all but the last row and column of tiles) may skip the bounds checks and
    # issue all of a thread's loads before its shared stores, so they are in flight together
    if whole_path:
        body += [f"    whole = r0 + {R} <= nrows and c0 + {C} <= ncols", "    if whole:"]
        body += [f"        got{q} = {load(off)}" for q, (_, off, _) in enumerate(loads)]
        for q, (_, _, idx) in enumerate(loads):
            body += to_shared(idx, f"got{q}", "        ")
        body.append("    else:")
    pad = "        " if whole_path else "    "
    for ok, off, idx in loads:
        body += [f"{pad}if {ok}:"] + to_shared(idx, load(off), pad + "    ")
    body.append("    cuda.syncthreads()")
    if whole_path:
        body.append("    if whole:")
        for q, (_, off, first) in enumerate(stores):
            body += [f"        dst{q} = {off}", f"        at{q} = uint32({first})"]
            body += store(f"dst{q}", f"at{q}", "        ")
        body.append("    else:")
    for q, (ok, off, first) in enumerate(stores):
        body += [f"{pad}if {ok}:", f"{pad}    dst{q} = {off}", f"{pad}    at{q} = uint32({first})"]
        body += store(f"dst{q}", f"at{q}", pad + "    ")
    return body


def scalar_args(value, dt):
    """A Python scalar operand as kernel arguments of dtype `dt` (complex: two reals)."""
    if dt.kind == "c":
        v = complex(value)
        return [v.real, v.imag]
    if dt == BOOL:
        return [1 if value else 0]
    if dt.kind in "iu":
        return [int(value) % (1 << (8 * dt.itemsize)) if dt.kind == "u" else int(value)]
    with np.errstate(over="ignore"):  # a weak float scalar rounds to the array's precision
        return [dt.type(value).item()]


def _head(ptr: int, itemsize: int, N: int) -> int:
    """Elements before `ptr` reaches a multiple of the vector size (-1: never, misaligned)."""
    if ptr % itemsize:
        return -1
    return (-ptr) % (N * itemsize) // itemsize


def _new_out(dev, device_index, shape, dt, head, N):
    """A fresh contiguous output whose first `head` elements precede a 16-byte boundary."""
    if not head:
        return new_array(device_index, shape, dt, dev.allocator)
    n = 1
    for s in shape:
        n *= s
    base = new_array(device_index, (n + N,), dt, dev.allocator)
    offset = next(o for o in range(N) if _head(base.ptr + o * dt.itemsize, dt.itemsize, N) == head)
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
    """Compute `op` over `operands` (CudaArrays of the given `dtypes`, or Python scalars taken as
    those dtypes) broadcast to `shape`, into `out` (a new array if None). Returns `out`."""
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
        if n < BLOCK * N:
            # too short for a full block of vectors: the vec kernel takes its scalar path only
            if out is None:
                out = new_array(device_index, tuple(shape), out_dt, dev.allocator)
            _launch_vec(dev, name, op, operands, kinds, dtypes, out, n, N, 0)
            return out
        heads = {_head(a.ptr, a.dtype.itemsize, N) for a in arrays}
        uses_index = "IDX" in op.expr
        if out is None:
            head = next(iter(heads)) if len(heads) == 1 and not uses_index else 0
            out = _new_out(dev, device_index, tuple(shape), out_dt, max(head, 0), N)
        heads.add(_head(out.ptr, out_dt.itemsize, N))
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
    _launch_strided(dev, name, op, operands, kinds, dtypes, out, arrays, n, cshape, cstrides)
    return out


def _launch_vec(dev, name, op, operands, kinds, dtypes, out, n, N, head):
    """The contiguous layout: vectors over the aligned body, then the `head` elements before it
    (views whose pointers share a phase) through the same kernel's scalar path."""
    arrays = [o for o in operands if isinstance(o, CudaArray)]
    U = VEC_UNROLL
    stream = dev._current_stream or dev.default_stream
    keep = (out.buffer,) + tuple(a.buffer for a in arrays)
    key = (name, op, kinds, dtypes, "vec", N, U)
    kern = compiler.cached_kernel(dev.index, "elementwise", key,
                                  lambda: kernel_spec(name, op, kinds, dtypes, "vec", N, U))
    body = n - head
    isz = [a.dtype.itemsize for a in arrays]
    ptrs = [a.ptr + head * s for a, s in zip(arrays, isz)]
    args = [out.ptr + head * out.dtype.itemsize] + _args(operands, dtypes, ptrs) + [body]
    nbytes = out.dtype.itemsize + sum(isz)
    kern(stream, -(-body // (BLOCK * U * N)), BLOCK, args, keep, body * nbytes)
    if head:  # after the body, whose large launch goes out at once; this one waits in the batch
        args = [out.ptr] + _args(operands, dtypes, [a.ptr for a in arrays]) + [head]
        kern(stream, 1, BLOCK, args, keep, head * nbytes)


def _launch_strided(dev, name, op, operands, kinds, dtypes, out, arrays, n, cshape, cstrides):
    D = padded_dims(len(cshape))
    pad = D - len(cshape)
    cshape = (1,) * pad + tuple(cshape)
    cstrides = [(0,) * pad + tuple(st) for st in cstrides]
    bits = layout.index_bits(n, cshape, *cstrides)
    debug = compiler.DEBUG
    key = (name, op, kinds, dtypes, "strided", D, bits, debug)
    kern = compiler.cached_kernel(dev.index, "elementwise", key,
                                  lambda: kernel_spec(name, op, kinds, dtypes, "strided", D=D,
                                                      index_bits=bits, debug=debug))
    args = [out.ptr] + _args(operands, dtypes, [a.ptr for a in arrays]) + [n] + list(cshape)
    for st in cstrides:
        args += list(st)
    if debug:
        for st in cstrides:
            lo = sum(min(0, (m - 1) * s) for m, s in zip(cshape, st))
            hi = sum(max(0, (m - 1) * s) for m, s in zip(cshape, st)) + 1
            args += [lo, hi]
    grid, block = layout.launch_1d(n, BLOCK)
    stream = dev._current_stream or dev.default_stream
    keep = (out.buffer,) + tuple(a.buffer for a in arrays)
    nbytes = n * (out.dtype.itemsize + sum(a.dtype.itemsize for a in arrays))
    kern(stream, grid, block, args, keep, nbytes)


def _launch_tile(dev, name, op, operands, kinds, dtypes, out, src, cshape, src_strides):
    rows, cols = cshape
    pitch = src_strides[1]
    V = tile_vector(src.dtype.itemsize, out.dtype.itemsize)
    # vectors need every run and output row to start on a vector boundary (rows, cols and the
    # input's pitch multiples of V, both pointers aligned); otherwise one element at a time
    if V > 1 and (rows % V or cols % V or pitch % V or src.ptr % (V * src.dtype.itemsize)
                  or out.ptr % (V * out.dtype.itemsize)):
        V = 1
    tile = tile_design(src.dtype.itemsize, V)
    bits = layout.index_bits(rows * cols, cshape, (cols, 1), (1, pitch)) if TILE_INDEX_32 else 64
    key = (name, op, kinds, dtypes, "tile", V, tile, bits)
    kern = compiler.cached_kernel(dev.index, "elementwise", key,
                                  lambda: kernel_spec(name, op, kinds, dtypes, "tile", V,
                                                      index_bits=bits, tile=tile))
    tiles_c = -(-cols // tile[1])
    grid = -(-rows // tile[0]) * tiles_c
    args = [out.ptr] + _args(operands, dtypes, [src.ptr]) + [rows * cols, rows, cols, pitch,
                                                            tiles_c]
    stream = dev._current_stream or dev.default_stream
    kern(stream, grid, tile[2], args, (out.buffer, src.buffer),
         rows * cols * (out.dtype.itemsize + src.dtype.itemsize))


def tile_specs(name: str, op: Op, kinds: tuple, dtypes: tuple) -> list:
    """The transposing tile kernels `launch` picks for arrays under 2**31 elements: vectors
    (aligned, sizes multiples of the vector) and one element at a time (anything else)."""
    src = dtypes[kinds.index("a")]
    widths = sorted({tile_vector(src.itemsize, op.out.itemsize), 1}, reverse=True)
    return [kernel_spec(name, op, kinds, dtypes, "tile", V,
                        index_bits=32 if TILE_INDEX_32 else 64, tile=tile_design(src.itemsize, V))
            for V in widths]


# ---- the primitives built on the template -----------------------------------------------

def broadcast_shape(*shapes):
    nd = max(len(s) for s in shapes)
    res = []
    for i in range(nd):
        m = 1
        for s in shapes:
            j = i - (nd - len(s))
            if j >= 0 and s[j] != 1:
                if m != 1 and m != s[j]:
                    raise ValueError(f"shapes {shapes} cannot be broadcast together")
                m = s[j]
        res.append(m)
    return tuple(res)


_ops: dict = {}


def _binary_op(name, dt):
    op = _ops.get((name, dt))
    if op is None:
        op = _ops[(name, dt)] = binary_op(name, dt)
    return op


def as_dtype(x, dt):
    """An array operand cast to the dtype the operation computes in (a scalar as is)."""
    if isinstance(x, CudaArray) and x.dtype != dt:
        return astype(x, dt)
    return x


def binary(name, a, b, dtype, out=None):
    """The `binary` primitive (see _backend.PRIMITIVES)."""
    if out is None and a.__class__ is CudaArray and b.__class__ is CudaArray:
        # Fast path, the common case (two contiguous arrays of one shape and dtype, in one phase
        # of the vector size): everything but the pointers was looked up once per (op, dtypes,
        # device) by _make_fast.
        fp = _fast.get((name, a.dtype, b.dtype, a.device_index)) if a.dtype == dtype else None
        if fp is not None and a.c_contig and b.c_contig and a.shape == b.shape \
                and b.device_index == a.device_index:
            phase = a.ptr % fp[1]
            if a.size and phase == b.ptr % fp[1]:
                res = _run_fast(fp, a.shape, a.size, (a.ptr, b.ptr), (a.buffer, b.buffer), phase)
                if res is not None:
                    return res
    a_arr = isinstance(a, CudaArray)
    b_arr = isinstance(b, CudaArray)
    if a_arr and b_arr:
        if a.device_index != b.device_index:
            raise ValueError(f"arrays on different devices: cuda:{a.device_index} and "
                             f"cuda:{b.device_index}")
        shape = a.shape if a.shape == b.shape else broadcast_shape(a.shape, b.shape)
    else:
        shape = a.shape if a_arr else b.shape
    if out is not None:
        if out.shape != shape:
            raise ValueError(f"output shape {out.shape} does not match the broadcast shape {shape}")
        if b_arr and b is not out and _overlaps(out, b):
            b = copy(b)  # an in-place op reading another view of its own memory
    dtype = compute_dtype(name, dtype)
    a, b = as_dtype(a, dtype), as_dtype(b, dtype)
    op = _binary_op(name, dtype)
    if out is None and a_arr and b_arr and a.dtype == b.dtype == dtype and a.c_contig \
            and b.c_contig and a.shape == b.shape:
        _make_fast(a.device_index, name, (dtype, dtype), op)
    return launch(name, op, (a, b), (dtype, dtype), shape, out)


# Fast paths of unary(), binary(), where() and astype(): (name or key, input dtypes..., device) ->
# everything a launch over contiguous inputs needs but the pointers (_make_fast), for _run_fast.
_fast: dict = {}


def _make_fast(dev_index, name, dtypes, op, key=None):
    dev = runtime.get_device(dev_index)
    N = layout.vector_width(op.out.itemsize, *(d.itemsize for d in dtypes))
    U = VEC_UNROLL
    kinds = ("a",) * len(dtypes)
    kern = compiler.cached_kernel(dev_index, "elementwise", (name, op, kinds, dtypes, "vec", N, U),
                                  lambda: kernel_spec(name, op, kinds, dtypes, "vec", N, U))
    dev.default_stream  # created now, so the fast path can read dev._default_stream
    fp = (kern, N * dtypes[0].itemsize, op.out, BLOCK * N * U, dev, dev.allocator,
          sum(d.itemsize for d in dtypes) + op.out.itemsize, N)
    _fast[(key or name, *dtypes, dev_index)] = fp
    return fp


def _run_fast(fp, shape, n, ptrs, bufs, phase):
    """The vec kernel of `fp` over n > 0 elements of contiguous inputs at `ptrs`, all `phase`
    bytes past a vector boundary (inputs of one dtype when `phase` is not 0), into a new array;
    None when the phase is not a whole number of elements (the general path takes those). An offset view such as x[1:] runs
    its aligned body, then its head through the same kernel's scalar path: one layout lookup
    instead of launch()'s (80 us of host time for x[1:] + y[1:] before the first launch on the
    H200's host, 2026-11-30)."""
    kern, vbytes, out_dt, per_block, dev, alloc, nb, N = fp
    if _tls.current is not dev:
        dev.activate()
    stream = dev._current_stream or dev._default_stream
    if not phase:
        res = new_contig(dev, shape, out_dt, n, alloc)
        kern(stream, -(-n // per_block), BLOCK, (res.ptr, *ptrs, n), (res.buffer, *bufs), n * nb)
        return res
    isz = vbytes // N
    if phase % isz:
        return None
    head = min((vbytes - phase) // isz, n)
    res = _new_out(dev, dev.index, shape, out_dt, head, N)
    keep = (res.buffer, *bufs)
    body = n - head
    kern(stream, -(-body // per_block), BLOCK,
         (res.ptr + head * out_dt.itemsize, *[p + head * isz for p in ptrs], body), keep, body * nb)
    kern(stream, 1, BLOCK, (res.ptr, *ptrs, head), keep, head * nb)
    return res


def _fast_unary(key, a):
    """The fast path's result of the one-input op registered under `key` (with a's dtype) over
    `a`, or None when there is none or `a` does not fit it."""
    fp = _fast.get((key, a.dtype, a.device_index))
    if fp is not None and a.c_contig and a.size:
        return _run_fast(fp, a.shape, a.size, (a.ptr,), (a.buffer,), a.ptr % fp[1])
    return None


def unary(name, op, a, key=None):
    """launch() of the one-input `op` over `a` (computing on its dtype) into a new array, with
    binary()'s fast path (`key`: what, with a's dtype, determines op; default `name`): the
    single-call benchmarks of issue 4 showed sqrt and sin ~13 us slower than x + x before the
    first launch, all of it the general path's layout analysis."""
    res = _fast_unary(key or name, a)
    if res is not None:
        return res
    if a.c_contig:
        _make_fast(a.device_index, name, (a.dtype,), op, key)
    return launch(name, op, (a,), (a.dtype,), a.shape)


def where(condition, a, b, dtype):
    """The `where` primitive: x1 if x0 else x2 broadcast, computing in `dtype`. Three contiguous
    arrays of one shape at vector boundaries take the fast path (launch()'s layout analysis is
    most of a call's host latency)."""
    if a.__class__ is CudaArray and b.__class__ is CudaArray and a.dtype == b.dtype == dtype \
            and condition.c_contig and a.c_contig and b.c_contig \
            and condition.shape == a.shape == b.shape and a.size \
            and condition.device_index == a.device_index == b.device_index:
        fp = _fast.get(("where", BOOL, dtype, dtype, a.device_index)) or \
            _make_fast(a.device_index, "where", (BOOL, dtype, dtype), where_op(dtype))
        vbytes = fp[1] * dtype.itemsize  # fp[1]: the bool condition's vector bytes
        if not (condition.ptr % fp[1] or a.ptr % vbytes or b.ptr % vbytes):
            return _run_fast(fp, a.shape, a.size, (condition.ptr, a.ptr, b.ptr),
                             (condition.buffer, a.buffer, b.buffer), 0)
    shape = broadcast_shape(condition.shape, *(x.shape for x in (a, b) if isinstance(x, CudaArray)))
    a, b = as_dtype(a, dtype), as_dtype(b, dtype)
    return launch("where", where_op(dtype), (condition, a, b), (BOOL, dtype, dtype), shape)


def copy(a: CudaArray) -> CudaArray:
    """A new C-contiguous copy (a device-to-device memcpy when `a` is contiguous)."""
    if a.c_contig:
        dev = runtime.get_device(a.device_index)
        out = new_array(a.device_index, a.shape, a.dtype, dev.allocator)
        if a.size:
            memcpy_d2d(dev, out, a)
        return out
    return launch("cast", cast_op(a.dtype, a.dtype), (a,), (a.dtype,), a.shape)


def memcpy_d2d(dev, dst: CudaArray, src: CudaArray):
    stream = dev._current_stream or dev.default_stream
    stream.encoder.flush()
    err = runtime.driver().cuMemcpyDtoDAsync(dst.ptr, src.ptr, src.nbytes, stream.handle)[0]
    if err != 0:
        runtime.raise_error(err, "cuMemcpyDtoDAsync", dev)
    stream.encoder.hold(dst.buffer, src.buffer)


def zero_scratch(stream, a: CudaArray):
    """Zero the contiguous scratch array `a` on `stream` (a runtime.Stream: the one whose
    launches will use it, passed in, as another thread may switch the device's current stream
    meanwhile) with the driver's memset: a few microseconds of host time, against about 14 for
    a fill kernel through the elementwise launch path (benchmarks/results/latency-2026-11-30.md),
    which the GPU waited for before a scan."""
    stream.encoder.flush()
    err = runtime.driver().cuMemsetD8Async(a.ptr, 0, a.nbytes, stream.handle)[0]
    if err != 0:
        runtime.raise_error(err, "cuMemsetD8Async", stream.device)
    stream.encoder.hold(a.buffer)


def astype(a: CudaArray, dtype, copy_: bool = True) -> CudaArray:
    dtype = np.dtype(dtype)
    if dtype == a.dtype:
        return copy(a) if copy_ else a
    res = _fast_unary(dtype, a)  # a cast's fast path is keyed by its result dtype
    if res is not None:
        return res
    return unary("cast", cast_op(a.dtype, dtype), a, dtype)


def fill(out: CudaArray, value) -> CudaArray:
    """Write a Python scalar into every element of `out` (any layout)."""
    return launch("fill", cast_op(out.dtype, out.dtype), (value,), (out.dtype,), out.shape, out)


def assign(dst: CudaArray, src) -> CudaArray:
    """dst[...] = src (a CudaArray broadcastable to dst.shape, cast to dst.dtype, or a scalar)."""
    if not isinstance(src, CudaArray):
        return fill(dst, src)
    if len(src.shape) > len(dst.shape) or any(
            n != m and n != 1 for n, m in zip(src.shape[::-1], dst.shape[::-1])):
        raise ValueError(f"could not broadcast a value of shape {src.shape} into a selection of "
                         f"shape {dst.shape}")
    if dst.size and src.size and _overlaps(dst, src) and not (dst.buffer is src.buffer and
                                                              dst.offset == src.offset and
                                                              dst.strides == src.strides):
        src = copy(src)
    return launch("cast", cast_op(src.dtype, dst.dtype), (src,), (src.dtype,), dst.shape, dst)


def _overlaps(a: CudaArray, b: CudaArray) -> bool:
    if a.buffer is not b.buffer and a.buffer.ptr != b.buffer.ptr:
        return False

    def span(x):
        lo = x.offset + sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
        hi = x.offset + sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
        isz = x.dtype.itemsize
        return x.buffer.ptr + lo * isz, x.buffer.ptr + (hi + 1) * isz
    a0, a1 = span(a)
    b0, b1 = span(b)
    return a0 < b1 and b0 < a1


# ---- the kernels precompiled ahead of time ------------------------------------------------

_I64 = np.dtype("int64")

def _launchable_specs(name, op, kinds, dtypes, strided=STRIDED_DIMS, tile=False):
    """The specs `launch` can pick for one operation: vec, strided (32-bit), tile (32-bit, with
    vectors and one element at a time)."""
    arrays = [d.itemsize for k, d in zip(kinds, dtypes) if k == "a"]
    N = layout.vector_width(op.out.itemsize, *arrays)
    specs = [kernel_spec(name, op, kinds, dtypes, "vec", N, VEC_UNROLL)]
    specs += [kernel_spec(name, op, kinds, dtypes, "strided", D=D, index_bits=32) for D in strided]
    if tile:
        specs += tile_specs(name, op, kinds, dtypes)
    return specs


def precompile_specs() -> list:
    """Every elementwise kernel `launch` can pick for arrays under 2**31 elements (the
    kernels `python -m arrayx.cuda.precompile` compiles ahead of time)."""
    out = []
    for name, cat in UNARY_CATEGORY.items():
        for dt in all_dtypes:
            if dt in CATEGORIES[cat] and not ops.is_identity_unary(name, dt) and \
                    ops.constant_unary(name, dt) is None:
                op = ops.unary_op(name, dt, unary_result_dtype(name, dt))
                out += _launchable_specs(name, op, ("a",), (dt,), tile=True)
    for name, cat in BINARY_CATEGORY.items():
        computed = {ops.compute_dtype(name, dt) for dt in all_dtypes if dt in CATEGORIES[cat]}
        for ct in sorted(computed, key=all_dtypes.index):
            op = ops.binary_op(name, ct)
            for kinds in (("a", "a"), ("a", "s"), ("s", "a")):
                out += _launchable_specs(name, op, kinds, (ct, ct))
    for src, dst in itertools.product(all_dtypes, all_dtypes):
        if not (src.kind == "c" and dst.kind not in "cb"):
            out += _launchable_specs("cast", ops.cast_op(src, dst), ("a",), (src,), tile=True)
    for dt in all_dtypes:
        out += _launchable_specs("fill", ops.cast_op(dt, dt), ("s",), (dt,))
        for kinds in itertools.product("as", repeat=2):
            out += _launchable_specs("where", ops.where_op(dt), ("a",) + kinds, (BOOL, dt, dt))
        if dt.kind in "iuf":
            for kinds in itertools.product("as", repeat=2):
                out += _launchable_specs("clip", ops.clip_op(dt), ("a",) + kinds, (dt, dt, dt))
        if dt.kind in "iuf":
            op, dts = ops.arange_op(dt)
            out += _launchable_specs("arange", op, ("s", "s"), dts, strided=())
        if dt.kind in "fc":
            op, dts = ops.linspace_op(dt)
            out += _launchable_specs("linspace", op, ("s",) * 5, dts, strided=())
        out += _launchable_specs("eye", ops.eye_op(dt), ("s", "s"), (_I64, _I64), strided=())
        for upper in (False, True):
            out += _launchable_specs("triu" if upper else "tril", ops.triangle_op(dt, upper),
                           ("a", "s", "s", "s"), (dt, _I64, _I64, _I64))
    return out
