"""The array object: attributes, operators (reflected and in-place), conversions to Python
scalars, __getitem__/__setitem__ (basic, integer-array and boolean indexing), views sharing
memory, to_device, DLPack, repr, __array__."""

import inspect
import operator
import typing
import warnings

import numpy as np
import pytest

import arrayx as xp
from conftest import (ALL_DTYPES, DEVICE, INT_DTYPES, NUMERIC_DTYPES, REAL_FLOAT_DTYPES,
                      assert_allclose, assert_array_equal, make_data, to_numpy)

CPU = xp.Device("cpu")


@pytest.fixture
def a2():
    return make_data(xp.float64, (4, 5), np.random.default_rng(40))


# --- attributes ----------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 4), (2, 3, 4)])
@pytest.mark.parametrize("dtype", [xp.bool, xp.int8, xp.uint64, xp.float32, xp.complex128], ids=str)
def test_attributes(shape, dtype):
    x = xp.zeros(shape, dtype=dtype)
    assert x.shape == shape and isinstance(x.shape, tuple)
    assert all(type(n) is int for n in x.shape)
    assert x.ndim == len(shape) and type(x.ndim) is int
    assert x.size == int(np.prod(shape)) and type(x.size) is int
    assert x.dtype == dtype
    assert x.device == DEVICE
    assert isinstance(x, xp.Array)


def test_T_and_mT(a2):
    x = xp.asarray(a2)
    assert_array_equal(x.T, a2.T)
    assert_array_equal(x.mT, a2.T)
    a3 = make_data(xp.int32, (2, 3, 4), np.random.default_rng(41))
    assert_array_equal(xp.asarray(a3).mT, np.swapaxes(a3, -1, -2))
    assert_array_equal(xp.asarray(a3)[:, ::-1, 1:].mT, np.swapaxes(a3[:, ::-1, 1:], -1, -2))
    with pytest.raises(ValueError):
        xp.asarray(a3).T
    with pytest.raises(ValueError):
        xp.asarray([1.0]).mT


def test_array_cannot_be_constructed_directly():
    with pytest.raises(TypeError):
        xp.Array([1, 2])


def test_array_namespace():
    x = xp.asarray([1.0])
    assert x.__array_namespace__() is xp
    assert x.__array_namespace__(api_version="2025.12") is xp
    assert x.__array_namespace__(api_version="2024.12") is xp
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="2099.01")
    assert xp.__array_api_version__ == "2025.12"


def test_len_iter_hash():
    x = xp.asarray([[1, 2], [3, 4], [5, 6]])
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3
    assert_array_equal(rows[1], np.array([3, 4]))
    with pytest.raises(TypeError):
        len(xp.asarray(1))
    with pytest.raises(TypeError):
        hash(x)


# The standard's array object (2025.12), and what arrayx adds to it.
_BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
           "lshift", "rshift"]
STANDARD_METHODS = ([f"__{form}{op}__" for op in _BINARY for form in ("", "r", "i")]
                    + ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
                       "__neg__", "__pos__", "__abs__", "__invert__",
                       "__bool__", "__int__", "__float__", "__complex__", "__index__",
                       "__getitem__", "__setitem__", "__dlpack__", "__dlpack_device__",
                       "__array_namespace__", "to_device"])
STANDARD_ATTRIBUTES = ["dtype", "device", "ndim", "shape", "size", "T", "mT"]
EXTRA_METHODS = ["__array__", "__array_ufunc__", "__repr__", "__str__", "__format__", "__len__",
                 "__iter__", "__hash__", "__copy__", "__deepcopy__", "__reduce__"]
CLASS_MACHINERY = {"__module__", "__doc__", "__slots__", "__weakref__", "__annotations__", "__new__"}


def test_array_object_members_are_exactly_the_standard_ones_and_the_extras():
    own = {n for n in vars(xp.Array) if not n.startswith("_") or n.endswith("__")}
    assert own - CLASS_MACHINERY == set(STANDARD_METHODS + STANDARD_ATTRIBUTES + EXTRA_METHODS)


@pytest.mark.parametrize("name", STANDARD_METHODS + STANDARD_ATTRIBUTES + EXTRA_METHODS)
def test_array_object_members_have_docstrings_and_annotations(name):
    member = vars(xp.Array)[name]
    fn = member.fget if isinstance(member, property) else member
    assert fn.__doc__ and fn.__doc__.strip()
    hints = typing.get_type_hints(fn)  # every annotation resolves at run time too
    params = [p for p in inspect.signature(fn).parameters if p != "self"]
    assert "return" in hints and set(params) <= set(hints), (params, hints)


# --- operators -----------------------------------------------------------------------------
BINARY_OPS = [
    ("__add__", operator.add, np.add), ("__sub__", operator.sub, np.subtract),
    ("__mul__", operator.mul, np.multiply), ("__truediv__", operator.truediv, np.divide),
    ("__floordiv__", operator.floordiv, np.floor_divide), ("__mod__", operator.mod, np.remainder),
    ("__pow__", operator.pow, np.power),
    ("__lt__", operator.lt, np.less), ("__le__", operator.le, np.less_equal),
    ("__gt__", operator.gt, np.greater), ("__ge__", operator.ge, np.greater_equal),
    ("__eq__", operator.eq, np.equal), ("__ne__", operator.ne, np.not_equal),
]
INT_OPS = [("__and__", operator.and_, np.bitwise_and), ("__or__", operator.or_, np.bitwise_or),
           ("__xor__", operator.xor, np.bitwise_xor), ("__lshift__", operator.lshift, np.left_shift),
           ("__rshift__", operator.rshift, np.right_shift)]


def _operands(dtype, rng, shape=(3, 4)):
    if dtype.kind in "iu":
        a = make_data(dtype, shape, rng, low=1, high=5)
        b = make_data(dtype, shape, rng, low=1, high=5)
    else:
        a = make_data(dtype, shape, rng, specials=False)
        b = make_data(dtype, shape, rng, specials=False)
    return a, b


@pytest.mark.parametrize("dtype", [xp.int32, xp.uint8, xp.float32, xp.float64], ids=str)
@pytest.mark.parametrize("name, op, ref", BINARY_OPS, ids=[o[0] for o in BINARY_OPS])
def test_binary_operators(name, op, ref, dtype):
    if name == "__truediv__" and dtype.kind in "iu":
        pytest.skip("integer true division is implementation-defined")
    rng = np.random.default_rng(42)
    a, b = _operands(dtype, rng)
    x, y = xp.asarray(a), xp.asarray(b)
    with np.errstate(all="ignore"):
        expected = ref(a, b)
        close = name in ("__pow__",)
        check = assert_allclose if close else assert_array_equal
        check(op(x, y), expected)
        # broadcasting, views
        check(op(x[1:2], y[:, ::-1]), ref(a[1:2], b[:, ::-1]))
        # Python scalars on either side (reflected operators)
        s = 3 if dtype.kind in "iu" else 1.5
        sv = np.asarray(s, dtype=dtype)
        check(op(x, s), ref(a, sv))
        check(op(s, x), ref(sv, a))


