"""Data types: the standard's promotion table, result_type (with Python scalars), can_cast,
finfo/iinfo, isdtype, astype, __array_namespace_info__ dtypes."""

import itertools

import numpy as np
import pytest

import arrayx as xp
import arrayx._dtypes as dtypes
from conftest import (ALL_DTYPES, COMPLEX_DTYPES, DEVICE, INT_DTYPES, NUMERIC_DTYPES,
                      REAL_FLOAT_DTYPES, assert_allclose, assert_array_equal, make_data,
                      to_numpy)

i1, i2, i4, i8 = xp.int8, xp.int16, xp.int32, xp.int64
u1, u2, u4, u8 = xp.uint8, xp.uint16, xp.uint32, xp.uint64
f4, f8, c8, c16 = xp.float32, xp.float64, xp.complex64, xp.complex128
b = xp.bool

# The standard's promotion table (data_types / type promotion), written out by hand: every
# defined pair (both orders), nothing else.
_DEFINED = {
    (b, b): b,
    (i1, i1): i1, (i1, i2): i2, (i1, i4): i4, (i1, i8): i8,
    (i2, i2): i2, (i2, i4): i4, (i2, i8): i8,
    (i4, i4): i4, (i4, i8): i8,
    (i8, i8): i8,
    (u1, u1): u1, (u1, u2): u2, (u1, u4): u4, (u1, u8): u8,
    (u2, u2): u2, (u2, u4): u4, (u2, u8): u8,
    (u4, u4): u4, (u4, u8): u8,
    (u8, u8): u8,
    (i1, u1): i2, (i1, u2): i4, (i1, u4): i8,
    (i2, u1): i2, (i2, u2): i4, (i2, u4): i8,
    (i4, u1): i4, (i4, u2): i4, (i4, u4): i8,
    (i8, u1): i8, (i8, u2): i8, (i8, u4): i8,
    (f4, f4): f4, (f4, f8): f8, (f8, f8): f8,
    (c8, c8): c8, (c8, c16): c16, (c16, c16): c16,
    (f4, c8): c8, (f4, c16): c16, (f8, c8): c16, (f8, c16): c16,
}
PROMOTION = {}
for (_a, _b), _r in _DEFINED.items():
    PROMOTION[_a, _b] = PROMOTION[_b, _a] = _r
ALL_PAIRS = list(itertools.product(ALL_DTYPES, repeat=2))
DEFINED_PAIRS = [p for p in ALL_PAIRS if p in PROMOTION]
UNDEFINED_PAIRS = [p for p in ALL_PAIRS if p not in PROMOTION]


def _id(p):
    return f"{p[0]}-{p[1]}"


def test_dtype_objects():
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "complex64", "complex128"]
    for name in names:
        d = getattr(xp, name)
        assert d == np.dtype(name)
        assert d == getattr(xp, name) and hash(d) == hash(getattr(xp, name))
    assert xp.float32 != xp.float64 and xp.int8 != xp.uint8
    assert len(set(names)) == len({getattr(xp, n) for n in names})


def test_promotion_table_is_symmetric_and_complete():
    assert len(PROMOTION) == 2 * len(_DEFINED) - sum(a == b for a, b in _DEFINED)
    assert len(DEFINED_PAIRS) == len(PROMOTION)


@pytest.mark.parametrize("pair", DEFINED_PAIRS, ids=_id)
def test_result_type_defined_pairs(pair):
    assert xp.result_type(*pair) == PROMOTION[pair]


@pytest.mark.parametrize("pair", UNDEFINED_PAIRS, ids=_id)
def test_result_type_undefined_pairs_follow_numpy(pair):
    # arrayx's documented choice for mixes the standard leaves undefined: NumPy's result_type.
    assert xp.result_type(*pair) == np.result_type(*pair)
    # can_cast keeps to the standard's table: no cast across kinds.
    assert xp.can_cast(*pair) is False


def test_standard_table_is_unchanged():
    assert dtypes.PROMOTION_TABLE == PROMOTION
    for pair, out in PROMOTION.items():
        assert dtypes.MIXED_PROMOTION_TABLE[pair] is out


