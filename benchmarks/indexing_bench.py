"""Gather and concat (issue 6's 'Done when'), beside CuPy and PyTorch.

    python benchmarks/indexing_bench.py --out DIR [--log2n 28] [--log2m 26]

* take: 2^26 random int64 indices (CuPy's generator, uniform over the array) from a 2^28-element
  float32 array; target: arrayx's time <= CuPy's / 1.5. Every random read moves a 32-byte sector,
  so the floor is about 2^26 * 32 bytes over the copy bandwidth (~0.5 ms) plus the index read
  and the output write. arrayx's take includes its bounds check: one 4-byte device-to-host read
  of the error flag after the kernel (a synchronisation inside the timed call). ``x[idx]`` is
  the same gather through __getitem__, and ``x[idx] = y`` its scatter (a bounds-check pass over
  the indices, then the writes). ``take from 16 MiB (L2)`` draws the same number of indices from
  the first 2^22 elements only, which stay in the L2 cache: the gap between the two rows is what
  random reads from HBM cost, whatever the kernel.
* concat: two 1 GiB float32 arrays along axis 0; target: bandwidth (bytes read + written) >= 0.95
  of the device-to-device copy of 1 GiB measured in the same process. ``concat axis 1`` joins two
  (2^(log2n/2), 2^(log2n/2)) float32 matrices side by side (pitched rows, cuMemcpy2DAsync).

Data is generated on the GPU by CuPy and shared with arrayx and PyTorch through DLPack; times are
medians of CUDA-event-timed calls after warm-up (benchmarks/harness.py). Host fallback is an
error throughout. Writes DIR/indexing-<date>.json and .md; prints a short table last.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import (DATE, comparison_table, finish_benchmark, start_benchmark,  # noqa: E402
                     write_report)


def _without_pitched_copies(fn):
    """Run fn with manipulation.copy_into's cuMemcpy2DAsync path off (the strided copy kernel
    instead): the row that says which of the two concat should use for pitched slabs."""
    from arrayx.cuda.kernels import manipulation
    saved = manipulation.MIN_PITCHED_ROW
    manipulation.MIN_PITCHED_ROW = float("inf")
    try:
        return fn()
    finally:
        manipulation.MIN_PITCHED_ROW = saved


def operations(libs, n, m):
    """{name: (bytes moved, {lib: fn})} over the same data in every library."""
    import cupy as cp
    import arrayx as xp
    cp.random.seed(2)
    x_cp = cp.random.standard_normal(n, dtype=cp.float32)
    y_cp = cp.random.standard_normal(n, dtype=cp.float32)
    i_cp = cp.random.randint(0, n, size=m, dtype=cp.int64)
    small = 1 << 22  # 16 MiB of float32: resident in the H200's 50 MiB L2
    i_small_cp = cp.random.randint(0, small, size=m, dtype=cp.int64)
    v_cp = cp.random.standard_normal(m, dtype=cp.float32)
    side = 1 << (n.bit_length() - 1) // 2
    a_cp, b_cp = x_cp[:side * side].reshape(side, side), y_cp[:side * side].reshape(side, side)
    cp.cuda.Device().synchronize()
    cupy = {"x": x_cp, "y": y_cp, "i": i_cp, "v": v_cp, "a": a_cp, "b": b_cp,
            "xs": x_cp[:small], "is": i_small_cp}
    data = {"cupy": cupy, "arrayx": {k: xp.from_dlpack(v) for k, v in cupy.items()}}
    torch = libs.get("torch")
    if torch is not None:
        data["torch"] = {k: torch.from_dlpack(v) for k, v in cupy.items()}
    fns = {
        "take": {"arrayx": lambda d: xp.take(d["x"], d["i"]), "cupy": lambda d: cp.take(d["x"], d["i"]),
                 "torch": lambda d: torch.index_select(d["x"], 0, d["i"])},
        "take from 16 MiB (L2)": {"arrayx": lambda d: xp.take(d["xs"], d["is"]),
                                  "cupy": lambda d: cp.take(d["xs"], d["is"]),
                                  "torch": lambda d: torch.index_select(d["xs"], 0, d["is"])},
        "x[idx]": {lib: (lambda d: d["x"][d["i"]]) for lib in data},
        "x[idx] = v": {"arrayx": lambda d: d["y"].__setitem__(d["i"], d["v"]),
                       "cupy": lambda d: d["y"].__setitem__(d["i"], d["v"]),
                       "torch": lambda d: d["y"].__setitem__(d["i"], d["v"])},
        "concat axis 0": {"arrayx": lambda d: xp.concat([d["x"], d["y"]]),
                          "cupy": lambda d: cp.concatenate([d["x"], d["y"]]),
                          "torch": lambda d: torch.cat([d["x"], d["y"]])},
        "concat axis 1, strided copy kernel": {"arrayx": lambda d: _without_pitched_copies(
            lambda: xp.concat([d["a"], d["b"]], axis=1))},
        "concat axis 1": {"arrayx": lambda d: xp.concat([d["a"], d["b"]], axis=1),
                          "cupy": lambda d: cp.concatenate([d["a"], d["b"]], axis=1),
                          "torch": lambda d: torch.cat([d["a"], d["b"]], dim=1)},
    }
    # bytes: gather = indices read + output written + one element read per index
    nbytes = {"take": m * (8 + 4 + 4), "take from 16 MiB (L2)": m * (8 + 4 + 4), "x[idx]": m * (8 + 4 + 4), "x[idx] = v": m * (8 + 4 + 4),
              "concat axis 0": 2 * (2 * n * 4), "concat axis 1": 2 * (2 * side * side * 4),
              "concat axis 1, strided copy kernel": 2 * (2 * side * side * 4)}
    return {name: (nbytes[name], {lib: (lambda f=f, d=data[lib]: f(d)) for lib, f in per.items()
                                  if lib in data})
            for name, per in fns.items()}


def main():
    a, H = start_benchmark("arrayx CUDA gather and concat", log2m=26)
    n, m = 1 << a.log2n, 1 << a.log2m
    libs = {"torch": H.torch} if H.torch is not None else {}
    ceiling = H.copy_ceiling(n, a.reps)
    ceiling_tbs = ceiling["tb_per_s"]
    rows = []
    for name, (nbytes, fns) in operations(libs, n, m).items():
        got = H.compare(name, nbytes, fns, reps=a.reps)
        row = {"op": name, "target": None, "met": None}
        for lib, rec in got.items():
            rec["ratio_to_copy"] = round(rec["tb_per_s"] / ceiling_tbs, 3)
            row[lib] = (rec["value"], rec["tb_per_s"], rec["ratio_to_copy"])
        if name == "take" and "arrayx" in got and "cupy" in got:
            row["target"] = "time <= CuPy / 1.5"
            row["met"] = got["arrayx"]["value"] * 1.5 <= got["cupy"]["value"]
        elif name == "concat axis 0" and "arrayx" in got:
            row["target"] = ">= 0.95 of copy"
            row["met"] = got["arrayx"]["ratio_to_copy"] >= 0.95
        rows.append(row)
    doc = finish_benchmark(H, a.out, "indexing", {"ceiling_tb_per_s": ceiling_tbs, "table": rows},
                           f"gather and concat; copy {ceiling_tbs} TB/s", table_lines(rows))
    write_md(os.path.join(a.out, f"indexing-{DATE}.md"), doc, rows, ceiling_tbs, a.log2n, a.log2m)


def _cell(v):
    if v is None:
        return "-"
    ms, tbs, ratio = v
    return f"{ms:.3f} ms, {tbs:.2f} TB/s ({ratio:.2f})"


def table_lines(rows):
    return comparison_table(rows, _cell, lambda r: "-" if r["target"] is None else
                            r["target"] + (" met" if r["met"] else " NOT met"))


def write_md(path, doc, rows, ceiling, log2n, log2m):
    write_report(path, "CUDA gather and concat", doc, [
        f"take / x[idx]: 2^{log2m} random int64 indices into 2^{log2n} float32 elements; "
        f"concat: two 2^{log2n}-element float32 arrays. Median of CUDA-event-timed calls "
        "after warm-up. Cells: time, bandwidth (bytes read + written), and in brackets the "
        f"ratio to the device-to-device copy of the same run ({ceiling} TB/s).",
        "Command: `python3 benchmarks/indexing_bench.py --out $OUT` on the lent H200."],
        table_lines(rows))


if __name__ == "__main__":
    main()
