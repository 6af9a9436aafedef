"""Elementwise functions against NumPy on random data with special values (NaN, +-inf, +-0.0),
over every dtype the standard allows, on contiguous arrays, strided/offset views, 0-d and empty
arrays, with broadcasting and Python scalar operands. Checks dtype, shape, device and values."""

import math
import zlib

import numpy as np
import pytest

import arrayx as xp
from conftest import (ALL_DTYPES, BOOL_DTYPES, COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES,
                      NUMERIC_DTYPES, REAL_DTYPES, REAL_FLOAT_DTYPES, assert_allclose,
                      assert_array_equal, make_data, to_numpy)

def std_floor_divide(a, b):
    """NumPy's floor_divide, corrected where the standard differs: with an infinite operand the
    result is floor(a / b) (NumPy gives NaN for inf // finite and -1 for -1 // inf)."""
    with np.errstate(all="ignore"):
        r = np.floor_divide(a, b)
        if np.asarray(r).dtype.kind == "f":
            inf = np.isinf(a) | np.isinf(b)
            r = np.where(inf, np.floor(np.divide(a, b)), r)
    return r


def std_pow(a, b):
    """complex64 powers as the standard's reference computes them in arrayx: in complex128,
    rounded once (NumPy's float cpowf signs overflowing parts by a float32 angle's rounding)."""
    a, b = np.asarray(a), np.asarray(b)
    if np.complex64 in (a.dtype, b.dtype):
        return np.power(a.astype(np.complex128), b.astype(np.complex128)).astype(np.complex64)
    return np.power(a, b)


def std_expm1(z):
    """NumPy's expm1, corrected for complex input where the standard differs: expm1(a + 0j) is
    expm1(a) + 0j even when it overflows (NumPy: inf + nanj) or a is NaN, expm1(-inf + bj) is -1 + 0cis(b),
    expm1(+inf + nonfinite j) is inf + nanj."""
    with np.errstate(all="ignore"):
        r = np.asarray(np.expm1(z))
        if r.dtype.kind != "c":
            return r
        a, b = z.real, z.imag
        real, imag = r.real.copy(), r.imag.copy()
        zero_b = b == 0  # incl. NaN + 0j -> NaN + 0j (the standard)
        real = np.where(zero_b, np.expm1(a), real)
        imag = np.where(zero_b, b, imag)
        minus_inf = a == -np.inf
        real = np.where(minus_inf, -1.0, real)
        imag = np.where(minus_inf, np.where(np.isfinite(b), 0.0 * np.sin(b), 0.0), imag)
        plus = (a == np.inf) & ~np.isfinite(b)
        real = np.where(plus, np.inf, real)
        imag = np.where(plus, np.nan, imag)
        out = np.empty(np.shape(z), r.dtype)
        out.real, out.imag = real, imag
    return out


CATEGORY = {
    "numeric": NUMERIC_DTYPES,
    "floating-point": FLOAT_DTYPES,
    "real floating": REAL_FLOAT_DTYPES,
    "real numeric": REAL_DTYPES,
    "integer": INT_DTYPES,
    "integer or boolean": INT_DTYPES + BOOL_DTYPES,
    "bool": BOOL_DTYPES,
    "any": ALL_DTYPES,
}

