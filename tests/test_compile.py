"""arrayx.compile (arrayx/_compile.py) on the default device: every compiled function's result
against the same Python function called eagerly, on random NumPy data, over several calls (the
first traces, the later ones replay: ``cache_info()["replays"]`` must grow) with NEW data on
every call, so that a replay returning stale values fails.

Covered: elementwise chains (fused into ``elementwise_program``) of every dtype family, Python
scalars, promotion, casts, clip, where; odd sizes, 0-d, empty, offset/strided/transposed views,
broadcasting, the same array passed twice; row functions written in plain array-API code;
results in containers, returned inputs and constants; in-place operators and writes into
arguments; data-dependent shapes (guards, variants, the eager fallback); refused host reads;
bad arguments; the bounded plan cache; fusion counts; threads; nested compiled functions;
decorator forms and methods.

Tolerances: on cpu the fused program runs the steps one by one, so results are bitwise equal to
eager. On cuda a fused kernel may contract a multiply and an add into one FMA
(_backend.PROGRAM_FORMAT): float32 results compare with rtol=2e-6, atol=2e-6 * scale (scale:
the magnitude of the intermediate values), float64 with rtol=1e-13; integers, bools and chains
without a multiply-add stay exact.
"""

import sys
import warnings

import numpy as np
import pytest

import arrayx as xp
from conftest import ALL_DTYPES, DEVICE, assert_array_equal, make_data, run_threads, to_numpy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

ON_CPU = DEVICE.kind == "cpu"
FLOATS = ["float32", "float64"]


# --- helpers -------------------------------------------------------------------------------

def _leaves(obj, path="result"):
    """(path, leaf) of a result tree (tuples, lists, dicts), with the tree's shape checked by
    the caller comparing paths."""
    if type(obj) in (tuple, list):
        out = [(f"{path}:{type(obj).__name__}{len(obj)}", None)]
        for i, v in enumerate(obj):
            out += _leaves(v, f"{path}[{i}]")
        return out
    if type(obj) is dict:
        out = [(f"{path}:dict{sorted(obj)}", None)]
        for k in obj:
            out += _leaves(obj[k], f"{path}[{k!r}]")
        return out
    return [(path, obj)]


def same(got, expected, fma=False, scale=1.0):
    """`got` (a compiled function's result) has `expected`'s structure, and each array leaf
    equals the eager one: bitwise, except that with `fma` (the chain has a multiply feeding an
    add) float leaves on a GPU compare within the FMA tolerance."""
    g, e = _leaves(got), _leaves(expected)
    assert [p for p, _ in g] == [p for p, _ in e], ([p for p, _ in g], [p for p, _ in e])
    for (path, gv), (_, ev) in zip(g, e):
        if isinstance(ev, xp.Array):
            assert isinstance(gv, xp.Array), (path, type(gv))
            want = to_numpy(ev)
            if fma and not ON_CPU and want.dtype.kind in "fc":
                assert gv.dtype == ev.dtype and gv.shape == ev.shape and gv.device == ev.device
                r = 2e-6 if want.dtype in (np.float32, np.complex64) else 1e-13
                a = 2e-6 * scale if want.dtype in (np.float32, np.complex64) else 1e-13 * scale
                np.testing.assert_allclose(to_numpy(gv), want, rtol=r, atol=a, err_msg=path)
            else:
                assert_array_equal(gv, want, dtype=want.dtype, device=ev.device)
        elif ev is not None or gv is not None:
            assert type(gv) is type(ev) and gv == ev, (path, gv, ev)


def run(fn, make_args, calls=3, fma=False, scale=1.0, cf=None, **compile_kw):
    """Compile `fn`, call it `calls` times with `make_args(call)` (new data each call) and
    compare each result with `fn` called eagerly on the same arguments (a second set from
    `make_args`, for functions that write into their arguments). Returns the compiled function."""
    cf = xp.compile(fn, **compile_kw) if cf is None else cf
    for call in range(calls):
        got = cf(*make_args(call))
        expected = fn(*make_args(call))
        same(got, expected, fma=fma, scale=scale)
        info = cf.cache_info()
        assert info["traces"] == 1, info
        assert info["replays"] == call, info
    return cf


