"""What each elementwise function computes on one element, for the elementwise template.

``op(name, dtypes, out_dtype)`` gives an ``Op``: a Python expression over the operand values
``x0, x1, ...`` (each in its operand's dtype: numba booleans for bool, complex numbers for
complex) and the helper functions it calls. template.py wraps the expression in a kernel for
a layout; the helpers become inner functions of that kernel (numba inlines them; device
functions would need a GPU at compile time, which CI and precompile.py do not have).

The semantics are the CPU backend's (NumPy, with the standard's corrections in cpu/elementwise.py):
floor_divide floors and remainder takes the divisor's sign for integers and floats, integer
division by zero gives 0, integer overflow wraps, integer pow with a negative exponent returns
(never loops), shifts by the bit width or more give 0 (or -1), NaN propagates through maximum and
minimum, complex division is NumPy's (Smith's method), complex functions follow C99 Annex G for
NaN, infinities and signed zeros (ported from FreeBSD msun and CPython's cmath, the algorithms
NumPy's references use).

Helper sources are templates over one real type: ``R(...)`` casts to it, ``M.fn(...)`` calls
libdevice's ``fn`` for it (``expf`` for float32, ``exp`` for float64) and a helper ``_x_R`` calls
another helper of the same type (``_x_f64`` names one type explicitly). Products in complex
arithmetic go through ``M.mul_rn`` (``__dmul_rn``) so NVVM cannot contract them into fused
multiply-adds, which would change which results overflow to inf or NaN. Complex transcendental
functions of complex64 are computed in float64 and rounded once: no intermediate overflow where
the result is representable, as in the C library.

``host_namespace()`` gives the same helpers NumPy-backed math, so tests/cuda/test_elementwise_ops.py
checks every expression against the CPU backend with numba on the CPU, without a GPU.
"""

from __future__ import annotations

import re
import textwrap
from typing import NamedTuple

import numpy as np

BOOL = np.dtype(bool)
F32 = np.dtype("float32")
F64 = np.dtype("float64")
C64 = np.dtype("complex64")
C128 = np.dtype("complex128")

# Globals of every kernel's source (before the kernel function): constants for the helpers.
PREAMBLE = ("INF = float('inf')\nNAN = float('nan')\nPI = 3.141592653589793\n"
            "LN2 = 0.6931471805599453\nLOG2E = 1.4426950408889634\nLOG10E = 0.4342944819032518\n"
            # per real type: exp(x) finite below EXPMAX, exp(x) * tiny finite below EXPOVF,
            # hypot may overflow above BIG
            "EXPMAX_f32 = 88.0\nEXPOVF_f32 = 192.0\nBIG_f32 = 1e37\n"
            "EXPMAX_f64 = 709.0\nEXPOVF_f64 = 1454.0\nBIG_f64 = 1e300\n")


def vload_statement(targets, ptr: str, index: str, load: str | None = None) -> str:
    """Kernel source unpacking one 16-byte vector load (vector.py's vloadN, or `load`, a
    function of the same signature) of `ptr` at element `index` into the names `targets`."""
    n = len(targets)
    return f"{', '.join(targets)}{',' if n == 1 else ''} = {load or f'vload{n}'}({ptr}, {index})"


class Op(NamedTuple):
    expr: str          # over x0, x1, ... (and IDX, the flat output index, for creation ops)
    helpers: tuple     # helper function names (with their type suffix) the expression calls
    out: np.dtype      # result dtype


# ---- helper templates ----------------------------------------------------------------------

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
    # NumPy's nc_log1p
    return M.log(M.hypot(x + R(1), y)), M.atan2(y, x + R(1))
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
_SUFFIX = {F32: "f32", F64: "f64"}
# libdevice names that do not follow the "<name> / <name>f" pattern
_LIBDEVICE = {"mul_rn": ("dmul_rn", "fmul_rn"), "add_rn": ("dadd_rn", "fadd_rn")}


def _libdevice_name(fn: str, real: np.dtype) -> str:
    double, single = _LIBDEVICE.get(fn, (fn, fn + "f"))
    return double if real == F64 else single


def _instantiate(name: str, real: np.dtype) -> str:
    """Source of helper `name` for one real type."""
    src = _HELPERS[name]
    sfx = _SUFFIX[real]
    src = re.sub(r"\bM\.(\w+)\(", lambda m: f"libdevice.{_libdevice_name(m.group(1), real)}(", src)
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


# ---- the functions ------------------------------------------------------------------------

def _real_of(dt):
    return F32 if dt in (F32, C64) else F64


def _h(name, real):
    return f"{name}_{_SUFFIX[real]}"


