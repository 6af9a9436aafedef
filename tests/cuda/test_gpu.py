"""CUDA runtime tests on a real GPU (skipped without one).

They test the backend through its primitives (arrayx/_backend.py), on random data (never zeros
alone), plus the namespace where that adds something (`x + y`, `to_device`).
"""

import numpy as np
import pytest

import arrayx._devices as _devices
from conftest import run_python

pytestmark = pytest.mark.skipif(_devices.cuda_device_count() == 0, reason="no CUDA GPU")

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128"]


@pytest.fixture(scope="module")
def P():
    from arrayx.cuda import primitives
    return primitives


@pytest.fixture(scope="module")
def dev():
    return _devices.cuda_device(0)


def rand(rng, dtype, shape):
    dt = np.dtype(dtype)
    if dt == bool:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dt)
    if dt.kind == "f":
        return (rng.standard_normal(shape) * 100).astype(dt)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)


# ---- transfers -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (33, 65), (3, 4, 5)])
def test_roundtrip(P, dev, rng, dtype, shape):
    h = rand(rng, dtype, shape)
    d = P.from_host(dev, h, True)
    assert d.shape == h.shape and d.dtype == h.dtype and d.device_index == 0
    back = P.to_host(d)
    np.testing.assert_array_equal(back, h)


def test_roundtrip_large_and_staged(P, dev, rng):
    from arrayx.cuda.engine import transfer
    h = rng.standard_normal(5_000_000).astype(np.float32)
    d = P.from_host(dev, h, True)
    np.testing.assert_array_equal(P.to_host(d), h)
    dev_rt = __import__("arrayx.cuda.engine.runtime", fromlist=["x"]).get_device(0)
    out = np.empty_like(h)
    transfer.h2d(dev_rt, d.ptr, h[::-1].copy().ctypes.data, h.nbytes, staged=True)
    transfer.d2h(dev_rt, out.ctypes.data, d.ptr, h.nbytes, staged=True)
    np.testing.assert_array_equal(out, h[::-1])


def test_noncontiguous_host_and_device(P, dev, rng):
    h = rand(rng, "float64", (20, 30))
    d = P.from_host(dev, h.T, True)  # non-contiguous host source
    np.testing.assert_array_equal(P.to_host(d), h.T)
    v = P.getitem(P.from_host(dev, h, True), (slice(1, None, 3), slice(None, None, -2)))
    np.testing.assert_array_equal(P.to_host(v), h[1::3, ::-2])


# ---- elementwise: add and friends ----------------------------------------------------------

@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
def test_add_contiguous_all_dtypes(P, dev, rng, dtype):
    for n in (1, 5, 1000, 4099):  # tails, single element, not a multiple of the vector
        a, b = rand(rng, dtype, n), rand(rng, dtype, n)
        r = P.binary("add", P.from_host(dev, a, True), P.from_host(dev, b, True), np.dtype(dtype))
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(P.to_host(r), a + b)


@pytest.mark.parametrize("dtype", ["float32", "int8", "complex128"])
def test_add_offset_views_unaligned(P, dev, rng, dtype):
    a, b = rand(rng, dtype, 1001), rand(rng, dtype, 1001)
    da, db = P.from_host(dev, a, True), P.from_host(dev, b, True)
    va = P.getitem(da, (slice(1, None),))  # x[1:]: unaligned for the vector path
    vb = P.getitem(db, (slice(None, -1),))
    r = P.binary("add", va, vb, np.dtype(dtype))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(P.to_host(r), a[1:] + b[:-1])
    # (64, 1) regression: offset views of a column
    c = rand(rng, dtype, (64, 1))
    dc = P.getitem(P.from_host(dev, c, True), (slice(1, None),))
    r2 = P.binary("add", dc, dc, np.dtype(dtype))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(P.to_host(r2), c[1:] + c[1:])


