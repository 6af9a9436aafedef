"""Fuzz of the namespace (issue 20): random functions called with random valid and invalid
arguments. Every call must end in a result equal to NumPy's (where both accept the call and the
standard fixes the answer) or in a clean exception (CLEAN); never another exception type, a
crash or a hang.

Seeded (derandomize=True): the same cases every run. ARRAYX_FUZZ_EXAMPLES sets the number of
cases (default 2000 in-process, a quarter of that for the subprocess batch); the device is the
default device (ARRAYX_DEVICE=cuda in the GPU run).

Calls that could crash the interpreter (huge sizes given to repeat, tile, broadcast_to and the
creation functions, asarray of huge iterables) run in one subprocess with a timeout, so a
segfault or a hang fails the test instead of killing the run. They never run in-process: a huge
size that is wrongly accepted would allocate (or materialise) terabytes.
"""

from __future__ import annotations

import math
import os
import subprocess
import textwrap
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import arrayx as xp
from conftest import ALL_DTYPES, DEVICE, make_data, run_python, to_numpy

EXAMPLES = int(os.environ.get("ARRAYX_FUZZ_EXAMPLES", "2000"))
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck), print_blob=True)

#: The exceptions a bad argument may raise. OverflowError: a Python int out of the range of
#: the array's dtype (test_bad_input documents it). LinAlgError is a ValueError.
CLEAN = (TypeError, ValueError, IndexError, MemoryError, OverflowError)

# --- argument strategies --------------------------------------------------------------------
class Arr:
    """An array argument: built on DEVICE for arrayx and as the same NumPy array."""

    def __init__(self, dtype, shape, seed, view):
        rng = np.random.default_rng(seed)
        base_shape = shape[:-1] + (2 * shape[-1],) if view == "strided" and shape else shape
        a = make_data(dtype, base_shape, rng)
        x = xp.asarray(a)
        if view == "strided" and shape:
            a, x = a[..., ::2], x[..., ::2]
        elif view == "transposed" and len(shape) >= 2:
            a, x = a.T, xp.permute_dims(x, tuple(reversed(range(len(shape)))))
        elif view == "reversed" and shape:
            a, x = a[::-1], x[::-1]
        self.np, self.x = a, x

    def __repr__(self):
        return f"Arr({self.np.dtype}, {self.np.shape}, strides={self.np.strides})"


dtypes = st.sampled_from(ALL_DTYPES)
small_shapes = st.lists(st.integers(0, 4), max_size=3).map(tuple)


@st.composite
def arrays(draw, dtype=dtypes, shape=small_shapes):
    return Arr(draw(dtype), draw(shape), draw(st.integers(0, 2**32 - 1)),
               draw(st.sampled_from(["plain", "plain", "strided", "transposed", "reversed"])))


# Wrong-typed values (no huge ints: those go to the subprocess batch only).
junk = st.sampled_from([None, 1.5, float("nan"), -0.0, 1j, "a", "float64", True, b"x", {}, [1.5],
                        (None,), (1, None), [[0]], (0.5,), object(), np.float64(1.0), xp.float64,
                        [xp.int8], np.dtype(">f8"), np.float16, (), []])
ints = st.integers(-4, 5)
int_seqs = st.one_of(st.lists(ints, max_size=4).map(tuple), st.lists(ints, max_size=4))
valid_axes = st.one_of(st.none(), st.integers(-2, 2), st.lists(st.integers(-3, 3), max_size=3,
                                                                 unique=True).map(tuple))
axes = st.one_of(valid_axes, valid_axes, ints, int_seqs, junk)
axis = st.one_of(st.integers(-2, 1), st.integers(-2, 1), ints, junk)
shapes = st.one_of(st.integers(-1, 4), st.lists(st.integers(-1, 4), max_size=4).map(tuple),
                   st.lists(st.integers(0, 4), max_size=4), junk)
dtype_args = st.one_of(dtypes, dtypes.map(lambda d: d.name), junk)
# Mostly arrays, so that most calls reach the checks past the first argument's.
anything = st.one_of(arrays(), arrays(), arrays(), st.one_of(ints, junk, dtype_args))

# (name, arrayx function, NumPy function or None (no comparison), strategy of (args, kwargs)).
CASES = []


