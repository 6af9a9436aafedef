"""Whole workloads (issue 18): the same array-API code on arrayx, CuPy and PyTorch in one process.

    python3 benchmarks/workloads_bench.py --out DIR [--only NAME,...] [--size large|small|both]
        [--quick] [--profile] [--device cuda:0|cpu] [--peers cupy,torch] [--reps 15]
        [--budget 0.6] [--deadline 340] [--list]

Three groups of cases, each written once against a namespace `xp` (arrayx itself; CuPy and
PyTorch through array_api_compat's namespaces; `--peers numpy` adds array_api_compat's NumPy,
which is how the script is exercised on a machine without a GPU, with `--device cpu`):

* sklearn: scikit-learn estimators and functions with `array_api_dispatch=True` (PCA with the
  full, randomized and covariance_eigh solvers, Ridge(solver="svd"), RidgeCV,
  LinearDiscriminantAnalysis, LogisticRegression(lbfgs), GaussianNB, StandardScaler,
  pairwise_distances, rbf_kernel, r2_score, accuracy_score), at a large size (200k x 32
  float64; 8192 x 64 float32 for the pairwise functions) and a small one (1000 x 16 float64).
  A case whose fitted attribute is not an array of the library's own namespace did not dispatch
  (scikit-learn converted to NumPy) and is recorded as 'not dispatched' rather than timed.
* program: softmax and layer norm over rows written from their parts, a k-means step, 50 steps
  of logistic-regression gradient descent, a 5-point stencil, a loop of 200 small
  `tanh(a*b+c)`, mean and std of 1000 x 16, `float(xp.sum(small))`, unique_values of 200k ints.
* op: the single operations those spend their time in (var over rows, row-broadcast subtract,
  offset and pitched slice adds, gemv both ways, X.T @ X, P @ P.T, inv, eigh, svd, sum, argmax,
  row and column sums); the memory-bound ones also as a fraction of the copy ceiling.

Timing: each case is built per library (data made on the host with NumPy, seeded, copied to the
device untimed), called `--warmup` times, then timed as wall-clock milliseconds of one call plus
a device sync (what a program sees: host work, launches, the GPU and the wait): median, min and
max of up to `--reps` calls, fewer when they would pass `--budget` seconds (at least 3). Op cases
on a GPU are also timed with CUDA events on the library's stream (the GPU time, as the kernel
families' benchmarks measure it); their fraction of the copy is the event time of arrayx's
device-to-device copy of the same bytes (read + written) over the op's event time. The ratio of
a case is arrayx's median over the best peer's; the geometric mean of the ratios is given per
group and overall. Each peer's result is compared with arrayx's (largest difference over the
largest value): a fast wrong result shows as a mismatch in the table. Host fallback is an error
unless `--fallback warn`: a case that left the GPU is recorded with the primitive it needed.
TF32 stays off in all three libraries (their defaults), so float32 products are full float32.

`--profile` (arrayx only) adds, per case, where the time of one call goes:
* namespace: each arrayx function, operator or method the workload called from outside arrayx
  (outermost calls only: a composite's inner calls count in it), with calls and host ms
  (wall-clock inside the call without a sync, so it includes any wait the call does itself,
  e.g. float() or a data-dependent size);
* primitives: each backend primitive (keyed with its operation name: `binary:subtract`) with
  calls, host ms as above, and synced ms: the same calls run again with a device sync before
  and after each primitive, so each one's GPU work runs alone and is charged to it (host +
  submission + GPU + the wait). synced - host approximates its GPU time: batched launches reach
  the GPU at the sync, so it counts their submission too; a launch sent at once overlaps the
  host time and is undercounted by that overlap;
* GPU event ms of the whole call against its wall ms (their gap is host time the GPU waited);
* cProfile: the arrayx functions with the most own host time per call (cProfile's own cost per
  function call inflates these; compare them with each other, not with the timings above).

Writes DIR/workloads-<date>.json, .md and (matplotlib importable) .png: arrayx / best peer per
case, log scale, a line at 1.0 (`--device cpu` writes workloads-cpu-<date>.*). `--quick` runs
the cases of issue 18's table with a shorter budget. Past `--deadline` seconds the cases left
are skipped, named in the report, and the results written.
"""

from __future__ import annotations

import os

# SciPy reads this once, when it is first imported (scikit-learn imports it): set it before.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import math  # noqa: E402
import pstats  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from dataclasses import dataclass  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from harness import DATE, Harness, write_report  # noqa: E402

GROUPS = ("sklearn", "program", "op")
ARRAYX_DIR = None  # arrayx's package folder, for the cProfile filter (set in main)


# ---- libraries ----------------------------------------------------------------------------------

@dataclass
class Lib:
    """One library under test: its array-API namespace and how to move data and wait for it."""
    name: str
    xp: object
    asarray: object      # NumPy array -> the library's array on its device
    to_numpy: object     # the library's array -> NumPy array
    sync: object         # wait for every queued operation
    gpu: bool            # timed with CUDA events too (op cases)
    device: object       # the device= argument that puts a created array beside the others


def _noop():
    pass


def arrayx_lib(device: str) -> Lib:
    import arrayx
    dev = arrayx.Device(device)
    if dev.kind == "cuda":
        from arrayx.cuda.engine import runtime
        sync = runtime.synchronize
    else:
        sync = _noop
    return Lib("arrayx", arrayx, lambda a: arrayx.asarray(a, device=dev),
               lambda a: np.asarray(a.to_device("cpu")), sync, dev.kind == "cuda", dev)


