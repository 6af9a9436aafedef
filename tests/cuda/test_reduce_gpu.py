"""Split reductions on a real GPU (skipped without one): the one-launch kernels whose last block
folds the partials of the others (arrayx/cuda/kernels/reduce/). A broken fold shows as a wrong
value, a result that depends on which block finished last, or a counter left non-zero (the next
split reduction on the stream then folds too early or never). The moments (var, std, nanvar,
nanstd): one launch a call on every layout, and their accuracy on 10^8 elements with a large
mean beside NumPy's two passes; their kernels' PTX for sm_90 (no GPU needed)."""

import warnings

import numpy as np
import pytest

import arrayx as xp
import arrayx._devices as _devices

gpu = pytest.mark.skipif(_devices.cuda_device_count() == 0, reason="no CUDA GPU")


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


@gpu
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


@gpu
def test_repeated_split_reductions_reset_their_counters(rng):
    """Many launches on one stream (graph-captured batches included) with no sync between."""
    h = rng.standard_normal((1 << 22) + 13, dtype=np.float32)
    x = _dev(h)
    expected = h.astype(np.float64).sum()
    results = [xp.sum(x) for _ in range(300)]
    values = np.array([float(r) for r in results])
    assert np.all(values == values[0])  # deterministic, whichever block came last
    assert abs(values[0] - expected) <= 1e-5 * np.abs(h).sum()


@gpu
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


@gpu
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


@gpu
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


@gpu
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


@gpu
def test_split_reductions_on_a_user_stream(rng):
    import arrayx.cuda as xc
    h = rng.standard_normal(1 << 23, dtype=np.float32)
    x = _dev(h)
    s = xc.Stream(0)
    # streams are not ordered with each other (as in PyTorch and CuPy): the upload, queued on the
    # default stream, must be waited for by the stream that reads x
    s.wait_stream(xc.current_stream(0))
    with s:
        results = [xp.sum(x) for _ in range(20)] + [xp.argmax(x) for _ in range(20)]
    s.synchronize()
    expected = h.astype(np.float64).sum()
    for r in results[:20]:
        assert abs(float(r) - expected) <= 1e-5 * np.abs(h).sum()
    assert all(int(r) == int(np.argmax(h)) for r in results[20:])


# ---- the moments: var, std, nanvar, nanstd --------------------------------------------------

def _launches(fn):
    """(fn()'s result, the kernels it launched on cuda:0's stream), after a warm-up call (kernels
    loaded, the split scratch made)."""
    from arrayx.cuda.engine import runtime
    encoder = runtime.get_device(0).stream.encoder
    fn()
    encoder.commit()
    before = encoder.stats["launches"]
    out = fn()
    encoder.commit()
    return out, encoder.stats["launches"] - before


def _moments_ref(name, h, axis, correction):
    fn = getattr(np, name)
    with np.errstate(all="ignore"):
        return fn(h.astype(np.float64), axis=axis, ddof=correction)


# (shape, view, axis): long rows (split), the benchmark's rows and columns, the all-reduce, few
# long rows, small columns (mean + std of 1000 x 16), offset and reversed and transposed views
_LAYOUTS = [((4096, 4096), lambda a: a, -1), ((4096, 4096), lambda a: a, 0),
            ((1 << 24,), lambda a: a, None), ((3, 1_000_003), lambda a: a[:, 3:], 1),
            ((1000, 16), lambda a: a, 0), ((1000, 16), lambda a: a, 1),
            ((2048, 3000), lambda a: a[::-1, 1:], (0, 1)), ((3000, 512), lambda a: a.T, 1),
            ((64, 80, 90), lambda a: a[:, ::2], (0, 2))]


@gpu
@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, view, axis", _LAYOUTS)
def test_moments_are_one_launch_on_every_layout(rng, name, dtype, shape, view, axis):
    h = (1e4 + 3 * rng.standard_normal(shape)).astype(dtype)
    x = view(_dev(h))
    for correction in (0, 1):
        got, launches = _launches(lambda: getattr(xp, name)(x, axis=axis, correction=correction))
        assert launches == 1
        ref = _moments_ref(name, view(h), axis, correction)
        rtol = 3e-7 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(_host(got).astype(np.float64), ref, rtol=rtol)


