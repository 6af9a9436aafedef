"""Kernel source of the random family: one thread per Philox4x32-10 counter block.

A thread computes the block of its global index b (the counter words b & 0xffffffff, b >> 32 and
the call's 64-bit offset; the key words are kernel arguments, so the key schedule folds into
constants added to them), turns its four output words into P values (``_backend.RANDOM_STREAM``:
4 from 32-bit words, 2 from 64-bit draws) and writes elements b * P .. b * P + P - 1 with one
vector store (16 bytes for float32 and float64; the output is a fresh C-contiguous array, so
every whole block is aligned); the last thread of a partial block stores its elements one by
one. Nothing depends on the launch shape, so the stream is the CPU backend's.

Floating-point products and sums go through libdevice's ``*_rn`` functions: NVVM may not
contract them into fused multiply-adds, which would round differently from NumPy. The
logarithm, square root (correctly rounded) and sine/cosine are libdevice's accurate ones.
Unsigned arithmetic is written with explicit uint32/uint64 conversions: numba widens 32-bit
integer operations to 64 bits, and the truncations keep Philox's multiplies at
``mul.wide.u32``.

Index width: 32-bit block indices while the element count fits in an int32 (the second counter
word is then 0), 64-bit beyond.
"""

from __future__ import annotations

import numpy as np

from ...._backend import random_values_per_block
from ...engine import compiler
from .._common import KernelSource, PREAMBLE, element_type, kernel_name

PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85
PHILOX_ROUNDS = 10

# The integers kernels: 'r32' maps a 64-bit draw onto a range of at most 2**32 with two 32-bit
# partial products, 'r64' onto a larger one with the full 64 x 64-bit high product.
INTEGER_PATHS = ("r32", "r64")
DISTRIBUTIONS = ("bits", "random", "uniform", "standard_normal", "normal", "integers")


def integer_path(range_: int) -> str:
    return "r32" if range_ <= 2 ** 32 else "r64"


def _philox_lines() -> list:
    """Ten rounds on the words x0..x3 (uint32) under the key words k0, k1."""
    lines = []
    for r in range(PHILOX_ROUNDS):
        k0 = f"uint32(k0 + uint32({(r * PHILOX_W0) & 0xFFFFFFFF}))" if r else "k0"
        k1 = f"uint32(k1 + uint32({(r * PHILOX_W1) & 0xFFFFFFFF}))" if r else "k1"
        lines += [f"p0 = uint64(x0) * uint64({PHILOX_M0})",
                  f"p1 = uint64(x2) * uint64({PHILOX_M1})",
                  f"x0 = uint32(uint32(p1 >> uint64(32)) ^ x1 ^ {k0})",
                  f"x2 = uint32(uint32(p0 >> uint64(32)) ^ x3 ^ {k1})",
                  "x1 = uint32(p1)",
                  "x3 = uint32(p0)"]
    return lines


