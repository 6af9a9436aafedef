"""Where a row-scan tile's time goes: the one-row float32 cumulative_sum kernel (row_spec with
its look-back warp) built with scan.PhaseTrace, which stamps %globaltimer at scan.TRACE_PHASES for each
tile. Run on the GPU:

    python benchmarks/probes/scan_phase_probe.py [--log2n 28] [--runs 3]

Launches the traced kernel on 2^log2n float32 (checked against NumPy's float64 cumsum) --runs
times, then, from the last run, prints the kernel's span and, for each phase, percentiles of its
duration over the tiles (microseconds), the mean time a tile is held (claimed -> stored) and the
tiles held at once (the sum of hold times over the span), beside the untraced kernel's time
(CUDA events around one launch, as scan_bench). The trace costs a few stores a tile.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=28)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()

    import arrayx as xp
    from arrayx.cuda.engine import runtime, transfer
    from arrayx.cuda.kernels import scan
    from arrayx.cuda.engine.array import new_array

    n = 1 << a.log2n
    f32 = np.dtype("float32")
    host = np.random.default_rng(1).standard_normal(n).astype(f32)
    x = xp.asarray(host, device="cuda:0")
    out = xp.empty_like(x)
    dev = runtime.get_device(0)
    stream = dev.stream
    N, V, T = scan.row_params(f32, f32, plain_row=True)
    tiles = -(-n // (T * V * N))
    P = len(scan.TRACE_PHASES)
    trace = new_array(0, (tiles * P,), np.dtype("int64"), dev.allocator)
    for _ in range(a.runs):
        scan.row_scan("sum", x._data, out._data, trace=trace)  # the CudaArrays
    stream.synchronize()
    got = np.asarray(out.to_device("cpu"))
    want = np.cumsum(host.astype(np.float64))
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    stamps = transfer.to_host(trace).reshape(tiles, P).astype(np.int64)

    # the untraced kernel, one launch between CUDA events (what scan_bench times, less the host)
    d = runtime.driver()
    ev0 = runtime.check(d.cuEventCreate(0), "cuEventCreate")
    ev1 = runtime.check(d.cuEventCreate(0), "cuEventCreate")
    times = []
    for _ in range(5):
        stream.synchronize()
        d.cuEventRecord(ev0, stream.handle)
        xp.cumulative_sum(x)
        stream.encoder.commit()
        d.cuEventRecord(ev1, stream.handle)
        d.cuEventSynchronize(ev1)
        times.append(runtime.check(d.cuEventElapsedTime(ev0, ev1), "cuEventElapsedTime"))

    span = (stamps[:, -1].max() - stamps[:, 0].min()) / 1e3
    hold = (stamps[:, -1] - stamps[:, 0]) / 1e3
    print(f"==== row-scan phases: 2^{a.log2n} float32, tile {T} x {V} x {N} + look-back warp, "
          f"{tiles} tiles, {dev.multiprocessor_count} SMs; max rel err {err:.1e}")
    print(f"untraced cumulative_sum, one call: {min(times) * 1e3:.0f} us (best of 5); traced "
          f"kernel span {span:.0f} us; %globaltimer resolution seen: "
          f"{np.min(np.diff(np.unique(stamps[:, 0]))):d} ns")
    print(f"{'phase (us)':34s} {'p10':>7s} {'p50':>7s} {'p90':>7s} {'mean':>7s}")
    for k in range(1, P):
        dt = (stamps[:, k] - stamps[:, k - 1]) / 1e3
        q = np.percentile(dt, [10, 50, 90])
        print(f"{scan.TRACE_PHASES[k - 1] + ' -> ' + scan.TRACE_PHASES[k]:34s} "
              f"{q[0]:7.2f} {q[1]:7.2f} {q[2]:7.2f} {dt.mean():7.2f}")
    q = np.percentile(hold, [10, 50, 90])
    print(f"{'held (claimed -> stored)':34s} {q[0]:7.2f} {q[1]:7.2f} {q[2]:7.2f} {hold.mean():7.2f}")
    print(f"tiles held at once, on average: {hold.sum() / span:.0f} "
          f"({hold.sum() / span / dev.multiprocessor_count:.2f} an SM)")
    # how far behind the claim order the look-backs run: for each tile, how many tiles were
    # claimed between its claim and its prefix
    order = np.sort(stamps[:, 0])
    behind = np.searchsorted(order, stamps[:, 3]) - np.searchsorted(order, stamps[:, 0])
    q = np.percentile(behind, [10, 50, 90])
    print(f"tiles claimed while a tile waited for its prefix: p10 {q[0]:.0f}, p50 {q[1]:.0f}, "
          f"p90 {q[2]:.0f}")


if __name__ == "__main__":
    main()
