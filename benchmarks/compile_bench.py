"""arrayx.compile (issue 19): the issue's functions written once in array-API code, timed as
arrayx eager, arrayx.compile, CuPy eager (the same code on the cupy namespace), PyTorch eager
and torch.compile (the same formulas in torch's names), in one process, beside the floor: the
inputs read once and the output written once at this run's device-to-device copy bandwidth.

    python benchmarks/compile_bench.py --out DIR [--reps 20] [--first-call 1]

Rows of 16384 x 4096 float32 (softmax, layer norm with weight and bias, RMS norm with weight,
logsumexp), 2^26-element vectors (gelu in its tanh form, a*b + c), and 20 x tanh(a*b + c) on
4096 elements (host-bound: there the replay's host cost shows). Each arrayx.compile result is
compared with torch eager's (largest difference relative to the largest value). Then:

* host microseconds of one replay of the 20 x tanh(a*b + c) plan, per primitive call the
  function makes when traced (60), best of 3 runs of 2000 calls;
* with --first-call 1, the first call of compiled softmax, gelu and 20 x tanh in a fresh
  process (import and array creation excluded), with an empty kernel cache and again with the
  cache that run filled.

Median of --reps CUDA-event-timed calls after warm-up; host fallback is an error. Writes
DIR/compile-<date>.json and .md and prints the table last.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import DATE, finish_benchmark, start_benchmark, write_report  # noqa: E402

ROWS = (16384, 4096)
VECTOR = 1 << 26
SMALL = 4096
EPS = 1e-5
LIBS = ("arrayx", "arrayx.compile", "cupy", "torch", "torch.compile")


# ---- the functions, in array-API code (arrayx, CuPy) and in torch's names ------------------------

def api_functions(xp):
    def softmax(x):
        e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
        return e / xp.sum(e, axis=-1, keepdims=True)

    def layer_norm(x, w, b):
        m = xp.mean(x, axis=-1, keepdims=True)
        v = xp.var(x, axis=-1, keepdims=True)
        return (x - m) / xp.sqrt(v + EPS) * w + b

    def rms_norm(x, w):
        return x / xp.sqrt(xp.mean(x * x, axis=-1, keepdims=True) + EPS) * w

    def logsumexp(x):
        m = xp.max(x, axis=-1, keepdims=True)
        return xp.log(xp.sum(xp.exp(x - m), axis=-1, keepdims=True)) + m

    def gelu(x):
        return 0.5 * x * (1.0 + xp.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))

    def fma(a, b, c):
        return a * b + c

    def tanh20(a, b, c):
        for _ in range(20):
            a = xp.tanh(a * b + c)
        return a
    return {"softmax": softmax, "layer_norm": layer_norm, "rms_norm": rms_norm,
            "logsumexp": logsumexp, "gelu": gelu, "a*b + c": fma, "20 x tanh(a*b + c)": tanh20}


def torch_functions(torch):
    """The row functions in torch's names (amax, keepdim, dim); the elementwise ones are the
    array-API code itself, torch having the same names for them."""
    def softmax(x):
        e = torch.exp(x - torch.amax(x, -1, keepdim=True))
        return e / torch.sum(e, -1, keepdim=True)

    def layer_norm(x, w, b):
        m = torch.mean(x, -1, keepdim=True)
        v = torch.var(x, -1, keepdim=True, correction=0)
        return (x - m) / torch.sqrt(v + EPS) * w + b

    def rms_norm(x, w):
        return x / torch.sqrt(torch.mean(x * x, -1, keepdim=True) + EPS) * w

    def logsumexp(x):
        m = torch.amax(x, -1, keepdim=True)
        return torch.log(torch.sum(torch.exp(x - m), -1, keepdim=True)) + m
    return {**api_functions(torch), "softmax": softmax, "layer_norm": layer_norm,
            "rms_norm": rms_norm, "logsumexp": logsumexp}


def cases(rng, np):
    """name -> (host arguments, bytes of the floor)."""
    M, K = ROWS
    x = rng.standard_normal(ROWS).astype(np.float32)
    w = rng.standard_normal(K).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    v = [rng.standard_normal(VECTOR).astype(np.float32) for _ in range(3)]
    s = [rng.uniform(-1, 1, SMALL).astype(np.float32) for _ in range(3)]
    row_bytes = 2 * M * K * 4
    return {"softmax": ((x,), row_bytes), "layer_norm": ((x, w, b), row_bytes),
            "rms_norm": ((x, w), row_bytes), "logsumexp": ((x,), M * K * 4 + M * 4),
            "gelu": ((v[0],), 2 * VECTOR * 4), "a*b + c": (tuple(v), 4 * VECTOR * 4),
            "20 x tanh(a*b + c)": (tuple(s), None)}


def first_call_child():
    """In a fresh process: ms of the first call of three compiled functions (JSON on stdout)."""
    import numpy as np
    import arrayx as xp
    fns = api_functions(xp)
    rng = np.random.default_rng(0)
    args = {"softmax": (rng.standard_normal((1000, 300)).astype(np.float32),),
            "gelu": (rng.standard_normal(100000).astype(np.float32),),
            "20 x tanh(a*b + c)": tuple(rng.uniform(-1, 1, SMALL).astype(np.float32)
                                        for _ in range(3))}
    out = {}
    for name, host in args.items():
        dev = [xp.asarray(h, device="cuda:0") for h in host]
        xp.cuda.synchronize()
        compiled = xp.compile(fns[name])
        t = time.perf_counter()
        compiled(*dev)
        xp.cuda.synchronize()
        out[name] = (time.perf_counter() - t) * 1e3
    print(json.dumps(out))


def first_calls() -> dict:
    """{"empty cache": {...}, "warm cache": {...}}: first_call_child with a new kernel cache
    folder, then again with the same folder."""
    res = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, ARRAYX_KERNEL_CACHE=cache)
        for label in ("empty cache", "warm cache"):
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "1"],
                               env=env, capture_output=True, text=True, timeout=300)
            lines = p.stdout.strip().splitlines()
            res[label] = json.loads(lines[-1]) if p.returncode == 0 and lines else \
                {"error": p.stderr[-500:]}
    return res


def main():
    if "--child" in sys.argv:
        return first_call_child()
    a, H = start_benchmark("arrayx.compile", first_call=1)
    import numpy as np

    import arrayx as xp
    cp, torch = H.cp, H.torch
    rng = np.random.default_rng(1)
    api = api_functions(xp)
    compiled = {n: xp.compile(f) for n, f in api.items()}
    cupy_fns = api_functions(cp) if cp is not None else {}
    torch_fns = torch_functions(torch) if torch is not None else {}
    torch_compiled = {n: torch.compile(f, dynamic=False) for n, f in torch_fns.items()}
    # the GPU idles at a low clock: a second of copies first, so the first row is not timed
    # while it ramps up
    H.copy_time(ROWS[0] * ROWS[1], reps=int(1.0 / 0.14e-3))
    ceiling = H.copy_ceiling(ROWS[0] * ROWS[1], a.reps)["tb_per_s"]
    rows = []
    for name, (host, nbytes) in cases(rng, np).items():
        dev = [xp.asarray(h, device="cuda:0") for h in host]
        fns = {"arrayx": lambda: api[name](*dev), "arrayx.compile": lambda: compiled[name](*dev)}
        if cp is not None:
            cdev = [cp.from_dlpack(d) for d in dev]
            fns["cupy"] = lambda: cupy_fns[name](*cdev)
        if torch is not None:
            tdev = [torch.from_dlpack(d) for d in dev]
            fns["torch"] = lambda: torch_fns[name](*tdev)
            fns["torch.compile"] = lambda: torch_compiled[name](*tdev)
        row = {"op": name, "floor_bytes": nbytes}
        if nbytes:
            row["floor_ms"] = nbytes / (ceiling * 1e12) * 1e3
        for lib in LIBS:
            fn = fns.get(lib)
            if fn is None:
                continue
            try:
                row[lib] = H.gpu_time("torch" if lib.startswith("torch") else "arrayx"
                                      if lib.startswith("arrayx") else lib, fn, reps=a.reps)
            except Exception as e:  # a library that cannot run this: note it and go on
                row[lib + " error"] = repr(e)[:200]
            H.record(name, lib, row.get(lib, float("nan")), "ms")
        if torch is not None:
            got = torch.from_dlpack(compiled[name](*dev)).double()
            ref = torch_fns[name](*tdev).double()
            row["compile_vs_torch"] = float((got - ref).abs().max() / ref.abs().max())
        info = compiled[name].cache_info()
        row["plan_steps"], row["row_functions"] = info["steps"][0], info["row_functions"][0]
        rows.append(row)
        print(table_lines([row])[-1], flush=True)
        if name == "20 x tanh(a*b + c)":
            calls = 60  # 20 x (multiply, add, tanh)
            us = H.host_time(lambda: compiled[name](*dev), H.rt.synchronize, n=2000)
            row["replay_host_us"] = us
            row["replay_host_us_per_call"] = us / calls
        del dev, fns
    firsts = first_calls() if a.first_call else {}
    lines = table_lines(rows) + [""] + first_call_lines(firsts, rows)
    doc = finish_benchmark(H, a.out, "compile", {"table": rows, "first_call_ms": firsts,
                                                  "copy_tb_per_s": ceiling},
                           "arrayx.compile", lines)
    write_report(os.path.join(a.out, f"compile-{DATE}.md"), "arrayx.compile", doc, [
        "Median of CUDA-event-timed calls after warm-up, ms, in one process. floor: the inputs "
        "read once and the output written once at this run's copy bandwidth "
        f"({ceiling:.2f} TB/s). The same array-API code runs eagerly on arrayx and CuPy and "
        "compiled by arrayx.compile; PyTorch runs the same formulas in torch's names, eagerly "
        "and through torch.compile(dynamic=False). 'vs torch': the compiled result's largest "
        "difference from PyTorch eager's, relative to its largest value. 'plan': the "
        "replayed plan's primitive calls (row functions recognised).",
        "Command: `python3 benchmarks/compile_bench.py --out $OUT` on the lent H200."], lines)


def _ms(v):
    return f"{v:.3f}" if isinstance(v, float) else "-"


def table_lines(rows) -> list:
    lines = ["| function | arrayx eager | arrayx.compile | CuPy eager | PyTorch eager | "
             "torch.compile | floor | compile / torch.compile | compile / floor | plan | vs torch |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        c, tc, fl = r.get("arrayx.compile"), r.get("torch.compile"), r.get("floor_ms")
        ratio_tc = f"{c / tc:.2f}" if c and tc else "-"
        ratio_fl = f"{c / fl:.2f}" if c and fl else "-"
        lines.append(f"| {r['op']} | {_ms(r.get('arrayx'))} | {_ms(c)} | {_ms(r.get('cupy'))} | "
                     f"{_ms(r.get('torch'))} | {_ms(tc)} | {_ms(fl)} | {ratio_tc} | {ratio_fl} | "
                     f"{r.get('plan_steps', '-')} ({r.get('row_functions', 0)}) | "
                     f"{r.get('compile_vs_torch', float('nan')):.1e} |")
    return lines


def first_call_lines(firsts, rows) -> list:
    lines = []
    for r in rows:
        if "replay_host_us" in r:
            lines.append(f"Replay of 20 x tanh(a*b + c) (4096 float32): {r['replay_host_us']:.1f} "
                         f"us of host time a call, {r['replay_host_us_per_call']:.2f} us per "
                         "primitive call of the traced function (60).")
    for label, d in firsts.items():
        lines.append(f"First call with a new signature, fresh process, {label}: " +
                     ", ".join(f"{k} {v:.0f} ms" if isinstance(v, float) else f"{k}: {v}"
                               for k, v in d.items()) + ".")
    return lines


if __name__ == "__main__":
    main()
