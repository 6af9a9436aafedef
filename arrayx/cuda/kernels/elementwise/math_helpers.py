"""The per-element math helpers of elementwise expressions, as templates over one real type.

ops.py's expressions call these (complex arithmetic and functions, true division, remainder,
logaddexp, sign, hypot...); template.py inlines the definitions an expression needs into the
kernel's source, so they are part of the kernel's text and of its cache key (numba inlines them;
device functions would need a GPU at compile time, which CI and precompile.py do not have).

Helper sources are templates over one real type: ``R(...)`` casts to it, ``M.fn(...)`` calls
libdevice's ``fn`` for it (``expf`` for float32, ``exp`` for float64) and a helper ``_x_R`` calls
another helper of the same type (``_x_f64`` names one type explicitly). Products in complex
arithmetic go through ``M.mul_rn`` (``__dmul_rn``) so NVVM cannot contract them into fused
multiply-adds, which would change which results overflow to inf or NaN. Complex transcendental
functions of complex64 are computed in float64 and rounded once: no intermediate overflow where
the result is representable, as in the C library.
"""

from __future__ import annotations

import re
import textwrap

import numpy as np

F32 = np.dtype("float32")
F64 = np.dtype("float64")

_HELPERS: dict = {}


def _helper(src: str):
    src = textwrap.dedent(src).strip("\n")
    name = re.match(r"def (_\w+)_R\(", src).group(1)
    _HELPERS[name] = src


_helper("""
def _cpack_R(t):
    return complex(t[0], t[1])
""")

_helper("""
def _fdiv_R(a, b):
    # floor(a / b) as NumPy's npy_floor_divide, and floor(a / b) when an operand is infinite
    if not (a - a == R(0) and b - b == R(0)):
        return M.floor(a / b)
    if b == R(0):
        return a / b
    mod = M.fmod(a, b)
    div = (a - mod) / b
    if mod != R(0):
        if (b < R(0)) != (mod < R(0)):
            div = div - R(1)
    if div != R(0):
        floordiv = M.floor(div)
        if div - floordiv > R(0.5):
            floordiv = floordiv + R(1)
        return floordiv
    return M.copysign(R(0), a / b)
""")

_helper("""
def _frem_R(a, b):
    # NumPy's npy_remainder: fmod moved onto the divisor's side, zero signed like the divisor
    mod = M.fmod(a, b)
    if b == R(0):
        return mod
    if mod != R(0):
        if (b < R(0)) != (mod < R(0)):
            mod = mod + b
        return mod
    return M.copysign(R(0), b)
""")

_helper("""
def _logaddexp_R(a, b):
    if a == b:
        return a + R(LN2)
    d = a - b
    if d > R(0):
        return a + M.log1p(M.exp(-d))
    if d <= R(0):
        return b + M.log1p(M.exp(d))
    return d
""")

_helper("""
def _fsign_R(a):
    if a > R(0):
        return R(1)
    if a < R(0):
        return R(-1)
    if a == R(0):
        return R(0)
    return a
""")

_helper("""
def _hypot_R(x, y):
    # libdevice's hypot overflows near the top of the range (hypot(1, DBL_MAX) = inf, and so
    # does 2 hypot(x/2, y/2), one ulp high): there, the larger magnitude times
    # sqrt(1 + ratio^2), exact when the ratio is negligible
    ax = M.fabs(x)
    ay = M.fabs(y)
    if (ax > R(BIG_R) or ay > R(BIG_R)) and ax != R(INF) and ay != R(INF):
        big = ax if ax > ay else ay
        r = (ay if ax > ay else ax) / big
        return big * M.sqrt(R(1) + r * r)
    return M.hypot(x, y)
""")

_helper("""
def _cmul_R(ar, ai, br, bi):
    # NumPy's SIMD complex product on x86 (fused multiply-adds, one rounding per part): exact
    # products may cancel or stay finite where the plain formula overflows to inf - inf
    return M.fma(ar, br, -M.mul_rn(ai, bi)), M.fma(ar, bi, M.mul_rn(ai, br))
""")

