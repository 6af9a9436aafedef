"""Pieces of scan kernel source for one operator and dtype (the row kernel, row_kernel.py, puts
them together), and the column-scan kernel.

Column scan (the scanned axis is not last and there are at least COLUMN_MIN columns): one thread
per column of the (P, K, Q) view walks K sequentially, coalesced across the Q contiguous columns,
COLUMN_UNROLL loads in flight.
"""

from __future__ import annotations

import numpy as np

from .. import _common
from ...engine import compiler
from .._common import PREAMBLE, vload_statement
from . import tuning
from .status import FLAG_PREFIX

# a thread's global index, 64-bit (cuda.grid(1) may be 32-bit)
GID = "(int64(cuda.blockIdx.x) * int64(cuda.blockDim.x) + int64(cuda.threadIdx.x))"


def index_type(bits: int) -> str:
    """The unsigned type of a kernel's index arithmetic (divisions) at `bits` bits."""
    return "uint32" if bits == 32 else "uint64"


def op_expr(op: str, D: np.dtype, a: str, b: str) -> str:
    """a op b in D (integer results wrap: numba widens small integers)."""
    sym = "+" if op in ("sum", "nansum") else "*"
    return f"{D.name}({a} {sym} {b})"


def choose(D: np.dtype, cond: str, a: str, b: str) -> str:
    """`a` where `cond` holds, else `b`, as values of D: device/branchless.py's select (fewer
    blocks for numba's front end, the same PTX), but a branch for complex D, whose select NVVM
    compiles to other code than the branch (not measured on a GPU, so the branch stays)."""
    return f"({a} if {cond} else {b})" if D.kind == "c" else f"select({cond}, {a}, {b})"


def transform(src: np.dtype, D: np.dtype, flag: bool, x: str, op: str = "sum") -> str:
    """The scanned value of a loaded raw element: its cast to D, or 1/0 for a flag scan; the
    NaN-ignoring scans (op nansum, nanprod) of floating input read a NaN (complex: either part)
    as 0 / 1, NumPy's replacement."""
    if flag or src == _common.BOOL:
        return f"{D.name}(select({x} != 0, 1, 0))"
    if D.kind == "c" and src.kind != "c":
        value = f"{D.name}(complex({x}, 0))"
    else:
        value = f"{D.name}({x})"
    if op in ("nansum", "nanprod") and src.kind in "fc":
        isnan = f"{x}.real != {x}.real or {x}.imag != {x}.imag" if src.kind == "c" else \
            f"{x} != {x}"
        return f"({D.name}({int(op == 'nanprod')}) if {isnan} else {value})"
    return value


def dtype_word(dt: np.dtype) -> str:
    """A scanned dtype's part of a kernel name (bool, not numba's uint8)."""
    return dt.name if dt != _common.BOOL else "bool"


def shuffles(D: np.dtype) -> str:
    """Inner functions shuffling a value of D (complex by parts, small ints widened)."""
    fns = []
    for name, call in (("shup", "cuda.shfl_up_sync"), ("shdn", "cuda.shfl_down_sync"),
                       ("shidx", "cuda.shfl_sync")):
        if D.kind == "c":
            body = (f"{D.name}(complex({call}(0xffffffff, v.real, d), "
                    f"{call}(0xffffffff, v.imag, d)))")
        elif D.itemsize < 4:
            body = f"{D.name}({call}(0xffffffff, int32(v), d))"
        elif D.kind == "u":
            signed = f"int{8 * D.itemsize}"
            body = f"{D.name}({call}(0xffffffff, {signed}(v), d))"
        else:
            body = f"{call}(0xffffffff, v, d)"
        fns.append(f"    def {name}(v, d):\n        return {body}\n")
    return "".join(fns)


def comb_source(op: str, D: np.dtype) -> str:
    """comb: the segmented operator on (valid, head, value) triples (a kernel's inner function)."""
    return f"""    def comb(lv, lh, la, rv, rh, ra):
        # the segmented operator on (valid, head, value) triples, left then right
        if rv == 0:
            return int32(lv), int32(lh), la
        if lv == 0 or rh != 0:
            return int32(1), int32(lh | rh), ra
        return int32(1), int32(lh), {op_expr(op, D, 'la', 'ra')}"""


def segmented_warp_scan(op: str, D: np.dtype, head: str, value: str, up: bool,
                        indent: int) -> str:
    """Source of a warp's segmented inclusive scan (Hillis-Steele, 5 shuffle steps) of the
    (`head`, `value`) pairs its lanes hold, `up` from lane 0 (each lane combines the lanes below
    it) or down from lane 31, stopping at a head; `indent` spaces deep."""
    shfl, shuf, inside = (("shfl_up_sync", "shup", "lane >= d") if up else
                          ("shfl_down_sync", "shdn", "lane + d < 32"))
    pad = " " * indent
    return f"""{pad}d = 1
{pad}while d < 32:
{pad}    ho = cuda.{shfl}(0xffffffff, {head}, d)
{pad}    ao = {shuf}({value}, d)
{pad}    if {inside}:
{pad}        if {head} == 0:
{pad}            {value} = {op_expr(op, D, 'ao', value)}
{pad}        {head} = int32({head} | ho)
{pad}    d *= 2"""


