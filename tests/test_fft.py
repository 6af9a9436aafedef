"""arrayx.fft against NumPy (complex128 / float64 references) on random data.

Arrays are made on the default device (plain ``xp.asarray``), so this file also runs on CUDA
with ``ARRAYX_DEVICE=cuda``.
"""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import arrayx as xp
from conftest import DEVICE, assert_allclose, assert_array_equal, random_array, to_numpy, upcast

F = xp.fft
NORMS = ["backward", "ortho", "forward"]


def tol(dtype):
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return dict(rtol=1e-4, atol=1e-4) if single else dict(rtol=1e-10, atol=1e-10)


def complex_of(dtype):
    return np.complex64 if np.dtype(dtype) in (np.float32, np.complex64) else np.complex128


def real_of(dtype):
    return np.float32 if np.dtype(dtype) in (np.float32, np.complex64) else np.float64


def test_all_functions_present():
    names = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
             "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
    assert sorted(F.__all__) == sorted(names)
    for name in names:
        assert callable(getattr(F, name))


# --- 1-D complex transforms ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fft", "ifft"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [None, 1, 5, 8, 13])
@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("norm", NORMS)
def test_fft_ifft(rng, name, dtype, n, axis, norm):
    a = random_array(rng, (6, 8, 3), dtype)
    r = getattr(F, name)(xp.asarray(a), n=n, axis=axis, norm=norm)
    expected = getattr(np.fft, name)(upcast(a), n=n, axis=axis, norm=norm)
    assert_allclose(r, expected, dtype=dtype, **tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fft_real_input_is_treated_as_complex(rng, dtype):
    a = random_array(rng, (4, 6), dtype)
    r = F.fft(xp.asarray(a))
    assert_allclose(r, np.fft.fft(upcast(a)), dtype=complex_of(dtype), **tol(dtype))
    r = F.ifft(xp.asarray(a), axis=0)
    assert_allclose(r, np.fft.ifft(upcast(a), axis=0), dtype=complex_of(dtype), **tol(dtype))


def test_fft_roundtrip_and_strided(rng):
    a = random_array(rng, (8, 10), "complex128")
    x = xp.asarray(a)
    assert_allclose(F.ifft(F.fft(x)), a, rtol=1e-12, atol=1e-12)
    assert_allclose(F.fft(x[::2, 1::3]), np.fft.fft(a[::2, 1::3]), rtol=1e-12, atol=1e-12)
    assert_allclose(F.fft(x.mT, axis=0), np.fft.fft(a.T, axis=0), rtol=1e-12, atol=1e-12)
    assert_allclose(F.fft(x[:, ::-1]), np.fft.fft(a[:, ::-1]), rtol=1e-12, atol=1e-12)


# --- real transforms ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [None, 1, 4, 7, 12])
@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("norm", NORMS)
def test_rfft(rng, dtype, n, axis, norm):
    a = random_array(rng, (6, 9), dtype)
    r = F.rfft(xp.asarray(a), n=n, axis=axis, norm=norm)
    assert_allclose(r, np.fft.rfft(upcast(a), n=n, axis=axis, norm=norm), dtype=complex_of(dtype), **tol(dtype))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [None, 1, 4, 7, 12])
@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("norm", NORMS)
def test_irfft(rng, dtype, n, axis, norm):
    a = random_array(rng, (6, 5), dtype)
    r = F.irfft(xp.asarray(a), n=n, axis=axis, norm=norm)
    assert_allclose(r, np.fft.irfft(upcast(a), n=n, axis=axis, norm=norm), dtype=real_of(dtype), **tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [6, 7])
def test_rfft_irfft_roundtrip(rng, dtype, n):
    a = random_array(rng, (3, n), dtype)
    r = F.irfft(F.rfft(xp.asarray(a)), n=n)
    assert_allclose(r, a, dtype=dtype, **tol(dtype))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [None, 2, 7, 10])
