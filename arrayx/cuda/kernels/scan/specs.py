"""The scan kernels compiled ahead of time (arrayx/cuda/precompile.py gathers them)."""

from __future__ import annotations

import numpy as np

from .host import aligned_precompiled
from .row_kernel import RowScan, row_spec
from .source import column_spec

_I32 = np.dtype("int32")
_I64 = np.dtype("int64")
_U64 = np.dtype("uint64")


def precompile_specs():
    """The kernels the common cases launch (32-bit indexing): each dtype's default cumulative
    sum/product in every row layout, over one row, over flat rows of a power-of-two length that
    fill one-row tiles (aligned_precompiled) and as a column scan, and the flag scans (ranks) of
    every dtype; the NaN-ignoring sums and products of the floating dtypes likewise."""
    from ...._dtypes import all_dtypes as DTYPES
    specs = []
    for src in DTYPES:
        D = {"b": _I64, "i": _I64, "u": _U64}.get(src.kind, src)
        for op in ("sum", "prod") + (("nansum", "nanprod") if src.kind in "fc" else ()):
            for kinds in ("vv", "vs", "sv", "ss"):
                specs.append(row_spec(RowScan(op, src, D, in_kind=kinds[0], out_kind=kinds[1])))
            specs.append(row_spec(RowScan(op, src, D, segmented=False)))
            for vectors in aligned_precompiled(src, D):
                specs.append(row_spec(RowScan(op, src, D, segmented=False,
                                              aligned_rows=vectors)))
            specs.append(column_spec(op, src, D, 32))
        for in_kind in "vs":
            specs.append(row_spec(RowScan("sum", src, _I32, flag=True, in_kind=in_kind,
                                          segmented=False)))
    return specs