@pytest.mark.parametrize("dtype", INT_DTYPES + [xp.bool], ids=str)
@pytest.mark.parametrize("name, op, ref", INT_OPS, ids=[o[0] for o in INT_OPS])
def test_bitwise_operators(name, op, ref, dtype):
    if dtype == xp.bool and "shift" in name:
        pytest.skip("shifts take integers only")
    rng = np.random.default_rng(43)
    a = make_data(dtype, (3, 4), rng)
    b = make_data(dtype, (3, 4), rng, low=0, high=np.iinfo(dtype).bits) if "shift" in name else make_data(dtype, (3, 4), rng)
    x, y = xp.asarray(a), xp.asarray(b)
    assert_array_equal(op(x, y), ref(a, b))
    s = True if dtype == xp.bool else 2
    sv = np.asarray(s, dtype=dtype)
    assert_array_equal(op(x, s), ref(a, sv))
    if "shift" not in name:
        assert_array_equal(op(s, x), ref(sv, a))
    else:
        assert_array_equal(op(s, y), ref(sv, b))


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
def test_unary_operators(dtype):
    rng = np.random.default_rng(44)
    a = make_data(dtype, (3, 4), rng)
    x = xp.asarray(a)
    with np.errstate(all="ignore"):
        assert_array_equal(-x, -a)
        assert_array_equal(+x, +a)
        if dtype.kind == "c":
            assert_allclose(abs(x), np.abs(a))
        else:
            assert_array_equal(abs(x), np.abs(a))
    if dtype.kind in "iu":
        assert_array_equal(~x, ~a)


def test_invert_bool():
    b = np.array([True, False, True])
    assert_array_equal(~xp.asarray(b), ~b)


def test_matmul_operator():
    if "matmul" not in CPU.backend.implemented:
        pytest.skip("the CPU backend's matmul primitive is not written yet")
    rng = np.random.default_rng(45)
    a, b = make_data(xp.float64, (3, 4), rng, specials=False), make_data(xp.float64, (4, 2), rng, specials=False)
    x, y = xp.asarray(a), xp.asarray(b)
    assert_allclose(x @ y, a @ b)
    assert_allclose(x[:, ::-1] @ y[::-1], a[:, ::-1] @ b[::-1])
    m = xp.asarray(make_data(xp.float64, (3, 3), rng, specials=False))
    m0 = to_numpy(m)
    m @= xp.eye(3)
    assert_allclose(m, m0)


def test_comparison_with_nan_and_bool_results():
    x = xp.asarray([1.0, np.nan, -np.inf, 0.0])
    y = xp.asarray([1.0, np.nan, -np.inf, -0.0])
    assert_array_equal(x == y, np.array([True, False, True, True]))
    assert_array_equal(x != y, np.array([False, True, False, False]))
    assert_array_equal(x < 0.5, np.array([False, False, True, True]))


def test_operators_with_unsupported_types():
    x = xp.asarray([1.0, 2.0])
    for other in ("a", None, [1.0, 2.0], object()):
        with pytest.raises(TypeError):
            x + other
        with pytest.raises(TypeError):
            other * x


# (forward, reflected or None, in-place or None) for every binary operator of the standard
BINARY_FORMS = [(f"__{op}__", f"__r{op}__", f"__i{op}__") for op in _BINARY] + \
    [(f"__{op}__", None, None) for op in ("lt", "le", "gt", "ge", "eq", "ne")]


@pytest.mark.parametrize("forms", BINARY_FORMS, ids=lambda f: f[0])
def test_every_operator_rejects_non_numbers(forms):
    """A forward or reflected operator returns NotImplemented for an operand that is neither an
    array nor a scalar (Python then tries the other operand, and raises TypeError); an in-place
    one raises TypeError itself and writes nothing."""
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    forward, reflected, in_place = forms
    for other in ("a", None, [1.0, 2.0], (1.0,), object(), b"1", np.array([1.0, 2.0])):
        x = xp.asarray(a, copy=True)
        for name in filter(None, (forward, reflected)):
            assert getattr(x, name)(other) is NotImplemented
        if in_place is not None:
            with pytest.raises(TypeError):
                getattr(x, in_place)(other)
            assert_array_equal(x, a)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.floordiv, operator.mod, operator.pow, operator.matmul,
                                operator.and_, operator.or_, operator.xor, operator.lshift,
                                operator.rshift, operator.lt, operator.ge])
def test_operators_with_a_non_number_on_either_side(op):
    x = xp.asarray([1, 2])
    # Once both sides decline, `seq * x` is Python's sequence repetition (operator.index(x)
    # refuses two elements with ValueError) and `"a" % x` is string formatting.
    others = (None, object()) + (() if op in (operator.mul, operator.mod) else ([1, 2], "a"))
    for other in others:
        with pytest.raises(TypeError):
            op(other, x)
        with pytest.raises(TypeError):
            op(x, other)


def test_equality_with_a_non_number_is_pythons_identity_fallback():
    # Neither side knows the other: Python compares identities, as for any two objects.
    x = xp.asarray([1, 2])
    for other in (None, object(), "a"):
        assert (x == other) is False and (other == x) is False
        assert (x != other) is True and (other != x) is True


class _Operator:
    """An object implementing the reflected operators, as SciPy's LinearOperator does."""

    def __rmatmul__(self, other):
        return ("rmatmul", other)

    def __radd__(self, other):
        return ("radd", other)

    def __rlt__(self, other):  # not a Python hook: `x < obj` tries obj.__gt__
        raise AssertionError("never called")

    def __gt__(self, other):
        return ("gt", other)

    def __eq__(self, other):
        return ("eq", other)

    __hash__ = object.__hash__


def test_an_operand_with_reflected_methods_gets_its_turn():
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
    op = _Operator()
    for result, name in ((x @ op, "rmatmul"), (x + op, "radd"), (x < op, "gt"),
                         (x == op, "eq")):
        assert result[0] == name and result[1] is x
    with pytest.raises(TypeError):
        x - op
    with pytest.raises(TypeError):
        x += op


@pytest.mark.parametrize("op", _BINARY)
def test_reflected_operators_swap_the_operands(op):
    rng = np.random.default_rng(53)
    dtype = xp.int32 if op in ("and", "or", "xor", "lshift", "rshift", "mod", "floordiv") else xp.float64
    a = make_data(dtype, (3, 3), rng, low=1, high=5) if dtype.kind == "i" else \
        make_data(dtype, (3, 3), rng, specials=False)
    b = make_data(dtype, (3, 3), rng, low=1, high=5) if dtype.kind == "i" else \
        make_data(dtype, (3, 3), rng, specials=False)
    x, y = xp.asarray(a), xp.asarray(b)
    ref = getattr(operator, op if op not in ("and", "or") else op + "_")
    with np.errstate(all="ignore"):
        expected = ref(b, a)
    (assert_allclose if op in ("pow", "matmul", "truediv") else assert_array_equal)(
        getattr(x, f"__r{op}__")(y), expected)


def test_numpy_scalars_are_weak_on_either_side():
    # NumPy's scalar operators call the ufunc, which Array.__array_ufunc__ runs as arrayx's
    a = np.array([1.0, 2.5], dtype=np.float32)
    x = xp.asarray(a)
    for r, expected in ((np.float64(1.5) * x, a * np.float32(1.5)),
                        (x - np.float64(0.5), a - np.float32(0.5)),
                        (np.float64(2.0) ** x, np.float32(2.0) ** a),
                        (np.float64(2.0) < x, np.float32(2.0) < a)):
        assert_array_equal(r, expected)


def test_pow_takes_no_modulus():
    with pytest.raises(TypeError):
        pow(xp.asarray([2, 3]), 2, 5)


# --- in-place operators --------------------------------------------------------------------
IN_PLACE = [("__iadd__", np.add), ("__isub__", np.subtract), ("__imul__", np.multiply),
            ("__itruediv__", np.divide), ("__ifloordiv__", np.floor_divide), ("__imod__", np.remainder),
            ("__ipow__", np.power)]