_helper("""
def _cmuln_R(ar, ai, br, bi):
    # the plain product, each operation rounded (NumPy's scalar nc_prod, used by its pow)
    return (M.add_rn(M.mul_rn(ar, br), -M.mul_rn(ai, bi)),
            M.add_rn(M.mul_rn(ar, bi), M.mul_rn(ai, br)))
""")

_helper("""
def _cbox_R(p, q, r, s):
    # Annex G's recovery step: an infinite factor p + iq becomes +-1 / +-0 per part (its
    # direction), NaN parts of the other factor r + is become +-0; the last item: whether it did
    if not (p == R(INF) or p == -R(INF) or q == R(INF) or q == -R(INF)):
        return p, q, r, s, False
    return (M.copysign(R(1) if (p == R(INF) or p == -R(INF)) else R(0), p),
            M.copysign(R(1) if (q == R(INF) or q == -R(INF)) else R(0), q),
            M.copysign(R(0), r) if r != r else r, M.copysign(R(0), s) if s != s else s, True)
""")

_helper("""
def _cmulg_R(a, b, c, d):
    # C99 Annex G's product (GCC's __muldc3), recovering infinities that NaN hides; the C
    # library's cpow multiplies this way
    ac = M.mul_rn(a, c)
    bd = M.mul_rn(b, d)
    ad = M.mul_rn(a, d)
    bc = M.mul_rn(b, c)
    x = ac - bd
    y = ad + bc
    if x == x or y == y:
        return x, y
    z = _cbox_R(a, b, c, d)
    w = _cbox_R(z[2], z[3], z[0], z[1])
    c, d, a, b = w[0], w[1], w[2], w[3]
    recalc = z[4] or w[4]
    if not recalc and (M.fabs(ac) == R(INF) or M.fabs(bd) == R(INF) or M.fabs(ad) == R(INF)
                       or M.fabs(bc) == R(INF)):
        if a != a:
            a = M.copysign(R(0), a)
        if b != b:
            b = M.copysign(R(0), b)
        if c != c:
            c = M.copysign(R(0), c)
        if d != d:
            d = M.copysign(R(0), d)
        recalc = True
    if recalc:
        return (R(INF) * (M.mul_rn(a, c) - M.mul_rn(b, d)),
                R(INF) * (M.mul_rn(a, d) + M.mul_rn(b, c)))
    return x, y
""")

_helper("""
def _cdiv_R(ar, ai, br, bi):
    # NumPy's complex division (Smith's method; 1/0 is inf or NaN per part)
    abr = M.fabs(br)
    abi = M.fabs(bi)
    if abr >= abi:
        if abr == R(0) and abi == R(0):
            return ar / abr, ai / abr
        rat = bi / br
        scl = R(1) / (br + M.mul_rn(bi, rat))
        return M.mul_rn(ar + M.mul_rn(ai, rat), scl), M.mul_rn(ai - M.mul_rn(ar, rat), scl)
    rat = br / bi
    scl = R(1) / (bi + M.mul_rn(br, rat))
    return M.mul_rn(M.mul_rn(ar, rat) + ai, scl), M.mul_rn(M.mul_rn(ai, rat) - ar, scl)
""")

_helper("""
def _csign_R(x, y):
    # NumPy 2's sign: z / |z|, with the infinite and zero cases spelled out
    r = M.hypot(x, y)
    if r != r:
        return R(NAN), R(NAN)
    if r == R(INF):
        if x == R(INF) or x == -R(INF):
            if y == R(INF) or y == -R(INF):
                return R(NAN), R(NAN)
            return (R(1) if x > R(0) else R(-1)), R(0)
        return R(0), (R(1) if y > R(0) else R(-1))
    if r == R(0):
        return R(0), R(0)
    return x / r, y / r
""")

