"""Kernel source of the reduction family: the group (contig and general) kernel, the column
kernel, and the statements they share.

Both kernels run in the same phases, one `KernelSource` section each: find this thread's output
and split part, start its accumulators, fold in its share of the elements, combine the block's
accumulators, then store the result or, split, store the block's partial and take a ticket; the
last block of a group folds the partials (through L2: ``load_cg``), stores and resets the
counter. Generated names: ``a{q}_{k}`` is part k of vector lane q's accumulator (``l{q}_{k}``
its running form, for a reduction that streams into one: the moments), ``e_*``/``o_*`` an
element's or another lane's parts, ``sh_*`` shared memory, ``tmp*`` the partials.
"""

from __future__ import annotations

import numpy as np

from ...engine import compiler
from ...engine.layout import vector_width
from .._common import BOOL, KernelSource, element_type
from .._common import vload_statement
from . import tuning
from .reduction import ARG, MOMENTS, NAN, NAN_ARG, Reduction

PREAMBLE = "INF = float('inf')\n"  # max/min identities of floating inputs


def _indent(lines, n=4):
    return [" " * n + line for line in lines]


def _parts(prefix, red):
    return [f"{prefix}_{k}" for k in range(len(red.parts))]


def _shuffle(var, t, off):
    if t.startswith("uint"):  # shuffles move signed and floating values: go through int64
        return f"uint64(cuda.shfl_down_sync(0xffffffff, int64({var}), {off}))"
    return f"cuda.shfl_down_sync(0xffffffff, {var}, {off})"


def _shuffle_round(red, off):
    """Fold the accumulator of the lane `off` above into each lane's a0_*."""
    a, o = _parts("a0", red), _parts("o", red)
    return [f"{ok} = {_shuffle(ak, t, off)}" for ak, ok, t in zip(a, o, red.parts)] + \
        red.combine(a, o)


def _group_reduce(red, T):
    """Statements leaving the combination of each group of T lanes (aligned, T a power of two
    up to BLOCK) in its first lane's accumulator a0_*. Every thread of the block runs them:
    shuffles within a warp, then (T > 32) the warps' results through shared memory to warp 0."""
    warps = tuning.WARPS
    a = _parts("a0", red)
    lines = []
    off = min(T, 32) // 2
    while off >= 1:
        lines += _shuffle_round(red, off)
        off //= 2
    if T > 32:
        lines += [f"sh_{k} = cuda.shared.array({warps}, {t})" for k, t in enumerate(red.parts)]
        lines += ["if tid % 32 == 0:"] + [f"    sh_{k}[tid // 32] = {ak}" for k, ak in enumerate(a)]
        lines += ["cuda.syncthreads()", "if tid < 32:"]
        lines += [f"    if tid < {warps}:"]
        lines += [f"        {ak} = sh_{k}[tid]" for k, ak in enumerate(a)]
        lines += ["    else:"] + [f"        {ak} = {v}" for ak, v in zip(a, red.identity())]
        off = warps // 2
        while off >= 1:
            lines += _indent(_shuffle_round(red, off))
            off //= 2
    return lines


def _running(red, q):
    """Lane q's running accumulator: names of its own when the reduction streams into a form of
    its own, else the accumulator a{q}_* itself."""
    prefix = f"l{q}" if red.streams else f"a{q}"
    return [f"{prefix}_{k}" for k in range(len(red.running_parts))]


def _accumulate(red, q, raw, idx, ordered=False):
    """Statements folding element `raw` (an expression, evaluated once) into lane q's running
    accumulator (`ordered`: its index is above every index folded into it so far)."""
    return [f"x = {raw}"] + red.accumulate(_running(red, q), "x", idx, ordered)


def _init(red, lanes):
    """The lanes' running accumulators at their start."""
    return [f"{r} = {v}" for q in range(lanes)
            for r, v in zip(_running(red, q), red.running_identity())]


def _init_combined(red, lanes):
    """The lanes' accumulators at their start (a fold of partials starts from these)."""
    return [f"a{q}_{k} = {v}" for q in range(lanes) for k, v in enumerate(red.identity())]


def _finish(src, red, lanes):
    """The section turning each lane's running accumulator into its accumulator (none unless the
    reduction streams)."""
    if red.streams:
        src.section("the running sums of each lane as its moments",
                    [line for q in range(lanes)
                     for line in red.finish(_running(red, q), _parts(f"a{q}", red))])


