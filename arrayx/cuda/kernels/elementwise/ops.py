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

The helpers an expression calls (complex arithmetic and functions, division, remainder,
hypot...) are templates in math_helpers.py.

``host_namespace()`` gives the same helpers NumPy-backed math, so tests/cuda/test_elementwise_ops.py
checks every expression against the CPU backend with numba on the CPU, without a GPU.
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

import numpy as np

from .._common import PREAMBLE
from .math_helpers import SUFFIX, helper_sources, libdevice_name

BOOL = np.dtype(bool)
F32 = np.dtype("float32")
F64 = np.dtype("float64")
C64 = np.dtype("complex64")
C128 = np.dtype("complex128")

class Op(NamedTuple):
    expr: str          # over x0, x1, ... (and IDX, the flat output index, for creation ops)
    helpers: tuple     # helper function names (with their type suffix) the expression calls
    out: np.dtype      # result dtype
    source: str = ""   # inner functions of its own the expression calls (a fused program's)


# ---- the functions ------------------------------------------------------------------------

def _real_of(dt):
    return F32 if dt in (F32, C64) else F64


def _h(name, real):
    return f"{name}_{SUFFIX[real]}"


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
            "round": Op(f"complex(libdevice.{libdevice_name('rint', real)}(x0.real), "
                        f"libdevice.{libdevice_name('rint', real)}(x0.imag))", (), dt),
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
            return Op(f"libdevice.{libdevice_name(_REAL_MATH[name], dt)}(x0)", (), dt)
        table = {
            "negative": "-x0", "square": "x0 * x0", "reciprocal": f"{dt.name}(1) / x0",
            "isfinite": "x0 - x0 == 0", "isinf": "abs(x0) == INF", "isnan": "x0 != x0",
            "signbit": f"libdevice.{libdevice_name('copysign', dt)}({dt.name}(1), x0) < 0",
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
        lib = {"atan2": "atan2", "copysign": "copysign", "nextafter": "nextafter"}
        if name == "hypot":
            h = _h("_hypot", F64)
            return Op(f"{h}(float64(x0), float64(x1))" if dt == F32 else f"{h}(x0, x1)", (h,), dt)
        if name == "pow":
            # x ** 2 is the rounded product, as NumPy's square and the C library's pow give it:
            # libdevice's pow may be an ulp away even where x * x is exact.
            return Op(f"(x0 * x0 if x1 == 2 else libdevice.{libdevice_name('pow', dt)}(x0, x1))",
                      (), dt)
        if name in lib:
            return Op(f"libdevice.{libdevice_name(lib[name], dt)}(x0, x1)", (), dt)
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


def linspace_op(dt: np.dtype, precision: np.dtype) -> tuple:
    """(Op, operand dtypes) of NumPy's linspace in `precision` (float32 or float64; complex
    bounds: its complex counterpart), each step rounded as NumPy rounds it: x0 + (IDX / x2) * x1,
    with x1 = step and x2 = 1, or x1 = stop - start and x2 = the divisor when the step
    underflows; element x4 (the endpoint, or -1) is x3 = stop exactly."""
    if precision == F32:
        real, cplx, index, add, mul = F32, C64, "float32(IDX)", "fadd_rn", "fmul_rn"
    else:
        real, cplx, index, add, mul = F64, C128, "float64(IDX)", "dadd_rn", "dmul_rn"
    part = f"libdevice.{add}(libdevice.{mul}({index} / x2, x1{{p}}), x0{{p}})"
    last = np.dtype("int64")
    if dt.kind == "c":
        value = f"complex({part.format(p='.real')}, {part.format(p='.imag')})"
        return Op(f"(x3 if IDX == x4 else {value})", (), dt), (cplx, cplx, real, cplx, last)
    return Op(f"(x3 if IDX == x4 else {part.format(p='')})", (), dt), (real, real, real, real, last)


def eye_op(dt: np.dtype) -> Op:
    """1 on the k-th diagonal of a matrix with x0 columns (x1 = k)."""
    return Op("(1 if (IDX % x0) - (IDX // x0) == x1 else 0)", (), dt)


def triangle_op(dt: np.dtype, upper: bool) -> Op:
    """x0 where column - row >= x3 (triu) or <= x3 (tril), else 0; x1 columns, x2 rows."""
    zero = "False" if dt == BOOL else f"{dt.name}(0)"
    cmp = ">=" if upper else "<="
    return Op(f"(x0 if (IDX % x1) - ((IDX // x1) % x2) {cmp} x3 else {zero})", (), dt)