def peer_lib(name: str) -> tuple[Lib | None, str]:
    """(the peer, '') or (None, why it is skipped)."""
    try:
        if name == "cupy":
            import cupy
            if cupy.cuda.runtime.getDeviceCount() < 1:
                return None, "no CUDA device for CuPy"
            import array_api_compat.cupy as xp
            return Lib("cupy", xp, cupy.asarray, cupy.asnumpy,
                       lambda: cupy.cuda.Device().synchronize(), True, None), ""
        if name == "torch":
            import torch
            if not torch.cuda.is_available():
                return None, "PyTorch sees no CUDA device"
            import array_api_compat.torch as xp
            return Lib("torch", xp, lambda a: torch.as_tensor(a, device="cuda"),
                       lambda t: t.detach().cpu().numpy(), torch.cuda.synchronize, True,
                       torch.device("cuda")), ""
        if name == "numpy":
            import array_api_compat.numpy as xp
            return Lib("numpy", xp, np.array, np.asarray, _noop, False, "cpu"), ""
        if name == "array_api_strict":
            import array_api_strict as xp
            return Lib("array_api_strict", xp, xp.asarray, np.from_dlpack, _noop, False,
                       xp.Device("CPU_DEVICE")), ""
    except Exception as e:  # not installed, or no usable GPU (CuPy raises without a driver)
        return None, f"not usable ({type(e).__name__}: {e})"
    raise ValueError(f"unknown peer {name!r} (cupy, torch, numpy, array_api_strict)")


# ---- host data, made once and shared by every library -------------------------------------------

_HOST: dict = {}


def host(kind: str, shape, dtype="float64", seed=0):
    """A seeded NumPy array, cached: 'normal', 'labels5' (ints 0-4 from a linear rule on the
    matching normal data, so classes are learnable), 'ints' (0 to 49,999)."""
    key = (kind, tuple(shape), dtype, seed)
    if key not in _HOST:
        rng = np.random.default_rng(seed)
        if kind == "normal":
            a = rng.standard_normal(shape, dtype=np.float32 if dtype == "float32" else np.float64)
        elif kind == "labels5":
            n, d = shape
            x = host("normal", (n, d), "float64", seed)
            a = np.argmax(x @ np.random.default_rng(seed + 1).standard_normal((d, 5))
                          + 0.5 * rng.standard_normal((n, 5)), axis=1)
        elif kind == "ints":
            a = rng.integers(0, 50_000, shape)
        else:
            raise ValueError(kind)
        _HOST[key] = a.astype(dtype) if kind != "normal" else a
    return _HOST[key]


# ---- the cases ----------------------------------------------------------------------------------

@dataclass
class Case:
    name: str
    group: str
    size: str                  # 'large' or 'small'
    shape: str                 # what it runs on, for the table
    setup: object              # setup(lib) -> a zero-argument callable returning the result
    quick: bool = False        # in --quick (issue 18's table)
    rtol: float = 1e-6         # largest difference over largest value allowed against arrayx
    moved_bytes: int | None = None  # read + written, for the fraction of the copy (op cases)
    result: object = None      # result -> what to compare (default: the result itself)


class NotDispatched(Exception):
    """scikit-learn ran the estimator on NumPy instead of the library's namespace."""


def _dispatched(lib, value):
    """scikit-learn kept the library's namespace (did not fall back to NumPy)."""
    import array_api_compat
    return lib.name == "numpy" or not array_api_compat.is_numpy_array(value)


def sklearn_cases(size: str) -> list[Case]:
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LogisticRegression, Ridge, RidgeCV
    from sklearn.metrics import accuracy_score, pairwise_distances, r2_score
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.naive_bayes import GaussianNB
    from sklearn.preprocessing import StandardScaler

    n, d = (200_000, 32) if size == "large" else (1000, 16)
    pn, pd = (8192, 64) if size == "large" else (1000, 16)
    shape = f"{n} x {d} float64"
    pshape = f"{pn} x {pd} float32" if size == "large" else f"{pn} x {pd} float64"
    pdtype = "float32" if size == "large" else "float64"

    def fitted(make, attr, with_y=None):
        """setup for `make().fit(X[, y]).<attr>`, refusing a fit that left the namespace."""
        def setup(lib):
            X = lib.asarray(host("normal", (n, d)))
            y = None
            if with_y == "regression":
                y = lib.asarray(host("normal", (n, d)) @ np.linspace(-1, 1, d))
            elif with_y == "classes":
                y = lib.asarray(host("labels5", (n, d), "int64"))

            def run():
                est = make().fit(X) if y is None else make().fit(X, y)
                value = getattr(est, attr)
                if not _dispatched(lib, value):
                    raise NotDispatched(f"{type(est).__name__} did not dispatch: {attr} is NumPy's")
                return value
            return run
        return setup

    def transform(fn, kind):
        def setup(lib):
            if kind == "pairwise":
                X = lib.asarray(host("normal", (pn, pd), pdtype))
                return lambda: fn(X, X)
            X = lib.asarray(host("normal", (n, d)))
            return lambda: fn(X)
        return setup

    def metric(fn, kind):
        def setup(lib):
            if kind == "r2":
                t = host("normal", (n, d))[:, 0].copy()
                a, b = lib.asarray(t), lib.asarray(t + 0.1 * host("normal", (n, d), seed=1)[:, 0])
            else:
                t = host("labels5", (n, d), "int64")
                a, b = lib.asarray(t), lib.asarray(np.roll(t, 1))
            return lambda: fn(a, b)
        return setup

    large = size == "large"
    return [
        Case("PCA(svd_solver='full').fit", "sklearn", size, shape,
             fitted(lambda: PCA(8, svd_solver="full"), "explained_variance_"),
             quick=large, rtol=1e-8),
        Case("PCA(svd_solver='randomized', QR).fit", "sklearn", size, shape,
             fitted(lambda: PCA(8, svd_solver="randomized", power_iteration_normalizer="QR",
                                random_state=0), "explained_variance_"), rtol=1e-6),
        Case("PCA(svd_solver='covariance_eigh').fit", "sklearn", size, shape,
             fitted(lambda: PCA(8, svd_solver="covariance_eigh"), "explained_variance_"),
             rtol=1e-8),
        Case("Ridge(solver='svd').fit", "sklearn", size, shape,
             fitted(lambda: Ridge(solver="svd"), "coef_", "regression"), quick=large, rtol=1e-8),
        Case("RidgeCV().fit", "sklearn", size, shape,
             fitted(lambda: RidgeCV(), "coef_", "regression"), rtol=1e-8),
        Case("LinearDiscriminantAnalysis().fit (5 classes)", "sklearn", size, shape,
             fitted(lambda: LinearDiscriminantAnalysis(), "coef_", "classes"),
             quick=large, rtol=1e-6),
        Case("LogisticRegression(lbfgs).fit (5 classes)", "sklearn", size, shape,
             fitted(lambda: LogisticRegression(max_iter=100), "coef_", "classes"),
             rtol=1e-2),  # L-BFGS stops within its tolerance, after rounding-dependent steps
        Case("GaussianNB().fit (5 classes)", "sklearn", size, shape,
             fitted(lambda: GaussianNB(), "var_", "classes"), rtol=1e-8),
        Case("StandardScaler().fit_transform", "sklearn", size, shape,
             transform(lambda X: StandardScaler().fit_transform(X), "plain"),
             quick=not large, rtol=1e-8),
        Case("pairwise_distances(X, X)", "sklearn", size, pshape,
             transform(pairwise_distances, "pairwise"), quick=large, rtol=1e-4),
        Case("rbf_kernel(X, X)", "sklearn", size, pshape,
             transform(rbf_kernel, "pairwise"), rtol=1e-4),
        Case("r2_score", "sklearn", size, f"{n} float64", metric(r2_score, "r2"), rtol=1e-8),
        Case("accuracy_score", "sklearn", size, f"{n} int64",
             metric(accuracy_score, "acc"), rtol=0),
    ]


