"""Cold start (issue 23): what the first use of each function family costs in a fresh process.

    python3 benchmarks/coldstart_bench.py --out DIR [--n 1000] [--repeats 3]
        [--unshipped-repeats 1] [--libs arrayx,cupy,torch] [--deadline 220]

For arrayx, CuPy and PyTorch (those installed), each run is a new Python process that times, in
wall-clock milliseconds with a device sync after each, `import`, the first array on cuda:0 (`--n`
float32 from the host), then the first call of each family the issue names: x + x, exp, sum,
x[x > 0.5], sort, unique_values, x @ x (a dot), m @ m and linalg.inv(m) (m: a 30 x 30 view of x),
x[i] (100 positions from the host), fft.fft, argmax and cumulative_sum. A repeat is two such
processes sharing one new kernel cache folder: "cold" starts with it empty (ARRAYX_KERNEL_CACHE;
CuPy: CUPY_CACHE_DIR; PyTorch has no kernel cache, so its two runs show what a second process
costs), "warm" finds what cold filled. arrayx's cold runs use the kernels shipped in the package, as
a new user's first run does; `--unshipped-repeats` more repeats run with ARRAYX_SHIPPED_KERNELS=off,
where every kernel compiles (what shipping saves, and what a kernel outside the shipped set costs).
Median, min and max over the repeats; for arrayx's cold runs the kernels each step compiled (names
from the cache's entries) too, so a first call that still compiles shows which kernels to ship.

Past `--deadline` seconds no new run starts (those left are named in the report). Writes
DIR/coldstart-<date>.json and .md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STEPS = ("import", "first array on cuda", "x + x", "exp(x)", "sum(x)", "x[x > 0.5]", "sort(x)",
         "unique_values(x)", "x @ x", "m @ m", "linalg.inv(m)", "x[i]", "fft.fft(x)", "argmax(x)",
         "cumulative_sum(x)")
# m: the first 900 elements as a 30 x 30 matrix; i: 100 int64 positions copied from the host
_POSITIONS = list(range(0, 1000, 10))
LIBS = {"arrayx": "arrayx", "cupy": "cupy", "torch": "torch"}
LABELS = {"arrayx": "arrayx", "arrayx-unshipped": "arrayx, nothing shipped", "cupy": "CuPy",
          "torch": "PyTorch"}


def _m(module, x):
    """The 30 x 30 matrix of the first 900 elements (a view in each library)."""
    return module.reshape(x[:900], (30, 30))


def _ops(lib):
    """(module, to_device(host), sync, {step: fn(x)}) of a library, imported now."""
    if lib == "arrayx":
        import arrayx as xp
        import arrayx.cuda as xc

        def sync():
            xc.current_stream(0).synchronize()
        return xp, lambda h: xp.asarray(h, device="cuda:0"), sync, {
            "x + x": lambda x: x + x, "exp(x)": xp.exp, "sum(x)": xp.sum,
            "x[x > 0.5]": lambda x: x[x > 0.5], "sort(x)": xp.sort,
            "unique_values(x)": xp.unique_values, "x @ x": lambda x: x @ x,
            "m @ m": lambda x: _m(xp, x) @ _m(xp, x),
            "linalg.inv(m)": lambda x: xp.linalg.inv(_m(xp, x)),
            "x[i]": lambda x: x[xp.asarray(_POSITIONS, device="cuda:0")],
            "fft.fft(x)": xp.fft.fft, "argmax(x)": xp.argmax,
            "cumulative_sum(x)": xp.cumulative_sum}
    if lib == "cupy":
        import cupy as cp
        return cp, cp.asarray, lambda: cp.cuda.Device().synchronize(), {
            "x + x": lambda x: x + x, "exp(x)": cp.exp, "sum(x)": cp.sum,
            "x[x > 0.5]": lambda x: x[x > 0.5], "sort(x)": cp.sort, "unique_values(x)": cp.unique,
            "x @ x": lambda x: x @ x, "m @ m": lambda x: _m(cp, x) @ _m(cp, x),
            "linalg.inv(m)": lambda x: cp.linalg.inv(_m(cp, x)),
            "x[i]": lambda x: x[cp.asarray(_POSITIONS)],
            "fft.fft(x)": cp.fft.fft, "argmax(x)": cp.argmax, "cumulative_sum(x)": cp.cumsum}
    import torch
    return torch, lambda h: torch.as_tensor(h, device="cuda:0"), torch.cuda.synchronize, {
        "x + x": lambda x: x + x, "exp(x)": torch.exp, "sum(x)": torch.sum,
        "x[x > 0.5]": lambda x: x[x > 0.5], "sort(x)": lambda x: torch.sort(x).values,
        "unique_values(x)": torch.unique, "x @ x": lambda x: x @ x,
        "m @ m": lambda x: _m(torch, x) @ _m(torch, x),
        "linalg.inv(m)": lambda x: torch.linalg.inv(_m(torch, x)),
        "x[i]": lambda x: x[torch.as_tensor(_POSITIONS, device="cuda:0")],
        "fft.fft(x)": torch.fft.fft, "argmax(x)": torch.argmax,
        "cumulative_sum(x)": lambda x: torch.cumsum(x, 0)}


def _cache_entries(folder):
    """{entry file: kernel name} of an arrayx kernel cache folder."""
    out = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in names:
        if name.endswith(".json"):
            try:
                with open(os.path.join(folder, name)) as f:
                    out[name] = json.load(f).get("name", name)
            except (OSError, ValueError):
                pass
    return out


def child(lib: str, n: int) -> dict:
    """One fresh process's first calls: {"ms": {step: ms}, "errors": {...}, "compiled": {...}}."""
    import numpy as np
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    ms, errors, compiled = {}, {}, {}
    t0 = time.perf_counter()
    module, to_device, sync, ops = _ops(lib)
    ms["import"] = (time.perf_counter() - t0) * 1e3
    folder = os.environ.get("ARRAYX_KERNEL_CACHE") if lib == "arrayx" else None
    before = _cache_entries(folder) if folder else {}
    stats = None
    if lib == "arrayx":  # after the timed import: where each call's kernels came from
        from arrayx.cuda.engine import compiler
        stats = compiler.stats
    counts, sources = stats() if stats else {}, {}
    x = None
    for step in STEPS[1:]:
        try:
            t0 = time.perf_counter()
            if step == "first array on cuda":
                x = to_device(host)
            else:
                ops[step](x)
            sync()
            ms[step] = (time.perf_counter() - t0) * 1e3
        except Exception as e:  # one failing call must not hide the others' times
            errors[step] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
            if x is None:  # no array on the device: nothing else can run
                break
        if folder:
            after = _cache_entries(folder)
            compiled[step] = sorted(after[k] for k in after.keys() - before.keys())
            before = after
        if stats:
            now = stats()
            sources[step] = {k: now[k] - counts[k] for k in ("compiled", "disk_hits",
                                                            "shipped_hits")}
            counts = now
    return {"ms": ms, "errors": errors, "compiled": compiled, "kernels": sources}


