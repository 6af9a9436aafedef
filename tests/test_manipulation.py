"""Manipulation functions against NumPy: broadcast_arrays/_shapes/_to, concat, stack,
expand_dims, squeeze, flip, permute_dims, moveaxis, reshape, roll, repeat, tile, unstack."""

import numpy as np
import pytest

import arrayx as xp
from conftest import ALL_DTYPES, DEVICE, assert_array_equal, make_data, to_numpy


@pytest.fixture
def a3():
    return make_data(xp.float64, (2, 3, 4), np.random.default_rng(30))


# --- broadcasting --------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", [[(3,), (2, 1)], [(), (4, 5)], [(1, 0), (3, 1)], [(5, 1, 2), (4, 1), (2,)],
                                    [(2, 3)], [(1,), (1, 1, 1)]])
def test_broadcast_shapes_and_arrays(shapes):
    expected = np.broadcast_shapes(*shapes)
    assert xp.broadcast_shapes(*shapes) == expected
    rng = np.random.default_rng(31)
    arrays = [make_data(xp.int32, s, rng) for s in shapes]
    got = xp.broadcast_arrays(*[xp.asarray(a) for a in arrays])
    assert len(got) == len(arrays)
    for g, e in zip(got, np.broadcast_arrays(*arrays)):
        assert_array_equal(g, e)


@pytest.mark.parametrize("shapes", [[(3,), (4,)], [(2, 3), (3, 2)], [(0,), (2,)]])
def test_broadcast_shapes_incompatible(shapes):
    with pytest.raises(ValueError):
        xp.broadcast_shapes(*shapes)
    with pytest.raises(ValueError):
        xp.broadcast_arrays(*[xp.zeros(s) for s in shapes])


@pytest.mark.parametrize("src, dst", [((3,), (2, 3)), ((), (2, 2)), ((1, 3), (4, 3)), ((2, 1), (2, 0)),
                                      ((4,), (4,)), ((1,), (2, 3, 1))])
def test_broadcast_to(src, dst):
    a = make_data(xp.complex64, src, np.random.default_rng(32))
    assert_array_equal(xp.broadcast_to(xp.asarray(a), dst), np.broadcast_to(a, dst))


def test_broadcast_to_of_view_and_errors():
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a)
    assert_array_equal(xp.broadcast_to(x[:, 1:2], (3, 5)), np.broadcast_to(a[:, 1:2], (3, 5)))
    assert_array_equal(xp.broadcast_to(x[::-2, 0], (2, 2)), np.broadcast_to(a[::-2, 0], (2, 2)))
    for bad in [(4,), (3, 3), (2, 4)]:
        with pytest.raises(ValueError):
            xp.broadcast_to(x, bad)


# --- concat / stack ------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1, 2, None])
def test_concat(axis, a3):
    rng = np.random.default_rng(33)
    b = make_data(xp.float64, (2, 3, 4), rng)
    x, y = xp.asarray(a3), xp.asarray(b)
    assert_array_equal(xp.concat([x, y], axis=axis), np.concatenate([a3, b], axis=axis))
    assert_array_equal(xp.concat((x, y, x), axis=axis), np.concatenate([a3, b, a3], axis=axis))
    assert_array_equal(xp.concat([x], axis=axis), np.concatenate([a3], axis=axis))


def test_concat_views_uneven_and_promotion():
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    b = np.arange(6, dtype=np.int8).reshape(3, 2)
    x, y = xp.asarray(a), xp.asarray(b)
    assert_array_equal(xp.concat([x[:, ::-2], y], axis=1), np.concatenate([a[:, ::-2], b.astype(np.int16)], axis=1))
    assert_array_equal(xp.concat([x.mT, y.mT], axis=0), np.concatenate([a.T, b.T.astype(np.int16)], axis=0))
    assert_array_equal(xp.concat([x[:0], x[1:]]), a[1:])
    f = xp.concat([xp.asarray([1.0], dtype=xp.float32), xp.asarray([2.0], dtype=xp.float64)])
    assert_array_equal(f, np.array([1.0, 2.0]))
    u = xp.concat([xp.asarray([1], dtype=xp.uint8), xp.asarray([-1], dtype=xp.int8)])
    assert_array_equal(u, np.array([1, -1], dtype=np.int16))
    # Mixed kinds promote as in NumPy (beyond the standard's table).
    assert_array_equal(xp.concat([xp.asarray([1]), xp.asarray([1.5])]), np.array([1.0, 1.5]))
    with pytest.raises(ValueError):
        xp.concat([x, y], axis=0)
    with pytest.raises(ValueError):
        xp.concat([xp.asarray(1.0), xp.asarray(2.0)])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_concat_stack_dtypes(dtype):
    rng = np.random.default_rng(34)
    a, b = make_data(dtype, (3, 2), rng), make_data(dtype, (3, 2), rng)
    x, y = xp.asarray(a), xp.asarray(b)
    assert_array_equal(xp.concat([x, y], axis=1), np.concatenate([a, b], axis=1))
    assert_array_equal(xp.stack([x, y], axis=1), np.stack([a, b], axis=1))


