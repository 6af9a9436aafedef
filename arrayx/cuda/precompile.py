"""Fill the kernel disk cache ahead of time, for a compute capability, without a GPU.

    python -m arrayx.cuda.precompile --cc 9.0 [--jobs 2] [--only NAME,...]

Compiles the kernels each family lists in its ``precompile_specs()``: every elementwise kernel
the backend can launch for arrays under 2**31 elements (each function for every dtype it allows,
array or scalar operands, contiguous vectors, strided layouts and transposing tiles; casts,
fill, where, clip and the creation kernels), the sort and set kernels, the commonest
reductions, the common gather/scatter kernels, repeat's, the scans, flag scans, nonzero/mask
kernels, searchsorted and the row functions' (softmax, logsumexp, the norms). Keys are the
run-time keys (``compiler.cache_key``), so a GPU machine given this cache folder compiles
nothing for these (64-bit strided variants, for larger arrays, and rarer reductions compile on
first use).
"""

from __future__ import annotations

import argparse
import os
from concurrent.futures import ProcessPoolExecutor

from .engine import compiler
from .kernels import elementwise, gather_scatter, manipulation, mask, reduce, scan, search
from .kernels.sort import sets
from .kernels import random
from .kernels import rows

# every family whose kernels are compiled ahead of time (sets lists sort's kernels too)
FAMILIES = (elementwise, sets, reduce, gather_scatter, manipulation, scan, mask, search,
            random, rows)


def specs(only=None):
    out = [spec for family in FAMILIES for spec in family.precompile_specs()]
    if only:
        out = [s for s in out if any(s.name.startswith((f"ew_{n}_", f"red_{n}_", f"{n}_"))
                                     for n in only)]
    return out


def _one(args):
    spec, cc = args
    key = compiler.cache_key(spec, cc, False)
    if compiler._read_disk(key) is not None:
        return 0
    compiler.build_binary(spec, cc, False)
    return 1


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m arrayx.cuda.precompile",
        description="Compile arrayx's common CUDA kernels into the kernel disk cache ahead of "
                    "time, for one compute capability; needs numba-cuda, not a GPU. The cache "
                    "folder is ARRAYX_KERNEL_CACHE (default ~/.cache/arrayx/kernels); kernels "
                    "already there are skipped, so a second run compiles only what is new.",
        epilog="Copy or point ARRAYX_KERNEL_CACHE at the filled folder on the GPU machine: "
               "processes there then load these kernels instead of compiling them.")
    p.add_argument("--cc", default="9.0", metavar="MAJOR.MINOR",
                   help="compute capability of the target GPU, e.g. 9.0 for H100/H200, 8.0 for "
                        "A100 (default: %(default)s)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="compiler processes run in parallel (default: the CPU count, "
                        "%(default)s here)")
    p.add_argument("--only", default="", metavar="NAME,...",
                   help="comma-separated operation names (e.g. add,sum,scan): compile only "
                        "their kernels (elementwise ew_NAME_*, reductions red_NAME_*, others "
                        "NAME_*; default: all)")
    a = p.parse_args(argv)
    cc = tuple(int(x) for x in a.cc.split("."))
    todo = [(s, cc) for s in specs([n for n in a.only.split(",") if n])]
    with ProcessPoolExecutor(a.jobs) as ex:
        n = sum(ex.map(_one, todo, chunksize=8))
    print(f"{len(todo)} kernels, {n} compiled into {compiler.cache_dir()}")


if __name__ == "__main__":
    main()
