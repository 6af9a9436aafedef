"""CUDA linear algebra and FFT (cuBLAS, cuSOLVER, cuFFT through ctypes) on a real GPU,
against NumPy in float64 / complex128 (skipped without a GPU).

The primitives are called directly with host fallback set to 'error', so a primitive that quietly
ran on the host (or a helper of it that did) fails here. tests/test_linalg.py and
tests/test_fft.py cover the namespace functions on top (run them with ARRAYX_DEVICE=cuda).
"""

import numpy as np
import pytest

import arrayx._devices as _devices
from arrayx._registry import backend_for_kind, set_host_fallback

pytestmark = pytest.mark.skipif(_devices.cuda_device_count() == 0, reason="no CUDA GPU")

FLOATS = ["float32", "float64", "complex64", "complex128"]


@pytest.fixture(scope="module")
def B():
    return backend_for_kind("cuda")


@pytest.fixture(scope="module")
def dev():
    return _devices.cuda_device(0)


@pytest.fixture(autouse=True)
def no_host_fallback():
    set_host_fallback("error")
    yield
    set_host_fallback("warn")


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def rand(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -50, 50, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def hi(a):
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def rel_err(got, expected):
    return np.linalg.norm(hi(got) - expected) / max(np.linalg.norm(expected), 1e-300)


def bound(dtype, n=1):
    """Relative error bound for a result built from sums of n products in `dtype`."""
    eps = np.finfo(np.dtype(dtype)).eps
    return 20 * eps * max(1.0, np.sqrt(n))


def put(B, dev, host):
    return B.from_host(dev, host, True)


def get(B, x):
    return B.to_host(x)


# ---- matmul -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_layouts(B, dev, rng, dtype):
    base_a = rand(rng, (3, 40, 70), dtype)
    base_b = rand(rng, (70, 90), dtype)
    a, b = put(B, dev, base_a), put(B, dev, base_b)
    cases = [
        (a, b, base_a, base_b),                                            # row-major, broadcast b
        (B.permute_dims(put(B, dev, np.ascontiguousarray(np.swapaxes(base_a, 1, 2))), (0, 2, 1)),
         b, base_a, base_b),                                               # transposed a (x.mT)
        (B.getitem(a, (slice(None), slice(None), slice(5, 65))),           # column slice: ld > cols
         B.getitem(b, (slice(3, 63), slice(None))), base_a[:, :, 5:65], base_b[3:63]),
        (a, B.getitem(b, (slice(None), slice(None, None, 2))), base_a, base_b[:, ::2]),  # copied
        (B.getitem(a, (slice(None, None, -1),)), b, base_a[::-1], base_b),  # negative batch stride
    ]
    for x, y, hx, hy in cases:
        got = get(B, B.matmul(x, y))
        expected = hi(hx) @ hi(hy)
        assert got.dtype == np.dtype(dtype) and got.shape == expected.shape
        assert rel_err(got, expected) < bound(dtype, hx.shape[-1])


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_matmul_batched_broadcast(B, dev, rng, dtype):
    ha, hb = rand(rng, (4, 1, 8, 6), dtype), rand(rng, (3, 6, 5), dtype)
    got = get(B, B.matmul(put(B, dev, ha), put(B, dev, hb)))
    assert got.shape == (4, 3, 8, 5)
    assert rel_err(got, hi(ha) @ hi(hb)) < bound(dtype, 6)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", [((50, 30), (30, 1)), ((1, 30), (30, 50)), ((1, 1), (1, 1))])
def test_matrix_vector(B, dev, rng, dtype, shapes):
    ha, hb = rand(rng, shapes[0], dtype), rand(rng, shapes[1], dtype)
    for x in (put(B, dev, ha), B.permute_dims(put(B, dev, np.ascontiguousarray(ha.T)), (1, 0))):
        got = get(B, B.matmul(x, put(B, dev, hb)))
        assert rel_err(got, hi(ha) @ hi(hb)) < bound(dtype, shapes[0][1])


@pytest.mark.parametrize("dtype", FLOATS)
def test_vector_dot_products(B, dev, rng, dtype):
    """(1 x K) @ (K x 1) goes through cuBLAS's dot with the result left on the GPU: contiguous,
    strided and reversed vectors; the products after it (host scalars again) stay right."""
    ha, hb = rand(rng, (1, 3000), dtype), rand(rng, (9000, 1), dtype)
    a, b = put(B, dev, ha), put(B, dev, hb)
    cases = [(a, B.getitem(b, (slice(None, 3000), slice(None))), ha, hb[:3000]),
             (a, B.getitem(b, (slice(None, None, 3), slice(None))), ha, hb[::3]),
             (B.getitem(a, (slice(None), slice(None, None, -1))), B.getitem(b, (slice(6000, None),
              slice(None))), ha[:, ::-1], hb[6000:])]
    for x, y, hx, hy in cases:
        got = get(B, B.matmul(x, y))
        assert got.shape == (1, 1) and rel_err(got, hi(hx) @ hi(hy)) < bound(dtype, 3000)
    hm = rand(rng, (40, 3000), dtype)
    got = get(B, B.matmul(put(B, dev, hm), B.getitem(b, (slice(None, 3000), slice(None)))))
    assert rel_err(got, hi(hm) @ hi(hb[:3000])) < bound(dtype, 3000)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint64"])
def test_integer_matmul_wraps_like_numpy(B, dev, rng, dtype):
    ha, hb = rand(rng, (2, 5, 7), dtype), rand(rng, (7, 3), dtype)
    got = get(B, B.matmul(put(B, dev, ha), B.permute_dims(put(B, dev, np.ascontiguousarray(hb.T)),
                                                          (1, 0))))
    np.testing.assert_array_equal(got, np.matmul(ha, hb))


def test_matmul_empty_and_zero_k(B, dev):
    a, b = put(B, dev, np.ones((3, 0), np.float32)), put(B, dev, np.ones((0, 4), np.float32))
    np.testing.assert_array_equal(get(B, B.matmul(a, b)), np.zeros((3, 4), np.float32))
    assert get(B, B.matmul(b, put(B, dev, np.ones((4, 2), np.float32)))).shape == (0, 2)


def test_tf32_setting(B, dev, rng):
    from arrayx.cuda.kernels import linalg
    ha, hb = rand(rng, (256, 256), "float32"), rand(rng, (256, 256), "float32")
    exact = hi(ha) @ hi(hb)
    assert rel_err(get(B, B.matmul(put(B, dev, ha), put(B, dev, hb))), exact) < 1e-5
    old = linalg.set_allow_tf32(True)
    try:
        assert rel_err(get(B, B.matmul(put(B, dev, ha), put(B, dev, hb))), exact) < 3e-3
    finally:
        linalg.set_allow_tf32(old)


def test_matmul_on_another_stream_orders_with_kernels(B, dev, rng):
    from arrayx.cuda import Stream
    ha = rand(rng, (300, 300), "float64")
    with Stream(0):
        x = put(B, dev, ha)
        y = B.binary("multiply", x, 2.0, np.dtype(np.float64))  # a kernel the product must follow
        got = get(B, B.matmul(y, y))
    assert rel_err(got, 4 * (ha @ ha)) < bound("float64", 300)


# ---- solvers and factorisations ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_factorisations_batched(B, dev, rng, dtype):
    n = 6
    g = rand(rng, (2, 3, n, n), dtype)
    spd = g @ np.conj(np.swapaxes(g, -1, -2)) + n * np.eye(n, dtype=dtype)
    x = put(B, dev, spd)
    for upper in (False, True):
        c = get(B, B.cholesky(x, upper))
        assert np.array_equal(c, np.triu(c) if upper else np.tril(c))
        assert rel_err(c, np.linalg.cholesky(hi(spd), upper=upper)) < bound(dtype, n) * 10
    w, v = (get(B, t) for t in B.eigh(x))
    assert rel_err(hi(spd) @ hi(v), hi(v) * hi(w)[..., None, :]) < bound(dtype, n) * 10
    assert rel_err(get(B, B.eigvalsh(x)), np.linalg.eigvalsh(hi(spd))) < bound(dtype, n) * 10
    gx = put(B, dev, g)
    assert rel_err(get(B, B.inv(gx)), np.linalg.inv(hi(g))) < 1e3 * bound(dtype, n)
    assert rel_err(get(B, B.det(gx)), np.linalg.det(hi(g))) < 1e3 * bound(dtype, n)
    sign, logabs = (get(B, t) for t in B.slogdet(gx))
    ref_sign, ref_logabs = np.linalg.slogdet(hi(g))
    assert rel_err(sign, ref_sign) < 1e3 * bound(dtype, n)
    assert rel_err(logabs, ref_logabs) < 1e3 * bound(dtype, n)
    rhs = rand(rng, (2, 3, n, 4), dtype)
    assert rel_err(get(B, B.solve(gx, put(B, dev, rhs))), np.linalg.solve(hi(g), hi(rhs))) \
        < 1e3 * bound(dtype, n)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(7, 4), (4, 7), (2, 5, 5)])