@pytest.mark.parametrize("name, ref", IN_PLACE, ids=[n for n, _ in IN_PLACE])
@pytest.mark.parametrize("dtype", [xp.float32, xp.float64, xp.int16], ids=str)
def test_in_place_operators(name, ref, dtype):
    if name == "__itruediv__" and dtype.kind in "iu":
        pytest.skip("integer true division is implementation-defined")
    rng = np.random.default_rng(46)
    a, b = _operands(dtype, rng)
    x = xp.asarray(a.copy())  # asarray(ndarray) may share memory with a
    y = xp.asarray(b)
    x_id = id(x)
    r = getattr(x, name)(y)
    assert r is x and id(x) == x_id
    with np.errstate(all="ignore"):
        expected = ref(a, b).astype(dtype)
    (assert_allclose if name == "__ipow__" else assert_array_equal)(x, expected)
    # with a broadcast operand and a Python scalar
    x = xp.asarray(a.copy())  # asarray(ndarray) may share memory with a
    getattr(x, name)(y[0])
    with np.errstate(all="ignore"):
        (assert_allclose if name == "__ipow__" else assert_array_equal)(x, ref(a, b[0]).astype(dtype))
    x = xp.asarray(a.copy())  # asarray(ndarray) may share memory with a
    s = 2 if dtype.kind in "iu" else 2.0
    getattr(x, name)(s)
    with np.errstate(all="ignore"):
        (assert_allclose if name == "__ipow__" else assert_array_equal)(x, ref(a, np.asarray(s, dtype)))


@pytest.mark.parametrize("name, ref", [("__iand__", np.bitwise_and), ("__ior__", np.bitwise_or),
                                       ("__ixor__", np.bitwise_xor), ("__ilshift__", np.left_shift),
                                       ("__irshift__", np.right_shift)])
def test_in_place_bitwise(name, ref):
    rng = np.random.default_rng(47)
    a = make_data(xp.int32, (3, 4), rng)
    b = make_data(xp.int32, (3, 4), rng, low=0, high=31)
    x = xp.asarray(a.copy())  # asarray(ndarray) may share memory with a
    assert getattr(x, name)(xp.asarray(b)) is x
    assert_array_equal(x, ref(a, b))


def test_in_place_operator_statement_and_views():
    a = np.arange(12.0).reshape(3, 4)
    base = xp.asarray(a, copy=True)
    view = base[1:, ::2]
    view += 100.0
    expected = a.copy()
    expected[1:, ::2] += 100.0
    assert_array_equal(base, expected)  # written through the view
    t = base.mT
    t *= 2.0
    assert_array_equal(base, expected * 2)


def test_in_place_dtype_and_shape_rules():
    x = xp.asarray([1, 2, 3], dtype=xp.int8)
    with pytest.raises(TypeError):
        x += xp.asarray([1, 2, 3], dtype=xp.int16)  # would promote to int16
    with pytest.raises(TypeError):
        x += 1.5
    f = xp.asarray([[1.0, 2.0]], dtype=xp.float32)
    with pytest.raises(ValueError):
        f += xp.ones((2, 2), dtype=xp.float32)  # result shape differs from x's
    f += xp.asarray([1.0, 1.0], dtype=xp.float32)  # float32 += float32 broadcast: fine
    assert_array_equal(f, np.array([[2.0, 3.0]], dtype=np.float32))
    d = xp.asarray([1.0, 2.0], dtype=xp.float64)
    d += xp.asarray([1.0, 1.0], dtype=xp.float32)  # float64 += float32 keeps float64
    assert_array_equal(d, np.array([2.0, 3.0]))
    u = xp.asarray([1, 2], dtype=xp.uint8)
    u -= 3  # wraps, stays uint8
    assert_array_equal(u, np.array([254, 255], dtype=np.uint8))


def test_in_place_bitwise_with_scalars_and_bool():
    a = np.array([[1, -2, 7], [0, 100, -128]], dtype=np.int8)
    for name, ref, s in [("__iand__", np.bitwise_and, 6), ("__ior__", np.bitwise_or, 3),
                         ("__ixor__", np.bitwise_xor, -1), ("__ilshift__", np.left_shift, 2),
                         ("__irshift__", np.right_shift, 1)]:
        x = xp.asarray(a, copy=True)
        assert getattr(x, name)(s) is x
        assert_array_equal(x, ref(a, np.int8(s)))
    m = np.array([True, False, True])
    for name, ref in [("__iand__", np.bitwise_and), ("__ior__", np.bitwise_or),
                      ("__ixor__", np.bitwise_xor)]:
        for s in (True, False):
            b = xp.asarray(m, copy=True)
            assert getattr(b, name)(s) is b
            assert_array_equal(b, ref(m, s))
    b = xp.asarray(m, copy=True)
    with pytest.raises(TypeError):
        b &= xp.asarray([1, 0, 1])  # bool with int64 promotes to int64: not in place
    with pytest.raises(TypeError):
        b <<= 1  # shifts take integers only
    i = xp.asarray(a, copy=True)
    with pytest.raises(TypeError):
        i |= 1.0
    assert_array_equal(i, a)


def test_in_place_matmul_errors_leave_the_array_unchanged():
    if "matmul" not in CPU.backend.implemented:
        pytest.skip("the CPU backend's matmul primitive is not written yet")
    a = np.arange(4.0).reshape(2, 2)
    x = xp.asarray(a, copy=True)
    for bad, error in ((xp.ones((2, 3)), ValueError),                    # the shape would change
                       (xp.ones((2, 2), dtype=xp.complex128), ValueError),  # the dtype would change
                       (2.0, TypeError), (None, TypeError)):
        with pytest.raises(error):
            x @= bad
        assert_array_equal(x, a)
    x @= xp.asarray([[0.0, 1.0], [1.0, 0.0]])
    assert_array_equal(x, a[:, ::-1])


# --- conversion to Python scalars ----------------------------------------------------------
def test_bool_int_float_complex_index():
    assert bool(xp.asarray(True)) is True and bool(xp.asarray([0.0])) is False
    assert bool(xp.asarray(np.nan)) is True and bool(xp.asarray(-0.0)) is False
    assert bool(xp.asarray(0j)) is False and bool(xp.asarray(1e-300j)) is True
    assert int(xp.asarray(7, dtype=xp.int8)) == 7 and type(int(xp.asarray(7))) is int
    assert int(xp.asarray(2 ** 64 - 1, dtype=xp.uint64)) == 2 ** 64 - 1
    assert int(xp.asarray(-2.7)) == -2 and int(xp.asarray(True)) == 1
    assert float(xp.asarray(2.5, dtype=xp.float32)) == 2.5 and type(float(xp.asarray(1))) is float
    assert float(xp.asarray(True)) == 1.0
    f = float(xp.asarray(-0.0))
    assert f == 0.0 and np.signbit(f)
    assert complex(xp.asarray(1 - 2j, dtype=xp.complex64)) == 1 - 2j
    assert complex(xp.asarray(3.0)) == 3 + 0j and type(complex(xp.asarray(1))) is complex
    assert operator.index(xp.asarray(5, dtype=xp.uint16)) == 5
    assert [10, 20, 30][xp.asarray(1)] == 20
    assert int(xp.asarray([[4]])) == 4  # one element of any shape
    # 0-d views of larger arrays
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    assert float(x[1, 2]) == 5.0 and int(x[0, 1]) == 1 and bool(x[0, 0]) is False


