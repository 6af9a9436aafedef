"""The scan kernel family: cumulative sums and products, and what a prefix sum of flags gives
(nonzero, boolean-mask selection and assignment).

Row scan (the scanned axis is the last one of a (M rows, K) view): a single-pass decoupled
look-back scan (Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled
Look-back"), so the data are read once and written once. The M rows are one flat sequence of
M * K elements cut into tiles of SCAN_BLOCK threads x V vectors x N elements; a row start is a
*segment head* and the scan is segmented: the operator works on pairs (h, a) with
``(h1, a1) . (h2, a2) = (h1 | h2, a2 if h2 else a1 op a2)``, so one launch scans every row, short
rows share a tile, long rows span many, and the first element of a row is its value exactly (no
identity is ever combined in: -0.0 sums and complex products come out as NumPy's). One row
(1-D inputs, every flag scan) is specialised: no per-element row arithmetic; so are flat rows
that fill whole tiles of it (ALIGNED_MIN_VECTORS): their row starts are tile starts.

* A block takes its tile id from an atomic counter, so every lower tile belongs to a block that
  started earlier and is resident: waiting on it cannot deadlock.
* Warp w of a tile owns a contiguous chunk; lane l loads vector v at chunk + (32 v + l) N
  (16-byte vectors, vector.py, when both pointers are aligned and the view is flat), so every
  load and store instruction of a warp covers 512 contiguous bytes. A thread issues all its V
  loads first (in flight together), scans each vector serially, then a warp scan (shuffles) per
  round v gives the lane prefixes, a carry chains the rounds, warp totals go through shared
  memory. The scanned values wait in shared memory (not registers: the rounds stay a loop, which
  keeps numba's compile time down) while the tile's prefix is found, then one pass adds it and
  stores. A tile's wait for its prefix is most of what limits the rate; each block prefetches
  into L2 the input of a tile some way ahead (PREFETCH_BYTES), so DRAM has more bytes in flight
  than the tiles held (benchmarks/README.md, "The one-row scan", has the measurements). A byte
  per element beside the values says whether the element is 'open' (no segment head before it
  in its warp's chunk: it takes the prefix); one plain row (no segments, no compaction) needs
  none, so its tiles are larger (ONE_ROW_VECTORS).
* Tile status words, in a per-stream area kept between launches (_status_area, in the stream's
  runtime.Stream.scratch; zeroed once, when allocated): flag 1 aggregate (this tile's total, no
  segment head in it), 2 inclusive prefix (complete: nothing before it matters), tagged with the
  launch's epoch (flag + 4 x epoch, one more epoch a launch), so the words of earlier launches
  read as not yet published and no launch clears the area; the tile counter is never reset
  either: a launch's tile ids count from the counter's value before it (`first`). A tile
  publishes its aggregate (or directly its prefix when it holds a head), then warp 0 (one row: a
  look-back warp of its own, which publishes the aggregate before the tile's scan,
  LOOKBACK_WARP) looks back 32 predecessors at a time (a warp-wide spin, a shuffle reduction of
  the window truncated at its nearest complete prefix) and publishes its inclusive prefix.
  Values of at most 32 bits share one 64-bit word with the flag (relaxed strong loads and
  stores: the word is self-contained); wider and complex values are stored first and the flag
  released after them (acquire loads). The PTX ld.acquire / st.release intrinsics are in the
  kernel source itself (part of its cache key).

Column scan (the scanned axis is not last and there are at least COLUMN_MIN columns): one thread
per column of the (P, K, Q) view walks K sequentially, coalesced across the Q contiguous columns,
COLUMN_UNROLL loads in flight. With fewer columns the axis is made last by one copy of the
permuted view and the row scan runs; the result is then a permuted view of a contiguous array.

Flags (nonzero, masks): the same row scan with "x != 0" as the input transform (NaN and complex
numbers with either part nonzero count), into int32 ranks (int64 past 2^31 elements); the total
is the last rank (one device-to-host read), then one kernel writes coordinates (nonzero) or the
selected rows (x[mask] with a mask over x's leading dims only). x[mask] with a mask of x's shape
is one fused kernel: the flag scan's second pass moves each selected element of x (16-byte
vector reads) to out[rank - 1] instead of storing ranks, and writes the count to the status
area's second word (the one sync). The output is allocated at x.size elements before the count
is known; the result is a view of its first `count` when at least half is selected, else a
copy of it, so the oversized allocation goes back to the cache at once.
x[mask] = value with a Python scalar, or a value constant along the selection, is one where
kernel over x with the mask broadcast (no ranks, no sync); a value with one row per selected
element needs the ranks (one sync checks its length) and a scatter kernel.
"""

from __future__ import annotations

import functools

import numpy as np

from ...engine import compiler, layout, runtime, transfer
from .. import elementwise
from ...engine.array import CudaArray, new_array, new_contig
from ..elementwise.ops import BOOL, PREAMBLE, vload_statement

BLOCK = 256              # threads per block of the column scan and the flag consumers
# Row-scan tile: SCAN_BLOCK threads x SCAN_VECTORS 16-byte vectors each (for elements of 4 bytes
# or more; narrower ones keep the same element count). Bigger tiles mean fewer look-backs (each
# costs L2 round trips on the critical path) but fewer resident blocks. H200, scan_sweep.py
# (2^28 float32 cumulative_sum as a fraction of the copy's bandwidth, read + write; 2^26 float32
# x[mask] with half selected), before the look-back warp and the prefetch below: 256 x 8 0.59
# and 0.376 ms, 128 x 8 0.58 / 0.377, 128 x 16 0.56 / 0.414, 256 x 4 0.43 / 0.427, 512 x 4 0.43
# / 0.447, 512 x 2 0.28 / 0.577.
SCAN_BLOCK = 256
SCAN_VECTORS = 8
# One plain row (a 1-D scan, no mask compaction) has no segment heads past its first element, so
# its tile keeps no per-element head flags in shared memory and holds more vectors: this many
# (of 16 bytes, for elements of 4 bytes or more, as SCAN_VECTORS), 45 KiB of float32 values.
ONE_ROW_VECTORS = 11
# One row (not segmented): the block gets a warp more than the tile's threads, which publishes
# the tile's sum as soon as the tile's warps have added up their loads and then looks back while
# they scan (row_spec's lookback_warp), instead of warp 0 doing both in turn. On the H200
# (scan-sweep-2026-11-30-session5-run2.log, 2^28 float32 cumulative_sum, of the copy): 256 x 11
# 0.66 without, 0.72 with (56 registers: 4 blocks of 288 threads an SM still fit); 224 x 11
# 0.69, 256 x 10 0.69, 256 x 8 0.64, 128 x 11 0.68. x[mask] of 2^26 float32: 0.438 -> 0.424 ms.
LOOKBACK_WARP = True
# A row-scan block, right after claiming its tile, prefetches into L2 the input of the tile
# PREFETCH_BYTES of traffic (its tiles' input + output bytes) further on (whole tiles; 0: none);
# x[mask] also its own tile of x, which it reads only after the look-back. Why: a one-row tile
# was held 13.2 us, 6.0 of them waiting for its prefix, that is for predecessors still loading,
# and the tiles that registers and shared memory let an SM hold (4) bounded the bytes in flight;
# the prefetch puts more in flight without holding any. H200, 2^28 float32 cumulative_sum: 0.73
# of the copy -> 0.79-0.82 (6-12 MiB ahead alike; 16 MiB and more slower: L2 drops the lines
# before use); x[mask] of 2^26 float32 0.44-0.50 -> 0.37-0.39 ms. What was measured for the
# one-row scan, and the designs tried for it and removed: benchmarks/README.md, "The one-row
# scan (issue 5)".
PREFETCH_BYTES = 8 << 20
# One plain row's kernel is compiled for this many resident blocks an SM (launch bounds): what
# shared memory holds of its largest tile, and what its registers would not allow otherwise (its
# rounds without segment-head logic take 63-64 registers unbounded, 3 blocks; bounded: 56, 8
# bytes spilled). Those rounds were 48% of the kernel's executed instructions (115 a warp-round) and
# it issued on 80% of its cycles; lean: 384M instructions instead of 504M, issuing on 61%, 2^28
# float32 cumulative_sum 0.620-0.630 ms against 0.633-0.639 in the same run (0.82-0.83 of the
# copy against 0.81; scan-sweep-2026-11-30-session8-lean-rounds.log, ncu-scan-2026-11-30-
# session8-*.txt). Fewer blocks are slower: 3 (looping blocks) 0.80-0.83 ms, and so are 5 or 6
# of smaller tiles (0.67-0.87 ms; benchmarks/README.md).
PLAIN_ROW_BLOCKS = 4
# Rows of a flat (M, K) scan whose length is a multiple of a one-row tile of at least this many
# vectors a thread (at most the one-row kernel's) run the one-row kernel, look-back warp
# included (_aligned_row_vectors): a tile starting a row publishes its prefix at once and no
# element needs a head byte. H200 (scan-rows-2026-11-30-session8-aligned.log, float32
# cumulative_sum(x, axis=1), of the copy; the segmented kernel in brackets): 16k x 16k 0.78
# (0.46), 256 x 2^20 0.74 (0.43), 2^16 x 4096 0.87 (0.48), 2^15 x 8192 0.76-0.80 (0.46). 0: never.
ALIGNED_MIN_VECTORS = 4
SHARED_LIMIT = 48 * 1024  # static shared memory per block
SHARED_RESERVE = 2048  # shared memory for the tile's small arrays (warp totals, the prefix)
COLUMN_MIN = 1 << 16     # columns needed to fill the GPU with one thread per column
COLUMN_UNROLL = 8        # loads in flight per thread in the column scan
FLAG_AGGREGATE = 1
FLAG_PREFIX = 2
EPOCH_LIMIT = (1 << 30) - 1  # flag + 4 x epoch must fit the 32 flag bits of a one-word status
STATUS_HEAD = 2  # words before the tiles' statuses: the tile counter, x[mask]'s count
STATUS_SCRATCH = "scan status"  # (it, words a tile): a status area's key in Stream.scratch
# a thread's global index, 64-bit (cuda.grid(1) may be 32-bit)
GID = "(int64(cuda.blockIdx.x) * int64(cuda.blockDim.x) + int64(cuda.threadIdx.x))"
_I32 = np.dtype("int32")
_I64 = np.dtype("int64")
_U64 = np.dtype("uint64")

