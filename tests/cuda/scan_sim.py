"""Run arrayx's row scan (arrayx/cuda/kernels/scan: row_scan, its host side, and its decoupled
look-back kernel) on numba's CUDA simulator, without a GPU, against NumPy.

    python tests/cuda/scan_sim.py [all|sum|segments|aligned|rounds|wide|mask|nan]

Device memory is a NumPy heap (test_indexing_host.Heap), the kernels' intrinsics (status word
loads and stores, the tile counter, bit casts) are emulated, tiles are small (32 threads x 1
vector) and blocks run one after another. Run that way, every predecessor would have published
its inclusive prefix before a tile looks back, so the look-back's walk over aggregates would
never run: a tile's prefix, when it already had published an aggregate, only becomes visible
LAG tiles later. Tiles then walk back over windows of 32 aggregates, more than one when LAG is
larger than 32, and stop at the nearest visible prefix, as on a GPU under load.

Every launch tags its status words with a new epoch and none clears them: the first load of a
word a launch stored to still returns what the word held before (zero, or a status of an
earlier launch), which a tile must take for 'not published yet' and read again.

Prints one line a case and exits 1 when any is wrong (tests/cuda/test_simulated_kernels.py runs
it).
"""

import os
import sys
import threading
import time

import numpy as np
from cuda_sim import (CHOICES, NUMPY_TYPES, Ptr, launch, vload,  # first: numba.cuda -> simulator
                      vstore)
from numba import cuda

from arrayx.cuda.engine import compiler, copies, runtime, transfer
from arrayx.cuda.kernels import scan
from arrayx.cuda.kernels.scan import status, tuning
from arrayx.cuda.engine.array import CudaArray

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_indexing_host import Heap  # noqa: E402

tuning.SCAN_BLOCK, tuning.SCAN_VECTORS, tuning.ONE_ROW_VECTORS = 32, 1, 1
tuning.PREFETCH_BYTES = 3 << 10  # 3 float32 tiles ahead (128 elements read and written), 4 of x[mask]
tuning.ALIGNED_MIN_VECTORS = 1  # rows of a multiple of 128 float32 take the one-row kernel
BUILT = []  # the names of the kernels built
PREFETCHED = []  # the (pointer offset, index) of every L2 prefetch


def _prefetch_line(p, i):
    p[i]  # bounds-checked: a prefetch stays inside the heap
    PREFETCHED.append((p.offset, int(i)))
LAG = 36
heap = Heap(1 << 24)


class _Allocator:
    def alloc(self, nbytes):
        return heap.alloc(nbytes, align=256), nbytes

    def release(self, *_):
        pass


class _Stream:
    """What row_scan uses of runtime.Stream: its status areas live in `scratch`."""

    def __init__(self):
        self.scratch = {}
        self.scratch_lock = threading.Lock()


class _Device:
    index = 0
    stream = _Stream()
    multiprocessor_count = 2
    allocator = _Allocator()


_Device.stream.device = _Device


class _StatusWords:
    """The status array's loads, stores and counter, with late prefixes (module docstring)."""

    def __init__(self, words):
        self.words = words
        self.lock = threading.Lock()
        self.late = []  # (visible from tile, status pointer, index, word)
        self.first = 0  # the launch's first tile id (the counter's value before it)
        self.before = {}  # word address -> what it held before this launch's store to it

    def load(self, p, i):
        """The first load of a word this launch stored to still sees its earlier content (zero,
        or an earlier launch's status): the reader must take that as not yet published."""
        j = p._at(i)
        if j in self.before:
            return np.uint64(self.before.pop(j))
        return np.uint64(p[i])

    def flag(self, word):
        """The state of a status word: aggregate, prefix or (0) not published (the epoch of the
        launch that wrote it, above the state bits, is not looked at)."""
        return (int(word >> np.uint64(32)) if self.words == 1 else int(word)) & 3

    def tile_of(self, index):
        return (int(index) - status.STATUS_HEAD) // self.words

    def store(self, p, i, word):
        with self.lock:
            if p._at(i) not in self.before:
                self.before[p._at(i)] = p[i]
            if self.flag(p[i]) == status.FLAG_AGGREGATE and self.flag(word) == status.FLAG_PREFIX:
                self.late.append((self.tile_of(i) + LAG, p, i, np.uint64(word)))
            else:
                p[i] = np.uint64(word)

    def atom_add(self, p, i, v):
        with self.lock:
            old = np.uint64(p[i])
            p[i] = old + np.uint64(v)
            if int(i) == 0:  # the tile counter: a tile starts; publish what is due
                tile = int(old) - self.first
                due = [e for e in self.late if e[0] <= tile]
                self.late = [e for e in self.late if e[0] > tile]
                for _, q, j, word in due:
                    q[j] = word
            return old