@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4])
def test_stack(axis, a3):
    b = a3 * 2
    x, y = xp.asarray(a3), xp.asarray(b)
    assert_array_equal(xp.stack([x, y, x], axis=axis), np.stack([a3, b, a3], axis=axis))


def test_stack_scalars_views_and_errors():
    x = xp.asarray([1.0, 2.0, 3.0])
    assert_array_equal(xp.stack([x[0], x[2]]), np.array([1.0, 3.0]))
    assert_array_equal(xp.stack([x[::-1], x]), np.array([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0]]))
    with pytest.raises(ValueError):
        xp.stack([x, x[1:]])
    with pytest.raises((ValueError, IndexError)):
        xp.stack([x, x], axis=3)


# --- expand_dims / squeeze -----------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4, (0, 2), (-1, 0), (1, 2, 3)])
def test_expand_dims(axis, a3):
    x = xp.asarray(a3)
    assert_array_equal(xp.expand_dims(x, axis=axis), np.expand_dims(a3, axis))


def test_expand_dims_errors():
    x = xp.zeros((2, 3))
    with pytest.raises(IndexError):
        xp.expand_dims(x, axis=3)
    with pytest.raises(IndexError):
        xp.expand_dims(x, axis=-4)
    with pytest.raises(ValueError):
        xp.expand_dims(x, axis=(0, 0))


@pytest.mark.parametrize("axis", [0, 2, -1, (0, 2), (2, 0, 3)])
def test_squeeze(axis):
    a = make_data(xp.int16, (1, 3, 1, 1), np.random.default_rng(35))
    assert_array_equal(xp.squeeze(xp.asarray(a), axis=axis), np.squeeze(a, axis=axis))


def test_squeeze_errors():
    x = xp.zeros((1, 3))
    with pytest.raises(ValueError):
        xp.squeeze(x, axis=1)
    with pytest.raises((IndexError, ValueError)):
        xp.squeeze(x, axis=2)


# --- flip / permute_dims / moveaxis --------------------------------------------------------
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), ()])
def test_flip(axis, a3):
    x = xp.asarray(a3)
    assert_array_equal(xp.flip(x, axis=axis), np.flip(a3, axis=axis))
    assert_array_equal(xp.flip(x[:, 1:, ::2], axis=axis), np.flip(a3[:, 1:, ::2], axis=axis))


def test_flip_0d_and_empty():
    assert_array_equal(xp.flip(xp.asarray(5.0)), np.asarray(5.0))
    assert_array_equal(xp.flip(xp.zeros((0, 3))), np.zeros((0, 3)))


@pytest.mark.parametrize("axes", [(0, 1, 2), (2, 0, 1), (1, 0, 2), (-1, 0, 1), (2, 1, 0)])
def test_permute_dims(axes, a3):
    x = xp.asarray(a3)
    assert_array_equal(xp.permute_dims(x, axes), np.transpose(a3, axes))
    assert_array_equal(xp.permute_dims(x[::-1, :, 1:], axes), np.transpose(a3[::-1, :, 1:], axes))


def test_permute_dims_errors():
    x = xp.zeros((2, 3))
    for bad in [(0,), (0, 0), (0, 2), (0, 1, 2)]:
        with pytest.raises((ValueError, IndexError)):
            xp.permute_dims(x, bad)


@pytest.mark.parametrize("src, dst", [(0, 2), (-1, 0), ((0, 1), (2, 0)), ((0, 2), (1, 0)), (1, 1)])
def test_moveaxis(src, dst, a3):
    assert_array_equal(xp.moveaxis(xp.asarray(a3), src, dst), np.moveaxis(a3, src, dst))