def _run_child(variant: str, n: int, cache: str, timeout: float) -> dict:
    lib = "arrayx" if variant.startswith("arrayx") else variant
    env = dict(os.environ, ARRAYX_KERNEL_CACHE=cache, CUPY_CACHE_DIR=cache,
               ARRAYX_HOST_FALLBACK="error",
               PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    if variant == "arrayx-unshipped":
        env["ARRAYX_SHIPPED_KERNELS"] = "off"
    try:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", lib,
                            "--n", str(n)], capture_output=True, text=True, env=env,
                           timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"ms": {}, "errors": {"run": f"timed out after {timeout:.0f} s"}, "compiled": {}}
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return {"ms": {}, "errors": {"run": f"exit {r.returncode}: {tail[:300]}"}, "compiled": {}}
    return json.loads(lines[-1])


def _cell(values) -> str:
    if not values:
        return "-"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.4g}"
    return f"{med:.4g} ({min(values):.3g}-{max(values):.3g})"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--n", type=int, default=1000, help="float32 elements (default 1000)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--unshipped-repeats", type=int, default=1)
    p.add_argument("--libs", default="arrayx,cupy,torch")
    p.add_argument("--deadline", type=float, default=220.0,
                   help="seconds after which no new run starts (default 220)")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.n)))
        return

    start = time.perf_counter()
    wanted = [lib for lib in a.libs.split(",") if lib]
    variants = []
    for lib in wanted:
        if importlib.util.find_spec(LIBS[lib]) is None:
            print(f"{lib} is not installed: skipped")
            continue
        variants.append((lib, a.repeats))
        if lib == "arrayx" and a.unshipped_repeats > 0:
            variants.append(("arrayx-unshipped", a.unshipped_repeats))
    runs = {}  # (variant, "cold" | "warm") -> [child results]
    skipped = []
    # repeats interleaved across variants, so a deadline cuts every variant's last repeats
    for rep in range(max((r for _, r in variants), default=0)):
        for variant, repeats in variants:
            if rep >= repeats:
                continue
            if time.perf_counter() - start > a.deadline:
                skipped.append(f"{variant} repeat {rep + 1}")
                continue
            cache = tempfile.mkdtemp(prefix="coldstart-")
            try:
                for phase in ("cold", "warm"):
                    left = max(30.0, a.deadline + 120 - (time.perf_counter() - start))
                    result = _run_child(variant, a.n, cache, left)
                    runs.setdefault((variant, phase), []).append(result)
                    print(f"{variant} {phase} {rep + 1}: " + ", ".join(
                        f"{s} {result['ms'][s]:.1f}" for s in STEPS if s in result["ms"])
                        + (f"; errors {result['errors']}" if result["errors"] else ""),
                        flush=True)
            finally:
                shutil.rmtree(cache, ignore_errors=True)

    sys.path.insert(0, HERE)
    from harness import DATE, Harness, finish_benchmark, write_report
    H = Harness("cold start: first calls in fresh processes")
    columns = [(v, ph) for v, _ in variants for ph in ("cold", "warm") if (v, ph) in runs]
    for variant, phase in columns:
        results = runs[(variant, phase)]
        for step in STEPS:
            values = [r["ms"][step] for r in results if step in r["ms"]]
            errors = sorted({r["errors"][step] for r in results if step in r["errors"]})
            extra = {}
            if variant.startswith("arrayx"):
                extra = {"compiled": [r["compiled"].get(step, []) for r in results],
                         "kernels": [r.get("kernels", {}).get(step, {}) for r in results]}
            H.record(step, f"{variant} {phase}", statistics.median(values) if values else
                     float("nan"), "ms", runs=values, errors=errors, **extra)
    header = "| first call of | " + " | ".join(f"{LABELS[v]} {ph}" for v, ph in columns) + \
        " | target (arrayx) |"
    table = [header, "|" + " --- |" * (len(columns) + 2)]
    targets = {"import": "warm: 500", "first array on cuda": "cold: 500"}
    for step in STEPS:
        cells = [_cell([r["ms"][step] for r in runs[c] if step in r["ms"]]) for c in columns]
        target = targets.get(step, "cold: 1000; warm: 20 + the op")
        table.append(f"| `{step}` | " + " | ".join(cells) + f" | {target} |")
    notes = []
    for variant, phase in columns:
        if not variant.startswith("arrayx") or phase != "cold":
            continue
        first = runs[(variant, phase)][0]
        counts = [f"{s} {len(first['compiled'][s])}" for s in STEPS
                  if first["compiled"].get(s)]
        notes.append(f"Kernels compiled by {LABELS[variant]}'s first cold run, per call: "
                     + (", ".join(counts) if counts else "none") + ".")
        shipped = [f"{s} {k['shipped_hits']}" for s, k in first.get("kernels", {}).items()
                   if k.get("shipped_hits")]
        if shipped:
            notes.append(f"Shipped kernels it loaded, per call: {', '.join(shipped)}.")
    errors = sorted({f"{LABELS[v]} {ph}: {s}: {e}" for (v, ph), rs in runs.items() for r in rs
                     for s, e in r["errors"].items()})
    notes += [f"Error: {e}" for e in errors]
    if skipped:
        notes.append(f"Not run (past --deadline {a.deadline:.0f} s): {', '.join(skipped)}.")
    notes.append(f"Wall time of the benchmark: {time.perf_counter() - start:.0f} s.")
    doc = finish_benchmark(H, a.out, "coldstart", {"n": a.n, "repeats": a.repeats,
                                                    "skipped": skipped}, "cold start (ms)",
                           table, notes)
    description = [
        f"Each cell: wall-clock ms of the first call in a fresh process ({a.n} float32, a device "
        f"sync after each call), median (min-max) over {a.repeats} repeats "
        f"({a.unshipped_repeats} for 'nothing shipped'). cold: an empty kernel cache folder "
        f"(CuPy: CUPY_CACHE_DIR; PyTorch has none); warm: a second process with the folder the "
        f"cold one filled. 'nothing shipped': ARRAYX_SHIPPED_KERNELS=off, every kernel compiles.",
        "Targets (issue 23): with an empty cache every first call at most 1 s and the first "
        "array at most 0.5 s; with a warm cache every first call at most 20 ms beyond the op "
        "itself, import at most 0.5 s."]
    write_report(os.path.join(a.out, f"coldstart-{DATE}.md"), "Cold start", doc, description,
                 table, notes)


if __name__ == "__main__":
    main()
