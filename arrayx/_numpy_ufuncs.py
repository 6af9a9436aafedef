"""NumPy ufuncs called on arrayx arrays (``Array.__array_ufunc__``, NEP 13).

Libraries and tests written for NumPy call NumPy's functions on whatever arrays they are given:
``np.sqrt(x)``, ``np.isfinite(x)``, ``np.sum(x)`` (NumPy's reductions of a non-ndarray call
``np.add.reduce``), ``np_scalar * x``. arrayx answers them the way CuPy does, on the array's own
device, never through a hidden host copy:

* a ufunc with an arrayx counterpart (the elementwise functions of the standard under NumPy's
  names: ``np.absolute`` is ``abs``, ``np.arctan2`` is ``atan2``, ``np.power`` is ``pow``...)
  runs as that function, with arrayx's promotion and its weak NumPy scalars; ``reduce`` of add,
  multiply, maximum, minimum, logical_and and logical_or runs as sum, prod, max, min, all and
  any; ``accumulate`` of add and multiply as cumulative_sum and cumulative_prod;
* any other ufunc (``scipy.special.erf``, ``np.divmod``...) or keyword (``out=``, ``where=``,
  ``initial=``) runs through NumPy on a cpu array's data, the results wrapped as cpu arrays; on a
  GPU it raises TypeError naming the ufunc (call it on ``x.to_device("cpu")``);
* NumPy arrays among the operands raise TypeError, as arrayx's operators do with them: arrayx
  does not mix ndarrays into its arithmetic. NumPy scalars (and the 0-d arrays NumPy turns them
  into before calling a ufunc) are weak scalars, as everywhere in arrayx.
"""

from __future__ import annotations

import numpy as np

from . import _dtypes as dt

#: NumPy ufunc name -> arrayx function name, where they differ
_RENAMED = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
    "arcsinh": "asinh", "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh",
    "true_divide": "divide", "power": "pow", "mod": "remainder", "conjugate": "conj",
    "invert": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "rint": "round",
}
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
               "logical_and": "all", "logical_or": "any"}
_ACCUMULATIONS = {"add": "cumulative_sum", "multiply": "cumulative_prod"}
_DTYPE_REDUCTIONS = {"sum", "prod", "cumulative_sum", "cumulative_prod"}


def _namespace():
    import arrayx
    return arrayx


def _without_out(kwargs: dict) -> bool:
    """No output array asked for (NumPy passes out=None, or a tuple of Nones)."""
    out = kwargs.get("out")
    return out is None or (type(out) is tuple and all(o is None for o in out))


def _counterpart(ufunc, method: str, kwargs: dict):
    """The arrayx function and its keyword arguments for `ufunc.method(..., **kwargs)`, or None."""
    xp = _namespace()
    name = ufunc.__name__
    if method == "__call__":
        if kwargs or ufunc not in _NUMPY_UFUNCS:
            return None
        fn = getattr(xp, _RENAMED.get(name, name), None)
        return None if fn is None else (fn, {})
    table = {"reduce": _REDUCTIONS, "accumulate": _ACCUMULATIONS}.get(method)
    if table is None or name not in table or ufunc not in _NUMPY_UFUNCS:
        return None
    target = table[name]
    extra = set(kwargs) - {"axis", "dtype", "keepdims", "out"}
    if extra or not _without_out(kwargs):
        return None
    options = {"axis": kwargs.get("axis", 0)}
    if method == "accumulate":
        if kwargs.get("keepdims"):
            return None
    else:
        options["keepdims"] = bool(kwargs.get("keepdims", False))
    dtype = kwargs.get("dtype")
    if dtype is not None:
        if target in _DTYPE_REDUCTIONS:
            options["dtype"] = dtype
        elif not (target in ("all", "any") and np.dtype(dtype) == np.bool_):  # np.all's own
            return None
    return getattr(xp, target), options


_NUMPY_UFUNCS = frozenset(v for v in vars(np).values() if isinstance(v, np.ufunc))


def _cast_to_numpy_loop(ufunc, inputs: tuple) -> tuple:
    """The array operands cast to the input dtypes of the loop NumPy would run
    (np.sqrt of int64 runs in float64, as in NumPy); unchanged where NumPy finds no loop or
    picks a dtype arrayx does not have."""
    from ._array_object import Array
    from ._data_type_functions import astype
    from ._elementwise_functions import _python_scalar
    try:
        # a scalar goes in as its Python type: weak, as arrayx's scalars are
        loop = ufunc.resolve_dtypes(tuple(x.dtype if type(x) is Array else type(_python_scalar(x))
                                          for x in inputs) + (None,) * ufunc.nout)
    except (TypeError, ValueError, OverflowError, np.exceptions.DTypePromotionError):
        return inputs
    return tuple(astype(x, want) if type(x) is Array and x.dtype != want and
                 want in dt.all_dtypes else x for x, want in zip(inputs, loop))


def array_ufunc(ufunc, method: str, inputs: tuple, kwargs: dict):
    """``Array.__array_ufunc__`` (module docstring)."""
    from ._array_object import Array

    arrays = [x for x in inputs if type(x) is Array]
    if any(isinstance(x, np.ndarray) for x in inputs):
        # NumPy hands its scalars over as 0-d arrays (np.float64(2) < x); they stay scalars
        if any(isinstance(x, np.ndarray) and (x.ndim or x.dtype.kind not in "biufc")
               for x in inputs):
            raise TypeError(f"numpy.{ufunc.__name__}: arrayx does not mix NumPy arrays with its "
                            f"arrays; convert them with arrayx.asarray(..., device=x.device)")
        inputs = tuple(x[()] if isinstance(x, np.ndarray) else x for x in inputs)
    found = _counterpart(ufunc, method, kwargs)
    if found is not None:
        fn, options = found
        if method == "__call__":
            inputs = _cast_to_numpy_loop(ufunc, inputs)
        return fn(*inputs, **options)
    if not _without_out(kwargs):
        raise TypeError(f"{ufunc.__name__}(..., out=...) into an arrayx array is not supported")
    gpu = next((x.device for x in arrays if x.device.kind != "cpu"), None)
    if gpu is not None:
        call = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        raise TypeError(f"NumPy's {call} has no arrayx counterpart for these arguments on {gpu}; "
                        f"call it on x.to_device('cpu')")
    host = [x._data if type(x) is Array else x for x in inputs]
    result = getattr(ufunc, method)(*host, **kwargs)
    xp = _namespace()
    device = arrays[0].device
    if isinstance(result, tuple):
        return tuple(xp.asarray(r, device=device) for r in result)
    return xp.asarray(result, device=device)
