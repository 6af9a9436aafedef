"""The reduction kernel family: sum, prod, max, min, mean, all, any and argmax/argmin.

Three kernel templates, each specialised per (operation, input dtype, result dtype, variant,
vector width), never per shape; shapes and strides are arguments. The host collapses the input
into *kept* dims (one output element each, written C-contiguously) and *reduced* dims, and picks:

* ``contig`` (row reduce, and the all-reduce as its one-row case): the reduced elements of every
  output are one contiguous run of K (``x.sum(axis=-1)``, ``x.T.sum(axis=0)``, ``x.sum()``). A
  group of T lanes (1, 32 or 256 by K) owns a row, 256 // T rows a block. Rows are read with
  16-byte vector loads (vector.py's, or for real dtypes ones with the LOAD_HINT cache qualifier)
  where the element pointer allows it; each row's unaligned head (offset views) and its tail take
  scalar loads. Few long rows (M < ~4 blocks per SM) are split over S blocks each (the all-reduce
  of 2^28 float32: 528 blocks of 256 threads).
* ``column`` (reduced axis strided, kept axis contiguous: ``x.sum(axis=0)`` of C-order ``x``):
  each lane owns N adjacent columns (one vector), the 8 warps of a block interleave the reduced
  rows, shared memory combines them. Too few column tiles for the GPU: the rows are split over S
  blocks per tile.
* ``general``: any other layout. Kept and reduced dims both go through strided offsets (dims
  padded to 1, 3 or 6, as elementwise.STRIDED_DIMS); T lanes interleave an output's reduced index
  space, decoding each index into an offset. Split like contig rows when the rows are few.

Every reduction is one launch. A split one folds its partials in the same kernel, as CUDA's
threadFenceReduction sample, CUB's single-pass reductions and PyTorch do (a second launch cost
about 1 us of gap plus 2-6 us of a one-block kernel): each block writes its partial accumulator
(every part, in its register type) to a scratch area, fences (``membar.gl``), and one thread
takes a ticket (``atom.global.add``) on its group's counter (the group: the output row, or the
column tile, the S blocks contribute to). The block that draws ticket S - 1 is the last of its
group; it fences again and folds the group's S partials in a fixed order (so the result does
not depend on which block came last), reading them with ``ld.global.cg`` (L2: L1 is not coherent
across SMs), stores the final value (mean divides by the count there), and puts the counter back
to 0. Memory order: a writer's stores precede its fence, its fence precedes its ticket; the last
ticket reads every earlier ticket's write (one atomic counter), so each writer's fence
synchronises with the last block's fence, which precedes (through ``bar.sync``) every load of
the fold. The counters (COUNTERS uint32, zeroed once) and the partials live in a per-stream
scratch buffer: launches on one stream run one after another (a graph captures them as a
chain), and each launch leaves its counters at 0, so nothing is reset per call.

Reductions other than argmax/argmin are order-free, so before choosing, negative reduced strides
are flipped and reduced dims sorted by stride (``x[::-1].sum()`` is a contiguous row). Arg
reductions keep C order, so the index of an element is its flat index in the reduced axes.

Accumulation (dtype chosen by the namespace): floats in their dtype, complex as two real parts
(shuffled separately), integers in 64 bits (wrapping, and truncated to a narrower requested dtype
at the store: the same result mod 2^k), all/any as int32 0/1 of the nonzero test (complex: either
part; NaN is nonzero), max/min of small integers widened to 64 bits for the shuffles. float32
sums are a tree: each thread adds into one accumulator per vector lane (about 200 elements each
for 10^8 elements), lanes are added pairwise, then warp shuffles and shared memory, then the
fold of the split partials (a couple a thread, then the same block tree); the error is
comparable to NumPy's pairwise sum. A floating sum starts from -0.0
(the CPU backend's rule). max/min propagate NaN; argmax/argmin carry (value, index) pairs and take
the lower index on ties, and the first NaN. mean divides by the count in the final store.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...engine import compiler, runtime
from .. import elementwise
from ...engine.array import c_strides, new_array, new_contig
from ..elementwise.ops import BOOL, PREAMBLE, vload_statement
from ...engine.layout import collapse, vector_width

BLOCK = 256
DIMS = (1, 3, 6)     # the general/contig kernels exist for these kept/reduced dim counts
WARPS = BLOCK // 32
# Tuning knobs, set from benchmarks/reduce_sweep.py on the H200 (2026-11-30; ratio to the copy
# of the same run, kernels queued back to back / one call timed alone with its host latency):
# sum of 2^28 float32 UNROLL 4: 0.975 / 0.878, 16: 0.983 / 0.892; rows of 16k x 16k UNROLL 4:
# 1.048 / 0.957, 16: 1.060 / 0.968; argmax UNROLL 4: 0.964 / 0.869, 16: 0.948 / 0.859 (so arg
# reductions keep 4); columns COLUMN_UNROLL 4 / 8 / 16 with SPLIT_FILL 0: 1.007 / 1.006 / 1.003,
# one call 0.822 / 0.897 / 0.901, while SPLIT_FILL 0.95 (fuller last waves, more blocks) lost:
# 0.881 / 0.878 / 0.865. BLOCKS_PER_SM 8 was slower in every case (sum 0.853-0.903).
UNROLL = 16          # contig: 16-byte vectors each lane loads back to back before adding them
ARG_UNROLL = 4       # the same for argmax/argmin, whose (value, index) compare chain is longer
# ...at most this many elements (16 vectors of 1-byte elements took numba 111 s to compile for
# max of uint8, against seconds for float32's 64 elements)
UNROLLED_ELEMENTS = 64
COLUMN_UNROLL = 8    # column: rows each warp loads back to back before adding them
BLOCKS_PER_SM = 4    # a split reduction launches whole waves of this many blocks per SM
ROW_BLOCK_MIN_K = 1024  # contiguous rows at least this long get a block each (shorter: a warp)
SPLIT_FILL = 0.0     # the least useful fraction of its last wave a split accepts (see _split)
COLUMN_SHARED_BYTES = 32768
# Blocks an SM must hold of a split column kernel (its registers are capped to fit): its fold
# took float32 sums from 46 registers (the two-launch design's partial kernel, 5 blocks an SM)
# to 54 (4 blocks), and 16k x 16k column sums from 241 to 258 us on the H200 (2026-11-30,
# latency_probe.py); capped, 48 registers and no spills (ptxas -v).
COLUMN_SPLIT_BLOCKS_PER_SM = 5
# Split reductions' per-stream scratch (see _Scratch): group counters (a split has fewer groups
# than one wave of blocks, BLOCKS_PER_SM * SMs, so this is generous) and the partials of one
# launch (2^28 float32: 528 partials; 16k x 16k column sums: 5 x 16384; more takes a temporary)
COUNTERS = 65536
SCRATCH_PARTIAL_BYTES = 1 << 20
SPLIT_SCRATCH = "reduce split"  # the scratch's key in runtime.Stream.scratch
# PTX cache qualifier of the contig kernels' 16-byte loads of real (non-complex) inputs, which
# are read once: streaming them past L1 (".L1::no_allocate") or through the non-coherent path
# (".nc", as CUB's reductions) both beat plain loads on the H200 (reduce-sweep-2026-11-30-
# run2.log; 2^28 float32 sum, kernels back to back / one call: plain 0.992 / 0.857, ".nc" 1.004
# / 0.898, ".L1::no_allocate" 1.011 / 0.916; argmax one call: plain 0.880, ".nc" 0.901; row sums
# unchanged). "" gives plain loads (vector.py's vloadN).
LOAD_HINT = ".L1::no_allocate"  # (the column kernels keep plain loads: both hints lost there,
# 0.958 / 0.967 of the copy back to back against 1.024, reduce-sweep-2026-11-30-run2.log)
I64 = np.dtype("int64")
C64 = np.dtype("complex64")
INT64_MAX = 2**63 - 1
ARG = ("argmax", "argmin")


def _elem(dt) -> str:
    return "uint8" if dt == BOOL else dt.name


def _reg(dt) -> str:
    """Register type of the values of `dt` while reducing (complex: the type of one part)."""
    if dt.kind in "bi":
        return "int64"
    if dt.kind == "u":
        return "uint64"
    if dt.kind == "f":
        return dt.name
    return "float32" if dt == C64 else "float64"


class Op:
    """What one reduction computes, as source fragments over accumulator *parts*.

    `parts`: register types of the scalars one accumulator is made of (a split reduction's
    partials are stored as these); `identity`: their start values; `load(x, idx)`: the parts of
    stored element `x` (flat reduced index `idx`); `combine(a, b)`: statements folding
    accumulator `b` into `a` (lists of variable names); `store(a)`: the result value written."""

    def __init__(self, name, in_dt, out_dt):
        self.name, self.in_dt, self.out_dt = name, in_dt, out_dt
        self.arg = name in ARG
        if self.arg:
            self.parts = [_reg(in_dt), "int64"]
        elif name in ("all", "any"):
            self.parts = ["int32"]
        elif name in ("max", "min"):
            self.parts = [_reg(in_dt)]
        else:  # sum, prod, mean: accumulate in the result dtype
            self.parts = [_reg(out_dt)] * (2 if out_dt.kind == "c" else 1)

    @property
    def complex(self):
        return len(self.parts) == 2 and not self.arg

    def identity(self):
        n = self.name
        if n in ("max", "min", "argmax", "argmin"):
            t = self.parts[0]
            big = n in ("min", "argmin")
            if self.in_dt.kind == "f":
                v = f"{t}({'' if big else '-'}INF)"
            else:
                info = np.iinfo(self.in_dt) if self.in_dt != BOOL else np.iinfo(np.uint8)
                v = f"{t}({int(info.max if big else info.min)})"
            return [v, f"int64({INT64_MAX})"] if self.arg else [v]
        if n in ("all", "any"):
            return ["int32(1)" if n == "all" else "int32(0)"]
        one = "1" if n == "prod" else ("-0.0" if self.parts[0].startswith("float") else "0")
        zero = "0" if n == "prod" else one
        return [f"{t}({v})" for t, v in zip(self.parts, [one, zero])]

    def load(self, x, idx):
        t = self.parts[0]
        if self.name in ("all", "any"):
            if self.in_dt.kind == "c":
                return [f"int32({x}.real != 0 or {x}.imag != 0)"]
            return [f"int32({x} != 0)"]
        if self.arg:
            return [f"{t}({x})", f"int64({idx})"]
        if self.complex:
            if self.in_dt.kind == "c":
                return [f"{t}({x}.real)", f"{t}({x}.imag)"]
            return [f"{t}({x})", f"{t}(0)"]
        return [f"{t}({x})"]

    def combine(self, a, b, ordered=False):
        """`ordered`: b's index is known to be above a's (a lane's own elements in its loop
        order), so argmax/argmin skip the index comparisons of ties and NaNs."""
        n, t = self.name, self.parts[0]
        if n in ("sum", "mean"):
            return [f"{p} = {tt}({p} + {q})" for p, q, tt in zip(a, b, self.parts)]
        if n == "prod":
            if self.complex:
                return [f"_t = {t}({a[0]} * {b[0]} - {a[1]} * {b[1]})",
                        f"{a[1]} = {t}({a[0]} * {b[1]} + {a[1]} * {b[0]})", f"{a[0]} = _t"]
            return [f"{a[0]} = {t}({a[0]} * {b[0]})"]
        if n in ("all", "any"):
            return [f"{a[0]} = {a[0]} {'&' if n == 'all' else '|'} {b[0]}"]
        cmp = ">" if n in ("max", "argmax") else "<"
        floating = self.in_dt.kind == "f"
        if not self.arg:  # NaN wins: a stays when it is NaN or strictly better
            if floating:
                return [f"{a[0]} = {a[0]} if ({a[0]} {cmp} {b[0]} or {a[0]} != {a[0]}) else {b[0]}"]
            return [f"{a[0]} = {a[0]} if {a[0]} {cmp}= {b[0]} else {b[0]}"]
        (av, ai), (bv, bi) = a, b
        if ordered:  # ties keep a (unless a is still the identity, with no index); the first
            # NaN wins: b only replaces a value that is not NaN
            take = f"{bv} {cmp} {av} or {ai} == {INT64_MAX}" + \
                (f" or ({bv} != {bv} and {av} == {av})" if floating else "")
        else:
            take = f"{bv} {cmp} {av} or ({bv} == {av} and {bi} < {ai})"
            if floating:  # the first NaN wins
                take += f" or ({bv} != {bv} and ({av} == {av} or {bi} < {ai}))"
        return [f"if {take}:", f"    {av} = {bv}", f"    {ai} = {bi}"]

    def store(self, a):
        if self.arg:
            return a[1]
        dt = self.out_dt
        vals = list(a)
        if self.name == "mean":
            vals = [f"{v} / {self.parts[0]}(count)" for v in vals]
        if self.complex:
            return f"{dt.name}(complex({vals[0]}, {vals[1]}))"
        return f"{_elem(dt)}({vals[0]})"

    def key(self):
        return (self.name, self.in_dt, self.out_dt)


def _unroll(op) -> int:
    """Vectors a contig lane loads at once: the knob, capped at UNROLLED_ELEMENTS elements."""
    per_vector = vector_width(op.in_dt.itemsize)
    return max(1, min(ARG_UNROLL if op.arg else UNROLL, UNROLLED_ELEMENTS // per_vector))


def _indent(lines, n):
    return [" " * n + line for line in lines]


def _shuffle(var, t, off):
    if t.startswith("uint"):  # shuffles move signed and floating values: go through int64
        return f"uint64(cuda.shfl_down_sync(0xffffffff, int64({var}), {off}))"
    return f"cuda.shfl_down_sync(0xffffffff, {var}, {off})"


def _group_reduce(op, T):
    """Statements leaving the combination of each group of T lanes (aligned, T a power of two
    up to BLOCK) in its first lane's accumulator a0_*. Every thread of the block runs them."""
    a = [f"a0_{k}" for k in range(len(op.parts))]
    o = [f"o_{k}" for k in range(len(op.parts))]
    lines = []

    def shuffles(width):
        off = width // 2
        while off >= 1:
            lines_ = [f"{ok} = {_shuffle(ak, t, off)}" for ak, ok, t in zip(a, o, op.parts)]
            yield lines_ + op.combine(a, o)
            off //= 2

    for chunk in shuffles(min(T, 32)):
        lines += chunk
    if T > 32:
        ident = op.identity()
        lines += [f"sh_{k} = cuda.shared.array({WARPS}, {t})" for k, t in enumerate(op.parts)]
        lines += ["if tid % 32 == 0:"]
        lines += [f"    sh_{k}[tid // 32] = {ak}" for k, ak in enumerate(a)]
        lines += ["cuda.syncthreads()", "if tid < 32:"]
        lines += [f"    if tid < {WARPS}:"] + [f"        {ak} = sh_{k}[tid]" for k, ak in enumerate(a)]
        lines += ["    else:"] + [f"        {ak} = {v}" for ak, v in zip(a, ident)]
        off = WARPS // 2
        while off >= 1:
            lines += _indent([f"{ok} = {_shuffle(ak, t, off)}" for ak, ok, t in zip(a, o, op.parts)]
                             + op.combine(a, o), 4)
            off //= 2
    return lines