def test_add_broadcast_transposed_scalar(P, dev, rng):
    f32 = np.dtype("float32")
    a = rand(rng, "float32", (17, 33))
    b = rand(rng, "float32", (33,))
    da, db = P.from_host(dev, a, True), P.from_host(dev, b, True)
    np.testing.assert_array_equal(P.to_host(P.binary("add", da, db, f32)), a + b)
    t = P.permute_dims(da, (1, 0))
    np.testing.assert_array_equal(P.to_host(P.binary("add", t, t, f32)), a.T + a.T)
    np.testing.assert_array_equal(P.to_host(P.binary("add", da, 2.5, f32)), a + np.float32(2.5))
    np.testing.assert_array_equal(P.to_host(P.binary("add", 2.5, da, f32)), np.float32(2.5) + a)
    c3 = rand(rng, "float32", (4, 1, 6))
    d3 = rand(rng, "float32", (5, 1))
    r = P.binary("add", P.from_host(dev, c3, True), P.from_host(dev, d3, True), f32)
    np.testing.assert_array_equal(P.to_host(r), c3 + d3)


def test_mixed_dtypes_and_comparisons(P, dev, rng):
    a = rand(rng, "int32", 1000)
    b = rand(rng, "int64", 1000)
    da, db = P.from_host(dev, a, True), P.from_host(dev, b, True)
    np.testing.assert_array_equal(P.to_host(P.binary("add", da, db, np.dtype("int64"))), a + b)
    x, y = rand(rng, "float32", 999), rand(rng, "float32", 999)
    x[::7] = np.nan
    dx, dy = P.from_host(dev, x, True), P.from_host(dev, y, True)
    for name, f in [("less", np.less), ("equal", np.equal), ("not_equal", np.not_equal),
                    ("greater_equal", np.greater_equal)]:
        r = P.binary(name, dx, dy, np.dtype("float32"))
        assert r.dtype == np.dtype(bool)
        np.testing.assert_array_equal(P.to_host(r), f(x, y))
    p, q = rand(rng, "bool", 333), rand(rng, "bool", 333)
    r = P.binary("logical_xor", P.from_host(dev, p, True), P.from_host(dev, q, True), np.dtype(bool))
    np.testing.assert_array_equal(P.to_host(r), p ^ q)


def test_inplace_out(P, dev, rng):
    a, b = rand(rng, "float32", (8, 9)), rand(rng, "float32", (8, 9))
    da, db = P.from_host(dev, a, True), P.from_host(dev, b, True)
    v = P.getitem(da, (slice(None), slice(None, None, 2)))
    r = P.binary("add", v, P.getitem(db, (slice(None), slice(None, None, 2))), np.dtype("float32"), out=v)
    assert r is v
    exp = a.copy()
    exp[:, ::2] += b[:, ::2]
    np.testing.assert_array_equal(P.to_host(da), exp)


def test_elementwise_primitives_never_fall_back_to_the_host(P, dev, rng):
    from arrayx._registry import set_host_fallback
    f32 = np.dtype("float32")
    a = rand(rng, "float32", (10, 3))
    da = P.from_host(dev, a, True)
    set_host_fallback("error")
    try:
        np.testing.assert_allclose(P.to_host(P.binary("atan2", da, da, f32)), np.arctan2(a, a),
                                   rtol=1e-6)
        np.testing.assert_allclose(P.to_host(P.unary("exp", da)), np.exp(a), rtol=1e-6)
        cond = P.binary("less", da, 0.0, f32)
        np.testing.assert_array_equal(P.to_host(P.where(cond, da, 1.5, f32)),
                                      np.where(a < 0, a, np.float32(1.5)))
        np.testing.assert_array_equal(P.to_host(P.clip(da, -1.0, 2.0)), np.clip(a, -1, 2))
        np.testing.assert_array_equal(P.to_host(P.triangle(da, 0, True)), np.triu(a))
        np.testing.assert_array_equal(P.to_host(P.eye(dev, 4, 6, 1, f32)), np.eye(4, 6, 1))
        np.testing.assert_array_equal(P.to_host(P.arange(dev, 3, -2, 7, np.dtype("int16"))),
                                      np.arange(3, 3 - 14, -2, dtype=np.int16))
        got = P.to_host(P.linspace(dev, 0.0, 1.0, 11, f32, True, np.float64))
        np.testing.assert_array_equal(got, np.linspace(0.0, 1.0, 11, dtype=f32))
    finally:
        set_host_fallback("warn")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "complex64", "complex128"])