def test_scalar_conversion_errors():
    with pytest.raises(ValueError):
        bool(xp.asarray([1, 2]))
    with pytest.raises(ValueError):
        bool(xp.zeros((0,)))
    with pytest.raises(ValueError):
        int(xp.asarray(np.nan))
    with pytest.raises(OverflowError):
        int(xp.asarray(np.inf))
    with pytest.raises(OverflowError):
        int(xp.asarray(-np.inf))
    with pytest.raises(TypeError):
        float(xp.asarray(1j))
    with pytest.raises(TypeError):
        int(xp.asarray(1 + 0j))
    with pytest.raises(TypeError):
        operator.index(xp.asarray(1.0))
    with pytest.raises(TypeError):
        operator.index(xp.asarray(True))
    with pytest.raises((TypeError, ValueError)):
        operator.index(xp.asarray([1, 2]))


# --- __getitem__ ---------------------------------------------------------------------------
BASIC_KEYS = [0, -1, 3, slice(None), slice(1, 3), slice(None, None, -1), slice(-2, None), slice(5, 1, -2),
              slice(10, 20), (1, 2), (-1, slice(None, None, 2)), (Ellipsis, 0), (0, Ellipsis),
              (None, 1), (slice(None), None, slice(1, 4)), Ellipsis, (), (None,), (Ellipsis, None),
              (slice(1, 3), slice(None, None, -3)), (2, -5), (slice(0, 0),)]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_getitem_basic(key, a2):
    x = xp.asarray(a2)
    assert_array_equal(x[key], a2[key])
    # on a strided, offset view too (shape (3, 3))
    v, av = x[1:, ::2], a2[1:, ::2]
    if isinstance(key, tuple) and len(key) == 2 and key[1] == -5:
        return
    k = key if not (isinstance(key, int) and key == 3) else 2
    assert_array_equal(v[k], av[k])


def test_getitem_0d():
    x = xp.asarray(3.5)
    assert_array_equal(x[()], np.asarray(3.5))
    assert_array_equal(x[...], np.asarray(3.5))
    assert_array_equal(x[None], np.asarray([3.5]))


@pytest.mark.parametrize("key", [5, -6, (0, 5), (4, 0), (-5, 0)], ids=repr)
def test_getitem_out_of_range(key, a2):
    x = xp.asarray(a2)
    with pytest.raises(IndexError):
        x[key]


def test_getitem_integer_arrays(a2):
    x = xp.asarray(a2)
    i = np.array([3, 0, -1, 2, 0])
    assert_array_equal(x[xp.asarray(i)], a2[i])
    assert_array_equal(x[xp.asarray(i), 1], a2[i, 1])
    assert_array_equal(x[1, xp.asarray(i)], a2[1, i])
    j = np.array([[0, 1], [4, 3]])
    assert_array_equal(x[xp.asarray(j[:, :1] % 4), xp.asarray(j)], a2[j[:, :1] % 4, j])
    assert_array_equal(x[xp.asarray(np.array([1, 2], dtype=np.int8))], a2[[1, 2]])
    assert_array_equal(x[xp.asarray(np.array([1, 2], dtype=np.uint16)), :], a2[[1, 2], :])
    assert_array_equal(x[::-1][xp.asarray([0, 2])], a2[::-1][[0, 2]])
    assert_array_equal(x[xp.asarray(2)], a2[2])  # 0-d integer array
    assert_array_equal(x[xp.asarray(np.zeros(0, dtype=np.int64))], a2[np.zeros(0, dtype=np.int64)])


def test_getitem_integer_array_out_of_range(a2):
    x = xp.asarray(a2)
    with pytest.raises(IndexError):
        x[xp.asarray([0, 4])]
    with pytest.raises(IndexError):
        x[xp.asarray([-5])]
    with pytest.raises(IndexError):
        x[:, xp.asarray([5])]
    # the array is still usable afterwards
    assert_array_equal(x[xp.asarray([1])], a2[[1]])


def test_getitem_boolean(a2):
    x = xp.asarray(a2)
    m = a2 > 0
    assert_array_equal(x[xp.asarray(m)], a2[m])
    r = np.array([True, False, True, True])
    assert_array_equal(x[xp.asarray(r)], a2[r])
    assert_array_equal(x[xp.asarray(r), 2], a2[r, 2])
    c = np.array([False, True, False, True, True])
    assert_array_equal(x[:, xp.asarray(c)], a2[:, c])
    assert_array_equal(x[xp.asarray(np.zeros((4, 5), dtype=bool))], a2[np.zeros((4, 5), dtype=bool)])
    assert_array_equal(x[xp.asarray(True)], a2[True])
    assert_array_equal(x[xp.asarray(False)], a2[False])
    v, av = x[::-1, 1:], a2[::-1, 1:]
    assert_array_equal(v[xp.asarray(av > 0)], av[av > 0])
    with pytest.raises(IndexError):
        x[xp.asarray([True, False])]


def test_getitem_invalid_keys(a2):
    x = xp.asarray(a2)
    for key in [1.0, (0, 0, 0), (Ellipsis, Ellipsis), "a", xp.asarray([1.0])]:
        with pytest.raises(IndexError):
            x[key]


# --- __setitem__ ---------------------------------------------------------------------------
def test_setitem_basic(a2):
    x = xp.asarray(a2)
    e = a2.copy()
    x[0] = -1.0
    e[0] = -1.0
    x[1:3, ::2] = xp.asarray([7.0, 8.0, 9.0])
    e[1:3, ::2] = [7.0, 8.0, 9.0]
    x[-1, -1] = np.inf
    e[-1, -1] = np.inf
    x[..., 1] = xp.asarray(np.arange(4.0))
    e[..., 1] = np.arange(4.0)
    x[::-1, 0] = 5
    e[::-1, 0] = 5
    assert_array_equal(x, e)
    x[...] = 0.5
    assert_array_equal(x, np.full((4, 5), 0.5))


def test_setitem_one_element_from_0d_arrays(rng):
    """x[i, i] = v for each row, with v a 0-d array as scikit-learn's diagonal fill passes it (of
    x's dtype, of another one, and an element of x itself), on a transposed view and with
    negative indices: only those elements change."""
    h = rng.standard_normal((7, 5)).astype(np.float32)
    x = xp.asarray(h)
    e = h.copy()
    zero, half = xp.asarray(0.0, dtype=xp.float32), xp.asarray(0.5, dtype=xp.float32)
    for i in range(5):
        x[i, i] = zero
        e[i, i] = 0
    x[-1, -2] = half
    e[-1, -2] = 0.5
    x[6, 0] = x[0, 1]
    e[6, 0] = e[0, 1]
    t = x.mT
    t[1, 5] = xp.asarray(-3.0, dtype=xp.float32)
    e[5, 1] = -3
    assert_array_equal(x, e)
    b = xp.zeros((3, 4), dtype=xp.float64)
    b[2, 3] = xp.asarray(7, dtype=xp.int8)
    b[0, -4] = xp.asarray(2.5, dtype=xp.float32)
    expected = np.zeros((3, 4))
    expected[2, 3], expected[0, 0] = 7, 2.5
    assert_array_equal(b, expected)


def test_setitem_0d():
    x = xp.asarray(1.0)
    x[()] = 2.0
    assert float(x) == 2.0
    x[...] = xp.asarray(3.0)
    assert float(x) == 3.0


def test_setitem_integer_and_boolean_arrays(a2):
    x = xp.asarray(a2)
    e = a2.copy()
    i = np.array([3, 0])
    x[xp.asarray(i)] = xp.asarray(np.arange(5.0))
    e[i] = np.arange(5.0)
    m = e > 1
    x[xp.asarray(m)] = -0.0
    e[m] = -0.0
    x[xp.asarray(np.array([True, False, False, True])), 1] = 42.0
    e[np.array([True, False, False, True]), 1] = 42.0
    assert_array_equal(x, e)


