"""Sweep of the reduction kernels' tuning knobs on the four cases of reduce_bench.py's targets.

    python3 benchmarks/probes/reduce_sweep.py            (about 60 s on an H200, ~6 kernel compiles)

For each case (sum of 2^28 float32, row sums and column sums of the same data as 16k x 16k,
argmax of 2^28 float32) and each candidate setting of the knobs in
arrayx/cuda/kernels/reduce/tuning.py (UNROLL, ARG_UNROLL, COLUMN_UNROLL, BLOCKS_PER_SM,
ROW_BLOCK_MIN_K, SPLIT_FILL, LOAD_HINT; the plan and kernel caches are cleared between
settings), prints the median time of 10 CUDA-event-timed calls and its ratio to the
device-to-device copy of the same 1 GiB in the same run (bytes read, as reduce_bench.py counts
them), twice:
* ``1 call``: events around one call, as reduce_bench.py times it; the GPU idles while the host
  prepares and submits the first launch, so this includes the host's latency;
* ``10 calls``: events around 10 calls back to back, per call; the host runs ahead, so this is
  the kernels' own bandwidth.
A gap between the two is host latency (layout analysis, graph capture and launch), not the
kernels. Every setting's result is checked once against a float64 host reference (a wrong
kernel prints FAIL). Last, the host cost of a small reduction (xp.sum of 1000 float32) with the
plan cache warm and with it cleared before each call.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402

from harness import Harness  # noqa: E402

LOG2N = 28
REPS = 10
PIPELINE = 10

# case -> candidate settings ({} = the module's defaults); each distinct UNROLL/COLUMN_UNROLL/
# LOAD_HINT compiles new kernels (about 1 s each), BLOCKS_PER_SM, ROW_BLOCK_MIN_K and SPLIT_FILL
# do not. (Earlier sweeps: benchmarks/README.md, "Reduce: facts moved out of code comments".)
SETTINGS = {
    "sum 2^28 float32": [{}, {"UNROLL": 8}, {}],
    "row sums 16k x 16k": [{}],
    "column sums 16k x 16k": [{}],
    "argmax 2^28 float32": [{}, {"ARG_UNROLL": 8}, {}],
}


def main():
    import arrayx as xp
    from arrayx._registry import set_host_fallback
    from arrayx.cuda.engine import compiler
    from arrayx.cuda.kernels.reduce import plans, tuning
    set_host_fallback("error")
    H = Harness("arrayx CUDA reduction knob sweep")
    n = 1 << LOG2N
    side = 1 << (LOG2N // 2)
    knobs = ("UNROLL", "ARG_UNROLL", "COLUMN_UNROLL", "BLOCKS_PER_SM", "ROW_BLOCK_MIN_K",
             "SPLIT_FILL", "LOAD_HINT")
    defaults = {k: getattr(tuning, k) for k in knobs}

    def configure(setting):
        for k, v in {**defaults, **setting}.items():
            setattr(tuning, k, v)
        plans.plan.cache_clear()

    # uniform [0, 1): a lost or doubled block moves the sum far beyond float32 rounding, and the
    # maximum repeats (2^24 values, 2^28 draws), so argmax checks the first-index tie rule
    host = np.random.default_rng(1).random(n, dtype=np.float32)
    x = xp.asarray(host, device="cuda:0")
    m = xp.reshape(x, (side, side))
    hm = host.reshape(side, side)
    refs = {"sum 2^28 float32": np.sum(host, dtype=np.float64),
            "row sums 16k x 16k": hm.sum(axis=1, dtype=np.float64),
            "column sums 16k x 16k": hm.sum(axis=0, dtype=np.float64),
            "argmax 2^28 float32": np.argmax(host)}
    calls = {"sum 2^28 float32": lambda: xp.sum(x),
             "row sums 16k x 16k": lambda: xp.sum(m, axis=1),
             "column sums 16k x 16k": lambda: xp.sum(m, axis=0),
             "argmax 2^28 float32": lambda: xp.argmax(x)}
    tol = {"sum 2^28 float32": 1e-5, "row sums 16k x 16k": 1e-5, "column sums 16k x 16k": 1e-5}

    copy_ms = H.copy_ceiling(n, REPS)["value"]
    read_ms = copy_ms / 2  # the copy reads and writes n * 4 bytes; a reduction reads them once
    compiled0 = compiler.compile_count()

    # the first setting timed ran ~5% slow in every sweep (reduce-sweep-2026-11-30-run2.log):
    # one untimed round of the first case first
    H.gpu_time("arrayx", calls[next(iter(SETTINGS))], reps=REPS)
    rows = []
    for case, settings in SETTINGS.items():
        fn, ref = calls[case], refs[case]
        for setting in settings:
            configure(setting)
            got = np.asarray(fn().to_device("cpu"))
            if case in tol:
                ok = bool(np.allclose(got, ref, rtol=tol[case], atol=0))
            else:
                ok = int(got) == int(ref)
            one = H.gpu_time("arrayx", fn, reps=REPS)

            def burst():
                for _ in range(PIPELINE):
                    fn()

            many = H.gpu_time("arrayx", burst, warmup=1, reps=REPS) / PIPELINE
            label = ", ".join(f"{k}={v}" for k, v in setting.items()) or "defaults"
            rows.append((case, label, one, read_ms / one, many, read_ms / many, ok))
    configure({})

    small = xp.ones(1000, dtype=xp.float32, device="cuda:0")
    sync = H.rt.synchronize
    warm_us = H.host_time(lambda: xp.sum(small), sync, n=5000)

    def uncached():
        plans.plan.cache_clear()
        xp.sum(small)

    cold_us = H.host_time(uncached, sync, n=2000)
    compiled = compiler.compile_count() - compiled0

    print(f"\n==== reduction knob sweep ({H.dev.name}); copy of {n * 4 >> 20} MiB: {copy_ms:.4f} ms "
          f"= {2 * n * 4 / copy_ms / 1e9:.3f} TB/s; defaults {defaults}")
    print("| case | setting | 1 call ms | ratio | 10 calls ms/call | ratio | check |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for case, label, one, r1, many, rm, ok in rows:
        print(f"| {case} | {label} | {one:.4f} | {r1:.3f} | {many:.4f} | {rm:.3f} | "
              f"{'ok' if ok else 'FAIL'} |")
    print(f"| host us per xp.sum of 1000 float32 | plan cached | {warm_us:.1f} us | | | | |")
    print(f"| host us per xp.sum of 1000 float32 | plan cache cleared each call | {cold_us:.1f} us"
          " | | | | |")
    print(f"kernels compiled during the sweep: {compiled}")


if __name__ == "__main__":
    main()