def _fold_lanes(red, lanes):
    """Pairwise tree over the per-lane accumulators into lane 0's."""
    lines = []
    step = 1
    while step < lanes:
        for q in range(0, lanes, 2 * step):
            if q + step < lanes:
                lines += red.combine(_parts(f"a{q}", red), _parts(f"a{q + step}", red))
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


def _signature(red, split):
    """Pointer arguments: input, output, and for a split kernel the partials (one array per
    accumulator part) and the group counters."""
    args = ["inp", "out"]
    types = [element_type(red.in_dt) + "*", "int64*" if red.arg else element_type(red.out_dt) + "*"]
    if split:
        args += [f"tmp{k}" for k in range(len(red.parts))] + ["counters"]
        types += [f"{t}*" for t in red.parts] + ["uint32*"]
    return args, types


def _arrive(group):
    """Statements of one thread after its block's partials are stored and fenced: take a ticket
    on counter `group`, and tell the block (shared `last_`) whether it is the group's last."""
    return [f"last = ticket(counters, {group}) == S - 1",
            "if last:  # acquire: the other blocks' partials happen before the fold's loads",
            "    cuda.threadfence()",
            "last_[0] = int32(last)"]


def _fold_partial(red, q, where):
    """Statements folding the partial at `where` (read through L2) into lane q's accumulator.
    Partials are not in index order (a split's identity carries no index), so unordered."""
    e = _parts("e", red)
    return ([f"{ek} = load_cg(tmp{k}, {where})" for k, ek in enumerate(e)] +
            red.combine(_parts(f"a{q}", red), e))


def _spec(src, types, hinted_width=None, launch_bounds=()):
    """The KernelSpec of `src`; `hinted_width`: bind ``vload_hint<width>``, the LOAD_HINT load."""
    if hinted_width:
        n = hinted_width
        src.preamble += f"vload_hint{n} = hinted_vload({n}, {tuning.LOAD_HINT!r})\n"
    return compiler.KernelSpec(src.name, src.text(), src.name, tuple(types), launch_bounds)


# ---- the group kernel: contiguous rows ("contig") and any other layout ("general") ------------

def _contig_elements(red, T, N, vec):
    """A lane's share of its row of K contiguous elements at off0: the vectors in chunks of C
    (each lane's unrolled loads at once), block s of a split taking chunks s, s + S, ... (the
    blocks of a split stream through the row together: faster than a contiguous 1/S each),
    then the partial chunk, then (vec) the row's scalar head before the first aligned vector
    and its tail, by the first split part."""
    isz = red.in_dt.itemsize
    unroll = tuning.contig_unroll(red)
    hinted = vec and tuning.hinted_loads(red)
    if vec:  # `align`: the input pointer mod 16
        lines = [f"h = ((16 - (align + off0 * {isz}) % 16) % 16) // {isz}", "if h > K:",
                 "    h = K"]
    else:
        lines = ["h = int64(0)"]
    lines += [f"nv = (K - h) // {N}", "p = off0 + h"]

    def vectors(us):
        out = []
        for u in us:
            pos = f"p + (v + {u * T}) * {N}"
            if vec:
                load = f"vload_hint{N}" if hinted else None
                out.append(vload_statement([f"x{u}_{q}" for q in range(N)], "inp", pos, load))
            else:
                out.append(f"x{u}_0 = inp[{pos}]")
        for u in us:
            for q in range(N):
                idx = f"h + (v + {u * T}) * {N} + {q}"
                # a lane's indices rise through the loop; the head comes after, unordered
                out += _accumulate(red, q, f"x{u}_{q}", idx, ordered=True)
        return out

    C = unroll * T
    lines += [f"v = s * {C} + lane", f"while v - lane + {C} <= nv:"]
    lines += _indent(vectors(range(unroll))) + [f"    v += S * {C}"]
    lines += [f"end = v - lane + {C}", "if end > nv:", "    end = nv"]
    lines += ["while v < end:"] + _indent(vectors([0])) + [f"    v += {T}"]
    if vec:
        lines += ["if s == 0:", "    i = lane", "    while i < h:"]
        lines += _indent(_accumulate(red, 0, "inp[off0 + i]", "i"), 8) + [f"        i += {T}"]
        lines += [f"    i = h + nv * {N} + lane", "    while i < K:"]
        lines += _indent(_accumulate(red, 0, "inp[off0 + i]", "i"), 8) + [f"        i += {T}"]
    return lines


