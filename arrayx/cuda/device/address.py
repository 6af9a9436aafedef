"""Global-memory addresses for inline PTX: a typed pointer plus an element index, as the 64-bit
address of that element in the global state space (``addrspacecast`` to addrspace(1), so the
PTX uses ``ld.global``/``st.global``/``atom.global`` rather than generic addressing)."""

from __future__ import annotations

from llvmlite import ir


def global_pointer(builder, ptr, idx, element_type):
    """An addrspace(1) pointer of `element_type` to element `idx` of `ptr`."""
    address = builder.bitcast(builder.gep(ptr, [idx]), ir.PointerType(element_type))
    return builder.addrspacecast(address, ir.PointerType(element_type, addrspace=1))


def global_address(builder, ptr, idx, element_type):
    """The same pointer as a 64-bit integer, the operand of an inline PTX memory instruction."""
    return builder.ptrtoint(global_pointer(builder, ptr, idx, element_type), ir.IntType(64))