@pytest.mark.parametrize("pair", [p for p in DEFINED_PAIRS if p[0] != b], ids=_id)
def test_binary_arrays_follow_promotion(pair):
    rng = np.random.default_rng(0)
    d1, d2 = pair
    out = PROMOTION[pair]
    a = make_data(d1, (3, 1), rng, specials=False, low=0 if d1.kind in "iu" else None,
                  high=20 if d1.kind in "iu" else None)
    c = make_data(d2, (4,), rng, specials=False, low=0 if d2.kind in "iu" else None,
                  high=20 if d2.kind in "iu" else None)
    got = xp.add(xp.asarray(a), xp.asarray(c))
    with np.errstate(all="ignore"):
        expected = a.astype(out) + c.astype(out)
    assert_array_equal(got, expected, dtype=out)
    eq = xp.equal(xp.asarray(a), xp.asarray(c))
    assert_array_equal(eq, a.astype(out) == c.astype(out), dtype=xp.bool)


def _mixed_data(d, shape, rng):
    # Small non-negative integers: every mixed result is exact in NumPy and arrayx alike.
    if d.kind in "iub":
        return make_data(d, shape, rng, specials=False, low=0, high=20)
    return make_data(d, shape, rng)


@pytest.mark.parametrize("pair", UNDEFINED_PAIRS, ids=_id)
def test_binary_arrays_undefined_pairs_follow_numpy(pair):
    rng = np.random.default_rng(1)
    d1, d2 = pair
    for s1, s2 in (((3, 1), (4,)), ((), (0,)), ((), ())):
        a, c = _mixed_data(d1, s1, rng), _mixed_data(d2, s2, rng)
        x1, x2 = xp.asarray(a), xp.asarray(c)
        with np.errstate(all="ignore"):
            assert_array_equal(xp.add(x1, x2), np.add(a, c))
            assert_array_equal(x1 * x2, a * c)
            assert_array_equal(xp.equal(x1, x2), np.equal(a, c))
            assert_array_equal(xp.where(xp.asarray(a == 0), x1, x2), np.where(a == 0, a, c))
            if "c" not in (d1.kind, d2.kind):
                assert_array_equal(xp.less(x1, x2), np.less(a, c))
                assert_array_equal(xp.maximum(x1, x2), np.maximum(a, c))


@pytest.mark.parametrize("pair", UNDEFINED_PAIRS, ids=_id)
def test_in_place_undefined_pairs(pair):
    # Allowed only when the promoted dtype is the left operand's own (NumPy casts same_kind).
    rng = np.random.default_rng(2)
    a, c = _mixed_data(pair[0], (4,), rng), _mixed_data(pair[1], (4,), rng)
    x = xp.asarray(a)
    if np.result_type(*pair) == pair[0]:
        x += xp.asarray(c)
        a += c
        assert_array_equal(x, a)
    else:
        with pytest.raises(TypeError, match="in-place add would change the dtype"):
            x += xp.asarray(c)
        assert_array_equal(x, a)  # untouched


@pytest.mark.parametrize("name,d1,d2", [("bitwise_and", i8, u8), ("bitwise_left_shift", i1, u8),
                                         ("add", b, b), ("atan2", i4, i4),
                                         ("logical_and", b, i1), ("floor_divide", c8, i1)])
def test_binary_mixed_result_outside_category_raise(name, d1, d2):
    # The category applies to the promoted dtype: NumPy's float64 for int64 & uint64 is no
    # integer dtype, so the mix is refused with what to do.
    with pytest.raises(TypeError, match="dtype"):
        getattr(xp, name)(xp.ones((2,), dtype=d1), xp.ones((2,), dtype=d2))


