"""Creation functions. Each resolves dtype and device here, then asks the device's backend."""

from __future__ import annotations

import math
import operator

import numpy as np

from . import _dtypes as dt
from ._array_object import Array
from ._devices import CPU
from ._validation import check_array, normalize_shape, resolve_device, same_device


def _default_dtype_for(value):
    if isinstance(value, bool):
        return dt.bool
    if isinstance(value, int):
        return dt.int64
    if isinstance(value, float):
        return dt.float64
    if isinstance(value, complex):
        return dt.complex128
    raise TypeError(f"expected a Python bool, int, float or complex, got {type(value).__name__}")


def _host_object(obj):
    """A nested sequence that may hold arrayx arrays on any device -> something NumPy can read."""
    if type(obj) is Array:
        return obj._device.backend.to_host(obj._data)
    if isinstance(obj, (list, tuple)):
        return [_host_object(o) for o in obj]
    return obj


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    if dtype is not None:
        dtype = dt.canonical_dtype(dtype)
    if type(obj) is Array:
        target = obj._device if device is None else resolve_device(device)
        if copy is False and (target is not obj._device or (dtype is not None and dtype is not obj.dtype)):
            raise ValueError("asarray(copy=False): a copy is needed to change the device or dtype")
        if target is not obj._device:
            obj = obj.to_device(target)
            copy = False
        if dtype is not None and dtype is not obj.dtype:
            return Array._new(obj._device.backend.astype(obj._data, dtype, True), obj._device)
        if copy:
            return Array._new(obj._device.backend.copy(obj._data), obj._device)
        return obj
    device = resolve_device(device)
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        out = from_dlpack(obj, device=device, copy=copy)
        return out if dtype is None or dtype is out.dtype else astype_copy(out, dtype)
    if isinstance(obj, (bool, int, float, complex)):
        if copy is False:
            raise ValueError("asarray(copy=False) cannot wrap a Python scalar without copying")
        dtype = dtype or _default_dtype_for(obj)
        if dtype.kind in "iu" and isinstance(obj, int):
            from ._validation import check_int_in_range
            check_int_in_range(obj, dtype, "asarray")
        if dtype.kind in "iub" and isinstance(obj, (float, complex)):
            raise TypeError(f"asarray(): cannot make a {dtype} array from a Python {type(obj).__name__}")
        return Array._new(device.backend.full(device, (), obj, dtype), device)
    if device.kind == "cpu":
        # NumPy applies the copy semantics itself (copy=False raises if a cast is needed).
        return Array._new(_as_host_array(obj, dtype, copy), device)
    # A device copies host data anyway: no host copy first; its from_host refuses copy=False.
    host = _as_host_array(obj, dtype, False if copy is False else None)
    return Array._new(device.backend.from_host(device, host, copy), device)


def _as_host_array(obj, dtype, copy):
    is_buffer = isinstance(obj, np.ndarray) or (hasattr(obj, "__array_interface__") or _is_buffer(obj))
    if copy is False and not is_buffer:
        raise ValueError("asarray(copy=False) cannot wrap a Python sequence without copying")
    try:
        host = np.asarray(obj, dtype=dtype, copy=copy)
    except TypeError:
        host = np.asarray(_host_object(obj), dtype=dtype)
    except OverflowError as e:
        raise OverflowError(f"asarray(): {e}") from None
    except ValueError:
        if copy is False:
            raise ValueError(f"asarray(copy=False): this {type(obj).__name__} cannot be used as "
                             f"{dtype or 'an array'} without a copy") from None
        raise
    if dtype is None:
        if host.dtype.kind == "i" and not is_buffer and host.dtype != dt.int64:
            host = host.astype(dt.int64)
        elif host.dtype.kind == "u" and not is_buffer:
            raise OverflowError("asarray(): Python ints out of the int64 range need dtype=uint64")
        if host.dtype not in dt.CATEGORIES["any"]:
            raise TypeError(f"asarray(): {host.dtype} data is not supported by the array API")
    return host


