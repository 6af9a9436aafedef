"""`__array_namespace_info__`: what this library and its devices support."""

from __future__ import annotations

from . import _dtypes as dt
from ._devices import CPU, available_devices, default_device, parse_device

_KIND_DTYPES = {
    "bool": (dt.bool,),
    "signed integer": dt.signed_integer_dtypes,
    "unsigned integer": dt.unsigned_integer_dtypes,
    "integral": dt.integer_dtypes,
    "real floating": dt.real_floating_dtypes,
    "complex floating": dt.complex_floating_dtypes,
    "numeric": dt.numeric_dtypes,
}
# (name, dtype) pairs made once: NumPy builds ``dtype.name`` anew on every read (microseconds),
# and clients ask for these dictionaries in their inner loops.
_NAMED_ALL = tuple((d.name, d) for d in dt.all_dtypes)
_NAMED_KIND = {k: tuple((d.name, d) for d in dtypes) for k, dtypes in _KIND_DTYPES.items()}


class __array_namespace_info__:
    """Inspection API of the array API standard."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return default_device()

    def default_dtypes(self, *, device=None):
        if device is not None:
            parse_device(device)
        return {"real floating": dt.float64, "complex floating": dt.complex128, "integral": dt.int64,
                "indexing": dt.int64}

    def devices(self):
        return tuple(available_devices())

    def dtypes(self, *, device=None, kind=None):
        if device is not None:
            parse_device(device)
        if kind is None:
            return dict(_NAMED_ALL)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        out = {}
        for k in kinds:
            if k not in _NAMED_KIND:
                raise ValueError(f"dtypes(): unknown kind {k!r}; expected one of {sorted(_KIND_DTYPES)}")
            out.update(_NAMED_KIND[k])
        return out


del CPU