# PTX memory-model accesses for the tile status words, and a same-size bit cast. Part of every
# row-scan kernel's source, so a change here changes the kernels' cache keys.
SYNC_SOURCE = '''
from numba.core.extending import intrinsic as _intrinsic
from numba import types as _types
from llvmlite import ir as _ir


def _global_u64(context, builder, ptr, idx):
    base = context.get_data_type(_types.uint64)
    addr = builder.gep(ptr, [idx])
    vp = builder.bitcast(addr, _ir.PointerType(base))
    gp = builder.addrspacecast(vp, _ir.PointerType(base, addrspace=1))
    return builder.ptrtoint(gp, _ir.IntType(64))


def _u64_load(kind):
    @_intrinsic
    def load(typingctx, ptr, idx):
        sig = _types.uint64(ptr, idx)

        def codegen(context, builder, sig, args):
            a = _global_u64(context, builder, args[0], args[1])
            fty = _ir.FunctionType(_ir.IntType(64), [_ir.IntType(64)])
            return builder.asm(fty, "ld." + kind + ".gpu.global.u64 $0, [$1];", "=l,l,~{memory}",
                               [a], side_effect=True)
        return sig, codegen
    return load


ld_acquire = _u64_load("acquire")
ld_relaxed = _u64_load("relaxed")


def _u64_store(kind):
    @_intrinsic
    def store(typingctx, ptr, idx, value):
        sig = _types.void(ptr, idx, _types.uint64)

        def codegen(context, builder, sig, args):
            a = _global_u64(context, builder, args[0], args[1])
            fty = _ir.FunctionType(_ir.VoidType(), [_ir.IntType(64), _ir.IntType(64)])
            builder.asm(fty, "st." + kind + ".gpu.global.u64 [$0], $1;", "l,l,~{memory}",
                        [a, args[2]], side_effect=True)
            return context.get_dummy_value()
        return sig, codegen
    return store


st_release = _u64_store("release")
st_relaxed = _u64_store("relaxed")


@_intrinsic
def atom_add(typingctx, ptr, idx, value):
    sig = _types.uint64(ptr, idx, _types.uint64)

    def codegen(context, builder, sig, args):
        a = _global_u64(context, builder, args[0], args[1])
        fty = _ir.FunctionType(_ir.IntType(64), [_ir.IntType(64), _ir.IntType(64)])
        return builder.asm(fty, "atom.global.add.u64 $0, [$1], $2;", "=l,l,l,~{memory}",
                           [a, args[2]], side_effect=True)
    return sig, codegen


@_intrinsic
def bitcast(typingctx, x, proto):
    sig = proto(x, proto)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(sig.return_type))
    return sig, codegen
'''


# %globaltimer (ns), for the phase trace of benchmarks/scan_phase_probe.py (row_spec's `trace`)
TRACE_SOURCE = '''

@_intrinsic
def globaltimer(typingctx):
    sig = _types.int64()

    def codegen(context, builder, sig, args):
        fty = _ir.FunctionType(_ir.IntType(64), [])
        return builder.asm(fty, "mov.u64 $0, %globaltimer;", "=l", [], side_effect=True)
    return sig, codegen
'''
TRACE_PHASES = ("claimed", "loaded", "aggregate published", "prefix found", "stored")

# prefetch.global.L2 of one 128-byte line (row_spec's L2 prefetch)
PREFETCH_SOURCE = '''

@_intrinsic
def prefetch_line(typingctx, ptr, idx):
    sig = _types.void(ptr, idx)

    def codegen(context, builder, sig, args):
        a = _global_u64(context, builder, args[0], args[1])
        fty = _ir.FunctionType(_ir.VoidType(), [_ir.IntType(64)])
        builder.asm(fty, "prefetch.global.L2 [$0];", "l", [a], side_effect=True)
        return context.get_dummy_value()
    return sig, codegen
'''


def _elem(dt: np.dtype) -> str:
    return "uint8" if dt == BOOL else dt.name


# ---- per-dtype pieces of source --------------------------------------------------------------

def _op_expr(op: str, D: np.dtype, a: str, b: str) -> str:
    """a op b in D (integer results wrap: numba widens small integers)."""
    sym = "+" if op == "sum" else "*"
    return f"{D.name}({a} {sym} {b})"


def _transform(src: np.dtype, D: np.dtype, flag: bool, x: str) -> str:
    """The scanned value of a loaded raw element: its cast to D, or 1/0 for a flag scan."""
    if flag:
        return f"{D.name}(1 if {x} != 0 else 0)"
    if src == BOOL:
        return f"{D.name}(1 if {x} != 0 else 0)"
    if D.kind == "c" and src.kind != "c":
        return f"{D.name}(complex({x}, 0))"
    return f"{D.name}({x})"


def _shuffles(D: np.dtype) -> str:
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


def _lanes(D: np.dtype):
    """The value's lanes as stored in status words: (count, real lane dtype)."""
    if D.kind == "c":
        return 2, np.dtype("float32" if D == np.complex64 else "float64")
    return 1, D


def _to_bits(L: np.dtype, v: str) -> str:
    """uint64 holding the bits of a lane value (zero-extended when narrower)."""
    if L.kind == "f":
        if L.itemsize == 4:
            return f"uint64(bitcast({v}, uint32(0)))"
        return f"bitcast({v}, uint64(0))"
    if L.itemsize < 8:
        return f"(uint64({v}) & uint64(0xffffffff))"
    return f"uint64({v})"


def _from_bits(L: np.dtype, w: str) -> str:
    if L.kind == "f":
        if L.itemsize == 4:
            return f"bitcast(uint32({w} & uint64(0xffffffff)), float32(0))"
        return f"bitcast({w}, float64(0))"
    return f"{L.name}({w})"


def status_words(D: np.dtype) -> int:
    """uint64 words per tile: 1 when flag and value share a word, else flag + 2 value slots."""
    count, L = _lanes(D)
    return 1 if count == 1 and L.itemsize <= 4 else 1 + 2 * count


def tile_knobs() -> tuple:
    """The module's tile settings that row scans depend on (sweeps patch them), as one value:
    (SCAN_BLOCK, SCAN_VECTORS, ONE_ROW_VECTORS, LOOKBACK_WARP, PREFETCH_BYTES)."""
    return SCAN_BLOCK, SCAN_VECTORS, ONE_ROW_VECTORS, LOOKBACK_WARP, PREFETCH_BYTES


def _prefetch_ahead(tile_bytes: int, knobs: tuple | None = None) -> int:
    """How many tiles ahead of its own a row-scan block prefetches into L2: PREFETCH_BYTES of
    the knobs (tile_knobs(): the module's) in whole tiles that read and write `tile_bytes`."""
    return (knobs or tile_knobs())[4] // tile_bytes


