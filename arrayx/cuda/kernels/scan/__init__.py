"""The scan kernel family: cumulative sums and products (and their NaN-ignoring forms, NaN
read as 0 / 1 on load), and the flag scans (ranks) that the mask family (nonzero, boolean-mask
selection and assignment) builds on.

* ``row_kernel.py``: the decoupled look-back row scan (its configuration, ``RowScan``, and
  ``row_spec``, which reads as the kernel's control flow); ``status.py``: its tile status words;
* ``source.py``: the per-dtype pieces of kernel source, and the column-scan kernel;
* ``host.py``: which kernel a call launches, and the launch;
* ``tuning.py``: the family's knobs; ``specs.py``: the kernels precompiled ahead of time.
"""

from . import tuning  # noqa: F401
from .host import cumulative, flat_view, rank_dtype, ranks, row_scan  # noqa: F401
from .row_kernel import TRACE_PHASES, PhaseTrace, RowScan, row_params, row_spec  # noqa: F401
from .source import GID, column_spec  # noqa: F401
from .specs import precompile_specs  # noqa: F401
from .status import STATUS_SCRATCH, status_words  # noqa: F401

PRIMITIVES = {"cumulative": cumulative}
