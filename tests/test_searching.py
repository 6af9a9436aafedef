"""Searching functions (argmax, argmin, count_nonzero, nonzero, searchsorted, where) against
NumPy: ties, NaN, empty and 0-d arrays, axes, keepdims, views, scalars and bad input."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import arrayx as xp
from conftest import assert_array_equal, to_numpy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

REAL = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
ALL = REAL + ["bool", "complex64", "complex128"]


def data(rng, dtype, shape, specials=False):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -3, 4, size=shape).astype(dtype)  # many ties
    a = rng.integers(-3, 4, size=shape).astype(dtype)
    if dtype.kind == "c":
        a = a + 1j * rng.integers(-1, 2, size=shape)
    if specials and a.size:
        flat = a.reshape(-1)
        picks = rng.integers(0, flat.size, size=max(1, flat.size // 6))
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0]), size=picks.size)
    return a.astype(dtype)


# --- argmax / argmin -----------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, -3])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin(rng, fn, dtype, axis, keepdims):
    a = data(rng, dtype, (3, 4, 5), specials=True)
    r = getattr(xp, fn)(xp.asarray(a), axis=axis, keepdims=keepdims)
    assert_array_equal(r, getattr(np, fn)(a, axis=axis, keepdims=keepdims), dtype="int64")


@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_argmax_argmin_first_index_on_ties_and_views(rng, fn):
    a = np.array([[1, 3, 3, 0, 0], [2, 2, 2, 2, 2]], dtype=np.int32)
    assert_array_equal(getattr(xp, fn)(xp.asarray(a), axis=1), getattr(np, fn)(a, axis=1))
    base = data(rng, "float64", (8, 6))
    x = xp.asarray(base)
    for view in (lambda t: t[1:], lambda t: t[::-2], lambda t: t[:, ::-1]):
        for axis in (None, 0, 1):
            assert_array_equal(getattr(xp, fn)(view(x), axis=axis), getattr(np, fn)(view(base), axis=axis))


@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_argmax_argmin_zero_d_and_empty(fn):
    f = getattr(xp, fn)
    assert_array_equal(f(xp.asarray(5.0)), np.int64(0))
    assert_array_equal(f(xp.asarray(5.0), keepdims=True), np.int64(0))
    with pytest.raises(ValueError, match=fn):
        f(xp.asarray(np.zeros(0)))
    with pytest.raises(ValueError):
        f(xp.asarray(np.zeros((2, 0))), axis=1)
    assert_array_equal(f(xp.asarray(np.zeros((0, 3))), axis=1), np.zeros(0, np.int64))
    assert_array_equal(f(xp.asarray(np.zeros((2, 3))), keepdims=True), np.zeros((1, 1), np.int64))


@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_argmax_argmin_bad_input(fn):
    f = getattr(xp, fn)
    with pytest.raises(TypeError):
        f(xp.asarray([1 + 1j, 2]))
    with pytest.raises(TypeError):
        f(xp.asarray([True, False]))
    with pytest.raises(IndexError):
        f(xp.asarray(np.ones((2, 2))), axis=2)
    with pytest.raises(TypeError):
        f(xp.asarray(np.ones((2, 2))), axis=(0, 1))
    with pytest.raises(TypeError):
        f([1, 2])


ARG_LAYOUTS = {
    "contiguous": lambda a: a, "offset": lambda a: a[1:, 1:], "negative": lambda a: a[::-1, ::-1],
    "transposed": lambda a: a.T, "strided": lambda a: a[::2, 1::3],
    "negative-transposed": lambda a: a[::-1, ::-2].T,
}


# every dtype contiguous and in one strided layout; float32 and int8 in all of them
@pytest.mark.parametrize("fn", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype, layout", [(d, lay) for d in REAL for lay in ARG_LAYOUTS
                                           if d in ("float32", "int8") or
                                           lay in ("contiguous", "negative-transposed")])
def test_argmax_argmin_layouts(rng, fn, dtype, layout):
    base = data(rng, dtype, (37, 130), specials=True)
    x, a = ARG_LAYOUTS[layout](xp.asarray(base)), ARG_LAYOUTS[layout](base)
    for axis, keepdims in ((None, False), (0, False), (1, True), (-1, False), (-2, True)):
        r = getattr(xp, fn)(x, axis=axis, keepdims=keepdims)
        assert_array_equal(r, getattr(np, fn)(a, axis=axis, keepdims=keepdims), dtype="int64")


@pytest.mark.parametrize("fn", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8"])
def test_argmax_argmin_large_and_nan(rng, fn, dtype):
    a = data(rng, dtype, (1_000_003,))
    f = getattr(xp, fn)
    x = xp.asarray(a)
    for view in (lambda t: t, lambda t: t[5:], lambda t: t[::-1], lambda t: t[::7]):
        assert_array_equal(f(view(x)), getattr(np, fn)(view(a)), dtype="int64")
    if dtype.startswith("float"):
        a[[400_001, 900_000, 12]] = np.nan, np.nan, 1.0
        assert_array_equal(f(xp.asarray(a)), np.int64(400_001))  # the first NaN wins
    for rows, length in ((3, 100_000), (700, 33), (2000, 5), (5, 4097)):
        b = data(rng, dtype, (rows, length), specials=True)
        y = xp.asarray(b)
        for axis in (0, 1):
            assert_array_equal(f(y, axis=axis), getattr(np, fn)(b, axis=axis), dtype="int64")
            assert_array_equal(f(y[:, 1:], axis=axis), getattr(np, fn)(b[:, 1:], axis=axis),
                               dtype="int64")


def test_argmax_argmin_extreme_values():
    for dtype in ("int8", "uint64", "int64"):
        info = np.iinfo(dtype)
        for v in (info.min, info.max):
            a = np.full(1000, v, dtype=dtype)
            assert_array_equal(xp.argmax(xp.asarray(a)), np.int64(0))
            assert_array_equal(xp.argmin(xp.asarray(a)), np.int64(0))
    a = np.full((3, 50), -np.inf, np.float32)
    assert_array_equal(xp.argmax(xp.asarray(a), axis=1), np.zeros(3, np.int64))
    assert_array_equal(xp.argmin(xp.asarray(-a), axis=0), np.zeros(50, np.int64))
    b = np.array([[np.nan, 1.0, np.nan], [2.0, np.nan, 0.0]])
    for fn in ("argmax", "argmin"):
        for axis in (None, 0, 1):
            assert_array_equal(getattr(xp, fn)(xp.asarray(b), axis=axis),
                               getattr(np, fn)(b, axis=axis), dtype="int64")


# --- count_nonzero -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_count_nonzero(rng, dtype, axis, keepdims):
    a = data(rng, dtype, (3, 4, 5), specials=True)
    r = xp.count_nonzero(xp.asarray(a), axis=axis, keepdims=keepdims)
    expected = np.count_nonzero(a, axis=axis, keepdims=keepdims) if axis != () else (a != 0)
    assert_array_equal(r, np.asarray(expected, dtype=np.int64), dtype="int64")


def test_count_nonzero_special():
    z = np.array([complex(0, 0), complex(0, 1), complex(np.nan, 0), complex(-0.0, -0.0)])
    assert_array_equal(xp.count_nonzero(xp.asarray(z)), np.int64(2))
    assert_array_equal(xp.count_nonzero(xp.asarray(np.array([np.nan, -0.0, np.inf]))), np.int64(2))
    assert_array_equal(xp.count_nonzero(xp.asarray(np.zeros((0, 3)))), np.int64(0))
    assert_array_equal(xp.count_nonzero(xp.asarray(np.zeros((0, 3))), axis=0), np.zeros(3, np.int64))
    assert_array_equal(xp.count_nonzero(xp.asarray(7)), np.int64(1))
    x = xp.asarray(np.arange(12).reshape(3, 4) % 3)
    assert_array_equal(xp.count_nonzero(x[::-1, 1::2], axis=0),
                       np.count_nonzero((np.arange(12).reshape(3, 4) % 3)[::-1, 1::2], axis=0))
    with pytest.raises(IndexError):
        xp.count_nonzero(x, axis=5)
    with pytest.raises(ValueError):
        xp.count_nonzero(x, axis=(0, 0))


# --- nonzero -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4), (0,), (3, 0)])
def test_nonzero(rng, dtype, shape):
    a = data(rng, dtype, shape, specials=True)
    r = xp.nonzero(xp.asarray(a))
    expected = np.nonzero(a)
    assert isinstance(r, tuple) and len(r) == len(expected)
    for got, exp in zip(r, expected):
        assert_array_equal(got, exp, dtype="int64")


def test_nonzero_views_and_errors(rng):
    base = data(rng, "int32", (6, 5))
    x = xp.asarray(base)
    for got, exp in zip(xp.nonzero(x[::-2, 1:]), np.nonzero(base[::-2, 1:])):
        assert_array_equal(got, exp, dtype="int64")
    with pytest.raises(ValueError, match="0-d"):
        xp.nonzero(xp.asarray(1))
    with pytest.raises(TypeError):
        xp.nonzero(np.ones(3))


# --- searchsorted --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(rng, dtype, side):
    a = np.sort(data(rng, dtype, (20,)))
    v = data(rng, dtype, (3, 5))
    assert_array_equal(xp.searchsorted(xp.asarray(a), xp.asarray(v), side=side),
                       np.searchsorted(a, v, side=side), dtype="int64")
    # with a sorter
    perm = rng.permutation(20)
    shuffled = a[perm]
    sorter = np.argsort(shuffled, kind="stable")
    assert_array_equal(xp.searchsorted(xp.asarray(shuffled), xp.asarray(v), side=side,
                                       sorter=xp.asarray(sorter)),
                       np.searchsorted(shuffled, v, side=side, sorter=sorter), dtype="int64")


def test_searchsorted_special_values_and_scalars():
    a = np.array([-np.inf, -1.0, 0.0, 0.0, 2.0, np.inf, np.nan])
    v = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0, 1.5, 5.0])
    for side in ("left", "right"):
        assert_array_equal(xp.searchsorted(xp.asarray(a), xp.asarray(v), side=side),
                           np.searchsorted(a, v, side=side))
    x1 = xp.asarray(np.array([1, 3, 5], dtype=np.int16))
    assert_array_equal(xp.searchsorted(x1, 3), np.int64(1))
    assert_array_equal(xp.searchsorted(x1, 3, side="right"), np.int64(2))
    assert_array_equal(xp.searchsorted(x1, 3.5), np.int64(2))  # float scalar with integer x1
    f = xp.asarray(np.array([1.0, 2.0], dtype=np.float32))
    assert_array_equal(xp.searchsorted(f, 2), np.int64(1))
    # mixed dtypes promote
    assert_array_equal(xp.searchsorted(x1, xp.asarray(np.array([2, 6], dtype=np.int32))),
                       np.array([1, 3]))
    # empty x1 / empty x2 / views
    assert_array_equal(xp.searchsorted(xp.asarray(np.zeros(0)), xp.asarray([1.0, 2.0])), np.zeros(2, np.int64))
    assert_array_equal(xp.searchsorted(xp.asarray([1.0, 2.0]), xp.asarray(np.zeros((0, 2)))),
                       np.zeros((0, 2), np.int64))
    base = np.arange(10.0)
    assert_array_equal(xp.searchsorted(xp.asarray(base)[1::2], xp.asarray(base)[::-3]),
                       np.searchsorted(base[1::2], base[::-3]))


def test_searchsorted_bad_input():
    x1 = xp.asarray([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="one-dimensional"):
        xp.searchsorted(xp.asarray(np.ones((2, 2))), x1)
    with pytest.raises(ValueError, match="side"):
        xp.searchsorted(x1, x1, side="middle")
    with pytest.raises(TypeError):
        xp.searchsorted(xp.asarray([1 + 1j]), x1)
    with pytest.raises(TypeError):
        xp.searchsorted(x1, "a")
    with pytest.raises(TypeError):
        xp.searchsorted(x1, x1, sorter=xp.asarray([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="sorter"):
        xp.searchsorted(x1, x1, sorter=xp.asarray([0, 1]))
    # int64 with uint64 is float64 (NumPy's promotion, beyond the standard's table).
    got = xp.searchsorted(xp.asarray(np.array([1, 5], np.int64)), xp.asarray(np.array([3], np.uint64)))
    assert_array_equal(got, np.searchsorted(np.array([1, 5]), np.array([3], np.uint64)))


# --- where ---------------------------------------------------------------------------------

@pytest.mark.parametrize("d1, d2", [("float32", "float32"), ("int8", "int16"), ("uint8", "int8"),
                                    ("float32", "float64"), ("bool", "bool"),
                                    ("complex64", "float64"), ("int64", "int64")])
def test_where(rng, d1, d2):
    c = rng.random((3, 1, 4)) < 0.5
    a = data(rng, d1, (2, 4), specials=True)
    b = data(rng, d2, (3, 2, 1), specials=True)
    r = xp.where(xp.asarray(c), xp.asarray(a), xp.asarray(b))
    assert_array_equal(r, np.where(c, a, b), dtype=np.result_type(a, b))


def test_where_scalars():
    c = np.array([True, False, True])
    i8 = np.array([1, 2, 3], dtype=np.int8)
    f32 = np.array([1.5, 2.5, -0.0], dtype=np.float32)
    C, I, F = xp.asarray(c), xp.asarray(i8), xp.asarray(f32)
    assert_array_equal(xp.where(C, I, 7), np.array([1, 7, 3], np.int8))
    assert_array_equal(xp.where(C, -1, I), np.array([-1, 2, -1], np.int8))
    assert_array_equal(xp.where(C, F, 2), np.array([1.5, 2, -0.0], np.float32))
    assert_array_equal(xp.where(C, F, np.nan), np.array([1.5, np.nan, -0.0], np.float32))
    assert_array_equal(xp.where(C, F, 1j), np.array([1.5, 1j, -0.0], np.complex64))
    assert_array_equal(xp.where(C, True, xp.asarray(c)), np.array([True, False, True]))
    assert_array_equal(xp.where(xp.asarray(True), F, 0.0), f32)  # 0-d condition broadcasts
    # views
    base = np.arange(12.0).reshape(3, 4)
    X = xp.asarray(base)
    assert_array_equal(xp.where(X[::-1] > 5, X[:, ::-1], X[1:2]),
                       np.where(base[::-1] > 5, base[:, ::-1], base[1:2]))
    # empty
    assert_array_equal(xp.where(xp.asarray(np.zeros(0, bool)), xp.asarray(np.zeros(0)), 1.0), np.zeros(0))


def test_where_bad_input():
    c = xp.asarray([True, False])
    x = xp.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="bool"):
        xp.where(xp.asarray([1, 0]), x, x)
    with pytest.raises(TypeError):
        xp.where(c, 1.0, 2.0)
    # int64 with uint64 is float64 (NumPy's promotion, beyond the standard's table).
    got = xp.where(c, xp.asarray(np.array([1, 2], np.int64)), xp.asarray(np.array([3, 4], np.uint64)))
    assert_array_equal(got, np.where([True, False], np.array([1, 2]), np.array([3, 4], np.uint64)))
    with pytest.raises(ValueError):
        xp.where(c, x, xp.asarray([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError):
        xp.where(c, x, "a")
    with pytest.raises(TypeError):
        xp.where([True, False], x, x)


@given(st.data())
def test_where_property(data_):
    from conftest import xps
    shapes = data_.draw(xps.mutually_broadcastable_shapes(3, max_dims=3, max_side=3)).input_shapes
    dtype = data_.draw(st.sampled_from([xp.int16, xp.float32, xp.uint8]))
    c = data_.draw(xps.arrays(xp.bool, shapes[0]))
    a = data_.draw(xps.arrays(dtype, shapes[1]))
    b = data_.draw(xps.arrays(dtype, shapes[2]))
    assert_array_equal(xp.where(c, a, b), np.where(to_numpy(c), to_numpy(a), to_numpy(b)))


# --- nonzero and searchsorted: layouts, long inputs, NaN (the CUDA scan and search kernels) -

NZ_VIEWS = {
    "contiguous": lambda a: a,
    "transposed": lambda a: a.T,
    "reversed": lambda a: a[::-1, ::-2],
    "offset": lambda a: a[1:, 2:],
}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("view", list(NZ_VIEWS))
def test_nonzero_layouts_every_dtype(rng, dtype, view):
    base = data(rng, dtype, (37, 29), specials=True)
    a = NZ_VIEWS[view](base)
    r = xp.nonzero(NZ_VIEWS[view](xp.asarray(base)))
    for got, exp in zip(r, np.nonzero(a)):
        assert_array_equal(got, exp, dtype="int64")


@pytest.mark.parametrize("shape", [(3_000_001,), (1001, 3001), (7, 11, 13, 17), (1, 1, 5), (2, 3, 4, 5, 6, 7)])
def test_nonzero_long_and_high_rank(rng, shape):
    a = (rng.random(shape) < 0.1).astype(np.float32)
    a[a == 0] = -0.0  # negative zero is zero
    r = xp.nonzero(xp.asarray(a))
    expected = np.nonzero(a)
    assert len(r) == len(expected)
    for got, exp in zip(r, expected):
        assert_array_equal(got, exp, dtype="int64")


def test_nonzero_special_values():
    a = np.array([0.0, -0.0, np.nan, np.inf, 1e-45, 0.0], np.float32)
    assert_array_equal(xp.nonzero(xp.asarray(a))[0], np.nonzero(a)[0])
    c = np.array([0, 1j, -0.0 + 0j, complex(0, -0.0), complex(np.nan, 0), 2], np.complex64)
    assert_array_equal(xp.nonzero(xp.asarray(c))[0], np.nonzero(c)[0])
    for b in (np.zeros(5000, bool), np.ones(5000, bool)):
        assert_array_equal(xp.nonzero(xp.asarray(b))[0], np.nonzero(b)[0])
    z = xp.nonzero(xp.asarray(np.zeros((3, 0, 2))))
    assert len(z) == 3 and all(i.shape == (0,) for i in z)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_layouts_and_long(rng, dtype, side):
    a = np.sort(data(rng, dtype, (2001,)))
    v = data(rng, dtype, (30, 40))
    x1, x2 = xp.asarray(a), xp.asarray(v)
    cases = [(x1, x2, a, v), (x1[::3], x2.T, a[::3], v.T), (x1[1:], x2[::-1, 5:], a[1:], v[::-1, 5:]),
             (x1[:0], x2, a[:0], v), (x1[:1], x2[0], a[:1], v[0])]
    rev = xp.asarray(a[::-1].copy())[::-1]  # a sorted view with a negative stride
    cases.append((rev, x2, a, v))
    for s1, s2, n1, n2 in cases:
        assert_array_equal(xp.searchsorted(s1, s2, side=side),
                           np.searchsorted(n1, n2, side=side), dtype="int64")
    big = np.sort(data(rng, dtype, (100_000,)))
    vals = data(rng, dtype, (50_000,))
    assert_array_equal(xp.searchsorted(xp.asarray(big), xp.asarray(vals), side=side),
                       np.searchsorted(big, vals, side=side), dtype="int64")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_searchsorted_nan_order(dtype):
    a = np.sort(np.array([np.nan, 1.0, -np.inf, np.nan, 0.0, -0.0, np.inf, 2.0, 2.0], dtype))
    v = np.array([[np.nan, np.inf, -np.inf], [0.0, -0.0, 2.0], [3.0, -1.0, np.nan]], dtype)
    for side in ("left", "right"):
        assert_array_equal(xp.searchsorted(xp.asarray(a), xp.asarray(v), side=side),
                           np.searchsorted(a, v, side=side), dtype="int64")
        assert_array_equal(xp.searchsorted(xp.asarray(a), float("nan"), side=side),
                           np.asarray(np.searchsorted(a, np.nan, side=side)), dtype="int64")
    only_nan = np.full(4, np.nan, dtype)
    for side in ("left", "right"):
        assert_array_equal(xp.searchsorted(xp.asarray(only_nan), xp.asarray(v), side=side),
                           np.searchsorted(only_nan, v, side=side), dtype="int64")