def test_mixed_promotion_elsewhere_follows_numpy():
    rng = np.random.default_rng(3)
    a, c = rng.integers(0, 9, (3, 4)), rng.standard_normal((4, 2)).astype(np.float32)
    x, y = xp.asarray(a), xp.asarray(c)
    assert_allclose(x @ y, a @ c)
    assert_allclose(xp.tensordot(x, y, axes=1), np.tensordot(a, c, axes=1))
    assert_allclose(xp.vecdot(x[:, :2], y[:3]), np.sum(a[:, :2] * c[:3], axis=-1))
    assert_array_equal(xp.concat([x[0], y[:, 0]]), np.concatenate([a[0], c[:, 0]]))
    assert_array_equal(xp.stack([x[0], xp.asarray(c[0].repeat(2))]),
                       np.stack([a[0], c[0].repeat(2)]))
    s = np.sort(c[:, 0])
    assert_array_equal(xp.searchsorted(xp.asarray(s), x[0]), np.searchsorted(s, a[0]))
    f = xp.asarray(rng.standard_normal(4))
    assert_array_equal(xp.clip(f, x[0], x[1] + 5), np.clip(to_numpy(f), a[0], a[1] + 5))
    with pytest.raises(TypeError, match="cannot bound"):
        xp.clip(x[0], f, None)
    z = xp.zeros((4,))
    z[:] = x[0]
    assert_array_equal(z, a[0].astype(np.float64))
    with pytest.raises(TypeError, match="promote to float64"):
        xp.zeros((4,), dtype=xp.float32)[:] = x[0]


def test_result_type_many_and_arrays():
    assert xp.result_type(i1, u1, i2) == i2
    assert xp.result_type(u1, u2, u4) == u4
    assert xp.result_type(f4, c8, f8) == c16
    assert xp.result_type(xp.ones(2, dtype=i1), u2) == i4
    assert xp.result_type(xp.ones(2, dtype=f4), xp.ones((), dtype=c8)) == c8
    assert xp.result_type(i4) == i4
    assert xp.result_type(xp.ones(3, dtype=u8)) == u8
    assert xp.result_type(i8, u8, f8) == f8
    assert xp.result_type(xp.ones(2, dtype=b), i1, f4) == np.result_type(np.bool_, np.int8, np.float32)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_result_type_python_scalars_same_kind_are_weak(dtype):
    # A Python scalar of the array's kind never changes the array's dtype (the standard).
    scalars = {"b": [True, False], "i": [1, -1, 0], "u": [1, 0], "f": [1.0, -2.5, 1], "c": [1j, 2.0, 3]}
    for s in scalars[dtype.kind]:
        assert xp.result_type(dtype, s) == dtype, s
        assert xp.result_type(s, dtype) == dtype, s
        assert xp.result_type(xp.ones(1, dtype=dtype), s) == dtype, s


@pytest.mark.parametrize("real, cplx", [(f4, c8), (f8, c16)])
def test_result_type_complex_scalar_with_real_float(real, cplx):
    assert xp.result_type(real, 1j) == cplx
    assert xp.result_type(real, 1.0, 2j) == cplx


def test_result_type_scalars_applied_after_arrays():
    # Scalars are weak against the promoted dtype of all arrays and dtypes together.
    assert xp.result_type(1.0, f4, f4) == f4
    assert xp.result_type(1, i1, i2) == i2
    assert xp.result_type(i1, 1, u1) == i2


def test_result_type_needs_an_array_or_dtype():
    with pytest.raises((TypeError, ValueError)):
        xp.result_type(1, 2.0)
    with pytest.raises((TypeError, ValueError)):
        xp.result_type()


@pytest.mark.parametrize("dtype", [i1, u1, i2, u2, i4, u4], ids=str)
def test_binary_python_int_keeps_integer_dtype(dtype):
    rng = np.random.default_rng(1)
    a = make_data(dtype, (5,), rng, low=0, high=50)
    x = xp.asarray(a)
    assert_array_equal(x + 3, (a + np.asarray(3, dtype)).astype(dtype), dtype=dtype)
    assert_array_equal(3 * x, (a * np.asarray(3, dtype)).astype(dtype), dtype=dtype)
    assert_array_equal(x < 7, a < 7, dtype=xp.bool)


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES + COMPLEX_DTYPES, ids=str)
def test_binary_python_float_keeps_float_dtype(dtype):
    rng = np.random.default_rng(2)
    a = make_data(dtype, (6,), rng)
    x = xp.asarray(a)
    with np.errstate(all="ignore"):
        assert_array_equal(x * 0.5, (a * dtype.type(0.5)), dtype=dtype)
        assert_array_equal(2 - x, dtype.type(2) - a, dtype=dtype)
        assert_array_equal(x + 1j if dtype.kind == "c" else x + 1, a + dtype.type(1j if dtype.kind == "c" else 1),
                           dtype=dtype)


