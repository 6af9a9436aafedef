"""What one reduction computes, as kernel-source fragments: `Reduction` (the moments:
`MomentsReduction`).

Accumulation (the result dtype is the namespace's choice): floats in their dtype, complex as two
real parts (shuffled separately), integers in 64 bits (wrapping, and truncated to a narrower
requested dtype at the store: the same result mod 2^k), all/any as int32 0/1 of the nonzero test
(complex: either part; NaN is nonzero), max/min of small integers widened to 64 bits for the
shuffles. A floating sum starts from -0.0 (the CPU backend's rule). max/min propagate NaN;
argmax/argmin carry (value, index) pairs and take the lower index on ties, and the first NaN.
mean divides by the count in the final store.

The NaN-ignoring reductions (floating inputs; the namespace sends integers to the plain ones):
nansum/nanprod load a NaN as 0 / 1 (complex: either part NaN). nanmax/nanmin start from NaN and
combine as fmax/fmin (a NaN operand loses), so a slice stores NaN exactly when all of it is NaN,
at the cost of max's own compare and select. nanmean carries (sum, count of non-NaN elements)
and divides in the store (0 / 0: NaN). nanargmax/nanargmin rank a NaN as -inf / +inf (NumPy's
rule, so its index wins a tie with a real -inf below it) and carry the best value seen, which
stays NaN only while every element was NaN: such a slice stores index -1 (the namespace raises).

The moments (var, std, and nanvar, nanstd skipping NaN) run in one pass, in two forms. While a
lane streams its elements it keeps *running* sums shifted by the first element it saw, c: (n, c,
sum of d, sum of d * d), d = x - c, in the result's type (float32 for float32 and complex64): no
division an element, and the shift keeps the sums small when the mean is large (NumPy's two-pass
algorithm removes the mean first for the same reason). The sum of squares is compensated
(Kahan): its terms are all positive, and when the data's spacing is coarse beside its spread (a
mean of 1e4, a standard deviation of 1, in float32) their rounding errors do not cancel but add
up to about one float32 ulp of the result. Each lane then turns them into the *combined* form
(n, c, u, M2), the mean being c + u and M2 the sum of squared deviations, in float64 for every
dtype, and lanes, warps, blocks and split partials merge by Chan's formula
(`MomentsReduction.combine`): a float32 lane's rounding stays within its own few elements, and
the merges add none at float32's scale; the mean stays split so that the merges' differences of
means keep their digits when the mean is large beside the spread (float64 data of mean 1e8 and
spread 1e-3). Complex values carry two parts of c and u and one M2 (|x - mean|^2, so var =
var(real) + var(imag), real). The store divides M2 by n - correction (`correction` is the
kernel's scalar argument, where mean has its count), NaN when that is not positive or the slice
is empty (an all-NaN slice of nanvar), and std takes the square root in float64 before rounding.
Any infinity in a slice gives NaN (inf - inf), as NumPy's two passes do; so does a lane's sum of
squares past its type's range (NumPy: inf).
"""

from __future__ import annotations

import numpy as np

from .._common import BOOL, element_type

ARG = ("argmax", "argmin")
NAN_ARG = ("nanargmax", "nanargmin")
# the NaN-ignoring reductions: each is its plain counterpart (the name without "nan") with NaN
# treated as absent
NAN = ("nansum", "nanprod", "nanmax", "nanmin", "nanmean") + NAN_ARG
# the moments: the variance and its square root, each also NaN-ignoring
MOMENTS = ("var", "std", "nanvar", "nanstd")
INT64_MAX = 2**63 - 1  # an arg accumulator's index before it has seen an element
_COMPLEX64 = np.dtype("complex64")


def register_type(dt: np.dtype) -> str:
    """Register type of the values of `dt` while reducing (complex: the type of one part)."""
    if dt.kind in "bi":
        return "int64"
    if dt.kind == "u":
        return "uint64"
    if dt.kind == "f":
        return dt.name
    return "float32" if dt == _COMPLEX64 else "float64"