def _is_buffer(obj):
    try:
        memoryview(obj)
        return True
    except TypeError:
        return False


def astype_copy(x, dtype):
    return Array._new(x._device.backend.astype(x._data, dtype, True), x._device)


def _creation_dtype(dtype, default=dt.float64):
    return default if dtype is None else dt.canonical_dtype(dtype)


def empty(shape, *, dtype=None, device=None):
    device = resolve_device(device)
    return Array._new(device.backend.empty(device, normalize_shape(shape, "empty"), _creation_dtype(dtype)),
                      device)


def full(shape, fill_value, *, dtype=None, device=None):
    device = resolve_device(device)
    if type(fill_value) is Array:
        if fill_value.ndim != 0:
            raise ValueError("full(): fill_value must be a scalar or a 0-d array")
        fill_value = fill_value._device.backend.to_host(fill_value._data).item()
    dtype = _default_dtype_for(fill_value) if dtype is None else dt.canonical_dtype(dtype)
    _check_fill(fill_value, dtype, "full")
    return Array._new(device.backend.full(device, normalize_shape(shape, "full"), fill_value, dtype), device)


def _check_fill(value, dtype, fname):
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"{fname}(): fill_value must be a Python bool, int, float or complex, "
                        f"got {type(value).__name__}")
    if dtype.kind in "iub" and isinstance(value, (float, complex)) and not isinstance(value, bool):
        raise TypeError(f"{fname}(): a Python {type(value).__name__} cannot fill a {dtype} array")
    if dtype.kind == "f" and isinstance(value, complex):
        raise TypeError(f"{fname}(): a complex fill_value cannot fill a {dtype} array")
    if dtype.kind in "iu" and not isinstance(value, bool):
        from ._validation import check_int_in_range
        check_int_in_range(value, dtype, fname)


def zeros(shape, *, dtype=None, device=None):
    return full(shape, 0, dtype=_creation_dtype(dtype), device=device)


def ones(shape, *, dtype=None, device=None):
    return full(shape, 1, dtype=_creation_dtype(dtype), device=device)


def _like(x, dtype, device, fname):
    check_array(x, fname)
    return (x.dtype if dtype is None else dt.canonical_dtype(dtype),
            x._device if device is None else resolve_device(device))


def empty_like(x, /, *, dtype=None, device=None):
    dtype, device = _like(x, dtype, device, "empty_like")
    return Array._new(device.backend.empty(device, x.shape, dtype), device)


def zeros_like(x, /, *, dtype=None, device=None):
    dtype, device = _like(x, dtype, device, "zeros_like")
    return full(x.shape, dtype.type(0).item(), dtype=dtype, device=device)


