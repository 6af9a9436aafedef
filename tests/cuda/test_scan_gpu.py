"""Row scans on a real GPU (skipped without one): the per-stream status area that every launch
tags with a new epoch instead of clearing (arrayx/cuda/kernels/scan/status.py status_area, kept in the
stream's runtime.Stream.scratch). A word of an earlier launch taken for a published status
shows as a wrong prefix; tile ids counted from the wrong start, as tiles skipped or scanned
twice."""

import numpy as np
import pytest

import arrayx as xp
import arrayx._devices as _devices

pytestmark = pytest.mark.skipif(_devices.cuda_device_count() == 0, reason="no CUDA GPU")


def _host(x):
    return np.asarray(x.to_device("cpu"))


def _check_cumsum(rng, n, dtype="float32"):
    h = rng.standard_normal(n).astype(dtype)
    if np.dtype(dtype).kind == "c":
        h = (h + 1j * rng.standard_normal(n)).astype(dtype)
    got = _host(xp.cumulative_sum(xp.asarray(h, device="cuda:0")))
    want = np.cumsum(h.astype(np.complex128 if h.dtype.kind == "c" else np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * np.sqrt(n))


def test_scans_of_changing_sizes_reuse_the_status_area(rng):
    from arrayx.cuda.engine import runtime
    from arrayx.cuda.kernels import scan
    tile = scan.tuning.SCAN_BLOCK * scan.tuning.ONE_ROW_VECTORS * 4  # float32 elements a tile of one row
    dev = runtime.get_device(0)
    # a few tiles, then more than the area held (it grows), then fewer again over the words of
    # the larger launch, with x[mask] (the same one-word statuses) in between
    for n in (3 * tile + 5, 2000 * tile + 7, 17, 40 * tile):
        _check_cumsum(rng, n)
        x = rng.standard_normal(n).astype(np.float32)
        m = rng.random(n) < 0.3
        got = _host(xp.asarray(x, device="cuda:0")[xp.asarray(m, device="cuda:0")])
        np.testing.assert_array_equal(got, x[m])
    key = (scan.STATUS_SCRATCH, 1)
    area = dev.stream.scratch[key]
    assert area.tiles >= 2000
    epoch, taken = area.epoch, area.taken
    _check_cumsum(rng, 7 * tile)  # one launch: one epoch more, its 7 tile ids counted
    assert dev.stream.scratch[key] is area
    assert (area.epoch, area.taken) == (epoch + 1, taken + 7)
    # the two-slot statuses (complex64 values, int64 products) have an area of their own
    _check_cumsum(rng, 5 * tile + 3, "complex64")
    s = np.where(rng.random(9 * tile) < 0.5, -1, 1).astype(np.int64)
    got = _host(xp.cumulative_prod(xp.asarray(s, device="cuda:0")))
    np.testing.assert_array_equal(got, np.cumprod(s))
    assert (scan.STATUS_SCRATCH, scan.status_words(np.dtype("int64"))) in dev.stream.scratch


def test_epoch_limit_starts_a_fresh_area(rng, monkeypatch):
    from arrayx.cuda.engine import runtime
    from arrayx.cuda.kernels import scan
    from arrayx.cuda.kernels.scan import status
    dev = runtime.get_device(0)
    monkeypatch.setattr(status, "EPOCH_LIMIT", 2)
    areas = []  # the arrays themselves: an id() of a freed one could come back
    for n in (50_000, 70_000, 30_000, 90_000, 60_000):
        _check_cumsum(rng, n)
        area = dev.stream.scratch[(scan.STATUS_SCRATCH, 1)].array
        if not any(area is seen for seen in areas):
            areas.append(area)
    assert len(areas) >= 2


def test_scans_on_a_user_stream(rng):
    import arrayx.cuda as xc
    from arrayx.cuda.kernels import scan
    s = xc.Stream(0)
    with s:
        _check_cumsum(rng, 300_000)
        _check_cumsum(rng, 100_000)
        assert (scan.STATUS_SCRATCH, 1) in s.scratch
    s.synchronize()
    _check_cumsum(rng, 200_000)


def _row_scan_configs(monkeypatch):
    """The RowScan configurations of the row scans launched from now on (scan.row_scan's keys:
    ("row", RowScan, tile shape, traced))."""
    from arrayx.cuda.engine import compiler
    keys = []
    cached_kernel = compiler.cached_kernel

    def record(dev, family, key, build):
        if family == "scan" and key[0] == "row":
            keys.append(key[1])
        return cached_kernel(dev, family, key, build)

    monkeypatch.setattr(compiler, "cached_kernel", record)
    return keys


@pytest.mark.parametrize("dtype, shape, op, aligned", [
    ("float32", (3, 8192), "sum", 8),          # a tile a row
    ("float32", (6, 16384), "sum", 8),         # two tiles a row
    ("float32", (5, 12288), "sum", 6),         # 3 x 4096: the largest tile that divides it
    ("int32", (4, 4096), "sum", 8),            # int64 sums: 8-byte vectors
    ("int8", (3, 8192), "sum", 8),
    ("float64", (2, 4096), "prod", 8),
    ("complex64", (2, 8192), "sum", 8),
    ("float32", (3, 8196), "sum", 0),          # not a multiple of a tile: segmented
    ("float32", (7, 512), "sum", 0),           # shorter than the smallest aligned tile
])
def test_rows_that_fill_whole_tiles_run_the_one_row_kernel(rng, monkeypatch, dtype, shape, op,
                                                           aligned):
    keys = _row_scan_configs(monkeypatch)
    h = rng.standard_normal(shape)
    if dtype == "complex64":
        h = h + 1j * rng.standard_normal(shape)
    if op == "prod":
        h = 1 + 1e-3 * h  # products of ~8000 factors stay finite
    if dtype.startswith("int"):
        h = rng.integers(-100, 100, shape)
    h = h.astype(dtype)
    x = xp.asarray(h, device="cuda:0")
    fn, np_fn = ((xp.cumulative_sum, np.cumsum) if op == "sum" else
                 (xp.cumulative_prod, np.cumprod))
    # the reference in int64 (exact) or in the widest floating dtype of the kind
    ref_dtype = {"i": np.int64, "f": np.float64, "c": np.complex128}[h.dtype.kind]
    tol = dict(rtol=1e-4, atol=1e-3 * np.sqrt(shape[1]))
    got = _host(fn(x, axis=1))
    if h.dtype.kind == "i":
        np.testing.assert_array_equal(got, np_fn(h.astype(ref_dtype), axis=1))
    else:
        np.testing.assert_allclose(got, np_fn(h.astype(ref_dtype), axis=1), **tol)
    assert [k.aligned_rows for k in keys] == [aligned]
    # a strided view of the same rows is not flat: the segmented kernel reads it by elements
    keys.clear()
    got = _host(fn(x[:, ::2], axis=1))
    np.testing.assert_allclose(got, np_fn(h[:, ::2].astype(ref_dtype), axis=1), **tol)
    assert [k.aligned_rows for k in keys] == [0]