def test_offset_views_of_one_phase_stay_vectorised(P, dev, rng, dtype):
    """x[k:] + y[k:] on long arrays: an output at the same phase, a scalar head, a vector body."""
    dt = np.dtype(dtype)
    n = 100_003
    a, b = rand(rng, dtype, n), rand(rng, dtype, n)
    da, db = P.from_host(dev, a, True), P.from_host(dev, b, True)
    for k in (1, 2, 3):
        va, vb = P.getitem(da, (slice(k, None),)), P.getitem(db, (slice(k, None),))
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(P.to_host(P.binary("add", va, vb, dt)), a[k:] + b[k:])
            np.testing.assert_array_equal(P.to_host(P.binary("multiply", va, 3, dt)),
                                          a[k:] * dt.type(3))
    # different phases: the strided kernel
    r = P.binary("subtract", P.getitem(da, (slice(1, -1),)), P.getitem(db, (slice(2, None),)), dt)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(P.to_host(r), a[1:-1] - b[2:])


@pytest.mark.parametrize("dtype,to", [("bool", "bool"), ("int8", "bool"), ("int16", "int16"),
                                      ("uint16", "int64"), ("float32", "float32"),
                                      ("float32", "float64"), ("float64", "float32"),
                                      ("complex64", "complex64"), ("complex128", "complex128")])
@pytest.mark.parametrize("shape", [(1000, 777), (33, 65), (2, 3000), (256, 512), (320, 208)])
@pytest.mark.parametrize("view", ["plain", "offset", "reversed"])
def test_transposed_copy_and_cast_use_tiles(P, dev, rng, monkeypatch, dtype, to, shape, view):
    """x.T, x[1:, 1:].T and x[::-1].T made contiguous and cast: the transposing tile, with
    vectors where every input and output row starts on a vector boundary (sides multiples of
    the vector, not the offset view), else one element at a time; whole and partial tiles."""
    from arrayx.cuda.kernels import elementwise
    dt, to = np.dtype(dtype), np.dtype(to)
    a = rand(rng, dtype, shape)
    d = P.from_host(dev, a, True)
    if view == "offset":
        a, d = a[1:, 1:], P.getitem(d, (slice(1, None), slice(1, None)))
    elif view == "reversed":
        a, d = a[::-1], P.getitem(d, (slice(None, None, -1),))
    t = P.permute_dims(d, (1, 0))
    vectors = []
    design = elementwise.tile_design
    monkeypatch.setattr(elementwise.template, "tile_design",
                        lambda itemsize, vector: vectors.append(vector) or design(itemsize, vector))

    def expected(out_dt):
        v = elementwise.tile_vector(dt.itemsize, out_dt.itemsize)
        return [v if view != "offset" and shape[0] % v == shape[1] % v == 0 else 1]

    np.testing.assert_array_equal(P.to_host(P.copy(t)), a.T)
    np.testing.assert_array_equal(P.to_host(P.astype(t, to)), a.T.astype(to))
    if min(a.shape) > 1:  # else a vector, copied without a tile
        assert vectors == expected(dt) + expected(to)
    if dtype == "float32":
        np.testing.assert_allclose(P.to_host(P.unary("sqrt", t)), np.sqrt(np.abs(a.T)) *
                                   np.where(a.T < 0, np.nan, 1), rtol=1e-6)
        # a scalar operand beside the transposed one (the kernel names its locals around it)
        np.testing.assert_array_equal(P.to_host(P.binary("subtract", 3.0, t, dt)),
                                      np.float32(3.0) - a.T)


