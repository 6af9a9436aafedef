"""`x[key]` and `x[key] = value`: keys are checked and normalised here, once, for every backend.

A normalised key is a tuple of int (in range, non-negative), slice, None, Ellipsis (at most
one) and native integer or boolean arrays of the same device. Python ints out of range raise
IndexError here; integer arrays are range-checked by the backend (NumPy raises IndexError; the
CUDA backend checks on the device).

Beyond the standard, keys take what NumPy takes for its own arrays: lists of ints or bools and
NumPy integer or boolean arrays (scikit-learn indexes with them) become arrayx arrays on x's
device (for a cuda array: one host-to-device copy), a NumPy bool scalar acts as a Python bool
and a 0-d NumPy integer array as an int, as in NumPy.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _dtypes as dt
from ._array_object import Array
from ._validation import python_scalar_fits, check_int_in_range


def _as_index_array(entry, device):
    """A list, Python/NumPy bool or NumPy array of a key -> an arrayx index array on `device`."""
    from ._creation_functions import asarray
    if isinstance(entry, np.ndarray):
        if entry.dtype.kind not in "iub":
            raise IndexError(f"NumPy arrays used as indices must be integer or boolean, not "
                             f"{entry.dtype}")
        return asarray(entry, device=device)
    if isinstance(entry, list) and not entry:
        # NumPy reads an empty list as an empty integer index, not as float64 data.
        return asarray(np.empty(0, np.int64), device=device)
    try:
        arr = asarray(entry, device=device)
    except (TypeError, ValueError):
        raise IndexError(f"index lists must hold integers or bools (nested alike), got "
                         f"{entry!r}") from None
    if arr.dtype.kind not in "iub":
        raise IndexError(f"index lists must hold integers or bools, got {arr.dtype}")
    return arr


def normalize_key(x: Array, key) -> tuple:
    if not isinstance(key, tuple):
        key = (key,)
    shape = x.shape
    ndim = len(shape)
    device = x._device
    entries = []
    consumed = 0
    ellipsis_at = None
    for entry in key:
        if isinstance(entry, np.ndarray) and entry.ndim == 0 and entry.dtype.kind in "iu":
            entry = int(entry)  # NumPy indexes with a 0-d integer array as with an int
        elif isinstance(entry, (list, bool, np.bool_, np.ndarray)):
            entry = _as_index_array(entry, device)
        if type(entry) is Array:
            if entry._device is not device:
                raise ValueError(f"index array is on {entry._device} but the array is on {device}")
            if entry.dtype is dt.bool:
                consumed += entry.ndim
            elif entry.dtype.kind in "iu":
                consumed += 1
            else:
                raise IndexError(f"arrays used as indices must be integer or boolean, not {entry.dtype}")
            entries.append(entry)
        elif entry is None:
            entries.append(None)
        elif entry is Ellipsis:
            if ellipsis_at is not None:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis_at = len(entries)
            entries.append(Ellipsis)
        elif isinstance(entry, slice):
            for part in (entry.start, entry.stop, entry.step):
                if part is not None and not hasattr(part, "__index__"):
                    raise IndexError(f"slice bounds must be integers or None, got {part!r}")
            if entry.step is not None and operator.index(entry.step) == 0:
                raise ValueError("slice step cannot be zero")
            consumed += 1
            entries.append(entry)
        else:
            try:
                entries.append(operator.index(entry))
            except TypeError:
                raise IndexError(f"only integers, slices, ellipsis, None, and integer or boolean "
                                 f"arrays are valid indices, not {type(entry).__name__}") from None
            consumed += 1
    if consumed > ndim:
        raise IndexError(f"too many indices for an array of {ndim} dimension(s): the key indexes {consumed}")
    # Resolve each Python int against its dimension.
    dim = 0
    out = []
    for i, entry in enumerate(entries):
        if entry is Ellipsis:
            dim += ndim - consumed
            out.append(Ellipsis)
            continue
        if entry is None:
            out.append(None)
            continue
        if type(entry) is Array:
            if entry.dtype is dt.bool:
                mask_shape = shape[dim:dim + entry.ndim]
                if entry.shape != mask_shape:
                    if len(entry.shape) != len(mask_shape) or any(
                            k not in (n, 0) for k, n in zip(entry.shape, mask_shape)):
                        raise IndexError(f"boolean index of shape {entry.shape} does not match the "
                                         f"indexed dimensions {mask_shape}")
                    # A mask with an empty dimension selects nothing, whatever the array's size.
                    entry = Array._new(device.backend.full(device, mask_shape, False, dt.bool), device)
                dim += entry.ndim
            else:
                dim += 1
            out.append(entry._data)
            continue
        if isinstance(entry, int):
            n = shape[dim]
            if not -n <= entry < n:
                raise IndexError(f"index {entry} is out of bounds for axis {dim} with size {n}")
            out.append(entry + n if entry < 0 else entry)
        else:
            out.append(entry)
        dim += 1
    return tuple(out)


def getitem(x: Array, key):
    return Array._new(x._device.backend.getitem(x._data, normalize_key(x, key)), x._device)


def setitem(x: Array, key, value):
    native_key = normalize_key(x, key)
    if type(value) is Array:
        if value._device is not x._device:
            raise ValueError(f"cannot assign an array on {value._device} into an array on {x._device}")
        if value.dtype is not x.dtype:
            # The in-place operators' rule: the values must promote to x's own dtype.
            if dt.promote(value.dtype, x.dtype) is not x.dtype:
                raise TypeError(f"cannot assign {value.dtype} values into a {x.dtype} array: they "
                                f"promote to {dt.promote(value.dtype, x.dtype)}; use astype() first")
            value = Array._new(x._device.backend.astype(value._data, x.dtype, True), x._device)
        value = value._data
    elif isinstance(value, (bool, int, float, complex)):
        if not python_scalar_fits(value, x.dtype):
            raise TypeError(f"cannot assign a Python {type(value).__name__} into a {x.dtype} array")
        check_int_in_range(value, x.dtype, "__setitem__")
    else:
        raise TypeError(f"can only assign arrayx arrays or Python scalars, not {type(value).__name__}")
    x._device.backend.setitem(x._data, native_key, value)
