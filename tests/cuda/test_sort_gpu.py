"""CUDA sort, unique and isin on a real GPU (skipped without one): what the namespace tests in
tests/test_sorting.py and tests/test_sets.py cannot see, namely memory, streams and the cache of
built cuda.compute algorithms."""

import numpy as np
import pytest

import arrayx as xp
import arrayx._devices as _devices

pytestmark = pytest.mark.skipif(_devices.cuda_device_count() == 0, reason="no CUDA GPU")


def test_memory_returns_to_start(rng):
    import arrayx.cuda as xc
    a = rng.normal(size=(300, 500)).astype(np.float32)
    x = xp.asarray(a, device="cuda:0")
    xp.argsort(x, axis=0)  # builds the algorithms first
    xp.unique_all(x)
    xp.isin(x, x[0])
    xc.synchronize()
    start = xc.memory_stats()["active"]
    for _ in range(3):
        r = (xp.sort(x), xp.argsort(x, axis=0), xp.unique_all(x), xp.isin(x, x[0]))
    del r
    xc.synchronize()
    assert xc.memory_stats()["active"] == start  # built algorithms keep no arrays alive


def test_algorithms_are_built_once(rng):
    from arrayx.cuda.libraries import cub
    x = xp.asarray(rng.normal(size=1000).astype(np.float64), device="cuda:0")
    xp.argsort(x)
    built = dict(cub._algorithms)
    xp.argsort(x[::-1])
    xp.argsort(x, descending=True)
    assert all(cub._algorithms[k] is v for k, v in built.items())
    assert cub.BUILD_SECONDS


def test_sort_on_another_stream_sees_queued_work(rng):
    import arrayx.cuda as xc
    a = rng.normal(size=1 << 20).astype(np.float32)
    s = xc.Stream(0)
    with s:
        x = xp.asarray(a, device="cuda:0")
        y = x * 2.0  # queued on s before the sort
        r = xp.sort(y, descending=True)
    s.synchronize()
    np.testing.assert_array_equal(np.asarray(r.to_device("cpu")), np.sort(a * 2)[::-1])