# --- reshape -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(24,), (-1,), (4, 6), (4, -1), (2, 3, 2, 2), (1, 24, 1), (-1, 2, 3)])
def test_reshape(shape, a3):
    x = xp.asarray(a3)
    assert_array_equal(xp.reshape(x, shape), np.reshape(a3, shape))
    # non-contiguous sources need a copy but give the same values
    assert_array_equal(xp.reshape(x.mT, shape), np.reshape(np.swapaxes(a3, -1, -2), shape))
    assert_array_equal(xp.reshape(xp.flip(x, axis=1), shape), np.reshape(np.flip(a3, axis=1), shape))


def test_reshape_zero_size_and_0d():
    assert_array_equal(xp.reshape(xp.zeros((0, 3)), (3, 0)), np.zeros((3, 0)))
    assert_array_equal(xp.reshape(xp.zeros((0, 3)), (1, 0, 3)), np.zeros((1, 0, 3)))
    assert_array_equal(xp.reshape(xp.asarray(7), (1, 1)), np.full((1, 1), 7))
    assert_array_equal(xp.reshape(xp.asarray([7]), ()), np.asarray(7))


def test_reshape_copy_semantics():
    a = np.arange(12.0)
    x = xp.asarray(a)
    v = xp.reshape(x, (3, 4), copy=False)
    v[0, 0] = -1.0
    assert float(x[0]) == -1.0  # a view
    c = xp.reshape(x, (3, 4), copy=True)
    c[0, 1] = -2.0
    assert float(x[1]) == 1.0  # a copy
    n = xp.reshape(x, (3, 4))
    n[2, 3] = -3.0
    assert float(x[11]) == -3.0  # copy=None: a view when possible
    with pytest.raises(ValueError):
        xp.reshape(xp.reshape(x, (3, 4)).mT, (12,), copy=False)
    # copy=True of the same shape is still a copy
    s = xp.reshape(x, (12,), copy=True)
    s[5] = 99.0
    assert float(x[5]) == 5.0


def test_reshape_errors():
    x = xp.zeros((2, 3))
    for bad in [(5,), (4, -1), (-1, -1), (2, -2), (7, 0)]:
        with pytest.raises(ValueError):
            xp.reshape(x, bad)


# --- roll ----------------------------------------------------------------------------------
@pytest.mark.parametrize("shift, axis", [(1, None), (-5, None), (30, None), (1, 0), (-2, 2), (3, -1),
                                         ((1, 2), (0, 2)), ((1, -1), (2, 2)), (2, (0, 1)), (0, None)])
def test_roll(shift, axis, a3):
    x = xp.asarray(a3)
    assert_array_equal(xp.roll(x, shift, axis=axis), np.roll(a3, shift, axis=axis))
    assert_array_equal(xp.roll(x[:, ::-1], shift, axis=axis), np.roll(a3[:, ::-1], shift, axis=axis))


def test_roll_empty_and_0d():
    assert_array_equal(xp.roll(xp.zeros((0, 2)), 3), np.zeros((0, 2)))
    assert_array_equal(xp.roll(xp.asarray(3.0), 1), np.asarray(3.0))


# --- repeat --------------------------------------------------------------------------------
@pytest.mark.parametrize("repeats, axis", [(2, None), (0, None), (3, 0), (2, -1), (1, 1)])
def test_repeat_int(repeats, axis, a3):
    x = xp.asarray(a3)
    assert_array_equal(xp.repeat(x, repeats, axis=axis), np.repeat(a3, repeats, axis=axis))
    assert_array_equal(xp.repeat(x[:, ::2], repeats, axis=axis), np.repeat(a3[:, ::2], repeats, axis=axis))


def test_repeat_array():
    a = np.arange(6).reshape(2, 3)
    x = xp.asarray(a)
    r = np.array([2, 0, 1])
    assert_array_equal(xp.repeat(x, xp.asarray(r), axis=1), np.repeat(a, r, axis=1))
    assert_array_equal(xp.repeat(x, xp.asarray([3]), axis=0), np.repeat(a, 3, axis=0))
    flat = np.array([1, 0, 2, 1, 1, 0])
    assert_array_equal(xp.repeat(x, xp.asarray(flat)), np.repeat(a, flat))
    with pytest.raises(ValueError):
        xp.repeat(x, xp.asarray([1, 2]), axis=1)
    with pytest.raises(ValueError):
        xp.repeat(x, -1)
    with pytest.raises(TypeError):
        xp.repeat(x, xp.asarray([1.0, 2.0, 3.0]), axis=1)


