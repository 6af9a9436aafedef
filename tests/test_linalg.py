"""arrayx.linalg and the main namespace's matmul / matrix_transpose / tensordot / vecdot,
against NumPy float64 references on random data.

Arrays are made on the default device (plain ``xp.asarray``), so this file also runs on CUDA
with ``ARRAYX_DEVICE=cuda``.
"""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import arrayx as xp
from conftest import DEVICE, assert_allclose, assert_array_equal, random_array, to_numpy, upcast

LA = xp.linalg
FLOATS = ["float32", "float64", "complex64", "complex128"]
REALS = ["float32", "float64"]


def tol(dtype):
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return dict(rtol=2e-4, atol=2e-4) if single else dict(rtol=1e-9, atol=1e-9)


def well_conditioned(rng, shape, dtype):
    """Random square matrices with a dominant diagonal (invertible, condition number ~ 1)."""
    a = random_array(rng, shape, dtype)
    n = shape[-1]
    return (a + 3 * n * np.eye(n)).astype(dtype)


def spd(rng, shape, dtype):
    """Hermitian positive definite matrices."""
    a = random_array(rng, shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def real_of(dtype):
    return {"complex64": np.float32, "complex128": np.float64}.get(np.dtype(dtype).name, np.dtype(dtype))


def complex_of(dtype):
    return np.complex64 if np.dtype(dtype) in (np.float32, np.complex64) else np.complex128


# --- aliases and result types --------------------------------------------------------------

def test_aliases_are_the_main_namespace_functions():
    for name in ("matmul", "matrix_transpose", "tensordot", "vecdot"):
        assert getattr(LA, name) is getattr(xp, name)


def test_all_functions_present():
    names = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
             "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
             "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
             "vector_norm"]
    assert sorted(LA.__all__) == sorted(names)
    for name in names:
        assert callable(getattr(LA, name))


def test_linalg_error_is_value_error():
    assert issubclass(LA.LinAlgError, ValueError)


# --- matmul / matrix_transpose ---------------------------------------------------------------

@pytest.mark.parametrize("s1,s2", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
                                   ((4,), (4, 5)), ((2, 3, 4), (4,)), ((4,), (4,)), ((0, 3), (3, 2)),
                                   ((3, 0), (0, 2)), ((2, 0, 3, 4), (4, 1))])
@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex64"])
def test_matmul(rng, s1, s2, dtype):
    a, b = random_array(rng, s1, dtype), random_array(rng, s2, dtype)
    r = xp.matmul(xp.asarray(a), xp.asarray(b))
    expected = np.matmul(a, b)
    if dtype.startswith("int"):
        assert_array_equal(r, expected)
    else:
        assert_allclose(r, np.matmul(upcast(a), upcast(b)), dtype=dtype, **tol(dtype))
    assert_allclose(xp.asarray(a) @ xp.asarray(b), expected, dtype=dtype, **tol(dtype))


def test_matmul_strided_and_transposed(rng):
    a = random_array(rng, (6, 4, 5), "float64")
    b = random_array(rng, (5, 8), "float64")
    x, y = xp.asarray(a), xp.asarray(b)
    assert_allclose(xp.matmul(x[::2], y[:, ::2]), a[::2] @ b[:, ::2], rtol=1e-12)
    assert_allclose(xp.matmul(x.mT, x), np.swapaxes(a, -1, -2) @ a, rtol=1e-12)


def test_matmul_promotes_and_rejects(rng):
    r = xp.matmul(xp.asarray(np.ones((2, 3), np.int8)), xp.asarray(np.ones((3, 2), np.int16)))
    assert r.dtype == xp.int16
    r = xp.matmul(xp.asarray(np.ones((2, 3), np.float32)), xp.asarray(np.ones((3, 2), np.complex128)))
    assert r.dtype == xp.complex128
    with pytest.raises(ValueError):
        xp.matmul(xp.ones((2, 3)), xp.ones((2, 3)))
    with pytest.raises(ValueError):
        xp.matmul(xp.ones(()), xp.ones((2,)))
    with pytest.raises(TypeError):
        xp.matmul(xp.ones((2, 2), dtype=xp.bool), xp.ones((2, 2), dtype=xp.bool))
    with pytest.raises(TypeError):
        xp.matmul(xp.ones((2, 2)), np.ones((2, 2)))


def test_matrix_transpose(rng):
    a = random_array(rng, (2, 3, 4), "int64")
    assert_array_equal(xp.matrix_transpose(xp.asarray(a)), np.swapaxes(a, -1, -2))
    assert_array_equal(LA.matrix_transpose(xp.asarray(a)), np.swapaxes(a, -1, -2))
    with pytest.raises(ValueError):
        xp.matrix_transpose(xp.ones((3,)))


