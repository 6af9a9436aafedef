"""Manipulation functions. Views (reshape, permute_dims, broadcast_to, flip, squeeze,
expand_dims, moveaxis, unstack) cost no copy; concat, roll and repeat are backend primitives;
stack and tile are written here from those."""

from __future__ import annotations

import math

from . import _dtypes as dt
from ._array_object import Array
from ._validation import (MAX_NBYTES, broadcast_shapes as _broadcast, check_array, check_device,
                          check_int, check_result_size, index_tuple, normalize_axes,
                          normalize_axis, normalize_shape, same_device)


def broadcast_shapes(*shapes):
    return _broadcast(*(normalize_shape(s, "broadcast_shapes", f"shapes[{i}]")
                        for i, s in enumerate(shapes)))


def broadcast_to(x, /, shape):
    check_array(x, "broadcast_to")
    shape = normalize_shape(shape, "broadcast_to")
    if len(shape) < x.ndim or _broadcast(x.shape, shape) != shape:
        raise ValueError(f"broadcast_to(): cannot broadcast an array of shape {x.shape} to {shape}")
    check_result_size(shape, x.dtype, "broadcast_to")
    if shape == x.shape:
        return x
    return Array._new(x._device.backend.broadcast_to(x._data, shape), x._device)


def broadcast_arrays(*arrays):
    for a in arrays:
        check_array(a, "broadcast_arrays", "arrays")
    if not arrays:
        return ()
    same_device(arrays, "broadcast_arrays")
    shape = _broadcast(*(a.shape for a in arrays))
    return tuple(broadcast_to(a, shape) for a in arrays)


def _common_dtype(arrays, fname):
    dtype = arrays[0].dtype
    for a in arrays[1:]:
        try:
            dtype = dt.promote(dtype, a.dtype)
        except TypeError as e:
            raise TypeError(f"{fname}(): {e}") from None
    return dtype


def _cast_all(arrays, dtype):
    return [a._data if a.dtype is dtype else a._device.backend.astype(a._data, dtype, True) for a in arrays]


def concat(arrays, /, *, axis=0):
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise ValueError("concat() needs a non-empty list or tuple of arrays")
    for a in arrays:
        check_array(a, "concat", "arrays")
    device = same_device(arrays, "concat")
    dtype = _common_dtype(arrays, "concat")
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("concat() cannot join 0-d arrays; use stack()")
    axis = normalize_axis(axis, ndim, "concat")
    first = arrays[0].shape
    for a in arrays[1:]:
        if a.ndim != ndim or any(n != m for i, (n, m) in enumerate(zip(a.shape, first)) if i != axis):
            raise ValueError(f"concat(): shapes {first} and {a.shape} differ outside axis {axis}")
    return Array._new(device.backend.concat(_cast_all(arrays, dtype), axis), device)


def stack(arrays, /, *, axis=0):
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise ValueError("stack() needs a non-empty list or tuple of arrays")
    for a in arrays:
        check_array(a, "stack", "arrays")
    same_device(arrays, "stack")
    shape = arrays[0].shape
    for a in arrays[1:]:
        if a.shape != shape:
            raise ValueError(f"stack(): all arrays need one shape, got {shape} and {a.shape}")
    axis = normalize_axis(axis, len(shape) + 1, "stack")
    return concat([expand_dims(a, axis=axis) for a in arrays], axis=axis)


def expand_dims(x, /, axis=0):
    check_array(x, "expand_dims")
    axes = index_tuple(axis, "expand_dims", "axis")
    out_ndim = x.ndim + len(axes)
    normalized = normalize_axes(axes, out_ndim, "expand_dims")
    shape = iter(x.shape)
    new_shape = tuple(1 if i in normalized else next(shape) for i in range(out_ndim))
    return reshape(x, new_shape)


def squeeze(x, /, axis=None):
    """axis=None (NumPy's default, which Cubed's groupby relies on) drops every axis of size 1."""
    check_array(x, "squeeze")
    if axis is None:
        return reshape(x, tuple(n for n in x.shape if n != 1))
    axes = normalize_axes(axis, x.ndim, "squeeze")
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze(): axis {a} has size {x.shape[a]}, not 1")
    return reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes))


def flip(x, /, *, axis=None):
    check_array(x, "flip")
    axes = normalize_axes(axis, x.ndim, "flip")
    key = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))
    return Array._new(x._device.backend.getitem(x._data, key), x._device)


def permute_dims(x, /, axes):
    check_array(x, "permute_dims")
    axes = tuple(normalize_axis(a, x.ndim, "permute_dims", "axes")
                 for a in index_tuple(axes, "permute_dims", "axes"))
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims(): axes {axes} is not a permutation of the {x.ndim} axes")
    if axes == tuple(range(x.ndim)):
        return x
    return Array._new(x._device.backend.permute_dims(x._data, axes), x._device)


