"""Memory-model accesses to 64-bit words other blocks read and write (a decoupled look-back's
tile statuses): ``ld.acquire``/``ld.relaxed`` and ``st.release``/``st.relaxed`` at GPU scope.

``ld_acquire(ptr, i)`` returns element `i` of a uint64 pointer; ``st_release(ptr, i, value)``
writes it. Each is volatile inline PTX with a memory clobber, so the compiler keeps it in program
order around fences and barriers.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from .address import global_address

__all__ = ["ld_acquire", "ld_relaxed", "st_release", "st_relaxed"]


def _u64_address(context, builder, ptr, idx):
    return global_address(builder, ptr, idx, context.get_data_type(types.uint64))


def _u64_load(order):
    @intrinsic
    def load(typingctx, ptr, idx):
        sig = types.uint64(ptr, idx)

        def codegen(context, builder, sig, args):
            fty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)])
            return builder.asm(fty, "ld." + order + ".gpu.global.u64 $0, [$1];", "=l,l,~{memory}",
                               [_u64_address(context, builder, *args)], side_effect=True)
        return sig, codegen
    return load


def _u64_store(order):
    @intrinsic
    def store(typingctx, ptr, idx, value):
        sig = types.void(ptr, idx, types.uint64)

        def codegen(context, builder, sig, args):
            fty = ir.FunctionType(ir.VoidType(), [ir.IntType(64), ir.IntType(64)])
            builder.asm(fty, "st." + order + ".gpu.global.u64 [$0], $1;", "l,l,~{memory}",
                        [_u64_address(context, builder, args[0], args[1]), args[2]],
                        side_effect=True)
            return context.get_dummy_value()
        return sig, codegen
    return store


ld_acquire = _u64_load("acquire")
ld_relaxed = _u64_load("relaxed")
st_release = _u64_store("release")
st_relaxed = _u64_store("relaxed")
