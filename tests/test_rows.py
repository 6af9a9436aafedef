"""The fused row functions beyond the standard (softmax, log_softmax, logsumexp at the top level;
arrayx.nn.layer_norm and rms_norm) against SciPy's special.softmax/log_softmax/logsumexp and
float64 NumPy references: random rows of many lengths (on CUDA they cover the kernel's layouts:
several short rows a block, a row in registers, long rows read twice), large magnitudes,
NaN and infinities, rows of length 1 and 0, empty batches, 0-d input, strided and offset views,
axes that are not the last, weight/bias broadcasting and promotion, and bad input."""

import numpy as np
import pytest
from scipy import special

import arrayx as xp
from conftest import assert_allclose, to_numpy, upcast

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FLOATS = ["float32", "float64"]
# (rtol, atol) of results of order 1 computed in the dtype
TOL = {"float32": (3e-5, 3e-6), "float64": (1e-12, 1e-14)}
# row lengths: 1, short rows several a block, a warp's row, a block's row in registers, past
# the registers (read twice), odd lengths (no 16-byte vectors)
LENGTHS = [1, 3, 16, 33, 128, 1000, 1027, 4096, 8195, 20000]
ROW_FUNCTIONS = ["softmax", "log_softmax", "logsumexp"]
SPECIAL_ROWS = [[-np.inf, -np.inf], [np.inf, 1.0], [-np.inf, 1.0], [np.inf, -np.inf],
                [np.nan, 1.0], [np.inf, np.inf], [1e4, 1e4], [-np.inf, np.nan], [0.0, -0.0],
                [1.0, np.inf, 2.0, -np.inf]]


def rows_data(rng, dtype, shape, scale=3.0, offset=0.0):
    return (offset + scale * rng.standard_normal(shape)).astype(dtype)


# --- references (float64) ------------------------------------------------------------------

def reference(name, h, axis=-1, weight=None, bias=None, eps=None, keepdims=False):
    with np.errstate(all="ignore"):
        h = upcast(h)
        if name == "softmax":
            return special.softmax(h, axis=axis)
        if name == "log_softmax":
            return special.log_softmax(h, axis=axis)
        if name == "logsumexp":
            return special.logsumexp(h, axis=axis, keepdims=keepdims)
        along = [1] * h.ndim
        along[axis] = h.shape[axis]
        if name == "layer_norm":
            # shift-invariant: minus the first element of the row (exact for rows of one sign
            # and scale, such as 1e8 + noise), then long double, so that the reference's own
            # mean is not off by float64's rounding of 1e8
            h = (h - np.take(h, [0], axis=axis)).astype(np.longdouble)
            m = h.mean(axis=axis, keepdims=True)
            out = (h - m) / np.sqrt(((h - m) ** 2).mean(axis=axis, keepdims=True) + eps)
        else:
            out = h / np.sqrt((h * h).mean(axis=axis, keepdims=True) + eps)
        out = out.astype(np.float64)
        if weight is not None:
            out = out * upcast(np.broadcast_to(weight, (h.shape[axis],))).reshape(along)
        if bias is not None:
            out = out + upcast(np.broadcast_to(bias, (h.shape[axis],))).reshape(along)
        return out


def compute(name, x, **kw):
    if name in ("layer_norm", "rms_norm"):
        return getattr(xp.nn, name)(x, **kw)
    return getattr(xp, name)(x, **kw)


def check(got, expected, dtype, scale=1.0):
    rtol, atol = TOL[dtype]
    assert_allclose(got, expected, dtype=dtype, rtol=rtol, atol=atol * scale)


# --- softmax, log_softmax, logsumexp -------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("k", LENGTHS)
@pytest.mark.parametrize("name", ROW_FUNCTIONS)
def test_row_functions_match_scipy(rng, name, dtype, k):
    h = rows_data(rng, dtype, (7, k))
    got = compute(name, xp.asarray(h))
    check(got, reference(name, h), dtype, scale=np.log(k) + 1 if name != "softmax" else 1.0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ROW_FUNCTIONS)
def test_many_short_rows(rng, name, dtype):
    h = rows_data(rng, dtype, (1000, 16))
    check(compute(name, xp.asarray(h)), reference(name, h), dtype, scale=4.0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ROW_FUNCTIONS)
