"""Devices (parsing, default device, ARRAYX_DEVICE, mixing devices) and the backend registry
(a fake device kind registered with a few primitives: the rest fall back to the CPU through
NumPy with one HostFallbackWarning per primitive, or raise HostFallbackError)."""

import os
import pickle
import warnings

import numpy as np
import pytest

import arrayx as xp
import arrayx._devices as devices
import arrayx._registry as registry
from conftest import DEVICE, assert_array_equal, run_python, to_numpy

CPU = xp.Device("cpu")


# --- Device parsing ------------------------------------------------------------------------
def test_cpu_device_parsing():
    assert xp.Device("cpu") is CPU
    assert xp.Device() is CPU
    assert xp.Device(" CPU ") is CPU
    assert xp.Device(CPU) is CPU
    assert str(CPU) == "cpu" and repr(CPU) == "Device('cpu')"
    assert CPU == "cpu" and CPU != "cuda:0" and CPU != "nonsense"
    assert hash(CPU) == hash(xp.Device("cpu"))
    assert pickle.loads(pickle.dumps(CPU)) is CPU


@pytest.mark.parametrize("spec", ["tpu", "cuda:x", "cuda:-1", "", "cpu:1", "cuda:0:0", "metal", "gpu:a"])
def test_unknown_device_string(spec):
    with pytest.raises(ValueError) as info:
        xp.Device(spec)
    assert repr(spec) in str(info.value) or spec in str(info.value)
    with pytest.raises(ValueError):
        xp.asarray([1.0], device=spec)
    with pytest.raises(ValueError):
        xp.zeros(2, device=spec)


@pytest.mark.parametrize("spec", [0, None, 1.5, ("cpu",)])
def test_device_of_wrong_type(spec):
    with pytest.raises((ValueError, TypeError)):
        xp.Device(spec)


def test_cuda_device_without_gpu():
    if devices.cuda_device_count() > 0:
        pytest.skip("a GPU is present")
    for spec in ("cuda", "cuda:0", "gpu", "CUDA:0"):
        with pytest.raises(ValueError) as info:
            xp.Device(spec)
        assert "cuda" in str(info.value).lower()
    with pytest.raises(ValueError):
        xp.asarray([1.0], device="cuda")


@pytest.mark.gpu
def test_cuda_device_parsing_with_gpu():
    d = xp.Device("cuda")
    assert d is xp.Device("cuda:0") and d is xp.Device("gpu") and str(d) == "cuda:0"
    assert d == "cuda:0" and d != CPU
    n = devices.cuda_device_count()
    with pytest.raises(ValueError):
        xp.Device(f"cuda:{n}")
    x = xp.asarray([1.0, 2.0], device=d)
    assert x.device is d
    assert_array_equal(x.to_device("cpu"), np.array([1.0, 2.0]), device=CPU)
    assert xp.asarray([3.0], device="cpu").to_device(d).device is d


# --- the default device --------------------------------------------------------------------
def test_default_device_is_used():
    assert devices.default_device() is DEVICE
    if "ARRAYX_DEVICE" not in os.environ:
        assert DEVICE is (xp.Device("cuda:0") if devices.cuda_device_count() > 0 else CPU)
    for x in (xp.asarray([1]), xp.zeros(2), xp.arange(3), xp.full((), 1.0), xp.eye(2), xp.linspace(0, 1, 3)):
        assert x.device is DEVICE
    info = xp.__array_namespace_info__()
    assert info.default_device() is DEVICE
    assert CPU in info.devices() and DEVICE in info.devices()


def test_arrayx_device_env_override(monkeypatch):
    monkeypatch.setattr(devices, "_default_device", None)
    monkeypatch.setenv("ARRAYX_DEVICE", "cpu")
    assert devices.default_device() is CPU
    assert xp.asarray([1.0]).device is CPU
    monkeypatch.setattr(devices, "_default_device", None)
    monkeypatch.setenv("ARRAYX_DEVICE", "bogus")
    with pytest.raises(ValueError):
        devices.default_device()
    monkeypatch.setattr(devices, "_default_device", None)
    monkeypatch.delenv("ARRAYX_DEVICE")
    assert devices.default_device() is (xp.Device("cuda:0") if devices.cuda_device_count() > 0 else CPU)