def _mT(x):
    return x.mT if hasattr(x, "mT") else x.T


def softmax_rows(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def layer_norm_rows(xp, x, eps=1e-5):
    m = xp.mean(x, axis=-1, keepdims=True)
    v = xp.var(x, axis=-1, keepdims=True)
    return (x - m) / xp.sqrt(v + eps)


def kmeans_step(xp, X, C):
    """One Lloyd step: squared distances, nearest center, the mean of each center's points."""
    import array_api_compat
    k = C.shape[0]
    d2 = (xp.sum(X * X, axis=1)[:, None] - 2 * (X @ _mT(C)) + xp.sum(C * C, axis=1)[None, :])
    labels = xp.argmin(d2, axis=1)
    onehot = xp.astype(labels[:, None] == xp.arange(k, device=array_api_compat.device(X))[None, :],
                       X.dtype)
    counts = xp.sum(onehot, axis=0)
    return (_mT(onehot) @ X) / xp.clip(counts, min=1)[:, None]


def logistic_gd(xp, X, y, steps=50, lr=0.5):
    """Full-batch gradient descent on the mean logistic loss."""
    import array_api_compat
    w = xp.zeros(X.shape[1], dtype=X.dtype, device=array_api_compat.device(X))
    n = X.shape[0]
    for _ in range(steps):
        p = 1 / (1 + xp.exp(-(X @ w)))
        w = w - (lr / n) * ((p - y) @ X)
    return w


def stencil5(xp, g):
    return 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:]) - g[1:-1, 1:-1]


def small_loop(xp, a, b, c, iters=200):
    for _ in range(iters):
        a = xp.tanh(a * b + c)
    return a


def program_cases(size: str) -> list[Case]:
    large = size == "large"
    big = (8192, 8192) if large else (1000, 16)
    big_shape = f"{big[0]} x {big[1]} float32"
    n, d, k = (200_000, 32, 16) if large else (1000, 16, 8)
    gn, gd = (200_000, 64) if large else (1000, 16)
    grid = (8192, 8192) if large else (256, 256)

    def rows(fn):
        def setup(lib):
            x = lib.asarray(host("normal", big, "float32"))
            return lambda: fn(lib.xp, x)
        return setup

    def kmeans(lib):
        X = lib.asarray(host("normal", (n, d), "float32"))
        C = lib.asarray(host("normal", (n, d), "float32")[:k])
        return lambda: kmeans_step(lib.xp, X, C)

    def logistic(lib):
        Xh = host("normal", (gn, gd), "float32")
        X = lib.asarray(Xh)
        y = lib.asarray((Xh @ np.linspace(-1, 1, gd, dtype=np.float32) > 0).astype(np.float32))
        return lambda: logistic_gd(lib.xp, X, y)

    def stencil(lib):
        g = lib.asarray(host("normal", grid, "float32"))
        return lambda: stencil5(lib.xp, g)

    cases = [
        Case("softmax over rows (max, exp, sum, divide)", "program", size, big_shape,
             rows(softmax_rows), quick=large, rtol=1e-5),
        Case("layer norm over rows (mean, var, subtract, divide)", "program", size, big_shape,
             rows(layer_norm_rows), quick=large, rtol=1e-4),
        # a point at nearly equal distance from two centers may go either way in float32: one
        # such point moves a center's mean by about 1e-4 of it
        Case(f"k-means step (k={k})", "program", size, f"{n} x {d} float32", kmeans, rtol=1e-3),
        Case("logistic regression, 50 gradient steps", "program", size, f"{gn} x {gd} float32",
             logistic, quick=large, rtol=1e-3),
        Case("5-point stencil on slices", "program", size,
             f"{grid[0]} x {grid[1]} float32", stencil, quick=large, rtol=1e-6),
    ]
    if large:
        return cases

    def loop(lib):
        a, b, c = (lib.asarray(host("normal", (256,), "float32", seed=s)) for s in (0, 1, 2))
        return lambda: small_loop(lib.xp, a, b, c)

    def mean_std(lib):
        x = lib.asarray(host("normal", (1000, 16)))
        return lambda: (lib.xp.mean(x, axis=0), lib.xp.std(x, axis=0))

    def float_sum(lib):
        x = lib.asarray(host("normal", (1000,)))
        return lambda: float(lib.xp.sum(x))

    def unique(lib):
        x = lib.asarray(host("ints", (200_000,), "int64"))
        return lambda: lib.xp.unique_values(x)

    return cases + [
        Case("200 x tanh(a*b+c)", "program", size, "256 float32", loop, quick=True, rtol=1e-5),
        Case("mean + std over axis 0", "program", size, "1000 x 16 float64", mean_std, rtol=1e-10),
        Case("float(xp.sum(x))", "program", size, "1000 float64", float_sum, rtol=1e-10),
        Case("unique_values", "program", size, "200000 int64 (< 50000)", unique, rtol=0),
    ]