def test_non_finite_rows_match_scipy(name, dtype):
    """Each special row alone, in one batch beside finite rows (a row's NaN or infinity must
    not leak into its neighbours), and inside long rows."""
    for row in SPECIAL_ROWS:
        h = np.array([row], dtype=dtype)
        assert_allclose(compute(name, xp.asarray(h)), reference(name, h), dtype=dtype)
    batch = np.zeros((len(SPECIAL_ROWS) * 2, 4), dtype=dtype)
    for i, row in enumerate(SPECIAL_ROWS):
        batch[2 * i, :len(row)] = row
        batch[2 * i, len(row):] = -np.inf  # padding that changes no result
        batch[2 * i + 1] = np.arange(4)
    assert_allclose(compute(name, xp.asarray(batch)), reference(name, batch), dtype=dtype)
    for k in (1000, 20000):
        long = np.tile(np.linspace(-3, 3, k, dtype=dtype), (4, 1))
        long[0, k // 3] = np.nan
        long[1, k - 1] = np.inf
        long[2, :] = -np.inf
        long[3, 5] = -np.inf
        assert_allclose(compute(name, xp.asarray(long)), reference(name, long), dtype=dtype,
                        rtol=TOL[dtype][0], atol=TOL[dtype][1])


@pytest.mark.parametrize("dtype", FLOATS)
def test_large_magnitudes(dtype):
    x = xp.asarray(np.array([[1e4, 1e4]], dtype=dtype))
    assert_allclose(xp.softmax(x), np.array([[0.5, 0.5]]), dtype=dtype)
    assert_allclose(xp.log_softmax(x), np.full((1, 2), -np.log(2)), dtype=dtype)
    assert_allclose(xp.logsumexp(x), np.array([1e4 + np.log(2)]), dtype=dtype)
    big = np.array([[1e30, 1e30, -1e30], [-1e30, -1e30, 0.0], [3e38, 3e38, 1.0]], dtype=dtype)
    for name in ROW_FUNCTIONS:
        assert_allclose(compute(name, xp.asarray(big)), reference(name, big), dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("k", [7, 4096, 20000])
@pytest.mark.parametrize("name", ROW_FUNCTIONS)
def test_offset_rows_keep_their_precision(rng, name, dtype, k):
    """Rows around 1e4 (float32: spacing 1e-3) and -1e4: exp of the shifted values, not of x."""
    h = rows_data(rng, dtype, (4, k), scale=2.0, offset=1e4)
    h[1::2] -= 2e4
    check(compute(name, xp.asarray(h)), reference(name, h), dtype, scale=10.0)


@pytest.mark.parametrize("name", ROW_FUNCTIONS)
@pytest.mark.parametrize("shape", [(3, 0), (0, 5), (0, 0), (2, 0, 3)])
def test_empty(name, shape):
    h = np.zeros(shape, dtype="float32")
    got = compute(name, xp.asarray(h))
    expected = reference(name, h) if name == "logsumexp" else h
    assert_allclose(got, expected, dtype="float32")


def test_logsumexp_of_empty_rows_along_other_axes():
    h = np.zeros((0, 5), dtype="float64")
    assert_allclose(xp.logsumexp(xp.asarray(h), axis=0), np.full(5, -np.inf), dtype="float64")
    assert_allclose(xp.logsumexp(xp.asarray(h), axis=None, keepdims=True),
                    np.full((1, 1), -np.inf), dtype="float64")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("value", [3.0, -0.0, np.inf, -np.inf, np.nan])
def test_zero_d_is_a_row_of_one(dtype, value):
    h = np.array(value, dtype=dtype)
    x = xp.asarray(h)
    for name in ROW_FUNCTIONS:
        for axis in (-1, 0):
            assert_allclose(compute(name, x, axis=axis), reference(name, h, axis=None),
                            dtype=dtype)
    assert_allclose(xp.logsumexp(x, axis=None), h, dtype=dtype)
    assert_allclose(xp.logsumexp(x, axis=()), h, dtype=dtype)
    with pytest.raises(IndexError):
        xp.softmax(x, axis=1)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ROW_FUNCTIONS)
def test_views(rng, name, dtype):
    """Offset, strided, reversed and transposed views (rows no longer 16-byte aligned, or not
    contiguous) give the results of their copies."""
    base = rows_data(rng, dtype, (9, 4100))
    x = xp.asarray(base)
    views = {"offset rows": (x[1:, 3:], base[1:, 3:]),
             "column slice": (x[2:7, 4:1028], base[2:7, 4:1028]),
             "strided rows": (x[::2, ::3], base[::2, ::3]),
             "reversed": (x[::-1, ::-1], base[::-1, ::-1]),
             "batch stride": (x[::3, :128], base[::3, :128]),
             "transposed": (x[:, :40].T, base[:, :40].T)}
    for label, (view, h) in views.items():
        check(compute(name, view), reference(name, h), dtype, scale=10.0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [0, 1, -3])
def test_softmax_along_other_axes(rng, name, dtype, axis):
    h = rows_data(rng, dtype, (5, 6, 130))
    check(compute(name, xp.asarray(h), axis=axis), reference(name, h, axis=axis), dtype,
          scale=4.0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2), (2, 0), (0, 1, 2), None, ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_axes(rng, dtype, axis, keepdims):
    h = rows_data(rng, dtype, (4, 5, 67))
    got = xp.logsumexp(xp.asarray(h), axis=axis, keepdims=keepdims)
    check(got, reference("logsumexp", h, axis=axis, keepdims=keepdims), dtype, scale=10.0)


def test_results_keep_the_dtype(rng):
    for dtype in FLOATS:
        x = xp.asarray(rows_data(rng, dtype, (2, 3)))
        for name in ROW_FUNCTIONS + ["layer_norm", "rms_norm"]:
            assert compute(name, x).dtype == np.dtype(dtype)


# --- layer_norm, rms_norm ---------------------------------------------------------------------

def _affine(rng, dtype, k):
    return (rng.standard_normal(k).astype(dtype), rng.standard_normal(k).astype(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("k", LENGTHS)
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm(rng, dtype, k, affine):
    h = rows_data(rng, dtype, (6, k), offset=1.5)
    w, b = _affine(rng, dtype, k)
    kw = {"weight": xp.asarray(w) if affine != "none" else None,
          "bias": xp.asarray(b) if affine == "both" else None}
    got = xp.nn.layer_norm(xp.asarray(h), **kw)
    expected = reference("layer_norm", h, weight=w if affine != "none" else None,
                         bias=b if affine == "both" else None, eps=1e-5)
    check(got, expected, dtype, scale=10.0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("k", LENGTHS)
@pytest.mark.parametrize("weighted", [False, True])
def test_rms_norm(rng, dtype, k, weighted):
    h = rows_data(rng, dtype, (6, k), offset=-0.5)
    w, _ = _affine(rng, dtype, k)
    got = xp.nn.rms_norm(xp.asarray(h), xp.asarray(w) if weighted else None)
    expected = reference("rms_norm", h, weight=w if weighted else None, eps=1e-6)
    check(got, expected, dtype, scale=10.0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("k", [5, 4096, 20000])
def test_norms_of_offset_rows(rng, dtype, k):
    """Rows of 1e4 + noise (float32: spacing 1e-3, variance 1): the mean keeps its precision and
    the variance is not E[x^2] - E[x]^2 (which would lose every digit)."""
    h = rows_data(rng, dtype, (4, k), scale=1.0, offset=1e4)
    h[3] = rows_data(rng, dtype, k, scale=1.0, offset=-3e4 if dtype == "float32" else -1e8)
    check(xp.nn.layer_norm(xp.asarray(h)), reference("layer_norm", h, eps=1e-5), dtype,
          scale=30.0)
    check(xp.nn.rms_norm(xp.asarray(h)), reference("rms_norm", h, eps=1e-6), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_norms_of_non_finite_and_constant_rows(dtype):
    h = np.array([[1.0, np.nan, 2.0, 3.0], [np.inf, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, -np.inf],
                  [5.0, 5.0, 5.0, 5.0], [0.0, 0.0, 0.0, 0.0], [-0.0, 1e-30, -1e-30, 0.0]],
                 dtype=dtype)
    x = xp.asarray(h)
    assert_allclose(xp.nn.layer_norm(x), reference("layer_norm", h, eps=1e-5), dtype=dtype)
    assert_allclose(xp.nn.rms_norm(x), reference("rms_norm", h, eps=1e-6), dtype=dtype)
    assert_allclose(xp.nn.layer_norm(x, eps=0.0)[3:5], np.full((2, 4), np.nan), dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_norms_along_other_axes_and_views(rng, dtype):
    h = rows_data(rng, dtype, (5, 300, 7))
    w, b = _affine(rng, dtype, 300)
    x = xp.asarray(h)
    check(xp.nn.layer_norm(x, xp.asarray(w), xp.asarray(b), axis=1),
          reference("layer_norm", h, axis=1, weight=w, bias=b, eps=1e-5), dtype, scale=10.0)
    check(xp.nn.rms_norm(x, xp.asarray(w), axis=-2, eps=1e-3),
          reference("rms_norm", h, axis=1, weight=w, eps=1e-3), dtype, scale=10.0)
    view, hv = x[1:, 2:, 3], h[1:, 2:, 3]
    check(xp.nn.layer_norm(view, eps=0.5), reference("layer_norm", hv, eps=0.5), dtype,
          scale=10.0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_weight_and_bias_broadcast_and_views(rng, dtype):
    h = rows_data(rng, dtype, (4, 64))
    x = xp.asarray(h)
    w2 = rows_data(rng, dtype, (2, 130))
    cases = [(np.array(2.0, dtype), np.array(-1.0, dtype)),
             (np.array([2.0], dtype), np.array([0.5], dtype)),
             (w2[0, 1:65], w2[1, :128:2])]  # offset and strided 1-D views
    for w, b in cases:
        if w.ndim == 1 and w.size == 64:
            wx, bx = xp.asarray(w2)[0, 1:65], xp.asarray(w2)[1, :128:2]
        else:
            wx, bx = xp.asarray(w), xp.asarray(b)
        check(xp.nn.layer_norm(x, wx, bx), reference("layer_norm", h, weight=w, bias=b, eps=1e-5),
              dtype, scale=10.0)
        check(xp.nn.rms_norm(x, wx), reference("rms_norm", h, weight=w, eps=1e-6), dtype,
              scale=10.0)


def test_weight_promotes_the_result(rng):
    h = rows_data(rng, "float32", (3, 10))
    w = rng.standard_normal(10)
    got = xp.nn.rms_norm(xp.asarray(h), xp.asarray(w))
    assert got.dtype == xp.float64
    check(got, reference("rms_norm", h.astype(np.float64), weight=w, eps=1e-6), "float64")
    got = xp.nn.layer_norm(xp.asarray(h), None, xp.asarray(w.astype(np.float32)))
    assert got.dtype == xp.float32


@pytest.mark.parametrize("dtype", FLOATS)
def test_norms_of_short_empty_and_zero_d_rows(dtype):
    one = np.array([[3.0], [-2.0], [np.inf]], dtype=dtype)
    x = xp.asarray(one)
    assert_allclose(xp.nn.layer_norm(x, bias=xp.asarray(np.array([0.5], dtype))),
                    reference("layer_norm", one, bias=np.array([0.5]), eps=1e-5), dtype=dtype)
    assert_allclose(xp.nn.rms_norm(x), reference("rms_norm", one, eps=1e-6), dtype=dtype)
    for shape in [(3, 0), (0, 4)]:
        e = xp.asarray(np.zeros(shape, dtype))
        assert xp.nn.layer_norm(e).shape == shape and xp.nn.rms_norm(e).shape == shape
    z = xp.asarray(np.array(2.0, dtype))
    assert_allclose(xp.nn.layer_norm(z, xp.asarray(np.array(3.0, dtype)),
                                     xp.asarray(np.array(1.0, dtype))), np.array(1.0), dtype=dtype)
    assert_allclose(xp.nn.rms_norm(z, eps=0.0), np.array(1.0), dtype=dtype)


# --- bad input ------------------------------------------------------------------------------

def test_bad_input():
    x = xp.asarray(np.ones((3, 4), dtype=np.float32))
    for name in ROW_FUNCTIONS + ["layer_norm", "rms_norm"]:
        with pytest.raises(TypeError):
            compute(name, xp.asarray(np.ones((3, 4), dtype=np.int32)))
        with pytest.raises(TypeError):
            compute(name, xp.asarray(np.ones((3, 4), dtype=np.complex64)))
        with pytest.raises(TypeError):
            compute(name, np.ones((3, 4)))
        with pytest.raises(IndexError):
            compute(name, x, axis=2)
        with pytest.raises(TypeError):
            compute(name, x, axis=1.0)
    for name in ["softmax", "log_softmax", "layer_norm", "rms_norm"]:
        with pytest.raises(TypeError):
            compute(name, x, axis=(0, 1))
    with pytest.raises(ValueError):
        xp.logsumexp(x, axis=(1, -1))
    with pytest.raises(IndexError):
        xp.logsumexp(x, axis=(0, 5))
    w = xp.asarray(np.ones(4, dtype=np.float32))
    for fn in (xp.nn.layer_norm, xp.nn.rms_norm):
        with pytest.raises(ValueError):
            fn(x, xp.asarray(np.ones(3, dtype=np.float32)))
        with pytest.raises(ValueError):
            fn(x, xp.asarray(np.ones((1, 4), dtype=np.float32)))
        with pytest.raises(TypeError):
            fn(x, xp.asarray(np.ones(4, dtype=np.int64)))
        with pytest.raises(TypeError):
            fn(x, np.ones(4))
        for eps in ("0.1", True, None, xp.asarray(0.1)):
            with pytest.raises(TypeError):
                fn(x, w, eps=eps)
        for eps in (-1e-5, float("nan"), float("inf")):
            with pytest.raises(ValueError):
                fn(x, w, eps=eps)
    with pytest.raises(ValueError):
        xp.nn.layer_norm(x, w, xp.asarray(np.ones(5, dtype=np.float32)))
    with pytest.raises(TypeError):
        xp.nn.layer_norm(x, w, xp.asarray(np.ones(4, dtype=bool)))
    assert to_numpy(xp.nn.rms_norm(x, w, eps=np.float32(0.5))).dtype == np.float32