# --- tile ----------------------------------------------------------------------------------
@pytest.mark.parametrize("reps", [(2,), (1, 1, 1), (2, 1, 3), (0, 2), (3, 1, 1, 2), ()])
def test_tile(reps, a3):
    x = xp.asarray(a3)
    assert_array_equal(xp.tile(x, reps), np.tile(a3, reps))
    assert_array_equal(xp.tile(x.mT, reps), np.tile(np.swapaxes(a3, -1, -2), reps))


def test_tile_0d_and_bool():
    assert_array_equal(xp.tile(xp.asarray(2), (3,)), np.tile(np.asarray(2), (3,)))
    b = np.array([True, False])
    assert_array_equal(xp.tile(xp.asarray(b), (2, 2)), np.tile(b, (2, 2)))


def test_tile_result_is_independent():
    x = xp.asarray([1.0, 2.0])
    t = xp.tile(x, (2,))
    t[0] = 50.0
    assert to_numpy(x).tolist() == [1.0, 2.0]
    assert to_numpy(t).tolist() == [50.0, 2.0, 1.0, 2.0]


# --- unstack -------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_unstack(axis, a3):
    x = xp.asarray(a3)
    got = xp.unstack(x, axis=axis)
    assert isinstance(got, tuple)
    expected = [np.take(a3, i, axis=axis) for i in range(a3.shape[axis])]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_array_equal(g, e)


def test_unstack_errors_and_empty():
    with pytest.raises(ValueError):
        xp.unstack(xp.asarray(1.0))
    assert xp.unstack(xp.zeros((0, 3))) == ()
    assert [g.shape for g in xp.unstack(xp.zeros((2, 0)), axis=0)] == [(0,), (0,)]


def test_results_on_default_device(a3):
    x = xp.asarray(a3)
    for r in [xp.reshape(x, (-1,)), xp.flip(x), xp.roll(x, 1), xp.tile(x, (2,)), xp.repeat(x, 2),
              xp.concat([x, x]), xp.stack([x, x]), xp.expand_dims(x, axis=0), xp.moveaxis(x, 0, 1),
              xp.broadcast_to(x, (2, 2, 3, 4))]:
        assert r.device == DEVICE


# --- the data-movement kernels: layouts, every axis, pieces --------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_concat_non_contiguous_inputs_every_axis(axis):
    rng = np.random.default_rng(36)
    a = make_data(xp.float32, (4, 5, 200), rng)
    b = make_data(xp.float32, (200, 5, 4), rng)
    c = make_data(xp.float32, (8, 10, 400), rng)
    x, y, z = xp.asarray(a), xp.asarray(b), xp.asarray(c)
    views = [x, xp.permute_dims(y, (2, 1, 0)), z[::2, 1::2, ::-2], z[4:, :5, 100:300], x]
    expected = [a, b.transpose(2, 1, 0), c[::2, 1::2, ::-2], c[4:, :5, 100:300], a]
    assert_array_equal(xp.concat(views, axis=axis), np.concatenate(expected, axis=axis))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_concat_wide_rows_and_empty_pieces(dtype):
    rng = np.random.default_rng(37)
    a, b = make_data(dtype, (3, 300), rng), make_data(dtype, (3, 0), rng)
    c = make_data(dtype, (3, 129), rng)
    x, y, z = xp.asarray(a), xp.asarray(b), xp.asarray(c)
    assert_array_equal(xp.concat([x, y, z, x[:, 1:]], axis=1), np.concatenate([a, b, c, a[:, 1:]], axis=1))
    assert_array_equal(xp.concat([x[:0], x[1:]], axis=0), a[1:])
    assert_array_equal(xp.concat([y, y], axis=0), np.zeros((6, 0), dtype))


@pytest.mark.parametrize("shift, axis", [((1, -2, 3), (0, 1, 2)), (-7, (0, 2)), (10**12 + 1, 2),
                                         (-(10**15), None), ((2, 3), (1, 1)), ((4, -4), (0, 0)),
                                         (5, -3), ((-1, 1), (2, 0))])
