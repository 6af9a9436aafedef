"""Device helpers for kernels: aligned 16-byte vector loads/stores, and a trap for debug checks.

``vloadN(ptr, i)`` reads N consecutive elements starting at element ``i`` of ``ptr`` (a
``CPointer`` of any arrayx element type) as one vector access and returns a ``UniTuple`` of N
values; ``vstoreN(ptr, i, values)`` writes them. The IR is ``load <N x T>, align 16`` through an
``addrspace(1)`` (global) pointer, which NVVM turns into ``ld.global.v4.f32`` / ``v2.f64`` /
``v4.u32``... A numba loop with plain indexing never gives these.
Complex values are loaded as 2N lanes of their real type. The caller guarantees alignment: the
host checks pointers and picks a scalar kernel for unaligned views.

N is 16 // itemsize of the widest operand; narrower operands of the same kernel use
narrower vectors (e.g. a bool output of a float32 kernel is stored 4 bytes at a time).

Importing this module imports numba; only the compiler does, and only on a cache miss.

The ``__all__`` list is what kernel sources may name (engine/compiler.py resolves it).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from .address import global_address, global_pointer

WIDTHS = (1, 2, 4, 8, 16)
__all__ = ["vload1", "vload2", "vload4", "vload8", "vload16",
           "vstore1", "vstore2", "vstore4", "vstore8", "vstore16", "trap"]


def _lanes(context, T):
    if isinstance(T, types.Complex):
        return context.get_data_type(T.underlying_float), 2
    return context.get_data_type(T), 1


def _narrow(vt, nbytes):
    """Vectors of bytes/shorts: NVVM splits a <16 x i8> load into four ld.global.v4.u8 once the
    lanes are used one by one, so those are moved as 32-bit words through inline PTX, which the
    optimiser cannot split."""
    elt = vt.element
    return isinstance(elt, ir.IntType) and elt.width < 32 and nbytes >= 4


_PTX_SUFFIX = {1: "", 2: ".v2", 4: ".v4"}


def _load_vector(builder, ptr, idx, vt, nbytes):
    if not _narrow(vt, nbytes):
        return builder.load(global_pointer(builder, ptr, idx, vt), align=min(16, nbytes))
    words = nbytes // 4
    i32 = ir.IntType(32)
    outs = ",".join(["=r"] * words)
    regs = ", ".join(f"${k}" for k in range(words))
    regs = f"{{{regs}}}" if words > 1 else regs
    if words == 1:
        fty = ir.FunctionType(i32, [ir.IntType(64)])
    else:
        fty = ir.FunctionType(ir.LiteralStructType([i32] * words), [ir.IntType(64)])
    asm = f"ld.global{_PTX_SUFFIX[words]}.u32 {regs}, [${words}];"
    res = builder.asm(fty, asm, f"{outs},l", [global_address(builder, ptr, idx, vt)],
                      side_effect=False)
    wv = ir.Constant(ir.VectorType(i32, words), ir.Undefined)
    for k in range(words):
        w = res if words == 1 else builder.extract_value(res, k)
        wv = builder.insert_element(wv, w, ir.Constant(i32, k))
    return builder.bitcast(wv, vt)


def _store_vector(builder, ptr, idx, v, vt, nbytes):
    if not _narrow(vt, nbytes):
        builder.store(v, global_pointer(builder, ptr, idx, vt), align=min(16, nbytes))
        return
    words = nbytes // 4
    i32 = ir.IntType(32)
    wv = builder.bitcast(v, ir.VectorType(i32, words))
    vals = [builder.extract_element(wv, ir.Constant(i32, k)) for k in range(words)]
    regs = ", ".join(f"${k + 1}" for k in range(words))
    regs = f"{{{regs}}}" if words > 1 else regs
    fty = ir.FunctionType(ir.VoidType(), [ir.IntType(64)] + [i32] * words)
    asm = f"st.global{_PTX_SUFFIX[words]}.u32 [$0], {regs};"
    builder.asm(fty, asm, "l" + ",r" * words + ",~{memory}",
                [global_address(builder, ptr, idx, vt)] + vals, side_effect=True)


def _itemsize(context, T):
    return context.get_abi_sizeof(context.get_data_type(T))


def make_vload(n: int):
    @intrinsic
    def vload(typingctx, ptr, idx):
        if not isinstance(ptr, types.CPointer) or not isinstance(idx, types.Integer):
            return None
        T = ptr.dtype
        sig = types.UniTuple(T, n)(ptr, idx)

        def codegen(context, builder, sig, args):
            p, i = args
            base, k = _lanes(context, T)
            vt = ir.VectorType(base, n * k)
            v = _load_vector(builder, p, i, vt, n * _itemsize(context, T))
            tup = ir.Constant(context.get_value_type(sig.return_type), ir.Undefined)
            i32 = ir.IntType(32)
            for j in range(n):
                if k == 1:
                    elem = builder.extract_element(v, ir.Constant(i32, j))
                else:
                    elem = ir.Constant(context.get_value_type(T), ir.Undefined)
                    elem = builder.insert_value(elem, builder.extract_element(v, ir.Constant(i32, 2 * j)), 0)
                    elem = builder.insert_value(elem, builder.extract_element(v, ir.Constant(i32, 2 * j + 1)), 1)
                tup = builder.insert_value(tup, elem, j)
            return tup

        return sig, codegen

    vload.__name__ = f"vload{n}"
    return vload


def make_vstore(n: int):
    @intrinsic
    def vstore(typingctx, ptr, idx, values):
        if not isinstance(ptr, types.CPointer) or not isinstance(idx, types.Integer):
            return None
        T = ptr.dtype
        if not isinstance(values, types.BaseTuple) or len(values) != n:
            return None
        sig = types.void(ptr, idx, types.UniTuple(T, n))

        def codegen(context, builder, sig, args):
            p, i, tup = args
            base, k = _lanes(context, T)
            vt = ir.VectorType(base, n * k)
            v = ir.Constant(vt, ir.Undefined)
            i32 = ir.IntType(32)
            for j in range(n):
                elem = builder.extract_value(tup, j)
                if k == 1:
                    v = builder.insert_element(v, elem, ir.Constant(i32, j))
                else:
                    v = builder.insert_element(v, builder.extract_value(elem, 0), ir.Constant(i32, 2 * j))
                    v = builder.insert_element(v, builder.extract_value(elem, 1), ir.Constant(i32, 2 * j + 1))
            _store_vector(builder, p, i, v, vt, n * _itemsize(context, T))
            return context.get_dummy_value()

        return sig, codegen

    vstore.__name__ = f"vstore{n}"
    return vstore


@intrinsic
def trap(typingctx):
    """Abort the kernel (CUDA_ERROR_LAUNCH_FAILED at the next sync): for ARRAYX_DEBUG checks."""
    sig = types.void()

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.VoidType(), [])
        fn = cgutils_get_or_insert(builder.module, fnty, "llvm.trap")
        builder.call(fn, [])
        return context.get_dummy_value()

    return sig, codegen


def cgutils_get_or_insert(module, fnty, name):
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, fnty, name)
    return fn


vload1, vload2, vload4, vload8, vload16 = (make_vload(n) for n in WIDTHS)
vstore1, vstore2, vstore4, vstore8, vstore16 = (make_vstore(n) for n in WIDTHS)
