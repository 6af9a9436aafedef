"""Statistical functions (sum, prod, max, min, mean, var, std, cumulative_sum, cumulative_prod)
against NumPy: special values, empty and 0-d arrays, negative and tuple axes, keepdims,
strided views, result dtypes and bad input."""

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import arrayx as xp
from conftest import assert_allclose, assert_array_equal, to_numpy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
TOL = {"float32": 2e-5, "float64": 1e-12, "complex64": 2e-5, "complex128": 1e-12}


def data(rng, dtype, shape, specials=False, low=-10, high=10):
    """Random values of `dtype`; with `specials`, some NaN, +-inf and -0.0 (floating dtypes)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo = max(low, np.iinfo(dtype).min)
        return rng.integers(lo, high, size=shape, endpoint=True).astype(dtype)
    a = rng.uniform(low, high, size=shape)
    if dtype.kind == "c":
        a = a + 1j * rng.uniform(low, high, size=shape)
    a = a.astype(dtype)
    if specials and a.size:
        flat = a.reshape(-1)
        picks = rng.integers(0, flat.size, size=max(1, flat.size // 5))
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=dtype.type(0).real.dtype),
                                 size=picks.size)
    return a


def check_close(got, expected, dtype, scale=1.0):
    tol = TOL.get(str(np.dtype(dtype)), 0)
    if tol:
        assert_allclose(got, expected, dtype=dtype, rtol=tol, atol=tol * scale)
    else:
        assert_array_equal(got, expected, dtype=dtype)


AXES = [None, 0, -1, (0, 2), (-1, 0), (), (0, 1, 2)]


# --- sum / prod ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", INTS + FLOATS + COMPLEX + ["bool"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum(rng, dtype, axis, keepdims):
    a = data(rng, dtype, (3, 4, 5), low=0 if dtype.startswith("u") else -10)
    expected_dtype = {"b": "int64", "i": "int64", "u": "uint64"}.get(np.dtype(dtype).kind, dtype)
    r = xp.sum(xp.asarray(a), axis=axis, keepdims=keepdims)
    expected = np.sum(a, axis=axis, keepdims=keepdims, dtype=expected_dtype)
    check_close(r, expected, expected_dtype, scale=np.abs(a).sum() + 1)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "float32", "complex64"])
@pytest.mark.parametrize("axis", [None, 1, (0, -1)])
def test_prod(rng, dtype, axis):
    a = data(rng, dtype, (3, 4, 2), low=0 if dtype.startswith("u") else -3, high=3)
    if np.dtype(dtype).kind in "fc":
        a = (a / 6 + 1).astype(dtype)  # around 1: no overflow
    expected_dtype = {"i": "int64", "u": "uint64"}.get(np.dtype(dtype).kind, dtype)
    r = xp.prod(xp.asarray(a), axis=axis)
    check_close(r, np.prod(a, axis=axis, dtype=expected_dtype), expected_dtype, scale=10)


@pytest.mark.parametrize("fn", ["sum", "prod"])
@pytest.mark.parametrize("dtype, out", [("int8", "int16"), ("uint8", "int8"), ("int32", "float64"),
                                        ("float32", "float64"), ("float64", "float32"),
                                        ("float32", "complex128"), ("uint16", "uint32"),
                                        ("int64", "int32")])
def test_sum_prod_dtype_argument(rng, fn, dtype, out):
    a = data(rng, dtype, (4, 3), low=0, high=3)
    r = getattr(xp, fn)(xp.asarray(a), axis=0, dtype=getattr(xp, out))
    expected = getattr(np, fn)(a.astype(out), axis=0)
    check_close(r, expected, out, scale=50)


def test_sum_prod_wide_accumulation():
    # int8 input accumulates in int64 by default: no wrap-around
    a = np.full(1000, 100, dtype=np.int8)
    assert_array_equal(xp.sum(xp.asarray(a)), np.int64(100000))
    assert_array_equal(xp.prod(xp.asarray(np.full(20, 2, dtype=np.uint8))), np.uint64(2 ** 20))


@pytest.mark.parametrize("fn, identity", [("sum", 0), ("prod", 1)])
@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "complex128", "bool"])
def test_sum_prod_empty(fn, identity, dtype):
    out = {"bool": "int64", "int32": "int64", "uint8": "uint64"}.get(dtype, dtype)
    x = xp.asarray(np.zeros((0, 3), dtype=dtype))
    assert_array_equal(getattr(xp, fn)(x), np.asarray(identity, dtype=out))
    assert_array_equal(getattr(xp, fn)(x, axis=0), np.full(3, identity, dtype=out))
    assert_array_equal(getattr(xp, fn)(x, axis=1), np.zeros(0, dtype=out))
    assert_array_equal(getattr(xp, fn)(x, axis=0, keepdims=True), np.full((1, 3), identity, dtype=out))


@pytest.mark.parametrize("fn", ["sum", "prod", "max", "min", "mean"])
def test_zero_d(fn):
    x = xp.asarray(np.float32(2.5))
    r = getattr(xp, fn)(x)
    assert r.shape == () and r.dtype == xp.float32
    assert float(r) == 2.5
    r = getattr(xp, fn)(x, keepdims=True)
    assert r.shape == ()
    r = getattr(xp, fn)(x, axis=())
    assert r.shape == () and float(r) == 2.5


def test_sum_axis_empty_tuple_casts_and_copies(rng):
    a = data(rng, "int16", (2, 3))
    x = xp.asarray(a)
    r = xp.sum(x, axis=())
    assert_array_equal(r, a.astype(np.int64))
    assert_array_equal(xp.sum(x, axis=(), dtype=xp.float32), a.astype(np.float32))


def test_sum_special_values():
    a = np.array([1.0, np.inf, 2.0], dtype=np.float64)
    assert_array_equal(xp.sum(xp.asarray(a)), np.float64(np.inf))
    assert_array_equal(xp.sum(xp.asarray(np.array([np.inf, -np.inf]))), np.float64(np.nan))
    assert_array_equal(xp.sum(xp.asarray(np.array([np.nan, 1.0], np.float32))), np.float32(np.nan))
    assert_array_equal(xp.sum(xp.asarray(np.array([-0.0, -0.0]))), np.float64(-0.0))
    assert_array_equal(xp.prod(xp.asarray(np.array([np.inf, 0.0]))), np.float64(np.nan))


@pytest.mark.parametrize("view", [lambda a: a[1:], lambda a: a[::-2], lambda a: a[:, 1::2],
                                  lambda a: a[::2, ::-1]])
@pytest.mark.parametrize("fn", ["sum", "prod", "max", "min", "mean", "var", "std"])
def test_reductions_on_views(rng, view, fn):
    base = data(rng, "float64", (9, 6), low=0.5, high=1.5)
    x = view(xp.asarray(base))
    e = view(base)
    for axis in (None, 0, 1, (0, 1)):
        check_close(getattr(xp, fn)(x, axis=axis), getattr(np, fn)(e, axis=axis), "float64", scale=100)


# --- every reduction variant: layouts, dtypes, sizes -----------------------------------------
# On CUDA these pick each kernel variant of arrayx/cuda/kernels/reduce/: contiguous rows (1, 32 or 256
# lanes a row, vector loads, unaligned row starts), split rows and the all-reduce (one launch
# whose last block folds the partials),
# columns (vector and scalar, split or not) and the general strided path.

ALL_DTYPES = ["bool"] + INTS + FLOATS + COMPLEX
LAYOUTS = {
    "contiguous": lambda a: a,
    "offset": lambda a: a[1:, 1:],
    "negative": lambda a: a[::-1],
    "transposed": lambda a: a.T,
    "strided": lambda a: a[::2, 1::3],
    "negative-transposed": lambda a: a[::-1, ::-2].T,
    "broadcast": lambda a: a[:1],  # broadcast back to 7 rows below (zero strides)
}
REDUCTIONS = {"sum": ALL_DTYPES, "prod": ALL_DTYPES, "mean": INTS + FLOATS + COMPLEX,
              "max": INTS + FLOATS, "min": INTS + FLOATS, "all": ALL_DTYPES, "any": ALL_DTYPES}
_RESULT = {"b": "int64", "i": "int64", "u": "uint64"}


def _layout_cases():
    for fn, dtypes in REDUCTIONS.items():
        for k, dtype in enumerate(dtypes):
            # every dtype contiguous and in one other layout; float32 and int32 in all of them
            names = list(LAYOUTS) if dtype in ("float32", "int32") else \
                ["contiguous", list(LAYOUTS)[1 + k % (len(LAYOUTS) - 1)]]
            for name in names:
                yield pytest.param(fn, dtype, name, id=f"{fn}-{dtype}-{name}")


def _expected(fn, a, axis, keepdims):
    kind = a.dtype.kind
    if fn in ("sum", "prod"):
        return getattr(np, fn)(a, axis=axis, keepdims=keepdims, dtype=_RESULT.get(kind, a.dtype))
    if fn == "mean":
        return np.mean(a, axis=axis, keepdims=keepdims, dtype="float64" if kind in "iu" else a.dtype)
    return getattr(np, fn)(a, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("fn, dtype, layout", list(_layout_cases()))
def test_reductions_on_every_layout(rng, fn, dtype, layout):
    specials = fn in ("max", "min", "any", "all")
    base = data(rng, dtype, (37, 130), specials=specials,
                low=0 if dtype.startswith("u") else -3, high=3)
    if fn == "prod" and dtype in FLOATS + COMPLEX:
        base = (base / 30 + 1).astype(dtype)  # near 1: no overflow
    if fn in ("all", "any") and dtype != "bool":
        base[rng.random(base.shape) < 0.9] = 0  # rows with and without nonzeros
    view = LAYOUTS[layout]
    x, a = view(xp.asarray(base)), view(base)
    if layout == "broadcast":
        x, a = xp.broadcast_to(x, (7, 130)), np.broadcast_to(a, (7, 130))
    out = _expected(fn, a, None, False).dtype
    for axis, keepdims in ((None, False), (0, True), (1, False), (-1, True), ((0, 1), False),
                           ((-1, -2), True)):
        r = getattr(xp, fn)(x, axis=axis, keepdims=keepdims)
        with np.errstate(all="ignore"):
            expected = _expected(fn, a, axis, keepdims)
        if fn in ("max", "min"):
            assert_array_equal(r, expected, check_zero_sign=False)
        else:
            check_close(r, expected, out, scale=np.abs(a).sum() + 1)


@pytest.mark.parametrize("fn", ["sum", "mean", "max", "prod", "any"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "complex64"])
def test_reductions_of_a_million_elements(rng, fn, dtype):
    if fn == "max" and dtype == "complex64":
        pytest.skip("max of complex is undefined")
    a = data(rng, dtype, (1_000_003,), low=0 if dtype.startswith("u") else -10, high=10)
    if fn == "prod":
        a = np.ones_like(a)
        a[rng.integers(0, a.size, 40)] = 2 if dtype.startswith("u") else -1
    x = xp.asarray(a)
    out = _expected(fn, a, None, False).dtype
    scale = np.abs(a.astype(np.complex128)).sum() + 1
    for view in (lambda t: t, lambda t: t[3:], lambda t: t[::-1], lambda t: t[::3]):
        check_close(getattr(xp, fn)(view(x)), _expected(fn, view(a), None, False), out, scale=scale)


@pytest.mark.parametrize("rows", [1, 3, 700])
@pytest.mark.parametrize("length", [1, 2, 7, 31, 32, 33, 100, 1023, 1024, 1025, 5000])
def test_row_and_column_sums_of_many_shapes(rng, rows, length):
    a = data(rng, "float32", (rows, length))
    x = xp.asarray(a)
    scale = np.abs(a).sum() + 1
    check_close(xp.sum(x, axis=1), np.sum(a, axis=1), "float32", scale=scale)     # rows
    check_close(xp.sum(x, axis=0), np.sum(a, axis=0), "float32", scale=scale)     # columns
    check_close(xp.sum(x[:, 1:], axis=1), np.sum(a[:, 1:], axis=1), "float32", scale=scale)
    check_close(xp.sum(x[:, 1:], axis=0), np.sum(a[:, 1:], axis=0), "float32", scale=scale)
    check_close(xp.max(x.T, axis=0), np.max(a.T, axis=0), "float32")
    check_close(xp.mean(x, axis=0, keepdims=True), np.mean(a, axis=0, keepdims=True), "float32",
                scale=scale)
    i = xp.asarray(data(rng, "int16", (rows, length)))
    assert_array_equal(xp.sum(i, axis=0), np.sum(to_numpy(i), axis=0, dtype=np.int64))
    assert_array_equal(xp.min(i, axis=1), np.min(to_numpy(i), axis=1))


def test_column_sums_of_a_batch_and_long_columns(rng):
    a = data(rng, "float64", (3, 2000, 130))
    x = xp.asarray(a)
    for axis in (1, (0, 1), (1, 2), (0, 2)):
        check_close(xp.sum(x, axis=axis), np.sum(a, axis=axis), "float64", scale=np.abs(a).sum())
    b = data(rng, "float32", (200_000, 5))
    check_close(xp.sum(xp.asarray(b), axis=0), np.sum(b, axis=0), "float32", scale=np.abs(b).sum())
    c = data(rng, "complex128", (50_000, 4))
    check_close(xp.mean(xp.asarray(c), axis=0), np.mean(c, axis=0), "complex128", scale=10)


def test_many_dims_and_axis_tuples(rng):
    a = data(rng, "float64", (2, 3, 4, 5, 6, 7))
    x = xp.asarray(a)
    view = (slice(None, None, -1), slice(None), slice(None, None, 2), slice(1, None), slice(None),
            slice(None, None, -3))
    for axis in ((0, 2, 4), (1, 3, 5), (-1, 0), (1, 2, 3, 4), (5,), (0, 1, 2, 3, 4, 5)):
        check_close(xp.sum(x, axis=axis), np.sum(a, axis=axis), "float64", scale=1e4)
        check_close(xp.sum(x[view], axis=axis), np.sum(a[view], axis=axis), "float64", scale=1e4)
        t = xp.permute_dims(x, (3, 1, 5, 0, 4, 2))
        check_close(xp.prod(t / 10 + 1, axis=axis, keepdims=True),
                    np.prod(np.transpose(a, (3, 1, 5, 0, 4, 2)) / 10 + 1, axis=axis, keepdims=True),
                    "float64", scale=1e3)


def test_integer_sums_wrap_like_numpy():
    big = np.array([2**62, 2**62, 2**62, 3], dtype=np.int64)
    assert_array_equal(xp.sum(xp.asarray(big)), np.sum(big))
    ubig = np.array([2**63, 2**63, 5], dtype=np.uint64)
    assert_array_equal(xp.sum(xp.asarray(ubig)), np.sum(ubig))
    assert_array_equal(xp.prod(xp.asarray(np.full(70, 3, np.int64))), np.prod(np.full(70, 3, np.int64)))
    u8 = np.full((3, 300), 200, dtype=np.uint8)
    assert_array_equal(xp.sum(xp.asarray(u8), axis=1, dtype=xp.uint8), np.sum(u8, axis=1, dtype=np.uint8))
    assert_array_equal(xp.max(xp.asarray(ubig)), np.uint64(2**63))


def test_all_any_nonzero_rule():
    z = np.array([complex(0, 0), complex(0, 1), complex(-0.0, -0.0)])
    assert_array_equal(xp.any(xp.asarray(z[[0, 2]])), np.bool_(False))
    assert_array_equal(xp.any(xp.asarray(z)), np.bool_(True))
    assert_array_equal(xp.all(xp.asarray(z[1:2])), np.bool_(True))
    assert_array_equal(xp.all(xp.asarray(np.array([np.nan, -1.0]))), np.bool_(True))
    assert_array_equal(xp.all(xp.asarray(np.array([np.nan, -0.0]))), np.bool_(False))
    assert_array_equal(xp.all(xp.asarray(np.zeros((0, 3))), axis=0), np.ones(3, bool))
    assert_array_equal(xp.any(xp.asarray(np.zeros((0, 3))), axis=0), np.zeros(3, bool))
    assert_array_equal(xp.all(xp.asarray(np.zeros((2, 0))), axis=1, keepdims=True),
                       np.ones((2, 1), bool))


def test_float32_sum_accuracy_of_ten_million(rng):
    a = rng.random(10_000_000, dtype=np.float32)
    exact = np.sum(a.astype(np.float64))
    got = float(xp.sum(xp.asarray(a)))
    assert abs(got - exact) <= 1e-5 * exact  # NumPy's pairwise float32 sum does as well


# --- max / min -----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize("dtype", INTS + FLOATS)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_min(rng, fn, dtype, axis, keepdims):
    a = data(rng, dtype, (3, 4, 5), specials=True)
    r = getattr(xp, fn)(xp.asarray(a), axis=axis, keepdims=keepdims)
    expected = getattr(np, fn)(a, axis=axis, keepdims=keepdims)
    assert r.dtype == a.dtype and r.shape == np.shape(expected)
    got = to_numpy(r)
    # NaN propagates; the sign of a zero result is unspecified
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.where(np.isnan(got), 0, got), np.where(np.isnan(expected), 0, expected))


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_nan_propagates(fn):
    a = np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 2.0]], dtype=np.float32)
    assert_array_equal(getattr(xp, fn)(xp.asarray(a), axis=1), getattr(np, fn)(a, axis=1))
    assert np.isnan(float(getattr(xp, fn)(xp.asarray(a))))


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_empty_raises(fn):
    x = xp.asarray(np.zeros((0, 3), dtype=np.float32))
    with pytest.raises(ValueError, match=fn):
        getattr(xp, fn)(x)
    with pytest.raises(ValueError):
        getattr(xp, fn)(x, axis=0)
    # reducing the non-empty axis of an empty array is fine: an empty result
    assert_array_equal(getattr(xp, fn)(x, axis=1), np.zeros(0, dtype=np.float32))


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_reject_complex(fn):
    with pytest.raises(TypeError, match=fn):
        getattr(xp, fn)(xp.asarray(np.ones(3, dtype=np.complex64)))


@pytest.mark.parametrize("fn", ["max", "min", "nanmax", "nanmin"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_min_of_bool_as_numpy(rng, fn, axis, keepdims):
    # random rows, plus an all-True and an all-False slice along each axis
    a = rng.random((3, 4, 5)) < 0.5
    a[0], a[1, :, 0] = True, False
    for view in (a, a[:, 1:, ::2]):
        r = getattr(xp, fn)(xp.asarray(view), axis=axis, keepdims=keepdims)
        expected = getattr(np, fn)(view, axis=axis, keepdims=keepdims)
        assert r.dtype == xp.bool
        assert_array_equal(r, expected)
    for empty_axis in (None, 0):
        with pytest.raises(ValueError):
            getattr(xp, fn)(xp.asarray(np.zeros((0, 2), bool)), axis=empty_axis)


# --- mean / var / std ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean(rng, dtype, axis, keepdims):
    a = data(rng, dtype, (3, 4, 5))
    r = xp.mean(xp.asarray(a), axis=axis, keepdims=keepdims)
    check_close(r, np.mean(a, axis=axis, keepdims=keepdims), dtype, scale=10)


@pytest.mark.parametrize("dtype", ["int8", "uint32", "int64"])
def test_mean_var_std_of_integers_give_float64(rng, dtype):
    a = data(rng, dtype, (4, 5), low=0)
    x = xp.asarray(a)
    check_close(xp.mean(x, axis=0), np.mean(a, axis=0), "float64", scale=10)
    check_close(xp.var(x, axis=1), np.var(a, axis=1), "float64", scale=100)
    check_close(xp.std(x), np.std(a), "float64", scale=10)


def test_mean_special_values():
    assert_array_equal(xp.mean(xp.asarray(np.zeros((0,), np.float32))), np.float32(np.nan))
    assert_array_equal(xp.mean(xp.asarray(np.zeros((2, 0))), axis=1), np.full(2, np.nan))
    assert_array_equal(xp.mean(xp.asarray(np.zeros((0, 2))), axis=0), np.full(2, np.nan))
    r = to_numpy(xp.mean(xp.asarray(np.zeros((0,), np.complex64))))
    assert r.dtype == np.complex64 and np.isnan(r.real) and np.isnan(r.imag)
    assert_array_equal(xp.mean(xp.asarray(np.array([1.0, np.nan]))), np.float64(np.nan))
    assert_array_equal(xp.mean(xp.asarray(np.array([np.inf, 1.0]))), np.float64(np.inf))


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("correction", [0, 1, 1.5])
@pytest.mark.parametrize("keepdims", [False, True])
def test_var_std(rng, fn, dtype, axis, correction, keepdims):
    a = data(rng, dtype, (3, 4, 5))
    r = getattr(xp, fn)(xp.asarray(a), axis=axis, correction=correction, keepdims=keepdims)
    n = a.size if axis is None else math.prod(a.shape[i] for i in np.atleast_1d(axis)) if axis != () else 1
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = getattr(np, fn)(a.astype(np.float64), axis=axis, ddof=correction, keepdims=keepdims)
    if n - correction <= 0:
        expected = np.full(np.shape(expected), np.nan)
    check_close(r, expected.astype(dtype), dtype, scale=100)


@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std_special_cases(fn):
    f = getattr(xp, fn)
    x = xp.asarray(np.array([1.0, 2.0, 4.0], dtype=np.float32))
    assert_array_equal(f(x, correction=3), np.float32(np.nan))  # M - correction <= 0
    assert_array_equal(f(x, correction=5.5), np.float32(np.nan))
    assert_array_equal(f(xp.asarray(np.zeros((0, 3))), axis=0), np.full(3, np.nan))
    assert_array_equal(f(xp.asarray(np.zeros((3, 0))), axis=0), np.zeros(0))
    assert_array_equal(f(xp.asarray(np.array([1.0, np.nan]))), np.float64(np.nan))
    assert_array_equal(f(xp.asarray(np.array([[1.0, np.inf]])), axis=0), np.array([0.0, np.nan]))
    assert_array_equal(f(xp.asarray(np.float64(3.0))), np.float64(0.0))
    assert_array_equal(f(xp.asarray(np.float64(3.0)), correction=1), np.float64(np.nan))
    # a large offset does not destroy precision (two-pass algorithm)
    a = np.array([1e8 + 1, 1e8 + 2, 1e8 + 3])
    check_close(f(xp.asarray(a)), getattr(np, fn)(a), "float64")


@pytest.mark.parametrize("fn", ["var", "std", "mean"])
def test_var_std_mean_bad_dtype(fn):
    with pytest.raises(TypeError, match=fn):
        getattr(xp, fn)(xp.asarray([True, False]))
    if fn != "mean":
        with pytest.raises(TypeError, match=fn):
            getattr(xp, fn)(xp.asarray(np.ones(3, np.complex64)))


@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std_bad_correction(fn):
    x = xp.asarray([1.0, 2.0])
    for bad in ("1", None, True, [1]):
        with pytest.raises(TypeError, match="correction"):
            getattr(xp, fn)(x, correction=bad)


def _moments_reference(fn, a, axis, correction=0.0, keepdims=False):
    """NumPy's var/std in float64 (complex128 for complex input), NaN where the slice's count
    less the correction is not positive or the slice is empty (the standard's rule)."""
    a = np.asarray(a)
    wide = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    axes = tuple(range(a.ndim)) if axis is None else tuple(np.atleast_1d(axis).tolist())
    n = math.prod(a.shape[i] for i in axes)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = getattr(np, fn)(wide, axis=axes, ddof=correction, keepdims=keepdims)
    if n - correction <= 0 or n == 0:
        ref = np.full(np.shape(ref), np.nan)
    return np.asarray(ref)


def _all_axes(ndim):
    """None, (), and every subset of the axes, written with negative axes half the time."""
    out = [None, ()]
    for k in range(1, ndim + 1):
        for combo in itertools.combinations(range(ndim), k):
            out.append(combo if len(out) % 2 else tuple(i - ndim for i in combo))
    return out


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", _all_axes(3), ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("correction", [0, 1])
def test_var_std_of_a_large_mean_over_every_axis_combination(rng, fn, dtype, axis, keepdims,
                                                              correction):
    a = (1e4 + rng.uniform(-10, 10, (6, 5, 7))).astype(dtype)
    r = getattr(xp, fn)(xp.asarray(a), axis=axis, correction=correction, keepdims=keepdims)
    check_close(r, _moments_reference(fn, a, axis, correction, keepdims).astype(dtype), dtype,
                scale=10)


# views and shapes that take each layout of the cuda kernels: long rows (split), short rows,
# columns (vector and scalar widths, split), the all-reduce, reversed, offset and strided views
_MOMENT_LAYOUTS = [
    ((3, 20001), lambda a: a, -1),
    ((500, 7), lambda a: a, 1),
    ((200, 100), lambda a: a[:, 1:], 1),
    ((3001, 32), lambda a: a, 0),
    ((3001, 33), lambda a: a, 0),
    ((100003,), lambda a: a, None),
    ((100003,), lambda a: a[-4::-1], None),
    ((40, 30, 20), lambda a: a[::2, 1:, ::-1], (0, 2)),
    ((300, 64), lambda a: a.T, 1),
    ((17, 9, 64), lambda a: a[1:], (0, 1)),
]


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, view, axis", _MOMENT_LAYOUTS)
def test_var_std_layouts_and_views(rng, fn, dtype, shape, view, axis):
    base = (1e4 + rng.standard_normal(shape) * 3).astype(dtype)
    x, e = view(xp.asarray(base)), view(base)
    for correction, keepdims in ((0, False), (1.5, True)):
        r = getattr(xp, fn)(x, axis=axis, correction=correction, keepdims=keepdims)
        check_close(r, _moments_reference(fn, e, axis, correction, keepdims).astype(dtype),
                    dtype, scale=10)


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_var_std_nan_and_infinity_make_their_slice_nan(rng, fn, dtype):
    a = rng.uniform(-5, 5, (6, 300)).astype(dtype)
    a[1, 7] = np.nan
    a[2, 299] = np.inf
    a[3, 0] = -np.inf  # the first element: a lane's shift
    a[4, [10, 20]] = [np.inf, -np.inf]
    x = xp.asarray(a)
    for axis in (None, 0, 1):
        expected = _moments_reference(fn, a, axis).astype(dtype)
        got = getattr(xp, fn)(x, axis=axis)
        assert np.array_equal(np.isnan(to_numpy(got)), np.isnan(expected))
        check_close(got, expected, dtype, scale=10)


@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std_empty_and_zero_d(fn):
    f = getattr(xp, fn)
    for shape, axis, keepdims in (((0, 3), None, False), ((0, 3), None, True),
                                  ((2, 0, 3), (0, 1), False), ((2, 0, 3), 2, True),
                                  ((2, 0, 3), (), False), ((0,), 0, True)):
        a = np.zeros(shape, np.float32)
        r = f(xp.asarray(a), axis=axis, keepdims=keepdims)
        assert_array_equal(r, _moments_reference(fn, a, axis, 0, keepdims).astype(np.float32))
    for value, expected in ((2.5, 0.0), (-0.0, 0.0), (np.nan, np.nan), (np.inf, np.nan)):
        x = xp.asarray(np.float64(value))
        assert_array_equal(f(x), np.float64(expected))
        assert_array_equal(f(x, axis=()), np.float64(expected))
        assert_array_equal(f(x, correction=1), np.float64(np.nan))
        assert_array_equal(f(x, correction=-1), np.float64(expected / 2))


@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std_no_axis_is_each_element_alone(rng, fn):
    a = rng.standard_normal((4, 6))
    a[1, 2], a[3, 5] = np.nan, -np.inf
    x = xp.asarray(a)[:, ::-2]
    assert_array_equal(getattr(xp, fn)(x, axis=()),
                       np.where(np.isfinite(a[:, ::-2]), 0.0, np.nan))
    assert_array_equal(getattr(xp, fn)(x, axis=(), correction=1), np.full((4, 3), np.nan))


@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std_corrections_at_and_past_the_count(rng, fn):
    a = rng.standard_normal((5, 8))
    x = xp.asarray(a)
    for correction in (-1, 0.5, 7.5, 8, 9.5):
        check_close(getattr(xp, fn)(x, axis=1, correction=correction),
                    _moments_reference(fn, a, 1, correction), "float64", scale=10)


@pytest.mark.parametrize("dtype", INTS)
def test_var_std_of_wide_integers(rng, dtype):
    info = np.iinfo(dtype)
    lo, hi = max(int(info.min), -(2**40)), min(int(info.max), 2**40)
    a = rng.integers(lo, hi, size=(30, 40), dtype=dtype, endpoint=True)
    x = xp.asarray(a)
    for fn in ("var", "std"):
        for axis in (None, 0, 1):
            ref = _moments_reference(fn, a, axis, 1)
            check_close(getattr(xp, fn)(x, axis=axis, correction=1), ref, "float64",
                        scale=np.abs(ref).max())


@pytest.mark.parametrize("dtype, offset, spread, rtol", [("float32", 1e4, 1.0, 2e-6),
                                                        ("float32", 3.0, 1e-3, 2e-6),
                                                        ("float64", 1e8, 1e-3, 1e-10)])
def test_var_of_a_million_elements_with_a_large_mean(rng, dtype, offset, spread, rtol):
    # a mean large beside the spread: a one-pass sum of squares would cancel catastrophically
    a = (offset + spread * rng.standard_normal(1_000_003)).astype(dtype)
    ref = _moments_reference("var", a, None)
    got = float(xp.var(xp.asarray(a)))
    assert abs(got - ref) <= rtol * ref
    rows = a[:1_000_000].reshape(1000, 1000)
    got_rows = to_numpy(xp.var(xp.asarray(rows), axis=0)).astype(np.float64)
    # NumPy adds the rows one after the other, and its mean's error, squared, is 1e-7 of the
    # float64 variance here; shifted by the first row (exact: every value is within a factor 2
    # of it) the reference's mean is near 0 and its error negligible
    wide = rows.astype(np.float64)
    np.testing.assert_allclose(got_rows, _moments_reference("var", wide - wide[:1], 0),
                               rtol=10 * rtol)


@pytest.mark.parametrize("fn", ["var", "std", "nanvar", "nanstd"])
def test_var_std_are_one_primitive_call(monkeypatch, rng, fn):
    """One call of the backend's `moments` and nothing else (on cuda: one launch), for floating
    and integer input, over axes, no axis and a 0-d array."""
    from arrayx._backend import PRIMITIVES
    cases = [(xp.asarray(rng.standard_normal((20, 30))), 0), (xp.asarray(np.arange(12)), None),
             (xp.asarray(rng.standard_normal((3, 4), dtype=np.float32)), ()),
             (xp.asarray(np.float64(2.0)), None)]
    backend = cases[0][0]._device.backend
    calls = []

    def counted(name, primitive):
        def call(*args, **kwargs):
            calls.append(name)
            return primitive(*args, **kwargs)
        return call

    for name in PRIMITIVES:
        monkeypatch.setattr(backend, name, counted(name, getattr(backend, name)))
    for x, axis in cases:
        calls.clear()
        getattr(xp, fn)(x, axis=axis)
        assert calls == ["moments"]


def test_moments_primitive_of_complex_input_is_real(rng):
    """The `moments` primitive (var/std of complex: var of the real plus var of the imaginary
    parts, a real result), beyond what the namespace's var takes."""
    z = (rng.standard_normal((40, 300)) + 1j * rng.standard_normal((40, 300)) + (50 - 20j))
    for dtype, real in (("complex64", "float32"), ("complex128", "float64")):
        a = z.astype(dtype)
        x = xp.asarray(a)
        backend = x._device.backend
        for name, axes in (("var", (0, 1)), ("std", (1,)), ("var", (0,)), ("nanvar", (1,))):
            got = backend.moments(name, x._data, axes, 1.0, False, np.dtype(real))
            ref = _moments_reference(name.removeprefix("nan"), a, axes, 1).astype(real)
            check_close(xp.asarray(backend.to_host(got)), ref, real, scale=10)


# --- cumulative ----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", INTS + FLOATS + COMPLEX + ["bool"])
@pytest.mark.parametrize("axis", [0, 1, -1, -2])
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative(rng, fn, dtype, axis, include_initial):
    a = data(rng, dtype, (3, 4), low=0 if dtype.startswith("u") else -2, high=2)
    kind = np.dtype(dtype).kind
    out = {"b": "int64", "i": "int64", "u": "uint64"}.get(kind, dtype)
    r = getattr(xp, fn)(xp.asarray(a), axis=axis, include_initial=include_initial)
    npfn = np.cumsum if fn == "cumulative_sum" else np.cumprod
    expected = npfn(a, axis=axis, dtype=out)
    if include_initial:
        shape = list(a.shape)
        shape[axis] = 1
        expected = np.concatenate([np.full(shape, 0 if fn == "cumulative_sum" else 1, dtype=out),
                                   expected], axis=axis)
    check_close(r, expected, out, scale=100)


@pytest.mark.parametrize("fn, identity", [("cumulative_sum", 0), ("cumulative_prod", 1)])
def test_cumulative_1d_empty_views_and_dtype(rng, fn, identity):
    f = getattr(xp, fn)
    npfn = np.cumsum if fn == "cumulative_sum" else np.cumprod
    a = data(rng, "float64", (9,), low=0.5, high=1.5)
    x = xp.asarray(a)
    check_close(f(x), npfn(a), "float64")  # axis optional for 1-D
    check_close(f(x[::-2]), npfn(a[::-2]), "float64")
    check_close(f(x[1:], dtype=xp.float32), npfn(a[1:].astype(np.float32)), "float32")
    assert_array_equal(f(xp.asarray(np.zeros(0, np.int32))), np.zeros(0, np.int64))
    assert_array_equal(f(xp.asarray(np.zeros(0, np.int32)), include_initial=True),
                       np.array([identity], np.int64))
    assert_array_equal(f(xp.asarray(np.zeros((2, 0), np.float32)), axis=1, include_initial=True),
                       np.full((2, 1), identity, np.float32))
    assert_array_equal(f(xp.asarray(np.zeros((0, 3), np.float32)), axis=1, include_initial=True),
                       np.zeros((0, 4), np.float32))
    i8 = np.full(300, 1, dtype=np.int8)
    assert_array_equal(f(xp.asarray(i8), dtype=xp.int16), npfn(i8, dtype=np.int16))


def test_cumulative_sum_special_values():
    a = np.array([1.0, np.inf, -np.inf, 2.0])
    assert_array_equal(xp.cumulative_sum(xp.asarray(a)), np.cumsum(a))
    b = np.array([np.nan, 1.0], np.float32)
    assert_array_equal(xp.cumulative_prod(xp.asarray(b)), np.cumprod(b))


@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_bad_input(fn):
    f = getattr(xp, fn)
    with pytest.raises(ValueError, match="axis"):
        f(xp.asarray(np.ones((2, 3))))  # axis required beyond 1-D
    with pytest.raises(ValueError):
        f(xp.asarray(1.0))
    with pytest.raises(IndexError):
        f(xp.asarray(np.ones((2, 3))), axis=2)
    with pytest.raises(TypeError):
        f(xp.asarray(np.ones(3)), axis=0.0)
    with pytest.raises(TypeError):
        f(xp.asarray(np.ones(3)), dtype=xp.int64)  # float -> int accumulation
    with pytest.raises(TypeError):
        f(np.ones(3))


# --- bad input shared by the reductions ----------------------------------------------------

@pytest.mark.parametrize("fn", ["sum", "prod", "max", "min", "mean", "var", "std"])
def test_bad_axes(fn):
    x = xp.asarray(np.ones((2, 3)))
    with pytest.raises(IndexError, match=fn):
        getattr(xp, fn)(x, axis=2)
    with pytest.raises(IndexError):
        getattr(xp, fn)(x, axis=(0, -3))
    with pytest.raises(ValueError, match="repeated"):
        getattr(xp, fn)(x, axis=(1, -1))
    with pytest.raises(TypeError):
        getattr(xp, fn)(x, axis=1.0)
    with pytest.raises(TypeError):
        getattr(xp, fn)(np.ones(3))


@pytest.mark.parametrize("fn", ["sum", "prod"])
def test_bad_dtype_argument(fn):
    x = xp.asarray(np.ones(3))
    with pytest.raises(TypeError):
        getattr(xp, fn)(x, dtype=xp.int32)  # would truncate floats
    with pytest.raises(TypeError):
        getattr(xp, fn)(xp.asarray(np.ones(3, np.complex64)), dtype=xp.float64)
    with pytest.raises(TypeError):
        getattr(xp, fn)(x, dtype=xp.bool)
    with pytest.raises(TypeError):
        getattr(xp, fn)(x, dtype="float16")


# --- property test -------------------------------------------------------------------------

@given(st.data())
def test_sum_matches_numpy_property(data_):
    from conftest import xps
    dtype = data_.draw(st.sampled_from([xp.int32, xp.uint8, xp.float64]))
    x = data_.draw(xps.arrays(dtype=dtype, shape=xps.array_shapes(min_dims=0, max_dims=3, min_side=0,
                                                                     max_side=4),
                              elements={"min_value": 0, "max_value": 100}))
    axis = data_.draw(st.none() | st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1)
                      if x.ndim else st.none())
    keepdims = data_.draw(st.booleans())
    a = to_numpy(x)
    out = {"i": "int64", "u": "uint64"}.get(a.dtype.kind, a.dtype)
    check_close(xp.sum(x, axis=axis, keepdims=keepdims), np.sum(a, axis=axis, keepdims=keepdims,
                                                                 dtype=out), out, scale=1e4)


