"""The fft extension of the standard: ``arrayx.fft``.

One backend primitive, ``fft(kind, a, n, axis, norm)`` (a 1-D transform, kind one of fft, ifft,
rfft, irfft); everything else is composed here once for every backend: the n-dimensional
transforms are successive 1-D transforms, hfft/ihfft are irfft/rfft of conjugates with the
normalisation direction swapped, fftfreq/rfftfreq come from arange, fftshift/ifftshift from roll.

dtypes: results keep the input's precision (complex64 <-> float32, complex128 <-> float64).
fft, ifft, fftn, ifftn, irfft, irfftn and hfft take complex input; a real floating-point input
is accepted and treated as complex of the same precision (the standard says these "should" be
complex). rfft, rfftn and ihfft require a real floating-point input. Integer and boolean arrays
raise TypeError everywhere except fftshift/ifftshift, which move data of any dtype.

Arguments: ``n`` and each ``s[i]`` must be positive (``-1`` in ``s`` means the default size);
``s`` requires ``axes`` (as the standard says); ``axes`` must not repeat an axis; ``norm`` is
'backward', 'ortho' or 'forward'. A violation raises ValueError (TypeError for a wrong type).
"""

from __future__ import annotations

import operator

from . import _dtypes as dt
from ._array_object import Array
from ._validation import (check_array, check_dtype, check_int, index_tuple, normalize_axis,
                          resolve_device)

_NORMS = ("backward", "ortho", "forward")
# hfft(x) is irfft(conj(x)) read the other way round: its "backward" is irfft's "forward".
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


# --- checks ---------------------------------------------------------------------------------

def _complex_input(x, fname):
    from ._data_type_functions import astype

    check_array(x, fname)
    if x.dtype.kind == "c":
        return x
    if x.dtype.kind == "f":
        return astype(x, dt.complex_dtype_of(x.dtype))
    raise TypeError(f"{fname}() requires a floating-point (preferably complex) dtype, got {x.dtype}")


def _real_input(x, fname):
    check_array(x, fname)
    if x.dtype.kind != "f":
        raise TypeError(f"{fname}() requires a real floating-point dtype, got {x.dtype}")
    return x