def test_inplace_with_overlapping_views_and_casts(P, dev, rng):
    f64 = np.dtype("float64")
    a = rand(rng, "float64", 1000)
    da = P.from_host(dev, a, True)
    P.binary("add", P.getitem(da, (slice(1, None),)), P.getitem(da, (slice(None, -1),)), f64,
             out=P.getitem(da, (slice(1, None),)))
    exp = a.copy()
    exp[1:] = a[1:] + a[:-1]
    np.testing.assert_array_equal(P.to_host(da), exp)
    b = rand(rng, "float32", 1000)
    P.binary("multiply", da, P.from_host(dev, b, True), f64, out=da)  # float64 *= float32
    np.testing.assert_array_equal(P.to_host(da), exp * b.astype(np.float64))


def test_many_dims_and_integer_edge_cases(P, dev, rng):
    a = rand(rng, "int32", (2, 3, 2, 3, 2, 3))
    da = P.from_host(dev, a, True)
    v = P.permute_dims(da, (5, 3, 1, 0, 2, 4))
    np.testing.assert_array_equal(P.to_host(P.binary("add", v, v, np.dtype("int32"))),
                                  a.transpose(5, 3, 1, 0, 2, 4) * 2)
    i8 = np.dtype("int8")
    x = P.from_host(dev, np.array([-128, 7, -7, 5, 0], np.int8), True)
    y = P.from_host(dev, np.array([-1, 0, 2, -3, 0], np.int8), True)
    assert P.to_host(P.binary("floor_divide", x, y, i8)).tolist() == [-128, 0, -4, -2, 0]
    assert P.to_host(P.binary("remainder", x, y, i8)).tolist() == [0, 0, 1, -1, 0]
    e = P.from_host(dev, np.array([-1, -2, 3, 8, 9], np.int8), True)
    assert P.to_host(P.binary("pow", x, e, i8)).tolist() == [0, 0, -87, -31, 0]
    assert P.to_host(P.binary("bitwise_left_shift", x, e, i8)).tolist() == [0, 0, -56, 0, 0]


# ---- creation, copies, casts, views, setitem -----------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_full_copy_astype(P, dev, rng, dtype):
    dt = np.dtype(dtype)
    v = rand(rng, dtype, ()).item()
    f = P.full(dev, (3, 70), v, dt)
    np.testing.assert_array_equal(P.to_host(f), np.full((3, 70), v, dt))
    h = rand(rng, dtype, (6, 10))
    d = P.from_host(dev, h, True)
    c = P.copy(P.permute_dims(d, (1, 0)))
    assert c.c_contig
    np.testing.assert_array_equal(P.to_host(c), h.T)
    if dt.kind != "c":
        g = P.astype(d, np.dtype("float64"), True)
        np.testing.assert_array_equal(P.to_host(g), h.astype(np.float64))
    assert P.astype(d, dt, False) is d


def test_views_are_metadata_only(P, dev, rng):
    h = rand(rng, "float32", (4, 6))
    d = P.from_host(dev, h, True)
    r = P.reshape(d, (6, 4), None)
    t = P.permute_dims(d, (1, 0))
    b = P.broadcast_to(P.getitem(d, (slice(0, 1),)), (5, 4, 6))
    s = P.getitem(d, (1, slice(2, None), None))
    for v in (r, t, b, s):
        assert v.buffer is d.buffer
    np.testing.assert_array_equal(P.to_host(r), h.reshape(6, 4))
    np.testing.assert_array_equal(P.to_host(t), h.T)
    np.testing.assert_array_equal(P.to_host(b), np.broadcast_to(h[0:1], (5, 4, 6)))
    np.testing.assert_array_equal(P.to_host(s), h[1, 2:, None])
    with pytest.raises(ValueError):
        P.reshape(t, (24,), False)
    np.testing.assert_array_equal(P.to_host(P.reshape(t, (24,), None)), h.T.reshape(24))


