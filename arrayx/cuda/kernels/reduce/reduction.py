"""What one reduction computes, as kernel-source fragments: `Reduction`.

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
"""

from __future__ import annotations

import numpy as np

from .._common import BOOL, element_type

ARG = ("argmax", "argmin")
NAN_ARG = ("nanargmax", "nanargmin")
# the NaN-ignoring reductions: each is its plain counterpart (the name without "nan") with NaN
# treated as absent
NAN = ("nansum", "nanprod", "nanmax", "nanmin", "nanmean") + NAN_ARG
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
    accumulator `b` into `a` (lists of variable names); `store(a)`: the result value written."""

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
            isnan = f"({x}.real != {x}.real or {x}.imag != {x}.imag)"
            values = [f"{x}.real", f"{x}.imag"]
        else:
            isnan = f"{x} != {x}"
            values = [x, "0"] if self.complex else [x]
        fills = ["1" if self.base == "prod" else "0", "0"]
        parts = [f"{t}({fill}) if {isnan} else {t}({v})" for v, fill in zip(values, fills)]
        if self.name == "nanmean":
            parts.append(f"int64(0) if {isnan} else int64(1)")
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

    def _combine_ignoring_nan(self, a: list, b: list, ordered: bool) -> list:
        """nanmax/nanmin/nanargmax/nanargmin's combine (the module docstring)."""
        n, t = self.base, self.parts[0]
        cmp = ">" if n in ("max", "argmax") else "<"
        if not self.arg:  # fmax/fmin: a stays when b is NaN or not better (a NaN a is replaced)
            return [f"{a[0]} = {a[0]} if ({a[0]} {cmp} {b[0]} or {b[0]} != {b[0]}) else {b[0]}"]
        (av, ai), (bv, bi) = a, b
        worst = f"{t}({'-' if n == 'argmax' else ''}INF)"  # the rank of a NaN
        lines = [f"_ka = {av} if {av} == {av} else {worst}",
                 f"_kb = {bv} if {bv} == {bv} else {worst}"]
        if ordered:  # ties keep a, unless a is still the identity (no index)
            take = f"_kb {cmp} _ka or {ai} == {INT64_MAX}"
        else:
            take = f"_kb {cmp} _ka or (_kb == _ka and {bi} < {ai})"
        # the value: the better rank, NaN only while both sides saw only NaN
        return lines + [f"if {take}:", f"    {ai} = {bi}",
                        f"if _kb {cmp} _ka or {av} != {av}:", f"    {av} = {bv}"]

    def store(self, a: list) -> str:
        if self.arg:
            if self.nan:  # -1: the slice was all NaN
                return f"{a[1]} if {a[0]} == {a[0]} else int64(-1)"
            return a[1]
        dt = self.out_dt
        vals = list(a)
        if self.name == "mean":
            vals = [f"{v} / {self.parts[0]}(count)" for v in vals]
        elif self.name == "nanmean":
            vals = [f"{v} / {self.parts[0]}({a[-1]})" for v in vals[:-1]]
        if self.complex:
            return f"{dt.name}(complex({vals[0]}, {vals[1]}))"
        return f"{element_type(dt)}({vals[0]})"
