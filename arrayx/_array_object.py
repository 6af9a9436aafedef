"""The array object: one class for every device.

An Array is a thin handle: a backend-native array (``numpy.ndarray`` on the CPU, a ``CudaArray``
on CUDA, both carrying shape, dtype, strides and offset over a shared buffer) and the Device it
lives on. Every operator forwards to the namespace function, which validates once and dispatches
to the device's backend.
"""

from __future__ import annotations

import math

import numpy as np

from . import _dtypes as dt

_SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


class Array:
    __slots__ = ("_data", "_device", "__weakref__")

    # Make NumPy defer to our reflected operators (`np_scalar + x`).
    __array_ufunc__ = None

    def __new__(cls, *args, **kwargs):
        raise TypeError("arrayx arrays are created by the namespace's functions (arrayx.asarray, "
                        "arrayx.zeros, ...), not by the Array constructor")

    @classmethod
    def _new(cls, data, device):
        self = object.__new__(cls)
        self._data = data
        self._device = device
        return self

    # --- attributes -----------------------------------------------------------------------
    @property
    def dtype(self):
        return self._data.dtype

    @property
    def device(self):
        return self._device

    @property
    def ndim(self):
        return self._data.ndim

    @property
    def shape(self):
        return self._data.shape

    @property
    def size(self):
        return math.prod(self._data.shape)

    @property
    def T(self):
        if self.ndim != 2:
            raise ValueError(f"x.T needs a 2-D array, got {self.ndim}-D; use permute_dims or mT")
        return _ns.permute_dims(self, (1, 0))

    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError(f"x.mT needs an array of at least 2 dimensions, got {self.ndim}-D")
        return _ns.matrix_transpose(self)

    # --- protocol methods -----------------------------------------------------------------
    def __array_namespace__(self, /, *, api_version=None):
        if api_version is not None and api_version not in _SUPPORTED_API_VERSIONS:
            raise ValueError(f"unsupported array API version {api_version!r}; arrayx implements "
                             f"{_SUPPORTED_API_VERSIONS[-1]}")
        import arrayx
        return arrayx

    def __array__(self, dtype=None, copy=None):
        if self._device.kind != "cpu":
            raise TypeError(f"cannot convert an array on {self._device} to NumPy implicitly "
                            f"(that hides a device-to-host copy); call x.to_device('cpu') first")
        if copy is False:
            return self._data if dtype is None or np.dtype(dtype) == self.dtype else np.asarray(
                self._data, dtype=dtype, copy=False)
        return np.array(self._data, dtype=dtype, copy=copy)

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self._device.backend.to_dlpack(self._data, stream, max_version, dl_device, copy)

    def __dlpack_device__(self, /):
        return self._device.backend.dlpack_device(self._data)

    def to_device(self, device, /, *, stream=None):
        return _ns._to_device(self, device, stream)

    def __repr__(self):
        host = self._device.backend.to_host(self._data)
        body = np.array2string(host, separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype}, device='{self._device}')"

    __str__ = __repr__

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        raise TypeError("arrayx arrays are mutable and unhashable")

    # --- conversion to Python scalars -------------------------------------------------------
    def _scalar(self, what):
        if self.size != 1:
            raise ValueError(f"only an array with one element can be converted to a Python {what}; "
                             f"this one has shape {self.shape}")
        return self._device.backend.to_host(self._data).reshape(()).item()

    def __bool__(self):
        return bool(self._scalar("bool"))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def __float__(self):
        if self.dtype.kind == "c":
            raise TypeError("cannot convert a complex array to a Python float; use real() or abs()")
        return float(self._scalar("float"))

    def __int__(self):
        if self.dtype.kind == "c":
            raise TypeError("cannot convert a complex array to a Python int")
        return int(self._scalar("int"))

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index, not {self.dtype}")
        return int(self._scalar("int"))

    # --- indexing ---------------------------------------------------------------------------
    def __getitem__(self, key, /):
        return _indexing.getitem(self, key)

    def __setitem__(self, key, value, /):
        _indexing.setitem(self, key, value)


# Operators: name -> namespace function; reflected operators swap the operands.
_BINARY_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "pow", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
}
_COMPARISONS = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                "eq": "equal", "ne": "not_equal"}
_UNARY_OPERATORS = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "bitwise_invert"}


def _in_place_via_copy(fn):
    """x op= y for operators with no in-place primitive (matmul): compute, check, write back."""
    def op(self, other, /):
        result = fn(self, other)
        if result.dtype != self.dtype or result.shape != self.shape:
            raise ValueError(f"in-place {fn.__name__} would change the array from {self.dtype}"
                             f"{self.shape} to {result.dtype}{result.shape}")
        self._device.backend.setitem(self._data, (Ellipsis,), result._data)
        return self
    return op


def _install_operators():
    from . import _elementwise_functions as ew

    def forward(fn):
        return lambda self, other, /: fn(self, other)

    def reflected(fn):
        return lambda self, other, /: fn(other, self)

    for op, name in _BINARY_OPERATORS.items():
        fn = getattr(_ns, name)
        setattr(Array, f"__{op}__", forward(fn))
        setattr(Array, f"__r{op}__", reflected(fn))
        setattr(Array, f"__i{op}__", ew.IN_PLACE.get(name) or _in_place_via_copy(fn))
    for op, name in _COMPARISONS.items():
        setattr(Array, f"__{op}__", forward(getattr(_ns, name)))
    for op, name in _UNARY_OPERATORS.items():
        fn = getattr(_ns, name)
        setattr(Array, f"__{op}__", lambda self, /, fn=fn: fn(self))


from . import _namespace as _ns  # noqa: E402  (the namespace needs Array defined first)
from . import _indexing  # noqa: E402

_install_operators()
