"""Creation functions. Each resolves dtype and device here, then asks the device's backend.

Where the standard asks for a Python scalar (the bounds of arange and linspace, num, eye's sizes,
full's fill_value, shape entries), NumPy scalars and 0-d arrays are accepted as NumPy accepts
them and converted with int()/float()/complex(); a 0-d array on a cuda device costs one device
synchronisation (its value is read back to the host). A float where an integer is needed is
refused, never truncated.

Sizes are checked before anything is allocated: a byte size past what an array can address is a
ValueError, one larger than the host's memory (for data built on or through the host) a
MemoryError naming it; on cuda the allocator refuses a size the device cannot hold the same way.
"""

from __future__ import annotations

import math
import operator
import os

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


def _python_number(value, fname: str, argname: str):
    """A Python bool/int/float/complex for a Python number, NumPy scalar or 0-d array (one
    sync for a cuda array); anything else is returned unchanged for the caller to refuse."""
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        return value
    if type(value) is Array or isinstance(value, (np.generic, np.ndarray)):
        if value.ndim != 0:
            raise TypeError(f"{fname}(): {argname} must be a scalar or a 0-d array, got an array "
                            f"of shape {value.shape}")
        kind = value.dtype.kind
        convert = {"b": bool, "i": int, "u": int, "f": float, "c": complex}.get(kind)
        if convert is not None:
            return convert(value)
    return value


def _python_int(value, fname: str, argname: str) -> int:
    """operator.index, with a message saying what to pass instead of a float or anything else."""
    try:
        return operator.index(value)
    except TypeError:
        pass
    number = _python_number(value, fname, argname)
    if isinstance(number, float) or isinstance(number, complex):
        raise TypeError(f"{fname}(): {argname} must be an integer, got the {type(number).__name__} "
                        f"{number!r}; pass int({argname}) if truncating it is what you mean")
    raise TypeError(f"{fname}(): {argname} must be an integer, got {type(value).__name__}")


def _host_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not reported on this platform
        return None


_HOST_MEMORY = _host_memory()
_MAX_NBYTES = 2**63 - 1  # what NumPy and the CUDA driver can address


def _fmt_bytes(n: int) -> str:
    for unit, size in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def check_size(n: int, dtype, device, fname: str, what: str, through_host: bool = False) -> None:
    """Refuse `n` elements of `dtype` before allocating: a size no array can address
    (ValueError) or, for data built on or through the host, more than the host's memory
    (MemoryError). A cuda device's allocator refuses what the device cannot hold itself."""
    nbytes = n * dtype.itemsize
    if nbytes > _MAX_NBYTES:
        raise ValueError(f"{fname}(): {what} of {dtype} would need {nbytes} bytes, more than an "
                         f"array can address (2**63 - 1)")
    if (through_host or device.kind == "cpu") and _HOST_MEMORY is not None and nbytes > _HOST_MEMORY:
        raise MemoryError(f"{fname}(): {what} of {dtype} needs {_fmt_bytes(nbytes)}, more than "
                          f"the host's {_fmt_bytes(_HOST_MEMORY)} of memory")


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
    if isinstance(obj, range):
        # Built on the device by arange: NumPy would iterate the range in Python.
        return _asarray_range(obj, dtype, device, copy)
    if not isinstance(obj, (np.ndarray, list, tuple)) and hasattr(obj, "__len__") \
            and not hasattr(obj, "__array_interface__") and not _is_buffer(obj):
        # A lazy sequence would be iterated element by element: refuse a hopeless size first.
        check_size(len(obj), dtype or dt.float64, device, "asarray", f"a sequence of {len(obj)} elements",
                   through_host=True)
    if device.kind == "cpu":
        # NumPy applies the copy semantics itself (copy=False raises if a cast is needed).
        return Array._new(_as_host_array(obj, dtype, copy), device)
    # A device copies host data anyway: no host copy first; its from_host refuses copy=False.
    host = _as_host_array(obj, dtype, False if copy is False else None)
    return Array._new(device.backend.from_host(device, host, copy), device)


def _asarray_range(r: range, dtype, device, copy):
    if copy is False:
        raise ValueError("asarray(copy=False) cannot wrap a range without copying")
    from ._validation import check_int_in_range
    dtype = dt.int64 if dtype is None else dtype
    n = len(r)
    check_size(n, dtype, device, "asarray", f"a range of {n} elements")
    base = dtype if dtype.kind in "iu" else dt.int64  # built as integers, then cast
    if n:
        check_int_in_range(r[0], base, "asarray")
        check_int_in_range(r[-1], base, "asarray")
    out = Array._new(device.backend.arange(device, r.start, r.step, n, base), device)
    return out if base is dtype else astype_copy(out, dtype)


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
        # Python ints alone give int64, or uint64 past its range; a smaller integer dtype comes
        # from NumPy scalars or arrays in the sequence, kept as NumPy keeps it.
        if host.dtype == dt.uint64 and not is_buffer:
            raise OverflowError("asarray(): Python ints out of the int64 range need dtype=uint64")
        if host.dtype not in dt.CATEGORIES["any"]:
            raise TypeError(f"asarray(): {host.dtype} data is not supported by the array API")
    # arrayx compares dtypes by identity: an array whose dtype is an equal but distinct
    # instance (an unpickled one) is viewed with the canonical one.
    canonical = dt.canonical_dtype(host.dtype)
    return host if host.dtype is canonical else host.view(canonical)


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