@pytest.mark.parametrize("norm", NORMS)
def test_hfft(rng, dtype, n, norm):
    a = random_array(rng, (3, 5), dtype)
    r = F.hfft(xp.asarray(a), n=n, norm=norm)
    assert_allclose(r, np.fft.hfft(upcast(a), n=n, norm=norm), dtype=real_of(dtype), **tol(dtype))
    r = F.hfft(xp.asarray(a), n=n, axis=0, norm=norm)
    assert_allclose(r, np.fft.hfft(upcast(a), n=n, axis=0, norm=norm), dtype=real_of(dtype), **tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [None, 1, 7, 10])
@pytest.mark.parametrize("norm", NORMS)
def test_ihfft(rng, dtype, n, norm):
    a = random_array(rng, (3, 8), dtype)
    r = F.ihfft(xp.asarray(a), n=n, norm=norm)
    assert_allclose(r, np.fft.ihfft(upcast(a), n=n, norm=norm), dtype=complex_of(dtype), **tol(dtype))
    r = F.ihfft(xp.asarray(a), n=n, axis=0, norm=norm)
    assert_allclose(r, np.fft.ihfft(upcast(a), n=n, axis=0, norm=norm), dtype=complex_of(dtype), **tol(dtype))


# --- n-D transforms -------------------------------------------------------------------------

ND_CASES = [(None, None), (None, (0,)), (None, (2, 0)), ((5, 3), (0, 2)), ((2, -1, 7), (1, 0, 2)),
            ((4,), (-1,)), (None, (-2, -1))]