def test_arrayx_device_env_in_a_fresh_process():
    r = run_python("-c", "import arrayx as xp; print(xp.asarray([1.0]).device, "
                         "xp.__array_namespace_info__().default_device())", ARRAYX_DEVICE="cpu")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["cpu", "cpu"]
    r = run_python("-c", "import arrayx as xp; xp.asarray([1.0])", ARRAYX_DEVICE="not-a-device")
    assert r.returncode != 0 and "ValueError" in r.stderr and "not-a-device" in r.stderr


def test_set_default_device(monkeypatch):
    monkeypatch.setattr(devices, "_default_device", devices._default_device)
    xp.set_default_device("cpu")
    assert xp.zeros(1).device is CPU
    xp.set_default_device(None)
    assert devices.default_device() is DEVICE or "ARRAYX_DEVICE" in os.environ
    with pytest.raises(ValueError):
        xp.set_default_device("nowhere")


# --- a fake device kind through the registry -----------------------------------------------
class FakeNative:
    """A fake device's native array: a NumPy array in disguise."""

    def __init__(self, host, index=0):
        self.host = host
        self.device_index = index

    shape = property(lambda self: self.host.shape)
    dtype = property(lambda self: self.host.dtype)
    ndim = property(lambda self: self.host.ndim)
    size = property(lambda self: self.host.size)


CALLS = []


def _from_host(device, host, copy):
    CALLS.append("from_host")
    return FakeNative(host if copy is False else np.array(host, copy=True), device.index)


def _to_host(a):
    CALLS.append("to_host")
    return a.host.copy()


def _setitem(a, key, value):
    a.host[key] = value.host if isinstance(value, FakeNative) else value


def _binary(name, a, b, dtype, out=None):
    CALLS.append(f"binary:{name}")
    if name != "add":  # implemented for some names only; the rest go to the host
        return registry.host_fallback("testdev", "binary")(name, a, b, dtype, out=out)
    ha = a.host if isinstance(a, FakeNative) else a
    hb = b.host if isinstance(b, FakeNative) else b
    if out is not None:
        np.add(ha, hb, out=out.host)
        return out
    return FakeNative(np.asarray(np.add(ha, hb)), 0)


@pytest.fixture
def fake(monkeypatch):
    """A registered device kind 'testdev' with from_host, to_host, setitem and binary('add')."""
    backend = registry.register_backend("testdev", {"from_host": _from_host, "to_host": _to_host,
                                                    "setitem": _setitem, "binary": _binary})
    monkeypatch.setattr(registry, "_warned", set())
    monkeypatch.setattr(registry, "_fallback_mode", "warn")
    CALLS.clear()
    dev = xp.Device._make("testdev", 0)
    yield dev
    registry._backends.pop("testdev", None)
    assert backend.kind == "testdev"


def _fallback_warnings(record):
    return [w for w in record if issubclass(w.category, xp.HostFallbackWarning)]


def test_fake_backend_transfers(fake):
    x = xp.asarray([1.0, 2.0, 3.0], device=fake)
    assert x.device is fake and x.shape == (3,) and x.dtype == xp.float64
    assert "from_host" in CALLS
    np.testing.assert_array_equal(to_numpy(x), [1.0, 2.0, 3.0])
    assert "testdev:0" in repr(x)
    c = x.to_device("cpu")
    assert c.device is CPU
    back = c.to_device(fake)
    assert back.device is fake
    np.testing.assert_array_equal(to_numpy(back), [1.0, 2.0, 3.0])


def test_fake_backend_native_primitive_does_not_warn(fake):
    x = xp.asarray([1.0, 2.0], device=fake)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        y = x + x
        y += 1.0
    assert not _fallback_warnings(record)
    assert y.device is fake
    np.testing.assert_array_equal(to_numpy(y), [3.0, 5.0])


def test_partial_primitive_falls_back_once(fake):
    """binary() handles 'add' itself and sends 'multiply' to the host."""
    x = xp.asarray([1.0, 2.0], device=fake)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        y = x * x
        z = xp.multiply(x, 3.0)
    assert len(_fallback_warnings(record)) == 1
    assert "binary" in str(_fallback_warnings(record)[0].message)
    assert y.device is fake and z.device is fake
    np.testing.assert_array_equal(to_numpy(y), [1.0, 4.0])
    np.testing.assert_array_equal(to_numpy(z), [3.0, 6.0])