@pytest.mark.parametrize("dtype", [xp.bool, xp.int8, xp.float32, xp.complex128], ids=str)
def test_roll_multiple_axes_and_huge_shifts(shift, axis, dtype):
    a = make_data(dtype, (3, 4, 130), np.random.default_rng(38))
    x = xp.asarray(a)
    assert_array_equal(xp.roll(x, shift, axis=axis), np.roll(a, shift, axis=axis))
    v = a[::-1, 1:, ::3]
    assert_array_equal(xp.roll(x[::-1, 1:, ::3], shift, axis=axis), np.roll(v, shift, axis=axis))
    assert_array_equal(xp.roll(x.mT, shift, axis=axis), np.roll(np.swapaxes(a, -1, -2), shift, axis=axis))


@pytest.mark.parametrize("rdtype", [xp.int64, xp.uint8, xp.int16, xp.uint64])
def test_repeat_array_dtypes_axes_and_views(rdtype):
    rng = np.random.default_rng(39)
    a = make_data(xp.complex64, (4, 6, 5), rng)
    v = a[::-1, ::2]
    x = xp.asarray(a)
    i64 = np.int64  # NumPy's reference refuses uint64 counts
    for axis in (0, 1, 2):
        r = rng.integers(0, 4, size=a.shape[axis]).astype(rdtype)
        assert_array_equal(xp.repeat(x, xp.asarray(r), axis=axis), np.repeat(a, r.astype(i64), axis=axis))
        rv = r[:v.shape[axis]]
        assert_array_equal(xp.repeat(x[::-1, ::2], xp.asarray(rv), axis=axis),
                           np.repeat(v, rv.astype(i64), axis=axis))
    long = rng.integers(0, 5, size=2000).astype(rdtype)
    b = make_data(xp.float64, (2000,), rng)
    assert_array_equal(xp.repeat(xp.asarray(b), xp.asarray(long)), np.repeat(b, long.astype(i64)))
    zeros = np.zeros(6, rdtype)
    assert_array_equal(xp.repeat(x, xp.asarray(zeros), axis=1), np.repeat(a, 0, axis=1))
    assert_array_equal(xp.repeat(x, xp.asarray(np.array(2, rdtype)), axis=1), np.repeat(a, 2, axis=1))
    assert_array_equal(xp.repeat(x, xp.asarray(np.array([3], rdtype))), np.repeat(a, 3))


def test_repeat_array_negative_and_empty():
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError):
        xp.repeat(x, xp.asarray([1, -1, 2]), axis=1)
    with pytest.raises(ValueError):
        xp.repeat(x, xp.asarray(-2))
    with pytest.raises(ValueError):
        xp.repeat(x, xp.asarray([-1]))
    e = xp.zeros((0, 3))
    assert_array_equal(xp.repeat(e, xp.asarray(np.zeros(0, np.int64)), axis=0), np.zeros((0, 3)))
    assert_array_equal(xp.repeat(e, xp.asarray([1, 2, 0]), axis=1), np.zeros((0, 3)))
    assert_array_equal(xp.repeat(xp.asarray([1.0, 2.0]), xp.asarray([0, 0])), np.zeros(0))


# --- argument checks (issue 20) and list axes (issue 21) -------------------------------------
def test_repeat_and_tile_refuse_results_past_the_address_space():
    x = xp.ones(3)
    for fn in (lambda: xp.repeat(x, 2**62), lambda: xp.repeat(xp.ones(1), 2**62),
               lambda: xp.repeat(xp.ones((2, 2)), 2**62, axis=1),
               lambda: xp.repeat(xp.ones(2), xp.asarray([2**62, 2**62])),
               lambda: xp.repeat(xp.ones(2), xp.asarray([2**63, 1], dtype=xp.uint64)),
               lambda: xp.tile(x, (2**62,)), lambda: xp.tile(xp.ones((2, 2)), (2**31, 2**31))):
        with pytest.raises(ValueError, match=r"the result would have \d+ elements"):
            fn()
    # the limit is in bytes: int8 is refused only past 2**63 - 1 elements
    with pytest.raises(ValueError, match="9223372036854775808 elements of int8"):
        xp.repeat(xp.ones(2, dtype=xp.int8), 2**62)
    # a zero count keeps the result empty, however large the other factor
    assert xp.repeat(xp.ones(0), 2**62).shape == (0,)


