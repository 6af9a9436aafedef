"""The elementwise family's transposing tile kernels on numba's CUDA simulator, against NumPy:
``python tests/cuda/tile_sim.py CASE`` (or ``all``) prints one line per check and "BAD <n>".

Each check builds the kernel ``launch`` would (template.kernel_spec with tile_design), runs its
blocks over an output of `rows` x `cols` whose input is the transpose of a pitched input
(out[r, c] = op(src[c * pitch + r])), shapes that leave partial tiles on both edges, and compares
every output element (and that nothing past the output was written).
"""

import sys
import time

from cuda_sim import NUMPY_TYPES, Ptr, launch, vload, vstore

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

from arrayx.cuda.kernels.elementwise import ops, template  # noqa: E402


def _run_tile(op_name, op, src_dt, out_dt, V, rows, cols, pitch, rng):
    design = template.tile_design(src_dt.itemsize, V)
    spec = template.kernel_spec(op_name, op, ("a",), (src_dt,), "tile", V, index_bits=32,
                                tile=design)
    ns = {"cuda": cuda, **NUMPY_TYPES}
    for n in (1, 2, 4, 8, 16):
        ns[f"vload{n}"], ns[f"vstore{n}"] = vload(n), vstore(n)
    # the simulator's shared arrays ignore alignment; cuda_sim's race-free allocation needs none
    exec(spec.source.replace(", alignment=16", ""), ns)
    fn = ns[spec.entry]
    if src_dt.kind == "c":
        src = (rng.standard_normal(cols * pitch) + 1j * rng.standard_normal(cols * pitch))
    elif src_dt.kind == "f":
        src = rng.standard_normal(cols * pitch)
    else:
        src = rng.integers(-100, 100, cols * pitch)
    src = src.astype(src_dt)
    guard = 7  # elements past the output that must stay untouched
    out = np.zeros(rows * cols + guard, out_dt)
    tiles_c = -(-cols // design[1])
    grid = -(-rows // design[0]) * tiles_c
    storage = np.dtype(spec.argtypes[0].rstrip("*").replace("bool", "uint8"))
    args = [Ptr(out.view(storage)), Ptr(src.view(np.dtype(spec.argtypes[1].rstrip("*")
                                                          .replace("bool", "uint8"))))]
    args += [rows * cols, rows, cols, pitch, tiles_c]
    launch(fn, grid, design[2], args, range(grid))
    view = src[:cols * pitch].reshape(cols, pitch)[:, :rows].T
    return spec.name, out[:rows * cols].reshape(rows, cols), view, out[rows * cols:]


# every case; tests/cuda/test_simulated_kernels.py reads this list (without importing the module)
CASES = ("copy", "vectors", "complex", "cast")


def main(case):
    if case != "all" and case not in CASES:
        raise SystemExit(f"unknown case {case!r}: one of all, {', '.join(CASES)}")
    rng = np.random.default_rng(3)
    bad = 0
    f32, f64, c128 = np.dtype("float32"), np.dtype("float64"), np.dtype("complex128")
    i8, b = np.dtype("int8"), np.dtype("bool")
    checks = {
        # one element at a time, a pitch that is no multiple of anything
        "copy": [("copy", ops.cast_op(f32, f32), f32, f32, 1, 70, 131, 73, lambda v: v)],
        # 16-byte vectors (sizes and pitch multiples of the vector)
        "vectors": [("copy", ops.cast_op(f32, f32), f32, f32, 4, 68, 132, 72, lambda v: v),
                    ("negative", ops.unary_op("negative", f64, f64), f64, f64, 2, 66, 130, 70,
                     lambda v: -v)],
        # the 32 x 32 tile of 16-byte elements
        "complex": [("negative", ops.unary_op("negative", c128, c128), c128, c128, 1, 45, 37, 47,
                     lambda v: -v)],
        # a cast to bool (byte stores, 16 a vector)
        "cast": [("astype", ops.cast_op(i8, b), i8, b, 16, 80, 96, 96, lambda v: v != 0)],
    }
    for name in CASES if case == "all" else (case,):
        for op_name, op, src_dt, out_dt, V, rows, cols, pitch, ref in checks[name]:
            t0 = time.time()
            kname, got, view, tail = _run_tile(op_name, op, src_dt, out_dt, V, rows, cols,
                                               pitch, rng)
            ok = np.array_equal(got, ref(view).astype(out_dt)) and not tail.any()
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} {name}: {kname} {rows} x {cols}, pitch {pitch} "
                  f"({time.time() - t0:.1f} s)")
    print("BAD", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "all"))