def ones_like(x, /, *, dtype=None, device=None):
    dtype, device = _like(x, dtype, device, "ones_like")
    return full(x.shape, dtype.type(1).item(), dtype=dtype, device=device)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    dtype, device = _like(x, dtype, device, "full_like")
    return full(x.shape, fill_value, dtype=dtype, device=device)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    device = resolve_device(device)
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"arange(): {name} must be a real Python number, got {type(v).__name__}")
    if step == 0:
        raise ValueError("arange(): step must not be zero")
    all_int = all(isinstance(v, int) for v in (start, stop, step))
    if dtype is None:
        dtype = dt.int64 if all_int else dt.float64
    else:
        dtype = dt.canonical_dtype(dtype)
        if dtype.kind not in "iuf":
            raise TypeError(f"arange(): dtype must be a real numeric dtype, got {dtype}")
        if dtype.kind in "iu" and not all_int:
            raise TypeError(f"arange(): float bounds cannot make a {dtype} array")
    if all_int:
        length = max(0, -((start - stop) // step))
    else:
        length = max(0, math.ceil((stop - start) / step))
    if dtype.kind in "iu" and length:
        from ._validation import check_int_in_range
        check_int_in_range(start, dtype, "arange")
        check_int_in_range(start + (length - 1) * step, dtype, "arange")
    return Array._new(device.backend.arange(device, start, step, length, dtype), device)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    device = resolve_device(device)
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, bool) or not isinstance(v, (int, float, complex)):
            raise TypeError(f"linspace(): {name} must be a Python number, got {type(v).__name__}")
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace(): num must be non-negative, got {num}")
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    if dtype is None:
        dtype = dt.complex128 if is_complex else dt.float64
    else:
        dtype = dt.canonical_dtype(dtype)
        if dtype.kind not in "fc" or (is_complex and dtype.kind != "c"):
            raise TypeError(f"linspace(): dtype {dtype} cannot hold these bounds")
    return Array._new(device.backend.linspace(device, start, stop, num, dtype, bool(endpoint)), device)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    device = resolve_device(device)
    n_rows = operator.index(n_rows)
    n_cols = n_rows if n_cols is None else operator.index(n_cols)
    if n_rows < 0 or n_cols < 0:
        raise ValueError(f"eye(): dimensions must be non-negative, got ({n_rows}, {n_cols})")
    return Array._new(device.backend.eye(device, n_rows, n_cols, operator.index(k), _creation_dtype(dtype)),
                      device)


def _triangle(x, k, upper, fname):
    check_array(x, fname)
    if x.ndim < 2:
        raise ValueError(f"{fname}() needs an array of at least 2 dimensions, got {x.ndim}-D")
    return Array._new(x._device.backend.triangle(x._data, operator.index(k), upper), x._device)


def tril(x, /, *, k=0):
    return _triangle(x, k, False, "tril")


def triu(x, /, *, k=0):
    return _triangle(x, k, True, "triu")


def meshgrid(*arrays, indexing="xy"):
    from ._manipulation_functions import broadcast_to, reshape

    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid(): indexing must be 'xy' or 'ij', not {indexing!r}")
    if not arrays:
        return ()
    for a in arrays:
        check_array(a, "meshgrid", "arrays")
        if a.ndim != 1:
            raise ValueError(f"meshgrid() takes 1-D arrays, got a {a.ndim}-D one")
    same_device(arrays, "meshgrid")
    dtype = arrays[0].dtype
    for a in arrays[1:]:
        dtype = dt.promote(dtype, a.dtype)
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        axis = (1 if i == 0 else 0 if i == 1 else i) if indexing == "xy" and len(arrays) > 1 else i
        view_shape = [1] * len(arrays)
        view_shape[axis] = a.shape[0]
        a = a if a.dtype is dtype else astype_copy(a, dtype)
        out.append(broadcast_to(reshape(a, tuple(view_shape)), tuple(shape)))
    return tuple(out)


def from_dlpack(x, /, *, device=None, copy=None):
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack() needs an object with __dlpack__, got {type(x).__name__}")
    if type(x) is Array and (device is None or resolve_device(device) is x._device):
        return asarray(x, copy=copy)
    source_device = _dlpack_source_device(x)
    target = source_device if device is None else resolve_device(device)
    if target is not source_device:
        if copy is False:
            raise ValueError(f"from_dlpack(copy=False): data on {source_device} cannot be viewed from {target}")
        return from_dlpack(x, copy=copy).to_device(target)
    return Array._new(target.backend.from_dlpack(target, x, copy), target)


def _dlpack_source_device(x):
    from ._devices import cuda_device
    kind, index = x.__dlpack_device__()
    kind = int(kind)
    if kind in (1, 3):  # kDLCPU, kDLCUDAHost
        return CPU
    if kind in (2, 13):  # kDLCUDA, kDLCUDAManaged
        return cuda_device(int(index))
    raise BufferError(f"from_dlpack(): unsupported DLPack device type {kind}")


__all__ = ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
           "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like"]
