"""NaN-aware statistics, median and quantile (arrayx/_nan_functions.py, beyond the standard)
against NumPy on the default device: values, dtypes and shapes over axes (None, int, negative,
tuple, ()), keepdims, all-NaN slices, infinities and -0.0, empty and 0-d arrays, strided,
offset and transposed views, integer and bool input, quantile methods and q shapes, bad input.

NumPy's nan-functions warn on all-NaN slices; arrayx does not, so the references run with the
warnings silenced."""

import warnings

import numpy as np
import pytest

import arrayx as xp
from conftest import assert_allclose, assert_array_equal, to_numpy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FLOATS = ["float32", "float64"]
INTS = ["int8", "uint8", "int32", "int64", "uint64"]
RTOL = {"float32": 1e-5, "float64": 1e-12, "complex64": 1e-5, "complex128": 1e-12}
AXES = [None, 0, -1, 1, (0, 2), (-1, 0), (), (0, 1, 2)]
SHAPE = (3, 4, 5)


def reference(fn, *args, **kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(getattr(np, fn)(*args, **kwargs))


def nan_data(rng, dtype, shape=SHAPE, all_nan=True, low=-10.0, high=10.0):
    """Random values with about a quarter NaN, the specials +-inf and -0.0, and (`all_nan`, for
    3-d shapes) slices entirely NaN along the last axis and along the first. Complex values get
    no infinities: NumPy's nanmean divides by the count as a complex number, which makes
    inf + 0j over 1 inf + nanj."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -50
        return rng.integers(lo, 50, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    a = rng.uniform(low, high, size=shape)
    if dtype.kind == "c":
        a = a + 1j * rng.uniform(low, high, size=shape)
    a = a.astype(dtype)
    flat = a.reshape(-1)
    if flat.size:
        flat[rng.random(flat.size) < 0.25] = np.nan
    if flat.size and dtype.kind == "f":
        picks = rng.choice(flat.size, size=min(flat.size, 3), replace=False)
        flat[picks] = np.array([np.inf, -np.inf, -0.0])[:picks.size]
    if all_nan and a.ndim == 3:
        a[1, 2, :] = np.nan
        a[:, 0, 3] = np.nan
    return a


def quantile_reference(fn, a, q, axis=None, keepdims=False, method="linear"):
    """NumPy's quantile or nanquantile, row by row (the reduced axes moved last and merged), q's
    dimensions in front, in the dtype NumPy gives for the same data without NaN. Row by row
    because NumPy's over an axis is off for NaN: nanquantile's result takes the dtype of its
    first row's (float32 for an all-NaN first row of float32 data under a float64 q), quantile
    returns `a`'s NaN for a 0-d result, and nanquantile misplaces a 2-d q's dimensions."""
    axes = tuple(range(a.ndim)) if axis is None else \
        tuple(sorted(i % a.ndim for i in np.atleast_1d(np.asarray(axis, dtype=int))))
    kept = [i for i in range(a.ndim) if i not in axes]
    M, K = (int(np.prod([a.shape[i] for i in ix])) for ix in (kept, axes))
    rows = a.transpose(kept + list(axes)).reshape(M, K)
    clean = np.where(np.isnan(a), 0, a) if a.dtype.kind == "f" else a
    dtype = reference(fn, clean, q, axis=axis, method=method).dtype
    shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape)) if keepdims else \
        tuple(a.shape[i] for i in kept)
    if M == 0:
        return np.zeros(np.shape(q) + shape, dtype)
    per_row = [reference(fn, row, q, method=method).astype(dtype) for row in rows]
    return np.stack(per_row, axis=-1).reshape(np.shape(q) + shape)


def check(got, expected, dtype=None):
    """Compare with NumPy: exact for integers and bool, within the dtype's tolerance (the GPU
    sums in another order; zero signs not compared) for floating results."""
    expected = np.asarray(expected)
    want = np.dtype(dtype) if dtype is not None else expected.dtype
    if want.kind in "fc":
        scale = np.nanmax(np.abs(expected[np.isfinite(expected)]), initial=1.0)
        rtol = RTOL[want.name]
        assert_allclose(got, expected, dtype=want, rtol=rtol, atol=rtol * scale)
    else:
        assert_array_equal(got, expected, dtype=want)


# --- reductions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["nansum", "nanprod", "nanmean"])
@pytest.mark.parametrize("dtype", FLOATS + ["complex64", "complex128"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_prod_mean(rng, fn, dtype, axis, keepdims):
    a = nan_data(rng, dtype)
    if fn == "nanprod":  # around 1: no overflow
        a = (a / 20 + 1).astype(dtype)
    got = getattr(xp, fn)(xp.asarray(a), axis=axis, keepdims=keepdims)
    check(got, reference(fn, a, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("fn", ["nanmax", "nanmin"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_min(rng, fn, dtype, axis, keepdims):
    a = nan_data(rng, dtype)
    got = getattr(xp, fn)(xp.asarray(a), axis=axis, keepdims=keepdims)
    # a maximum of -0.0 and 0.0 may be either zero: signs of zeros are not compared
    assert_array_equal(got, reference(fn, a, axis=axis, keepdims=keepdims),
                       check_zero_sign=False)


@pytest.mark.parametrize("fn", ["nanargmax", "nanargmin"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", [None, 0, -1, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin(rng, fn, dtype, axis, keepdims):
    a = nan_data(rng, dtype, all_nan=False)
    a[0, 0, :2] = [np.nan, -np.inf if fn == "nanargmax" else np.inf]  # NumPy's tie rule
    got = getattr(xp, fn)(xp.asarray(a), axis=axis, keepdims=keepdims)
    assert_array_equal(got, reference(fn, a, axis=axis, keepdims=keepdims), dtype="int64")


@pytest.mark.parametrize("fn", ["nanargmax", "nanargmin"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_argmax_argmin_of_an_all_nan_slice_raise(rng, fn, axis):
    a = nan_data(rng, "float32", all_nan=False)
    a[:, 1, :] = np.nan
    a[1, :, 3] = np.nan
    if axis is None:
        a[:] = np.nan
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        getattr(xp, fn)(xp.asarray(a), axis=axis)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        getattr(xp, fn)(xp.asarray(np.float64(np.nan)))


def test_all_nan_slices():
    a = np.full((3, 4), np.nan, dtype=np.float32)
    a[0, 1] = 2.0
    x = xp.asarray(a)
    assert_array_equal(xp.nansum(x, axis=1), np.array([2, 0, 0], np.float32))
    assert_array_equal(xp.nanprod(x, axis=1), np.array([2, 1, 1], np.float32))
    for fn in ("nanmax", "nanmin", "nanmean", "nanmedian", "nanvar", "nanstd"):
        want = reference(fn, a, axis=1)
        assert np.isnan(want[1:]).all()
        check(getattr(xp, fn)(x, axis=1), want)
    check(xp.nanquantile(x, [0.1, 0.5], axis=1),
          quantile_reference("nanquantile", a, [0.1, 0.5], axis=1))
    assert_array_equal(xp.nancumsum(x, axis=1), reference("nancumsum", a, axis=1))


@pytest.mark.parametrize("dtype", FLOATS)
def test_infinities_and_negative_zeros(dtype):
    a = np.array([[np.inf, np.nan, 1.0], [-np.inf, np.inf, np.nan], [-0.0, np.nan, -0.0],
                  [np.nan, -np.inf, -1.0]], dtype=dtype)
    x = xp.asarray(a)
    for fn in ("nansum", "nanmean", "nanmax", "nanmin", "nanvar", "nanmedian"):
        want = reference(fn, a, axis=1)
        assert_array_equal(getattr(xp, fn)(x, axis=1), want, check_zero_sign=False)
    # arrayx's sum of negative zeros is -0.0 (NumPy's +0.0): nansum keeps that rule; a NaN
    # reads as +0.0 (NumPy's replacement), so with one the sum is +0.0
    zeros = x[2, ::2]
    assert np.signbit(to_numpy(xp.nansum(zeros))) and np.signbit(to_numpy(xp.sum(zeros)))
    assert not np.signbit(to_numpy(xp.nansum(x[2])))
    assert_array_equal(xp.nanargmax(x, axis=1), reference("nanargmax", a, axis=1))
    assert_array_equal(xp.nanargmin(x, axis=1), reference("nanargmin", a, axis=1))
    assert_array_equal(xp.nancumsum(x, axis=1), reference("nancumsum", a, axis=1),
                       check_zero_sign=False)


@pytest.mark.parametrize("dtype, out", [("float32", "float64"), ("float64", "float32"),
                                        ("float32", "complex64")])
@pytest.mark.parametrize("fn", ["nansum", "nanprod", "nanmean"])
def test_dtype_argument(rng, fn, dtype, out):
    a = nan_data(rng, dtype)
    if fn == "nanprod":
        a = (a / 20 + 1).astype(dtype)
    got = getattr(xp, fn)(xp.asarray(a), axis=(0, 2), dtype=getattr(xp, out))
    check(got, reference(fn, a, axis=(0, 2), dtype=out))


@pytest.mark.parametrize("dtype", INTS + ["bool"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_integer_and_bool_input_act_as_the_plain_functions(rng, dtype, axis):
    a = nan_data(rng, dtype)
    x = xp.asarray(a)
    for fn in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmedian"):
        if fn == "nanprod":
            b = (a % 3).astype(dtype)
            check(xp.nanprod(xp.asarray(b), axis=axis), reference(fn, b, axis=axis))
            continue
        if fn in ("nanmean", "nanvar", "nanstd") and dtype == "bool":
            continue  # mean and var refuse bool (below)
        check(getattr(xp, fn)(x, axis=axis), reference(fn, a, axis=axis))
    for fn in ("nanmax", "nanmin"):  # bool too, as NumPy: any() and all()
        check(getattr(xp, fn)(x, axis=axis), reference(fn, a, axis=axis))
    if dtype != "bool":
        if not isinstance(axis, tuple):
            for fn in ("nanargmax", "nanargmin"):
                check(getattr(xp, fn)(x, axis=axis), reference(fn, a, axis=axis))
        check(xp.nanquantile(x, [0.3, 0.5], axis=axis, method="lower"),
              quantile_reference("nanquantile", a, [0.3, 0.5], axis=axis, method="lower"))
    else:  # as argmax, mean and var (NumPy accepts bool there)
        for fn in ("nanargmax", "nanmean", "nanvar"):
            with pytest.raises(TypeError):
                getattr(xp, fn)(x, axis=axis if not isinstance(axis, tuple) else None)


@pytest.mark.parametrize("fn", ["nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanvar",
                                "nanstd", "nanmedian", "median", "nanargmax", "nanargmin"])
@pytest.mark.parametrize("value", [2.5, np.nan, -np.inf])
def test_zero_d_input(fn, value):
    a = np.array(value, dtype=np.float64)
    if fn in ("nanargmax", "nanargmin") and np.isnan(value):
        with pytest.raises(ValueError, match="All-NaN"):
            getattr(xp, fn)(xp.asarray(a))
        return
    check(getattr(xp, fn)(xp.asarray(a)), reference(fn, a))
    if fn not in ("nanargmax", "nanargmin"):
        check(getattr(xp, fn)(xp.asarray(a), axis=()), reference(fn, a, axis=()))


@pytest.mark.parametrize("shape, axis", [((0,), None), ((3, 0), 1), ((3, 0), 0), ((0, 4), 0),
                                         ((0, 4), None)])
def test_empty(shape, axis):
    a = np.zeros(shape, np.float32)
    x = xp.asarray(a)
    for fn in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmedian", "median"):
        check(getattr(xp, fn)(x, axis=axis), reference(fn, a, axis=axis))
    check(xp.nancumsum(x, axis=axis), reference("nancumsum", a, axis=axis))
    reduced_empty = a.size == 0 if axis is None else shape[axis] == 0
    for fn in ("nanmax", "nanmin", "nanargmax", "nanargmin"):
        if reduced_empty:
            with pytest.raises(ValueError):
                getattr(xp, fn)(x, axis=axis)
        else:
            check(getattr(xp, fn)(x, axis=axis), reference(fn, a, axis=axis))
    # nanquantile: NaN where the slice is empty, q's dimension kept in front (NumPy drops it)
    got = xp.nanquantile(x, [0.25, 0.5], axis=axis)
    out_shape = () if axis is None else shape[:axis] + shape[axis + 1:]
    check(got, np.full((2,) + out_shape, np.nan if reduced_empty else 0, np.float64))
    if reduced_empty:
        with pytest.raises(ValueError, match="empty slice"):
            xp.quantile(x, 0.5, axis=axis)
    else:
        check(xp.quantile(x, 0.5, axis=axis), quantile_reference("quantile", a, 0.5, axis=axis))


def test_strided_offset_and_transposed_views(rng):
    a = nan_data(rng, "float32", shape=(6, 9, 7))
    x = xp.asarray(a)
    views = [(x[1:, ::2, 1:], a[1:, ::2, 1:]), (x[::-1, :, 3], a[::-1, :, 3]),
             (xp.permute_dims(x, (2, 0, 1)), a.transpose(2, 0, 1))]
    for xv, av in views:
        for axis in (None, 0, -1, (0, 1)):
            for fn in ("nansum", "nanmean", "nanmax", "nanvar", "nanmedian", "median"):
                check(getattr(xp, fn)(xv, axis=axis), reference(fn, av, axis=axis))
            check(xp.nanquantile(xv, [0.1, 0.9], axis=axis),
                  quantile_reference("nanquantile", av, [0.1, 0.9], axis=axis))
        check(xp.nancumsum(xv, axis=1), reference("nancumsum", av, axis=1))
        check(xp.nancumprod(xv / 20 + 1, axis=0), reference("nancumprod", av / 20 + 1, axis=0))


def test_large_rows_split_over_blocks(rng):
    """Rows long enough that a GPU splits each over several blocks (the fold of partials),
    and columns, against float64 references."""
    a = rng.standard_normal((3, 70001)).astype(np.float32)
    a[rng.random(a.shape) < 0.1] = np.nan
    a[2] = np.nan
    x = xp.asarray(a)
    for fn in ("nansum", "nanmean", "nanmax", "nanmin"):
        check(getattr(xp, fn)(x, axis=1), reference(fn, a.astype(np.float64), axis=1),
              dtype="float32")
        check(getattr(xp, fn)(x.T, axis=0), reference(fn, a.astype(np.float64), axis=1),
              dtype="float32")
        check(getattr(xp, fn)(x), reference(fn, a.astype(np.float64)), dtype="float32")
    assert_array_equal(xp.nanargmax(x[:2], axis=1), reference("nanargmax", a[:2], axis=1))
    assert_array_equal(xp.nanargmin(x[:2].T, axis=0), reference("nanargmin", a[:2], axis=1))
    column = a.T.copy()[:, :2]
    assert_array_equal(xp.nanargmax(xp.asarray(column), axis=0),
                       reference("nanargmax", column, axis=0))
    check(xp.nancumsum(x[:2], axis=1), reference("nancumsum", a[:2].astype(np.float64), axis=1),
          dtype="float32")


def test_cumulative_along_many_columns(rng):
    """Enough columns that a GPU scans each down its column (the column-scan kernel)."""
    a = rng.standard_normal((5, 70000)).astype(np.float32)
    a[rng.random(a.shape) < 0.2] = np.nan
    x = xp.asarray(a)
    check(xp.nancumsum(x, axis=0), reference("nancumsum", a.astype(np.float64), axis=0),
          dtype="float32")
    b = (a / 20 + 1).astype(np.float32)
    check(xp.nancumprod(xp.asarray(b), axis=0),
          reference("nancumprod", b.astype(np.float64), axis=0), dtype="float32")


# --- variance -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("ddof", [0, 1, 2.5])
def test_var_std(rng, fn, dtype, axis, ddof):
    a = nan_data(rng, dtype)
    keepdims = ddof == 1
    got = getattr(xp, fn)(xp.asarray(a), axis=axis, ddof=ddof, keepdims=keepdims)
    check(got, reference(fn, a, axis=axis, ddof=ddof, keepdims=keepdims))
    got = getattr(xp, fn)(xp.asarray(a), axis=axis, correction=ddof)
    check(got, reference(fn, a, axis=axis, ddof=ddof))


def test_var_dtype_and_ddof_beyond_the_count(rng):
    a = nan_data(rng, "float32")
    # NumPy rounds the deviations from the float64 mean to float32 (it subtracts in place);
    # arrayx keeps them in float64
    assert_allclose(xp.nanvar(xp.asarray(a), axis=-1, dtype=xp.float64),
                    reference("nanvar", a, axis=-1, dtype=np.float64), rtol=1e-6, atol=1e-6)
    a = np.array([[1.0, np.nan, 3.0], [4.0, np.nan, np.nan]])
    check(xp.nanvar(xp.asarray(a), axis=1, ddof=1), reference("nanvar", a, axis=1, ddof=1))
    check(xp.nanstd(xp.asarray(a), axis=1, ddof=5), reference("nanstd", a, axis=1, ddof=5))
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    check(xp.nanvar(xp.asarray(i), axis=0, dtype=xp.float32, ddof=1),
          reference("nanvar", i, axis=0, dtype=np.float32, ddof=1))


# --- cumulative ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("dtype", FLOATS + ["complex64"] + INTS + ["bool"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumulative(rng, fn, dtype, axis):
    a = nan_data(rng, dtype)
    if fn == "nancumprod":
        a = (a % 3).astype(dtype) if np.dtype(dtype).kind in "iub" else (a / 40 + 1).astype(dtype)
    got = getattr(xp, fn)(xp.asarray(a), axis=axis)
    check(got, reference(fn, a, axis=axis))


def test_cumulative_dtype_and_zero_d(rng):
    a = nan_data(rng, "float32")
    check(xp.nancumsum(xp.asarray(a), axis=2, dtype=xp.float64),
          reference("nancumsum", a, axis=2, dtype=np.float64))
    for v in (3.0, np.nan):
        check(xp.nancumsum(xp.asarray(np.float64(v))), reference("nancumsum", np.float64(v)))
    with pytest.raises(IndexError):
        xp.nancumsum(xp.asarray(np.float64(1.0)), axis=0)


# --- median and quantile ------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", FLOATS + INTS + ["bool"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_median(rng, fn, dtype, axis, keepdims):
    a = nan_data(rng, dtype)
    got = getattr(xp, fn)(xp.asarray(a), axis=axis, keepdims=keepdims)
    check(got, reference(fn, a, axis=axis, keepdims=keepdims))


METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]
QS = [0.5, 0.0, 1.0, [0.1, 0.25, 0.75], [[0.0, 0.4], [0.66, 1.0]], np.float64(0.3)]


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("q", QS, ids=lambda q: repr(q).replace(" ", ""))
@pytest.mark.parametrize("dtype", FLOATS + ["int16", "uint8"])
def test_quantile_methods_and_q_shapes(rng, fn, method, q, dtype):
    a = nan_data(rng, dtype)
    for axis, keepdims in ((None, False), (1, True), ((0, 2), False), (-1, False)):
        got = getattr(xp, fn)(xp.asarray(a), q, axis=axis, method=method, keepdims=keepdims)
        check(got, quantile_reference(fn, a, q, axis=axis, method=method, keepdims=keepdims))


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("q_dtype", FLOATS)
@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
def test_quantile_of_an_arrayx_q(rng, fn, q_dtype, dtype):
    """An arrayx q acts as a NumPy array q: the result promotes with its dtype."""
    a = nan_data(rng, dtype)
    q = np.array([0.05, 0.5, 0.95], dtype=q_dtype)
    for method in ("linear", "midpoint", "nearest"):
        got = getattr(xp, fn)(xp.asarray(a), xp.asarray(q), axis=2, method=method)
        check(got, quantile_reference(fn, a, q, axis=2, method=method))


def test_quantile_result_dtypes():
    """A Python float q keeps a float32 array's dtype (NumPy's weak q); a sequence or NumPy
    scalar is float64; integer input interpolates in float64 and picks in its own dtype."""
    f = xp.asarray(np.array([1, 2, 3, 4], np.float32))
    assert xp.quantile(f, 0.3).dtype == xp.float32
    assert xp.quantile(f, [0.3]).dtype == xp.float64
    assert xp.quantile(f, np.float64(0.3)).dtype == xp.float64
    i = xp.asarray(np.arange(5, dtype=np.int32))
    assert xp.quantile(i, 0.5).dtype == xp.float64
    assert xp.quantile(i, 0.5, method="lower").dtype == xp.int32
    b = xp.asarray(np.array([True, False, True]))
    assert_array_equal(xp.quantile(b, 0.5, method="nearest"), np.array(True))
    with pytest.raises(TypeError, match="interpolates"):
        xp.quantile(b, 0.5)


def test_quantile_of_long_rows_with_nans(rng):
    a = rng.standard_normal((4, 3001))
    a[rng.random(a.shape) < 0.3] = np.nan
    a[3] = np.nan
    a[2, :2990] = np.nan  # 11 values or fewer left
    x = xp.asarray(a)
    q = [0.0, 0.01, 0.5, 0.999, 1.0]
    for method in METHODS:
        check(xp.nanquantile(x, q, axis=1, method=method),
              quantile_reference("nanquantile", a, q, axis=1, method=method))
    check(xp.nanmedian(x, axis=1), reference("nanmedian", a, axis=1))
    check(xp.quantile(x[:, ::3], q, axis=0), quantile_reference("quantile", a[:, ::3], q, axis=0))


# --- mean's dtype and bad input ----------------------------------------------------------------

def test_mean_dtype(rng):
    a = rng.standard_normal((4, 5)).astype(np.float32)
    check(xp.mean(xp.asarray(a), axis=1, dtype=xp.float64), np.mean(a, axis=1, dtype=np.float64))
    i = np.arange(10, dtype=np.int16)
    check(xp.mean(xp.asarray(i), dtype=xp.float32), np.mean(i, dtype=np.float32))
    with pytest.raises(TypeError, match="floating-point dtype"):
        xp.mean(xp.asarray(a), dtype=xp.int32)
    with pytest.raises(TypeError, match="imaginary"):
        xp.mean(xp.asarray(a.astype(np.complex64)), dtype=xp.float32)


def test_bad_input(rng):
    x = xp.asarray(nan_data(rng, "float32"))
    c = xp.asarray(np.ones(3, np.complex64))
    with pytest.raises(TypeError, match="nansum.*arrayx array"):
        xp.nansum([1.0, 2.0])
    with pytest.raises(TypeError):
        xp.nanmax(c)
    with pytest.raises(TypeError):
        xp.nanargmin(c)
    with pytest.raises(TypeError, match="real numbers"):
        xp.quantile(c, 0.5)
    with pytest.raises(IndexError):
        xp.nanmean(x, axis=3)
    with pytest.raises(ValueError, match="repeated axis"):
        xp.nanmedian(x, axis=(1, -2))
    with pytest.raises(TypeError):
        xp.nanargmax(x, axis=(0, 1))
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        xp.quantile(x, 1.5)
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        xp.nanquantile(x, [0.5, np.nan])
    with pytest.raises(TypeError, match="q must"):
        xp.quantile(x, "half")
    with pytest.raises(TypeError, match="q must"):
        xp.quantile(x, xp.asarray([True]))
    with pytest.raises(ValueError, match="method 'hazen' is not supported"):
        xp.quantile(x, 0.5, method="hazen")
    with pytest.raises(ValueError, match="simultaneously"):
        xp.nanvar(x, ddof=1, correction=1)
    with pytest.raises(TypeError, match="ddof"):
        xp.nanstd(x, ddof="1")
    with pytest.raises(TypeError, match="dtype"):
        xp.nanvar(x, dtype=xp.int32)
    with pytest.raises(TypeError, match="cannot accumulate"):
        xp.nansum(x, dtype=xp.int32)


def test_functions_are_exported():
    for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
                 "nanargmax", "nanargmin", "nancumsum", "nancumprod", "nanmedian",
                 "nanquantile", "median", "quantile"):
        assert callable(getattr(xp, name))
