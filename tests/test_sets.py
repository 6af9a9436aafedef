"""unique_all, unique_counts, unique_inverse, unique_values and isin: NaNs distinct, signed zeros
one value, the inverse shaped like x, 0-d and empty input, views, scalars and bad input.

The order of unique values is implementation-defined, so results are checked by their
properties (and against NumPy's sorted unique on the CPU backend's order where it is the same)."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import arrayx as xp
from conftest import assert_array_equal, to_numpy

ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
       "float32", "float64", "complex64", "complex128"]


def data(rng, dtype, shape, specials=False):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    a = rng.integers(0, 6, size=shape).astype(dtype)
    if dtype.kind == "c":
        a = a + 1j * rng.integers(0, 2, size=shape)
    if specials and a.size and dtype.kind in "fc":
        flat = a.reshape(-1)
        picks = rng.integers(0, flat.size, size=max(1, flat.size // 4))
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -0.0, 0.0]), size=picks.size)
    return a.astype(dtype)


def _canon(v):
    """A hashable identity for a value where -0.0 == 0.0 and each NaN is distinct."""
    v = complex(v)
    return v + 0  # -0.0 + 0 == +0.0


def check_unique_all(x, a):
    """Every property the standard asks of unique_all's four arrays."""
    out = xp.unique_all(x)
    values, indices, inverse, counts = (to_numpy(r) for r in out)
    flat = a.reshape(-1)
    assert out.values.dtype == x.dtype and values.ndim == 1
    for r in (out.indices, out.inverse_indices, out.counts):
        assert r.dtype == xp.int64
    assert indices.shape == values.shape == counts.shape
    assert inverse.shape == a.shape
    isnan = np.isnan(values) if values.dtype.kind in "fc" else np.zeros(values.shape, bool)
    # one NaN value per NaN in x, each counted once
    n_nan = np.isnan(flat).sum() if flat.dtype.kind in "fc" else 0
    assert isnan.sum() == n_nan and (counts[isnan] == 1).all()
    # the non-NaN values are distinct, with their count and first index
    seen = set()
    for v, i, c in zip(values[~isnan], indices[~isnan], counts[~isnan]):
        key = _canon(v)
        assert key not in seen
        seen.add(key)
        matches = np.flatnonzero(flat == v)
        assert c == matches.size and i == matches[0]
    assert seen == {_canon(v) for v in flat if v == v}
    # NaN entries point at NaNs of x, each at a different one
    nan_first = indices[isnan]
    assert len(set(nan_first.tolist())) == nan_first.size
    if nan_first.size:
        assert np.isnan(flat[nan_first]).all()
    # inverse reconstructs x (up to the sign of zero; NaN to a NaN)
    rebuilt = values[inverse]
    both_nan = np.isnan(rebuilt) & np.isnan(a) if a.dtype.kind in "fc" else np.zeros(a.shape, bool)
    assert ((rebuilt == a) | both_nan).all()
    return out


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(12,), (3, 5), (2, 3, 4), (), (0,), (2, 0)])
def test_unique_all(rng, dtype, shape):
    a = data(rng, dtype, shape, specials=True)
    check_unique_all(xp.asarray(a), a)


@pytest.mark.parametrize("dtype", ALL)
def test_unique_counts_inverse_values_agree_with_unique_all(rng, dtype):
    a = data(rng, dtype, (4, 6), specials=True)
    x = xp.asarray(a)
    full = xp.unique_all(x)
    vals, counts = xp.unique_counts(x)
    # which zero (-0.0 or 0.0) stands for both is implementation-defined
    assert_array_equal(vals, to_numpy(full.values), check_zero_sign=False)
    assert_array_equal(counts, to_numpy(full.counts))
    vals2, inverse = xp.unique_inverse(x)
    assert_array_equal(vals2, to_numpy(full.values), check_zero_sign=False)
    # each NaN may map to any NaN of values: compare the others exactly
    inv, inv_all = to_numpy(inverse), to_numpy(full.inverse_indices)
    assert inverse.shape == x.shape and inverse.dtype == xp.int64
    notnan = ~np.isnan(a) if a.dtype.kind in "fc" else np.ones(a.shape, bool)
    np.testing.assert_array_equal(inv[notnan], inv_all[notnan])
    assert np.isnan(to_numpy(vals2)[inv[~notnan]]).all()
    assert_array_equal(xp.unique_values(x), to_numpy(full.values), check_zero_sign=False)
    r = xp.unique_counts(x)
    assert r.values is r[0] and r.counts is r[1]
    r = xp.unique_inverse(x)
    assert r.values is r[0] and r.inverse_indices is r[1]


