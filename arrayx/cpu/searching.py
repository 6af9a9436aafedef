"""Searching primitives on the CPU: nonzero and searchsorted."""

import numpy as np

_int64 = np.dtype(np.int64)


def nonzero(a):
    return tuple(i if i.dtype == _int64 else i.astype(_int64) for i in np.nonzero(a))


def searchsorted(sorted_1d, values, side):
    out = np.searchsorted(sorted_1d, values, side=side)
    if out.__class__ is not np.ndarray or out.dtype != _int64:
        out = np.asarray(out, dtype=_int64)
    return out
