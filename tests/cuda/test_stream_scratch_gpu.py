"""Per-stream scratch on a real GPU (skipped without one): the persistent device scratch of the
kernel families (reduce's split counters and partials, scan's status areas) lives in the
stream's runtime.Stream.scratch. A new stream starts with scratch of its own (never the default
stream's, nor that of a destroyed stream whose handle the driver reused), it is freed with the
stream, and the wrappers of one foreign stream share one."""

import gc
import weakref

import numpy as np
import pytest

import arrayx as xp
import arrayx._devices as _devices

pytestmark = pytest.mark.skipif(_devices.cuda_device_count() == 0, reason="no CUDA GPU")

F32 = np.dtype("float32")


def _host(x):
    return np.asarray(x.to_device("cpu"))


def _check_sum_and_cumsum(h):
    """A split reduction (xp.sum of 2^24 float32) and a row scan of `h`, both on the current
    stream (the input is copied there too), against NumPy."""
    x = xp.asarray(h, device="cuda:0")
    assert abs(float(xp.sum(x)) - h.astype(np.float64).sum()) <= 1e-5 * np.abs(h).sum()
    np.testing.assert_allclose(_host(xp.cumulative_sum(x)), np.cumsum(h.astype(np.float64)),
                               rtol=1e-4, atol=1e-3 * np.sqrt(h.size))


def _scratch_keys():
    from arrayx.cuda.kernels import reduce, scan
    return reduce.SPLIT_SCRATCH, (scan.STATUS_SCRATCH, scan.status_words(F32))


def test_a_new_stream_has_scratch_of_its_own_freed_with_it(rng):
    import arrayx.cuda as xc
    from arrayx.cuda.engine import runtime
    split, status = _scratch_keys()
    h = rng.standard_normal(1 << 24, dtype=np.float32)
    _check_sum_and_cumsum(h)  # on the default stream, which now holds both scratches
    default = runtime.get_device(0).default_stream.scratch
    s = xc.Stream(0)
    assert not s.scratch
    with s:
        _check_sum_and_cumsum(h)
        _check_sum_and_cumsum(h)  # over the scratch the first call left
    s.synchronize()
    assert s.scratch[split] is not default[split]
    assert s.scratch[status] is not default[status]
    buffers = [weakref.ref(s.scratch[split].buffer), weakref.ref(s.scratch[status].array.buffer)]
    del s
    gc.collect()  # a stream and its encoder refer to each other
    assert all(b() is None for b in buffers)
    _check_sum_and_cumsum(h)  # the default stream's scratch still serves


def _sum_and_cumsum_through_two_wrappers(handle, h):
    import arrayx.cuda as xc
    first = xc.Stream.external(0, handle)
    second = xc.Stream.external(0, handle)
    assert second.scratch is first.scratch
    assert second.encoder is first.encoder  # so launches reach the stream in the queued order
    with first:
        _check_sum_and_cumsum(h)
    with second:
        _check_sum_and_cumsum(h)
    assert all(key in second.scratch for key in _scratch_keys())
    first.synchronize()


def test_wrappers_of_one_foreign_stream_share_its_scratch(rng):
    from arrayx.cuda.engine import runtime
    d = runtime.driver()
    runtime.get_device(0)
    handle = runtime.check(d.cuStreamCreate(d.CUstream_flags.CU_STREAM_NON_BLOCKING.value),
                           "cuStreamCreate")
    h = rng.standard_normal(1 << 24, dtype=np.float32)
    try:
        _sum_and_cumsum_through_two_wrappers(int(handle), h)
    finally:
        gc.collect()  # the wrappers go (waiting for their work) before the stream does
        d.cuStreamDestroy(handle)
