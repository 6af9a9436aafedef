"""Kernel source of the random family: one thread per Philox4x32-10 counter block.

A thread computes the block of its global index b (the counter words b & 0xffffffff, b >> 32 and
the call's 64-bit offset), turns its four output words into P values (``_backend.RANDOM_STREAM``:
4 from 32-bit words, 2 from 64-bit draws) and writes elements b * P .. b * P + P - 1 with one
vector store (16 bytes for float32 and float64; the output is a fresh C-contiguous array, so
every whole block is aligned); the last thread of a partial block stores its elements one by
one. Nothing depends on the launch shape, so the stream is the CPU backend's.

Philox's rounds cost one ``mul.wide.u32`` a product (``mul_wide_u32``, both halves of one
multiply) and one three-way xor a word: the 20 round keys are kernel arguments (``round_keys``,
computed on the host), which ptxas reads from the constant bank instead of adding the key
schedule's constants in every thread.

Floating-point products and sums of the stream's definition go through libdevice's ``*_rn``
functions: NVVM may not contract them into fused multiply-adds, which would round differently
from NumPy. float32 normals, the family's compute-bound kernels, evaluate Box-Muller inline
(``_box_muller_f32``): libdevice's logf and sincosf polynomials and reductions without the
special-case paths the stream's arguments never reach (u1 in [2**-24, 1], t in (0, 2pi]) and
sqrt_rn's fast path, so within 1 ulp (log, sqrt) and 1.5 ulp (sin, cos) of exact as theirs;
float64 normals call libdevice's log, dsqrt_rn and sincos. Unsigned arithmetic is written with
explicit uint32/uint64 conversions: numba widens 32-bit integer operations to 64 bits.

Index width: 32-bit block indices while the element count fits in an int32 (the second counter
word is then 0), 64-bit beyond.
"""

from __future__ import annotations

import functools

import numpy as np

from ...._backend import (PHILOX_M0, PHILOX_M1, PHILOX_ROUNDS, PHILOX_W0, PHILOX_W1,
                          random_values_per_block)
from ...engine import compiler
from .._common import KernelSource, PREAMBLE, element_type, kernel_name

# The integers kernels: 'r32' maps a 64-bit draw onto a range of at most 2**32 with two 32-bit
# partial products, 'r64' onto a larger one with the full 64 x 64-bit high product.
INTEGER_PATHS = ("r32", "r64")
DISTRIBUTIONS = ("bits", "random", "uniform", "standard_normal", "normal", "integers")


def integer_path(range_: int) -> str:
    return "r32" if range_ <= 2 ** 32 else "r64"


@functools.lru_cache(maxsize=64)  # a generator's key is the same on each of its calls
def round_keys(key: int) -> tuple:
    """The key words of Philox's ten rounds, (k0 + r * W0, k1 + r * W1) mod 2**32 for
    r = 0..9 flattened, of the 64-bit `key`: the kernels' arguments ka0, kb0, ka1, kb1..."""
    k0, k1 = key & 0xFFFFFFFF, key >> 32
    return tuple(w for r in range(PHILOX_ROUNDS)
                 for w in ((k0 + r * PHILOX_W0) & 0xFFFFFFFF, (k1 + r * PHILOX_W1) & 0xFFFFFFFF))


ROUND_KEY_ARGS = tuple(f"k{w}{r}" for r in range(PHILOX_ROUNDS) for w in "ab")


def _philox_lines() -> list:
    """Ten rounds on the words x0..x3 (uint32) under the round keys ka0, kb0, ka1..."""
    lines = []
    for r in range(PHILOX_ROUNDS):
        lines += [f"plo0, phi0 = mul_wide_u32(x0, uint32({PHILOX_M0}))",
                  f"plo1, phi1 = mul_wide_u32(x2, uint32({PHILOX_M1}))",
                  f"x0 = uint32(phi1 ^ x1 ^ ka{r})",
                  f"x2 = uint32(phi0 ^ x3 ^ kb{r})",
                  "x1 = plo1",
                  "x3 = plo0"]
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
    if f32:
        lines += _box_muller_f32(0) + _box_muller_f32(1)
    else:
        # Box-Muller on uniforms in (0, 1]
        lines += [f"u{q} = {mul}({T}(uint64({raw[q]} + uint64(1))), {scale})" for q in range(P)]
        lines += ["r0 = libdevice.dsqrt_rn(libdevice.dmul_rn(float64(-2.0), libdevice.log(u0)))",
                  f"s0, c0 = libdevice.sincos(libdevice.dmul_rn(float64({2 * np.pi!r}), u1))",
                  "z0 = libdevice.dmul_rn(r0, c0)",
                  "z1 = libdevice.dmul_rn(r0, s0)"]
    if distribution == "standard_normal":
        return lines + [f"v{q} = z{q}" for q in range(P)]
    return lines + [f"v{q} = {add}(a, {mul}(b, z{q}))" for q in range(P)]


def _f32(x) -> str:
    return f"float32({float(np.float32(x))!r})"


def _word_f32(word: int) -> float:
    return float(np.uint32(word).view(np.float32))


# libdevice's float32 polynomials, highest degree first. logf: log(1 + f) = f + f * f * q(f)
# for 1 + f in [2/3, 4/3); sincosf on [-pi/4, pi/4]: sin t = t + t**3 * s(t*t),
# cos t = c(t*t); the reduction t - q * pi/2 with pi/2 in three parts.
LOG_Q = (-_word_f32(0x3E055027), 0.14084610342979431152, -0.12148627638816833496,
         0.13980610668659210205, -0.16684235632419586182, 0.20012299716472625732,
         -0.24999669194221496582, 0.33333182334899902344, -0.5)