def test_binary_numpy_scalar_does_not_change_dtype():
    # np.float64 is a subclass of Python float, so arrayx treats it as a weak Python float:
    # the result must keep the array's dtype (float32), as the namespace computes.
    x = xp.asarray([1.0, 2.0], dtype=f4)
    r = x * np.float64(2.0)
    assert r.dtype == f4, f"float32 array * np.float64 scalar gave {r.dtype}"
    r = xp.asarray([1j], dtype=c8) + np.complex128(1j)
    assert r.dtype == c8, f"complex64 array + np.complex128 scalar gave {r.dtype}"


# --- can_cast ------------------------------------------------------------------------------
@pytest.mark.parametrize("pair", ALL_PAIRS, ids=_id)
def test_can_cast(pair):
    src, dst = pair
    expected = pair in PROMOTION and PROMOTION[pair] == dst
    assert xp.can_cast(src, dst) is expected
    assert xp.can_cast(xp.ones((1,), dtype=src), dst) is expected


# --- finfo / iinfo -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES + COMPLEX_DTYPES, ids=str)
def test_finfo(dtype):
    real = {f4: f4, f8: f8, c8: f4, c16: f8}[dtype]
    ref = np.finfo(real)
    for arg in (dtype, xp.ones((2,), dtype=dtype)):
        fi = xp.finfo(arg)
        for name in ("bits", "eps", "max", "min", "smallest_normal"):
            assert getattr(fi, name) == getattr(ref, name).item() if name != "bits" else fi.bits == ref.bits
        assert type(fi.bits) is int
        for name in ("eps", "max", "min", "smallest_normal"):
            assert type(getattr(fi, name)) is float, name
        assert fi.dtype == real
    assert xp.finfo(f4).eps == 2.0 ** -23 and xp.finfo(f8).eps == 2.0 ** -52


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_iinfo(dtype):
    ref = np.iinfo(dtype)
    for arg in (dtype, xp.ones((2,), dtype=dtype)):
        ii = xp.iinfo(arg)
        assert (ii.bits, ii.min, ii.max) == (ref.bits, int(ref.min), int(ref.max))
        assert type(ii.bits) is int and type(ii.min) is int and type(ii.max) is int
        assert ii.dtype == dtype


@pytest.mark.parametrize("dtype", [b] + INT_DTYPES, ids=str)
def test_finfo_rejects_non_floating(dtype):
    with pytest.raises((TypeError, ValueError)):
        xp.finfo(dtype)


@pytest.mark.parametrize("dtype", [b] + REAL_FLOAT_DTYPES + COMPLEX_DTYPES, ids=str)
def test_iinfo_rejects_non_integer(dtype):
    with pytest.raises((TypeError, ValueError)):
        xp.iinfo(dtype)