@pytest.mark.parametrize("values", [[0.0, 1.0, 2.0], [0.0], [5.0]])
def test_in_place_operator_through_host_fallback(fake, values):
    """x *= y where the backend sends binary('multiply', ..., out=x) to the host: the result is
    written back into x itself (multi-element and falsy one-element arrays alike)."""
    x = xp.asarray(values, device=fake)
    native = x._data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", xp.HostFallbackWarning)
        x *= 3.0
        x -= xp.asarray([1.0], device=fake)
    assert x._data is native and x.device is fake
    np.testing.assert_array_equal(to_numpy(x), np.asarray(values) * 3.0 - 1.0)


def test_creation_primitive_falls_back(fake):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        x = xp.full((2, 2), 7.0, device=fake)
        y = xp.zeros(3, device=fake)
    assert x.device is fake and y.device is fake
    np.testing.assert_array_equal(to_numpy(x), np.full((2, 2), 7.0))
    assert len(_fallback_warnings(record)) == 1  # 'full' once (zeros is full too)


def test_missing_primitive_falls_back_with_one_warning(fake):
    """unary() is not implemented at all: it runs through NumPy, warns once, and the result
    lives on the fake device."""
    x = xp.asarray([0.0, 1.0, 4.0], device=fake)
    with pytest.warns(xp.HostFallbackWarning, match="unary"):
        y = xp.sqrt(x)
    assert y.device is fake
    np.testing.assert_array_equal(to_numpy(y), [0.0, 1.0, 2.0])
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        z = xp.negative(x)
        xp.reshape(x, (3, 1))
    messages = [str(w.message) for w in _fallback_warnings(record)]
    assert not [m for m in messages if "'unary'" in m], messages  # once per primitive
    assert len([m for m in messages if "'reshape'" in m]) == 1, messages
    assert z.device is fake
    np.testing.assert_array_equal(to_numpy(z), [-0.0, -1.0, -4.0])


def test_host_fallback_error_mode(fake, monkeypatch):
    x = xp.asarray([1.0, 2.0], device=fake)
    xp.set_host_fallback("error")
    with pytest.raises(xp.HostFallbackError, match="unary"):
        xp.sin(x)
    with pytest.raises(xp.HostFallbackError, match="binary"):
        x * x
    with pytest.raises(xp.HostFallbackError):
        xp.full((2,), 1.0, device=fake)
    y = x + x  # implemented: fine
    np.testing.assert_array_equal(to_numpy(y), [2.0, 4.0])
    xp.set_host_fallback("allow")
    with warnings.catch_warnings():
        warnings.simplefilter("error", xp.HostFallbackWarning)
        z = x * x
    np.testing.assert_array_equal(to_numpy(z), [1.0, 4.0])


def test_set_host_fallback_rejects_unknown_mode():
    with pytest.raises(ValueError):
        xp.set_host_fallback("sometimes")


def test_register_backend_validation():
    with pytest.raises(ValueError):
        registry.register_backend("bad1", {"from_host": _from_host, "to_host": _to_host, "setitem": _setitem,
                                           "frobnicate": _binary})
    with pytest.raises(ValueError):
        registry.register_backend("bad2", {"from_host": _from_host})
    assert "bad1" not in registry._backends and "bad2" not in registry._backends


# --- mixing devices ------------------------------------------------------------------------
def _names_both(err, a, b):
    text = str(err.value)
    return str(a) in text and str(b) in text


def test_mixed_devices_raise_value_error_naming_both(fake):
    x = xp.asarray([1.0, 2.0], device=fake)
    c = xp.asarray([1.0, 2.0], device="cpu")
    for fn in (lambda: xp.add(x, c), lambda: c + x, lambda: xp.equal(c, x), lambda: xp.concat([c, x]),
               lambda: xp.stack([x, c]), lambda: xp.broadcast_arrays(c, x)):
        with pytest.raises(ValueError) as err:
            fn()
        assert _names_both(err, "cpu", "testdev:0"), str(err.value)
    with pytest.raises(ValueError) as err:
        c[xp.asarray([0], device=fake)]
    assert _names_both(err, "cpu", "testdev:0"), str(err.value)
    with pytest.raises(ValueError) as err:
        c[0:2] = x
    assert _names_both(err, "cpu", "testdev:0"), str(err.value)
    with pytest.raises(ValueError):
        x += c


