"""Kernel source of the row-function family: one generator, two modes (``RowKernel.mode``).

* ``regs``: the row lives in registers. Lane l of a row's T lanes holds slots c = 0..C-1, slot
  c being the V elements from (c T + l) V (a 16-byte vector when V > 1); slots past the row
  hold the function's neutral value. The row is read once, reduced across the lanes (warp
  shuffles; past 32 lanes, one shared-memory round a reduction, or for softmax and
  log_softmax with `merged` one round for the max and the sum together), and written once.
* ``stream``: the row is read in chunks of U vectors a lane (lane l loads vectors v, v + T, ...,
  v = l + U T i), folded into running statistics (an online max and sum, shifted Chan
  moments, a sum of squares), reduced across the lanes, then read again to write (logsumexp
  writes one value a row and reads it once). A split logsumexp (`RowKernel.split`) shares a
  row among S blocks, each streaming a contiguous part; the last to finish folds the parts.

T <= 32 lanes are a group inside a warp and a block holds block // T rows; T > 32 lanes are the
whole block, one row. The row's 16-byte loads carry `hint`, a PTX cache qualifier. Every lane
runs every shuffle and barrier (lanes of rows past M load nothing and store nothing), so the
groups stay converged.

Statistics (what each function folds, in the dtype: float32 in float32, float64 in float64):
softmax, log_softmax, logsumexp: the max m and s = sum exp(x - m); in regs mode the max first,
then the exponentials (one exp an element), in stream mode online: a chunk's max rescales s
once (s exp(m - m')) before its exponentials are added, shifted by 0 while the max is -inf (a
row of -inf so far adds nothing). layer_norm: the row shifted by its first element xr (so a
common offset such as 1e4 keeps the mean's precision); regs: the mean, then the sum of squared
deviations; stream: each chunk's mean and squared deviations merged into a lane's (n, mean,
M2) by Chan's formula, then lanes merged the same way. rms_norm: the sum of squares.
Merges of pairs take the lower lane's operand first, so every lane of a row computes the same
bits.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...engine import compiler
from .._common import PREAMBLE, KernelSource, kernel_name, vload_statement

ONLINE = ("softmax", "log_softmax", "logsumexp")
MERGEABLE = ("softmax", "log_softmax")  # their regs rows may take one merged reduction


class RowKernel(NamedTuple):
    """One kernel's configuration: `func` on rows of `dtype`; `mode` 'regs' (C slots a lane) or
    'stream' (C vectors a lane a chunk); T lanes a row, V elements a vector (1: scalar loads),
    `block` threads a block; `weight`/`bias`: whether the kernel takes them; `split`: a
    logsumexp row is shared by S blocks (T == block), the last of them to finish folds their
    partials; `hint`: the PTX cache qualifier of the row's 16-byte loads ("": plain loads);
    `merged`: a block's regs row takes its max and sum with one barrier; `occupancy`: blocks an
    SM that ptxas must leave registers for; `early`: a regs row's weight and bias are loaded
    with the row, not after its statistics."""
    func: str
    dtype: np.dtype
    mode: str
    T: int
    C: int
    V: int
    block: int
    weight: bool = False
    bias: bool = False
    split: bool = False
    hint: str = ""
    merged: bool = False
    occupancy: int = 1
    early: bool = False


class _Math:
    """Names of one real type's arithmetic in kernel source."""

    def __init__(self, dtype):
        self.R = dtype.name
        f = "f" if dtype == np.float32 else ""
        self.exp, self.log, self.rsqrt = (f"libdevice.{n}{f}" for n in ("exp", "log", "rsqrt"))

    def c(self, value) -> str:
        return f"{self.R}({value})"


def _max(a, b):
    """NaN-propagating max(a, b) as an expression (a stays when it is NaN or larger)."""
    return f"select(({a} > {b}) | ({a} != {a}), {a}, {b})"


def _indent(lines, n=4):
    return [" " * n + line for line in lines]


def kernel_name_of(k: RowKernel) -> str:
    layout = f"{k.mode}_t{k.T}{'c' if k.mode == 'regs' else 'u'}{k.C}v{k.V}"
    hint = "".join(ch for ch in k.hint if ch.isalnum())  # e.g. "L1noallocate"
    return kernel_name("rows", k.func, k.dtype, layout, f"b{k.block}" if k.T < k.block else "",
                       "w" if k.weight else "", "bias" if k.bias else "",
                       "split" if k.split else "", hint, "merged" if k.merged else "",
                       f"occ{k.occupancy}" if k.occupancy > 1 else "",
                       "early" if k.early else "")