# name -> (category (the standard's), NumPy reference, how values compare)
#   how: "exact" (bit-exact incl. sign of zero), "exact0" (exact, zero sign unspecified),
#        "close" (tolerance), "exact-real" (exact for real dtypes, tolerance for complex);
#        complex results of "exact0" use a tolerance too (sign(z) = z/|z| is rounded).
# NumPy is the reference, except where it differs from the standard's special cases (std_*).
UNARY = {
    "abs": ("numeric", np.abs, "exact-real"),
    "acos": ("floating-point", np.arccos, "close"),
    "acosh": ("floating-point", np.arccosh, "close"),
    "asin": ("floating-point", np.arcsin, "close"),
    "asinh": ("floating-point", np.arcsinh, "close"),
    "atan": ("floating-point", np.arctan, "close"),
    "atanh": ("floating-point", np.arctanh, "close"),
    "bitwise_invert": ("integer or boolean", np.invert, "exact"),
    "ceil": ("real numeric", np.ceil, "exact"),
    "conj": ("numeric", np.conj, "exact"),
    "cos": ("floating-point", np.cos, "close"),
    "cosh": ("floating-point", np.cosh, "close"),
    "exp": ("floating-point", np.exp, "close"),
    "expm1": ("floating-point", std_expm1, "close"),
    "floor": ("real numeric", np.floor, "exact"),
    "imag": ("numeric", np.imag, "exact"),
    "isfinite": ("numeric", np.isfinite, "exact"),
    "isinf": ("numeric", np.isinf, "exact"),
    "isnan": ("numeric", np.isnan, "exact"),
    "log": ("floating-point", np.log, "close"),
    "log1p": ("floating-point", np.log1p, "close"),
    "log2": ("floating-point", np.log2, "close"),
    "log10": ("floating-point", np.log10, "close"),
    "logical_not": ("bool", np.logical_not, "exact"),
    "negative": ("numeric", np.negative, "exact"),
    "positive": ("numeric", np.positive, "exact"),
    "real": ("numeric", np.real, "exact"),
    "reciprocal": ("floating-point", lambda a: np.divide(a.dtype.type(1), a), "exact-real"),
    "round": ("numeric", np.round, "exact"),
    "sign": ("numeric", np.sign, "exact0"),
    "signbit": ("real floating", np.signbit, "exact"),
    "sin": ("floating-point", np.sin, "close"),
    "sinh": ("floating-point", np.sinh, "close"),
    "sqrt": ("floating-point", np.sqrt, "exact-real"),
    "square": ("numeric", np.square, "exact-real"),
    "tan": ("floating-point", np.tan, "close"),
    "tanh": ("floating-point", np.tanh, "close"),
    "trunc": ("real numeric", np.trunc, "exact"),
}

BINARY = {
    "add": ("numeric", np.add, "exact"),
    "atan2": ("real floating", np.arctan2, "close"),
    "bitwise_and": ("integer or boolean", np.bitwise_and, "exact"),
    "bitwise_left_shift": ("integer", np.left_shift, "exact"),
    "bitwise_or": ("integer or boolean", np.bitwise_or, "exact"),
    "bitwise_right_shift": ("integer", np.right_shift, "exact"),
    "bitwise_xor": ("integer or boolean", np.bitwise_xor, "exact"),
    "copysign": ("real floating", np.copysign, "exact"),
    "divide": ("floating-point", np.divide, "exact-real"),
    "equal": ("any", np.equal, "exact"),
    "floor_divide": ("real numeric", std_floor_divide, "exact-real"),
    "greater": ("real numeric", np.greater, "exact"),
    "greater_equal": ("real numeric", np.greater_equal, "exact"),
    "hypot": ("real floating", np.hypot, "close"),
    "less": ("real numeric", np.less, "exact"),
    "less_equal": ("real numeric", np.less_equal, "exact"),
    "logaddexp": ("real floating", np.logaddexp, "close"),
    "logical_and": ("bool", np.logical_and, "exact"),
    "logical_or": ("bool", np.logical_or, "exact"),
    "logical_xor": ("bool", np.logical_xor, "exact"),
    "maximum": ("real numeric", np.maximum, "exact0"),
    "minimum": ("real numeric", np.minimum, "exact0"),
    "multiply": ("numeric", np.multiply, "exact-real"),
    "nextafter": ("real floating", np.nextafter, "exact"),
    "not_equal": ("any", np.not_equal, "exact"),
    "pow": ("numeric", std_pow, "close"),
    "remainder": ("real numeric", np.remainder, "exact-real"),
    "subtract": ("numeric", np.subtract, "exact"),
}
BOOL_RESULT = {"equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
               "logical_and", "logical_or", "logical_xor", "isfinite", "isinf", "isnan", "signbit"}


def seed(parts):
    """A fixed seed per test case (Python's str hash is randomised per process)."""
    return zlib.crc32(repr(parts).encode())


