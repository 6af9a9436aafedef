"""Creation functions: asarray, zeros/ones/empty/full(_like), arange, linspace, eye, tril/triu,
meshgrid. Results compared with NumPy: dtype, shape, device and values."""

import numpy as np
import pytest

import arrayx as xp
from conftest import (ALL_DTYPES, DEVICE, NUMERIC_DTYPES, REAL_FLOAT_DTYPES, assert_allclose,
                      assert_array_equal, make_data, to_numpy)


# --- asarray -------------------------------------------------------------------------------
@pytest.mark.parametrize("obj, dtype", [
    (True, xp.bool), (3, xp.int64), (-2.5, xp.float64), (1 - 2j, xp.complex128),
    ([1, 2, 3], xp.int64), ([1.5, -0.0, float("inf")], xp.float64), ([[1j, 2], [3, 4]], xp.complex128),
    ([[True, False]], xp.bool), ([], xp.float64), ([[1, 2], [3, 4]], xp.int64),
    ((1, 2.5), xp.float64), ([float("nan")], xp.float64),
])
def test_asarray_python_objects_default_dtypes(obj, dtype):
    x = xp.asarray(obj)
    assert_array_equal(x, np.asarray(obj, dtype=dtype), dtype=dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_asarray_dtype_argument(dtype):
    obj = [[1, 0, 1], [0, 1, 1]]
    x = xp.asarray(obj, dtype=dtype)
    assert_array_equal(x, np.asarray(obj, dtype=dtype), dtype=dtype)
    s = xp.asarray(1, dtype=dtype)
    assert_array_equal(s, np.asarray(1, dtype=dtype), dtype=dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_asarray_from_numpy_keeps_dtype(dtype):
    rng = np.random.default_rng(10)
    a = make_data(dtype, (3, 5), rng)
    assert_array_equal(xp.asarray(a), a)
    assert_array_equal(xp.asarray(a[1:, ::-2]), a[1:, ::-2])
    assert_array_equal(xp.asarray(a.T), a.T)
    assert_array_equal(xp.asarray(a[0, 0]), np.asarray(a[0, 0]))  # NumPy scalar


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(64, 48), (37, 70), (160, 208)])
def test_asarray_copy_of_transposes(dtype, shape):
    """Contiguous copies of x.T, x[1:, 1:].T and x[::-1].T: on CUDA the transposing tile, with
    vectors where the sides are multiples of the vector (not the offset view), else one element
    at a time; whole and partial tiles."""
    rng = np.random.default_rng(11)
    a = make_data(dtype, shape, rng)
    x = xp.asarray(a)
    for xv, av in ((x.mT, a.T), (x[1:, 1:].mT, a[1:, 1:].T), (x[::-1].mT, a[::-1].T)):
        assert_array_equal(xp.asarray(xv, copy=True), np.ascontiguousarray(av))


def test_asarray_large_python_ints():
    x = xp.asarray([2 ** 63 - 1, -2 ** 63])
    assert_array_equal(x, np.array([2 ** 63 - 1, -2 ** 63], dtype=np.int64))
    x = xp.asarray([2 ** 64 - 1], dtype=xp.uint64)
    assert_array_equal(x, np.array([2 ** 64 - 1], dtype=np.uint64))
    with pytest.raises(OverflowError):
        xp.asarray(256, dtype=xp.uint8)
    with pytest.raises(OverflowError):
        xp.asarray(-1, dtype=xp.uint32)


def test_asarray_of_arrayx_array():
    x = xp.asarray([1.0, 2.0, 3.0])
    assert xp.asarray(x) is x
    y = xp.asarray(x, copy=True)
    assert y is not x
    y[0] = -5.0
    assert float(x[0]) == 1.0
    z = xp.asarray(x, dtype=xp.float32)
    assert_array_equal(z, np.array([1, 2, 3], dtype=np.float32))
    with pytest.raises(ValueError):
        xp.asarray(x, dtype=xp.float32, copy=False)
    assert xp.asarray(x, copy=False) is x
    # nested sequences holding 0-d arrays
    w = xp.asarray([x[0], x[2]])
    assert_array_equal(w, np.array([1.0, 3.0]))