def _float_lines(distribution: str, dt: np.dtype) -> list:
    """v0..v{P-1} of a floating distribution from the words x0..x3 (and params a, b)."""
    f32 = dt == np.float32
    T = "float32" if f32 else "float64"
    mul = "libdevice.fmul_rn" if f32 else "libdevice.dmul_rn"
    add = "libdevice.fadd_rn" if f32 else "libdevice.dadd_rn"
    scale = f"{T}({2.0 ** -24!r})" if f32 else f"{T}({2.0 ** -53!r})"
    lines = []
    if f32:
        raw = [f"uint32(x{q} >> uint32(8))" for q in range(4)]
    else:
        lines += ["d0 = uint64(x0) | (uint64(x1) << uint64(32))",
                  "d1 = uint64(x2) | (uint64(x3) << uint64(32))"]
        raw = ["(d0 >> uint64(11))", "(d1 >> uint64(11))"]
    P = len(raw)
    if distribution in ("random", "uniform"):
        lines += [f"u{q} = {mul}({T}({raw[q]}), {scale})" for q in range(P)]
        if distribution == "random":
            return lines + [f"v{q} = u{q}" for q in range(P)]
        return lines + [f"v{q} = {add}(a, {mul}(b, u{q}))" for q in range(P)]
    # Box-Muller on uniforms in (0, 1]: pairs (u0, u1) and, for float32, (u2, u3)
    one = "uint32(1)" if f32 else "uint64(1)"
    word = "uint32" if f32 else "uint64"
    lines += [f"u{q} = {mul}({T}({word}({raw[q]} + {one})), {scale})" for q in range(P)]
    log, sqrt, sincos = (("logf", "fsqrt_rn", "sincosf") if f32 else ("log", "dsqrt_rn", "sincos"))
    two_pi = f"{T}({float(np.float32(2 * np.pi)) if f32 else 2 * np.pi!r})"
    for j in range(P // 2):
        lines += [f"r{j} = libdevice.{sqrt}({mul}({T}(-2.0), libdevice.{log}(u{2 * j})))",
                  f"s{j}, c{j} = libdevice.{sincos}({mul}({two_pi}, u{2 * j + 1}))",
                  f"z{2 * j} = {mul}(r{j}, c{j})",
                  f"z{2 * j + 1} = {mul}(r{j}, s{j})"]
    if distribution == "standard_normal":
        return lines + [f"v{q} = z{q}" for q in range(P)]
    return lines + [f"v{q} = {add}(a, {mul}(b, z{q}))" for q in range(P)]


def _integer_lines(dt: np.dtype, path: str) -> list:
    """v0, v1: low + floor(d * (m + 1) / 2**64) of the draws d0, d1, cast to `dt`."""
    E = element_type(dt)
    # the range's words as uint32 arguments: zero-extended products stay mul.wide.u32
    lines = ["m64 = uint64(m)"] if path == "r32" else ["mc = uint64(mhi)", "md = uint64(mlo)"]
    for q in range(2):
        a, b = f"uint64(x{2 * q + 1})", f"uint64(x{2 * q})"
        if path == "r32":
            # d * (m + 1) = (a * 2**32 + b) * (m + 1); no partial sum reaches 2**64
            lines += [f"lo{q} = {b} * m64 + {b}",
                      f"hi{q} = ({a} * m64 + {a} + (lo{q} >> uint64(32))) >> uint64(32)"]
        else:
            lines += [f"dq{q} = {b} | ({a} << uint64(32))",
                      f"bd{q} = {b} * md", f"ad{q} = {a} * md", f"bc{q} = {b} * mc",
                      f"mid{q} = (bd{q} >> uint64(32)) + (ad{q} & uint64(4294967295)) + "
                      f"(bc{q} & uint64(4294967295))",
                      f"top{q} = {a} * mc + (ad{q} >> uint64(32)) + (bc{q} >> uint64(32)) + "
                      f"(mid{q} >> uint64(32))",
                      f"low{q} = (mid{q} << uint64(32)) | (bd{q} & uint64(4294967295))",
                      # d * (m + 1) = d * m + d: the carry of adding d to the low word
                      f"hi{q} = top{q} + (uint64(1) if uint64(low{q} + dq{q}) < dq{q} "
                      f"else uint64(0))"]
        lines.append(f"v{q} = {E}(uint64(hi{q} + low))")
    return lines


def _bits_lines(dt: np.dtype) -> list:
    if dt.itemsize == 4:
        return [f"v{q} = x{q}" for q in range(4)]
    return ["v0 = uint64(x0) | (uint64(x1) << uint64(32))",
            "v1 = uint64(x2) | (uint64(x3) << uint64(32))"]


def kernel_spec(distribution: str, dt: np.dtype, index_bits: int, path: str = ""):
    """The kernel writing `distribution` values of dtype `dt` (`path`: INTEGER_PATHS for
    integers). Arguments: out, n (elements), the key words k0, k1, the offset words c2, c3, then
    a, b (uniform: low, scale; normal: loc, scale, in `dt`) or, for integers, low (uint64, modulo
    2**64) and range - 1: m (uint32) on 'r32', its words mlo, mhi (uint32) on 'r64'."""
    dt = np.dtype(dt)
    P = random_values_per_block(distribution, dt)
    E = element_type(dt)
    args = ["out", "n", "k0", "k1", "c2", "c3"]
    argtypes = [f"{E}*", "int64", "uint32", "uint32", "uint32", "uint32"]
    if distribution in ("uniform", "normal"):
        args += ["a", "b"]
        argtypes += [dt.name, dt.name]
    elif distribution == "integers":
        args += ["low", "m"] if path == "r32" else ["low", "mlo", "mhi"]
        argtypes += ["uint64", "uint32"] if path == "r32" else ["uint64", "uint32", "uint32"]
    name = kernel_name("rng", distribution, dt, path, f"i{index_bits}")
    src = KernelSource(name, args, PREAMBLE)
    if index_bits == 32:
        src.section("this thread's counter block", [
            "t = uint32(uint32(cuda.blockIdx.x) * uint32(cuda.blockDim.x)"
            " + uint32(cuda.threadIdx.x))",
            f"e = int64(t) * {P}",
            "if e >= n:", "    return",
            "x0 = t", "x1 = uint32(0)"])
    else:
        src.section("this thread's counter block", [
            "t = int64(cuda.blockIdx.x) * int64(cuda.blockDim.x) + int64(cuda.threadIdx.x)",
            f"e = t * {P}",
            "if e >= n:", "    return",
            "x0 = uint32(t & 4294967295)", "x1 = uint32(t >> 32)"])
    src.section("Philox4x32-10", ["x2 = c2", "x3 = c3"] + _philox_lines())
    if distribution == "bits":
        values = _bits_lines(dt)
    elif distribution == "integers":
        values = _integer_lines(dt, path)
    else:
        values = _float_lines(distribution, dt)
    src.section(f"the block's {P} values", values)
    tail = []
    for q in range(P):
        pad = "    " * (q + 1)
        tail.append(f"{pad}out[e + {q}] = v{q}" if q else f"{pad}out[e] = v0")
        if q + 1 < P:
            tail.append(f"{pad}if e + {q + 1} < n:")
    vals = ", ".join(f"v{q}" for q in range(P))
    src.section("store: one vector for a whole block, element by element at the end", [
        f"if e + {P} <= n:", f"    vstore{P}(out, e, ({vals}))", "else:"] + tail)
    return compiler.KernelSpec(name, src.text(), name, tuple(argtypes))


def specs_for(index_bits: int) -> list:
    """Every kernel the family launches, at one index width."""
    from ...._dtypes import all_dtypes
    out = [kernel_spec("bits", np.dtype(d), index_bits) for d in ("uint32", "uint64")]
    for distribution in ("random", "uniform", "standard_normal", "normal"):
        out += [kernel_spec(distribution, np.dtype(d), index_bits) for d in ("float32", "float64")]
    out += [kernel_spec("integers", d, index_bits, path) for d in all_dtypes if d.kind in "iu"
            for path in INTEGER_PATHS]
    return out
