"""The row-function kernels (arrayx/cuda/kernels/rows/) on a real GPU, and on numba's CUDA
simulator without one.

GPU tests (skipped without a GPU): every kernel layout `plans.layout` picks (short rows several
a block, a row in a warp's or a block's registers, long rows streamed and read twice, logsumexp
streams; 16-byte vectors and the scalar path of unaligned rows), each asserted to be the layout
the test means, against the CPU backend's float32/float64 results and float64 references, with
special values, offset and strided views, weight and bias, and repeated launches giving the same
bits.

Simulator: ``python tests/cuda/test_rows_gpu.py simulate`` runs the generated kernels on numba's
CUDA simulator with the knobs shrunk so that short rows reach every layout, and prints
"BAD <count>"; `test_kernels_on_the_simulator` runs it in a process of its own (the simulator
replaces numba.cuda for the whole process).
"""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FUNCTIONS = ("softmax", "log_softmax", "logsumexp", "layer_norm", "rms_norm")
TOL = {"float32": (3e-5, 3e-6), "float64": (1e-12, 1e-14)}


def cpu_result(name, h, weight=None, bias=None, eps=1e-5):
    """The CPU backend's row_function of NumPy rows (the reference of both test modes)."""
    from arrayx.cpu.rows import row_function
    return row_function(name, h, weight, bias, eps)


def close(got, expected, dtype, scale=1.0):
    """NaN and infinities where expected has them, finite values within the dtype's tolerance."""
    rtol, atol = TOL[str(np.dtype(dtype))]
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    same_special = np.array_equal(np.isnan(got), np.isnan(expected)) and np.array_equal(
        got[np.isinf(got)], expected[np.isinf(got)]) and np.array_equal(np.isinf(got),
                                                                        np.isinf(expected))
    finite = np.isfinite(expected)
    return same_special and np.allclose(got[finite], expected[finite], rtol=rtol,
                                        atol=atol * scale)


def test_kernels_on_the_simulator():
    pytest.importorskip("numba.cuda")
    # imported here: as the simulator script, this module has no tests/ on its path
    from conftest import run_python
    run = run_python(os.path.abspath(__file__), "simulate", timeout=1800)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "BAD 0" in run.stdout, run.stdout


# ---- PTX for sm_90, without a GPU -------------------------------------------------------------

# (function, dtype, row length, 16-byte vectors, weight, bias): one kernel of each layout
PTX_CASES = [("softmax", "float32", 4096, True, False, False),       # a block's registers
             ("layer_norm", "float32", 1000, True, True, True),      # a warp's registers
             ("rms_norm", "float32", 16, True, True, False),         # a row a lane
             ("logsumexp", "float32", 128, True, False, False),      # streamed by a warp
             ("log_softmax", "float32", 16384, True, False, False),  # streamed, read twice
             ("layer_norm", "float64", 9000, True, True, False),     # Chan moments, streamed
             ("softmax", "float32", 4095, False, False, False),      # scalar, 1024 lanes
             ("rms_norm", "float64", 20001, False, True, False),     # scalar, streamed
             ("logsumexp", "float32", 1 << 20, True, False, False)]  # split over blocks


def _ptx_case_id(case):
    return f"{case[0]}-{case[1]}-{case[2]}{'' if case[3] else '-scalar'}"


