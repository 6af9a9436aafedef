"""Shared helpers for the arrayx test suite.

Use from any test module (pytest puts tests/ on sys.path, so plain imports work):

    from conftest import to_numpy, DEVICE, assert_array_equal, assert_allclose, make_data

* ``to_numpy(x)``      -> numpy.ndarray: a host copy of an arrayx array
                         (``np.asarray(x.to_device("cpu"))``); other values go through np.asarray.
* ``DEVICE``            the device under test: arrayx's default device (``ARRAYX_DEVICE``
                         overrides it, e.g. ``ARRAYX_DEVICE=cuda``). Fixture: ``device``.
* ``assert_array_equal(x, expected, dtype=None, device=None, check_zero_sign=True)``
                         x is an arrayx Array on DEVICE with expected's shape and dtype (or
                         ``dtype``) and equal values (NaN == NaN, -0.0 != 0.0).
* ``assert_allclose(x, expected, dtype=None, device=None, rtol=None, atol=None)``
                         the same with a tolerance (default: ``tolerance(dtype)``).
* ``make_data(dtype, shape, rng, specials=True, low=None, high=None)``
                         random NumPy data incl. NaN, +-inf, +-0.0 for floating dtypes.
* ``ALL_DTYPES``, ``NUMERIC_DTYPES``, ``INT_DTYPES``, ``REAL_FLOAT_DTYPES``, ``COMPLEX_DTYPES``...
* ``rng`` fixture       ``np.random.default_rng(12345)``.
* ``run_threads(target, n)``
                         ``target(i)`` in n threads at once; fails with the errors raised,
                         each with its thread's index.
* ``run_python(*args, timeout=120, cwd=REPO, input=None, **env)``
                         ``python *args`` in a fresh process with this checkout (``REPO``) first
                         on PYTHONPATH and ``env`` set (None unsets a variable); returns the
                         ``subprocess.CompletedProcess`` with its output as text.
* ``run_with_scipy_array_api(script, *args, timeout=300)``
                         runs a Python script in a fresh process with ``SCIPY_ARRAY_API=1``
                         and asserts that it printed "ok" last.
* ``distributed_ops(dtype)``
                         the reductions arrayx.distributed takes for that dtype.
* ``xps``               ``hypothesis.extra.array_api.make_strategies_namespace(arrayx)``
                         (None when it cannot be built; test_interop reports why).
* ``@pytest.mark.gpu``  skips the test when ``arrayx._devices.cuda_device_count() == 0``.

Tests create arrays on the default device (plain ``xp.asarray(...)``), so the whole suite also
runs on CUDA with ``ARRAYX_DEVICE=cuda``.

Hypothesis: profile "arrayx" (max_examples=50, no deadline) is loaded by default; select another
with ``HYPOTHESIS_PROFILE=thorough`` (500 examples) or ``HYPOTHESIS_PROFILE=quick`` (10).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import arrayx as xp
import arrayx._devices as _devices

settings.register_profile("arrayx", max_examples=50, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("quick", max_examples=10, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "arrayx"))

#: The device under test: the default device (ARRAYX_DEVICE overrides it).
DEVICE = _devices.default_device()

#: The checkout's root: the folder holding the arrayx package under test and tests/.
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    from hypothesis.extra.array_api import make_strategies_namespace
    xps = make_strategies_namespace(xp)
except Exception:  # pragma: no cover - reported by test_interop
    xps = None


def to_numpy(x):
    """A NumPy copy of an arrayx array (via the CPU device); other values go through np.asarray."""
    if isinstance(x, xp.Array):
        return np.asarray(x.to_device("cpu"))
    return np.asarray(x)


def _parts(a):
    return [a] if a.dtype.kind != "c" else [a.real, a.imag]


def _same_values(got: np.ndarray, expected: np.ndarray, exact: bool, rtol=0.0, atol=0.0,
                 check_zero_sign=True):
    """Compare values. NaN and inf positions must match exactly (complex: part by part).
    exact: equal values (and signs of zeros unless check_zero_sign=False); otherwise within
    rtol/atol, for complex numbers relative to the magnitude |expected| (so a small part of a
    large number may differ by rounding, as on a GPU with fused multiply-add)."""
    if got.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, expected)
        return
    where = f"\n got {got}\n expected {expected}"
    for g, e in zip(_parts(got), _parts(expected)):
        gn, en = np.isnan(g), np.isnan(e)
        np.testing.assert_array_equal(gn, en, err_msg="NaN positions differ:" + where)
        g = np.where(gn, 0, g)
        e = np.where(en, 0, e)
        if exact:
            np.testing.assert_array_equal(g, e)
            if check_zero_sign:
                np.testing.assert_array_equal(np.signbit(g), np.signbit(e),
                                              err_msg="signs (e.g. of zeros) differ")
        elif got.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            gi, ei = np.isinf(g), np.isinf(e)
            np.testing.assert_array_equal(gi, ei, err_msg="inf positions differ:" + where)
            np.testing.assert_array_equal(g[gi], e[ei], err_msg="infinities differ:" + where)
    if not exact and got.dtype.kind == "c":
        finite = np.isfinite(got) & np.isfinite(expected)
        g, e = got[finite].astype(np.complex128), expected[finite].astype(np.complex128)
        with np.errstate(all="ignore"):
            bad = ~(np.abs(g - e) <= atol + rtol * np.abs(e))
        if bad.any():
            raise AssertionError(f"not close (rtol={rtol}, atol={atol}): got {g[bad][:5]}, "
                                 f"expected {e[bad][:5]}" + where)


def _check_meta(x, expected, dtype, device):
    assert isinstance(x, xp.Array), f"expected an arrayx Array, got {type(x).__name__}"
    expected = np.asarray(expected)
    want_dtype = np.dtype(dtype) if dtype is not None else expected.dtype
    want_device = DEVICE if device is None else device
    assert x.dtype == want_dtype, f"dtype {x.dtype} != {want_dtype}"
    assert tuple(x.shape) == expected.shape, f"shape {x.shape} != {expected.shape}"
    assert x.device == want_device, f"device {x.device} != {want_device}"
    with np.errstate(all="ignore"):
        return to_numpy(x), expected.astype(want_dtype, copy=False)


def assert_array_equal(x, expected, dtype=None, device=None, check_zero_sign=True):
    """x: an arrayx Array on `device` (default DEVICE) equal to `expected` in shape, dtype
    (`dtype` if given, else expected's) and values (NaN == NaN; -0.0 != 0.0 unless
    check_zero_sign=False)."""
    got, expected = _check_meta(x, expected, dtype, device)
    _same_values(got, expected, exact=True, check_zero_sign=check_zero_sign)


def assert_allclose(x, expected, dtype=None, device=None, rtol=None, atol=None):
    """Like assert_array_equal, values compared with a tolerance (NaN and inf positions exact).
    Default tolerances follow the dtype's precision (see tolerance())."""
    got, expected = _check_meta(x, expected, dtype, device)
    r, a = tolerance(got.dtype)
    _same_values(got, expected, exact=False, rtol=r if rtol is None else rtol,
                 atol=a if atol is None else atol)


