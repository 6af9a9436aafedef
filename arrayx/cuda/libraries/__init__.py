"""NVIDIA's libraries on arrayx's streams: one module per library, and what their calls share.

  calls     ``Library``: a library called through ctypes, loaded on the first call of one of its
            functions, its statuses raised as exceptions; ``begin``/``end`` (a call ordered after
            the queued kernels, its buffers kept alive by the encoder), workspaces
  cublas    cuBLAS's functions and constants; the per-device handle
  cusolver  cuSOLVER's functions and constants; the per-device handle and params; ``info``
            status slots and their check
  cufft     cuFFT's functions and constants; the per-device cache of plans
  cub       CUB's radix sort and inclusive scan through cuda-cccl's ``cuda.compute``, with built
            algorithms cached in memory and on disk

cuBLAS, cuSOLVER and cuFFT are called through ctypes, each library loaded on the first call of one
of its functions: arrayx needs a handful of functions of each, and nvmath-python's bindings would
load six libraries at their import. Nothing GPU-only (a library, cuda.compute) loads when arrayx
does: CI has no GPU, and cuda.compute raises AttributeError without one.
"""

from __future__ import annotations

from . import cub, cublas, cufft, cusolver  # noqa: F401
from .calls import begin, data_type, device_workspace, end, host_workspace  # noqa: F401
