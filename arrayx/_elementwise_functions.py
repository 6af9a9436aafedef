"""Elementwise functions: one factory for unary and one for binary functions, driven by tables.

Each table entry names the dtype category the standard requires; the namespace checks it and
computes the promoted dtype once, then calls the backend's `unary`/`binary` primitive.

Promotion rule for two arrays: the standard's table exactly where it defines a result; where it
leaves the mix undefined (integers with floats, bool with numbers, int64 with uint64, int8 with
uint64) arrayx follows NumPy's `result_type` (`_dtypes.MIXED_PROMOTION_TABLE`): int64 with
float32 is float64, uint64 with int64 is float64, bool with int8 is int8. The function's
category applies to the promoted dtype, as in NumPy: add(bool, int8) is int8, but add of two
bool arrays, atan2 of two integer arrays and bitwise_and of int64 with uint64 (float64) stay
errors. Operands of such a mixed pair are cast to the promoted dtype here (one astype each),
so backends only ever see the pairs of the standard's table. An in-place operator is allowed
only when the promoted dtype is the left operand's own dtype.
Python scalars are weak. The standard fixes bool/int/float/complex scalars with arrays of a
matching kind (and complex scalars with real floating arrays); where it leaves the mix open
(a float scalar with an integer array, an int scalar with a bool array) arrayx follows NumPy's
NEP 50: the result is the default dtype of the scalar's kind (float64, int64, complex128).
A NumPy scalar (np.int64(3), np.float32(0.5), np.bool_(True)) counts as the Python scalar it
holds, as np.float64 (a float subclass) already does: weak, unlike NumPy's own strong scalars.
"""

from __future__ import annotations

import numpy as np

from . import _dtypes as dt
from ._backend import (BINARY_CATEGORY, BOOL_RESULT_BINARY, COMPARISONS, UNARY_CATEGORY,  # noqa: F401
                       unary_result_dtype)
from ._array_object import Array
from ._data_type_functions import astype
from ._validation import broadcast_shapes, check_device, check_int_in_range, int_limits

# --- unary ---------------------------------------------------------------------------------

def _make_unary(name: str):
    allowed = dt.CATEGORIES[UNARY_CATEGORY[name]]

    def fn(x, /):
        if type(x) is not Array:
            raise TypeError(f"{name}() expects an arrayx array, got {type(x).__name__}")
        data = x._data
        if data.dtype not in allowed:
            raise TypeError(f"{name}() requires {dt.describe_category(UNARY_CATEGORY[name])} dtype, "
                            f"got {data.dtype}")
        device = x._device
        return Array._new(device.backend.unary(name, data), device)

    fn.__name__ = fn.__qualname__ = name
    return fn


# --- binary --------------------------------------------------------------------------------

# (dtype1, dtype2) -> promoted dtype: for two dtypes of the category, the standard's table; for
# a pair it leaves undefined, NumPy's result when that is of the category. One lookup checks all.
def _category_table(category):
    allowed = dt.CATEGORIES[category]
    return {k: v for k, v in dt.MIXED_PROMOTION_TABLE.items() if v in allowed and (
        k not in dt.PROMOTION_TABLE or (k[0] in allowed and k[1] in allowed))}


_TABLES = {cat: _category_table(cat) for cat in set(BINARY_CATEGORY.values())}
# Pairs beyond the standard's table: their operands are cast before the backend sees them.
_MIXED = frozenset(dt.MIXED_PROMOTION_TABLE.keys() - dt.PROMOTION_TABLE.keys())


def _scalar_dtype(name: str, value, dtype, category: str):
    """The dtype of `array(dtype) <name> value` for a Python scalar `value` (module docstring)."""
    kind = dtype.kind
    if isinstance(value, bool):
        out = dtype
    elif isinstance(value, int):
        out = dt.int64 if kind == "b" else dtype
        check_int_in_range(value, out, name)
    elif isinstance(value, float):
        out = dtype if kind in "fc" else dt.float64
    elif isinstance(value, complex):
        out = dtype if kind == "c" else dt.complex_dtype_of(dtype) if kind == "f" else dt.complex128
    else:
        raise TypeError(f"{name}() expects arrayx arrays or Python scalars, got {type(value).__name__}")
    if out not in dt.CATEGORIES[category]:
        raise TypeError(f"{name}() requires {dt.describe_category(category)} dtypes; got an array of "
                        f"{dtype} with a Python {type(value).__name__}")
    return out


_PYTHON_SCALARS = (bool, int, float, complex)


def _python_scalar(value):
    """NumPy's float64/complex128 scalars subclass float/complex but are strong for NumPy: pass
    the backend a plain Python scalar so it stays weak everywhere; the other NumPy number and
    bool scalars likewise become the Python scalar they hold (libraries such as SciPy mix them
    with arrays)."""
    if type(value) in _PYTHON_SCALARS:
        return value
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return value.item()
    for kind in _PYTHON_SCALARS:
        if isinstance(value, kind):
            return kind(value)
    return value


def cast_mixed(a, b, dtype, backend):
    """Native operands of a pair beyond the standard's table, cast to their promoted dtype."""
    if (a.dtype, b.dtype) in _MIXED:
        if a.dtype is not dtype:
            a = backend.astype(a, dtype, True)
        if b.dtype is not dtype:
            b = backend.astype(b, dtype, True)
    return a, b


def _promotion_error(name: str, d1, d2, category: str):
    allowed = dt.CATEGORIES[category]
    if d1 is d2 or (d1, d2) in dt.PROMOTION_TABLE:
        for d in (d1, d2):
            if d not in allowed:
                return TypeError(f"{name}() requires {dt.describe_category(category)} dtype, got {d}")
    return TypeError(f"{name}(): {d1} and {d2} promote to {dt.promote(d1, d2)}, which is not "
                     f"{dt.describe_category(category)} dtype; cast one operand with astype() first")