def _accumulate(op, q, raw, idx, ordered=False):
    """Statements folding element `raw` (an expression, evaluated once) into lane q's accumulator
    (`ordered`: its index is above every index folded into it so far)."""
    acc = [f"a{q}_{k}" for k in range(len(op.parts))]
    e = [f"e_{k}" for k in range(len(op.parts))]
    return ([f"x = {raw}"] + [f"{ek} = {v}" for ek, v in zip(e, op.load("x", idx))] +
            op.combine(acc, e, ordered))


def _init(op, lanes):
    return [f"a{q}_{k} = {v}" for q in range(lanes) for k, v in enumerate(op.identity())]


def _fold_lanes(op, lanes):
    """Pairwise tree over the per-lane accumulators into lane 0's."""
    lines = []
    step = 1
    while step < lanes:
        for q in range(0, lanes, 2 * step):
            if q + step < lanes:
                lines += op.combine([f"a{q}_{k}" for k in range(len(op.parts))],
                                    [f"a{q + step}_{k}" for k in range(len(op.parts))])
        step *= 2
    return lines


def _decode(prefix, var, D, bits, out):
    """Statements computing offset `out` of flat index `var` over dims {prefix}sh_j/{prefix}st_j."""
    idx_t = "uint32" if bits == 32 else "int64"
    if D == 1:
        return [f"{out} = int64({var}) * {prefix}st0"]
    lines = [f"r_ = {idx_t}({var})"]
    for j in range(D - 1, 0, -1):
        lines += [f"c{j}_ = r_ % {prefix}sh{j}", f"r_ = r_ // {prefix}sh{j}"]
    lines.append(f"{out} = " + " + ".join([f"r_ * {prefix}st0"] +
                                          [f"c{j}_ * {prefix}st{j}" for j in range(1, D)]))
    return lines


