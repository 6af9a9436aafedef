"""arrayx.random on the default device: the Philox4x32-10 stream against the Random123
known-answer vectors and a pure-Python reference, determinism, distributions (moments and
chi-square tests with fixed seeds), integer bounds, sampling, permutations and bad input.

The cross-device guarantee (cuda == cpu bit for bit) is tests/cuda/test_random_gpu.py's; the
reference checks here run on whatever the default device is, so on cuda they test the kernels.
"""

import math

import numpy as np
import pytest

import arrayx as xp
from arrayx.cpu import random as cpu_random
from conftest import DEVICE, assert_array_equal, to_numpy

M32 = 0xFFFFFFFF

# (counter words, key words, output words): the Random123 known-answer tests of Philox4x32-10
KAT = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
       ((M32,) * 4, (M32, M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
       ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]


def philox_reference(ctr, key):
    """Philox4x32-10 on Python ints, written from the paper's definition."""
    x0, x1, x2, x3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * x0, 0xCD9E8D57 * x2
        x0, x1, x2, x3 = (p1 >> 32) ^ x1 ^ k0, p1 & M32, (p0 >> 32) ^ x3 ^ k1, p0 & M32
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return x0, x1, x2, x3


def reference_words(key, offset, blocks):
    return [philox_reference((b & M32, b >> 32, offset & M32, offset >> 32),
                             (key & M32, key >> 32)) for b in blocks]


def reference_draws(key, offset, n):
    """The stream's first n 64-bit draws (two per block)."""
    draws = []
    for x0, x1, x2, x3 in reference_words(key, offset, range(-(-n // 2))):
        draws += [x0 | x1 << 32, x2 | x3 << 32]
    return draws[:n]


@pytest.mark.parametrize("ctr, key, expected", KAT)
def test_reference_philox_matches_random123(ctr, key, expected):
    assert philox_reference(ctr, key) == expected


@pytest.mark.parametrize("ctr, key, expected", KAT)
def test_cpu_backend_philox_matches_random123(ctr, key, expected):
    blocks = np.array([ctr[0] | ctr[1] << 32], np.uint64)
    words = cpu_random.philox4x32_10(blocks, ctr[2] | ctr[3] << 32, key[0] | key[1] << 32)
    assert tuple(int(w[0]) for w in words) == expected


def test_cpu_backend_philox_matches_the_reference_on_random_counters():
    rng = np.random.default_rng(7)
    blocks = rng.integers(0, 2**64, 200, dtype=np.uint64, endpoint=False)
    for key, offset in ((0, 0), (2**64 - 1, 2**64 - 1), (0x123456789ABCDEF0, 987654321)):
        words = cpu_random.philox4x32_10(blocks, offset, key)
        expected = reference_words(key, offset, [int(b) for b in blocks])
        assert [tuple(int(w[i]) for w in words) for i in range(len(blocks))] == expected


def _bits(rng, n, dtype=xp.uint64):
    return rng._draw("bits", (n,), dtype, "bits", (), None)


def test_seed_zero_starts_with_the_known_answer():
    """Seed 0 is key 0 and the first call counter block 0 at offset 0: the first KAT vector."""
    words = to_numpy(_bits(xp.random.default_rng(0), 4, xp.uint32))
    assert tuple(int(w) for w in words) == KAT[0][2]
    draws = to_numpy(_bits(xp.random.default_rng(0), 2))
    assert [int(d) for d in draws] == [0xE169C58D6627E8D5, 0x9B00DBD8BC57AC4C]


@pytest.mark.parametrize("n", [1, 3, 4, 5, 1000, 4099])
def test_streams_match_the_reference(n):
    """random, integers and bits on the default device equal the pure-Python stream, after an
    earlier call moved the offset."""
    key = 0x299F31D0A4093822
    rng = xp.random.default_rng(key)
    _bits(rng, 7)  # 4 blocks: the next call starts at offset 4
    offset = 4
    got = to_numpy(rng.random(n))
    draws = reference_draws(key, offset, n)
    assert_array_equal(rng.random(0), np.zeros(0))
    np.testing.assert_array_equal(got, np.array([(d >> 11) * 2.0**-53 for d in draws]))
    offset += -(-n // 2)
    got = to_numpy(rng.random(n, dtype=xp.float32))
    words = [w for block in reference_words(key, offset, range(-(-n // 4))) for w in block][:n]
    np.testing.assert_array_equal(got, np.array([(w >> 8) * 2.0**-24 for w in words], np.float32))
    offset += -(-n // 4)
    got = to_numpy(rng.integers(-1000, 2**40, n))
    draws = reference_draws(key, offset, n)
    r = 2**40 + 1000
    np.testing.assert_array_equal(got, np.array([-1000 + (d * r >> 64) for d in draws]))
    offset += -(-n // 2)
    got = to_numpy(rng.integers(5, 17, n, dtype=xp.uint8))
    draws = reference_draws(key, offset, n)
    np.testing.assert_array_equal(got, np.array([5 + (d * 12 >> 64) for d in draws], np.uint8))
    assert rng.state == {"key": key, "offset": offset + -(-n // 2)}


@pytest.mark.parametrize("distribution, dtype, params", [
    ("bits", "uint32", ()), ("bits", "uint64", ()), ("random", "float32", ()),
    ("uniform", "float64", (-2.5, 7.25)), ("standard_normal", "float32", ()),
    ("normal", "float64", (1.5, 0.1)), ("integers", "int16", (-5, 11)),
    ("integers", "uint64", (2**63, 2**63 - 7))])
def test_cpu_backend_chunks_do_not_change_the_stream(monkeypatch, distribution, dtype, params):
    """The CPU backend draws its counter blocks a chunk at a time: chunks of 3 blocks (every
    size below ends inside a chunk or on its boundary) give the arrays of one chunk."""
    dtype = np.dtype(dtype)
    key, offset = 0x299F31D0A4093822, 2**64 - 5  # both offset words nonzero
    whole = {n: cpu_random.random(None, (n,), dtype, distribution, key, offset, params)
             for n in (0, 1, 11, 12, 13, 25)}
    monkeypatch.setattr(cpu_random, "CHUNK_BLOCKS", 3)
    for n, ref in whole.items():
        got = cpu_random.random(None, (n,), dtype, distribution, key, offset, params)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8))


def test_same_seed_same_stream_and_state_restores():
    a, b = xp.random.default_rng(1234), xp.random.default_rng(1234)
    for rng_calls in range(2):
        for g in (a, b):
            assert g.state["offset"] == [0, 250 + 14][rng_calls]  # 1000 / 4 + 27 / 2 blocks
        xa = to_numpy(a.standard_normal(1000, dtype=xp.float32))
        xb = to_numpy(b.standard_normal(1000, dtype=xp.float32))
        np.testing.assert_array_equal(xa, xb)
        np.testing.assert_array_equal(to_numpy(a.integers(0, 10, 27)),
                                      to_numpy(b.integers(0, 10, 27)))
    saved = a.state
    first = to_numpy(a.random((3, 4)))
    a.state = saved
    np.testing.assert_array_equal(to_numpy(a.random((3, 4))), first)
    assert not np.array_equal(to_numpy(xp.random.default_rng(1235).random(8)),
                              to_numpy(xp.random.default_rng(1234).random(8)))


def test_successive_calls_differ_and_are_not_one_longer_call():
    g = xp.random.default_rng(5)
    a, b = to_numpy(g.random(100)), to_numpy(g.random(100))
    assert not np.array_equal(a, b)
    whole = to_numpy(xp.random.default_rng(5).random(200))
    np.testing.assert_array_equal(whole[:100], a)  # the first call is a prefix
    assert not np.array_equal(whole[100:], b)  # the second call is a new offset, documented


def test_seeds_big_ints_sequences_and_none():
    assert xp.random.default_rng(2**64 - 1).state["key"] == 2**64 - 1
    keys = {xp.random.default_rng(s).state["key"] for s in (2**64, [1], [1, 2], (1, 2, 3), [0])}
    assert len(keys) == 5
    assert xp.random.default_rng([1, 2]).state == xp.random.default_rng((1, 2)).state
    assert xp.random.default_rng(np.array([1, 2])).state == xp.random.default_rng([1, 2]).state
    assert xp.random.default_rng(None).state["key"] != xp.random.default_rng(None).state["key"]
    g = xp.random.default_rng(3)
    assert xp.random.default_rng(g) is g
    assert xp.random.Generator(np.int64(3)).state == g.state


def test_spawn_gives_new_independent_children_deterministically():
    parent = xp.random.default_rng(11)
    kids = parent.spawn(3)
    more = parent.spawn(2)
    keys = [k.state["key"] for k in kids + more] + [parent.state["key"]]
    assert len(set(keys)) == 6
    again = xp.random.default_rng(11).spawn(5)
    assert [k.state["key"] for k in again] == keys[:5]
    assert all(k.state["offset"] == 0 for k in kids)
    assert parent.state["offset"] == 0
    samples = [to_numpy(k.random(1000)) for k in kids]
    assert abs(np.corrcoef(samples[0], samples[1])[0, 1]) < 0.15


# --- shapes and dtypes --------------------------------------------------------------------

@pytest.mark.parametrize("method, args", [("random", ()), ("uniform", (2.0, 3.0)),
                                          ("standard_normal", ()), ("normal", (1.0, 2.0))])
@pytest.mark.parametrize("dtype", [xp.float32, xp.float64])
def test_float_methods_shapes_dtypes_device(method, args, dtype):
    g = xp.random.default_rng(0)
    fn = getattr(g, method)
    scalar = fn(*args, dtype=dtype)
    assert scalar.shape == () and scalar.dtype == dtype and scalar.device == DEVICE
    for size, shape in ((None, ()), ((), ()), (0, (0,)), ((2, 0, 3), (2, 0, 3)), (7, (7,)),
                        ((3, 5), (3, 5)), ([2, 2], (2, 2))):
        out = fn(*args, size=size, dtype=dtype)
        assert out.shape == shape and out.dtype == dtype
        assert np.all(np.isfinite(to_numpy(out)))
    cpu = fn(*args, size=4, dtype=dtype, device="cpu")
    assert cpu.device == xp.Device("cpu")


def test_size_zero_draws_nothing():
    g = xp.random.default_rng(0)
    g.random(0)
    g.integers(0, 5, (3, 0))
    assert g.state["offset"] == 0


def test_uniform_bounds_and_reversed_bounds():
    g = xp.random.default_rng(8)
    for dtype in (xp.float32, xp.float64):
        u = to_numpy(g.uniform(-3.0, 5.0, 100_000, dtype=dtype))
        assert u.min() >= -3.0 and u.max() < 5.0
        r = to_numpy(g.random(100_000, dtype=dtype))
        assert r.min() >= 0.0 and r.max() < 1.0
        v = to_numpy(g.uniform(5, 3, 1000, dtype=dtype))  # NumPy's reversed bounds: (3, 5]
        assert v.min() > 3.0 and v.max() <= 5.0


@pytest.mark.parametrize("dtype", [xp.float32, xp.float64])
def test_moments(dtype):
    g = xp.random.default_rng(20240601)
    n = 1 << 20
    tol = 6 / math.sqrt(n)  # six standard errors (of a unit-variance mean)
    u = to_numpy(g.random(n, dtype=dtype)).astype(np.float64)
    assert abs(u.mean() - 0.5) < tol * math.sqrt(1 / 12)
    assert abs(u.var() - 1 / 12) < tol * math.sqrt(1 / 180)
    z = to_numpy(g.standard_normal(n, dtype=dtype)).astype(np.float64)
    assert abs(z.mean()) < tol and abs(z.var() - 1) < tol * math.sqrt(2)
    assert abs(np.mean(z**3)) < tol * math.sqrt(15) and abs(np.mean(z**4) - 3) < tol * math.sqrt(96)
    y = to_numpy(g.normal(-2.0, 3.0, n, dtype=dtype)).astype(np.float64)
    assert abs(y.mean() + 2) < 3 * tol and abs(y.std() - 3) < 3 * tol
    w = to_numpy(g.uniform(10.0, 14.0, n, dtype=dtype)).astype(np.float64)
    assert abs(w.mean() - 12) < 4 * tol * math.sqrt(1 / 12)


def _chi_square(counts, expected):
    counts = np.asarray(counts, np.float64)
    return float(np.sum((counts - expected) ** 2 / expected))


def _chi_square_limit(df):
    """Six standard deviations above the chi-square mean: a correct generator stays under."""
    return df + 6 * math.sqrt(2 * df)


@pytest.mark.parametrize("dtype", [xp.float32, xp.float64])
def test_chi_square_uniformity(dtype):
    g = xp.random.default_rng(99)
    n, bins = 1 << 21, 1024
    u = to_numpy(g.random(n, dtype=dtype))
    counts = np.bincount((u * bins).astype(np.int64), minlength=bins)
    assert counts.size == bins
    assert _chi_square(counts, n / bins) < _chi_square_limit(bins - 1)
    # the low bits too: the last 8 of the 24 / 53 mantissa bits a uniform carries
    bits = 24 if dtype == xp.float32 else 53
    low = (u * 2.0**bits).astype(np.int64) & 255
    assert _chi_square(np.bincount(low, minlength=256), n / 256) < _chi_square_limit(255)


def test_chi_square_normal_and_integers():
    g = xp.random.default_rng(4321)
    n = 1 << 20
    z = to_numpy(g.standard_normal(n, dtype=xp.float32)).astype(np.float64)
    edges = np.linspace(-4, 4, 65)
    cdf = np.array([0.5 * (1 + math.erf(e / math.sqrt(2))) for e in edges])
    counts, _ = np.histogram(z, edges)
    assert _chi_square(counts, n * np.diff(cdf)) < _chi_square_limit(63)
    k = to_numpy(g.integers(0, 97, n, dtype=xp.int16))
    assert _chi_square(np.bincount(k, minlength=97), n / 97) < _chi_square_limit(96)
    big = to_numpy(g.integers(0, 3 * 2**60, n, dtype=xp.uint64)) // 2**60
    assert _chi_square(np.bincount(big.astype(np.int64), minlength=3), n / 3) < _chi_square_limit(2)


def test_float32_normals_within_a_few_ulp_of_exact_box_muller():
    """The CPU's (and the default device's) float32 normals against Box-Muller evaluated in
    float64 from the same uniforms and the same rounded angle."""
    n = 1 << 18
    g = xp.random.default_rng(77)
    z = to_numpy(g.standard_normal(n, dtype=xp.float32)).astype(np.float64)
    words = cpu_random.philox4x32_10(np.arange(n // 4, dtype=np.uint64), 0, 77)
    u = [((w >> np.uint64(8)) + np.uint64(1)).astype(np.float64) * 2.0**-24 for w in words]
    ref = []
    for a, b in ((u[0], u[1]), (u[2], u[3])):
        t = (np.float32(2 * np.pi) * b.astype(np.float32)).astype(np.float64)
        r = np.sqrt(-2 * np.log(a))
        ref += [r * np.cos(t), r * np.sin(t)]
    ref = np.stack(ref, -1).reshape(-1)
    ulps = np.abs(z - ref) / np.spacing(np.abs(ref).astype(np.float32))
    assert ulps.max() <= 5, ulps.max()


def test_float64_normals_within_a_few_ulp_of_long_double_box_muller():
    n = 1 << 16
    g = xp.random.default_rng(78)
    z = to_numpy(g.standard_normal(n))
    draws = np.array(reference_draws(78, 0, n), dtype=np.uint64)
    u = ((draws >> np.uint64(11)) + np.uint64(1)).astype(np.longdouble) * np.longdouble(2.0**-53)
    t = (2 * np.pi * u[1::2].astype(np.float64)).astype(np.longdouble)
    r = np.sqrt(-2 * np.log(u[0::2]))
    ref = np.stack([r * np.cos(t), r * np.sin(t)], -1).reshape(-1)
    ulps = np.abs(z.astype(np.longdouble) - ref) / np.spacing(np.abs(ref).astype(np.float64))
    assert float(ulps.max()) <= 5, float(ulps.max())


# --- integers -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8, xp.uint16,
                                   xp.uint32, xp.uint64])
def test_integers_full_range_and_extremes(dtype):
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    g = xp.random.default_rng(31)
    full = to_numpy(g.integers(lo, hi, 20000, dtype=dtype, endpoint=True))
    assert full.dtype == dtype and full.min() >= lo and full.max() <= hi
    if info.bits <= 8:  # every value of the range turns up
        assert full.min() == lo and full.max() == hi
    assert_array_equal(g.integers(hi, hi, 5, dtype=dtype, endpoint=True), np.full(5, hi, dtype))
    assert_array_equal(g.integers(lo, lo + 1, 5, dtype=dtype), np.full(5, lo, dtype))
    top = to_numpy(g.integers(hi - 2, hi, 1000, dtype=dtype, endpoint=True))
    assert set(top.tolist()) == {hi - 2, hi - 1, hi}
    half = to_numpy(g.integers(lo, lo + 2**(info.bits - 1), 10000, dtype=dtype))
    assert half.max() < lo + 2**(info.bits - 1)


def test_integers_defaults_high_none_and_bool():
    g = xp.random.default_rng(2)
    x = g.integers(10, size=1000)
    assert x.dtype == xp.int64 and to_numpy(x).min() >= 0 and to_numpy(x).max() <= 9
    assert g.integers(3).shape == ()
    b = g.integers(0, 2, 1000, dtype=xp.bool)
    assert b.dtype == xp.bool and 300 < int(xp.sum(xp.astype(b, xp.int64))) < 700
    assert_array_equal(g.integers(-3, -2, 3, dtype=xp.int8), np.full(3, -3, np.int8))
    assert_array_equal(g.integers(np.int64(4), np.uint8(5), 2), np.full(2, 4))


# --- choice, permutation, shuffle -----------------------------------------------------------

def test_permutation_is_a_permutation():
    g = xp.random.default_rng(12)
    for n in (0, 1, 2, 10, 1000):
        p = g.permutation(n)
        assert p.dtype == xp.int64 and p.shape == (n,)
        np.testing.assert_array_equal(np.sort(to_numpy(p)), np.arange(n))
    first = to_numpy(g.permutation(1000))
    assert not np.array_equal(first, to_numpy(g.permutation(1000)))
    assert not np.array_equal(first, np.arange(1000))


def test_permutation_of_arrays_and_views_along_axes():
    g = xp.random.default_rng(13)
    base = np.arange(60.0).reshape(5, 12)
    x = xp.asarray(base)
    view = x[1:, ::3]  # an offset, strided view (4 x 4)
    p = to_numpy(g.permutation(view))
    np.testing.assert_array_equal(np.sort(p, axis=0), base[1:, ::3])
    assert {tuple(r) for r in p} == {tuple(r) for r in base[1:, ::3]}
    q = to_numpy(g.permutation(x, axis=1))
    np.testing.assert_array_equal(np.sort(q, axis=1), base)
    np.testing.assert_array_equal(to_numpy(x), base)  # permutation copies


def test_shuffle_in_place_writes_through_views():
    g = xp.random.default_rng(14)
    base = np.arange(40).reshape(10, 4)
    x = xp.asarray(base.copy())
    g.shuffle(x)
    got = to_numpy(x)
    assert not np.array_equal(got, base)
    np.testing.assert_array_equal(got[np.argsort(got[:, 0])], base)  # rows moved whole
    y = xp.asarray(np.arange(20))
    g.shuffle(y[::2])  # the even positions permuted among themselves
    got = to_numpy(y)
    np.testing.assert_array_equal(got[1::2], np.arange(1, 20, 2))
    np.testing.assert_array_equal(np.sort(got[::2]), np.arange(0, 20, 2))
    z = xp.asarray(base.copy())
    g.shuffle(z, axis=1)
    np.testing.assert_array_equal(np.sort(to_numpy(z), axis=1), base)
    e = xp.asarray(np.zeros((0, 3)))
    g.shuffle(e)
    assert e.shape == (0, 3)


def test_choice_uniform_with_and_without_replacement():
    g = xp.random.default_rng(15)
    c = g.choice(5, size=(100, 3))
    assert c.shape == (100, 3) and c.dtype == xp.int64
    assert set(to_numpy(c).ravel().tolist()) == set(range(5))
    assert g.choice(7).shape == ()
    a = xp.asarray(np.array([10.0, -1.0, 2.5, 7.0]))
    s = to_numpy(g.choice(a, 1000))
    assert set(s.tolist()) == {10.0, -1.0, 2.5, 7.0}
    u = to_numpy(g.choice(50, 50, replace=False))
    np.testing.assert_array_equal(np.sort(u), np.arange(50))
    k = to_numpy(g.choice(1000, (4, 5), replace=False))
    assert k.shape == (4, 5) and len(set(k.ravel().tolist())) == 20
    ordered = to_numpy(g.choice(1000, 20, replace=False, shuffle=False))
    assert np.all(np.diff(ordered) > 0)
    assert g.choice(0, 0).shape == (0,)


def test_choice_with_probabilities():
    g = xp.random.default_rng(16)
    p = np.array([0.1, 0.0, 0.2, 0.3, 0.4])
    n = 200_000
    s = to_numpy(g.choice(5, n, p=xp.asarray(p)))
    counts = np.bincount(s, minlength=5)
    assert counts[1] == 0
    keep = p > 0
    assert _chi_square(counts[keep], n * p[keep]) < _chi_square_limit(3)
    a = xp.asarray(np.array([3, 1, 4, 1, 5], dtype=np.int32))
    s = to_numpy(g.choice(a, 100, p=xp.asarray(p.astype(np.float32))))
    assert s.dtype == np.int32 and set(s.tolist()) <= {3, 4, 1, 5}
    # without replacement: distinct, never a zero weight, the heavy ones first most often
    firsts = []
    for _ in range(300):
        w = to_numpy(g.choice(5, 3, replace=False, p=xp.asarray(p)))
        assert len(set(w.tolist())) == 3 and 1 not in w
        firsts.append(w[0])
    counts = np.bincount(firsts, minlength=5)
    assert counts[4] > counts[3] > counts[2] > counts[0] > 0
    w = to_numpy(g.choice(5, 4, replace=False, p=xp.asarray(p), shuffle=False))
    np.testing.assert_array_equal(w, [0, 2, 3, 4])


# --- bad input ----------------------------------------------------------------------------

def test_bad_input_raises_clear_errors():
    g = xp.random.default_rng(0)
    cases = [
        (TypeError, lambda: g.random(dtype=xp.int32)),
        (TypeError, lambda: g.random(dtype=xp.complex64)),
        (TypeError, lambda: g.standard_normal(dtype=[1])),
        (TypeError, lambda: g.integers(0, 5, dtype=xp.float32)),
        (ValueError, lambda: g.random(-1)),
        (ValueError, lambda: g.random((2, -3))),
        (TypeError, lambda: g.random(2.5)),
        (ValueError, lambda: g.integers(5, 5)),
        (ValueError, lambda: g.integers(6, 5, endpoint=True)),
        (ValueError, lambda: g.integers(0)),
        (ValueError, lambda: g.integers(-1, 5, dtype=xp.uint8)),
        (ValueError, lambda: g.integers(0, 257, dtype=xp.uint8)),
        (ValueError, lambda: g.integers(0, 128, dtype=xp.int8, endpoint=True)),
        (ValueError, lambda: g.integers(0, 2**64 + 1, dtype=xp.uint64)),
        (TypeError, lambda: g.integers(0.5, 3)),
        (TypeError, lambda: g.integers(0, True)),
        (TypeError, lambda: g.integers(0, 3, endpoint=1)),
        (ValueError, lambda: g.uniform(0, math.inf)),
        (ValueError, lambda: g.uniform(math.nan, 1)),
        (ValueError, lambda: g.uniform(-3e38, 3e38, dtype=xp.float32)),
        (TypeError, lambda: g.uniform("0", 1)),
        (ValueError, lambda: g.normal(0, -1)),
        (ValueError, lambda: g.normal(0, 1e39, dtype=xp.float32)),
        (ValueError, lambda: g.permutation(-1)),
        (ValueError, lambda: g.permutation(xp.asarray(3.0))),
        (TypeError, lambda: g.permutation(2.0)),
        (TypeError, lambda: g.shuffle(np.arange(3))),
        (ValueError, lambda: g.shuffle(xp.asarray(1))),
        (IndexError, lambda: g.shuffle(xp.asarray([1, 2]), axis=1)),
        (ValueError, lambda: g.choice(-2)),
        (ValueError, lambda: g.choice(0, 3)),
        (ValueError, lambda: g.choice(3, 4, replace=False)),
        (ValueError, lambda: g.choice(xp.asarray([[1, 2]]), 1)),
        (ValueError, lambda: g.choice(3, p=xp.asarray([0.5, 0.5]))),
        (ValueError, lambda: g.choice(2, p=xp.asarray([0.5, 0.6]))),
        (ValueError, lambda: g.choice(2, p=xp.asarray([1.5, -0.5]))),
        (ValueError, lambda: g.choice(2, p=xp.asarray([math.nan, 1.0]))),
        (ValueError, lambda: g.choice(2, p=xp.asarray([[0.5, 0.5]]))),
        (TypeError, lambda: g.choice(2, p=xp.asarray([0, 1]))),
        (TypeError, lambda: g.choice(2, p=np.array([0.5, 0.5]))),
        (ValueError, lambda: g.choice(3, 3, replace=False, p=xp.asarray([0.5, 0.5, 0.0]))),
        (ValueError, lambda: xp.random.default_rng(-1)),
        (TypeError, lambda: xp.random.default_rng(1.5)),
        (TypeError, lambda: xp.random.default_rng([1, "a"])),
        (ValueError, lambda: xp.random.default_rng([3, -4])),
        (ValueError, lambda: g.spawn(-1)),
        (TypeError, lambda: setattr(g, "state", {"key": 1})),
        (ValueError, lambda: setattr(g, "state", {"key": -1, "offset": 0})),
    ]
    for error, call in cases:
        with pytest.raises(error):
            call()
    assert g.state == {"key": 0, "offset": 0}  # nothing was drawn by a refused call