def _shape(shape, dtype, device, fname):
    shape = normalize_shape(shape, fname)
    check_size(math.prod(shape), dtype, device, fname, f"shape {shape}")
    return shape


def empty(shape, *, dtype=None, device=None):
    device = resolve_device(device)
    dtype = _creation_dtype(dtype)
    return Array._new(device.backend.empty(device, _shape(shape, dtype, device, "empty"), dtype), device)


def full(shape, fill_value, *, dtype=None, device=None):
    """fill_value may also be a NumPy scalar or a 0-d array (one sync on cuda); with no dtype
    the result then has its dtype, as in NumPy."""
    return _full(shape, fill_value, dtype, device, "full")


def _full(shape, fill_value, dtype, device, fname):
    device = resolve_device(device)
    if type(fill_value) is Array or isinstance(fill_value, (np.generic, np.ndarray)):
        if fill_value.ndim != 0:
            raise ValueError(f"{fname}(): fill_value must be a scalar or a 0-d array, got shape "
                             f"{fill_value.shape}")
        if dtype is None:
            dtype = dt.canonical_dtype(fill_value.dtype)
        fill_value = _python_number(fill_value, fname, "fill_value")
    dtype = _default_dtype_for(fill_value) if dtype is None else dt.canonical_dtype(dtype)
    _check_fill(fill_value, dtype, fname)
    return Array._new(device.backend.full(device, _shape(shape, dtype, device, fname), fill_value, dtype),
                      device)


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
    return _full(shape, 0, _creation_dtype(dtype), device, "zeros")


def ones(shape, *, dtype=None, device=None):
    return _full(shape, 1, _creation_dtype(dtype), device, "ones")


def _like(x, dtype, device, shape, fname):
    """The dtype, device and shape of a *_like result; `shape` overrides x's, as NumPy's
    keyword does (Cubed pads chunks with full_like(x, v, shape=...))."""
    check_array(x, fname)
    return (x.dtype if dtype is None else dt.canonical_dtype(dtype),
            x._device if device is None else resolve_device(device),
            x.shape if shape is None else shape)


def empty_like(x, /, *, dtype=None, device=None, shape=None):
    dtype, device, shape = _like(x, dtype, device, shape, "empty_like")
    return Array._new(device.backend.empty(device, _shape(shape, dtype, device, "empty_like"), dtype),
                      device)


def zeros_like(x, /, *, dtype=None, device=None, shape=None):
    dtype, device, shape = _like(x, dtype, device, shape, "zeros_like")
    return _full(shape, dtype.type(0).item(), dtype, device, "zeros_like")


def ones_like(x, /, *, dtype=None, device=None, shape=None):
    dtype, device, shape = _like(x, dtype, device, shape, "ones_like")
    return _full(shape, dtype.type(1).item(), dtype, device, "ones_like")