class Reduction:
    """One reduction (`name` of `in_dt` into `out_dt`) as source fragments over accumulator
    *parts*.

    `parts`: register types of the scalars one accumulator is made of (a split reduction's
    partials are stored as these); `identity()`: their start values; `load(x, idx)`: the parts
    of stored element `x` (flat reduced index `idx`); `combine(a, b)`: statements folding
    accumulator `b` into `a` (lists of variable names); `store(a)`: the result value written.

    A lane folds its own elements into a *running* accumulator (`running_parts`,
    `running_identity()`, `accumulate(r, x, idx)`), then `finish(r, a)` turns it into an
    accumulator of `parts`. Only the moments (`MomentsReduction`, which constructing a
    `Reduction` of a name in MOMENTS gives) have a running form of their own (`streams`); for
    the others the running accumulator is the accumulator and `finish` does nothing.
    `scalar`: the name of the kernel's float64 argument the store reads."""

    moments = streams = False
    scalar = "count"

    def __new__(cls, name: str, in_dt: np.dtype, out_dt: np.dtype):
        # so that every place that builds a reduction (the planner, precompile, the tests) gets
        # the moments' class for a moment
        if cls is Reduction and name in MOMENTS:
            cls = MomentsReduction
        return super().__new__(cls)

    def __init__(self, name: str, in_dt: np.dtype, out_dt: np.dtype):
        self.name, self.in_dt, self.out_dt = name, in_dt, out_dt
        self.nan = name in NAN
        base = name[3:] if self.nan else name  # the plain counterpart
        self.base = base
        self.arg = base in ARG
        if self.arg:
            self.parts = [register_type(in_dt), "int64"]
        elif base in ("all", "any"):
            self.parts = ["int32"]
        elif base in ("max", "min"):
            self.parts = [register_type(in_dt)]
        else:  # sum, prod, mean: accumulate in the result dtype
            self.parts = [register_type(out_dt)] * (2 if out_dt.kind == "c" else 1)
        self.complex = base in ("sum", "prod", "mean") and out_dt.kind == "c"
        if name == "nanmean":  # and the count of the non-NaN elements
            self.parts = self.parts + ["int64"]
        # module constants the kernel source needs beyond the family's preamble
        self.constants = "NAN = float('nan')\n" if name in ("nanmax", "nanmin") + NAN_ARG else ""
        self.running_parts = self.parts

    def key(self) -> tuple:
        return (self.name, self.in_dt, self.out_dt)

    def identity(self) -> list:
        n = self.base
        if self.nan and n in ("max", "min", "argmax", "argmin"):  # nothing seen: NaN, no index
            return [f"{self.parts[0]}(NAN)"] + ([f"int64({INT64_MAX})"] if self.arg else [])
        if self.name == "nanmean":  # mean's start, and a count of 0
            return [f"{t}(-0.0)" for t in self.parts[:-1]] + ["int64(0)"]
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

    def running_identity(self) -> list:
        return self.identity()

    def accumulate(self, r: list, x: str, idx: str, ordered: bool = False) -> list:
        """Statements folding element `x` (flat reduced index `idx`; `ordered` as for
        `combine`) into the running accumulator `r`."""
        e = [f"e_{k}" for k in range(len(self.parts))]
        return [f"{ek} = {v}" for ek, v in zip(e, self.load(x, idx))] + self.combine(r, e, ordered)

    def finish(self, r: list, a: list) -> list:
        """Statements turning running accumulator `r` into accumulator `a` (the same names
        unless the reduction `streams`)."""
        return []

    def load(self, x: str, idx: str) -> list:
        t = self.parts[0]
        if self.name in ("nansum", "nanprod", "nanmean"):
            return self._load_without_nan(x)
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

    def _load_without_nan(self, x: str) -> list:
        """nansum/nanprod/nanmean: the parts of element `x`, a NaN as the identity's value (0 or
        1; +0.0, as NumPy's replacement), and for nanmean the element's count (1, or 0 for NaN)."""
        t = self.parts[0]
        if self.in_dt.kind == "c":
            isnan = f"(({x}.real != {x}.real) | ({x}.imag != {x}.imag))"
            values = [f"{x}.real", f"{x}.imag"]
        else:
            isnan = f"{x} != {x}"
            values = [x, "0"] if self.complex else [x]
        fills = ["1" if self.base == "prod" else "0", "0"]
        parts = [f"select({isnan}, {t}({fill}), {t}({v}))" for v, fill in zip(values, fills)]
        if self.name == "nanmean":
            parts.append(f"select({isnan}, int64(0), int64(1))")
        return parts

    def combine(self, a: list, b: list, ordered: bool = False) -> list:
        """`ordered`: b's index is known to be above a's (a lane's own elements in its loop
        order), so argmax/argmin skip the index comparisons of ties and NaNs."""
        n, t = self.base, self.parts[0]
        if self.nan and n in ("max", "min", "argmax", "argmin"):
            return self._combine_ignoring_nan(a, b, ordered)
        if n in ("sum", "mean"):  # (nanmean: its count too)
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
                return [f"{a[0]} = select(({a[0]} {cmp} {b[0]}) | ({a[0]} != {a[0]}), {a[0]}, "
                        f"{b[0]})"]
            return [f"{a[0]} = select({a[0]} {cmp}= {b[0]}, {a[0]}, {b[0]})"]
        (av, ai), (bv, bi) = a, b
        if ordered:  # ties keep a (unless a is still the identity, with no index); the first
            # NaN wins: b only replaces a value that is not NaN
            take = f"{bv} {cmp} {av} or {ai} == {INT64_MAX}" + \
                (f" or ({bv} != {bv} and {av} == {av})" if floating else "")
        else:
            take = f"{bv} {cmp} {av} or ({bv} == {av} and {bi} < {ai})"
            if floating:  # the first NaN wins
                take += f" or ({bv} != {bv} and ({av} == {av} or {bi} < {ai}))"
        # a branch, not selects: with selects NVVM makes other code (not measured on a GPU)
        return [f"if {take}:", f"    {av} = {bv}", f"    {ai} = {bi}"]

    def _combine_ignoring_nan(self, a: list, b: list, ordered: bool) -> list:
        """nanmax/nanmin/nanargmax/nanargmin's combine (the module docstring)."""
        n, t = self.base, self.parts[0]
        cmp = ">" if n in ("max", "argmax") else "<"
        if not self.arg:  # fmax/fmin: a stays when b is NaN or not better (a NaN a is replaced)
            return [f"{a[0]} = select(({a[0]} {cmp} {b[0]}) | ({b[0]} != {b[0]}), {a[0]}, "
                    f"{b[0]})"]
        (av, ai), (bv, bi) = a, b
        worst = f"{t}({'-' if n == 'argmax' else ''}INF)"  # the rank of a NaN
        lines = [f"_ka = select({av} == {av}, {av}, {worst})",
                 f"_kb = select({bv} == {bv}, {bv}, {worst})"]
        if ordered:  # ties keep a, unless a is still the identity (no index)
            take = f"_kb {cmp} _ka or {ai} == {INT64_MAX}"
        else:
            take = f"_kb {cmp} _ka or (_kb == _ka and {bi} < {ai})"
        # the value: the better rank, NaN only while both sides saw only NaN (branches, as in
        # combine's arg reductions)
        return lines + [f"if {take}:", f"    {ai} = {bi}",
                        f"if _kb {cmp} _ka or {av} != {av}:", f"    {av} = {bv}"]

    def store(self, a: list) -> str:
        if self.arg:
            if self.nan:  # -1: the slice was all NaN
                return f"select({a[0]} == {a[0]}, {a[1]}, int64(-1))"
            return a[1]
        dt = self.out_dt
        vals = list(a)
        if self.name in ("mean", "nanmean"):
            n = f"{self.parts[0]}({'count' if self.name == 'mean' else a[-1]})"
            if self.complex:  # NumPy's division by the count as a complex number: an infinite
                zero = f"{self.parts[0]}(0)"  # part makes the other NaN (its product with 0)
                vals = [f"({vals[0]} + {vals[1]} * {zero}) / {n}",
                        f"({vals[1]} - {vals[0]} * {zero}) / {n}"]
            else:
                vals = [f"{vals[0]} / {n}"]
        if self.complex:
            return f"{dt.name}(complex({vals[0]}, {vals[1]}))"
        return f"{element_type(dt)}({vals[0]})"


