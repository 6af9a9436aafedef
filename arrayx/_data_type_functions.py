"""Data type functions: astype, can_cast, finfo, iinfo, isdtype, result_type."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _dtypes as dt
from ._array_object import Array
from ._devices import parse_device
from ._validation import check_dtype


def astype(x, dtype, /, *, copy=True, device=None):
    if type(x) is not Array:
        raise TypeError(f"astype() expects an arrayx array, got {type(x).__name__}")
    dtype = check_dtype(dtype, "astype")
    # The standard: complex to a real-valued dtype "should not be permitted" (NumPy drops the
    # imaginary part); complex to bool is the standard's nonzero test. Decided here, before any
    # backend: a GPU backend has no cast kernel for it.
    if x.dtype.kind == "c" and dtype.kind != "c" and dtype is not dt.bool:
        raise TypeError(f"astype(): casting {x.dtype} to {dtype} would drop the imaginary part; "
                        f"take real(), imag() or abs() first")
    if device is not None and parse_device(device) is not x._device:
        x = x.to_device(device)
        copy = False
    if dtype is x.dtype and not copy:
        return x
    return Array._new(x._device.backend.astype(x._data, dtype, bool(copy)), x._device)


def _dtype_of(obj, fname, argname):
    if type(obj) is Array:
        return obj.dtype
    return check_dtype(obj, fname, argname)


def can_cast(from_, to, /):
    from_ = _dtype_of(from_, "can_cast", "from_")
    to = check_dtype(to, "can_cast", "to")
    return dt.PROMOTION_TABLE.get((from_, to)) is to


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: np.dtype


def _finfo_of(real: np.dtype) -> finfo_object:
    info = np.finfo(real)
    return finfo_object(bits=info.bits, eps=float(info.eps), max=float(info.max), min=float(info.min),
                        smallest_normal=float(info.smallest_normal), dtype=real)


def _iinfo_of(dtype: np.dtype) -> iinfo_object:
    info = np.iinfo(dtype)
    return iinfo_object(bits=info.bits, max=int(info.max), min=int(info.min), dtype=dtype)


# The objects are immutable: one per dtype, made at import (clients call finfo in loops).
_FINFO = {d: _finfo_of(dt.real_dtype_of(d)) for d in dt.floating_dtypes}
_IINFO = {d: _iinfo_of(d) for d in dt.integer_dtypes}


def finfo(type, /):
    dtype = _dtype_of(type, "finfo", "type")
    if dtype.kind not in "fc":
        raise TypeError(f"finfo() needs a floating-point dtype, got {dtype}")
    return _FINFO[dtype]


def iinfo(type, /):
    dtype = _dtype_of(type, "iinfo", "type")
    if dtype.kind not in "iu":
        raise TypeError(f"iinfo() needs an integer dtype, got {dtype}")
    return _IINFO[dtype]


_KINDS = {
    "bool": "bool", "signed integer": "signed integer", "unsigned integer": "unsigned integer",
    "integral": "integral", "real floating": "real floating", "complex floating": "complex floating",
    "numeric": "numeric",
}


def _kind_test(kind):
    """A kind (a name of _KINDS or a dtype) as a set of dtypes; an unknown one is an error even
    where an earlier kind of a tuple already matched."""
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype(): unknown kind {kind!r}; expected a dtype or one of "
                             f"{sorted(_KINDS)}")
        return dt.CATEGORIES[_KINDS[kind]]
    return frozenset((check_dtype(kind, "isdtype", "kind"),))


def isdtype(dtype, kind):
    dtype = check_dtype(dtype, "isdtype")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return any([dtype in _kind_test(k) for k in kinds])


def result_type(*arrays_and_dtypes):
    """The promoted dtype of arrays and dtypes, with Python scalars applied last (weakly)."""
    from ._elementwise_functions import _scalar_dtype

    strong = [a for a in arrays_and_dtypes if not isinstance(a, (bool, int, float, complex))]
    scalars = [a for a in arrays_and_dtypes if isinstance(a, (bool, int, float, complex))]
    if not strong:
        # No parentheses in this message: clients match it as a regular expression.
        raise ValueError("result_type: at least one array or dtype is needed, Python scalars "
                         "alone have no dtype")
    result = _dtype_of(strong[0], "result_type", "arrays_and_dtypes")
    for other in strong[1:]:
        result = dt.promote(result, _dtype_of(other, "result_type", "arrays_and_dtypes"))
    for s in scalars:
        result = _scalar_dtype("result_type", s, result, "any")
    return result


__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]