_helper("""
def _cexp_R(x, y):
    # FreeBSD cexp; 709 < x < 1455 is scaled so exp(x) * sin(y) can stay finite
    if y == R(0):
        return M.exp(x), y
    if x == R(0):
        return M.cos(y), M.sin(y)
    if not (y - y == R(0)):
        if x != x or x - x == R(0):
            return y - y, y - y
        if x < R(0):
            return R(0), (M.copysign(R(0), y) if y == y else R(0))
        return x, y - y
    if x > R(EXPMAX_R) and x < R(EXPOVF_R):
        e = M.exp(x / R(3))
        return ((M.cos(y) * e) * e) * e, ((M.sin(y) * e) * e) * e
    e = M.exp(x)
    return e * M.cos(y), e * M.sin(y)
""")

_helper("""
def _clog_R(x, y):
    # log|z| scaled near overflow (where hypot(x, y) is inf) and through log1p near |z| = 1,
    # where log(hypot) loses everything but rounding (the C library's care)
    ax = M.fabs(x)
    ay = M.fabs(y)
    if ax < ay:
        t = ax
        ax = ay
        ay = t
    if ax > R(BIG_R):
        return M.log(M.hypot(x * R(0.5), y * R(0.5))) + R(LN2), M.atan2(y, x)
    if ax >= R(0.5) and ax <= R(2) and ay < R(1):
        return R(0.5) * M.log1p(M.mul_rn(ax - R(1), ax + R(1)) + M.mul_rn(ay, ay)), M.atan2(y, x)
    return M.log(M.hypot(x, y)), M.atan2(y, x)
""")

_helper("""
def _clog2_R(x, y):
    t = _clog_R(x, y)
    return t[0] * R(LOG2E), t[1] * R(LOG2E)
""")

_helper("""
def _clog10_R(x, y):
    t = _clog_R(x, y)
    return t[0] * R(LOG10E), t[1] * R(LOG10E)
""")

_helper("""
def _csqrt_R(a, b):
    # FreeBSD csqrt (Algorithm 312, CACM 1967), scaled near overflow
    if a == R(0) and b == R(0):
        return R(0), b
    if b == R(INF) or b == -R(INF):
        return R(INF), b
    if a != a:
        return a, (b - b) / (b - b)
    if a == R(INF) or a == -R(INF):
        if a < R(0):
            return M.fabs(b - b), M.copysign(a, b)
        return a, M.copysign(b - b, b)
    if b != b:
        return (a - a) / (a - a), b
    scale = M.fabs(a) >= R(7.446288774449766e+307) or M.fabs(b) >= R(7.446288774449766e+307)
    if scale:
        a = a * R(0.25)
        b = b * R(0.25)
    if a >= R(0):
        t = M.sqrt((a + M.hypot(a, b)) * R(0.5))
        rr = t
        ri = b / (R(2) * t)
    else:
        t = M.sqrt((-a + M.hypot(a, b)) * R(0.5))
        rr = M.fabs(b) / (R(2) * t)
        ri = M.copysign(t, b)
    if scale:
        return rr * R(2), ri * R(2)
    return rr, ri
""")

_helper("""
def _ccosh_R(x, y):
    # FreeBSD ccosh
    if x - x == R(0) and y - y == R(0):
        if y == R(0):
            return M.cosh(x), x * y
        ax = M.fabs(x)
        if ax < R(22):
            return M.cosh(x) * M.cos(y), M.sinh(x) * M.sin(y)
        if ax < R(709.7):
            h = M.exp(ax) * R(0.5)
            return h * M.cos(y), M.copysign(h, x) * M.sin(y)
        if ax < R(1455):
            e = M.exp(ax / R(3))
            return (((M.cos(y) * R(0.5)) * e) * e) * e, \\
                M.copysign(R(1), x) * ((((M.sin(y) * R(0.5)) * e) * e) * e)
        h = R(INF) * x
        return h * h * M.cos(y), h * M.sin(y)
    if x == R(0):
        return y - y, x * M.copysign(R(0), y)
    if y == R(0):
        return x * x, M.copysign(R(0), x) * y
    if x - x == R(0):
        return y - y, x * (y - y)
    if x == R(INF) or x == -R(INF):
        if not (y - y == R(0)):
            return R(INF), x * (y - y)
        return R(INF) * M.cos(y), x * M.sin(y)
    return (x * x) * (y - y), (x + x) * (y - y)
""")

