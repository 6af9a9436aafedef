"""Data-parallel statistics of one large array split across ranks (arrayx.distributed).

    python -m arrayx.distributed.run -n 2 examples/distributed_sum.py               # a GPU a rank
    python -m arrayx.distributed.run -n 4 --device cpu examples/distributed_sum.py  # processes
    python examples/distributed_sum.py                                              # one rank

The array is x[i] = (i % 1000) / 1000 for i < --elements (float64). Rank r makes only its
shard, the r-th of size() consecutive slices, on its own device; the ranks then combine
(count, sum, sum of squares) with one all_reduce, the shards' minima and maxima with two more,
and each rank's timing with an all_gather. Rank 0 prints the mean, the std, the range and the
time, and checks them against the exact values (integer arithmetic on the formula): exit
status 1 if they differ by more than float64 rounding.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

import arrayx as xp  # noqa: E402
import arrayx.distributed as dist  # noqa: E402

PERIOD = 1000


def shard(n: int, rank: int, size: int):
    """This rank's slice [start, stop) of the global index range."""
    return n * rank // size, n * (rank + 1) // size


def exact_moments(n: int):
    """(mean, variance) of (i % PERIOD) / PERIOD over i < n, from integer sums."""
    full, rest = divmod(n, PERIOD)
    s1 = full * (PERIOD - 1) * PERIOD // 2 + rest * (rest - 1) // 2
    s2 = full * sum(k * k for k in range(PERIOD)) + sum(k * k for k in range(rest))
    mean = s1 / n / PERIOD
    var = (s2 * n - s1 * s1) / (n * n) / PERIOD**2
    return mean, var


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=2**27,
                        help="length of the global array (default 2^27: 1 GiB of float64)")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats (default 3)")
    opts = parser.parse_args()
    if opts.elements < dist.size():
        parser.error(f"--elements must be at least the number of ranks ({dist.size()})")

    rank, size = dist.rank(), dist.size()
    start, stop = shard(opts.elements, rank, size)
    times = []
    for _ in range(opts.repeats):
        dist.barrier()
        t0 = time.perf_counter()
        x = xp.astype(xp.arange(start, stop, dtype=xp.int64) % PERIOD, xp.float64) / PERIOD
        local = xp.stack([xp.asarray(float(x.shape[0]), device=x.device), xp.sum(x),
                          xp.sum(x * x)])
        count, total, squares = (float(v) for v in dist.all_reduce(local))
        low = float(dist.all_reduce(xp.min(x), "min"))
        high = float(dist.all_reduce(xp.max(x), "max"))
        times.append(time.perf_counter() - t0)
    mean = total / count
    std = math.sqrt(max(squares / count - mean * mean, 0.0))
    seconds = dist.all_gather(xp.asarray(min(times), device="cpu"))

    if rank == 0:
        want_mean, want_var = exact_moments(opts.elements)
        want_max = (min(opts.elements, PERIOD) - 1) / PERIOD
        gb = opts.elements * 8 / 1e9
        slowest = float(xp.max(seconds))
        print(f"{size} rank(s) on {x.device} (rank 0), {opts.elements} float64 elements "
              f"({gb:.2f} GB): mean {mean:.12f} (exact {want_mean:.12f}), std {std:.12f} "
              f"(exact {math.sqrt(want_var):.12f}), range [{low}, {high}]")
        print(f"time (best of {opts.repeats}, slowest rank): {slowest * 1e3:.1f} ms, "
              f"{gb / slowest:.1f} GB/s; per rank: "
              + ", ".join(f"{t * 1e3:.1f}" for t in np.asarray(seconds)) + " ms")
        good = (int(count) == opts.elements and abs(mean - want_mean) <= 1e-12
                and abs(std - math.sqrt(want_var)) <= 1e-9 and low == 0.0 and high == want_max)
        print("ok" if good else "MISMATCH")
        sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
