"""The row-function family: softmax, log_softmax, logsumexp, layer_norm and rms_norm over the
last axis (the `row_function` primitive), one launch a call.

* ``plans.py``: which kernel serves rows of a length (a `RowKernel`): rows that fit in
  registers are read once and written once, by a group of up to 32 lanes (several rows a
  block) or by a block; longer rows are read twice by a block; logsumexp streams every row,
  and splits each of few long rows over several blocks (the last folds their partials).
* ``source.py``: the kernel source of a RowKernel, and what each function accumulates.
* ``host.py``: the primitive: in-place rows or a C-order copy, 16-byte vectors when every
  pointer and the row stride allow them, the launch.
* ``tuning.py``: the knobs.
"""

import numpy as np

from .host import row_function
from .plans import layout
from .source import kernel_spec

PRIMITIVES = {"row_function": row_function}

# (function, weight, bias) as the namespace calls them: the norms with and without their affine
_VARIANTS = (("softmax", False, False), ("log_softmax", False, False),
             ("logsumexp", False, False), ("layer_norm", False, False),
             ("layer_norm", True, True), ("rms_norm", False, False), ("rms_norm", True, False))
_LENGTHS = {"float32": (16, 128, 1000, 1024, 2048, 4096, 8192, 16384),
            "float64": (128, 1024, 4096, 8192)}


def precompile_specs():
    """The kernels of contiguous rows of the commonest lengths (short rows several a block,
    registers, streamed long rows) for every function, float32 and float64, and logsumexp's
    split kernel of few long rows (axis=None)."""
    out = {}
    for dtype, lengths in _LENGTHS.items():
        for K in lengths:
            for func, weight, bias in _VARIANTS:
                spec = kernel_spec(layout(func, np.dtype(dtype), K, True, weight, bias))
                out.setdefault(spec.source, spec)
        split = layout("logsumexp", np.dtype(dtype), 1 << 24, True, False, False)
        spec = kernel_spec(split._replace(split=True))
        out.setdefault(spec.source, spec)
    return list(out.values())