def _general_elements(red, T, Dr, bits):
    """A lane's share of its output's K reduced elements: split part s takes a contiguous 1/S of
    the flat reduced index space, its T lanes interleave, each index decoded into an offset."""
    lines = ["per = (K + S - 1) // S", "end = (s + 1) * per", "if end > K:", "    end = K",
             "j = s * per + lane", "while j < end:"]
    lines += _indent(_decode("r", "j", Dr, bits, "roff"))
    return lines + _indent(_accumulate(red, 0, "inp[off0 + roff]", "j")) + [f"    j += {T}"]


def group_name(red, lay, T, N, vec, Dk, Dr, split, bits):
    return (f"red_{red.name}_{element_type(red.in_dt)}_to_{element_type(red.out_dt)}"
            f"_{lay}_t{T}" + (f"v{N}" if vec else "") + f"_k{Dk}" +
            (f"r{Dr}" if lay == "general" else "") + f"_{bits}" + ("_split" if split else ""))


def group_spec(red, lay, T, N, vec, Dk, Dr, split, bits):
    """The contig (row) or general kernel: groups of T lanes, one output element per group (M
    of them, kept dims ksh/kst); `split`: S > 1 blocks per output (T == BLOCK), the last of
    them folds the partials. Contig rows are read in vectors of N (`vec`), general ones through
    Dr reduced dims rsh/rst; `bits`: the width of index arithmetic."""
    assert not split or T == tuning.BLOCK
    block = tuning.BLOCK
    args, types = _signature(red, split)
    idx_t = "uint32" if bits == 32 else "int64"
    args += ["align", "K", "S", red.scalar, "M"] + [f"ksh{j}" for j in range(Dk)] + \
        [f"kst{j}" for j in range(Dk)]
    types += ["int64", "int64", "int64", "float64", "int64"] + [idx_t] * Dk + ["int64"] * Dk
    if lay == "general":
        args += [f"rsh{j}" for j in range(Dr)] + [f"rst{j}" for j in range(Dr)]
        types += [idx_t] * Dr + ["int64"] * Dr
    lanes = N if lay == "contig" else 1
    acc = _parts("a0", red)
    src = KernelSource(group_name(red, lay, T, N, vec, Dk, Dr, split, bits), args,
                       PREAMBLE + red.constants)

    src.section("this thread's group g (its output element) and split part s", [
        "tid = cuda.threadIdx.x", "b = cuda.blockIdx.x", f"lane = tid % {T}",
        f"g = (b // S) * {block // T} + tid // {T}", "s = b % S"]
        + (["last_ = cuda.shared.array(1, int32)"] if split else []))
    src.section("the accumulators, one per vector lane", _init(red, lanes))
    work = _decode("k", "g", Dk, bits, "off0")
    work += _contig_elements(red, T, N, vec) if lay == "contig" else \
        _general_elements(red, T, Dr, bits)
    src.section("this lane's share of the group's elements", ["if g < M:"] + _indent(work))
    _finish(src, red, lanes)
    if lanes > 1:
        src.section("the vector lanes' accumulators, pairwise", _fold_lanes(red, lanes))
    src.section("the group's lanes into its first", _group_reduce(red, T))
    if split:  # one block per group g (T == BLOCK): thread 0 holds the block's partial
        src.section("the block's partial, then its ticket",
                    ["if tid == 0:"] + [f"    tmp{k}[g * S + s] = {a}" for k, a in enumerate(acc)]
                    + ["    cuda.threadfence()  # release: the partial before the ticket"]
                    + _indent(_arrive("g")))
        fold = [f"{a} = {v}" for a, v in zip(acc, red.identity())]
        fold += ["jf = tid", "while jf < S:"] + _indent(_fold_partial(red, 0, "g * S + jf"))
        fold += [f"    jf += {block}"] + _group_reduce(red, block)
        fold += ["if tid == 0:", f"    out[g] = {red.store(acc)}", "    counters[g] = uint32(0)"]
        src.section("the group's last block folds the S partials, stores, resets the counter",
                    ["cuda.syncthreads()", "if last_[0] != 0:"] + _indent(fold))
    else:
        leader = "True" if T == 1 else ("lane == 0" if T <= 32 else "tid == 0")
        src.section("the result", [f"if {leader} and g < M:", f"    out[g] = {red.store(acc)}"])
    hinted = lay == "contig" and vec and tuning.hinted_loads(red)
    return _spec(src, types, N if hinted else None, tuning.launch_bounds(red))


