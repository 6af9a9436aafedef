"""Source of the gather/scatter kernels: one generator (``kernel_spec``) for gathers, scatters
and scatters' bounds checks, on the ``vec`` and ``nd`` layouts (the package docstring describes
both), and the specs precompile.py compiles ahead of time.
"""

from __future__ import annotations

import numpy as np

from ...engine import compiler
from .._common import DIM_BUCKETS, storage_type
from .._common import PREAMBLE, vload_statement
from .tuning import ND_UNROLL, VEC_ELEMENTS

_I64 = np.dtype("int64")


def storage(dtype: np.dtype, ptrs) -> tuple:
    """(numba element type, wide) moving elements of `dtype` as raw bits; `wide`: a 16-byte
    element moved by one vector access (needs every pointer 16-byte aligned)."""
    wide = dtype.itemsize == 16 and all(p % 16 == 0 for p in ptrs)
    return storage_type(dtype), wide


def _load(ptr, off, wide):
    return f"vload1({ptr}, {off})[0]" if wide else f"{ptr}[{off}]"


def _store(ptr, off, value, wide):
    return f"vstore1({ptr}, {off}, ({value},))" if wide else f"{ptr}[{off}] = {value}"


def _wrap(raw: str, v: str, k: int) -> list:
    """Statements: `v` = index `raw` of array k wrapped into [0, n_k), 0 and err set if outside.
    Every integer dtype goes through int64: uint64 values >= 2**63 count as negative, as NumPy's
    cast to intp does."""
    return [f"{v} = int64({raw})",
            f"{v} = select({v} < 0, {v} + i{k}_n, {v})",
            f"b{v} = uint64({v}) >= uint64(i{k}_n)",
            f"err = err | b{v}",
            f"{v} = select(b{v}, int64(0), {v})"]


