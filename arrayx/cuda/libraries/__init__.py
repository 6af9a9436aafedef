"""NVIDIA's libraries on arrayx's streams: one module per library, and what their calls share.

  calls     ``Library``: a library called through ctypes, loaded on the first call of one of its
            functions, its statuses raised as exceptions; ``begin``/``end`` (a call ordered after
            the queued kernels, its buffers kept alive by the encoder), workspaces
  cublas    cuBLAS's functions and constants; the per-device handle
  cusolver  cuSOLVER's functions and constants; the per-device handle and params; ``info``
            status slots and their check
  cufft     cuFFT's functions and constants; the per-device cache of plans
  cub       CUB's radix sort through cuda-cccl's ``cuda.compute``, with built
            algorithms cached in memory and on disk

cuBLAS, cuSOLVER and cuFFT are called through ctypes: arrayx needs a handful of functions of
each, and nvmath-python's bindings would load six libraries at their import. ``load_all`` loads
the three beside the first device's context creation (``runtime.beside_first_context``, registered
by the package), where they overlap the context's creation instead of adding to the first
library call; a library that is missing raises on the first call of one of its functions.
Nothing GPU-only (a library, cuda.compute) loads when arrayx is imported: CI has no GPU, and
cuda.compute raises AttributeError without one.
"""

from __future__ import annotations

from . import cub, cublas, cufft, cusolver  # noqa: F401


def load_all() -> None:
    """Load cuBLAS, cuSOLVER and cuFFT now (each Library loads once; a missing one is left for
    its first call to report)."""
    for library in (cublas.library, cusolver.library, cufft.library):
        try:
            library.cdll()
        except ImportError:
            pass
from .calls import begin, data_type, device_workspace, end, host_workspace  # noqa: F401