def test_asarray_copy_false_python_sequence_raises():
    with pytest.raises(ValueError):
        xp.asarray([1, 2], copy=False)
    with pytest.raises(ValueError):
        xp.asarray(1.0, copy=False)


def test_asarray_numpy_copy_semantics():
    a = np.arange(6.0)
    x = xp.asarray(a, copy=True)
    a[0] = 100.0
    assert float(x[0]) == 0.0
    if DEVICE.kind == "cpu":
        y = xp.asarray(a, copy=False)
        a[1] = -7.0
        assert float(y[1]) == -7.0  # shares memory
    else:
        with pytest.raises(ValueError):
            xp.asarray(a, copy=False)


def test_asarray_buffer_protocol():
    import array
    buf = array.array("f", [1.0, 2.0, 3.5])
    x = xp.asarray(buf)
    assert_array_equal(x, np.array([1.0, 2.0, 3.5], dtype=np.float32))


def test_asarray_rejects_unsupported():
    with pytest.raises(TypeError):
        xp.asarray(np.ones(3, dtype=np.float16))
    with pytest.raises(TypeError):
        xp.asarray([1, 2], dtype="float16")
    with pytest.raises(TypeError):
        xp.asarray(["a", "b"])
    with pytest.raises(TypeError):
        xp.asarray(1.5, dtype=xp.int32)


# --- zeros, ones, empty, full --------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), 0, 4, (2, 3), (0, 5), (2, 1, 3)])
@pytest.mark.parametrize("dtype", [None, xp.int8, xp.uint32, xp.float32, xp.complex64, xp.bool])
def test_zeros_ones_empty(shape, dtype):
    npshape = (shape,) if isinstance(shape, int) else shape
    want = xp.float64 if dtype is None else dtype
    assert_array_equal(xp.zeros(shape, dtype=dtype), np.zeros(npshape, dtype=want), dtype=want)
    assert_array_equal(xp.ones(shape, dtype=dtype), np.ones(npshape, dtype=want), dtype=want)
    e = xp.empty(shape, dtype=dtype)
    assert e.shape == npshape and e.dtype == want and e.device == DEVICE


@pytest.mark.parametrize("fill, dtype, want", [
    (7, None, xp.int64), (-2.5, None, xp.float64), (True, None, xp.bool), (1 + 2j, None, xp.complex128),
    (3, xp.float32, xp.float32), (-3, xp.int8, xp.int8), (200, xp.uint8, xp.uint8),
    (float("nan"), xp.float32, xp.float32), (float("-inf"), None, xp.float64), (-0.0, None, xp.float64),
    (2.5, xp.complex64, xp.complex64), (False, xp.bool, xp.bool),
])
def test_full(fill, dtype, want):
    x = xp.full((2, 3), fill, dtype=dtype)
    assert_array_equal(x, np.full((2, 3), fill, dtype=want), dtype=want)
    assert_array_equal(xp.full(4, fill, dtype=dtype), np.full(4, fill, dtype=want), dtype=want)
    assert_array_equal(xp.full((), fill, dtype=dtype), np.full((), fill, dtype=want), dtype=want)


