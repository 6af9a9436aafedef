"""The keys the CUDA sort, unique and isin compute, checked on the CPU (no GPU, runs in CI).

The elementwise Ops of arrayx/cuda/kernels/sort/ (keys.py: NaN canonicalisation, row and position;
sets.py: radix words) are
compiled with numba for the CPU and checked on every special value: radix words must order the
values as NumPy's stable sort does (NaN last, -0.0 == +0.0), equal values must get equal words
and NaNs NAN_WORD only. A stable NumPy sort of the words stands in for CUB's radix sort.
"""

import re

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from arrayx.cuda.kernels.elementwise import ops as ops  # noqa: E402
from arrayx.cuda.kernels.sort import keys, sets  # noqa: E402

REAL = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                              "uint32", "uint64", "float32", "float64")]


def _apply(op, *inputs):
    args = ", ".join(f"a{k}" for k in range(len(inputs)))
    expr = re.sub(r"\bx(\d)\b", r"a\1[i]", op.expr)
    src = f"def apply(out, {args}):\n    for i in range(out.shape[0]):\n        out[i] = {expr}\n"
    ns = dict(ops.host_namespace())
    exec(src, ns)
    out = np.empty(inputs[0].shape, op.out)
    numba.njit(ns["apply"])(out, *inputs)
    return out


def values(dt, rng):
    if dt.kind == "b":
        return np.array([True, False, False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        special = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=dt)
        return np.concatenate([special, rng.integers(info.min, info.max, 200, dtype=dt,
                                                     endpoint=True)])
    fi = np.finfo(dt)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, fi.max, -fi.max, fi.tiny,
                        -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal, 1.0, -1.0], dt)
    u = keys.unsigned(dt)
    payload_nans = np.array([0x7f800001, 0xffc00001, 0x7fffffff], np.uint32) if dt == np.float32 \
        else np.array([0x7ff0000000000001, 0xfff8000000000001], np.uint64)
    return np.concatenate([special, payload_nans.astype(u).view(dt),
                           rng.normal(size=200).astype(dt), rng.integers(-3, 3, 50).astype(dt)])


def _words(a):
    u = keys.unsigned(a.dtype)
    return _apply(sets.radix_word_op(a.dtype), a.view(u))


@pytest.mark.parametrize("dt", REAL, ids=str)
def test_radix_words_order_like_numpy(dt, rng):
    a = values(dt, rng)
    w = _words(a)
    assert w.dtype == keys.unsigned(dt)
    order = np.argsort(w, kind="stable")
    np.testing.assert_array_equal(a[order], np.sort(a, kind="stable"))
    np.testing.assert_array_equal(order, np.argsort(a, kind="stable"))
    if dt.kind == "f":
        isnan = np.isnan(a)
        assert (w[isnan] == sets.nan_word(dt)).all() and (w[~isnan] != sets.nan_word(dt)).all()
    # equal values <-> equal words
    same_value = a[:, None] == a[None, :]
    np.testing.assert_array_equal(same_value, w[:, None] == w[None, :] if dt.kind != "f" else
                                  (w[:, None] == w[None, :]) & ~np.isnan(a)[:, None])


@pytest.mark.parametrize("dt", [np.dtype("complex64"), np.dtype("complex128")], ids=str)
def test_complex_words_are_lexicographic(dt, rng):
    real = np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)
    parts = values(real, rng)[:40]
    re_, im = np.meshgrid(parts, parts)
    a = np.stack([re_.ravel(), im.ravel()], axis=1).reshape(-1).view(dt)
    u = keys.unsigned(real)
    pair = a.view(real).reshape(-1, 2).view(u)
    if dt == np.complex64:
        words = [_apply(sets.radix_word_op(dt), pair[:, 0].copy(), pair[:, 1].copy())]
    else:
        words = [_apply(sets.radix_word_op(real), pair[:, k].copy()) for k in (0, 1)]
    order = np.lexsort(words[::-1])
    # NumPy's lexsort of (real, imag) sorts each part NaN last, -0.0 == +0.0, stably
    np.testing.assert_array_equal(order, np.lexsort((a.imag, a.real)))
    nan_any = np.isnan(a.real) | np.isnan(a.imag)
    cond = sets.nan_test(dt, ["w0", "w1"])
    flagged = np.array([eval(cond, {"uint64": np.uint64, "uint32": np.uint32},
                             {"w0": words[0][i], "w1": words[-1][i]}) for i in range(a.size)])
    np.testing.assert_array_equal(flagged, nan_any)


@pytest.mark.parametrize("dt", [np.dtype("float32"), np.dtype("float64")], ids=str)
def test_nan_canonicalisation(dt, rng):
    a = values(dt, rng)
    u = keys.unsigned(dt)
    out = _apply(keys.nan_canon_op(dt), a.view(u)).view(dt)
    isnan = np.isnan(a)
    assert np.isnan(out[isnan]).all() and not np.signbit(out[isnan]).any()
    assert len(set(out[isnan].view(u).tolist())) == 1
    np.testing.assert_array_equal(out[~isnan].view(u), a[~isnan].view(u))  # -0.0 kept


@pytest.mark.parametrize("idx_dt", [np.dtype("int32"), np.dtype("int64")], ids=str)
def test_row_and_position_ops(idx_dt):
    flat = np.arange(0, 10_000, 7, dtype=idx_dt)
    k = np.full(flat.shape, 13, np.uint64)
    np.testing.assert_array_equal(_apply(keys.row_op(np.dtype(np.uint32)), flat, k), flat // 13)
    pos = _apply(keys.position_op(idx_dt), flat, k)
    assert pos.dtype == idx_dt
    np.testing.assert_array_equal(pos, flat % 13)
