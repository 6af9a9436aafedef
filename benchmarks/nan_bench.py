"""NaN-aware statistics, median and quantile (issue 22, part 1): every arrayx nan-function beside
its plain arrayx counterpart on the same data, and beside CuPy's and PyTorch's.

    python benchmarks/nan_bench.py --out DIR [--log2n 28] [--log2m 23] [--reps 20]

Data: 2^log2n float32 elements (random normal, a tenth NaN, made by CuPy and shared with arrayx
and PyTorch through DLPack), as a vector and as a square matrix; median and quantile (nan or
not) run on a 2^log2m-element matrix of rows of 2048 (PyTorch's quantile refuses more than 2^24
elements). Each figure: the median of --reps CUDA-event-timed calls after one warm-up call, host
fallback an error. The target (issue 22): a reduction or scan within 1.1x of its plain
counterpart's time (nanargmax/nanargmin include the one read-back that checks for an all-NaN
slice). nanvar and nanstd are composites, reported against var and std; median, quantile,
nanmedian and nanquantile against arrayx's sort of the same rows (the work a sort-based median
does; CuPy's and PyTorch's are sort-based) and beside CuPy's and PyTorch's own.

Every case prints one line as it finishes, with the wall seconds it took (first calls compile:
arrayx kernels when the kernel cache is cold, CuPy's and cuda.compute's on every fresh machine),
so a run cut short still shows what it reached; the json records them. The number of kernels
numba compiled in this process is recorded (0 with a warm kernel cache).

Writes DIR/nan-<date>.json and .md; prints a short table last.
"""

from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import DATE, finish_benchmark, start_benchmark, write_report  # noqa: E402

TARGET = 1.1  # arrayx nan-function time over its plain counterpart's, at most
# reported, not held to the target: composites, and the selections measured against a sort
NOT_HELD = ("nanvar", "nanstd", "nanmedian", "nanquantile", "median", "quantile")
Q = (0.1, 0.5, 0.9)


#: each NaN function of the 2^n cases and its plain counterpart
PLAIN = {"nansum": "sum", "nanprod": "prod", "nanmean": "mean", "nanmax": "max", "nanmin": "min",
         "nanargmax": "argmax", "nanargmin": "argmin", "nanvar": "var", "nanstd": "std",
         "nancumsum": "cumulative_sum", "nancumprod": "cumulative_prod"}
#: those PyTorch has as functions of the same name
TORCH_NAN_REDUCTIONS = ("nansum", "nanmean")


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
    # median and quantile proper on NaN-free rows (a NaN makes a whole row's result NaN)
    f_cp = cp.nan_to_num(r_cp)
    cp.cuda.Device().synchronize()
    x, m, r, f = (xp.from_dlpack(v) for v in (x_cp, m_cp, r_cp, f_cp))
    tx, tm, tr, tf = ((torch.from_dlpack(v) for v in (x_cp, m_cp, r_cp, f_cp))
                      if torch is not None else (None,) * 4)
    q_x, q_cp = xp.asarray(Q, dtype=xp.float32), cp.asarray(Q, dtype=cp.float32)
    q_t = torch.tensor(Q, dtype=torch.float32, device="cuda") if torch is not None else None

    def t(fn):  # a PyTorch case, when PyTorch is here
        return fn if torch is not None else None

    def case(ours, plain, cupy, torch_fn=None):
        return {"arrayx": ours, "plain": plain, "cupy": cupy, "torch": t(torch_fn)}

    def reduction(name, a, a_cp, a_t, **axis):  # a NaN function beside its plain counterpart
        torch_fn = getattr(torch, name) if name in TORCH_NAN_REDUCTIONS and torch else None
        dim = {"dim": axis["axis"]} if axis else {}
        return case(lambda: getattr(xp, name)(a, **axis),
                    lambda: getattr(xp, PLAIN[name])(a, **axis),
                    lambda: getattr(cp, name)(a_cp, **axis),
                    (lambda: torch_fn(a_t, **dim)) if torch_fn else None)

    return {
        **{f"{name} 2^n": reduction(name, x, x_cp, tx) for name in PLAIN},
        **{f"{where} {name}": reduction(name, m, m_cp, tm, axis=axis) for where, name, axis in (
            ("row", "nansum", 1), ("column", "nanmean", 0), ("row", "nanmin", 1),
            ("row", "nanargmin", 1), ("row", "nanvar", 1), ("row", "nancumsum", 1))},
        "median rows": case(lambda: xp.median(f, axis=1), lambda: xp.sort(f, axis=1),
                            lambda: cp.median(f_cp, axis=1),
                            lambda: torch.quantile(tf, 0.5, dim=1)),
        "quantile rows, 3 q": case(lambda: xp.quantile(f, q_x, axis=1),
                                   lambda: xp.sort(f, axis=1),
                                   lambda: cp.quantile(f_cp, q_cp, axis=1),
                                   lambda: torch.quantile(tf, q_t, dim=1)),
        "nanmedian rows": case(lambda: xp.nanmedian(r, axis=1), lambda: xp.sort(r, axis=1),
                               lambda: cp.nanmedian(r_cp, axis=1),
                               lambda: torch.nanmedian(tr, dim=1)),
        "nanquantile rows, 3 q": case(lambda: xp.nanquantile(r, q_x, axis=1),
                                      lambda: xp.sort(r, axis=1),
                                      lambda: cp.nanquantile(r_cp, q_cp, axis=1),
                                      lambda: torch.nanquantile(tr, q_t, dim=1)),
    }


