"""Host cost of one call, step by step: where the Python time before a kernel launch goes.

    python3 benchmarks/probes/host_profile.py [--calls 3000] [--top 18]   (on the GPU machine; ~30 s)

For each case (sqrt, x + x, sum, argmax, column sums, cumulative_sum of 2^20 float32 by default,
small enough that the GPU keeps up with the host; arrays with Python scalars, `1 + x`, `1 / x`,
`2.0 * x`; the products of a (2^log2n / 64) x 64 matrix with vectors, `X @ w` and `r @ X`, which
go to cuBLAS; and one step of logistic-regression gradient descent, nine calls of both kinds) prints the host microseconds per call (best of 3
runs of `--calls` calls, synchronising every 100 calls so the queue stays short), then a
cProfile of the same calls: the functions with the most own time, per call. The probe
(latency_probe.py) shows how much of a single call's time is this host latency.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--top", type=int, default=18)
    ap.add_argument("--only", default="")
    ap.add_argument("--log2n", type=int, default=20,
                    help="elements of x as a power of two (a 2^28 run shows blocking driver calls; "
                         "use fewer --calls)")
    args = ap.parse_args()
    import arrayx as xp
    from arrayx._registry import set_host_fallback
    from arrayx.cuda.engine import runtime
    set_host_fallback("error")
    n = 1 << args.log2n
    x = xp.asarray(np.random.default_rng(0).standard_normal(n, dtype=np.float32), device="cuda:0")
    m = xp.reshape(x, (1 << args.log2n // 2, -1))
    X = xp.reshape(x, (-1, 64))
    w = x[:64]
    r = x[:X.shape[0]]
    y = xp.astype(r > 0, xp.float32)

    def logistic_step():
        p = 1 / (1 + xp.exp(-(X @ w)))
        return w - (0.5 / X.shape[0]) * ((p - y) @ X)

    cases = {
        "sqrt": lambda: xp.sqrt(x),
        "add": lambda: x + x,
        "sum": lambda: xp.sum(x),
        "argmax": lambda: xp.argmax(x),
        "colsum": lambda: xp.sum(m, axis=0),
        "cumsum": lambda: xp.cumulative_sum(x),
        "radd": lambda: 1 + x,
        "rdiv": lambda: 1 / x,
        "scale": lambda: 2.0 * x,
        "gemv": lambda: X @ w,
        "vecmat": lambda: r @ X,
        "logistic": logistic_step,
    }
    only = set(args.only.split(",")) if args.only else None

    def run(fn):
        for i in range(args.calls):
            fn()
            if i % 100 == 99 or args.log2n > 24:
                runtime.synchronize()
        runtime.synchronize()

    for name, fn in cases.items():
        if only and name not in only:
            continue
        run(fn)
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            run(fn)
            best = min(best, time.perf_counter() - t0)
        prof = cProfile.Profile()
        prof.enable()
        run(fn)
        prof.disable()
        out = io.StringIO()
        stats = pstats.Stats(prof, stream=out)
        stats.sort_stats("tottime").print_stats(args.top)
        print(f"==== {name}: {best / args.calls * 1e6:.2f} us per call (host, no profiler)")
        lines = out.getvalue().splitlines()
        start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
        for line in lines[start:start + args.top + 1]:
            print("   ", line[:150])


if __name__ == "__main__":
    main()