def _signature(op, split):
    """Pointer arguments: input, output, and for a split kernel the partials (one array per
    accumulator part) and the group counters."""
    args = ["inp", "out"]
    types = [_elem(op.in_dt) + "*", "int64*" if op.arg else _elem(op.out_dt) + "*"]
    if split:
        args += [f"tmp{k}" for k in range(len(op.parts))] + ["counters"]
        types += [f"{t}*" for t in op.parts] + ["uint32*"]
    return args, types


def _arrive(group):
    """Statements of one thread after its block's partials are stored and fenced: take a ticket
    on counter `group`, and tell the block (shared `last_`) whether it is the group's last."""
    return [f"last = ticket(counters, {group}) == S - 1",
            "if last:  # acquire: the other blocks' partials happen before the fold's loads",
            "    cuda.threadfence()",
            "last_[0] = int32(last)"]


def _fold_element(op, q, where):
    """Statements folding the partial at `where` (read through L2) into lane q's accumulator.
    Partials are not in index order (a split's identity carries no index), so unordered."""
    acc = [f"a{q}_{k}" for k in range(len(op.parts))]
    e = [f"e_{k}" for k in range(len(op.parts))]
    return ([f"{ek} = load_cg(tmp{k}, {where})" for k, ek in enumerate(e)] +
            op.combine(acc, e))


