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

from . import tuning
from .host import row_function
from .plans import layout
from .source import kernel_spec

PRIMITIVES = {"row_function": row_function}

# (function, weight, bias) as the namespace calls them: the norms with and without their affine
_VARIANTS = (("softmax", False, False), ("log_softmax", False, False),
             ("logsumexp", False, False), ("layer_norm", False, False),
             ("layer_norm", True, True), ("rms_norm", False, False), ("rms_norm", True, False))
_DTYPES = (np.dtype("float32"), np.dtype("float64"))


def _layouts(func, dtype, vec, weight, bias):
    """Every kernel `layout` picks for rows of this function, dtype and access, over all row
    lengths: the layout depends on the length only through its vector count nv, and past the
    rows held in registers (and logsumexp's stream width) it no longer changes."""
    V = 16 // dtype.itemsize if vec else 1
    longest = tuning.REGISTER_ROW_BYTES // (V * dtype.itemsize) + 1
    plan = layout.__wrapped__  # uncached: these thousands of lengths would flush its cache
    return {plan(func, dtype, nv * V, vec, weight, bias) for nv in range(1, longest + 1)}


def precompile_specs():
    """The kernels of contiguous rows of every length (short rows several a block, registers,
    streamed long rows), 16-byte aligned or not, for every function in float32 and float64,
    and logsumexp's split kernels of few long rows (axis=None): a row function's first call
    then compiles nothing where the kernels are shipped."""
    out = {}
    for dtype in _DTYPES:
        for vec in (True, False):
            for func, weight, bias in _VARIANTS:
                for k in _layouts(func, dtype, vec, weight, bias):
                    kernels = [k] + ([k._replace(split=True)]
                                     if func == "logsumexp" and k.T == k.block else [])
                    for kernel in kernels:
                        spec = kernel_spec(kernel)
                        out.setdefault(spec.source, spec)
    return list(out.values())