class _Source:
    """The statements of one RowKernel (see the module docstring)."""

    def __init__(self, k: RowKernel):
        self.k = k
        self.m = _Math(k.dtype)
        self.names = 0

    # -- lanes: reductions over a row's T lanes -------------------------------------------------

    def _fresh(self, stem):
        self.names += 1
        return f"{stem}{self.names}"

    def allreduce(self, var, op, warp_only=False):
        """Statements leaving op ('max' or 'sum') of `var` over the row's lanes in every lane
        (`warp_only`: over the lanes of this lane's warp)."""
        k, R = self.k, self.m.R

        def fold(other):
            return [f"{var} = {_max(var, other)}"] if op == "max" else [f"{var} = {var} + {other}"]

        lines = []
        off = min(k.T, 32) // 2
        while off >= 1:
            lines += [f"o_ = cuda.shfl_xor_sync(0xffffffff, {var}, {off})"] + fold("o_")
            off //= 2
        if k.T > 32 and not warp_only:
            warps, sh = k.T // 32, self._fresh("sh_")
            lines += [f"{sh} = cuda.shared.array({warps}, {R})", "if tid % 32 == 0:",
                      f"    {sh}[tid // 32] = {var}", "cuda.syncthreads()", f"{var} = {sh}[0]",
                      f"for w_ in range(1, {warps}):"] + _indent(fold(f"{sh}[w_]"))
        return lines

    def allmerge(self, state, merge):
        """Statements leaving the merge of every lane's `state` (variable names) in every lane:
        `merge(a, b)` gives statements setting `state` from the tuples of names a and b, a the
        lower lanes' (so all lanes compute the same bits)."""
        k, R = self.k, self.m.R
        other = [f"o_{v}" for v in state]
        low = [f"a_{v}" for v in state]
        high = [f"b_{v}" for v in state]
        lines = []
        off = min(k.T, 32) // 2
        while off >= 1:
            lines += [f"{o} = cuda.shfl_xor_sync(0xffffffff, {v}, {off})"
                      for o, v in zip(other, state)]
            lines += [f"lo_ = (tid & {off}) == 0"]
            lines += [f"{a} = select(lo_, {v}, {o})" for a, v, o in zip(low, state, other)]
            lines += [f"{b} = select(lo_, {o}, {v})" for b, v, o in zip(high, state, other)]
            lines += merge(low, high)
            off //= 2
        if k.T > 32:
            warps = k.T // 32
            shared = [self._fresh(f"sh_{v}_") for v in state]
            lines += [f"{sh} = cuda.shared.array({warps}, {R})" for sh in shared]
            lines += ["if tid % 32 == 0:"] + [f"    {sh}[tid // 32] = {v}"
                                              for sh, v in zip(shared, state)]
            lines += ["cuda.syncthreads()"] + [f"{v} = {sh}[0]" for sh, v in zip(shared, state)]
            body = [f"{a} = {v}" for a, v in zip(low, state)]
            body += [f"{b} = {sh}[w_]" for b, sh in zip(high, shared)]
            lines += [f"for w_ in range(1, {warps}):"] + _indent(body + merge(low, high))
        return lines

    def finite_max(self, m):
        """The shift of an online softmax: the max `m`, or 0 where it is -inf (no element yet,
        or all -inf) or NaN, so that exp(x - shift) is never exp(-inf + inf)."""
        return f"select({m} > {self.m.c('-INF')}, {m}, {self.m.c(0)})"

    def online_merge(self, a, b):
        """(m, s) from (max, sum of exp(x - max)) pairs a and b."""
        (ma, sa), (mb, sb), M = a, b, self.m
        return [f"mn_ = {_max(ma, mb)}", f"sh_ = {self.finite_max('mn_')}",
                f"s = {sa} * {M.exp}({ma} - sh_) + {sb} * {M.exp}({mb} - sh_)", "m = mn_"]

    def chan_merge(self, a, b):
        """(n, mu, q) from (count, mean, sum of squared deviations) triples a and b."""
        (na, mua, qa), (nb, mub, qb), M = a, b, self.m
        return ["nn_ = " + f"{na} + {nb}",
                f"f_ = {nb} / nn_ if nn_ > {M.c(0)} else {M.c(0)}", f"d_ = {mub} - {mua}",
                f"mu = {mua} + d_ * f_", f"q = {qa} + {qb} + d_ * d_ * {na} * f_", "n = nn_"]

    # -- the kernel's parts ---------------------------------------------------------------------

    def signature(self):
        k = self.k
        ptr = f"{k.dtype.name}*"
        args, types = ["inp", "out"], [ptr, ptr]
        for flag, name in ((k.weight, "weight"), (k.bias, "bias")):
            if flag:
                args.append(name)
                types.append(ptr)
        if k.split:  # each block's partial (max, sum) and the rows' ticket counters
            args += ["partial_m", "partial_s", "counters"]
            types += [ptr, ptr, "uint32*"]
        args, types = args + ["M", "K", "sK", "eps"], types + ["int64", "int64", "int64", "float64"]
        return (args + ["S"], types + ["int64"]) if k.split else (args, types)

    def prologue(self):
        k = self.k
        lines = ["tid = cuda.threadIdx.x"]
        if k.T < k.block:
            lines += [f"lane = tid % {k.T}", f"row = int64(cuda.blockIdx.x) * {k.block // k.T} "
                      f"+ tid // {k.T}"]
        elif k.split:  # block b: part b % S of row b // S
            lines += ["lane = tid", "row = int64(cuda.blockIdx.x) // S",
                      "part = int64(cuda.blockIdx.x) % S"]
        else:
            lines += ["lane = tid", "row = int64(cuda.blockIdx.x)"]
        lines += ["valid = row < M", "src = row * sK", "dst = row * K"]
        if k.func in ("layer_norm", "rms_norm"):
            lines += [f"inv_k = {self.m.c(1)} / {self.m.c('K')}"]
        if k.func == "layer_norm":  # the shift: the row's first element
            lines += [f"xr = inp[src] if valid else {self.m.c(0)}"]
        return lines

    def load(self, names, pos):
        """Statement loading V elements at `pos` (an element offset of inp) into `names`."""
        if self.k.V == 1:
            return f"{names[0]} = inp[{pos}]"
        return vload_statement(names, "inp", pos, f"vload_hint{self.k.V}" if self.k.hint else None)

    def output_values(self, names, j):
        """(statements, expressions): the outputs of the input values `names` at row index j
        (their first), from the row's statistics."""
        k, M = self.k, self.m
        f = k.func
        if f == "softmax":
            return [], [f"{M.exp}({x} - m) * r" for x in names]
        if f == "log_softmax":
            return [], [f"({x} - m) - ls" for x in names]
        out = []
        for q, x in enumerate(names):
            y = f"(({x} - xr) - mu) * rstd" if f == "layer_norm" else f"{x} * rstd"
            if k.weight:
                y = f"{y} * w_{q}"
            if k.bias:
                y = f"{y} + b_{q}"
            out.append(y)
        return self.affine_loads("_", j, len(names)), out

    def affine_loads(self, tag, j, n):
        """Statements loading the n weight and bias values at row index j into w{tag}0.. and
        b{tag}0.. (those the kernel takes)."""
        k = self.k
        lines = []
        for flag, arr, stem in ((k.weight, "weight", "w"), (k.bias, "bias", "b")):
            if flag:
                vals = [f"{stem}{tag}{q}" for q in range(n)]
                lines.append(f"{vals[0]} = {arr}[{j}]" if n == 1 else
                             vload_statement(vals, arr, j))
        return lines

    def store(self, names, j):
        """Statements computing and storing the outputs of `names` at row index j."""
        pre, exprs = self.output_values(names, j)
        if len(exprs) == 1:
            return pre + [f"out[dst + {j}] = {exprs[0]}"]
        return pre + [f"vstore{len(exprs)}(out, dst + {j}, ({', '.join(exprs)}))"]

    def statistics(self):
        """Statements turning the reduced statistics into what output_values reads."""
        f, M = self.k.func, self.m
        if f == "softmax":
            return [f"r = {M.c(1)} / s"]
        if f == "log_softmax":
            return [f"ls = {M.log}(s) if m - m == {M.c(0)} else {M.c(0)}"]
        if f == "layer_norm":
            return [f"rstd = {M.rsqrt}(q * inv_k + {M.c('eps')})"]
        if f == "rms_norm":
            return [f"rstd = {M.rsqrt}(q * inv_k + {M.c('eps')})"]
        return []

    # -- regs mode ------------------------------------------------------------------------------

    def regs(self, src):
        k, M = self.k, self.m
        T, C, V = k.T, k.C, k.V
        slots = [[f"x{c}_{q}" for q in range(V)] for c in range(C)]
        flat = [x for s in slots for x in s]
        neutral = M.c("-INF") if k.func in ONLINE else M.c(0)
        lines = []
        for c in range(C):
            lines += [f"j{c} = int64(({c} * {T} + lane) * {V})", f"in{c} = valid and j{c} < K"]
        lines += [f"{x} = {neutral}" for x in flat]
        if k.early:  # the slots' weight and bias, in flight with the row's loads
            stems = [stem for flag, stem in ((k.weight, "w"), (k.bias, "b")) if flag]
            lines += [f"{stem}{c}_{q} = {M.c(0)}" for stem in stems
                      for c in range(C) for q in range(V)]
        for c, names in enumerate(slots):
            body = [self.load(names, f"src + j{c}")]
            if k.early:
                body += self.affine_loads(f"{c}_", f"j{c}", V)
            if k.func == "layer_norm":
                body += [f"{x} = {x} - xr" for x in names]
            lines += [f"if in{c}:"] + _indent(body)
        src.section("this lane's slots of the row (slots past the row: neutral)", lines)
        f = k.func
        if k.merged:
            self.merged_statistics(src, flat)
            exprs = {x: f"{x} * r" for x in flat} if f == "softmax" else None
        elif f in ONLINE:
            lines = ["m = x0_0"] + [f"m = {_max('m', x)}" for x in flat[1:]]
            src.section("the row's maximum", lines + self.allreduce("m", "max"))
            if f == "softmax":  # the exponentials replace the values: one exp an element
                lines = [f"{x} = {M.exp}({x} - m)" for x in flat]
                lines += [f"s = {' + '.join(flat)}"]
            else:
                lines = [f"s = {' + '.join(f'{M.exp}({x} - m)' for x in flat)}"]
            src.section("the sum of the exponentials", lines + self.allreduce("s", "sum"))
            if f == "softmax":
                src.section("the scale", self.statistics())
                exprs = {x: f"{x} * r" for x in flat}
            else:
                src.section("the log of the sum (0 where the max is not finite)",
                            self.statistics())
                exprs = None
        elif f == "layer_norm":
            lines = [f"s = {' + '.join(flat)}"] + self.allreduce("s", "sum") + ["mu = s * inv_k"]
            src.section("the mean of the shifted row", lines)
            lines = []
            for c, names in enumerate(slots):  # slots past the row stay 0
                lines += [f"if in{c}:"] + _indent([f"{x} = {x} - mu" for x in names])
            lines += [f"q = {' + '.join(f'{x} * {x}' for x in flat)}"]
            src.section("the deviations and their squares",
                        lines + self.allreduce("q", "sum") + self.statistics())
            exprs = {x: f"{x} * rstd" for x in flat}
        else:
            lines = [f"q = {' + '.join(f'{x} * {x}' for x in flat)}"]
            src.section("the mean square", lines + self.allreduce("q", "sum") + self.statistics())
            exprs = {x: f"{x} * rstd" for x in flat}
        lines = []
        for c, names in enumerate(slots):
            if exprs is None:
                body = self.store(names, f"j{c}")
            else:  # the values already hold what the output needs, less weight and bias
                if k.early:  # loaded with the row
                    pre, w, b = [], f"w{c}_", f"b{c}_"
                else:
                    pre, w, b = self.output_values(names, f"j{c}")[0], "w_", "b_"
                outs = [exprs[x] + (f" * {w}{q}" if k.weight else "") +
                        (f" + {b}{q}" if k.bias else "") for q, x in enumerate(names)]
                body = pre + ([f"out[dst + j{c}] = {outs[0]}"] if V == 1 else
                              [f"vstore{V}(out, dst + j{c}, ({', '.join(outs)}))"])
            lines += [f"if in{c}:"] + _indent(body)
        src.section("the row's results", lines)

    def merged_statistics(self, src, flat):
        """softmax and log_softmax of a row held by a block, with one barrier: each warp's max
        m_w (shuffles) and s_w = sum exp(x - sh_w) over its lanes (sh_w = m_w, or 0 while m_w
        is -inf), then every thread merges the warps' pairs from shared memory into the row's
        max m and s = sum s_w exp(sh_w - sh), sh the row's shift. softmax keeps exp(x - sh_w)
        in place of x and scales it by r = exp(sh_w - m) / s (NaN for a row of -inf, +inf or
        NaN, as exp(x - m) / s is)."""
        k, M, R = self.k, self.m, self.m.R
        warps = k.T // 32
        lines = ["m = x0_0"] + [f"m = {_max('m', x)}" for x in flat[1:]]
        lines += self.allreduce("m", "max", warp_only=True)
        lines += [f"shw = {self.finite_max('m')}"]
        if k.func == "softmax":
            lines += [f"{x} = {M.exp}({x} - shw)" for x in flat]
            lines += [f"s = {' + '.join(flat)}"]
        else:
            lines += [f"s = {' + '.join(f'{M.exp}({x} - shw)' for x in flat)}"]
        src.section("this warp's max and sum of exponentials",
                    lines + self.allreduce("s", "sum", warp_only=True))
        lines = [f"sh_m = cuda.shared.array({warps}, {R})",
                 f"sh_s = cuda.shared.array({warps}, {R})",
                 "if tid % 32 == 0:", "    sh_m[tid // 32] = m", "    sh_s[tid // 32] = s",
                 "cuda.syncthreads()", "m = sh_m[0]", f"for w_ in range(1, {warps}):",
                 f"    m = {_max('m', 'sh_m[w_]')}",
                 f"shr = {self.finite_max('m')}", f"s = {M.c(0)}",
                 f"for w_ in range({warps}):",
                 "    mw_ = sh_m[w_]",
                 f"    s = s + sh_s[w_] * {M.exp}({self.finite_max('mw_')} - shr)"]
        if k.func == "softmax":
            lines += [f"r = {M.exp}(shw - m) / s"]
        else:
            lines += self.statistics()
        src.section("the row's max and sum from its warps'", lines)

    # -- stream mode ----------------------------------------------------------------------------

    def fold(self, names):
        """Statements folding the input values `names` into this lane's running statistics."""
        f, M = self.k.func, self.m
        if f in ONLINE:
            lines = [f"cm = {names[0]}"] + [f"cm = {_max('cm', x)}" for x in names[1:]]
            lines += [f"mn_ = {_max('m', 'cm')}",
                      f"sh_ = {self.finite_max('mn_')}",
                      f"s = s * {M.exp}(m - sh_) + "
                      + " + ".join(f"{M.exp}({x} - sh_)" for x in names), "m = mn_"]
            return lines
        if f == "rms_norm":
            return ["q = q + " + " + ".join(f"{x} * {x}" for x in names)]
        lines = [f"{x} = {x} - xr" for x in names]
        lines += [f"cmu = ({' + '.join(names)}) * {M.c(1 / len(names))}",
                  f"cq = {' + '.join(f'({x} - cmu) * ({x} - cmu)' for x in names)}"]
        return lines + self.chan_merge(("n", "mu", "q"), (M.c(len(names)), "cmu", "cq"))

    def sweep(self, visit, per_vector):
        """Statements visiting every element of this lane's share of the row once: whole chunks
        of C vectors, then single vectors (the host takes vectors only for rows of whole
        vectors). `visit(names, j)` gives the statements for the loaded values `names` at row
        index j: once a vector (`per_vector`), else once for a chunk's values together."""
        k = self.k
        T, U, V = k.T, k.C, k.V
        first, bound = ("part * per + lane", "end") if k.split else ("lane", "nv")

        def chunk(us):
            names = [[f"x{u}_{q}" for q in range(V)] for u in us]
            lines = [self.load(n, f"src + (v + {u * T}) * {V}") for u, n in zip(us, names)]
            if not per_vector:
                return lines + visit([x for n in names for x in n], None)
            for u, n in zip(us, names):
                lines += visit(n, f"(v + {u * T}) * {V}")
            return lines

        lines = [f"v = {first}", f"while v + {(U - 1) * T} < {bound}:"] + _indent(chunk(range(U)))
        return lines + [f"    v += {U * T}", f"while v < {bound}:"] + _indent(chunk([0])) + \
            [f"    v += {T}"]

    def stream(self, src):
        k, M = self.k, self.m
        f = k.func
        start = {"online": ["m = " + M.c("-INF"), "s = " + M.c(0)],
                 "layer_norm": ["n = " + M.c(0), "mu = " + M.c(0), "q = " + M.c(0)],
                 "rms_norm": ["q = " + M.c(0)]}[f if f not in ONLINE else "online"]
        share = [f"nv = K // {k.V} if valid else int64(0)"]
        if k.split:  # part p of S: vectors [p per, (p + 1) per) of the row
            share += ["per = (nv + S - 1) // S", "end = (part + 1) * per", "if end > nv:",
                      "    end = nv"]
        src.section("this lane's share of the row", share + start)
        src.section("fold this lane's elements into its statistics",
                    self.sweep(lambda names, j: self.fold(names), per_vector=False))
        if f in ONLINE:
            lines = self.allmerge(("m", "s"), self.online_merge)
        elif f == "layer_norm":
            lines = self.allmerge(("n", "mu", "q"), self.chan_merge)
        else:
            lines = self.allreduce("q", "sum")
        src.section("the row's statistics from its lanes'", lines + self.statistics())
        result = f"(m + {M.log}(s)) if m - m == {M.c(0)} else m"
        if k.split:
            self.split_fold(src, result)
            return
        if f == "logsumexp":
            src.section("the result", ["if lane == 0 and valid:", f"    out[row] = {result}"])
            return
        src.section("read the row again and write its results",
                    self.sweep(self.store, per_vector=True))

    def split_fold(self, src, result):
        """A split row's epilogue (as the reduction family's split kernels): thread 0 stores the
        block's partial, fences, takes a ticket on the row's counter; the block that draws
        S - 1 fences again (the other partials happen before its loads), folds the S partials
        (read through L2, in a fixed order: the result does not depend on which block came
        last), stores the row's value and puts the counter back to 0 for the next launch."""
        M = self.m
        src.section("this block's partial, then its ticket", [
            "last_ = cuda.shared.array(1, int32)", "if tid == 0:",
            "    partial_m[row * S + part] = m", "    partial_s[row * S + part] = s",
            "    cuda.threadfence()  # release: the partial before the ticket",
            "    last = ticket(counters, row) == S - 1",
            "    if last:  # acquire: the other blocks' partials before the fold's loads",
            "        cuda.threadfence()", "    last_[0] = int32(last)", "cuda.syncthreads()"])
        fold = [f"m = {M.c('-INF')}", f"s = {M.c(0)}", "jf = int64(tid)", "while jf < S:"]
        fold += _indent(["pm_ = load_cg(partial_m, row * S + jf)",
                         "ps_ = load_cg(partial_s, row * S + jf)"]
                        + self.online_merge(("m", "s"), ("pm_", "ps_")) + [f"jf += {self.k.T}"])
        fold += self.allmerge(("m", "s"), self.online_merge)
        fold += ["if tid == 0:", f"    out[row] = {result}", "    counters[row] = uint32(0)"]
        src.section("the row's last block folds the S partials, stores, resets the counter",
                    ["if last_[0] != 0:"] + _indent(fold))

    def source(self):
        k = self.k
        args, types = self.signature()
        preamble = PREAMBLE
        if k.hint:
            preamble += f"vload_hint{k.V} = hinted_vload({k.V}, {k.hint!r})\n"
        src = KernelSource(kernel_name_of(k), args, preamble)
        src.section("this thread's row and lane", self.prologue())
        if k.mode == "regs":
            self.regs(src)
        else:
            self.stream(src)
        return src, types


def kernel_spec(k: RowKernel) -> compiler.KernelSpec:
    """The KernelSpec of `k`, bounded to its block size and occupancy: ptxas keeps the
    registers within what `occupancy` blocks of `block` threads an SM may use (with one block
    of 1024 threads, a larger allocation would fail every launch)."""
    src, types = _Source(k).source()
    return compiler.KernelSpec(src.name, src.text(), src.name, tuple(types),
                               (k.block, k.occupancy))