# --- tensordot ---------------------------------------------------------------------------------

@pytest.mark.parametrize("s1,s2,axes", [((3, 4, 5), (4, 5, 6), 2), ((3, 4), (4, 5), 1),
                                        ((2, 3), (4,), 0), ((), (), 0), ((3,), (2,), 0),
                                        ((3, 4, 5), (5, 3, 2), ([0, 2], [1, 0])),
                                        ((3, 4, 5), (5, 3, 2), ((-3, -1), (-2, 0))),
                                        ((2, 0, 3), (0, 3, 4), 2), ((2, 3), (3, 2), ((0, 1), (1, 0))),
                                        ((3, 4, 5), (5, 3, 2), [[0, 2], [1, 0]]), ((3, 4), (2, 3), (0, 1))])
@pytest.mark.parametrize("dtype", ["int64", "float64", "complex128"])
def test_tensordot(rng, s1, s2, axes, dtype):
    a, b = random_array(rng, s1, dtype), random_array(rng, s2, dtype)
    r = xp.tensordot(xp.asarray(a), xp.asarray(b), axes=axes)
    expected = np.tensordot(a, b, axes=axes)
    if dtype == "int64":
        assert_array_equal(r, expected)
    else:
        assert_allclose(r, expected, rtol=1e-12, atol=1e-12)


def test_tensordot_default_axes_and_promotion(rng):
    a, b = random_array(rng, (2, 3, 4), "int8"), random_array(rng, (3, 4, 5), "uint8")
    r = xp.tensordot(xp.asarray(a), xp.asarray(b))
    assert r.dtype == xp.int16
    assert_array_equal(r, np.tensordot(a.astype(np.int16), b.astype(np.int16)))
    assert LA.tensordot(xp.asarray(a), xp.asarray(b)).shape == (2, 5)


def test_tensordot_strided(rng):
    a, b = random_array(rng, (6, 4, 5), "float32"), random_array(rng, (5, 4), "float32")
    x, y = xp.asarray(a), xp.asarray(b)
    assert_allclose(xp.tensordot(x[::2], y.mT, axes=([1, 2], [0, 1])),
                    np.tensordot(upcast(a[::2]), upcast(b.T), axes=([1, 2], [0, 1])), dtype="float32", rtol=1e-4,
                    atol=1e-4)


def test_tensordot_complex_is_not_conjugated():
    x = xp.asarray([1j, 2.0])
    assert complex(xp.tensordot(x, x, axes=1)) == -1 + 4


def test_tensordot_errors():
    x = xp.ones((2, 3))
    with pytest.raises(ValueError):
        xp.tensordot(x, xp.ones((2, 3)), axes=1)  # 3 != 2
    with pytest.raises(ValueError):
        xp.tensordot(x, xp.ones((2, 3)), axes=-1)
    with pytest.raises(ValueError):
        xp.tensordot(x, xp.ones((2, 3)), axes=3)
    with pytest.raises(ValueError):
        xp.tensordot(x, xp.ones((1, 3)), axes=([0], [0]))  # contracted axes are not broadcast
    with pytest.raises(ValueError):
        xp.tensordot(x, xp.ones((3, 2)), axes=([0, 1], [1]))
    with pytest.raises(IndexError):
        xp.tensordot(x, xp.ones((3, 2)), axes=([2], [0]))
    with pytest.raises(TypeError):
        xp.tensordot(xp.ones((2,), dtype=xp.bool), xp.ones((2,), dtype=xp.bool), axes=1)


# --- vecdot ------------------------------------------------------------------------------------

@pytest.mark.parametrize("s1,s2,axis", [((5,), (5,), -1), ((3, 5), (5,), -1), ((2, 1, 4), (3, 4), -1),
                                        ((4, 3), (4, 3), -2), ((2, 4, 3), (4, 1), -2), ((0, 3), (3,), -1),
                                        ((3, 0), (1, 0), -1), ((4, 3), (4, 3), 0)])
@pytest.mark.parametrize("dtype", ["int16", "float32", "float64", "complex128"])
def test_vecdot(rng, s1, s2, axis, dtype):
    a, b = random_array(rng, s1, dtype), random_array(rng, s2, dtype)
    r = xp.vecdot(xp.asarray(a), xp.asarray(b), axis=axis)
    ax = axis if axis < 0 else axis - len(s1)
    a_b, b_b = np.broadcast_arrays(a, b)
    expected = np.sum(np.conj(upcast(a_b)) * upcast(b_b), axis=ax)
    if dtype.startswith("int"):
        assert_array_equal(r, expected.astype(dtype))
    else:
        assert_allclose(r, expected, dtype=dtype, **tol(dtype))


def test_vecdot_conjugates_first_argument():
    r = LA.vecdot(xp.asarray([1j, 2j, 3j]), xp.asarray([1, 2j, 3]))
    assert complex(r) == 4 - 10j


