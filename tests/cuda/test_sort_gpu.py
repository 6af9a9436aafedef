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
    x = xp.asarray(rng.normal(size=5000).astype(np.float64), device="cuda:0")  # past block.MAX_ROW
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


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint8", "uint16", "int64"])
@pytest.mark.parametrize("n", [2, 31, 256, 1000, 2048, 2049])
def test_short_rows_and_the_radix_path_agree_with_numpy(rng, dtype, n):
    """Rows up to block.MAX_ROW (2048) of a small sort go through shared memory, longer ones
    through CUB: both equal NumPy's stable sort, on many rows, a strided view and the axis not
    last."""
    from arrayx.cuda.kernels.sort import block
    assert block.fits(n, 7 * n) == (n <= 2048)
    if dtype.startswith("float"):
        a = rng.normal(size=(7, n)).astype(dtype)
        a.flat[::5] = np.nan
        a.flat[3::13] = -np.nan  # sorts with the other NaNs, as in NumPy
        a.flat[1::7] = -0.0
        a.flat[2::11] = np.inf
    else:
        a = rng.integers(-5 if dtype.startswith("int") else 0, 9, size=(7, n)).astype(dtype)
    x = xp.asarray(a, device="cuda:0")
    host = lambda r: np.asarray(r.to_device("cpu"))  # noqa: E731
    np.testing.assert_array_equal(host(xp.sort(x)), np.sort(a, kind="stable"))
    np.testing.assert_array_equal(host(xp.argsort(x)), np.argsort(a, kind="stable"))
    np.testing.assert_array_equal(host(xp.sort(x[::2, ::-1])), np.sort(a[::2, ::-1]))
    np.testing.assert_array_equal(host(xp.argsort(x.T, axis=0)), np.argsort(a.T, axis=0,
                                                                          kind="stable"))
    got = host(xp.argsort(x, descending=True))
    if dtype.startswith("float"):  # NaNs first descending
        keys = np.where(np.isnan(a), np.inf, a)
        np.testing.assert_array_equal(np.take_along_axis(keys, got, -1),
                                      -np.sort(-keys, kind="stable"))
    else:
        np.testing.assert_array_equal(np.take_along_axis(a, got, -1), np.sort(a)[:, ::-1])
    vals = np.take_along_axis(a, got, -1)
    same = vals[:, 1:] == vals[:, :-1]
    assert (got[:, 1:][same] > got[:, :-1][same]).all()  # ties in their original order


def test_many_long_rows_go_through_cub_and_agree_with_numpy(rng):
    """Past block.SMALL_SORT elements, rows longer than block.LONG_ROW take the radix path."""
    from arrayx.cuda.kernels.sort import block
    rows, n = block.SMALL_SORT // 1024 + 1, 1024
    assert not block.fits(n, rows * n) and block.fits(block.LONG_ROW, rows * n)
    a = rng.normal(size=(rows, n)).astype(np.float32)
    got = np.asarray(xp.argsort(xp.asarray(a, device="cuda:0")).to_device("cpu"))
    np.testing.assert_array_equal(got, np.argsort(a, kind="stable"))


def _set_sample(rng, dtype, n):
    """n values of `dtype` with many repeats (NaNs and both zeros among floats; complex values
    sharing real parts, so that the second word decides)."""
    small = rng.integers(0, 40, size=n)
    if dtype == "bool":
        return small % 2 == 0
    if dtype.startswith("complex"):
        return (small % 7 + 1j * (small // 7)).astype(dtype)
    a = (small / 4 if dtype.startswith("float") else small).astype(dtype)
    if dtype.startswith("float"):
        a[::9] = np.nan
        a[4::11] = -0.0
        a[5::13] = 0.0
    return a


def _no_cub(*args, **kwargs):
    raise AssertionError("a short set operation reached CUB's radix sort")


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int16",
                                   "uint64", "bool"])
@pytest.mark.parametrize("n", [1, 2, 777, 2048, 2049, 5000])
def test_unique_and_isin_in_one_block_and_past_it(rng, monkeypatch, dtype, n):
    """Up to block.MAX_ROW elements unique and isin sort in one block (no CUB: radix_sort is
    replaced by a failure), past it through CUB: both equal NumPy, each NaN its own value."""
    from arrayx.cuda.kernels.sort import block, sets
    if n < 2 or block.fits(n, n):
        monkeypatch.setattr(sets, "radix_sort", _no_cub)
    a = _set_sample(rng, dtype, n)
    x = xp.asarray(a, device="cuda:0")
    host = lambda r: np.asarray(r.to_device("cpu"))  # noqa: E731
    values, index, inverse, counts = xp.unique_all(x)
    want = np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                     equal_nan=False)
    for got, expected in zip((values, index, inverse, counts), want):
        np.testing.assert_array_equal(host(got), expected)
    np.testing.assert_array_equal(host(xp.unique_values(x)), want[0])
    np.testing.assert_array_equal(host(xp.unique_counts(x)[1]), want[3])
    np.testing.assert_array_equal(host(xp.unique_values(x[::-2])),
                                  np.unique(a[::-2], equal_nan=False))
    np.testing.assert_array_equal(host(xp.isin(x, x[::3])), np.isin(a, a[::3]))
    np.testing.assert_array_equal(host(xp.isin(x[1:], x[:1], invert=True)),
                                  np.isin(a[1:], a[:1], invert=True))