def test_setitem_basic_and_advanced(P, dev, rng):
    h = rand(rng, "int32", (5, 8))
    d = P.from_host(dev, h, True)
    P.setitem(d, (slice(None), 3), 77)
    h[:, 3] = 77
    v = rand(rng, "int32", (8,))
    P.setitem(d, (slice(1, 3),), P.from_host(dev, v, True))
    h[1:3] = v
    idx = P.from_host(dev, np.array([0, 4]), True)
    from arrayx._registry import set_host_fallback
    set_host_fallback("allow")
    try:
        P.setitem(d, (idx,), -5)
    finally:
        set_host_fallback("warn")
    h[[0, 4]] = -5
    np.testing.assert_array_equal(P.to_host(d), h)


# ---- allocator -----------------------------------------------------------------------------

def test_memory_returns_to_start_after_loop(P, dev, rng):
    import arrayx.cuda as xc
    xc.synchronize()
    start = xc.memory_stats()["active"]
    a = P.from_host(dev, rand(rng, "float32", 1000), True)
    x = a
    for _ in range(3000):
        x = P.binary("add", x, a, np.dtype("float32"))
    del x, a
    xc.synchronize()
    assert xc.memory_stats()["active"] == start


def test_oom_raises_and_library_keeps_working(P, dev, rng):
    import arrayx.cuda as xc
    with pytest.raises(MemoryError, match="cannot allocate"):
        P.empty(dev, (400 * 2**30,), np.dtype("uint8"))
    h = rand(rng, "float32", 100)
    r = P.binary("add", P.from_host(dev, h, True), P.from_host(dev, h, True), np.dtype("float32"))
    np.testing.assert_array_equal(P.to_host(r), h + h)
    assert xc.memory_stats()["active"] >= 0


def test_memory_limit_setting(P, dev):
    import arrayx.cuda as xc
    old = xc.set_memory_limit(64 << 20)
    try:
        with pytest.raises(MemoryError, match="memory limit"):
            P.empty(dev, (128 << 20,), np.dtype("uint8"))
        P.empty(dev, (1 << 20,), np.dtype("uint8"))
    finally:
        xc.set_memory_limit(old)


# ---- encoder -------------------------------------------------------------------------------

def test_encoder_keeps_temporaries_until_gpu_done(P, dev, rng):
    import arrayx.cuda as xc
    from arrayx.cuda.engine import runtime
    xc.synchronize()
    enc = runtime.get_device(0).stream.encoder
    a = P.from_host(dev, rand(rng, "float32", 1 << 22), True)
    tmp = P.binary("add", a, a, np.dtype("float32"))
    buf = tmp.buffer
    import weakref
    ref = weakref.ref(buf)
    r = P.binary("add", tmp, a, np.dtype("float32"))
    del tmp, buf
    assert ref() is not None  # the queued kernels still hold it
    xc.synchronize()
    assert ref() is None  # released once the GPU finished
    np.testing.assert_allclose(P.to_host(r), 3 * P.to_host(a), rtol=1e-6)
    assert enc.stats["batches"] > 0


def test_loops_of_copies_and_products_reuse_memory(P, dev, rng):
    """Copies and library calls are held like launches: their batches commit, and a loop of
    them without a sync recycles its buffers instead of allocating each from the driver."""
    import arrayx as xp
    from arrayx.cuda.engine import runtime
    alloc = runtime.get_device(0).allocator
    h = rand(rng, "float32", (64, 32, 32))
    a = xp.asarray(h, device="cuda:0")
    for make in (lambda: xp.asarray(a, copy=True), lambda: a @ a):
        make()
        runtime.synchronize()
        before = alloc.stats()["driver_allocations"]
        for _ in range(1000):
            r = make()
        assert alloc.stats()["driver_allocations"] - before < 300
    np.testing.assert_allclose(P.to_host(r._data), h @ h, rtol=1e-5, atol=1e-5)


