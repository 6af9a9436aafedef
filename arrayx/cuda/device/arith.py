"""Arithmetic PTX has and NVVM does not emit from plain code.

* ``mul_wide_u32(a, b)``: the 64-bit product of two uint32 values as its (low, high) words: one
  ``mul.wide.u32``, both halves unpacked from its register pair. Written with uint64
  arithmetic instead (``uint32(p)``, ``uint32(p >> 32)``), NVVM turns the low word into a
  second ``mul.lo`` and ptxas keeps both: Philox4x32 would pay two multiplies a product.
* ``rsqrt_approx_ftz(x)``: float32 ``rsqrt.approx.ftz.f32`` (relative error below 2**-22.9),
  the first step of sqrt_rn's fast path. libdevice's ``rsqrtf`` is the non-ftz instruction,
  around which ptxas puts a rescaling of subnormal arguments.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

__all__ = ["mul_wide_u32", "rsqrt_approx_ftz"]


@intrinsic
def mul_wide_u32(typingctx, a, b):
    sig = types.UniTuple(types.uint32, 2)(types.uint32, types.uint32)

    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        fty = ir.FunctionType(ir.LiteralStructType([i32, i32]), [i32, i32])
        words = builder.asm(fty, "{\n.reg .b64 p;\nmul.wide.u32 p, $2, $3;\nmov.b64 {$0, $1}, p;\n}",
                            "=r,=r,r,r", list(args), side_effect=False)
        low, high = builder.extract_value(words, 0), builder.extract_value(words, 1)
        return context.make_tuple(builder, sig.return_type, [low, high])
    return sig, codegen


@intrinsic
def rsqrt_approx_ftz(typingctx, x):
    sig = types.float32(types.float32)

    def codegen(context, builder, sig, args):
        f32 = ir.FloatType()
        return builder.asm(ir.FunctionType(f32, [f32]), "rsqrt.approx.ftz.f32 $0, $1;", "=f,f",
                           list(args), side_effect=False)
    return sig, codegen
