"""Interoperability: array_api_compat recognises arrayx, and hypothesis' array API strategies
build on it and generate arrayx arrays."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import arrayx as xp
from conftest import DEVICE, assert_array_equal

array_api_compat = pytest.importorskip("array_api_compat")


def test_array_namespace_is_arrayx():
    x = xp.asarray([1.0])
    assert array_api_compat.array_namespace(x) is xp
    assert array_api_compat.array_namespace(x, xp.asarray([2, 3])) is xp
    assert array_api_compat.array_namespace(x, api_version="2025.12") is xp
    assert array_api_compat.is_array_api_obj(x)
    assert not array_api_compat.is_numpy_array(x)


def test_array_api_compat_device_and_to_device():
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert array_api_compat.device(x) == DEVICE
    y = array_api_compat.to_device(x, "cpu")
    assert y.device == xp.Device("cpu")
    np.testing.assert_array_equal(np.asarray(y), [[1.0, 2.0], [3.0, 4.0]])
    z = array_api_compat.to_device(y, DEVICE)
    assert_array_equal(z, np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert array_api_compat.size(x) == 4


def test_array_api_compat_helpers_on_views():
    x = xp.asarray(np.arange(12.0).reshape(3, 4))
    v = x[1:, ::-2]
    assert array_api_compat.array_namespace(v) is xp
    assert array_api_compat.device(v.mT) == DEVICE


# --- hypothesis.extra.array_api -------------------------------------------------------------
def _xps():
    from hypothesis.extra.array_api import make_strategies_namespace
    return make_strategies_namespace(xp)


def test_make_strategies_namespace_builds():
    xps = _xps()
    assert xps.api_version == "2025.12"
    for name in ("arrays", "scalar_dtypes", "numeric_dtypes", "real_dtypes", "complex_dtypes",
                 "integer_dtypes", "unsigned_integer_dtypes", "floating_dtypes", "boolean_dtypes",
                 "from_dtype", "array_shapes", "mutually_broadcastable_shapes", "indices"):
        assert callable(getattr(xps, name)), name


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_strategies_generate_arrays(data):
    xps = _xps()
    dtype = data.draw(xps.scalar_dtypes())
    assert dtype in (xp.bool, xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8, xp.uint16, xp.uint32,
                     xp.uint64, xp.float32, xp.float64, xp.complex64, xp.complex128)
    shape = data.draw(xps.array_shapes(min_dims=0, max_dims=3, max_side=4))
    x = data.draw(xps.arrays(dtype=dtype, shape=shape))
    assert isinstance(x, xp.Array)
    assert x.dtype == dtype and x.shape == shape and x.device == DEVICE


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_strategies_with_elements_and_uniqueness(data):
    xps = _xps()
    x = data.draw(xps.arrays(dtype=xp.int16, shape=(5,), elements={"min_value": -3, "max_value": 100},
                             unique=True))
    values = np.asarray(x.to_device("cpu"))
    assert len(set(values.tolist())) == 5 and values.min() >= -3
    f = data.draw(xps.arrays(dtype=xp.float32, shape=(3, 2), elements={"allow_nan": False}))
    assert not np.isnan(np.asarray(f.to_device("cpu"))).any()
    s = data.draw(xps.from_dtype(xp.uint8))
    assert 0 <= s <= 255
    i = data.draw(xps.indices(shape=(4, 3)))
    assert isinstance(i, tuple)
