"""Run the random family's kernels on numba's CUDA simulator (no GPU): the host code of
arrayx/cuda/kernels/random/ with its generated source on a NumPy heap, against the CPU backend
(arrayx/cpu/random.py), for sizes around the block size and several offsets, keys and index
widths.

    python tests/cuda/random_sim.py [all|bits|floats|normals|integers]

Bits, uniforms and integers must be equal bit for bit; normals too, up to the rounding of the
math: float64 ones within 2 units in the last place (NumPy's scalar log/sin/cos stand in for
libdevice's, and may round a scalar differently from the array loops the CPU backend runs);
float32 ones, whose log and sincos the kernel evaluates itself, within FLOAT32_NORMAL_ULP of
Box-Muller evaluated exactly from the same words and within NORMAL_ULP of the CPU's, as on the
GPU (test_random_gpu.py).
Prints one line a case and "BAD <count>"; exits 1 when any is wrong. A separate process because
the simulator replaces numba.cuda for the whole process (tests/cuda/test_simulated_kernels.py).
"""

import os
import sys

import numpy as np
from cuda_sim import NUMPY_TYPES, Ptr, launch, vstore  # first: numba.cuda becomes the simulator
from numba import cuda
from numba.cuda.simulator import kernelapi

from arrayx import Device
from arrayx.cpu import random as cpu_random
from arrayx.cuda.engine import compiler, runtime
from arrayx.cuda.kernels import random as cuda_random
from arrayx.cuda.kernels.random import source

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_indexing_host import Heap  # noqa: E402

heap = Heap(1 << 22)


class _Allocator:
    def alloc(self, nbytes):
        return heap.alloc(nbytes, align=256), nbytes

    def release(self, *_):
        pass


class _Device:
    index = 0
    stream = None
    allocator = _Allocator()


class _Libdevice:
    """libdevice's functions the kernels call, as NumPy scalar arithmetic."""
    fmul_rn = dmul_rn = staticmethod(lambda a, b: a * b)
    fadd_rn = dadd_rn = staticmethod(lambda a, b: a + b)
    log = staticmethod(np.log)
    dsqrt_rn = staticmethod(np.sqrt)
    sincos = staticmethod(lambda t: (np.sin(t), np.cos(t)))


def _mul_wide_u32(a, b):
    p = int(a) * int(b)
    return np.uint32(p & 0xFFFFFFFF), np.uint32(p >> 32)


def _fma(self, a, b, c):
    """One rounding, as the GPU's: the float32 product is exact in float64 and the sum of the
    kernels' operands rounds there at most once more, far below a float32 ulp."""
    return np.float32(np.float64(a) * np.float64(b) + np.float64(c))


kernelapi.FakeCUDAModule.fma = _fma
HELPERS = {"mul_wide_u32": _mul_wide_u32,
           "rsqrt_approx_ftz": lambda x: np.float32(1 / np.sqrt(np.float64(x))),
           "bitcast": lambda x, proto: x.view(type(proto))}