def result_dtype(name, dtype):
    """The standard's result dtype of `name` for operands of `dtype`."""
    if name in BOOL_RESULT:
        return xp.bool
    if name in ("abs", "real", "imag") and dtype.kind == "c":
        return xp.float32 if dtype == xp.complex64 else xp.float64
    return dtype


def cases(table):
    return [pytest.param(name, dtype, id=f"{name}-{dtype}") for name, (cat, _, _) in table.items()
            for dtype in CATEGORY[cat]]


def compare(name, how, got, expected, dtype):
    with np.errstate(all="ignore"):
        expected = np.asarray(expected)
    out = result_dtype(name, dtype)
    if how == "exact" or (how == "exact-real" and out.kind != "c" and dtype.kind != "c"):
        assert_array_equal(got, expected, dtype=out)
    elif how == "exact0" and dtype.kind != "c":
        assert_array_equal(got, expected, dtype=out, check_zero_sign=False)
    else:
        assert_allclose(got, expected, dtype=out)


def views(a):
    """(description, NumPy view) pairs of a 2-D array: offset, strided, reversed, transposed."""
    return [("full", a), ("offset", a[1:]), ("strided", a[:, ::2]), ("reversed", a[::-2]), ("mT", a.T),
            ("row", a[2]), ("0-d", a[1, 1]), ("empty", a[:0]), ("empty2", a[:, 3:1])]


def _xp_view(x, which):
    return {"full": x, "offset": x[1:], "strided": x[:, ::2], "reversed": x[::-2], "mT": x.mT,
            "row": x[2], "0-d": x[1, 1], "empty": x[:0], "empty2": x[:, 3:1]}[which]


# --- unary ---------------------------------------------------------------------------------
def unary_data(name, dtype, rng, shape=(5, 6)):
    if name == "round" and dtype.kind in "fc":
        a = make_data(dtype, shape, rng)
        # halves exercise round-half-to-even
        flat = a.reshape(-1)
        halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 1e15 + 0.5]).astype(dtype)
        flat[:min(8, flat.size)] = halves[:flat.size]
        return a
    return make_data(dtype, shape, rng)


@pytest.mark.parametrize("name, dtype", cases(UNARY))
def test_unary(name, dtype):
    _, ref, how = UNARY[name]
    rng = np.random.default_rng(seed((name, str(dtype))))
    a = unary_data(name, dtype, rng)
    x = xp.asarray(a)
    fn = getattr(xp, name)
    for which, av in views(a):
        with np.errstate(all="ignore"):
            expected = ref(av)
        try:
            compare(name, how, fn(_xp_view(x, which)), expected, dtype)
        except AssertionError as e:
            raise AssertionError(f"{name}({which} view of {dtype}) :\n{e}") from None


@pytest.mark.parametrize("name, dtype", cases(UNARY))
def test_unary_does_not_modify_input(name, dtype):
    rng = np.random.default_rng(7)
    a = unary_data(name, dtype, rng, shape=(7,))
    x = xp.asarray(a)
    getattr(xp, name)(x)
    assert_array_equal(x, a)


# --- binary --------------------------------------------------------------------------------
def binary_data(name, dtype, rng, shape1, shape2):
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if name in ("bitwise_left_shift", "bitwise_right_shift"):
            return make_data(dtype, shape1, rng), make_data(dtype, shape2, rng, low=0, high=info.bits)
        if name == "pow":
            lo = -3 if dtype.kind == "i" else 0
            return make_data(dtype, shape1, rng, low=lo, high=4), make_data(dtype, shape2, rng, low=0, high=5)
        if name in ("floor_divide", "remainder"):
            b = make_data(dtype, shape2, rng)
            b[b == 0] = 3
            if dtype.kind == "i":
                b[b == -1] = -2  # INT_MIN // -1 overflows (undefined)
            return make_data(dtype, shape1, rng), b
        if name in ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
                    "maximum", "minimum"):
            # small range so that ties occur
            return make_data(dtype, shape1, rng, low=0, high=4), make_data(dtype, shape2, rng, low=0, high=4)
    a, b = make_data(dtype, shape1, rng), make_data(dtype, shape2, rng)
    if dtype.kind in "fc" and name in ("equal", "not_equal", "greater", "greater_equal", "less",
                                       "less_equal", "maximum", "minimum", "copysign"):
        # make some elements tie, incl. +0.0 vs -0.0
        n = min(a.size, b.size, 4)
        if n and a.shape == b.shape:
            a.reshape(-1)[:n] = b.reshape(-1)[:n]
            if dtype.kind == "f":
                a.reshape(-1)[0], b.reshape(-1)[0] = 0.0, -0.0
    return a, b