LOG2_FLAT = 28  # elements of the flat reductions' input (1 GiB of float32, as reduce_bench's)


def op_cases(size: str) -> list[Case]:
    if size != "large":
        return []
    N = 8192
    sq = f"{N} x {N} float32"
    f32 = 4

    def square(fn, *others):
        def setup(lib):
            x = lib.asarray(host("normal", (N, N), "float32"))
            extra = [lib.asarray(host("normal", s, "float32", seed=1)) for s in others]
            return lambda: fn(lib.xp, x, *extra)
        return setup

    def tall(fn, n, d, dtype="float32", vector=None):
        def setup(lib):
            X = lib.asarray(host("normal", (n, d), dtype))
            if vector is None:
                return lambda: fn(lib.xp, X)
            v = lib.asarray(host("normal", (vector(n, d),), dtype, seed=1))
            return lambda: fn(lib.xp, X, v)
        return setup

    def small_matrix(fn):
        """A well-conditioned symmetric positive definite 64 x 64 float64 matrix."""
        def setup(lib):
            a = host("normal", (64, 64))
            A = lib.asarray(a @ a.T + 64 * np.eye(64))
            return lambda: fn(lib.xp, A)
        return setup

    big_n = 1 << LOG2_FLAT
    flat_square = (1 << (LOG2_FLAT // 2), 1 << (LOG2_FLAT - LOG2_FLAT // 2))
    flat_shape = f"{flat_square[0]} x {flat_square[1]} float32"

    def flat(fn):
        """2^LOG2_FLAT float32 made on the device by each library (no 1 GiB host array): the
        integers i % 65521, exact in float32, so every library has the same data and argmax the
        same first maximum."""
        def setup(lib):
            xp = lib.xp
            x = xp.astype(xp.arange(big_n, device=lib.device) % 65521, xp.float32)
            return lambda: fn(xp, x)
        return setup

    return [
        Case("var(x, axis=-1, keepdims=True)", "op", size, sq,
             square(lambda xp, x: xp.var(x, axis=-1, keepdims=True)), quick=True,
             rtol=1e-4, moved_bytes=N * N * f32 + N * f32),
        Case("x - m, m of shape (8192, 1)", "op", size, sq,
             square(lambda xp, x, m: x - m, (N, 1)), quick=True, moved_bytes=2 * N * N * f32),
        Case("x - r, r of shape (1, 8192)", "op", size, sq,
             square(lambda xp, x, r: x - r, (1, N)), moved_bytes=2 * N * N * f32),
        Case("g[:-2, 1:-1] + g[2:, 1:-1]", "op", size, sq,
             square(lambda xp, g: g[:-2, 1:-1] + g[2:, 1:-1]), quick=True,
             moved_bytes=3 * (N - 2) ** 2 * f32),
        Case("x[:, :4096] + y (pitched rows)", "op", size, f"{N} x 4096 of {sq}",
             square(lambda xp, x, y: x[:, :4096] + y, (N, 4096)),
             moved_bytes=3 * N * 4096 * f32),
        Case("concat([x, y], axis=1)", "op", size, f"2 x {N} x 4096 float32",
             square(lambda xp, x, y: xp.concat([x[:, :4096], y], axis=1), (N, 4096)),
             moved_bytes=4 * N * 4096 * f32),
        Case("X @ w (gemv)", "op", size, "200000 x 64 float32",
             tall(lambda xp, X, w: X @ w, 200_000, 64, vector=lambda n, d: d), quick=True,
             rtol=1e-4),
        Case("v @ X (vector-matrix)", "op", size, "200000 x 64 float32",
             tall(lambda xp, X, v: v @ X, 200_000, 64, vector=lambda n, d: n), rtol=1e-4),
        Case("X.T @ X", "op", size, "200000 x 64 float32",
             tall(lambda xp, X: _mT(X) @ X, 200_000, 64), rtol=1e-4),
        Case("P @ P.T", "op", size, "8192 x 64 float32",
             tall(lambda xp, P: P @ _mT(P), 8192, 64), rtol=1e-4),
        Case("linalg.inv", "op", size, "64 x 64 float64",
             small_matrix(lambda xp, A: xp.linalg.inv(A)), rtol=1e-8),
        Case("linalg.eigh (eigenvalues)", "op", size, "64 x 64 float64",
             small_matrix(lambda xp, A: xp.linalg.eigh(A)), rtol=1e-8,
             result=lambda r: r[0]),
        Case("linalg.svd(full_matrices=False) (singular values)", "op", size,
             "200000 x 32 float64",
             tall(lambda xp, X: xp.linalg.svd(X, full_matrices=False), 200_000, 32, "float64"),
             rtol=1e-8, result=lambda r: r[1]),
        Case("sum", "op", size, f"2^{LOG2_FLAT} float32", flat(lambda xp, x: xp.sum(x)),
             quick=True,
             rtol=1e-3, moved_bytes=big_n * f32),
        Case("argmax", "op", size, f"2^{LOG2_FLAT} float32", flat(lambda xp, x: xp.argmax(x)),
             rtol=0, moved_bytes=big_n * f32),
        Case("sum(axis=0) (column sums)", "op", size, flat_shape,
             flat(lambda xp, x: xp.sum(xp.reshape(x, flat_square), axis=0)), rtol=1e-4,
             moved_bytes=big_n * f32),
        Case("sum(axis=1) (row sums)", "op", size, flat_shape,
             flat(lambda xp, x: xp.sum(xp.reshape(x, flat_square), axis=1)), rtol=1e-4,
             moved_bytes=big_n * f32),
    ]


def all_cases(sizes) -> list[Case]:
    out = []
    for size in sizes:
        out += sklearn_cases(size) + program_cases(size) + op_cases(size)
    return out


# ---- running a case -----------------------------------------------------------------------------

def comparable(case, lib, value):
    """The part of the case's result to compare, as NumPy (a tuple of arrays becomes a list)."""
    if case.result is not None:
        value = case.result(value)
    return _as_numpy(lib, value)


def _as_numpy(lib, value):
    if isinstance(value, tuple):
        return [_as_numpy(lib, v) for v in value]
    if isinstance(value, (int, float, np.number)):
        return np.asarray(value)
    return np.asarray(lib.to_numpy(value))


def difference(a, b) -> float:
    """Largest absolute difference over the largest magnitude of `a`."""
    if isinstance(a, list):
        return max((difference(x, y) for x, y in zip(a, b)), default=0.0)
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return math.inf
    if a.size == 0:
        return 0.0
    scale = np.max(np.abs(a))
    return float(np.max(np.abs(a - b)) / (scale if scale > 0 else 1.0))


def run_case(H, case, lib, args, reference):
    """Time `case` on `lib`; returns its record (and sets reference['value'] for arrayx)."""
    rec = {"name": case.name, "group": case.group, "size": case.size, "shape": case.shape,
           "lib": lib.name}
    try:
        fn = case.setup(lib)
        lib.sync()
        value = fn()
        lib.sync()
        t = Harness.wall_time(fn, lib.sync, warmup=args.warmup - 1, reps=args.reps,
                              budget_s=args.budget)
        rec.update(ms=t["median"], ms_min=t["min"], ms_max=t["max"], reps=t["reps"])
        if case.moved_bytes is not None and lib.gpu:
            rec["gpu_ms"] = H.gpu_time(lib.name, fn, warmup=1, reps=min(args.reps, 10))
        got = comparable(case, lib, value)
        if lib.name == "arrayx":
            reference["value"] = got
        elif "value" in reference:
            rec["diff_vs_arrayx"] = difference(reference["value"], got)
            rec["mismatch"] = rec["diff_vs_arrayx"] > case.rtol
        del fn, value
    except NotDispatched as e:
        rec["not_dispatched"] = str(e)
    except Exception as e:  # a library that cannot run this case: record why and go on
        rec["error"] = f"{type(e).__name__}: {e}"[:400]
        if args.verbose:
            traceback.print_exc()
    lib.sync()
    H.records.append(rec)
    if "ms" in rec:
        shown = f"{rec['ms']:10.3f} ms"
    else:
        shown = "     " + rec.get("not_dispatched", "error: " + rec.get("error", ""))[:90]
    print(f"  {case.size:5s} {case.name[:52]:52s} {lib.name:7s} {shown}", flush=True)
    return rec


def copy_ceiling_ms(H, lib, nbytes, cache):
    """Event ms of a device-to-device copy of nbytes/2 bytes (nbytes moved) through arrayx."""
    if nbytes not in cache:
        cache[nbytes] = H.copy_time(nbytes // 8, device=lib.device)
        lib.sync()
    return cache[nbytes]


# ---- --profile: where an arrayx call's time goes ------------------------------------------------

# primitives whose first argument names the operation (unary("exp", a)): keyed with it
_NAMED_PRIMITIVES = ("unary", "binary", "reduce", "argreduce", "cumulative", "row_function",
                     "fft")
_ARRAY_METHODS = ("__getitem__", "__setitem__", "__float__", "__int__", "__bool__", "__index__",
                  "__complex__", "to_device", "__dlpack__", "__array_namespace__")
_MISSING = object()


class CallTimer:
    """Wraps callables (module or class attributes) to add up calls and wall-clock host ms per
    key; with `outermost`, a call made inside another wrapped call is not counted again. As a
    context manager, it puts back what it wrapped on leaving."""

    def __init__(self, outermost: bool, before=None, after=None):
        self.outermost = outermost
        self.before = before or _noop
        self.after = after or _noop
        self.depth = 0
        self.calls: dict = {}
        self.host_ms: dict = {}
        self._patched = []

    def wrap(self, owner, attr, key, fn, named=False):
        timer = self

        def timed(*a, **kw):
            if timer.outermost and timer.depth:
                return fn(*a, **kw)
            k = f"{key}:{a[0]}" if named and a and isinstance(a[0], str) else key
            timer.depth += 1
            timer.before()
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                timer.after()
                timer.host_ms[k] = timer.host_ms.get(k, 0.0) + (time.perf_counter() - t0) * 1e3
                timer.calls[k] = timer.calls.get(k, 0) + 1
                timer.depth -= 1

        self._patched.append((owner, attr, owner.__dict__.get(attr, _MISSING)))
        setattr(owner, attr, timed)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.restore()

    def restore(self):
        for owner, attr, old in reversed(self._patched):
            if old is _MISSING:
                delattr(owner, attr)
            else:
                setattr(owner, attr, old)
        self._patched.clear()

    def table(self, per: int) -> list:
        return sorted(({"key": k, "calls": self.calls[k] / per, "host_ms": self.host_ms[k] / per}
                       for k in self.calls), key=lambda r: -r["host_ms"])


_OPERATOR_NAMES = {
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift", "lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "abs", "invert",
    "radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rmod", "rpow", "rmatmul", "rand", "ror",
    "rxor", "rlshift", "rrshift", "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod",
    "ipow", "imatmul", "iand", "ior", "ixor", "ilshift", "irshift"}


def wrap_namespace(timer):
    """Every public function of arrayx (as a client finds it: an attribute of the module),
    arrayx.linalg and arrayx.fft, and Array's operators and methods."""
    import types

    import arrayx
    import arrayx.fft
    import arrayx.linalg
    for module, prefix in ((arrayx, ""), (arrayx.linalg, "linalg."), (arrayx.fft, "fft.")):
        for name, fn in list(vars(module).items()):
            if not name.startswith("_") and isinstance(fn, types.FunctionType):
                timer.wrap(module, name, prefix + name, fn)
    Array = arrayx.Array
    for name, fn in list(vars(Array).items()):
        if callable(fn) and (name in _ARRAY_METHODS or (
                name.startswith("__") and name[2:-2] in _OPERATOR_NAMES)):
            timer.wrap(Array, name, "Array." + name, fn)


def wrap_primitives(timer, backend):
    from arrayx._backend import PRIMITIVES
    for name in PRIMITIVES:
        fn = getattr(backend, name, None)
        if fn is not None:
            timer.wrap(backend, name, name, fn, named=name in _NAMED_PRIMITIVES)


def profile_case(H, case, lib, args):
    """The --profile record of `case` on arrayx (see the module docstring)."""
    fn = case.setup(lib)
    backend = lib.xp.Device(args.device).backend
    for _ in range(args.warmup):
        fn()
    lib.sync()
    calls = max(1, min(args.profile_calls, args.reps))
    out = {"name": case.name, "size": case.size, "calls": calls}

    def repeat():
        for _ in range(calls):
            fn()
            lib.sync()

    t0 = time.perf_counter()
    repeat()
    out["wall_ms"] = (time.perf_counter() - t0) * 1e3 / calls
    if lib.gpu:
        out["gpu_event_ms"] = H.gpu_time("arrayx", fn, warmup=0, reps=calls)

    namespace, primitives = CallTimer(outermost=True), CallTimer(outermost=False)
    with namespace, primitives:
        wrap_namespace(namespace)
        wrap_primitives(primitives, backend)
        repeat()
    out["namespace"] = namespace.table(calls)

    with CallTimer(outermost=False, before=lib.sync, after=lib.sync) as synced:
        wrap_primitives(synced, backend)
        repeat()
    synced_ms = {r["key"]: r["host_ms"] for r in synced.table(calls)}
    out["primitives"] = sorted(({**r, "synced_ms": synced_ms.get(r["key"], 0.0)}
                                for r in primitives.table(calls)),
                               key=lambda r: -r["synced_ms"])

    prof = cProfile.Profile()
    prof.runcall(repeat)
    stats = pstats.Stats(prof).stats
    own = [(tt / calls * 1e3, nc / calls, f"{os.path.relpath(path, ARRAYX_DIR)}:{line}({func})")
           for (path, line, func), (_, nc, tt, _, _) in stats.items()
           if path.startswith(ARRAYX_DIR)]
    own.sort(reverse=True)
    out["arrayx_own_host_ms"] = sum(t for t, _, _ in own)
    out["cprofile_top"] = [{"function": f, "own_ms": t, "calls": n} for t, n, f in own[:10]]
    return out


# ---- reports ------------------------------------------------------------------------------------

def geomean(values):
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def summarise(cases, records, libs, copy_ms):
    """One row per case: each library's record, the best peer, arrayx / best peer."""
    by = {(r["name"], r["size"], r["lib"]): r for r in records}
    rows = []
    for case in cases:
        row = {"name": case.name, "group": case.group, "size": case.size, "shape": case.shape}
        for lib in libs:
            r = by.get((case.name, case.size, lib.name))
            if r is not None:
                row[lib.name] = r
        if not any(lib.name in row for lib in libs):
            continue  # not run (past the deadline)
        peers = [row[lib.name] for lib in libs[1:] if lib.name in row and "ms" in row[lib.name]]
        ax = row.get("arrayx")
        if peers:
            best = min(peers, key=lambda r: r["ms"])
            row["best_peer"] = best["lib"]
            if ax is not None and "ms" in ax:
                row["ratio"] = ax["ms"] / best["ms"]
        if case.moved_bytes is not None and case.moved_bytes in copy_ms:
            row["copy_ms"] = copy_ms[case.moved_bytes]
            for lib in libs:
                r = row.get(lib.name)
                if r is not None and "gpu_ms" in r:
                    r["of_copy"] = row["copy_ms"] / r["gpu_ms"]
        rows.append(row)
    return rows


def _cell(r, with_copy=False):
    if r is None:
        return "-"
    if "ms" not in r:
        return "not dispatched" if "not_dispatched" in r else "error"
    text = f"{r['ms']:.3g}"
    if r["ms_max"] > 1.5 * r["ms_min"]:
        text += f" ({r['ms_min']:.3g}-{r['ms_max']:.3g})"
    if with_copy and "of_copy" in r:
        text += f"; {r['of_copy']:.2f} of copy"
    if r.get("mismatch"):
        text += f" MISMATCH {r['diff_vs_arrayx']:.1e}"
    return text


def report_tables(rows, libs, gmeans):
    lines = []
    names = [lib.name for lib in libs]
    for group in GROUPS:
        grows = [r for r in rows if r["group"] == group]
        if not grows:
            continue
        lines += [f"### {group}", "",
                  "| case | size | shape | " + " | ".join(f"{n} ms" for n in names)
                  + " | arrayx / best peer |",
                  "| --- | --- | --- | " + " | ".join("---" for _ in names) + " | --- |"]
        for r in grows:
            ratio = f"{r['ratio']:.2f} ({r['best_peer']})" if "ratio" in r else "-"
            lines.append(f"| {r['name']} | {r['size']} | {r['shape']} | "
                         + " | ".join(_cell(r.get(n), group == "op") for n in names)
                         + f" | {ratio} |")
        g = gmeans.get(group)
        lines += ["", f"Geometric mean of arrayx / best peer ({group}): "
                  + (f"{g:.2f}" if g else "-"), ""]
    return lines


def profile_lines(profiles, top=8):
    lines = ["## Profile of the arrayx calls", "",
             "Per call of each case: wall ms (a sync after the call), GPU event ms; the "
             "primitives with the most synced ms (calls, host ms without a sync, synced ms: a "
             "sync before and after each primitive), the namespace calls with the most host ms, "
             "and cProfile's arrayx functions with the most own time (see the script's "
             "docstring for what each measures).", ""]
    for p in profiles:
        if "error" in p:
            lines += [f"**{p['name']}** ({p['size']}): profile failed: {p['error']}", ""]
            continue
        gpu = f", GPU event {p['gpu_event_ms']:.3g} ms" if "gpu_event_ms" in p else ""
        lines += [f"**{p['name']}** ({p['size']}): wall {p['wall_ms']:.3g} ms{gpu}; arrayx's own "
                  f"host time (cProfile) {p['arrayx_own_host_ms']:.3g} ms", "",
                  "| primitive | calls | host ms | synced ms |", "| --- | --- | --- | --- |"]
        for r in p["primitives"][:top]:
            lines.append(f"| {r['key']} | {r['calls']:.4g} | {r['host_ms']:.3g} | "
                         f"{r['synced_ms']:.3g} |")
        ns = ", ".join(f"{r['key']} x{r['calls']:.4g} {r['host_ms']:.3g} ms"
                       for r in p["namespace"][:top])
        cp = ", ".join(f"{r['function']} {r['own_ms']:.3g} ms" for r in p["cprofile_top"][:5])
        lines += ["", f"Namespace: {ns or '-'}.", "", f"cProfile own time: {cp or '-'}.", ""]
    return lines


def plot(rows, path, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return None
    shown = [r for r in rows if "ratio" in r]
    if not shown:
        return None
    colors = {"sklearn": "tab:blue", "program": "tab:orange", "op": "tab:green"}
    fig, ax = plt.subplots(figsize=(9, 0.26 * len(shown) + 1.6))
    labels = [f"{r['name'][:56]} ({r['size']})" for r in shown]
    ypos = list(range(len(shown)))[::-1]
    ax.barh(ypos, [r["ratio"] for r in shown], color=[colors[r["group"]] for r in shown])
    ax.set_yticks(ypos, labels, fontsize=7)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    low, high = min(r["ratio"] for r in shown) / 1.2, max(r["ratio"] for r in shown) * 1.2
    ax.set_xticks([t for t in (0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 50) if low <= t <= high])
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xlabel("arrayx time / best peer's time (log scale; left of the line: arrayx faster)")
    ax.set_title(title, fontsize=9)
    groups = [g for g in colors if any(r["group"] == g for r in shown)]
    ax.legend([plt.Rectangle((0, 0), 1, 1, color=colors[g]) for g in groups], groups, fontsize=7,
              loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---- main ---------------------------------------------------------------------------------------

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--only", default="", help="comma-separated substrings of case names")
    p.add_argument("--size", choices=("large", "small", "both"), default="both")
    p.add_argument("--group", default=",".join(GROUPS), help="comma-separated: " + ",".join(GROUPS))
    p.add_argument("--quick", action="store_true", help="issue 18's table, shorter budget")
    p.add_argument("--profile", action="store_true", help="profile the arrayx calls")
    p.add_argument("--profile-calls", type=int, default=3, help="calls per profile pass")
    p.add_argument("--device", default="cuda:0", help="arrayx's device: cuda:0 or cpu")
    p.add_argument("--peers", default="cupy,torch",
                   help="comma-separated: cupy, torch, numpy, array_api_strict")
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--budget", type=float, default=None,
                   help="seconds of timed calls per case and library (default 0.6, --quick 0.3)")
    p.add_argument("--fallback", choices=("error", "warn"), default="error",
                   help="arrayx host fallback: an error (default) or a warning")
    p.add_argument("--deadline", type=float, default=340,
                   help="seconds after which the cases left are skipped (recorded as such) and "
                        "the results written: a default run stays within 6 minutes; 0: none")
    p.add_argument("--list", action="store_true", help="print the cases and exit")
    p.add_argument("--verbose", action="store_true", help="print tracebacks of failed cases")
    args = p.parse_args(argv)
    if args.budget is None:
        args.budget = 0.3 if args.quick else 0.6
    args.warmup = max(1, args.warmup)
    return args


def client_versions() -> dict:
    import array_api_compat
    import scipy
    import sklearn
    return {"scikit-learn": sklearn.__version__, "scipy": scipy.__version__,
            "array-api-compat": array_api_compat.__version__}


def select(args) -> list[Case]:
    sizes = ("large", "small") if args.size == "both" else (args.size,)
    groups = set(args.group.split(","))
    only = [s.strip().lower() for s in args.only.split(",") if s.strip()]
    return [c for c in all_cases(sizes) if c.group in groups and (not args.quick or c.quick)
            and (not only or any(s in c.name.lower() for s in only))]


def main(argv=None):
    global ARRAYX_DIR
    args = parse_args(argv)
    started = time.perf_counter()
    import sklearn
    sklearn.set_config(array_api_dispatch=True)
    cases = select(args)
    if args.list:
        for c in cases:
            print(f"{c.group:8s} {c.size:6s} {c.name}  [{c.shape}]{'  (quick)' if c.quick else ''}")
        return None
    import arrayx
    ARRAYX_DIR = os.path.dirname(arrayx.__file__) + os.sep
    arrayx.set_host_fallback(args.fallback)
    on_gpu = arrayx.Device(args.device).kind == "cuda"
    H = Harness("Workloads: arrayx beside CuPy and PyTorch",
                device=arrayx.Device(args.device).index if on_gpu else None)
    libs, skipped = [arrayx_lib(args.device)], {}
    for name in filter(None, args.peers.split(",")):
        lib, why = peer_lib(name.strip())
        if lib is None:
            skipped[name] = why
            print(f"peer {name} skipped: {why}")
        else:
            libs.append(lib)
    print(f"{len(cases)} cases on {', '.join(lib.name for lib in libs)} "
          f"(arrayx on {args.device})", flush=True)

    copy_ms, profiles, past_deadline = {}, [], []
    for i, case in enumerate(cases):
        if args.deadline and time.perf_counter() - started > args.deadline:
            past_deadline.append(f"{case.name} ({case.size})")
            continue
        if i and cases[i - 1].size != case.size:
            _HOST.clear()  # the other size's host arrays are not used again
        reference = {}
        for lib in libs:
            run_case(H, case, lib, args, reference)
        if on_gpu and case.moved_bytes is not None:
            copy_ceiling_ms(H, libs[0], case.moved_bytes, copy_ms)
        if args.profile and "value" in reference:
            try:
                profiles.append(profile_case(H, case, libs[0], args))
            except Exception as e:
                profiles.append({"name": case.name, "size": case.size,
                                 "error": f"{type(e).__name__}: {e}"[:300]})

    rows = summarise(cases, H.records, libs, copy_ms)
    gmeans = {g: geomean([r.get("ratio") for r in rows if r["group"] == g]) for g in GROUPS}
    gmeans["all"] = geomean([r.get("ratio") for r in rows])
    elapsed = time.perf_counter() - started
    if on_gpu:
        from arrayx.cuda.engine import compiler
        compiled = compiler.compile_count()
    else:
        compiled = "none (arrayx on the CPU device)"
    stem = "workloads" if on_gpu else "workloads-cpu"
    clients = client_versions()
    os.makedirs(args.out, exist_ok=True)
    doc = H.write(os.path.join(args.out, f"{stem}-{DATE}.json"),
                  {"rows": rows, "geomean": gmeans, "profiles": profiles, "copy_ms": copy_ms,
                   "skipped_peers": skipped, "past_deadline": past_deadline,
                   "client_versions": clients,
                   "elapsed_s": elapsed, "compiled": compiled,
                   "options": vars(args)})
    png = plot(rows, os.path.join(args.out, f"{stem}-{DATE}.png"),
               f"arrayx ({args.device}) / best of {', '.join(lib.name for lib in libs[1:])}"
               f", {doc['meta']['device']}, {DATE}")
    command = shlex.join(sys.argv[1:] if argv is None else argv)
    description = [
        f"`python3 benchmarks/workloads_bench.py {command}`"
        f" in {elapsed:.0f} s; arrayx on {args.device}. Wall-clock ms of one call and a device "
        "sync, median of the timed calls (min-max shown when the max is over 1.5x the min); "
        "op cases: '; x of copy' is the device-to-device copy's CUDA-event time for the same "
        "bytes over the op's event time. arrayx / best peer: medians. MISMATCH: the peer's "
        "result differs from arrayx's by more than the case's tolerance (largest difference over "
        "the largest value). Method: the docstring of workloads_bench.py.",
        "Peers skipped: " + (", ".join(f"{k} ({v})" for k, v in skipped.items()) or "none")
        + ". Clients: " + ", ".join(f"{k} {v}" for k, v in clients.items()) + "."]
    if past_deadline:
        description.append(f"Not run, past the {args.deadline:g} s deadline: "
                           + ", ".join(past_deadline) + ".")
    overall = gmeans["all"]
    table = report_tables(rows, libs, gmeans) + [
        "Geometric mean of arrayx / best peer over every case with a ratio: "
        + (f"**{overall:.2f}**" if overall else "-"), ""]
    if png:
        table += [f"![arrayx / best peer]({os.path.basename(png)})", ""]
    errors = [f"- {r['name']} ({r['size']}), {r['lib']}: {r['error']}" for r in H.records
              if "error" in r]
    if errors:
        table += ["Errors (the case did not run on that library):", ""] + errors + [""]
    notes = profile_lines(profiles) if profiles else []
    md = os.path.join(args.out, f"{stem}-{DATE}.md")
    write_report(md, "Workloads: arrayx beside CuPy and PyTorch", doc, description, table, notes)
    print("\n".join(["", f"==== workloads ({doc['meta']['device']}, {DATE}, {elapsed:.0f} s)"]
                    + table))
    print(f"wrote {md}" + (f" and {png}" if png else ""))
    return doc


if __name__ == "__main__":
    main()
