"""Global loads with PTX cache qualifiers.

``load_cg(ptr, i)``: element `i` (32 or 64 bits) read with ``ld.global.cg``, cached in L2 only,
which is coherent across SMs: how a block reads what other blocks wrote in the same launch.
Volatile inline PTX with a memory clobber, so it stays in program order around fences.

``hinted_vload(n, hint)``: a ``vloadN`` (vector.py) whose one 16-byte ``ld.global<hint>.v4.u32``
carries a cache qualifier such as ``".L1::no_allocate"``, for real element types; a kernel's
source binds it once, e.g. ``vload_hint4 = hinted_vload(4, ".L1::no_allocate")``.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from .address import global_address

__all__ = ["hinted_vload", "load_cg"]


def hinted_vload(n: int, hint: str):
    @intrinsic
    def load(typingctx, ptr, idx):
        T = ptr.dtype
        sig = types.UniTuple(T, n)(ptr, idx)

        def codegen(context, builder, sig, args):
            base = context.get_data_type(T)
            gp = builder.addrspacecast(builder.gep(args[0], [args[1]]),
                                       ir.PointerType(base, addrspace=1))
            i32 = ir.IntType(32)
            fty = ir.FunctionType(ir.LiteralStructType([i32] * 4), [ir.IntType(64)])
            res = builder.asm(fty, "ld.global" + hint + ".v4.u32 {$0, $1, $2, $3}, [$4];",
                              "=r,=r,=r,=r,l", [builder.ptrtoint(gp, ir.IntType(64))],
                              side_effect=False)
            words = ir.Constant(ir.VectorType(i32, 4), ir.Undefined)
            for k in range(4):
                words = builder.insert_element(words, builder.extract_value(res, k),
                                               ir.Constant(i32, k))
            v = builder.bitcast(words, ir.VectorType(base, n))
            tup = ir.Constant(context.get_value_type(sig.return_type), ir.Undefined)
            for j in range(n):
                tup = builder.insert_value(tup, builder.extract_element(v, ir.Constant(i32, j)), j)
            return tup
        return sig, codegen
    load.__name__ = f"vload_hint{n}"
    return load


@intrinsic
def load_cg(typingctx, ptr, idx):
    sig = ptr.dtype(ptr, idx)

    def codegen(context, builder, sig, args):
        T = context.get_value_type(sig.return_type)
        bits = T.width if isinstance(T, ir.IntType) else (32 if T == ir.FloatType() else 64)
        fty = ir.FunctionType(ir.IntType(bits), [ir.IntType(64)])
        word = builder.asm(fty, "ld.global.cg.b%d $0, [$1];" % bits,
                           ("=r" if bits == 32 else "=l") + ",l,~{memory}",
                           [global_address(builder, args[0], args[1], ir.IntType(bits))],
                           side_effect=True)
        return builder.bitcast(word, T)
    return sig, codegen
