"""Threads x streams x allocations x syncs on cuda:0, scikit-learn's thread pool on arrayx
arrays, and a soak of mixed operations whose device memory returns to its baseline."""

import threading

import numpy as np
import pytest

import arrayx as xp
import arrayx.cuda  # noqa: F401  (xp.cuda)
from arrayx.cuda.engine import runtime
from conftest import run_threads, run_with_scipy_array_api

pytestmark = pytest.mark.gpu
CUDA = xp.Device("cuda:0") if xp.cuda.is_available() else None


def test_each_thread_has_its_own_current_stream():
    dev = runtime.get_device(0)
    default = dev.default_stream
    inside, entered = threading.Event(), threading.Event()
    seen = {}

    def enters():
        with xp.cuda.Stream(0) as s:
            seen["own"] = (dev.stream is s)
            entered.set()
            inside.wait()
        seen["after"] = dev.stream is default

    def watches():
        entered.wait()
        seen["other"] = dev.stream is default
        inside.set()

    a, b = threading.Thread(target=enters), threading.Thread(target=watches)
    a.start(), b.start()
    a.join(), b.join()
    assert seen == {"own": True, "other": True, "after": True}


@pytest.mark.parametrize("own_stream", [False, True])
def test_threads_streams_allocations_and_syncs(own_stream):
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal(10_000 + 37 * t).astype(np.float32) for t in range(12)]

    def work(t):
        def body():
            h = inputs[t]
            for i in range(60):
                x = xp.asarray(h, device=CUDA)
                y = xp.tanh(x * 0.5 + 0.25)          # small ops: batched into graphs
                big = xp.ones((1 << 20,), device=CUDA) * float(i)  # a large direct launch
                s = xp.sum(y)
                if i % 7 == 0:
                    xp.cuda.synchronize()
                assert float(big[-1]) == float(i)
                expected = np.tanh(h * np.float32(0.5) + np.float32(0.25))
                np.testing.assert_allclose(np.asarray(y.to_device("cpu")), expected, rtol=2e-6,
                                           atol=1e-6)
                np.testing.assert_allclose(float(s), expected.sum(dtype=np.float64), rtol=1e-4)
        if own_stream:
            with xp.cuda.Stream(0):
                body()
        else:
            body()

    run_threads(work, 12)


_SKLEARN_THREADS = """
import numpy as np, sklearn, arrayx as xp
from sklearn.metrics import pairwise_distances
from sklearn.metrics.pairwise import pairwise_kernels
cuda = xp.Device("cuda:0")
rng = np.random.default_rng(3)
X, Y = rng.standard_normal((300, 16)), rng.standard_normal((200, 16))
with sklearn.config_context(array_api_dispatch=True):
    for _ in range(3):
        d = pairwise_distances(xp.asarray(X, device=cuda), xp.asarray(Y, device=cuda), n_jobs=4)
        k = pairwise_kernels(xp.asarray(X, device=cuda), xp.asarray(Y, device=cuda),
                             metric="rbf", n_jobs=4)
        np.testing.assert_allclose(np.asarray(d.to_device("cpu")), pairwise_distances(X, Y),
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(np.asarray(k.to_device("cpu")),
                                   pairwise_kernels(X, Y, metric="rbf"), rtol=1e-9, atol=1e-12)
print("ok")
"""


def test_cub_sort_isin_unique_and_scans_from_many_threads_at_once():
    """CUB's algorithms (radix sort, inclusive scan) keep the arguments of the call in progress:
    threads calling one at once must still each get their own result (Cubed's thread executor
    ran isin on 20 chunks at once and got one element wrong before the calls were serialised)."""
    def work(i):
        rng = np.random.default_rng(i)
        for k in range(25):
            a = rng.integers(-50, 50, 300 + 37 * k)
            b = rng.integers(-60, 60, 20 + k)
            x, y = xp.asarray(a, device=CUDA), xp.asarray(b, device=CUDA)
            assert np.array_equal(np.asarray(xp.isin(x, y).to_device("cpu")), np.isin(a, b))
            assert np.array_equal(np.asarray(xp.sort(x).to_device("cpu")), np.sort(a))
            assert np.array_equal(np.asarray(xp.unique_values(y).to_device("cpu")), np.unique(b))
            assert np.array_equal(np.asarray(xp.nonzero(x > 0)[0].to_device("cpu")),
                                  np.nonzero(a > 0)[0])
    run_threads(work, 12)


def test_library_calls_from_many_threads_at_once():
    """cuFFT plans and cuBLAS/cuSOLVER handles are one thread's at a time (libraries/calls.py's
    PerThread): threads transforming, multiplying and solving at once on the default stream (as
    SciPy's TestFFTThreadSafe does, which got every element wrong when the threads shared one
    plan) each get their own result."""
    def work(i):
        rng = np.random.default_rng(100 + i)
        for k in range(12):
            a = rng.standard_normal((16, 64 + 2 * k))
            m = rng.standard_normal((24, 24)) + 24 * np.eye(24)
            x, y = xp.asarray(a, device=CUDA), xp.asarray(m, device=CUDA)
            np.testing.assert_allclose(np.asarray(xp.fft.hfft(x).to_device("cpu")),
                                       np.fft.hfft(a), rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(np.asarray(xp.fft.rfft(x, axis=0).to_device("cpu")),
                                       np.fft.rfft(a, axis=0), rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(np.asarray((y @ x[:, :24].mT).to_device("cpu")),
                                       m @ a[:, :24].T, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(np.asarray(xp.linalg.solve(y, x[:, :24].mT)
                                                  .to_device("cpu")),
                                       np.linalg.solve(m, a[:, :24].T), rtol=1e-8, atol=1e-8)
    run_threads(work, 8)


def test_scikit_learn_thread_pool_on_cuda_arrays():
    """pairwise_distances / pairwise_kernels with n_jobs=4 (joblib's threads) on cuda arrays
    give NumPy's results (a subprocess: SciPy reads SCIPY_ARRAY_API when first imported)."""
    pytest.importorskip("sklearn")
    run_with_scipy_array_api(_SKLEARN_THREADS, timeout=600)


def test_soak_of_mixed_ops_returns_memory_to_its_baseline():
    dev = runtime.get_device(0)
    xp.cuda.synchronize()
    base = dev.allocator.stats()["active"]
    rng = np.random.default_rng(11)
    h = rng.standard_normal((97, 31))
    x = xp.asarray(h, device=CUDA)
    acc = xp.zeros((), dtype=xp.float64, device=CUDA)
    ops = 0
    while ops < 100_000:
        y = xp.exp(x * 0.001) - 1.0
        acc = acc + xp.sum(y[::2, 1:]) + xp.max(xp.abs(y))
        z = xp.concat([y, x], axis=0)[:: 3]
        acc = acc + xp.mean(z)
        ops += 10
    hy = np.exp(h * 0.001) - 1.0
    hz = np.concatenate([hy, h], axis=0)[::3]
    expected = (hy[::2, 1:].sum() + np.abs(hy).max() + hz.mean()) * (100_000 // 10)
    np.testing.assert_allclose(float(acc), expected, rtol=1e-9)
    del x, y, z, acc
    xp.cuda.synchronize()
    assert dev.allocator.stats()["active"] == base