def test_full_invalid_fill():
    with pytest.raises(TypeError):
        xp.full((2,), 1.5, dtype=xp.int32)
    with pytest.raises(TypeError):
        xp.full((2,), 1j, dtype=xp.float64)
    with pytest.raises(OverflowError):
        xp.full((2,), 300, dtype=xp.int8)
    with pytest.raises(TypeError):
        xp.full((2,), "x")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_like_functions(dtype):
    rng = np.random.default_rng(11)
    a = make_data(dtype, (3, 2), rng)
    x = xp.asarray(a)
    assert_array_equal(xp.zeros_like(x), np.zeros_like(a))
    assert_array_equal(xp.ones_like(x), np.ones_like(a))
    e = xp.empty_like(x)
    assert e.shape == x.shape and e.dtype == x.dtype and e.device == x.device
    fill = {"b": True, "i": -3, "u": 5, "f": -1.25, "c": 2 - 1j}[dtype.kind]
    assert_array_equal(xp.full_like(x, fill), np.full_like(a, fill))
    # dtype override, and a view as the model
    assert_array_equal(xp.zeros_like(x[::2], dtype=xp.float32), np.zeros((2, 2), np.float32))
    assert_array_equal(xp.ones_like(x.mT, dtype=xp.int16), np.ones((2, 3), np.int16))


def test_like_functions_device_argument():
    x = xp.asarray([1.0, 2.0])
    z = xp.zeros_like(x, device="cpu")
    assert z.device == xp.Device("cpu")
    assert to_numpy(z).tolist() == [0.0, 0.0]


# --- arange --------------------------------------------------------------------------------
@pytest.mark.parametrize("args, kwargs", [
    ((5,), {}), ((0,), {}), ((-3,), {}), ((2, 9), {}), ((2, 9, 3), {}), ((9, 2, -2), {}),
    ((10, 0, -1), {}), ((3, 3), {}), ((5, 1), {}), ((0, 10, 20), {}),
    ((5,), {"dtype": xp.uint8}), ((255, -1, -1), {"dtype": xp.uint8}), ((-128, 128, 17), {"dtype": xp.int8}),
    ((0, 200, 100), {"dtype": xp.int8}), ((1, 2 ** 40, 2 ** 38), {"dtype": xp.int64}),
    ((5,), {"dtype": xp.float32}), ((0.5,), {}), ((0, 1, 0.1), {}), ((1.0, -1.0, -0.25), {}),
    ((-2.5, 3, 0.5), {"dtype": xp.float32}), ((0, 2), {"dtype": xp.float64}),
])
def test_arange(args, kwargs):
    x = xp.arange(*args, **kwargs)
    expected = np.arange(*args, dtype=kwargs.get("dtype"))
    if "dtype" not in kwargs:
        expected = expected.astype(np.int64 if all(isinstance(a, int) for a in args) else np.float64)
    if expected.dtype.kind == "f":
        assert_allclose(x, expected, rtol=1e-6, atol=1e-12)
    else:
        assert_array_equal(x, expected)


def test_arange_invalid():
    with pytest.raises(ValueError):
        xp.arange(0, 5, 0)
    with pytest.raises(TypeError):
        xp.arange(0, 5, 0.5, dtype=xp.int32)
    with pytest.raises(TypeError, match="bool"):
        xp.arange(5, dtype=xp.bool)
    with pytest.raises(OverflowError):
        xp.arange(0, 300, 1, dtype=xp.uint8)
    with pytest.raises(ValueError, match="finite"):
        xp.arange(0, float("inf"), 1.0)
    with pytest.raises(TypeError, match="scalar or a 0-d array"):
        xp.arange(xp.asarray([1, 2]))


# --- linspace ------------------------------------------------------------------------------
@pytest.mark.parametrize("start, stop, num, endpoint, dtype", [
    (0, 1, 5, True, None), (0, 1, 5, False, None), (-3.5, 7, 11, True, xp.float32), (2, 2, 4, True, None),
    (0, 1, 1, True, None), (0, 1, 1, False, None), (0, 1, 0, True, None), (10, -10, 7, True, None),
    (0, 1 + 2j, 4, True, None), (1j, -1, 5, False, xp.complex64), (0, 1e10, 3, True, xp.float64),
])
def test_linspace(start, stop, num, endpoint, dtype):
    x = xp.linspace(start, stop, num, dtype=dtype, endpoint=endpoint)
    want = dtype or (xp.complex128 if isinstance(start, complex) or isinstance(stop, complex) else xp.float64)
    expected = np.linspace(start, stop, num, endpoint=endpoint).astype(want)
    assert_allclose(x, expected, dtype=want, rtol=1e-6 if want in (xp.float32, xp.complex64) else 1e-14,
                    atol=1e-6 if want in (xp.float32, xp.complex64) else 1e-14)
    if num > 1 and endpoint:
        assert complex(x[0]) == complex(np.asarray(start, dtype=want))
        assert complex(x[-1]) == complex(np.asarray(stop, dtype=want))


