"""all, any and diff against NumPy: every dtype (NaN, inf, -0.0, complex parts), empty and 0-d
arrays, negative and tuple axes, keepdims, views, prepend/append and bad input."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import arrayx as xp
from conftest import assert_array_equal, to_numpy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
       "float32", "float64", "complex64", "complex128"]
NUMERIC = ALL[1:]


def data(rng, dtype, shape, specials=False, zeros=0.5):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.7
    a = rng.integers(1 if dtype.kind == "u" else -5, 6, size=shape).astype(dtype)
    if dtype.kind == "c":
        a = a + 1j * rng.integers(-1, 2, size=shape)
    a = np.where(rng.random(shape) < zeros, 0, a).astype(dtype)
    if specials and a.size and dtype.kind in "fc":
        flat = a.reshape(-1)
        picks = rng.integers(0, flat.size, size=max(1, flat.size // 5))
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0]), size=picks.size)
    return a


@pytest.mark.parametrize("fn", ["all", "any"])
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (2, -3), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_all_any(rng, fn, dtype, axis, keepdims):
    a = data(rng, dtype, (3, 4, 2), specials=True, zeros=0.1)
    r = getattr(xp, fn)(xp.asarray(a), axis=axis, keepdims=keepdims)
    assert_array_equal(r, getattr(np, fn)(a, axis=axis, keepdims=keepdims), dtype="bool")


def test_all_any_special_values():
    assert_array_equal(xp.all(xp.asarray(np.array([np.nan, np.inf, -np.inf]))), np.bool_(True))
    assert_array_equal(xp.any(xp.asarray(np.array([0.0, -0.0]))), np.bool_(False))
    assert_array_equal(xp.all(xp.asarray(np.array([0j + 1j, 1 + 0j]))), np.bool_(True))
    assert_array_equal(xp.all(xp.asarray(np.array([complex(-0.0, 0.0)]))), np.bool_(False))
    assert_array_equal(xp.any(xp.asarray(np.array([complex(0, np.nan)]))), np.bool_(True))
    # empty: all is True, any is False
    e = xp.asarray(np.zeros((0, 3)))
    assert_array_equal(xp.all(e), np.bool_(True))
    assert_array_equal(xp.any(e), np.bool_(False))
    assert_array_equal(xp.all(e, axis=0), np.ones(3, bool))
    assert_array_equal(xp.any(e, axis=0, keepdims=True), np.zeros((1, 3), bool))
    assert_array_equal(xp.any(e, axis=1), np.zeros(0, bool))
    # 0-d
    assert_array_equal(xp.all(xp.asarray(0)), np.bool_(False))
    assert_array_equal(xp.any(xp.asarray(2.5), keepdims=True), np.bool_(True))
    # views
    base = np.arange(24).reshape(4, 6) % 5
    x = xp.asarray(base)
    for view in (lambda t: t[1:], lambda t: t[::-2], lambda t: t[:, 1::2]):
        for axis in (None, 0, 1):
            assert_array_equal(xp.all(view(x), axis=axis), np.all(view(base), axis=axis))
            assert_array_equal(xp.any(view(x), axis=axis), np.any(view(base), axis=axis))


@pytest.mark.parametrize("fn", ["all", "any"])
def test_all_any_bad_input(fn):
    x = xp.asarray(np.ones((2, 3)))
    with pytest.raises(IndexError, match=fn):
        getattr(xp, fn)(x, axis=2)
    with pytest.raises(ValueError):
        getattr(xp, fn)(x, axis=(0, -2))
    # Axes as a list, as SciPy passes them (issue 21); a float in it is still refused.
    assert_array_equal(getattr(xp, fn)(x, axis=[0]), getattr(np, fn)(np.ones((2, 3)), axis=0))
    with pytest.raises(TypeError, match="axis"):
        getattr(xp, fn)(x, axis=[0.0])
    with pytest.raises(TypeError):
        getattr(xp, fn)([True])


# --- diff ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_diff(rng, dtype, axis, n):
    a = data(rng, dtype, (4, 5), specials=True)
    r = xp.diff(xp.asarray(a), axis=axis, n=n)
    assert_array_equal(r, np.diff(a, axis=axis, n=n))


@pytest.mark.parametrize("dtype", ["int16", "float32", "complex64", "uint8"])
def test_diff_prepend_append(rng, dtype):
    a = data(rng, dtype, (3, 4))
    pre = data(rng, dtype, (3, 2))
    app = data(rng, dtype, (3, 1))
    x, P, A = xp.asarray(a), xp.asarray(pre), xp.asarray(app)
    assert_array_equal(xp.diff(x, prepend=P, append=A), np.diff(a, prepend=pre, append=app))
    assert_array_equal(xp.diff(x, n=2, prepend=P), np.diff(a, n=2, prepend=pre))
    assert_array_equal(xp.diff(x, axis=0, append=xp.asarray(a[:1])), np.diff(a, axis=0, append=a[:1]))
    # prepend of a wider dtype promotes
    wide = np.ones((3, 1), {"int16": np.int32, "uint8": np.uint16, "float32": np.float64,
                            "complex64": np.complex128}[dtype])
    assert_array_equal(xp.diff(x, prepend=xp.asarray(wide)), np.diff(a, prepend=wide))
    # an edge of another kind promotes as NumPy's does (integer with floating, uint64 with int64)
    other = np.ones((3, 1), np.float64 if dtype in ("int16", "uint8") else np.int64)
    assert_array_equal(xp.diff(x, prepend=xp.asarray(other)), np.diff(a, prepend=other))


def test_diff_views_empty_and_1d(rng):
    base = data(rng, "float64", (6, 7))
    x = xp.asarray(base)
    for view in (lambda t: t[1:], lambda t: t[::-2], lambda t: t[:, ::-3]):
        for axis in (0, 1):
            assert_array_equal(xp.diff(view(x), axis=axis), np.diff(view(base), axis=axis))
    assert_array_equal(xp.diff(xp.asarray(np.arange(5.0) ** 2)), np.diff(np.arange(5.0) ** 2))
    assert_array_equal(xp.diff(xp.asarray(np.zeros(0))), np.zeros(0))
    assert_array_equal(xp.diff(xp.asarray(np.zeros((0, 3))), axis=1), np.zeros((0, 2)))
    assert_array_equal(xp.diff(xp.asarray([1.0]), n=3), np.zeros(0))
    assert_array_equal(xp.diff(xp.asarray(np.array([-0.0, 0.0, np.inf, np.inf]))),
                       np.diff(np.array([-0.0, 0.0, np.inf, np.inf])))
    u = np.array([3, 1], np.uint8)
    assert_array_equal(xp.diff(xp.asarray(u)), np.diff(u))  # wraps like NumPy


def test_diff_bad_input():
    x = xp.asarray(np.ones((2, 3)))
    with pytest.raises(TypeError, match="diff"):
        xp.diff(xp.asarray([True, False]))
    with pytest.raises(ValueError):
        xp.diff(xp.asarray(1.0))
    with pytest.raises(IndexError):
        xp.diff(x, axis=2)
    with pytest.raises(ValueError, match="non-negative"):
        xp.diff(x, n=-1)
    with pytest.raises(TypeError):
        xp.diff(x, n=1.5)
    with pytest.raises(ValueError, match="prepend"):
        xp.diff(x, prepend=xp.asarray(np.ones((3, 3))))
    with pytest.raises(ValueError, match="append"):
        xp.diff(x, append=xp.asarray(np.ones(3)))
    with pytest.raises(TypeError):
        xp.diff(x, append=xp.asarray(np.ones((2, 1), bool)))
    with pytest.raises(TypeError):
        xp.diff(x, prepend=np.ones((2, 1)))


@given(st.data())
def test_diff_property(data_):
    from conftest import xps
    x = data_.draw(xps.arrays(xp.int32, xps.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5),
                              elements={"min_value": -100, "max_value": 100}))
    axis = data_.draw(st.integers(-x.ndim, x.ndim - 1))
    n = data_.draw(st.integers(0, 4))
    assert_array_equal(xp.diff(x, axis=axis, n=n), np.diff(to_numpy(x), axis=axis, n=n))
