"""Products of a real matrix whose rows are contiguous with a contiguous vector, as arrayx
kernels instead of cublas<t>gemv, for the short rows of tall-skinny matrices.

There cuBLAS's gemv reads the matrix well under the copy bandwidth, and as a library call it also
flushes the encoder's batch and crosses ctypes (benchmarks/probes/gemv_probe.py measures both
beside PyTorch and CuPy). These kernels read the matrix once, with 16-byte loads where the
pointers allow, and queue like every other launch, so the products of a gradient step and the
elementwise operations between them are submitted together. A is R x C with row stride `ld`
(elements), rows contiguous:

* ``rows`` (out[i] = sum_k A[i, k] v[k]; ``X @ w``): a group of T lanes (a power of two up to
  32, by C) owns a row, BLOCK // T rows a block. Lane l folds vectors l, l + T, ... of its row
  times those of v, then the row's tail (C % V elements) one a lane; the group adds its lanes
  with warp shuffles (lanes past the last row add zeros, so every lane runs every shuffle).
  Taken for C <= ROWS_MAX_COLS.
* ``columns`` (out[j] = sum_i v[i] A[i, j]; ``r @ X``): L lanes (ceil(C / V) rounded up to a
  power of two) cover a row, one vector each, and a block reads BLOCK // L rows at a time. Each
  of the S blocks takes a contiguous run of rows, adds its rows in shared memory in a fixed
  order, and writes one partial row; ``fold`` (one block a column) adds the S partials in a
  fixed order. Two launches and no atomics, so the result does not depend on scheduling. Taken
  for rows of at most COLUMNS_MAX_BYTES.

Sums are in the dtype (float32 in float32, as cublasSgemv), one accumulator a vector lane.
"""

from __future__ import annotations

import numpy as np

from ...engine import compiler
from ...engine.array import new_array
from .._common import PREAMBLE, vload_statement

BLOCK = 256
ROWS_MAX_COLS = 1024        # longer rows stay with cuBLAS
COLUMNS_MAX_BYTES = 1024    # wider rows stay with cuBLAS (at most BLOCK // 4 lanes a row)
COLUMN_BLOCKS_PER_SM = 4    # the columns kernel's S: this many blocks a multiprocessor at most
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _load(names: list, ptr: str, index: str) -> str:
    """The statement loading len(names) elements of `ptr` from element `index` into `names`:
    one 16-byte load, or a plain load for one element."""
    if len(names) == 1:
        return f"{names[0]} = {ptr}[{index}]"
    return vload_statement(names, ptr, index)


def _sum_of(V: int) -> str:
    """The accumulators a0..a{V-1} added pairwise."""
    terms = [f"a{q}" for q in range(V)]
    while len(terms) > 1:
        terms = [f"({terms[i]} + {terms[i + 1]})" for i in range(0, len(terms), 2)]
    return terms[0]


def rows_spec(dtype: np.dtype, V: int, T: int) -> compiler.KernelSpec:
    R = dtype.name
    name = f"matvec_rows_{R}_v{V}_t{T}"
    lines = [f"def {name}(out, a, v, rows, cols, ld):",
             "    tid = cuda.threadIdx.x",
             f"    lane = tid % {T}",
             f"    row = cuda.blockIdx.x * {BLOCK // T} + tid // {T}",
             *[f"    a{q} = {R}(0)" for q in range(V)],
             "    if row < rows:",
             "        base = row * ld",
             f"        whole = cols - cols % {V}",
             f"        k = lane * {V}",
             "        while k < whole:"]
    x, w = [f"x{q}" for q in range(V)], [f"w{q}" for q in range(V)]
    lines += ["            " + _load(x, "a", "base + k"), "            " + _load(w, "v", "k")]
    lines += [f"            a{q} += x{q} * w{q}" for q in range(V)]
    lines += [f"            k += {T * V}"]
    if V > 1:
        lines += ["        k = whole + lane",
                  "        while k < cols:",
                  "            a0 += a[base + k] * v[k]",
                  f"            k += {T}"]
    lines += [f"    acc = {_sum_of(V)}"]
    off = T // 2
    while off >= 1:
        lines.append(f"    acc += cuda.shfl_xor_sync(0xffffffff, acc, {off})")
        off //= 2
    lines += ["    if lane == 0 and row < rows:", "        out[row] = acc"]
    src = PREAMBLE + "\n".join(lines) + "\n"
    return compiler.KernelSpec(name, src, name, (f"{R}*", f"{R}*", f"{R}*", "int64", "int64",
                                                 "int64"))


def columns_spec(dtype: np.dtype, V: int, L: int) -> compiler.KernelSpec:
    R = dtype.name
    name = f"matvec_columns_{R}_v{V}_l{L}"
    step = BLOCK // L
    lines = [f"def {name}(part, v, a, rows, cols, ld, chunk):",
             "    tid = cuda.threadIdx.x",
             f"    j = (tid % {L}) * {V}",
             "    start = cuda.blockIdx.x * chunk",
             "    end = min(start + chunk, rows)",
             *[f"    a{q} = {R}(0)" for q in range(V)],
             "    if j < cols:",
             f"        i = start + tid // {L}",
             "        while i < end:",
             "            f = v[i]"]
    lines += ["            " + _load([f"x{q}" for q in range(V)], "a", "i * ld + j")]
    lines += [f"            a{q} += f * x{q}" for q in range(V)]
    lines += [f"            i += {step}",
              f"    sh = cuda.shared.array({BLOCK * V}, {R})",
              *[f"    sh[tid * {V} + {q}] = a{q}" for q in range(V)],
              "    cuda.syncthreads()",
              "    c = tid",
              "    while c < cols:",
              f"        acc = {R}(0)",
              f"        for r in range({step}):",
              f"            acc += sh[r * {L * V} + c]",
              "        part[cuda.blockIdx.x * cols + c] = acc",
              f"        c += {BLOCK}"]
    src = PREAMBLE + "\n".join(lines) + "\n"
    return compiler.KernelSpec(name, src, name, (f"{R}*", f"{R}*", f"{R}*", "int64", "int64",
                                                 "int64", "int64"))


