"""The array object: one class for every device.

An Array is a thin handle: a backend-native array (``numpy.ndarray`` on the CPU, a ``CudaArray``
on CUDA, both carrying shape, dtype, strides and offset over a shared buffer) and the Device it
lives on. Every operator is one call of the namespace function that does the same (``x + y`` is
``add(x, y)``, ``x += y`` the in-place form of ``add``), which validates once and dispatches to
the device's backend; an operator re-checks nothing the function checks.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from types import EllipsisType, ModuleType
from typing import Any

import numpy as np

from . import _settings
from ._devices import CPU, Device

# The operands a binary operator hands to its namespace function besides arrays: Python's
# scalars and NumPy's (the function then checks their kinds).
_SCALARS = (bool, int, float, complex, np.generic)

_SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


# No CUDA stream handle lies in the first page: a smaller integer is a mistake (0 is refused by
# the standard as ambiguous), not a stream.
_SMALLEST_STREAM_HANDLE = 4096


def _check_int_pair(value, argname):
    if value is None:
        return
    if not (isinstance(value, tuple) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise TypeError(f"__dlpack__(): {argname} must be None or a tuple of two ints, got {value!r}")


def _check_dlpack_arguments(device, stream, max_version, dl_device, copy):
    _check_int_pair(max_version, "max_version")
    _check_int_pair(dl_device, "dl_device")
    if copy is not None and not isinstance(copy, bool):
        raise TypeError(f"__dlpack__(): copy must be None or a bool, got {copy!r}")
    if stream is None:
        return
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise TypeError(f"__dlpack__(): stream must be None or an int, got {type(stream).__name__}")
    if device.kind == "cpu":
        raise ValueError(f"__dlpack__(): stream must be None for an array on the CPU, got {stream}")
    if stream not in (-1, 1, 2) and not stream >= _SMALLEST_STREAM_HANDLE:
        raise ValueError(f"__dlpack__(): stream {stream} is not a CUDA stream: use None or 1 (the "
                         f"legacy default stream), 2 (the per-thread default stream), -1 (no "
                         f"synchronisation) or a stream handle")


class Array:
    """An n-dimensional array of the arrayx namespace, on one device.

    Created by the namespace's functions (``arrayx.asarray``, ``arrayx.zeros``, ...), never by
    calling the class.
    """

    __slots__ = ("_data", "_device", "__weakref__")
    _data: Any  # the backend-native array
    _device: Device

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """NumPy ufuncs on arrayx arrays run as arrayx functions on the array's device
        (``np.sqrt(x)``, ``np.sum(x)``, ``np_scalar * x``): see ``_numpy_ufuncs``."""
        from ._numpy_ufuncs import array_ufunc
        return array_ufunc(ufunc, method, inputs, kwargs)

    def __new__(cls, *args, **kwargs):
        raise TypeError("arrayx arrays are created by the namespace's functions (arrayx.asarray, "
                        "arrayx.zeros, ...), not by the Array constructor")

    @classmethod
    def _new(cls, data: Any, device: Device) -> Array:
        """Wrap a backend-native array of `device` (no copy, no check)."""
        self = object.__new__(cls)
        self._data = data
        self._device = device
        return self

    # --- attributes -----------------------------------------------------------------------
    @property
    def dtype(self) -> np.dtype:
        """The data type of the elements (arrayx dtypes are NumPy dtype descriptors)."""
        return self._data.dtype

    @property
    def device(self) -> Device:
        """The device holding the elements."""
        return self._device

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    @property
    def shape(self) -> tuple[int, ...]:
        """The length of every dimension."""
        return self._data.shape

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self._data.shape)

    @property
    def T(self) -> Array:
        """The transpose of a 2-D array (a view); other ranks raise ValueError."""
        if self.ndim != 2:
            raise ValueError(f"x.T needs a 2-D array, got {self.ndim}-D; use permute_dims or mT")
        return _ns.permute_dims(self, (1, 0))

    @property
    def mT(self) -> Array:
        """The transpose of the last two dimensions (a view): :func:`arrayx.matrix_transpose`."""
        if self.ndim < 2:
            raise ValueError(f"x.mT needs an array of at least 2 dimensions, got {self.ndim}-D")
        return _ns.matrix_transpose(self)

    # --- arithmetic operators -------------------------------------------------------------
    # A Python scalar operand is weak (it takes the array's dtype). For an operand that is neither
    # an array nor a scalar, a binary operator returns NotImplemented, as Python's data model
    # asks: the other operand's reflected method then gets its turn (SciPy's LinearOperator
    # implements `array @ operator` that way), and Python raises TypeError when it has none.
    # In-place operators raise TypeError themselves: falling back would rebind the name.
    def __add__(self, other: Array | int | float | complex, /) -> Array:
        """``self + other``: :func:`arrayx.add`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.add(self, other)

    def __radd__(self, other: Array | int | float | complex, /) -> Array:
        """``other + self``: :func:`arrayx.add`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.add(other, self)

    def __iadd__(self, other: Array | int | float | complex, /) -> Array:
        """``self += other``, in place: the in-place form of :func:`arrayx.add`."""
        return _IN_PLACE["add"](self, other)

    def __sub__(self, other: Array | int | float | complex, /) -> Array:
        """``self - other``: :func:`arrayx.subtract`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.subtract(self, other)

    def __rsub__(self, other: Array | int | float | complex, /) -> Array:
        """``other - self``: :func:`arrayx.subtract`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.subtract(other, self)

    def __isub__(self, other: Array | int | float | complex, /) -> Array:
        """``self -= other``, in place: the in-place form of :func:`arrayx.subtract`."""
        return _IN_PLACE["subtract"](self, other)

    def __mul__(self, other: Array | int | float | complex, /) -> Array:
        """``self * other``: :func:`arrayx.multiply`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.multiply(self, other)

    def __rmul__(self, other: Array | int | float | complex, /) -> Array:
        """``other * self``: :func:`arrayx.multiply`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.multiply(other, self)

    def __imul__(self, other: Array | int | float | complex, /) -> Array:
        """``self *= other``, in place: the in-place form of :func:`arrayx.multiply`."""
        return _IN_PLACE["multiply"](self, other)

    def __truediv__(self, other: Array | int | float | complex, /) -> Array:
        """``self / other``: :func:`arrayx.divide`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.divide(self, other)

    def __rtruediv__(self, other: Array | int | float | complex, /) -> Array:
        """``other / self``: :func:`arrayx.divide`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.divide(other, self)

    def __itruediv__(self, other: Array | int | float | complex, /) -> Array:
        """``self /= other``, in place: the in-place form of :func:`arrayx.divide`."""
        return _IN_PLACE["divide"](self, other)

    def __floordiv__(self, other: Array | int | float, /) -> Array:
        """``self // other``: :func:`arrayx.floor_divide`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.floor_divide(self, other)

    def __rfloordiv__(self, other: Array | int | float, /) -> Array:
        """``other // self``: :func:`arrayx.floor_divide`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.floor_divide(other, self)

    def __ifloordiv__(self, other: Array | int | float, /) -> Array:
        """``self //= other``, in place: the in-place form of :func:`arrayx.floor_divide`."""
        return _IN_PLACE["floor_divide"](self, other)

    def __mod__(self, other: Array | int | float, /) -> Array:
        """``self % other``: :func:`arrayx.remainder`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.remainder(self, other)

    def __rmod__(self, other: Array | int | float, /) -> Array:
        """``other % self``: :func:`arrayx.remainder`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.remainder(other, self)

    def __imod__(self, other: Array | int | float, /) -> Array:
        """``self %= other``, in place: the in-place form of :func:`arrayx.remainder`."""
        return _IN_PLACE["remainder"](self, other)

    def __pow__(self, other: Array | int | float | complex, /) -> Array:
        """``self ** other``: :func:`arrayx.pow` (no three-argument ``pow``)."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.pow(self, other)

    def __rpow__(self, other: Array | int | float | complex, /) -> Array:
        """``other ** self``: :func:`arrayx.pow`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.pow(other, self)

    def __ipow__(self, other: Array | int | float | complex, /) -> Array:
        """``self **= other``, in place: the in-place form of :func:`arrayx.pow`."""
        return _IN_PLACE["pow"](self, other)

    # --- matrix multiplication ------------------------------------------------------------
    def __matmul__(self, other: Array, /) -> Array:
        """``self @ other``: :func:`arrayx.matmul`."""
        if type(other) is not Array:
            return NotImplemented
        return _ns.matmul(self, other)

    def __rmatmul__(self, other: Array, /) -> Array:
        """``other @ self``: :func:`arrayx.matmul`."""
        if type(other) is not Array:
            return NotImplemented
        return _ns.matmul(other, self)

    def __imatmul__(self, other: Array, /) -> Array:
        """``self @= other``: :func:`arrayx.matmul` written back into ``self``; ValueError if the
        product's dtype or shape differs from ``self``'s."""
        # matmul has no in-place backend primitive: compute, check, write back.
        result = _ns.matmul(self, other)
        if result.dtype != self.dtype or result.shape != self.shape:
            raise ValueError(f"in-place matmul would change the array from {self.dtype}"
                             f"{self.shape} to {result.dtype}{result.shape}")
        self._device.backend.setitem(self._data, (Ellipsis,), result._data)
        return self

    # --- bitwise operators ----------------------------------------------------------------
    def __and__(self, other: Array | int | bool, /) -> Array:
        """``self & other``: :func:`arrayx.bitwise_and`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.bitwise_and(self, other)

    def __rand__(self, other: Array | int | bool, /) -> Array:
        """``other & self``: :func:`arrayx.bitwise_and`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.bitwise_and(other, self)

    def __iand__(self, other: Array | int | bool, /) -> Array:
        """``self &= other``, in place: the in-place form of :func:`arrayx.bitwise_and`."""
        return _IN_PLACE["bitwise_and"](self, other)

    def __or__(self, other: Array | int | bool, /) -> Array:
        """``self | other``: :func:`arrayx.bitwise_or`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.bitwise_or(self, other)

    def __ror__(self, other: Array | int | bool, /) -> Array:
        """``other | self``: :func:`arrayx.bitwise_or`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.bitwise_or(other, self)

    def __ior__(self, other: Array | int | bool, /) -> Array:
        """``self |= other``, in place: the in-place form of :func:`arrayx.bitwise_or`."""
        return _IN_PLACE["bitwise_or"](self, other)

    def __xor__(self, other: Array | int | bool, /) -> Array:
        """``self ^ other``: :func:`arrayx.bitwise_xor`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.bitwise_xor(self, other)

    def __rxor__(self, other: Array | int | bool, /) -> Array:
        """``other ^ self``: :func:`arrayx.bitwise_xor`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.bitwise_xor(other, self)

    def __ixor__(self, other: Array | int | bool, /) -> Array:
        """``self ^= other``, in place: the in-place form of :func:`arrayx.bitwise_xor`."""
        return _IN_PLACE["bitwise_xor"](self, other)

    def __lshift__(self, other: Array | int, /) -> Array:
        """``self << other``: :func:`arrayx.bitwise_left_shift`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.bitwise_left_shift(self, other)

    def __rlshift__(self, other: Array | int, /) -> Array:
        """``other << self``: :func:`arrayx.bitwise_left_shift`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.bitwise_left_shift(other, self)

    def __ilshift__(self, other: Array | int, /) -> Array:
        """``self <<= other``, in place: the in-place form of :func:`arrayx.bitwise_left_shift`."""
        return _IN_PLACE["bitwise_left_shift"](self, other)

    def __rshift__(self, other: Array | int, /) -> Array:
        """``self >> other``: :func:`arrayx.bitwise_right_shift`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.bitwise_right_shift(self, other)

    def __rrshift__(self, other: Array | int, /) -> Array:
        """``other >> self``: :func:`arrayx.bitwise_right_shift`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.bitwise_right_shift(other, self)

    def __irshift__(self, other: Array | int, /) -> Array:
        """``self >>= other``, in place: the in-place form of :func:`arrayx.bitwise_right_shift`."""
        return _IN_PLACE["bitwise_right_shift"](self, other)

    # --- comparisons ----------------------------------------------------------------------
    # Python reflects a comparison with a scalar on the left (`1 < x` is `x > 1`) itself.
    def __lt__(self, other: Array | int | float, /) -> Array:
        """``self < other``: :func:`arrayx.less`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.less(self, other)

    def __le__(self, other: Array | int | float, /) -> Array:
        """``self <= other``: :func:`arrayx.less_equal`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.less_equal(self, other)

    def __gt__(self, other: Array | int | float, /) -> Array:
        """``self > other``: :func:`arrayx.greater`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.greater(self, other)

    def __ge__(self, other: Array | int | float, /) -> Array:
        """``self >= other``: :func:`arrayx.greater_equal`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.greater_equal(self, other)

    # The standard's == and != are elementwise and return arrays, not bool.
    def __eq__(  # type: ignore[override]
            self, other: Array | int | float | complex | bool, /) -> Array:
        """``self == other``: :func:`arrayx.equal`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.equal(self, other)

    def __ne__(  # type: ignore[override]
            self, other: Array | int | float | complex | bool, /) -> Array:
        """``self != other``: :func:`arrayx.not_equal`."""
        if type(other) is not Array and not isinstance(other, _SCALARS):
            return NotImplemented
        return _ns.not_equal(self, other)

    # --- unary operators ------------------------------------------------------------------
    def __neg__(self, /) -> Array:
        """``-self``: :func:`arrayx.negative`."""
        return _ns.negative(self)

    def __pos__(self, /) -> Array:
        """``+self``: :func:`arrayx.positive`."""
        return _ns.positive(self)

    def __abs__(self, /) -> Array:
        """``abs(self)``: :func:`arrayx.abs`."""
        return _ns.abs(self)

    def __invert__(self, /) -> Array:
        """``~self``: :func:`arrayx.bitwise_invert`."""
        return _ns.bitwise_invert(self)

    # --- conversion to Python scalars -----------------------------------------------------
    def _scalar(self, what: str) -> Any:
        """The single element as a Python scalar (copied to the host); ValueError otherwise."""
        if self.size != 1:
            raise ValueError(f"only an array with one element can be converted to a Python {what}; "
                             f"this one has shape {self.shape}")
        return self._device.backend.to_host(self._data).reshape(()).item()

    def __bool__(self, /) -> bool:
        """``bool(self)`` of an array with one element (of any shape)."""
        return bool(self._scalar("bool"))

    def __complex__(self, /) -> complex:
        """``complex(self)`` of an array with one element."""
        return complex(self._scalar("complex"))

    def __float__(self, /) -> float:
        """``float(self)`` of a non-complex array with one element."""
        if self.dtype.kind == "c":
            raise TypeError("cannot convert a complex array to a Python float; use real() or abs()")
        return float(self._scalar("float"))

    def __int__(self, /) -> int:
        """``int(self)`` of a non-complex array with one element (floats truncate)."""
        if self.dtype.kind == "c":
            raise TypeError("cannot convert a complex array to a Python int")
        return int(self._scalar("int"))

    def __index__(self, /) -> int:
        """``operator.index(self)`` of an integer array with one element."""
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index, not {self.dtype}")
        return int(self._scalar("int"))

    # --- indexing -------------------------------------------------------------------------
    def __getitem__(
        self,
        key: (int | slice | EllipsisType | None | Array
              | tuple[int | slice | EllipsisType | None | Array, ...]),
        /,
    ) -> Array:
        """``self[key]``: basic indexing gives a view; integer-array and boolean keys a copy."""
        return _indexing.getitem(self, key)

    def __setitem__(
        self,
        key: (int | slice | EllipsisType | None | Array
              | tuple[int | slice | EllipsisType | None | Array, ...]),
        value: Array | int | float | complex | bool,
        /,
    ) -> None:
        """``self[key] = value``, writing through to every view of the same memory."""
        _indexing.setitem(self, key, value)

    # --- protocols ------------------------------------------------------------------------
    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        """The ``arrayx`` module, for every supported version of the standard."""
        if api_version is not None and api_version not in _SUPPORTED_API_VERSIONS:
            raise ValueError(f"unsupported array API version {api_version!r}; arrayx implements "
                             f"{_SUPPORTED_API_VERSIONS[-1]}")
        import arrayx
        return arrayx

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """NumPy's conversion. A CPU array converts without a copy where NumPy allows; an array
        on another device only under ``arrayx.set_implicit_host_copy(True)`` (a host copy, with
        an ``ImplicitHostCopyWarning`` once), else TypeError: call ``to_device('cpu')``."""
        if self._device.kind != "cpu":
            if not _settings.get_implicit_host_copy():
                raise TypeError(f"cannot convert an array on {self._device} to NumPy implicitly "
                                f"(that hides a device-to-host copy); call x.to_device('cpu') "
                                f"first, or allow such copies with "
                                f"arrayx.set_implicit_host_copy(True) or "
                                f"{_settings.ENV_VAR}=1")
            if copy is False:
                raise ValueError(f"np.asarray(..., copy=False) of an array on {self._device} is "
                                 f"impossible: the elements must be copied to the host")
            _settings.warn_implicit_host_copy(self._device)
            host = self._device.backend.to_host(self._data)  # a fresh host array: no 2nd copy
            return host if dtype is None else host.astype(dtype, copy=False)
        data = self._device.backend.to_host(self._data)  # the array itself, as a primitive call
        if copy is False:
            return data if dtype is None or np.dtype(dtype) == self.dtype else np.asarray(
                data, dtype=dtype, copy=False)
        return np.array(data, dtype=dtype, copy=copy)

    def __dlpack__(
        self,
        /,
        *,
        stream: int | Any | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """A DLPack capsule of the elements (unversioned when ``max_version`` is None).

        ``stream`` (the consumer's stream, the standard's values): on a CUDA device None or 1
        (the legacy default stream), 2 (the per-thread default stream), -1 (no synchronisation)
        or a stream handle; on the CPU None. Anything else is refused here, before a backend
        could take a small integer for a stream pointer."""
        _check_dlpack_arguments(self._device, stream, max_version, dl_device, copy)
        return self._device.backend.to_dlpack(self._data, stream, max_version, dl_device, copy)

    def __dlpack_device__(self, /) -> tuple[int, int]:
        """The DLPack ``(device type, device id)`` of the elements."""
        return self._device.backend.dlpack_device(self._data)

    def to_device(self, device: Device | str, /, *, stream: int | Any | None = None) -> Array:
        """A copy of the array on `device`, or the array itself if it is there already."""
        return _ns._to_device(self, device, stream)

    # --- Python container behaviour -------------------------------------------------------
    def __repr__(self) -> str:
        """The elements, the dtype and the device. Only the elements printed are copied to the
        host: past NumPy's print threshold, the edge blocks that NumPy's summary shows."""
        host, summarised = _printable(self)
        body = np.array2string(host, separator=", ", prefix="Array(",
                               threshold=0 if summarised else None)
        return f"Array({body}, dtype={self.dtype}, device='{self._device}')"

    def __str__(self) -> str:
        """The same as ``repr(self)``: the device matters when reading either."""
        return self.__repr__()

    def __format__(self, format_spec: str, /) -> str:
        """``format(x, spec)`` as NumPy does it: a 0-d array formats as its scalar (copied to the
        host); other arrays accept only the empty spec, giving ``str(x)``."""
        if self.ndim == 0:
            return format(self._device.backend.to_host(self._data)[()], format_spec)
        if format_spec:
            raise TypeError(f"unsupported format string {format_spec!r} for an array of shape "
                            f"{self.shape}: format its elements (x[i]) or a 0-d array")
        return str(self)

    def __len__(self) -> int:
        """The length of the first dimension; TypeError for a 0-d array."""
        if self.ndim == 0:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self) -> Iterator[Array]:
        """The subarrays along the first dimension; TypeError for a 0-d array."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self) -> int:
        """Arrays are mutable: TypeError."""
        raise TypeError("arrayx arrays are mutable and unhashable")

    # --- copying and pickling -------------------------------------------------------------
    def __copy__(self) -> Array:
        """``copy.copy(x)``: a copy of the elements on the same device, as NumPy's arrays copy
        theirs (a mutable array sharing its buffer would not be a copy)."""
        return _ns.asarray(self, copy=True)

    def __deepcopy__(self, memo: dict) -> Array:
        """``copy.deepcopy(x)``: the same as ``copy.copy(x)`` (the elements are numbers)."""
        return _ns.asarray(self, copy=True)

    def __reduce__(self) -> tuple[Any, tuple[np.ndarray, str]]:
        """Pickles as the elements on the host and the device's name; unpickling copies them to
        that device, which must exist where the pickle is loaded."""
        return _array_from_pickle, (_host_piece(self), str(self._device))