def test_setitem_dtype_rules():
    x = xp.asarray([1.0, 2.0, 3.0], dtype=xp.float64)
    x[0] = xp.asarray(5.0, dtype=xp.float32)  # promotes to float64: allowed
    x[1] = 3  # int scalar into float: allowed
    assert_array_equal(x, np.array([5.0, 3.0, 3.0]))
    i = xp.asarray([1, 2, 3], dtype=xp.int16)
    with pytest.raises(TypeError):
        i[0] = 1.5
    with pytest.raises(TypeError):
        i[0] = xp.asarray(1.0)
    with pytest.raises(TypeError):
        i[0] = "a"
    b = xp.asarray([True, False])
    b[1] = True
    assert_array_equal(b, np.array([True, True]))
    with pytest.raises(IndexError):
        x[3] = 1.0
    with pytest.raises(ValueError):
        x[:] = xp.asarray([1.0, 2.0])


# --- views share memory --------------------------------------------------------------------
def test_slice_view_writes_through(a2):
    x = xp.asarray(a2)
    v = x[1:, ::2]
    v[0, 0] = 123.0
    assert float(x[1, 0]) == 123.0
    x[2, 2] = -7.0
    assert float(v[1, 1]) == -7.0  # the base's writes show in the view


def test_permute_dims_and_mT_views_write_through(a2):
    x = xp.asarray(a2)
    p = xp.permute_dims(x, (1, 0))
    p[4, 0] = 11.0
    assert float(x[0, 4]) == 11.0
    m = x.mT
    m[0, 3] = 12.0
    assert float(x[3, 0]) == 12.0
    a3 = xp.asarray(np.arange(24.0).reshape(2, 3, 4))
    q = xp.permute_dims(a3, (2, 0, 1))
    q[3, 1, 2] = -1.0
    assert float(a3[1, 2, 3]) == -1.0


def test_reshape_and_expand_view_write_through():
    x = xp.asarray(np.arange(12.0))
    r = xp.reshape(x, (3, 4))
    r[1, 1] = -5.0
    assert float(x[5]) == -5.0
    e = xp.expand_dims(x, axis=0)
    e[0, 0] = -6.0
    assert float(x[0]) == -6.0
    n = x[None, 2:4]
    n[0, 1] = -9.0
    assert float(x[3]) == -9.0


def test_views_of_views(a2):
    x = xp.asarray(a2, copy=True)
    v = x[::-1][1:][:, 1::2].mT
    expected_pos = a2[::-1][1:][:, 1::2].T
    assert_array_equal(v, expected_pos)
    v[0, 0] = 1e9
    e = a2.copy()
    e[::-1][1:][:, 1::2].T[0, 0] = 1e9
    assert_array_equal(x, e)


# --- to_device, DLPack, repr, __array__ ----------------------------------------------------
def test_to_device(a2):
    x = xp.asarray(a2)
    assert x.to_device(DEVICE) is x or x.to_device(DEVICE).device == DEVICE
    c = x.to_device("cpu")
    assert c.device == CPU and c.dtype == x.dtype and c.shape == x.shape
    np.testing.assert_array_equal(np.asarray(c), a2)
    back = c.to_device(DEVICE)
    assert_array_equal(back, a2)
    v = x[1:, ::-2].to_device("cpu")
    np.testing.assert_array_equal(np.asarray(v), a2[1:, ::-2])
    assert_array_equal(xp.asarray(3.0).to_device(CPU), np.asarray(3.0), device=CPU)
    assert_array_equal(xp.zeros((0, 2)).to_device("cpu"), np.zeros((0, 2)), device=CPU)
    with pytest.raises(ValueError):
        x.to_device("nonsense")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_dlpack_roundtrip_with_numpy(dtype):
    """Interop with NumPy through DLPack: CPU arrays (the test is about the host protocol)."""
    a = make_data(dtype, (3, 4), np.random.default_rng(48))
    x = xp.asarray(a, device="cpu")
    assert x.__dlpack_device__() == (1, 0)
    n = np.from_dlpack(x)
    np.testing.assert_array_equal(n, a)
    assert n.dtype == a.dtype
    # no copy: numpy sees the arrayx buffer
    if dtype != xp.bool:
        x[0, 0] = 1
        assert n[0, 0] == 1
    y = xp.from_dlpack(a)
    assert_array_equal(y, a, device=CPU)
    a[1, 1] = 0
    assert to_numpy(y)[1, 1] == 0  # arrayx views the NumPy buffer
    # strided views export too
    np.testing.assert_array_equal(np.from_dlpack(x[:, ::-2]), to_numpy(x)[:, ::-2])
    np.testing.assert_array_equal(np.from_dlpack(x.mT), to_numpy(x).T)


def test_dlpack_max_version_and_copy():
    x = xp.asarray([1.0, 2.0], device="cpu")
    assert "dltensor_versioned" in repr(x.__dlpack__(max_version=(1, 0)))
    assert "dltensor" in repr(x.__dlpack__())
    c = np.from_dlpack(x, copy=True)
    c[0] = 9.0
    assert float(x[0]) == 1.0
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 0))
    x.__dlpack__(dl_device=(1, 0))


@pytest.mark.parametrize("stream, error", [(5, ValueError), (0, ValueError), (-2, ValueError),
                                           (4095, ValueError), (1.0, TypeError), (True, TypeError),
                                           ("1", TypeError)])
def test_dlpack_refuses_invalid_streams(stream, error):
    """A small integer is no stream handle: taken for one, it would crash the process."""
    with pytest.raises(error, match="stream"):
        xp.asarray([1.0, 2.0]).__dlpack__(stream=stream)


def test_dlpack_argument_types_and_cpu_streams():
    x = xp.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="max_version"):
        x.__dlpack__(max_version=1)
    with pytest.raises(TypeError, match="dl_device"):
        x.__dlpack__(dl_device="cpu")
    with pytest.raises(TypeError, match="copy"):
        x.__dlpack__(copy=1)
    with pytest.raises(ValueError, match="stream must be None"):
        xp.asarray([1.0], device="cpu").__dlpack__(stream=1)
    if DEVICE.kind == "cuda":
        x.__dlpack__(stream=-1)
        x.__dlpack__(stream=1)


def test_numpy_from_dlpack_of_the_default_device():
    """NumPy imports host arrays; a CUDA array is refused with NumPy's own error, never a
    SystemError (the capsule dropped while NumPy raises must keep NumPy's exception)."""
    a = np.arange(6.0)
    x = xp.asarray(a)
    if DEVICE.kind == "cpu":
        np.testing.assert_array_equal(np.from_dlpack(x), a)
        return
    for _ in range(3):
        with pytest.raises((RuntimeError, BufferError, TypeError, ValueError)) as info:
            np.from_dlpack(x)
        assert not isinstance(info.value, SystemError)
    np.testing.assert_array_equal(np.from_dlpack(x, device="cpu"), a)


def test_from_dlpack_of_arrayx_array(a2):
    x = xp.asarray(a2)
    y = xp.from_dlpack(x)
    assert_array_equal(y, a2)
    z = xp.from_dlpack(x, device="cpu")
    assert_array_equal(z, a2, device=CPU)
    w = xp.from_dlpack(x, copy=True)
    w[0, 0] = 77.0
    assert float(x[0, 0]) != 77.0
    with pytest.raises(TypeError):
        xp.from_dlpack([1, 2])