@pytest.mark.parametrize("name, dtype", cases(BINARY))
def test_binary_same_shape_and_views(name, dtype):
    _, ref, how = BINARY[name]
    rng = np.random.default_rng(seed((name, str(dtype))))
    a, b = binary_data(name, dtype, rng, (5, 6), (5, 6))
    x1, x2 = xp.asarray(a), xp.asarray(b)
    fn = getattr(xp, name)
    for which, av in views(a):
        bv = dict(views(b))[which]
        with np.errstate(all="ignore"):
            expected = ref(av, bv)
        try:
            compare(name, how, fn(_xp_view(x1, which), _xp_view(x2, which)), expected, dtype)
        except AssertionError as e:
            raise AssertionError(f"{name}({which} views of {dtype}):\n{e}") from None
    # the inputs are unchanged
    assert_array_equal(x1, a)
    assert_array_equal(x2, b)


@pytest.mark.parametrize("name, dtype", cases(BINARY))
def test_binary_broadcasting(name, dtype):
    _, ref, how = BINARY[name]
    rng = np.random.default_rng(seed((name, str(dtype), "bc")))
    for s1, s2 in [((3, 1), (4,)), ((2, 1, 4), (3, 1)), ((), (3, 2)), ((4, 0), (1,)), ((1,), ())]:
        a, b = binary_data(name, dtype, rng, s1, s2)
        with np.errstate(all="ignore"):
            expected = ref(a, b)
        got = getattr(xp, name)(xp.asarray(a), xp.asarray(b))
        try:
            compare(name, how, got, expected, dtype)
        except AssertionError as e:
            raise AssertionError(f"{name}({s1} with {s2}, {dtype}):\n{e}") from None


# Long rows (at least 128 elements: the CUDA backend's rows layout) of views and broadcasts:
# name -> (shape of x1, shape of x2 or None for x1 itself, the view of x1, the view of x2)
_LONG_ROWS = {
    "column broadcast": ((5, 304), (5, 1), lambda a: a[:, 4:], lambda b: b),
    "row broadcast": ((5, 300), (300,), lambda a: a, lambda b: b),
    "offset slices": ((7, 203), None, lambda g: g[:-2, 1:-1], lambda g: g[2:, 1:-1]),
    "3-d view": ((3, 6, 152), (3, 1, 152), lambda a: a[:, ::4], lambda b: b),
    "3-d unaligned": ((3, 6, 153), (3, 1, 152), lambda a: a[:, ::4, 1:], lambda b: b),
    "transposed": ((150, 130), (130, 150), lambda a: a.mT, lambda b: b),
    "reversed": ((4, 260), (260,), lambda a: a[::-1, ::-1], lambda b: b[::-1]),
}


@pytest.mark.parametrize("layout", list(_LONG_ROWS))
@pytest.mark.parametrize("name, dtype", [
    ("add", xp.float32), ("subtract", xp.float64), ("multiply", xp.int32), ("divide", xp.float32),
    ("less", xp.float32), ("maximum", xp.float64), ("multiply", xp.complex64),
    ("logical_and", xp.bool), ("bitwise_xor", xp.uint8)])
def test_binary_over_long_rows_of_views_and_broadcasts(name, dtype, layout):
    _, ref, how = BINARY[name]
    shape1, shape2, view1, view2 = _LONG_ROWS[layout]
    rng = np.random.default_rng(seed((name, str(dtype), layout)))
    a, b = binary_data(name, dtype, rng, shape1, shape2 or shape1)
    if shape2 is None:
        b = a
    x1, x2 = xp.asarray(a), xp.asarray(b)
    with np.errstate(all="ignore"):
        expected = ref(view1(a), view2(b))
    try:
        compare(name, how, getattr(xp, name)(view1(x1), view2(x2)), expected, dtype)
    except AssertionError as e:
        raise AssertionError(f"{name}({layout}, {dtype}):\n{e}") from None