def test_vecdot_errors():
    with pytest.raises(ValueError):
        xp.vecdot(xp.ones((3,)), xp.ones((4,)))
    with pytest.raises(ValueError):
        xp.vecdot(xp.ones((2, 3)), xp.ones((1, 3)), axis=-2)  # contracted axis not broadcast
    with pytest.raises(ValueError):
        xp.vecdot(xp.ones((2, 3)), xp.ones((3,)), axis=-2)
    with pytest.raises(ValueError):
        xp.vecdot(xp.ones(()), xp.ones(()))
    with pytest.raises(ValueError):
        xp.vecdot(xp.ones((2, 3)), xp.ones((3, 3)))  # batch shapes do not broadcast


@given(st.integers(0, 3), st.integers(0, 4), st.sampled_from(["int8", "uint8", "int64", "float64"]))
def test_vecdot_matches_numpy_hypothesis(batch, n, dtype):
    rng = np.random.default_rng(batch * 10 + n)
    a, b = random_array(rng, (batch, n), dtype), random_array(rng, (n,), dtype)
    r = xp.vecdot(xp.asarray(a), xp.asarray(b))
    expected = np.sum(a * b, axis=-1, dtype=dtype)
    if dtype == "float64":
        assert_allclose(r, expected, rtol=1e-12, atol=1e-12)
    else:
        assert_array_equal(r, expected)


# --- decompositions ----------------------------------------------------------------------------