def _complex_fn(helper, dt, args="x0.real, x0.imag"):
    """A complex function of float64 parts, packed back into a complex number."""
    h = _h(helper, F64)
    if dt == C64:
        args = ", ".join(f"float64({a.strip()})" for a in args.split(","))
    return Op(f"{_h('_cpack', F64)}({h}({args}))", (_h("_cpack", F64), h), dt)


# real float function name -> libdevice base name (float32 adds 'f')
_REAL_MATH = {"acos": "acos", "acosh": "acosh", "asin": "asin", "asinh": "asinh", "atan": "atan",
              "atanh": "atanh", "cos": "cos", "cosh": "cosh", "exp": "exp", "expm1": "expm1",
              "log": "log", "log1p": "log1p", "log2": "log2", "log10": "log10", "sin": "sin",
              "sinh": "sinh", "sqrt": "sqrt", "tan": "tan", "tanh": "tanh", "ceil": "ceil",
              "floor": "floor", "trunc": "trunc", "round": "rint", "abs": "fabs"}
_COMPLEX_MATH = {"acos": "_cacos", "acosh": "_cacosh", "asin": "_casin", "asinh": "_casinh",
                 "atan": "_catan", "atanh": "_catanh", "cos": "_ccos", "cosh": "_ccosh",
                 "exp": "_cexp", "log": "_clog", "log2": "_clog2", "log10": "_clog10",
                 "sin": "_csin", "sinh": "_csinh", "sqrt": "_csqrt", "tan": "_ctan",
                 "tanh": "_ctanh"}
# NumPy evaluates these by their plain formulas in the dtype's own precision (so complex64 results
# overflow where float32 does): computed in that precision here too.
_COMPLEX_NATIVE = {"expm1": "_cexpm1", "log1p": "_clog1p"}

# float32 functions computed in float64 and rounded once: libdevice's float32 versions lose the
# result near the top of the range (where x * x or 2 x overflows) that the C library keeps
# (hypot too, through _hypot).
_VIA_FLOAT64 = {"asinh", "acosh"}

# Unary functions that move data without computing: the dispatcher copies or fills instead.
IDENTITY_UNARY = {"positive": "any", "conj": "real", "real": "real", "ceil": "integer",
                  "floor": "integer", "trunc": "integer", "round": "integer"}


def is_identity_unary(name, dt):
    """Whether unary function `name` returns its input unchanged for dtype `dt`."""
    kind = IDENTITY_UNARY.get(name)
    return kind == "any" or (kind == "real" and dt.kind != "c") or \
        (kind == "integer" and dt.kind in "iu")


def constant_unary(name, dt):
    """The value a unary function takes for every element of `dt` regardless of input (imag of a
    real array, isnan of an integer...), or None."""
    if name == "imag" and dt.kind != "c":
        return 0
    if dt.kind in "biu":
        if name == "isfinite":
            return True
        if name in ("isinf", "isnan"):
            return False
    return None