def lookback_source(op: str, D: np.dtype, first_head: str) -> str:
    """The look-back of one warp (8 spaces deep): unless `first_head` (the tile starts a
    segment), read 32 predecessors' statuses at a time (a spin until each is published), reduce
    the window down to its nearest complete prefix, until one is found; then lane 0 publishes
    the tile's inclusive prefix (its aggregate `ta`, head flag `th`) and leaves the exclusive
    prefix (xv valid, xa) in sh_pv / sh_pa."""
    zero = f"{D.name}(0)"
    return f"""        xv = int32(0)
        xa = {zero}
        if {first_head} == 0:
            j = tile - 1 - lane
            while True:
                if j >= 0:
                    fl, va = read(j)
                else:
                    fl = int32({FLAG_PREFIX})
                    va = {zero}
                hh = int32(fl == {FLAG_PREFIX})
{segmented_warp_scan(op, D, 'hh', 'va', False, 16)}
                wh = cuda.shfl_sync(0xffffffff, hh, 0)
                wa = shidx(va, 0)
                xv, xh, xa = comb(int32(1), wh, wa, xv, int32(0), xa)
                if wh != 0:
                    break
                j -= 32
            if lane == 0 and th == 0:
                publish(tile, {FLAG_PREFIX}, {op_expr(op, D, 'xa', 'ta')})
        if lane == 0:
            sh_pv[0] = xv
            sh_pa[0] = xa"""


def guarded_loads(names, ptr, first, addrs, fill, vector, indent):
    """Source lines loading the len(names) elements from index `first` of `ptr` into `names`:
    one 16-byte vector when `vector` and all are before `total`, else one by one (`addrs`: each
    one's index expression), `fill` past `total`. The one-by-one loads of a vector's tail are
    device/guarded.py's load_or; a strided view's keep the branch in the source, where NVVM
    computes each address after its test (with load_or, before: other PTX, not measured)."""
    if not vector:
        return [f"{indent}{name} = {ptr}[{addr}] if {first} + {j} < total else {fill}"
                for j, (name, addr) in enumerate(zip(names, addrs))]
    scalar = [f"{name} = load_or({ptr}, {addr}, {first} + {j} < total, {fill})"
              for j, (name, addr) in enumerate(zip(names, addrs))]
    return [f"{indent}if {first} + {len(names)} <= total:",
            f"{indent}    {vload_statement(names, ptr, first)}", f"{indent}else:"] + \
        [f"{indent}    {line}" for line in scalar]


def prefetch_lines(ptr, start, count, itemsize, threads):
    """Source lines (4 spaces deep) by which the block's `threads` threads prefetch into L2 the
    `count` elements of `ptr` from index `start` (an expression), one 128-byte line a thread at
    a time, when they are all before `total` (a partial last tile is not worth the branches)."""
    lines = [f"    if {start} + {count} <= total:"]
    per_line = 128 // itemsize
    n_lines = -(-count // per_line)
    for k in range(-(-n_lines // threads)):
        line = f"(tid + {k * threads})" if k else "tid"
        lines.append(f"        if {line} < {n_lines}:\n            prefetch_line({ptr}, {start} + "
                     f"{line} * {per_line})")
    return lines


def column_spec(op: str, src: np.dtype, D: np.dtype, bits: int):
    """One thread per column of a (P, K, Q) view: a sequential scan down K."""
    ut = index_type(bits)
    U = tuning.COLUMN_UNROLL

    def step(k):
        return [f"acc = {op_expr(op, D, 'acc', transform(src, D, False, f'x{k}', op))}",
                f"out[ob + (k + {k}) * osk] = acc"]
    loads = [f"        x{k} = inp[ib + (k + {k}) * isk]" for k in range(U)]
    steps = ["        " + s for k in range(U) for s in step(k)]
    kname = f"scan_col_{op}_{dtype_word(src)}_to_{D.name}_{bits}"
    body = f"""def {kname}(out, inp, C, Q, K, isp, isq, isk, osp, osq, osk):
    c = {GID}
    if c >= C:
        return
    p = int64({ut}(c) // {ut}(Q))
    q = c - p * Q
    ib = p * isp + q * isq
    ob = p * osp + q * osq
    acc = {transform(src, D, False, 'inp[ib]', op)}
    out[ob] = acc
    k = int64(1)
    while k + {U} <= K:
{chr(10).join(loads)}
{chr(10).join(steps)}
        k += {U}
    while k < K:
        acc = {op_expr(op, D, 'acc', transform(src, D, False, 'inp[ib + k * isk]', op))}
        out[ob + k * osk] = acc
        k += 1
"""
    argtypes = (f"{D.name}*", f"{_common.element_type(src)}*") + ("int64",) * 9
    return compiler.KernelSpec(kname, PREAMBLE + body, kname, argtypes)
