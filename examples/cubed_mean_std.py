"""The mean and standard deviation of an array larger than memory, chunk by chunk, with Cubed
on arrayx.

    python examples/cubed_mean_std.py --size 1GB                        # cpu here, checked with NumPy
    python examples/cubed_mean_std.py --size 200GB --chunk 1GB --device cuda --workers 4

The array is virtual: uniform float32 values in [0, 1) that arrayx.cubed.random draws chunk by
chunk on the worker's device (arrayx.random, one Philox stream per chunk), once for the mean
and once for the std, so nothing of its size is ever stored. Cubed plans the reductions (a mean, and a variance through Welford-style
partial results) so that no task holds more than --allowed-mem, writes each task's small
partial result to Zarr in --work-dir and combines them in rounds. Memory held at once is about
workers x allowed-mem, on the host and (on cuda) on the GPU, whatever --size is.

Printed: the mean and std found, their exact values for the uniform distribution (1/2 and
1/sqrt(12)), the time and the rate in GB/s of the virtual array. Up to --check-limit (1 GB),
the array is also materialised and the result checked against NumPy's float64 mean and std of
the same values (exit status 1 if they differ).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

import arrayx as xp  # noqa: E402
import arrayx.cubed  # noqa: E402

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_bytes(text: str) -> int:
    """'200GB', '1.5GiB', '512MB' or a number of bytes."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text)
    if m is None or m[2].lower() not in _UNITS:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 200GB, 1GiB, 512MB)")
    return int(float(m[1]) * _UNITS[m[2].lower()])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=parse_bytes, default=parse_bytes("256MB"),
                   help="bytes of the virtual float32 array (default 256MB)")
    p.add_argument("--chunk", type=parse_bytes, default=parse_bytes("64MB"),
                   help="bytes of one chunk (default 64MB)")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: arrayx's default)")
    p.add_argument("--executor", choices=["threads", "processes", "single-threaded"],
                   default="processes", help="Cubed's local executor (default processes)")
    p.add_argument("--workers", type=int, default=None,
                   help="concurrent tasks (default: the number of CPU cores)")
    p.add_argument("--allowed-mem", type=parse_bytes, default=None,
                   help="memory a task may use (default 8 chunks)")
    p.add_argument("--work-dir", default=None, help="Cubed's intermediate store (default: a temp dir)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check-limit", type=parse_bytes, default=parse_bytes("1GB"),
                   help="check against NumPy up to this size (default 1GB)")
    args = p.parse_args(argv)

    device = arrayx.cubed.configure(args.device)
    warnings.simplefilter("ignore", xp.ImplicitHostCopyWarning)  # Cubed's storage boundary
    import cubed
    import cubed.array_api as cxp

    dtype = getattr(xp, args.dtype)
    itemsize = np.dtype(args.dtype).itemsize
    n = max(1, args.size // itemsize)
    chunk = max(1, min(n, args.chunk // itemsize))
    allowed_mem = args.allowed_mem or max(8 * chunk * itemsize, 100 * 10**6)
    workers = args.workers or os.cpu_count()
    options = {} if args.executor == "single-threaded" else {"max_workers": workers}
    with tempfile.TemporaryDirectory(prefix="cubed-", dir=args.work_dir) as work_dir:
        spec = cubed.Spec(work_dir, allowed_mem=allowed_mem, executor_name=args.executor,
                          executor_options=options)
        def values():
            return arrayx.cubed.random((n,), chunks=chunk, seed=args.seed, dtype=dtype, spec=spec)

        # One virtual array per reduction, the same values: Cubed fuses an array into its one
        # consumer; an array that two reductions read is stored whole in work_dir first.
        x = values()
        print(f"{n * itemsize / 1e9:.3f} GB of {args.dtype} ({n} values) in "
              f"{math.ceil(n / chunk)} chunks of {chunk * itemsize / 1e6:.1f} MB on {device}; "
              f"executor {args.executor}"
              f"{'' if args.executor == 'single-threaded' else f' x {workers}'}, "
              f"allowed_mem {allowed_mem / 1e6:.0f} MB", flush=True)
        start = time.perf_counter()
        mean, std = cubed.compute(cxp.mean(x), cxp.std(values()))
        mean, std = float(mean), float(std)
        seconds = time.perf_counter() - start
        print(f"mean {mean:.9f} (exact 0.5), std {std:.9f} (exact {1 / math.sqrt(12):.9f})")
        print(f"{seconds:.2f} s, {n * itemsize / seconds / 1e9:.2f} GB/s")

        if n * itemsize > args.check_limit:
            return 0
        values = np.asarray(x.compute().to_device("cpu"))
        ref_mean, ref_std = values.mean(dtype=np.float64), values.std(dtype=np.float64)
        # float32 partial sums of up to a chunk: a few ulps of float32 relative
        tol = 1e-5 if args.dtype == "float32" else 1e-12
        ok = abs(mean - ref_mean) <= tol and abs(std - ref_std) <= tol
        print(f"NumPy float64 of the same values: mean {ref_mean:.9f}, std {ref_std:.9f}: "
              f"{'ok' if ok else 'MISMATCH'} (|d mean| {abs(mean - ref_mean):.1e}, "
              f"|d std| {abs(std - ref_std):.1e}, tolerance {tol:g})")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
