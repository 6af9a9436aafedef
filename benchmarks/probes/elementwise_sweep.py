"""Sweep of the contiguous elementwise kernel's launch shape (BLOCK threads a block, VEC_UNROLL
16-byte vectors a thread, in arrayx/cuda/kernels/elementwise/tuning.py) on the one-input
operations of issue 4's targets, beside PyTorch in the same process. Run on the GPU machine:

    python3 benchmarks/probes/elementwise_sweep.py [--reps 10]

Each case runs on 2^28 float32 elements (random normal: half of sqrt's inputs are negative, as in
elementwise_bench.py); the time is the median of CUDA-event-timed single calls, given as a ratio
to the device-to-device copy of the same bytes (read + written) in the same run. Settings are
timed in two rounds, the second in reverse order, because the first setting of a sweep has read
~5% slow (reduce-sweep-2026-11-30-run2.log); a setting whose two rounds disagree by more than a
few percent is noise, not a result. The second round also times 10 calls back to back (the
host runs ahead: the kernels' own speed), so a gap between the columns is per-call latency. Every setting's result is checked against NumPy once.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402

from harness import Harness  # noqa: E402

LOG2N = 28
# (BLOCK, VEC_UNROLL); the module's defaults first. Each new VEC_UNROLL compiles one kernel per
# case, BLOCK compiles nothing (the kernel reads blockDim).
SETTINGS = [(256, 1), (128, 1), (512, 1), (128, 2), (256, 2), (128, 4)]
CASES = ("sqrt", "sin", "exp", "abs")
PIPELINE = 10  # calls back to back in the second round's extra column (the kernels' own speed)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    import arrayx as xp
    from arrayx._registry import set_host_fallback
    from arrayx.cuda.engine import compiler
    from arrayx.cuda.kernels import elementwise as ew
    set_host_fallback("error")
    H = Harness("arrayx elementwise launch-shape sweep")
    n = 1 << LOG2N
    host = np.random.default_rng(1).standard_normal(n, dtype=np.float32)
    x = xp.asarray(host, device="cuda:0")
    copy_ms = H.copy_ceiling(n, args.reps)["value"]
    compiled0 = compiler.compile_count()

    def configure(block, unroll):
        ew.tuning.BLOCK, ew.tuning.VEC_UNROLL = block, unroll
        ew.fast_path.plans.clear()  # plans hold the launch shape they were made with

    sample = slice(0, n, 9973)
    checked = {}
    times = {}
    for rnd, order in enumerate((SETTINGS, SETTINGS[::-1])):
        for setting in order:
            configure(*setting)
            for case in CASES:
                fn = getattr(xp, case)
                if (setting, case) not in checked:
                    got = np.asarray(fn(x).to_device("cpu"))[sample]
                    with np.errstate(invalid="ignore"):
                        ref = getattr(np, case)(host[sample])
                    checked[setting, case] = bool(np.allclose(got, ref, rtol=2e-6, atol=1e-6,
                                                              equal_nan=True))
                times.setdefault((setting, case), []).append(
                    H.gpu_time("arrayx", lambda fn=fn: fn(x), reps=args.reps))
                if rnd:
                    def burst(fn=fn):
                        for _ in range(PIPELINE):
                            fn(x)
                    times[setting, case].append(
                        H.gpu_time("arrayx", burst, warmup=1, reps=args.reps) / PIPELINE)
    configure(*SETTINGS[0])
    torch_ms = {}
    if H.torch is not None:
        tx = H.torch.from_dlpack(x)
        for case in CASES:
            fn = getattr(H.torch, case)
            torch_ms[case] = H.gpu_time("torch", lambda fn=fn: fn(tx), reps=args.reps)
    compiled = compiler.compile_count() - compiled0

    print(f"\n==== elementwise launch-shape sweep ({H.dev.name}); copy of {n * 4 >> 20} MiB: "
          f"{copy_ms:.4f} ms = {2 * n * 4 / copy_ms / 1e9:.3f} TB/s")
    print("| case | BLOCK x VEC_UNROLL | round 1 ms | ratio | round 2 ms | ratio | "
          f"{PIPELINE} calls ms/call | ratio | check |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for case in CASES:
        for setting in SETTINGS:
            t1, t2, tb = times[setting, case]
            print(f"| {case} | {setting[0]} x {setting[1]} | {t1:.4f} | {copy_ms / t1:.3f} | "
                  f"{t2:.4f} | {copy_ms / t2:.3f} | {tb:.4f} | {copy_ms / tb:.3f} | "
                  f"{'ok' if checked[setting, case] else 'FAIL'} |")
        if case in torch_ms:
            print(f"| {case} | PyTorch | {torch_ms[case]:.4f} | {copy_ms / torch_ms[case]:.3f} "
                  "| | | | | |")
    print(f"kernels compiled during the sweep: {compiled}")


if __name__ == "__main__":
    main()