def full_like(x, /, fill_value, *, dtype=None, device=None, shape=None):
    dtype, device, shape = _like(x, dtype, device, shape, "full_like")
    return _full(shape, fill_value, dtype, device, "full_like")


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """start, stop and step may also be NumPy scalars or 0-d arrays (one sync each on cuda).
    A complex dtype gives NumPy's result: the real sequence with zero imaginary parts."""
    device = resolve_device(device)
    if stop is None:
        start, stop = 0, start
    start, stop, step = (_python_number(v, "arange", name)
                         for name, v in (("start", start), ("stop", stop), ("step", step)))
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
        if dtype is dt.bool:
            raise TypeError("arange(): dtype must be a numeric dtype, got bool")
        if dtype.kind in "iu" and not all_int:
            raise TypeError(f"arange(): float bounds cannot make a {dtype} array; pass integer "
                            f"bounds or a floating dtype")
    if all_int:
        length = max(0, -((start - stop) // step))
    else:
        if not all(math.isfinite(v) for v in (start, stop, step)):
            raise ValueError(f"arange(): start, stop and step must be finite, got {start}, {stop}, {step}")
        length = max(0, math.ceil((stop - start) / step))
    check_size(length, dtype, device, "arange", f"{length} elements")
    if dtype.kind in "iu" and length:
        from ._validation import check_int_in_range
        check_int_in_range(start, dtype, "arange")
        check_int_in_range(start + (length - 1) * step, dtype, "arange")
    # A complex sequence is the real one of its precision, cast: complex64's equals float32's.
    real = dt.real_dtype_of(dtype)
    out = Array._new(device.backend.arange(device, start, step, length, real), device)
    return out if real is dtype else astype_copy(out, dtype)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """start, stop and num may also be NumPy scalars or 0-d arrays (one sync each on cuda).
    The sequence is computed as NumPy computes it, in its bounds' result type (float32 bounds:
    float32 arithmetic; Python numbers: float64), and rounded to `dtype`. An integer (or bool)
    dtype gives NumPy's result: that sequence floored toward -inf for integers, then cast;
    bounds whose values the dtype cannot hold are refused."""
    device = resolve_device(device)
    precision = _linspace_precision(start, stop)
    start, stop = _python_number(start, "linspace", "start"), _python_number(stop, "linspace", "stop")
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, bool) or not isinstance(v, (int, float, complex)):
            raise TypeError(f"linspace(): {name} must be a Python number, got {type(v).__name__}")
    num = _python_int(num, "linspace", "num")
    if num < 0:
        raise ValueError(f"linspace(): num must be non-negative, got {num}")
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    if dtype is None:
        dtype = dt.complex128 if is_complex else dt.float64
    else:
        dtype = dt.canonical_dtype(dtype)
        if is_complex and dtype.kind != "c":
            raise TypeError(f"linspace(): complex bounds cannot make a {dtype} array; pass a "
                            f"complex dtype")
    check_size(num, dtype, device, "linspace", f"num={num}")
    endpoint = bool(endpoint)
    if dtype.kind in "fc":
        return Array._new(device.backend.linspace(device, start, stop, num, dtype, endpoint,
                                                  precision), device)
    _check_integer_linspace(start, stop, num, endpoint, dtype)
    backend = device.backend
    y = backend.linspace(device, start, stop, num, precision, endpoint, precision)
    if dtype is not dt.bool:
        y = backend.unary("floor", y)
    return Array._new(backend.astype(y, dtype, True), device)


# Result types of the bounds for which NumPy's linspace computes in single precision (half too:
# arrayx has no float16 arrays, but a NumPy float16 scalar may come as a bound).
_SINGLE_PRECISION = frozenset((np.dtype(np.float16), dt.float32, dt.complex64))


def _linspace_precision(start, stop):
    """The real dtype NumPy's linspace computes in: that of its bounds' result type, where Python
    numbers are weak (NEP 50). Python numbers alone give float64; float32 (or complex64) arrays
    and NumPy scalars give float32, unless a float64 one comes with them."""
    strong = [v.dtype for v in (start, stop) if type(v) is Array or isinstance(v, (np.generic,
                                                                                   np.ndarray))]
    if strong and np.result_type(*strong, 0.0) in _SINGLE_PRECISION:
        return dt.float32
    return dt.float64


def _check_integer_linspace(start, stop, num, endpoint, dtype):
    """The first and last values of an integer linspace must fit the dtype: NumPy's cast would
    wrap them silently."""
    if not (math.isfinite(start) and math.isfinite(stop)):
        raise ValueError(f"linspace(): bounds {start} and {stop} have no {dtype} value; pass "
                         f"finite bounds")
    if num == 0 or dtype is dt.bool:
        return
    # NumPy's last value: stop itself, or start + (num - 1) * step with step = delta / num.
    last = stop if endpoint else start + (num - 1) * ((stop - start) / num)
    from ._validation import int_limits
    lo, hi = int_limits(dtype)
    for v in (start, last if num > 1 else start):
        if not lo <= math.floor(v) <= hi:
            raise OverflowError(f"linspace(): the value {math.floor(v)} is out of range for "
                                f"{dtype}; pass bounds within [{lo}, {hi}] or a wider dtype")


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """n_rows, n_cols and k may also be NumPy integers or 0-d integer arrays (a sync on cuda)."""
    device = resolve_device(device)
    dtype = _creation_dtype(dtype)
    n_rows = _python_int(n_rows, "eye", "n_rows")
    n_cols = n_rows if n_cols is None else _python_int(n_cols, "eye", "n_cols")
    if n_rows < 0 or n_cols < 0:
        raise ValueError(f"eye(): dimensions must be non-negative, got ({n_rows}, {n_cols})")
    check_size(n_rows * n_cols, dtype, device, "eye", f"shape ({n_rows}, {n_cols})")
    return Array._new(device.backend.eye(device, n_rows, n_cols, _python_int(k, "eye", "k"), dtype),
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
