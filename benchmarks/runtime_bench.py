"""Benchmarks of the CUDA runtime (issue 3's 'Done when' items), arrayx beside CuPy and PyTorch.

    python benchmarks/runtime_bench.py --out DIR [--quick]

Writes DIR/runtime-<date>.json and DIR/runtime-<date>.md and prints a short table last.
Sections: launch paths, host cost per small op (direct vs graph submission, batch sizes), GPU
throughput of a 2^28 float32 add (vector unroll variants) against CuPy/PyTorch and a device copy,
peak memory of a*b+c, a 10,000-op loop's memory, OOM recovery, kernel fault, second-process
kernel cache, transfers (pageable vs pinned staging).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from harness import DATE, Harness  # noqa: E402

SUMMARY = []  # (item, value, note)


def summary(item, value, note=""):
    SUMMARY.append((item, value, note))


def section(fn):
    def wrapped(*a, **k):
        print(f"== {fn.__name__}", flush=True)
        t0 = time.perf_counter()
        try:
            fn(*a, **k)
        except Exception:
            traceback.print_exc()
            summary(fn.__name__, "FAILED", traceback.format_exc().strip().splitlines()[-1][:120])
        print(f"   ({time.perf_counter() - t0:.1f} s)", flush=True)
    return wrapped


def setup():
    import arrayx._devices as D
    from arrayx.cuda import primitives as P
    import arrayx.cuda as xc
    return D.cuda_device(0), P, xc


F32 = np.dtype("float32")


@section
def launch_paths(H: Harness):
    """Host cost of a bare pre-packed launch: cuda.bindings vs ctypes libcuda."""
    dev, P, xc = setup()
    from arrayx.cuda.engine import launcher
    from arrayx.cuda.kernels import elementwise
    a = P.from_host(dev, np.ones(1000, np.float32), True)
    P.binary("add", a, a, F32)  # compile/load
    kern = elementwise.fast_path.plans[("add", F32, F32, 0)].kernel
    out = P.empty(dev, (1000,), F32)
    stream = H.dev.stream
    args = (out.ptr, a.ptr, a.ptr, 1000)
    res = {}
    for api in ("bindings", "ctypes"):
        launcher.set_launch_api(api)
        us = H.host_time(lambda: kern.launch_raw(stream.encoder.arguments, 1, 256, stream.handle, args), xc.synchronize,
                         n=20000)
        res[api] = us
        H.record("bare launch (pre-packed)", f"arrayx/{api}", us, "us/launch")
    best = min(res, key=res.get)
    launcher.set_launch_api(best)
    summary("launch API", f"{best}", ", ".join(f"{k} {v:.2f} us" for k, v in res.items()))
    try:  # cuda.core's launch for reference
        try:
            from cuda.core import Device as CDev, LaunchConfig, launch, ObjectCode
        except ImportError:
            from cuda.core.experimental import Device as CDev, LaunchConfig, launch, ObjectCode
        from arrayx.cuda.engine import compiler
        spec_key = [k for k in H.dev.modules][0]
        img, fmt, entry = compiler._binaries[spec_key]
        cd = CDev(0)
        cd.set_current()
        mod = ObjectCode.from_cubin(img) if fmt == "cubin" else ObjectCode.from_ptx(img)
        ck = mod.get_kernel(entry)
        cs = cd.create_stream()
        cfg = LaunchConfig(grid=1, block=256)
        # cuda.core takes Python ints / NumPy scalars as kernel arguments (not ctypes objects)
        pargs = (np.uintp(out.ptr), np.uintp(a.ptr), np.uintp(a.ptr), np.int64(1000))
        us = H.host_time(lambda: launch(cs, cfg, ck, *pargs), cs.sync, n=5000)
        H.record("bare launch (cuda.core launch)", "cuda.core", us, "us/launch")
    except Exception as e:
        H.record("bare launch (cuda.core launch)", "cuda.core", float("nan"), "us/launch", error=repr(e))


@section
def host_cost(H: Harness, n_ops: int):
    """Host cost per small op: add of 1000 float32, many ops then one sync."""
    dev, P, xc = setup()
    from arrayx.cuda.engine import encoder
    h = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    a, b = P.from_host(dev, h, True), P.from_host(dev, h, True)
    res = {}
    for mode in ("direct", "graph"):
        xc.set_submit_mode(mode)
        for batch in ((8, 32, 128) if mode == "direct" else (32, 128, 256, 512)):
            xc.set_batch_size(batch)
            us = H.host_time(lambda: P.binary("add", a, b, F32), xc.synchronize, n=n_ops)
            res[(mode, batch)] = us
            H.record(f"add 1000 f32 primitive [{mode}, batch {batch}]", "arrayx", us, "us/op")
    best = min(res, key=res.get)
    xc.set_submit_mode(best[0])
    xc.set_batch_size(best[1])
    summary("submission", f"{best[0]}, batch {best[1]}",
            "; ".join(f"{m}/{bt}: {v:.2f}" for (m, bt), v in res.items()) + " us/op")
    prim = res[best]
    ns = float("nan")
    try:
        import arrayx as xp
        x = xp.asarray(h, device="cuda:0")
        y = xp.asarray(h, device="cuda:0")
        ns = H.host_time(lambda: x + y, xc.synchronize, n=n_ops)
        H.record("add 1000 f32 namespace x + y", "arrayx", ns, "us/op")
    except Exception as e:
        H.record("add 1000 f32 namespace x + y", "arrayx", float("nan"), "us/op", error=repr(e))
    cpv = tv = float("nan")
    if H.cp is not None:
        cp = H.cp
        ca, cb = cp.asarray(h), cp.asarray(h)
        cpv = H.host_time(lambda: ca + cb, lambda: H.sync("cupy"), n=n_ops)
        H.record("add 1000 f32", "cupy", cpv, "us/op")
    if H.torch is not None:
        torch = H.torch
        ta, tb = torch.as_tensor(h, device="cuda"), torch.as_tensor(h, device="cuda")
        tv = H.host_time(lambda: ta + tb, lambda: H.sync("torch"), n=n_ops)
        H.record("add 1000 f32", "torch", tv, "us/op")
    summary("host cost/op, add 1000 f32 (target <= 8 us)",
            f"{prim:.2f} us (primitive), {ns:.2f} us (x + y)",
            f"CuPy {cpv:.2f} us, PyTorch {tv:.2f} us, same run")
    xc.synchronize()


@section
def throughput(H: Harness, n: int):
    """2^28 float32 add: arrayx unroll variants, CuPy, PyTorch, device-to-device copy."""
    dev, P, xc = setup()
    from arrayx.cuda.engine import copies
    from arrayx.cuda.kernels import elementwise
    rng = np.random.default_rng(1)
    h = rng.standard_normal(n).astype(np.float32)
    a, b = P.from_host(dev, h, True), P.from_host(dev, h[::-1].copy(), True)
    nbytes = 3 * n * 4
    best = None
    for u in (1, 2, 4):
        elementwise.tuning.VEC_UNROLL = u
        elementwise.fast_path.plans.clear()
        ms = H.gpu_time("arrayx", lambda: P.binary("add", a, b, F32))
        r = H.bandwidth(f"add 2^{n.bit_length() - 1} f32 [vec4 x{u}]", "arrayx", ms, nbytes)
        if best is None or ms < best[1]:
            best = (u, ms, r["tb_per_s"])
    elementwise.tuning.VEC_UNROLL = best[0]
    elementwise.fast_path.plans.clear()
    r = P.binary("add", a, b, F32)
    got = P.to_host(r)
    err = float(np.max(np.abs(got - (h + h[::-1]))))
    H.record("add 2^28 max abs error vs numpy", "arrayx", err, "")
    del r
    out = P.empty(dev, (n,), F32)
    ms_copy = H.gpu_time("arrayx", lambda: copies.memcpy_d2d(H.dev, out, a))
    H.bandwidth(f"device copy {n * 4 >> 20} MiB", "arrayx/cuMemcpyDtoD", ms_copy, 2 * n * 4)
    del out
    libs = {}
    if H.cp is not None:
        cp = H.cp
        ca, cb = cp.asarray(h), cp.asarray(h[::-1].copy())
        libs["cupy"] = H.bandwidth("add 2^28 f32", "cupy", H.gpu_time("cupy", lambda: ca + cb), nbytes)
        co = cp.empty_like(ca)
        H.bandwidth(f"device copy {n * 4 >> 20} MiB", "cupy", H.gpu_time("cupy", lambda: co.__setitem__(Ellipsis, ca)), 2 * n * 4)
        del ca, cb, co
        cp.get_default_memory_pool().free_all_blocks()
    if H.torch is not None:
        torch = H.torch
        ta = torch.as_tensor(h, device="cuda")
        tb = torch.as_tensor(h[::-1].copy(), device="cuda")
        libs["torch"] = H.bandwidth("add 2^28 f32", "torch", H.gpu_time("torch", lambda: ta + tb), nbytes)
        del ta, tb
        torch.cuda.empty_cache()
    copy_tbs = 2 * n * 4 / (ms_copy * 1e-3) / 1e12
    summary("add 2^28 f32 bandwidth", f"{best[2]:.2f} TB/s (unroll {best[0]})",
            f"CuPy {libs.get('cupy', {}).get('tb_per_s', 'n/a')}, PyTorch "
            f"{libs.get('torch', {}).get('tb_per_s', 'n/a')}, copy {copy_tbs:.2f} TB/s")
    del a, b
    xc.synchronize()
    xc.clear_cache()


@section
def peak_memory(H: Harness, n: int):
    """Peak memory of a*b+c on n float32, arrayx vs CuPy (pool hook) and PyTorch."""
    dev, P, xc = setup()
    rng = np.random.default_rng(2)
    hs = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
    xc.synchronize()
    xc.clear_cache()
    a, b, c = (P.from_host(dev, x, True) for x in hs)
    xc.synchronize()
    base = xc.memory_stats()["active"]
    xc.reset_peak_memory()
    r = P.binary("add", P.binary("multiply", a, b, F32), c, F32)
    xc.synchronize()
    peak_ax = xc.memory_stats()["peak"] - base
    ms = H.gpu_time("arrayx", lambda: P.binary("add", P.binary("multiply", a, b, F32), c, F32), reps=5)
    H.bandwidth("a*b+c 2^28 f32 (4 arrays moved)", "arrayx", ms, 4 * n * 4)
    H.record("a*b+c peak extra memory", "arrayx", peak_ax / 2**30, "GiB")
    check = P.to_host(r)
    del r, a, b, c
    xc.synchronize()
    xc.clear_cache()
    err = float(np.max(np.abs(check - (hs[0] * hs[1] + hs[2]))))
    H.record("a*b+c max abs error", "arrayx", err, "")
    peak_cp = peak_t = float("nan")
    if H.cp is not None:
        cp = H.cp

        class Peak(cp.cuda.MemoryHook):
            name = "peak"

            def __init__(self):
                self.cur = self.peak = 0

            def malloc_postprocess(self, device_id, size, mem_size, mem_ptr, pmem_id):
                self.cur += mem_size
                self.peak = max(self.peak, self.cur)

            def free_postprocess(self, device_id, mem_size, mem_ptr, pmem_id):
                self.cur -= mem_size

        ca, cb, cc = (cp.asarray(x) for x in hs)
        cp.cuda.Device().synchronize()
        hook = Peak()
        with hook:
            cr = ca * cb + cc
            cp.cuda.Device().synchronize()
        peak_cp = hook.peak
        H.record("a*b+c peak extra memory", "cupy", peak_cp / 2**30, "GiB")
        ms = H.gpu_time("cupy", lambda: ca * cb + cc, reps=5)
        H.bandwidth("a*b+c 2^28 f32 (4 arrays moved)", "cupy", ms, 4 * n * 4)
        del ca, cb, cc, cr
        cp.get_default_memory_pool().free_all_blocks()
    if H.torch is not None:
        torch = H.torch
        ta, tb, tc = (torch.as_tensor(x, device="cuda") for x in hs)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base_t = torch.cuda.memory_allocated()
        tr = ta * tb + tc
        torch.cuda.synchronize()
        peak_t = torch.cuda.max_memory_allocated() - base_t
        H.record("a*b+c peak extra memory", "torch", peak_t / 2**30, "GiB")
        ms = H.gpu_time("torch", lambda: ta * tb + tc, reps=5)
        H.bandwidth("a*b+c 2^28 f32 (4 arrays moved)", "torch", ms, 4 * n * 4)
        del ta, tb, tc, tr
        torch.cuda.empty_cache()
    summary("a*b+c 2^28 f32 peak extra memory", f"{peak_ax / 2**30:.2f} GiB",
            f"CuPy {peak_cp / 2**30:.2f} GiB, PyTorch {peak_t / 2**30:.2f} GiB")


@section
def loop_memory(H: Harness):
    """10,000 ops allocating and dropping temporaries: active memory back to its start."""
    dev, P, xc = setup()
    xc.synchronize()
    start = xc.memory_stats()["active"]
    h = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
    a = P.from_host(dev, h, True)
    x = a
    xc.reset_peak_memory()
    for i in range(10000):
        t = P.binary("multiply", x, a, F32)
        x = P.binary("subtract", t, x, F32) if i % 2 else P.binary("add", t, a, F32)
    mid = xc.memory_stats()
    del x, t, a
    xc.synchronize()
    end = xc.memory_stats()
    H.record("10k-op loop active at start", "arrayx", start, "bytes")
    H.record("10k-op loop active at end", "arrayx", end["active"], "bytes")
    H.record("10k-op loop peak", "arrayx", end["peak"], "bytes", driver_allocs=end["driver_allocations"])
    summary("10,000-op loop memory", "back to start" if end["active"] == start else "LEAK",
            f"start {start} B, end {end['active']} B, peak {end['peak']} B, cached {end['cached']} B, "
            f"active before sync {mid['active']} B")


@section
def oom(H: Harness):
    dev, P, xc = setup()
    msg = "no error"
    try:
        P.empty(dev, (400 * 2**30,), np.dtype("uint8"))
    except MemoryError as e:
        msg = str(e)
    h = np.arange(1000, dtype=np.float32)
    a = P.from_host(dev, h, True)
    ok = bool(np.array_equal(P.to_host(P.binary("add", a, a, F32)), h + h))
    H.record("400 GiB request", "arrayx", 1.0 if msg != "no error" else 0.0, "raised", message=msg)
    summary("MemoryError on 400 GiB, next op OK", f"{'raised' if msg != 'no error' else 'NOT RAISED'}, next op {'OK' if ok else 'WRONG'}", msg[:150])


FAULT = textwrap.dedent("""
    import time
    from arrayx.cuda.engine import compiler, runtime
    from arrayx.cuda.engine.compiler import KernelSpec
    src = "def bad_store(out, n):\\n    i = cuda.grid(1)\\n    if i < n:\\n        out[i] = 1.0\\n"
    spec = KernelSpec("bad_store", src, "bad_store", ("float32*", "int64"))
    k = compiler.get_kernel(spec, 0)
    dev = runtime.get_device(0)
    t0 = time.perf_counter()
    k(dev.stream, 4, 256, (8, 1024), ())
    try:
        runtime.synchronize()
        print("NO ERROR")
    except runtime.CudaKernelError as e:
        print(f"RAISED after {time.perf_counter() - t0:.3f}s: {e}")
    try:
        runtime.synchronize()
    except runtime.CudaError as e:
        print("LATER:", type(e).__name__)