def test_qr_svd_pinv(B, dev, rng, dtype, shape):
    h = rand(rng, shape, dtype)
    x = put(B, dev, h)
    k = min(shape[-2:])
    for mode in ("reduced", "complete"):
        q, r = (get(B, t) for t in B.qr(x, mode))
        assert np.array_equal(r, np.triu(r))
        assert rel_err(q @ r, hi(h)) < 10 * bound(dtype, k)
    for full in (False, True):
        u, s, vh = (get(B, t) for t in B.svd(x, full))
        recon = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
        assert rel_err(recon, hi(h)) < 10 * bound(dtype, k)
    expected = np.linalg.svd(hi(h), compute_uv=False)
    assert rel_err(get(B, B.svdvals(x)), expected) < 10 * bound(dtype, k)
    assert rel_err(get(B, B.pinv(x, None)), np.linalg.pinv(hi(h))) < 100 * bound(dtype, k)


@pytest.mark.parametrize("jacobi_k", [(1, 0), (1, 1 << 30)], ids=["gesvd", "jacobi"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(300, 3), (3, 40), (2, 9, 9), (1, 1), (33, 33), (40, 20)])
def test_svd_drivers(B, dev, rng, dtype, shape, jacobi_k, monkeypatch):
    """Both SVD routes (gesvd, and gesvdj for JACOBI_SVD_MIN_K <= k <= JACOBI_SVD_MAX_K) give
    orthonormal singular vectors, descending singular values equal to NumPy's, and A back;
    rank-deficient too."""
    from arrayx.cuda.kernels import linalg
    monkeypatch.setattr(linalg, "JACOBI_SVD_MIN_K", jacobi_k[0])
    monkeypatch.setattr(linalg, "JACOBI_SVD_MAX_K", jacobi_k[1])
    h = rand(rng, shape, dtype)
    if shape[-1] > 2:
        h[..., -1] = h[..., 0] * 2      # one singular value is zero
    k = min(shape[-2:])
    tol = 30 * bound(dtype, max(shape[-2:]))
    for full in (False, True):
        u, s, vh = (get(B, t) for t in B.svd(put(B, dev, h), full))
        m, n = shape[-2:]
        assert u.shape == shape[:-2] + ((m, m) if full else (m, k))
        assert vh.shape == shape[:-2] + ((n, n) if full else (k, n))
        assert s.dtype == np.dtype(dtype).type(0).real.dtype
        assert np.all(s[..., :-1] >= s[..., 1:]) and np.all(s >= 0)
        assert rel_err(np.conj(np.swapaxes(u, -1, -2)) @ u, np.eye(u.shape[-1])) < tol
        assert rel_err(vh @ np.conj(np.swapaxes(vh, -1, -2)), np.eye(vh.shape[-2])) < tol
        recon = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
        assert rel_err(recon, hi(h)) < tol
    expected = np.linalg.svd(hi(h), compute_uv=False)
    assert rel_err(get(B, B.svdvals(put(B, dev, h))), expected) < tol
    assert rel_err(s, expected) < tol