def tolerance(dtype):
    """(rtol, atol) for results of transcendental functions of `dtype`."""
    dtype = np.dtype(dtype)
    if dtype in (np.float32, np.complex64):
        return 2e-5, 1e-6
    if dtype in (np.float64, np.complex128):
        return 1e-12, 1e-14
    return 0.0, 0.0


# --- dtypes --------------------------------------------------------------------------------
BOOL_DTYPES = [xp.bool]
SIGNED_DTYPES = [xp.int8, xp.int16, xp.int32, xp.int64]
UNSIGNED_DTYPES = [xp.uint8, xp.uint16, xp.uint32, xp.uint64]
INT_DTYPES = SIGNED_DTYPES + UNSIGNED_DTYPES
REAL_FLOAT_DTYPES = [xp.float32, xp.float64]
COMPLEX_DTYPES = [xp.complex64, xp.complex128]
FLOAT_DTYPES = REAL_FLOAT_DTYPES + COMPLEX_DTYPES
REAL_DTYPES = INT_DTYPES + REAL_FLOAT_DTYPES
NUMERIC_DTYPES = REAL_DTYPES + COMPLEX_DTYPES
ALL_DTYPES = BOOL_DTYPES + NUMERIC_DTYPES

_FLOAT_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-30, -1e-30, 1e30]


