"""Run the short-row sort kernels (arrayx/cuda/kernels/sort/block.py) on numba's CUDA simulator
(no GPU), with the host's launch geometry (block.geometry), against NumPy's stable sort of the
same keys: every key width and kind, both orders, values and positions, rows of 2 to 600
elements (several rows a block, one row a block, padding), random data with ties and the special
floats (NaN, +-inf, +-0.0). Case "sets": unique's boundary flags (sets.unique_flags_spec) over
sorted words of every dtype, with repeats and NaN words (each NaN its own value).

    python tests/cuda/sort_sim.py [all|ints|floats|sets]

Prints one line a case and "BAD <count>"; exits 1 when any is wrong. A separate process because
the simulator replaces numba.cuda for the whole process (tests/cuda/test_simulated_kernels.py).
"""

import sys

import numpy as np
from cuda_sim import NUMPY_TYPES, launch  # first: numba.cuda becomes the simulator
from numba import cuda

from arrayx.cuda.kernels.sort import block, sets

CASES = ("ints", "floats", "sets")
SHAPES = ((1, 2), (5, 3), (3, 17), (2, 100), (1, 600))


def _kernel(width, kind, indices):
    return _entry(block.kernel_spec(width, kind, indices))


def _entry(spec):
    ns = {"cuda": cuda, **NUMPY_TYPES}
    exec(spec.source, ns)
    return ns[spec.entry]


def _expected(a, descending, indices):
    """NumPy's stable order of `a`'s rows: NaNs last ascending and first descending, ties (-0.0
    and +0.0 included) in their original order either way."""
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        value = np.where(nan | (a == 0), 0, a)  # -0.0 and +0.0 tie
        keys = (-value, ~nan) if descending else (value, nan)  # lexsort: the last key first
        order = np.lexsort(keys)
    else:
        key = a.astype(np.uint8) if a.dtype.kind == "b" else a
        order = np.argsort(~key if descending else key, axis=-1, kind="stable")  # ~: reversing
    return order if indices else np.take_along_axis(a, order, -1)


def _data(rng, dt, shape):
    if dt.kind == "f":
        a = rng.choice(np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan, 2.0, -7.0],
                                dt), size=shape)
        return np.where(rng.random(shape) < 0.5, rng.normal(size=shape).astype(dt), a)
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    few = rng.integers(-3 if dt.kind == "i" else 0, 4, size=shape).astype(dt)  # ties
    return np.where(rng.random(shape) < 0.5, a, few)


def run_sets():
    """unique_flags over sorted words: 1 at 0, where a word (pair) differs from the one before,
    and at every NaN word."""
    rng = np.random.default_rng(11)
    bad = 0
    for name in ("bool", "int8", "uint16", "int32", "int64", "float32", "float64", "complex64",
                 "complex128"):
        dt = np.dtype(name)
        fn = _entry(sets.unique_flags_spec(dt))
        wt = np.dtype(np.uint64) if dt.kind == "c" else np.dtype(f"uint{8 * dt.itemsize}")
        nw = 2 if dt == np.complex128 else 1
        for n in (1, 2, 300):
            words = [np.sort(rng.integers(0, 5, n).astype(wt)) for _ in range(nw)]
            nan = np.zeros(n, bool)
            if dt.kind in "fc":
                at = -(n // 3) or n  # the sorted NaNs come last
                if dt == np.complex64:  # the real part's word in the upper half
                    words[0][at:] = sets.nan_word(np.dtype(np.float32)) << 32
                else:
                    words[0][at:] = sets.nan_word(np.dtype(np.float64) if dt.kind == "c" else dt)
                nan[at:] = True
            flags = np.zeros(n, np.int64)
            threads = 256
            grid = (n + threads - 1) // threads
            launch(fn, grid, threads, [flags] + words + [n], range(grid))
            differs = np.zeros(n, bool)
            for w in words:
                differs[1:] |= w[1:] != w[:-1]
            want = (differs | nan).astype(np.int64)
            want[0] = 1
            ok = np.array_equal(flags, want)
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} unique_flags {name} n={n}", flush=True)
    return bad


def run(case):
    if case == "sets":
        return run_sets()
    rng = np.random.default_rng(7)
    if case == "ints":
        dtypes = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                  "uint64"]
    else:
        dtypes = ["float32", "float64"]
    bad = 0
    for name in dtypes:
        dt = np.dtype(name)
        width, kind = dt.itemsize, block.KINDS[dt.kind]
        for indices in (False, True):
            fn = _kernel(width, kind, indices)
            for shape in SHAPES:
                a = _data(rng, dt, shape) if dt.kind != "b" else rng.random(shape) < 0.5
                if dt.kind == "f":  # NaNs of both signs and another payload, kept as they are
                    bits_view = a.view(f"uint{8 * width}")
                    bits_view.flat[::7] |= np.array(1 << (8 * width - 1), bits_view.dtype)  # -x
                    a.flat[3::13] = -np.nan
                    bits_view.flat[5::17] = bits_view.dtype.type(
                        0x7FF0000000000001 if width == 8 else 0x7F800001)  # a signalling NaN
                bits = np.ascontiguousarray(a).view(f"uint{8 * width}").ravel()
                for descending in (False, True):
                    rows, n = shape
                    out = np.zeros(a.size, np.int64 if indices else bits.dtype)
                    grid, threads, args = block.geometry(rows, n, width, descending)
                    launch(fn, grid, threads, [out, bits, *args], range(grid))
                    want = _expected(a, descending, indices)
                    if not indices:  # the bits: a NaN's sign and payload must come back too
                        want = np.ascontiguousarray(want).view(bits.dtype)
                    ok = np.array_equal(out.reshape(shape), want)
                    bad += not ok
                    print(f"{'ok ' if ok else 'BAD'} {name} {shape} "
                          f"{'indices' if indices else 'values'} "
                          f"{'descending' if descending else 'ascending'}", flush=True)
    return bad


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    total = sum(run(c) for c in (CASES if which == "all" else (which,)))
    print(f"BAD {total}")
    sys.exit(1 if total else 0)
