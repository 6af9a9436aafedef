"""The elementwise kernel family: one template that every elementwise operation instantiates.

* ``ops.py``: what each function computes on one element (an ``Op``: expression and helpers).
* ``template.py``: the kernel source of an operation for one layout (vec, rows, strided, tile).
* ``dispatch.py``: ``launch``, which picks the layout from the operands on the host.
* ``fast_path.py``: per-(operation, dtypes, device) plans for contiguous calls, skipping launch(),
  and the one-element fill of ``x[i, j] = v``.
* ``functions.py``: the functions the backend's primitives and other families call.
* ``program.py``: a chain of elementwise primitives as one kernel (``arrayx.compile``'s fusion).
* ``tuning.py``: the family's knobs (block size, vectors a thread, the rows layout's threshold and
  elements a thread, the transposing tile's shape).
* ``specs.py``: the kernels precompiled ahead of time.
"""

from . import ops  # noqa: F401
from .dispatch import launch  # noqa: F401
from .fast_path import set_element  # noqa: F401
from .functions import (as_dtype, assign, astype, binary, copy, fill, overlaps,  # noqa: F401
                        unary, unary_plan, where)
from .program import elementwise_program  # noqa: F401
from .specs import precompile_specs  # noqa: F401
from .template import kernel_spec, tile_design, tile_specs, tile_vector  # noqa: F401
