"""The row-scan kernel: a single-pass decoupled look-back scan (Merrill & Garland, "Single-pass
Parallel Prefix Scan with Decoupled Look-back") of the flat (M, K) sequence, so the data are
read once and written once.

The M rows are one flat sequence of M * K elements cut into tiles of T threads x V vectors x N
elements; a row start is a *segment head* and the scan is segmented: the operator works on pairs
(h, a) with ``(h1, a1) . (h2, a2) = (h1 | h2, a2 if h2 else a1 op a2)``, so one launch scans
every row, short rows share a tile, long rows span many, and the first element of a row is its
value exactly (no identity is ever combined in: -0.0 sums and complex products come out as
NumPy's). One row (1-D inputs, every flag scan) is specialised: no per-element row arithmetic;
so are flat rows that fill whole tiles of it (`aligned_rows`): their row starts are tile starts.

* A block takes its tile id from an atomic counter, so every lower tile belongs to a block that
  started earlier and is resident: waiting on it cannot deadlock.
* Warp w of a tile owns a contiguous chunk; lane l loads vector v at chunk + (32 v + l) N
  (16-byte vectors when both pointers are aligned and the view is flat), so every load and
  store instruction of a warp covers 512 contiguous bytes. A thread issues all its V loads first
  (in flight together) and scans each vector serially; then a loop over the V rounds (a loop,
  not unrolled: numba's compile time grows fast with unrolled code) does a warp scan
  (shuffles) per round, a carry chaining the rounds, and parks the warp-inclusive values in
  shared memory while the tile's prefix is found; one pass adds it and stores. A byte per
  element beside the values says whether the element is 'open' (no segment head before it in
  its warp's chunk: it takes the prefix; bit 1: selected, for x[mask]); one plain row (no
  segments, no compaction) needs none, so its tiles are larger.
* The tile publishes its aggregate (or directly its prefix when it holds a head) in its status
  word (status.py), then looks back 32 predecessors at a time (a warp-wide spin, a shuffle
  reduction of the window truncated at its nearest complete prefix) and publishes its inclusive
  prefix: warp 0 after the tile's scan, or, in one row, a look-back warp of its own that
  publishes the sum of the tile's loads while the tile's warps scan.
* Each block prefetches into L2 the input of a tile `ahead` tiles on, so DRAM has more bytes in
  flight than the resident tiles hold.

`row_spec` reads as the kernel's control flow; `_RowKernel` holds each section's source.
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

import numpy as np

from .. import _common
from ...engine import compiler, layout
from .._common import PREAMBLE
from . import source, tuning
from .source import choose, op_expr, transform
from .status import FLAG_AGGREGATE, FLAG_PREFIX, status_source

SYNC = "cuda.syncthreads()"
TRACE_PHASES = ("claimed", "loaded", "aggregate published", "prefix found", "stored")


class RowScan(NamedTuple):
    """One row-scan kernel's configuration (a NamedTuple: the host builds one a call as part of
    the kernel's cache key, cheaper than a frozen dataclass).

    `op`: "sum" or "prod", or "nansum" / "nanprod" (a NaN of floating input read as 0 / 1).

    `flag`: scan "x != 0" (ranks) instead of x. `in_kind` / `out_kind`: 'v' (flat and 16-byte
    aligned: vector access) or 's' (element (r, p) at r * row stride + p * column stride: any
    other view). `bits`: of the index arithmetic. `segmented` False: one row (M == 1), no
    per-element row arithmetic. `moved` (a flag scan of one row only): the raw element type of x
    for the fused mask compaction: instead of storing ranks, the selected elements of the flat
    contiguous x (`out_kind` 'v': read by vectors, 's': by elements) go to out[rank - 1] and the
    count to status[1]. `lookback_warp` (one row only; None: as tuning.LOOKBACK_WARP says).
    `ahead` (None: tuning.PREFETCH_BYTES in tiles): with `in_kind` 'v', the block prefetches the
    input of the tile `ahead` tiles on (and, with `moved`, its own tile's x, read only after the
    look-back); 0: no prefetch. `aligned_rows` (one plain row's kernel with this many vectors a
    thread): it scans rows whose length K is a multiple of its tile; a tile starting a row takes
    no prefix."""
    op: str
    src: np.dtype
    result: np.dtype
    flag: bool = False
    in_kind: str = "v"
    out_kind: str = "v"
    bits: int = 32
    segmented: bool = True
    moved: str | None = None
    lookback_warp: bool | None = None
    ahead: int | None = None
    aligned_rows: int = 0


class PhaseTrace:
    """Instrumentation for benchmarks/probes/scan_phase_probe.py: one more kernel argument, an
    int64 array that receives each tile's %globaltimer at TRACE_PHASES (a kernel with the
    look-back warp). The production kernels have no instrumentation."""

    name_suffix = "_trace"
    args = ("trace",)
    argtypes = ("int64*",)

    def stamp(self, phase: str, who: str) -> list:
        return [f"if {who}:", f"    trace[tile * {len(TRACE_PHASES)} + "
                f"{TRACE_PHASES.index(phase)}] = globaltimer()"]


def row_params(src: np.dtype, D: np.dtype, moved: int = 0, plain_row: bool = False,
               knobs: tuple | None = None, vectors: int | None = None):
    """(N, V, T): elements per vector (16 bytes of the widest of input, result and, for a mask
    compaction, the moved elements of `moved` bytes), vectors per thread (SCAN_VECTORS,
    ONE_ROW_VECTORS for a `plain_row`; fewer for elements under 4 bytes: the same element count;
    at most what shared memory holds; `vectors`, when given) and threads per tile, under the
    tile settings `knobs` (tuning.tile_knobs() when None)."""
    block, row_vectors, one_row_vectors = (knobs or tuning.tile_knobs())[:3]
    N = layout.vector_width(src.itemsize, D.itemsize, moved or 1)
    T = block
    V = vectors or max(1, (one_row_vectors if plain_row else row_vectors) * min(N, 4) // N)
    fit = (tuning.SHARED_LIMIT - tuning.SHARED_RESERVE) // (
        T * N * (D.itemsize + (0 if plain_row else 1)))
    return N, max(1, min(V, fit)), T


def has_lookback_warp(segmented: bool, knobs: tuple | None = None) -> bool:
    return (knobs or tuning.tile_knobs())[3] and not segmented


def prefetch_ahead(tile_bytes: int, knobs: tuple | None = None) -> int:
    """How many tiles ahead of its own a row-scan block prefetches into L2: PREFETCH_BYTES of
    the knobs in whole tiles that read and write `tile_bytes`."""
    return (knobs or tuning.tile_knobs())[4] // tile_bytes


def _lines(*fragments) -> list:
    """Source fragments (text with its own common indentation, or lists of lines) as lines
    relative to where they are placed."""
    out = []
    for fragment in fragments:
        if isinstance(fragment, str):
            out.extend(textwrap.dedent(fragment).split("\n"))
        else:
            out.extend(fragment)
    return out


def _nested(lines) -> list:
    return ["    " + line if line else line for line in lines]


def _ix(e: str) -> str:
    """A shared-memory index as uint32: numba wraps negative signed indices around, 4-5
    instructions an access."""
    return f"uint32({e})"


def row_spec(cfg: RowScan, instrumentation: PhaseTrace | None = None) -> compiler.KernelSpec:
    """The row-scan kernel of `cfg`: its sections in the order the kernel runs them."""
    k = _RowKernel(cfg, instrumentation)
    src = _common.KernelSource(k.name, k.args, PREAMBLE)
    src.section("inner functions: shuffles, the segmented operator, the tile statuses",
                k.inner_functions())
    src.section("shared memory", k.shared_arrays())
    src.section("claim the next tile", k.claim_tile())
    if k.prefetching:
        src.section("prefetch into L2 the input of a tile further on", k.prefetch())
    if k.lookback_warp:
        src.section("the tile's warps: load, scan each vector, sum the warp",
                    [f"if warp < {k.warps}:", *_nested(k.load() + k.scan_vectors() +
                                                      k.warp_sums()), SYNC])
        src.section("the look-back warp: publish the tile's sum, look back",
                    [f"if warp == {k.warps}:", *_nested(
                        k.tile_sum_of_warp_sums() + k.publish_aggregate() + k.look_back())])
        src.section("meanwhile the tile's warps: the warp scans of each round",
                    ["else:", *_nested(k.rounds()), SYNC])
        src.section("the tile's warps: add the prefixes, store",
                    [f"if warp < {k.warps}:", *_nested(k.block_prefix() + k.store())])
    else:
        src.section("load, scan each vector", k.load() + k.scan_vectors())
        src.section("the warp scans of each round", k.rounds() + [SYNC])
        src.section("the prefix of each warp within the tile", k.block_prefix())
        src.section("warp 0: publish the tile's aggregate, look back",
                    ["if warp == 0:", *_nested(
                        k.tile_sum_of_warps() + k.publish_aggregate() + k.look_back()), SYNC])
        src.section("add the prefixes, store", k.store())
    return compiler.KernelSpec(k.name, src.text(), k.name, k.argtypes, k.launch_bounds)


class _RowKernel:
    """The derived shape of a row-scan kernel and the source of each of its sections (lines
    relative to the section's indentation)."""

    def __init__(self, cfg: RowScan, instrumentation: PhaseTrace | None):
        assert cfg.moved is None or (cfg.flag and not cfg.segmented)
        lookback_warp = (has_lookback_warp(cfg.segmented) if cfg.lookback_warp is None
                         else cfg.lookback_warp)
        assert not (lookback_warp and cfg.segmented), "a segmented tile's aggregate needs its scan"
        assert lookback_warp or instrumentation is None, "the phases are the look-back warp's"
        assert not cfg.aligned_rows or not (cfg.segmented or cfg.moved)
        self.cfg, self.instrumentation, self.lookback_warp = cfg, instrumentation, lookback_warp
        self.D = cfg.result
        # 'open' flags (bit 0: no segment head between the warp chunk's start and the element;
        # bit 1: selected) are kept per element unless the row is plain: then every element is
        # open except those of the first warp chunk of the row, whose prefix is empty anyway
        self.plain = not cfg.segmented and not cfg.moved
        moved_size = np.dtype(cfg.moved).itemsize if cfg.moved else 0
        self.N, self.V, self.T = row_params(cfg.src, self.D, moved_size, self.plain,
                                            vectors=cfg.aligned_rows or None)
        self.warps = self.T // 32
        self.tile = self.T * self.V * self.N
        assert self.tile * (self.D.itemsize + (0 if self.plain else 1)) <= \
            tuning.SHARED_LIMIT - tuning.SHARED_RESERVE, "scan tile too large for shared memory"
        self.warp_chunk = 32 * self.V * self.N
        self.ut = source.index_type(cfg.bits)
        self.zero = f"{self.D.name}(0)"
        self.threads = self.T + (32 if lookback_warp else 0)
        self.ahead = cfg.ahead
        if self.ahead is None:
            self.ahead = prefetch_ahead(self.tile * (cfg.src.itemsize + (moved_size or
                                                                         self.D.itemsize)))
        self.prefetching = self.ahead > 0 and cfg.in_kind == "v"
        self.first_head = (f"int32(({self.ut}(tile) * {self.ut}({self.tile})) % {self.ut}(K) == 0)"
                           if cfg.segmented or cfg.aligned_rows else "int32(tile == 0)")

        what = f"select_{cfg.moved}" if cfg.moved else ("flag" if cfg.flag else cfg.op)
        rows = "" if cfg.segmented else "a" if cfg.aligned_rows else "r"
        self.name = (f"scan_{what}_{source.dtype_word(cfg.src)}_to_{self.D.name}_"
                     f"{cfg.in_kind}{cfg.out_kind}{cfg.bits}{rows}_t{self.T}x{self.V}"
                     + ("l" if lookback_warp else ""))
        self.args = ["out", "inp", "status", "first", "e4", "total", "K", "in_rs", "in_cs",
                     "out_rs", "out_cs"]
        self.argtypes = (f"{cfg.moved or self.D.name}*", f"{_common.element_type(cfg.src)}*",
                         "uint64*") + ("int64",) * 8
        if cfg.moved:
            self.args.append("x")
            self.argtypes += (f"{cfg.moved}*",)
        if instrumentation:
            self.name += instrumentation.name_suffix
            self.args.extend(instrumentation.args)
            self.argtypes += instrumentation.argtypes
        if self.prefetching:
            self.name += f"_p{self.ahead}"
        self.launch_bounds = (self.threads, tuning.PLAIN_ROW_BLOCKS) if self.plain else ()

    def op(self, a: str, b: str) -> str:
        return op_expr(self.cfg.op, self.D, a, b)

    def stamp(self, phase: str, who: str) -> list:
        """The instrumentation's lines at `phase`, run by the threads where `who` holds."""
        return self.instrumentation.stamp(phase, who) if self.instrumentation else []

    def positions(self, sfx: str, rows: bool) -> list:
        """p{sfx}_j (position in the row; a head where 0) of the vector at f{sfx} and, with
        `rows`, r{sfx}_j (its row): only what the section reads."""
        p, r, f, N, ut = f"p{sfx}", f"r{sfx}", f"f{sfx}", self.N, self.ut
        if not self.cfg.segmented:
            out = [f"{p}_0 = int64({f})"] + ([f"{r}_0 = int64(0)"] if rows else [])
            for j in range(1, N):
                out += [f"{p}_{j} = {p}_0 + {j}"] + ([f"{r}_{j} = {r}_0"] if rows else [])
            return out
        out = [f"dq = {ut}({f}) // {ut}(K)", f"{p}_0 = int64({ut}({f}) - dq * {ut}(K))"]
        out += [f"{r}_0 = int64(dq)"] if rows else []
        for j in range(1, N):  # the next position, wrapping to the next row at K
            out.append(f"{p}_{j} = {p}_{j - 1} + 1")
            out += [f"{r}_{j} = select({p}_{j} == K, {r}_{j - 1} + 1, {r}_{j - 1})"] if rows else []
            out.append(f"{p}_{j} = select({p}_{j} == K, int64(0), {p}_{j})")
        return out

    def inner_functions(self) -> list:
        cfg = self.cfg
        return _lines(source.shuffles(self.D).rstrip("\n"), source.comb_source(cfg.op, self.D),
                      status_source(self.D))

    def shared_arrays(self) -> list:
        Dn, W = self.D.name, self.warps
        return ([f"sh_s = cuda.shared.array({self.tile}, {Dn})"]
                + ([] if self.plain else [f"sh_o = cuda.shared.array({self.tile}, uint8)"])
                + [f"sh_h = cuda.shared.array({W}, int32)", f"sh_a = cuda.shared.array({W}, {Dn})",
                   "sh_t = cuda.shared.array(1, int64)", "sh_pv = cuda.shared.array(1, int32)",
                   f"sh_pa = cuda.shared.array(1, {Dn})"]
                + ([f"sh_r = cuda.shared.array({W}, {Dn})"] if self.lookback_warp else []))

    def claim_tile(self) -> list:
        return _lines(f"""\
            tid = cuda.threadIdx.x
            lane = int32(tid & 31)
            warp = int32(tid >> 5)
            if tid == 0:
                sh_t[0] = int64(atom_add(status, int64(0), uint64(1))) - first
            {SYNC}
            tile = sh_t[0]
            base = tile * {self.tile} + warp * {self.warp_chunk}""",
                      self.stamp("claimed", "tid == 0"))

    def prefetch(self) -> list:
        """Every thread, before its loads (tuning.PREFETCH_BYTES says why); x[mask] also
        prefetches its own tile of x, read only when the tile stores, after the look-back."""
        cfg = self.cfg
        lines = source.prefetch_lines("inp", f"(tile + {self.ahead}) * {self.tile}", self.tile,
                                      cfg.src.itemsize, self.threads)
        if cfg.moved and cfg.out_kind == "v":
            lines += source.prefetch_lines("x", f"tile * {self.tile}", self.tile,
                                           np.dtype(cfg.moved).itemsize, self.threads)
        return _lines("\n".join(lines))

    def load(self) -> list:
        """Every load of the thread first (in flight together)."""
        cfg, N = self.cfg, self.N
        strided = cfg.in_kind == "s"
        out = []
        for v in range(self.V):
            out.append(f"f{v} = base + {v * 32 * N} + lane * {N}")
            if strided or not self.plain:  # the addresses, or the vector scan's heads
                out += self.positions(f"{v}", rows=strided)
            addrs = [f"r{v}_{j} * in_rs + p{v}_{j} * in_cs" if strided else f"f{v} + {j}"
                     for j in range(N)]
            out += source.guarded_loads([f"x{v}_{j}" for j in range(N)], "inp", f"f{v}", addrs,
                                        f"{_common.element_type(cfg.src)}(0)", not strided, "")
        return out

    def scan_vectors(self) -> list:
        """The lane-serial (segmented) scan of each vector, into shared memory; with the
        look-back warp also the thread's total (a row has no head past its first element)."""
        cfg, N, W = self.cfg, self.N, self.warp_chunk
        out = []
        for v in range(self.V):
            out += [f"s_0 = {transform(cfg.src, self.D, cfg.flag, f'x{v}_0', cfg.op)}",
                    f"sh_s[{_ix(f'{v * 32 * N} + warp * {W} + lane')}] = s_0"]
            for j in range(1, N):
                out.append(f"c_{j} = {transform(cfg.src, self.D, cfg.flag, f'x{v}_{j}', cfg.op)}")
                # one plain row: only element 0 of the row is a head, never an element j > 0
                summed = self.op('s_0', f'c_{j}')
                out.append(f"s_0 = {summed}" if self.plain else
                           f"s_0 = {choose(self.D, f'p{v}_{j} == 0', f'c_{j}', summed)}")
                out.append(f"sh_s[{_ix(f'{v * 32 * N + 32 * j} + warp * {W} + lane')}] = s_0")
            if self.lookback_warp:
                out.append("tt = s_0" if v == 0 else f"tt = {self.op('tt', 's_0')}")
        return out

    def warp_sums(self) -> list:
        """The warp's sum to lane 0, then to shared memory for the look-back warp."""
        return _lines(f"""\
            d = 16
            while d >= 1:
                tt = {self.op('tt', 'shdn(tt, d)')}
                d //= 2
            if lane == 0:
                sh_r[warp] = tt""")

    def rounds(self) -> list:
        """The warp's inclusive scan of each round, then the prefix of this lane's vector within
        the warp's chunk: the carry of earlier rounds, then the earlier lanes of this round;
        the chunk's carry (its total) to shared memory."""
        N, op = self.N, self.op
        head = ["cv = int32(0)", "ch = int32(0)", f"ca = {self.zero}",
                f"for v in range({self.V}):",
                f"    li = v * {32 * N} + warp * {self.warp_chunk} + lane"]
        loads = [f"s_{j} = sh_s[{_ix(f'li + {32 * j}')}]" for j in range(N)]
        if self.plain:  # no heads inside the chunk (the row's first element has no prefix anyway)
            body = loads + _lines(f"""\
                ai = s_{N - 1}
                d = 1
                while d < 32:
                    ao = shup(ai, d)
                    if lane >= d:
                        ai = {op('ao', 'ai')}
                    d *= 2
                ae = shup(ai, 1)
                wv = cv
                wa = ca
                if lane > 0:
                    wa = {choose(self.D, 'cv != 0', op('ca', 'ae'), 'ae')}
                    wv = int32(1)
                at = shidx(ai, 31)
                ca = {choose(self.D, 'cv != 0', op('ca', 'at'), 'at')}
                cv = int32(1)
                if wv != 0:""")
            body += [f"    sh_s[{_ix(f'li + {32 * j}')}] = {op('wa', f's_{j}')}" for j in range(N)]
        else:
            body = [f"f = base + (v * 32 + lane) * {N}"] + self.positions("", rows=False)
            body.append("h = int32(p_0 == 0)")
            for j in range(N):
                body.append(loads[j])
                if j:
                    body.append(f"h = int32(h | int32(p_{j} == 0))")
            body += _lines(["hi = h", f"ai = s_{N - 1}"],
                           source.segmented_warp_scan(self.cfg.op, self.D, "hi", "ai", True, 0),
                           """\
                he = cuda.shfl_up_sync(0xffffffff, hi, 1)
                ae = shup(ai, 1)
                if lane == 0:
                    he = int32(0)
                wv, wh, wa = comb(cv, ch, ca, int32(lane > 0), he, ae)""",
                           ["cv, ch, ca = comb(cv, ch, ca, int32(1), "
                            "cuda.shfl_sync(0xffffffff, hi, 31), shidx(ai, 31))",
                            "nohead = int32(1)"])
            for j in range(N):  # open: no head from the chunk's start through this element
                sel = ""
                if self.cfg.moved:  # bit 1: selected (its flag, from the lane-serial counts)
                    fl = "s_0 != 0" if j == 0 else f"s_{j} != s_{j - 1}"
                    sel = f" | (2 if {fl} else 0)"
                at = _ix(f"li + {32 * j}")
                body += [f"nohead = int32(nohead & int32(p_{j} != 0))",
                         f"sh_s[{at}] = " + choose(self.D, "(wv != 0) & (nohead != 0)",
                                                   op("wa", f"s_{j}"), f"s_{j}"),
                         f"sh_o[{at}] = uint8((1 if wh == 0 and nohead != 0 else 0){sel})"]
        return head + _nested(body) + ["if lane == 0:", "    sh_h[warp] = ch",
                                       "    sh_a[warp] = ca"]

    def tile_sum_of_warp_sums(self) -> list:
        """The look-back warp's tile aggregate: the tile's warps' sums of their loads."""
        return _lines(["ta = sh_r[0]", f"for w in range(1, {self.warps}):",
                       f"    ta = {self.op('ta', 'sh_r[w]')}", f"th = {self.first_head}"],
                      self.stamp("loaded", "lane == 0"))

    def tile_sum_of_warps(self) -> list:
        """Warp 0's tile aggregate: the warp chunks' carries."""
        return ["tv = int32(0)", "th = int32(0)", f"ta = {self.zero}",
                f"for w in range({self.warps}):",
                "    tv, th, ta = comb(tv, th, ta, int32(1), sh_h[w], sh_a[w])"]

    def publish_aggregate(self) -> list:
        return ["if lane == 0:",
                f"    publish(tile, {FLAG_PREFIX} if th != 0 else {FLAG_AGGREGATE}, ta)"] + \
            self.stamp("aggregate published", "lane == 0")

    def look_back(self) -> list:
        return _lines(source.lookback_source(self.cfg.op, self.D, self.first_head),
                      self.stamp("prefix found", "lane == 0"))

    def block_prefix(self) -> list:
        """The prefix of this warp's chunk within the tile: the carries of the warps before it."""
        return ["bv = int32(0)", "bh = int32(0)", f"ba = {self.zero}",
                f"for w in range({self.warps}):", "    if w < warp:",
                "        bv, bh, ba = comb(bv, bh, ba, int32(1), sh_h[w], sh_a[w])"]

    def store(self) -> list:
        """Add the tile's and the warp's prefix to the open elements; store them (x[mask]: move
        the selected elements of x to out[rank - 1], the last element's rank is the count)."""
        cfg, N = self.cfg, self.N
        body = [f"f = base + (v * 32 + lane) * {N}",
                f"li = v * {32 * N} + warp * {self.warp_chunk} + lane"]
        if cfg.out_kind == "s" and not cfg.moved:
            body += self.positions("", rows=True)
        for j in range(N):
            if not self.plain:
                body.append(f"o_{j} = sh_o[{_ix(f'li + {32 * j}')}]")
            body.append(f"y_{j} = sh_s[{_ix(f'li + {32 * j}')}]")
            body.append("if gv != 0:" if self.plain else f"if gv != 0 and (o_{j} & 1) != 0:")
            body.append(f"    y_{j} = {self.op('ga', f'y_{j}')}")
        if cfg.moved:
            body += source.guarded_loads([f"m_{j}" for j in range(N)], "x", "f",
                                         [f"f + {j}" for j in range(N)], f"{cfg.moved}(0)",
                                         cfg.out_kind == "v", "")
            for j in range(N):
                body += [f"store_if(out, int64(y_{j}) - 1, (o_{j} & 2) != 0, m_{j})",
                         f"store_if(status, 1, f + {j} == total - 1, uint64(y_{j}))"]
        else:
            scalar = []
            for j in range(N):  # a strided view's stores keep the branch (guarded_loads: why)
                if cfg.out_kind == "s":
                    scalar += [f"if f + {j} < total:",
                               f"    out[r_{j} * out_rs + p_{j} * out_cs] = y_{j}"]
                else:
                    scalar.append(f"store_if(out, f + {j}, f + {j} < total, y_{j})")
            if cfg.out_kind == "v":
                vals = ", ".join(f"y_{j}" for j in range(N)) + ("," if N == 1 else "")
                body += [f"if f + {N} <= total:", f"    vstore{N}(out, f, ({vals}))", "else:"]
                body += _nested(scalar)
            else:
                body += scalar
        return (["gv, gh, ga = comb(sh_pv[0], int32(0), sh_pa[0], bv, bh, ba)",
                 f"for v in range({self.V}):"] + _nested(body)
                + self.stamp("stored", "tid == 0"))
