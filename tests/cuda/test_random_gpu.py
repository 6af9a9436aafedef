"""arrayx.random across devices. On a real GPU (skipped without one): the same seed and the same
calls give the same arrays on cuda as on cpu, bit for bit for bits, uniforms and integers,
within NORMAL_ULP units in the last place for normals (the devices' log/sin/cos round
differently: the float32 kernel's own log and sincos, libdevice's polynomials, are within 3 ulp
of exact Box-Muller, NumPy's float32 loops measured within 4.1 ulp), for sizes around the
block size and up to 2**20 + 3, over successive calls (offsets), and past 2**31 elements (the
64-bit index kernels). Run with -s to see the largest normal difference found.

Without a GPU: every kernel the family can launch compiles to sm_90 PTX with its vector store
and no local memory (but float64 normals: libdevice's sincos keeps its slow path's array
there). The kernels also run on numba's simulator against the CPU backend: random_sim.py, one
case a test in test_simulated_kernels.py.
"""

import numpy as np
import pytest

import arrayx as xp

CPU = xp.Device("cpu")
SIZES = (1, 3, 1000, 2**20 + 3)
NORMAL_ULP = 8
FLOATS = [("random", ()), ("uniform", (-2.0, 3.5)), ("standard_normal", ()), ("normal", (1.0, 0.5))]

gpu = pytest.mark.gpu


def _host(x):
    return np.asarray(x.to_device("cpu"))


@pytest.fixture
def no_fallback():
    xp.set_host_fallback("error")
    yield
    xp.set_host_fallback("warn")


def _pair(seed=2024):
    return xp.random.default_rng(seed), xp.random.default_rng(seed)


def _cuda():
    return xp.Device("cuda:0")


def _ulps(got, ref, loc=0.0):
    """|got - ref| in units in the last place of the larger of loc and the normal's deviation
    from it: loc + scale * z rounds to a place of those, so a result that cancels to near 0
    (loc = 1, z near -2) carries their absolute error, not its own magnitude's."""
    magnitude = np.maximum(np.abs(ref - loc), abs(loc)).astype(got.dtype)
    return np.abs(got.astype(np.float64) - ref) / np.spacing(magnitude)


@gpu
@pytest.mark.parametrize("dtype", [xp.float32, xp.float64])
@pytest.mark.parametrize("method, args", FLOATS)
def test_floats_equal_the_cpu_stream(no_fallback, method, args, dtype):
    on_cpu, on_gpu = _pair()
    worst = 0.0
    for n in SIZES:
        for _ in range(2):  # two calls: the second at a new offset
            ref = _host(getattr(on_cpu, method)(*args, size=n, dtype=dtype, device=CPU))
            got = _host(getattr(on_gpu, method)(*args, size=n, dtype=dtype, device=_cuda()))
            assert got.dtype == ref.dtype and got.shape == ref.shape
            if "normal" in method:
                ulps = _ulps(got, ref, args[0] if args else 0.0)
                worst = max(worst, float(ulps.max()))
                assert ulps.max() <= NORMAL_ULP, (n, ulps.max())
            else:
                np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8))
    assert on_cpu.state == on_gpu.state
    if "normal" in method:
        print(f"\n{method} {dtype}: largest cuda - cpu difference {worst:.2f} ulp")


@gpu
@pytest.mark.parametrize("low, high, dtype", [
    (0, 256, xp.uint8), (-128, 128, xp.int8), (-5, 11, xp.int16), (0, 2**32, xp.uint32),
    (-(2**31), 2**31, xp.int32), (7, 10**6, xp.int64), (3, 2**32 + 5, xp.int64),
    (-(2**63), 2**63, xp.int64), (0, 2**64, xp.uint64), (2**63, 2**64 - 3, xp.uint64)])
def test_integers_equal_the_cpu_stream(no_fallback, low, high, dtype):
    on_cpu, on_gpu = _pair(77)
    for n in SIZES:
        for _ in range(2):
            ref = _host(on_cpu.integers(low, high, n, dtype=dtype, device=CPU))
            got = _host(on_gpu.integers(low, high, n, dtype=dtype, device=_cuda()))
            np.testing.assert_array_equal(got, ref)
            assert got.dtype == ref.dtype


@gpu
@pytest.mark.parametrize("dtype", [xp.uint32, xp.uint64])
def test_bits_equal_the_cpu_stream(no_fallback, dtype):
    on_cpu, on_gpu = _pair(0)
    first = _host(on_gpu._draw("bits", (4,), xp.uint32, "bits", (), _cuda()))
    assert [int(w) for w in first] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]  # KAT
    on_gpu = xp.random.default_rng(0)
    for n in SIZES:
        ref = _host(on_cpu._draw("bits", (n,), dtype, "bits", (), CPU))
        got = _host(on_gpu._draw("bits", (n,), dtype, "bits", (), _cuda()))
        np.testing.assert_array_equal(got, ref)