def _bitcast(x, proto):
    to = np.asarray(proto).dtype
    src = np.dtype(("f" if to.kind in "iu" else "u") + str(to.itemsize))
    return np.asarray(x, dtype=src).view(to)[()]


class _SimKernel:
    def __init__(self, spec, words):
        self.spec = spec
        self.status = _StatusWords(words)
        ns = {"cuda": cuda, **NUMPY_TYPES, **CHOICES}
        exec(spec.source, ns)
        for n in (1, 2, 4, 8, 16):
            ns[f"vload{n}"], ns[f"vstore{n}"] = vload(n), vstore(n)
        ns.update(ld_relaxed=self.status.load, ld_acquire=self.status.load,
                  st_relaxed=self.status.store, st_release=self.status.store,
                  atom_add=self.status.atom_add, bitcast=_bitcast, globaltimer=time.perf_counter_ns,
                  prefetch_line=_prefetch_line)
        self.fn = ns[spec.entry]

    def __call__(self, stream, grid, block, args, keep, nbytes=0):
        conv = []
        for t, v in zip(self.spec.argtypes, args):
            if t.endswith("*"):
                dt = np.dtype(t[:-1])
                assert v % dt.itemsize == 0
                conv.append(Ptr(heap.mem.view(dt), v // dt.itemsize))
            else:
                conv.append(v)
        self.status.first = args[3]
        self.status.before = {}
        launch(self.fn, grid, block, conv, range(grid))
        for _, q, j, word in self.status.late:  # the kernel's end: every store lands
            q[j] = word
        self.status.late = []


def _cached_kernel(dev, family, key, build):
    spec = build()
    BUILT.append(spec.name)
    return _SimKernel(spec, scan.status_words(key[1].result))  # key: ("row", RowScan, ...)


def _zero(stream, a):
    heap.mem[a.ptr:a.ptr + a.nbytes] = 0


runtime.get_device = lambda index=0: _Device()
compiler.cached_kernel = _cached_kernel
copies.zero_scratch = _zero
transfer.to_host = heap.get


def _put(host, start=0):
    """host[start:] on the heap, an offset view when start > 0."""
    base = heap.put(host)
    if not start:
        return base
    flat = host.reshape(-1)
    return CudaArray(base.buffer, (flat.size - start,), host.dtype, None, start)


# every case; tests/cuda/test_simulated_kernels.py reads this list (without importing the module)
CASES = ("sum", "segments", "aligned", "rounds", "wide", "mask", "nan")


def main(case):
    if case != "all" and case not in CASES:
        raise SystemExit(f"unknown case {case!r}: one of all, {', '.join(CASES)}")
    rng = np.random.default_rng(5)
    bad = 0

    def check(label, got, ref, exact=False):
        nonlocal bad
        ok = np.array_equal(got, ref) if exact else np.allclose(got, ref, rtol=2e-5, atol=1e-4)
        print(f"{'ok ' if ok else 'BAD'} {label} ({time.time() - t0:.1f} s)")
        if not ok:
            bad += 1
            where = np.flatnonzero(~np.isclose(got, ref, rtol=2e-5, atol=1e-4))[:5]
            print("   at", where, "got", np.asarray(got).ravel()[where],
                  "ref", np.asarray(ref).ravel()[where])

    f32 = np.float32
    if case in ("all", "sum"):  # one plain row of 46 tiles (128 float32 a tile), offset by one
        t0 = time.time()
        host = rng.standard_normal(45 * 128 + 37).astype(f32)
        a = _put(host, 1)
        out = heap.empty(a.shape, f32)
        scan.row_scan("sum", a, out)
        check("cumulative_sum float32, one row, 2 windows of look-back", heap.get(out),
              np.cumsum(host[1:].astype(np.float64)))
        t0 = time.time()  # the same status words again, the first launch's left in them
        host = rng.standard_normal(30 * 128 + 3).astype(f32)
        out = heap.empty(host.shape, f32)
        a = _put(host)  # 16-byte aligned, so read by vectors and prefetched
        PREFETCHED.clear()
        scan.row_scan("sum", a, out)
        check("cumulative_sum float32 again, the status words reused", heap.get(out),
              np.cumsum(host.astype(np.float64)))
        # each tile prefetches the 4 lines of 32 float32 of the tile 3 on, when that is whole
        want = sorted((t + 3) * 128 + 32 * line for t in range(31) for line in range(4)
                      if (t + 4) * 128 <= host.size)
        check("L2 prefetch: every line of each whole tile 3 tiles ahead, once",
              np.array(sorted(i for off, i in PREFETCHED if off == a.ptr // 4)), np.array(want),
              exact=True)
        t0 = time.time()  # the phase trace of benchmarks/probes/scan_phase_probe.py
        P = len(scan.TRACE_PHASES)
        tiles = -(-host.size // 128)
        trace = _put(np.zeros(tiles * P, np.int64))  # a stamp left out stays 0
        out = heap.empty(host.shape, f32)
        scan.row_scan("sum", _put(host), out, trace=trace)
        check("cumulative_sum float32, traced", heap.get(out), np.cumsum(host.astype(np.float64)))
        stamps = heap.get(trace).reshape(tiles, P)
        if not (stamps > 0).all() or (np.diff(stamps, axis=1) < 0).any():
            bad += 1
            print("BAD trace: every tile's phases stamped, in order", stamps[:3])
        try:
            scan.row_scan("sum", _put(host), out, trace=heap.empty((tiles * P - 1,), np.int64))
            bad += 1
            print("BAD a trace too short for the tiles was taken")
        except ValueError:
            pass
    if case in ("all", "segments"):  # rows shorter and longer than a tile (128 elements)
        for rows, k in ((64, 77), (3, 1700)):
            t0 = time.time()
            host = rng.standard_normal((rows, k)).astype(f32)
            out = heap.empty((rows, k), f32)
            scan.row_scan("sum", _put(host), out)
            check(f"cumulative_sum float32, {rows} rows of {k}", heap.get(out),
                  np.cumsum(host.astype(np.float64), axis=1))
    if case in ("all", "aligned"):  # rows filling whole tiles: the one-row kernel, heads at rows
        for rows, k in ((2, 40 * 128), (3, 10 * 128), (5, 128)):
            t0 = time.time()
            host = rng.standard_normal((rows, k)).astype(f32)
            out = heap.empty((rows, k), f32)
            BUILT.clear()
            scan.row_scan("sum", _put(host), out)
            check(f"cumulative_sum float32, {rows} rows of {k}, the one-row kernel "
                  f"({BUILT[-1]})", heap.get(out), np.cumsum(host.astype(np.float64), axis=1))
            if "vv32a_" not in BUILT[-1]:
                bad += 1
                print("BAD the rows did not take the one-row kernel")
        t0 = time.time()
        signs = np.where(rng.random((4, 256)) < 0.5, -1, 1).astype(np.int64)
        out = heap.empty(signs.shape, np.int64)
        scan.row_scan("prod", _put(signs), out)
        check("cumulative_prod int64, 4 rows of 256 (64 a tile)", heap.get(out),
              np.cumprod(signs, axis=1), exact=True)
    if case in ("all", "rounds"):  # one-row tiles of 2 warps x 3 rounds: carries across rounds
        knobs = tuning.SCAN_BLOCK, tuning.ONE_ROW_VECTORS
        tuning.SCAN_BLOCK, tuning.ONE_ROW_VECTORS = 64, 3
        try:
            t0 = time.time()
            host = rng.standard_normal(7 * 768 + 101).astype(f32)
            out = heap.empty(host.shape, f32)
            scan.row_scan("sum", _put(host), out)
            check("cumulative_sum float32, one row, 64 x 3 tiles", heap.get(out),
                  np.cumsum(host.astype(np.float64)))
            t0 = time.time()  # no identity combined in: a row of -0.0 sums to -0.0 throughout
            zeros = np.full(3 * 768 + 5, -0.0, f32)
            out = heap.empty(zeros.shape, f32)
            scan.row_scan("sum", _put(zeros), out)
            check("cumulative_sum of -0.0, one row, 64 x 3 tiles: every sign bit kept",
                  np.signbit(heap.get(out)), np.signbit(np.cumsum(zeros)), exact=True)
            t0 = time.time()
            signs = np.where(rng.random(5 * 384 + 7) < 0.5, -1, 1).astype(np.int64)
            out = heap.empty(signs.shape, np.int64)
            scan.row_scan("prod", _put(signs), out)
            check("cumulative_prod int64, one row, 64 x 3 tiles", heap.get(out),
                  np.cumprod(signs), exact=True)
        finally:
            tuning.SCAN_BLOCK, tuning.ONE_ROW_VECTORS = knobs
    if case in ("all", "wide"):  # values in two 64-bit slots: the flag word released after them
        t0 = time.time()
        host = rng.standard_normal(45 * 64 + 5) + 1j * rng.standard_normal(45 * 64 + 5)
        host = host.astype(np.complex64)
        out = heap.empty(host.shape, np.complex64)
        scan.row_scan("sum", _put(host), out)
        check("cumulative_sum complex64, one row", heap.get(out),
              np.cumsum(host.astype(np.complex128)))
        t0 = time.time()
        signs = np.where(rng.random(45 * 64) < 0.5, -1, 1).astype(np.int64)
        out = heap.empty(signs.shape, np.int64)
        scan.row_scan("prod", _put(signs), out)
        check("cumulative_prod int64, one row", heap.get(out), np.cumprod(signs), exact=True)
    if case in ("all", "mask"):  # x[mask]: the flag scan with the fused compaction
        t0 = time.time()
        x = rng.standard_normal(46 * 128 - 3).astype(f32)
        mask = rng.random(x.size) < 0.4
        out = heap.empty(x.shape, f32)
        count = scan.row_scan("sum", _put(mask.view(np.uint8)), out, flag=True, x=_put(x))
        check("x[mask] float32, fused compaction", heap.get(out)[:count], x[mask], exact=True)
        if count != mask.sum():
            bad += 1
            print("BAD count", count, "expected", mask.sum())
    if case in ("all", "nan"):  # NaN-ignoring scans: NaN read as 0 / 1 on load
        t0 = time.time()
        host = rng.standard_normal(20 * 128 + 9).astype(f32)
        host[rng.random(host.size) < 0.3] = np.nan
        host[1] = np.nan  # the first element of the offset view: the scan starts from 0
        out = heap.empty((host.size - 1,), f32)
        scan.row_scan("nansum", _put(host, 1), out)
        check("nancumsum float32, one row, offset", heap.get(out),
              np.nancumsum(host[1:].astype(np.float64)))
        t0 = time.time()
        rows = rng.standard_normal((5, 301)).astype(f32)
        rows[rng.random(rows.shape) < 0.3] = np.nan
        rows[2] = np.nan
        out = heap.empty(rows.shape, f32)
        scan.row_scan("nansum", _put(rows), out)
        check("nancumsum float32, 5 rows of 301, one all NaN", heap.get(out),
              np.nancumsum(rows.astype(np.float64), axis=1))
        t0 = time.time()
        z = (1 + (rng.standard_normal(45 * 64 + 5) + 1j * rng.standard_normal(45 * 64 + 5)) / 50)
        z = z.astype(np.complex64)
        z[rng.random(z.size) < 0.2] = complex(1.0, np.nan)  # a NaN part: the element reads as 1
        out = heap.empty(z.shape, np.complex64)
        scan.row_scan("nanprod", _put(z), out)
        check("nancumprod complex64, one row", heap.get(out),
              np.nancumprod(z.astype(np.complex128)))
    print("BAD", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "all"))
