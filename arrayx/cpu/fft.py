"""The FFT primitive on the CPU: numpy.fft, one 1-D transform along one axis.

NumPy >= 2.0 computes float32/complex64 transforms in single precision; the cast keeps the
result's precision equal to the input's whatever NumPy returns.
"""

import numpy as np

from .._dtypes import complex_dtype_of, real_dtype_of

_TRANSFORMS = {"fft": np.fft.fft, "ifft": np.fft.ifft, "rfft": np.fft.rfft, "irfft": np.fft.irfft}


def fft(kind, a, n, axis, norm):
    out = _TRANSFORMS[kind](a, n=n, axis=axis, norm=norm)
    real = real_dtype_of(a.dtype)
    return np.asarray(out, dtype=real if kind == "irfft" else complex_dtype_of(real))
