"""The random kernel family: the ``random`` primitive (``_backend.RANDOM_STREAM``), one thread
per Philox4x32-10 counter block (source.py), launched over the blocks of a call.

* ``source.py``: the kernels; ``tuning.py``: the launch's block size.
"""

from __future__ import annotations

import numpy as np

from ...._backend import random_values_per_block
from ...engine import compiler, layout, runtime
from ...engine.array import new_array
from . import tuning
from .source import integer_path, kernel_spec, round_keys, specs_for

_WORD = 0xFFFFFFFF


def random(device, shape, dtype, distribution, key, offset, params):
    """The `random` primitive: a fresh C-contiguous array, element i the stream's value i."""
    dev = runtime.get_device(device.index)
    dtype = np.dtype(dtype)
    out = new_array(dev.index, tuple(shape), dtype, dev.allocator)
    n = out.size
    if n == 0:
        return out
    blocks = -(-n // random_values_per_block(distribution, dtype))
    bits = layout.index_bits(n)
    path = ""
    values = tuple(params)
    if distribution == "integers":
        low, range_ = params
        path = integer_path(range_)
        m = range_ - 1
        values = (low % 2 ** 64, m) if path == "r32" else (low % 2 ** 64, m & _WORD, m >> 32)
    kern = compiler.cached_kernel(dev.index, "random", (distribution, dtype, path, bits),
                                  lambda: kernel_spec(distribution, dtype, bits, path))
    grid, block = layout.launch_1d(blocks, tuning.BLOCK)
    args = (out.ptr, n, *round_keys(key), offset & _WORD, offset >> 32) + values
    kern(dev.stream, grid, block, args, (out.buffer,), n * dtype.itemsize)
    return out


PRIMITIVES = {"random": random}


def precompile_specs():
    """Every distribution and dtype at 32-bit indexing (64-bit ones compile on first use)."""
    return specs_for(32)
