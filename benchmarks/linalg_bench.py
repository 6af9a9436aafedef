"""Benchmarks of CUDA linear algebra and FFT (issue 7's 'Done when' items): arrayx beside PyTorch
and CuPy, on the same device buffers, in one process.

    python benchmarks/linalg_bench.py --out DIR [--budget SECONDS]

Items, most important first (each is skipped once the time budget is spent): matmul 8192^2
float32 (TF32 off everywhere) and float64 against PyTorch; batched 1024 x (64 x 64) float32, one
call and 20 calls back to back, and the host time per call (namespace, primitive, bare cuBLAS
call, PyTorch); matrix-vector 16k x 16k float32 (gemv and gemm paths, one call and 10 back to
back) against a device copy of the same bytes; fft / rfft of 2^26 complex64 / float32 against
CuPy; solve, cholesky, qr, eigh, svd of 4096 x 4096 float64 against CuPy. Inputs are made on the
GPU by PyTorch and shared through DLPack; each arrayx result is checked against the reference
library's (relative Frobenius error).

A single call is timed between two events: host time spent before the library call is enqueued
counts, since the GPU waits for it. That decides small products (the batched one takes ~50 us
on the GPU); calls back to back show what a program that queues work ahead gets.

Writes DIR/linalg-<date>.json and DIR/linalg-<date>.md and prints a short table last.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import DATE, Harness  # noqa: E402

ROWS = []  # (item, arrayx ms, reference lib, reference ms, target speed ratio, rel. error, note)


def rel_err(torch, got, ref):
    got, ref = torch.as_tensor(got).to(torch.complex128 if ref.is_complex() else torch.float64), \
        ref.to(torch.complex128 if ref.is_complex() else torch.float64)
    return float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))


class Bench:
    def __init__(self, budget_s: float):
        import arrayx as xp
        self.xp = xp
        self.H = Harness("CUDA linear algebra and FFT")
        self.torch, self.cp = self.H.torch, self.H.cp
        self.deadline = time.perf_counter() + budget_s

    def shared(self, t):
        """An arrayx view and a CuPy view of a torch tensor's memory (after torch's work)."""
        self.torch.cuda.synchronize()
        return self.xp.from_dlpack(t), (self.cp.from_dlpack(t) if self.cp is not None else None)

    def as_torch(self, x):
        from arrayx.cuda.engine import runtime
        runtime.synchronize()
        return self.torch.from_dlpack(x)

    def item(self, name, fns, ref_lib, target, reps, warmup=2, check=None, note="", calls=1):
        """Time fns ({lib: fn}), each running `calls` operations back to back (the time is per
        operation); record one summary row comparing arrayx with ref_lib; returns {lib: ms}."""
        times = {}
        if time.perf_counter() > self.deadline:
            ROWS.append((name, None, ref_lib, None, target, None, "skipped: time budget spent"))
            print(f"== {name}: skipped (budget)", flush=True)
            return times
        print(f"== {name}", flush=True)
        try:
            for lib, fn in fns.items():
                if fn is None:
                    continue
                ms = self.H.gpu_time(lib, fn, warmup, reps) / calls
                self.H.record(name, lib, ms, "ms")
                times[lib] = ms
            err = check() if check is not None else None
        except Exception:
            traceback.print_exc()
            ROWS.append((name, times.get("arrayx"), ref_lib, times.get(ref_lib), target, None,
                         "FAILED: " + traceback.format_exc().strip().splitlines()[-1][:100]))
            return times
        ROWS.append((name, times.get("arrayx"), ref_lib, times.get(ref_lib), target, err, note))
        return times

    # -- items ------------------------------------------------------------------------------------
    def matmuls(self):
        torch, xp = self.torch, self.xp
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        for dtype, name in ((torch.float32, "float32"), (torch.float64, "float64")):
            a_t, b_t = (torch.randn(8192, 8192, dtype=dtype, device="cuda") for _ in range(2))
            (a, a_c), (b, b_c) = self.shared(a_t), self.shared(b_t)
            out = {}
            self.item(f"matmul 8192^2 {name}", {
                "arrayx": lambda: out.__setitem__("x", xp.matmul(a, b)),
                "torch": lambda: out.__setitem__("t", a_t @ b_t),
                "cupy": (lambda: a_c @ b_c) if a_c is not None else None},
                "torch", 0.95, reps=10,
                check=lambda: rel_err(torch, self.as_torch(out["x"]), out["t"]),
                note=f"{2 * 8192 ** 3 / 1e9:.0f} GFLOP per product")
        a_t, b_t = (torch.randn(1024, 64, 64, device="cuda") for _ in range(2))
        (a, _), (b, _) = self.shared(a_t), self.shared(b_t)
        out = {}
        self.item("batched matmul 1024 x 64^2 float32", {
            "arrayx": lambda: out.__setitem__("x", xp.matmul(a, b)),
            "torch": lambda: out.__setitem__("t", torch.bmm(a_t, b_t))}, "torch", 0.9, reps=50,
            check=lambda: rel_err(torch, self.as_torch(out["x"]), out["t"]))
        self.item("batched matmul 1024 x 64^2 float32, 20 calls back to back", {
            "arrayx": lambda: [xp.matmul(a, b) for _ in range(20)],
            "torch": lambda: [torch.bmm(a_t, b_t) for _ in range(20)]}, "torch", 0.9, reps=20,
            calls=20, note="per call: what a program that queues work ahead sees")
        self.host_costs(a, b, a_t, b_t)

    def host_costs(self, a, b, a_t, b_t):
        """Host microseconds per batched product, enqueued 200 times without waiting: the
        namespace call, the primitive, the bare cuBLAS call (arrayx's ctypes declaration of
        cublasGemmStridedBatchedEx, libraries/cublas.py), and PyTorch."""
        from arrayx.cuda import libraries
        from arrayx.cuda.kernels import linalg
        from arrayx.cuda.engine import runtime
        from arrayx._registry import backend_for_kind
        torch = self.torch
        dev = runtime.get_device(0)
        prim = backend_for_kind("cuda")
        an, bn = a._data, b._data
        out = prim.matmul(an, bn)
        cublas = libraries.cublas
        handle = cublas.handle(dev, dev.stream)
        t = linalg._blas_types(an.dtype)

        def bare():
            cublas.gemm_strided_batched_ex(handle, 0, 0, 64, 64, 64, t.one, bn.ptr, t.data, 64,
                                           4096, an.ptr, t.data, 64, 4096, t.zero, out.ptr, t.data,
                                           64, 4096, 1024, t.compute, cublas.GEMM_DEFAULT)
        cases = [("xp.matmul", "arrayx", lambda: self.xp.matmul(a, b)),
                 ("primitive", "arrayx", lambda: prim.matmul(an, bn)),
                 ("bare cuBLAS call", "cublas", bare),
                 ("torch.bmm", "torch", lambda: torch.bmm(a_t, b_t))]
        for name, lib, fn in cases:
            sync = torch.cuda.synchronize if lib == "torch" else runtime.synchronize
            for _ in range(200):   # as many as timed: the allocator's cache holds the outputs
                fn()
            sync()
            t0 = time.perf_counter()
            for _ in range(200):
                fn()
            us = (time.perf_counter() - t0) / 200 * 1e6
            sync()
            self.H.record(f"host time per batched matmul call: {name}", lib, us, "us")
            ROWS.append((f"host time per call: {name}", None, lib, None, None, None,
                         f"{us:.1f} us"))

    def matvec(self):
        torch, xp = self.torch, self.xp
        from arrayx.cuda.kernels import linalg
        n = 16384
        m_t, v_t = torch.randn(n, n, device="cuda"), torch.randn(n, 1, device="cuda")
        (m, _), (v, _) = self.shared(m_t), self.shared(v_t)
        copy_src, copy_dst = (torch.empty(n * n // 2, device="cuda") for _ in range(2))
        copy_ms = self.H.gpu_time("torch", lambda: copy_dst.copy_(copy_src), 3, 20)
        copy_tbs = (n * n * 4) / (copy_ms * 1e-3) / 1e12   # read + written = the matrix's bytes
        self.H.record("device copy of 1 GiB (read + written)", "torch", copy_ms, "ms",
                      tb_per_s=round(copy_tbs, 3))
        out = {}
        for use_gemv in (True, False):
            linalg.USE_GEMV = use_gemv
            label = "gemv" if use_gemv else "gemm n=1"
            for calls in (1, 10):
                how = "" if calls == 1 else f", {calls} calls back to back"
                ms = self.item(f"matvec 16k^2 float32 ({label}{how})", {
                    "arrayx": lambda: [out.__setitem__("x", xp.matmul(m, v)) for _ in range(calls)],
                    "torch": lambda: [out.__setitem__("t", m_t @ v_t) for _ in range(calls)]},
                    "torch", None, reps=20, calls=calls,
                    check=lambda: rel_err(torch, self.as_torch(out["x"]), out["t"])).get("arrayx")
                if ms:
                    tbs = n * n * 4 / (ms * 1e-3) / 1e12
                    ROWS.append((f"matvec ({label}{how}) vs copy bandwidth", ms, "copy", copy_ms,
                                 0.9, None, f"{tbs:.2f} TB/s matrix read once; copy "
                                 f"{copy_tbs:.2f} TB/s; ratio {tbs / copy_tbs:.3f}"))
        linalg.USE_GEMV = True

    def ffts(self):
        torch, xp, cp = self.torch, self.xp, self.cp
        n = 1 << 26
        z_t = torch.randn(n, dtype=torch.complex64, device="cuda")
        r_t = torch.randn(n, device="cuda")
        (z, z_c), (r, r_c) = self.shared(z_t), self.shared(r_t)
        out = {}
        self.item("fft 2^26 complex64", {
            "arrayx": lambda: out.__setitem__("x", xp.fft.fft(z)),
            "cupy": lambda: out.__setitem__("c", cp.fft.fft(z_c)),
            "torch": lambda: torch.fft.fft(z_t)}, "cupy", 1 / 1.1, reps=20,
            check=lambda: rel_err(torch, self.as_torch(out["x"]), torch.from_dlpack(out["c"])))
        self.item("rfft 2^26 float32", {
            "arrayx": lambda: out.__setitem__("x", xp.fft.rfft(r)),
            "cupy": lambda: out.__setitem__("c", cp.fft.rfft(r_c)),
            "torch": lambda: torch.fft.rfft(r_t)}, "cupy", 1 / 1.1, reps=20,
            check=lambda: rel_err(torch, self.as_torch(out["x"]), torch.from_dlpack(out["c"])))

    def solvers(self):
        torch, xp, cp = self.torch, self.xp, self.cp
        n = 4096
        g_t = torch.randn(n, n, dtype=torch.float64, device="cuda")
        spd_t = g_t @ g_t.T + n * torch.eye(n, dtype=torch.float64, device="cuda")
        rhs_t = torch.randn(n, dtype=torch.float64, device="cuda")
        (g, g_c), (spd, spd_c), (rhs, rhs_c) = (self.shared(t) for t in (g_t, spd_t, rhs_t))
        la, cla = xp.linalg, cp.linalg
        out = {}

        def keep(key, fn):
            return lambda: out.__setitem__(key, fn())

        def err(key, ref_key, pick=lambda r: r):
            return lambda: rel_err(torch, self.as_torch(pick(out[key])),
                                   torch.from_dlpack(pick(out[ref_key])))

        cases = [
            ("solve", lambda: la.solve(g, rhs), lambda: cla.solve(g_c, rhs_c), 5, None),
            ("cholesky", lambda: la.cholesky(spd), lambda: cla.cholesky(spd_c), 5, None),
            ("qr", lambda: la.qr(g), lambda: cla.qr(g_c), 3, lambda r: r[1]),
            ("eigh", lambda: la.eigh(spd), lambda: cla.eigh(spd_c), 2, lambda r: r[0]),
            ("svd", lambda: la.svd(g), lambda: cla.svd(g_c), 1, lambda r: r[1]),
        ]
        for name, ours, theirs, reps, pick in cases:
            self.item(f"{name} 4096^2 float64",
                      {"arrayx": keep("x", ours), "cupy": keep("c", theirs)},
                      "cupy", 1 / 1.2, reps=reps, warmup=1,
                      check=err("x", "c", pick) if pick else err("x", "c"))


def write_md(path, doc):
    meta = doc["meta"]
    v = meta["versions"]
    lines = [f"# CUDA linear algebra and FFT benchmarks, {meta['date']}", "",
             f"Device: {meta['device']} (sm_{''.join(map(str, meta['compute_capability']))}), "
             f"driver {meta['driver']}. Versions: "
             + ", ".join(f"{k} {val}" for k, val in v.items()) + ".", "",
             "Command: `STEPS=bench BENCHES=linalg bash benchmarks/gpu_session.sh` on the lent H200. Times are "
             "medians of CUDA-event-timed runs on each library's stream after warm-up; speed ratio "
             "= reference time / arrayx time (>= target passes).", "",
             "| item | arrayx ms | reference | ref ms | speed ratio | target | rel. error | note |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, ours, lib, ref, target, err, note in doc["summary"]:
        ratio = f"{ref / ours:.3f}" if ours and ref else ""
        cells = [name, ours and f"{ours:.4g}", lib, ref and f"{ref:.4g}", ratio,
                 target and f"{target:.3g}", err is not None and f"{err:.1e}", note]
        lines.append("| " + " | ".join(c or "" for c in cells) + " |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="/tmp/out")
    p.add_argument("--budget", type=float, default=float(os.environ.get("BENCH_BUDGET", "90")))
    a = p.parse_args()
    bench = Bench(a.budget)
    for part in (bench.matmuls, bench.matvec, bench.ffts, bench.solvers):
        try:
            part()
        except Exception:
            traceback.print_exc()
    doc = bench.H.write(os.path.join(a.out, f"linalg-{DATE}.json"), {"summary": ROWS})
    write_md(os.path.join(a.out, f"linalg-{DATE}.md"), doc)
    print("\n| item | arrayx ms | ref | ref ms | ratio | target | err |")
    for name, ours, lib, ref, target, err, note in ROWS:
        ratio = f"{ref / ours:.3f}" if ours and ref else "-"
        print(f"| {name} | {ours and round(ours, 4)} | {lib} | {ref and round(ref, 4)} | {ratio} | "
              f"{target and round(target, 3)} | {err if err is None else f'{err:.1e}'} | {note}")


if __name__ == "__main__":
    main()
