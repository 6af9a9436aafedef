"""Set primitives on the CPU: unique (NaNs distinct, signed zeros one value) and isin."""

import numpy as np

_int64 = np.dtype(np.int64)


def _index(i):
    return i if i.dtype == _int64 else i.astype(_int64)


def unique(a, return_index, return_inverse, return_counts):
    result = np.unique(a.reshape(-1), return_index=return_index, return_inverse=return_inverse,
                       return_counts=return_counts, equal_nan=False)
    if not (return_index or return_inverse or return_counts):
        return result, None, None, None
    result = iter(result)
    values = next(result)
    index = _index(next(result)) if return_index else None
    inverse = _index(next(result).reshape(-1)) if return_inverse else None
    counts = _index(next(result)) if return_counts else None
    return values, index, inverse, counts


def isin(a, b, invert):
    return np.asarray(np.isin(a, b, invert=invert))
