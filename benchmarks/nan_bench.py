"""NaN-aware statistics, median and quantile (issue 22, part 1): each arrayx nan-function beside
its plain arrayx counterpart on the same data, and beside CuPy's and PyTorch's nan-functions.

    python benchmarks/nan_bench.py --out DIR [--log2n 28] [--log2m 23]

Data: 2^log2n float32 elements (random normal, a tenth NaN, made by CuPy and shared with arrayx
and PyTorch through DLPack), as a vector and as a square matrix; median and quantile run on a
2^log2m-element matrix of rows of 2048 (PyTorch's quantile refuses more than 2^24 elements).
Each figure: the median of --reps CUDA-event-timed calls after warm-up, host fallback an error.
The target (issue 22): a reduction or scan within 1.1x of its plain counterpart's time
(nanargmax/nanargmin include the one read-back that checks for an all-NaN slice); nanvar, median
and quantile are composites, reported against var, median and quantile. The number of kernels
numba compiled in this process is recorded (0 with a warm kernel cache).

Writes DIR/nan-<date>.json and .md; prints a short table last.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import DATE, finish_benchmark, start_benchmark, write_report  # noqa: E402

TARGET = 1.1  # arrayx nan-function time over its plain counterpart's, at most
COMPOSITES = ("nanvar", "nanmedian", "nanquantile")  # reported, not held to the target
Q = (0.1, 0.5, 0.9)


def operations(H, n, side, rows_shape):
    """{name: {"arrayx", "plain", "cupy", "torch": fn or None}} over the same data."""
    import cupy as cp

    import arrayx as xp
    torch = H.torch
    cp.random.seed(1)

    def with_nans(shape):
        v = cp.random.standard_normal(shape, dtype=cp.float32)
        v[cp.random.random(shape, dtype=cp.float32) < 0.1] = cp.nan
        return v

    x_cp, m_cp, r_cp = with_nans(n), with_nans((side, side)), with_nans(rows_shape)
    cp.cuda.Device().synchronize()
    x, m, r = (xp.from_dlpack(v) for v in (x_cp, m_cp, r_cp))
    tx, tm, tr = ((torch.from_dlpack(v) for v in (x_cp, m_cp, r_cp)) if torch is not None
                  else (None, None, None))
    q_x, q_cp = xp.asarray(Q, dtype=xp.float32), cp.asarray(Q, dtype=cp.float32)
    q_t = torch.tensor(Q, dtype=torch.float32, device="cuda") if torch is not None else None

    def t(fn):  # a PyTorch case, when PyTorch is here
        return fn if torch is not None else None

    return {
        "nansum 2^n": {"arrayx": lambda: xp.nansum(x), "plain": lambda: xp.sum(x),
                       "cupy": lambda: cp.nansum(x_cp), "torch": t(lambda: torch.nansum(tx))},
        "nanmean 2^n": {"arrayx": lambda: xp.nanmean(x), "plain": lambda: xp.mean(x),
                        "cupy": lambda: cp.nanmean(x_cp), "torch": t(lambda: torch.nanmean(tx))},
        "nanmax 2^n": {"arrayx": lambda: xp.nanmax(x), "plain": lambda: xp.max(x),
                       "cupy": lambda: cp.nanmax(x_cp), "torch": None},
        "nanargmax 2^n": {"arrayx": lambda: xp.nanargmax(x), "plain": lambda: xp.argmax(x),
                          "cupy": lambda: cp.nanargmax(x_cp), "torch": None},
        "nanprod 2^n": {"arrayx": lambda: xp.nanprod(x), "plain": lambda: xp.prod(x),
                        "cupy": lambda: cp.nanprod(x_cp), "torch": None},
        "row nansum": {"arrayx": lambda: xp.nansum(m, axis=1), "plain": lambda: xp.sum(m, axis=1),
                       "cupy": lambda: cp.nansum(m_cp, axis=1),
                       "torch": t(lambda: torch.nansum(tm, dim=1))},
        "column nanmean": {"arrayx": lambda: xp.nanmean(m, axis=0),
                           "plain": lambda: xp.mean(m, axis=0),
                           "cupy": lambda: cp.nanmean(m_cp, axis=0),
                           "torch": t(lambda: torch.nanmean(tm, dim=0))},
        "row nanmin": {"arrayx": lambda: xp.nanmin(m, axis=1), "plain": lambda: xp.min(m, axis=1),
                       "cupy": lambda: cp.nanmin(m_cp, axis=1), "torch": None},
        "row nanargmin": {"arrayx": lambda: xp.nanargmin(m, axis=1),
                          "plain": lambda: xp.argmin(m, axis=1),
                          "cupy": lambda: cp.nanargmin(m_cp, axis=1), "torch": None},
        "nancumsum 2^n": {"arrayx": lambda: xp.nancumsum(x),
                          "plain": lambda: xp.cumulative_sum(x),
                          "cupy": lambda: cp.nancumsum(x_cp), "torch": None},
        "nanvar rows": {"arrayx": lambda: xp.nanvar(m, axis=1), "plain": lambda: xp.var(m, axis=1),
                        "cupy": lambda: cp.nanvar(m_cp, axis=1), "torch": None},
        "nanmedian rows": {"arrayx": lambda: xp.nanmedian(r, axis=1),
                           "plain": lambda: xp.median(r, axis=1),
                           "cupy": lambda: cp.nanmedian(r_cp, axis=1),
                           "torch": t(lambda: torch.nanmedian(tr, dim=1))},
        "nanquantile rows, 3 q": {"arrayx": lambda: xp.nanquantile(r, q_x, axis=1),
                                  "plain": lambda: xp.quantile(r, q_x, axis=1),
                                  "cupy": lambda: cp.nanquantile(r_cp, q_cp, axis=1),
                                  "torch": t(lambda: torch.nanquantile(tr, q_t, dim=1))},
    }


def main():
    a, H = start_benchmark("arrayx CUDA NaN-aware statistics", log2m=23)
    n = 1 << a.log2n
    side = 1 << (a.log2n // 2)
    rows_shape = ((1 << a.log2m) // 2048, 2048)
    table = []
    for name, fns in operations(H, n, side, rows_shape).items():
        row = {"op": name}
        for lib, fn in fns.items():
            if fn is None:
                continue
            where = "arrayx" if lib == "plain" else lib
            try:
                ms = H.gpu_time(where, fn, reps=a.reps)
            except Exception as e:  # a library that cannot run this case: note and go on
                H.record(name, lib, float("nan"), "ms", error=repr(e))
                continue
            H.record(name, lib, ms, "ms")
            row[lib] = ms
        if "arrayx" in row and "plain" in row:
            row["ratio"] = round(row["arrayx"] / row["plain"], 3)
            base = name.split()[0] if not name.startswith(("row", "column")) else name.split()[1]
            row["held"] = base not in COMPOSITES
            row["met"] = row["ratio"] <= TARGET if row["held"] else None
        table.append(row)
    sizes = {"log2n": a.log2n, "side": side, "rows": list(rows_shape)}
    doc = finish_benchmark(H, a.out, "nan", {"sizes": sizes, "table": table, "target": TARGET},
                           "NaN-aware statistics", table_lines(table))
    write_md(os.path.join(a.out, f"nan-{DATE}.md"), doc, table, a.log2n, side, rows_shape)


def _ms(v):
    return "-" if v is None else f"{v:.3f} ms"


def table_lines(table):
    lines = ["| operation | arrayx | arrayx plain | ratio | CuPy | PyTorch | target |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in table:
        target = (f"<= {TARGET} {'met' if r.get('met') else 'NOT met'}" if r.get("held")
                  else "composite")
        lines.append(f"| {r['op']} | {_ms(r.get('arrayx'))} | {_ms(r.get('plain'))} | "
                     f"{r.get('ratio', '-')} | {_ms(r.get('cupy'))} | {_ms(r.get('torch'))} | "
                     f"{target} |")
    return lines


def write_md(path, doc, table, log2n, side, rows_shape):
    write_report(path, "CUDA NaN-aware statistics", doc, [
        f"float32, a tenth NaN: 2^{log2n} elements as a vector and as {side} x {side} (row and "
        f"column cases); median and quantile on {rows_shape[0]} x {rows_shape[1]}, along rows "
        f"(q = {', '.join(map(str, Q))}). Median of CUDA-event-timed calls after warm-up; "
        "'arrayx plain' is the standard counterpart (sum, mean, max, argmax, prod, min, argmin, "
        "cumulative_sum, var, median, quantile) on the same data, 'ratio' arrayx over it.",
        "Command: `python3 benchmarks/nan_bench.py --out $OUT` on the lent H200."],
        table_lines(table))


if __name__ == "__main__":
    main()