def case(name, fx, fn, args, **kwargs):
    CASES.append((name, fx, fn, st.tuples(st.tuples(*args), st.fixed_dictionaries(kwargs))))


def _np_astype(a, dtype):
    return a.astype(dtype)


for _name in ("abs", "negative", "sqrt", "exp", "floor", "isnan", "sign", "logical_not",
              "bitwise_invert", "square", "real", "conj"):
    case(_name, getattr(xp, _name), {"bitwise_invert": np.invert}.get(_name, getattr(np, _name, None)),
         [anything])
for _name in ("add", "subtract", "multiply", "maximum", "equal", "less", "logical_and",
              "bitwise_and", "atan2", "hypot"):
    case(_name, getattr(xp, _name), {"atan2": np.arctan2}.get(_name, getattr(np, _name)),
         [arrays(), st.one_of(arrays(), ints, st.floats(-3, 3), junk)])
case("reshape", xp.reshape, np.reshape, [anything, shapes])
case("broadcast_to", xp.broadcast_to, np.broadcast_to, [anything, shapes])
case("broadcast_shapes", xp.broadcast_shapes, np.broadcast_shapes, [shapes, shapes])
case("broadcast_arrays", xp.broadcast_arrays, np.broadcast_arrays, [arrays(), anything])
case("permute_dims", xp.permute_dims, np.transpose, [anything, axes])
case("moveaxis", xp.moveaxis, np.moveaxis, [anything, axes, axes])
case("flip", xp.flip, np.flip, [anything], axis=axes)
case("squeeze", xp.squeeze, np.squeeze, [anything], axis=axes)
case("expand_dims", xp.expand_dims, np.expand_dims, [anything], axis=axes)
case("roll", xp.roll, np.roll, [anything, st.one_of(ints, int_seqs, junk)], axis=axes)
case("repeat", xp.repeat, np.repeat,
     [anything, st.one_of(st.integers(-1, 3), st.integers(0, 3), arrays(st.sampled_from([xp.int64, xp.uint8, xp.float32]),
                                                     st.sampled_from([(), (1,), (2,), (3,), (4,)])),
                          junk)], axis=st.one_of(st.none(), axis))
case("tile", xp.tile, np.tile, [anything, st.one_of(st.integers(-1, 3), st.lists(st.integers(-1, 3),
                                                                                  max_size=4).map(tuple),
                                                    junk)])
case("concat", lambda a, b, **k: xp.concat([a, b], **k), lambda a, b, **k: np.concatenate([a, b], **k),
     [anything, anything], axis=axes)
case("stack", lambda a, b, **k: xp.stack([a, b], **k), lambda a, b, **k: np.stack([a, b], **k),
     [anything, anything], axis=axis)
case("unstack", xp.unstack, np.unstack, [anything], axis=axis)
for _name in ("sum", "prod", "max", "min", "mean", "all", "any"):
    case(_name, getattr(xp, _name), getattr(np, _name), [anything], axis=axes,
         keepdims=st.booleans())
case("var", xp.var, np.var, [anything], axis=axes, correction=st.one_of(st.integers(0, 2), junk))
case("std", xp.std, np.std, [anything], axis=axes, correction=st.one_of(st.integers(0, 2), junk))
case("sum_dtype", xp.sum, None, [anything], dtype=dtype_args)
case("cumulative_sum", xp.cumulative_sum, np.cumulative_sum, [anything],
     axis=st.one_of(st.none(), axis))
case("diff", xp.diff, np.diff, [anything], axis=axis, n=st.one_of(st.integers(-1, 3), junk))
case("sort", xp.sort, lambda a, axis=-1: np.sort(a, axis=axis, kind="stable"), [anything],
     axis=axis)
case("argsort", xp.argsort, lambda a, axis=-1: np.argsort(a, axis=axis, kind="stable"), [anything],
     axis=axis)
case("astype", xp.astype, _np_astype, [anything, dtype_args])
case("isdtype", xp.isdtype, np.isdtype,
     [dtype_args, st.one_of(st.sampled_from(["bool", "integral", "numeric", "real floating",
                                             "bogus", ("integral", "bogus"), ("bool", xp.int8)]),
                            dtype_args)])
