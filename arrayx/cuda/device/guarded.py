"""Element accesses that happen only where a condition holds, each one call in the kernel's
source: ``load_or(ptr, i, ok, fill)`` is ``ptr[i]`` where `ok` holds, else `fill`;
``store_if(ptr, i, ok, value)`` stores `value` to ``ptr[i]`` where `ok` holds.

The branch is made in LLVM, inside the call, exactly as numba lowers ``ptr[i] if ok else fill``
and ``if ok: ptr[i] = value`` (the same PTX), but numba's front end sees one call instead of
new basic blocks: a kernel's compile time is mostly that front end, which grows faster than
linearly with the blocks (device/branchless.py says the same of select).
"""

from __future__ import annotations

from numba import types
from numba.core.extending import intrinsic

__all__ = ["load_or", "store_if"]


@intrinsic
def load_or(typingctx, ptr, idx, ok, fill):
    if not isinstance(ptr, types.CPointer):
        return None
    sig = ptr.dtype(ptr, idx, ok, fill)

    def codegen(context, builder, sig, args):
        p, i, c, f = args
        c = context.cast(builder, c, sig.args[2], types.boolean)
        f = context.cast(builder, f, sig.args[3], sig.return_type)
        before = builder.block
        with builder.if_then(c):
            loaded = builder.load(builder.gep(p, [i]))
            loaded_in = builder.block
        value = builder.phi(loaded.type)
        value.add_incoming(loaded, loaded_in)
        value.add_incoming(f, before)
        return value
    return sig, codegen


@intrinsic
def store_if(typingctx, ptr, idx, ok, value):
    if not isinstance(ptr, types.CPointer):
        return None
    sig = types.void(ptr, idx, ok, value)

    def codegen(context, builder, sig, args):
        p, i, c, v = args
        c = context.cast(builder, c, sig.args[2], types.boolean)
        v = context.cast(builder, v, sig.args[3], sig.args[0].dtype)
        with builder.if_then(c):
            builder.store(v, builder.gep(p, [i]))
        return context.get_dummy_value()
    return sig, codegen