_helper("""
def _csinh_R(x, y):
    # FreeBSD csinh
    if x - x == R(0) and y - y == R(0):
        if y == R(0):
            return M.sinh(x), y
        ax = M.fabs(x)
        if ax < R(22):
            return M.sinh(x) * M.cos(y), M.cosh(x) * M.sin(y)
        if ax < R(709.7):
            h = M.exp(ax) * R(0.5)
            return M.copysign(h, x) * M.cos(y), h * M.sin(y)
        if ax < R(1455):
            e = M.exp(ax / R(3))
            return M.copysign(R(1), x) * ((((M.cos(y) * R(0.5)) * e) * e) * e), \\
                (((M.sin(y) * R(0.5)) * e) * e) * e
        h = R(INF) * x
        return h * M.cos(y), h * h * M.sin(y)
    if x == R(0):
        return x, y - y
    if y == R(0):
        return x + x, y
    if x - x == R(0):
        return y - y, y - y
    if x == R(INF) or x == -R(INF):
        if not (y - y == R(0)):
            return R(INF), y - y
        return x * M.cos(y), R(INF) * M.sin(y)
    return (x * x) * (y - y), (x + x) * (y - y)
""")

_helper("""
def _ctanh_R(x, y):
    # FreeBSD ctanh (Kahan's algorithm; C23's tanh(+-0 +- i inf) = +-0 + i NaN)
    if not (x - x == R(0)):
        if x != x:
            return x + y, (y if y == R(0) else x + y)
        # C99 takes the zero's sign from sin(2y); the standard from y itself (1 + 0j for y > 0).
        return M.copysign(R(1), x), M.copysign(R(0), y)
    if not (y - y == R(0)):
        return (y - y if x != R(0) else x), y - y
    if M.fabs(x) >= R(22):
        exp_mx = M.exp(-M.fabs(x))
        return M.copysign(R(1), x), R(4) * M.sin(y) * M.cos(y) * exp_mx * exp_mx
    t = M.tan(y)
    beta = R(1) + t * t
    s = M.sinh(x)
    rho = M.sqrt(R(1) + s * s)
    denom = R(1) + beta * s * s
    return (beta * rho * s) / denom, t / denom
""")

_helper("""
def _ccos_R(x, y):
    return _ccosh_R(-y, x)
""")

_helper("""
def _csin_R(x, y):
    t = _csinh_R(y, x)
    return t[1], t[0]
""")

_helper("""
def _ctan_R(x, y):
    t = _ctanh_R(y, x)
    return t[1], t[0]
""")

_helper("""
def _casinh_R(x, y):
    # CPython's c_asinh (Kahan) for finite z; C99 Annex G for NaN and infinities
    if x != x:
        if y == R(0):
            return x, y
        if y == R(INF) or y == -R(INF):
            return R(INF), x
        return x, x
    if y != y:
        if x == R(INF) or x == -R(INF):
            return x, y
        return y, y
    ax = M.fabs(x)
    if ax > R(4.49423283715579e+307) or M.fabs(y) > R(4.49423283715579e+307):
        h = M.log(M.hypot(x / R(2), y / R(2))) + R(LN2) * R(2)
        if y >= R(0):
            rr = M.copysign(h, x)
        else:
            rr = -M.copysign(h, -x)
        return rr, M.atan2(y, ax)
    s1 = _csqrt_R(R(1) + y, -x)
    s2 = _csqrt_R(R(1) - y, x)
    return (M.asinh(M.mul_rn(s1[0], s2[1]) - M.mul_rn(s2[0], s1[1])),
            M.atan2(y, M.mul_rn(s1[0], s2[0]) - M.mul_rn(s1[1], s2[1])))
""")

_helper("""
def _casin_R(x, y):
    if y != y and (x == R(INF) or x == -R(INF)):
        return y, R(INF)
    t = _casinh_R(-y, x)
    return t[1], -t[0]
""")