def test_repr_shows_device_and_dtype():
    x = xp.asarray([1.5, 2.0], dtype=xp.float32)
    r = repr(x)
    assert str(DEVICE) in r and "float32" in r and "1.5" in r
    assert str(DEVICE) in str(x)
    assert "cpu" in repr(xp.asarray([1], device="cpu"))


def test_numpy_asarray_on_cpu():
    x = xp.asarray([[1, 2], [3, 4]], dtype=xp.int16, device="cpu")
    n = np.asarray(x)
    assert n.dtype == np.int16 and n.shape == (2, 2)
    np.testing.assert_array_equal(n, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(np.asarray(x[:, ::-1]), [[2, 1], [4, 3]])
    np.testing.assert_array_equal(np.asarray(x, dtype=np.float64), [[1.0, 2.0], [3.0, 4.0]])
    c = np.array(x, copy=True)
    c[0, 0] = 100
    assert int(x[0, 0]) == 1


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES, ids=str)
def test_operators_return_arrays_on_device(dtype):
    x = xp.asarray([1.0, 2.0], dtype=dtype)
    for r in (x + x, x * 2, 2 - x, x / 3, x ** 2, -x, abs(x), x < 1, x == x, x[0], x[::-1]):
        assert isinstance(r, xp.Array) and r.device == DEVICE


@pytest.mark.gpu
def test_numpy_asarray_on_cuda_needs_explicit_transfer(monkeypatch):
    monkeypatch.setattr(xp._settings, "_implicit_host_copy", False)
    x = xp.asarray([1.0, 2.0], device="cuda")
    with pytest.raises(TypeError, match="set_implicit_host_copy"):
        np.asarray(x)
    np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), [1.0, 2.0])
    np.testing.assert_array_equal(to_numpy(x), [1.0, 2.0])


