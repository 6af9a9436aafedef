"""NumPy ufuncs on arrayx arrays (Array.__array_ufunc__, arrayx/_numpy_ufuncs.py), on the device
under test: mapped ufuncs, reductions and accumulations against NumPy on random data with special
values, 0-d, empty and strided inputs; the NumPy fallback on cpu; the clean errors."""

import numpy as np
import pytest

import arrayx as xp
from conftest import DEVICE, assert_allclose, assert_array_equal, make_data, to_numpy

ON_CPU = DEVICE.kind == "cpu"

UNARY = [np.sqrt, np.exp, np.log1p, np.absolute, np.negative, np.sin, np.arctan, np.arcsinh,
         np.floor, np.rint, np.isfinite, np.isnan, np.signbit, np.square, np.conjugate]
BINARY = [np.add, np.subtract, np.multiply, np.true_divide, np.power, np.arctan2, np.maximum,
          np.minimum, np.less, np.equal, np.hypot, np.copysign, np.logaddexp, np.remainder]
# np.floor_divide maps to floor_divide too, whose special cases are the standard's rather than
# NumPy's (floor_divide(inf, 2) is inf, NumPy's NaN): test_elementwise checks those


@pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
@pytest.mark.parametrize("shape", [(), (0,), (7, 5)], ids=str)
def test_unary_ufuncs_run_as_arrayx_functions(rng, ufunc, shape):
    a = make_data(xp.float64, shape, rng)
    x = xp.asarray(a)
    with np.errstate(all="ignore"):
        expected = ufunc(a)
    got = ufunc(x)
    assert type(got) is xp.Array and got.device == x.device
    assert_allclose(got, expected)


@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_binary_ufuncs_broadcast_and_promote_as_arrayx(rng, ufunc):
    a = make_data(xp.float32, (4, 6), rng)
    b = make_data(xp.float32, (6,), rng, specials=False, low=0.5, high=3.0)
    x, y = xp.asarray(a), xp.asarray(b)
    with np.errstate(all="ignore"):
        assert_allclose(ufunc(x, y), ufunc(a, b))
        # a NumPy scalar is weak on either side: the float32 array decides the dtype
        assert_allclose(ufunc(np.float64(1.5), x), ufunc(np.float32(1.5), a))
        assert_allclose(ufunc(x[:, ::2], 2.0), ufunc(a[:, ::2], np.float32(2.0)))


def test_operands_take_the_dtype_of_numpys_loop(rng):
    b = rng.integers(0, 50, (4, 3))
    y = xp.asarray(b)
    for got, expected in ((np.sqrt(y), np.sqrt(b)), (np.exp(y[:, :1]), np.exp(b[:, :1])),
                          (np.true_divide(y, 3), np.true_divide(b, 3)),
                          (np.arctan2(y, xp.asarray(b.astype(np.float32))),
                           np.arctan2(b, b.astype(np.float32)))):
        assert_allclose(got, expected)


def test_numpy_scalar_operators_and_0d_arrays_stay_weak():
    a = np.array([1.0, 2.5, -3.0], dtype=np.float32)
    x = xp.asarray(a)
    for got, expected in ((np.float64(2.0) < x, np.float32(2.0) < a),
                          (np.float64(2.0) ** x, np.float32(2.0) ** a),
                          (np.array(0.5) - x, np.float32(0.5) - a),
                          (np.int64(3) * x, np.float32(3) * a),
                          (np.bool_(True) == (x > 0), a > 0)):
        assert_array_equal(got, expected)


@pytest.mark.parametrize("reduce_with, ufunc, kwargs", [
    (np.sum, np.add, {}), (np.prod, np.multiply, {}), (np.max, np.maximum, {}),
    (np.min, np.minimum, {}), (np.sum, np.add, {"axis": 1, "keepdims": True}),
    (np.prod, np.multiply, {"axis": (0, 2), "dtype": np.float64}),
    (np.max, np.maximum, {"axis": -1}), (np.sum, np.add, {"axis": 0, "dtype": np.float32}),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_numpy_reductions_run_as_arrayx_reductions(rng, reduce_with, ufunc, kwargs):
    a = make_data(xp.float32, (3, 4, 5), rng, specials=False)
    x = xp.asarray(a)
    assert_allclose(reduce_with(x, **kwargs), reduce_with(a, **kwargs))
    assert_allclose(ufunc.reduce(x, **{"axis": 0, **kwargs}), ufunc.reduce(a, **{"axis": 0, **kwargs}))


def test_logical_reductions_accumulations_and_0d(rng):
    a = rng.standard_normal((6, 3)) > 0
    x = xp.asarray(a)
    assert_array_equal(np.all(x, axis=0), np.all(a, axis=0))
    assert_array_equal(np.any(x), np.any(a))
    b = rng.integers(-4, 5, (5, 4))
    y = xp.asarray(b)
    assert_array_equal(np.add.accumulate(y), np.add.accumulate(b))
    assert_array_equal(np.multiply.accumulate(y, axis=1), np.multiply.accumulate(b, axis=1))
    assert_array_equal(np.sum(xp.asarray(2.5)), np.sum(np.asarray(2.5)))
    assert_array_equal(np.sum(xp.zeros((0, 3)), axis=0), np.zeros(3))


def test_numpy_arrays_and_out_are_refused_cleanly():
    x = xp.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="does not mix NumPy arrays"):
        np.array([1.0, 2.0]) + x
    with pytest.raises(TypeError, match="does not mix NumPy arrays"):
        np.add(x, np.ones(2))
    with pytest.raises(TypeError, match="out="):
        np.add(x, x, out=x)


@pytest.mark.skipif(not ON_CPU, reason="the NumPy fallback is the cpu device's")
def test_other_ufuncs_run_through_numpy_on_cpu(rng):
    a = make_data(xp.float64, (5, 3), rng)
    x = xp.asarray(a)
    with np.errstate(all="ignore"):
        q, r = np.divmod(x, 2.0)
        assert_array_equal(q, np.divmod(a, 2.0)[0])
        assert_array_equal(r, np.divmod(a, 2.0)[1])
        assert_array_equal(np.fmax(x, 0.0), np.fmax(a, 0.0))
        assert_array_equal(np.add.reduce(x, axis=0, where=a > 0), np.add.reduce(a, axis=0, where=a > 0))
    special = pytest.importorskip("scipy.special")
    assert_allclose(special.erf(x), special.erf(a))


@pytest.mark.skipif(ON_CPU, reason="a GPU device refuses what it has no kernel for")
def test_other_ufuncs_raise_type_error_on_a_gpu():
    x = xp.asarray([1.0, -2.0])
    with pytest.raises(TypeError, match="no arrayx counterpart.*to_device"):
        np.divmod(x, 2.0)
    with pytest.raises(TypeError, match="no arrayx counterpart"):
        np.add.reduce(x, initial=1.0)
    assert to_numpy(np.sqrt(x * x)).tolist() == [1.0, 2.0]