def test_unique_nan_signed_zero_examples():
    a = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, 1.0])
    x = xp.asarray(a)
    out = check_unique_all(x, a)
    values = to_numpy(out.values)
    assert values.size == 4  # NaN, NaN, one zero, 1.0
    zero_count = to_numpy(out.counts)[values == 0]
    assert zero_count.tolist() == [2]
    z = np.array([complex(np.nan, 1), complex(np.nan, 1), 1 + 0j, complex(1, np.nan), 1 + 0j])
    out = check_unique_all(xp.asarray(z), z)
    assert out.values.shape == (4,)


def test_unique_views_and_zero_d(rng):
    base = data(rng, "float32", (6, 8), specials=True)
    x = xp.asarray(base)
    for view in (lambda t: t[1:], lambda t: t[::-2], lambda t: t[:, ::-3]):
        check_unique_all(view(x), view(base))
    out = xp.unique_inverse(xp.asarray(3.0))
    assert out.values.shape == (1,) and out.inverse_indices.shape == ()
    assert_array_equal(xp.unique_values(xp.asarray(np.zeros((0, 3)))), np.zeros(0))


def test_unique_bad_input():
    for fn in ("unique_all", "unique_counts", "unique_inverse", "unique_values"):
        with pytest.raises(TypeError, match=fn):
            getattr(xp, fn)(np.ones(3))


# --- isin ----------------------------------------------------------------------------------

@pytest.mark.parametrize("d1, d2", [("int64", "int64"), ("int8", "int16"), ("uint8", "int32"),
                                    ("uint64", "uint8"), ("float32", "float64"), ("bool", "bool"),
                                    # kinds the standard leaves open promote as NumPy's do
                                    ("int64", "float64"), ("int8", "float32"), ("bool", "int16"),
                                    ("uint64", "int64"), ("float32", "uint8")])
@pytest.mark.parametrize("invert", [False, True])
def test_isin(rng, d1, d2, invert):
    a = data(rng, d1, (3, 5))
    b = data(rng, d2, (4,))
    assert_array_equal(xp.isin(xp.asarray(a), xp.asarray(b), invert=invert),
                       np.isin(a, b, invert=invert))
    b2 = data(rng, d2, (2, 2))  # x2 of any shape
    assert_array_equal(xp.isin(xp.asarray(a), xp.asarray(b2), invert=invert),
                       np.isin(a, b2, invert=invert))


def test_isin_scalars_special_values_views_and_empty():
    a = np.array([1, 2, 3, 4], dtype=np.int8)
    x = xp.asarray(a)
    assert_array_equal(xp.isin(x, 3), np.array([False, False, True, False]))
    assert_array_equal(xp.isin(x, 3, invert=True), np.array([True, True, False, True]))
    assert_array_equal(xp.isin(x, 1000), np.zeros(4, bool))  # out of int8's range
    assert_array_equal(xp.isin(x, -1000, invert=True), np.ones(4, bool))
    assert_array_equal(xp.isin(2, x), np.bool_(True))
    assert_array_equal(xp.isin(9, x), np.bool_(False))
    assert_array_equal(xp.isin(300, x), np.bool_(False))
    assert_array_equal(xp.isin(300, x, invert=True), np.bool_(True))
    f = np.array([np.nan, -0.0, 1.0, np.inf])
    assert_array_equal(xp.isin(xp.asarray(f), xp.asarray(np.array([0.0, np.nan, np.inf]))),
                       np.array([False, True, False, True]))  # NaN is never equal
    assert_array_equal(xp.isin(xp.asarray(f), 1), np.array([False, False, True, False]))
    base = np.arange(12).reshape(3, 4)
    X = xp.asarray(base)
    assert_array_equal(xp.isin(X[::-1, 1:], X[0, ::2]), np.isin(base[::-1, 1:], base[0, ::2]))
    assert_array_equal(xp.isin(xp.asarray(np.zeros((0, 2), np.int32)), x), np.zeros((0, 2), bool))
    assert_array_equal(xp.isin(x, xp.asarray(np.zeros(0, np.int8))), np.zeros(4, bool))
    assert_array_equal(xp.isin(xp.asarray(np.int16(5)), xp.asarray([5])), np.bool_(True))


