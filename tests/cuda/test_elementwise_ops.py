"""The CUDA elementwise operations' semantics, checked on the CPU (no GPU, runs in CI).

Every Op of arrayx/cuda/kernels/elementwise/ops.py (the expression and helpers a CUDA kernel inlines) is
compiled with numba for the CPU, with libdevice mapped onto NumPy's math (host_namespace), and
compared with the CPU backend, the reference semantics, on every combination of special values:
NaN, +-inf, +-0, tiny, huge, overflow thresholds, integer limits, shift widths. The GPU runs the
same source through libdevice; tests/cuda/test_gpu.py and the namespace suite check that part.
"""

import itertools
import re

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from arrayx._elementwise_functions import BINARY_CATEGORY, UNARY_CATEGORY, unary_result_dtype  # noqa: E402
from arrayx.cpu import elementwise as cpu  # noqa: E402
from arrayx.cuda.kernels.elementwise import ops as ops  # noqa: E402

CATEGORY = {
    "numeric": "iufc", "floating-point": "fc", "real floating": "f", "real numeric": "iuf",
    "integer or boolean": "biu", "integral": "iu", "bool": "b", "any": "biufc",
}
DTYPES = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64", "float32", "float64", "complex64",
                                "complex128")]
_NS = None


def _namespace():
    global _NS
    if _NS is None:
        _NS = ops.host_namespace()
    return _NS


def host_function(op, n_inputs):
    """op evaluated elementwise over 1-D NumPy arrays, compiled by numba for the CPU."""
    args = ", ".join(f"a{k}" for k in range(n_inputs))
    expr = re.sub(r"\bx(\d)\b", r"a\1[i]", op.expr)
    body = ops.inner_source(op.helpers)
    if "_ipow" in op.helpers:
        body += "\n" + ops.ipow_source(op.out)
    src = f"def apply(out, {args}):\n{body}\n    for i in range(out.shape[0]):\n        out[i] = {expr}\n"
    ns = dict(_namespace())
    exec(src, ns)
    return numba.njit(error_model="numpy")(ns["apply"])


def special_values(dt):
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        bits = info.bits
        vals = {info.min, info.max, info.min + 1, info.max - 1, 0, 1, 2, 3, 7, bits - 1, bits,
                bits + 1, 100 % (info.max + 1)}
        if dt.kind == "i":
            vals |= {-1, -2, -3, -7, -bits}
        return np.array(sorted(v for v in vals if info.min <= v <= info.max), dtype=dt)
    real = np.dtype("float32") if dt in (np.float32, np.complex64) else np.dtype("float64")
    fi = np.finfo(real)
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.5, 3.0, 1e-30,
            -1e-30, 1e30, 100.0, -100.0, 0.75, float(fi.max), float(-fi.max), float(fi.tiny) / 4,
            30.0, -30.0, 89.0, 720.0, -720.0, 1000.0, np.pi / 2, 1.0 + float(fi.eps)]
    with np.errstate(over="ignore"):
        return np.array(vals, dtype=real)


def unary_inputs(dt):
    v = special_values(dt)
    if dt.kind != "c":
        return v
    re, im = np.meshgrid(v, v)
    return _complex(re.ravel(), im.ravel(), dt)


def _complex(re, im, dt):
    out = np.empty(re.shape, dt)
    out.real = re
    out.imag = im
    return out


def binary_inputs(dt, rng):
    v = unary_inputs(dt)
    if v.size ** 2 <= 20000:
        a, b = np.meshgrid(v, v)
        return a.ravel(), b.ravel()
    return rng.choice(v, 20000), rng.choice(v, 20000)


def close(got, expected, dt, exact):
    """NaN positions, infinities (with sign) equal; finite values equal (exact) or close."""
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if got.dtype.kind not in "fc":
        bad = got != expected
        assert not bad.any(), f"{got[bad][:8]} != {expected[bad][:8]}"
        return
    rtol = 1e-5 if got.dtype in (np.float32, np.complex64) else 1e-12
    parts = [(got, expected)] if got.dtype.kind == "f" else [(got.real, expected.real),
                                                             (got.imag, expected.imag)]
    for g, e in parts:
        gn, en = np.isnan(g), np.isnan(e)
        assert (gn == en).all(), f"NaN positions differ at {np.nonzero(gn != en)[0][:8]}"
        gi, ei = np.isinf(g), np.isinf(e)
        assert (gi == ei).all() and (g[gi] == e[ei]).all(), \
            f"infinities differ at {np.nonzero((gi != ei) | (np.where(gi, g, 0) != np.where(ei, e, 0)))[0][:8]}"
    finite = np.isfinite(expected) & np.isfinite(got)
    g, e = got[finite], expected[finite]
    if exact:
        assert (g == e).all(), f"{g[g != e][:8]} != {e[g != e][:8]}"
        return
    scale = np.abs(e)
    with np.errstate(all="ignore"):
        bad = ~(np.abs(g - e) <= rtol * scale + 1e-300 + (1e-37 if rtol > 1e-10 else 0))
    assert not bad.any(), f"not close: got {g[bad][:6]}, expected {e[bad][:6]}"


# Functions computed by the same libm/libdevice call on both sides are exact; the others are
# algorithms (complex functions, pow) whose rounding may differ.
_APPROX_UNARY = {"acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1",
                 "log", "log1p", "log2", "log10", "sin", "sinh", "sqrt", "tan", "tanh", "sign",
                 "reciprocal", "abs", "square"}


