"""Row-wise cumulative_sum (the segmented row scan: many rows, one launch) with and without the
L2 prefetch of a later tile (arrayx/cuda/scan.py PREFETCH_BYTES, measured on one row). Run on
the GPU:

    python3 benchmarks/scan_rows_probe.py

For 16k x 16k, 2^20 x 256 and 256 x 2^20 float32 (random normal, made by CuPy), alternately with
the module's PREFETCH_BYTES and with 0 (twice each, the kernels compiled per setting): the
median of 20 CUDA-event-timed calls of cumulative_sum(x, axis=1), as a fraction of the
device-to-device copy's bandwidth of the same run (read + write), and the largest absolute
error against CuPy's float64 cumsum.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import Harness  # noqa: E402


def main():
    import cupy as cp

    import arrayx as xp
    from arrayx.cuda import scan
    H = Harness("row-wise cumulative_sum, L2 prefetch on and off")
    copy = H.copy_ceiling(1 << 28, 10)
    default = scan.PREFETCH_BYTES
    for shape in ((16384, 16384), (1 << 20, 256), (256, 1 << 20)):
        x = xp.from_dlpack(cp.random.standard_normal(shape, dtype=cp.float32))
        ref = cp.cumsum(cp.from_dlpack(x).astype(cp.float64), axis=1)
        for prefetch in (default, 0, default, 0):
            scan.PREFETCH_BYTES = prefetch
            got = cp.from_dlpack(xp.cumulative_sum(x, axis=1))
            err = float(cp.max(cp.abs(got - ref)))
            ms = H.gpu_time("arrayx", lambda: xp.cumulative_sum(x, axis=1), reps=20)
            print(f"cumulative_sum axis=1 {shape} float32, prefetch {prefetch >> 20} MiB: "
                  f"{ms:.3f} ms, {2 * x.size * 4 / ms / 1e9 / copy['tb_per_s']:.2f} of copy, "
                  f"max abs err {err:.1e}")
    scan.PREFETCH_BYTES = default


if __name__ == "__main__":
    main()
