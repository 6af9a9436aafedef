"""Run arrayx's reduction kernels on numba's CUDA simulator (no GPU): the plans of
arrayx/cuda/kernels/reduce/ with their generated source, blocks in a random order, warp
shuffles, raw pointers, vector loads (cuda_sim.py), the tickets and the L2 loads emulated. The
split kernels' folds (the last block of a group folds the others' partials and resets its
counter) are checked against NumPy, including that the counters are back at 0 after every
launch.

    python tests/cuda/reduce_sim.py [all|sum|arg|rows|col|general|nan|moments]

(`general` includes layouts past the last dim bucket: 7 kept or 7 reduced dims; `nan`: the
NaN-ignoring reductions, with all-NaN slices; `moments`: var, std, nanvar and nanstd on every
layout, with large means, NaN and infinities, complex and integer input, corrections past the
count, and no reduced axis.)

Prints one line a case and exits 1 when any is wrong. A separate process because the simulator
replaces numba.cuda for the whole process (tests/cuda/test_simulated_kernels.py runs it).
"""

import math
import random
import sys
import threading
import time
import warnings

import numpy as np
from cuda_sim import CHOICES, NUMPY_TYPES, Ptr, launch, vload  # first: numba.cuda -> simulator
from numba import cuda
from numpy.lib.stride_tricks import as_strided

from arrayx.cuda.kernels.reduce import host, plans, tuning
from arrayx.cuda.kernels.reduce.reduction import ARG, Reduction

_tickets_lock = threading.Lock()


def _ticket(counters, i):
    with _tickets_lock:
        old = counters[i]
        counters[i] = old + np.uint32(1)
    return np.uint32(old)


class _Libdevice:
    """The libdevice functions the reduction kernels call (std's square root)."""
    sqrt = staticmethod(math.sqrt)


def _namespace(spec):
    ns = {"cuda": cuda, **NUMPY_TYPES, **CHOICES, "hinted_vload": lambda n, hint: vload(n),
          "libdevice": _Libdevice}
    exec(spec.source, ns)
    for n in (1, 2, 4, 8, 16):
        ns[f"vload{n}"] = vload(n)
    ns["ticket"] = _ticket
    ns["load_cg"] = lambda p, i: p[i]
    return ns


# so that inputs small enough to simulate split
tuning.UNROLL, tuning.ARG_UNROLL, tuning.COLUMN_UNROLL = 2, 1, 2
tuning.MOMENTS_UNROLL = 2
_counters = np.zeros(tuning.COUNTERS, np.uint32)