def test_graph_mode_matches_direct(P, dev, rng):
    import arrayx.cuda as xc
    from arrayx.cuda.engine import tuning
    h = rand(rng, "float32", 5000)
    a = P.from_host(dev, h, True)
    old = tuning.SUBMIT_MODE
    got = {}
    try:
        for mode in ("direct", "graph"):
            xc.set_submit_mode(mode)
            x = a
            for _ in range(300):  # several batches: graph instantiation, then in-place updates
                x = P.binary("add", x, a, np.dtype("float32"))
            got[mode] = P.to_host(x)
    finally:
        xc.set_submit_mode(old)
    np.testing.assert_allclose(got["graph"], h * 301, rtol=1e-4)
    np.testing.assert_array_equal(got["graph"], got["direct"])


def test_user_stream(P, dev, rng):
    import arrayx.cuda as xc
    s = xc.Stream(0)
    h = rand(rng, "float64", 100)
    with s:
        d = P.from_host(dev, h, True)
        r = P.binary("add", d, d, np.dtype("float64"))
        assert xc.current_stream(0) is s
    s.synchronize()
    np.testing.assert_array_equal(P.to_host(r), 2 * h)


# ---- interop -------------------------------------------------------------------------------

def test_cuda_array_interface_and_dlpack_cupy(P, dev, rng):
    cp = pytest.importorskip("cupy")
    h = rand(rng, "float32", (30, 40))
    d = P.from_host(dev, h, True)
    c = cp.asarray(d)  # through __cuda_array_interface__
    np.testing.assert_array_equal(cp.asnumpy(c), h)
    c2 = cp.from_dlpack(P.permute_dims(d, (1, 0)))
    np.testing.assert_array_equal(cp.asnumpy(c2), h.T)
    src = cp.asarray(rand(rng, "complex64", (7, 9)))
    imp = P.from_dlpack(dev, src, None)
    assert imp.buffer.ptr == src.data.ptr  # no copy
    np.testing.assert_array_equal(P.to_host(imp), cp.asnumpy(src))
    del src
    np.testing.assert_array_equal(P.to_host(imp), P.to_host(imp))  # producer kept alive