# ---- the column kernel: reduced axis strided, kept axis contiguous ----------------------------

def _column_rows(red, N, vec):
    """A warp's rows of its column tile: r = s * per + w, w + 8, ... of its split part's rows,
    COLUMN_UNROLL rows loaded back to back (full tiles: one vector of N columns a lane), then
    the rest; a partial tile (the last columns) bounds-checks each column."""
    warps, unroll = tuning.WARPS, tuning.COLUMN_UNROLL

    def rows(us):
        lines = []
        for u in us:
            pos = f"p + (r + {u * warps}) * sK"
            if vec:
                lines.append(vload_statement([f"x{u}_{q}" for q in range(N)], "inp", pos))
            else:
                lines += [f"x{u}_{q} = inp[{pos} + {q}]" for q in range(N)]
        for u in us:
            for q in range(N):  # a lane's rows rise through the loop
                lines += _accumulate(red, q, f"x{u}_{q}", f"r + {u * warps}", ordered=True)
        return lines

    full = [f"while r + {(unroll - 1) * warps} < end:"] + _indent(rows(range(unroll)))
    full += [f"    r += {unroll * warps}", "while r < end:"] + _indent(rows([0]))
    full += [f"    r += {warps}"]
    partial = ["while r < end:"]
    for q in range(N):
        partial += [f"    if c0 + {q} < M:"] + \
            _indent(_accumulate(red, q, f"inp[p + r * sK + {q}]", "r"), 8)
    partial += [f"    r += {warps}"]
    return [f"if c0 + {N} <= M:"] + _indent(full) + ["else:"] + _indent(partial)


def _combine_warps(red, N, store):
    """Statements after every warp left its N column accumulators in shared sh_*: warp 0 folds
    warps 1..7 into its own, in order, and runs `store(q, acc)` (statements) for each column q
    inside the array."""
    warps, nparts = tuning.WARPS, len(red.parts)
    body = [f"sh_{k}[w, lane * {N} + {q}] = a{q}_{k}" for q in range(N) for k in range(nparts)]
    body += ["cuda.syncthreads()", "if w == 0:"]
    for q in range(N):
        acc = _parts(f"a{q}", red)
        body += [f"    for ww in range(1, {warps}):"]
        body += [f"        o_{k} = sh_{k}[ww, lane * {N} + {q}]" for k in range(nparts)]
        body += _indent(red.combine(acc, _parts("o", red)), 8)
        body += [f"    if c0 + {q} < M:"] + _indent(store(q, acc), 8)
    return body


def column_name(red, N, vec, split):
    return (f"red_{red.name}_{element_type(red.in_dt)}_to_{element_type(red.out_dt)}"
            f"_column" + (f"v{N}" if vec else "") + ("_split" if split else ""))


def column_width(red, vec):
    """N, the columns a lane of the column kernel owns: one 16-byte vector's worth (`vec`), halved
    while the block's shared accumulators would pass COLUMN_SHARED_BYTES (argmax of 1-byte
    dtypes: 16 columns of value and index a lane); 1 without vectors."""
    N = vector_width(red.in_dt.itemsize) if vec else 1
    part_bytes = sum(np.dtype(t).itemsize for t in red.parts)
    while N > 1 and tuning.BLOCK * N * part_bytes > tuning.COLUMN_SHARED_BYTES:
        N //= 2
    return N