@pytest.mark.gpu
def test_mixed_cpu_and_cuda_raise():
    g = xp.asarray([1.0], device="cuda")
    c = xp.asarray([1.0], device="cpu")
    with pytest.raises(ValueError) as err:
        g + c
    assert _names_both(err, "cpu", "cuda:0")


# --- implicit host copies (np.asarray of an array on a non-cpu device) ----------------------
@pytest.fixture
def host_copy(monkeypatch):
    """The implicit-host-copy setting, as if nothing had set it yet, restored afterwards."""
    import arrayx._settings as settings
    monkeypatch.setattr(settings, "_implicit_host_copy", None)
    monkeypatch.setattr(settings, "_warned", False)
    monkeypatch.delenv(settings.ENV_VAR, raising=False)
    return settings


@pytest.mark.parametrize("text, expected", [(None, False), ("", False), ("0", False), ("no", False),
                                            ("1", True), (" TRUE ", True), ("yes", True), ("on", True)])
def test_implicit_host_copy_env_parsing(host_copy, monkeypatch, text, expected):
    if text is not None:
        monkeypatch.setenv("ARRAYX_IMPLICIT_HOST_COPY", text)
    assert xp.get_implicit_host_copy() is expected


def test_implicit_host_copy_bad_env_value(host_copy, monkeypatch):
    monkeypatch.setenv("ARRAYX_IMPLICIT_HOST_COPY", "maybe")
    with pytest.raises(ValueError, match="ARRAYX_IMPLICIT_HOST_COPY"):
        xp.get_implicit_host_copy()


def test_set_implicit_host_copy_overrides_env(host_copy, monkeypatch):
    monkeypatch.setenv("ARRAYX_IMPLICIT_HOST_COPY", "1")
    xp.set_implicit_host_copy(False)
    assert xp.get_implicit_host_copy() is False
    xp.set_implicit_host_copy(True)
    assert xp.get_implicit_host_copy() is True
    with pytest.raises(TypeError):
        xp.set_implicit_host_copy("yes")
    assert issubclass(xp.ImplicitHostCopyWarning, UserWarning)


def test_implicit_host_copy_off_refuses_non_cpu_arrays(fake, host_copy):
    x = xp.asarray([1.0, 2.0], device=fake)
    with pytest.raises(TypeError, match=r"to_device\('cpu'\).*set_implicit_host_copy"):
        np.asarray(x)


def test_implicit_host_copy_on_copies_non_cpu_arrays(fake, host_copy):
    xp.set_implicit_host_copy(True)
    x = xp.asarray([[1, 2], [3, 4]], dtype=xp.int32, device=fake)
    CALLS.clear()
    with pytest.warns(xp.ImplicitHostCopyWarning, match="testdev:0"):
        n = np.asarray(x)
    assert CALLS == ["to_host"] and type(n) is np.ndarray and n.dtype == np.int32
    np.testing.assert_array_equal(n, [[1, 2], [3, 4]])
    n[0, 0] = 9
    assert x._data.host[0, 0] == 1  # a copy
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process
        np.testing.assert_array_equal(np.asarray(x, dtype=np.float64), [[1.0, 2.0], [3.0, 4.0]])
        assert np.asarray(x, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="copy"):
        np.asarray(x, copy=False)


def test_implicit_host_copy_env_in_a_fresh_process():
    code = ("import numpy as np, arrayx as xp; print(xp.get_implicit_host_copy()); "
            "print(np.asarray(xp.asarray([1.5], device='cpu')))")
    r = run_python("-c", code, ARRAYX_IMPLICIT_HOST_COPY="1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "[1.5]"]


def test_cpu_arrays_convert_whatever_the_setting(host_copy):
    x = xp.asarray([1.0, 2.0], device="cpu")
    for enabled in (False, True):
        xp.set_implicit_host_copy(enabled)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert np.asarray(x, copy=False) is x._data