def kernel_spec(op: str, elem: str, wide: bool, idx_dtypes: tuple, lay: str, D: int = 1,
                bits: int = 64, V: int = 1):
    """Source of one gather ('gather'), scatter ('scatter') or bounds check ('check': a scatter
    that only reads the indices and sets the flag) kernel. `idx_dtypes`: the index arrays'
    dtypes; `lay`: 'nd' (D padded dims, `bits`-bit coordinates) or 'vec' (gather, one index
    array read V at a time)."""
    K = len(idx_dtypes)
    gather = op == "gather"
    main = "src" if gather else "dst"  # the side the indices address
    args = ["out", "src"] if gather else ["dst", "val"]
    argtypes = [elem + "*", elem + "*"]
    args += [f"idx{k}" for k in range(K)] + ["flag", "n"]
    argtypes += [f"{np.dtype(d).name}*" for d in idx_dtypes] + ["uint32*", "int64"]
    idx_t = "uint32" if bits == 32 else "int64"
    if lay == "nd":
        args += [f"sh{j}" for j in range(D)] + [f"{main}_st{j}" for j in range(D)]
        argtypes += [idx_t] * D + ["int64"] * D
        if not gather:
            args += [f"val_st{j}" for j in range(D)]
            argtypes += ["int64"] * D
        for k in range(K):
            args += [f"i{k}_st{j}" for j in range(D)]
            argtypes += ["int64"] * D
    for k in range(K):
        args += [f"i{k}_n", f"i{k}_ax"]
        argtypes += ["int64", "int64"]
    body = ["    tid = cuda.threadIdx.x", "    bdim = cuda.blockDim.x", "    blk = cuda.blockIdx.x",
            "    err = False"]

    if lay == "vec":
        assert gather and K == 1
        U = VEC_ELEMENTS // V
        isz = {"uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "complex128": 16}[elem]
        chunk = max(1, min(V, 16 // isz))  # elements per vector store
        lanes = [(u, l) for u in range(U) for l in range(V)]
        body += [f"    v = blk * ({U} * bdim) + tid",
                 f"    if (blk + 1) * ({U * V} * bdim) <= n:"]
        body += [f"        j{u} = (v + {u} * bdim) * {V}" for u in range(U)]
        for u in range(U):  # every index vector first: U 16-byte loads in flight
            targets = [f"r{u}_{l}" for l in range(V)]
            body.append("        " + vload_statement(targets, "idx0", f"j{u}"))
        for u, l in lanes:
            body += ["        " + s for s in _wrap(f"r{u}_{l}", f"w{u}_{l}", 0)]
        for u, l in lanes:  # then every data load: U * V random reads in flight
            body.append(f"        x{u}_{l} = {_load('src', f'w{u}_{l} * i0_ax', wide)}")
        for u in range(U):
            for c in range(0, V, chunk):
                if wide:
                    body.append("        " + _store("out", f"j{u} + {c}", f"x{u}_{c}", True))
                else:
                    vals = ", ".join(f"x{u}_{l}" for l in range(c, c + chunk))
                    body.append(f"        vstore{chunk}(out, j{u} + {c}, ({vals}{',' if chunk == 1 else ''}))")
        body += ["    else:", f"        for u in range({U}):",
                 f"            j = (v + u * bdim) * {V}", f"            e = j + {V}",
                 "            if e > n:", "                e = n", "            while j < e:"]
        body += ["                " + s for s in _wrap("idx0[j]", "w", 0)]
        body += ["                " + _store("out", "j", _load("src", "w * i0_ax", wide), wide),
                 "                j += 1"]
    elif lay == "nd":
        def dot(u, name):
            return " + ".join(f"c{u}_{j} * {name}{j}" for j in range(D))

        def coords(u, ind):  # coordinates, offsets, and the raw index loads
            lines = [f"r{u} = uint32(p{u})" if bits == 32 else f"r{u} = p{u}"]
            for j in range(D - 1, 0, -1):
                lines += [f"c{u}_{j} = r{u} % sh{j}", f"r{u} = r{u} // sh{j}"]
            lines += [f"c{u}_0 = r{u}", f"s{u} = {dot(u, main + '_st')}"]
            if op == "scatter":
                lines.append(f"f{u} = {dot(u, 'val_st')}")
            lines += [f"q{u}_{k} = idx{k}[{dot(u, f'i{k}_st')}]" for k in range(K)]
            return [ind + s for s in lines]

        def check(u, ind):
            lines = []
            for k in range(K):
                lines += _wrap(f"q{u}_{k}", f"w{u}_{k}", k) + [f"s{u} += w{u}_{k} * i{k}_ax"]
            return [ind + s for s in lines]

        def move(u, ind):
            if op == "check":
                return []
            if gather:
                return [ind + f"x{u} = {_load('src', f's{u}', wide)}"]
            bad = " or ".join(f"bw{u}_{k}" for k in range(K))
            lines = [f"x{u} = {_load('val', f'f{u}', wide)}"]
            if K:
                lines += [f"if not ({bad}):", "    " + _store("dst", f"s{u}", f"x{u}", wide)]
            else:
                lines.append(_store("dst", f"s{u}", f"x{u}", wide))
            return [ind + s for s in lines]

        def finish(u, ind):
            return [ind + _store("out", f"p{u}", f"x{u}", wide)] if gather else []

        U = ND_UNROLL
        body += [f"    base = blk * ({U} * bdim) + tid",
                 f"    if (blk + 1) * ({U} * bdim) <= n:"]
        body += [f"        p{u} = base + {u} * bdim" for u in range(U)]
        for phase in (coords, check, move, finish):  # phase by phase: U loads in flight
            for u in range(U):
                body += phase(u, "        ")
        body += ["    else:", f"        for u in range({U}):", "            p0 = base + u * bdim",
                 "            if p0 < n:"]
        for phase in (coords, check, move, finish):
            body += phase(0, "                ")
    else:
        raise ValueError(lay)
    body += ["    if err:", "        flag[0] = uint32(1)"]

    tag = "_".join(np.dtype(d).name for d in idx_dtypes) or "none"
    kname = f"{op}_{elem}{'v' if wide else ''}_by_{tag}_{lay}"
    kname += f"{V}" if lay == "vec" else f"{D}d{bits}"
    src = PREAMBLE + f"def {kname}({', '.join(args)}):\n" + "\n".join(body) + "\n"
    return compiler.KernelSpec(kname, src, kname, tuple(argtypes))


def precompile_specs():
    """The kernels precompile.py fills the disk cache with: int64 and int32 indices, every
    element size, the vec layout and the nd layouts of 1 and 3 dims with 32-bit coordinates
    (other index dtypes and layouts compile on first use)."""
    elems = [("uint8", False), ("uint16", False), ("uint32", False), ("uint64", False),
             ("complex128", True)]
    out = []
    for idx in (_I64, np.dtype("int32")):
        for elem, wide in elems:
            out.append(kernel_spec("gather", elem, wide, (idx,), "vec", 1, 64,
                                   min(VEC_ELEMENTS, 16 // idx.itemsize)))
            out += [kernel_spec(op, elem, wide, (idx,), "nd", D, 32)
                    for op in ("gather", "scatter") for D in DIM_BUCKETS[:2]]
        out += [kernel_spec("check", "uint8", False, (idx,), "nd", D, 32) for D in DIM_BUCKETS[:2]]
    return out
