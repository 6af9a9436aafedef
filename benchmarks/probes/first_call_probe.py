"""Where the first calls of a fresh process go (issue 23), step by step, wall-clock ms.

    python3 benchmarks/probes/first_call_probe.py matmul|sort   (GPU machine; run it twice: the
                                                                 second process finds the cache)

Times `import arrayx`, the first array on cuda (1000 float32 from a list, then a read of one
element back), then either the first and second `x @ x` (a vector dot) and the first 64 x 64
product (`matmul`), or the first and second `sort(x)` and whether cuda.compute was imported
(`sort`). Each step ends with a device-to-host read, so the time includes the GPU's work.
`coldstart_bench.py` measures every family's first call beside CuPy and PyTorch; this probe says
how one family's first call splits (the library's load, its set-up, the call).
"""

import sys
import time


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "matmul"
    if what not in ("matmul", "sort"):
        raise SystemExit("usage: first_call_probe.py matmul|sort")
    t = time.perf_counter
    t0 = t()
    import arrayx as xp
    t1 = t()
    x = xp.asarray(list(range(1000)), dtype=xp.float32, device="cuda:0")
    float(x[0])
    t2 = t()
    line = f"[{what}] import {1e3 * (t1 - t0):.1f} ms, first array {1e3 * (t2 - t1):.1f} ms; "
    if what == "matmul":
        a = t()
        float(x @ x)
        b = t()
        float(x @ x)
        c = t()
        m = xp.ones((64, 64), dtype=xp.float32, device="cuda:0")
        float(m[0, 0])
        d = t()
        float((m @ m)[0, 0])
        e = t()
        line += (f"first x @ x {1e3 * (b - a):.1f}, second {1e3 * (c - b):.1f}, "
                 f"first 64 x 64 product {1e3 * (e - d):.1f} ms")
    else:
        a = t()
        float(xp.sort(x)[0])
        b = t()
        float(xp.sort(x)[0])
        c = t()
        line += (f"first sort {1e3 * (b - a):.1f}, second {1e3 * (c - b):.1f} ms; cuda.compute "
                 f"imported: {'cuda.compute' in sys.modules}")
    print(line, flush=True)


if __name__ == "__main__":
    main()
