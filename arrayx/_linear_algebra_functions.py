"""Linear algebra functions of the main namespace: matmul, matrix_transpose, tensordot, vecdot."""

from __future__ import annotations

from . import _dtypes as dt
from ._array_object import Array
from ._validation import broadcast_shapes, check_array, same_device


def _numeric_pair(x1, x2, fname):
    check_array(x1, fname, "x1")
    check_array(x2, fname, "x2")
    device = same_device((x1, x2), fname)
    for x in (x1, x2):
        if x.dtype not in dt.CATEGORIES["numeric"]:
            raise TypeError(f"{fname}() requires numeric dtypes, got {x.dtype}")
    dtype = dt.PROMOTION_TABLE.get((x1.dtype, x2.dtype))
    if dtype is None:
        raise TypeError(f"{fname}(): {x1.dtype} and {x2.dtype} have no common dtype")
    return device, dtype


def _cast(x, dtype):
    return x._data if x.dtype is dtype else x._device.backend.astype(x._data, dtype, True)


def matmul(x1, x2, /):
    device, dtype = _numeric_pair(x1, x2, "matmul")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("matmul() does not take 0-d arrays; use multiply()")
    backend = device.backend
    a, b = _cast(x1, dtype), _cast(x2, dtype)
    # 1-d operands are promoted to matrices and the added axis removed afterwards.
    a_shape = (1,) + x1.shape if x1.ndim == 1 else x1.shape
    b_shape = x2.shape + (1,) if x2.ndim == 1 else x2.shape
    if a_shape[-1] != b_shape[-2]:
        raise ValueError(f"matmul(): contracted dimensions differ: {x1.shape} @ {x2.shape}")
    batch = broadcast_shapes(a_shape[:-2], b_shape[:-2])
    if x1.ndim == 1:
        a = backend.reshape(a, a_shape, None)
    if x2.ndim == 1:
        b = backend.reshape(b, b_shape, None)
    out = backend.matmul(a, b)
    out_shape = batch + ((a_shape[-2],) if x1.ndim > 1 else ()) + ((b_shape[-1],) if x2.ndim > 1 else ())
    if out.shape != out_shape:
        out = backend.reshape(out, out_shape, None)
    return Array._new(out, device)


def matrix_transpose(x, /):
    check_array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose() needs at least 2 dimensions, got {x.ndim}-D")
    axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return Array._new(x._device.backend.permute_dims(x._data, axes), x._device)


__all__ = ["matmul", "matrix_transpose"]
