"""Kernel source of the elementwise template: one kernel per (operation, operand kinds and dtypes,
layout), never per shape.

An operation is an ``ops.Op``: an expression over the operand values ``x0, x1, ...`` and the
helpers it calls. ``kernel_spec`` wraps it in kernel source for one layout (which layout a call
takes is decided on the host by dispatch.launch):

* ``vec``: every array contiguous with the output's shape and all pointers at the same phase of
  a 16-byte vector: each thread moves U vectors of N = 16 // (widest itemsize) elements with
  16-byte loads/stores (device/vector.py), then a scalar path for the elements past the last
  whole block (and for the head before the first vector boundary, launched separately).
* ``strided``: anything else, after collapsing contiguous dims (layout.collapse); specialised on
  the dim count, padded up to a _common.DIM_BUCKETS bucket (past the last, the exact count),
  with 32-bit index arithmetic while everything fits.
* ``rows``: the collapsed shape's last dim (a row) is walked by a block's threads, gx blocks a
  row, and the grid's blocks take gy rows at once, so a thread finds its element's offsets with
  one multiply-add per operand (each operand's row offset, decomposed from the row number once
  per row) instead of a division per dim per element: the layout of broadcasts along rows or columns (``x - m`` with
  ``m`` of shape (R, 1) or (1, C)) and of 2-D views with a contiguous inner dim (slices). With
  ``N`` > 1, every array operand is contiguous along its rows with each row on a vector boundary,
  or constant along them (kind ``'r'``: one load a row): U vectors of N elements a thread, as on
  the vec layout; with N = 1, each operand has its own inner stride and a thread moves U
  elements a block's width apart (coalesced, U loads in flight).
* ``tile``: a one-input operation whose input is the transpose of its contiguous 2-D output
  (``x.T`` made contiguous, cast or mapped): each block stages a tile (tuning.TILE_ROWS x
  TILE_COLS) in shared memory, so both the reads (along the input's rows) and the writes (along
  the output's) are coalesced. When every input row and output row starts on a vector boundary,
  a thread moves vectors of N = 16 // (wider itemsize) elements both ways: a vector read from an
  input row goes into shared memory, and an output vector gathers its N elements from N tile
  rows (XOR-permuted N-element chunks keep those reads free of bank conflicts); otherwise one
  element at a time through a tile padded by a column. Offsets are 32-bit while they fit.

Operands are arrays (pointers; kind ``'a'``, or ``'r'`` on the rows layout) or scalars passed by
value (kind ``'s'``: no allocation for a Python scalar).
Expressions may use ``IDX`` (the flat output index): the creation kernels (arange, eye, tril...)
are elementwise operations without array inputs.
"""

from __future__ import annotations

import re

import numpy as np

from ...engine import compiler
from .._common import BOOL, dtype_tag, element_type
from . import tuning
from .._common import PREAMBLE, vload_statement
from .ops import Op, inner_source, ipow_source