case("can_cast", xp.can_cast, None, [st.one_of(dtype_args, arrays()), dtype_args])
case("result_type", xp.result_type, None, [anything, anything])
case("finfo", xp.finfo, None, [st.one_of(dtype_args, arrays())])
case("iinfo", xp.iinfo, None, [st.one_of(dtype_args, arrays())])
case("take", xp.take, np.take,
     [anything, st.one_of(arrays(st.sampled_from([xp.int64, xp.int8, xp.uint16, xp.float64]),
                                 st.sampled_from([(0,), (2,), (3,), (2, 2)])), ints, junk)],
     axis=st.one_of(st.none(), axis))
case("fft", xp.fft.fft, np.fft.fft, [anything], n=st.one_of(st.none(), st.integers(-1, 5), junk),
     axis=axis)
case("rfft", xp.fft.rfft, np.fft.rfft, [anything], axis=axis)
case("fftn", xp.fft.fftn, np.fft.fftn, [anything], axes=axes)
case("fftshift", xp.fft.fftshift, np.fft.fftshift, [anything], axes=axes)
case("fftfreq", lambda n, **k: xp.fft.fftfreq(n, device=DEVICE, **k), np.fft.fftfreq,
     [st.one_of(st.integers(-1, 6), junk)], d=st.one_of(st.sampled_from([1.0, 0.5, 2]), junk))
case("zeros", lambda s, **k: xp.zeros(s, device=DEVICE, **k), np.zeros, [shapes],
     dtype=st.one_of(st.none(), dtype_args))
case("asarray", lambda v: xp.asarray(v, device=DEVICE), np.asarray,
     [st.one_of(st.lists(st.integers(-3, 3), max_size=4), st.lists(st.floats(-2, 2), max_size=3),
                st.lists(st.lists(st.integers(0, 2), min_size=2, max_size=2), max_size=3), ints, junk)])
case("matmul", xp.matmul, np.matmul, [arrays(), anything])
case("vector_norm", xp.linalg.vector_norm, None, [anything], axis=axes)


# --- the checks -----------------------------------------------------------------------------
def _to_xp(v):
    if isinstance(v, Arr):
        return v.x
    if isinstance(v, (list, tuple)) and any(isinstance(e, Arr) for e in v):
        return type(v)(_to_xp(e) for e in v)
    return v


def _to_np(v):
    if isinstance(v, Arr):
        return v.np
    if isinstance(v, (list, tuple)) and any(isinstance(e, Arr) for e in v):
        return type(v)(_to_np(e) for e in v)
    return v


def _standard_fixes(name, args, expected):
    """Whether NumPy's answer is the standard's for this call (so arrayx must equal it): a cast
    that overflows or drops values (NaN to int, 300 to int8) is implementation-defined."""
    if name == "astype":
        src = args[0].np.dtype
        return src.kind == "b" or np.can_cast(src, expected.dtype, "safe")
    return True


#: Functions whose floating results depend on the order of a sum (tolerance by the terms' size).
ACCUMULATING = frozenset(("sum", "prod", "mean", "var", "std", "cumulative_sum", "matmul", "fft",
                          "rfft", "fftn", "vector_norm"))


def _compare(name, got, expected, args):
    if isinstance(expected, np.ndarray) or isinstance(expected, np.generic):
        assert isinstance(got, xp.Array), f"{name}: got {type(got).__name__}, NumPy gave an array"
        expected = np.asarray(expected)
        if not _standard_fixes(name, args, expected):
            return
        g = to_numpy(got)
        assert g.shape == expected.shape, f"{name}: shape {g.shape} != NumPy's {expected.shape}"
        assert g.dtype == expected.dtype, f"{name}: dtype {g.dtype} != NumPy's {expected.dtype}"
        if g.dtype.kind in "fc":
            tol = 1e-5 if g.dtype in (np.float32, np.complex64) else 1e-12
            atol = tol
            if name in ACCUMULATING:
                # A GPU sums in another order than NumPy: the error scales with the terms' size.
                with np.errstate(all="ignore"):
                    terms = np.abs(np.concatenate([a.np.ravel().astype(np.complex128) for a in args
                                                   if isinstance(a, Arr)] or [np.zeros(1)]))
                finite = terms[np.isfinite(terms)]
                atol = tol * 10 * (float(np.sum(finite) ** (2 if name in ("var", "std", "prod") else 1))
                                   if finite.size else 1.0) + tol
            np.testing.assert_allclose(g, expected, rtol=tol * 10 if name in ACCUMULATING else tol,
                                       atol=atol, equal_nan=True,
                                       err_msg=f"{name}: values differ from NumPy's")
        else:
            np.testing.assert_array_equal(g, expected, err_msg=f"{name}: values differ from NumPy's")
    elif isinstance(expected, (tuple, list)) and all(isinstance(e, (np.ndarray, np.generic)) for e in expected):
        assert len(got) == len(expected), f"{name}: {len(got)} results, NumPy {len(expected)}"
        for g, e in zip(got, expected):
            _compare(name, g, e, args)
    else:
        assert got == expected, f"{name}: {got!r} != NumPy's {expected!r}"


