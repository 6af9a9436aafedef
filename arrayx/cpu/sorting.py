"""Sorting primitives on the CPU.

NumPy sorts ascending with NaNs last. A descending sort must be the exact reverse order by value
(NaNs first) while keeping equal elements in their original order, so it is done as: reverse
the axis, sort ascending (stably), reverse the result. Reversing twice puts ties back in their
original order; flipping an ascending sort once would reverse them.
"""

import numpy as np


def _flip(a, axis):
    return a[(slice(None),) * axis + (slice(None, None, -1),)]


def sort(a, axis, descending, stable):
    kind = "stable" if stable else None
    if not descending:
        return np.sort(a, axis=axis, kind=kind)
    return _flip(np.sort(_flip(a, axis), axis=axis, kind=kind), axis)


def argsort(a, axis, descending, stable):
    kind = "stable" if stable else None
    if not descending:
        out = np.argsort(a, axis=axis, kind=kind)
    else:
        # Indices into the reversed axis, reversed back, then mapped to the original positions.
        out = (a.shape[axis] - 1) - _flip(np.argsort(_flip(a, axis), axis=axis, kind=kind), axis)
    return out if out.dtype == np.int64 else out.astype(np.int64)