def tile_vector(in_itemsize: int, out_itemsize: int) -> int:
    """Elements per global access of the transposing tile when everything is aligned."""
    return max(1, tuning.TILE_VECTOR_BYTES // max(in_itemsize, out_itemsize))


def tile_design(in_itemsize: int, vector: int) -> tuple:
    """(rows, cols, threads, whole_path) of the transposing tile for input elements of
    `in_itemsize` bytes moved `vector` at a time: TILE_ROWS x TILE_COLS, both halved (columns no
    lower than a warp's 32) until the tile with its padding column fits the static shared memory,
    so 64 x 64 becomes 32 x 32 for 16-byte elements; threads capped at one vector each."""
    rows, cols = tuning.TILE_ROWS, tuning.TILE_COLS
    while cols * (rows + 1) * in_itemsize > tuning.TILE_SHARED_BYTES:
        rows, cols = rows // 2, max(32, cols // 2)
    return rows, cols, min(tuning.TILE_THREADS, rows * cols // vector), tuning.TILE_WHOLE_PATH


def _value(raw: str, dt: np.dtype) -> str:
    """An operand's value in the expression, from its stored form."""
    return f"({raw} != 0)" if dt == BOOL else raw


def _store(expr: str, out: np.dtype) -> str:
    return f"{element_type(out)}({expr})"


def kernel_spec(name: str, op: Op, kinds: tuple, dtypes: tuple, lay: str, N: int = 1,
                U: int = 1, D: int = 1, index_bits: int = 64, debug: bool = False,
                tile: tuple = ()):
    """Kernel source for one specialisation. `kinds`: 'a' (array) or 's' (scalar) per operand,
    `dtypes` their dtypes (the op computes on values of these dtypes). `N`: elements per vector
    (vec and tile layouts); `U`: vectors per thread (vec); `D`: dims (strided); `tile`: (rows,
    cols, threads, whole_path) of the tile layout (tile_design)."""
    out_dt = op.out
    args = ["out"]
    argtypes = [element_type(out_dt) + "*"]
    pre = []  # statements building the scalar operands' values
    for k, (kind, dt) in enumerate(zip(kinds, dtypes)):
        if kind != "s":
            args.append(f"in{k}")
            argtypes.append(element_type(dt) + "*")
        elif dt.kind == "c":
            real = "float32" if dt == np.complex64 else "float64"
            args += [f"s{k}re", f"s{k}im"]
            argtypes += [real, real]
            pre.append(f"    s{k} = {dt.name}(complex(s{k}re, s{k}im))")
        else:
            args.append(f"s{k}raw")
            argtypes.append(element_type(dt))
            pre.append(f"    s{k} = {_value(f's{k}raw', dt)}")
    args.append("n")
    argtypes.append("int64")
    idx_t = "uint32" if index_bits == 32 else "int64"
    arrays = ["out"] + [f"in{k}" for k, kind in enumerate(kinds) if kind != "s"]
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
    elif lay == "rows":
        # gx blocks a row, gy rows at once; 32-bit division of the block and row numbers
        args += ["rows", "cols", "gx", "gy"] + [f"sh{j}" for j in range(D)]
        argtypes += ["int64", "int64", "uint32", "int64"] + ["uint32"] * D
        for a in arrays:
            args += [f"{a}_st{j}" for j in range(D)] + ([f"{a}_cs"] if N == 1 else [])
            argtypes += ["int64"] * (D + (N == 1))
    elif lay == "tile":
        # the one array operand is read with stride 1 along the output's rows (the layout's
        # definition) and `pitch` along its columns
        args += ["rows", "cols", "pitch", "tiles_c"]
        argtypes += ["int64"] * 3 + ["uint32"]  # 32-bit division of the block index

    def result(load, index):
        """The stored result: `load(k)` is array operand k's raw value, `index` the flat index."""
        def operand(m):
            k = int(m.group(1))
            return f"({_value(load(k), dtypes[k])})" if kinds[k] != "s" else f"s{k}"
        e = re.sub(r"\bIDX\b", f"({index})", op.expr)
        return _store(re.sub(r"\bx(\d)\b", operand, e), out_dt)

    body = []
    helpers = inner_source(op.helpers)
    if helpers:
        body.append(helpers)
    if "_ipow" in op.helpers:
        body.append(ipow_source(op.out).rstrip("\n"))
    if op.source:
        body.append(op.source.rstrip("\n"))
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
        body += _vector_lines(op, kinds, N, U, result, lambda a, u: f"i{u}",
                              lambda u: f"i{u}", "        ")
        body += ["    else:", f"        for u in range({U}):", f"            j = (v + u * bdim) * {N}",
                 f"            e = j + {N}", "            if e > n:", "                e = n",
                 "            while j < e:",
                 f"                out[j] = {result(lambda k: f'in{k}[j]', 'j')}",
                 "                j += 1"]
    elif lay == "rows":
        body += _rows_body(op, kinds, arrays, N, U, D, result)
    elif lay == "tile":
        src = kinds.index("a")
        body += _tile_body(f"in{src}", dtypes[src], N, tile, index_bits,
                           lambda tile_value, index: result(lambda k: tile_value, index))
    else:
        raise ValueError(lay)

    tag = "_".join(("" if kd == "a" else kd) + dtype_tag(d) for kd, d in zip(kinds, dtypes))
    kname = f"ew_{name}_{tag}_to_{dtype_tag(out_dt)}_{lay}"
    if lay == "vec":
        kname += f"{N}x{U}"
    elif lay == "strided":
        kname += f"{D}d{index_bits}"
    elif lay == "rows":
        kname += f"{N}x{U}d{D}"
    elif lay == "tile":
        kname += f"{N}v{tile[0]}x{tile[1]}t{tile[2]}i{index_bits}" + ("w" if tile[3] else "")
    src = PREAMBLE + f"def {kname}({', '.join(args)}):\n" + "\n".join(body) + "\n"
    return compiler.KernelSpec(kname, src, kname, tuple(argtypes))


def _vector_lines(op, kinds, N, U, result, at, flat, pad) -> list:
    """Lines moving U whole vectors of N elements per thread (the vec and rows layouts): vector
    u of array `a` ('out', 'in0'...) at element `at(a, u)`, its first element's flat output index
    `flat(u)`; a kind 'r' operand is the value ``b<k>`` loaded before."""
    out_dt = op.out
    lines = []
    if op.source:
        # a fused program's function is long: numba's front end inlines an inner function
        # at each call site, so the vector's elements go through one site in a loop (which
        # the compiler unrolls, the results staying in registers) instead of N
        for u in range(U):
            for k, kind in enumerate(kinds):
                if kind == "a":
                    lines.append(f"{pad}a{k}_{u} = vload{N}(in{k}, {at(f'in{k}', u)})")
        for u in range(U):
            def load(k, u=u):
                return f"a{k}_{u}[q]" if kinds[k] == "a" else f"b{k}"
            lines += [f"{pad}r{u} = cuda.local.array({N}, {element_type(out_dt)})",
                      f"{pad}for q in range({N}):",
                      f"{pad}    r{u}[q] = {result(load, flat(u) + ' + q')}"]
            tup = ", ".join(f"r{u}[{j}]" for j in range(N)) + ("," if N == 1 else "")
            lines.append(f"{pad}vstore{N}(out, {at('out', u)}, ({tup}))")
        return lines
    for u in range(U):  # all loads first: U * arrays independent 16-byte loads in flight
        for k, kind in enumerate(kinds):
            if kind == "a":
                targets = [f"a{k}_{u}_{j}" for j in range(N)]
                lines.append(pad + vload_statement(targets, f"in{k}", at(f"in{k}", u)))
    for u in range(U):
        def load(k, u=u, j=0):
            return f"a{k}_{u}_{j}" if kinds[k] == "a" else f"b{k}"
        vals = [result(lambda k, u=u, j=j: load(k, u, j), f"{flat(u)} + {j}")
                for j in range(N)]
        tup = ", ".join(vals) + ("," if N == 1 else "")
        lines.append(f"{pad}vstore{N}(out, {at('out', u)}, ({tup}))")
    return lines


def _rows_body(op, kinds, arrays, N, U, D, result) -> list:
    """Body lines of the rows layout (module docstring). The launch is 1-D (as every launch
    of the family): block b covers columns [blk * U * N * bdim, ...) of rows by, by + gy, ...,
    where by, blk = divmod(b, gx); a row's number is split into its D outer coordinates once
    per row."""
    lines = ["    tid = cuda.threadIdx.x", "    bdim = cuda.blockDim.x", "    b = uint32(cuda.blockIdx.x)",
             "    by = b // gx", "    blk = b - by * gx"]
    if N > 1:
        lines += [f"    v = blk * ({U} * bdim) + tid",
                  f"    whole = (blk + 1) * ({U * N} * bdim) <= cols"]
    else:
        lines += [f"    col = blk * ({U} * bdim) + tid",
                  f"    whole = col + {U - 1} * bdim < cols"]
    lines += ["    row = int64(by)", "    while row < rows:", "        rq = uint32(row)"]
    for j in range(D - 1, 0, -1):
        lines += [f"        p{j} = rq % sh{j}", f"        rq = rq // sh{j}"]
    lines.append("        p0 = rq")
    for a in arrays:
        lines.append(f"        o_{a} = " + " + ".join(f"p{j} * {a}_st{j}" for j in range(D)))
    flat = "row * cols + "
    if N > 1:
        lines += [f"        b{k} = in{k}[o_in{k}]" for k, kind in enumerate(kinds) if kind == "r"]
        lines.append("        if whole:")
        lines += [f"            i{u} = (v + {u} * bdim) * {N}" for u in range(U)]
        lines += _vector_lines(op, kinds, N, U, result, lambda a, u: f"o_{a} + i{u}",
                               lambda u: flat + f"i{u}", "            ")

        def load(k):
            return f"in{k}[o_in{k} + j]" if kinds[k] == "a" else f"b{k}"
        lines += ["        else:", f"            for u in range({U}):",
                  f"                j = (v + u * bdim) * {N}", f"                e = j + {N}",
                  "                if e > cols:", "                    e = cols",
                  "                while j < e:",
                  f"                    out[o_out + j] = {result(load, flat + 'j')}",
                  "                    j += 1"]
    else:
        def at(a, c):
            return f"o_{a} + ({c}) * {a}_cs"

        def element(k, c="c"):
            return f"in{k}[{at('in' + str(k), c)}]"
        lines.append("        if whole:")
        if op.source:  # one call site of a fused program's function (see _vector_lines)
            lines += [f"            for u in range({U}):", "                c = col + u * bdim",
                      f"                out[{at('out', 'c')}] = {result(element, flat + 'c')}"]
        else:
            for u in range(U):  # all loads first: U per array in flight
                lines += [f"            a{k}_{u} = {element(k, f'col + {u} * bdim')}"
                          for k, kind in enumerate(kinds) if kind != "s"]
            for u in range(U):
                c = f"col + {u} * bdim"
                lines.append(f"            out[{at('out', c)}] = "
                             f"{result(lambda k, u=u: f'a{k}_{u}', flat + '(' + c + ')')}")
        lines += ["        else:", f"            for u in range({U}):",
                  "                c = col + u * bdim", "                if c < cols:",
                  f"                    out[{at('out', 'c')}] = {result(element, flat + 'c')}"]
    lines.append("        row += gy")
    return lines


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
    # goes into shared memory element by element (a shared vector store would need a device
    # helper of its own); the global accesses, which the sweep showed to matter, are vectors.
    def to_shared(idx, v, pad):
        if V == 1:
            return [f"{pad}tile[uint32({idx})] = {v}"]
        return [f"{pad}sv = {v}", f"{pad}si = uint32({idx})"] + \
            [f"{pad}tile[{_plus('si', k)}] = sv[{k}]" for k in range(V)]

    per_thread = C * runs_v // T  # vectors each thread moves in, and out
    blocks_c = C // 32

    def offset(base, step, shift, mask, q):
        """base + (((step * q) >> shift) & mask): the run (or row) or vector of a thread's q-th
        move, `q` a number (the unrolled whole path) or the loop variable 'q'."""
        if isinstance(q, int):
            return _plus(base, ((step * q) >> shift) & mask)
        if step % (1 << shift) == 0 and (mask == -1 or (step >> shift) % (mask + 1) == 0):
            k = step >> shift if mask == -1 else 0  # the usual designs: a multiple of q, or 0
            return f"({base} + q * {k})" if k else base
        return f"({base} + (((q * {step}) >> {shift}) & {mask}))"

    def load_slot(q):
        """(bounds check, global offset, shared index) of a thread's q-th load: vector
        tid + T * q of the tile, run-major."""
        j = offset("lj", T, log2(runs_v), -1, q)
        a = offset("la", T, 0, runs_v - 1, q)
        return (f"c0 + {j} < ncols and r0 + {V} * {a} < nrows",
                f"{I}((c0 + {j}) * stride + r0 + {V} * {a})", shared_index(j, a))

    def store_slot(q):
        """(bounds check, global offset, first shared index) of a thread's q-th store: a warp
        writes V output rows x 32 columns (32 // V vectors a row) at once, its q-th such block
        number warp + (T // 32) * q of the tile, row-major."""
        a = offset("wa", T // 32, log2(blocks_c), -1, q)
        b = offset("wb", T // 32, 0, blocks_c - 1, q)
        i = f"({V} * {a} + iy)" if V > 1 else a
        j = f"(32 * {b} + {V} * jx)"
        first = shared_index(j, a) + (" + iy" if V > 1 else "")
        return (f"r0 + {i} < nrows and c0 + {j} < ncols", f"{I}((r0 + {i}) * ncols + c0 + {j})",
                first)

    def store(off, first, pad):
        vals = [value(f"tile[{first} + {k * P}]", f"{off} + {k}") for k in range(V)]
        if V == 1:
            return [f"{pad}out[{off}] = {vals[0]}"]
        return [f"{pad}vstore{V}(out, {off}, ({', '.join(vals)}))"]

    body = [f"    tile = cuda.shared.array({C * P}, {element_type(in_dt)}, alignment=16)",
            "    tid = cuda.threadIdx.x",
            # row-major tile order: diagonal and grouped orders were slower
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
        loads = [load_slot(q) for q in range(per_thread)]
        body += [f"    whole = r0 + {R} <= nrows and c0 + {C} <= ncols", "    if whole:"]
        body += [f"        got{q} = {load(off)}" for q, (_, off, _) in enumerate(loads)]
        for q, (_, _, idx) in enumerate(loads):
            body += to_shared(idx, f"got{q}", "        ")
        body.append("    else:")
    # the bounds-checked moves as loops (the compiler unrolls them): one copy of the operation
    # in the source instead of per_thread, which is most of a tile kernel's compile time
    pad = "        " if whole_path else "    "
    ok, off, idx = load_slot("q")
    body += [f"{pad}for q in range({per_thread}):", f"{pad}    if {ok}:"]
    body += to_shared(idx, load(off), pad + "        ")
    body.append("    cuda.syncthreads()")
    if whole_path:
        body.append("    if whole:")
        for q, (_, off, first) in enumerate(store_slot(q) for q in range(per_thread)):
            body += [f"        dst{q} = {off}", f"        at{q} = uint32({first})"]
            body += store(f"dst{q}", f"at{q}", "        ")
        body.append("    else:")
    ok, off, first = store_slot("q")
    body += [f"{pad}for q in range({per_thread}):", f"{pad}    if {ok}:",
             f"{pad}        dst = {off}", f"{pad}        at = uint32({first})"]
    body += store("dst", "at", pad + "        ")
    return body


def tile_specs(name: str, op: Op, kinds: tuple, dtypes: tuple) -> list:
    """The transposing tile kernels `launch` picks for arrays under 2**31 elements: vectors
    (aligned, sizes multiples of the vector) and one element at a time (anything else)."""
    src = dtypes[kinds.index("a")]
    widths = sorted({tile_vector(src.itemsize, op.out.itemsize), 1}, reverse=True)
    return [kernel_spec(name, op, kinds, dtypes, "tile", V,
                        index_bits=32 if tuning.TILE_INDEX_32 else 64, tile=tile_design(src.itemsize, V))
            for V in widths]