BATCHES = [(), (3,), (2, 2)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(rng, dtype, batch, upper):
    a = spd(rng, batch + (4, 4), dtype)
    r = LA.cholesky(xp.asarray(a), upper=upper)
    assert r.dtype == np.dtype(dtype) and r.shape == a.shape
    c = to_numpy(r)
    expected = np.linalg.cholesky(upcast(a), upper=upper)
    np.testing.assert_allclose(c, expected, **tol(dtype))
    assert np.array_equal(c, np.triu(c) if upper else np.tril(c))


def test_cholesky_errors():
    with pytest.raises(LA.LinAlgError):
        LA.cholesky(xp.asarray([[1.0, 2.0], [2.0, 1.0]]))  # not positive definite
    with pytest.raises(TypeError):
        LA.cholesky(xp.asarray([[1, 0], [0, 1]]))
    with pytest.raises(ValueError):
        LA.cholesky(xp.ones((2, 3)))
    with pytest.raises(ValueError):
        LA.cholesky(xp.ones((3,)))
    assert LA.cholesky(xp.ones((2, 0, 0))).shape == (2, 0, 0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
def test_det_slogdet(rng, dtype, batch):
    a = random_array(rng, batch + (4, 4), dtype)
    d = LA.det(xp.asarray(a))
    assert_allclose(d, np.linalg.det(upcast(a)), dtype=dtype, **tol(dtype))
    res = LA.slogdet(xp.asarray(a))
    assert res._fields == ("sign", "logabsdet")
    sign, logabs = np.linalg.slogdet(upcast(a))
    assert_allclose(res.sign, sign, dtype=dtype, **tol(dtype))
    assert_allclose(res.logabsdet, logabs, dtype=real_of(dtype), **tol(dtype))


def test_det_slogdet_special():
    assert_allclose(LA.det(xp.asarray([[1.0, 2.0], [2.0, 4.0]])), 0.0, atol=1e-12)
    s = LA.slogdet(xp.asarray([[1.0, 2.0], [2.0, 4.0]]))
    assert float(s.sign) == 0.0 and float(s.logabsdet) == -math.inf
    assert_array_equal(LA.det(xp.zeros((0, 0))), np.float64(1.0))
    assert LA.det(xp.zeros((3, 0, 0), dtype=xp.float32)).shape == (3,)
    assert LA.det(xp.asarray(np.eye(3))).shape == ()
    with pytest.raises(TypeError):
        LA.det(xp.asarray([[1, 0], [0, 1]]))
    with pytest.raises(ValueError):
        LA.slogdet(xp.ones((2, 3)))


def test_det_strided(rng):
    a = random_array(rng, (6, 4, 4), "float64")
    x = xp.asarray(a)
    assert_allclose(LA.det(x[::2].mT), np.linalg.det(a[::2]), rtol=1e-10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
def test_eigh_eigvalsh(rng, dtype, batch):
    a = random_array(rng, batch + (5, 5), dtype)
    a = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    res = LA.eigh(xp.asarray(a))
    assert res._fields == ("eigenvalues", "eigenvectors")
    w, v = to_numpy(res.eigenvalues), to_numpy(res.eigenvectors)
    assert w.dtype == real_of(dtype) and w.shape == batch + (5,)
    assert v.dtype == np.dtype(dtype) and v.shape == a.shape
    np.testing.assert_allclose(np.sort(w, axis=-1), np.linalg.eigvalsh(upcast(a)), **tol(dtype))
    np.testing.assert_allclose(upcast(a) @ upcast(v), upcast(v) * upcast(w)[..., None, :], **tol(dtype))
    wv = LA.eigvalsh(xp.asarray(a))
    assert_allclose(wv, np.linalg.eigvalsh(upcast(a)), dtype=real_of(dtype), **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
def test_eig_eigvals(rng, dtype, batch):
    a = random_array(rng, batch + (5, 5), dtype)
    res = LA.eig(xp.asarray(a))
    assert res._fields == ("eigenvalues", "eigenvectors")
    cdt = complex_of(dtype)
    w, v = to_numpy(res.eigenvalues), to_numpy(res.eigenvectors)
    assert w.dtype == cdt and v.dtype == cdt
    assert w.shape == batch + (5,) and v.shape == a.shape
    np.testing.assert_allclose(upcast(a) @ v.astype(np.complex128), v.astype(np.complex128) * w[..., None, :],
                               **tol(dtype))
    ev = to_numpy(LA.eigvals(xp.asarray(a)))
    assert ev.dtype == cdt

    def key(z):
        return np.sort_complex(np.round(z.astype(np.complex128), 3))
    np.testing.assert_allclose(key(ev), key(np.linalg.eigvals(upcast(a))), atol=5e-3)


@pytest.mark.parametrize("dtype", REALS)
@pytest.mark.parametrize("batch", BATCHES)
def test_eig_of_a_real_matrix_gives_exact_conjugate_pairs(rng, dtype, batch):
    # As LAPACK (NumPy): a real matrix's complex eigenvalues, and their eigenvectors, come in
    # exact conjugate pairs, the one with the positive imaginary part first. Clients rely on
    # it (SciPy's zpk2tf keeps real coefficients only when the roots pair exactly).
    n = 7
    a = rng.standard_normal(batch + (n, n)).astype(dtype)
    a[..., 0, :] = 0  # a real eigenvalue 0 among the pairs
    w, v = LA.eig(xp.asarray(a))
    w, v = to_numpy(w).reshape(-1, n), to_numpy(v).reshape(-1, n, n)
    ev = to_numpy(LA.eigvals(xp.asarray(a))).reshape(-1, n)
    pairs = 0
    for k in range(w.shape[0]):
        np.testing.assert_allclose(np.sort_complex(ev[k]), np.sort_complex(w[k]), **tol(dtype))
        j = 0
        while j < n:
            if w[k, j].imag == 0:
                assert np.all(v[k, :, j].imag == 0)
                j += 1
                continue
            assert w[k, j].imag > 0 and w[k, j + 1] == np.conj(w[k, j])
            assert np.array_equal(v[k, :, j + 1], np.conj(v[k, :, j]))
            pairs, j = pairs + 1, j + 2
    assert pairs  # the random matrices have complex eigenvalues
    np.testing.assert_allclose(upcast(a).reshape(-1, n, n) @ v.astype(np.complex128),
                               v.astype(np.complex128) * w[:, None, :], **tol(dtype))
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, **tol(dtype))


@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 4, 4), (1, 1)])
def test_eig_of_empty_and_single_element_matrices(shape):
    a = np.full(shape, 2.5, np.float64)
    w, v = LA.eig(xp.asarray(a))
    assert w.dtype == xp.complex128 and v.dtype == xp.complex128
    assert w.shape == shape[:-1] and v.shape == shape
    assert_allclose(w, np.linalg.eigvals(a).astype(np.complex128))
    assert_allclose(v, np.ones(shape, np.complex128))


def test_eig_real_eigenvalues_still_complex():
    w = LA.eigvals(xp.asarray(np.diag([1.0, 2.0]).astype(np.float32)))
    assert w.dtype == xp.complex64
    assert_allclose(w, np.array([1, 2], np.complex64))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
def test_inv(rng, dtype, batch):
    a = well_conditioned(rng, batch + (4, 4), dtype)
    r = LA.inv(xp.asarray(a))
    assert_allclose(r, np.linalg.inv(upcast(a)), dtype=dtype, **tol(dtype))


