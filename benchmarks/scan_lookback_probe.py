"""Where the row scan's time goes: the plain-row float32 sum kernel (arrayx/cuda/scan.py row_spec)
and variants of its source, launched directly and timed back to back on 2^28 elements.

    python3 benchmarks/scan_lookback_probe.py [V ...]     (on the GPU machine; ~1 min)

For each tile size V (16-byte vectors a thread, ONE_ROW_VECTORS; default 11 8 6 4) times:
* ``scan``: the kernel as cumulative_sum launches it (status words zeroed, then the scan);
* ``no look-back``: the same source with the look-back cut out (each tile scans alone: wrong
  results; the time of the tile's own loads, scan and stores);
* ``blockIdx tiles``: tile ids from blockIdx.x instead of the atomic counter.
Each line gives microseconds per call (10 calls between two events, median of 5), the ratio to
the device-to-device copy of the same bytes in the same run, and whether sampled elements match
a float64 cumulative sum. The difference between the first two lines is the look-back's cost.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from harness import Harness  # noqa: E402

LOG2N = 28
PIPELINE = 10
VARIANTS = {
    "scan": lambda src: src,
    "no look-back": lambda src: src.replace("if int32(tile == 0) == 0:", "if False:"),
    "blockIdx tiles": lambda src: src.replace(
        "sh_t[0] = int64(atom_add(status, int64(0), uint64(1)))",
        "sh_t[0] = int64(cuda.blockIdx.x)"),
}


def main():
    import arrayx as xp
    from arrayx.cuda import compiler, elementwise, runtime, scan, transfer
    from arrayx.cuda.array import new_array
    f32 = np.dtype("float32")
    H = Harness("arrayx row-scan look-back probe")
    dev = runtime.get_device(0)
    n = 1 << LOG2N
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    ref = np.cumsum(host, dtype=np.float64)
    sample = np.r_[np.arange(0, n, 99991), n - 1]
    src = xp.asarray(host, device="cuda:0")._data
    dst = xp.empty(n, dtype=xp.float32, device="cuda:0")._data
    copy_ms = H.copy_ceiling(n, 10)["value"]
    default_v = scan.ONE_ROW_VECTORS
    rows = []
    for V in [int(v) for v in sys.argv[1:]] or [11, 8, 6, 4]:
        scan.ONE_ROW_VECTORS = V
        spec = scan.row_spec("sum", f32, f32, False, "v", "v", 32, False, None)
        _, V, T = scan.row_params(f32, f32, 0, True)
        scan.ONE_ROW_VECTORS = default_v
        tiles = -(-n // (T * V * 4))
        status = new_array(0, (1 + tiles,), np.dtype("uint64"), dev.allocator)
        for label, edit in VARIANTS.items():
            name = f"{spec.name}_{label.replace(' ', '_').replace('-', '')}"
            variant = compiler.KernelSpec(name, edit(spec.source).replace(spec.name, name), name,
                                          spec.argtypes)
            kern = compiler.get_kernel(variant, 0)

            def one(kern=kern):
                elementwise.zero_scratch(dev, status)
                kern(dev.stream, tiles, T, (dst.ptr, src.ptr, status.ptr, n, n, 1, 1, 1, 1),
                     (dst.buffer, src.buffer, status.buffer), 8 * n)

            def burst():
                for _ in range(PIPELINE):
                    one()

            one()
            ok = bool(np.allclose(transfer.to_host(dst)[sample], ref[sample], rtol=1e-4))
            ms = H.gpu_time("arrayx", burst, warmup=1, reps=5) / PIPELINE
            rows.append((V, label, ms, ok))
            print(f"  {V:3d} {label:16s} {ms * 1000:8.1f} us {copy_ms / ms:6.3f} of copy  "
                  f"{'matches' if ok else 'differs'}", flush=True)
    print(f"\n==== row-scan look-back probe ({H.dev.name}); copy of {n * 4 >> 20} MiB "
          f"{copy_ms * 1000:.1f} us")
    print("| vectors a thread | variant | us a call | of copy | result |")
    print("| --- | --- | --- | --- | --- |")
    for V, label, ms, ok in rows:
        print(f"| {V} | {label} | {ms * 1000:.1f} | {copy_ms / ms:.3f} | "
              f"{'matches' if ok else 'differs'} |")


if __name__ == "__main__":
    main()