def binary_operands(name: str, category: str):
    """A resolver for the two operands of `name`, arrays or Python scalars: device agreement,
    dtype category, promotion and broadcast compatibility, checked once."""
    table = _TABLES[category]

    def operands(x1, x2):
        """-> (native1 or scalar, native2 or scalar, computation dtype, device)."""
        if type(x1) is Array:
            a = x1._data
            device = x1._device
            if type(x2) is Array:
                b = x2._data
                if x2._device is not device:
                    raise ValueError(f"{name}(): arrays are on different devices ({device} and "
                                     f"{x2._device}); move one with to_device() first")
                dtype = table.get((a.dtype, b.dtype))
                if dtype is None:
                    raise _promotion_error(name, a.dtype, b.dtype, category)
                if a.shape != b.shape:
                    broadcast_shapes(a.shape, b.shape)
                a, b = cast_mixed(a, b, dtype, device.backend)
                return a, b, dtype, device
            x2 = _python_scalar(x2)
            return a, x2, _scalar_dtype(name, x2, a.dtype, category), device
        if type(x2) is Array:
            x1 = _python_scalar(x1)
            return x1, x2._data, _scalar_dtype(name, x1, x2._data.dtype, category), x2._device
        raise TypeError(f"{name}() needs at least one arrayx array, got {type(x1).__name__} and "
                        f"{type(x2).__name__}")

    return operands


def _make_binary(name: str, operands):
    def fn(x1, x2, /):
        a, b, dtype, device = operands(x1, x2)
        return Array._new(device.backend.binary(name, a, b, dtype), device)

    fn.__name__ = fn.__qualname__ = name
    return fn


def _make_in_place(name: str, operands):
    def op(self, other, /):
        _, b, dtype, device = operands(self, other)
        a = self._data  # the operand itself: never a cast copy
        if dtype is not a.dtype or name in BOOL_RESULT_BINARY:
            result = dt.bool if name in BOOL_RESULT_BINARY else dtype
            raise TypeError(f"in-place {name} would change the dtype of a {a.dtype} array to "
                            f"{result}, and an in-place operator keeps the left operand's dtype; "
                            f"write x = {name}(x, y) for the {result} result")
        if type(b) is not type(a) or b.shape == a.shape or broadcast_shapes(a.shape, b.shape) == a.shape:
            device.backend.binary(name, a, b, dtype, out=a)
            return self
        raise ValueError(f"in-place {name}: the result shape {broadcast_shapes(a.shape, b.shape)} "
                         f"differs from the array's shape {a.shape}")

    op.__name__ = f"__i{name}__"
    return op


IN_PLACE = {}
_namespace = {}
for _name in UNARY_CATEGORY:
    _namespace[_name] = _make_unary(_name)
for _name in BINARY_CATEGORY:
    _ops = binary_operands(_name, BINARY_CATEGORY[_name])
    _namespace[_name] = _make_binary(_name, _ops)
    if _name not in BOOL_RESULT_BINARY:
        IN_PLACE[_name] = _make_in_place(_name, _ops)
globals().update(_namespace)
del _name, _ops


def clip(x, /, min=None, max=None):
    if type(x) is not Array:
        raise TypeError(f"clip() expects an arrayx array, got {type(x).__name__}")
    if x.dtype not in dt.CATEGORIES["real numeric"]:
        raise TypeError(f"clip() requires a real numeric dtype, got {x.dtype}")
    lo = _clip_bound(x, min, "min")
    hi = _clip_bound(x, max, "max")
    shape = broadcast_shapes(x.shape, *(b.shape for b in (lo, hi) if b is not None and not _is_scalar(b)))
    data = x._data if shape == x.shape else x._device.backend.broadcast_to(x._data, shape)
    return Array._new(x._device.backend.clip(data, lo, hi), x._device)


def _is_scalar(value):
    return isinstance(value, (int, float))


def _clip_bound(x: Array, bound, label: str):
    """A clip bound as the backend takes it: None, a Python scalar, or a native array of x's dtype."""
    if bound is None:
        return None
    if type(bound) is Array:
        check_device(bound, label, x._device, "x", "clip")
        # The result keeps x's dtype: integer bounds of a floating x cast exactly enough (as
        # NumPy's promotion would), but a floating bound of an integer x would be truncated.
        if bound.dtype not in dt.CATEGORIES["real numeric"]:
            raise TypeError(f"clip(): {label} must have a real numeric dtype, got {bound.dtype}")
        if bound.dtype.kind not in "iu" and x.dtype.kind in "iu":
            raise TypeError(f"clip(): a {bound.dtype} {label} cannot bound a {x.dtype} array "
                            f"(the result keeps x's dtype); cast x with astype() first")
        broadcast_shapes(x.shape, bound.shape)
        if bound.dtype != x.dtype:
            bound = astype(bound, x.dtype)
        return bound._data
    if isinstance(bound, bool) or not isinstance(bound, (int, float)):
        raise TypeError(f"clip(): {label} must be None, a real Python number or an arrayx array, "
                        f"not {type(bound).__name__}")
    if x.dtype.kind in "iu":
        if isinstance(bound, float):
            raise TypeError(f"clip(): a float {label} cannot bound an integer array")
        # An out-of-range integer bound clips nothing (or everything): saturate it.
        lo, hi = int_limits(x.dtype)
        bound = lo if bound < lo else hi if bound > hi else bound
    return bound


__all__ = sorted(list(_namespace) + ["clip"])