def test_inv_strided_singular_and_empty(rng):
    a = well_conditioned(rng, (6, 3, 3), "float64")
    x = xp.asarray(a)
    assert_allclose(LA.inv(x[1::2].mT), np.linalg.inv(np.swapaxes(a[1::2], -1, -2)), rtol=1e-10)
    with pytest.raises(LA.LinAlgError):
        LA.inv(xp.zeros((2, 3, 3)))
    with pytest.raises(ValueError):  # LinAlgError is a ValueError
        LA.inv(xp.asarray([[1.0, 2.0], [2.0, 4.0]]))
    assert LA.inv(xp.zeros((0, 0))).shape == (0, 0)
    with pytest.raises(TypeError):
        LA.inv(xp.asarray([[1, 0], [0, 1]]))
    with pytest.raises(ValueError):
        LA.inv(xp.ones((2, 3)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 3), (2, 0, 3), (3, 0)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(rng, dtype, shape, mode):
    a = random_array(rng, shape, dtype)
    res = LA.qr(xp.asarray(a), mode=mode)
    assert res._fields == ("Q", "R")
    *batch, m, n = shape
    k = min(m, n)
    q, r = to_numpy(res.Q), to_numpy(res.R)
    assert q.dtype == np.dtype(dtype) and r.dtype == np.dtype(dtype)
    assert q.shape == tuple(batch) + ((m, m) if mode == "complete" else (m, k))
    assert r.shape == tuple(batch) + ((m, n) if mode == "complete" else (k, n))
    assert np.array_equal(r, np.triu(r))
    np.testing.assert_allclose(upcast(q) @ upcast(r), upcast(a), **tol(dtype))
    qh = np.conj(np.swapaxes(upcast(q), -1, -2))
    np.testing.assert_allclose(qh @ upcast(q), np.broadcast_to(np.eye(q.shape[-1]), qh.shape[:-1] + (q.shape[-1],)),
                               **tol(dtype))


def test_qr_errors():
    with pytest.raises(ValueError):
        LA.qr(xp.ones((2, 2)), mode="r")
    with pytest.raises(TypeError):
        LA.qr(xp.asarray([[1, 0], [0, 1]]))
    with pytest.raises(ValueError):
        LA.qr(xp.ones((3,)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 3), (2, 0, 3), (0, 0)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_svdvals(rng, dtype, shape, full):
    a = random_array(rng, shape, dtype)
    res = LA.svd(xp.asarray(a), full_matrices=full)
    assert res._fields == ("U", "S", "Vh")
    *batch, m, n = shape
    batch = tuple(batch)
    k = min(m, n)
    u, s, vh = (to_numpy(t) for t in res)
    assert u.dtype == np.dtype(dtype) and vh.dtype == np.dtype(dtype) and s.dtype == real_of(dtype)
    assert u.shape == batch + ((m, m) if full else (m, k))
    assert vh.shape == batch + ((n, n) if full else (k, n))
    assert s.shape == batch + (k,)
    assert np.all(s[..., :-1] >= s[..., 1:])
    np.testing.assert_allclose(s, np.linalg.svd(upcast(a), compute_uv=False), **tol(dtype))
    recon = (upcast(u[..., :, :k]) * upcast(s)[..., None, :]) @ upcast(vh[..., :k, :])
    np.testing.assert_allclose(recon, upcast(a), **tol(dtype))
    sv = LA.svdvals(xp.asarray(a))
    assert_allclose(sv, np.linalg.svd(upcast(a), compute_uv=False), dtype=real_of(dtype), **tol(dtype))


def test_svd_strided(rng):
    a = random_array(rng, (4, 6, 5), "float64")
    x = xp.asarray(a)
    assert_allclose(LA.svdvals(x[::2, ::2].mT), np.linalg.svd(np.swapaxes(a[::2, ::2], -1, -2),
                                                              compute_uv=False), rtol=1e-10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (2, 3, 5), (0, 3), (2, 4, 0)])
def test_pinv(rng, dtype, shape):
    a = random_array(rng, shape, dtype)
    r = LA.pinv(xp.asarray(a))
    assert r.shape == shape[:-2] + (shape[-1], shape[-2])
    assert_allclose(r, np.linalg.pinv(upcast(a)), dtype=dtype, **tol(dtype))


def test_pinv_rtol(rng):
    # Singular values 10, 1, 1e-3: rtol decides whether 1e-3 is kept.
    u, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    a = (u * np.array([10.0, 1.0, 1e-3])) @ u.T
    x = xp.asarray(a)
    assert_allclose(LA.pinv(x, rtol=1e-2), np.linalg.pinv(a, rtol=1e-2), rtol=1e-8, atol=1e-10)
    assert_allclose(LA.pinv(x), np.linalg.inv(a), rtol=1e-6)
    stack = xp.asarray(np.stack([a, a]))
    r = LA.pinv(stack, rtol=xp.asarray([1e-2, 1e-6]))
    got = to_numpy(r)
    np.testing.assert_allclose(got[0], np.linalg.pinv(a, rtol=1e-2), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(got[1], np.linalg.inv(a), rtol=1e-6)
    with pytest.raises(TypeError):
        LA.pinv(x, rtol=xp.asarray(1))
    with pytest.raises(TypeError):
        LA.pinv(x, rtol="1")
    with pytest.raises(ValueError):
        LA.pinv(stack, rtol=xp.asarray([1e-2, 1e-2, 1e-2]))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", [(), (3,)])
def test_solve(rng, dtype, batch):
    a = well_conditioned(rng, batch + (4, 4), dtype)
    b = random_array(rng, batch + (4, 2), dtype)
    r = LA.solve(xp.asarray(a), xp.asarray(b))
    assert_allclose(r, np.linalg.solve(upcast(a), upcast(b)), dtype=dtype, **tol(dtype))
    v = random_array(rng, (4,), dtype)
    r = LA.solve(xp.asarray(a), xp.asarray(v))
    assert r.shape == batch + (4,)
    expected = np.linalg.solve(upcast(a), np.broadcast_to(upcast(v)[:, None], batch + (4, 1)))[..., 0]
    assert_allclose(r, expected, dtype=dtype, **tol(dtype))


def test_solve_broadcast_promotion_and_errors(rng):
    a = well_conditioned(rng, (2, 1, 3, 3), "float32")
    b = random_array(rng, (4, 3, 5), "float64")
    r = LA.solve(xp.asarray(a), xp.asarray(b))
    assert r.dtype == xp.float64 and r.shape == (2, 4, 3, 5)
    expected = np.linalg.solve(np.broadcast_to(upcast(a), (2, 4, 3, 3)), np.broadcast_to(b, (2, 4, 3, 5)))
    assert_allclose(r, expected, rtol=1e-9)
    x = xp.asarray(a)
    assert_allclose(LA.solve(x.mT, xp.asarray(b)[::2]),
                    np.linalg.solve(np.broadcast_to(np.swapaxes(upcast(a), -1, -2), (2, 2, 3, 3)),
                                    np.broadcast_to(b[::2], (2, 2, 3, 5))), rtol=1e-5)
    with pytest.raises(LA.LinAlgError):
        LA.solve(xp.zeros((3, 3)), xp.ones((3,)))
    with pytest.raises(ValueError):
        LA.solve(xp.ones((3, 3)), xp.ones((4,)))
    with pytest.raises(ValueError):
        LA.solve(xp.ones((3, 3)), xp.ones((4, 1)))
    with pytest.raises(ValueError):
        LA.solve(xp.ones((3, 4)), xp.ones((3,)))
    with pytest.raises(TypeError):
        LA.solve(xp.ones((3, 3)), xp.ones((3,), dtype=xp.int64))
    assert LA.solve(xp.ones((0, 0)), xp.ones((0, 2))).shape == (0, 2)


# --- composites ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float32", "float64", "complex64"])
@pytest.mark.parametrize("offset", [0, 1, -2, 7])
def test_trace(rng, dtype, offset):
    a = random_array(rng, (2, 4, 5), dtype)
    r = LA.trace(xp.asarray(a), offset=offset)
    expected_dtype = {"int8": np.int64, "uint8": np.uint64}.get(dtype, np.dtype(dtype))
    expected = np.trace(a, offset=offset, axis1=-2, axis2=-1, dtype=expected_dtype)
    if np.dtype(dtype).kind in "iu":
        assert_array_equal(r, expected)
    else:
        assert_allclose(r, expected, dtype=dtype, **tol(dtype))


def test_trace_dtype_argument():
    x = xp.asarray(np.full((3, 3), 100, np.int8))
    assert_array_equal(LA.trace(x, dtype=xp.int16), np.int16(300))
    assert LA.trace(xp.ones((2, 2), dtype=xp.float32), dtype=xp.float64).dtype == xp.float64
    with pytest.raises(TypeError):
        LA.trace(xp.ones((2, 2), dtype=xp.bool))
    with pytest.raises(ValueError):
        LA.trace(xp.ones((2,)))


@pytest.mark.parametrize("dtype", ["int32", "float64", "complex128"])
def test_diagonal(rng, dtype):
    a = random_array(rng, (2, 3, 5), dtype)
    for offset in (-3, -1, 0, 2, 4, 9):
        assert_array_equal(LA.diagonal(xp.asarray(a), offset=offset),
                           np.diagonal(a, offset=offset, axis1=-2, axis2=-1))
    assert_array_equal(LA.diagonal(xp.asarray(a).mT), np.diagonal(np.swapaxes(a, -1, -2), axis1=-2, axis2=-1))
    assert LA.diagonal(xp.ones((3, 3), dtype=xp.bool)).dtype == xp.bool


@pytest.mark.parametrize("dtype", ["int16", "float32", "complex128"])
def test_outer(rng, dtype):
    a, b = random_array(rng, (4,), dtype), random_array(rng, (3,), dtype)
    r = LA.outer(xp.asarray(a), xp.asarray(b))
    assert_array_equal(r, np.outer(a, b))
    assert LA.outer(xp.ones((0,)), xp.ones((3,))).shape == (0, 3)
    with pytest.raises(ValueError):
        LA.outer(xp.ones((2, 2)), xp.ones((2,)))


@pytest.mark.parametrize("dtype", ["int64", "float64", "complex128"])
@pytest.mark.parametrize("s1,s2,axis", [((3,), (3,), -1), ((4, 3), (3,), -1), ((3, 4), (3, 1), -2),
                                        ((2, 3, 2), (3, 2), -2), ((2, 1, 3), (4, 3), -1), ((3, 2), (3, 2), 0)])
def test_cross(rng, dtype, s1, s2, axis):
    a, b = random_array(rng, s1, dtype), random_array(rng, s2, dtype)
    r = LA.cross(xp.asarray(a), xp.asarray(b), axis=axis)
    ax = axis if axis < 0 else axis - len(s1)
    a_b, b_b = np.broadcast_arrays(a, b)
    expected = np.cross(a_b, b_b, axis=ax)
    if dtype == "int64":
        assert_array_equal(r, expected)
    else:
        assert_allclose(r, expected, rtol=1e-12, atol=1e-12)


def test_cross_errors_and_promotion():
    r = LA.cross(xp.asarray([1, 2, 3], dtype=xp.int8), xp.asarray([4, 5, 6], dtype=xp.int16))
    assert_array_equal(r, np.array([-3, 6, -3], np.int16))
    with pytest.raises(ValueError):
        LA.cross(xp.ones((4,)), xp.ones((4,)))
    with pytest.raises(ValueError):
        LA.cross(xp.ones((1, 3)), xp.ones((3, 3)), axis=-2)  # compute axis is not broadcast
    with pytest.raises(ValueError):
        LA.cross(xp.ones((2, 3)), xp.ones((3,)), axis=-2)
    with pytest.raises(TypeError):
        LA.cross(xp.ones((3,), dtype=xp.bool), xp.ones((3,), dtype=xp.bool))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3, 5, 8])