def _skip_compare(name, args, kwargs):
    """Calls where NumPy deliberately differs from the standard (so only cleanliness counts)."""
    nps = [a.np for a in args if isinstance(a, Arr)]
    if name in ("max", "min") and nps and nps[0].dtype.kind == "c":
        return True  # NumPy orders complex numbers; the standard leaves them unordered
    if name in ("sort", "argsort") and nps and nps[0].dtype.kind == "c":
        return True
    if name == "squeeze" and kwargs.get("axis") is None:
        return True  # the standard's axis is required; NumPy squeezes every size-1 axis
    if name in ("add", "subtract", "multiply") and any(a.dtype.kind == "b" for a in nps):
        return True  # NumPy's bool arithmetic is logical; the standard refuses it
    if any(isinstance(a, np.generic) for a in args):
        # np.float64 is a Python float: arrayx mixes it in weakly, as the standard's Python
        # scalars (float32 + np.float64(1) is float32); NumPy 2 promotes it strongly (float64).
        return True
    if name in ACCUMULATING and any(a.dtype.kind == "c" and not np.isfinite(a).all() for a in nps):
        return True  # complex infinities through a sum or product: order-dependent, unspecified
    if name in ("fft", "rfft", "fftn") and any(a.dtype.kind in "fc" and not np.isfinite(a).all()
                                               for a in nps):
        return True  # which outputs an infinity turns into NaN depends on the FFT's algorithm
    if name in ("var", "std") and nps:
        # The standard gives NaN when N - correction <= 0; NumPy gives inf or NaN
        a, axis = nps[0], kwargs.get("axis")
        axes = range(a.ndim) if axis is None else axis if isinstance(axis, (tuple, list)) else (axis,)
        correction = kwargs.get("correction", 0)
        return not isinstance(correction, int) or \
            math.prod(a.shape[i] for i in axes if isinstance(i, int) and -a.ndim <= i < a.ndim) <= correction
    if name == "fftn" and nps and (nps[0].ndim == 0 or kwargs.get("axes") in ((), [])):
        return True  # nothing transformed: NumPy returns the input's dtype, the standard complex
    return False


@FUZZ
@given(data=st.data())
def test_fuzz_namespace(data):
    name, fx, fn, strategy = data.draw(st.sampled_from(CASES), label="function")
    args, kwargs = data.draw(strategy, label="arguments")
    try:
        with np.errstate(all="ignore"):
            got = fx(*map(_to_xp, args), **{k: _to_xp(v) for k, v in kwargs.items()})
    except CLEAN:
        return
    except NotImplementedError as e:
        pytest.fail(f"{name}: NotImplementedError {e}")
    if fn is None or _skip_compare(name, args, kwargs):
        return
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = fn(*map(_to_np, args), **{k: _to_np(v) for k, v in kwargs.items()})
    except Exception:
        return  # NumPy refuses what arrayx accepts: an extension, nothing to compare
    _compare(name, got, expected, args)


# --- crash-prone calls, in one subprocess ---------------------------------------------------
# Sizes no machine can hold: 2**48 elements exceed a 47-bit user address space whatever the
# dtype (smaller ones, 2**31 float64 say, are allocations a large host may grant).
HUGE = [2**48, 2**62, 2**63 - 1, 2**63, 2**64, -2**63]
huge = st.sampled_from(HUGE)

