"""Property tests with hypothesis.extra.array_api.make_strategies_namespace(arrayx): elementwise
functions over every dtype the standard allows equal NumPy's on the same data (hypothesis
draws NaN, +-inf, -0.0, subnormals, extremes, empty and 0-d arrays); broadcasting; promotion."""

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st
from hypothesis.extra.array_api import make_strategies_namespace

import arrayx as xp
from conftest import ALL_DTYPES, assert_array_equal, to_numpy
from test_dtypes import PROMOTION
from test_elementwise import BINARY, CATEGORY, UNARY, compare

xps = make_strategies_namespace(xp)
shapes = xps.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)


def _elements(name, dtype, which):
    """Element bounds where NumPy's answer is undefined or platform-specific for integers."""
    if dtype.kind not in "iu":
        return None
    bits = np.iinfo(dtype).bits
    if name in ("bitwise_left_shift", "bitwise_right_shift") and which == 2:
        return {"min_value": 0, "max_value": bits - 1}
    if name == "pow":
        return {"min_value": 0 if dtype.kind == "u" or which == 2 else -4, "max_value": 5}
    if name in ("floor_divide", "remainder") and which == 2:
        return st.integers(-100 if dtype.kind == "i" else 1, 100).filter(lambda v: v not in (0, -1))
    return None


def _arrays(name, dtype, shape, which=1):
    el = _elements(name, dtype, which)
    return xps.arrays(dtype=dtype, shape=shape, elements=el)


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data())
def test_unary_matches_numpy(name, data):
    cat, ref, how = UNARY[name]
    dtype = data.draw(st.sampled_from(CATEGORY[cat]), label="dtype")
    x = data.draw(_arrays(name, dtype, shapes), label="x")
    a = to_numpy(x)
    with np.errstate(all="ignore"):
        expected = ref(a)
    compare(name, how, getattr(xp, name)(x), expected, dtype)
    assert_array_equal(x, a)  # input untouched


@pytest.mark.parametrize("name", sorted(BINARY))
@given(data=st.data())
def test_binary_matches_numpy_with_broadcasting(name, data):
    cat, ref, how = BINARY[name]
    dtype = data.draw(st.sampled_from(CATEGORY[cat]), label="dtype")
    s1, s2 = data.draw(xps.mutually_broadcastable_shapes(2, min_dims=0, max_dims=3, max_side=4),
                       label="shapes").input_shapes
    x1 = data.draw(_arrays(name, dtype, s1, 1), label="x1")
    x2 = data.draw(_arrays(name, dtype, s2, 2), label="x2")
    a1, a2 = to_numpy(x1), to_numpy(x2)
    with np.errstate(all="ignore"):
        expected = ref(a1, a2)
    got = getattr(xp, name)(x1, x2)
    assert got.shape == np.broadcast_shapes(s1, s2)
    compare(name, how, got, expected, dtype)


@given(data=st.data())
def test_promotion_of_array_pairs(data):
    d1 = data.draw(xps.scalar_dtypes(), label="d1")
    d2 = data.draw(xps.scalar_dtypes(), label="d2")
    s1, s2 = data.draw(xps.mutually_broadcastable_shapes(2, max_dims=2, max_side=3), label="shapes").input_shapes
    x1 = xp.ones(s1, dtype=d1)
    x2 = xp.ones(s2, dtype=d2)
    if (d1, d2) in PROMOTION:
        out = PROMOTION[d1, d2]
        assert xp.result_type(d1, d2) == out == xp.result_type(x1, x2)
        r = xp.equal(x1, x2)
        assert r.dtype == xp.bool and r.shape == np.broadcast_shapes(s1, s2)
        if out != xp.bool:
            r = xp.multiply(x1, x2)
            assert r.dtype == out and r.shape == np.broadcast_shapes(s1, s2)
            assert xp.can_cast(d1, out) and xp.can_cast(d2, out)
    else:
        # Beyond the standard's table arrayx promotes as NumPy (README, Promotion).
        out = np.result_type(d1, d2)
        assert xp.result_type(d1, d2) == out == xp.result_type(x1, x2)
        r = xp.equal(x1, x2)
        assert r.dtype == xp.bool and r.shape == np.broadcast_shapes(s1, s2)
        assert xp.multiply(x1, x2).dtype == out
        assert not xp.can_cast(d1, d2)


