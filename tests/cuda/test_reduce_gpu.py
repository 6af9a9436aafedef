"""Split reductions on a real GPU (skipped without one): the one-launch kernels whose last block
folds the partials of the others (arrayx/cuda/kernels/reduce/). A broken fold shows as a wrong
value, a result that depends on which block finished last, or a counter left non-zero (the next
split reduction on the stream then folds too early or never)."""

import numpy as np
import pytest

import arrayx as xp
import arrayx._devices as _devices

pytestmark = pytest.mark.skipif(_devices.cuda_device_count() == 0, reason="no CUDA GPU")


@pytest.fixture
def rng():
    return np.random.default_rng(20261201)


def _dev(h):
    return xp.asarray(h, device="cuda:0")


def _host(x):
    return np.asarray(x.to_device("cpu"))


def _plan_of(name, x, axes, order_free=True, out_dt=None):
    from arrayx.cuda.kernels.reduce import plans
    from arrayx.cuda.engine import runtime
    a = x._data
    dev = runtime.get_device(0)
    out_dt = np.dtype(out_dt or a.dtype)
    return plans.plan(name, a.dtype, out_dt, a.shape, a.strides, axes, order_free, a.ptr % 16,
                   dev.multiprocessor_count)


def test_large_float32_sum_mean_and_argmax_are_one_split_launch(rng):
    h = rng.standard_normal(1 << 24, dtype=np.float32)
    x = _dev(h)
    assert _plan_of("sum", x, (0,)).parts is not None  # the split (fused) path
    ref = h.astype(np.float64)
    assert abs(float(xp.sum(x)) - ref.sum()) <= 1e-5 * np.abs(ref).sum()
    assert abs(float(xp.mean(x)) - ref.mean()) <= 1e-5 * np.abs(ref).mean()
    assert int(xp.argmax(x)) == int(np.argmax(h))
    assert int(xp.argmin(x)) == int(np.argmin(h))
    h64 = h.astype(np.float64)[::-1]
    assert float(xp.sum(_dev(h64))) == pytest.approx(h64.sum(), rel=1e-12, abs=1e-9)


def test_repeated_split_reductions_reset_their_counters(rng):
    """Many launches on one stream (graph-captured batches included) with no sync between."""
    h = rng.standard_normal((1 << 22) + 13, dtype=np.float32)
    x = _dev(h)
    expected = h.astype(np.float64).sum()
    results = [xp.sum(x) for _ in range(300)]
    values = np.array([float(r) for r in results])
    assert np.all(values == values[0])  # deterministic, whichever block came last
    assert abs(values[0] - expected) <= 1e-5 * np.abs(h).sum()


def test_split_reductions_of_different_sizes_and_kinds_back_to_back(rng):
    sizes = [(1 << 24) + 5, 3 << 20, 1 << 21, 12345, (1 << 24) + 5]
    hs = [rng.standard_normal(n, dtype=np.float32) for n in sizes]
    xs = [_dev(h) for h in hs]
    m = rng.standard_normal((1 << 14, 96), dtype=np.float32)
    xm = _dev(m)
    got = []
    for _ in range(3):
        for x in xs:
            got += [xp.sum(x), xp.argmax(x), xp.max(x), xp.sum(xm, axis=0)]
    k = 0
    for _ in range(3):
        for h in hs:
            s, i, mx, cols = got[k:k + 4]
            k += 4
            assert abs(float(s) - h.astype(np.float64).sum()) <= 1e-5 * np.abs(h).sum()
            assert int(i) == int(np.argmax(h))
            assert float(mx) == h.max()
            np.testing.assert_allclose(_host(cols), m.astype(np.float64).sum(0),
                                       rtol=1e-4, atol=1e-3)


def test_argmax_ties_and_nans_across_blocks(rng):
    n = 1 << 24
    h = rng.integers(0, 1000, n).astype(np.float32)
    top = np.sort(rng.choice(n, 40, replace=False))  # one maximum in many blocks
    h[top] = 5000.0
    x = _dev(h)
    assert int(xp.argmax(x)) == top[0]
    h[top[:3]] = 4999.0
    assert int(xp.argmax(_dev(h))) == top[3]
    low = np.sort(rng.choice(n, 40, replace=False))
    h2 = h.copy()
    h2[low] = -7.0
    assert int(xp.argmin(_dev(h2))) == low[0]
    nans = np.sort(rng.choice(n, 25, replace=False))
    h3 = h.copy()
    h3[nans] = np.nan
    x3 = _dev(h3)
    assert int(xp.argmax(x3)) == nans[0] and int(xp.argmin(x3)) == nans[0]
    assert np.isnan(float(xp.max(x3)))
    # the same along rows of a few long rows (split rows), and reversed (general path)
    r = h3.reshape(4, -1)
    xr = _dev(r)
    np.testing.assert_array_equal(_host(xp.argmax(xr, axis=1)), np.argmax(r, axis=1))
    np.testing.assert_array_equal(_host(xp.argmax(xr[:, ::-1], axis=1)),
                                  np.argmax(r[:, ::-1], axis=1))


@pytest.mark.parametrize("shape", [(1 << 16, 100), (1 << 15, 1024), (200_003, 7), (1 << 18, 33)])
def test_column_sums_of_tall_matrices_split(rng, shape):
    h = rng.standard_normal(shape, dtype=np.float32)
    x = _dev(h)
    assert _plan_of("sum", x, (0,)).parts is not None
    ref = h.astype(np.float64).sum(0)
    scale = np.abs(h).sum(0) + 1
    for _ in range(2):
        got = _host(xp.sum(x, axis=0)).astype(np.float64)
        assert np.all(np.abs(got - ref) <= 1e-5 * scale)
    np.testing.assert_array_equal(_host(xp.argmax(x, axis=0)), np.argmax(h, axis=0))
    got = _host(xp.mean(_dev(h.astype(np.float64)), axis=0))
    np.testing.assert_allclose(got, h.astype(np.float64).mean(0), rtol=1e-10, atol=1e-12)


def test_split_reductions_of_every_kind(rng):
    n = (1 << 22) + 7
    i = rng.integers(-1000, 1000, n).astype(np.int32)
    xi = _dev(i)
    assert int(xp.sum(xi)) == int(i.astype(np.int64).sum())
    assert int(xp.min(xi)) == int(i.min())
    b = np.zeros(n, bool)
    xb = _dev(b)
    assert not bool(xp.any(xb)) and not bool(xp.all(xb))
    b[n - 3] = True
    assert bool(xp.any(_dev(b)))
    c = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    got = complex(xp.sum(_dev(c)))
    ref = c.astype(np.complex128).sum()
    assert abs(got - ref) <= 1e-5 * np.abs(c).sum()
    p = np.ones(n, np.float64)
    p[rng.integers(0, n, 30)] = 2.0
    assert float(xp.prod(_dev(p))) == float(np.prod(p))


def test_split_reductions_on_a_user_stream(rng):
    import arrayx.cuda as xc
    h = rng.standard_normal(1 << 23, dtype=np.float32)
    x = _dev(h)
    s = xc.Stream(0)
    with s:
        results = [xp.sum(x) for _ in range(20)] + [xp.argmax(x) for _ in range(20)]
    s.synchronize()
    expected = h.astype(np.float64).sum()
    for r in results[:20]:
        assert abs(float(r) - expected) <= 1e-5 * np.abs(h).sum()
    assert all(int(r) == int(np.argmax(h)) for r in results[20:])