def group_spec(op, lay, T, N, vec, Dk, Dr, split, bits):
    """The contig (row) or general kernel: groups of T lanes, one output element per group;
    `split`: S > 1 blocks per output (T == BLOCK), the last of them folds the partials."""
    assert not split or T == BLOCK
    args, types = _signature(op, split)
    idx_t = "uint32" if bits == 32 else "int64"
    args += ["align", "K", "S", "count", "M"] + [f"ksh{j}" for j in range(Dk)] + \
        [f"kst{j}" for j in range(Dk)]
    types += ["int64", "int64", "int64", "float64", "int64"] + [idx_t] * Dk + ["int64"] * Dk
    if lay == "general":
        args += [f"rsh{j}" for j in range(Dr)] + [f"rst{j}" for j in range(Dr)]
        types += [idx_t] * Dr + ["int64"] * Dr
    isz = op.in_dt.itemsize
    lanes = N if lay == "contig" else 1
    body = ["tid = cuda.threadIdx.x", "b = cuda.blockIdx.x", f"lane = tid % {T}",
            f"g = (b // S) * {BLOCK // T} + tid // {T}", "s = b % S"]
    if split:
        body.append("last_ = cuda.shared.array(1, int32)")
    body += _init(op, lanes)
    work = _decode("k", "g", Dk, bits, "off0")

    def element(q, off, idx):
        return _accumulate(op, q, f"inp[{off}]", idx)

    if lay == "contig":
        if vec:  # `align`: the input pointer mod 16
            work += [f"h = ((16 - (align + off0 * {isz}) % 16) % 16) // {isz}", "if h > K:",
                     "    h = K"]
        else:
            work.append("h = int64(0)")
        work += [f"nv = (K - h) // {N}", "p = off0 + h"]

        def vectors(us):
            lines = []
            for u in us:
                pos = f"p + (v + {u * T}) * {N}"
                if vec:
                    load = f"vload_hint{N}" if _hinted(op) else None
                    lines.append(vload_statement([f"x{u}_{q}" for q in range(N)], "inp", pos, load))
                else:
                    lines.append(f"x{u}_0 = inp[{pos}]")
            for u in us:
                for q in range(N):
                    idx = f"h + (v + {u * T}) * {N} + {q}"
                    # a lane's indices rise through the loop; the head comes after, unordered
                    lines += _accumulate(op, q, f"x{u}_{q}", idx, ordered=True)
            return lines

        # the row's vectors in chunks of C (each lane's `unroll` loads at once), block s of its
        # S taking chunks s, s + S, ...: the blocks of a split stream through the row together.
        # One contiguous 1/S of the row a block was slower (benchmarks/results/reduce-sweep-
        # 2026-11-30-session5*.log; 2^28 float32, one call / back to back, of the copy): sum
        # 0.964-0.986 / 1.029-1.037 against 1.031-1.046 / 1.086-1.092 interleaved; argmax
        # 0.961-0.966 / 1.004-1.008 against 1.015 / 1.062. Capping the registers for 4-6 blocks
        # an SM (ptxas then keeps up to 9 of a lane's 16 float32 loads in flight, not 4), more
        # waves of blocks or 8 argmax loads a lane changed the interleaved kernels by <= 1%.
        C = _unroll(op) * T
        work += [f"v = s * {C} + lane", f"while v - lane + {C} <= nv:"]
        work += _indent(vectors(range(_unroll(op))), 4) + [f"    v += S * {C}"]
        work += [f"end = v - lane + {C}", "if end > nv:", "    end = nv"]  # the partial chunk
        work += ["while v < end:"] + _indent(vectors([0]), 4) + [f"    v += {T}"]
        if vec:  # the row's scalar head and tail, by the first split
            work += ["if s == 0:", "    i = lane", "    while i < h:"]
            work += _indent(element(0, "off0 + i", "i"), 8) + [f"        i += {T}"]
            work += [f"    i = h + nv * {N} + lane", "    while i < K:"]
            work += _indent(element(0, "off0 + i", "i"), 8) + [f"        i += {T}"]
    else:
        work += ["per = (K + S - 1) // S", "end = (s + 1) * per", "if end > K:", "    end = K",
                 "j = s * per + lane", "while j < end:"]
        work += _indent(_decode("r", "j", Dr, bits, "roff"), 4)
        work += _indent(element(0, "off0 + roff", "j"), 4) + [f"    j += {T}"]
    body += ["if g < M:"] + _indent(work, 4)
    body += _fold_lanes(op, lanes)
    body += _group_reduce(op, T)
    acc = [f"a0_{k}" for k in range(len(op.parts))]
    if split:  # one block per group g (T == BLOCK): thread 0 holds the block's partial
        body += ["if tid == 0:"]
        body += [f"    tmp{k}[g * S + s] = {a}" for k, a in enumerate(acc)]
        body += ["    cuda.threadfence()  # release: the partial before the ticket"]
        body += _indent(_arrive("g"), 4) + ["cuda.syncthreads()", "if last_[0] != 0:"]
        fold = [f"{a} = {v}" for a, v in zip(acc, op.identity())]
        fold += ["jf = tid", "while jf < S:"] + _indent(_fold_element(op, 0, "g * S + jf"), 4)
        fold += [f"    jf += {BLOCK}"] + _group_reduce(op, BLOCK)
        fold += ["if tid == 0:", f"    out[g] = {op.store(acc)}", "    counters[g] = uint32(0)"]
        body += _indent(fold, 4)
    else:
        leader = "True" if T == 1 else ("lane == 0" if T <= 32 else "tid == 0")
        body += [f"if {leader} and g < M:", f"    out[g] = {op.store(acc)}"]
    name = (f"red_{op.name}_{_elem(op.in_dt)}_to_{_elem(op.out_dt)}"
            f"_{lay}_t{T}" + (f"v{N}" if vec else "") + f"_k{Dk}" +
            (f"r{Dr}" if lay == "general" else "") + f"_{bits}" + ("_split" if split else ""))
    hinted = lay == "contig" and vec and _hinted(op)
    return _spec(name, args, types, body, [N] if hinted else None, split)


