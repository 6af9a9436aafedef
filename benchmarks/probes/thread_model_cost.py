"""What the thread model costs a single thread's small ops, measured in one process (issue 20).

    python3 benchmarks/probes/thread_model_cost.py [--calls 800] [--rounds 15] [--log2n 12]

Host microseconds per call of sqrt, x + x and sum on 2^log2n float32 elements, with the runtime
as it is ("threaded") and with the two per-launch costs of the thread model taken out
("unlocked": the encoder lock a launch takes, and the per-thread current-stream lookup, replaced
by a plain attribute). The variants alternate round by round in one process, so the machine's
drift between processes (up to 1.8x on the H200 machines) does not enter the difference;
prints the best and the median of the rounds for each. The unlocked variant is only safe with
one thread: it exists here, not in the runtime.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import numpy as np  # noqa: E402


def unlocked_call(self, stream, grid, block, args, keep, nbytes=0):
    """launcher.Kernel.__call__ without the encoder lock (one thread only)."""
    if grid == 0:
        return
    enc = stream.encoder
    deferred = enc.deferred
    if deferred is not None and nbytes < enc.direct_bytes:
        deferred.append((self, grid, block, args))
    else:
        if deferred:
            enc.commit()
        self.launch_raw(enc.arguments, grid, block, stream.handle, args)
    enc.keep.append((self, keep))
    enc.ops += 1
    enc.bytes += nbytes
    if enc.ops >= enc.batch_ops or enc.bytes >= enc.batch_bytes:
        enc.commit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=800)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--log2n", type=int, default=12)
    args = ap.parse_args()
    import arrayx as xp
    from arrayx.cuda.engine import launcher, runtime
    x = xp.asarray(np.random.default_rng(0).standard_normal(1 << args.log2n, dtype=np.float32),
                   device="cuda:0")
    dev = runtime.get_device(0)
    threaded_call, threaded_local = launcher.Kernel.__call__, dev.local
    plain_local = types.SimpleNamespace(stream=None, entered=[])
    variants = {"threaded": (threaded_call, threaded_local), "unlocked": (unlocked_call, plain_local)}
    cases = {"sqrt": lambda: xp.sqrt(x), "add": lambda: x + x, "sum": lambda: xp.sum(x)}

    def timed(fn):
        start = time.perf_counter()
        for i in range(args.calls):
            fn()
            if i % 100 == 99:
                runtime.synchronize()
        runtime.synchronize()
        return (time.perf_counter() - start) / args.calls * 1e6

    times = {(case, v): [] for case in cases for v in variants}
    t_end = time.perf_counter() + 2.0
    while time.perf_counter() < t_end:  # warm-up: compiles, clocks, allocator
        for fn in cases.values():
            timed(fn)
    for _ in range(args.rounds):
        for name, (call, local) in variants.items():
            launcher.Kernel.__call__, dev.local = call, local
            for case, fn in cases.items():
                times[(case, name)].append(timed(fn))
    launcher.Kernel.__call__, dev.local = threaded_call, threaded_local
    print(f"us per call, {args.rounds} alternating rounds of {args.calls} calls, "
          f"2^{args.log2n} float32: best / median")
    for case in cases:
        row = [f"{v} {min(times[(case, v)]):.2f} / {statistics.median(times[(case, v)]):.2f}"
               for v in variants]
        ratio = statistics.median(times[(case, "threaded")]) / \
            statistics.median(times[(case, "unlocked")])
        print(f"  {case}: " + ", ".join(row) + f"; threaded / unlocked medians {ratio:.3f}")


if __name__ == "__main__":
    main()
