"""``bitcast(x, proto)``: the bits of `x` as the type of `proto` (same size; `proto`'s value is
not used), e.g. ``bitcast(f, uint32(0))`` for a float32's bits."""

from __future__ import annotations

from numba.core.extending import intrinsic

__all__ = ["bitcast"]


@intrinsic
def bitcast(typingctx, x, proto):
    sig = proto(x, proto)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(sig.return_type))
    return sig, codegen