@pytest.mark.parametrize("dtype", [xp.float32, xp.int16, xp.complex128, xp.bool])
def test_long_rows_copies_assignments_and_where(dtype):
    """A view made contiguous, a broadcast written into a pitched view, where() with a
    broadcast condition: rows of at least 128 elements."""
    rng = np.random.default_rng(seed(("long rows", str(dtype))))
    a = make_data(dtype, (6, 261), rng)
    x = xp.asarray(a)
    assert_array_equal(xp.asarray(x[:, 3:-2], copy=True), a[:, 3:-2])
    assert_array_equal(xp.astype(x[::-2, 1:], xp.complex128), a[::-2, 1:].astype(np.complex128))
    column = make_data(dtype, (6, 1), rng)
    x[:, 2:-3] = xp.asarray(column)
    a[:, 2:-3] = column
    assert_array_equal(x, a)
    cond = rng.random((6, 1)) < 0.5
    other = make_data(dtype, (261,), rng)
    assert_array_equal(xp.where(xp.asarray(cond), x, xp.asarray(other)), np.where(cond, a, other))


def test_repeated_array_scalar_calls_match_numpy():
    """The same array-with-scalar operation called again (the CUDA backend's fast path from the
    second call on), both operand orders, float32 overflow of the scalar included."""
    rng = np.random.default_rng(5)
    a = make_data(xp.float32, (1000,), rng, specials=False)
    x = xp.asarray(a)
    for _ in range(3):
        assert_array_equal(2.5 * x, np.float32(2.5) * a)
        assert_array_equal(1 + x, 1 + a)
        assert_array_equal(x / 3.0, a / np.float32(3.0))
        assert_array_equal(x > 0.25, a > np.float32(0.25))
        with np.errstate(over="ignore"):
            assert_array_equal(x * 1e39, a * np.float32(np.inf))


def _scalar_for(name, dtype, rng):
    if dtype.kind == "b":
        return True
    if dtype.kind in "iu":
        if name in ("bitwise_left_shift", "bitwise_right_shift"):
            return 3
        if name == "pow":
            return 2
        return int(rng.integers(1, 50))
    if dtype.kind == "f":
        return float(rng.choice([2.5, -0.75, 3.0, float("inf"), -0.0]))
    return complex(rng.choice([2.5 - 1j, 1j, -0.5 + 0j]))


@pytest.mark.parametrize("name, dtype", cases(BINARY))
def test_binary_python_scalar_operand(name, dtype):
    _, ref, how = BINARY[name]
    rng = np.random.default_rng(seed((name, str(dtype), "sc")))
    a, _ = binary_data(name, dtype, rng, (4, 3), (4, 3))
    if name == "pow" and dtype.kind in "iu":
        a = make_data(dtype, (4, 3), rng, low=0, high=4)
    s = _scalar_for(name, dtype, rng)
    x = xp.asarray(a)
    fn = getattr(xp, name)
    sv = np.asarray(s, dtype=dtype)  # the scalar takes the array's dtype (the standard)
    with np.errstate(all="ignore"):
        compare(name, how, fn(x, s), ref(a, sv), dtype)
        if not (name == "pow" and dtype.kind in "iu") and name not in ("bitwise_left_shift",
                                                                        "bitwise_right_shift"):
            compare(name, how, fn(s, x), ref(sv, a), dtype)
        compare(name, how, fn(x[::-1, 1:], s), ref(a[::-1, 1:], sv), dtype)


