"""A fresh process's first calls with the OS page cache dropped and warm (issue 23).

    python3 benchmarks/probes/first_process_probe.py [--rounds 2]   (GPU machine; dropping the
                                                                      page cache needs root)

Each round runs, per variant, fresh processes that time (wall-clock ms, a device-to-host read
after each) `import arrayx`, the first array on cuda:0, the first `x + x` and the first `x @ x`,
first with the page cache dropped (``echo 3 > /proc/sys/vm/drop_caches`` before the process:
the first process after a boot reads the CUDA libraries from disk), then warm; and the whole
wall time of a process that exits right after its first array (what loading the libraries
costs a short program). Variants:
  default  as arrayx is (the work in runtime.beside_first_context, the libraries' loading);
  lazy     that work removed: each library loads on its first call.
Prints one line a process, then the median of each variant's rounds. Where the page cache
cannot be dropped, says so and times the warm runs only.
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
VARIANTS = ("default", "lazy")


def child(variant: str, exit_at_once: bool) -> dict:
    t0 = time.perf_counter()
    import arrayx as xp
    from arrayx.cuda.engine import runtime
    if variant == "lazy":
        runtime.beside_first_context.clear()
    t1 = time.perf_counter()
    x = xp.asarray([1.0, 2.0], device="cuda:0")
    float(x[0])
    t2 = time.perf_counter()
    ms = {"import": (t1 - t0) * 1e3, "first array": (t2 - t1) * 1e3}
    if not exit_at_once:
        float((x + x)[0])
        t3 = time.perf_counter()
        float(x @ x)
        t4 = time.perf_counter()
        ms.update({"x + x": (t3 - t2) * 1e3, "x @ x": (t4 - t3) * 1e3})
    return ms


def drop_page_cache() -> bool:
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def run(variant: str, exit_at_once: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    start = time.perf_counter()
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", variant]
                       + (["--exit-at-once"] if exit_at_once else []),
                       capture_output=True, text=True, env=env, timeout=120)
    wall = (time.perf_counter() - start) * 1e3
    if r.returncode != 0:
        return {"error": f"exit {r.returncode}: {r.stderr.strip()[-300:]}"}
    out = json.loads(r.stdout.strip().splitlines()[-1])
    if exit_at_once:
        out["process wall"] = wall
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--exit-at-once", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.exit_at_once)))
        return
    droppable = drop_page_cache()
    if not droppable:
        print("the page cache cannot be dropped here (not root?): warm runs only")
    results = {}
    for _ in range(a.rounds):
        for cache in (("dropped", "warm") if droppable else ("warm",)):
            for variant in VARIANTS:
                for exit_at_once in (False, True):
                    if cache == "dropped":
                        drop_page_cache()
                    out = run(variant, exit_at_once)
                    label = f"{variant}, page cache {cache}" + \
                        (", exit at once" if exit_at_once else "")
                    cells = [f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
                             for k, v in out.items()]
                    print(f"{label}: " + ", ".join(cells), flush=True)
                    results.setdefault(label, []).append(out)
    print(f"median ms over {a.rounds} rounds")
    for label, outs in results.items():
        keys = list(next((o for o in outs if "error" not in o), {}))
        cells = [f"{k} {statistics.median(o[k] for o in outs if k in o):.1f}" for k in keys]
        print(f"  {label}: " + (", ".join(cells) or "no run succeeded"))


if __name__ == "__main__":
    main()
