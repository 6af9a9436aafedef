"""The mask kernels compiled ahead of time (arrayx/cuda/precompile.py gathers them)."""

from __future__ import annotations

import numpy as np

from ...engine import layout
from .. import _common
from ..scan import RowScan, row_spec
from .source import coords_spec, compact_spec, masked_scatter_spec

_I32 = np.dtype("int32")


def precompile_specs():
    """For each element size: the fused x[mask] selection (a flag scan that moves the selected
    elements), the compaction kernels of a mask over leading dims and the scatter kernels of
    x[mask] = values; nonzero's coordinates kernels of 1-4 dims (32-bit indexing throughout)."""
    from ...._dtypes import all_dtypes as DTYPES
    specs = []
    for elem in sorted({_common.storage_type(d) for d in DTYPES}):
        specs.append(row_spec(RowScan("sum", _common.BOOL, _I32, flag=True, segmented=False,
                                      moved=elem)))
        specs.append(compact_spec(elem, _I32, 1))
        N = layout.vector_width(np.dtype(elem).itemsize, 4)
        if N > 1:
            specs.append(compact_spec(elem, _I32, N))
        for D in _common.DIM_BUCKETS:
            specs.append(masked_scatter_spec(elem, _I32, D, 32))
    for ndim in range(1, 5):
        specs.append(coords_spec(_I32, ndim, 32))
    return specs
