"""What every kernel family shares: element and storage types, dimension buckets, kernel naming,
and a source builder with named sections.

A family generates Python source for numba-cuda (``engine/compiler.py`` compiles it). Kernels
read and write memory through typed pointers: `element_type` is the numba type of a dtype in
memory, `storage_type` the type that moves a dtype's raw bits. Strided kernels are specialised
for a few dimension counts (`DIM_BUCKETS`); a layout's collapsed dims are padded up to the next
bucket with size-1 dims, so a handful of kernels serve every rank.
"""

from __future__ import annotations

import numpy as np

BOOL = np.dtype(bool)

# Strided kernels exist for these dimension counts (after collapsing contiguous dims); a layout
# is padded up to the next one. Past the last bucket a kernel is compiled for the exact count.
DIM_BUCKETS = (1, 3, 6)


def padded_dims(ndim: int) -> int:
    """The dimension count of the kernel that serves a layout of `ndim` collapsed dims."""
    for bucket in DIM_BUCKETS:
        if ndim <= bucket:
            return bucket
    return ndim


def element_type(dt: np.dtype) -> str:
    """numba scalar type of dtype `dt` in memory (bool is stored as uint8)."""
    return "uint8" if dt == BOOL else dt.name


def storage_type(dt: np.dtype) -> str:
    """The type that moves `dt`'s elements as raw bits: an unsigned integer of its width
    (complex64 as uint64); complex128 stays complex128 (no 128-bit integer)."""
    if dt.itemsize == 16:
        return "complex128"
    return f"uint{8 * dt.itemsize}"


def dtype_tag(dt: np.dtype) -> str:
    """A dtype's part of a kernel name."""
    return dt.name


def kernel_name(family: str, *parts) -> str:
    """A kernel's readable, unique name: family, then its specialisation, joined by '_'
    (dtypes by name; empty parts dropped). The name is part of the cache key only through the
    source, so it must determine the source together with the argument types."""
    words = [family] + [dtype_tag(p) if isinstance(p, np.dtype) else str(p) for p in parts]
    return "_".join(w for w in words if w)


class KernelSource:
    """A kernel function's source, built in named sections in the order the kernel runs them.

    ``src.section("load the tile", lines)`` appends `lines` under a ``# -- load the tile``
    comment, so the generator reads as the kernel's control flow and the generated source shows
    the same headings. ``src.text()`` is the module source: the preamble, the kernel's ``def``
    line, and the sections (indented one level; lines carry their own deeper indentation).
    """

    def __init__(self, name: str, args, preamble: str = ""):
        self.name = name
        self.args = list(args)
        self.preamble = preamble
        self._lines: list = []

    def section(self, title: str, lines) -> "KernelSource":
        if isinstance(lines, str):
            lines = lines.split("\n")
        self._lines.append(f"# -- {title}")
        self._lines.extend(lines)
        return self

    def text(self) -> str:
        body = "\n".join(("    " + line) if line.strip() else "" for line in self._lines)
        return f"{self.preamble}def {self.name}({', '.join(self.args)}):\n{body}\n"


# Globals of every kernel's source (before the kernel function): constants for the helpers.
PREAMBLE = ("INF = float('inf')\nNAN = float('nan')\nPI = 3.141592653589793\n"
            "LN2 = 0.6931471805599453\nLOG2E = 1.4426950408889634\nLOG10E = 0.4342944819032518\n"
            # per real type: exp(x) finite below EXPMAX, exp(x) * tiny finite below EXPOVF,
            # hypot may overflow above BIG
            "EXPMAX_f32 = 88.0\nEXPOVF_f32 = 192.0\nBIG_f32 = 1e37\n"
            "EXPMAX_f64 = 709.0\nEXPOVF_f64 = 1454.0\nBIG_f64 = 1e300\n")


def vload_statement(targets, ptr: str, index: str, load: str | None = None) -> str:
    """Kernel source unpacking one 16-byte vector load (vector.py's vloadN, or `load`, a
    function of the same signature) of `ptr` at element `index` into the names `targets`."""
    n = len(targets)
    return f"{', '.join(targets)}{',' if n == 1 else ''} = {load or f'vload{n}'}({ptr}, {index})"
