"""Row-wise cumulative_sum (many rows, one launch): the segmented row scan against the one-row
kernel for rows that fill whole tiles (arrayx/cuda/kernels/scan/tuning.py ALIGNED_MIN_VECTORS, branch
exp/scan-aligned-rows), beside CuPy and PyTorch. Run on the GPU:

    python3 benchmarks/probes/scan_rows_probe.py

For float32 arrays of the shapes below (random normal, made by CuPy): the median of 20
CUDA-event-timed calls of cumulative_sum(x, axis=1), as a fraction of the device-to-device
copy's bandwidth of the same run (read + write), with the module's ALIGNED_MIN_VECTORS and with
0 (the segmented kernel for every shape), then CuPy's cumsum and PyTorch's torch.cumsum; the
largest absolute error against CuPy's float64 cumsum.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))

from harness import Harness  # noqa: E402

SHAPES = ((16384, 16384), (256, 1 << 20), (1 << 16, 4096), (1 << 15, 8192), (1 << 20, 256))


def main():
    import cupy as cp

    import arrayx as xp
    from arrayx.cuda.kernels.scan import tuning
    H = Harness("row-wise cumulative_sum")
    tbs = H.copy_ceiling(1 << 28, 10)["tb_per_s"]
    default = tuning.ALIGNED_MIN_VECTORS

    def report(label, ms, nbytes, err=""):
        print(f"{label:58s} {ms:8.3f} ms {nbytes / ms / 1e9 / tbs:6.2f} of copy {err}")

    for shape in SHAPES:
        x_cp = cp.random.standard_normal(shape, dtype=cp.float32)
        x = xp.from_dlpack(x_cp)
        nbytes = 2 * x_cp.nbytes
        ref = cp.cumsum(x_cp.astype(cp.float64), axis=1)
        for aligned in (default, 0, default):
            tuning.ALIGNED_MIN_VECTORS = aligned
            err = float(cp.max(cp.abs(cp.from_dlpack(xp.cumulative_sum(x, axis=1)) - ref)))
            ms = H.gpu_time("arrayx", lambda: xp.cumulative_sum(x, axis=1), reps=20)
            report(f"arrayx {shape}, aligned rows {'on' if aligned else 'off'}", ms, nbytes,
                   f"max abs err {err:.1e}")
        report(f"cupy {shape}", H.gpu_time("cupy", lambda: cp.cumsum(x_cp, axis=1)), nbytes)
        if H.torch is not None:
            x_t = H.torch.from_dlpack(x_cp)
            report(f"torch {shape}", H.gpu_time("torch", lambda: H.torch.cumsum(x_t, dim=1)),
                   nbytes)
    tuning.ALIGNED_MIN_VECTORS = default


if __name__ == "__main__":
    main()