def row_params(src: np.dtype, D: np.dtype, moved: int = 0, plain_row: bool = False,
               knobs: tuple | None = None, vectors: int | None = None):
    """(N, V, T): elements per vector (16 bytes of the widest of input, result and, for a mask
    compaction, the moved elements of `moved` bytes), vectors per thread (SCAN_VECTORS,
    ONE_ROW_VECTORS for a `plain_row`; fewer for elements under 4 bytes: the same element count;
    at most what shared memory holds; `vectors`, when given) and threads per tile, under the
    tile settings `knobs` (tile_knobs(): the module's)."""
    block, row_vectors, one_row_vectors = (knobs or tile_knobs())[:3]
    N = layout.vector_width(src.itemsize, D.itemsize, moved or 1)
    T = block
    V = vectors or max(1, (one_row_vectors if plain_row else row_vectors) * min(N, 4) // N)
    fit = (SHARED_LIMIT - SHARED_RESERVE) // (T * N * (D.itemsize + (0 if plain_row else 1)))
    return N, max(1, min(V, fit)), T


def _comb_source(op: str, D: np.dtype) -> str:
    """comb: the segmented operator on (valid, head, value) triples (a kernel's inner function)."""
    return f"""    def comb(lv, lh, la, rv, rh, ra):
        # the segmented operator on (valid, head, value) triples, left then right
        if rv == 0:
            return int32(lv), int32(lh), la
        if lv == 0 or rh != 0:
            return int32(1), int32(lh | rh), ra
        return int32(1), int32(lh), {_op_expr(op, D, 'la', 'ra')}"""


def _status_source(D: np.dtype) -> str:
    """publish(t, flag, value) and read(t) -> (flag, value) of tile t's status word(s), flags
    tagged with the launch's epoch (e4) (a kernel's inner functions)."""
    count, L = _lanes(D)
    words = status_words(D)
    if words == 1:
        # flag and value in one word: relaxed (strong, L2-coherent) accesses suffice, the word
        # is self-contained and nothing else is read through it
        return f"""    def publish(t, fl, val):
        st_relaxed(status, int64({STATUS_HEAD}) + t,
                   (uint64(e4 + fl) << uint64(32)) | {_to_bits(L, 'val')})

    def read(t):
        w = ld_relaxed(status, int64({STATUS_HEAD}) + t)
        while (w >> uint64(32)) <= uint64(e4):
            w = ld_relaxed(status, int64({STATUS_HEAD}) + t)
        return int32((w >> uint64(32)) & uint64(3)), {_from_bits(L, 'w')}"""
    parts = ["val.real", "val.imag"] if count == 2 else ["val"]
    stores = "\n".join(f"        status[slot + {k}] = {_to_bits(L, p)}"
                       for k, p in enumerate(parts))
    loads = [_from_bits(L, f"ld_relaxed(status, slot + {k})") for k in range(count)]
    value = f"{D.name}(complex({loads[0]}, {loads[1]}))" if count == 2 else loads[0]
    return f"""    def publish(t, fl, val):
        base = int64({STATUS_HEAD}) + t * {words}
        slot = base + 1 + (0 if fl == {FLAG_AGGREGATE} else {count})
{stores}
        st_release(status, base, uint64(e4 + fl))

    def read(t):
        base = int64({STATUS_HEAD}) + t * {words}
        fl = ld_acquire(status, base)
        while fl <= uint64(e4):
            fl = ld_acquire(status, base)
        fl = fl & uint64(3)
        slot = base + 1 + (0 if fl == uint64({FLAG_AGGREGATE}) else {count})
        return int32(fl), {value}"""


def _segmented_warp_scan(op: str, D: np.dtype, head: str, value: str, up: bool,
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
{pad}            {value} = {_op_expr(op, D, 'ao', value)}
{pad}        {head} = int32({head} | ho)
{pad}    d *= 2"""


def _lookback_source(op: str, D: np.dtype, first_head: str) -> str:
    """The look-back of one warp (8 spaces deep): unless `first_head` (the tile starts a
    segment), read 32 predecessors' statuses at a time (a spin until each is published), reduce
    the window down to its nearest complete prefix, until one is found; then lane 0 publishes
    the tile's inclusive prefix (its aggregate `ta`, head flag `th`) and leaves the exclusive
    prefix (xv valid, xa) in sh_pv / sh_pa."""
    zero = f"{D.name}(0)"

    def OP(a, b):
        return _op_expr(op, D, a, b)
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
{_segmented_warp_scan(op, D, 'hh', 'va', False, 16)}
                wh = cuda.shfl_sync(0xffffffff, hh, 0)
                wa = shidx(va, 0)
                xv, xh, xa = comb(int32(1), wh, wa, xv, int32(0), xa)
                if wh != 0:
                    break
                j -= 32
            if lane == 0 and th == 0:
                publish(tile, {FLAG_PREFIX}, {OP('xa', 'ta')})
        if lane == 0:
            sh_pv[0] = xv
            sh_pa[0] = xa"""


# ---- the row-scan kernel -----------------------------------------------------------------------

def _guarded_loads(names, ptr, first, addrs, fill, vector, indent):
    """Source lines loading the len(names) elements from index `first` of `ptr` into `names`:
    one 16-byte vector when `vector` and all are before `total`, else one by one (`addrs`: each
    one's index expression), `fill` past `total`."""
    scalar = [f"{name} = {ptr}[{addr}] if {first} + {j} < total else {fill}"
              for j, (name, addr) in enumerate(zip(names, addrs))]
    if not vector:
        return [indent + line for line in scalar]
    return [f"{indent}if {first} + {len(names)} <= total:",
            f"{indent}    {vload_statement(names, ptr, first)}", f"{indent}else:"] + \
        [f"{indent}    {line}" for line in scalar]


def _prefetch_lines(ptr, start, count, itemsize, threads):
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


def _has_lookback_warp(segmented: bool, knobs: tuple | None = None) -> bool:
    return (knobs or tile_knobs())[3] and not segmented


def _nested(lines):
    """Source `lines` (entries may hold several lines) one level deeper."""
    return ["\n".join("    " + line if line else line for line in entry.split("\n"))
            for entry in lines]


def row_spec(op: str, src: np.dtype, D: np.dtype, flag: bool, in_kind: str, out_kind: str,
             bits: int, segmented: bool = True, moved: str | None = None,
             lookback_warp: bool | None = None, trace: bool = False,
             ahead: int | None = None, aligned_rows: int = 0):
    """Decoupled look-back scan of the flat (M, K) sequence, segment heads every K elements
    (`segmented` False: one row, M == 1, no per-element row arithmetic).
    `in_kind`/`out_kind`: 'v' (flat and 16-byte aligned: vector access) or 's' (element (r, p)
    at r * row stride + p * column stride: any other view). `moved` (a flag scan of one row
    only): the raw element type of x for a fused mask compaction: instead of storing ranks,
    the selected elements of the flat contiguous x (`out_kind` 'v': read by vectors, 's': by
    elements) go to out[rank - 1] and the total count to status[1].
    `status`: the stream's status area (_status_area, in its Stream.scratch); its tile words are
    published with flags above `e4` (4 x the launch's epoch) and tile ids count from `first`.

    First the thread's V vectors are all loaded (in flight together), scanned serially per lane
    and parked in shared memory; a loop over the V rounds (small code: numba's compile time grows
    fast with unrolled code) does the warp scans and leaves the warp-inclusive values with an
    'open' flag (no segment head between the warp chunk's start and the element). After the
    look-back a second loop adds the tile + block prefix to the open elements and stores.
    `lookback_warp` (one row only, not `segmented`; None: as LOOKBACK_WARP says): the block has
    one warp more than the tile's T threads; the tile's warps add up their values right after
    the loads, and while they scan, that warp publishes the tile's aggregate and looks back.
    `trace` (with the look-back warp; a measurement, benchmarks/scan_phase_probe.py): one more
    argument, an int64 array that receives each tile's %globaltimer at TRACE_PHASES.
    `ahead` (None: PREFETCH_BYTES in tiles): with `in_kind` 'v', right after claiming its
    tile the block prefetches the input of the tile `ahead` tiles later into L2 (and, with
    `moved`, its own tile's x, read only after the look-back); 0: no prefetch.
    `aligned_rows` (not `segmented`, no `moved`): the one-row kernel with this many vectors a
    thread scans rows whose length K is a multiple of its tile: a tile starting a row (at a
    multiple of K) takes no prefix."""
    assert moved is None or (flag and not segmented)
    if lookback_warp is None:
        lookback_warp = _has_lookback_warp(segmented)
    assert not (lookback_warp and segmented), "a segmented tile's aggregate needs its scan"
    assert lookback_warp or not trace

    def stamp(indent, who, phase):  # source: the trace's stamp of `phase` by thread `who`
        if not trace:
            return ""
        return (f"\n{indent}if {who}:\n{indent}    trace[tile * {len(TRACE_PHASES)} + "
                f"{TRACE_PHASES.index(phase)}] = globaltimer()")
    # 'open' flags (bit 0: no segment head between the warp chunk's start and the element; bit
    # 1: selected) are kept per element unless the row is plain: then every element is open
    # except those of the first warp chunk of the row, whose prefix is empty anyway
    assert not aligned_rows or not (segmented or moved)
    plain = not segmented and not moved
    N, V, T = row_params(src, D, np.dtype(moved).itemsize if moved else 0, plain,
                         vectors=aligned_rows or None)
    WARPS = T // 32
    TILE = T * V * N
    assert TILE * (D.itemsize + (0 if plain else 1)) <= SHARED_LIMIT - SHARED_RESERVE, \
        "scan tile too large for shared memory"
    WCHUNK = 32 * V * N
    Dn = D.name
    ut = "uint32" if bits == 32 else "uint64"
    zero = f"{Dn}(0)"
    raw0 = f"{_elem(src)}(0)"
    def OP(a, b):
        return _op_expr(op, D, a, b)

    def ix(e):
        # a shared-memory index as uint32: numba wraps negative signed indices around, 4-5
        # instructions an access (H200, 2^28 float32 cumulative_sum: 384M -> 294M executed,
        # 0.615-0.618 -> 0.597-0.598 ms; scan-sweep-2026-11-30-session8-unsigned-index.log)
        return f"uint32({e})"

    b = []
    add = b.append
    add(_shuffles(D).rstrip("\n"))
    add(_comb_source(op, D))
    add(_status_source(D))

    def positions(indent, sfx=""):
        """p{sfx}_j (position in the row; a head where 0) and r{sfx}_j (row) of the vector at
        f{sfx}."""
        p, r, f = f"p{sfx}", f"r{sfx}", f"f{sfx}"
        if not segmented:
            out = [f"{p}_0 = int64({f})", f"{r}_0 = int64(0)"]
            out += [f"{p}_{j} = {p}_0 + {j}\n{indent}{r}_{j} = {r}_0" for j in range(1, N)]
            return [indent + s for s in out]
        out = [f"dq = {ut}({f}) // {ut}(K)", f"{p}_0 = int64({ut}({f}) - dq * {ut}(K))",
               f"{r}_0 = int64(dq)"]
        for j in range(1, N):
            out += [f"{p}_{j} = {p}_{j - 1} + 1", f"{r}_{j} = {r}_{j - 1}", f"if {p}_{j} == K:",
                    f"    {p}_{j} = int64(0)", f"    {r}_{j} += 1"]
        return [indent + s for s in out]

    add(f"""    sh_s = cuda.shared.array({TILE}, {Dn})
{"" if plain else f"    sh_o = cuda.shared.array({TILE}, uint8)"}
    sh_h = cuda.shared.array({WARPS}, int32)
    sh_a = cuda.shared.array({WARPS}, {Dn})
    sh_t = cuda.shared.array(1, int64)
    sh_pv = cuda.shared.array(1, int32)
    sh_pa = cuda.shared.array(1, {Dn})
{f"    sh_r = cuda.shared.array({WARPS}, {Dn}){chr(10)}" if lookback_warp else ""}\
    tid = cuda.threadIdx.x
    lane = int32(tid & 31)
    warp = int32(tid >> 5)
    if tid == 0:
        sh_t[0] = int64(atom_add(status, int64(0), uint64(1))) - first
    cuda.syncthreads()
    tile = sh_t[0]
    base = tile * {TILE} + warp * {WCHUNK}{stamp("    ", "tid == 0", "claimed")}""")
    if ahead is None:
        ahead = _row_shape(src, D, np.dtype(moved).itemsize if moved else 0, segmented,
                           tile_knobs(), aligned_rows or None)[-1]
    prefetching = ahead > 0 and in_kind == "v"
    if prefetching:  # every thread, before its loads (PREFETCH_BYTES says why)
        threads = T + (32 if lookback_warp else 0)
        b.extend(_prefetch_lines("inp", f"(tile + {ahead}) * {TILE}", TILE, src.itemsize,
                                 threads))
        if moved and out_kind == "v":  # x is read only when the tile stores, after the look-back
            b.extend(_prefetch_lines("x", f"tile * {TILE}", TILE, np.dtype(moved).itemsize,
                                     threads))
    # every load of the thread first, then the lane-serial segmented scan of each vector
    tile_at = len(b)
    for v in range(V):
        sfx = f"{v}"
        add(f"    f{sfx} = base + {v * 32 * N} + lane * {N}")
        b.extend(positions("    ", sfx))
        addrs = [f"r{sfx}_{j} * in_rs + p{sfx}_{j} * in_cs" if in_kind == "s" else f"f{sfx} + {j}"
                 for j in range(N)]
        b.extend(_guarded_loads([f"x{sfx}_{j}" for j in range(N)], "inp", f"f{sfx}", addrs, raw0,
                                in_kind == "v", "    "))
    for v in range(V):
        sfx = f"{v}"
        add(f"    s_0 = {_transform(src, D, flag, f'x{sfx}_0')}\n"
            f"    sh_s[{ix(f'{v * 32 * N} + warp * {WCHUNK} + lane')}] = s_0")
        for j in range(1, N):
            add(f"    c_{j} = {_transform(src, D, flag, f'x{sfx}_{j}')}")
            # one plain row: only element 0 of the row is a head, never an element j > 0
            add(f"    s_0 = {OP('s_0', f'c_{j}')}" if plain else
                f"    s_0 = c_{j} if p{sfx}_{j} == 0 else {OP('s_0', f'c_{j}')}")
            add(f"    sh_s[{ix(f'{v * 32 * N + 32 * j} + warp * {WCHUNK} + lane')}] = s_0")
        if lookback_warp:  # s_0: the vector's total (a row has no head past its first element)
            add("    tt = s_0" if v == 0 else f"    tt = {OP('tt', 's_0')}")
    if lookback_warp:  # the warp's sum to lane 0, then to shared memory for the look-back warp
        add(f"""    d = 16
    while d >= 1:
        tt = {OP('tt', 'shdn(tt, d)')}
        d //= 2
    if lane == 0:
        sh_r[warp] = tt""")
        b[tile_at:] = [f"    if warp < {WARPS}:", *_nested(b[tile_at:]), "    cuda.syncthreads()"]
    # the warp's inclusive scan of each round, then the prefix of this lane's vector within the
    # warp's chunk: the carry of earlier rounds, then the earlier lanes of this round
    rounds_at = len(b)
    add(f"""    cv = int32(0)
    ch = int32(0)
    ca = {zero}
    for v in range({V}):
        li = v * {32 * N} + warp * {WCHUNK} + lane""")
    if plain:  # no heads inside the chunk (the row's first element has no prefix anyway)
        for j in range(N):
            add(f"        s_{j} = sh_s[{ix(f'li + {32 * j}')}]")
        add(f"""        ai = s_{N - 1}
        d = 1
        while d < 32:
            ao = shup(ai, d)
            if lane >= d:
                ai = {OP('ao', 'ai')}
            d *= 2
        ae = shup(ai, 1)
        wv = cv
        wa = ca
        if lane > 0:
            wa = {OP('ca', 'ae')} if cv != 0 else ae
            wv = int32(1)
        at = shidx(ai, 31)
        ca = {OP('ca', 'at')} if cv != 0 else at
        cv = int32(1)
        if wv != 0:""")
        for j in range(N):
            add(f"            sh_s[{ix(f'li + {32 * j}')}] = {OP('wa', f's_{j}')}")
    else:
        add(f"        f = base + (v * 32 + lane) * {N}")
        b.extend(positions("        "))
        add("        h = int32(p_0 == 0)")
        for j in range(N):
            add(f"        s_{j} = sh_s[{ix(f'li + {32 * j}')}]")
            if j:
                add(f"        h = int32(h | int32(p_{j} == 0))")
        add(f"""        hi = h
        ai = s_{N - 1}
{_segmented_warp_scan(op, D, 'hi', 'ai', True, 8)}
        he = cuda.shfl_up_sync(0xffffffff, hi, 1)
        ae = shup(ai, 1)
        if lane == 0:
            he = int32(0)
        wv, wh, wa = comb(cv, ch, ca, int32(lane > 0), he, ae)
        cv, ch, ca = comb(cv, ch, ca, int32(1), cuda.shfl_sync(0xffffffff, hi, 31), shidx(ai, 31))
        nohead = int32(1)""")
        for j in range(N):  # open: no head from the chunk's start through this element
            sel = ""
            if moved:  # bit 1: the element is selected (its flag, from the lane-serial counts)
                fl = "s_0 != 0" if j == 0 else f"s_{j} != s_{j - 1}"
                sel = f" | (2 if {fl} else 0)"
            at = ix(f"li + {32 * j}")
            add(f"""        nohead = int32(nohead & int32(p_{j} != 0))
        sh_s[{at}] = {OP('wa', f's_{j}')} if wv != 0 and nohead != 0 else s_{j}""")
            if not plain:
                add(f"        sh_o[{at}] = uint8((1 if wh == 0 and nohead != 0 else 0){sel})")
    # warp totals -> the block prefix of each warp; warp 0 publishes and looks back
    first_head = (f"int32(({ut}(tile) * {ut}({TILE})) % {ut}(K) == 0)"
                  if segmented or aligned_rows else "int32(tile == 0)")
    add("""    if lane == 0:
        sh_h[warp] = ch
        sh_a[warp] = ca""")
    block_prefix = f"""    bv = int32(0)
    bh = int32(0)
    ba = {zero}
    for w in range({WARPS}):
        if w < warp:
            bv, bh, ba = comb(bv, bh, ba, int32(1), sh_h[w], sh_a[w])"""
    lookback = _lookback_source(op, D, first_head)
    publish_aggregate = f"""        if lane == 0:
            publish(tile, {FLAG_PREFIX} if th != 0 else {FLAG_AGGREGATE}, ta)"""
    if lookback_warp:  # its tile sum is ready: publish it and look back while the tile scans
        rounds = b[rounds_at:]
        del b[rounds_at:]
        add(f"""    if warp == {WARPS}:
        ta = sh_r[0]
        for w in range(1, {WARPS}):
            ta = {OP('ta', 'sh_r[w]')}
        th = {first_head}{stamp("        ", "lane == 0", "loaded")}""")
        add(publish_aggregate + stamp("        ", "lane == 0", "aggregate published"))
        add(lookback + stamp("        ", "lane == 0", "prefix found"))
        b.append("    else:")
        b.extend(_nested(rounds))
        add("    cuda.syncthreads()")
        final_at = len(b)
        add(block_prefix)
    else:
        add("    cuda.syncthreads()")
        add(block_prefix)
        add(f"""    if warp == 0:
        tv = int32(0)
        th = int32(0)
        ta = {zero}
        for w in range({WARPS}):
            tv, th, ta = comb(tv, th, ta, int32(1), sh_h[w], sh_a[w])""")
        add(publish_aggregate)
        add(lookback)
        add("    cuda.syncthreads()")
        final_at = len(b)
    add(f"""    gv, gh, ga = comb(sh_pv[0], int32(0), sh_pa[0], bv, bh, ba)
    for v in range({V}):
        f = base + (v * 32 + lane) * {N}
        li = v * {32 * N} + warp * {WCHUNK} + lane""")
    if out_kind == "s" and not moved:
        b.extend(positions("        "))
    for j in range(N):
        if not plain:
            add(f"        o_{j} = sh_o[{ix(f'li + {32 * j}')}]")
        add(f"        y_{j} = sh_s[{ix(f'li + {32 * j}')}]")
        add("        if gv != 0:" if plain else f"        if gv != 0 and (o_{j} & 1) != 0:")
        add(f"            y_{j} = {OP('ga', f'y_{j}')}")
    if moved:
        b.extend(_guarded_loads([f"m_{j}" for j in range(N)], "x", "f",
                                [f"f + {j}" for j in range(N)], f"{moved}(0)", out_kind == "v",
                                "        "))
        for j in range(N):
            add(f"        if (o_{j} & 2) != 0:\n            out[int64(y_{j}) - 1] = m_{j}")
            add(f"        if f + {j} == total - 1:\n            status[1] = uint64(y_{j})")
    else:
        scalar = []
        for j in range(N):
            addr = f"r_{j} * out_rs + p_{j} * out_cs" if out_kind == "s" else f"f + {j}"
            scalar += [f"if f + {j} < total:", f"    out[{addr}] = y_{j}"]
        if out_kind == "v":
            vals = ", ".join(f"y_{j}" for j in range(N)) + ("," if N == 1 else "")
            add(f"        if f + {N} <= total:\n            vstore{N}(out, f, ({vals}))\n        else:")
            b.extend("            " + s for s in scalar)
        else:
            b.extend("        " + s for s in scalar)

    if trace:
        add(stamp("    ", "tid == 0", "stored").lstrip("\n"))
    if lookback_warp:
        b[final_at:] = [f"    if warp < {WARPS}:"] + _nested(b[final_at:])
    what = f"select_{moved}" if moved else ("flag" if flag else op)
    kname = (f"scan_{what}_{src.name if src != BOOL else 'bool'}_to_{Dn}_"
             f"{in_kind}{out_kind}{bits}{'' if segmented else 'a' if aligned_rows else 'r'}"
             f"_t{T}x{V}"
             + ("l" if lookback_warp else ""))
    args = "out, inp, status, first, e4, total, K, in_rs, in_cs, out_rs, out_cs"
    argtypes = (f"{moved or Dn}*", f"{_elem(src)}*", "uint64*") + ("int64",) * 8
    if moved:
        args += ", x"
        argtypes += (f"{moved}*",)
    if trace:
        kname += "_trace"
        args += ", trace"
        argtypes += ("int64*",)
    if prefetching:
        kname += f"_p{ahead}"
    src_text = (PREAMBLE + SYNC_SOURCE + (TRACE_SOURCE if trace else "")
                + (PREFETCH_SOURCE if prefetching else "")
                + f"\n\ndef {kname}({args}):\n" + "\n".join(b) + "\n")
    return compiler.KernelSpec(kname, src_text, kname, argtypes, launch_bounds=(
        (T + (32 if lookback_warp else 0), PLAIN_ROW_BLOCKS) if plain else ()))


# ---- the column-scan kernel ---------------------------------------------------------------------

def column_spec(op: str, src: np.dtype, D: np.dtype, bits: int):
    """One thread per column of a (P, K, Q) view: a sequential scan down K."""
    ut = "uint32" if bits == 32 else "uint64"
    U = COLUMN_UNROLL

    def step(k):
        return [f"acc = {_op_expr(op, D, 'acc', _transform(src, D, False, f'x{k}'))}",
                f"out[ob + (k + {k}) * osk] = acc"]
    loads = [f"        x{k} = inp[ib + (k + {k}) * isk]" for k in range(U)]
    steps = ["        " + s for k in range(U) for s in step(k)]
    kname = f"scan_col_{op}_{src.name if src != BOOL else 'bool'}_to_{D.name}_{bits}"
    body = f"""def {kname}(out, inp, C, Q, K, isp, isq, isk, osp, osq, osk):
    c = {GID}
    if c >= C:
        return
    p = int64({ut}(c) // {ut}(Q))
    q = c - p * Q
    ib = p * isp + q * isq
    ob = p * osp + q * osq
    acc = {_transform(src, D, False, 'inp[ib]')}
    out[ob] = acc
    k = int64(1)
    while k + {U} <= K:
{chr(10).join(loads)}
{chr(10).join(steps)}
        k += {U}
    while k < K:
        acc = {_op_expr(op, D, 'acc', _transform(src, D, False, 'inp[ib + k * isk]'))}
        out[ob + k * osk] = acc
        k += 1
"""
    argtypes = (f"{D.name}*", f"{_elem(src)}*") + ("int64",) * 9
    return compiler.KernelSpec(kname, PREAMBLE + body, kname, argtypes)


# ---- flag-scan consumers: nonzero coordinates, mask compaction, masked scatter ---------------

def coords_spec(rank: np.dtype, ndim: int, bits: int):
    """nonzero: element i with rank r (inclusive) != previous writes its coordinates to
    out[d * count + r - 1]."""
    ut = "uint32" if bits == 32 else "uint64"
    shapes = ", ".join(f"sh{d}" for d in range(1, ndim))
    lines = [f"            rem = {ut}(i)"]
    for d in range(ndim - 1, 0, -1):
        lines += [f"            nxt = rem // {ut}(sh{d})",
                  f"            out[{d} * count + k] = int64(rem - nxt * {ut}(sh{d}))",
                  "            rem = nxt"]
    lines.append("            out[k] = int64(rem)")
    kname = f"nonzero_coords_{rank.name}_{ndim}d{bits}"
    params = "out, incl, n, count" + (", " + shapes if shapes else "")
    body = f"""def {kname}({params}):
    i = {GID}
    if i < n:
        r = int64(incl[i])
        prev = int64(incl[i - 1]) if i > 0 else int64(0)
        if r != prev:
            k = r - 1
{chr(10).join(lines)}
"""
    argtypes = ("int64*", f"{rank.name}*") + ("int64",) * (2 + ndim - 1)
    return compiler.KernelSpec(kname, PREAMBLE + body, kname, argtypes)


def compact_spec(elem: str, rank: np.dtype, N: int):
    """x[mask] gather: N > 1: element i of contiguous x (inner block 1) moves to out[rank - 1]
    when its flag (rank difference) is set, x and the ranks read as N-element vectors. N == 1:
    one thread per element of x with an inner block of B elements (e = i * B + r)."""
    if N > 1:
        xs = ", ".join(f"x{j}" for j in range(N))
        rs = ", ".join(f"r{j}" for j in range(N))
        moves = []
        prev = "r_prev"
        for j in range(N):
            moves += [f"        if r{j} != {prev}:", f"            out[r{j} - 1] = x{j}"]
            prev = f"r{j}"
        kname = f"mask_compact_{elem}_{rank.name}_vec{N}"
        body = f"""def {kname}(out, x, incl, n, B):
    i = {GID} * {N}
    if i + {N} <= n:
        {xs} = vload{N}(x, i)
        {rs} = vload{N}(incl, i)
        r_prev = incl[i - 1] if i > 0 else {rank.name}(0)
{chr(10).join(moves)}
    else:
        while i < n:
            r = incl[i]
            if r != (incl[i - 1] if i > 0 else {rank.name}(0)):
                out[r - 1] = x[i]
            i += 1
"""
    else:
        kname = f"mask_compact_{elem}_{rank.name}"
        body = f"""def {kname}(out, x, incl, n, B):
    e = {GID}
    if e < n:
        i = e // B
        r = int64(incl[i])
        if r != (int64(incl[i - 1]) if i > 0 else int64(0)):
            out[(r - 1) * B + (e - i * B)] = x[e]
"""
    argtypes = (f"{elem}*", f"{elem}*", f"{rank.name}*", "int64", "int64")
    return compiler.KernelSpec(kname, PREAMBLE + body, kname, argtypes)


def masked_scatter_spec(elem: str, rank: np.dtype, D: int, bits: int):
    """x[mask] = values: element e (C order) of x, a strided view over D padded dims with an
    inner block of B elements per mask element, takes value[(rank - 1) * vrs + r * vis]."""
    ut = "uint32" if bits == 32 else "uint64"
    lines = [f"        rem = {ut}(e)"]
    for d in range(D - 1, 0, -1):
        lines += [f"        nxt = rem // {ut}(sh{d})", f"        c{d} = int64(rem - nxt * {ut}(sh{d}))",
                  "        rem = nxt"]
    lines.append("        c0 = int64(rem)")
    off = " + ".join(f"c{d} * xs{d}" for d in range(D))
    kname = f"mask_scatter_{elem}_{rank.name}_{D}d{bits}"
    params = ("x, value, incl, n, B, vrs, vis, " + ", ".join(f"sh{d}" for d in range(D)) + ", "
              + ", ".join(f"xs{d}" for d in range(D)))
    body = f"""def {kname}({params}):
    e = {GID}
    if e < n:
        i = int64({ut}(e) // {ut}(B))
        r = int64(incl[i])
        if r != (int64(incl[i - 1]) if i > 0 else int64(0)):
{chr(10).join('    ' + s for s in lines)}
            x[{off}] = value[(r - 1) * vrs + (e - i * B) * vis]
"""
    argtypes = (f"{elem}*", f"{elem}*", f"{rank.name}*") + ("int64",) * (4 + 2 * D)
    return compiler.KernelSpec(kname, PREAMBLE + body, kname, argtypes)




# ---- host side: row and column scans ---------------------------------------------------------

def _kind(a: CudaArray, flat: bool, N: int) -> str:
    return "v" if flat and a.ptr % (N * a.dtype.itemsize) == 0 else "s"


def _rows(a: CudaArray):
    """(row stride, column stride) of `a` seen as (M, K) rows along its last axis, or None when
    its leading dims do not collapse into one stride."""
    K = a.shape[-1]
    lead_shape = a.shape[:-1]
    if not lead_shape or all(m == 1 for m in lead_shape):
        return 0, a.strides[-1]
    cshape, (cst,) = layout.collapse(lead_shape, a.strides[:-1])
    if len(cshape) != 1:
        return None
    return cst[0], a.strides[-1] if K > 1 else 1


@functools.lru_cache(maxsize=1024)
def _aligned_row_vectors(src: np.dtype, D: np.dtype, K: int, knobs: tuple,
                         min_vectors: int) -> int:
    """Vectors a thread of the largest one-row tile (of at least `min_vectors`,
    ALIGNED_MIN_VECTORS, at most the one-row kernel's) that rows of length K fill exactly; 0
    when there is none. Cached: it is on every flat row scan's host path."""
    if not min_vectors:
        return 0
    N, V, T = row_params(src, D, plain_row=True, knobs=knobs)
    return next((v for v in range(V, min_vectors - 1, -1) if K % (T * v * N) == 0), 0)


def _aligned_precompiled(src: np.dtype, D: np.dtype):
    """The vectors a thread of the aligned-row kernels worth compiling ahead: the tiles that
    rows of a power-of-two length fill (8 and 4 vectors, within the aligned range)."""
    V = row_params(src, D, plain_row=True)[1]
    return [v for v in (8, 4) if ALIGNED_MIN_VECTORS and ALIGNED_MIN_VECTORS <= v <= V]


@functools.lru_cache(maxsize=1024)
def _row_shape(src: np.dtype, D: np.dtype, moved: int, segmented: bool, knobs: tuple,
               vectors: int | None = None):
    """A row scan's launch shape under the tile settings `knobs` (tile_knobs()), with `vectors`
    a thread when given: (N, V, T) of row_params, the tile's elements, whether it has the
    look-back warp, threads a block, status words a tile, tiles ahead the block prefetches."""
    N, V, T = row_params(src, D, moved, not segmented and not moved, knobs, vectors)
    lookback_warp = _has_lookback_warp(segmented, knobs)
    return (N, V, T, T * V * N, lookback_warp, T + 32 if lookback_warp else T, status_words(D),
            _prefetch_ahead(T * V * N * (src.itemsize + (moved or D.itemsize)), knobs))


def row_scan(op: str, a: CudaArray, dst: CudaArray, flag: bool = False, x: CudaArray = None,
             trace: CudaArray = None):
    """dst = scan of `a` along its last axis (dst has a's shape, any layout, a's leading dims
    collapsible: the caller copies otherwise). Nothing to do when empty.
    With `x` (a flag scan of a 1-D `a`; x contiguous, of a's size): the fused mask compaction:
    dst (1-D, contiguous, room for x.size elements) receives the selected elements of x and the
    count is returned (the one sync).
    `trace` (one row only; a measurement, benchmarks/scan_phase_probe.py): an int64 array of
    len(TRACE_PHASES) words a tile that receives each tile's phase stamps (row_spec's trace)."""
    M = a.size // a.shape[-1] if a.shape[-1] else 0
    K = a.shape[-1]
    total = M * K
    if total == 0:
        return 0
    src, D = a.dtype, (_rank_dtype(total) if x is not None else dst.dtype)
    moved = _raw(x.dtype) if x is not None else None
    segmented = M > 1
    knobs = tile_knobs()
    N, V, T, TILE, lookback_warp, threads, words, ahead = _row_shape(
        src, D, x.dtype.itemsize if x is not None else 0, segmented, knobs)
    in_rs, in_cs = _rows(a)
    in_kind = _kind(a, in_cs == 1 and (M == 1 or in_rs == K), N)
    if x is None:
        out_rs, out_cs = _rows(dst)
        out_kind = _kind(dst, out_cs == 1 and (M == 1 or out_rs == K), N)
    else:
        out_rs, out_cs = 1, 1
        out_kind = _kind(x, True, N)
    aligned = 0
    if segmented and in_kind == out_kind == "v":  # flat rows: the one-row kernel if they fill tiles
        aligned = _aligned_row_vectors(src, D, K, knobs, ALIGNED_MIN_VECTORS)
        if aligned:
            segmented = False
            N, V, T, TILE, lookback_warp, threads, words, ahead = _row_shape(
                src, D, 0, False, knobs, aligned)
    tiles = -(-total // TILE)
    bits = 32 if total + TILE <= layout.INT32_MAX else 64
    dev = runtime.get_device(a.device_index)
    traced = trace is not None
    if traced and (not lookback_warp or trace.size < tiles * len(TRACE_PHASES)):
        raise ValueError(f"a trace is of a one-row scan, {len(TRACE_PHASES)} words a tile "
                         f"({tiles} tiles here)")
    key = ("row", op, src, D, flag, in_kind, out_kind, bits, segmented, moved, N, V, T,
           lookback_warp, traced, ahead, aligned)
    kern = compiler.cached_kernel(dev.index, "scan", key,
                                  lambda: row_spec(op, src, D, flag, in_kind, out_kind, bits,
                                                   segmented, moved, lookback_warp, traced,
                                                   ahead, aligned))
    stream = dev.stream
    with stream.scratch_lock:  # launches queued in the order their epochs and tile ids were taken
        status, first, e4 = _status_area(stream, words, tiles)
        args = (dst.ptr, a.ptr, status.ptr, first, e4, total, K, in_rs, in_cs, out_rs, out_cs)
        keep = (dst.buffer, a.buffer, status.buffer)
        if x is not None:
            args, keep = args + (x.ptr,), keep + (x.buffer,)
        if traced:
            args, keep = args + (trace.ptr,), keep + (trace.buffer,)
        kern(stream, tiles, threads, args, keep,
             total * (src.itemsize + (D if x is None else x.dtype).itemsize))
        if x is None:
            return None
        # read before a later launch on the stream rewrites it
        return int(transfer.to_host(status.view((1,), (1,), status.offset + 1))[0])


class _StatusArea:
    """A stream's row-scan status words for one status size (words a tile): the tile counter,
    x[mask]'s count, then `tiles` tile statuses; `taken`: tile ids handed out so far (the
    counter's value), `epoch`: the next launch's."""

    __slots__ = ("array", "tiles", "taken", "epoch")


def _status_area(stream, words: int, tiles: int):
    """(the status array, first tile id, 4 x epoch) for a launch of `tiles` tiles on `stream`,
    the current one (the caller holds its scratch_lock): launches on one stream run in order, so
    each finds the words of the ones before it complete and tagged with older epochs. A separate
    area per status size keeps every word of a tile's status in the same role (a flag word never
    holds a value). Grown (and zeroed, on the stream) by doubling; the old array is kept alive
    by the launches that used it."""
    key = (STATUS_SCRATCH, words)
    area = stream.scratch.get(key)
    if area is None or area.tiles < tiles or area.epoch > EPOCH_LIMIT:
        size = 1024 if area is None else area.tiles * (2 if area.tiles < tiles else 1)
        area = _StatusArea()
        area.tiles = max(tiles, size)
        dev = stream.device
        area.array = new_array(dev.index, (STATUS_HEAD + area.tiles * words,), _U64,
                               dev.allocator)
        elementwise.zero_scratch(stream, area.array)
        area.taken, area.epoch = 0, 1  # epoch 0 would match the zeroed words
        stream.scratch[key] = area
    first, e4 = area.taken, 4 * area.epoch
    area.taken += tiles
    area.epoch += 1
    return area.array, first, e4


def _split(shape, strides, axis):
    """(P, Q, sp, sq): the dims before and after `axis` collapsed to one stride each, or None."""
    res = []
    for part in (slice(0, axis), slice(axis + 1, len(shape))):
        sh, st = shape[part], strides[part]
        if not sh or all(m == 1 for m in sh):
            res.append((1, 0))
            continue
        csh, (cst,) = layout.collapse(sh, st)
        if len(csh) != 1:
            return None
        res.append((csh[0], cst[0]))
    (P, sp), (Q, sq) = res
    return P, Q, sp, sq


def column_scan(op: str, a: CudaArray, dst: CudaArray, axis: int):
    dev = runtime.get_device(a.device_index)
    ia = _split(a.shape, a.strides, axis)
    if ia is None:
        a = elementwise.copy(a)
        ia = _split(a.shape, a.strides, axis)
    P, Q, isp, isq = ia
    _, _, osp, osq = _split(dst.shape, dst.strides, axis)
    C = P * Q
    K = a.shape[axis]
    bits = 32 if C <= layout.INT32_MAX else 64
    src, D = a.dtype, dst.dtype
    kern = compiler.cached_kernel(dev.index, "scan", ("col", op, src, D, bits),
                                  lambda: column_spec(op, src, D, bits))
    grid, block = layout.launch_1d(C, BLOCK)
    kern(dev.stream, grid, block,
         (dst.ptr, a.ptr, C, Q, K, isp, isq, a.strides[axis], osp, osq, dst.strides[axis]),
         (dst.buffer, a.buffer), C * K * (src.itemsize + D.itemsize))


def _take_along(a: CudaArray, axis: int, start: int) -> CudaArray:
    """The view a[..., start:, ...] along `axis`."""
    offset = a.offset + (start * a.strides[axis] if a.shape[axis] > start else 0)
    shape = a.shape[:axis] + (a.shape[axis] - start,) + a.shape[axis + 1:]
    return a.view(shape, a.strides, offset)


def _permute(a: CudaArray, order) -> CudaArray:
    return a.view([a.shape[d] for d in order], [a.strides[d] for d in order], a.offset)


def cumulative(name, a, axis, dtype, include_initial):
    """The `cumulative` primitive (see _backend.PRIMITIVES)."""
    op = name[len("cumulative_"):]
    D = np.dtype(dtype)
    dev = runtime.get_device(a.device_index)
    if a.ndim == 1 and a.size and not include_initial and a.strides[0] == 1:  # the common case
        out = new_contig(dev, a.shape, D, a.size, dev.allocator)
        row_scan(op, a, out)
        return out
    K = a.shape[axis]
    extra = 1 if include_initial else 0
    columns = a.size // K if K else 0
    transpose = axis != a.ndim - 1 and columns < COLUMN_MIN and \
        any(m != 1 for m in a.shape[axis + 1:])
    order = list(range(a.ndim))
    if transpose:  # scan rows of a copy with the axis last; return a permuted view
        order = [d for d in range(a.ndim) if d != axis] + [axis]
        a = elementwise.copy(_permute(a, order))
        axis = a.ndim - 1
    shape = a.shape[:axis] + (K + extra,) + a.shape[axis + 1:]
    out = new_array(dev.index, shape, D, dev.allocator)
    if extra:
        first = out.view(shape[:axis] + (1,) + shape[axis + 1:], out.strides, out.offset)
        if first.size:
            elementwise.fill(first, 0 if op == "sum" else 1)
    if a.size:
        dst = _take_along(out, axis, extra)
        if all(m == 1 for m in a.shape[axis + 1:]):
            # the axis is last once trailing dims of size 1 are dropped
            keep = [d for d in range(a.ndim) if d <= axis]
            a_rows = a.view([a.shape[d] for d in keep], [a.strides[d] for d in keep], a.offset)
            d_rows = dst.view([dst.shape[d] for d in keep], [dst.strides[d] for d in keep],
                              dst.offset)
            if _rows(a_rows) is None:
                a_rows = elementwise.copy(a_rows)
            row_scan(op, a_rows, d_rows)
        else:
            column_scan(op, a, dst, axis)
    if transpose:
        inverse = [order.index(d) for d in range(len(order))]
        out = _permute(out, inverse)
    return out


# ---- flags: ranks, nonzero, masks ----------------------------------------------------------

def _rank_dtype(n: int) -> np.dtype:
    return _I32 if n <= layout.INT32_MAX else _I64


def ranks(a: CudaArray) -> CudaArray:
    """Inclusive prefix count of the nonzero elements of `a` in C order: a contiguous 1-D int32
    array (int64 past 2^31 elements); the last entry is the count."""
    dev = runtime.get_device(a.device_index)
    n = a.size
    out = new_array(dev.index, (n,), _rank_dtype(n), dev.allocator)
    if n:
        row_scan("sum", _flat(a), out, flag=True)
    return out


def _flat(a: CudaArray) -> CudaArray:
    """`a` (not empty) as a 1-D view in C order (a copy when its dims do not collapse)."""
    if a.ndim == 1:
        return a
    cshape, (cst,) = layout.collapse(a.shape, a.strides)
    if len(cshape) != 1:
        a = elementwise.copy(a)
        cst = (1,)
    return a.view((a.size,), cst, a.offset)


def _count(incl: CudaArray) -> int:
    """The total of an inclusive rank array: one device-to-host read (the one sync)."""
    if incl.size == 0:
        return 0
    last = incl.view((1,), (1,), incl.offset + incl.size - 1)
    return int(transfer.to_host(last)[0])


def nonzero(a):
    """The `nonzero` primitive: one int64 array per dim, row-major order (one sync)."""
    dev = runtime.get_device(a.device_index)
    incl = ranks(a)
    count = _count(incl)
    ndim = a.ndim
    out = new_array(dev.index, (ndim, count), _I64, dev.allocator)
    if count:
        n = a.size
        bits = 32 if n <= layout.INT32_MAX else 64
        rank = incl.dtype
        kern = compiler.cached_kernel(dev.index, "scan", ("coords", rank, ndim, bits),
                                      lambda: coords_spec(rank, ndim, bits))
        grid, block = layout.launch_1d(n, BLOCK)
        kern(dev.stream, grid, block, (out.ptr, incl.ptr, n, count) + tuple(a.shape[1:]),
             (out.buffer, incl.buffer), n * rank.itemsize + count * ndim * 8)
    return tuple(out.view((count,), (1,), out.offset + d * count) for d in range(ndim))


def _raw(dt: np.dtype) -> str:
    """Elements moved as raw bits (complex64 as uint64); complex128 stays complex128."""
    if dt.itemsize == 16:
        return "complex128"
    return f"uint{8 * dt.itemsize}"


def select_by_mask(x: CudaArray, mask: CudaArray) -> CudaArray:
    """NumPy's x[mask] for a boolean mask over x's leading dims (mask.shape ==
    x.shape[:mask.ndim]): shape (count, *x.shape[mask.ndim:]), one sync for the count."""
    dev = runtime.get_device(x.device_index)
    k = mask.ndim
    inner = x.shape[k:]
    if k == 0:  # a new axis of length 1 or 0
        keep = bool(transfer.to_host(mask)[()])
        if not keep:
            return new_array(dev.index, (0,) + x.shape, x.dtype, dev.allocator)
        res = elementwise.copy(x)
        return res.view((1,) + x.shape, (0,) + res.strides, res.offset)
    if not inner and x.size:
        # one element per mask element: the fused scan + compaction reads the mask and x once
        # and writes the selection once, into an allocation of x.size elements (the count is
        # known only after the kernel). A sparse selection is copied out so that allocation
        # goes back to the cache now instead of living as long as the result; that copy moves
        # at most the selection's bytes again.
        if not x.c_contig:
            x = elementwise.copy(x)
        full = new_array(dev.index, (x.size,), x.dtype, dev.allocator)
        count = row_scan("sum", _flat(mask), full, flag=True, x=_flat(x))
        selected = full.view((count,), (1,), full.offset)
        return selected if 2 * count >= x.size else elementwise.copy(selected)
    incl = ranks(mask)
    count = _count(incl)
    out = new_array(dev.index, (count,) + inner, x.dtype, dev.allocator)
    if count == 0 or out.size == 0:
        return out
    if not x.c_contig:
        x = elementwise.copy(x)
    B = out.size // count
    n = x.size
    elem = _raw(x.dtype)
    rank = incl.dtype
    N = layout.vector_width(x.dtype.itemsize, rank.itemsize)
    vec = B == 1 and N > 1 and x.ptr % (N * x.dtype.itemsize) == 0 and \
        incl.ptr % (N * rank.itemsize) == 0
    if vec:
        kern = compiler.cached_kernel(dev.index, "scan", ("compact", elem, rank, N),
                                      lambda: compact_spec(elem, rank, N))
        grid = -(-n // (BLOCK * N))
        block = BLOCK
    else:
        kern = compiler.cached_kernel(dev.index, "scan", ("compact", elem, rank, 1),
                                      lambda: compact_spec(elem, rank, 1))
        grid, block = layout.launch_1d(n, BLOCK)
    kern(dev.stream, grid, block, (out.ptr, x.ptr, incl.ptr, n, B),
         (out.buffer, x.buffer, incl.buffer),
         n * (x.dtype.itemsize + rank.itemsize) + out.nbytes)
    return out


def _broadcast_view(mask: CudaArray, shape) -> CudaArray:
    """The mask over x's leading dims seen with x's shape (zero strides on the inner dims; a 0-d
    mask broadcasts to everything)."""
    pad = len(shape) - mask.ndim
    return mask.view(shape, tuple(mask.strides) + (0,) * pad, mask.offset)


def _where_assign(x: CudaArray, mask: CudaArray, value):
    """x = where(mask, value, x) in place: no ranks, no sync."""
    from ..elementwise.ops import where_op
    m = _broadcast_view(mask, x.shape)
    operands = (m, value, x)
    dtypes = (BOOL, x.dtype, x.dtype)
    elementwise.launch("where", where_op(x.dtype), operands, dtypes, x.shape, out=x)


def assign_by_mask(x: CudaArray, mask: CudaArray, value):
    """x[mask] = value. A Python scalar, or a value that does not vary along the selection
    (leading dim 1 or absent): one elementwise kernel, no sync. A value of `count` rows: ranks of
    the mask, one sync to check the count, a scatter kernel."""
    if x.size == 0:
        return
    k = mask.ndim
    inner = x.shape[k:]
    if mask.size and elementwise._overlaps(x, mask):
        mask = elementwise.copy(mask)
    if isinstance(value, CudaArray):
        if value.dtype != x.dtype:
            value = elementwise.astype(value, x.dtype)
        if value.size and elementwise._overlaps(x, value):
            value = elementwise.copy(value)
        while value.ndim > len(inner) + 1 and value.shape[0] == 1:
            value = value.view(value.shape[1:], value.strides[1:], value.offset)
        if value.ndim == len(inner) + 1 and value.shape[0] == 1:
            value = value.view(value.shape[1:], value.strides[1:], value.offset)
        if value.ndim > len(inner) + 1:
            raise ValueError(f"cannot assign a value of shape {value.shape} to a boolean "
                             f"selection of {len(inner) + 1} dimension(s)")
        if value.ndim <= len(inner):
            vshape = elementwise.broadcast_shape(value.shape, inner)
            if vshape != tuple(inner):
                raise ValueError(f"cannot broadcast a value of shape {value.shape} to the "
                                 f"selection's inner shape {tuple(inner)}")
            pad = x.ndim - value.ndim
            value = value.view(x.shape, (0,) * pad + layout.broadcast_strides(
                value.shape, value.strides, x.shape[pad:]), value.offset)
        else:
            _scatter_rows(x, mask, value, inner)
            return
    _where_assign(x, mask, value)


def _scatter_rows(x: CudaArray, mask: CudaArray, value: CudaArray, inner):
    """x[mask] = value where value has one row per selected element: value.shape[0] must be
    the count (NumPy's error otherwise)."""
    dev = runtime.get_device(x.device_index)
    if mask.ndim == 0:
        count = 1 if bool(transfer.to_host(mask)[()]) else 0
        incl = None
    else:
        incl = ranks(mask)
        count = _count(incl)
    if value.shape[0] != count:
        raise ValueError(f"boolean index assignment cannot assign {value.shape[0]} input values "
                         f"to the {count} output values where the mask is true")
    vshape = (count,) + tuple(inner)
    try:
        if elementwise.broadcast_shape(value.shape, vshape) != vshape:
            raise ValueError
    except ValueError:
        raise ValueError(f"cannot assign a value of shape {value.shape} to a boolean selection "
                         f"of shape {vshape}") from None
    if count == 0:
        return
    if incl is None:  # a 0-d True mask: x = value[0]
        elementwise.assign(x, value.view(value.shape[1:], value.strides[1:], value.offset))
        return
    vst = layout.broadcast_strides(value.shape, value.strides, vshape)
    value = value.view(vshape, vst, value.offset)
    B = 1
    for m in inner:
        B *= m
    if B == 0:
        return
    if inner:
        cshape, (cst,) = layout.collapse(inner, value.strides[1:])
        if len(cshape) != 1:
            value = elementwise.copy(value)
            cst = (1,)
        vis = cst[0] if B > 1 else 0
    else:
        vis = 0
    vrs = value.strides[0]
    cshape, (xst,) = layout.collapse(x.shape, x.strides)
    D = elementwise.padded_dims(len(cshape))
    pad = D - len(cshape)
    cshape = (1,) * pad + tuple(cshape)
    xst = (0,) * pad + tuple(xst)
    n = x.size
    bits = layout.index_bits(n, cshape, xst)
    elem = _raw(x.dtype)
    rank = incl.dtype
    kern = compiler.cached_kernel(dev.index, "scan", ("scatter", elem, rank, D, bits),
                                  lambda: masked_scatter_spec(elem, rank, D, bits))
    grid, block = layout.launch_1d(n, BLOCK)
    kern(dev.stream, grid, block,
         (x.ptr, value.ptr, incl.ptr, n, B, vrs, vis) + cshape + xst,
         (x.buffer, value.buffer, incl.buffer),
         n * rank.itemsize + 2 * count * B * x.dtype.itemsize)


PRIMITIVES = {"cumulative": cumulative, "nonzero": nonzero}


def precompile_specs():
    """The kernels the common cases launch (32-bit indexing): each dtype's default cumulative
    sum/product in every row layout, over one row, over flat rows of a power-of-two length that
    fill one-row tiles (_aligned_precompiled) and as a column scan, the flag scans of every
    dtype, and the nonzero / mask kernels (the fused selection of each element size)."""
    from ...._dtypes import all_dtypes as DTYPES
    specs = []
    for src in DTYPES:
        D = {"b": _I64, "i": _I64, "u": _U64}.get(src.kind, src)
        for op in ("sum", "prod"):
            for kinds in ("vv", "vs", "sv", "ss"):
                specs.append(row_spec(op, src, D, False, kinds[0], kinds[1], 32))
            specs.append(row_spec(op, src, D, False, "v", "v", 32, segmented=False))
            for vectors in _aligned_precompiled(src, D):
                specs.append(row_spec(op, src, D, False, "v", "v", 32, segmented=False,
                                      aligned_rows=vectors))
            specs.append(column_spec(op, src, D, 32))
        for in_kind in "vs":
            specs.append(row_spec("sum", src, _I32, True, in_kind, "v", 32, segmented=False))
    elems = sorted({_raw(d) for d in DTYPES})
    for elem in elems:
        specs.append(row_spec("sum", BOOL, _I32, True, "v", "v", 32, segmented=False, moved=elem))
        specs.append(compact_spec(elem, _I32, 1))
        N = layout.vector_width(np.dtype(elem).itemsize, 4)
        if N > 1:
            specs.append(compact_spec(elem, _I32, N))
        for D in elementwise.STRIDED_DIMS:
            specs.append(masked_scatter_spec(elem, _I32, D, 32))
    for ndim in range(1, 5):
        specs.append(coords_spec(_I32, ndim, 32))
    return specs
