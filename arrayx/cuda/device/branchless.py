"""``select(cond, a, b)``: `a` where `cond` holds, else `b`, as one LLVM ``select`` (both operands
evaluated, no branch).

Generated kernels write their per-element choices with it instead of ``a if cond else b`` or
``if cond: x = a``: numba turns each of those into new basic blocks, and its front end (SSA
reconstruction, liveness, type inference), which is most of a kernel's compile time, grows
faster than linearly with the blocks. NVVM makes the same ``selp`` of either form, so the PTX
does not change (benchmarks/probes/compile_phases.py --compare checks it). Only for operands
that are safe to evaluate when not chosen: never a load past an array's end.
"""

from __future__ import annotations

from numba import types
from numba.core.extending import intrinsic

__all__ = ["select"]


@intrinsic
def select(typingctx, cond, a, b):
    chosen = typingctx.unify_types(a, b)
    if chosen is None:
        return None
    sig = chosen(cond, a, b)

    def codegen(context, builder, sig, args):
        c, x, y = args
        c = context.cast(builder, c, sig.args[0], types.boolean)
        x = context.cast(builder, x, sig.args[1], sig.return_type)
        y = context.cast(builder, y, sig.args[2], sig.return_type)
        return builder.select(c, x, y)
    return sig, codegen