def test_linspace_invalid():
    with pytest.raises(ValueError):
        xp.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="complex dtype"):
        xp.linspace(0, 1j, 3, dtype=xp.float64)
    with pytest.raises(TypeError, match="complex dtype"):
        xp.linspace(0, 1j, 3, dtype=xp.int32)
    with pytest.raises(TypeError, match=r"pass int\(num\)"):
        xp.linspace(0, 1, 3.0)
    with pytest.raises(TypeError, match=r"pass int\(num\)"):
        xp.linspace(0, 1, xp.asarray(3.0))
    # NumPy's cast would wrap these silently.
    with pytest.raises(OverflowError, match="uint8"):
        xp.linspace(0, 300, 3, dtype=xp.uint8)
    with pytest.raises(OverflowError, match="uint8"):
        xp.linspace(-1, 3, 3, dtype=xp.uint8)
    with pytest.raises(ValueError, match="finite"):
        xp.linspace(0, float("nan"), 3, dtype=xp.int32)


# --- eye -----------------------------------------------------------------------------------
@pytest.mark.parametrize("n_rows, n_cols, k", [(3, None, 0), (3, 5, 1), (5, 3, -2), (4, 4, 4), (4, 4, -5),
                                               (0, None, 0), (1, 3, 0), (3, 2, 1)])
@pytest.mark.parametrize("dtype", [None, xp.int32, xp.bool, xp.complex64])
def test_eye(n_rows, n_cols, k, dtype):
    x = xp.eye(n_rows, n_cols, k=k, dtype=dtype)
    want = dtype or xp.float64
    assert_array_equal(x, np.eye(n_rows, n_cols, k=k, dtype=want), dtype=want)


# --- tril / triu ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 2), (2, 3, 4), (0, 3), (1, 1, 2, 2)])
@pytest.mark.parametrize("k", [0, 1, -1, 3, -4])
def test_tril_triu(shape, k):
    rng = np.random.default_rng(12)
    a = make_data(xp.float64, shape, rng)
    x = xp.asarray(a)
    assert_array_equal(xp.tril(x, k=k), np.tril(a, k))
    assert_array_equal(xp.triu(x, k=k), np.triu(a, k))


@pytest.mark.parametrize("dtype", [xp.bool, xp.int16, xp.uint64, xp.complex128], ids=str)
def test_tril_triu_dtypes_and_views(dtype):
    rng = np.random.default_rng(13)
    a = make_data(dtype, (5, 6), rng)
    x = xp.asarray(a)
    assert_array_equal(xp.tril(x.mT), np.tril(a.T))
    assert_array_equal(xp.triu(x[1:, ::-2], k=1), np.triu(a[1:, ::-2], 1))
    with pytest.raises(ValueError):
        xp.tril(x[0])


# --- meshgrid ------------------------------------------------------------------------------
@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sizes", [(3,), (2, 4), (3, 1, 2), (0, 3), (2, 3, 4, 1)])
def test_meshgrid(indexing, sizes):
    rng = np.random.default_rng(14)
    arrays = [make_data(xp.float32, (n,), rng) for n in sizes]
    got = xp.meshgrid(*[xp.asarray(a) for a in arrays], indexing=indexing)
    expected = np.meshgrid(*arrays, indexing=indexing)
    assert isinstance(got, (list, tuple)) and len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_array_equal(g, e)


