"""Sorts of short rows (arrayx/cuda/kernels/sort/block.py, rows up to 2048 elements) against
arrayx's radix path for the same rows, CuPy and PyTorch.

    python3 benchmarks/probes/short_sort_probe.py [--calls 50] [--shapes 1x1000,8192x2048,65536x256]

For each rows x length shape (float32 and int64, sort and argsort along the last axis) this
prints the microseconds per call, two ways (as gemv_probe.py): back to back (`--calls` calls
between two syncs: the GPU's rate) and single (one call then a sync, median of `--calls`: what a
program that waits sees). "arrayx radix" is the same call with the short-row path switched off
(block.MAX_ROW set to 1), so it sorts through CUB as long rows of large sorts do
(block.fits).
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))

from gemv_probe import per_call_us  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--shapes", default="1x1000,1x2048,8192x2048,65536x256,1000000x8")
    ap.add_argument("--dtypes", default="float32,int64")
    args = ap.parse_args()

    import numpy as np

    import arrayx as xp
    from arrayx.cuda.engine.runtime import synchronize as ax_sync
    from arrayx.cuda.kernels.sort import block

    libs = {"arrayx": (lambda h: xp.asarray(h, device="cuda:0"), ax_sync, xp.sort, xp.argsort)}
    try:
        import torch
        libs["torch"] = (lambda h: torch.as_tensor(h, device="cuda"), torch.cuda.synchronize,
                         lambda x: torch.sort(x, stable=True).values,
                         lambda x: torch.argsort(x, stable=True))
    except ImportError:
        pass
    try:
        import cupy
        libs["cupy"] = (cupy.asarray, cupy.cuda.Device().synchronize, cupy.sort, cupy.argsort)
    except ImportError:
        pass

    short_row = block.MAX_ROW
    for shape_s in args.shapes.split(","):
        rows, n = map(int, shape_s.split("x"))
        for dt in args.dtypes.split(","):
            rng = np.random.default_rng(0)
            h = rng.standard_normal((rows, n)).astype(dt) if dt.startswith("float") else \
                rng.integers(-10 ** 9, 10 ** 9, (rows, n)).astype(dt)
            runs = [(name, lib, short_row) for name, lib in libs.items()]
            runs.insert(1, ("arrayx radix", libs["arrayx"], 1))
            for name, (put, sync, sort, argsort), limit in runs:
                block.MAX_ROW = limit
                x = put(h)
                for case, fn in (("sort", lambda: sort(x)), ("argsort", lambda: argsort(x))):
                    b2b, single = per_call_us(fn, sync, args.calls)
                    print(f"{rows} x {n} {dt:8} {case:8} {name:13} back to back {b2b:10.2f} us  "
                          f"single {single:10.2f} us", flush=True)
            block.MAX_ROW = short_row


if __name__ == "__main__":
    main()
