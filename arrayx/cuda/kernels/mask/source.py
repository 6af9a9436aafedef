"""The kernels that consume a flag scan's inclusive ranks: nonzero's coordinates, the x[mask]
gather (a mask over x's leading dims) and the x[mask] = values scatter."""

from __future__ import annotations

import numpy as np

from ...engine import compiler
from .._common import PREAMBLE
from ..scan.source import GID, index_type


def coords_spec(rank: np.dtype, ndim: int, bits: int):
    """nonzero: element i with rank r (inclusive) != previous writes its coordinates to
    out[d * count + r - 1]."""
    ut = index_type(bits)
    shapes = ", ".join(f"sh{d}" for d in range(1, ndim))
    lines = [f"            rem = {ut}(i)"]
    for d in range(ndim - 1, 0, -1):
        lines += [f"            nxt = rem // {ut}(sh{d})",
                  f"            out[{d} * count + k] = int64(rem - nxt * {ut}(sh{d}))",
                  "            rem = nxt"]
    lines.append("            out[k] = int64(rem)")
    kname = f"nonzero_coords_{rank.name}_{ndim}d{bits}"
    params = "out, incl, n, count" + (", " + shapes if shapes else "")
    body = f"""def {kname}({params}):
    i = {GID}
    if i < n:
        r = int64(incl[i])
        prev = int64(incl[i - 1]) if i > 0 else int64(0)
        if r != prev:
            k = r - 1
{chr(10).join(lines)}
"""
    argtypes = ("int64*", f"{rank.name}*") + ("int64",) * (2 + ndim - 1)
    return compiler.KernelSpec(kname, PREAMBLE + body, kname, argtypes)


def compact_spec(elem: str, rank: np.dtype, N: int):
    """x[mask] gather: N > 1: element i of contiguous x (inner block 1) moves to out[rank - 1]
    when its flag (rank difference) is set, x and the ranks read as N-element vectors. N == 1:
    one thread per element of x with an inner block of B elements (e = i * B + r)."""
    if N > 1:
        xs = ", ".join(f"x{j}" for j in range(N))
        rs = ", ".join(f"r{j}" for j in range(N))
        moves = []
        prev = "r_prev"
        for j in range(N):
            moves += [f"        if r{j} != {prev}:", f"            out[r{j} - 1] = x{j}"]
            prev = f"r{j}"
        kname = f"mask_compact_{elem}_{rank.name}_vec{N}"
        body = f"""def {kname}(out, x, incl, n, B):
    i = {GID} * {N}
    if i + {N} <= n:
        {xs} = vload{N}(x, i)
        {rs} = vload{N}(incl, i)
        r_prev = incl[i - 1] if i > 0 else {rank.name}(0)
{chr(10).join(moves)}
    else:
        while i < n:
            r = incl[i]
            if r != (incl[i - 1] if i > 0 else {rank.name}(0)):
                out[r - 1] = x[i]
            i += 1
"""
    else:
        kname = f"mask_compact_{elem}_{rank.name}"
        body = f"""def {kname}(out, x, incl, n, B):
    e = {GID}
    if e < n:
        i = e // B
        r = int64(incl[i])
        if r != (int64(incl[i - 1]) if i > 0 else int64(0)):
            out[(r - 1) * B + (e - i * B)] = x[e]
"""
    argtypes = (f"{elem}*", f"{elem}*", f"{rank.name}*", "int64", "int64")
    return compiler.KernelSpec(kname, PREAMBLE + body, kname, argtypes)


def masked_scatter_spec(elem: str, rank: np.dtype, D: int, bits: int):
    """x[mask] = values: element e (C order) of x, a strided view over D padded dims with an
    inner block of B elements per mask element, takes value[(rank - 1) * vrs + r * vis]."""
    ut = index_type(bits)
    lines = [f"        rem = {ut}(e)"]
    for d in range(D - 1, 0, -1):
        lines += [f"        nxt = rem // {ut}(sh{d})", f"        c{d} = int64(rem - nxt * {ut}(sh{d}))",
                  "        rem = nxt"]
    lines.append("        c0 = int64(rem)")
    off = " + ".join(f"c{d} * xs{d}" for d in range(D))
    kname = f"mask_scatter_{elem}_{rank.name}_{D}d{bits}"
    params = ("x, value, incl, n, B, vrs, vis, " + ", ".join(f"sh{d}" for d in range(D)) + ", "
              + ", ".join(f"xs{d}" for d in range(D)))
    body = f"""def {kname}({params}):
    e = {GID}
    if e < n:
        i = int64({ut}(e) // {ut}(B))
        r = int64(incl[i])
        if r != (int64(incl[i - 1]) if i > 0 else int64(0)):
{chr(10).join('    ' + s for s in lines)}
            x[{off}] = value[(r - 1) * vrs + (e - i * B) * vis]
"""
    argtypes = (f"{elem}*", f"{elem}*", f"{rank.name}*") + ("int64",) * (4 + 2 * D)
    return compiler.KernelSpec(kname, PREAMBLE + body, kname, argtypes)