def unary_op(name: str, dt: np.dtype, out: np.dtype) -> Op:
    """The Op of unary function `name` on `dt` (result `out`), for the names and dtypes that
    compute something (not is_identity_unary, not constant_unary)."""
    kind = dt.kind
    if kind == "c":
        real = _real_of(dt)
        if name in _COMPLEX_MATH:
            return _complex_fn(_COMPLEX_MATH[name], dt)
        if name in _COMPLEX_NATIVE:
            h = _h(_COMPLEX_NATIVE[name], real)
            return Op(f"{_h('_cpack', real)}({h}(x0.real, x0.imag))", (_h("_cpack", real), h), dt)
        simple = {
            "abs": Op(f"{_h('_hypot', F64)}(float64(x0.real), float64(x0.imag))",
                      (_h("_hypot", F64),), out),
            "conj": Op("x0.conjugate()", (), dt),
            "negative": Op("-x0", (), dt),
            "real": Op("x0.real", (), out),
            "imag": Op("x0.imag", (), out),
            "isfinite": Op("(x0.real - x0.real == 0) and (x0.imag - x0.imag == 0)", (), out),
            "isinf": Op("abs(x0.real) == INF or abs(x0.imag) == INF", (), out),
            "isnan": Op("x0.real != x0.real or x0.imag != x0.imag", (), out),
            "round": Op(f"complex(libdevice.{_libdevice_name('rint', real)}(x0.real), "
                        f"libdevice.{_libdevice_name('rint', real)}(x0.imag))", (), dt),
        }
        if name in simple:
            return simple[name]
        if name == "sign":
            return Op(f"{_h('_cpack', real)}({_h('_csign', real)}(x0.real, x0.imag))",
                      (_h("_cpack", real), _h("_csign", real)), dt)
        if name == "square":
            return Op(f"{_h('_cpack', real)}({_h('_cmul', real)}(x0.real, x0.imag, x0.real, x0.imag))",
                      (_h("_cpack", real), _h("_cmul", real)), dt)
        if name == "reciprocal":
            return Op(f"{_h('_cpack', real)}({_h('_cdiv', real)}({real.name}(1), {real.name}(0), "
                      f"x0.real, x0.imag))", (_h("_cpack", real), _h("_cdiv", real)), dt)
        raise KeyError(f"no complex {name}")
    if kind == "f":
        if name in _VIA_FLOAT64 and dt == F32:
            return Op(f"libdevice.{name}(float64(x0))", (), dt)
        if name in _REAL_MATH:
            return Op(f"libdevice.{_libdevice_name(_REAL_MATH[name], dt)}(x0)", (), dt)
        table = {
            "negative": "-x0", "square": "x0 * x0", "reciprocal": f"{dt.name}(1) / x0",
            "isfinite": "x0 - x0 == 0", "isinf": "abs(x0) == INF", "isnan": "x0 != x0",
            "signbit": f"libdevice.{_libdevice_name('copysign', dt)}({dt.name}(1), x0) < 0",
        }
        if name in table:
            return Op(table[name], (), out)
        if name == "sign":
            return Op(f"{_h('_fsign', dt)}(x0)", (_h("_fsign", dt),), dt)
        raise KeyError(f"no real floating {name}")
    if kind == "b":
        if name in ("logical_not", "bitwise_invert"):
            return Op("not x0", (), BOOL)
        raise KeyError(f"no bool {name}")
    # integers: numba computes in 64 bits; the store truncates, so results wrap like NumPy's
    table = {"negative": "-x0", "square": "x0 * x0", "bitwise_invert": "~x0",
             "abs": "x0" if kind == "u" else "(x0 if x0 >= 0 else -x0)",
             "sign": "(1 if x0 > 0 else 0)" if kind == "u" else
                     "(1 if x0 > 0 else (-1 if x0 < 0 else 0))"}
    if name in table:
        return Op(table[name], (), dt)
    raise KeyError(f"no integer {name}")


_COMPARE = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
            "greater_equal": ">="}


def compute_dtype(name: str, dt: np.dtype) -> np.dtype:
    """The dtype binary function `name` computes in for operands promoted to `dt`: `dt`, except
    true division of integers, which is float64 (NumPy's, hence the CPU backend's, result)."""
    return F64 if name == "divide" and dt.kind in "iu" else dt


def binary_op(name: str, dt: np.dtype) -> Op:
    """The Op of binary function `name` with both operands of dtype `dt`."""
    kind = dt.kind
    if name in _COMPARE:
        return Op(f"x0 {_COMPARE[name]} x1", (), BOOL)
    if name in ("logical_and", "logical_or", "logical_xor"):
        return Op({"logical_and": "x0 and x1", "logical_or": "x0 or x1",
                   "logical_xor": "x0 != x1"}[name], (), BOOL)
    if name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        return Op(f"x0 {dict(bitwise_and='&', bitwise_or='|', bitwise_xor='^')[name]} x1", (), dt)
    if name == "add":
        return Op("x0 + x1", (), dt)
    if name == "subtract":
        return Op("x0 - x1", (), dt)
    if kind == "c":
        real = _real_of(dt)
        parts = "x0.real, x0.imag, x1.real, x1.imag"
        if name == "pow" and dt == C64:  # in float64, rounded once (as the CPU backend does)
            return _complex_fn("_cpow", dt, parts)
        fn = {"multiply": "_cmul", "divide": "_cdiv", "pow": "_cpow"}[name]
        return Op(f"{_h('_cpack', real)}({_h(fn, real)}({parts}))",
                  (_h("_cpack", real), _h(fn, real)), dt)
    if kind == "f":
        lib = {"atan2": "atan2", "copysign": "copysign", "nextafter": "nextafter", "pow": "pow"}
        if name == "hypot":
            h = _h("_hypot", F64)
            return Op(f"{h}(float64(x0), float64(x1))" if dt == F32 else f"{h}(x0, x1)", (h,), dt)
        if name in lib:
            return Op(f"libdevice.{_libdevice_name(lib[name], dt)}(x0, x1)", (), dt)
        simple = {"multiply": "x0 * x1", "divide": "x0 / x1",
                  "maximum": "(x0 if (x0 >= x1 or x0 != x0) else x1)",
                  "minimum": "(x0 if (x0 <= x1 or x0 != x0) else x1)"}
        if name in simple:
            return Op(simple[name], (), dt)
        fn = {"floor_divide": "_fdiv", "remainder": "_frem", "logaddexp": "_logaddexp"}[name]
        return Op(f"{_h(fn, dt)}(x0, x1)", (_h(fn, dt),), dt)
    # integers (bool is only in the names handled above)
    t = dt.name
    bits = dt.itemsize * 8
    signed = kind == "i"
    zero = f"{t}(0)"
    table = {
        "multiply": "x0 * x1",
        "maximum": "(x0 if x0 >= x1 else x1)",
        "minimum": "(x0 if x0 <= x1 else x1)",
        # NumPy: x // 0 == 0 and x % 0 == 0; INT_MIN // -1 wraps to INT_MIN (0 - x), % -1 is 0
        "floor_divide": (f"({zero} if x1 == 0 else ((0 - x0) if x1 == -1 else x0 // x1))"
                         if signed else f"({zero} if x1 == 0 else x0 // x1)"),
        "remainder": (f"({zero} if (x1 == 0 or x1 == -1) else x0 % x1)" if signed else
                      f"({zero} if x1 == 0 else x0 % x1)"),
        # shifts by the width or more (or negative counts) give 0, or -1 for negative x >> b
        "bitwise_left_shift": (f"({zero} if (x1 < 0 or x1 >= {bits}) else x0 << x1)" if signed
                               else f"({zero} if x1 >= {bits} else x0 << x1)"),
        "bitwise_right_shift": (f"(({t}(-1) if x0 < 0 else {zero}) if (x1 < 0 or x1 >= {bits}) "
                                f"else x0 >> x1)" if signed else
                                f"({zero} if x1 >= {bits} else x0 >> x1)"),
    }
    if name in table:
        return Op(table[name], (), dt)
    if name == "pow":
        return Op("_ipow(x0, x1)", ("_ipow",), dt)
    raise KeyError(f"no integer {name}")