def reduce_view(name, base, offset, shape, strides, axes, out_dt, sms, rng, correction=0.0):
    """Reduce the view (offset, shape, strides in elements) of the 1-D `base` over `axes` with
    the plan and kernel arrayx would launch on a GPU of `sms` SMs: (result, plan)."""
    isz = base.dtype.itemsize
    plan = plans.plan(name, base.dtype, np.dtype(out_dt), shape, strides, axes,
                      name not in ARG, (offset * isz) % 16, sms, correction)
    spec = plan.build()
    fn = _namespace(spec)[spec.entry]
    out_shape, size, _ = host.out_geometry(shape, axes, False)
    out = np.zeros(max(size, 1), dtype=np.uint8 if out_dt == "bool" else out_dt)
    args = [Ptr(base, offset + plan.shift // isz), Ptr(out, 0)]
    if plan.parts is not None:
        for part in Reduction(name, base.dtype, np.dtype(out_dt)).parts:
            garbage = np.full(plan.partial_bytes // np.dtype(part).itemsize, 77, dtype=part)
            args.append(Ptr(garbage, 0))
        args.append(Ptr(_counters, 0))
    order = list(range(plan.grid))
    rng.shuffle(order)  # any block may be the last of its group
    launch(fn, plan.grid, tuning.BLOCK, args + list(plan.tail), order)
    assert not _counters.any(), "a split kernel left its counters non-zero"
    return out[:size].reshape(out_shape), plan


def _view(base, offset, shape, strides):
    return as_strided(base[offset:], shape, [s * base.itemsize for s in strides])


def _c_strides(shape):
    """C-order strides (in elements) of `shape`."""
    return tuple(int(np.prod(shape[j + 1:])) for j in range(len(shape)))


# every case; tests/cuda/test_simulated_kernels.py reads this list (without importing the module)
CASES = ("sum", "arg", "rows", "col", "general", "nan", "moments")


def main(case):
    if case != "all" and case not in CASES:
        raise SystemExit(f"unknown case {case!r}: one of all, {', '.join(CASES)}")
    rng = np.random.default_rng(1)
    order_rng = random.Random(3)
    bad = 0

    def check(label, name, base, offset, shape, strides, axes, out_dt, ref, exact=True,
              split=True, correction=0.0, rtol=1e-5, atol=None):
        nonlocal bad
        t = time.time()
        got, plan = reduce_view(name, base, offset, shape, strides, axes, out_dt, 2, order_rng,
                                correction)
        ok = np.array_equal(got, ref, equal_nan=got.dtype.kind == "f") if exact else \
            np.allclose(got, ref, rtol=rtol, atol=rtol if atol is None else atol, equal_nan=True)
        if split and plan.parts is None:
            ok = False
            label += " (expected a split plan)"
        print(f"{'ok ' if ok else 'BAD'} {label}: {plan.key[0]} {plan.key[2]} "
              f"split={plan.parts is not None} grid={plan.grid} ({time.time() - t:.1f} s)")
        if not ok:
            bad += 1
            print("   got", np.asarray(got).ravel()[:8], "\n   ref", np.asarray(ref).ravel()[:8])

    f32, f64 = np.float32, np.float64
    if case in ("all", "sum"):  # offset 1: an unaligned head before the vectors
        x = rng.standard_normal(20003).astype(f32)
        check("sum f32 contig", "sum", x, 1, (20000,), (1,), (0,), "float32",
              _view(x, 1, (20000,), (1,)).astype(f64).sum(), exact=False)
        x64 = x.astype(f64)
        check("mean f64 contig", "mean", x64, 3, (20000,), (1,), (0,), "float64",
              _view(x64, 3, (20000,), (1,)).mean(), exact=False)
    if case in ("all", "arg"):
        x = rng.integers(0, 50, 20000).astype(f32)
        x[[5000, 15000]] = 100.0  # a tie across blocks: the first index wins
        check("argmax ties", "argmax", x, 0, (20000,), (1,), (0,), "int64", np.argmax(x))
        y = x.copy()
        y[[12000, 17000]] = np.nan  # the first NaN wins
        check("argmax NaN", "argmax", y, 0, (20000,), (1,), (0,), "int64", np.argmax(y))
        z = rng.integers(-5, 5, 20000).astype(np.int32)
        z[[300, 19000]] = -9
        check("argmin int32 ties", "argmin", z, 0, (20000,), (1,), (0,), "int64", np.argmin(z))
    if case in ("all", "rows"):
        x = rng.standard_normal(18000).astype(f32)
        check("row sums", "sum", x, 0, (2, 9000), (9000, 1), (1,), "float32",
              _view(x, 0, (2, 9000), (9000, 1)).astype(f64).sum(1), exact=False)
        rev = _view(x, 8999, (2, 9000), (9000, -1))
        check("row max reversed", "max", x, 8999, (2, 9000), (9000, -1), (1,), "float32",
              rev.max(1))
        check("row argmax reversed", "argmax", x, 8999, (2, 9000), (9000, -1), (1,), "int64",
              np.argmax(rev, 1))
    if case in ("all", "col"):
        x = rng.standard_normal(600 * 70).astype(f32)
        check("column sums, scalar", "sum", x, 0, (600, 70), (70, 1), (0,), "float32",
              _view(x, 0, (600, 70), (70, 1)).astype(f64).sum(0), exact=False)
        x2 = rng.standard_normal(600 * 72).astype(f32)
        check("column sums, vectors", "sum", x2, 0, (600, 72), (72, 1), (0,), "float32",
              _view(x2, 0, (600, 72), (72, 1)).astype(f64).sum(0), exact=False)
        xn = rng.integers(0, 3, 600 * 72).astype(f32)
        xn[rng.integers(0, xn.size, 30)] = np.nan
        check("column argmax with NaN", "argmax", xn, 0, (600, 72), (72, 1), (0,), "int64",
              np.argmax(_view(xn, 0, (600, 72), (72, 1)), 0))
        xc = (rng.standard_normal(600 * 72) + 1j * rng.standard_normal(600 * 72)).astype(
            np.complex64)
        check("column sums complex64", "sum", xc, 0, (600, 72), (72, 1), (0,), "complex64",
              _view(xc, 0, (600, 72), (72, 1)).astype(np.complex128).sum(0), exact=False)
        xc[[5, 80]] = [complex(-np.inf, 0), complex(0, np.inf)]  # NumPy's mean: the other
        check("column means complex64 with infinite parts", "mean", xc, 0, (600, 72), (72, 1),
              (0,), "complex64", _view(xc, 0, (600, 72), (72, 1)).mean(0), exact=False)
    if case in ("all", "general"):
        x = rng.standard_normal(12000).astype(f32)
        check("general", "sum", x, 0, (4, 300, 10), (10, 40, 1), (1, 2), "float32",
              _view(x, 0, (4, 300, 10), (10, 40, 1)).astype(f64).sum((1, 2)), exact=False)
        b = (rng.random(30000) < 0.001).astype(np.uint8)
        check("any bool (one block)", "any", b, 0, (30000,), (1,), (0,), "bool", b.any(),
              split=False)
        # past the last dim bucket (6) the kernels are compiled for the exact dim count: views
        # of every other element along 7 dims, which do not collapse
        shape7 = (2, 2, 2, 2, 4, 4, 8)
        strides7 = _c_strides([n + 1 for n in shape7])
        x = rng.standard_normal(int(np.prod([n + 1 for n in shape7]))).astype(f32)
        check("7 reduced dims, split", "sum", x, 0, shape7, strides7, tuple(range(7)), "float32",
              _view(x, 0, shape7, strides7).astype(f64).sum(), exact=False)
        kept7 = (2,) * 7 + (20,)
        strides7 = _c_strides([3] * 7 + [20])
        x = rng.standard_normal(3**7 * 20).astype(f32)
        check("7 kept dims", "max", x, 0, kept7, strides7, (7,), "float32",
              _view(x, 0, kept7, strides7).max(7), split=False)
    if case in ("all", "nan"):
        x = rng.standard_normal(20003).astype(f32)
        x[rng.random(x.size) < 0.3] = np.nan
        check("nansum f32 contig", "nansum", x, 1, (20000,), (1,), (0,), "float32",
              np.nansum(x[1:20001].astype(f64)), exact=False)
        x64 = x.astype(f64)
        check("nanmean f64 contig", "nanmean", x64, 3, (20000,), (1,), (0,), "float64",
              np.nanmean(x64[3:20003]), exact=False)
        rows = x[:18000].copy()
        rows[9000:] = np.nan  # the second row (reversed: the first) all NaN
        rev = _view(rows, 8999, (2, 9000), (9000, -1))
        check("row nanmax reversed, one row all NaN", "nanmax", rows, 8999, (2, 9000),
              (9000, -1), (1,), "float32", np.fmax.reduce(rev, axis=1))
        check("row nanmin, one row all NaN", "nanmin", rows, 0, (2, 9000), (9000, 1), (1,),
              "float32", np.fmin.reduce(rows.reshape(2, 9000), axis=1))
        y = rng.integers(0, 50, 20000).astype(f32)
        y[rng.random(y.size) < 0.3] = np.nan
        y[[5000, 15000]] = 100.0  # a tie across blocks: the first index wins
        y[3] = np.nan
        check("nanargmax ties", "nanargmax", y, 0, (20000,), (1,), (0,), "int64",
              _nan_arg("nanargmax", y, 0))
        y[:] = np.nan
        y[[17000, 19000]] = -np.inf  # a NaN ranks as -inf: the first NaN's index wins the tie
        check("nanargmax of NaN and -inf", "nanargmax", y, 0, (20000,), (1,), (0,), "int64",
              _nan_arg("nanargmax", y, 0))
        c = rng.integers(-3, 3, 600 * 72).astype(f32)
        c[rng.integers(0, c.size, 3000)] = np.nan
        c.reshape(600, 72)[:, 5] = np.nan  # an all-NaN column: index -1, mean NaN
        cv = _view(c, 0, (600, 72), (72, 1))
        check("column nanargmin with an all-NaN column", "nanargmin", c, 0, (600, 72), (72, 1),
              (0,), "int64", _nan_arg("nanargmin", cv, 0))
        check("column nanmean with an all-NaN column", "nanmean", c, 0, (600, 72), (72, 1),
              (0,), "float32", np.nanmean(cv.astype(f64), axis=0), exact=False)
        g = (rng.standard_normal(12000) / 20 + 1).astype(f32)
        g[rng.random(g.size) < 0.2] = np.nan
        check("general nanprod", "nanprod", g, 0, (4, 300, 10), (10, 40, 1), (1, 2), "float32",
              np.nanprod(_view(g, 0, (4, 300, 10), (10, 40, 1)).astype(f64), axis=(1, 2)),
              exact=False)
    if case in ("all", "moments"):
        _moments_cases(rng, check)
    print("BAD", bad)
    return 1 if bad else 0


def _moments(name, v, axis, correction):
    """NumPy's var/std (nanvar/nanstd) in float64, NaN where the count less the correction is
    not positive or the slice is empty (arrayx's rule)."""
    v = v.astype(np.complex128 if v.dtype.kind == "c" else np.float64)
    count = (~np.isnan(v)).sum(axis) if name.startswith("nan") else \
        np.full(np.var(v, axis=axis).shape, math.prod(np.shape(v)[i] for i in np.atleast_1d(axis)))
    fn = getattr(np, name)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = fn(v, axis=axis, ddof=correction) if count.size else fn(v, axis=axis)
    return np.where((count - correction > 0) & (count > 0), ref, np.nan)


def _moments_cases(rng, check):
    f32 = np.float32
    # a large mean: the shifted running sums keep float32 lanes accurate
    x = (1e4 + rng.standard_normal(20003)).astype(f32)
    v = x[1:20001]
    check("var f32 contig, mean 1e4", "var", x, 1, (20000,), (1,), (0,), "float32",
          _moments("var", v, 0, 0), exact=False)
    # float64 of mean 1e8, spread 1e-3: the merges' differences of means keep their digits (the
    # reference: NumPy on the data less its first element, an exact shift)
    x64 = (1e8 + rng.standard_normal(20003) * 1e-3)
    v64 = x64[3:20003]
    check("std f64 contig, mean 1e8, correction 1", "std", x64, 3, (20000,), (1,), (0,),
          "float64", _moments("std", v64 - v64[0], 0, 1), exact=False, correction=1.0,
          rtol=1e-12, atol=0)
    huge = 1e200 + rng.standard_normal(50 * 40) * 1e140  # lanes with no element merge too
    check("rows of 40 f64 near 1e200", "var", huge, 0, (50, 40), (40, 1), (1,), "float64",
          _moments("var", (huge - huge[0]).reshape(50, 40), 1, 0), exact=False, split=False,
          rtol=1e-12, atol=0)
    rows = (rng.standard_normal(18000) * 3 - 50).astype(f32)
    rev = _view(rows, 8999, (2, 9000), (9000, -1))
    check("row var reversed", "var", rows, 8999, (2, 9000), (9000, -1), (1,), "float32",
          _moments("var", rev, 1, 0), exact=False)
    n = rows.copy()
    n[rng.random(n.size) < 0.2] = np.nan
    n[9000:] = np.nan  # the second row all NaN
    check("row nanvar, one row all NaN", "nanvar", n, 0, (2, 9000), (9000, 1), (1,), "float32",
          _moments("nanvar", n.reshape(2, 9000), 1, 1.5), exact=False, correction=1.5)
    inf = rows.copy()
    inf[[100, 9500]] = [np.inf, -np.inf]
    inf[9000:9003] = np.nan
    check("row nanstd with infinities: NaN", "nanstd", inf, 0, (2, 9000), (9000, 1), (1,),
          "float32", np.full(2, np.nan))
    # short rows: groups of 1 and 32 lanes, a correction past the count of the first
    short = (rng.standard_normal(50 * 7) + 7).astype(f32)
    check("rows of 7, correction 7: NaN", "var", short, 0, (50, 7), (7, 1), (1,), "float32",
          np.full(50, np.nan), correction=7.0, split=False)
    check("rows of 7", "std", short, 0, (50, 7), (7, 1), (1,), "float32",
          _moments("std", short.reshape(50, 7), 1, 1), exact=False, correction=1.0,
          split=False)
    mid = rng.standard_normal(40 * 100)
    mid[[5, 150]] = [np.nan, np.inf]  # rows 0 and 1 NaN
    check("rows of 100, NaN and inf", "var", mid, 0, (40, 100), (100, 1), (1,), "float64",
          _moments("var", mid.reshape(40, 100), 1, 0), exact=False, split=False, rtol=1e-9)
    # columns: vectors (split) and scalars, complex, integers
    c = (rng.standard_normal(600 * 72) * 2 + 1e3).astype(f32)
    cv = _view(c, 0, (600, 72), (72, 1))
    check("column var, vectors", "var", c, 0, (600, 72), (72, 1), (0,), "float32",
          _moments("var", cv, 0, 0), exact=False)
    c64 = rng.standard_normal(600 * 70)
    check("column std f64, scalars, correction 1.5", "std", c64, 0, (600, 70), (70, 1), (0,),
          "float64", _moments("std", _view(c64, 0, (600, 70), (70, 1)), 0, 1.5), exact=False,
          correction=1.5, rtol=1e-9)
    z = (rng.standard_normal(600 * 72) + 1j * rng.standard_normal(600 * 72) + 30 - 20j).astype(
        np.complex64)
    check("column var complex64", "var", z, 0, (600, 72), (72, 1), (0,), "float32",
          _moments("var", _view(z, 0, (600, 72), (72, 1)), 0, 0), exact=False)
    zn = z.copy()
    zn[rng.integers(0, zn.size, 400)] = complex(np.nan, 0)
    zn.reshape(600, 72)[:, 3] = complex(0, np.nan)  # an all-NaN column
    check("column nanvar complex64, an all-NaN column", "nanvar", zn, 0, (600, 72), (72, 1),
          (0,), "float32", _moments("nanvar", _view(zn, 0, (600, 72), (72, 1)), 0, 0),
          exact=False)
    i = rng.integers(-1000, 1000, 12000).astype(np.int32)
    gv = _view(i, 0, (4, 300, 10), (10, 40, 1))
    check("general var of int32", "var", i, 0, (4, 300, 10), (10, 40, 1), (1, 2), "float64",
          _moments("var", gv, (1, 2), 0), exact=False, rtol=1e-9)
    g = (rng.standard_normal(12000) + 1e4).astype(f32)
    g[rng.random(g.size) < 0.2] = np.nan
    check("general nanstd", "nanstd", g, 0, (4, 300, 10), (10, 40, 1), (1, 2), "float32",
          _moments("nanstd", _view(g, 0, (4, 300, 10), (10, 40, 1)), (1, 2), 1), exact=False,
          correction=1.0)
    zc = (rng.standard_normal(12000) + 1j * rng.standard_normal(12000)).astype(np.complex128)
    check("general std complex128, split", "std", zc, 0, (2, 3000, 2), (2, 4, 1), (1, 2),
          "float64", _moments("std", _view(zc, 0, (2, 3000, 2), (2, 4, 1)), (1, 2), 0),
          exact=False, rtol=1e-9)
    # no reduced axis (host.moments reduces a trailing axis of length 1): 0, NaN for NaN and
    # infinities, NaN everywhere with correction 1
    e = rng.standard_normal(35)
    e[[3, 9, 20]] = [np.nan, np.inf, -np.inf]
    check("each element its own slice", "var", e, 0, (5, 7, 1), (7, 1, 1), (2,), "float64",
          np.where(np.isfinite(e), 0.0, np.nan).reshape(5, 7), split=False)
    check("each element its own slice, correction 1", "std", e, 0, (5, 7, 1), (7, 1, 1), (2,),
          "float64", np.full((5, 7), np.nan), split=False, correction=1.0)


def _nan_arg(name, v, axis):
    """NumPy's nanargmax/nanargmin (NaN ranked as -inf/+inf), -1 for an all-NaN slice."""
    mask = np.isnan(v)
    filled = np.where(mask, -np.inf if name == "nanargmax" else np.inf, v)
    out = (np.argmax if name == "nanargmax" else np.argmin)(filled, axis=axis)
    return np.where(mask.all(axis=axis), -1, out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "all"))