def moveaxis(x, source, destination, /):
    check_array(x, "moveaxis")
    src = index_tuple(source, "moveaxis", "source")
    dst = index_tuple(destination, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis(): source {source!r} and destination {destination!r} need the "
                         f"same number of axes")
    src = [normalize_axis(a, x.ndim, "moveaxis", "source") for a in src]
    dst = [normalize_axis(a, x.ndim, "moveaxis", "destination") for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("moveaxis(): repeated axis")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def reshape(x, /, shape, *, copy=None):
    check_array(x, "reshape")
    shape = index_tuple(shape, "reshape", "shape")
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in shape):
        raise ValueError(f"reshape(): invalid shape {shape}")
    size = x.size
    if unknown:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or size % known:
            raise ValueError(f"reshape(): cannot reshape an array of size {size} into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    elif math.prod(shape) != size:
        raise ValueError(f"reshape(): cannot reshape an array of size {size} into shape {shape}")
    if shape == x.shape and not copy:
        return x
    return Array._new(x._device.backend.reshape(x._data, shape, copy), x._device)


def roll(x, /, shift, *, axis=None):
    check_array(x, "roll")
    if axis is None:
        shift = check_int(shift, "roll", "shift (with axis=None)")
        flat = reshape(x, (-1,))
        return reshape(Array._new(x._device.backend.roll(flat._data, (shift,), (0,)), x._device), x.shape)
    shifts = index_tuple(shift, "roll", "shift")
    axes = index_tuple(axis, "roll", "axis")
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError("roll(): shift and axis need the same length")
    axes = tuple(normalize_axis(a, x.ndim, "roll") for a in axes)
    return Array._new(x._device.backend.roll(x._data, shifts, axes), x._device)


def repeat(x, repeats, /, *, axis=None):
    check_array(x, "repeat")
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    axis = normalize_axis(axis, x.ndim, "repeat")
    if type(repeats) is Array:
        check_device(repeats, "repeats", x._device, "x", "repeat")
        if repeats.dtype.kind not in "iu":
            raise TypeError(f"repeat(): repeats must be an integer array, got {repeats.dtype}")
        if repeats.ndim > 1 or (repeats.ndim == 1 and repeats.shape[0] not in (1, x.shape[axis])):
            raise ValueError(f"repeat(): repeats of shape {repeats.shape} does not match axis size "
                             f"{x.shape[axis]}")
        length = _repeat_length_bound(x, repeats, axis)
        repeats = repeats._data
    else:
        repeats = check_int(repeats, "repeat", "repeats")
        if repeats < 0:
            raise ValueError(f"repeat(): repeats must be non-negative, got {repeats}")
        length = repeats * x.shape[axis]
    check_result_size(x.shape[:axis] + (length,) + x.shape[axis + 1:], x.dtype, "repeat")
    return Array._new(x._device.backend.repeat(x._data, repeats, axis), x._device)


def _repeat_length_bound(x, repeats, axis):
    """For an array of counts: the result's length along `axis`, or an upper bound of it when
    that bound already fits in an array. Checked here so that no backend sizes its output from a
    negative count or from a sum that wraps past 2**63 (NumPy's repeat then reports "negative
    dimensions", or crashes). It reads the counts' extrema, a sync on a GPU, where the backend
    syncs anyway to size its output; the exact sum is taken only when the bound is too big."""
    if repeats.size == 0:
        return 0
    backend = repeats._device.backend
    data = repeats._data
    axes = tuple(range(repeats.ndim))
    if axes:
        low = int(backend.to_host(backend.reduce("min", data, axes, False, repeats.dtype)))
        high = int(backend.to_host(backend.reduce("max", data, axes, False, repeats.dtype)))
    else:
        low = high = int(backend.to_host(data))
    if low < 0:
        raise ValueError(f"repeat(): repeats must be non-negative, got a count of {low}")
    n = x.shape[axis]
    if repeats.size == 1:
        return high * n
    if high * n * x.dtype.itemsize <= MAX_NBYTES:
        return high * n
    return sum(int(v) for v in backend.to_host(data).reshape(-1))


def tile(x, repetitions, /):
    check_array(x, "tile")
    reps = index_tuple(repetitions, "tile", "repetitions")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile(): repetitions must be non-negative, got {reps}")
    ndim = max(x.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - x.ndim) + x.shape
    check_result_size(tuple(r * n for r, n in zip(reps, shape)), x.dtype, "tile")
    # View each axis as (1, n), broadcast to (r, n), and merge the pairs.
    interleaved = tuple(v for n in shape for v in (1, n))
    target = tuple(v for r, n in zip(reps, shape) for v in (r, n))
    expanded = broadcast_to(reshape(x, interleaved), target)
    return reshape(expanded, tuple(r * n for r, n in zip(reps, shape)), copy=True)


def unstack(x, /, *, axis=0):
    check_array(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack() needs an array of at least one dimension")
    axis = normalize_axis(axis, x.ndim, "unstack")
    lead = (slice(None),) * axis
    backend = x._device.backend
    return tuple(Array._new(backend.getitem(x._data, lead + (i,)), x._device) for i in range(x.shape[axis]))


__all__ = ["broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip",
           "moveaxis", "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack"]