class _SimKernel:
    def __init__(self, spec):
        self.spec = spec
        ns = {"cuda": cuda, "libdevice": _Libdevice, **NUMPY_TYPES, **HELPERS}
        exec(spec.source, ns)
        for n in (1, 2, 4, 8, 16):
            ns[f"vstore{n}"] = vstore(n)
        self.fn = ns[spec.entry]

    def __call__(self, stream, grid, block, args, keep, nbytes=0):
        conv = []
        for t, v in zip(self.spec.argtypes, args):
            if t.endswith("*"):
                dt = np.dtype(t[:-1])
                assert v % 16 == 0  # fresh outputs: every whole block's store is aligned
                conv.append(Ptr(heap.mem.view(dt), v // dt.itemsize))
            else:
                conv.append(NUMPY_TYPES[t](v))
        launch(self.fn, grid, block, conv, range(grid))


INDEX_BITS = [32]


def _cached_kernel(device_index, family, key, build):
    distribution, dtype, path, _ = key
    return _SimKernel(source.kernel_spec(distribution, dtype, INDEX_BITS[0], path))


runtime.get_device = lambda index=0: _Device()
compiler.cached_kernel = _cached_kernel
cuda_random.compiler.cached_kernel = _cached_kernel
cuda_random.tuning.BLOCK = 64  # several blocks of threads even for small arrays

SIZES = (1, 3, 4, 5, 257, 1000)
# (key, offset): the Random123 test keys, and offsets using both counter words
STATES = ((0, 0), (0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF - 300), (0x299F31D0A4093822, 12345))


def _cases(case):
    f32, f64 = np.dtype("float32"), np.dtype("float64")
    if case == "bits":
        return [("bits", np.dtype(d), ()) for d in ("uint32", "uint64")]
    if case == "floats":
        return [("random", d, ()) for d in (f32, f64)] + \
               [("uniform", d, (float(d.type(-2.5)), float(d.type(7.25)))) for d in (f32, f64)]
    if case == "normals":
        return [("standard_normal", d, ()) for d in (f32, f64)] + \
               [("normal", d, (float(d.type(1.5)), float(d.type(0.1)))) for d in (f32, f64)]
    ranges = ((-128, 256, "int8"), (0, 1, "uint8"), (-5, 11, "int16"), (0, 2 ** 32, "uint32"),
              (-(2 ** 31), 2 ** 32, "int32"), (-(2 ** 63), 2 ** 64, "int64"),
              (3, 2 ** 32 + 1, "int64"), (2 ** 63, 2 ** 63 - 7, "uint64"),
              (0, 2 ** 64, "uint64"))
    return [("integers", np.dtype(d), (low, r)) for low, r, d in ranges]


CASES = ("bits", "floats", "normals", "integers")


NORMAL_ULP = 8
FLOAT32_NORMAL_ULP = 3


def _ulps(got, ref, params=()):
    """|got - ref| in units in the last place of the larger of loc and |ref - loc| (as
    test_random_gpu.py's: loc + scale * z rounds to a place of those)."""
    loc = params[0] if params else 0.0
    magnitude = np.maximum(np.abs(ref.astype(np.float64) - loc), abs(loc)).astype(got.dtype)
    return np.abs(got.astype(np.float64) - ref) / np.spacing(magnitude)


def _exact_normals_f32(n, key, offset):
    """RANDOM_STREAM's float32 Box-Muller in long double from the uniforms and the rounded
    angle t of each pair."""
    words = cpu_random.philox4x32_10(np.arange(-(-n // 4), dtype=np.uint64), offset, key)
    u = [((w >> np.uint64(8)) + np.uint64(1)).astype(np.longdouble) * np.longdouble(2.0 ** -24)
         for w in words]
    z = []
    for u1, u2 in ((u[0], u[1]), (u[2], u[3])):
        t = (np.float32(2 * np.pi) * u2.astype(np.float32)).astype(np.longdouble)
        r = np.sqrt(-2 * np.log(u1))
        z += [r * np.cos(t), r * np.sin(t)]
    return np.stack(z, -1).reshape(-1)[:n].astype(np.float64)


def main(case):
    if case != "all" and case not in CASES:
        raise SystemExit(f"unknown case {case!r}: one of all, {', '.join(CASES)}")
    bad = 0
    cpu = Device("cpu")
    for name in CASES if case == "all" else (case,):
        for distribution, dtype, params in _cases(name):
            for bits in (32, 64):
                INDEX_BITS[0] = bits
                for key, offset in STATES:
                    for n in SIZES:
                        heap.top = 4096
                        got = heap.get(cuda_random.random(cpu, (n,), dtype, distribution, key,
                                                          offset, params))
                        ref = cpu_random.random(cpu, (n,), dtype, distribution, key, offset,
                                                params)
                        if "normal" in distribution and dtype == np.float32:
                            ok = bool(np.all(_ulps(got, ref, params) <= NORMAL_ULP))
                            if distribution == "standard_normal":
                                exact = _exact_normals_f32(n, key, offset)
                                ok &= bool(np.all(_ulps(got, exact) <= FLOAT32_NORMAL_ULP))
                        elif "normal" in distribution:
                            ok = bool(np.all(_ulps(got, ref) <= 2))
                        else:
                            ok = got.dtype == ref.dtype and np.array_equal(got.view(np.uint8),
                                                                           ref.view(np.uint8))
                        bad += not ok
                        if not ok:
                            print(f"{distribution} {dtype} {params} i{bits} key={key:x} "
                                  f"offset={offset} n={n}: WRONG\n got {got[:8]}\n ref {ref[:8]}")
            print(f"{name}: {distribution} {dtype} {params} checked")
    print("BAD", bad)
    return bad


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1] if len(sys.argv) > 1 else "all") else 0)
