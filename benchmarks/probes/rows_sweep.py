"""Sweep of the elementwise rows layout's launch shape (arrayx/cuda/kernels/elementwise/tuning.py:
BLOCK threads a block, ROWS_VEC_UNROLL 16-byte vectors a thread on the vector variant,
ROWS_UNROLL elements a thread on the one-element variant) on the broadcasts and views of
elementwise_bench.py, beside PyTorch in the same process. Run on the GPU machine:

    python3 benchmarks/probes/rows_sweep.py [--reps 10] [--rounds 2] [--settings 256x1x4,128x2x8]

Cases on a 16384 x 16384 float32 matrix m: `m - m[:, :1]` and `m + m[:1, :]` (the vector
variant: a row broadcast read once a row, a column broadcast read as vectors) and
`m[:-2, 1:-1] + m[2:, 1:-1]` (rows off a 16-byte boundary: the one-element variant). Times are
medians of CUDA-event-timed single calls as ratios to the device-to-device copy of the bytes the
operation reads and writes (timed again each round: the clock drifts between rounds), in rounds of alternating order (the first setting of a sweep reads
slow); a setting whose rounds disagree by more than a few percent is noise. Every
setting's result is checked against NumPy on sampled rows.
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

SIDE = 16384
# (BLOCK, ROWS_VEC_UNROLL, ROWS_UNROLL); the module's defaults first. A new unroll compiles one
# kernel per case; BLOCK compiles nothing (the kernel reads blockDim).
SETTINGS = [(256, 1, 4), (256, 2, 4), (256, 4, 8), (512, 1, 2), (512, 2, 4), (128, 2, 8),
            (1024, 1, 1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--settings", default="",
                    help="BLOCKxROWS_VEC_UNROLLxROWS_UNROLL, comma-separated (default: SETTINGS)")
    args = ap.parse_args()
    settings = [tuple(int(v) for v in s.split("x")) for s in args.settings.split(",")] \
        if args.settings else SETTINGS
    import arrayx as xp
    from arrayx._registry import set_host_fallback
    from arrayx.cuda.engine import compiler
    from arrayx.cuda.kernels import elementwise as ew
    set_host_fallback("error")
    H = Harness("arrayx elementwise rows-layout sweep")
    host = np.random.default_rng(1).standard_normal((SIDE, SIDE), dtype=np.float32)
    m = xp.asarray(host, device="cuda:0")
    f4 = 4
    cases = {  # name: (bytes read and written, arrayx call, NumPy reference of rows `r`)
        "m - m[:, :1]": ((2 * SIDE + 1) * SIDE * f4, lambda lib, a: a - a[:, :1],
                         lambda r: host[r] - host[r, :1]),
        "m + m[:1, :]": ((2 * SIDE + 1) * SIDE * f4, lambda lib, a: a + a[:1, :],
                         lambda r: host[r] + host[:1, :]),
        "m[:-2, 1:-1] + m[2:, 1:-1]": (3 * (SIDE - 2) ** 2 * f4,
                                       lambda lib, a: a[:-2, 1:-1] + a[2:, 1:-1],
                                       lambda r: host[r, 1:-1] + host[r + 2, 1:-1]),
    }
    sample = np.arange(0, SIDE - 2, 997)
    compiled0 = compiler.compile_count()

    def configure(block, vec_unroll, unroll):
        ew.tuning.BLOCK, ew.tuning.ROWS_VEC_UNROLL, ew.tuning.ROWS_UNROLL = block, vec_unroll, unroll
        ew.fast_path.plans.clear()  # plans hold the launch shape they were made with

    checked, times, copy_ms = {}, {}, {}
    for rnd in range(args.rounds):
        for name, (nbytes, _, _) in cases.items():  # each round against its own copy
            copy_ms.setdefault(name, []).append(H.copy_time(nbytes // 8, args.reps))
        order = settings if rnd % 2 == 0 else settings[::-1]
        for setting in order:
            configure(*setting)
            for name, (_, fn, ref) in cases.items():
                if (setting, name) not in checked:
                    got = np.asarray(fn(xp, m).to_device("cpu"))[sample]
                    checked[setting, name] = bool(np.array_equal(got, ref(sample)))
                times.setdefault((setting, name), []).append(
                    H.gpu_time("arrayx", lambda fn=fn: fn(xp, m), reps=args.reps))
    configure(*SETTINGS[0])  # the module's defaults
    torch_ms = {}
    if H.torch is not None:
        tm = H.torch.from_dlpack(m)
        for name, (_, fn, _) in cases.items():
            torch_ms[name] = H.gpu_time("torch", lambda fn=fn: fn(H.torch, tm), reps=args.reps)
    compiled = compiler.compile_count() - compiled0

    print(f"\n==== elementwise rows-layout sweep ({H.dev.name}), {SIDE} x {SIDE} float32")
    rounds = range(1, args.rounds + 1)
    print("| case | BLOCK x ROWS_VEC_UNROLL x ROWS_UNROLL | "
          + " | ".join(f"round {r} ms | of copy" for r in rounds) + " | check |")
    print("| --- | --- | " + "--- | --- | " * args.rounds + "--- |")
    for name in cases:
        c = copy_ms[name]
        for setting in settings:
            cells = " | ".join(f"{t:.4f} | {ct / t:.3f}" for t, ct in zip(times[setting, name], c))
            print(f"| {name} | {' x '.join(map(str, setting))} | {cells} | "
                  f"{'ok' if checked[setting, name] else 'FAIL'} |")
        if name in torch_ms:
            print(f"| {name} | PyTorch | {torch_ms[name]:.4f} | {c[-1] / torch_ms[name]:.3f} | "
                  + "| | " * (args.rounds - 1) + "|")
    print(f"kernels compiled during the sweep: {compiled}")


if __name__ == "__main__":
    main()