def test_matrix_power(rng, dtype, n):
    a = well_conditioned(rng, (2, 3, 3), dtype) / 9
    r = LA.matrix_power(xp.asarray(a), n)
    assert_allclose(r, np.linalg.matrix_power(upcast(a), n), dtype=dtype, **tol(dtype))


def test_matrix_power_special(rng):
    x = xp.asarray(random_array(rng, (2, 4, 3, 3), "complex64"))
    r = LA.matrix_power(x, 0)
    assert_array_equal(r, np.broadcast_to(np.eye(3, dtype=np.complex64), (2, 4, 3, 3)))
    r[0, 0, 0, 0] = 5  # a fresh array, not a broadcast view
    r1 = LA.matrix_power(x, 1)
    r1[...] = 0
    assert float(xp.abs(x[0, 0, 0, 0])) != 0
    assert LA.matrix_power(xp.zeros((0, 0)), 3).shape == (0, 0)
    with pytest.raises(TypeError):
        LA.matrix_power(xp.ones((2, 2), dtype=xp.int64), 2)
    with pytest.raises(TypeError):
        LA.matrix_power(xp.ones((2, 2)), 2.0)
    with pytest.raises(ValueError):
        LA.matrix_power(xp.ones((2, 3)), 2)
    with pytest.raises(LA.LinAlgError):
        LA.matrix_power(xp.zeros((2, 2)), -1)