@given(data=st.data())
def test_promotion_with_python_scalars(data):
    dtype = data.draw(xps.scalar_dtypes(), label="dtype")
    x = data.draw(xps.arrays(dtype=dtype, shape=xps.array_shapes(min_dims=0, max_dims=2, max_side=3)), label="x")
    kind = dtype.kind
    if kind == "b":
        s = data.draw(st.booleans(), label="scalar")
    elif kind in "iu":
        info = np.iinfo(dtype)
        s = data.draw(st.integers(int(info.min), int(info.max)), label="scalar")
    elif kind == "f":
        s = data.draw(st.one_of(st.floats(width=32), st.integers(-2 ** 20, 2 ** 20)), label="scalar")
    else:
        s = data.draw(st.one_of(st.complex_numbers(width=64), st.floats(width=32)), label="scalar")
    assert xp.result_type(x, s) == dtype
    assert xp.result_type(s, dtype) == dtype
    name = "equal" if kind == "b" else "add"
    fn = getattr(xp, name)
    r1, r2 = fn(x, s), fn(s, x)
    want = xp.bool if name == "equal" else dtype
    assert r1.dtype == want and r2.dtype == want and r1.shape == x.shape
    sv = np.asarray(s, dtype=dtype)
    with np.errstate(all="ignore"):
        compare(name, "exact", r1, getattr(np, name)(to_numpy(x), sv), dtype)


@given(shapes=xps.mutually_broadcastable_shapes(3, min_dims=0, max_dims=4, max_side=3), data=st.data())
def test_broadcasting(shapes, data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    arrays = [data.draw(xps.arrays(dtype=dtype, shape=s), label=f"x{i}") for i, s in enumerate(shapes.input_shapes)]
    assert xp.broadcast_shapes(*shapes.input_shapes) == shapes.result_shape
    got = xp.broadcast_arrays(*arrays)
    for g, a in zip(got, arrays):
        assert_array_equal(g, np.broadcast_to(to_numpy(a), shapes.result_shape))
    b = xp.broadcast_to(arrays[0], shapes.result_shape)
    assert_array_equal(b, np.broadcast_to(to_numpy(arrays[0]), shapes.result_shape))


@given(data=st.data())
def test_getitem_basic_matches_numpy(data):
    dtype = data.draw(xps.scalar_dtypes(), label="dtype")
    shape = data.draw(xps.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5), label="shape")
    x = data.draw(xps.arrays(dtype=dtype, shape=shape), label="x")
    key = data.draw(xps.indices(shape, allow_newaxis=True, allow_ellipsis=True), label="key")
    a = to_numpy(x)
    assert_array_equal(x[key], np.asarray(a[key]))


@given(data=st.data())
def test_astype_matches_numpy(data):
    src = data.draw(xps.scalar_dtypes(), label="src")
    dst = data.draw(xps.scalar_dtypes(), label="dst")
    assume(not (src.kind == "c" and dst.kind != "c" and dst != xp.bool))
    # only values both sides represent (out-of-range casts are implementation-defined)
    if src.kind in "fc" and dst.kind in "iu":
        info = np.iinfo(dst)
        lo, hi = max(int(info.min), -(2 ** 24)), min(int(info.max), 2 ** 24)
        el = {"min_value": lo, "max_value": hi, "allow_nan": False, "allow_infinity": False}
        if src.kind == "c":
            assume(False)
    elif src.kind in "iu" and dst.kind in "iu":
        si, di = np.iinfo(src), np.iinfo(dst)
        el = {"min_value": max(int(si.min), int(di.min)), "max_value": min(int(si.max), int(di.max))}
    elif src.kind == "f" and dst.kind == "f" and dst.itemsize < src.itemsize:
        el = {"min_value": -1e30, "max_value": 1e30}
    else:
        el = None
    x = data.draw(xps.arrays(dtype=src, shape=xps.array_shapes(min_dims=0, max_dims=2, max_side=4), elements=el),
                  label="x")
    with np.errstate(all="ignore"):
        expected = to_numpy(x).astype(dst)
    assert_array_equal(xp.astype(x, dst), expected, dtype=dst)
