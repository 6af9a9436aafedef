"""What the radix sorts of sort and sets sort and carry: keys and payloads, made by elementwise
passes over the bits of the data.

* ``nan_canon_op``: a float's bits with every NaN made the positive quiet NaN (sort's keys);
* ``row_op`` / ``position_op``: a flat index's row and position within the row (the two-pass row
  sort's keys and payload);
* ``iota``: positions 0..n-1 (argsort's and unique's payload), in ``index_dtype(n)``;
* ``radix_word_expr``: the order-preserving unsigned word of a value (the set kernels' keys and
  the short-row sort's, block.py).

sets.py builds its own keys (radix words) on the same bit views (``unsigned``, ``as_dtype``,
``float_bits``).
"""

from __future__ import annotations

import numpy as np

from .. import elementwise
from .._common import storage_type
from ...engine.array import CudaArray
from ..elementwise.ops import Op, arange_op

I32 = np.dtype(np.int32)
I64 = np.dtype(np.int64)
U32 = np.dtype(np.uint32)
U64 = np.dtype(np.uint64)


def unsigned(dt: np.dtype) -> np.dtype:
    """The unsigned integer dtype of a real dtype's width (its bits, for bit-level operations)."""
    return np.dtype(storage_type(dt))


def as_dtype(a: CudaArray, dt: np.dtype) -> CudaArray:
    """The same memory seen as dtype `dt` of the same itemsize."""
    return CudaArray(a.buffer, a.shape, dt, a.strides, a.offset, a.c_contig)


def float_bits(dt: np.dtype) -> dict:
    """Bit constants of a float dtype: sign bit, magnitude mask, +inf, the positive quiet NaN."""
    w = dt.itemsize * 8
    mant = 23 if w == 32 else 52
    sign = 1 << (w - 1)
    inf = ((1 << (w - 1 - mant)) - 1) << mant
    return {"sign": sign, "abs": sign - 1, "inf": inf, "qnan": inf | (1 << (mant - 1)),
            "all": (1 << w) - 1}


def nan_canon_op(dt: np.dtype) -> Op:
    """On the bits of float dtype `dt`: every NaN -> the positive quiet NaN, others unchanged."""
    u = unsigned(dt).name
    b = float_bits(dt)
    return Op(f"({u}({b['qnan']:#x}) if (x0 & {u}({b['abs']:#x})) > {u}({b['inf']:#x}) else x0)",
              (), unsigned(dt))


def radix_word_expr(x: str, dt: np.dtype) -> str:
    """Kernel source of the radix word of `x`, which holds the bits of a value of real dtype `dt`:
    an unsigned integer of its width that orders as the values do (a signed integer's sign bit
    flipped; a float's sign bit set when positive and every bit flipped when negative, every NaN
    the positive quiet NaN, so above +inf, and -0.0 as +0.0)."""
    u = unsigned(dt).name
    if dt.kind in "bu":
        return x
    if dt.kind == "i":
        return f"({x} ^ {u}({1 << (dt.itemsize * 8 - 1):#x}))"
    b = float_bits(dt)
    c = (f"({u}({b['qnan']:#x}) if ({x} & {u}({b['abs']:#x})) > {u}({b['inf']:#x}) else "
         f"({u}(0) if {x} == {u}({b['sign']:#x}) else {x}))")
    return f"(({c} ^ {u}({b['all']:#x})) if ({c} & {u}({b['sign']:#x})) else ({c} | {u}({b['sign']:#x})))"


def row_op(row_dt: np.dtype) -> Op:
    """x0 // x1 for a non-negative integer x0 and uint64 x1 (the row of flat index x0)."""
    return Op("uint64(x0) // x1", (), row_dt)


def position_op(pos_dt: np.dtype) -> Op:
    """x0 % x1 for a non-negative integer x0 and uint64 x1 (the position within the row)."""
    return Op(f"{pos_dt.name}(uint64(x0) % x1)", (), pos_dt)


def index_dtype(n: int) -> np.dtype:
    """The dtype positions among n elements travel in through CUB (int32 while they fit: it moves
    half the payload bytes of int64)."""
    return I32 if n < 1 << 31 else I64


def iota(device_index: int, n: int, dtype: np.dtype = I64) -> CudaArray:
    """0, 1, ..., n-1."""
    op, dts = arange_op(dtype)
    return elementwise.launch("arange", op, (0, 1), dts, (n,), device_index=device_index)
