"""Device helpers: numba intrinsics and device functions that generated kernels call by name.

One module per kind of helper; each lists what it offers in ``__all__``, which the compiler reads
(without importing numba) to resolve the names a kernel's source uses and to put exactly those
modules' sources into the kernel's cache key (``engine/compiler.py``).
"""
