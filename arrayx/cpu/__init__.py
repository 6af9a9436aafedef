"""The CPU backend: NumPy. Thin, because the namespace has validated every argument.

One module per group of primitives, mirroring the namespace's groups; every primitive named in
`arrayx._backend.PRIMITIVES` is implemented here (the host fallback of other backends relies on
it).
"""

from .._backend import PRIMITIVES
from .._registry import register_backend
from . import (creation, elementwise, linalg, fft, manipulation, random, rows, statistical,
               searching, sorting, sets)

_MODULES = (creation, elementwise, manipulation, statistical, searching, sorting, sets, linalg, fft,
            rows, random)

register_backend("cpu", {name: getattr(m, name) for m in _MODULES for name in PRIMITIVES if hasattr(m, name)})