_helper("""
def _cacos_R(x, y):
    # CPython's c_acos (Kahan) for finite z; C99 Annex G for NaN and infinities
    if x != x:
        if y == R(INF) or y == -R(INF):
            return x, -y
        return x, x
    if y != y:
        if x == R(0):
            return R(PI / 2), y
        if x == R(INF) or x == -R(INF):
            return y, -R(INF)
        return y, y
    if M.fabs(x) > R(4.49423283715579e+307) or M.fabs(y) > R(4.49423283715579e+307):
        h = M.log(M.hypot(x / R(2), y / R(2))) + R(LN2) * R(2)
        if x < R(0):
            ri = -M.copysign(h, y)
        else:
            ri = M.copysign(h, -y)
        return M.atan2(M.fabs(y), x), ri
    s1 = _csqrt_R(R(1) - x, -y)
    s2 = _csqrt_R(R(1) + x, y)
    return (R(2) * M.atan2(s1[0], s2[0]),
            M.asinh(M.mul_rn(s2[0], s1[1]) - M.mul_rn(s2[1], s1[0])))
""")

_helper("""
def _cacosh_R(x, y):
    # CPython's c_acosh (Kahan) for finite z; C99 Annex G for NaN and infinities
    if x != x:
        if y == R(INF) or y == -R(INF):
            return R(INF), x
        return x, x
    if y != y:
        if x == R(INF) or x == -R(INF):
            return R(INF), y
        if x == R(0):
            return y, R(PI / 2)
        return y, y
    if M.fabs(x) > R(4.49423283715579e+307) or M.fabs(y) > R(4.49423283715579e+307):
        return M.log(M.hypot(x / R(2), y / R(2))) + R(LN2) * R(2), M.atan2(y, x)
    s1 = _csqrt_R(x - R(1), y)
    s2 = _csqrt_R(x + R(1), y)
    return (M.asinh(M.mul_rn(s1[0], s2[0]) + M.mul_rn(s1[1], s2[1])),
            R(2) * M.atan2(s1[1], s2[0]))
""")

_helper("""
def _catanh_R(x, y):
    # CPython's c_atanh for finite z; C99 Annex G for NaN and infinities
    if x != x:
        if y == R(INF) or y == -R(INF):
            return M.copysign(R(0), x), M.copysign(R(PI / 2), y)
        return x, x
    if y != y:
        if x == R(0):
            return x, y
        if x == R(INF) or x == -R(INF):
            return M.copysign(R(0), x), y
        return y, y
    if x == R(INF) or x == -R(INF) or y == R(INF) or y == -R(INF):
        return M.copysign(R(0), x), M.copysign(R(PI / 2), y)
    sign = R(1)
    if x < R(0) or (x == R(0) and M.copysign(R(1), x) < R(0)):
        x = -x
        y = -y
        sign = R(-1)
    ay = M.fabs(y)
    if x > R(6.703903964971299e+153) or ay > R(6.703903964971299e+153):
        h = M.hypot(x / R(2), y / R(2))
        rr = x / R(4) / h / h
        ri = -M.copysign(R(PI / 2), -y)
    elif x == R(1) and ay < R(1.4916681462400413e-154):
        if ay == R(0):
            rr = R(INF)
            ri = y
        else:
            rr = -M.log(M.sqrt(ay) / M.sqrt(M.hypot(ay, R(2))))
            ri = M.copysign(M.atan2(R(2), -ay) / R(2), y)
    else:
        rr = M.log1p(R(4) * x / ((R(1) - x) * (R(1) - x) + ay * ay)) / R(4)
        ri = -M.atan2(R(-2) * y, (R(1) - x) * (R(1) + x) - ay * ay) / R(2)
    return sign * rr, sign * ri
""")

_helper("""
def _catan_R(x, y):
    t = _catanh_R(-y, x)
    return t[1], -t[0]
""")

_helper("""
def _clog1p_R(x, y):
    # NumPy's nc_log1p, with the hypot that does not overflow near the top of the range
    return M.log(_hypot_R(x + R(1), y)), M.atan2(y, x + R(1))
""")