SIN_S = (-_word_f32(0x394D4153), 0.0083327032625675201416, -0.16666662693023681641)
COS_C = (_word_f32(0x37CBAC00), -0.0013887860113754868507, 0.041666727513074874878,
         -0.4999999701976776123, 1.0)
HALF_PI_PARTS = (1.5707962512969970703, 7.5497894158615963534e-08, 5.3903029534742383927e-15)
_ROUND_MAGIC = 12582912.0  # 1.5 * 2**23: x + it rounds x to an integer in its low bits


def _horner(var: str, coefficients, acc: str) -> list:
    lines = [f"{acc} = {_f32(coefficients[0])}"]
    return lines + [f"{acc} = cuda.fma({var}, {acc}, {_f32(c)})" for c in coefficients[1:]]


def _box_muller_f32(j: int) -> list:
    """z{2j}, z{2j+1} of the words x{2j}, x{2j+1}: r cos t, r sin t with r = sqrt(-2 log u1),
    u1 = k1 * 2**-24, t = 2pi * u2 rounded (float32), u2 = k2 * 2**-24, k = (x >> 8) + 1."""
    a, b = f"x{2 * j}", f"x{2 * j + 1}"
    lines = [
        # -2 log u1 = -2 e log 2 - 2 log(m), u1 = 2**e * m exactly, m in [2/3, 4/3)
        f"u{j} = float32(uint32(({a} >> uint32(8)) + uint32(1))) * float32({2.0 ** -24!r})",
        f"ub{j} = bitcast(u{j}, uint32(0))",
        f"eb{j} = uint32(uint32(ub{j} - uint32(0x3F2AAAAB)) & uint32(0xFF800000))",
        f"f{j} = bitcast(uint32(ub{j} - eb{j}), float32(0)) - float32(1.0)",
        f"es{j} = float32(int32(eb{j}))",
    ]
    # the coefficients times -2 (exact): -2 log(1 + f) = -2 f + f * (f * q'(f))
    lines += _horner(f"f{j}", [-2 * c for c in LOG_Q], f"lq{j}")
    lines += [
        f"nl{j} = cuda.fma(f{j}, f{j} * lq{j}, f{j} * float32(-2.0))",
        f"nl{j} = cuda.fma(es{j}, {_f32(-2 * float(np.float32(np.log(2))) * 2.0 ** -23)}, nl{j})",
        # sqrt_rn's fast path (correctly rounded for -2 log u1 > 0); the tiny addend makes
        # rsqrt(0) finite so that u1 = 1 gives r = 0
        f"y{j} = rsqrt_approx_ftz(nl{j} + float32(1e-30))",
        f"r{j} = nl{j} * y{j}",
        f"r{j} = cuda.fma(cuda.fma(-r{j}, r{j}, nl{j}), y{j} * float32(0.5), r{j})",
        f"t{j} = libdevice.fmul_rn(float32(uint32(({b} >> uint32(8)) + uint32(1))), "
        f"{_f32(float(np.float32(2 * np.pi)) * 2.0 ** -24)})",
        # t = q pi/2 + h, q = rint(t * 2/pi) in the low bits of w
        f"w{j} = cuda.fma(t{j}, {_f32(2 / np.pi)}, float32({_ROUND_MAGIC!r}))",
        f"qf{j} = w{j} - float32({_ROUND_MAGIC!r})",
    ]
    lines += [f"h{j} = cuda.fma(qf{j}, {_f32(-part)}, {f't{j}' if i == 0 else f'h{j}'})"
              for i, part in enumerate(HALF_PI_PARTS)]
    lines += [f"hh{j} = h{j} * h{j}"]
    lines += _horner(f"hh{j}", SIN_S, f"sp{j}")
    lines += [f"sn{j} = cuda.fma(hh{j} * h{j}, sp{j}, h{j})"]
    lines += _horner(f"hh{j}", COS_C, f"cs{j}")
    lines += [
        # quadrant q: (cos t, sin t) = (cos h, sin h) swapped when q is odd, cos t negative
        # for q = 1, 2 and sin t for q = 2, 3: the signs go onto r's sign bit
        f"q{j} = bitcast(w{j}, uint32(0))",
        f"odd{j} = (q{j} & uint32(1)) != uint32(0)",
        f"rb{j} = bitcast(r{j}, uint32(0))",
        f"rc{j} = bitcast(uint32(rb{j} ^ (uint32(uint32(q{j} + uint32(1)) << uint32(30))"
        f" & uint32(0x80000000))), float32(0))",
        f"rs{j} = bitcast(uint32(rb{j} ^ (uint32(q{j} << uint32(30)) & uint32(0x80000000))),"
        f" float32(0))",
        f"z{2 * j} = libdevice.fmul_rn(rc{j}, sn{j} if odd{j} else cs{j})",
        f"z{2 * j + 1} = libdevice.fmul_rn(rs{j}, cs{j} if odd{j} else sn{j})",
    ]
    return lines


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
    integers). Arguments: out, n (elements), the round keys (``round_keys``), the offset words c2,
    c3, then
    a, b (uniform: low, scale; normal: loc, scale, in `dt`) or, for integers, low (uint64, modulo
    2**64) and range - 1: m (uint32) on 'r32', its words mlo, mhi (uint32) on 'r64'."""
    dt = np.dtype(dt)
    P = random_values_per_block(distribution, dt)
    E = element_type(dt)
    args = ["out", "n", *ROUND_KEY_ARGS, "c2", "c3"]
    argtypes = [f"{E}*", "int64"] + ["uint32"] * (len(ROUND_KEY_ARGS) + 2)
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
