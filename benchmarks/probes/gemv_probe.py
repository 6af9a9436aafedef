"""Matrix-vector products of tall-skinny matrices: the GPU time of each library's kernel.

    python3 benchmarks/probes/gemv_probe.py [--calls 200] [--shapes 200000x64,16384x64]  (GPU machine)

Logistic regression's gradient steps are `X @ w` and `r @ X` with X tall and skinny (200k x
64). For each shape, dtype and product this prints the microseconds per call of arrayx, PyTorch
and CuPy, two ways:
* back to back: `--calls` calls between two syncs, over the calls (the GPU's rate once the
  host keeps ahead; the kernel's own time);
* single: one call then a sync, median of `--calls` (what a program that waits sees);
and the time of a copy of X, which reads and writes it: a product that reads X once at the
copy's bandwidth takes half of that.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))

from harness import Harness  # noqa: E402


def per_call_us(fn, sync, calls):
    """(back to back, single) microseconds per call: `calls` calls between two syncs, and the
    median of `calls` single calls each followed by a sync."""
    back_to_back = Harness.host_time(fn, sync, n=calls, warmup=1, repeats=1)
    single = Harness.wall_time(fn, sync, warmup=0, reps=calls)["median"] * 1e3
    return back_to_back, single


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--shapes", default="200000x64,16384x64,200000x32,4096x4096")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--device", default="cuda:0")
    args = ap.parse_args()

    import numpy as np

    import arrayx as xp
    libs = {}
    dev = args.device

    if xp.Device(dev).kind == "cuda":
        from arrayx.cuda.engine.runtime import synchronize as ax_sync
    else:
        def ax_sync():
            pass

    libs["arrayx"] = (lambda h: xp.asarray(h, device=dev), ax_sync,
                      lambda x: xp.asarray(x, copy=True))
    try:
        import torch
        libs["torch"] = (lambda h: torch.as_tensor(h, device="cuda"), torch.cuda.synchronize,
                         lambda x: x.clone())
    except ImportError:
        pass
    try:
        import cupy
        libs["cupy"] = (cupy.asarray, cupy.cuda.Device().synchronize, lambda x: x.copy())
    except ImportError:
        pass

    for shape_s in args.shapes.split(","):
        m, n = map(int, shape_s.split("x"))
        for dt in args.dtypes.split(","):
            rng = np.random.default_rng(0)
            X = rng.standard_normal((m, n)).astype(dt)
            w = rng.standard_normal(n).astype(dt)
            r = rng.standard_normal(m).astype(dt)
            for name, (put, sync, copy) in libs.items():
                Xd, wd, rd = put(X), put(w), put(r)
                cases = (("copy of X", lambda: copy(Xd)), ("X @ w", lambda: Xd @ wd),
                         ("r @ X", lambda: rd @ Xd))
                for case, fn in cases:
                    b2b, single = per_call_us(fn, sync, args.calls)
                    print(f"{m} x {n} {dt:8} {case:10} {name:7} back to back {b2b:9.2f} us  "
                          f"single {single:9.2f} us", flush=True)


if __name__ == "__main__":
    main()
