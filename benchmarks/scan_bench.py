"""Scan kernels (issues 5 and 6): cumulative_sum bandwidth and boolean-mask selection time,
beside CuPy and PyTorch.

    python benchmarks/scan_bench.py --out DIR [--log2n 28] [--log2m 26]

* cumulative_sum of 2^28 float32 (random normal, made by CuPy, shared through DLPack): bytes =
  input read once + output written once; target (issue 5): >= 0.8 of the device-to-device copy
  of the same run (CuPy 0.08, PyTorch 0.61 at the time of the issue).
* x[mask] of 2^26 float32 with a random mask selecting about half: the time of the whole
  operation (scan, one count read back, compaction); target (issue 6): no slower than PyTorch.
  Bandwidth is also given, counting x and the mask read once and the selection written once.

Median of `--reps` CUDA-event-timed calls after warm-up, each library on its own stream, host
fallback an error; the number of kernels numba compiled in this process is recorded (0 with a
warm kernel cache). Writes DIR/scan-<date>.json and .md; prints a short table last.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import DATE, finish_benchmark, start_benchmark, write_report  # noqa: E402

CUMSUM_TARGET = 0.8   # of the copy's bandwidth
MASK_TARGET = 1.0     # time relative to PyTorch's (at most)


def main():
    # --log2n: cumulative_sum length, --log2m: mask selection length (log2)
    a, H = start_benchmark("arrayx CUDA scans", log2m=26)
    import cupy as cp

    import arrayx as xp
    torch = H.torch
    n, m = 1 << a.log2n, 1 << a.log2m

    ceiling = H.copy_ceiling(n, a.reps)["tb_per_s"]

    # --- cumulative_sum -----------------------------------------------------------------------
    cp.random.seed(1)
    x_cp = cp.random.standard_normal(n, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    fns = {"arrayx": lambda x=xp.from_dlpack(x_cp): xp.cumulative_sum(x),
           "cupy": lambda: cp.cumsum(x_cp)}
    if torch is not None:
        fns["torch"] = lambda x=torch.from_dlpack(x_cp): torch.cumsum(x, 0)
    check = xp.cumulative_sum(xp.from_dlpack(x_cp))
    ref = cp.cumsum(x_cp.astype(cp.float64))
    rel = float(cp.max(cp.abs(cp.from_dlpack(check) - ref)) / cp.max(cp.abs(ref)))
    cumsum = H.compare(f"cumulative_sum 2^{a.log2n} float32", 2 * n * 4, fns, reps=a.reps)
    for rec in cumsum.values():
        rec["ratio_to_copy"] = round(rec["tb_per_s"] / ceiling, 3)

    # --- x[mask], half selected ------------------------------------------------------------------
    y_cp = cp.random.standard_normal(m, dtype=cp.float32)
    mask_cp = cp.random.random(m) < 0.5
    cp.cuda.Device().synchronize()
    y_ax, mask_ax = xp.from_dlpack(y_cp), xp.from_dlpack(mask_cp)
    fns = {"arrayx": lambda: y_ax[mask_ax], "cupy": lambda: y_cp[mask_cp]}
    if torch is not None:
        y_t, mask_t = torch.from_dlpack(y_cp), torch.from_dlpack(mask_cp)
        fns["torch"] = lambda: y_t[mask_t]
    same = bool(cp.array_equal(cp.from_dlpack(y_ax[mask_ax]), y_cp[mask_cp]))
    count = int(cp.count_nonzero(mask_cp))
    select = H.compare(f"x[mask] 2^{a.log2m} float32, half selected", m * 5 + count * 4, fns,
                       reps=a.reps)
    torch_ms = select.get("torch", {}).get("value")
    for rec in select.values():
        if torch_ms:
            rec["ratio_to_torch_time"] = round(rec["value"] / torch_ms, 3)

    rows = [_row(f"cumulative_sum 2^{a.log2n} float32", cumsum, "ratio_to_copy",
                 f">= {CUMSUM_TARGET} of copy",
                 cumsum.get("arrayx", {}).get("ratio_to_copy", 0) >= CUMSUM_TARGET),
            _row(f"x[mask] 2^{a.log2m} float32 (half)", select, "ratio_to_torch_time",
                 f"time <= {MASK_TARGET} x PyTorch",
                 bool(torch_ms) and select["arrayx"]["value"] <= MASK_TARGET * torch_ms)]
    lines = table_lines(rows)
    doc = finish_benchmark(
        H, a.out, "scan", {"ceiling_tb_per_s": ceiling, "table": rows,
                           "cumsum_max_rel_error_vs_float64": rel, "mask_result_equal_to_cupy": same},
        f"scans; copy {ceiling} TB/s", lines,
        [f"cumulative_sum max relative error vs float64: {rel:.2e}; x[mask] equal to CuPy: {same}"])
    write_md(os.path.join(a.out, f"scan-{DATE}.md"), doc, lines, ceiling, a, rel, same)


def _row(op, got, ratio_key, target, met):
    row = {"op": op, "target": target, "met": bool(met)}
    for lib in ("arrayx", "cupy", "torch"):
        rec = got.get(lib)
        if rec is not None:
            row[lib] = (rec["value"], rec["tb_per_s"], rec.get(ratio_key))
    row["ratio"] = ratio_key
    return row


def _cell(v, ratio_key):
    if v is None:
        return "-"
    ms, tbs, ratio = v
    label = "of copy" if ratio_key == "ratio_to_copy" else "x torch time"
    return f"{ms:.3f} ms, {tbs:.2f} TB/s" + (f" ({ratio:.2f} {label})" if ratio is not None else "")


def table_lines(rows):
    out = ["| operation | arrayx | CuPy | PyTorch | target (arrayx) |",
           "| --- | --- | --- | --- | --- |"]
    for r in rows:
        out.append(f"| {r['op']} | {_cell(r.get('arrayx'), r['ratio'])} | "
                   f"{_cell(r.get('cupy'), r['ratio'])} | {_cell(r.get('torch'), r['ratio'])} | "
                   f"{r['target']} {'met' if r['met'] else 'NOT met'} |")
    return out


def write_md(path, doc, lines, ceiling, a, rel, same):
    write_report(path, "CUDA scans", doc, [
        f"cumulative_sum of 2^{a.log2n} float32 (bytes: read + write) and x[mask] of "
        f"2^{a.log2m} float32 with half selected (bytes: x and mask read, selection written); "
        f"median of {a.reps} CUDA-event-timed calls after warm-up. Copy ceiling: {ceiling} TB/s.",
        "Command: `python3 benchmarks/scan_bench.py --out $OUT` on the lent H200."], lines,
        [f"cumulative_sum max relative error against a float64 cumsum: {rel:.2e}. "
         f"x[mask] result equal to CuPy's: {same}."])


if __name__ == "__main__":
    main()
