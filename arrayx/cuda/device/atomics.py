"""Atomic read-modify-writes on global memory through pointers (numba's ``cuda.atomic`` takes
arrays, not pointers). Each returns the old value and is volatile inline PTX with a memory
clobber, so it stays in program order around fences and barriers.

``atom_add(ptr, i, value)``: ``atom.global.add.u64`` of `value` to element `i` of a uint64 pointer.
``ticket(ptr, i)``: ``atom.global.add.u32`` of 1 to element `i` of a uint32 pointer (a counter
that hands out tickets: the last of S blocks to arrive reads S - 1).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from .address import global_address

__all__ = ["atom_add", "ticket"]


@intrinsic
def atom_add(typingctx, ptr, idx, value):
    sig = types.uint64(ptr, idx, types.uint64)

    def codegen(context, builder, sig, args):
        address = global_address(builder, args[0], args[1], context.get_data_type(types.uint64))
        fty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(64)])
        return builder.asm(fty, "atom.global.add.u64 $0, [$1], $2;", "=l,l,l,~{memory}",
                           [address, args[2]], side_effect=True)
    return sig, codegen


@intrinsic
def ticket(typingctx, ptr, idx):
    sig = types.uint32(ptr, idx)

    def codegen(context, builder, sig, args):
        fty = ir.FunctionType(ir.IntType(32), [ir.IntType(64)])
        address = global_address(builder, args[0], args[1], ir.IntType(32))
        return builder.asm(fty, "atom.global.add.u32 $0, [$1], 1;", "=r,l,~{memory}",
                           [address], side_effect=True)
    return sig, codegen