@pytest.mark.parametrize("case", PTX_CASES, ids=_ptx_case_id)
def test_kernels_compile_to_ptx(case):
    """No local memory; 16-byte loads (with the LOAD_HINT qualifier) and stores on the vector
    paths (scalar ones otherwise); warp shuffles (none for a row a lane), a barrier only for
    rows of more than 32 lanes, and the launch bounds."""
    pytest.importorskip("numba.cuda")
    from arrayx.cuda.engine import compiler
    from arrayx.cuda.kernels.rows import plans, tuning
    from arrayx.cuda.kernels.rows.source import kernel_spec
    name, dtype, K, vec, weight, bias = case
    k = plans.layout(name, np.dtype(dtype), K, vec, weight, bias)
    split = plans.split_count(k, 1, K // k.V, 132) > 1
    k = k._replace(split=split)
    try:
        ptx = compiler.compile_spec(kernel_spec(k), (9, 0), debug=False)
    except Exception as e:  # NVVM missing on this machine
        if "nvvm" in str(e).lower():
            pytest.skip(f"NVVM unavailable: {e}")
        raise
    assert ".local" not in ptx
    mem = {line.split()[0] for line in ptx.splitlines()
           if line.strip().startswith(("ld.global", "st.global"))}
    wide = "v4.f32" if dtype == "float32" else "v2.f64"
    hinted = f"ld.global{tuning.LOAD_HINT}.v4.u32" if tuning.LOAD_HINT else f"ld.global.{wide}"
    assert (hinted in mem) == vec and bool(k.hint) == vec, (mem, k)
    scalar = f"st.global.f{dtype[-2:]}"
    stored = f"st.global.{wide}" if vec and name != "logsumexp" else scalar
    assert stored in mem, mem
    assert ("shfl.sync.bfly" in ptx) == (k.T > 1), k  # a row a lane needs none
    assert ("bar.sync" in ptx) == (k.T > 32), k
    assert f".maxntid {k.block}, 1, 1" in ptx
    assert f".minnctapersm {k.occupancy}" in ptx, k
    if split:  # the partial fenced before the ticket, the fold's loads through L2 after it
        lines = [line.strip() for line in ptx.splitlines()]
        atom = next(i for i, line in enumerate(lines) if line.startswith("atom.global.add.u32"))
        assert any(line.startswith("membar.gl") for line in lines[:atom])
        assert any(line.startswith("membar.gl") for line in lines[atom + 1:])
        loads = [i for i, line in enumerate(lines) if line.startswith("ld.global.cg")]
        assert loads and min(loads) > atom


# ---- on a GPU ----------------------------------------------------------------------------------

def _rows_data(rng, dtype, shape, offset=0.0):
    return (offset + 3.0 * rng.standard_normal(shape)).astype(dtype)


def _layout_of(name, x, weight=None, bias=None):
    """The RowKernel the CUDA backend launches for `name` of the arrayx array x."""
    from arrayx.cuda.kernels.rows import host
    return host.prepare(name, x._data, None if weight is None else weight._data,
                        None if bias is None else bias._data)[0]


def _call(xp, name, x, w=None, b=None):
    if name == "layer_norm":
        return xp.nn.layer_norm(x, w, b)
    if name == "rms_norm":
        return xp.nn.rms_norm(x, w, eps=1e-5)
    return getattr(xp, name)(x)


# (label, dtype, M, K, column offset, expected mode, expected lanes a row or None, vectors?)
GPU_CASES = [
    ("short rows, a row a lane", "float32", 1000, 16, 0, "regs", 1, True),
    ("short rows, 8 lanes a row", "float32", 4096, 128, 0, "regs", 8, True),
    ("a warp's registers", "float32", 300, 1000, 0, "regs", 32, True),
    ("a block's registers", "float32", 200, 4096, 0, "regs", 256, True),
    ("the largest register rows", "float32", 100, 8192, 0, "regs", 512, True),
    ("long rows read twice", "float32", 40, 50000, 0, "stream", None, True),
    ("unaligned rows (offset view)", "float32", 300, 4095, 1, "regs", None, False),
    ("odd short rows", "float32", 999, 7, 0, "regs", 2, False),
    ("unaligned long rows", "float32", 20, 20001, 3, "stream", None, False),
    ("float64 registers", "float64", 300, 2048, 0, "regs", None, True),
    ("float64 long rows", "float64", 30, 9000, 0, "stream", None, True),
    ("many rows (a large grid)", "float32", 300000, 32, 0, "regs", 2, True),
]


@pytest.mark.gpu
@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("label, dtype, M, K, col, mode, lanes, vec", GPU_CASES,
                         ids=[c[0] for c in GPU_CASES])
def test_kernel_layouts(name, label, dtype, M, K, col, mode, lanes, vec):
    import arrayx as xp
    xp.set_host_fallback("error")
    rng = np.random.default_rng(M * 7 + K)
    base = _rows_data(rng, dtype, (M, K + col), offset=2.0)
    base[rng.integers(0, M, 3), rng.integers(0, K + col, 3)] = [np.nan, np.inf, -np.inf]
    h = base[:, col:]
    w, b = _rows_data(rng, dtype, K), _rows_data(rng, dtype, K)
    x = xp.asarray(base, device="cuda:0")[:, col:]
    wx, bx = xp.asarray(w, device="cuda:0"), xp.asarray(b, device="cuda:0")
    weighted = name in ("layer_norm", "rms_norm")
    k = _layout_of(name, x, wx if weighted else None, bx if name == "layer_norm" else None)
    want_mode = "stream" if name == "logsumexp" else mode
    assert k.mode == want_mode, k
    assert (k.V > 1) == vec, k
    if lanes is not None and name != "logsumexp":
        assert k.T == lanes, k
    got = _call(xp, name, x, wx if weighted else None, bx if name == "layer_norm" else None)
    expected = cpu_result(name, np.ascontiguousarray(h), w if weighted else None,
                          b if name == "layer_norm" else None, 1e-5)
    assert close(got.to_device("cpu"), expected, dtype, scale=10.0), label
    again = _call(xp, name, x, wx if weighted else None, bx if name == "layer_norm" else None)
    assert np.array_equal(np.asarray(again.to_device("cpu")), np.asarray(got.to_device("cpu")),
                          equal_nan=True)  # deterministic: the same bits every launch


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_strides_reversed_rows_and_permuted_axes(dtype):
    import arrayx as xp
    xp.set_host_fallback("error")
    rng = np.random.default_rng(5)
    base = _rows_data(rng, dtype, (64, 2, 600))
    x = xp.asarray(base, device="cuda:0")
    views = [(x[::3, 1], base[::3, 1]), (x[::-1, 0, ::-1], base[::-1, 0, ::-1]),
             (x[:, :, 100:356].mT, base[:, :, 100:356].transpose(0, 2, 1))]
    for view, h in views:
        for name in FUNCTIONS:
            got = _call(xp, name, view)
            expected = cpu_result(name, np.ascontiguousarray(h), None, None,
                                  1e-5 if name != "rms_norm" else 1e-5)
            assert close(got.to_device("cpu"), expected, dtype, scale=10.0), (name, h.shape)


@pytest.mark.gpu
def test_special_rows_and_large_magnitudes_on_every_layout():
    import arrayx as xp
    from scipy import special
    xp.set_host_fallback("error")
    for K in (2, 130, 4096, 20000):
        h = np.tile(np.linspace(-1, 1, K, dtype=np.float32), (6, 1))
        h[0] = -np.inf
        h[1, K // 2] = np.inf
        h[2, 0] = np.nan
        h[3] += np.float32(1e4)
        h[4, :K // 2] = -np.inf
        h[5] *= np.float32(1e30)
        x = xp.asarray(h, device="cuda:0")
        with np.errstate(all="ignore"):
            ref = {"softmax": special.softmax(h.astype(np.float64), axis=-1),
                   "log_softmax": special.log_softmax(h.astype(np.float64), axis=-1),
                   "logsumexp": special.logsumexp(h.astype(np.float64), axis=-1)}
        for name, expected in ref.items():
            assert close(getattr(xp, name)(x).to_device("cpu"), expected, "float32",
                         scale=10.0), (name, K)


@pytest.mark.gpu
@pytest.mark.parametrize("shape, col", [((1, 1 << 24), 0), ((3, 1_000_003), 1), ((40, 300_000), 0)])
def test_logsumexp_of_few_long_rows_splits_them(shape, col):
    """Fewer rows than a wave of blocks: each row shared by S blocks, one launch, the last block
    of a row folding the partials; the same bits on every launch (the fold's order is fixed),
    the counters back at 0 (the next split launch on the stream would fold wrongly else)."""
    import arrayx as xp
    from arrayx.cuda.engine import runtime
    from arrayx.cuda.kernels.rows import plans
    xp.set_host_fallback("error")
    rng = np.random.default_rng(shape[1])
    base = _rows_data(rng, "float32", (shape[0], shape[1] + col))
    h = base[:, col:]
    x = xp.asarray(base, device="cuda:0")[:, col:]
    k = _layout_of("logsumexp", x)
    assert plans.split_count(k, shape[0], shape[1] // k.V,
                             runtime.get_device(0).multiprocessor_count) > 1
    expected = cpu_result("logsumexp", np.ascontiguousarray(h).astype(np.float64))
    results = [xp.logsumexp(x) for _ in range(5)]
    for r in results:
        assert np.array_equal(np.asarray(r.to_device("cpu")),
                              np.asarray(results[0].to_device("cpu")))
    assert close(results[0].to_device("cpu"), expected, "float32", scale=20.0)
    flat = xp.logsumexp(xp.asarray(base, device="cuda:0"), axis=None)
    assert close(flat.to_device("cpu"), cpu_result("logsumexp", base.astype(np.float64).ravel()),
                 "float32", scale=20.0)


@pytest.mark.gpu
def test_empty_and_single_rows():
    import arrayx as xp
    xp.set_host_fallback("error")
    for shape in [(0, 5), (3, 0), (1, 1), (1, 70000)]:
        h = np.linspace(-2, 2, int(np.prod(shape)), dtype=np.float32).reshape(shape)
        x = xp.asarray(h, device="cuda:0")
        for name in FUNCTIONS:
            got = _call(xp, name, x)
            assert close(got.to_device("cpu"), cpu_result(name, h), "float32", scale=10.0)


# ---- on the simulator -----------------------------------------------------------------------

def _simulate():
    """Each layout of the family on the simulator, with the knobs shrunk: rows of up to 512
    float32 in registers (groups up to 64 vectors, blocks of up to 128 lanes), streamed rows by
    64 lanes. Returns the number of wrong cases."""
    sys.path.insert(0, HERE)
    from cuda_sim import (CHOICES, NUMPY_TYPES, Ptr, _exchange, launch,  # numba.cuda -> sim
                          vload, vstore)
    from numba.cuda.simulator import kernelapi

    from arrayx.cuda.kernels.rows import plans, tuning
    from arrayx.cuda.kernels.rows.source import MERGEABLE, kernel_spec

    kernelapi.FakeCUDAModule.shfl_xor_sync = \
        lambda self, mask, v, d: _exchange(v, lambda lane: lane ^ d)
    from numba import cuda
    tuning.GROUP_BLOCK, tuning.GROUP_VECTORS, tuning.BLOCK_VECTORS = 64, 2, 2
    tuning.MAX_BLOCK, tuning.REGISTER_ROW_BYTES = 128, 2048
    tuning.STREAM_BLOCK, tuning.STREAM_UNROLL, tuning.STREAM_GROUP_VECTORS = 64, 2, 16
    tuning.SPLIT_MIN_CHUNKS = 1  # a simulated GPU of 2 SMs: logsumexp of up to 7 rows splits
    counters = np.zeros(tuning.SPLIT_COUNTERS, np.uint32)
    defaults = {knob: getattr(tuning, knob) for knob in ("MERGED_STATISTICS", "EARLY_AFFINE")}

    def ticket(c, i):  # blocks run one after another: no race
        old = c[i]
        c[i] = old + np.uint32(1)
        return np.uint32(old)

    class Libdevice:
        expf = staticmethod(lambda x: np.float32(np.exp(np.float32(x))))
        logf = staticmethod(lambda x: np.float32(np.log(np.float32(x))))
        rsqrtf = staticmethod(lambda x: np.float32(1) / np.float32(np.sqrt(np.float32(x))))
        exp = staticmethod(lambda x: np.exp(np.float64(x)))
        log = staticmethod(lambda x: np.log(np.float64(x)))
        rsqrt = staticmethod(lambda x: 1.0 / np.sqrt(np.float64(x)))

    def run(name, base, offset, M, K, row_stride, weight, bias, vec):
        k = plans.layout(name, base.dtype, K, vec, weight is not None, bias is not None)
        S = plans.split_count(k, M, K // k.V, 2)
        k = k._replace(split=S > 1)
        spec = kernel_spec(k)
        ns = {"cuda": cuda, "libdevice": Libdevice, "ticket": ticket,
              "load_cg": lambda p, i: p[i], "hinted_vload": lambda n, hint: vload(n),
              **NUMPY_TYPES, **CHOICES}
        ns.update({f"vload{n}": vload(n) for n in (1, 2, 4)})
        ns.update({f"vstore{n}": vstore(n) for n in (1, 2, 4)})
        exec(spec.source, ns)
        out = np.full(M if name == "logsumexp" else M * K, 77.0, base.dtype)
        args = [Ptr(base, offset), Ptr(out, 0)]
        args += [Ptr(p, 0) for p in (weight, bias) if p is not None]
        grid = -(-M // (k.block // k.T))
        tail = [M, K, row_stride, 1e-5]
        if k.split:
            partials = np.full(2 * M * S, 55.0, base.dtype)
            args += [Ptr(partials, 0), Ptr(partials, M * S), Ptr(counters, 0)]
            grid, tail = M * S, tail + [S]
        order = list(range(grid))
        rng.shuffle(order)  # any block may be the last of its row
        launch(ns[spec.entry], grid, k.block, args + tail, order)
        assert not counters.any(), "a split launch left its counters non-zero"
        return (out if name == "logsumexp" else out.reshape(M, K)), k

    rng = np.random.default_rng(3)
    bad = 0
    # (dtype, M, K, column offset, row stride padding): the layouts the shrunk knobs give
    cases = [("float32", 9, 16, 0, 0), ("float32", 5, 100, 0, 0), ("float32", 4, 200, 0, 0),
             ("float32", 2, 250, 0, 0), ("float32", 2, 256, 1, 3), ("float32", 2, 512, 0, 0),
             ("float32", 4, 700, 0, 0), ("float32", 2, 701, 2, 0), ("float64", 4, 96, 0, 0),
             ("float64", 2, 200, 0, 0), ("float64", 2, 300, 0, 0), ("float32", 1, 2000, 0, 0),
             ("float32", 3, 1800, 1, 0),
             ("float32", 1, 1, 0, 0)]
    with np.errstate(all="ignore"):
        for dtype, M, K, col, pad in cases:
            row_stride = K + col + pad
            base = (2.0 + 3.0 * rng.standard_normal(M * row_stride + 8)).astype(dtype)
            rows = np.lib.stride_tricks.as_strided(base[col:], (M, K),
                                                   (row_stride * base.itemsize, base.itemsize))
            if M * K > 4:  # row 0 NaN; row 1 -inf up to its middle (all of it when K < 4)
                base[col + K // 2] = np.nan
                base[col + row_stride:col + row_stride + max(K // 2, K if K < 4 else 0)] = -np.inf
            if M > 2:  # row 2 +inf at its end, row 3 -inf only
                base[col + 2 * row_stride + K - 1] = np.inf
            if M > 3:
                base[col + 3 * row_stride:col + 3 * row_stride + K] = -np.inf
            h = np.ascontiguousarray(rows)
            V = 16 // base.itemsize
            vec = K % V == 0 and col % V == 0 and row_stride % V == 0
            w = (1.0 + rng.standard_normal(K)).astype(dtype)
            b = rng.standard_normal(K).astype(dtype)
            # softmax and log_softmax also with MERGED_STATISTICS on (the block rows' one
            # barrier), the norms with EARLY_AFFINE on (weight and bias loaded with the row)
            variants = [(name, {}) for name in FUNCTIONS]
            variants += [(n, {"MERGED_STATISTICS": True}) for n in MERGEABLE]
            variants += [(n, {"EARLY_AFFINE": True}) for n in ("layer_norm", "rms_norm")]
            for name, knobs in variants:
                for knob, default in defaults.items():
                    setattr(tuning, knob, knobs.get(knob, default))
                plans.layout.cache_clear()
                weight = w if name in ("layer_norm", "rms_norm") else None
                bias = b if name == "layer_norm" else None
                got, k = run(name, base, col, M, K, row_stride, weight, bias, vec)
                ok = close(got, cpu_result(name, h, weight, bias), dtype, scale=10.0)
                print(f"{'ok ' if ok else 'BAD'} {name} {dtype} {M}x{K} (offset {col}, row "
                      f"stride {row_stride}): {k.mode} T={k.T} C={k.C} V={k.V} block={k.block}"
                      + (" split" if k.split else "") + (" merged" if k.merged else "")
                      + (" early" if k.early else ""), flush=True)
                bad += not ok
    for knob, default in defaults.items():
        setattr(tuning, knob, default)
    print("BAD", bad)
    return bad


if __name__ == "__main__" and sys.argv[1:] == ["simulate"]:
    sys.exit(1 if _simulate() else 0)
