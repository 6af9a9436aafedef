"""take and take_along_axis against NumPy: negative indices, every index dtype, axes, empty
arrays and indices, views, broadcasting (take_along_axis) and bad input."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import arrayx as xp
from conftest import assert_array_equal, to_numpy

ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
       "float32", "float64", "complex64", "complex128"]
INDEX = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def data(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    a = rng.integers(0, 100, size=shape).astype(dtype)
    if dtype.kind == "c":
        a = a + 1j * rng.integers(0, 5, size=shape)
    if dtype.kind in "fc" and a.size:
        a.reshape(-1)[0] = np.nan
    return a.astype(dtype)


def indices_for(rng, n, size, dtype):
    dtype = np.dtype(dtype)
    lo = 0 if dtype.kind == "u" else -n
    return rng.integers(lo, n, size=size).astype(dtype)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_take(rng, dtype, axis):
    a = data(rng, dtype, (3, 4, 5))
    idx = indices_for(rng, a.shape[axis], 7, "int64")
    assert_array_equal(xp.take(xp.asarray(a), xp.asarray(idx), axis=axis), np.take(a, idx, axis=axis))


@pytest.mark.parametrize("index_dtype", INDEX)
def test_take_index_dtypes_and_1d(rng, index_dtype):
    a = data(rng, "float32", (20,))
    idx = indices_for(rng, 20, 9, index_dtype)
    assert_array_equal(xp.take(xp.asarray(a), xp.asarray(idx)), np.take(a, idx))
    # a long axis indexed by a narrow signed dtype: adding n must not overflow the index dtype
    big = data(rng, "int32", (300,))
    idx = np.array([-1, -128, 127, 0], dtype=np.int8) if index_dtype == "int8" else \
        np.array([255 if index_dtype == "uint8" else 299, 0], dtype=index_dtype)
    assert_array_equal(xp.take(xp.asarray(big), xp.asarray(idx)), np.take(big, idx))


def test_take_views_empty_and_repeats(rng):
    base = data(rng, "int16", (6, 8))
    x = xp.asarray(base)
    ibase = np.array([2, -1, 0, 0, -2, 1])
    i = xp.asarray(ibase)
    for view in (lambda t: t[1:], lambda t: t[::-2], lambda t: t[:, 1::2]):
        for axis in (0, 1):
            assert_array_equal(xp.take(view(x), i[::2], axis=axis), np.take(view(base), ibase[::2], axis=axis))
    assert_array_equal(xp.take(x, xp.asarray(np.zeros(0, np.int64)), axis=1), np.zeros((6, 0), np.int16))
    assert_array_equal(xp.take(xp.asarray(np.zeros((0, 3))), xp.asarray([2, -3]), axis=1), np.zeros((0, 2)))


def test_take_bad_input():
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    i = xp.asarray([0, 1])
    with pytest.raises(ValueError, match="axis"):
        xp.take(x, i)  # axis required beyond 1-D
    with pytest.raises(IndexError):
        xp.take(x, i, axis=2)
    with pytest.raises(TypeError):
        xp.take(x, xp.asarray([0.0, 1.0]), axis=0)
    with pytest.raises(TypeError):
        xp.take(x, xp.asarray([True, False]), axis=0)
    with pytest.raises(ValueError, match="one-dimensional"):
        xp.take(x, xp.asarray([[0, 1]]), axis=0)
    with pytest.raises(TypeError):
        xp.take(x, [0, 1], axis=0)
    with pytest.raises(IndexError):
        xp.take(x, xp.asarray([5]), axis=0)  # out of range (NumPy raises; unspecified by the standard)
    with pytest.raises(ValueError):
        xp.take(xp.asarray(1.0), i)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_take_along_axis(rng, dtype, axis):
    a = data(rng, dtype, (3, 4, 5))
    shape = list(a.shape)
    shape[axis] = 6
    idx = indices_for(rng, a.shape[axis], tuple(shape), "int64")
    assert_array_equal(xp.take_along_axis(xp.asarray(a), xp.asarray(idx), axis=axis),
                       np.take_along_axis(a, idx, axis=axis))


@pytest.mark.parametrize("index_dtype", INDEX)
def test_take_along_axis_index_dtypes_and_default_axis(rng, index_dtype):
    a = data(rng, "float64", (3, 7))
    idx = indices_for(rng, 7, (3, 4), index_dtype)
    assert_array_equal(xp.take_along_axis(xp.asarray(a), xp.asarray(idx)), np.take_along_axis(a, idx, axis=-1))


def test_take_along_axis_broadcasting_views_and_empty(rng):
    a = data(rng, "int32", (3, 5))
    x = xp.asarray(a)
    # indices broadcast along the other axes, both ways
    idx = np.array([[4, -1, 0]])
    assert_array_equal(xp.take_along_axis(x, xp.asarray(idx), axis=1), np.take_along_axis(a, idx, axis=1))
    col = a[:, :1]
    idx2 = indices_for(rng, 1, (3, 4), "int64")
    assert_array_equal(xp.take_along_axis(xp.asarray(col), xp.asarray(idx2), axis=1),
                       np.take_along_axis(col, idx2, axis=1))
    row = a[:1]
    idx3 = indices_for(rng, 5, (4, 2), "int64")
    assert_array_equal(xp.take_along_axis(xp.asarray(row), xp.asarray(idx3), axis=1),
                       np.take_along_axis(np.broadcast_to(row, (4, 5)), idx3, axis=1))
    # with the sort order (the common use)
    order = np.argsort(a, axis=0, kind="stable")
    assert_array_equal(xp.take_along_axis(x, xp.argsort(x, axis=0), axis=0), np.take_along_axis(a, order, 0))
    # views
    for view in (lambda t: t[1:], lambda t: t[::-2], lambda t: t[:, ::-1]):
        v = view(a)
        i = indices_for(rng, v.shape[1], (v.shape[0], 3), "int64")
        assert_array_equal(xp.take_along_axis(view(x), xp.asarray(i)[::1], axis=1),
                           np.take_along_axis(v, i, axis=1))
    # empty
    assert_array_equal(xp.take_along_axis(x, xp.asarray(np.zeros((3, 0), np.int64)), axis=1),
                       np.zeros((3, 0), np.int32))
    assert_array_equal(xp.take_along_axis(xp.asarray(np.zeros((0, 2))), xp.asarray(np.zeros((0, 3), np.int64)),
                                          axis=1), np.zeros((0, 3)))


def test_take_along_axis_bad_input():
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="dimensions"):
        xp.take_along_axis(x, xp.asarray([0, 1]), axis=1)
    with pytest.raises(IndexError):
        xp.take_along_axis(x, xp.asarray([[0]]), axis=2)
    with pytest.raises(TypeError):
        xp.take_along_axis(x, xp.asarray([[0.0]]), axis=1)
    with pytest.raises(ValueError, match="broadcast"):
        xp.take_along_axis(x, xp.asarray(np.zeros((3, 1), np.int64)), axis=1)
    with pytest.raises(ValueError):
        xp.take_along_axis(xp.asarray(1.0), xp.asarray(0))
    with pytest.raises(TypeError):
        xp.take_along_axis(x, [[0]], axis=1)


@given(st.data())
def test_take_property(data_):
    from conftest import xps
    x = data_.draw(xps.arrays(xp.float32, xps.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5)))
    axis = data_.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    idx = data_.draw(st.lists(st.integers(-n, n - 1), max_size=6))
    a = to_numpy(x)
    assert_array_equal(xp.take(x, xp.asarray(np.array(idx, dtype=np.int64)), axis=axis),
                       np.take(a, np.array(idx, dtype=np.int64), axis=axis))


# --- the gather kernels: long index arrays (vector path), layouts, bounds ------------------
@pytest.mark.parametrize("dtype", ALL)
def test_take_long_indices_every_dtype(rng, dtype):
    a = data(rng, dtype, (1000,))
    idx = indices_for(rng, 1000, 5000, "int64")  # full blocks of the vector path and a tail
    assert_array_equal(xp.take(xp.asarray(a), xp.asarray(idx)), np.take(a, idx))
    b = data(rng, dtype, (30, 40))
    idx = indices_for(rng, 40, 3000, "int32")
    assert_array_equal(xp.take(xp.asarray(b), xp.asarray(idx), axis=1), np.take(b, idx, axis=1))


@pytest.mark.parametrize("index_dtype", INDEX)
def test_take_long_indices_every_index_dtype(rng, index_dtype):
    a = data(rng, "float64", (100,))
    idx = indices_for(rng, 100, 4099, index_dtype)
    x, i = xp.asarray(a), xp.asarray(idx)
    assert_array_equal(xp.take(x, i), np.take(a, idx))
    # offset and strided index arrays (no aligned vector loads) and negative-stride sources
    assert_array_equal(xp.take(x, i[1:]), np.take(a, idx[1:]))
    assert_array_equal(xp.take(x[::-1], i[::3]), np.take(a[::-1], idx[::3]))
    assert_array_equal(xp.take(x[7:], i[::-1] % 50 if index_dtype[0] == "u" else i[::-1] // 2),
                       np.take(a[7:], idx[::-1] % 50 if index_dtype[0] == "u" else idx[::-1] // 2))


def test_take_uint64_indices_wrap_as_numpy(rng):
    a = data(rng, "int32", (10,))
    idx = np.array([2**64 - 1, 3, 2**64 - 10], dtype=np.uint64)
    assert_array_equal(xp.take(xp.asarray(a), xp.asarray(idx)), np.take(a, idx))


@pytest.mark.parametrize("bad", [10, -11, 2**40, -2**62])
def test_take_out_of_range_raises_and_the_array_lives_on(rng, bad):
    a = data(rng, "float32", (10,))
    x = xp.asarray(a)
    for n in (3, 5000):  # short (tail path) and long (vector path) index arrays
        idx = np.zeros(n, np.int64)
        idx[-2] = bad
        with pytest.raises(IndexError):
            xp.take(x, xp.asarray(idx))
        with pytest.raises(IndexError):
            xp.take(xp.asarray(np.stack([a, a])), xp.asarray(idx), axis=1)
    assert_array_equal(xp.take(x, xp.asarray([9, -10])), np.take(a, [9, -10]))
    with pytest.raises(IndexError):
        xp.take(xp.asarray(np.zeros((0, 3))), xp.asarray([0]), axis=0)  # empty axis


def test_take_along_axis_long_views_and_out_of_range(rng):
    a = data(rng, "complex128", (5, 300))
    idx = indices_for(rng, 300, (5, 700), "int16")
    x = xp.asarray(a)
    assert_array_equal(xp.take_along_axis(x, xp.asarray(idx), axis=1), np.take_along_axis(a, idx, 1))
    assert_array_equal(xp.take_along_axis(x[::-1, ::2], xp.asarray(idx)[:, ::2] // 2, axis=1),
                       np.take_along_axis(a[::-1, ::2], idx[:, ::2] // 2, 1))
    it = indices_for(rng, 5, (300, 3), "int64")
    assert_array_equal(xp.take_along_axis(x.mT, xp.asarray(it), axis=1), np.take_along_axis(a.T, it, 1))
    bad = idx.copy()
    bad[3, 600] = 300
    with pytest.raises(IndexError):
        xp.take_along_axis(x, xp.asarray(bad), axis=1)
    assert_array_equal(xp.take_along_axis(x, xp.asarray(idx[:, :4]), axis=1), np.take_along_axis(a, idx[:, :4], 1))


# --- NumPy index arrays and lists in x[key] (issue 21: what NumPy accepts for its own arrays) ---

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("index_dtype", INDEX)
def test_getitem_numpy_integer_index_arrays(rng, dtype, index_dtype):
    a = data(rng, dtype, (5, 4))
    x = xp.asarray(a)
    i = rng.integers(0, 4, size=(2, 3)).astype(index_dtype)
    assert_array_equal(x[i], a[i])
    assert_array_equal(x[:, i], a[:, i])
    assert_array_equal(x[i, i[::-1]], a[i, i[::-1]])
    assert_array_equal(x[..., np.array([], index_dtype)], a[..., np.array([], index_dtype)])


def test_getitem_numpy_bool_masks_0d_and_scalars(rng):
    a = data(rng, "float64", (3, 4))
    x = xp.asarray(a)
    m = rng.random((3, 4)) < 0.5
    for key in (m, m[:, 0], (slice(None), m[0]), np.zeros((3, 4), bool), np.array(True),
                np.True_, np.False_, np.array(2), np.int64(-1), (np.array(1), np.array([0, 3])),
                (np.array([True, False, True]), np.array([-1, 0])), [1, 0], [True, False, True],
                [[0, 1], [2, 2]], []):
        assert_array_equal(x[key], a[key])
    e = np.zeros((0, 4))
    assert_array_equal(xp.asarray(e)[np.array([], np.int64)], e[np.array([], np.int64)])
    assert_array_equal(xp.asarray(e)[np.zeros(0, bool)], e[np.zeros(0, bool)])
    z = np.array(3.5)
    assert_array_equal(xp.asarray(z)[np.array(True)], z[np.array(True)])


def test_setitem_numpy_index_arrays(rng):
    a = data(rng, "int32", (4, 5))
    x = xp.asarray(a)
    i, m = np.array([3, 0, -1]), rng.random(5) < 0.5
    x[i] = 7
    a[i] = 7
    x[:, m] = xp.asarray(np.int32(-2))
    a[:, m] = -2
    x[np.array([1]), np.array([2, 4])] = xp.asarray(np.array([10, 11], np.int32))
    a[np.array([1]), np.array([2, 4])] = [10, 11]
    x[[0, 2]] = 5
    a[[0, 2]] = 5
    assert_array_equal(x, a)


def test_numpy_index_arrays_bad_input():
    x = xp.asarray(np.arange(6.0))
    with pytest.raises(IndexError, match="integer or boolean"):
        x[np.array([0.0, 1.0])]
    with pytest.raises(IndexError, match="integers or bools"):
        x[[0.5]]
    with pytest.raises(IndexError, match="integers or bools"):
        x[[slice(None)]]
    with pytest.raises(IndexError):
        x[np.array([6])]
    with pytest.raises(IndexError, match="boolean index"):
        x[np.array([True, False])]