@gpu
def test_permutations_and_choices_equal_the_cpu_ones(no_fallback):
    on_cpu, on_gpu = _pair(5)
    for n in (1, 2, 1000, 2**20 + 3):
        np.testing.assert_array_equal(_host(on_gpu.permutation(n, device=_cuda())),
                                      _host(on_cpu.permutation(n, device=CPU)))
    data = np.arange(3000.0).reshape(1000, 3)
    x_gpu, x_cpu = xp.asarray(data, device=_cuda()), xp.asarray(data.copy(), device=CPU)
    on_gpu.shuffle(x_gpu)
    on_cpu.shuffle(x_cpu)
    np.testing.assert_array_equal(_host(x_gpu), _host(x_cpu))
    np.testing.assert_array_equal(_host(on_gpu.permutation(x_gpu, axis=1)),
                                  _host(on_cpu.permutation(x_cpu, axis=1)))
    for kwargs in ({}, {"replace": False}, {"replace": False, "shuffle": False}):
        np.testing.assert_array_equal(_host(on_gpu.choice(5000, (20, 7), device=_cuda(), **kwargs)),
                                      _host(on_cpu.choice(5000, (20, 7), device=CPU, **kwargs)))
    a = np.arange(10.0) * 3
    np.testing.assert_array_equal(_host(on_gpu.choice(xp.asarray(a, device=_cuda()), 50)),
                                  _host(on_cpu.choice(xp.asarray(a, device=CPU), 50)))


@gpu
def test_choice_with_probabilities_on_the_gpu(no_fallback):
    """p on the device: the sample follows p (equality with the cpu is not promised: the
    cumulative sum and the -log(u) / p keys round by device)."""
    g = xp.random.default_rng(9)
    p = np.array([0.5, 0.0, 0.25, 0.25])
    s = _host(g.choice(4, 100_000, p=xp.asarray(p, device=_cuda())))
    counts = np.bincount(s, minlength=4)
    assert counts[1] == 0 and abs(counts[0] / 1e5 - 0.5) < 0.01
    w = _host(g.choice(4, 3, replace=False, p=xp.asarray(p, device=_cuda())))
    assert sorted(w.tolist()) == [0, 2, 3]


@gpu
def test_past_2_to_the_31_elements_the_64_bit_kernel_continues_the_stream(no_fallback):
    """uint8 integers of 2**31 + 5 elements (the 64-bit index kernel: counter blocks past 2**30):
    the first and last elements equal the CPU backend's values of those blocks."""
    from arrayx.cpu import random as cpu_random
    n = 2**31 + 5
    g = xp.random.default_rng(123)
    got = g.integers(0, 251, n, dtype=xp.uint8, device=_cuda())
    ends = np.concatenate([_host(got[:1000]), _host(got[-1001:])])
    blocks = np.concatenate([np.arange(500), np.arange((n - 1001) // 2, -(-n // 2))])
    blocks = blocks.astype(np.uint64)
    words = cpu_random.philox4x32_10(blocks, 0, 123)
    values = cpu_random._block_values("integers", np.dtype("uint8"), 2, words, (0, 251))
    tail = values[1000:][(n - 1001) % 2:][:1001]
    np.testing.assert_array_equal(ends, np.concatenate([values[:1000], tail]))
    del got


# --- without a GPU ------------------------------------------------------------------------

def _ptx(spec):
    pytest.importorskip("numba.cuda")
    from arrayx.cuda.engine import compiler
    try:
        return compiler.compile_spec(spec, (9, 0), debug=False)
    except Exception as e:  # NVVM missing on this machine
        if "NVVM" in str(e) or "libnvvm" in str(e).lower():
            pytest.skip(f"NVVM unavailable: {e}")
        raise


def _precompiled():
    from arrayx.cuda.kernels import random
    return [pytest.param(spec, id=spec.name) for spec in random.precompile_specs()]


@pytest.mark.parametrize("spec", _precompiled())
def test_kernels_compile_with_vector_stores(spec):
    ptx = _ptx(spec)
    stores = {line.split()[0] for line in ptx.splitlines()
              if line.strip().startswith("st.global")}
    name = spec.name
    wide = ("float32" in name or "float64" in name or "bits" in name or "int64" in name)
    if wide:  # whole blocks are one 16-byte store
        assert any(s.startswith(("st.global.v4", "st.global.v2.f64", "st.global.v2.u64"))
                   for s in stores), stores
    assert sum(1 for line in ptx.splitlines() if "mul.wide.u32" in line) >= 20  # the rounds
    assert "fma" not in ptx.split(".entry")[1] or "normal" in name  # no contracted affine maps
    if "normal" not in name or "float32" in name:
        assert ".local" not in ptx