@pytest.mark.parametrize("name", ["fftn", "ifftn"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("s,axes", ND_CASES)
@pytest.mark.parametrize("norm", NORMS)
def test_fftn_ifftn(rng, name, dtype, s, axes, norm):
    a = random_array(rng, (4, 6, 5), dtype)
    r = getattr(F, name)(xp.asarray(a), s=s, axes=axes, norm=norm)
    s_np = None if s is None else [a.shape[ax] if n == -1 else n for n, ax in zip(s, axes)]
    expected = getattr(np.fft, name)(upcast(a), s=s_np, axes=axes, norm=norm)
    assert_allclose(r, expected, dtype=dtype, **tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("s,axes", ND_CASES)
@pytest.mark.parametrize("norm", NORMS)
def test_rfftn(rng, dtype, s, axes, norm):
    a = random_array(rng, (4, 6, 5), dtype)
    r = F.rfftn(xp.asarray(a), s=s, axes=axes, norm=norm)
    s_np = None if s is None else [a.shape[ax] if n == -1 else n for n, ax in zip(s, axes)]
    expected = np.fft.rfftn(upcast(a), s=s_np, axes=axes, norm=norm)
    assert_allclose(r, expected, dtype=complex_of(dtype), **tol(dtype))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("s,axes", ND_CASES)
@pytest.mark.parametrize("norm", NORMS)
def test_irfftn(rng, dtype, s, axes, norm):
    a = random_array(rng, (4, 6, 5), dtype)
    r = F.irfftn(xp.asarray(a), s=s, axes=axes, norm=norm)
    if s is None:
        s_np = None
    else:
        s_np = [a.shape[ax] if n == -1 else n for n, ax in zip(s, axes)]
        if s[-1] == -1:
            s_np[-1] = 2 * (a.shape[axes[-1]] - 1)
    expected = np.fft.irfftn(upcast(a), s=s_np, axes=axes, norm=norm)
    assert_allclose(r, expected, dtype=real_of(dtype), **tol(dtype))


def test_nd_roundtrip_and_strided(rng):
    a = random_array(rng, (6, 8, 4), "float64")
    x = xp.asarray(a)
    assert_allclose(F.irfftn(F.rfftn(x), s=a.shape, axes=(0, 1, 2)), a, rtol=1e-12, atol=1e-12)
    c = xp.asarray(a.astype(np.complex128))
    assert_allclose(F.ifftn(F.fftn(c)), a.astype(np.complex128), rtol=1e-12, atol=1e-12)
    assert_allclose(F.fftn(c[::2, :, 1:], axes=(0, 2)), np.fft.fftn(a[::2, :, 1:], axes=(0, 2)),
                    rtol=1e-12, atol=1e-12)
    assert_allclose(F.rfftn(x.mT[::-1]), np.fft.rfftn(np.swapaxes(a, -1, -2)[::-1]), rtol=1e-12, atol=1e-12)


def test_fftn_of_0d_and_empty_axes():
    r = F.fftn(xp.asarray(2.0 + 1j))
    assert_array_equal(r, np.complex128(2.0 + 1j))
    a = np.arange(6.0).reshape(2, 3)
    r = F.fftn(xp.asarray(a), axes=())
    assert_array_equal(r, a.astype(np.complex128))


# --- argument checks -------------------------------------------------------------------------

def test_errors():
    c = xp.ones((4, 4), dtype=xp.complex64)
    r = xp.ones((4, 4), dtype=xp.float32)
    i = xp.ones((4, 4), dtype=xp.int64)
    for fn in (F.fft, F.ifft, F.irfft, F.hfft, F.rfft, F.ihfft, F.fftn, F.ifftn, F.rfftn, F.irfftn):
        with pytest.raises(TypeError):
            fn(i)
        with pytest.raises(TypeError):
            fn(np.ones((4, 4)))
    for fn in (F.rfft, F.ihfft, F.rfftn):
        with pytest.raises(TypeError):
            fn(c)
    for fn in (F.fft, F.ifft, F.rfft, F.irfft, F.hfft, F.ihfft):
        x = r if fn in (F.rfft, F.ihfft) else c
        with pytest.raises(ValueError):
            fn(x, n=0)
        with pytest.raises(ValueError):
            fn(x, norm="none")
        with pytest.raises(IndexError):
            fn(x, axis=2)
        with pytest.raises(TypeError):
            fn(x, n=2.5)
    with pytest.raises(ValueError):
        F.irfft(xp.ones((3, 1), dtype=xp.complex64))  # default n = 2*(1-1) = 0
    with pytest.raises(ValueError):
        F.fft(xp.asarray(1 + 0j))
    for fn in (F.fftn, F.ifftn, F.irfftn):
        with pytest.raises(ValueError):
            fn(c, s=(4, 4))  # s without axes
        with pytest.raises(ValueError):
            fn(c, axes=(0, 0))
        with pytest.raises(ValueError):
            fn(c, s=(4,), axes=(0, 1))
        with pytest.raises(ValueError):
            fn(c, s=(0,), axes=(0,))
        with pytest.raises(IndexError):
            fn(c, axes=(2,))
    with pytest.raises(ValueError):
        F.rfftn(r, s=(4, 4))
    with pytest.raises(ValueError):
        F.rfftn(r, axes=())
    with pytest.raises(ValueError):
        F.irfftn(c, axes=())


# --- frequencies and shifts --------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 5, 8, 101])
@pytest.mark.parametrize("d", [1.0, 0.25, 3])
@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
def test_fftfreq_rfftfreq(n, d, dtype):
    want = np.dtype(dtype or "float64")
    r = F.fftfreq(n, d=d, dtype=dtype)
    assert_allclose(r, np.fft.fftfreq(n, d).astype(want), dtype=want, rtol=1e-7 if dtype == "float32" else 1e-15)
    r = F.rfftfreq(n, d=d, dtype=dtype)
    assert_allclose(r, np.fft.rfftfreq(n, d).astype(want), dtype=want, rtol=1e-7 if dtype == "float32" else 1e-15)


def test_fftfreq_device_and_errors():
    assert F.fftfreq(4).device == DEVICE
    assert F.rfftfreq(4, device=DEVICE).device == DEVICE
    for fn in (F.fftfreq, F.rfftfreq):
        with pytest.raises(ValueError):
            fn(0)
        with pytest.raises(ValueError):
            fn(4, d=0)
        with pytest.raises(TypeError):
            fn(4, dtype=xp.int64)
        with pytest.raises(TypeError):
            fn(4, dtype=xp.complex128)
        with pytest.raises(TypeError):
            fn(4.0)


@pytest.mark.parametrize("shape", [(5,), (4,), (3, 4), (2, 5, 3)])
@pytest.mark.parametrize("dtype", ["float32", "complex128", "int64"])
def test_fftshift_ifftshift(rng, shape, dtype):
    a = (rng.standard_normal(shape) * 10).astype(dtype)
    x = xp.asarray(a)
    axes_options = [None] + list(range(len(shape))) + [tuple(range(len(shape)))[::-1], (-1,)]
    for axes in axes_options:
        assert_array_equal(F.fftshift(x, axes=axes), np.fft.fftshift(a, axes=axes))
        assert_array_equal(F.ifftshift(x, axes=axes), np.fft.ifftshift(a, axes=axes))
        assert_array_equal(F.ifftshift(F.fftshift(x, axes=axes), axes=axes), a)
    assert_array_equal(F.fftshift(x[::-1]), np.fft.fftshift(a[::-1]))


def test_fftshift_0d():
    r = F.fftshift(xp.asarray(3.0))
    assert_array_equal(r, np.float64(3.0))


@given(st.integers(1, 40), st.sampled_from(NORMS), st.sampled_from(["complex64", "complex128"]))
def test_fft_hypothesis(n, norm, dtype):
    rng = np.random.default_rng(n)
    a = random_array(rng, (n,), dtype)
    assert_allclose(F.fft(xp.asarray(a), norm=norm), np.fft.fft(upcast(a), norm=norm), dtype=dtype, **tol(dtype))
    out = to_numpy(F.ifft(F.fft(xp.asarray(a), norm=norm), norm=norm))
    np.testing.assert_allclose(out, a, **tol(dtype))


@pytest.mark.parametrize("dtype", [xp.complex64, xp.complex128])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_length_one_transforms(rng, dtype, norm):
    # Length-1 transforms are the identity (real part for irfft); cuFFT rejects them.
    data = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dtype)
    x = xp.asarray(data)
    for name in ("fft", "ifft", "irfft"):
        got = getattr(xp.fft, name)(x, n=1, axis=0, norm=norm)
        want = getattr(np.fft, name)(data, n=1, axis=0, norm=norm)
        assert got.shape == want.shape == (1, 4)
        assert_allclose(got, want.astype(got.dtype))
    real = xp.asarray(data.real.copy())
    got = xp.fft.rfft(real, n=1, axis=1, norm=norm)
    assert got.dtype == dtype and got.shape == (3, 1)
    assert_allclose(got, np.fft.rfft(data.real, n=1, axis=1, norm=norm).astype(dtype))


def test_axes_and_s_argument_types():
    a = random_array(np.random.default_rng(7), (4, 6), np.complex128)
    x = xp.asarray(a)
    # lists where the standard says tuples (SciPy passes them), as NumPy takes them
    assert_allclose(F.fftn(x, axes=[0, 1]), np.fft.fftn(a, axes=(0, 1)))
    assert_allclose(F.fftn(x, s=[4, 3], axes=[0, 1]), np.fft.fftn(a, s=(4, 3), axes=(0, 1)))
    assert_array_equal(F.fftshift(x, axes=[1]), np.fft.fftshift(a, axes=(1,)))
    assert_array_equal(F.ifftshift(x, axes=-1), np.fft.ifftshift(a, axes=-1))
    for fn in (lambda: F.fftshift(x, axes=1.0), lambda: F.ifftshift(x, axes=(0, None)),
               lambda: F.fftn(x, axes=1.0), lambda: F.rfftn(xp.real(x), axes=("0",)),
               lambda: F.fftn(x, s=4, axes=(0,)), lambda: F.fftn(x, s=None, axes=[0.0])):
        with pytest.raises(TypeError, match=r"(axes|s) must"):
            fn()
