"""Fill the kernel disk cache for the linear algebra and FFT paths, without a GPU.

    ARRAYX_KERNEL_CACHE=$PWD/.kcache python benchmarks/probes/linalg_precompile.py [--cc 9.0] [--jobs N]

Compiles every kernel of arrayx/cuda/kernels/linalg/kernels.py, and the elementwise
specialisations the linalg and FFT primitives launch around the libraries (copies and transposing
copies, casts to complex, fills, strided assigns, scaling by a scalar), so a GPU session starts
with warm caches.
Keys are the run-time keys (compiler.cache_key): an entry is used only if source, versions and
compute capability all match.
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import numpy as np  # noqa: E402

from arrayx.cuda.engine import compiler  # noqa: E402
from arrayx.cuda.kernels.linalg import kernels as linalg_kernels  # noqa: E402

FLOATS = [np.dtype(d) for d in ("float32", "float64", "complex64", "complex128")]


def elementwise_specs() -> list:
    from arrayx.cuda.kernels import elementwise as ew
    from arrayx.cuda.kernels._common import DIM_BUCKETS
    from arrayx.cuda.kernels.elementwise.ops import binary_op, cast_op
    out = []
    f32, f64, c64, c128 = FLOATS
    casts = [(d, d) for d in FLOATS + [np.dtype(np.int64), np.dtype(bool)]]
    casts += [(f32, c64), (f64, c128), (f32, f64), (c64, c128)]
    for src, dst in casts:
        op = cast_op(src, dst)
        for name in ("copy", "assign") if src == dst else ("astype", "assign"):
            for D in DIM_BUCKETS:
                out.append(ew.kernel_spec(name, op, ("a",), (src,), "strided", D=D, index_bits=32))
            out += ew.tile_specs(name, op, ("a",), (src,))
            out.append(ew.kernel_spec(name, op, ("a",), (src,), "vec",
                                      max(1, 16 // max(src.itemsize, dst.itemsize)), ew.tuning.VEC_UNROLL))
    for dt in FLOATS:
        fill = cast_op(dt, dt)
        width = 16 // dt.itemsize
        out.append(ew.kernel_spec("fill", fill, ("s",), (dt,), "vec", width, ew.tuning.VEC_UNROLL))
        for D in DIM_BUCKETS:
            out.append(ew.kernel_spec("fill", fill, ("s",), (dt,), "strided", D=D, index_bits=32))
        out.append(ew.kernel_spec("multiply", binary_op("multiply", dt), ("a", "s"), (dt, dt),
                                  "vec", width, ew.tuning.VEC_UNROLL))
    for dt in (np.dtype("float32"), np.dtype("float64")):   # the real views FFT fills
        for D in DIM_BUCKETS:
            out.append(ew.kernel_spec("fill", cast_op(dt, dt), ("s",), (dt,), "strided", D=D,
                                      index_bits=32))
    return out


def _compile(args):
    spec, cc = args
    if compiler._read_disk(compiler.cache_key(spec, cc)) is not None:
        return 0
    compiler.build_binary(spec, cc)
    return 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cc", default="9.0")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = p.parse_args()
    cc = tuple(int(x) for x in a.cc.split("."))
    specs = linalg_kernels.specs()
    try:
        specs += elementwise_specs()
    except (ImportError, TypeError, AttributeError) as exc:  # the template's API moved on
        print(f"elementwise specs skipped: {exc!r}")
    unique = list({s.name + s.source: s for s in specs}.values())
    with ProcessPoolExecutor(a.jobs) as ex:
        compiled = sum(ex.map(_compile, [(s, cc) for s in unique], chunksize=2))
    print(f"{len(unique)} kernels, {compiled} compiled into {compiler.cache_dir()}")


if __name__ == "__main__":
    main()