def test_matrix_rank(rng):
    u = rng.standard_normal((3, 6, 2))
    v = rng.standard_normal((3, 2, 5))
    a = u @ v  # rank 2
    a[1, :, :] = 0  # rank 0
    a[2] = rng.standard_normal((6, 5))  # rank 5
    r = LA.matrix_rank(xp.asarray(a))
    assert_array_equal(r, np.array([2, 0, 5], np.int64))
    assert_array_equal(LA.matrix_rank(xp.asarray(a.astype(np.float32))), np.array([2, 0, 5], np.int64))
    assert_array_equal(LA.matrix_rank(xp.asarray(a.astype(np.complex64))), np.array([2, 0, 5], np.int64))
    # A huge rtol drops everything but the largest singular value.
    assert_array_equal(LA.matrix_rank(xp.asarray(a), rtol=0.999), np.array([1, 0, 1], np.int64))
    assert_array_equal(LA.matrix_rank(xp.asarray(a), rtol=xp.asarray([0.999, 0.1, 1e-12])),
                       np.array([1, 0, 5], np.int64))
    assert_array_equal(LA.matrix_rank(xp.zeros((2, 0, 3))), np.zeros((2,), np.int64))
    assert_array_equal(LA.matrix_rank(xp.asarray(np.eye(4))), np.int64(4))
    with pytest.raises(TypeError):
        LA.matrix_rank(xp.ones((2, 2), dtype=xp.int64))


MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norm(rng, dtype, ord, keepdims):
    a = random_array(rng, (2, 4, 3), dtype)
    r = LA.matrix_norm(xp.asarray(a), ord=ord, keepdims=keepdims)
    expected = np.linalg.matrix_norm(upcast(a), ord=ord, keepdims=keepdims)
    assert_allclose(r, expected, dtype=real_of(dtype), **tol(dtype))


def test_matrix_norm_strided_empty_and_errors(rng):
    a = random_array(rng, (4, 5, 6), "float64")
    x = xp.asarray(a)
    for ord in MATRIX_ORDS:
        assert_allclose(LA.matrix_norm(x[::2].mT, ord=ord),
                        np.linalg.matrix_norm(np.swapaxes(a[::2], -1, -2), ord=ord), rtol=1e-10)
    for ord in MATRIX_ORDS:
        assert_array_equal(LA.matrix_norm(xp.zeros((3, 0, 2)), ord=ord), np.zeros(3))
    assert LA.matrix_norm(xp.ones((2, 2)), keepdims=True).shape == (1, 1)
    with pytest.raises(ValueError):
        LA.matrix_norm(x, ord=3)
    with pytest.raises(ValueError):
        LA.matrix_norm(x, ord="nope")
    with pytest.raises(TypeError):
        LA.matrix_norm(xp.ones((2, 2), dtype=xp.int64))
    with pytest.raises(ValueError):
        LA.matrix_norm(xp.ones((2,)))


VECTOR_ORDS = [2, 1, 0, -1, -2, math.inf, -math.inf, 3, 0.5, -1.5, 7]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", VECTOR_ORDS)
@pytest.mark.parametrize("axis,keepdims", [(None, False), (None, True), (1, False), (-1, True),
                                           ((0, 2), False), ((2, 0), True)])
def test_vector_norm(rng, dtype, ord, axis, keepdims):
    a = random_array(rng, (3, 4, 5), dtype)
    r = LA.vector_norm(xp.asarray(a), axis=axis, keepdims=keepdims, ord=ord)
    expected = np.linalg.vector_norm(upcast(a), axis=axis, keepdims=keepdims, ord=ord)
    assert_allclose(r, expected, dtype=real_of(dtype), **tol(dtype))


def test_vector_norm_zeros_empty_and_errors(rng):
    a = np.array([[0.0, 3.0, -4.0], [0.0, 0.0, 0.0]])
    x = xp.asarray(a)
    with np.errstate(divide="ignore"):
        for ord in VECTOR_ORDS:
            assert_allclose(LA.vector_norm(x, axis=1, ord=ord),
                            np.linalg.vector_norm(a, axis=1, ord=ord), rtol=1e-12)
    assert_allclose(LA.vector_norm(x[:, ::2]), np.linalg.vector_norm(a[:, ::2]), rtol=1e-12)
    e = xp.zeros((2, 0))
    assert_array_equal(LA.vector_norm(e, axis=1), np.zeros(2))
    assert_array_equal(LA.vector_norm(e, axis=1, ord=math.inf), np.zeros(2))
    assert_array_equal(LA.vector_norm(e, axis=1, ord=-math.inf, keepdims=True), np.full((2, 1), np.inf))
    assert LA.vector_norm(x).shape == ()
    with pytest.raises(TypeError):
        LA.vector_norm(xp.ones((3,), dtype=xp.int64))
    with pytest.raises(TypeError):
        LA.vector_norm(x, ord="fro")
    with pytest.raises(ValueError):
        LA.vector_norm(x, ord=math.nan)
    with pytest.raises(ValueError):
        LA.vector_norm(x, axis=(0, 0))
    with pytest.raises(IndexError):
        LA.vector_norm(x, axis=2)


def test_results_on_default_device(rng):
    x = xp.asarray(well_conditioned(rng, (3, 3), "float64"))
    for r in (LA.inv(x), LA.det(x), LA.svdvals(x), LA.matrix_norm(x), LA.trace(x), LA.qr(x).Q):
        assert r.device == DEVICE


@pytest.mark.parametrize("shape", [(0, 3, 2), (0, 1, 1), (2, 0, 3), (0, 2, 4)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd_of_empty_stacks_and_matrices_has_the_standard_shapes(shape, full_matrices):
    *stack, m, n = shape
    k = min(m, n)
    u, s, vh = xp.linalg.svd(xp.zeros(shape, dtype=xp.float32), full_matrices=full_matrices)
    assert u.shape == (*stack, m, m if full_matrices else k)
    assert s.shape == (*stack, k)
    assert vh.shape == (*stack, n if full_matrices else k, n)
