"""sort and argsort: ascending and descending, stability (ties keep their original order in both
directions), NaN placement (last ascending, first descending), axes, views and bad input."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import arrayx as xp
from conftest import assert_array_equal, to_numpy

REAL = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]


def data(rng, dtype, shape, specials=False):
    dtype = np.dtype(dtype)
    a = rng.integers(0 if dtype.kind == "u" else -4, 5, size=shape).astype(dtype)  # many ties
    if specials and a.size and dtype.kind == "f":
        flat = a.reshape(-1)
        picks = rng.integers(0, flat.size, size=max(1, flat.size // 5))
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf]), size=picks.size)
    return a


def _key(v):
    """Sort key: NaN above everything (ascending NaN last)."""
    return (1, 0.0) if v != v else (0, v)


def reference_argsort(a, axis, descending):
    """Stable argsort along `axis` in pure Python (ties in original order in both directions)."""
    moved = np.moveaxis(a, axis, -1)
    out = np.empty(moved.shape, dtype=np.int64)
    for idx in np.ndindex(moved.shape[:-1]):
        row = moved[idx].tolist()
        order = list(range(len(row)))
        if descending:
            # largest first; reverse=True keeps equal elements in their original order
            order.sort(key=lambda i: _key(row[i]), reverse=True)
        else:
            order.sort(key=lambda i: _key(row[i]))
        out[idx] = order
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("descending", [False, True])
def test_argsort_stable(rng, dtype, axis, descending):
    a = data(rng, dtype, (4, 9), specials=True)
    r = xp.argsort(xp.asarray(a), axis=axis, descending=descending)
    assert_array_equal(r, reference_argsort(a, axis, descending), dtype="int64")


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("axis", [-1, 0, -2])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("stable", [False, True])
def test_sort(rng, dtype, axis, descending, stable):
    a = data(rng, dtype, (5, 7), specials=True)
    r = xp.sort(xp.asarray(a), axis=axis, descending=descending, stable=stable)
    expected = np.take_along_axis(a, reference_argsort(a, axis, descending), axis=axis)
    assert_array_equal(r, expected)


@pytest.mark.parametrize("descending", [False, True])
def test_argsort_unstable_is_a_valid_order(rng, descending):
    a = data(rng, "float64", (3, 50), specials=True)
    r = to_numpy(xp.argsort(xp.asarray(a), descending=descending, stable=False))
    assert r.dtype == np.int64
    for row, order in zip(a, r):
        assert sorted(order) == list(range(50))
        expected = row[reference_argsort(row, 0, descending)]
        np.testing.assert_array_equal(row[order], expected)


def test_nan_placement_and_signed_zeros():
    a = np.array([np.nan, 1.0, -np.inf, np.nan, 0.0, -0.0, np.inf])
    x = xp.asarray(a)
    asc = to_numpy(xp.sort(x))
    np.testing.assert_array_equal(asc[:5], [-np.inf, 0.0, 0.0, 1.0, np.inf])
    assert np.isnan(asc[5:]).all()
    desc = to_numpy(xp.sort(x, descending=True))
    assert np.isnan(desc[:2]).all()
    np.testing.assert_array_equal(desc[2:], [np.inf, 1.0, 0.0, 0.0, -np.inf])
    # stable: -0.0 and 0.0 compare equal and keep their original order in both directions
    assert np.signbit(asc[1:3]).tolist() == [False, True]
    assert np.signbit(desc[4:6]).tolist() == [False, True]
    assert_array_equal(xp.argsort(x), np.array([2, 4, 5, 1, 6, 0, 3]))
    assert_array_equal(xp.argsort(x, descending=True), np.array([0, 3, 6, 1, 4, 5, 2]))


def test_views_empty_and_small(rng):
    base = data(rng, "int32", (6, 8))
    x = xp.asarray(base)
    for view in (lambda t: t[1:], lambda t: t[::-2], lambda t: t[:, ::-3], lambda t: t[::2, 1::2]):
        for axis in (0, 1):
            for descending in (False, True):
                e = view(base)
                assert_array_equal(xp.argsort(view(x), axis=axis, descending=descending),
                                   reference_argsort(e, axis, descending))
                assert_array_equal(xp.sort(view(x), axis=axis, descending=descending),
                                   np.take_along_axis(e, reference_argsort(e, axis, descending), axis))
    for shape in ((0,), (3, 0), (0, 4), (1,), (4, 1)):
        a = np.zeros(shape, np.float32)
        for descending in (False, True):
            assert_array_equal(xp.sort(xp.asarray(a), descending=descending), a)
            assert_array_equal(xp.argsort(xp.asarray(a), axis=0, descending=descending),
                               np.zeros(shape, np.int64) if shape[0] <= 1 else
                               np.broadcast_to(np.arange(shape[0])[:, None], shape).astype(np.int64))


@pytest.mark.parametrize("fn", ["sort", "argsort"])
def test_bad_input(fn):
    f = getattr(xp, fn)
    with pytest.raises(TypeError, match=fn):
        f(xp.asarray([1 + 1j, 2]))
    with pytest.raises(TypeError):
        f(xp.asarray([True, False]))
    with pytest.raises(IndexError):
        f(xp.asarray(np.ones((2, 3))), axis=2)
    with pytest.raises(TypeError):
        f(xp.asarray(np.ones((2, 3))), axis=None)
    with pytest.raises(ValueError):
        f(xp.asarray(1.0))
    with pytest.raises(TypeError):
        f(np.ones(3))


@given(st.data())
def test_argsort_property(data_):
    from conftest import xps
    dtype = data_.draw(st.sampled_from([xp.int8, xp.float32, xp.uint16]))
    x = data_.draw(xps.arrays(dtype, xps.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6),
                              elements={"min_value": 0, "max_value": 3}))
    axis = data_.draw(st.integers(-x.ndim, x.ndim - 1))
    descending = data_.draw(st.booleans())
    a = to_numpy(x)
    assert_array_equal(xp.argsort(x, axis=axis, descending=descending),
                       reference_argsort(a, axis, descending).astype(np.int64))


# --- every real dtype, n-d along every axis, views, signed zeros, large inputs ----------------

def numpy_argsort(a, axis, descending):
    """NumPy's stable argsort, descending as the exact reverse by value with ties in order."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    flip = [slice(None)] * a.ndim
    flip[axis] = slice(None, None, -1)
    flip = tuple(flip)
    return (a.shape[axis] - 1) - np.argsort(a[flip], axis=axis, kind="stable")[flip]


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_argsort_3d_every_axis(rng, dtype, axis, descending):
    a = data(rng, dtype, (3, 4, 5), specials=True)
    x = xp.asarray(a)
    expected = reference_argsort(a, axis, descending)
    assert_array_equal(xp.argsort(x, axis=axis, descending=descending), expected)
    assert_array_equal(xp.sort(x, axis=axis, descending=descending),
                       np.take_along_axis(a, expected, axis=axis))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("descending", [False, True])