def test_meshgrid_strided_inputs_and_errors():
    a = np.arange(10.0)
    got = xp.meshgrid(xp.asarray(a)[::3], xp.asarray(a)[8:1:-2])
    for g, e in zip(got, np.meshgrid(a[::3], a[8:1:-2])):
        assert_array_equal(g, e)
    assert xp.meshgrid() in ([], ())
    with pytest.raises(ValueError):
        xp.meshgrid(xp.ones((2, 2)))
    with pytest.raises(ValueError):
        xp.meshgrid(xp.ones(2), indexing="xz")


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
def test_creation_result_is_writable_and_independent(dtype):
    x = xp.zeros((3,), dtype=dtype)
    y = xp.zeros((3,), dtype=dtype)
    x[1] = 1
    assert to_numpy(x).tolist() == np.array([0, 1, 0], dtype=dtype).tolist()
    assert to_numpy(y).tolist() == np.zeros(3, dtype=dtype).tolist()


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES, ids=str)
def test_creation_device_argument(dtype):
    for fn in (lambda d: xp.zeros(2, dtype=dtype, device=d), lambda d: xp.ones(2, dtype=dtype, device=d),
               lambda d: xp.full(2, 1.0, dtype=dtype, device=d), lambda d: xp.arange(2, dtype=dtype, device=d),
               lambda d: xp.linspace(0, 1, 2, dtype=dtype, device=d), lambda d: xp.eye(2, dtype=dtype, device=d),
               lambda d: xp.asarray([1.0, 2.0], dtype=dtype, device=d), lambda d: xp.empty(2, dtype=dtype, device=d)):
        assert fn(None).device == DEVICE
        assert fn(DEVICE).device == DEVICE
        assert fn(str(DEVICE)).device == DEVICE
        assert fn("cpu").device == xp.Device("cpu")


def test_asarray_copy_semantics_with_numpy_input():
    rng = np.random.default_rng(5)
    host = rng.standard_normal(6)
    copied = xp.asarray(host, copy=True)
    host_before = host.copy()
    host[0] = 1e9
    np.testing.assert_array_equal(to_numpy(copied), host_before)
    # A cast needs a copy: copy=False must refuse rather than copy silently.
    with pytest.raises(ValueError):
        xp.asarray(host, dtype=xp.float32, copy=False)
    cast = xp.asarray(host, dtype=xp.float32)
    assert cast.dtype == xp.float32
    np.testing.assert_array_equal(to_numpy(cast), host.astype(np.float32))


# --- NumPy's semantics where the standard is silent (issue 21) ------------------------------
@pytest.mark.parametrize("start, stop, num, endpoint", [
    (0, 10, 4, True), (-10, 3, 7, True), (-10, 3, 7, False), (3, -10, 9, True), (-0.5, 0.5, 5, True),
    (0, 1, 0, True), (5, 5, 3, True), (0, 7, 1, False), (-100, 100, 201, True), (0.9, 17.1, 13, False),
])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "bool"])
def test_linspace_integer_dtype_as_numpy(start, stop, num, endpoint, dtype):
    expected = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    assert_array_equal(xp.linspace(start, stop, num, endpoint=endpoint, dtype=getattr(xp, dtype)), expected)


def _bound(value, how):
    """A bound as a client passes it: a NumPy scalar, a 0-d NumPy array or a 0-d arrayx array."""
    if how == "numpy scalar":
        return value
    if how == "numpy 0-d":
        return np.asarray(value)
    return xp.asarray(np.asarray(value))


