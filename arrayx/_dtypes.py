"""The standard's data types, their categories and its type promotion table.

arrayx dtypes *are* NumPy dtype descriptors (``arrayx.float32 is numpy.dtype("float32")``):
both backends (NumPy and numba-cuda) speak them natively, so no conversion happens on any
call path. Only the 14 dtypes below are arrayx dtypes; everything else is rejected by
``canonical_dtype``.
"""

from __future__ import annotations

import warnings

import numpy as np

bool = np.dtype("bool")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

signed_integer_dtypes = (int8, int16, int32, int64)
unsigned_integer_dtypes = (uint8, uint16, uint32, uint64)
integer_dtypes = signed_integer_dtypes + unsigned_integer_dtypes
real_floating_dtypes = (float32, float64)
complex_floating_dtypes = (complex64, complex128)
floating_dtypes = real_floating_dtypes + complex_floating_dtypes
real_numeric_dtypes = integer_dtypes + real_floating_dtypes
numeric_dtypes = real_numeric_dtypes + complex_floating_dtypes
all_dtypes = (bool,) + numeric_dtypes

# Category names used in error messages and by `isdtype`-like checks.
CATEGORIES = {
    "bool": frozenset((bool,)),
    "signed integer": frozenset(signed_integer_dtypes),
    "unsigned integer": frozenset(unsigned_integer_dtypes),
    "integral": frozenset(integer_dtypes),
    "real floating": frozenset(real_floating_dtypes),
    "complex floating": frozenset(complex_floating_dtypes),
    "numeric": frozenset(numeric_dtypes),
    "real numeric": frozenset(real_numeric_dtypes),
    "floating-point": frozenset(floating_dtypes),
    "integer or boolean": frozenset(integer_dtypes + (bool,)),
    "any": frozenset(all_dtypes),
}

_ALL = frozenset(all_dtypes)
_BY_NAME = {d.name: d for d in all_dtypes}
# The arrayx dtypes by identity: the common argument is one of them, and an identity lookup
# costs neither hashing nor ``dtype.name`` (which NumPy builds anew each time, microseconds).
_BY_ID = {id(d): d for d in all_dtypes}


def canonical_dtype(dtype) -> np.dtype:
    """Return the arrayx dtype for ``dtype`` or raise TypeError for anything else."""
    d = _BY_ID.get(id(dtype))
    if d is not None:
        return d
    if isinstance(dtype, np.dtype) and dtype in _ALL:  # (a list would not even hash)
        # arrayx compares dtypes by identity; an equal instance (unpickled) is not the same one
        return _BY_NAME[dtype.name]
    try:
        if isinstance(dtype, str):  # NumPy's deprecated aliases ('a') are refused below
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                d = np.dtype(dtype)
        else:
            d = np.dtype(dtype)
    except (TypeError, ValueError):
        raise TypeError(f"{dtype!r} is not an array API dtype") from None
    if d.byteorder == ">" or d not in _ALL:
        raise TypeError(f"{dtype!r} is not an array API dtype")
    return _BY_NAME[d.name]


def _build_promotion_table():
    table = {}
    for d in all_dtypes:
        table[d, d] = d
    ladders = (signed_integer_dtypes, unsigned_integer_dtypes, real_floating_dtypes, complex_floating_dtypes)
    for ladder in ladders:
        for i, a in enumerate(ladder):
            for b in ladder[i:]:
                table[a, b] = table[b, a] = b
    # Mixed signed/unsigned: the smallest signed type holding both; int64 with uint64 is undefined.
    for u in unsigned_integer_dtypes:
        for s in signed_integer_dtypes:
            need = max(u.itemsize * 2, s.itemsize)
            if need <= 8:
                table[u, s] = table[s, u] = np.dtype(f"int{need * 8}")
    # Real with complex floating point: complex of the wider precision.
    for f in real_floating_dtypes:
        for c in complex_floating_dtypes:
            out = complex128 if max(f.itemsize * 2, c.itemsize) == 16 else complex64
            table[f, c] = table[c, f] = out
    return table


#: The standard's table only: what ``can_cast`` and lossless assignments go by.
PROMOTION_TABLE = _build_promotion_table()


def _build_mixed_table():
    # Where the standard leaves a pair undefined (integer with floating, bool with numbers,
    # int64 with uint64, int8 with uint64...) clients rely on NumPy's answer, which every
    # GPU library shares; NumPy agrees with the standard wherever the standard defines one.
    table = dict(PROMOTION_TABLE)
    for a in all_dtypes:
        for b in all_dtypes:
            if (a, b) not in table:
                table[a, b] = _BY_NAME[np.result_type(a, b).name]
    return table


#: Every pair of arrayx dtypes: the standard's table, extended by NumPy's result_type.
MIXED_PROMOTION_TABLE = _build_mixed_table()


def promote(d1: np.dtype, d2: np.dtype) -> np.dtype:
    """The dtype two arrays promote to (``MIXED_PROMOTION_TABLE``); every pair has one."""
    return MIXED_PROMOTION_TABLE[d1, d2]


def real_dtype_of(d: np.dtype) -> np.dtype:
    """The real dtype of a complex dtype's components; other dtypes are returned unchanged."""
    if d is complex64:
        return float32
    if d is complex128:
        return float64
    return d


def complex_dtype_of(d: np.dtype) -> np.dtype:
    """The complex dtype whose components have the real dtype ``d``."""
    return complex64 if d is float32 else complex128 if d is float64 else d


def describe_category(category: str) -> str:
    return {"integral": "an integer", "integer or boolean": "an integer or boolean",
            "real numeric": "a real numeric", "numeric": "a numeric",
            "real floating": "a real floating-point", "floating-point": "a floating-point",
            "bool": "a boolean", "complex floating": "a complex floating-point"}.get(category, category)