def test_binary_two_scalars_rejected():
    with pytest.raises(TypeError):
        xp.add(1, 2)
    with pytest.raises(TypeError):
        xp.multiply(1.0, 2.0)


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES, ids=str)
def test_standard_special_cases(dtype):
    """A few special cases spelled out by the standard, independently of NumPy."""
    nan, inf = math.nan, math.inf

    def val(fn, *args):
        r = fn(*[xp.asarray(a, dtype=dtype) for a in args])
        assert r.dtype == dtype and r.shape == ()
        return float(r)

    assert math.copysign(1, val(xp.negative, 0.0)) == -1
    assert val(xp.pow, 1.0, nan) == 1.0
    assert val(xp.pow, nan, 0.0) == 1.0
    assert val(xp.pow, -0.0, -3.0) == -inf
    assert math.copysign(1, val(xp.multiply, -0.0, 5.0)) == -1
    assert val(xp.divide, 1.0, -0.0) == -inf
    assert math.isnan(val(xp.divide, 0.0, 0.0))
    assert val(xp.atan2, 0.0, -0.0) == pytest.approx(math.pi)
    assert math.copysign(1, val(xp.atan2, -0.0, 0.0)) == -1
    assert val(xp.hypot, inf, nan) == inf
    assert val(xp.exp, -inf) == 0.0
    assert val(xp.log, 0.0) == -inf
    assert math.isnan(val(xp.log, -1.0))
    assert math.copysign(1, val(xp.sqrt, -0.0)) == -1
    assert math.isnan(val(xp.maximum, nan, 1.0)) and math.isnan(val(xp.minimum, 1.0, nan))
    assert val(xp.round, 2.5) == 2.0 and val(xp.round, -0.5) == 0.0
    assert math.copysign(1, val(xp.round, -0.5)) == -1
    assert val(xp.floor_divide, 7.0, -2.0) == -4.0
    assert val(xp.remainder, -7.0, 3.0) == 2.0 and val(xp.remainder, 7.0, -3.0) == -2.0
    assert val(xp.logaddexp, -inf, -inf) == -inf
    assert val(xp.logaddexp, inf, 1.0) == inf


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES, ids=str)
def test_complex_tanh_and_tan_at_infinity(dtype):
    # The standard signs the zero by the imaginary part (tanh(+inf + iy) = 1 + 0j for y > 0),
    # where C99 uses sin(2y); y = 3 has sin(6) < 0, so the two rules disagree there.
    z = xp.asarray([complex(math.inf, 3.0), complex(math.inf, -3.0), complex(-math.inf, 3.0)], dtype=dtype)
    got = to_numpy(xp.tanh(z))
    np.testing.assert_array_equal(got.real, [1.0, 1.0, -1.0])
    np.testing.assert_array_equal(np.copysign(1.0, got.imag), [1.0, -1.0, 1.0])
    assert not got.imag.any()
    # tan(z) = -i tanh(iz): tan(3 + i inf) = 0 + 1j with the zero signed like 3.
    got = to_numpy(xp.tan(xp.asarray([complex(3.0, math.inf), complex(-3.0, math.inf)], dtype=dtype)))
    np.testing.assert_array_equal(got.imag, [1.0, 1.0])
    np.testing.assert_array_equal(np.copysign(1.0, got.real), [1.0, -1.0])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_reciprocal_is_one_over_x(dtype):
    """The standard: reciprocal's special cases are those of 1.0 / x (divide)."""
    if dtype.kind == "c":
        vals = [0j, complex(0.0, -0.0), complex(-0.0, 0.0), complex(np.inf, 0.0), complex(0.0, np.inf),
                complex(np.nan, 1.0), 1e-40 + 0j, 2 - 4j, complex(-np.inf, np.nan)]
    else:
        vals = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3.0, 0.25]
    x = xp.asarray(np.array(vals, dtype=dtype))
    assert_array_equal(xp.reciprocal(x), to_numpy(xp.divide(1.0, x)), check_zero_sign=dtype.kind != "c")


def test_integer_floor_divide_and_remainder_signs():
    a = np.array([7, -7, 7, -7, 0, 5], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3, 5], dtype=np.int32)
    x1, x2 = xp.asarray(a), xp.asarray(b)
    assert_array_equal(xp.floor_divide(x1, x2), np.array([3, -4, -4, 3, 0, 1], dtype=np.int32))
    assert_array_equal(xp.remainder(x1, x2), np.array([1, 1, -1, -1, 0, 0], dtype=np.int32))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_integer_wraparound(dtype):
    info = np.iinfo(dtype)
    x = xp.asarray([info.max, info.min], dtype=dtype)
    assert_array_equal(x + 1, np.array([info.min, info.min + 1], dtype=dtype))
    assert_array_equal(x - 1, np.array([info.max - 1, info.max], dtype=dtype))


