"""linalg's matrix-vector kernels (arrayx/cuda/kernels/linalg/matvec.py) on numba's CUDA
simulator, against float64 NumPy: ``python tests/cuda/matvec_sim.py CASE`` (or ``all``) prints one
line per check and "BAD <n>".

Each check runs the kernels product() would pick, through product() itself on a heap: a NumPy
buffer standing for device memory, with the matrix at an offset and a row stride past its
width (pitched rows), so vector and scalar variants, the rows kernel's tails and the columns
kernel's split and fold all run; blocks run in a shuffled order, and the elements around the
output must stay untouched.
"""

import sys
import time

from cuda_sim import NUMPY_TYPES, Ptr, launch, vload, vstore

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

from arrayx.cuda.kernels.linalg import matvec  # noqa: E402


class _Heap:
    """Device memory as one NumPy byte buffer: arrays are (offset, shape, dtype) in it."""

    def __init__(self, nbytes):
        self.mem = np.zeros(nbytes, np.uint8)
        self.top = 0

    def put(self, values, shift=0):
        """Place `values` (1-D) `shift` elements past a 16-byte boundary; returns its pointer."""
        values = np.ascontiguousarray(values)
        start = -(-self.top // 16) * 16 + shift * values.dtype.itemsize
        self.mem[start:start + values.nbytes] = values.view(np.uint8)
        self.top = start + values.nbytes + 64
        return start

    def get(self, ptr, n, dtype):
        return self.mem[ptr:ptr + n * dtype.itemsize].view(dtype)


class _Array:
    def __init__(self, ptr, shape, dtype):
        self.ptr, self.shape, self.dtype = ptr, shape, np.dtype(dtype)
        self.buffer = self
        self.nbytes = int(np.prod(shape)) * self.dtype.itemsize


class _Kernel:
    def __init__(self, heap, spec, rng):
        self.heap, self.spec, self.rng = heap, spec, rng
        self.ns = {"cuda": cuda, **NUMPY_TYPES}
        for n in (1, 2, 4, 8, 16):
            self.ns[f"vload{n}"], self.ns[f"vstore{n}"] = vload(n), vstore(n)
        exec(spec.source, self.ns)

    def __call__(self, stream, grid, block, args, keep, nbytes=0):
        converted = []
        for value, t in zip(args, self.spec.argtypes):
            if t.endswith("*"):
                dt = np.dtype(t.rstrip("*"))
                assert value % dt.itemsize == 0, (self.spec.name, value)
                converted.append(Ptr(self.heap.mem.view(dt), value // dt.itemsize))
            else:
                converted.append(value)
        order = self.rng.permutation(grid)
        launch(self.ns[self.spec.entry], grid, block, converted, order)


class _Device:
    index = 0
    multiprocessor_count = 3  # few: the columns kernel's row runs are long and S is small
    stream = None

    def __init__(self, heap):
        self.heap = heap
        self.allocator = None

    def activate(self):
        pass


def _check(kind, dtype, R, C, pitch, shift, rng):
    """One product on the heap: kind 'rows' is A @ v, 'columns' is v @ A, A being R x C with row
    stride `pitch`, placed `shift` elements past a 16-byte boundary."""
    dtype = np.dtype(dtype)
    heap = _Heap(R * pitch * dtype.itemsize + 64 * 1024 + 16 * R * C)
    dev = _Device(heap)
    a = rng.standard_normal((R, pitch)).astype(dtype)
    v = rng.standard_normal(C if kind == "rows" else R).astype(dtype)
    a_ptr = heap.put(a.ravel(), shift)
    v_ptr = heap.put(v)
    n_out = R if kind == "rows" else C
    guard = 5
    out_ptr = heap.put(np.zeros(n_out + 2 * guard, dtype)) + guard * dtype.itemsize

    def new_array(index, shape, dt, allocator):
        return _Array(heap.put(np.zeros(int(np.prod(shape)), dt)), shape, dt)

    kernels = {}

    def cached_kernel(index, family, key, build):
        if key not in kernels:
            kernels[key] = _Kernel(heap, build(), rng)
        return kernels[key]

    matvec.new_array = new_array
    matvec.compiler.cached_kernel = cached_kernel
    out = _Array(out_ptr, (n_out,), dtype)
    matvec.product(dev, out, _Array(a_ptr, (R, C), dtype), _Array(v_ptr, v.shape, dtype), kind,
                   pitch)
    got = heap.get(out_ptr - guard * dtype.itemsize, n_out + 2 * guard, dtype)
    x = a[:, :C].astype(np.float64)
    ref = x @ v.astype(np.float64) if kind == "rows" else v.astype(np.float64) @ x
    tol = (2e-5 if dtype == np.float32 else 1e-12) * np.sqrt(max(R, C))
    err = np.abs(got[guard:-guard] - ref).max() / max(np.abs(ref).max(), 1e-30)
    names = sorted(k[0].__name__.replace("_spec", "") + str(k[1][1:]) for k in kernels)
    return err < tol and not got[:guard].any() and not got[-guard:].any(), err, names


# every case; tests/cuda/test_simulated_kernels.py reads this list (without importing the module)
CASES = ("rows", "columns")


def main(case):
    if case != "all" and case not in CASES:
        raise SystemExit(f"unknown case {case!r}: one of all, {', '.join(CASES)}")
    rng = np.random.default_rng(5)
    bad = 0
    checks = {
        # (dtype, R, C, pitch, shift): vectors with a tail; a float64 row of 33 (16 lanes, a
        # tail); unaligned (scalar loads); one-lane rows; rows of one warp with several
        # vectors a lane
        "rows": [("float32", 37, 22, 24, 0), ("float64", 19, 33, 36, 0),
                 ("float32", 21, 16, 17, 1), ("float64", 40, 2, 2, 0), ("float32", 9, 300, 300, 0)],
        # vectors over 16 columns; float64 vectors; unaligned rows (scalar); a width that is no
        # multiple of the vector; columns of one lane
        "columns": [("float32", 300, 16, 20, 0), ("float64", 150, 10, 12, 0),
                    ("float32", 200, 8, 9, 1), ("float32", 130, 7, 8, 0), ("float64", 70, 1, 2, 0)],
    }
    for name in CASES if case == "all" else (case,):
        for dtype, R, C, pitch, shift in checks[name]:
            t0 = time.time()
            ok, err, kernels = _check(name, dtype, R, C, pitch, shift, rng)
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} {name} {dtype} {R} x {C}, pitch {pitch}, shift "
                  f"{shift}: error {err:.1e} ({', '.join(kernels)}; {time.time() - t0:.1f} s)",
                  flush=True)
    print("BAD", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "all"))
