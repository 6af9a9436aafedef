"""searchsorted: one thread per value, a binary search over the sorted 1-D array.

The sorted array is read through its stride (any 1-D view: offset, strided, reversed), the values
through a contiguous copy when they are not contiguous already, and the result is a C-contiguous
int64 array of the values' shape. Both arrive in one dtype (the namespace promotes them).
Floating comparisons use NumPy's NaN order, NaN after everything: ``a < b`` is
``a < b or (b != b and a == a)``, so side='left' puts a NaN value before the first NaN of the
array and side='right' after the last one, as NumPy does.
"""

from __future__ import annotations

import numpy as np

from ...engine import compiler, layout, runtime
from .. import elementwise
from ...engine.array import new_array
from .._common import PREAMBLE

BLOCK = 256
_I64 = np.dtype("int64")


def _less(dt: np.dtype, a: str, b: str) -> str:
    if dt.kind == "f":
        return f"({a} < {b} or ({b} != {b} and {a} == {a}))"
    return f"({a} < {b})"


def kernel_spec(dt: np.dtype, side: str):
    """The search kernel: 'left' finds the first i with not sorted[i] < v, 'right' the first i
    with v < sorted[i]."""
    go_right = (f"not {_less(dt, 'v', 's')}" if side == "right" else _less(dt, "s", "v"))
    kname = f"searchsorted_{dt.name}_{side}"
    body = f"""def {kname}(out, sorted_, values, n, stride, m):
    i = int64(cuda.blockIdx.x) * int64(cuda.blockDim.x) + int64(cuda.threadIdx.x)
    if i < m:
        v = values[i]
        lo = int64(0)
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            s = sorted_[mid * stride]
            if {go_right}:
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo
"""
    argtypes = ("int64*", f"{dt.name}*", f"{dt.name}*", "int64", "int64", "int64")
    return compiler.KernelSpec(kname, PREAMBLE + body, kname, argtypes)


def searchsorted(sorted_1d, values, side):
    """The `searchsorted` primitive (see _backend.PRIMITIVES): native int64 of values.shape."""
    dev = runtime.get_device(values.device_index)
    out = new_array(dev.index, values.shape, _I64, dev.allocator)
    m = values.size
    if m == 0:
        return out
    if not values.c_contig:
        values = elementwise.copy(values)
    dt = values.dtype
    if sorted_1d.dtype != dt:
        sorted_1d = elementwise.astype(sorted_1d, dt)
    kern = compiler.cached_kernel(dev.index, "search", (dt, side),
                                  lambda: kernel_spec(dt, side))
    n = sorted_1d.shape[0]
    stride = sorted_1d.strides[0] if n > 1 else 0
    grid, block = layout.launch_1d(m, BLOCK)
    stream = dev.stream
    kern(stream, grid, block, (out.ptr, sorted_1d.ptr, values.ptr, n, stride, m),
         (out.buffer, sorted_1d.buffer, values.buffer), m * (2 * dt.itemsize + 8))
    return out


PRIMITIVES = {"searchsorted": searchsorted}


def precompile_specs():
    """Both sides of every real dtype."""
    from ...._dtypes import all_dtypes as DTYPES
    return [kernel_spec(dt, side) for dt in DTYPES if dt.kind in "iuf" for side in ("left", "right")]