def arrays(rng, specs):
    """arrayx arrays from (dtype, shape) pairs, random data (finite, moderate)."""
    out = []
    for dt, shape in specs:
        dt = np.dtype(dt)
        if dt.kind == "c":
            v = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
        elif dt.kind == "f":
            v = rng.standard_normal(shape).astype(dt)
        elif dt.kind == "b":
            v = rng.random(shape) < 0.5
        else:
            info = np.iinfo(dt)
            v = rng.integers(info.min, int(info.max) + 1, size=shape, dtype=dt)
        out.append(xp.asarray(v))
    return out


def maker(*specs, seed=0):
    """make_args for `run`: call k gets arrays from a generator seeded (seed, k)."""
    return lambda call: arrays(np.random.default_rng((seed, call)), specs)


# --- elementwise chains --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_multiply_add(dtype):
    run(lambda a, b, c: a * b + c, maker((dtype, (1000,)), (dtype, (1000,)), (dtype, (1000,))),
        fma=True, scale=10.0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_tanh_chain_repeated_20_times(dtype):
    def f(a, b, c):
        y = a
        for _ in range(20):
            y = xp.tanh(y * b + c)
        return y
    cf = run(f, maker((dtype, (513,)), (dtype, (513,)), (dtype, (513,))), fma=True, scale=10.0)
    info = cf.cache_info()
    assert info["steps"] == [1] and info["fused"] == [59], info  # 60 calls, one kernel


@pytest.mark.parametrize("dtype", FLOATS)
def test_gelu_tanh_form(dtype):
    def gelu(x):
        return 0.5 * x * (1 + xp.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
    cf = run(gelu, lambda k: [xp.asarray((3 * np.random.default_rng(k).standard_normal(4099))
                                         .astype(dtype))], fma=True, scale=30.0)
    assert cf.cache_info()["steps"] == [1]


def test_comparisons_and_where():
    def f(a, b):
        return xp.where(a > b, a - b, xp.where(a == b, 0.0, b * 2)), (a >= 0) != (b < 0)
    run(f, maker(("float32", (300,)), ("float32", (300,))))


def test_where_with_scalar_branches_and_special_values():
    def f(a, b):
        return xp.where(xp.isnan(a) | (b > 0), -1.5, xp.abs(a) + b)
    run(f, lambda k: [xp.asarray(make_data("float64", 200, np.random.default_rng(k))),
                      xp.asarray(make_data("float64", 200, np.random.default_rng(k + 9)))])


def test_astype_in_the_middle():
    def f(a, b):
        i = xp.astype(a * 100, xp.int32)
        return xp.astype((i // 3) + b, xp.float64) / 7, xp.astype(i, xp.uint8), \
            xp.astype(a, xp.bool)
    run(f, lambda k: [xp.asarray(np.random.default_rng(k).uniform(-50, 50, 257).astype("float32")),
                      xp.asarray(np.random.default_rng(k + 1).integers(-1000, 1000, 257)
                                 .astype("int32"))])


def test_clip_scalar_and_array_bounds():
    def f(a, lo, hi):
        return (xp.clip(a * 2, -0.5, 0.5), xp.clip(a + 1, lo, hi), xp.clip(a - 1, max=hi),
                xp.clip(a, min=lo), xp.clip(xp.abs(a), None, None))
    def args(k):
        a, lo = arrays(np.random.default_rng(k), [("float32", (99,)), ("float32", (99,))])
        return [a, lo, lo + 1]
    run(f, args)


def test_integer_chains():
    def f(a, b, c):
        return ((a << 2) ^ b, xp.floor_divide(a, c) + xp.remainder(b, c), a ** 3 - b,
                (a & 0xFF) | (b >> 3), a // c % 7)
    def args(k):
        rng = np.random.default_rng(k)
        a = rng.integers(-1000, 1000, 777).astype(np.int32)
        b = rng.integers(-2 ** 31, 2 ** 31, 777).astype(np.int32)
        c = rng.choice(np.r_[np.arange(-9, 0), np.arange(1, 10)], 777).astype(np.int32)
        return [xp.asarray(a), xp.asarray(b), xp.asarray(c)]
    cf = run(f, args)
    assert sum(cf.cache_info()["fused"]) > 0


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "uint64"])
def test_integer_pow_wraps(dtype):
    def f(a, b):
        return a ** 3 + b ** 2, a ** b
    def args(k):
        rng = np.random.default_rng(k)
        lo = 0 if dtype[0] == "u" else -50
        return [xp.asarray(rng.integers(lo, 50, 64).astype(dtype)),
                xp.asarray(rng.integers(0, 9, 64).astype(dtype))]
    run(f, args)


def test_bool_chains():
    def f(a, b, m):
        return xp.logical_and(a > 0, b < 1), xp.logical_or(~m, a > b) ^ m, \
            xp.logical_not(m) & True
    run(f, maker(("float64", (123,)), ("float64", (123,)), ("bool", (123,))))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_chains(dtype):
    def f(a, b, c):
        return a * b + c, xp.exp(a) * xp.conj(b), xp.abs(a * b - c), xp.real(a) + xp.imag(b), \
            a * (1 - 2j) + 0.5
    run(f, maker((dtype, (211,)), (dtype, (211,)), (dtype, (211,))), fma=True, scale=30.0)


def test_mixed_dtype_promotion():
    def f(i8, i32, u8, i16, f32, f64, c64):
        return (i8 + i32, u8 * i16, f32 + f64, c64 * f64, i32 + f32 * 2, u8 - 1, f32 * 3)
    run(f, maker(("int8", (50,)), ("int32", (50,)), ("uint8", (50,)), ("int16", (50,)),
                     ("float32", (50,)), ("float64", (50,)), ("complex64", (50,))), fma=True,
            scale=1e10)  # i32 + f32 * 2: values up to 2**31


def test_python_scalars_of_each_kind():
    def f(m, i, x, z):
        return (m | True, m & False, i + 3, i * -2 + 1, i + 2.5, x * 2, x + 0.25, x ** 2,
                z * (1 + 1j), z + 2, x > 1, i == 0)
    run(f, maker(("bool", (40,)), ("int16", (40,)), ("float64", (40,)), ("complex128", (40,))),
        fma=True, scale=1e5)


def test_python_scalar_arguments_are_part_of_the_signature():
    cf = xp.compile(lambda x, s, t: x * s + t)
    rng = np.random.default_rng(3)
    for s, t in [(2.0, 1), (2.0, 1), (3.0, 1), (-0.0, 1), (0.0, 1), (2.0, True), (2.0, 1)]:
        x = xp.asarray(rng.standard_normal(10))
        same(cf(x, s, t), x * s + t, fma=True, scale=10.0)
    info = cf.cache_info()
    # (2.0, 1) traced once and replayed twice; 3.0, -0.0, 0.0 and (2.0, True) are their own
    assert info["traces"] == 5 and info["replays"] == 2, info


# --- every dtype family --------------------------------------------------------------------

def _family_fn(dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return lambda a, b: xp.logical_xor(a, ~b) | (a & b), False
    if dt.kind in "iu":
        return lambda a, b: (a + b) * a - (b ^ a), False
    return lambda a, b: xp.where(xp.abs(a) > 1, (a + b) * a - b, -a) / 3, True


@pytest.mark.parametrize("dtype", [np.dtype(d).name for d in ALL_DTYPES])
def test_every_dtype_family(dtype):
    fn, fma = _family_fn(dtype)
    cf = run(fn, maker((dtype, (1001,)), (dtype, (1001,))), fma=fma, scale=10.0)
    assert cf.cache_info()["steps"] == [1], cf.cache_info()


@pytest.mark.parametrize("dtype", [np.dtype(d).name for d in ALL_DTYPES])
def test_every_dtype_with_special_values(dtype):
    """NaN, infinities, -0.0 and the integer limits through a chain without a multiply-add."""
    def f(a, b):
        return xp.where(a != b, a, b), xp.astype(xp.astype(a, xp.bool), xp.int8) + 1, \
            xp.where(a == b, b, a)
    run(f, lambda k: [xp.asarray(make_data(dtype, 97, np.random.default_rng(k))),
                      xp.asarray(make_data(dtype, 97, np.random.default_rng(k + 50)))])


# --- sizes, views, broadcasting ------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 7, 10007])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_odd_sizes(n, dtype):
    run(lambda a, b: (a + b) * 2 - a, maker((dtype, (n,)), (dtype, (n,))), fma=True, scale=10.0)


def test_zero_d_arrays():
    def f(a, b):
        return xp.tanh(a * b) + 1, a > b
    run(f, maker(("float64", ()), ("float64", ())), fma=True, scale=2.0)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (4, 0), (2, 0, 5)])
def test_empty_arrays(shape):
    def f(a, b):
        return xp.exp(a) + b, xp.sum(a * b, axis=-1)
    got = run(f, maker(("float32", shape), ("float32", shape)))
    assert got.cache_info()["replays"] == 2


def test_offset_and_strided_views_inside():
    def f(x, m):
        return x[1:] * 2 + x[:-1], x[::2] - 1, m.T * 3 + m.T, m[1:, ::2] + 1
    run(f, maker(("float64", (1001,)), ("float64", (6, 9))), fma=True, scale=10.0)


@pytest.mark.parametrize("view", ["offset", "strided", "transposed"])
def test_views_as_arguments(view):
    """Traced on one kind of layout, replayed on another of the same shape (the signature holds
    no strides)."""
    def f(a, b):
        return xp.tanh(a + b) * 2 + a
    rng = np.random.default_rng(5)

    def arg(k, contiguous):
        base = xp.asarray(rng.standard_normal((12, 16)))
        if view == "offset":
            return xp.asarray(rng.standard_normal((11, 16))) if contiguous else base[1:]
        if view == "strided":
            return xp.asarray(rng.standard_normal((12, 8))) if contiguous else base[:, ::2]
        return xp.asarray(rng.standard_normal((16, 12))) if contiguous else base.T
    cf = xp.compile(f)
    for k, contiguous in enumerate([True, False, True, False]):
        a, b = arg(k, contiguous), arg(k, not contiguous)
        same(cf(a, b), f(a, b), fma=True, scale=10.0)
    assert cf.cache_info()["traces"] == 1 and cf.cache_info()["replays"] == 3


@pytest.mark.parametrize("sa, sb", [((5, 1), (1, 7)), ((3, 1), (3, 4)), ((4,), (3, 4)),
                                    ((), (2, 3))])
def test_broadcasting(sa, sb):
    def f(a, b):
        return (a - b) * a + 1, xp.where(a > b, a, b)
    run(f, maker(("float32", sa), ("float32", sb)), fma=True, scale=10.0)


def test_same_array_passed_twice():
    def f(a, b):
        return a * 3 - b, a + b
    cf = xp.compile(f)
    rng = np.random.default_rng(7)
    new = lambda: xp.asarray(rng.integers(-100, 100, 31).astype(np.int64))  # noqa: E731
    x = new()
    same(cf(x, x), f(x, x))
    x, y = new(), new()
    same(cf(x, y), f(x, y))  # another signature: must not reuse the f(x, x) plan
    assert cf.cache_info()["traces"] == 2
    y = new()
    same(cf(y, y), f(y, y))
    x, y = new(), new()
    same(cf(x, y), f(x, y))
    assert cf.cache_info()["traces"] == 2 and cf.cache_info()["replays"] == 2


# --- row functions in plain array-API code --------------------------------------------------

def softmax(x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def log_softmax(x):
    s = x - xp.max(x, axis=-1, keepdims=True)
    return s - xp.log(xp.sum(xp.exp(s), axis=-1, keepdims=True))


def logsumexp(x):
    m = xp.max(x, axis=-1, keepdims=True)
    return xp.log(xp.sum(xp.exp(x - m), axis=-1)) + m[..., 0]


def layer_norm(x, w, b):
    m = xp.mean(x, axis=-1, keepdims=True)
    v = xp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) / xp.sqrt(v + 1e-5) * w + b


def rms_norm(x, w):
    return x / xp.sqrt(xp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w


def centre(x):
    return x - xp.mean(x, axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", [softmax, log_softmax, logsumexp, centre, rms_norm],
                         ids=lambda f: f.__name__)
def test_row_functions(fn, dtype):
    specs = [(dtype, (9, 130))]
    if fn is rms_norm:
        specs.append((dtype, (130,)))
    make = maker(*specs)
    run(fn, lambda k: [a * 3 for a in make(k)], fma=True, scale=30.0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_row_functions_close_to_eager(dtype):
    """A written-out layer norm becomes the row primitive, which computes the variance its own
    way (shifted by the row's first element): equal to the written form within rounding."""
    cf = xp.compile(layer_norm)
    for k in range(3):
        x, w, b = maker((dtype, (9, 130)), (dtype, (130,)), (dtype, (130,)), seed=k)(0)
        got, want = to_numpy(cf(x * 3, w, b)), to_numpy(layer_norm(x * 3, w, b))
        tol = 3e-6 if dtype == "float32" else 1e-13
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)
    assert cf.cache_info()["replays"] == 2


def logsumexp_keepdims(x):
    m = xp.max(x, axis=-1, keepdims=True)
    return xp.log(xp.sum(xp.exp(x - m), axis=-1, keepdims=True)) + m


@pytest.mark.parametrize("fn, row", [(logsumexp_keepdims, lambda x: xp.logsumexp(x, keepdims=True)),
                                     (log_softmax, xp.log_softmax)], ids=["logsumexp", "log_softmax"])
def test_row_functions_with_infinities(fn, row):
    """Recognised row functions give the row primitive's results, on the first call as on every
    replay: a row of -inf has logsumexp -inf (the written formula: NaN)."""
    cf = xp.compile(fn)
    for k in range(3):
        v = np.random.default_rng(k).standard_normal((4, 5))
        v[0] = -np.inf
        v[1, 2] = np.inf
        x = xp.asarray(v)
        got = to_numpy(cf(x))
        np.testing.assert_array_equal(got, to_numpy(row(x)))
        if fn is logsumexp_keepdims:
            assert got[0, 0] == -np.inf and got[1, 0] == np.inf
    assert cf.cache_info()["replays"] == 2 and cf.cache_info()["row_functions"] == [1]


# --- results -------------------------------------------------------------------------------

def test_results_in_containers_inputs_and_constants():
    def f(a, b):
        return {"sum": a + b, "input": a, "const": 3, "list": [a * b, (b, 1.5, None)],
                "tuple": (xp.negative(b),), "text": "ok"}
    cf = run(f, maker(("float32", (17,)), ("float32", (17,))))
    a, b = arrays(np.random.default_rng(99), [("float32", (17,)), ("float32", (17,))])
    out = cf(a, b)
    assert_array_equal(out["input"], to_numpy(a))
    assert_array_equal(out["list"][1][0], to_numpy(b))


def test_returned_python_constant_only():
    cf = xp.compile(lambda x: 42)
    assert cf(xp.ones(3)) == 42 and cf(xp.zeros(3)) == 42
    assert cf.cache_info()["replays"] == 1


def test_returns_only_the_input():
    cf = xp.compile(lambda x, y: (y, x))
    for k in range(3):
        x, y = arrays(np.random.default_rng(k), [("int32", (5,)), ("int32", (5,))])
        gx = cf(x, y)
        assert_array_equal(gx[0], to_numpy(y))
        assert_array_equal(gx[1], to_numpy(x))


def test_result_of_a_reduction_and_matmul_between_chains():
    def f(a, b):
        s = xp.sum(xp.tanh(a) * 2, axis=0)
        return xp.matmul(a * 2, b) + s[:3], xp.max(a + 1)
    run(f, maker(("float64", (4, 3)), ("float64", (3, 3))), fma=True, scale=30.0)


# --- in-place operators and writes into arguments -------------------------------------------

def test_in_place_ops_inside():
    def f(x, v):
        y = x * 2
        y += 1
        y[0] = 5
        z = y * 3
        y *= 0.5
        y[-1] = v
        return y, z
    run(f, maker(("float32", (50,)), ("float32", ())))


def _write_everything(x, y):
    s = xp.sum(x * y)
    x[...] = 0
    y += s
    y[...] = y * 2 + 1
    return s


def _write_last(x, y):
    s = xp.sum(x * y) + 1
    x[1:4] = s
    return s


@pytest.mark.parametrize("f", [_write_everything, _write_last], ids=["writes", "last-call"])
def test_write_into_an_argument(f):
    """Writes into the arguments (before other calls, or as the last call) repeat on each
    replay, into that call's arguments."""
    cf = xp.compile(f)
    for k in range(4):
        args_c = maker(("float64", (20,)), ("float64", (20,)), seed=k)(0)
        args_e = maker(("float64", (20,)), ("float64", (20,)), seed=k)(0)
        same(cf(*args_c), f(*args_e))
        for got, want in zip(args_c, args_e):  # this call's arguments written
            assert_array_equal(got, to_numpy(want))
        if f is _write_everything:
            assert not np.any(to_numpy(args_c[0]))
    assert cf.cache_info()["replays"] == 3


def test_basic_slices_after_a_write_replay():
    def f(x, y):
        x[...] = 0
        y[1:3] = y[:2] - 1
        return y[::2] * 2
    cf = xp.compile(f)
    for k in range(3):
        args_c = maker(("float64", (20,)), ("float64", (20,)), seed=k)(0)
        args_e = maker(("float64", (20,)), ("float64", (20,)), seed=k)(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", xp.CompileWarning)
            same(cf(*args_c), f(*args_e))
        for got, want in zip(args_c, args_e):
            assert_array_equal(got, to_numpy(want))
    assert cf.cache_info()["replays"] == 2, cf.cache_info()


def test_captured_array_is_read_at_replay():
    w = xp.asarray(np.arange(6.0))
    cf = xp.compile(lambda x: x * w + 1)
    x = xp.asarray(np.ones(6))
    assert_array_equal(cf(x), np.arange(6.0) + 1)
    w[...] = 2.0
    assert_array_equal(cf(x), np.full(6, 3.0))
    assert cf.cache_info()["replays"] == 1


# --- data-dependent shapes -----------------------------------------------------------------

def test_data_dependent_shape_variants_and_fallback():
    def f(x):
        y = x[x > 0]
        return xp.sum(y * 2), xp.max(x)
    cf = xp.compile(f, max_variants=3)
    rng = np.random.default_rng(11)

    def data(count):
        v = -rng.random(40) - 0.5
        v[rng.choice(40, count, replace=False)] = rng.random(count) + 0.5
        return xp.asarray(v)

    with warnings.catch_warnings():
        warnings.simplefilter("error", xp.CompileWarning)
        for count in [5, 5, 9, 5, 9, 20, 20, 5]:  # three variants: no warning
            x = data(count)
            same(cf(x), f(x))
    info = cf.cache_info()
    assert info["traces"] == 3 and info["replays"] == 5 and info["variants"] == 3, info
    x = data(30)  # a fourth count: past max_variants
    with pytest.warns(xp.CompileWarning, match="data-dependent"):
        same(cf(x), f(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error", xp.CompileWarning)  # warned once only
        for count in [31, 5, 9, 0, 40, 30]:
            x = data(count)
            same(cf(x), f(x))
    assert cf.cache_info()["eager_calls"] == 6


def test_write_before_a_data_dependent_shape_runs_eagerly():
    def f(x):
        x[...] = x - 0.5
        return xp.sum(x[x > 0])
    cf = xp.compile(f)
    for k in range(3):
        xc = maker(("float64", (30,)), seed=k)(0)[0]
        xe = maker(("float64", (30,)), seed=k)(0)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", xp.CompileWarning)
            same(cf(xc), f(xe))
        assert_array_equal(xc, to_numpy(xe))


def test_nonzero_and_unique_in_the_middle():
    def f(x):
        (i,) = xp.nonzero(x > 0)
        u = xp.unique_values(xp.astype(x * 3, xp.int32))
        return xp.sum(i), u * 2
    cf = xp.compile(f)
    for k in range(4):
        x = maker(("float32", (25,)), seed=k % 2)(0)[0]  # two different data sets, alternating
        same(cf(x), f(x))
    assert cf.cache_info()["traces"] == 2 and cf.cache_info()["replays"] == 2


# --- bad use -------------------------------------------------------------------------------

def branchy(x):
    if xp.sum(x) > 0:
        return x
    return -x


def test_branch_on_a_value_names_the_line():
    cf = xp.compile(branchy)
    with pytest.raises(xp.TracedValueError) as e:
        cf(xp.ones(3))
    line = branchy.__code__.co_firstlineno + 1
    assert f"test_compile.py:{line}" in str(e.value), str(e.value)
    assert isinstance(e.value, TypeError)


@pytest.mark.parametrize("read", ["float", "bool", "int", "dlpack", "random", "print", "repr",
                                  "numpy"])
def test_host_reads_are_refused(read, capsys):
    def f(x):
        y = x * 2
        if read == "float":
            float(y[0])
        elif read == "dlpack":
            y.__dlpack__()
        elif read == "print":
            print(y)
        elif read == "repr":
            repr(y)
        elif read == "bool":
            bool(y[0] > 0)
        elif read == "int":
            int(y[0])
        elif read == "numpy":
            np.asarray(y)
        else:
            y = y + xp.random.default_rng(0).random((3,))
        return y
    cf = xp.compile(f)
    # np.asarray of a cuda array with implicit host copies off is refused before any read
    refused = TypeError if read == "numpy" and not ON_CPU else xp.TracedValueError
    with pytest.raises(refused, match="test_compile.py" if refused is not TypeError else ""):
        cf(xp.ones(3))
    # afterwards: eager arrayx, other compiled functions and the backends are as before
    assert float(xp.sum(xp.ones(3) * 2)) == 6.0
    g = xp.compile(lambda a: a + 1)
    assert_array_equal(g(xp.zeros(2)), np.ones(2))
    assert_array_equal(g(xp.ones(2)), np.full(2, 2.0))
    assert g.cache_info()["traces"] == 1 and g.cache_info()["replays"] == 1
    assert type(DEVICE.backend).__name__ != "_Recorder"


def test_branch_through_numpy_is_not_baked_in():
    def f(x):
        if np.asarray(x)[0] > 0:
            return x * 2
        return x * 3
    cf = xp.compile(f)
    try:
        for v in ([1.0, 2.0], [-1.0, 2.0]):
            x = xp.asarray(v)
            same(cf(x), f(x))
    except TypeError:
        pass  # refused while tracing (TracedValueError, or cuda's implicit-copy TypeError)


def test_compiled_function_works_after_an_error():
    def f(x, check):
        if check:
            float(xp.sum(x))
        return x * 2
    cf = xp.compile(f)
    with pytest.raises(xp.TracedValueError):
        cf(xp.ones(3), True)
    for k in range(3):
        x = maker(("float64", (3,)), seed=k)(0)[0]
        same(cf(x, False), f(x, False))
    with pytest.raises(xp.TracedValueError):
        cf(xp.ones(3), True)
    assert cf.cache_info()["traces"] == 1 and cf.cache_info()["replays"] == 2


def test_bad_arguments():
    with pytest.raises(TypeError):
        xp.compile(3)
    for kw in [{"max_signatures": 0}, {"max_variants": 0}, {"max_signatures": True},
               {"max_signatures": 2.0}, {"max_variants": -1}]:
        with pytest.raises(ValueError):
            xp.compile(lambda x: x, **kw)
        with pytest.raises(ValueError):
            xp.compile(**kw)
    cf = xp.compile(lambda x, y: x + 1)
    with pytest.raises(TypeError, match="hashable"):
        cf(xp.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="hashable"):
        cf(xp.ones(2), {"k": [np.ones(2)]})
    assert_array_equal(cf(xp.ones(2), (1, 2)), np.full(2, 2.0))


# --- the cache, fusion ---------------------------------------------------------------------

def test_plan_cache_is_bounded():
    cf = xp.compile(lambda a: xp.exp(a) - 1, max_signatures=2)
    rng = np.random.default_rng(1)
    for n in [3, 4, 5]:
        a = xp.asarray(rng.standard_normal(n))
        same(cf(a), xp.exp(a) - 1)
    assert cf.cache_info()["signatures"] == 2
    a = xp.asarray(rng.standard_normal(5))
    same(cf(a), xp.exp(a) - 1)  # still cached
    assert cf.cache_info()["traces"] == 3 and cf.cache_info()["replays"] == 1
    a = xp.asarray(rng.standard_normal(3))
    same(cf(a), xp.exp(a) - 1)  # the least recently used one: out, traced again
    assert cf.cache_info()["traces"] == 4 and cf.cache_info()["signatures"] == 2
    cf.clear_cache()
    assert cf.cache_info()["signatures"] == 0
    same(cf(a), xp.exp(a) - 1)
    assert cf.cache_info()["traces"] == 5


def test_fusion_happens():
    cf = run(lambda a, b, c: xp.tanh(a * b + c),
             maker(("float32", (64,)), ("float32", (64,)), ("float32", (64,))),
             fma=True, scale=10.0)
    info = cf.cache_info()
    assert info["steps"] == [1] and info["fused"] == [2], info


def test_output_used_inside_a_chain_is_not_fused_away():
    def f(a, b):
        t = a * b
        return t, xp.exp(t) + a
    cf = run(f, maker(("float64", (33,)), ("float64", (33,))), fma=True, scale=10.0)
    assert cf.cache_info()["steps"] == [2], cf.cache_info()


# --- threads, nesting, forms ----------------------------------------------------------------

def test_threads():
    def f(a, b):
        return (a * 3 + b) ^ (a >> 1), xp.tanh(xp.astype(a, xp.float64) - 1) / (xp.abs(b) + 1)
    cf = xp.compile(f)

    def work(i):
        rng = np.random.default_rng(100 + i)
        for _ in range(50):
            a = xp.asarray(rng.integers(-1000, 1000, 64 + i).astype(np.int32))
            b = xp.asarray(rng.integers(-1000, 1000, 64 + i).astype(np.int32))
            same(cf(a, b), f(a, b))
    run_threads(work, 4)
    info = cf.cache_info()
    assert info["signatures"] == 4 and info["traces"] + info["replays"] == 200, info
    assert info["replays"] >= 196, info


def test_nested_compiled_functions():
    @xp.compile
    def inner(a, b):
        return xp.tanh(a * b) + 1

    @xp.compile
    def outer(a, b):
        return inner(a, b) * inner(b, a) - a

    def eager(a, b):
        return (xp.tanh(a * b) + 1) * (xp.tanh(b * a) + 1) - a
    for k in range(3):
        a, b = maker(("float32", (40,)), ("float32", (40,)), seed=k)(0)
        same(outer(a, b), eager(a, b), fma=True, scale=10.0)
    assert outer.cache_info()["traces"] == 1 and outer.cache_info()["replays"] == 2
    assert inner.cache_info()["traces"] == 0  # inlined into outer's trace
    assert outer.cache_info()["steps"] == [1], outer.cache_info()
    a, b = maker(("float32", (40,)), ("float32", (40,)), seed=9)(0)
    same(inner(a, b), xp.tanh(a * b) + 1)
    assert inner.cache_info()["traces"] == 1


def test_decorator_forms():
    @xp.compile
    def f(x):
        return x * 2 + 1

    @xp.compile(max_signatures=4)
    def g(x):
        return x - 1

    assert f.__name__ == "f" and g.__name__ == "g"
    for n in range(6):
        x = xp.asarray(np.arange(n, dtype=np.int32))
        assert_array_equal(f(x), np.arange(n, dtype=np.int32) * 2 + 1)
        assert_array_equal(g(x), np.arange(n, dtype=np.int32) - 1)
    assert g.cache_info()["signatures"] == 4 and f.cache_info()["signatures"] == 6


class Model:
    def __init__(self, scale):
        self.w = xp.asarray(np.full(8, scale))

    @xp.compile
    def forward(self, x):
        return xp.tanh(x * self.w) + 1


def test_compiled_method():
    m1, m2 = Model(2.0), Model(-3.0)
    rng = np.random.default_rng(4)
    for _ in range(3):
        for m, s in ((m1, 2.0), (m2, -3.0)):
            x = xp.asarray(rng.standard_normal(8))
            same(m.forward(x), xp.tanh(x * s) + 1)
    info = Model.forward.cache_info()
    assert info["signatures"] >= 2 and info["traces"] == 2 and info["replays"] == 4, info
    assert Model.__dict__["forward"] is Model.forward


def test_module_attributes():
    assert issubclass(xp.TracedValueError, TypeError)
    assert issubclass(xp.CompileWarning, UserWarning)
    assert "compile" in sys.modules["arrayx._compile"].__all__


def test_a_result_replay_could_not_refresh_is_refused():
    """A result that is not an array, a Python value or a container of them would come back
    unchanged from every replay, holding the first call's arrays: refused while tracing."""
    class Box:
        def __init__(self, v):
            self.v = v
    cf = xp.compile(lambda x: Box(x * 2))
    with pytest.raises(TypeError, match="returned a Box"):
        cf(xp.ones(3))
    np.testing.assert_array_equal(to_numpy(xp.compile(lambda x: (x * 2, "tag", None))(xp.ones(2))[0]),
                                  np.full(2, 2.0))