def test_special_values_emit_no_numpy_warnings():
    """inf - inf, inf * 0, overflow and empty means give the IEEE answer silently on every device."""
    import warnings
    x = xp.asarray(np.array([np.inf, -np.inf, 0.0, np.nan]))
    big = xp.asarray(np.array([3e38, 3e38], dtype=np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        xp.sum(x[:2])
        xp.prod(x[:3])
        xp.mean(x[:2])
        xp.mean(xp.asarray(np.zeros((0, 2))), axis=0)
        xp.sum(big)
        xp.cumulative_sum(x[:2])
        xp.cumulative_prod(x[:3], include_initial=True)
        xp.cumulative_sum(big)
        xp.max(x)
        xp.min(x)


# --- cumulative: every dtype and layout, long inputs, many rows (the CUDA scan kernels) -----

CUM_FNS = {"cumulative_sum": np.cumsum, "cumulative_prod": np.cumprod}


def _cum_expected(fn, a, axis, out, include_initial):
    expected = CUM_FNS[fn](a.astype(out) if a.dtype != out else a, axis=axis, dtype=out)
    if include_initial:
        shape = list(a.shape)
        shape[axis] = 1
        first = np.full(shape, 0 if fn == "cumulative_sum" else 1, dtype=out)
        expected = np.concatenate([first, expected], axis=axis)
    return expected


def _small(rng, dtype, shape, fn):
    """Values whose running sums/products stay exact in every dtype (no rounding to compare)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.7
    if fn == "cumulative_prod":
        choices = [1, 1, 1, 2] if dtype.kind == "u" else [1, -1, 1, 2]
        if dtype.kind == "c":
            return rng.choice(np.array([1, -1, 1j, -1j], dtype=dtype), size=shape)
        return rng.choice(np.array(choices, dtype=dtype), size=shape)
    a = rng.integers(0 if dtype.kind == "u" else -3, 4, size=shape)
    if dtype.kind == "c":
        a = a + 1j * rng.integers(-2, 3, size=shape)
    return a.astype(dtype)


@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", INTS + FLOATS + COMPLEX + ["bool"])
@pytest.mark.parametrize("shape, axis", [((5000,), 0), ((3, 700), 1), ((700, 3), 0),
                                         ((4, 5, 6), 1), ((2, 3, 300), -1)])
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_every_dtype_exact(rng, fn, dtype, shape, axis, include_initial):
    a = _small(rng, dtype, shape, fn)
    kind = np.dtype(dtype).kind
    out = np.dtype({"b": "int64", "i": "int64", "u": "uint64"}.get(kind, dtype))
    r = getattr(xp, fn)(xp.asarray(a), axis=axis, include_initial=include_initial)
    # a complex product's zero parts are signed by how (a*c - b*d) rounds: the GPU's fused
    # multiply-add may sign them differently from NumPy, as for multiply itself
    assert_array_equal(r, _cum_expected(fn, a, axis, out, include_initial),
                       check_zero_sign=not (fn == "cumulative_prod" and kind == "c"))


VIEWS = {
    "offset": lambda a: a[1:],
    "step": lambda a: a[::3],
    "reversed": lambda a: a[::-1],
    "transposed": lambda a: a.T,
    "rows": lambda a: a[:, 1:-1],
    "reversed-cols": lambda a: a[:, ::-2],
    "offset-2d": lambda a: a[1:, 1:],
}


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("dtype", ["float32", "int16", "complex64", "uint8"])
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_sum_views(rng, view, dtype, include_initial):
    shape = (20001,) if view in ("offset", "step", "reversed") else (600, 41)
    base = _small(rng, dtype, shape, "cumulative_sum")
    a = VIEWS[view](base)
    x = VIEWS[view](xp.asarray(base))
    out = np.dtype({"i": "int64", "u": "uint64"}.get(np.dtype(dtype).kind, dtype))
    for axis in range(a.ndim):
        r = xp.cumulative_sum(x, axis=axis, include_initial=include_initial)
        assert_array_equal(r, _cum_expected("cumulative_sum", a, axis, out, include_initial))


@pytest.mark.parametrize("shape, axis", [((3_000_001,), 0), ((3, 1_000_003), 1),
                                         ((1_000_003, 3), 0), ((20000, 3), 1), ((3, 70000), 0),
                                         ((5000, 37), 1), ((37, 5000), 0), ((2, 70000, 2), 1)])
def test_cumulative_sum_long_and_many_rows(rng, shape, axis):
    # many tiles (the look-back runs) and many short rows sharing tiles; exact integer values
    a = rng.integers(-3, 4, size=shape).astype(np.float64)
    x = xp.asarray(a)
    assert_array_equal(xp.cumulative_sum(x, axis=axis), np.cumsum(a, axis=axis))
    a32 = a.astype(np.float32)
    assert_array_equal(xp.cumulative_sum(xp.asarray(a32), axis=axis), np.cumsum(a32, axis=axis))
    i = a.astype(np.int32)
    assert_array_equal(xp.cumulative_sum(xp.asarray(i), axis=axis, include_initial=True),
                       _cum_expected("cumulative_sum", i, axis, np.dtype("int64"), True))


def test_cumulative_float_accuracy_and_wrapping(rng):
    a = rng.uniform(0, 1, size=1_000_000).astype(np.float32)
    r = to_numpy(xp.cumulative_sum(xp.asarray(a)))
    exact = np.cumsum(a.astype(np.float64))
    assert np.max(np.abs(r - exact) / exact) < 1e-4
    # integer accumulation wraps modulo 2^width in the requested dtype
    big = np.full(3000, 2**30, dtype=np.int32)
    assert_array_equal(xp.cumulative_sum(xp.asarray(big), dtype=xp.int32),
                       np.cumsum(big, dtype=np.int32))
    u = np.full(5000, 200, dtype=np.uint8)
    assert_array_equal(xp.cumulative_sum(xp.asarray(u), dtype=xp.uint8), np.cumsum(u, dtype=np.uint8))
    assert_array_equal(xp.cumulative_prod(xp.asarray(np.full(70, 3, np.int64))),
                       np.cumprod(np.full(70, 3, np.int64)))
    # int8 input accumulated as float32 / complex64
    i8 = rng.integers(-100, 100, size=(50, 40)).astype(np.int8)
    for dt in (np.float32, np.complex64, np.int16):
        assert_array_equal(xp.cumulative_sum(xp.asarray(i8), axis=1, dtype=dt),
                           np.cumsum(i8.astype(dt), axis=1, dtype=dt))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_cumulative_special_values_and_signed_zeros(dtype):
    z = np.array([-0.0, -0.0, -0.0], dtype=dtype)
    for include_initial in (False, True):
        assert_array_equal(xp.cumulative_sum(xp.asarray(z), include_initial=include_initial),
                           _cum_expected("cumulative_sum", z, 0, z.dtype, include_initial))
    s = np.array([1.0, np.nan, 2.0, np.inf, -np.inf, 3.0] * 2000, dtype=dtype)
    assert_array_equal(xp.cumulative_sum(xp.asarray(s)), np.cumsum(s))
    p = np.array([2.0, np.inf, 0.0, 5.0] * 100, dtype=dtype)
    assert_array_equal(xp.cumulative_prod(xp.asarray(p)), np.cumprod(p))
    rows = np.tile(np.array([[-0.0, 1.0, np.nan], [np.inf, -0.0, -0.0]], dtype=dtype), (300, 1))
    assert_array_equal(xp.cumulative_sum(xp.asarray(rows), axis=1), np.cumsum(rows, axis=1))
    assert_array_equal(xp.cumulative_sum(xp.asarray(rows), axis=0), np.cumsum(rows, axis=0))
    if dtype.startswith("complex"):
        c = np.array([complex(np.inf, 1), 1j, -1j, 2.0] * 3, dtype=dtype)
        assert_array_equal(xp.cumulative_prod(xp.asarray(c[:1])), c[:1])  # the first value exactly
        assert_array_equal(xp.cumulative_sum(xp.asarray(c)), np.cumsum(c))


@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_empty_and_degenerate_shapes(fn):
    f = getattr(xp, fn)
    ident = 0 if fn == "cumulative_sum" else 1
    for shape, axis in [((0,), 0), ((0, 5), 0), ((0, 5), 1), ((5, 0), 1), ((5, 0), 0),
                        ((2, 0, 3), 1), ((1,), 0), ((1, 1, 1), 1), ((4, 1), 0), ((1, 4), 0)]:
        a = np.ones(shape, np.float32)
        for include_initial in (False, True):
            assert_array_equal(f(xp.asarray(a), axis=axis, include_initial=include_initial),
                               _cum_expected(fn, a, axis, a.dtype, include_initial))
    assert_array_equal(f(xp.asarray(np.zeros((3, 0), np.int8)), axis=1, include_initial=True),
                       np.full((3, 1), ident, np.int64))
    with pytest.raises(ValueError):
        f(xp.asarray(1.0))


# --- axes as lists (issue 21) and checked argument types (issue 20) --------------------------
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std"])
def test_reductions_take_list_axes(name):
    a = np.arange(1.0, 25.0).reshape(2, 3, 4)
    fn = getattr(xp, name)
    ref = getattr(np, name)(a, axis=(0, 2))
    assert_allclose(fn(xp.asarray(a), axis=[0, 2]), ref)
    assert_allclose(fn(xp.asarray(a), axis=[-1, 0], keepdims=True), getattr(np, name)(a, axis=(0, 2), keepdims=True))
    for bad in ([0, 1.0], 1.0, "0", [None]):
        with pytest.raises(TypeError, match=f"{name}.*axis"):
            fn(xp.asarray(a), axis=bad)
    with pytest.raises(ValueError, match="repeated axis"):
        fn(xp.asarray(a), axis=[0, -3])


def test_sum_dtype_argument_checked():
    x = xp.asarray([1, 2])
    for bad in ([xp.int64], "integer", {}, object()):
        with pytest.raises(TypeError, match="sum.*dtype must be an array API dtype"):
            xp.sum(x, dtype=bad)
