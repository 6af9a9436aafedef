"""`x[key]` and `x[key] = value`: keys are checked and normalised here, once, for every backend.

A normalised key is a tuple of int (in range, non-negative), slice, None, Ellipsis (at most
one) and native integer or boolean arrays of the same device. Python ints out of range raise
IndexError here; integer arrays are range-checked by the backend (NumPy raises IndexError; the
CUDA backend checks on the device). So is broadcasting for keys with index arrays: the index
arrays against each other, and an assigned array against the selection (a basic key's
selection is a view, which the backend's assignment broadcasts into as it does for any
array). A boolean array that shares its key with other index arrays becomes its nonzero()
integer arrays (NumPy's meaning of it), so that every index array's shape is known here; the
length of a lone boolean array's selection (its count of True) is the one shape left to the
backend, which learns it when it reads the mask.

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
from ._validation import broadcast_shapes, check_device, check_int_in_range, python_scalar_fits


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


def _in_range(index: int, dim: int, n: int) -> int:
    """A Python int index of an axis of size `n`, made non-negative; IndexError out of range."""
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for axis {dim} with size {n}")
    return index + n if index < 0 else index


def _plain_slice(s: slice) -> bool:
    """Whether a slice needs no checks: bounds of None or int, a step of None or a nonzero int."""
    start, stop, step = s.start, s.stop, s.step
    return (start is None or type(start) is int) and (stop is None or type(stop) is int) and \
        (step is None or (type(step) is int and step != 0))


def normalize_key(x: Array, key, fname: str,
                  selection: bool = False) -> tuple[tuple, tuple | None]:
    """(the normalised key, the shape x[key] selects or None): the shape is computed for a key
    holding index arrays when it holds several (it checks they broadcast together) or when
    `selection` asks for it; None otherwise. `fname` names the operation in errors."""
    if not isinstance(key, tuple):
        key = (key,)
    shape = x.shape
    ndim = len(shape)
    if len(key) <= ndim:  # ints and slices of ints alone (x[i, j], x[1:-1, 2:]): the common keys
        out = []
        for dim, entry in enumerate(key):
            if type(entry) is int:
                out.append(_in_range(entry, dim, shape[dim]))
            elif type(entry) is slice and _plain_slice(entry):
                out.append(entry)
            else:
                break
        else:
            return tuple(out), None
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
            check_device(entry, "an index array", device, "the array", fname)
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
    several_arrays = sum(type(entry) is Array for entry in entries) > 1
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
                if several_arrays and entry.ndim:
                    out.extend(device.backend.nonzero(entry._data))
                    continue
            else:
                dim += 1
            out.append(entry._data)
            continue
        if isinstance(entry, int):
            out.append(_in_range(entry, dim, shape[dim]))
        else:
            out.append(entry)
        dim += 1
    out = tuple(out)
    n_arrays = len(out) - sum(type(e) is int or type(e) is slice or e is None or e is Ellipsis
                              for e in out)
    if n_arrays > 1 or selection and n_arrays:
        return out, _advanced_selection_shape(shape, out, consumed, device)
    return out, None


def _advanced_selection_shape(shape, key: tuple, consumed: int, device) -> tuple:
    """The shape x[key] selects for a normalised key holding index arrays (`consumed`: the
    dimensions of x it indexes, as normalize_key counted them), in NumPy's order (the
    index arrays' broadcast shape where the first of them stands when they are adjacent in the
    key, else first); None for the count of the key's one boolean array of rank >= 1. A 0-d
    boolean array (NumPy's new axis of length 1 or 0) is read: on a GPU, one synchronisation.
    IndexError, as NumPy's, when the index arrays do not broadcast together."""
    if len(key) == 1 and key[0].ndim:  # x[indices] or x[mask], the common keys: no placement
        (entry,) = key
        if entry.dtype.kind == "b":
            return (None,) + tuple(shape[entry.ndim:])
        return tuple(entry.shape) + tuple(shape[1:])
    ndim = len(shape)
    basic = []     # the sizes of the dims that slices, None and Ellipsis make, in key order
    advanced = []  # the shapes of the advanced indices (Python ints among arrays are 0-d)
    positions = []
    insert_at = None
    dim = 0
    for position, entry in enumerate(key):
        if entry is None:
            basic.append(1)
        elif entry is Ellipsis:
            basic.extend(shape[dim:dim + ndim - consumed])
            dim += ndim - consumed
        elif type(entry) is slice:
            basic.append(len(range(*entry.indices(shape[dim]))))
            dim += 1
        else:
            if insert_at is None:
                insert_at = len(basic)
            positions.append(position)
            if type(entry) is int:
                advanced.append(())
                dim += 1
            elif entry.dtype.kind != "b":
                advanced.append(tuple(entry.shape))
                dim += 1
            elif entry.ndim == 0:
                advanced.append((1,) if bool(Array._new(entry, device)) else (0,))
            else:
                advanced.append((None,))
                dim += entry.ndim
    basic.extend(shape[dim:])
    if (None,) in advanced:  # the lone boolean array (other entries are 0-d)
        broadcast = (None,)
    elif len(advanced) == 1:
        broadcast = advanced[0]
    else:
        try:
            broadcast = broadcast_shapes(*advanced)
        except ValueError:
            raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                             f"with shapes {' '.join(str(s) for s in advanced)}") from None
    if positions[-1] - positions[0] != len(positions) - 1:  # not adjacent in the key
        insert_at = 0
    return tuple(basic[:insert_at]) + broadcast + tuple(basic[insert_at:])


def _check_value_broadcasts(value_shape: tuple, selection: tuple) -> None:
    """An assigned array must broadcast to the selection (leading dims of size 1 may exceed
    it, as in NumPy); a None of the selection (a mask's count) takes any size here, the backend
    checks it once it knows the count."""
    if value_shape == selection:
        return
    shape = list(value_shape)
    while len(shape) > len(selection) and shape[0] == 1:
        del shape[0]
    if len(shape) > len(selection) or any(
            n != 1 and m is not None and n != m for n, m in zip(shape[::-1], selection[::-1])):
        shown = "(" + ", ".join("count" if m is None else str(m) for m in selection) + \
            ("," if len(selection) == 1 else "") + ")"
        raise ValueError(f"cannot assign a value of shape {tuple(value_shape)} to a selection "
                         f"of shape {shown}")


def getitem(x: Array, key):
    native_key = normalize_key(x, key, "__getitem__")[0]
    return Array._new(x._device.backend.getitem(x._data, native_key), x._device)


def setitem(x: Array, key, value):
    native_key, selection = normalize_key(x, key, "__setitem__", selection=type(value) is Array)
    if type(value) is Array:
        if value._device is not x._device:
            raise ValueError(f"cannot assign an array on {value._device} into an array on {x._device}")
        if selection is not None:
            _check_value_broadcasts(value.shape, selection)
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
