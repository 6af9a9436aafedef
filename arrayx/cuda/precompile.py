"""Fill the kernel disk cache ahead of time, for a compute capability, without a GPU.

    python -m arrayx.cuda.precompile --cc 9.0 [--jobs 2] [--all]

Compiles the elementwise specialisations the runtime, its tests and benchmarks use (``--all``:
every binary op over every dtype) into the cache folder (``ARRAYX_KERNEL_CACHE``), so a GPU
machine starts with warm caches and compiles nothing. Keys are the same as at run time
(compiler.cache_key), so an entry is used only if source, versions and cc all match.
"""

from __future__ import annotations

import argparse
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from . import compiler
from .elementwise import BINARY, VEC_UNROLL, kernel_spec

DTYPES = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64", "float32", "float64", "complex64",
                                "complex128")]
BOOL = np.dtype(bool)


def _vec_n(*dts):
    return max(1, 16 // max(d.itemsize for d in dts))


def _valid(name, dt):
    if name in ("add", "subtract", "multiply"):
        return dt != BOOL
    if name.startswith("bitwise"):
        return dt.kind in "biu"
    if name.startswith("logical"):
        return dt == BOOL
    if name in ("less", "less_equal", "greater", "greater_equal"):
        return dt.kind != "c"
    return True


def specs(everything: bool = False):
    out = []
    U = VEC_UNROLL
    names = list(BINARY) if everything else ["add", "subtract", "multiply"]
    for name in names:
        expr, isb = BINARY[name]
        for dt in DTYPES:
            if not _valid(name, dt):
                continue
            ct = BOOL if name.startswith("logical") else dt
            od = BOOL if isb else dt
            n = _vec_n(dt, od)
            for kinds in (("a", "a"), ("a", "s"), ("s", "a")):
                out.append(kernel_spec(name, expr, kinds, (dt, dt), ct, od, isb, "vec", n, U))
            out.append(kernel_spec(name, expr, ("a", "a"), (dt, dt), ct, od, isb, "flat"))
            for D in (1, 2, 3):
                out.append(kernel_spec(name, expr, ("a", "a"), (dt, dt), ct, od, isb, "strided",
                                       D=D, index_bits=32))
    f32 = np.dtype("float32")
    for name in ("less", "equal", "not_equal", "greater_equal"):
        expr, isb = BINARY[name]
        out.append(kernel_spec(name, expr, ("a", "a"), (f32, f32), f32, BOOL, True, "vec", 4, U))
    out.append(kernel_spec("logical_xor", "x0 != x1", ("a", "a"), (BOOL, BOOL), BOOL, BOOL, True,
                           "vec", 16, U))
    i32, i64 = np.dtype("int32"), np.dtype("int64")
    out.append(kernel_spec("add", "x0 + x1", ("a", "a"), (i32, i64), i64, i64, False, "vec", 2, U))
    for u in (1, 2, 4):  # benchmark variants
        out.append(kernel_spec("add", "x0 + x1", ("a", "a"), (f32, f32), f32, f32, False, "vec", 4, u))
    for dt in DTYPES:
        out.append(kernel_spec("fill", "x0", ("s",), (dt,), dt, dt, False, "vec", _vec_n(dt), U))
        for D in (1, 2, 3):
            out.append(kernel_spec("fill", "x0", ("s",), (dt,), dt, dt, False, "strided", D=D,
                                   index_bits=32))
            out.append(kernel_spec("copy", "x0", ("a",), (dt,), dt, dt, False, "strided", D=D,
                                   index_bits=32))
            out.append(kernel_spec("assign", "x0", ("a",), (dt,), dt, dt, False, "strided", D=D,
                                   index_bits=32))
        if dt.kind != "c":
            f64 = np.dtype("float64")
            out.append(kernel_spec("cast", "x0", ("a",), (dt,), f64, f64, False, "vec",
                                   _vec_n(dt, f64), U))
    seen = set()
    uniq = []
    for s in out:
        if s.name + s.source not in seen:
            seen.add(s.name + s.source)
            uniq.append(s)
    return uniq


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
    p.add_argument("--all", action="store_true")
    a = p.parse_args(argv)
    cc = tuple(int(x) for x in a.cc.split("."))
    todo = [(s, cc) for s in specs(a.all)]
    with ProcessPoolExecutor(a.jobs) as ex:
        n = sum(ex.map(_one, todo, chunksize=4))
    print(f"{len(todo)} kernels, {n} compiled into {compiler.cache_dir()}")


if __name__ == "__main__":
    main()