# --- isdtype -------------------------------------------------------------------------------
KINDS = {
    "bool": {b},
    "signed integer": {i1, i2, i4, i8},
    "unsigned integer": {u1, u2, u4, u8},
    "integral": {i1, i2, i4, i8, u1, u2, u4, u8},
    "real floating": {f4, f8},
    "complex floating": {c8, c16},
    "numeric": set(NUMERIC_DTYPES),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_isdtype_kinds(kind):
    for dtype in ALL_DTYPES:
        assert xp.isdtype(dtype, kind) is (dtype in KINDS[kind]), (dtype, kind)


def test_isdtype_dtype_and_tuple():
    for d1, d2 in ALL_PAIRS:
        assert xp.isdtype(d1, d2) is (d1 == d2)
    assert xp.isdtype(f4, ("integral", f4))
    assert xp.isdtype(u2, ("bool", "unsigned integer"))
    assert not xp.isdtype(c8, ("real floating", "integral", b))
    assert xp.isdtype(c8, (f8, "complex floating"))
    assert not xp.isdtype(i8, ())


def test_isdtype_unknown_kind():
    with pytest.raises(ValueError):
        xp.isdtype(f4, "floating")
    with pytest.raises(ValueError):
        xp.isdtype(f4, ("float", "real floating"))


# --- astype --------------------------------------------------------------------------------
CAST_PAIRS = [(s, d) for s, d in ALL_PAIRS if not (s.kind == "c" and d.kind != "c" and d != b)]


@pytest.mark.parametrize("pair", CAST_PAIRS, ids=_id)
def test_astype(pair):
    src, dst = pair
    rng = np.random.default_rng(3)
    # Values every destination can represent exactly (no out-of-range casts).
    if src.kind in "fc":
        a = rng.integers(0, 100, size=(3, 4)).astype(src)
        if src.kind == "c" and dst.kind == "c":
            a = a + 1j * rng.integers(0, 100, size=(3, 4)).astype(src)
    else:
        a = make_data(src, (3, 4), rng, low=0, high=100)
    x = xp.asarray(a)
    y = xp.astype(x, dst)
    assert_array_equal(y, a.astype(dst), dtype=dst)
    # a strided view casts too
    assert_array_equal(xp.astype(x[:, ::-2], dst), a[:, ::-2].astype(dst), dtype=dst)


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES, ids=str)
def test_astype_special_values(dtype):
    a = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, 3.5], dtype=dtype)
    x = xp.asarray(a)
    for dst in (f4, f8, c8, c16):
        with np.errstate(all="ignore"):
            assert_array_equal(xp.astype(x, dst), a.astype(dst), dtype=dst)
    assert_array_equal(xp.astype(x, b), a.astype(bool), dtype=b)


def test_astype_copy_semantics():
    x = xp.asarray([1.0, 2.0, 3.0])
    assert xp.astype(x, x.dtype, copy=False) is x
    y = xp.astype(x, x.dtype)  # copy=True by default
    assert y is not x
    y[0] = 10.0
    assert float(x[0]) == 1.0
    z = xp.astype(x, f4, copy=False)  # needs a copy anyway
    assert z.dtype == f4 and z.device == DEVICE


def test_astype_complex_to_real_rejected():
    with pytest.raises(TypeError):
        xp.astype(xp.asarray([1 + 1j]), f8)


def test_astype_device_argument():
    x = xp.asarray([1, 2, 3])
    y = xp.astype(x, f4, device=DEVICE)
    assert_array_equal(y, np.array([1, 2, 3], dtype=np.float32))
    z = xp.astype(x, f8, device="cpu")
    assert z.device == xp.Device("cpu") and z.dtype == f8


# --- __array_namespace_info__ --------------------------------------------------------------
def test_info_dtypes():
    info = xp.__array_namespace_info__()
    all_ = info.dtypes()
    assert set(all_) == {str(d) for d in ALL_DTYPES}
    assert all(all_[k] == np.dtype(k) for k in all_)
    for kind, members in KINDS.items():
        assert set(info.dtypes(kind=kind).values()) == members
    assert set(info.dtypes(kind=("bool", "real floating")).values()) == {b, f4, f8}
    assert info.dtypes(device=DEVICE) == all_
    with pytest.raises(ValueError):
        info.dtypes(kind="floating")


def test_info_default_dtypes():
    info = xp.__array_namespace_info__()
    d = info.default_dtypes()
    assert d == {"real floating": f8, "complex floating": c16, "integral": i8, "indexing": i8}
    assert info.default_dtypes(device=DEVICE) == d
    # creation functions use them
    assert xp.asarray(1.0).dtype == d["real floating"]
    assert xp.asarray(1).dtype == d["integral"]
    assert xp.asarray(1j).dtype == d["complex floating"]
    assert xp.zeros(2).dtype == d["real floating"]
    assert xp.arange(3).dtype == d["integral"]