def test_isin_bad_input():
    x = xp.asarray([1, 2])
    with pytest.raises(TypeError):
        xp.isin(1, 2)
    with pytest.raises(TypeError):
        xp.isin(x, "a")
    with pytest.raises(TypeError):
        xp.isin(x, [1, 2])


@given(st.data())
def test_unique_property(data_):
    from conftest import xps
    dtype = data_.draw(st.sampled_from([xp.int8, xp.float32, xp.float64, xp.uint16, xp.bool]))
    x = data_.draw(xps.arrays(dtype, xps.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)))
    check_unique_all(x, to_numpy(x))


# --- every dtype through all four forms, large inputs, views; isin on every dtype -----------

@pytest.mark.parametrize("dtype", ALL)
def test_unique_four_forms_views(rng, dtype):
    base = data(rng, dtype, (9, 7), specials=True)
    x = xp.asarray(base)
    for view in (lambda t: t, lambda t: t[1:, ::-2], lambda t: t.T, lambda t: t[::-3, 2]):
        a = view(base)
        out = check_unique_all(view(x), a)
        values = to_numpy(out.values)
        assert_array_equal(xp.unique_values(view(x)), values, check_zero_sign=False)
        v, c = xp.unique_counts(view(x))
        assert_array_equal(v, values, check_zero_sign=False)
        assert_array_equal(c, to_numpy(out.counts))
        v, inv = xp.unique_inverse(view(x))
        rebuilt = to_numpy(v)[to_numpy(inv)]
        both_nan = np.isnan(rebuilt) & np.isnan(a) if a.dtype.kind in "fc" else False
        assert ((rebuilt == a) | both_nan).all()


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "uint8", "complex64"])
def test_unique_large(rng, dtype):
    n = 1 << 20
    a = rng.integers(0, 1000, n).astype(dtype)
    if dtype.startswith(("float", "complex")):
        a[rng.integers(0, n, 100)] = np.nan
        a[rng.integers(0, n, 100)] = -0.0
    out = xp.unique_all(xp.asarray(a))
    values, index, inverse, counts = (to_numpy(r) for r in out)
    isnan = np.isnan(values) if values.dtype.kind in "fc" else np.zeros(values.shape, bool)
    ref_values, ref_index, ref_counts = np.unique(a[~np.isnan(a)] if a.dtype.kind in "fc" else a,
                                                  return_index=True, return_counts=True)
    assert isnan.sum() == (np.isnan(a).sum() if a.dtype.kind in "fc" else 0)
    order = np.argsort(values[~isnan], kind="stable")
    np.testing.assert_array_equal(values[~isnan][order], ref_values)
    np.testing.assert_array_equal(counts[~isnan][order], ref_counts)
    # first occurrences (NumPy's indices above are into the NaN-free array: recomputed here)
    firsts = index[~isnan][order]
    np.testing.assert_array_equal(a[firsts], ref_values)
    first_seen = {}
    for i, v in enumerate(a.tolist()):
        if v == v and v not in first_seen:
            first_seen[v] = i
    np.testing.assert_array_equal(firsts, [first_seen[v] for v in ref_values.tolist()])
    rebuilt = values[inverse]
    np.testing.assert_array_equal(np.isnan(rebuilt) if a.dtype.kind in "fc" else rebuilt,
                                  np.isnan(a) if a.dtype.kind in "fc" else a)
    if a.dtype.kind not in "fc":
        return
    ok = ~np.isnan(a)
    np.testing.assert_array_equal(rebuilt[ok], a[ok])


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint16", "uint64"])
def test_unique_values_and_counts_of_integers_against_numpy(rng, dtype):
    """unique_values and unique_counts of bool and integer arrays (on cuda: from the sorted
    words alone), negative values and the dtype's extremes included, against NumPy."""
    dt = np.dtype(dtype)
    n = (1 << 18) + 3
    if dt == bool:
        a = rng.integers(0, 2, n).astype(bool)
    else:
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -300), 300, n).astype(dt)
        a[rng.integers(0, n, 5)] = info.min
        a[rng.integers(0, n, 5)] = info.max
    x = xp.asarray(a)[1:]
    ref_values, ref_counts = np.unique(a[1:], return_counts=True)
    values, counts = xp.unique_counts(x)
    assert values.dtype == x.dtype and counts.dtype == xp.int64
    assert_array_equal(values, ref_values)
    assert_array_equal(counts, ref_counts)
    assert_array_equal(xp.unique_values(x), ref_values)


