"""``prefetch_line(ptr, i)``: ``prefetch.global.L2`` of the 128-byte line holding element `i` of
`ptr`, so a later load of it hits L2 without holding registers or shared memory meanwhile."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from .address import global_address

__all__ = ["prefetch_line"]


@intrinsic
def prefetch_line(typingctx, ptr, idx):
    sig = types.void(ptr, idx)

    def codegen(context, builder, sig, args):
        address = global_address(builder, args[0], args[1], context.get_data_type(types.uint64))
        fty = ir.FunctionType(ir.VoidType(), [ir.IntType(64)])
        builder.asm(fty, "prefetch.global.L2 [$0];", "l", [address], side_effect=True)
        return context.get_dummy_value()
    return sig, codegen