def _unary_cases():
    for name, cat in sorted(UNARY_CATEGORY.items()):
        for dt in DTYPES:
            if dt.kind in CATEGORY[cat] and not ops.is_identity_unary(name, dt) \
                    and ops.constant_unary(name, dt) is None:
                yield pytest.param(name, dt, id=f"{name}-{dt}")


@pytest.mark.parametrize("name, dt", list(_unary_cases()))
def test_unary_op_matches_cpu_backend(name, dt):
    x = unary_inputs(dt)
    out_dt = unary_result_dtype(name, dt)
    op = ops.unary_op(name, dt, out_dt)
    assert op.out == out_dt
    got = np.empty(x.shape, out_dt)
    host_function(op, 1)(got, x)
    expected = cpu.unary(name, x)
    close(got, expected, dt, exact=name not in _APPROX_UNARY)


def _binary_cases():
    for name, cat in sorted(BINARY_CATEGORY.items()):
        for dt in DTYPES:
            if dt.kind in CATEGORY[cat]:
                yield pytest.param(name, dt, id=f"{name}-{dt}")


@pytest.mark.parametrize("name, dt", list(_binary_cases()))
def test_binary_op_matches_cpu_backend(name, dt):
    rng = np.random.default_rng(7)
    a, b = binary_inputs(dt, rng)
    if name == "pow" and dt.kind == "i":
        keep = b >= 0  # NumPy refuses negative integer exponents (checked below)
        a, b = a[keep], b[keep]
    if name == "pow" and dt.kind == "c":
        # exp(b log a) overflows at a boundary that the C library's rounding decides
        keep = (np.abs(b.real) < 1e30) & (np.abs(b.imag) < 1e30) & ~(np.abs(a) < 1e-300)
        a, b = a[keep], b[keep]
    if name == "multiply" and dt == np.complex128:
        # host_namespace's fused multiply-add is exact only for products below 1e300
        keep = np.maximum(np.abs(a), np.abs(b)) < 1e150
        a, b = a[keep], b[keep]
    ct = ops.compute_dtype(name, dt)
    op = ops.binary_op(name, ct)
    got = np.empty(a.shape, op.out)
    host_function(op, 2)(got, a.astype(ct), b.astype(ct))
    expected = cpu.binary(name, a, b, dt)
    exact = not (dt.kind == "c" and name in ("divide", "pow", "multiply")) and \
        not (name in ("pow", "hypot", "logaddexp", "atan2") and dt.kind in "fc")
    close(got, expected, dt, exact)


@pytest.mark.parametrize("dt", [d for d in DTYPES if d.kind == "i"], ids=str)
def test_integer_pow_with_negative_exponent_returns(dt):
    op = ops.binary_op("pow", dt)
    a = np.array([1, -1, -1, 2, 0, -3], dt)
    b = np.array([-5, -3, -4, -1, -2, -7], dt)
    got = np.empty(a.shape, dt)
    host_function(op, 2)(got, a, b)
    assert got.tolist() == [1, -1, 1, 0, 0, 0]


@pytest.mark.parametrize("src, dst", [(s, d) for s in DTYPES for d in DTYPES if s != d and
                                      not (s.kind == "c" and d.kind not in "cb")],
                         ids=lambda d: str(d))
def test_cast_op_matches_numpy(src, dst):
    x = unary_inputs(src)
    if dst.kind in "iu" and src.kind in "fc":
        x = x[np.isfinite(x) & (np.abs(x) < 100)]  # out-of-range casts are unspecified
        if src.kind == "c":
            return
    op = ops.cast_op(src, dst)
    got = np.empty(x.shape, dst)
    host_function(op, 1)(got, x)
    with np.errstate(all="ignore"):
        expected = x.astype(dst)
    close(got, expected, src, exact=True)


@pytest.mark.parametrize("dt", [d for d in DTYPES if d.kind in "iuf"], ids=str)
def test_clip_and_where_ops(dt):
    rng = np.random.default_rng(3)
    v = special_values(dt)
    x, lo, hi = rng.choice(v, 500), rng.choice(v, 500), rng.choice(v, 500)
    got = np.empty(x.shape, dt)
    host_function(ops.clip_op(dt), 3)(got, x, lo, hi)
    with np.errstate(all="ignore"):
        close(got, np.minimum(np.maximum(x, lo), hi), dt, exact=True)
    cond = rng.random(500) < 0.5
    host_function(ops.where_op(dt), 3)(got, cond, x, lo)
    close(got, np.where(cond, x, lo), dt, exact=True)


def test_every_function_has_an_op_for_every_allowed_dtype():
    missing = []
    for name, cat in itertools.chain(UNARY_CATEGORY.items(), BINARY_CATEGORY.items()):
        for dt in DTYPES:
            if dt.kind not in CATEGORY[cat]:
                continue
            try:
                if name in UNARY_CATEGORY:
                    if not ops.is_identity_unary(name, dt) and ops.constant_unary(name, dt) is None:
                        ops.unary_op(name, dt, unary_result_dtype(name, dt))
                else:
                    ops.binary_op(name, ops.compute_dtype(name, dt))
            except KeyError:
                missing.append((name, str(dt)))
    assert not missing