def test_signed_zeros_nan_and_inf_in_rows(dtype, axis, descending):
    # zeros of both signs compare equal: a stable sort keeps them in their original order,
    # including in the rows of a 2-D array (the multi-row path)
    row = np.array([0.0, np.nan, -0.0, -np.inf, 0.0, -np.nan, np.inf, -0.0, 1.0, -1.0], dtype)
    a = np.stack([row, row[::-1], np.roll(row, 3)])
    a = a if axis == 1 else a.T.copy()
    x = xp.asarray(a)
    order = numpy_argsort(a, axis, descending)
    assert_array_equal(xp.argsort(x, axis=axis, descending=descending), order)
    assert_array_equal(xp.sort(x, axis=axis, descending=descending),
                       np.take_along_axis(a, order, axis=axis))  # signs of zeros included


@pytest.mark.parametrize("dtype", ["float64", "int16", "uint64"])
def test_views_with_offsets_and_negative_strides(rng, dtype):
    base = data(rng, dtype, (7, 9, 4), specials=True)
    x = xp.asarray(base)
    views = (lambda t: t[1:, ::-2, 1], lambda t: t[::-1, 2:, ::-1], lambda t: t[:, ::-3, :].mT,
             lambda t: t[3, ::-1])
    for view in views:
        e = view(base)
        for axis in range(-e.ndim, e.ndim):
            for descending in (False, True):
                order = numpy_argsort(e, axis, descending)
                assert_array_equal(xp.argsort(view(x), axis=axis, descending=descending), order)
                assert_array_equal(xp.sort(view(x), axis=axis, descending=descending),
                                   np.take_along_axis(e, order, axis=axis))


def test_all_ties_keep_their_order():
    for dtype in ("int8", "float32", "uint32"):
        a = np.ones((3, 300), dtype)
        for axis in (0, 1):
            for descending in (False, True):
                assert_array_equal(xp.argsort(xp.asarray(a), axis=axis, descending=descending),
                                   np.broadcast_to(np.arange(a.shape[axis]).reshape(
                                       (-1, 1) if axis == 0 else (1, -1)), a.shape).astype(np.int64))


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "float64"])
@pytest.mark.parametrize("descending", [False, True])
def test_large_1d(rng, dtype, descending):
    n = 1 << 20  # many blocks of every pass of the GPU's radix sort
    a = (rng.normal(size=n) * 1000).astype(dtype) if dtype.startswith("float") else \
        rng.integers(0, 200 if dtype == "uint8" else 1 << 40, n).astype(dtype)
    if dtype.startswith("float"):
        a[rng.integers(0, n, 1000)] = np.nan
        a[rng.integers(0, n, 1000)] = -0.0
        a[rng.integers(0, n, 1000)] = 0.0
    x = xp.asarray(a)
    order = numpy_argsort(a, 0, descending)
    assert_array_equal(xp.argsort(x, descending=descending), order)
    assert_array_equal(xp.sort(x, descending=descending), a[order])


@pytest.mark.parametrize("shape, axis", [((1024, 1024), 0), ((1024, 1024), 1), ((70000, 3), 1),
                                         ((3, 70000), 0), ((2, 1 << 19), 1)])
def test_large_rows(rng, shape, axis):
    a = rng.integers(-50, 50, shape).astype(np.float32)
    a[rng.random(shape) < 0.01] = np.nan
    x = xp.asarray(a)
    for descending in (False, True):
        order = numpy_argsort(a, axis, descending)
        assert_array_equal(xp.argsort(x, axis=axis, descending=descending), order)
        assert_array_equal(xp.sort(x, axis=axis, descending=descending),
                           np.take_along_axis(a, order, axis=axis))


def test_empty_and_length_one_axes():
    for shape, axis in (((0,), 0), ((0, 5), 1), ((5, 0), 1), ((5, 0), 0), ((1, 6), 0), ((6, 1), 1),
                        ((2, 1, 3), 1)):
        a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)[..., ::-1]
        for descending in (False, True):
            assert_array_equal(xp.sort(xp.asarray(a), axis=axis, descending=descending),
                               np.take_along_axis(a, numpy_argsort(a, axis, descending), axis))
            assert_array_equal(xp.argsort(xp.asarray(a), axis=axis, descending=descending),
                               numpy_argsort(a, axis, descending))