@pytest.mark.gpu
def test_numpy_asarray_on_cuda_with_implicit_host_copy(monkeypatch):
    monkeypatch.setattr(xp._settings, "_warned", False)
    monkeypatch.setattr(xp._settings, "_implicit_host_copy", False)
    xp.set_implicit_host_copy(True)
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    with pytest.warns(xp.ImplicitHostCopyWarning, match="to_device"):
        n = np.asarray(x[:, ::-1])
    assert type(n) is np.ndarray and n.dtype == np.float64
    np.testing.assert_array_equal(n, [[2.0, 1.0], [4.0, 3.0]])
    n[0, 0] = 9.0  # a copy: the device array is unchanged
    assert float(x[0, 1]) == 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per process
        np.testing.assert_array_equal(np.asarray(x, dtype=np.float32), [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="copy"):
        np.asarray(x, copy=False)


# --- __format__ ----------------------------------------------------------------------------
@pytest.mark.parametrize("value, dtype, spec", [
    (1.23456789, xp.float64, ".3g"), (1.1, xp.float32, ".3g"), (1.1, xp.float32, ""),
    (-7, xp.int8, ">5d"), (2**64 - 1, xp.uint64, ".3g"), (True, xp.bool, ""),
    (1 + 2j, xp.complex64, ".2f"), (float("nan"), xp.float64, "8.3f")], ids=repr)
def test_format_0d_like_numpy(value, dtype, spec):
    x = xp.asarray(value, dtype=dtype)
    assert format(x, spec) == format(np.asarray(value, dtype=dtype), spec)
    assert f"{x:{spec}}" == format(np.asarray(value, dtype=dtype)[()], spec)


def test_format_of_arrays_with_dimensions():
    x = xp.asarray([1.0, 2.0])
    assert format(x, "") == str(x) == f"{x}"
    for y in (x, xp.asarray([[1]]), xp.zeros((0,))):
        with pytest.raises(TypeError, match="format"):
            format(y, ".3g")
    with pytest.raises(ValueError):
        format(xp.asarray(1.5), "d")  # as Python's float refuses it


# --- repr of large arrays: only the printed edges are fetched -------------------------------
def _whole_array_repr(x):
    """repr() as it is written without summarising on the device: the whole array on the host."""
    body = np.array2string(np.asarray(x.to_device("cpu")), separator=", ", prefix="Array(")
    return f"Array({body}, dtype={x.dtype}, device='{x.device}')"


@pytest.mark.parametrize("shape", [(5,), (2000,), (40, 40), (3, 1000), (2, 3, 400), (7, 7, 7, 7),
                                   (1001, 2), (0, 5000), (1, 1001)], ids=str)
@pytest.mark.parametrize("dtype", [xp.float64, xp.float32, xp.int16, xp.bool, xp.complex128], ids=str)
def test_repr_of_large_arrays_is_numpys_summary(shape, dtype):
    rng = np.random.default_rng(49)
    a = make_data(dtype, shape, rng)
    if dtype.kind == "f":  # magnitudes that make NumPy choose scientific notation
        a = a * np.asarray(10.0, dtype) ** rng.integers(-5, 5, shape).astype(dtype)
    x = xp.asarray(a)
    assert repr(x) == str(x) == _whole_array_repr(x)
    assert repr(x[:, ::-3] if x.ndim > 1 else x[::-3]) == _whole_array_repr(
        x[:, ::-3] if x.ndim > 1 else x[::-3])


@pytest.mark.parametrize("options", [
    dict(threshold=10, edgeitems=1, precision=3), dict(threshold=0, edgeitems=1),
    dict(threshold=5, edgeitems=0), dict(threshold=20, edgeitems=5, suppress=True),
    dict(threshold=3, edgeitems=2, linewidth=20, floatmode="unique"),
    dict(threshold=10, legacy="1.13")], ids=repr)
def test_repr_follows_numpy_print_options(options):
    rng = np.random.default_rng(50)
    with np.printoptions(**options):
        for shape in [(30,), (3, 4, 5), (11, 1, 12), (5, 0, 7)]:
            for dtype in (xp.float64, xp.uint8, xp.bool, xp.complex64):
                x = xp.asarray(make_data(dtype, shape, rng))
                assert repr(x) == _whole_array_repr(x)


def test_repr_summarises_past_the_threshold():
    with np.printoptions(threshold=1000):
        assert "..." not in repr(xp.zeros(1000)) and "..." in repr(xp.zeros(1001))


def test_repr_fetches_only_the_printed_blocks(monkeypatch):
    import arrayx._array_object as array_object
    fetched = []
    real = array_object._host_piece

    def counting(x):
        fetched.append(x.shape)
        return real(x)

    monkeypatch.setattr(array_object, "_host_piece", counting)
    x = xp.zeros((1000, 3, 2000))
    text = repr(x)
    assert text == _whole_array_repr(x)
    edge = np.get_printoptions()["edgeitems"]
    assert fetched == [(edge, 3, edge)] * 4  # two summarised axes: four corner blocks
    fetched.clear()
    repr(xp.zeros(10))
    assert fetched == [(10,)]  # within the threshold: the whole array, once


# --- integer-array keys: the gather/scatter kernels ------------------------------------------
ADVANCED_KEYS = [
    lambda r: (np.array([3, 0, -1, 2, 0]),),
    lambda r: (np.array([[1, -2], [0, 3]]), slice(None, None, -2)),
    lambda r: (1, slice(None), np.array([4, -6, 0])),            # separated: advanced dims first
    lambda r: (slice(None), np.array([[2], [0]]), np.array([1, 5, -1])),  # adjacent, broadcast
    lambda r: (np.array([[1], [3]]), slice(1, None, 2), np.array([0, 6])),
    lambda r: (np.array([1, 2]), Ellipsis, np.array([0, 6])),
    lambda r: (Ellipsis, np.array([0, 6, 3])),
    lambda r: (np.array([0, 1]), None, np.array([2, 3])),
    lambda r: (None, slice(None, None, -1), 2, np.array([2, 3, 1])),
    lambda r: (np.array(2), slice(None), np.array([[1, 1, 0]])),  # 0-d integer array
    lambda r: (np.zeros(0, np.int64), slice(None)),
    lambda r: (slice(None), np.zeros((2, 0), np.int32), 3),
    lambda r: (r.integers(-4, 4, size=(3, 1, 2)), r.integers(-5, 5, size=(4, 1)), r.integers(-7, 7, size=2)),
]


@pytest.mark.parametrize("make_key", ADVANCED_KEYS)
def test_getitem_integer_arrays_numpy_placement(make_key):
    rng = np.random.default_rng(49)
    a = make_data(xp.float32, (4, 5, 7), rng)
    key = make_key(rng)
    x = xp.asarray(a)
    dkey = tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
    assert_array_equal(x[dkey], a[key])
    # the same key on an offset, negative-stride view
    v, av = x[::-1][:, :, ::-1], a[::-1][:, :, ::-1]
    assert_array_equal(v[dkey], av[key])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("index_dtype", INT_DTYPES, ids=str)
def test_getitem_setitem_integer_arrays_every_dtype(dtype, index_dtype):
    rng = np.random.default_rng(50)
    a = make_data(dtype, (9, 6), rng)
    i = rng.integers(0, 9, size=(2, 3)).astype(index_dtype)
    if np.dtype(index_dtype).kind == "i":
        i[0, 0] = -1
    j = np.array([5, 0, 2], dtype=index_dtype)
    x = xp.asarray(a)
    assert_array_equal(x[xp.asarray(i)], a[i])
    assert_array_equal(x[xp.asarray(i), xp.asarray(j)], a[i, j])
    assert_array_equal(x[1:, xp.asarray(j)], a[1:, j])
    b = a.copy()
    y = xp.asarray(b, copy=True)
    rows = np.array([8, 0, 3], dtype=index_dtype)  # no duplicates: the written value is defined
    value = make_data(dtype, (3, 6), rng)
    y[xp.asarray(rows)] = xp.asarray(value)
    b[rows] = value
    y[xp.asarray(rows), xp.asarray(j)] = xp.asarray(value[0, 0])
    b[rows, j] = value[0, 0]
    assert_array_equal(y, b)


def test_getitem_long_integer_arrays():
    rng = np.random.default_rng(51)
    a = make_data(xp.float64, (300, 40), rng)
    i = rng.integers(-300, 300, size=5000)
    j = rng.integers(-40, 40, size=5000)
    x = xp.asarray(a)
    assert_array_equal(x[xp.asarray(i)], a[i])
    assert_array_equal(x[xp.asarray(i), xp.asarray(j)], a[i, j])
    assert_array_equal(x[:, xp.asarray(j)], a[:, j])
    assert_array_equal(x.mT[xp.asarray(j)], a.T[j])


@pytest.mark.parametrize("key", [(np.array([9]),), (np.array([-10]),), (slice(None), np.array([0, 6])),
                                 (np.array([0, 2**40]), np.array([0])), (np.array([[0]]), np.array([-7]))],
                         ids=repr)
def test_integer_array_out_of_range_both_ways(key):
    a = np.arange(54.0).reshape(9, 6)
    x = xp.asarray(a, copy=True)
    dkey = tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
    with pytest.raises(IndexError):
        x[dkey]
    with pytest.raises(IndexError):
        x[dkey] = 1.0
    assert_array_equal(x[xp.asarray([8, -9])], a[[8, -9]])  # still usable
    with pytest.raises(IndexError):
        xp.zeros((0, 3))[xp.asarray([0])]


def test_integer_array_keys_on_empty_arrays():
    e = np.zeros((0, 4), np.int16)
    x = xp.asarray(e)
    assert_array_equal(x[:, xp.asarray([1, -1])], e[:, [1, -1]])
    assert_array_equal(x[xp.asarray(np.zeros(0, np.int64))], e[np.zeros(0, np.int64)])
    x[:, xp.asarray([0, 3])] = 7
    x[xp.asarray(np.zeros(0, np.int64))] = xp.asarray(np.zeros(4, np.int16))
    assert x.shape == (0, 4)


def test_setitem_integer_arrays_through_views_writes_the_base():
    a = np.arange(60.0).reshape(6, 10)
    x = xp.asarray(a, copy=True)
    e = a.copy()
    v = x[1:, ::-2]
    v[xp.asarray([0, -1]), xp.asarray([1, 2])] = xp.asarray([-1.0, -2.0])
    e[1:, ::-2][[0, -1], [1, 2]] = [-1.0, -2.0]
    t = x.mT
    t[xp.asarray([[3], [4]]), 2:4] = -5.0
    e.T[[[3], [4]], 2:4] = -5.0
    r = xp.reshape(x, (60,))
    r[xp.asarray([59, 0])] = xp.asarray([100.0, 200.0])
    e.reshape(60)[[59, 0]] = [100.0, 200.0]
    assert_array_equal(x, e)


def test_setitem_integer_arrays_broadcast_values_and_aliasing():
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    x = xp.asarray(a, copy=True)
    e = a.copy()
    i = np.array([[0], [2]])
    x[xp.asarray(i), 1:4] = xp.asarray(np.array([7, 8, 9], np.int32))  # (3,) broadcast to (2, 1, 3)
    e[i, 1:4] = [7, 8, 9]
    x[xp.asarray([3, 1])] = x[::-1][xp.asarray([0, 1])]  # the value aliases the destination
    e[[3, 1]] = e[::-1][[0, 1]]
    assert_array_equal(x, e)
    k = xp.asarray(np.array([2, 0, 1, 3, 5], np.int64), copy=True)
    k[k[:2]] = xp.asarray(np.array([9, 9], np.int64))  # the indices alias the destination
    kk = np.array([2, 0, 1, 3, 5])
    kk[kk[:2].copy()] = 9
    assert_array_equal(k, kk)
    with pytest.raises(ValueError):
        x[xp.asarray([0, 1])] = xp.asarray(np.zeros((3, 6), np.int32))


def test_zero_d_boolean_keys_with_other_indices():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = xp.asarray(a, copy=True)
    T, F = np.array(True), np.array(False)
    for key in [(T,), (F,), (T, 0), (0, T), (np.array([1, 0]), T), (T, slice(None), 0), (Ellipsis, F),
                (None, T, 1)]:
        dkey = tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
        assert_array_equal(x[dkey], a[key])
    x[xp.asarray(True), 1] = -1.0
    a[True, 1] = -1.0
    x[xp.asarray(False)] = 5.0
    assert_array_equal(x, a)


def test_boolean_arrays_mixed_with_integer_arrays():
    rng = np.random.default_rng(52)
    a = make_data(xp.int64, (4, 5, 6), rng)
    x = xp.asarray(a, copy=True)
    m = np.array([True, False, True, True, False])
    i = np.array([0, -1, 2])
    assert_array_equal(x[:, xp.asarray(m), xp.asarray(i)], a[:, m, i])
    assert_array_equal(x[xp.asarray(i[:1]), xp.asarray(m)], a[i[:1], m])
    m2 = rng.random((4, 5)) < 0.5
    assert_array_equal(x[xp.asarray(m2), xp.asarray(np.array([1]))], a[m2, np.array([1])])
    m6 = np.array([False, True, True, False, False, True])
    assert_array_equal(x[1, :, xp.asarray(m6)], a[1, :, m6])
    x[:, xp.asarray(m), xp.asarray(i)] = -3
    a[:, m, i] = -3
    assert_array_equal(x, a)


# --- boolean masks (the CUDA mask kernels of scan.py) ----------------------------------------

MASK_DTYPES = [xp.bool, xp.int8, xp.int16, xp.uint32, xp.float32, xp.float64, xp.complex64,
               xp.complex128]


@pytest.mark.parametrize("dtype", MASK_DTYPES, ids=str)
@pytest.mark.parametrize("mask_ndim", [1, 2, 3])
def test_mask_select_every_dtype_and_rank(dtype, mask_ndim):
    rng = np.random.default_rng(60 + mask_ndim)
    a = make_data(dtype, (6, 5, 4), rng)
    x = xp.asarray(a)
    m = rng.random(a.shape[:mask_ndim]) < 0.5
    assert_array_equal(x[xp.asarray(m)], a[m])
    for fill in (np.zeros, np.ones):  # all-false, all-true
        mm = fill(a.shape[:mask_ndim], dtype=bool)
        assert_array_equal(x[xp.asarray(mm)], a[mm])


@pytest.mark.parametrize("view", ["T", "reversed", "offset", "strided"])
def test_mask_select_on_views(view):
    rng = np.random.default_rng(61)
    a = make_data(xp.float32, (9, 8, 7), rng)
    mbase = rng.random((9, 8, 7)) < 0.4

    def pick(z, mod):
        if view == "T":
            return mod.permute_dims(z, (2, 0, 1)) if mod is xp else np.transpose(z, (2, 0, 1))
        return {"reversed": lambda: z[::-1, :, ::-2], "offset": lambda: z[1:, 1:, 1:],
                "strided": lambda: z[::2, 1::3]}[view]()
    av, mv = pick(a, np), pick(mbase, np)
    xv, dmv = pick(xp.asarray(a), xp), pick(xp.asarray(mbase), xp)
    assert_array_equal(xv[dmv], av[mv])
    assert_array_equal(xv[dmv[:, :, 0]], av[mv[:, :, 0]])
    assert_array_equal(xv[dmv[:, 0, 0]], av[mv[:, 0, 0]])


def test_mask_select_long_and_offsets():
    rng = np.random.default_rng(62)
    n = 3_000_001
    a = rng.standard_normal(n).astype(np.float32)
    m = rng.random(n) < 0.5
    x, dm = xp.asarray(a), xp.asarray(m)
    assert_array_equal(x[dm], a[m])
    assert_array_equal(x[1:][dm[:-1]], a[1:][m[:-1]])       # misaligned data
    assert_array_equal(x[:-1][dm[1:]], a[:-1][m[1:]])       # misaligned mask
    assert_array_equal(x[::-1][dm], a[::-1][m])
    d = rng.standard_normal(n // 3).astype(np.float64)
    assert_array_equal(xp.asarray(d)[dm[: n // 3]], d[m[: n // 3]])
    assert_array_equal(xp.asarray(a.reshape(-1, 1)[: n - 1].reshape(-1, 2))[dm[: (n - 1) // 2]],
                       a[: n - 1].reshape(-1, 2)[m[: (n - 1) // 2]])


def test_mask_empty_and_zero_d():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = xp.asarray(a, copy=True)
    for m in (np.zeros((2,), bool), np.zeros((2, 3), bool), np.zeros((2, 3, 4), bool)):
        assert_array_equal(x[xp.asarray(m)], a[m])
    empty = np.zeros((0, 3), np.float32)
    assert_array_equal(xp.asarray(empty)[xp.asarray(np.zeros(0, bool))], empty[np.zeros(0, bool)])
    assert_array_equal(xp.asarray(empty)[xp.asarray(np.zeros((0, 3), bool))],
                       empty[np.zeros((0, 3), bool)])
    for t in (True, False):
        assert_array_equal(x[xp.asarray(t)], a[np.array(t)])
        s = xp.asarray(5.0)
        assert_array_equal(s[xp.asarray(t)], np.asarray(5.0)[np.array(t)])
    x[xp.asarray(np.zeros((2, 3), bool))] = 1.0
    x[xp.asarray(np.zeros((2, 3), bool))] = xp.asarray(np.zeros((0, 4)))
    assert_array_equal(x, a)
    s = xp.asarray(5.0)
    s[xp.asarray(True)] = 7.0
    assert float(s) == 7.0
    s[xp.asarray(False)] = 9.0
    assert float(s) == 7.0


@pytest.mark.parametrize("dtype", MASK_DTYPES, ids=str)
def test_mask_assign_scalar_and_arrays(dtype):
    rng = np.random.default_rng(63)
    a = make_data(dtype, (6, 5, 4), rng)
    for mask_ndim in (1, 2, 3):
        x = xp.asarray(a, copy=True)
        e = a.copy()
        m = rng.random(a.shape[:mask_ndim]) < 0.5
        one = np.asarray(a.flat[0])
        x[xp.asarray(m)] = one.item()                        # a Python scalar: no sync
        e[m] = one
        assert_array_equal(x, e)
        count = int(m.sum())
        rows = make_data(dtype, (count,) + a.shape[mask_ndim:], rng)
        x[xp.asarray(m)] = xp.asarray(rows)                  # one value row per selected element
        e[m] = rows
        assert_array_equal(x, e)
        inner = make_data(dtype, a.shape[mask_ndim:], rng)
        x[xp.asarray(m)] = xp.asarray(inner)                 # broadcast along the selection
        e[m] = inner
        assert_array_equal(x, e)


def test_mask_assign_views_and_aliasing():
    rng = np.random.default_rng(64)
    a = make_data(xp.float64, (7, 6), rng)
    x = xp.asarray(a, copy=True)
    e = a.copy()
    xt, et = x.T, e.T                                        # writes go through the view
    m = rng.random((6, 7)) < 0.5
    xt[xp.asarray(m)] = -1.0
    et[m] = -1.0
    assert_array_equal(x, e)
    xv, ev = x[::-1, 1::2], e[::-1, 1::2]
    mv = rng.random(7) < 0.5
    vals = rng.standard_normal((int(mv.sum()), 3))
    xv[xp.asarray(mv)] = xp.asarray(vals)
    ev[mv] = vals
    assert_array_equal(x, e)
    x[x > 0] = 0.0                                           # mask computed from x itself
    e[e > 0] = 0.0
    assert_array_equal(x, e)
    b = np.array([True, False, True, True, False, False, True, False])
    xb = xp.asarray(b, copy=True)
    xb[xb[::-1]] = False                                     # the mask is a view of the target
    bb = b.copy()
    bb[b[::-1].copy()] = False
    assert_array_equal(xb, bb)


def test_mask_assign_count_mismatch_and_long():
    x = xp.asarray(np.zeros((4, 3)), copy=True)
    m = np.array([True, False, True, False])
    with pytest.raises(ValueError):
        x[xp.asarray(m)] = xp.asarray(np.ones((3, 3)))
    with pytest.raises(ValueError):
        x[xp.asarray(m)] = xp.asarray(np.ones((2, 2)))
    x[xp.asarray(m)] = xp.asarray(np.ones((1, 3)))
    e = np.zeros((4, 3))
    e[m] = 1.0
    assert_array_equal(x, e)
    rng = np.random.default_rng(65)
    n = 3_000_001
    a = rng.standard_normal(n).astype(np.float32)
    mm = rng.random(n) < 0.3
    y = xp.asarray(a, copy=True)
    vals = rng.standard_normal(int(mm.sum())).astype(np.float32)
    y[xp.asarray(mm)] = xp.asarray(vals)
    a[mm] = vals
    assert_array_equal(y, a)
