"""Sweep of the transposing tile's design (arrayx/cuda/kernels/elementwise/tuning.py, the TILE_* constants) on
transposed copies, to pick the module's defaults. Run once on the GPU:

    python benchmarks/probes/tile_sweep.py [--reps 10] [--jobs 16]

Each setting patches the module constants on top of their defaults; the kernel cache key holds
the design they give (vector width, tile shape, threads, index width, whole-tile path), so a new
design builds a new kernel and nothing needs clearing. First every setting's kernels are
compiled into the disk cache by --jobs worker processes (no GPU needed; skipped when the disk
cache is off), so the timing loop only loads them. Then, per setting, ``xp.asarray(m.T,
copy=True)`` for m = 16k x 16k float32 (16-byte vectors), 16k x 16k float64 (vectors of two) and
16383 x 16385 float32 (odd sides: one element at a time, partial tiles on two edges), each
checked once against CuPy's ``cp.ascontiguousarray(m.T)`` and timed with CUDA events (median of
--reps after warm-up). CuPy's own transposed copy is a reference row. Prints: case, setting, the
design it ran (elements per access ``v``, rows x cols, ``t`` threads, ``i`` index bits, ``w``
whole-tile path), ms, and the ratio of its bandwidth (bytes read + written) to the device copy
of 1 GiB in the same run. About 30-60 s on an H200, compiles included.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))

from harness import Harness  # noqa: E402

KNOBS = ("TILE_ROWS", "TILE_COLS", "TILE_THREADS", "TILE_VECTOR_BYTES", "TILE_INDEX_32",
         "TILE_WHOLE_PATH")
# the design before the first sweep (0.60 of the copy for 16k x 16k float32 on 2026-11-30)
BEFORE = {"TILE_VECTOR_BYTES": 1, "TILE_INDEX_32": False, "TILE_WHOLE_PATH": False}
# (label, constants changed from the module's defaults). The first sweep
# (benchmarks/results/tile-sweep-2026-11-30.log) chose 64 x 64, 256 threads, 16-byte vectors,
# 32-bit offsets, no whole-tile path; its other candidates (8-byte vectors, 32 x 32, 128 x 32,
# 64 x 128, 128 x 64, 128 threads, 128 x 64 with 512 threads) were slower on every case.
SETTINGS = [
    ("before", BEFORE),
    ("scalar, 32-bit", {"TILE_VECTOR_BYTES": 1}),
    ("defaults", {}),
    ("whole path", {"TILE_WHOLE_PATH": True}),
    ("64-bit", {"TILE_INDEX_32": False}),
    ("512 threads", {"TILE_THREADS": 512}),
    ("32 x 128", {"TILE_ROWS": 32, "TILE_COLS": 128}),
    ("32 x 128, whole path", {"TILE_ROWS": 32, "TILE_COLS": 128, "TILE_WHOLE_PATH": True}),
]
SIDE = 1 << 14
CASES = [("16k x 16k float32", (SIDE, SIDE), "float32"),
         ("16k x 16k float64", (SIDE, SIDE), "float64"),
         ("16383 x 16385 float32", (SIDE - 1, SIDE + 1), "float32")]


def configure(ew, defaults, setting):
    for k, v in {**defaults, **setting}.items():
        setattr(ew.tuning, k, v)


def sweep_specs(ew, ops, defaults) -> list:
    """Every kernel the settings launch: per case, the tile kernel with vectors (sides multiples
    of 16: every vector width applies) or the one moving single elements."""
    import numpy as np
    specs = {}
    for _, setting in SETTINGS:
        configure(ew, defaults, setting)
        for _, shape, dtype in CASES:
            dt = np.dtype(dtype)
            try:
                both = ew.tile_specs("cast", ops.cast_op(dt, dt), ("a",), (dt,))
            except ValueError:  # a design that does not exist: reported by the timing loop
                continue
            spec = both[0] if shape[0] % 16 == shape[1] % 16 == 0 else both[-1]
            specs[spec.name] = spec
    configure(ew, defaults, {})
    return list(specs.values())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = p.parse_args()
    import cupy as cp

    import arrayx as xp
    from arrayx._registry import set_host_fallback
    from arrayx.cuda.engine import compiler
    from arrayx.cuda.kernels import elementwise as ew
    from arrayx.cuda.kernels.elementwise import ops as ops
    from arrayx.cuda.precompile import _one
    set_host_fallback("error")
    H = Harness("arrayx transposing tile sweep")
    defaults = {k: getattr(ew.tuning, k) for k in KNOBS}

    specs = sweep_specs(ew, ops, defaults)
    if compiler.cache_dir():
        # spawned workers: fresh processes, none inheriting this one's CUDA context
        cc = tuple(H.dev.compute_capability)
        with ProcessPoolExecutor(a.jobs, mp_context=multiprocessing.get_context("spawn")) as ex:
            built = sum(ex.map(_one, [(s, cc) for s in specs]))
        print(f"{len(specs)} kernels, {built} compiled in {a.jobs} processes", flush=True)
    compiled0 = compiler.compile_count()

    # the design each call ran: the tile kernel's cache key, seen as it is looked up
    ran = []
    cached_kernel = compiler.cached_kernel

    def spy(device_index, family, key, build):
        if family == "elementwise" and key[4] == "tile":
            V, (R, C, T, whole), bits = key[5:8]
            ran.append(f"{V}v {R}x{C} t{T} i{bits}" + (" w" if whole else ""))
        return cached_kernel(device_index, family, key, build)

    compiler.cached_kernel = spy

    copy_tbs = H.copy_ceiling(SIDE * SIDE, a.reps)["tb_per_s"]
    cp.random.seed(1)
    data = []
    for case, shape, dtype in CASES:
        m_cp = cp.random.standard_normal(shape, dtype=dtype)
        want = cp.ascontiguousarray(m_cp.T)
        cp.cuda.Device().synchronize()
        m = xp.from_dlpack(m_cp)
        nbytes = 2 * m_cp.nbytes
        ms = H.gpu_time("cupy", lambda m_cp=m_cp: cp.ascontiguousarray(m_cp.T), reps=a.reps)
        data.append((case, m, want, nbytes, ("CuPy ascontiguousarray", "-", ms, nbytes, "-")))

    rows = []
    for label, setting in SETTINGS:
        configure(ew, defaults, setting)
        for case, m, want, nbytes, _ in data:
            try:
                ran.clear()
                same = bool(cp.array_equal(cp.from_dlpack(xp.asarray(m.T, copy=True)), want))
                design = ran[-1]
                ms = H.gpu_time("arrayx", lambda m=m: xp.asarray(m.T, copy=True), reps=a.reps)
                rows.append((case, label, design, ms, nbytes, "equal" if same else "DIFFERENT"))
            except Exception as e:  # a design that does not exist or fails: note it, go on
                rows.append((case, label, "-", float("nan"), nbytes, repr(e)[:70]))
    configure(ew, defaults, {})
    compiler.cached_kernel = cached_kernel
    rows += [(case, *ref) for case, _, _, _, ref in data]

    print(f"\n==== transposing tile sweep ({H.dev.name}); copy {copy_tbs:.2f} TB/s; defaults "
          + ", ".join(f"{k}={v}" for k, v in defaults.items()))
    print(f"{'case':22s} {'setting':28s} {'design':24s} {'ms':>8s} {'of copy':>8s}  check")
    # per case, fastest first (a failed setting's NaN last)
    for case, label, design, ms, nbytes, check in sorted(rows, key=lambda r: (r[0], r[3] != r[3],
                                                                              r[3])):
        ratio = nbytes / (ms * 1e-3) / 1e12 / copy_tbs
        print(f"{case:22s} {label:28s} {design:24s} {ms:8.3f} {ratio:8.3f}  {check}")
    print(f"kernels compiled by the timing loop: {compiler.compile_count() - compiled0}")


if __name__ == "__main__":
    main()