@pytest.mark.parametrize("how", ["numpy scalar", "numpy 0-d", "arrayx 0-d"])
@pytest.mark.parametrize("bound_type", [np.float32, np.complex64, np.float64])
@pytest.mark.parametrize("dtype", [None, "float32", "float64", "complex64", "int32"])
def test_linspace_computes_in_the_precision_of_its_bounds_as_numpy(rng, how, bound_type, dtype):
    # NumPy computes in its bounds' result type (float32 bounds: float32 arithmetic, each step
    # rounded) and casts at the end; SciPy's histograms rely on edges equal to NumPy's.
    if bound_type is np.complex64 and dtype in ("int32", "float32", "float64"):
        with pytest.raises(TypeError, match="complex dtype"):  # NumPy drops the imaginary parts
            xp.linspace(_bound(np.complex64(1j), how), 1, 3, dtype=getattr(xp, dtype))
        return
    for _ in range(6):
        lo, hi = sorted(rng.uniform(-50, 50, size=2))
        if bound_type is np.complex64:
            lo, hi = lo + 1j * hi, hi - 0.5j * lo
        num, endpoint = int(rng.integers(0, 40)), bool(rng.integers(2))
        start, stop = bound_type(lo), bound_type(hi)
        expected = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
        got = xp.linspace(_bound(start, how), _bound(stop, how), num, endpoint=endpoint,
                          dtype=None if dtype is None else getattr(xp, dtype))
        # no dtype: the standard's default (float64 or complex128) holds NumPy's values exactly
        want = dtype or ("complex128" if bound_type is np.complex64 else "float64")
        assert got.dtype == getattr(xp, want)
        assert_array_equal(got, expected.astype(want))
    # a step that underflows to zero: NumPy divides first, then scales by stop - start
    tiny = np.float32(1e-38)
    expected = np.linspace(np.float32(0), tiny, 7, dtype=np.float32)
    assert_array_equal(xp.linspace(_bound(np.float32(0), how), _bound(tiny, how), 7,
                                   dtype=xp.float32), expected)


def test_linspace_with_python_bounds_computes_in_float64():
    # Python numbers are weak: NumPy computes in float64 and rounds once to float32
    expected = np.linspace(0.1, 0.7, 23, dtype=np.float32)
    assert_array_equal(xp.linspace(0.1, 0.7, 23, dtype=xp.float32), expected)
    assert_array_equal(xp.linspace(np.float64(0.1), 0.7, 23, dtype=xp.float32), expected)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_linspace_unsigned_dtype_as_numpy(rng, dtype):
    for _ in range(5):
        start, stop = sorted(rng.uniform(0, 200, size=2))
        num = int(rng.integers(0, 30))
        expected = np.linspace(start, stop, num, dtype=dtype)
        assert_array_equal(xp.linspace(start, stop, num, dtype=getattr(xp, dtype)), expected)


@pytest.mark.parametrize("args", [(5,), (2, 9, 3), (-3, 3, 0.5), (1.5, -2, -0.25), (0,), (4, 4), (0, 1, 0.1)])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_arange_complex_dtype_as_numpy(args, dtype):
    got = xp.arange(*args, dtype=getattr(xp, dtype))
    # complex64 is float32's arange cast, which may differ from NumPy's float32 fill in the last ulp.
    assert_allclose(got, np.arange(*args, dtype=dtype))
    assert_array_equal(got, to_numpy(xp.arange(*args, dtype=xp.float32 if dtype == "complex64" else xp.float64))
                       .astype(dtype))