def _function(name):
    """The function a case measures: its first word, or its second for 'row/column' cases."""
    words = name.split()
    return words[1] if words[0] in ("row", "column") else words[0]


def main():
    a, H = start_benchmark("arrayx CUDA NaN-aware statistics", log2m=23)
    n = 1 << a.log2n
    side = 1 << (a.log2n // 2)
    rows_shape = ((1 << a.log2m) // 2048, 2048)
    table = []
    start = time.perf_counter()
    for name, fns in operations(H, n, side, rows_shape).items():
        row = {"op": name}
        began = time.perf_counter()
        for lib, fn in fns.items():
            if fn is None:
                continue
            where = "arrayx" if lib == "plain" else lib
            try:
                ms = H.gpu_time(where, fn, warmup=1, reps=a.reps)
            except Exception as e:  # a library that cannot run this case: note and go on
                H.record(name, lib, float("nan"), "ms", error=repr(e))
                continue
            H.record(name, lib, ms, "ms")
            row[lib] = ms
        row["wall_s"] = round(time.perf_counter() - began, 1)
        if "arrayx" in row and "plain" in row:
            row["ratio"] = round(row["arrayx"] / row["plain"], 3)
            row["held"] = _function(name) not in NOT_HELD
            row["met"] = row["ratio"] <= TARGET if row["held"] else None
        table.append(row)
        print(f"{name}: arrayx {_ms(row.get('arrayx'))}, plain {_ms(row.get('plain'))}, "
              f"ratio {row.get('ratio', '-')} ({row['wall_s']} s, "
              f"{time.perf_counter() - start:.0f} s in all)", flush=True)
    sizes = {"log2n": a.log2n, "side": side, "rows": list(rows_shape)}
    doc = finish_benchmark(H, a.out, "nan", {"sizes": sizes, "table": table, "target": TARGET,
                                             "wall_s": round(time.perf_counter() - start, 1)},
                           "NaN-aware statistics", table_lines(table))
    write_md(os.path.join(a.out, f"nan-{DATE}.md"), doc, table, a.log2n, side, rows_shape)


def _ms(v):
    return "-" if v is None else f"{v:.3f} ms"


def table_lines(table):
    lines = ["| operation | arrayx | arrayx plain | ratio | CuPy | PyTorch | target |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in table:
        target = (f"<= {TARGET} {'met' if r.get('met') else 'NOT met'}" if r.get("held")
                  else "reported")
        lines.append(f"| {r['op']} | {_ms(r.get('arrayx'))} | {_ms(r.get('plain'))} | "
                     f"{r.get('ratio', '-')} | {_ms(r.get('cupy'))} | {_ms(r.get('torch'))} | "
                     f"{target} |")
    return lines


def write_md(path, doc, table, log2n, side, rows_shape):
    write_report(path, "CUDA NaN-aware statistics", doc, [
        f"float32, a tenth NaN: 2^{log2n} elements as a vector and as {side} x {side} (row and "
        f"column cases); median and quantile on {rows_shape[0]} x {rows_shape[1]}, along rows "
        f"(q = {', '.join(map(str, Q))}). Median of CUDA-event-timed calls after warm-up; "
        "'arrayx plain' is the standard counterpart (sum, prod, mean, max, min, argmax, argmin, "
        "var, std, cumulative_sum, cumulative_prod) on the same data, for median and quantile "
        "(nan or not) arrayx's sort of the same rows; 'ratio' arrayx over it. median and "
        "quantile proper run on the rows with their NaNs replaced by 0.",
        "Command: `python3 benchmarks/nan_bench.py --out $OUT` on the lent H200."],
        table_lines(table))


if __name__ == "__main__":
    main()