@gpu
def test_nan_moments_and_integer_moments_are_one_launch(rng):
    h = rng.standard_normal((2000, 300)).astype(np.float32)
    h[rng.random(h.shape) < 0.1] = np.nan
    h[:, 7] = np.nan  # an all-NaN column: NaN
    x = _dev(h)
    for name, axis in (("nanvar", 0), ("nanstd", 1), ("nanvar", None)):
        got, launches = _launches(lambda: getattr(xp, name)(x, axis=axis, ddof=1))
        assert launches == 1
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = getattr(np, name)(h.astype(np.float64), axis=axis, ddof=1)
        np.testing.assert_allclose(_host(got), ref, rtol=3e-7)
    i = rng.integers(-10**9, 10**9, (500, 700)).astype(np.int64)
    xi = _dev(i)  # outside the count: the upload is a copy of its own
    got, launches = _launches(lambda: xp.std(xi, axis=1))
    assert launches == 1  # read as float64 in the kernel: no cast first
    np.testing.assert_allclose(_host(got), np.std(i.astype(np.float64), axis=1), rtol=1e-12)


@gpu
def test_var_of_1e8_float32_with_a_large_mean_is_as_accurate_as_numpys_two_passes(rng):
    h = 1e4 + rng.standard_normal(10**8, dtype=np.float32)
    ref = np.var(h.astype(np.float64))
    numpy_error = abs(float(np.var(h)) - ref) / ref
    x = _dev(h)
    error = abs(float(xp.var(x)) - ref) / ref
    # at most the rounding of a float32 result (2 ulp) or NumPy's own float32 error
    assert error <= max(2.4e-7, numpy_error), (error, numpy_error)
    assert abs(float(xp.std(x)) - np.sqrt(ref)) <= 2.4e-7 * np.sqrt(ref)
    rows = h.reshape(10**4, 10**4)
    xr = xp.reshape(x, (10**4, 10**4))
    for axis in (0, 1):
        ref_rows = np.var(rows.astype(np.float64), axis=axis)
        np.testing.assert_allclose(_host(xp.var(xr, axis=axis)).astype(np.float64), ref_rows,
                                   rtol=2.4e-7)
    h64 = 1e8 + 1e-3 * rng.standard_normal(10**7)
    ref64 = np.var(h64 - h64[0])  # the shifted data's variance: exact here to float64 rounding
    assert abs(float(xp.var(_dev(h64))) - ref64) <= 1e-12 * ref64


def _moment_specs():
    """A kernel of each moment, layout and accumulator form: float32 split rows and columns,
    float64 columns, complex64 and int32 input, the general layout."""
    from arrayx.cuda.kernels.reduce.reduction import Reduction
    from arrayx.cuda.kernels.reduce.source import column_spec, group_spec
    f32, f64 = np.dtype("float32"), np.dtype("float64")
    c64, i32 = np.dtype("complex64"), np.dtype("int32")
    yield "var-f32-contig-split", group_spec(Reduction("var", f32, f32), "contig", 256, 4, True,
                                             1, 0, True, 32)
    yield "std-f32-column-split", column_spec(Reduction("std", f32, f32), 4, True, True)
    yield "nanstd-f64-column", column_spec(Reduction("nanstd", f64, f64), 2, True, False)
    yield "var-complex64-rows", group_spec(Reduction("var", c64, f32), "contig", 32, 2, True, 1,
                                           0, False, 32)
    yield "std-int32-general-split", group_spec(Reduction("std", i32, f64), "general", 256, 1,
                                                False, 3, 3, True, 64)


@pytest.mark.parametrize("name, spec", list(_moment_specs()),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_moment_kernels_compile_for_sm90_without_local_memory(name, spec):
    pytest.importorskip("numba.cuda")
    from test_ptx import _ptx  # compiles for sm_90, skips where NVVM is missing

    from arrayx.cuda.kernels.reduce.tuning import BLOCK, LOAD_HINT, MOMENTS_BLOCKS_PER_SM
    ptx = _ptx(spec)
    assert ".local" not in ptx and "trap" not in ptx
    # registers capped so that the wave split_count plans for fits
    assert spec.launch_bounds == (BLOCK, MOMENTS_BLOCKS_PER_SM)
    assert f".minnctapersm {MOMENTS_BLOCKS_PER_SM}" in ptx
    if name == "var-f32-contig-split":
        assert f"ld.global{LOAD_HINT}.v4.{'u32' if LOAD_HINT else 'f32'}" in ptx
    if name.endswith("-split"):
        assert "atom.global.add.u32" in ptx and "ld.global.cg" in ptx
    if name.startswith(("std", "nanstd")):
        assert "sqrt.rn.f64" in ptx
