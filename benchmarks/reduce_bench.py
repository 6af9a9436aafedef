"""Bandwidth of the reduction kernel family (issue 5's targets), beside CuPy and PyTorch.

    python benchmarks/reduce_bench.py --out DIR [--log2n 28]

Data: 2^28 float32 elements (random normal, generated on the GPU by CuPy and shared with arrayx
and PyTorch through DLPack) and a 16k x 16k float32 matrix (the same 1 GiB). Each row: the median
of 20 CUDA-event-timed calls after warm-up. Reductions count the bytes read (the outputs are
tiny); cumulative_sum counts its input read and its output written. Every figure is also given
as a ratio to the device-to-device copy of the same 1 GiB measured in the same process
(cuMemcpyDtoD, bytes read + written), the ceiling. Host fallback is an error throughout, and the
number of kernels numba compiled in this process is recorded (0 with a warm kernel cache).

Writes DIR/reduce-<date>.json and .md; prints a short table last.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import (DATE, comparison_table, finish_benchmark, start_benchmark,  # noqa: E402
                     write_report)

# name -> minimum ratio to the copy ceiling that issue 5 asks of arrayx
TARGETS = {"sum 2^28 float32": 0.97, "row sums 16k x 16k": 0.97, "column sums 16k x 16k": 0.95,
           "argmax 2^28 float32": 0.95, "cumulative_sum 2^28 float32": 0.8}


def operations(libs, n, side):
    """{name: (bytes moved, {lib: fn})} over the same data in every library."""
    import cupy as cp
    import arrayx as xp
    cp.random.seed(1)
    x_cp = cp.random.standard_normal(n, dtype=cp.float32)
    m_cp = cp.random.standard_normal((side, side), dtype=cp.float32)
    cp.cuda.Device().synchronize()
    data = {"cupy": (cp, x_cp, m_cp), "arrayx": (xp, xp.from_dlpack(x_cp), xp.from_dlpack(m_cp))}
    if "torch" in libs:
        torch = libs["torch"]
        data["torch"] = (torch, torch.from_dlpack(x_cp), torch.from_dlpack(m_cp))
    f4 = 4

    def per_lib(make):
        return {lib: make(lib, *data[lib]) for lib in data}

    def total(lib, mod, x, m):
        return lambda: mod.sum(x)

    def rows(lib, mod, x, m):
        return (lambda: m.sum(dim=1)) if lib == "torch" else (lambda: mod.sum(m, axis=1))

    def columns(lib, mod, x, m):
        return (lambda: m.sum(dim=0)) if lib == "torch" else (lambda: mod.sum(m, axis=0))

    def argmax(lib, mod, x, m):
        return lambda: mod.argmax(x)

    def cumsum(lib, mod, x, m):
        if lib == "arrayx":
            return lambda: mod.cumulative_sum(x)
        return (lambda: mod.cumsum(x, dim=0)) if lib == "torch" else (lambda: mod.cumsum(x))

    return {"sum 2^28 float32": (n * f4, per_lib(total)),
            "row sums 16k x 16k": (side * side * f4, per_lib(rows)),
            "column sums 16k x 16k": (side * side * f4, per_lib(columns)),
            "argmax 2^28 float32": (n * f4, per_lib(argmax)),
            "cumulative_sum 2^28 float32": (2 * n * f4, per_lib(cumsum))}


def main():
    a, H = start_benchmark("arrayx CUDA reductions")
    n = 1 << a.log2n
    side = 1 << (a.log2n // 2)
    libs = {"torch": H.torch} if H.torch is not None else {}
    ceiling = H.copy_ceiling(n, a.reps)
    ceiling_tbs = ceiling["tb_per_s"]
    rows = []
    for name, (nbytes, fns) in operations(libs, n, side).items():
        got = H.compare(name, nbytes, fns, reps=a.reps)
        row = {"op": name}
        for lib in ("arrayx", "cupy", "torch"):
            rec = got.get(lib)
            if rec is not None:
                rec["ratio_to_copy"] = round(rec["tb_per_s"] / ceiling_tbs, 3)
                row[lib] = (rec["tb_per_s"], rec["ratio_to_copy"])
        row["target"] = TARGETS.get(name)
        row["met"] = "arrayx" in row and row["arrayx"][1] >= row["target"]
        rows.append(row)
    doc = finish_benchmark(H, a.out, "reduce", {"ceiling_tb_per_s": ceiling_tbs, "table": rows},
                           f"reduction bandwidth; copy {ceiling_tbs} TB/s", table_lines(rows))
    write_md(os.path.join(a.out, f"reduce-{DATE}.md"), doc, rows, ceiling_tbs, a.log2n)


def _cell(v):
    return "-" if v is None else f"{v[0]:.2f} TB/s ({v[1]:.2f})"


def table_lines(rows):
    return comparison_table(rows, _cell, lambda r: f">= {r['target']} "
                            f"{'met' if r['met'] else 'NOT met'}", "target (arrayx, of copy)")


def write_md(path, doc, rows, ceiling, log2n):
    write_report(path, "CUDA reduction bandwidth", doc, [
        f"2^{log2n} float32 elements (a vector, and a square matrix of the same size; random "
        "normal, shared through DLPack); median of 20 CUDA-event-timed calls after warm-up; "
        "bytes = input read (cumulative_sum: input read + output written). In brackets: ratio "
        f"to the device-to-device copy of the same run ({ceiling} TB/s, read + written).",
        "Command: `python3 benchmarks/reduce_bench.py --out $OUT` on the lent H200."],
        table_lines(rows))


if __name__ == "__main__":
    main()
