"""Where the time of one call goes: the GPU timeline of single, event-timed calls.

    python3 benchmarks/probes/latency_probe.py          (on the GPU machine; about 30 s)

For each case (sum, argmax, row and column sums of 2^28 float32, cumulative_sum, x + x,
x[1:] + x[1:], where, sqrt, sin, a transposed copy of a 16k x 16k matrix, a batched 1024 x 64^3
float32 product) prints, in microseconds:
* ``1 call``: CUDA events around one call, as the kernel-family benchmarks time it (the GPU
  waits while the host prepares the first launch);
* ``busy-first``: the same with a large multiply queued before the start event, so the host's
  latency is hidden (the multiply's dirty L2 lines are written back during the timed call, which
  adds ~10 us to read-only kernels);
* ``direct mode``: one call with the encoder in 'direct' submission mode;
* ``host``: the host time of the call alone (no sync; best of 50).
Then a CUPTI kernel trace (through torch.profiler, which records every kernel of the process,
ours included) of three timed calls per case, CuPy's and PyTorch's sum and cumsum too: each
kernel's start, duration and the gap before it (PyTorch's sqrt and add too). The gap between a call's kernels is host time
the GPU waited for; the difference between ``1 call`` and the kernels' span is the latency
before the first one. Set TRACE_ONLY=name,... to time and trace some cases only, SKIP_EVENTS=1 to skip the
table.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402

from harness import Harness  # noqa: E402


def main():
    import torch
    from torch.profiler import ProfilerActivity, profile

    import arrayx as xp
    from arrayx.cuda.engine import encoder, runtime

    dev = runtime.get_device(0)
    n = 1 << 28
    x = xp.asarray(np.random.default_rng(0).random(n, dtype=np.float32), device="cuda:0")
    mask = x > 0.5
    side = 1 << 14
    m = xp.reshape(x, (side, side))
    a3 = xp.asarray(np.random.default_rng(1).random((1024, 64, 64), dtype=np.float32),
                    device="cuda:0")
    cases = {
        "sum": lambda: xp.sum(x),
        "argmax": lambda: xp.argmax(x),
        "rowsum": lambda: xp.sum(m, axis=1),
        "colsum": lambda: xp.sum(m, axis=0),
        "cumsum": lambda: xp.cumulative_sum(x),
        "add": lambda: x + x,
        "offset add": lambda: x[1:] + x[1:],
        "where": lambda: xp.where(mask, x, x),
        "sqrt": lambda: xp.sqrt(x),
        "sin": lambda: xp.sin(x),
        "transpose": lambda: xp.asarray(m.T, copy=True),
        "bmm": lambda: a3 @ a3,
    }

    def busy():
        return x * 2.0

    H = Harness("latency probe")

    def event_us(fn, before=None):
        return H.gpu_time("arrayx", fn, reps=15, before=before) * 1000

    def host_us(fn, reps=50):
        fn()
        runtime.synchronize()
        best = float("inf")
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
            runtime.synchronize()
            best = min(best, (t1 - t0) * 1e6)
        return best

    only = os.environ.get("TRACE_ONLY")
    only = set(only.split(",")) if only else None
    if not os.environ.get("SKIP_EVENTS"):
        print("| case | 1 call us | busy-first us | direct mode 1 call us | host us |")
        print("| --- | --- | --- | --- | --- |")
        for name, fn in cases.items():
            if only and name not in only:
                continue
            one = event_us(fn)
            hidden = event_us(fn, before=busy)
            encoder.set_mode("direct")
            direct = event_us(fn)
            encoder.set_mode("graph")
            print(f"| {name} | {one:.1f} | {hidden:.1f} | {direct:.1f} | {host_us(fn):.1f} |",
                  flush=True)

    import cupy as cp
    xc, xt = cp.from_dlpack(x), torch.from_dlpack(x)
    cases.update({"cupy_sum": lambda: cp.sum(xc), "torch_sum": lambda: torch.sum(xt),
                  "cupy_cumsum": lambda: cp.cumsum(xc), "torch_cumsum": lambda: torch.cumsum(xt, 0),
                  "torch_sqrt": lambda: torch.sqrt(xt), "torch_add": lambda: xt + xt})
    for name, fn in cases.items():
        if only and name not in only:
            continue
        for _ in range(3):
            fn()
        runtime.synchronize()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                s, e = runtime.Event(0, timing=True), runtime.Event(0, timing=True)
                s.record(dev.stream)
                fn()
                e.record(dev.stream)
                e.synchronize()
                torch.cuda.synchronize()
        path = f"/tmp/trace-{name}.json"
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = [ev for ev in json.load(f)["traceEvents"]
                      if ev.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        events.sort(key=lambda ev: ev["ts"])
        print(f"== {name}: {len(events)} GPU activities (start us, duration us, gap before)")
        t0 = events[0]["ts"] if events else 0
        prev_end = None
        for ev in events[:12]:
            gap = "" if prev_end is None else f"gap {ev['ts'] - prev_end:8.1f}"
            print(f"  {ev['ts'] - t0:10.1f} dur {ev['dur']:8.1f} {gap:13s} {ev['name'][:60]}")
            prev_end = ev["ts"] + ev["dur"]


if __name__ == "__main__":
    main()