def _combine_warps(op, N, W, where_ok, store):
    """Statements after every warp left its N column accumulators in shared sh_*: warp 0 folds
    warps 1..7 into its own, in order, and runs `store(q, acc)` (statements) for each column q
    that passes `where_ok(q)`."""
    body = [f"sh_{k}[w, lane * {N} + {q}] = a{q}_{k}" for q in range(N)
            for k in range(len(op.parts))]
    body += ["cuda.syncthreads()", "if w == 0:"]
    for q in range(N):
        o = [f"o_{k}" for k in range(len(op.parts))]
        acc = [f"a{q}_{k}" for k in range(len(op.parts))]
        body += [f"    for ww in range(1, {WARPS}):"]
        body += [f"        o_{k} = sh_{k}[ww, lane * {N} + {q}]" for k in range(len(op.parts))]
        body += _indent(op.combine(acc, o), 8)
        body += [f"    if {where_ok(q)}:"] + _indent(store(q, acc), 8)
    return body


def column_spec(op, N, vec, split):
    """The column kernel: lanes own N adjacent columns, warps interleave the reduced rows;
    `split`: S > 1 blocks per column tile, the last of them folds the partials."""
    args, types = _signature(op, split)
    args += ["K", "sK", "M", "B", "sB", "S", "tiles", "count"]
    types += ["int64"] * 7 + ["float64"]
    W = 32 * N
    body = ["tid = cuda.threadIdx.x", "lane = tid % 32", "w = tid // 32", "b = cuda.blockIdx.x",
            "s = b % S", "bt = b // S", "batch = bt // tiles", f"c0 = (bt % tiles) * {W} + lane * {N}"]
    if split:
        body.append("last_ = cuda.shared.array(1, int32)")
    body += _init(op, N)
    body += ["per = (K + S - 1) // S", "end = (s + 1) * per", "if end > K:", "    end = K",
             "r = s * per + w", "p = batch * sB + c0"]

    def rows(us):
        lines = []
        for u in us:
            pos = f"p + (r + {u * WARPS}) * sK"
            if vec:
                lines.append(vload_statement([f"x{u}_{q}" for q in range(N)], "inp", pos))
            else:
                lines += [f"x{u}_{q} = inp[{pos} + {q}]" for q in range(N)]
        for u in us:
            for q in range(N):  # a lane's rows rise through the loop
                lines += _accumulate(op, q, f"x{u}_{q}", f"r + {u * WARPS}", ordered=True)
        return lines

    full = [f"while r + {(COLUMN_UNROLL - 1) * WARPS} < end:"]
    full += _indent(rows(range(COLUMN_UNROLL)), 4)
    full += [f"    r += {COLUMN_UNROLL * WARPS}", "while r < end:"] + _indent(rows([0]), 4)
    full += [f"    r += {WARPS}"]
    partial = ["while r < end:"]
    for q in range(N):
        partial += [f"    if c0 + {q} < M:"] + \
            _indent(_accumulate(op, q, f"inp[p + r * sK + {q}]", "r"), 8)
    partial += [f"    r += {WARPS}"]
    body += [f"if c0 + {N} <= M:"] + _indent(full, 4) + ["else:"] + _indent(partial, 4)
    body += [f"sh_{k} = cuda.shared.array(({WARPS}, {W}), {t})" for k, t in enumerate(op.parts)]

    def in_range(q):
        return f"c0 + {q} < M"

    def final(q, acc):
        return [f"out[batch * M + c0 + {q}] = {op.store(acc)}"]

    if not split:
        body += _combine_warps(op, N, W, in_range, final)
    else:
        def partial_store(q, acc):  # partials: (S, B, M) per part
            return [f"tmp{k}[(s * B + batch) * M + c0 + {q}] = {a}" for k, a in enumerate(acc)]

        body += _combine_warps(op, N, W, in_range, partial_store)
        body += ["    cuda.threadfence()  # release: warp 0's partials before the ticket"]
        body += ["cuda.syncthreads()", "if tid == 0:"] + _indent(_arrive("bt"), 4)
        body += ["cuda.syncthreads()", "if last_[0] != 0:"]
        # the last block of the tile: warp w folds partials w, w + 8, ... of each of its
        # columns, then the warps combine in order as above (sh_* is free again: warp 0 read
        # it before the barrier above)
        fold = _init(op, N) + ["jf = w", "while jf < S:"]
        for q in range(N):
            fold += [f"    if c0 + {q} < M:"]
            fold += _indent(_fold_element(op, q, f"(jf * B + batch) * M + c0 + {q}"), 8)
        fold += [f"    jf += {WARPS}"]
        fold += _combine_warps(op, N, W, in_range, final)
        fold += ["if tid == 0:", "    counters[bt] = uint32(0)"]
        body += _indent(fold, 4)
    name = (f"red_{op.name}_{_elem(op.in_dt)}_to_{_elem(op.out_dt)}"
            f"_column" + (f"v{N}" if vec else "") + ("_split" if split else ""))
    return _spec(name, args, types, body, None, split,
                 (BLOCK, COLUMN_SPLIT_BLOCKS_PER_SM) if split else ())


