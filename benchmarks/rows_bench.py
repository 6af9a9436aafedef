"""Fused row functions (issue 22, part 3): softmax, log_softmax, logsumexp, layer_norm and
rms_norm over the last axis, arrayx beside CuPy (the composite formula: max, exp, sum,
divide...), PyTorch eager (torch.softmax, torch.log_softmax, torch.logsumexp,
torch.nn.functional.layer_norm / rms_norm) and torch.compile of the same PyTorch functions, in
one process.

    python benchmarks/rows_bench.py --out DIR [--reps 20] [--compile_all 0] [--sweep 0]

Shapes: 16384 x 4096, 8192 x 8192, 65536 x 128, 4096 x 64 and 1000 x 16 float32, and
8192 x 4096 float64 (random normal, made on the host and shared with CuPy and PyTorch through
DLPack); layer_norm with weight and bias, rms_norm with weight, eps 1e-5. Bytes = the input
read once and the output written once (logsumexp: the input read once), the floor of a fused
kernel; each figure is also a ratio to the device-to-device copy of the same bytes measured in
this run (the ceiling). Target (issue 22): arrayx >= 0.9 of the copy on 16384 x 4096 float32,
ahead of PyTorch eager and at torch.compile's level. torch.compile compiles each function for
each shape (seconds apiece): by default on 16384 x 4096 and the short rows (65536 x 128,
4096 x 64); --compile_all 1 does every shape (give the run BENCH_TIMEOUT=600). Each arrayx
result is also compared with PyTorch's (the largest difference relative to the largest value),
so a fast wrong kernel shows.

--sweep 1 then times arrayx alone with each knob of arrayx/cuda/kernels/rows/tuning.py moved
from its default, one at a time (SWEEP), on the float32 shapes of SWEEP_SHAPES, and adds that
table: the figures to choose the defaults from. It compiles about a hundred kernels (minutes
with a cold kernel cache: give it BENCH_TIMEOUT=600).

Median of --reps CUDA-event-timed calls after warm-up; host fallback is an error; the number of
kernels numba compiled in this process is recorded (0 with a warm kernel cache). Writes
DIR/rows-<date>.json and .md; prints the table last.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import DATE, finish_benchmark, start_benchmark, write_report  # noqa: E402

SHAPES = [((16384, 4096), "float32"), ((8192, 8192), "float32"), ((65536, 128), "float32"),
          ((4096, 64), "float32"), ((1000, 16), "float32"), ((8192, 4096), "float64")]
FUNCTIONS = ("softmax", "log_softmax", "logsumexp", "layer_norm", "rms_norm")
TARGET_SHAPE = ((16384, 4096), "float32")
# torch.compile by default: the target and the short rows (where PyTorch led)
COMPILE_SHAPES = (TARGET_SHAPE, ((65536, 128), "float32"), ((4096, 64), "float32"))
# --sweep: one knob moved from its default at a time (the first entry: the defaults)
SWEEP = [("defaults", {}), ("GROUP_MIN_VECTORS=1", {"GROUP_MIN_VECTORS": 1}),
         ("GROUP_MIN_VECTORS=2", {"GROUP_MIN_VECTORS": 2}),
         ("GROUP_MIN_VECTORS=8", {"GROUP_MIN_VECTORS": 8}),
         ("BLOCK_VECTORS=2", {"BLOCK_VECTORS": 2}), ("BLOCK_VECTORS=8", {"BLOCK_VECTORS": 8}),
         ("LOAD_HINT=''", {"LOAD_HINT": ""}), ("MERGED_STATISTICS=True", {"MERGED_STATISTICS": True}),
         ("EARLY_AFFINE=True", {"EARLY_AFFINE": True}),
         ("OCCUPANCY_THREADS=0", {"OCCUPANCY_THREADS": 0}),
         ("OCCUPANCY_THREADS=2048", {"OCCUPANCY_THREADS": 2048})]
SWEEP_SHAPES = ((16384, 4096), (8192, 8192), (65536, 128), (4096, 64))
TARGET_RATIO = 0.9  # of the copy, on TARGET_SHAPE
EPS = 1e-5
LIBS = ("arrayx", "cupy", "torch", "torch.compile")


def arrayx_fns(xp, x, w, b):
    return {"softmax": lambda: xp.softmax(x), "log_softmax": lambda: xp.log_softmax(x),
            "logsumexp": lambda: xp.logsumexp(x),
            "layer_norm": lambda: xp.nn.layer_norm(x, w, b, eps=EPS),
            "rms_norm": lambda: xp.nn.rms_norm(x, w, eps=EPS)}


def cupy_fns(cp, x, w, b):
    """The composite formulas, as a CuPy user writes them."""
    def softmax():
        e = cp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def log_softmax():
        s = x - x.max(axis=-1, keepdims=True)
        return s - cp.log(cp.exp(s).sum(axis=-1, keepdims=True))

    def logsumexp():
        m = x.max(axis=-1, keepdims=True)
        return (m + cp.log(cp.exp(x - m).sum(axis=-1, keepdims=True)))[..., 0]

    def layer_norm():
        m = x.mean(axis=-1, keepdims=True)
        d = x - m
        return d / cp.sqrt((d * d).mean(axis=-1, keepdims=True) + EPS) * w + b

    def rms_norm():
        return x / cp.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * w

    return {"softmax": softmax, "log_softmax": log_softmax, "logsumexp": logsumexp,
            "layer_norm": layer_norm, "rms_norm": rms_norm}


def torch_functions(torch):
    F = torch.nn.functional
    return {"softmax": lambda t, w, b: torch.softmax(t, -1),
            "log_softmax": lambda t, w, b: torch.log_softmax(t, -1),
            "logsumexp": lambda t, w, b: torch.logsumexp(t, -1),
            "layer_norm": lambda t, w, b: F.layer_norm(t, (t.shape[-1],), w, b, EPS),
            "rms_norm": lambda t, w, b: F.rms_norm(t, (t.shape[-1],), w, EPS)}


def relative_difference(got, expected_torch, torch):
    g = torch.from_dlpack(got).double()
    e = expected_torch.double()
    return float((g - e).abs().max() / e.abs().max().clamp_min(1e-30))


def main():
    a, H = start_benchmark("arrayx CUDA fused row functions", compile_all=0, sweep=0)
    import numpy as np

    import arrayx as xp
    cp, torch = H.cp, H.torch
    torch_fns = torch_functions(torch) if torch is not None else {}
    compiled = {}
    rows = []
    rng = np.random.default_rng(1)
    for shape, dtype in SHAPES:
        M, K = shape
        isz = np.dtype(dtype).itemsize
        label = f"{M} x {K} {dtype}"
        x = xp.asarray(rng.standard_normal(shape).astype(dtype), device="cuda:0")
        w = xp.asarray(rng.standard_normal(K).astype(dtype), device="cuda:0")
        b = xp.asarray(rng.standard_normal(K).astype(dtype), device="cuda:0")
        ceiling = H.copy_ceiling(M * K * isz // 4, a.reps)["tb_per_s"]
        fns = {"arrayx": arrayx_fns(xp, x, w, b)}
        if cp is not None:
            fns["cupy"] = cupy_fns(cp, cp.from_dlpack(x), cp.from_dlpack(w), cp.from_dlpack(b))
        if torch is not None:
            tx, tw, tb = (torch.from_dlpack(v) for v in (x, w, b))
            fns["torch"] = {n: (lambda f=f: f(tx, tw, tb)) for n, f in torch_fns.items()}
            if a.compile_all or (shape, dtype) in COMPILE_SHAPES:
                fns["torch.compile"] = {}
                for n, f in torch_fns.items():
                    if n not in compiled:  # static shapes: one specialisation a shape
                        compiled[n] = torch.compile(f, dynamic=False)
                    fns["torch.compile"][n] = lambda c=compiled[n]: c(tx, tw, tb)
        for name in FUNCTIONS:
            nbytes = M * K * isz * (1 if name == "logsumexp" else 2)
            op = f"{name} {label}"
            row = {"op": op, "function": name, "shape": list(shape), "dtype": dtype,
                   "bytes": nbytes, "copy_tb_per_s": ceiling}
            for lib in LIBS:
                fn = fns.get(lib, {}).get(name)
                if fn is None:
                    continue
                try:
                    ms = H.gpu_time("torch" if lib.startswith("torch") else lib, fn,
                                    reps=a.reps)
                except Exception as e:  # a library that cannot run this: note it and go on
                    H.record(op, lib, float("nan"), "ms", error=repr(e))
                    continue
                rec = H.bandwidth(op, lib, ms, nbytes)
                rec["ratio_to_copy"] = round(rec["tb_per_s"] / ceiling, 3)
                row[lib] = (ms, rec["tb_per_s"], rec["ratio_to_copy"])
            if "torch" in fns:
                row["arrayx_vs_torch"] = relative_difference(fns["arrayx"][name](),
                                                             fns["torch"][name](), torch)
            if (shape, dtype) == TARGET_SHAPE:
                row["target"] = TARGET_RATIO
                row["met"] = "arrayx" in row and row["arrayx"][2] >= TARGET_RATIO
            rows.append(row)
            print(table_lines([row])[-1], flush=True)  # a run cut short still shows its rows
        del x, w, b, fns
    swept = sweep(H, xp, rng, a.reps) if a.sweep else []
    lines = table_lines(rows) + ([""] + sweep_lines(swept) if swept else [])
    doc = finish_benchmark(H, a.out, "rows", {"table": rows, "sweep": swept},
                           "fused row functions", lines)
    write_report(os.path.join(a.out, f"rows-{DATE}.md"), "CUDA fused row functions", doc, [
        "Median of CUDA-event-timed calls after warm-up, in one process: ms, and in brackets "
        "TB/s (input read once + output written once; logsumexp: input read) and the ratio to "
        "the device-to-device copy of the same bytes in this run. CuPy: the composite formula; "
        "PyTorch: eager and torch.compile of torch.softmax, log_softmax, logsumexp, "
        "F.layer_norm (weight, bias), F.rms_norm (weight); eps 1e-5. 'vs torch': arrayx's "
        "largest difference from PyTorch's result, relative to its largest value.",
        "Command: `python3 benchmarks/rows_bench.py --out $OUT` on the lent H200."],
        lines)


def sweep(H, xp, rng, reps):
    """[{"knobs", "op", "ms", "ratio_to_copy"}]: arrayx alone on SWEEP_SHAPES (float32) with
    each SWEEP setting of the family's knobs (the plans' cache cleared at each), the defaults
    restored after."""
    from arrayx.cuda.kernels.rows import plans, tuning
    defaults = {name: getattr(tuning, name) for _, knobs in SWEEP for name in knobs}
    out = []
    try:
        for shape in SWEEP_SHAPES:
            M, K = shape
            x = xp.asarray(rng.standard_normal(shape).astype("float32"), device="cuda:0")
            w = xp.asarray(rng.standard_normal(K).astype("float32"), device="cuda:0")
            b = xp.asarray(rng.standard_normal(K).astype("float32"), device="cuda:0")
            ceiling = H.copy_ceiling(M * K, reps)["tb_per_s"]
            fns = arrayx_fns(xp, x, w, b)
            for label, knobs in SWEEP:
                for name, value in {**defaults, **knobs}.items():
                    setattr(tuning, name, value)
                plans.layout.cache_clear()
                for name in FUNCTIONS:
                    nbytes = M * K * 4 * (1 if name == "logsumexp" else 2)
                    op = f"{name} {M} x {K} float32"
                    ms = H.gpu_time("arrayx", fns[name], reps=reps)
                    rec = H.bandwidth(f"sweep {label}: {op}", "arrayx", ms, nbytes)
                    out.append({"knobs": label, "op": op, "ms": ms,
                                "ratio_to_copy": round(rec["tb_per_s"] / ceiling, 3)})
                    print(f"sweep {label}: {op} {ms:.3f} ms "
                          f"({out[-1]['ratio_to_copy']:.2f} of copy)", flush=True)
            del x, w, b, fns
    finally:  # a failed case must not leave the later ones (or a caller) on a swept setting
        for name, value in defaults.items():
            setattr(tuning, name, value)
        plans.layout.cache_clear()
    return out


def sweep_lines(swept):
    """One row an operation, one column a knob setting: ms (ratio to the copy)."""
    labels = [label for label, _ in SWEEP]
    ops = list(dict.fromkeys(r["op"] for r in swept))
    cell = {(r["op"], r["knobs"]): r for r in swept}
    lines = ["| operation | " + " | ".join(labels) + " |",
             "| --- |" + " --- |" * len(labels)]
    for op in ops:
        lines.append(f"| {op} | " + " | ".join(
            f"{cell[op, l]['ms']:.3f} ({cell[op, l]['ratio_to_copy']:.2f})" if (op, l) in cell
            else "-" for l in labels) + " |")
    return lines


def _cell(v):
    return "-" if v is None else f"{v[0]:.3f} ms ({v[1]:.2f} TB/s, {v[2]:.2f})"


def table_lines(rows):
    lines = ["| operation | arrayx | CuPy | PyTorch | torch.compile | vs torch | target |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        target = "-" if "target" not in r else \
            f">= {r['target']} of copy: {'met' if r['met'] else 'NOT met'}"
        diff = "-" if "arrayx_vs_torch" not in r else f"{r['arrayx_vs_torch']:.1e}"
        lines.append(f"| {r['op']} | " + " | ".join(_cell(r.get(lib)) for lib in LIBS)
                     + f" | {diff} | {target} |")
    return lines


if __name__ == "__main__":
    main()