def test_numpy_scalars_and_0d_arrays_where_python_scalars_are_expected(rng):
    a0, b0 = xp.asarray(-1.5), xp.asarray(2.0)
    assert_array_equal(xp.linspace(a0, b0, xp.asarray(4)), np.linspace(-1.5, 2.0, 4))
    assert_array_equal(xp.linspace(np.float32(0), np.int64(3), np.int64(4)), np.linspace(0, 3, 4))
    assert_array_equal(xp.linspace(xp.asarray(1j), 2, 3), np.linspace(1j, 2, 3))
    assert_array_equal(xp.arange(xp.asarray(5)), np.arange(5))
    assert_array_equal(xp.arange(np.int64(5)), np.arange(5))
    assert_array_equal(xp.arange(np.int32(1), np.uint8(9), np.int64(2)), np.arange(1, 9, 2))
    assert_array_equal(xp.arange(xp.asarray(0.5), np.float64(3)), np.arange(0.5, 3))
    assert_array_equal(xp.arange(np.array(4)), np.arange(4))
    assert_array_equal(xp.eye(np.int64(3)), np.eye(3))
    assert_array_equal(xp.eye(xp.asarray(2), np.int16(3), k=np.int8(1)), np.eye(2, 3, k=1))
    for shape, expected in ((np.int64(3), (3,)), ((np.int32(2), xp.asarray(3)), (2, 3)),
                            ((np.uint8(0),), (0,)), ((), ())):
        assert_array_equal(xp.zeros(shape), np.zeros(expected))
        assert xp.empty(shape).shape == expected
    v = make_data(xp.float32, (), rng)
    for fill, dtype in ((xp.asarray(v), "float32"), (np.float32(v), "float32"), (np.int8(-3), "int8"),
                        (np.True_, "bool"), (np.array(2.5), "float64"), (xp.asarray(1 + 2j), "complex128")):
        host_fill = to_numpy(fill) if isinstance(fill, xp.Array) else fill
        assert_array_equal(xp.full((2, 3), fill), np.full((2, 3), host_fill, dtype=dtype))
    assert_array_equal(xp.full((2,), np.float64(0.5), dtype=xp.float32), np.full(2, 0.5, np.float32))
    with pytest.raises(TypeError, match="must be an integer"):
        xp.eye(np.float64(3.0))
    with pytest.raises(TypeError):
        xp.full((2,), np.float64(1.5), dtype=xp.int32)
    with pytest.raises(TypeError, match="integer"):
        xp.linspace(0, 1, np.float32(2.5))


@pytest.mark.parametrize("r", [range(7), range(2, 30, 3), range(10, -5, -4), range(0), range(5, 5),
                               range(-2**62, 2**62, 2**61)])
@pytest.mark.parametrize("dtype", [None, "int64", "int32", "float64", "bool", "complex64"])
def test_asarray_range_as_numpy(r, dtype):
    if dtype == "int32" and len(r) and not -2**31 <= min(r) <= max(r) < 2**31:
        with pytest.raises(OverflowError):
            xp.asarray(r, dtype=xp.int32)
        return
    expected = np.asarray(list(r), dtype=dtype or np.int64)
    assert_array_equal(xp.asarray(r, dtype=None if dtype is None else getattr(xp, dtype)), expected)


class _LazySequence:
    def __len__(self):
        return 2**40

    def __getitem__(self, i):
        if i >= 2**40:
            raise IndexError(i)
        return i


@pytest.mark.parametrize("make", [
    lambda: xp.asarray(range(2**40)), lambda: xp.asarray(range(0, 2**58, 2)), lambda: xp.asarray(_LazySequence()),
    lambda: xp.zeros((2**20, 2**20)), lambda: xp.ones(2**40, dtype=xp.complex128),
    lambda: xp.empty((2**21, 2**21)), lambda: xp.full((2**40,), 1.0),
    lambda: xp.arange(2**40), lambda: xp.linspace(0, 1, 2**40), lambda: xp.eye(2**21),
])
def test_absurd_sizes_raise_before_allocating(make):
    # Only the host check applies on cpu; on cuda the allocator refuses the same sizes, also
    # before anything is written.
    with pytest.raises(MemoryError, match="needs|cannot allocate"):
        make()


@pytest.mark.parametrize("make", [
    lambda: xp.zeros((2**40, 2**40)), lambda: xp.empty((2**62, 4)), lambda: xp.arange(2**62),
    lambda: xp.asarray(range(2**62)), lambda: xp.full((2**31, 2**31, 4), 0),
])
def test_overflowing_sizes_raise_value_error(make):
    with pytest.raises(ValueError, match="more than an array can address"):
        make()