def test_repeat_and_tile_argument_types():
    x = xp.asarray([1.0, 2.0])
    for bad in (1.5, None, "2", True, [2]):
        with pytest.raises(TypeError, match="repeats"):
            xp.repeat(x, bad)
    with pytest.raises(ValueError, match="non-negative, got -1"):
        xp.repeat(x, -1)
    with pytest.raises(ValueError, match="count of -3"):
        xp.repeat(x, xp.asarray([1, -3]))
    assert_array_equal(xp.tile(x, 2), np.tile([1.0, 2.0], 2))  # an int, as NumPy takes it
    assert_array_equal(xp.tile(x, [2, 1]), np.tile([1.0, 2.0], [2, 1]))
    for bad in (1.5, None, (2, None), (2.0,), "2"):
        with pytest.raises(TypeError, match="tile.*repetitions"):
            xp.tile(x, bad)


def test_shapes_checked_with_the_argument_named():
    x = xp.ones((1, 2))
    assert_array_equal(xp.broadcast_to(xp.ones(1), 3), np.ones(3))
    assert xp.broadcast_shapes((2, 1), [1, 3], 3) == np.broadcast_shapes((2, 1), (1, 3), 3)
    for shapes, err, argname in [(((1,), (None,)), TypeError, r"shapes\[1\]"),
                                 (((1, 2.0),), TypeError, r"shapes\[0\]"),
                                 (((1, 2), (-1, 2)), ValueError, r"shapes\[1\]"),
                                 (((1,), "ab"), TypeError, r"shapes\[1\]")]:
        with pytest.raises(err, match=f"broadcast_shapes.*{argname}"):
            xp.broadcast_shapes(*shapes)
    for bad, err in [(None, TypeError), ((2, 2.0), TypeError), ((2, -2), ValueError), (1.0, TypeError)]:
        with pytest.raises(err, match="broadcast_to.*shape"):
            xp.broadcast_to(x, bad)
    for bad in ((2, 1.0), None, 2.0, (2, None)):
        with pytest.raises(TypeError, match="reshape.*shape"):
            xp.reshape(x, bad)
    assert xp.reshape(x, [2, 1]).shape == (2, 1)


def test_axes_as_lists_and_bad_axes():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = xp.asarray(a)
    assert_array_equal(xp.moveaxis(x, [0, 2], (-2, -1)), np.moveaxis(a, [0, 2], (-2, -1)))
    assert_array_equal(xp.permute_dims(x, [2, 0, 1]), np.transpose(a, [2, 0, 1]))
    assert_array_equal(xp.flip(x, axis=[0, 2]), np.flip(a, axis=(0, 2)))
    assert_array_equal(xp.squeeze(xp.ones((1, 2, 1)), axis=[0, 2]), np.ones(2))
    assert_array_equal(xp.expand_dims(x, axis=[0, -1]), np.expand_dims(a, axis=(0, -1)))
    assert_array_equal(xp.roll(x, [1, 2], axis=[0, 2]), np.roll(a, (1, 2), axis=(0, 2)))
    assert_array_equal(xp.permute_dims(xp.ones(3), 0), np.ones(3))
    for fn, argname in [(lambda: xp.permute_dims(x, 1.0), "axes"), (lambda: xp.permute_dims(x, None), "axes"),
                        (lambda: xp.permute_dims(x, (0, 1.0, 2)), "axes"),
                        (lambda: xp.moveaxis(x, 0.0, 1), "source"), (lambda: xp.moveaxis(x, 0, [None]), "destination"),
                        (lambda: xp.flip(x, axis=1.5), "axis"), (lambda: xp.expand_dims(x, axis="0"), "axis"),
                        (lambda: xp.roll(x, 1.5, axis=0), "shift"), (lambda: xp.roll(x, 1.5), "shift")]:
        with pytest.raises(TypeError, match=argname):
            fn()
    with pytest.raises(ValueError, match="permute_dims.*axes"):
        xp.permute_dims(x, 1)
    with pytest.raises(ValueError, match="repeated axis"):
        xp.flip(x, axis=[1, -2])
