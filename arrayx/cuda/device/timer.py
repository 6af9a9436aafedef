"""``globaltimer()``: the GPU's %globaltimer in nanoseconds, for phase traces of kernels in
benchmarks (never in production kernels: reading it is a volatile instruction)."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

__all__ = ["globaltimer"]


@intrinsic
def globaltimer(typingctx):
    sig = types.int64()

    def codegen(context, builder, sig, args):
        fty = ir.FunctionType(ir.IntType(64), [])
        return builder.asm(fty, "mov.u64 $0, %globaltimer;", "=l", [], side_effect=True)
    return sig, codegen
