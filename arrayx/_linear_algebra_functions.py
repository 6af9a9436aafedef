"""Linear algebra functions of the main namespace: matmul, matrix_transpose, tensordot, vecdot.

matmul and matrix_transpose are backend primitives (matmul, permute_dims); tensordot
(permute_dims + reshape + matmul) and vecdot (conj, multiply, sum) are composites written here
once, so every backend has them. ``arrayx.linalg`` re-exports these four functions.
"""

from __future__ import annotations

import math
import operator

from . import _dtypes as dt
from ._array_object import Array
from ._validation import broadcast_shapes, check_array, normalize_axis, same_device


def _numeric_pair(x1, x2, fname):
    check_array(x1, fname, "x1")
    check_array(x2, fname, "x2")
    device = same_device((x1, x2), fname)
    for x in (x1, x2):
        if x.dtype not in dt.CATEGORIES["numeric"]:
            raise TypeError(f"{fname}() requires numeric dtypes, got {x.dtype}")
    # Mixed kinds (int64 with float64...) promote as in NumPy, like the elementwise functions.
    return device, dt.promote(x1.dtype, x2.dtype)


def _cast(x, dtype):
    return x._data if x.dtype is dtype else x._device.backend.astype(x._data, dtype, True)


def matmul(x1, x2, /):
    device, dtype = _numeric_pair(x1, x2, "matmul")
    a, b = _cast(x1, dtype), _cast(x2, dtype)
    # shapes read once from the backend arrays: a batched product of small matrices costs
    # little more on the GPU than this function does on the host
    shape1, shape2 = a.shape, b.shape
    nd1, nd2 = len(shape1), len(shape2)
    if nd1 == 0 or nd2 == 0:
        raise ValueError("matmul() does not take 0-d arrays; use multiply()")
    backend = device.backend
    # 1-d operands are promoted to matrices and the added axis removed afterwards.
    a_shape = (1,) + shape1 if nd1 == 1 else shape1
    b_shape = shape2 + (1,) if nd2 == 1 else shape2
    if a_shape[-1] != b_shape[-2]:
        raise ValueError(f"matmul(): contracted dimensions differ: {shape1} @ {shape2}")
    batch = a_shape[:-2] if a_shape[:-2] == b_shape[:-2] else \
        broadcast_shapes(a_shape[:-2], b_shape[:-2])
    if nd1 == 1:
        a = backend.reshape(a, a_shape, None)
    if nd2 == 1:
        b = backend.reshape(b, b_shape, None)
    out = backend.matmul(a, b)
    if nd1 == 1 or nd2 == 1:
        out_shape = batch + ((a_shape[-2],) if nd1 > 1 else ()) + ((b_shape[-1],) if nd2 > 1 else ())
        out = backend.reshape(out, out_shape, None)
    return Array._new(out, device)


def matrix_transpose(x, /):
    check_array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose() needs at least 2 dimensions, got {x.ndim}-D")
    axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return Array._new(x._device.backend.permute_dims(x._data, axes), x._device)


def _tensordot_axes(axes, nd1, nd2):
    """-> (axes of x1, axes of x2): normalised, non-negative, paired in order."""
    if isinstance(axes, (tuple, list)) and len(axes) == 2:
        first, second = axes
        first = (first,) if hasattr(first, "__index__") else tuple(first)
        second = (second,) if hasattr(second, "__index__") else tuple(second)
        if len(first) != len(second):
            raise ValueError(f"tensordot(): axes {axes} name {len(first)} axes of x1 but "
                             f"{len(second)} of x2")
        first = tuple(normalize_axis(a, nd1, "tensordot") for a in first)
        second = tuple(normalize_axis(a, nd2, "tensordot") for a in second)
        if len(set(first)) != len(first) or len(set(second)) != len(second):
            raise ValueError(f"tensordot(): repeated axis in {axes}")
        return first, second
    if isinstance(axes, bool):
        raise TypeError("tensordot(): axes must be an int or a pair of sequences of ints, not bool")
    try:
        n = operator.index(axes)
    except TypeError:
        raise TypeError(f"tensordot(): axes must be an int or a pair of sequences of ints, "
                        f"got {axes!r}") from None
    if n < 0:
        raise ValueError(f"tensordot(): an integer axes must be non-negative, got {n}")
    if n > nd1 or n > nd2:
        raise ValueError(f"tensordot(): cannot contract {n} axes of arrays of {nd1} and {nd2} "
                         f"dimensions")
    return tuple(range(nd1 - n, nd1)), tuple(range(n))


def tensordot(x1, x2, /, *, axes=2):
    from ._manipulation_functions import permute_dims, reshape

    _numeric_pair(x1, x2, "tensordot")
    ax1, ax2 = _tensordot_axes(axes, x1.ndim, x2.ndim)
    for i, j in zip(ax1, ax2):
        if x1.shape[i] != x2.shape[j]:
            raise ValueError(f"tensordot(): axis {i} of x1 (size {x1.shape[i]}) and axis {j} of x2 "
                             f"(size {x2.shape[j]}) differ; contracted axes are not broadcast")
    free1 = [i for i in range(x1.ndim) if i not in ax1]
    free2 = [j for j in range(x2.ndim) if j not in ax2]
    shape1 = tuple(x1.shape[i] for i in free1)
    shape2 = tuple(x2.shape[j] for j in free2)
    k = math.prod(x1.shape[i] for i in ax1)
    # (free1..., contracted...) @ (contracted..., free2...) as one matrix product.
    a = reshape(permute_dims(x1, tuple(free1) + ax1), (math.prod(shape1), k))
    b = reshape(permute_dims(x2, ax2 + tuple(free2)), (k, math.prod(shape2)))
    return reshape(matmul(a, b), shape1 + shape2)


def _vecdot_axis(axis, nd1, nd2):
    """The standard asks for a negative axis in [-min(nd1, nd2), -1]; a non-negative one is
    accepted too when both arrays have the same rank (then it is unambiguous)."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"vecdot(): axis must be an integer, got {type(axis).__name__}") from None
    n = min(nd1, nd2)
    if nd1 == nd2 and 0 <= axis < n:
        return axis - n
    if not -n <= axis <= -1:
        raise ValueError(f"vecdot(): axis must be a negative integer in [{-n}, -1] for arrays of "
                         f"{nd1} and {nd2} dimensions, got {axis}")
    return axis


def vecdot(x1, x2, /, *, axis=-1):
    from ._data_type_functions import astype
    from ._elementwise_functions import conj, multiply
    from . import _statistical_functions as stats

    _, dtype = _numeric_pair(x1, x2, "vecdot")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("vecdot() needs arrays of at least one dimension")
    axis = _vecdot_axis(axis, x1.ndim, x2.ndim)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot(): the contracted axis {axis} has size {x1.shape[axis]} in x1 "
                         f"and {x2.shape[axis]} in x2; it is not broadcast")
    if x1.dtype is not dtype:
        x1 = astype(x1, dtype)
    if dtype.kind == "c":
        x1 = conj(x1)
    return stats.sum(multiply(x1, x2), axis=axis, dtype=dtype)


__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]