#: Source snippets (x: a small array, of the dtype drawn) whose arguments hold huge sizes.
CRASH_PRONE = [
    ("repeat", "xp.repeat(x, {h})"),
    ("repeat", "xp.repeat(x, {h}, axis=0)"),
    ("repeat", "xp.repeat(x, xp.asarray([{h}] * x.shape[0], dtype=xp.uint64), axis=0)"),
    ("repeat", "xp.repeat(x, xp.asarray([{h} // 2 + 1] * x.shape[0], dtype=xp.int64), axis=0)"),
    ("tile", "xp.tile(x, ({h},))"),
    ("tile", "xp.tile(x, ({h}, {h}))"),
    ("tile", "xp.tile(x, (2**31, {h} // 2**31 + 1))"),
    ("broadcast_to", "xp.broadcast_to(x, ({h}, {h}) + x.shape)"),
    ("reshape", "xp.reshape(x, ({h}, -1))"),
    ("zeros", "xp.zeros(({h}, {h}), dtype=x.dtype)"),
    ("zeros", "xp.zeros({h}, dtype=x.dtype)"),
    ("full", "xp.full(({h}, 2), 1, dtype=x.dtype)"),
    ("ones", "xp.ones(({h}, {h}, {h}))"),
    ("empty", "xp.empty(({h}, 4))"),
    ("eye", "xp.eye({h})"),
    ("arange", "xp.arange({h})"),
    ("linspace", "xp.linspace(0, 1, {h})"),
    ("asarray", "xp.asarray(range({h}))"),
]

_RUNNER = textwrap.dedent("""
    import sys
    import arrayx as xp
    CLEAN = (TypeError, ValueError, IndexError, MemoryError, OverflowError)
    for line in sys.stdin:
        i, shape, dtype, src = line.rstrip("\\n").split("\\t")
        print(f"start {i}", flush=True)
        x = xp.ones(eval(shape), dtype=getattr(xp, dtype))
        try:
            r = eval(src)
            outcome = f"result {getattr(r, 'shape', None)}"
        except CLEAN as e:
            outcome = f"clean {type(e).__name__}"
        except BaseException as e:
            outcome = f"unclean {type(e).__name__}: {e}"
        print(f"end {i} {outcome}", flush=True)
""")


def _crash_prone_cases():
    cases = []

    @settings(max_examples=max(50, EXAMPLES // 4), derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(CRASH_PRONE), huge, st.sampled_from([(1,), (3,), (2, 2), (0,)]),
           st.sampled_from(["int8", "float64", "complex128", "bool"]))
    def collect(snippet, h, shape, dtype):
        cases.append((snippet[0], repr(shape), dtype, snippet[1].format(h=h)))

    collect()
    return list(dict.fromkeys(cases))


def test_fuzz_crash_prone_in_subprocess():
    cases = _crash_prone_cases()
    stdin = "".join(f"{i}\t{shape}\t{dtype}\t{src}\n" for i, (_, shape, dtype, src) in enumerate(cases))
    try:
        proc = run_python("-c", _RUNNER, input=stdin, timeout=120 + 0.5 * len(cases),
                          ARRAYX_DEVICE=str(DEVICE))
        out, err, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc = (e.stdout or b"").decode(), (e.stderr or b"").decode(), "a timeout (hang)"
    ended = {}
    started = None
    for line in out.splitlines():
        kind, i, *rest = line.split(" ", 2)
        if kind == "start":
            started = int(i)
        elif kind == "end":
            ended[int(i)] = rest[0] if rest else ""
    problems = []
    for i, (name, shape, dtype, src) in enumerate(cases):
        outcome = ended.get(i)
        if outcome is None:
            if i == started:
                problems.append((name, f"{src} with x=ones({shape}, {dtype}): process ended "
                                       f"({rc}) inside this call"))
            break
        if outcome.startswith("unclean"):
            problems.append((name, f"{src} with x=ones({shape}, {dtype}): {outcome}"))
        elif outcome.startswith("result") and math.prod(eval(outcome.split(" ", 1)[1]) or ()) > 2**40:
            problems.append((name, f"{src}: accepted, shape {outcome}"))
    assert not problems, "\n".join(f"{n}: {p}" for n, p in problems[:20])
    assert len(ended) == len(cases), f"subprocess stopped early ({rc}): {err[-2000:]}"
