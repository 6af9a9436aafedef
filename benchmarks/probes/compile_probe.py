"""Where arrayx.compile's large-array times come from (issue 19), knob by knob, on the GPU.

    python3 benchmarks/probes/compile_probe.py [--reps 20]

1. The row family's kernels that compiled row functions become (arrayx.softmax, log_softmax,
   logsumexp, nn.layer_norm, nn.rms_norm on 16384 x 4096 float32), with the rows tuning knobs
   at their defaults and moved one at a time (LOAD_HINT, OCCUPANCY_THREADS,
   MERGED_STATISTICS), as ms and as a ratio to this run's copy of the same bytes.
2. Fused elementwise programs of three inputs and of one (compiled a*b + c and gelu on 2^26
   float32) with the elementwise template's VEC_UNROLL and BLOCK moved.

Prints a table per part; nothing is written.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))

from harness import Harness  # noqa: E402

ROW_SETTINGS = [("defaults", {}), ("LOAD_HINT=''", {"LOAD_HINT": ""}),
                ("OCCUPANCY_THREADS=1536", {"OCCUPANCY_THREADS": 1536}),
                ("MERGED_STATISTICS=True", {"MERGED_STATISTICS": True})]
EW_SETTINGS = [(u, b) for u in (1, 2, 4) for b in (256, 512)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=20)
    a = p.parse_args()
    import numpy as np

    import arrayx as xp
    from arrayx._registry import set_host_fallback
    from arrayx.cuda.kernels.elementwise import tuning as ew_tuning
    from arrayx.cuda.kernels.rows import plans, tuning
    from compile_bench import api_functions
    set_host_fallback("error")
    H = Harness("compile probe")
    rng = np.random.default_rng(0)
    M, K = 16384, 4096
    x = xp.asarray(rng.standard_normal((M, K)).astype(np.float32))
    w = xp.asarray(rng.standard_normal(K).astype(np.float32))
    b = xp.asarray(rng.standard_normal(K).astype(np.float32))
    H.copy_time(M * K, reps=int(1.0 / 0.14e-3))  # the clock up from idle before any figure
    copy = H.copy_time(M * K, a.reps)
    fns = {"softmax": lambda: xp.softmax(x), "log_softmax": lambda: xp.log_softmax(x),
           "logsumexp": lambda: xp.logsumexp(x, keepdims=True),
           "layer_norm": lambda: xp.nn.layer_norm(x, w, b, eps=1e-5),
           "rms_norm": lambda: xp.nn.rms_norm(x, w, eps=1e-5)}
    defaults = {n: getattr(tuning, n) for _, knobs in ROW_SETTINGS for n in knobs}
    table = {}
    for label, knobs in ROW_SETTINGS:
        for n, v in {**defaults, **knobs}.items():
            setattr(tuning, n, v)
        plans.layout.cache_clear()
        for name, fn in fns.items():
            ms = H.gpu_time("arrayx", fn, reps=a.reps)
            half = name == "logsumexp"  # reads the rows once, writes a column
            table[name, label] = (ms, (copy / 2 if half else copy) / ms)
    for n, v in defaults.items():
        setattr(tuning, n, v)
    plans.layout.cache_clear()
    print(f"\nrow functions, {M} x {K} float32 (copy of the rows {copy:.3f} ms): ms (of copy)")
    print("| function | " + " | ".join(lb for lb, _ in ROW_SETTINGS) + " |")
    for name in fns:
        print(f"| {name} | " + " | ".join(f"{table[name, lb][0]:.3f} ({table[name, lb][1]:.2f})"
                                          for lb, _ in ROW_SETTINGS) + " |")
    del x
    api = api_functions(xp)
    n = 1 << 26
    v = [xp.asarray(rng.standard_normal(n).astype(np.float32)) for _ in range(3)]
    copy = H.copy_time(n, a.reps)
    cases = {"a*b + c": (api["a*b + c"], v, 4), "gelu": (api["gelu"], v[:1], 2)}
    u0, b0 = ew_tuning.VEC_UNROLL, ew_tuning.BLOCK
    print(f"\nfused elementwise, 2^26 float32 (copy {copy:.3f} ms): ms (of copy at the bytes)")
    print("| function | " + " | ".join(f"U={u} B={bl}" for u, bl in EW_SETTINGS) + " |")
    for name, (fn, args, arrays) in cases.items():
        cells = []
        for u, bl in EW_SETTINGS:
            ew_tuning.VEC_UNROLL, ew_tuning.BLOCK = u, bl
            cf = xp.compile(fn)
            ms = H.gpu_time("arrayx", lambda: cf(*args), reps=a.reps)
            cells.append(f"{ms:.3f} ({copy * arrays / 2 / ms:.2f})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    ew_tuning.VEC_UNROLL, ew_tuning.BLOCK = u0, b0


if __name__ == "__main__":
    main()