_helper("""
def _cexpm1_R(a, b):
    # the CPU backend's: expm1(a) cos(b) - 2 sin^2(b/2) + i exp(a) sin(b), special cases first
    if a == -R(INF):
        if b - b == R(0):
            return R(-1), R(0) * M.sin(b)
        return R(-1), R(0)
    if a == R(INF) and not (b - b == R(0)):
        return R(INF), R(NAN)
    if b == R(0):
        return M.expm1(a) + R(0), b
    s = M.sin(b / R(2))
    return M.expm1(a) * M.cos(b) - R(2) * s * s + R(0), M.exp(a) * M.sin(b)
""")

_helper("""
def _cpow_R(ar, ai, br, bi):
    # NumPy's nc_pow: exact small integer powers by squaring, else the C library's
    # exp(b log a) with the Annex G product, in the dtype's precision
    if br == R(0) and bi == R(0):
        return R(1), R(0)
    if ar == R(0) and ai == R(0):
        if br > R(0):
            return R(0), R(0)
        return R(NAN), R(NAN)
    if bi == R(0) and br == M.floor(br) and br > R(-100) and br < R(100):
        n = int64(br)
        if n == 1:
            return ar, ai
        if n == 2:
            return _cmuln_R(ar, ai, ar, ai)
        if n == 3:
            sq = _cmuln_R(ar, ai, ar, ai)
            return _cmuln_R(ar, ai, sq[0], sq[1])
        m = n if n > 0 else -n
        rr = R(1)
        ri = R(0)
        pr = ar
        pi_ = ai
        mask = 1
        while True:
            if m & mask:
                t = _cmuln_R(rr, ri, pr, pi_)
                rr = t[0]
                ri = t[1]
            mask = mask << 1
            if m < mask:
                break
            t = _cmuln_R(pr, pi_, pr, pi_)
            pr = t[0]
            pi_ = t[1]
        if n < 0:
            return _cdiv_R(R(1), R(0), rr, ri)
        return rr, ri
    lg = _clog_R(ar, ai)
    e = _cmulg_R(br, bi, lg[0], lg[1])
    return _cexp_R(e[0], e[1])
""")

_CALL = re.compile(r"\b(_[a-z0-9_]+?)_(R|f32|f64)\(")
SUFFIX = {F32: "f32", F64: "f64"}
# libdevice names that do not follow the "<name> / <name>f" pattern
_LIBDEVICE = {"mul_rn": ("dmul_rn", "fmul_rn"), "add_rn": ("dadd_rn", "fadd_rn")}


def libdevice_name(fn: str, real: np.dtype) -> str:
    double, single = _LIBDEVICE.get(fn, (fn, fn + "f"))
    return double if real == F64 else single


def _instantiate(name: str, real: np.dtype) -> str:
    """Source of helper `name` for one real type."""
    src = _HELPERS[name]
    sfx = SUFFIX[real]
    src = re.sub(r"\bM\.(\w+)\(", lambda m: f"libdevice.{libdevice_name(m.group(1), real)}(", src)
    src = re.sub(r"\bR\(", f"{real.name}(", src)
    src = re.sub(r"\b([A-Z][A-Z0-9]*)_R\b", lambda m: f"{m.group(1)}_{sfx}", src)
    return _CALL.sub(lambda m: f"{m.group(1)}_{sfx if m.group(2) == 'R' else m.group(2)}(", src)


def helper_sources(names) -> str:
    """Definitions of helpers `names` ('_cexp_f64'...) and those they call, callees first."""
    order: list = []

    def visit(full):
        if full in order:
            return
        base, sfx = full.rsplit("_", 1)
        real = F32 if sfx == "f32" else F64
        src = _instantiate(base, real)
        for m in _CALL.finditer(src[src.index(":"):]):
            visit(f"{m.group(1)}_{m.group(2)}")
        order.append(full)

    for n in names:
        visit(n)
    return "\n".join(_instantiate(n.rsplit("_", 1)[0], F32 if n.endswith("f32") else F64)
                     for n in order)
