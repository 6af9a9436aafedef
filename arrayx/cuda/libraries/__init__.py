"""NVIDIA's libraries on arrayx's streams: one module per library, and what their calls share.

  calls     nvmath-python's bindings (imported on first use), ``begin``/``end`` (a call ordered
            after the queued kernels, its buffers kept alive by the encoder), workspaces
  cublas    the per-device cuBLAS handle
  cusolver  the per-device cuSOLVER handle and params; ``info`` status slots and their check
  cufft     the per-device cache of cuFFT plans
  cub       CUB's radix sort and inclusive scan through cuda-cccl's ``cuda.compute``, with built
            algorithms cached in memory and on disk

Every GPU-only package (nvmath, cuda.compute) is imported on first use, never when arrayx loads:
CI has no GPU, and cuda.compute raises AttributeError without one.
"""

from __future__ import annotations

from . import cub, cublas, cufft, cusolver  # noqa: F401
from .calls import (begin, bindings, data_type, device_workspace, end,  # noqa: F401
                    host_workspace)