def test_unique_single_element_and_all_nan():
    a = np.array([np.nan, np.nan, np.nan], np.float32)
    out = check_unique_all(xp.asarray(a), a)
    assert out.values.shape == (3,) and to_numpy(out.counts).tolist() == [1, 1, 1]
    a = np.array([7], np.int16)
    out = check_unique_all(xp.asarray(a), a)
    assert to_numpy(out.values).tolist() == [7] and to_numpy(out.indices).tolist() == [0]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("invert", [False, True])
def test_isin_every_dtype_with_specials(rng, dtype, invert):
    a = data(rng, dtype, (4, 5, 3), specials=True)
    b = data(rng, dtype, (6,), specials=True)
    expected = np.isin(a, b, invert=invert)
    assert_array_equal(xp.isin(xp.asarray(a), xp.asarray(b), invert=invert), expected)
    # views of both, x2 of another shape
    assert_array_equal(xp.isin(xp.asarray(a)[::-1, 1:, ::2], xp.asarray(a)[0, ::-2], invert=invert),
                       np.isin(a[::-1, 1:, ::2], a[0, ::-2], invert=invert))


def test_isin_nan_signed_zeros_complex():
    z = np.array([complex(np.nan, 0), complex(0.0, -0.0), complex(-0.0, 1), complex(1, np.nan), 2j])
    w = np.array([complex(0.0, 0.0), complex(np.nan, 0), complex(0.0, 1.0), complex(1, np.nan)])
    for dt in ("complex64", "complex128"):
        for invert in (False, True):
            assert_array_equal(xp.isin(xp.asarray(z.astype(dt)), xp.asarray(w.astype(dt)),
                                       invert=invert),
                               np.array([False, True, True, False, False]) != invert)


@pytest.mark.parametrize("dtype", ["int64", "float32", "uint16"])
def test_isin_large(rng, dtype):
    a = rng.integers(0, 1 << 15, 1 << 20).astype(dtype)
    b = rng.integers(0, 1 << 15, 1 << 14).astype(dtype)
    for invert in (False, True):
        assert_array_equal(xp.isin(xp.asarray(a), xp.asarray(b), invert=invert),
                           np.isin(a, b, invert=invert))


def test_isin_empty_and_zero_d():
    e = np.zeros((0, 3), np.float64)
    assert_array_equal(xp.isin(xp.asarray(e), xp.asarray(np.array([1.0]))), np.zeros((0, 3), bool))
    assert_array_equal(xp.isin(xp.asarray(np.array([1.0, np.nan])), xp.asarray(e), invert=True),
                       np.array([True, True]))
    assert_array_equal(xp.isin(xp.asarray(np.float32(np.nan)), xp.asarray(np.float32(np.nan))),
                       np.bool_(False))
    assert_array_equal(xp.isin(xp.asarray(np.array([[2, 3]], np.uint8)), xp.asarray(np.uint8(3))),
                       np.array([[False, True]]))
