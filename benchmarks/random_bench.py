"""Random numbers (issue 22, part 2): arrayx.random beside CuPy's default_rng and PyTorch's
torch.rand / randn / randint / randperm, against the write bandwidth of a fill.

    python benchmarks/random_bench.py --out DIR [--log2n 26] [--block 256]

Each operation makes a new array of 2^log2n elements (bytes: the output written once). The
target (issue 22): float32 ``random`` and ``standard_normal`` at >= 0.9 of the write bandwidth
of ``xp.full`` of the same size and dtype in the same run. float64, integers and permutation are
timed beside them without a target. --block sets the random family's threads a block
(arrayx/cuda/kernels/random/tuning.py BLOCK) for a sweep.

Median of `--reps` CUDA-event-timed calls after warm-up, each library on its own stream, host
fallback an error. Writes DIR/random-<date>.json and .md; prints a short table last.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import (DATE, comparison_table, finish_benchmark, start_benchmark,  # noqa: E402
                     write_report)

TARGET = 0.9  # of the fill's write bandwidth
TARGETED = ("random float32", "standard_normal float32")


def main():
    a, H = start_benchmark("arrayx CUDA random numbers", log2n=26, block=256)
    import arrayx as xp
    from arrayx.cuda.kernels.random import tuning
    tuning.BLOCK = a.block
    cp, torch = H.cp, H.torch
    n = 1 << a.log2n
    dev = "cuda:0"
    rng = xp.random.default_rng(0)
    g = cp.random.default_rng(0) if cp is not None else None
    if torch is not None:
        torch.manual_seed(0)

    def lib_fns(ax, cupy=None, pytorch=None):
        fns = {"arrayx": ax}
        if g is not None and cupy is not None:
            fns["cupy"] = cupy
        if torch is not None and pytorch is not None:
            fns["torch"] = pytorch
        return fns

    T = getattr(torch, "float32", None), getattr(torch, "float64", None)
    ops = [
        ("fill float32", 4, lib_fns(
            lambda: xp.full(n, 1.5, dtype=xp.float32, device=dev),
            cp and (lambda: cp.full(n, 1.5, dtype=cp.float32)),
            torch and (lambda: torch.full((n,), 1.5, dtype=T[0], device=dev)))),
        ("random float32", 4, lib_fns(lambda: rng.random(n, dtype=xp.float32, device=dev),
                                      lambda: g.random(n, dtype=cp.float32),
                                      lambda: torch.rand(n, dtype=T[0], device=dev))),
        ("standard_normal float32", 4, lib_fns(
            lambda: rng.standard_normal(n, dtype=xp.float32, device=dev),
            lambda: g.standard_normal(n, dtype=cp.float32),
            lambda: torch.randn(n, dtype=T[0], device=dev))),
        ("fill float64", 8, lib_fns(
            lambda: xp.full(n, 1.5, dtype=xp.float64, device=dev),
            cp and (lambda: cp.full(n, 1.5, dtype=cp.float64)),
            torch and (lambda: torch.full((n,), 1.5, dtype=T[1], device=dev)))),
        ("random float64", 8, lib_fns(lambda: rng.random(n, device=dev),
                                      lambda: g.random(n, dtype=cp.float64),
                                      lambda: torch.rand(n, dtype=T[1], device=dev))),
        ("standard_normal float64", 8, lib_fns(
            lambda: rng.standard_normal(n, device=dev),
            lambda: g.standard_normal(n, dtype=cp.float64),
            lambda: torch.randn(n, dtype=T[1], device=dev))),
        ("integers [0, 1000) int32", 4, lib_fns(
            lambda: rng.integers(0, 1000, n, dtype=xp.int32, device=dev),
            lambda: g.integers(0, 1000, n, dtype=cp.int32),
            lambda: torch.randint(0, 1000, (n,), dtype=torch.int32, device=dev))),
        ("integers [0, 2^40) int64", 8, lib_fns(
            lambda: rng.integers(0, 2**40, n, device=dev),
            lambda: g.integers(0, 2**40, n, dtype=cp.int64),
            lambda: torch.randint(0, 2**40, (n,), dtype=torch.int64, device=dev))),
        (f"permutation 2^{a.log2n - 2}", 8, lib_fns(
            lambda: rng.permutation(n // 4, device=dev),
            lambda: g.permutation(n // 4),
            lambda: torch.randperm(n // 4, device=dev))),
    ]
    results = {}
    for name, itemsize, fns in ops:
        elements = n // 4 if name.startswith("permutation") else n
        results[name] = H.compare(f"{name} 2^{a.log2n}", elements * itemsize, fns, reps=a.reps)

    rows = []
    for name, _, _ in ops:
        if name.startswith("fill"):
            continue
        fill = results.get("fill " + name.split()[-1], {}).get("arrayx")
        row = {"op": name}
        for lib, rec in results[name].items():
            ratio = round(fill["value"] / rec["value"], 3) if fill else None
            rec["ratio_to_arrayx_fill"] = ratio
            row[lib] = (rec["value"], rec["tb_per_s"], ratio)
        ax = row.get("arrayx")
        row["target"] = (f">= {TARGET} of fill" if name in TARGETED else "")
        met = bool(ax and ax[2] is not None and ax[2] >= TARGET)
        row["met"] = met if name in TARGETED else None
        rows.append(row)
    fills = {name: results[name] for name, _, _ in ops if name.startswith("fill")}

    def cell(v):
        if v is None:
            return "-"
        ms, tbs, ratio = v
        return f"{ms:.3f} ms, {tbs:.2f} TB/s" + (f" ({ratio:.2f} of fill)" if ratio else "")

    def target(r):
        return "" if r["met"] is None else f"{r['target']} {'met' if r['met'] else 'NOT met'}"

    lines = comparison_table(rows, cell, target)
    fill_note = "; ".join(
        f"{k}: " + ", ".join(f"{lib} {rec['value']:.3f} ms ({rec['tb_per_s']:.2f} TB/s)"
                             for lib, rec in v.items())
        for k, v in fills.items())
    doc = finish_benchmark(H, a.out, "random", {"table": rows, "block": a.block, "fills": fills},
                           f"random numbers, 2^{a.log2n} elements, block {a.block}", lines,
                           [f"fills: {fill_note}"])
    write_report(os.path.join(a.out, f"random-{DATE}.md"), "CUDA random numbers", doc, [
        f"New arrays of 2^{a.log2n} elements (permutation: 2^{a.log2n - 2}); bytes: the output "
        f"written once; ratios: the arrayx fill's time of the same size and dtype over the "
        f"operation's; median of {a.reps} CUDA-event-timed calls after warm-up; arrayx random "
        f"family BLOCK {a.block}. arrayx: Philox4x32-10, the same stream as on the cpu; CuPy: "
        f"default_rng (XORWOW); PyTorch: its Philox.",
        f"Command: `python3 benchmarks/random_bench.py --out $OUT --block {a.block}` on the lent "
        f"GPU."], lines, [f"Fills: {fill_note}."])


if __name__ == "__main__":
    main()