# vload_hintN: vloadN (vector.py) with a PTX cache qualifier, for real element types, always one
# 16-byte ld.global<hint>.v4.u32; part of the source of the kernels that use it.
HINT_LOAD_SOURCE = """
from numba.core.extending import intrinsic as _intrinsic
from numba import types as _types
from llvmlite import ir as _ir


def _make_hint_load(n, hint):
    @_intrinsic
    def load(typingctx, ptr, idx):
        T = ptr.dtype
        sig = _types.UniTuple(T, n)(ptr, idx)

        def codegen(context, builder, sig, args):
            base = context.get_data_type(T)
            addr = builder.gep(args[0], [args[1]])
            gp = builder.addrspacecast(addr, _ir.PointerType(base, addrspace=1))
            i32 = _ir.IntType(32)
            fty = _ir.FunctionType(_ir.LiteralStructType([i32] * 4), [_ir.IntType(64)])
            res = builder.asm(fty, "ld.global" + hint + ".v4.u32 {$0, $1, $2, $3}, [$4];",
                              "=r,=r,=r,=r,l", [builder.ptrtoint(gp, _ir.IntType(64))],
                              side_effect=False)
            words = _ir.Constant(_ir.VectorType(i32, 4), _ir.Undefined)
            for k in range(4):
                words = builder.insert_element(words, builder.extract_value(res, k),
                                               _ir.Constant(i32, k))
            v = builder.bitcast(words, _ir.VectorType(base, n))
            tup = _ir.Constant(context.get_value_type(sig.return_type), _ir.Undefined)
            for j in range(n):
                tup = builder.insert_value(tup, builder.extract_element(v, _ir.Constant(i32, j)), j)
            return tup
        return sig, codegen
    return load
"""


def _hinted(op) -> bool:
    return bool(LOAD_HINT) and op.in_dt.kind in "iuf"


# The split kernels' global-memory accesses to other blocks' data: ticket(counters, i) is
# atom.global.add.u32 of 1 (numba's cuda.atomic takes arrays, not pointers) returning the old
# value; load_cg(ptr, i) reads a 32- or 64-bit element with ld.global.cg (cached in L2 only, which
# is coherent across SMs; numba's cuda.ldcg needs a GPU to compile). Both are volatile asm with a
# memory clobber, so the compiler keeps them in program order around the fences and barriers.
# Part of the source of the split kernels.
FOLD_SOURCE = """
from numba.core.extending import intrinsic as _intrinsic
from numba import types as _types
from llvmlite import ir as _ir


def _global_address(builder, ptr, idx, bits):
    addr = builder.bitcast(builder.gep(ptr, [idx]), _ir.PointerType(_ir.IntType(bits)))
    gp = builder.addrspacecast(addr, _ir.PointerType(_ir.IntType(bits), addrspace=1))
    return builder.ptrtoint(gp, _ir.IntType(64))


@_intrinsic
def ticket(typingctx, ptr, idx):
    sig = _types.uint32(ptr, idx)

    def codegen(context, builder, sig, args):
        fty = _ir.FunctionType(_ir.IntType(32), [_ir.IntType(64)])
        return builder.asm(fty, "atom.global.add.u32 $0, [$1], 1;", "=r,l,~{memory}",
                           [_global_address(builder, args[0], args[1], 32)], side_effect=True)
    return sig, codegen


@_intrinsic
def load_cg(typingctx, ptr, idx):
    sig = ptr.dtype(ptr, idx)

    def codegen(context, builder, sig, args):
        T = context.get_value_type(sig.return_type)
        bits = T.width if isinstance(T, _ir.IntType) else (32 if T == _ir.FloatType() else 64)
        fty = _ir.FunctionType(_ir.IntType(bits), [_ir.IntType(64)])
        word = builder.asm(fty, "ld.global.cg.b%d $0, [$1];" % bits,
                           ("=r" if bits == 32 else "=l") + ",l,~{memory}",
                           [_global_address(builder, args[0], args[1], bits)], side_effect=True)
        return builder.bitcast(word, T)
    return sig, codegen
"""


def _spec(name, args, types, body, hint_loads=None, split=False, launch_bounds=()):
    extra = FOLD_SOURCE + "\n\n" if split else ""
    if hint_loads:
        extra += HINT_LOAD_SOURCE + "".join(
            f"vload_hint{n} = _make_hint_load({n}, {LOAD_HINT!r})\n" for n in hint_loads) + "\n\n"
    src = PREAMBLE + extra + f"def {name}({', '.join(args)}):\n" + \
        "\n".join(_indent(body, 4)) + "\n"
    return compiler.KernelSpec(name, src, name, tuple(types), launch_bounds)


# ---- host side: layout analysis (cached as plans) and launches -----------------------------

def _pad(shape, strides, D):
    pad = D - len(shape)
    return (1,) * pad + tuple(shape), (0,) * pad + tuple(strides)


def _dims(d):
    for bucket in DIMS:
        if d <= bucket:
            return bucket
    raise NotImplementedError(f"reduction over {d} non-collapsible dims")


class _Plan:
    """How to reduce one layout, in one launch: the input pointer's shift (bytes; flipped
    negative strides), the kernel (`key`, `build`) and its launch (grid, `tail`: the arguments
    after the pointers, `nbytes` read), and for a split kernel the byte offsets of its partial
    arrays in the scratch area (`parts`, None when not split) and their total `partial_bytes`.
    `kernels`: the loaded kernel per device, resolved on the first call."""

    __slots__ = ("shift", "key", "build", "grid", "tail", "nbytes", "parts", "partial_bytes",
                 "kernels")

    def __init__(self):
        self.shift, self.parts, self.partial_bytes, self.kernels = 0, None, 0, {}


