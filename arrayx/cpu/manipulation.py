"""Views, indexing and data movement on the CPU."""

import numpy as np


def reshape(a, shape, copy):
    if copy:
        return np.reshape(a, shape).copy()
    if copy is False:
        try:
            view = a.view()
            view.shape = shape
            return view
        except AttributeError:
            raise ValueError(f"reshape(copy=False): an array of shape {a.shape} with strides "
                             f"{a.strides} cannot be viewed as shape {shape}") from None
    return np.reshape(a, shape)


def permute_dims(a, axes):
    return np.transpose(a, axes)


def broadcast_to(a, shape):
    return np.broadcast_to(a, shape)


def getitem(a, key):
    # A trailing Ellipsis makes NumPy return a 0-d array view rather than a scalar.
    if not any(k is Ellipsis for k in key):
        key = key + (Ellipsis,)
    return a[key]


def setitem(a, key, value):
    a[key] = value


def concat(arrays, axis):
    return np.concatenate(arrays, axis=axis)


def roll(a, shift, axes):
    return np.roll(a, shift, axis=axes)


def repeat(a, repeats, axis):
    if isinstance(repeats, np.ndarray) and repeats.dtype == np.uint64:
        repeats = repeats.astype(np.int64)  # NumPy refuses uint64 counts (no safe cast to intp)
    return np.repeat(a, repeats, axis=axis)


def take(a, indices, axis):
    return np.take(a, indices, axis=axis)


def take_along_axis(a, indices, axis):
    return np.take_along_axis(a, indices, axis=axis)


def diagonal(a, offset):
    return np.diagonal(a, offset=offset, axis1=-2, axis2=-1).copy()