# --- clip ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", REAL_DTYPES, ids=str)
def test_clip(dtype):
    rng = np.random.default_rng(21)
    if dtype.kind in "iu":
        a = make_data(dtype, (4, 5), rng, low=0, high=100)
        lo_s, hi_s = 20, 70
    else:
        a = make_data(dtype, (4, 5), rng)
        lo_s, hi_s = -1.5, 2.0
    x = xp.asarray(a)
    with np.errstate(all="ignore"):
        assert_array_equal(xp.clip(x, lo_s, hi_s), np.clip(a, lo_s, hi_s).astype(dtype))
        assert_array_equal(xp.clip(x, min=lo_s), np.maximum(a, dtype.type(lo_s)))
        assert_array_equal(xp.clip(x, max=hi_s), np.minimum(a, dtype.type(hi_s)))
        assert_array_equal(xp.clip(x), a)
        lo = np.sort(make_data(dtype, (5,), rng, specials=False,
                               low=0 if dtype.kind in "iu" else None, high=50 if dtype.kind in "iu" else None))
        assert_array_equal(xp.clip(x, xp.asarray(lo), None), np.maximum(a, lo))
        assert_array_equal(xp.clip(x[::-1, 1:], xp.asarray(lo[1:]), hi_s),
                           np.minimum(np.maximum(a[::-1, 1:], lo[1:]), dtype.type(hi_s)))


def test_clip_out_of_range_integer_bounds():
    x = xp.asarray([0, 100, 255], dtype=xp.uint8)
    assert_array_equal(xp.clip(x, -5, 1000), np.array([0, 100, 255], dtype=np.uint8))
    assert_array_equal(xp.clip(x, 10, 300), np.array([10, 100, 255], dtype=np.uint8))


def test_clip_nan_propagates():
    x = xp.asarray([np.nan, 1.0, -5.0, 5.0])
    assert_array_equal(xp.clip(x, -1.0, 1.0), np.array([np.nan, 1.0, -1.0, 1.0]))


def test_special_values_emit_no_numpy_warnings():
    """NaN/inf results are the IEEE answer, computed silently on every device (the CPU backend
    must not leak NumPy RuntimeWarnings that no other device emits)."""
    import warnings
    x = xp.asarray([0.0, -1.0, np.inf, np.nan])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        xp.log(x)
        xp.divide(x, 0.0)
        xp.sqrt(x)
        xp.pow(x, 0.5)
        xp.floor_divide(x, 0.0)
        xp.remainder(x, 0.0)
        xp.subtract(x, x)
        xp.acos(xp.asarray([2.0]))


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES)
def test_hypot_near_the_top_of_the_range(dtype):
    big = np.finfo(dtype).max
    a = np.array([1, big, -big, big / 2, big / 3, 1e30, np.nan], dtype)
    b = np.array([big, 1, big / 3, big / 2, np.inf, 1e30, big], dtype)
    with np.errstate(all="ignore"):
        assert_array_equal(xp.hypot(xp.asarray(a), xp.asarray(b)), np.hypot(a, b))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_square_by_pow_is_the_rounded_product_as_numpy(dtype):
    # NumPy's power with a scalar exponent 2 is its square, the rounded product; SciPy's
    # statistics (kruskal's sums of ranks squared) expect exact results where x * x is exact.
    rng = np.random.default_rng(77)
    a = np.concatenate([rng.standard_normal(1000) * 10.0 ** rng.integers(-20, 20, 1000),
                        np.arange(-300, 300) / 4, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e200]])
    a = a.astype(dtype)
    x = xp.asarray(a)
    with np.errstate(over="ignore"):
        expected = a * a
    for got in (x ** 2, xp.pow(x, 2.0), xp.pow(x, 2)):
        assert_array_equal(got, expected)