def _partials(plan, op, n):
    """Lay out a split kernel's partials: `n` of each accumulator part, each array 256-byte
    aligned."""
    offsets, off = [], 0
    for t in op.parts:
        offsets.append(off)
        off += -(-n * np.dtype(t).itemsize // 256) * 256
    plan.parts, plan.partial_bytes = tuple(offsets), off


def _split(units, most, sms):
    """Blocks S (1 <= S <= most) to split each of `units` equal work units over, so that the
    units * S equal blocks fill whole waves of BLOCKS_PER_SM blocks on every SM: the least S
    making at least one wave whose waves are SPLIT_FILL full on average, else the fullest S up
    to 8 times the least (a last wave a third full costs as much as a full one). Units beyond
    the scratch counters (never, below COUNTERS // BLOCKS_PER_SM SMs) are not split."""
    wave = BLOCKS_PER_SM * sms
    if units >= wave or units > COUNTERS:
        return 1
    least = -(-wave // units)
    if least >= most:
        return max(1, most)
    best, best_fill = least, 0.0
    for S in range(least, min(most, 8 * least) + 1):
        blocks = units * S
        fill = blocks / (-(-blocks // wave) * wave)
        if fill >= SPLIT_FILL:
            return S
        if fill > best_fill:
            best, best_fill = S, fill
    return best


def _plan_rows(plan, sms, op, lay, ksh, kst, rsh, rst, K, count, vec, align):
    """Contig or general reduction of M rows of K into M outputs: groups of T lanes a row, and
    rows split over S blocks each when they are few and long."""
    M = math.prod(ksh)
    N = vector_width(op.in_dt.itemsize) if vec else 1
    wave = BLOCKS_PER_SM * sms
    T = 1 if K < 32 else (32 if K < ROW_BLOCK_MIN_K or (lay == "general" and M >= 4 * wave)
                          else BLOCK)
    S = _split(M, K // (BLOCK * N * _unroll(op) * 2), sms) if T == BLOCK else 1
    Dk = _dims(len(ksh))
    Dr = _dims(len(rsh)) if lay == "general" else 0
    ksh, kst = _pad(ksh, kst, Dk)
    bits = 32 if M < 2**31 and K < 2**31 else 64
    split = S > 1
    plan.key = ("group", op.key(), lay, T, N, vec, Dk, Dr, split, bits, _unroll(op), LOAD_HINT)
    plan.build = lambda: group_spec(op, lay, T, N, vec, Dk, Dr, split, bits)
    tail = [align, K, S, float(count), M] + list(ksh) + list(kst)
    if lay == "general":
        rsh, rst = _pad(rsh, rst, Dr)
        tail += list(rsh) + list(rst)
    plan.tail = tuple(tail)
    plan.grid = -(-M // (BLOCK // T)) * S
    plan.nbytes = M * K * op.in_dt.itemsize
    if split:
        _partials(plan, op, M * S)


def _plan_column(plan, sms, op, K, sK, M, B, sB, count, vec):
    N = vector_width(op.in_dt.itemsize) if vec else 1
    part_bytes = sum(np.dtype(t).itemsize for t in op.parts)
    while N > 1 and BLOCK * N * part_bytes > COLUMN_SHARED_BYTES:
        N //= 2
    tiles = -(-M // (32 * N))
    S = _split(B * tiles, K // (WARPS * COLUMN_UNROLL * 2), sms)
    split = S > 1
    plan.key = ("column", op.key(), N, vec, split, COLUMN_UNROLL, COLUMN_SPLIT_BLOCKS_PER_SM)
    plan.build = lambda: column_spec(op, N, vec, split)
    plan.tail = (K, sK, M, B, sB, S, tiles, float(count))
    plan.grid = B * tiles * S
    plan.nbytes = K * M * B * op.in_dt.itemsize
    if split:
        _partials(plan, op, S * B * M)


@functools.lru_cache(maxsize=4096)
def _plan(name, in_dt, out_dt, shape, strides, reduced_axes, order_free, align, sms):
    """The plan reducing an array of this layout (`align`: its pointer mod 16) over
    `reduced_axes` into a contiguous 1-D output (the kept elements in C order) on a GPU of
    `sms` SMs; None when it has more non-collapsible dims than the kernels take."""
    op = Op(name, in_dt, out_dt)
    isz = in_dt.itemsize
    kept = [i for i in range(len(shape)) if i not in reduced_axes]
    kshape = [shape[i] for i in kept]
    ksh, (kst, _) = collapse(kshape, [strides[i] for i in kept], c_strides(kshape))
    rdims = [(shape[i], strides[i]) for i in reduced_axes if shape[i] != 1]
    count = math.prod(shape[i] for i in reduced_axes)
    plan = _Plan()
    shift = 0
    if order_free:  # flip negative reduced strides, outermost (largest stride) first
        flipped = []
        for n, st in rdims:
            if st < 0:
                shift += (n - 1) * st
                st = -st
            flipped.append((n, st))
        rdims = sorted(flipped, key=lambda d: -d[1])
    rsh, (rst,) = collapse([n for n, _ in rdims], [st for _, st in rdims])
    if max(len(ksh), len(rsh)) > DIMS[-1]:
        return None
    plan.shift = shift * isz
    ptr = (align + plan.shift) % 16
    # a 16-byte vector path needs element-aligned pointers (16-byte ones for 16-byte elements)
    vec_ok = ptr % isz == 0 and (isz < 16 or ptr == 0)
    if len(rsh) == 1 and rst[0] == 1:
        _plan_rows(plan, sms, op, "contig", ksh, kst, (), (), count, count, vec_ok, ptr)
    elif len(rsh) == 1 and kst[-1] == 1 and ksh[-1] > 1 and len(ksh) <= 2:
        M = ksh[-1]
        B, sB = (ksh[0], kst[0]) if len(ksh) == 2 else (1, 0)
        sK = rst[0]
        vec = ptr == 0 and (sK * isz) % 16 == 0 and (sB * isz) % 16 == 0
        _plan_column(plan, sms, op, count, sK, M, B, sB, count, vec)
    else:
        _plan_rows(plan, sms, op, "general", ksh, kst, rsh, rst, count, count, False, ptr)
    return plan


class _Scratch:
    """A stream's split-reduction scratch (its Stream.scratch[SPLIT_SCRATCH]): COUNTERS uint32
    group counters (zeroed once, left at 0 by every launch) then SCRATCH_PARTIAL_BYTES for
    partials."""

    __slots__ = ("buffer", "counters", "partials")


def _scratch(stream):
    sc = stream.scratch.get(SPLIT_SCRATCH)
    if sc is None:
        nbytes = COUNTERS * 4 + SCRATCH_PARTIAL_BYTES
        dev = stream.device
        a = new_array(dev.index, (nbytes,), np.dtype(np.uint8), dev.allocator)
        # queued on this stream ahead of the first launch that takes a ticket
        elementwise.zero_scratch(stream, a.view((COUNTERS * 4,), (1,), 0, True))
        sc = _Scratch()
        sc.buffer, sc.counters, sc.partials = a.buffer, a.ptr, a.ptr + COUNTERS * 4
        stream.scratch[SPLIT_SCRATCH] = sc
    return sc


def _reduce_into(dev, name, a, reduced_axes, out, order_free):
    """Reduce `a` over `reduced_axes` with operation `name` into the fresh C-contiguous `out`
    (the kept elements in C order, of the result dtype): look up the layout's plan (which holds
    the operation and, per device, the loaded kernel: nothing is built per call), launch."""
    plan = _plan(name, a.dtype, out.dtype, a.shape, a.strides, reduced_axes, order_free,
                 a.ptr % 16, dev.multiprocessor_count)
    if plan is None:  # rare: more dims than the kernels take; a copy collapses them
        return _reduce_into(dev, name, elementwise.copy(a), reduced_axes, out, order_free)
    kern = plan.kernels.get(dev.index)
    if kern is None:
        kern = plan.kernels[dev.index] = compiler.cached_kernel(dev.index, "reduce", plan.key,
                                                                plan.build)
    stream = dev.stream
    if plan.parts is None:
        kern(stream, plan.grid, BLOCK, (a.ptr + plan.shift, out.ptr) + plan.tail,
             (a.buffer, out.buffer), plan.nbytes)
        return
    sc = _scratch(stream)
    if plan.partial_bytes <= SCRATCH_PARTIAL_BYTES:
        partials = sc.partials
        keep = (a.buffer, out.buffer, sc.buffer)
    else:  # partials too many for the scratch (huge column tiles): a temporary of their own
        t = new_array(dev.index, (plan.partial_bytes,), np.dtype(np.uint8), dev.allocator)
        partials = t.ptr
        keep = (a.buffer, out.buffer, sc.buffer, t.buffer)
    kern(stream, plan.grid, BLOCK, (a.ptr + plan.shift, out.ptr)
         + tuple([partials + o for o in plan.parts]) + (sc.counters,) + plan.tail, keep,
         plan.nbytes)


@functools.lru_cache(maxsize=1024)
def _out_geometry(shape, axes, keepdims):
    """(result shape, its size, whether the reduced dims hold no element)."""
    out = tuple(1 if i in axes else n for i, n in enumerate(shape)) if keepdims else \
        tuple(n for i, n in enumerate(shape) if i not in axes)
    return out, math.prod(out), math.prod(shape[i] for i in axes) == 0


_EMPTY_VALUE = {"sum": 0, "prod": 1, "all": True, "any": False}


def reduce(name, a, axes, keepdims, dtype):
    """The `reduce` primitive (see _backend.PRIMITIVES)."""
    dtype = BOOL if name in ("all", "any") else np.dtype(dtype)
    if type(axes) is not tuple:
        axes = tuple(axes)
    dev = runtime.get_device(a.device_index)
    shape, size, empty = _out_geometry(a.shape, axes, keepdims)
    if size == 0:
        return new_array(a.device_index, shape, dtype, dev.allocator)
    out = new_contig(dev, shape, dtype, size, dev.allocator)
    if empty:  # an empty reduction: its identity
        value = _EMPTY_VALUE.get(name)
        if value is None:  # mean: 0 / 0; max and min of nothing are rejected by the namespace
            value = complex(math.nan, math.nan) if dtype.kind == "c" else math.nan
        return elementwise.fill(out, value)
    _reduce_into(dev, name, a, axes, out, True)
    return out


def argreduce(name, a, axis, keepdims):
    """The `argreduce` primitive: argmax/argmin, int64, first index on ties and first NaN."""
    dev = runtime.get_device(a.device_index)
    axes = tuple(range(a.ndim)) if axis is None else (axis,)
    shape, size, _ = _out_geometry(a.shape, axes, keepdims)
    if size == 0:
        return new_array(a.device_index, shape, I64, dev.allocator)
    out = new_contig(dev, shape, I64, size, dev.allocator)
    _reduce_into(dev, name, a, axes, out, False)
    return out


def precompile_specs():
    """The kernels the commonest reductions launch (for precompile.py): every operation on
    float32/float64 (and sum/all/any on int32, int64, bool) over contiguous rows of each group
    size, split rows (the all-reduce), and columns (vector and scalar, split or not)."""
    f32, f64 = np.dtype("float32"), np.dtype("float64")
    cases = [(n, d, d) for n in ("sum", "prod", "max", "min", "mean") for d in (f32, f64)]
    cases += [(n, d, BOOL) for n in ("all", "any") for d in (BOOL, np.dtype("int32"), f32)]
    cases += [("sum", d, I64) for d in (BOOL, np.dtype("int32"), I64)]
    cases += [(n, d, I64) for n in ARG for d in (f32, f64, np.dtype("int32"), I64)]
    out = []
    for name, in_dt, out_dt in cases:
        op = Op(name, in_dt, out_dt)
        n = vector_width(in_dt.itemsize)
        for split in (True, False):
            out.append(group_spec(op, "contig", BLOCK, n, True, 1, 0, split, 32))
            out.append(column_spec(op, n, True, split))
            out.append(column_spec(op, 1, False, split))
        out += [group_spec(op, "contig", t, n, True, 1, 0, False, 32) for t in (1, 32)]
    return list({spec.source: spec for spec in out}.values())


PRIMITIVES = {"reduce": reduce, "argreduce": argreduce}