def fold_spec(dtype: np.dtype) -> compiler.KernelSpec:
    """out[j] = sum over s of part[s, j] (S x cols), one block a column, in a fixed order."""
    R = dtype.name
    name = f"matvec_fold_{R}"
    warps = BLOCK // 32
    total = " + ".join(f"sh[{w}]" for w in range(warps))
    lines = [f"def {name}(out, part, parts, cols):",
             "    j = cuda.blockIdx.x",
             "    tid = cuda.threadIdx.x",
             f"    acc = {R}(0)",
             "    s = tid",
             "    while s < parts:",
             "        acc += part[s * cols + j]",
             f"        s += {BLOCK}"]
    off = 16
    while off >= 1:
        lines.append(f"    acc += cuda.shfl_xor_sync(0xffffffff, acc, {off})")
        off //= 2
    lines += [f"    sh = cuda.shared.array({warps}, {R})",
              "    if tid % 32 == 0:",
              "        sh[tid // 32] = acc",
              "    cuda.syncthreads()",
              "    if tid == 0:",
              f"        out[j] = {total}"]
    src = PREAMBLE + "\n".join(lines) + "\n"
    return compiler.KernelSpec(name, src, name, (f"{R}*", f"{R}*", "int64", "int64"))


# ---- host --------------------------------------------------------------------------------------

def layout(rows: int, inner: int, rs: int, cs: int, inc: int):
    """How a product y = Mat @ v runs here, for Mat (rows x inner) with element strides (rs, cs)
    and v of increment `inc`: ('rows', ld) when Mat's rows are contiguous, ('columns', ld) when
    its columns are (A = Mat^T has contiguous rows), or None (cuBLAS)."""
    if inc != 1 or rows <= 1 or inner <= 1:
        return None
    if cs == 1 and rs >= inner:
        return "rows", rs
    if rs == 1 and cs >= rows:
        return "columns", cs
    return None


def supported(kind: str, rows: int, inner: int, dtype: np.dtype) -> bool:
    """Whether the kernels take a product of layout(rows, inner, ...)'s `kind` in `dtype`: a
    real dtype, and rows of A no longer than ROWS_MAX_COLS ('rows') or COLUMNS_MAX_BYTES
    ('columns')."""
    if dtype not in FLOATS:
        return False
    return inner <= ROWS_MAX_COLS if kind == "rows" else rows * dtype.itemsize <= COLUMNS_MAX_BYTES


def _aligned(V: int, itemsize: int, ld: int, *pointers) -> bool:
    return V > 1 and (ld * itemsize) % 16 == 0 and all(p % 16 == 0 for p in pointers)


def product(dev, out, matrix, vector, kind: str, ld: int):
    """out = Mat @ vector (kind 'rows': Mat = matrix, R x C; 'columns': Mat = matrix^T, where
    matrix is the R x C array A with contiguous rows and stride `ld`)."""
    dev.activate()
    dtype = out.dtype
    isz = dtype.itemsize
    V = 16 // isz
    R, C = matrix.shape[-2:]
    if kind == "rows":
        if not _aligned(V, isz, ld, matrix.ptr, vector.ptr):
            V = 1
        T = min(32, _pow2_at_least(-(-C // V)))
        kernel = _kernel(dev, rows_spec, (dtype, V, T))
        grid = -(-R // (BLOCK // T))
        kernel(dev.stream, grid, BLOCK, [out.ptr, matrix.ptr, vector.ptr, R, C, ld],
               (out.buffer, matrix.buffer, vector.buffer), matrix.nbytes + out.nbytes)
        return out
    if not (_aligned(V, isz, ld, matrix.ptr) and C % V == 0):
        V = 1
    L = _pow2_at_least(-(-C // V))
    parts = max(1, min(COLUMN_BLOCKS_PER_SM * dev.multiprocessor_count, -(-R // (BLOCK // L))))
    chunk = -(-R // parts)
    parts = -(-R // chunk)
    part = new_array(dev.index, (parts, C), dtype, dev.allocator)
    kernel = _kernel(dev, columns_spec, (dtype, V, L))
    kernel(dev.stream, parts, BLOCK, [part.ptr, vector.ptr, matrix.ptr, R, C, ld, chunk],
           (part.buffer, vector.buffer, matrix.buffer), matrix.nbytes + part.nbytes)
    fold = _kernel(dev, fold_spec, (dtype,))
    fold(dev.stream, C, BLOCK, [out.ptr, part.ptr, parts, C], (out.buffer, part.buffer),
         part.nbytes + out.nbytes)
    return out


def _kernel(dev, spec_fn, key: tuple):
    return compiler.cached_kernel(dev.index, "matvec", (spec_fn, key), lambda: spec_fn(*key))


def specs() -> list:
    """Every kernel of this module, for ahead-of-time compilation."""
    out = []
    for dt in FLOATS:
        for V in sorted({1, 16 // dt.itemsize}):
            out += [rows_spec(dt, V, T) for T in (1, 2, 4, 8, 16, 32)]
            widest = _pow2_at_least(COLUMNS_MAX_BYTES // dt.itemsize // V)
            out += [columns_spec(dt, V, 1 << e) for e in range(widest.bit_length())]
        out.append(fold_spec(dt))
    return out