def make_data(dtype, shape, rng, specials=True, low=None, high=None):
    """Random NumPy data of an arrayx `dtype` and `shape`.

    Integers span the dtype's range (or [low, high)); floats are random normals scaled over
    several decades; with `specials`, arrays of 24+ elements hold each of NaN, +-inf, +-0.0,
    +-1, +-0.5, +-1e-30, 1e30 once (smaller ones a random few); complex numbers combine such
    parts. Never all zeros."""
    dtype = np.dtype(dtype)
    shape = tuple(shape) if not isinstance(shape, int) else (shape,)
    n = int(np.prod(shape))
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo = int(info.min) if low is None else low
        hi = int(info.max) + 1 if high is None else high
        return rng.integers(lo, hi, size=shape, dtype=dtype, endpoint=False)

    def real(m):
        if low is not None or high is not None:
            v = rng.uniform(-10.0 if low is None else low, 10.0 if high is None else high, size=m)
        else:
            v = rng.standard_normal(m) * 10.0 ** rng.integers(-3, 4, size=m)
        if specials and m:
            # every special value once when there is room (else a random subset), at random places
            k = min(m, len(_FLOAT_SPECIALS)) if m >= 2 * len(_FLOAT_SPECIALS) else max(1, m // 3)
            pos = rng.choice(m, size=k, replace=False)
            v[pos] = rng.permutation(_FLOAT_SPECIALS)[:k]
        return v

    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            return real(n).astype(dtype).reshape(shape)
    # Built from parts: `1j * inf` would be nan + inf j, losing the special values.
    out = np.empty(n, dtype=dtype)
    with np.errstate(over="ignore"):
        out.real = real(n)
        out.imag = real(n)
    return out.reshape(shape)


@pytest.fixture
def device():
    """The device under test (the default device)."""
    return DEVICE


@pytest.fixture
def rng():
    """A NumPy Generator with a fixed seed."""
    return np.random.default_rng(12345)


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped without one)")


def pytest_collection_modifyitems(config, items):
    if _devices.cuda_device_count() > 0:
        return
    skip = pytest.mark.skip(reason="no usable CUDA GPU (arrayx._devices.cuda_device_count() == 0)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def random_array(rng, shape, dtype, int_range=(-5, 6)):
    """Standard-normal data of `dtype` (complex: both parts); integers drawn from `int_range`
    (from 0 for unsigned types). For linear algebra and FFT tests, whose inputs need no specials."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else int_range[0]
        return rng.integers(low, int_range[1], size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def run_threads(target, n):
    """Run ``target(i)`` for i in range(n), each in its own thread, all at once; assert that
    none raised (the first few errors with their thread's index)."""
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as e:  # a thread's exception would otherwise only be printed
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:4]


def run_python(*args, timeout=120, cwd=REPO, input=None, **env):
    """Run ``python *args`` (str() of each) in a fresh process, in `cwd`, with this checkout first
    on PYTHONPATH and the environment variables `env` set (a value of None unsets one), feeding
    it `input`; return the subprocess.CompletedProcess, its output captured as text.
    subprocess.TimeoutExpired after `timeout` seconds."""
    full_env = {k: v for k, v in dict(os.environ, **env).items() if v is not None}
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, *map(str, args)], input=input, capture_output=True,
                          text=True, env=full_env, timeout=timeout, cwd=cwd)


def run_with_scipy_array_api(script, *args, timeout=300):
    """Run the Python source `script` (with `args` as its sys.argv[1:]) in a fresh process with
    SciPy's array-API support on and this checkout first on PYTHONPATH; assert that it exited 0
    with "ok" as the last line of its output. A subprocess because SciPy reads SCIPY_ARRAY_API
    once, when first imported (scikit-learn's array-API dispatch needs it)."""
    done = run_python("-c", script, *args, timeout=timeout, cwd=None, SCIPY_ARRAY_API="1")
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


def upcast(a):
    """The float64 / complex128 version of a NumPy array (the reference precision)."""
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def distributed_ops(dtype) -> tuple:
    """The reductions arrayx.distributed's collectives take for `dtype` (complex: sum only)."""
    return ("sum",) if np.dtype(dtype).kind == "c" else ("sum", "prod", "max", "min")