def ipow_source(dt: np.dtype) -> str:
    """Integer power by squaring in `dt` (wrapping). A negative exponent, which NumPy refuses,
    gives 1/x truncated (1 for x == 1, +-1 for x == -1, else 0), so the loop always ends."""
    minus_one = textwrap.dedent("""
            if x == T(-1):
                return T(1) if e % 2 == 0 else T(-1)""") if dt.kind == "i" else ""
    src = textwrap.dedent("""
    def _ipow(x, e):
        if e < 0:
            if x == T(1):
                return T(1)MINUS_ONE
            return T(0)
        result = T(1)
        base = x
        while e > 0:
            if e & 1:
                result = T(result * base)
            base = T(base * base)
            e = e >> 1
        return result
    """).replace("MINUS_ONE", textwrap.indent(minus_one, "        ")).replace("T(", f"{dt.name}(")
    return textwrap.indent(src.strip("\n"), "    ") + "\n"


def cast_op(src: np.dtype, dst: np.dtype) -> Op:
    """astype: complex -> bool is the OR of the parts (x != 0), bool -> complex is 1+0j."""
    if dst == BOOL:
        return Op("x0" if src == BOOL else "x0 != 0", (), BOOL)
    if src == BOOL:
        return Op("(1 if x0 else 0)", (), dst)
    if src.kind == "f" and dst.kind == "u":
        # negative floats wrap like C's conversion through a signed integer (NumPy on x86)
        return Op("(uint64(int64(x0)) if x0 < 0 else uint64(x0))", (), dst)
    return Op("x0", (), dst)


def inner_source(helpers) -> str:
    """The helper definitions a kernel body starts with, indented one level."""
    parts = []
    typed = [h for h in helpers if h != "_ipow"]
    if typed:
        parts.append(textwrap.indent(helper_sources(typed), "    "))
    return "\n".join(parts)


