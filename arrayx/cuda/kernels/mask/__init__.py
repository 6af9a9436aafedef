"""The mask kernel family: nonzero, boolean-mask selection x[mask] and assignment
x[mask] = value, on the inclusive ranks of the scan family's flag scan.

* ``host.py``: the primitives and the launches; ``source.py``: the kernels that consume ranks
  (coordinates, compaction, scatter); the fused selection is a row-scan kernel (scan.RowScan's
  `moved`);
* ``tuning.py``: the family's knobs; ``specs.py``: the kernels precompiled ahead of time.
"""

from .host import assign_by_mask, nonzero, select_by_mask  # noqa: F401
from .source import compact_spec, coords_spec, masked_scatter_spec  # noqa: F401
from .specs import precompile_specs  # noqa: F401

PRIMITIVES = {"nonzero": nonzero}