def column_spec(red, N, vec, split):
    """The column kernel: B batches of K rows (stride sK) of M contiguous columns; lanes own N
    adjacent columns (`vec`: one vector load), the warps interleave the rows and combine in
    shared memory; `split`: S > 1 blocks per column tile, the last of them folds the partials."""
    warps = tuning.WARPS
    args, types = _signature(red, split)
    args += ["K", "sK", "M", "B", "sB", "S", "tiles", red.scalar]
    types += ["int64"] * 7 + ["float64"]
    W = 32 * N
    src = KernelSource(column_name(red, N, vec, split), args, PREAMBLE + red.constants)

    src.section("this thread's column tile (W columns of one batch), warp and split part", [
        "tid = cuda.threadIdx.x", "lane = tid % 32", "w = tid // 32", "b = cuda.blockIdx.x",
        "s = b % S", "bt = b // S", "batch = bt // tiles", f"c0 = (bt % tiles) * {W} + lane * {N}"]
        + (["last_ = cuda.shared.array(1, int32)"] if split else []))
    src.section("the accumulators, one per column", _init(red, N))
    src.section("this warp's rows of the tile", [
        "per = (K + S - 1) // S", "end = (s + 1) * per", "if end > K:", "    end = K",
        "r = s * per + w", "p = batch * sB + c0"] + _column_rows(red, N, vec))
    _finish(src, red, N)
    shared = [f"sh_{k} = cuda.shared.array(({warps}, {W}), {t})" for k, t in enumerate(red.parts)]

    def final(q, acc):
        return [f"out[batch * M + c0 + {q}] = {red.store(acc)}"]

    if not split:
        src.section("the warps' accumulators, in order, and the results",
                    shared + _combine_warps(red, N, final))
    else:
        def partial_store(q, acc):  # partials: (S, B, M) per part
            return [f"tmp{k}[(s * B + batch) * M + c0 + {q}] = {a}" for k, a in enumerate(acc)]

        src.section("the warps' accumulators, in order, as the block's partials; its ticket",
                    shared + _combine_warps(red, N, partial_store)
                    + ["    cuda.threadfence()  # release: warp 0's partials before the ticket"]
                    + ["cuda.syncthreads()", "if tid == 0:"] + _indent(_arrive("bt")))
        # warp w folds partials w, w + 8, ... of each of its columns, then the warps combine
        # as above (sh_* is free again: warp 0 read it before the barrier)
        fold = _init_combined(red, N) + ["jf = w", "while jf < S:"]
        for q in range(N):
            fold += [f"    if c0 + {q} < M:"]
            fold += _indent(_fold_partial(red, q, f"(jf * B + batch) * M + c0 + {q}"), 8)
        fold += [f"    jf += {warps}"]
        fold += _combine_warps(red, N, final)
        fold += ["if tid == 0:", "    counters[bt] = uint32(0)"]
        src.section("the tile's last block folds the S partials, stores, resets the counter",
                    ["cuda.syncthreads()", "if last_[0] != 0:"] + _indent(fold))
    return _spec(src, types, None, tuning.launch_bounds(red, split))


def precompile_specs():
    """The kernels the reductions launch with their default result dtypes (for precompile.py):
    every operation on float32/float64 (the NaN-ignoring ones and the moments on those only);
    sum, prod, max, min, argmax and argmin on every integer dtype; sum, prod and mean on the
    complex ones; all and any on every dtype but uint8. Each over contiguous rows of each group
    size, split rows (the all-reduce), and columns (vector and scalar, split or not)."""
    f32, f64, i64, u64 = (np.dtype(d) for d in ("float32", "float64", "int64", "uint64"))
    ints = [np.dtype(f"{k}int{b}") for k in ("", "u") for b in (8, 16, 32, 64)]
    complexes = [np.dtype("complex64"), np.dtype("complex128")]
    cases = [(n, d, d) for n in ("sum", "prod", "max", "min", "mean") for d in (f32, f64)]
    cases += [(n, d, d) for n in NAN if n not in NAN_ARG for d in (f32, f64)]
    cases += [(n, d, d) for n in MOMENTS for d in (f32, f64)]
    cases += [(n, d, i64) for n in NAN_ARG for d in (f32, f64)]
    # uint8's all/any would share bool's kernel names (bool is stored as uint8), not its source
    cases += [(n, d, BOOL) for n in ("all", "any")
              for d in [BOOL, f32, f64] + [d for d in ints if d != np.uint8] + complexes]
    cases += [("sum", BOOL, i64)]
    # sum and prod of an integer dtype accumulate in the default integer of its signedness
    cases += [(n, d, u64 if d.kind == "u" else i64) for n in ("sum", "prod") for d in ints]
    cases += [(n, d, d) for n in ("max", "min") for d in ints]
    cases += [(n, d, i64) for n in ARG for d in [f32, f64] + ints]
    cases += [(n, d, d) for n in ("sum", "prod", "mean") for d in complexes]
    block = tuning.BLOCK
    out = []
    for name, in_dt, out_dt in cases:
        red = Reduction(name, in_dt, out_dt)
        n = vector_width(in_dt.itemsize)
        for split in (True, False):
            out.append(group_spec(red, "contig", block, n, True, 1, 0, split, 32))
            out.append(column_spec(red, column_width(red, True), True, split))
            out.append(column_spec(red, 1, False, split))
        out += [group_spec(red, "contig", t, n, True, 1, 0, False, 32) for t in (1, 32)]
    return list({spec.source: spec for spec in out}.values())