def _check_norm(norm, fname):
    if norm not in _NORMS:
        raise ValueError(f"{fname}(): norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    return norm


def _length(n, default, fname, what="n"):
    """A transform length: `default` when n is None, else a positive int."""
    if n is None:
        n = default
    else:
        if isinstance(n, bool):
            raise TypeError(f"{fname}(): {what} must be an integer, not bool")
        try:
            n = operator.index(n)
        except TypeError:
            raise TypeError(f"{fname}(): {what} must be an integer, got {type(n).__name__}") from None
    if n < 1:
        raise ValueError(f"{fname}(): invalid number of data points ({n}); the transform length "
                         f"must be at least 1")
    return n


def _axis(x, axis, fname):
    if x.ndim == 0:
        raise ValueError(f"{fname}() needs an array of at least one dimension")
    return normalize_axis(axis, x.ndim, fname)


def _axes_and_sizes(x, s, axes, fname, inverse_real=False):
    """-> (axes, sizes): normalised axes and the transform length for each. With inverse_real
    (irfftn) the default length of the last axis is 2*(M-1)."""
    if axes is None:
        if s is not None:
            raise ValueError(f"{fname}(): s was given without axes; pass the axes s applies to")
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(normalize_axis(a, x.ndim, fname, "axes") for a in index_tuple(axes, fname, "axes"))
        if len(set(axes)) != len(axes):
            raise ValueError(f"{fname}(): repeated axis in axes {axes}")
    if s is None:
        s = (None,) * len(axes)
    else:
        if not isinstance(s, (tuple, list)):
            raise TypeError(f"{fname}(): s must be a tuple of ints, got {type(s).__name__} {s!r}")
        s = tuple(s)
        if len(s) != len(axes):
            raise ValueError(f"{fname}(): s has {len(s)} entries but axes has {len(axes)}")
    sizes = []
    for i, (axis, n) in enumerate(zip(axes, s)):
        m = x.shape[axis]
        default = 2 * (m - 1) if inverse_real and i == len(axes) - 1 else m
        if n is not None and not isinstance(n, bool) and hasattr(n, "__index__") and operator.index(n) == -1:
            n = None
        sizes.append(_length(n, default, fname, f"s[{i}]"))
    return axes, tuple(sizes)


def _transform(kind, x, n, axis, norm):
    return Array._new(x._device.backend.fft(kind, x._data, n, axis, norm), x._device)


# --- 1-D transforms -------------------------------------------------------------------------

def fft(x, /, *, n=None, axis=-1, norm="backward"):
    x = _complex_input(x, "fft")
    axis = _axis(x, axis, "fft")
    return _transform("fft", x, _length(n, x.shape[axis], "fft"), axis, _check_norm(norm, "fft"))


def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    x = _complex_input(x, "ifft")
    axis = _axis(x, axis, "ifft")
    return _transform("ifft", x, _length(n, x.shape[axis], "ifft"), axis, _check_norm(norm, "ifft"))


def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    x = _real_input(x, "rfft")
    axis = _axis(x, axis, "rfft")
    return _transform("rfft", x, _length(n, x.shape[axis], "rfft"), axis, _check_norm(norm, "rfft"))


def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    x = _complex_input(x, "irfft")
    axis = _axis(x, axis, "irfft")
    n = _length(n, 2 * (x.shape[axis] - 1), "irfft")
    return _transform("irfft", x, n, axis, _check_norm(norm, "irfft"))


def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    from ._elementwise_functions import conj

    x = _complex_input(x, "hfft")
    axis = _axis(x, axis, "hfft")
    n = _length(n, 2 * (x.shape[axis] - 1), "hfft")
    return _transform("irfft", conj(x), n, axis, _SWAPPED[_check_norm(norm, "hfft")])


def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    from ._elementwise_functions import conj

    x = _real_input(x, "ihfft")
    axis = _axis(x, axis, "ihfft")
    n = _length(n, x.shape[axis], "ihfft")
    return conj(_transform("rfft", x, n, axis, _SWAPPED[_check_norm(norm, "ihfft")]))


# --- n-D transforms: successive 1-D transforms -----------------------------------------------

def _complex_nd(kind, x, s, axes, norm, fname):
    from ._creation_functions import asarray

    x = _complex_input(x, fname)
    axes, sizes = _axes_and_sizes(x, s, axes, fname)
    _check_norm(norm, fname)
    if not axes:
        return asarray(x, copy=True)
    for axis, n in zip(reversed(axes), reversed(sizes)):
        x = _transform(kind, x, n, axis, norm)
    return x


def fftn(x, /, *, s=None, axes=None, norm="backward"):
    return _complex_nd("fft", x, s, axes, norm, "fftn")


def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    return _complex_nd("ifft", x, s, axes, norm, "ifftn")


def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    x = _real_input(x, "rfftn")
    axes, sizes = _axes_and_sizes(x, s, axes, "rfftn")
    _check_norm(norm, "rfftn")
    if not axes:
        raise ValueError("rfftn() needs at least one axis to transform")
    # The real transform along the last axis first, then complex transforms along the others.
    x = _transform("rfft", x, sizes[-1], axes[-1], norm)
    for axis, n in zip(reversed(axes[:-1]), reversed(sizes[:-1])):
        x = _transform("fft", x, n, axis, norm)
    return x


def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    x = _complex_input(x, "irfftn")
    axes, sizes = _axes_and_sizes(x, s, axes, "irfftn", inverse_real=True)
    _check_norm(norm, "irfftn")
    if not axes:
        raise ValueError("irfftn() needs at least one axis to transform")
    # Complex inverse transforms along all but the last axis, then the real one along it.
    for axis, n in zip(axes[:-1], sizes[:-1]):
        x = _transform("ifft", x, n, axis, norm)
    return _transform("irfft", x, sizes[-1], axes[-1], norm)


# --- frequencies and shifts -------------------------------------------------------------------

def _freq_args(n, d, dtype, fname):
    n = check_int(n, fname, "n")
    if n < 1:
        raise ValueError(f"{fname}(): n must be positive, got {n}")
    if isinstance(d, bool) or not isinstance(d, (int, float)):
        raise TypeError(f"{fname}(): d must be a real Python number, got {type(d).__name__}")
    if d == 0:
        raise ValueError(f"{fname}(): the sample spacing d must not be zero")
    dtype = dt.float64 if dtype is None else check_dtype(dtype, fname)
    if dtype.kind != "f":
        raise TypeError(f"{fname}(): dtype must be a real floating-point dtype, got {dtype}")
    return n, float(d), dtype


def _scaled(k, scale, dtype):
    # Computed in float64 (the integers are exact there) and then cast, as NumPy does.
    from ._data_type_functions import astype
    from ._elementwise_functions import multiply
    return astype(multiply(k, scale), dtype, copy=False)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    from ._creation_functions import arange
    from ._manipulation_functions import roll

    n, d, dtype = _freq_args(n, d, dtype, "fftfreq")
    device = resolve_device(device)
    # [-(n//2), ..., (n-1)//2] rolled so that it starts at 0: [0, 1, ..., -(n//2), ..., -1].
    k = roll(arange(-(n // 2), n - n // 2, dtype=dt.float64, device=device), shift=-(n // 2))
    return _scaled(k, 1.0 / (n * d), dtype)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    from ._creation_functions import arange

    n, d, dtype = _freq_args(n, d, dtype, "rfftfreq")
    device = resolve_device(device)
    return _scaled(arange(0, n // 2 + 1, dtype=dt.float64, device=device), 1.0 / (n * d), dtype)


def _shift(x, axes, fname, inverse):
    from ._creation_functions import asarray
    from ._manipulation_functions import roll

    check_array(x, fname)
    if axes is None:
        axes = tuple(range(x.ndim))
    axes = tuple(normalize_axis(a, x.ndim, fname, "axes") for a in index_tuple(axes, fname, "axes"))
    if not axes:
        return asarray(x, copy=True)
    shifts = tuple(-(x.shape[a] // 2) if inverse else x.shape[a] // 2 for a in axes)
    return roll(x, shift=shifts, axis=axes)


def fftshift(x, /, *, axes=None):
    return _shift(x, axes, "fftshift", inverse=False)


def ifftshift(x, /, *, axes=None):
    return _shift(x, axes, "ifftshift", inverse=True)


__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