class MomentsReduction(Reduction):
    """var, std, nanvar, nanstd (the module docstring): `parts` the combined form (n, a shift
    c and the mean less c, two parts each for complex input, M2), `running_parts` the running
    sums (n, the shift c, the sums of d, the sum of squares and its compensation)."""

    moments = streams = True
    scalar = "correction"

    def __init__(self, name: str, in_dt: np.dtype, out_dt: np.dtype):
        self.name, self.in_dt, self.out_dt = name, in_dt, out_dt
        self.nan = name in ("nanvar", "nanstd")
        self.base = name[3:] if self.nan else name
        self.arg = self.complex = False
        pairs = 2 if in_dt.kind == "c" else 1
        self.parts = ["float64"] * (2 + 2 * pairs)
        self.running_parts = ["int64"] + [register_type(out_dt)] * (2 * pairs + 2)
        self.constants = "NAN = float('nan')\n"

    def identity(self) -> list:
        return ["float64(0)"] * len(self.parts)

    def running_identity(self) -> list:
        return [f"{t}(0)" for t in self.running_parts]

    def accumulate(self, r: list, x: str, idx: str, ordered: bool = False) -> list:
        """Element x into running (n, c..., sums of d..., sum of squares q, its compensation
        k): the first element a lane sees (n == 0) becomes its shift c; q + k is Kahan's
        sum. The temporaries are named apart from the merge's, so that they keep the running
        type."""
        t = self.running_parts[1]
        n, rest = r[0], r[1:]
        if self.in_dt.kind == "c":
            values = [f"{t}({x}.real)", f"{t}({x}.imag)"]
        else:
            values = [f"{t}({x})"]
        pairs = len(values)
        shifts, sums = rest[:pairs], rest[pairs:2 * pairs]
        squares, comp = rest[-2], rest[-1]
        v = [f"_v{j}" for j in range(pairs)]
        dx = [f"_dx{j}" for j in range(pairs)]
        body = [f"{c} = {vj} if {n} == 0 else {c}" for c, vj in zip(shifts, v)]
        body += [f"{n} = {n} + 1"]
        body += [f"{d} = {vj} - {c}" for d, vj, c in zip(dx, v, shifts)]
        body += [f"{s} = {s} + {d}" for s, d in zip(sums, dx)]
        body += ["_y = " + " + ".join(f"{d} * {d}" for d in dx) + f" - {comp}",
                 f"_q = {squares} + _y", f"{comp} = (_q - {squares}) - _y", f"{squares} = _q"]
        lines = [f"{vj} = {value}" for vj, value in zip(v, values)]
        if not self.nan:
            return lines + body
        present = " and ".join(f"{vj} == {vj}" for vj in v)
        return lines + [f"if {present}:"] + ["    " + line for line in body]

    def finish(self, r: list, a: list) -> list:
        """Running (n, c..., s..., q, k) into combined (n, c..., s / n..., q - k - |s|^2 / n) in
        float64; rounding may leave M2 a little below 0, which is put back at 0."""
        pairs = (len(a) - 2) // 2
        n, shifts, sums = r[0], r[1:1 + pairs], r[1 + pairs:1 + 2 * pairs]
        lines = [f"{a[0]} = float64({n})",
                 f"_inv = float64(1) / {a[0]} if {n} > 0 else float64(0)"]
        lines += [f"{ac} = float64({c})" for ac, c in zip(a[1:1 + pairs], shifts)]
        lines += [f"{au} = float64({sm}) * _inv"
                  for au, sm in zip(a[1 + pairs:1 + 2 * pairs], sums)]
        squared = " + ".join(f"float64({sm}) * float64({sm})" for sm in sums)
        lines += [f"_m2 = (float64({r[-2]}) - float64({r[-1]})) - ({squared}) * _inv",
                  f"{a[-1]} = float64(0) if _m2 < 0 else _m2"]
        return lines

    def combine(self, a: list, b: list, ordered: bool = False) -> list:
        """Chan's merge of (n, c..., u..., M2) b into a, the mean being c + u: the difference
        of the means, delta = (cb - ca) + (ub - ua), moves ua by delta * nb / n and adds
        delta^2 * na * nb / n to M2. The shifts are data values and the u small, so delta keeps
        its digits however large the mean (a difference of two rounded means would not); an
        empty a takes b's shift, and an empty b changes nothing (not even through an overflowing
        delta^2 times its count of 0)."""
        pairs = (len(a) - 2) // 2
        ca, ua, cb, ub = a[1:1 + pairs], a[1 + pairs:-1], b[1:1 + pairs], b[1 + pairs:-1]
        dm = [f"_dm{j}" for j in range(pairs)]
        lines = [f"{c} = {d} if {a[0]} == 0 else {c}" for c, d in zip(ca, cb)]
        lines += [f"_n = {a[0]} + {b[0]}",
                  f"_r = {b[0]} / _n if _n > 0 else float64(0)"]
        lines += [f"{d} = ({c2} - {c1}) + ({u2} - {u1}) if {b[0]} > 0 else float64(0)"
                  for d, c1, u1, c2, u2 in zip(dm, ca, ua, cb, ub)]
        lines += [f"{u} = {u} + {d} * _r" for d, u in zip(dm, ua)]
        squared = " + ".join(f"{d} * {d}" for d in dm)
        lines += [f"{a[-1]} = {a[-1]} + {b[-1]} + ({squared}) * {a[0]} * _r",
                  f"{a[0]} = _n"]
        return lines

    def store(self, a: list) -> str:
        """M2 / (n - correction), its square root for std; NaN where n - correction <= 0 or
        the slice had no element (a negative correction: still no mean)."""
        t = element_type(self.out_dt)
        value = f"{a[-1]} / ({a[0]} - correction)"
        if self.base == "std":
            value = f"libdevice.sqrt({value})"
        return f"{t}({value}) if {a[0]} - correction > 0 and {a[0]} > 0 else {t}(NAN)"