def test_svd_jacobi_not_converging_falls_back_to_gesvd(B, dev, rng, monkeypatch):
    from arrayx.cuda.kernels import linalg
    monkeypatch.setattr(linalg, "JACOBI_SVD_MAX_SWEEPS", 1)
    monkeypatch.setattr(linalg, "JACOBI_SVD_MIN_K", 1)
    fallbacks = []
    gesvd = linalg._svd_gesvd
    monkeypatch.setattr(linalg, "_svd_gesvd", lambda *a: fallbacks.append(1) or gesvd(*a))
    h = rand(rng, (60, 50), "float64")
    u, s, vh = (get(B, t) for t in B.svd(put(B, dev, h), False))
    assert fallbacks == [1]
    assert rel_err((u * s) @ vh, h) < 30 * bound("float64", 60)
    assert rel_err(s, np.linalg.svd(h, compute_uv=False)) < 30 * bound("float64", 60)


@pytest.mark.parametrize("dtype", FLOATS)
def test_eig(B, dev, rng, dtype):
    h = rand(rng, (3, 6, 6), dtype)
    w, v = (get(B, t) for t in B.eig(put(B, dev, h)))
    assert w.dtype.kind == "c" and v.dtype == w.dtype
    assert rel_err(hi(h) @ v, v * w[..., None, :]) < 100 * bound(dtype, 6)
    ev = get(B, B.eigvals(put(B, dev, h)))

    def key(z):  # conjugate pairs sort by rounded values, not by rounding noise
        return np.sort_complex(np.round(z.astype(np.complex128), 3))
    np.testing.assert_allclose(key(ev), key(np.linalg.eigvals(hi(h))), atol=5e-3)