def host_namespace() -> dict:
    """Globals under which an Op's expression and helpers run on the CPU with numba.njit:
    `libdevice` maps each function to its NumPy equivalent (tests only)."""
    import types as pytypes

    import numba

    fns = {
        "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2,
        "log10": np.log10, "sin": np.sin, "cos": np.cos, "tan": np.tan, "sinh": np.sinh,
        "cosh": np.cosh, "tanh": np.tanh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
        "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt,
        "fabs": np.fabs, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint,
    }
    fns2 = {"hypot": np.hypot, "atan2": np.arctan2, "copysign": np.copysign, "fmod": np.fmod,
            "pow": np.power, "nextafter": np.nextafter}
    mod = pytypes.ModuleType("libdevice_on_host")
    for name, f in fns.items():
        jf = numba.njit(lambda x, f=f: f(x), error_model="numpy")
        setattr(mod, name, jf)
        setattr(mod, name + "f", jf)
    for name, f in fns2.items():
        jf = numba.njit(lambda x, y, f=f: f(x, y), error_model="numpy")
        setattr(mod, name, jf)
        setattr(mod, name + "f", jf)
    @numba.njit(error_model="numpy")
    def fma(a, b, c):
        # a * b + c rounded once: exact product by Dekker's splitting (Veltkamp), which holds
        # away from overflow; an overflowing product keeps IEEE's inf (+ an opposite inf -> c)
        p = a * b
        if c - c != 0:
            return c if (a - a == 0 and b - b == 0) else p + c
        if p - p != 0 or abs(a) >= 1e150 or abs(b) >= 1e150:
            return p + c
        split = a * 134217729.0
        ah = split - (split - a)
        al = a - ah
        split = b * 134217729.0
        bh = split - (split - b)
        bl = b - bh
        err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = p + c
        bb = s - p
        t = (p - (s - bb)) + (c - bb)
        return s + (t + err)

    @numba.njit(error_model="numpy")
    def fmaf(a, b, c):
        return numba.float32(numba.float64(a) * numba.float64(b) + numba.float64(c))

    mod.fma = fma
    mod.fmaf = fmaf
    mul = numba.njit(lambda x, y: x * y, error_model="numpy")
    add = numba.njit(lambda x, y: x + y, error_model="numpy")
    for name, f in (("dmul_rn", mul), ("fmul_rn", mul), ("dadd_rn", add), ("fadd_rn", add)):
        setattr(mod, name, f)
    ns = {"libdevice": mod}
    for name in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float32", "float64", "complex64", "complex128"):
        ns[name] = getattr(numba, name)
    exec(PREAMBLE, ns)
    return ns


# ---- creation: elementwise operations of the output index alone -----------------------------

def where_op(dt: np.dtype) -> Op:
    """where(x0, x1, x2) with x0 the bool condition."""
    return Op("(x1 if x0 else x2)", (), dt)


def clip_op(dt: np.dtype) -> Op:
    """minimum(maximum(x0, x1), x2): NaN propagates as in NumPy's clip."""
    lower = binary_op("maximum", dt).expr
    return Op(binary_op("minimum", dt).expr.replace("x1", "x2").replace("x0", f"({lower})"), (), dt)


def arange_op(dt: np.dtype) -> tuple:
    """(Op, operand dtypes) of start + IDX * step. Integers wrap modulo 2**64 (start and step are
    passed as uint64 bit patterns, so any start/step of the dtype works); floats are computed in
    float64 and rounded once, as the CPU backend does."""
    if dt.kind in "iu":
        u64 = np.dtype("uint64")
        return Op("x0 + uint64(IDX) * x1", (), dt), (u64, u64)
    return Op("libdevice.dadd_rn(libdevice.dmul_rn(float64(IDX), x1), x0)", (), dt), (F64, F64)


def linspace_op(dt: np.dtype) -> tuple:
    """(Op, operand dtypes) of NumPy's linspace in float64 (complex128): x0 + (IDX / x2) * x1,
    with x1 = step and x2 = 1, or x1 = stop - start and x2 = the divisor when the step underflows;
    element x4 (the endpoint, or -1) is x3 = stop exactly."""
    if dt.kind == "c":
        part = ("libdevice.dadd_rn(libdevice.dmul_rn(float64(IDX) / x2, x1.{p}), x0.{p})")
        expr = f"(x3 if IDX == x4 else complex({part.format(p='real')}, {part.format(p='imag')}))"
        return Op(expr, (), dt), (C128, C128, F64, C128, np.dtype("int64"))
    expr = "(x3 if IDX == x4 else libdevice.dadd_rn(libdevice.dmul_rn(float64(IDX) / x2, x1), x0))"
    return Op(expr, (), dt), (F64, F64, F64, F64, np.dtype("int64"))


def eye_op(dt: np.dtype) -> Op:
    """1 on the k-th diagonal of a matrix with x0 columns (x1 = k)."""
    return Op("(1 if (IDX % x0) - (IDX // x0) == x1 else 0)", (), dt)


def triangle_op(dt: np.dtype, upper: bool) -> Op:
    """x0 where column - row >= x3 (triu) or <= x3 (tril), else 0; x1 columns, x2 rows."""
    zero = "False" if dt == BOOL else f"{dt.name}(0)"
    cmp = ">=" if upper else "<="
    return Op(f"(x0 if (IDX % x1) - ((IDX // x1) % x2) {cmp} x3 else {zero})", (), dt)
