"""Fill the kernel disk cache ahead of time, for a compute capability, without a GPU.

    python -m arrayx.cuda.precompile --cc 9.0 [--jobs 2] [--only NAME,...]

Compiles every elementwise kernel the CUDA backend can launch for arrays under 2**31 elements:
each elementwise function of the standard for every dtype it allows, with each operand an array
or a Python scalar, in the vec layout, the strided layouts (1, 3 and 6 dims) and, for one-input
operations, the transposing tile (with 16-byte vectors and one element at a time); casts between
every pair of dtypes, fill, where, clip and the creation kernels; the commonest reduction
kernels (reduce.common_specs); the common gather/scatter kernels (indexing.common_specs) and
repeat's (manipulation.kernel_specs); the scans, flag scans, nonzero/mask and searchsorted
kernels (scan.precompile_specs, search.precompile_specs: names scan_, mask_, nonzero_,
searchsorted_). Keys are the run-time keys (compiler.cache_key), so a GPU machine given this
cache folder compiles nothing for these (64-bit strided variants, for larger arrays, and rarer
reductions compile on first use).
"""

from __future__ import annotations

import argparse
import itertools
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from . import compiler, layout
from . import elementwise_ops as ops
from .elementwise import STRIDED_DIMS, VEC_UNROLL, kernel_spec, tile_specs

DTYPES = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64", "float32", "float64", "complex64",
                                "complex128")]
BOOL = np.dtype(bool)
I64 = np.dtype("int64")
# the standard's dtype categories, as NumPy kinds
KINDS = {"numeric": "iufc", "floating-point": "fc", "real floating": "f", "real numeric": "iuf",
         "integer or boolean": "biu", "integral": "iu", "bool": "b", "any": "biufc"}


def _family(name, op, kinds, dtypes, strided=STRIDED_DIMS, tile=False):
    """The specs `launch` can pick for one operation: vec, strided (32-bit), tile (32-bit, with
    vectors and one element at a time)."""
    arrays = [d.itemsize for k, d in zip(kinds, dtypes) if k == "a"]
    N = layout.vector_width(op.out.itemsize, *arrays)
    specs = [kernel_spec(name, op, kinds, dtypes, "vec", N, VEC_UNROLL)]
    specs += [kernel_spec(name, op, kinds, dtypes, "strided", D=D, index_bits=32) for D in strided]
    if tile:
        specs += tile_specs(name, op, kinds, dtypes)
    return specs


def specs(only=None):
    from .._elementwise_functions import BINARY_CATEGORY, UNARY_CATEGORY, unary_result_dtype
    out = []
    for name, cat in UNARY_CATEGORY.items():
        for dt in DTYPES:
            if dt.kind in KINDS[cat] and not ops.is_identity_unary(name, dt) and \
                    ops.constant_unary(name, dt) is None:
                op = ops.unary_op(name, dt, unary_result_dtype(name, dt))
                out += _family(name, op, ("a",), (dt,), tile=True)
    for name, cat in BINARY_CATEGORY.items():
        computed = {ops.compute_dtype(name, dt) for dt in DTYPES if dt.kind in KINDS[cat]}
        for ct in sorted(computed, key=DTYPES.index):
            op = ops.binary_op(name, ct)
            for kinds in (("a", "a"), ("a", "s"), ("s", "a")):
                out += _family(name, op, kinds, (ct, ct))
    for src, dst in itertools.product(DTYPES, DTYPES):
        if not (src.kind == "c" and dst.kind not in "cb"):
            out += _family("cast", ops.cast_op(src, dst), ("a",), (src,), tile=True)
    for dt in DTYPES:
        out += _family("fill", ops.cast_op(dt, dt), ("s",), (dt,))
        for kinds in itertools.product("as", repeat=2):
            out += _family("where", ops.where_op(dt), ("a",) + kinds, (BOOL, dt, dt))
        if dt.kind in "iuf":
            for kinds in itertools.product("as", repeat=2):
                out += _family("clip", ops.clip_op(dt), ("a",) + kinds, (dt, dt, dt))
        if dt.kind in "iuf":
            op, dts = ops.arange_op(dt)
            out += _family("arange", op, ("s", "s"), dts, strided=())
        if dt.kind in "fc":
            op, dts = ops.linspace_op(dt)
            out += _family("linspace", op, ("s",) * 5, dts, strided=())
        out += _family("eye", ops.eye_op(dt), ("s", "s"), (I64, I64), strided=())
        for upper in (False, True):
            out += _family("triu" if upper else "tril", ops.triangle_op(dt, upper),
                           ("a", "s", "s", "s"), (dt, I64, I64, I64))
    from .sets import precompile_specs as sort_and_set_specs
    out += sort_and_set_specs()
    from .reduce import common_specs
    out += common_specs()
    from . import indexing, manipulation
    out += indexing.common_specs() + manipulation.kernel_specs()
    from . import scan, search
    out += scan.precompile_specs() + search.precompile_specs()
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
    p = argparse.ArgumentParser()
    p.add_argument("--cc", default="9.0")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--only", default="", help="comma-separated operation names (default: all)")
    a = p.parse_args(argv)
    cc = tuple(int(x) for x in a.cc.split("."))
    todo = [(s, cc) for s in specs([n for n in a.only.split(",") if n])]
    with ProcessPoolExecutor(a.jobs) as ex:
        n = sum(ex.map(_one, todo, chunksize=8))
    print(f"{len(todo)} kernels, {n} compiled into {compiler.cache_dir()}")


if __name__ == "__main__":
    main()