def _array_from_pickle(host: np.ndarray, device: str) -> Array:
    return _ns.asarray(host, device=device)


def _host_piece(x: Array) -> np.ndarray:
    """`x` on the host: the one transfer repr() makes per block it prints (on the cpu the
    array itself, through the same primitive, so arrayx.compile sees every host read)."""
    return x._device.backend.to_host(x._data)


def _printable(x: Array) -> tuple[np.ndarray, bool]:
    """What repr() prints, on the host, and whether NumPy must summarise it.

    An array within NumPy's print threshold comes whole. A larger one comes as its edge blocks:
    each axis longer than 2 * edgeitems is cut to its leading and trailing edgeitems around one
    placeholder, which NumPy's summary elides (and NumPy picks the number format from the edges
    only), so the text is the whole array's while only what it shows leaves the device.
    """
    options = np.get_printoptions()
    edge = options["edgeitems"]
    # edgeitems=0 makes NumPy's summary read the whole array (its trailing block is a[-0:])
    if x.size <= options["threshold"] or edge == 0:
        return _host_piece(x), False

    def assemble(axis: int, key: tuple) -> np.ndarray:
        if axis == x.ndim:
            return _host_piece(x[key])
        n = x.shape[axis]
        if n <= 2 * edge:
            return assemble(axis + 1, key + (slice(None),))
        lead = assemble(axis + 1, key + (slice(None, edge),))
        trail = assemble(axis + 1, key + (slice(n - edge, None),))
        placeholder = np.zeros(lead.shape[:axis] + (1,) + lead.shape[axis + 1:], lead.dtype)
        return np.concatenate([lead, placeholder, trail], axis=axis)

    return assemble(0, ()), True


from . import _namespace as _ns  # noqa: E402  (the namespace needs Array defined first)
from . import _indexing  # noqa: E402
from ._elementwise_functions import IN_PLACE as _IN_PLACE  # noqa: E402