def test_failures_raise_linalg_error(B, dev):
    from arrayx.linalg import LinAlgError
    singular = put(B, dev, np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]]))
    with pytest.raises(LinAlgError):
        B.inv(singular)
    with pytest.raises(LinAlgError):
        B.solve(singular, put(B, dev, np.ones((2, 2, 1))))
    with pytest.raises(LinAlgError):
        B.cholesky(put(B, dev, np.array([[1.0, 2.0], [2.0, 1.0]])), False)
    np.testing.assert_array_equal(get(B, B.det(singular)), [0.0, 1.0])
    sign, logabs = (get(B, t) for t in B.slogdet(singular))
    np.testing.assert_array_equal(sign, [0.0, 1.0])
    np.testing.assert_array_equal(logabs, [-np.inf, 0.0])
    # The device is still usable after the errors.
    assert get(B, B.inv(put(B, dev, np.eye(3)))).tolist() == np.eye(3).tolist()


def test_empty_matrices(B, dev):
    e = put(B, dev, np.zeros((2, 0, 0)))
    assert get(B, B.det(e)).tolist() == [1.0, 1.0]
    assert get(B, B.inv(e)).shape == (2, 0, 0)
    q, r = B.qr(put(B, dev, np.zeros((3, 0))), "complete")
    np.testing.assert_array_equal(get(B, q), np.eye(3))
    assert get(B, r).shape == (3, 0)
    u, s, vh = B.svd(put(B, dev, np.zeros((0, 2))), True)
    assert get(B, u).shape == (0, 0) and get(B, s).shape == (0,)
    np.testing.assert_array_equal(get(B, vh), np.eye(2))


def test_diagonal_is_a_copy(B, dev, rng):
    h = rand(rng, (2, 4, 5), "float64")
    x = put(B, dev, h)
    for offset in (-2, 0, 3, 9):
        np.testing.assert_array_equal(get(B, B.diagonal(x, offset)),
                                      np.diagonal(h, offset, axis1=-2, axis2=-1))


# ---- FFT ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,dtype", [("fft", "complex64"), ("ifft", "complex128"),
                                        ("rfft", "float32"), ("rfft", "float64"),
                                        ("irfft", "complex64"), ("irfft", "complex128")])
@pytest.mark.parametrize("n", [1, 6, 9, 16, 21])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_fft_primitive(B, dev, rng, kind, dtype, n, axis):
    h = rand(rng, (5, 12, 3), dtype)   # random, so irfft gets non-Hermitian input too
    for norm in ("backward", "ortho", "forward"):
        got = get(B, B.fft(kind, put(B, dev, h), n, axis, norm))
        expected = getattr(np.fft, kind)(hi(h), n=n, axis=axis, norm=norm)
        assert got.shape == expected.shape
        assert rel_err(got, expected) < bound(dtype, n) * 10


def test_fft_views_and_plan_cache(B, dev, rng, monkeypatch):
    from arrayx.cuda import libraries
    monkeypatch.setattr(libraries.cufft, "PLAN_CACHE_SIZE", 2)
    h = rand(rng, (16, 20), "complex128")
    x = put(B, dev, h)
    views = [(B.getitem(x, (slice(None, None, 2), slice(1, None, 3))), h[::2, 1::3]),
             (B.permute_dims(x, (1, 0)), h.T), (B.getitem(x, (slice(None), slice(None, None, -1))),
                                                 h[:, ::-1])]
    for n in (4, 7, 20, 33):
        for v, hv in views:
            got = get(B, B.fft("fft", v, n, 1, "backward"))
            assert rel_err(got, np.fft.fft(hv, n=n, axis=1)) < 1e-12
    from arrayx.cuda.engine import runtime
    assert len(libraries.cufft.plan_cache(runtime.get_device(0))) <= 2
