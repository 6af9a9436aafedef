"""What loading cuBLAS, cuSOLVER and cuFFT with the first device saves and costs (issue 23).

    python3 benchmarks/probes/library_load_probe.py [--rounds 3] [--variants a,b,...]
        [--drop-page-cache] [--exit-at-once]                       (GPU machine, warm cache)

Each round runs one fresh process per variant, the variants alternating:
  default   as arrayx is: the libraries load on a thread while the first device creates its
            context (runtime.beside_first_context);
  lazy      that work removed: each library loads on its first call;
  serial    lazy, with the three libraries loaded (cuda.pathfinder, dlopen) before the first array;
  parallel  lazy, with the libraries loaded on a thread started right before the first array and
            joined after it (the whole first array overlapping the loads).
Each process prints wall-clock ms of the first array (including the loads for serial and
parallel), then the first x + x, x @ x (a dot), m @ m (64 x 64), linalg.inv(m) and fft.fft(x),
a device-to-host read after each. `--drop-page-cache` drops the OS page cache before each
process (root; what the first GPU process after a boot meets: the libraries read from disk);
`--exit-at-once` adds, per variant, a process that exits right after its first array and
records its whole wall time (what the loads cost a short program). Without --drop-page-cache
the first round fills the kernel cache and the page cache and is not counted. Median and range
per variant and step.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VARIANTS = ("default", "lazy", "serial", "parallel")
STEPS = ("first array", "x + x", "x @ x", "m @ m", "linalg.inv(m)", "fft.fft(x)", "process wall")


def child(variant: str, exit_at_once: bool) -> dict:
    import threading

    import numpy as np

    import arrayx as xp
    from arrayx.cuda.engine import runtime
    from arrayx.cuda.libraries import cublas, cufft, cusolver
    if variant != "default":
        runtime.beside_first_context.clear()
    libraries = (cublas.library, cusolver.library, cufft.library)
    loads = {}

    def load_all():
        for lib in libraries:
            t = time.perf_counter()
            lib.cdll()
            loads[lib.name] = (time.perf_counter() - t) * 1e3

    host = np.random.default_rng(0).random(4096, dtype=np.float32)
    ms = {}
    t0 = time.perf_counter()
    loader = None
    if variant == "serial":
        load_all()
    elif variant == "parallel":
        loader = threading.Thread(target=load_all)
        loader.start()
    x = xp.asarray(host, device="cuda:0")
    float(x[0])
    if loader is not None:
        loader.join()
    ms["first array"] = (time.perf_counter() - t0) * 1e3
    if exit_at_once:
        return {"variant": variant, "ms": ms, "loads": loads}
    m = xp.reshape(x, (64, 64))
    ops = {"x + x": lambda: (x + x)[0], "x @ x": lambda: x @ x, "m @ m": lambda: (m @ m)[0, 0],
           "linalg.inv(m)": lambda: xp.linalg.inv(m)[0, 0],
           "fft.fft(x)": lambda: xp.real(xp.fft.fft(x)[0])}
    for step, op in ops.items():
        t = time.perf_counter()
        float(op())
        ms[step] = (time.perf_counter() - t) * 1e3
    return {"variant": variant, "ms": ms, "loads": loads}


def drop_page_cache() -> bool:
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--drop-page-cache", action="store_true")
    ap.add_argument("--exit-at-once", action="store_true")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-exits", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.child_exits)))
        return
    variants = [v for v in a.variants.split(",") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        raise SystemExit(f"unknown variants {sorted(unknown)}; known: {', '.join(VARIANTS)}")
    if a.drop_page_cache and not drop_page_cache():
        raise SystemExit("the page cache cannot be dropped here (needs root)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    runs = [(v, False) for v in variants] + ([(v, True) for v in variants] if a.exit_at_once else [])
    results = {run: [] for run in runs}
    first = 1 if a.drop_page_cache else 0  # warm: an uncounted round 0 fills the caches
    for rnd in range(first, a.rounds + 1):
        for variant, exits in runs:
            if a.drop_page_cache:
                drop_page_cache()
            start = time.perf_counter()
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", variant]
                               + (["--child-exits"] if exits else []),
                               capture_output=True, text=True, env=env, timeout=120)
            wall = (time.perf_counter() - start) * 1e3
            label = variant + (", exiting at once" if exits else "")
            if r.returncode != 0:
                print(f"{label}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
                continue
            out = json.loads(r.stdout.strip().splitlines()[-1])
            if exits:
                out["ms"]["process wall"] = wall
            print(f"round {rnd} {label}: "
                  + ", ".join(f"{k} {v:.1f}" for k, v in out["ms"].items())
                  + ("; loads " + ", ".join(f"{k} {v:.1f}" for k, v in out["loads"].items())
                     if out["loads"] else ""), flush=True)
            if rnd:
                results[(variant, exits)].append(out)
    cache = "dropped before each process" if a.drop_page_cache else "warm"
    print(f"median (min-max) ms over {a.rounds} rounds, page cache {cache}")
    for (variant, exits), outs in results.items():
        cells = []
        for step in STEPS:
            vals = [o["ms"][step] for o in outs if step in o["ms"]]
            if vals:
                cells.append(f"{step} {statistics.median(vals):.1f} "
                             f"({min(vals):.1f}-{max(vals):.1f})")
        print(f"  {variant + (' exiting' if exits else ''):17s}", "; ".join(cells))


if __name__ == "__main__":
    main()