""")

SECOND = textwrap.dedent("""
    import time, json, sys
    t0 = time.perf_counter()
    import numpy as np
    from arrayx.cuda import primitives as P, runtime, compiler
    import arrayx._devices as D
    dev = D.cuda_device(0)
    runtime.get_device(0)
    t1 = time.perf_counter()
    h = np.arange(1000, dtype=np.float32)
    a = P.from_host(dev, h, True)
    runtime.synchronize()
    out = {}
    for name in ("add", "multiply", "subtract"):
        t = time.perf_counter()
        r = P.binary(name, a, a, np.dtype("float32"))
        runtime.synchronize()
        out[name + "_ms"] = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    f = P.full(dev, (1000,), 2.0, np.dtype("float32"))
    runtime.synchronize()
    out["full_ms"] = (time.perf_counter() - t) * 1e3
    out.update({"compiled": compiler.compile_count(), "disk_hits": compiler.stats()["disk_hits"],
                "init_s": t1 - t0, "numba_imported": "numba" in sys.modules})
    print(json.dumps(out))
""")


def _sub(code, env=None, timeout=300):
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e,
                          timeout=timeout)


@section
def kernel_fault(H: Harness):
    t0 = time.perf_counter()
    r = _sub(FAULT, timeout=120)
    dt = time.perf_counter() - t0
    out = (r.stdout + r.stderr).strip()
    H.record("kernel fault subprocess", "arrayx", r.returncode, "exit code", output=out[-2000:],
             seconds=dt)
    line = next((l for l in r.stdout.splitlines() if l.startswith(("RAISED", "NO ERROR"))), out[-200:])
    summary("kernel fault -> exception", f"exit {r.returncode}", line[:200])


@section
def second_process(H: Harness):
    with tempfile.TemporaryDirectory() as d:
        env = {"ARRAYX_KERNEL_CACHE": d}
        r1 = _sub(SECOND, env)
        r2 = _sub(SECOND, env)
    res = []
    for r in (r1, r2):
        if r.returncode != 0:
            raise RuntimeError(r.stderr[-2000:])
        res.append(json.loads(r.stdout.strip().splitlines()[-1]))
    for i, x in enumerate(res, 1):
        H.record(f"process {i} (empty cache dir at start of 1)", "arrayx", x["compiled"], "kernels compiled", **x)
    x = res[1]
    summary("second process: compiles / first op", f"{x['compiled']} compiled, numba imported: {x['numba_imported']}",
            f"first add {x['add_ms']:.2f} ms, multiply {x['multiply_ms']:.2f} ms, full {x['full_ms']:.2f} ms; "
            f"process 1 compiled {res[0]['compiled']} (add {res[0]['add_ms']:.0f} ms); init {x['init_s']:.2f} s")


@section
def transfers(H: Harness):
    from arrayx.cuda.engine import transfer
    from arrayx.cuda.engine.array import new_array
    dev, P, xc = setup()
    res = {}
    for mb in (1, 4, 16, 64, 512):
        n = mb << 20
        h = np.random.default_rng(4).integers(0, 255, n, dtype=np.uint8)
        back = np.empty_like(h)
        d = new_array(0, (n,), np.dtype(np.uint8), H.dev.allocator)
        for staged in (False, True):
            def up():
                transfer.h2d(H.dev, d.ptr, h.ctypes.data, n, staged=staged)
            def down():
                transfer.d2h(H.dev, back.ctypes.data, d.ptr, n, staged=staged)
            reps = 20 if mb < 100 else 5
            us_up = H.host_time(up, xc.synchronize, n=reps, warmup=2, repeats=2)
            us_down = H.host_time(down, xc.synchronize, n=reps, warmup=2, repeats=2)
            kind = "staged" if staged else "pageable"
            H.record(f"H2D {mb} MiB {kind}", "arrayx", n / us_up / 1e3, "GB/s")
            H.record(f"D2H {mb} MiB {kind}", "arrayx", n / us_down / 1e3, "GB/s")
            res[(mb, kind)] = (n / us_up / 1e3, n / us_down / 1e3)
        assert np.array_equal(back, h)
        if H.cp is not None:
            cp = H.cp
            us_up = H.host_time(lambda: cp.asarray(h), lambda: H.sync("cupy"), n=5 if mb > 100 else 20, warmup=2, repeats=2)
            ca = cp.asarray(h)
            us_down = H.host_time(lambda: ca.get(), lambda: None, n=5 if mb > 100 else 20, warmup=2, repeats=2)
            H.record(f"H2D {mb} MiB", "cupy", n / us_up / 1e3, "GB/s")
            H.record(f"D2H {mb} MiB", "cupy", n / us_down / 1e3, "GB/s")
        del d
    summary("transfers 512 MiB H2D/D2H GB/s",
            f"pageable {res[(512, 'pageable')][0]:.1f}/{res[(512, 'pageable')][1]:.1f}",
            f"staged {res[(512, 'staged')][0]:.1f}/{res[(512, 'staged')][1]:.1f}; 64 MiB pageable "
            f"{res[(64, 'pageable')][0]:.1f}/{res[(64, 'pageable')][1]:.1f} staged "
            f"{res[(64, 'staged')][0]:.1f}/{res[(64, 'staged')][1]:.1f}")
    xc.clear_cache()


def write_md(path, doc):
    m = doc["meta"]
    lines = [f"# CUDA runtime benchmarks, {m['date']}", "",
             f"Device: {m['device']} (sm_{m['compute_capability'][0]}{m['compute_capability'][1]}, "
             f"{m['multiprocessors']} SMs, {m['total_memory'] / 2**30:.0f} GiB), driver {m['driver']}. "
             f"Versions: {', '.join(f'{k} {v}' for k, v in m['versions'].items())}.", "",
             "Command: `STEPS=bench BENCHES=runtime bash benchmarks/gpu_session.sh` (runs `python3 benchmarks/runtime_bench.py --out $OUT`).",
             "", "| item | arrayx | notes (same run) |", "| --- | --- | --- |"]
    for item, value, note in SUMMARY:
        lines.append(f"| {item} | {value} | {note} |")
    lines += ["", "All records (JSON has the details):", "", "| name | lib | value | unit | TB/s |",
              "| --- | --- | --- | --- | --- |"]
    for r in doc["records"]:
        v = r["value"]
        vs = f"{v:.4g}" if isinstance(v, float) else str(v)
        lines.append(f"| {r['name']} | {r['lib']} | {vs} | {r['unit']} | {r.get('tb_per_s', '')} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default="")
    a = p.parse_args()
    H = Harness("arrayx CUDA runtime")
    n_ops = 5000 if a.quick else 20000
    big = 1 << 24 if a.quick else 1 << 28
    only = set(a.only.split(",")) if a.only else None
    steps = [("launch", lambda: launch_paths(H)), ("host", lambda: host_cost(H, n_ops)),
             ("throughput", lambda: throughput(H, big)), ("peak", lambda: peak_memory(H, big)),
             ("loop", lambda: loop_memory(H)), ("oom", lambda: oom(H)),
             ("fault", lambda: kernel_fault(H)), ("second", lambda: second_process(H)),
             ("transfers", lambda: transfers(H))]
    for name, fn in steps:
        if only is None or name in only:
            fn()
    from arrayx.cuda.engine import launcher, tuning
    from arrayx.cuda.kernels import elementwise
    extra = {"summary": [{"item": i, "value": v, "note": n} for i, v, n in SUMMARY],
             "settings": {"submit_mode": tuning.SUBMIT_MODE, "batch_ops": tuning.BATCH_OPS,
                          "vec_unroll": elementwise.tuning.VEC_UNROLL, "launch_api": launcher.launch_api()}}
    os.makedirs(a.out, exist_ok=True)
    doc = H.write(os.path.join(a.out, f"runtime-{DATE}.json"), extra)
    write_md(os.path.join(a.out, f"runtime-{DATE}.md"), doc)
    print("\n==== SUMMARY ({} / {}) ====".format(doc["meta"]["device"], DATE))
    for item, value, note in SUMMARY:
        print(f"- {item}: {value} | {note}")


if __name__ == "__main__":
    main()