def test_dlpack_torch(P, dev, rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    t = torch.arange(12, dtype=torch.int64, device="cuda").reshape(3, 4)[:, 1:]
    imp = P.from_dlpack(dev, t, None)
    assert imp.buffer.ptr == t.data_ptr()
    np.testing.assert_array_equal(P.to_host(imp), t.cpu().numpy())
    h = rand(rng, "float64", (5, 6))
    back = torch.from_dlpack(P.from_host(dev, h, True))
    np.testing.assert_array_equal(back.cpu().numpy(), h)
    bt = torch.from_dlpack(P.from_host(dev, rand(rng, "bool", 9), True))
    assert bt.dtype == torch.bool


JAX = """
import os, json
import numpy as np
import jax, jax.numpy as jnp
if not any(d.platform == "gpu" for d in jax.devices()):
    print(json.dumps({"skip": "jax has no GPU backend"})); raise SystemExit
import arrayx._devices as D
from arrayx.cuda import primitives as P
dev = D.cuda_device(0)
x = jnp.arange(24, dtype=jnp.float32).reshape(4, 6) * 1.5
imp = P.from_dlpack(dev, x, None)
same = imp.buffer.ptr == x.unsafe_buffer_pointer()
ok_in = bool(np.array_equal(P.to_host(imp), np.asarray(x)))
h = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float64)
y = jax.dlpack.from_dlpack(P.from_host(dev, h, True))
ok_out = bool(np.array_equal(np.asarray(y), h))
print(json.dumps({"no_copy": bool(same), "import_ok": ok_in, "export_ok": ok_out}))
"""


def test_dlpack_jax_subprocess():
    import json
    pytest.importorskip("jax")
    r = run_python("-c", JAX, timeout=300, XLA_PYTHON_CLIENT_PREALLOCATE="false",
                   JAX_ENABLE_X64="1")
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    if "skip" in res:
        pytest.skip(res["skip"])
    assert res == {"no_copy": True, "import_ok": True, "export_ok": True}


def test_namespace_roundtrip():
    import arrayx as xp
    rng = np.random.default_rng(1)
    h = rng.standard_normal(1000).astype(np.float32)
    x = xp.asarray(h, device="cuda:0")
    y = x + x
    np.testing.assert_array_equal(np.asarray(y.to_device("cpu")), h + h)
    assert float(xp.asarray(np.float32(2.5), device="cuda:0")) == 2.5


# ---- processes: kernel faults, kernel cache ------------------------------------------------

FAULT = """
import numpy as np
from arrayx.cuda.engine import compiler, runtime
from arrayx.cuda.engine.compiler import KernelSpec
src = "def bad_store(out, n):\\n    i = cuda.grid(1)\\n    if i < n:\\n        out[i] = 1.0\\n"
spec = KernelSpec("bad_store", src, "bad_store", ("float32*", "int64"))
k = compiler.get_kernel(spec, 0)
dev = runtime.get_device(0)
k(dev.stream, 4, 256, (8, 1024), ())
try:
    runtime.synchronize()
except runtime.CudaKernelError as e:
    print("RAISED", type(e).__name__, e)
"""


def test_kernel_fault_is_an_exception_not_an_abort():
    r = run_python("-c", FAULT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "RAISED CudaKernelError" in r.stdout and "bad_store" in r.stdout, r.stdout + r.stderr


SECOND = """
import time, json
import numpy as np
t0 = time.perf_counter()
from arrayx.cuda import primitives as P
from arrayx.cuda.engine import compiler, runtime
import arrayx._devices as D
dev = D.cuda_device(0)
runtime.get_device(0)
t1 = time.perf_counter()
a = P.from_host(dev, np.arange(1000, dtype=np.float32), True)
runtime.synchronize()
t2 = time.perf_counter()
r = P.binary("add", a, a, np.dtype("float32"))
runtime.synchronize()
t3 = time.perf_counter()
m = P.binary("multiply", a, a, np.dtype("float32"))
runtime.synchronize()
t4 = time.perf_counter()
import sys
print(json.dumps({"compiled": compiler.compile_count(), "init_s": t1 - t0,
                  "first_add_ms": (t3 - t2) * 1e3, "first_mul_ms": (t4 - t3) * 1e3,
                  "numba_imported": "numba" in sys.modules}))
"""


LIBRARIES_BESIDE = """
import json, threading
import arrayx as xp
from arrayx.cuda.libraries import cublas, cufft, cusolver
x = xp.asarray([1.0, 2.0], device="cuda:0")
print(json.dumps({"loaded": [lib._cdll is not None for lib in (cublas.library, cusolver.library,
                                                               cufft.library)],
                  "threads": [t.name for t in threading.enumerate()], "dot": float(x @ x)}))
"""


def test_first_device_loads_the_libraries_and_leaves_no_thread():
    import json
    r = run_python("-c", LIBRARIES_BESIDE, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["loaded"] == [True, True, True] and out["dot"] == 5.0
    assert out["threads"] == ["MainThread"], out


def test_second_process_compiles_nothing(tmp_path):
    import json
    # the kernels shipped in the package off: the first process must compile into the cache
    env = {"ARRAYX_KERNEL_CACHE": str(tmp_path), "ARRAYX_SHIPPED_KERNELS": "off"}
    r1 = run_python("-c", SECOND, timeout=300, **env)
    assert r1.returncode == 0, r1.stderr
    first = json.loads(r1.stdout.strip().splitlines()[-1])
    r2 = run_python("-c", SECOND, timeout=300, **env)
    assert r2.returncode == 0, r2.stderr
    second = json.loads(r2.stdout.strip().splitlines()[-1])
    assert first["compiled"] > 0
    assert second["compiled"] == 0 and not second["numba_imported"]
    assert second["first_add_ms"] < 20 and second["first_mul_ms"] < 20, second
