"""Cubed's mean and standard deviation of a virtual random array, on each array backend.

    python benchmarks/cubed_bench.py --size 2GB --chunk 128MB [--out DIR]
    python benchmarks/cubed_bench.py --size 200GB --chunk 1GB --backends arrayx-cuda,numpy

The plan of examples/cubed_mean_std.py: uniform float32 chunks drawn by the backend itself
(arrayx.random on the chunk's device, NumPy's Philox Generator, CuPy's default_rng), once for a
mean and once for a std (no chunk is stored), on Cubed's local executor. Backends:
arrayx-cpu, arrayx-cuda (when a GPU is usable), numpy (Cubed's default backend) and cupy (when
importable). Cubed fixes its backend when it is imported, so each backend runs in a child
process of this one (``--child``), one after the other; this process gathers the results.

Per backend, where the time goes:
* total: wall time of ``cubed.compute(mean, std)`` and the rate in GB/s of the virtual array
  (read twice, once per reduction);
* tasks: the time of the tasks' functions (Cubed's TaskEndEvent timestamps), summed over the
  workers: create-arrays (the Zarr arrays of the partial results), then the rest (draw chunks,
  reduce them, store the partial results: on cuda with their copies to the host; combine the
  partials in rounds); per operation in the JSON;
* compute: the same chunk draws and reductions called on the backend directly, one chunk at a
  time in this child, nothing stored: total - compute is Cubed's scheduling, storage and host
  copies (the tasks also run concurrently, so this can be negative).

Writes <out>/cubed-<date>.json and .md; prints a table last.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from harness import DATE, _commit  # noqa: E402

BACKENDS = ("arrayx-cpu", "arrayx-cuda", "numpy", "cupy")


def parse_bytes(text):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from cubed_mean_std import parse_bytes as parse
    return parse(text)


# ---- the chunk sources, one per backend (module level: workers unpickle them by name) ---------

def _numpy_block(x, *, seed, float_dtype, block_id):
    import numpy as np
    rng = np.random.Generator(np.random.Philox(np.random.SeedSequence([seed, *block_id])))
    return rng.random(x.shape, dtype=float_dtype)


def _cupy_block(x, *, seed, float_dtype, block_id):
    import cupy
    return cupy.random.default_rng(seed * 2**32 + block_id[0]).random(x.shape, dtype=float_dtype)


def _chunk_source(backend):
    """(block function, namespace, sync) of a backend, arrayx's configured already."""
    if backend.startswith("arrayx"):
        import arrayx
        import arrayx.cubed

        def sync():
            if backend == "arrayx-cuda":
                import arrayx.cuda
                arrayx.cuda.synchronize()
        return arrayx.cubed._random_block, arrayx, sync
    if backend == "numpy":
        import numpy
        return _numpy_block, numpy, lambda: None
    import cupy
    import array_api_compat.cupy as cupy_xp
    return _cupy_block, cupy_xp, lambda: cupy.cuda.Device().synchronize()


#: Cubed's operation that creates the Zarr arrays of the intermediate results.
_SETUP = "create-arrays"


class _TaskTimes:
    """A Cubed callback summing the tasks' function time per operation."""

    def __init__(self):
        self.seconds = {}
        self.tasks = {}

    def make(self):
        from cubed import Callback

        times = self

        class TaskTimes(Callback):
            def on_task_end(self, event):
                if event.function_start_tstamp is not None and event.function_end_tstamp is not None:
                    spent = event.function_end_tstamp - event.function_start_tstamp
                    times.seconds[event.name] = times.seconds.get(event.name, 0.0) + spent
                    times.tasks[event.name] = times.tasks.get(event.name, 0) + event.num_tasks
        return TaskTimes()


def child(args) -> dict:
    """Run the plan on one backend (this process's Cubed backend) and return its record."""
    backend = args.child
    if backend.startswith("arrayx"):
        import arrayx.cubed
        arrayx.cubed.configure(backend.split("-", 1)[1])
        import warnings
        import arrayx
        warnings.simplefilter("ignore", arrayx.ImplicitHostCopyWarning)
    elif backend == "cupy":
        os.environ["CUBED_BACKEND_ARRAY_API_MODULE"] = "array_api_compat.cupy"
    import numpy as np
    import cubed
    import cubed.array_api as cxp

    block, nxp, sync = _chunk_source(backend)
    dtype = np.dtype(args.dtype)
    n = max(1, args.size // dtype.itemsize)
    chunk = max(1, min(n, args.chunk // dtype.itemsize))
    chunks = ((chunk,) * (n // chunk) + ((n % chunk,) if n % chunk else ()),)
    allowed_mem = max(8 * chunk * dtype.itemsize, 100 * 10**6)
    options = {} if args.executor == "single-threaded" else {"max_workers": args.workers or os.cpu_count()}
    nxp_dtype = getattr(nxp, args.dtype)
    record = {"backend": backend, "bytes": n * dtype.itemsize, "chunk_bytes": chunk * dtype.itemsize,
              "chunks": len(chunks[0]), "executor": args.executor, **options}

    runs = []
    with tempfile.TemporaryDirectory(prefix="cubed-bench-") as work_dir:
        spec = cubed.Spec(work_dir, allowed_mem=allowed_mem, executor_name=args.executor,
                          executor_options=options)

        def values():
            return cubed.map_blocks(block, dtype=nxp_dtype, chunks=chunks, spec=spec,
                                    seed=args.seed, float_dtype=nxp_dtype)

        for _ in range(args.reps + 1):  # the first run warms up (kernels, imports, pools)
            times = _TaskTimes()
            start = time.perf_counter()
            mean, std = cubed.compute(cxp.mean(values()), cxp.std(values()),
                                      callbacks=[times.make()])
            mean, std = float(mean), float(std)
            runs.append((time.perf_counter() - start, times, mean, std))
    seconds, times, mean, std = min(runs[1:], key=lambda r: r[0])
    record.update(total_ms=seconds * 1e3, gb_per_s=2 * n * dtype.itemsize / seconds / 1e9,
                  mean=mean, std=std, task_ms={k: v * 1e3 for k, v in times.seconds.items()},
                  tasks=times.tasks)

    # compute only: the tasks' arithmetic on the backend directly, one chunk after another
    # (mean: sum; var: mean and the sum of squared deviations, as Cubed's chunk functions do)
    class Chunk:
        def __init__(self, size):
            self.shape = (size,)

    def direct():
        for i, size in enumerate(chunks[0]):
            c = block(Chunk(size), seed=args.seed, float_dtype=nxp_dtype, block_id=(i,))
            nxp.sum(c)
            c = block(Chunk(size), seed=args.seed, float_dtype=nxp_dtype, block_id=(i,))
            mu = nxp.mean(c)
            nxp.sum((c - mu) ** 2)
        sync()

    direct()
    best = float("inf")
    for _ in range(args.reps):
        start = time.perf_counter()
        direct()
        best = min(best, time.perf_counter() - start)
    record["compute_ms"] = best * 1e3
    return record


def available(backend) -> bool:
    if backend == "cupy":
        return importlib.util.find_spec("cupy") is not None
    if backend == "arrayx-cuda":
        from arrayx._devices import cuda_device_count
        return cuda_device_count() > 0
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--size", type=parse_bytes, default=parse_bytes("1GB"))
    p.add_argument("--chunk", type=parse_bytes, default=parse_bytes("128MB"))
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--executor", choices=["threads", "single-threaded", "processes"],
                   default="threads")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backends", default=",".join(BACKENDS),
                   help="comma-separated subset of " + ", ".join(BACKENDS))
    p.add_argument("--child", choices=BACKENDS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print("RESULT " + json.dumps(child(args)), flush=True)
        return 0

    passthrough = [f"--size={args.size}", f"--chunk={args.chunk}", f"--dtype={args.dtype}",
                   f"--executor={args.executor}", f"--reps={args.reps}", f"--seed={args.seed}"]
    if args.workers:
        passthrough.append(f"--workers={args.workers}")
    env = {k: v for k, v in os.environ.items() if k != "CUBED_BACKEND_ARRAY_API_MODULE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    records = []
    for backend in args.backends.split(","):
        if backend not in BACKENDS:
            p.error(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
        if not available(backend):
            print(f"== {backend}: not available here, skipped", flush=True)
            continue
        print(f"== {backend}", flush=True)
        done = subprocess.run([sys.executable, os.path.abspath(__file__), f"--child={backend}",
                               *passthrough], env=env, capture_output=True, text=True)
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        if done.returncode != 0 or not lines:
            print(done.stdout[-2000:] + done.stderr[-4000:], flush=True)
            records.append({"backend": backend, "error": (done.stderr.strip().splitlines() or ["?"])[-1]})
            continue
        records.append(json.loads(lines[-1][len("RESULT "):]))
        print(f"   {records[-1]['total_ms']:.0f} ms, {records[-1]['gb_per_s']:.2f} GB/s", flush=True)

    doc = {"meta": {"title": "Cubed mean and std of a virtual random array", "date": DATE,
                    "commit": _commit(), "python": sys.version.split()[0], "host": os.uname().nodename,
                    "cpu_count": os.cpu_count(), "cubed": _version("cubed"),
                    "numpy": _version("numpy"), "size": args.size, "chunk": args.chunk,
                    "dtype": args.dtype, "executor": args.executor, "reps": args.reps},
           "records": records}
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"cubed-{DATE}")
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    table = _table(records)
    with open(stem + ".md", "w") as f:
        m = doc["meta"]
        f.write(f"# {m['title']}, {m['date']}\n\nCommit {m['commit']}, host {m['host']} "
                f"({m['cpu_count']} CPUs), Cubed {m['cubed']}, NumPy {m['numpy']}. "
                f"{m['size'] / 1e9:g} GB of {m['dtype']} in chunks of {m['chunk'] / 1e6:g} MB, "
                f"executor {m['executor']}, best of {m['reps']} after a warm-up. GB/s counts the "
                f"virtual array twice (the mean and the std each draw it).\n\n"
                + "\n".join(table) + "\n")
    print("\n".join(table))
    print(f"wrote {stem}.json and {stem}.md")
    return 0 if all("error" not in r for r in records) else 1


def _version(name):
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _table(records) -> list:
    lines = ["| backend | total ms | GB/s | compute only ms | total - compute ms | "
             "create-arrays ms | tasks ms, summed (tasks) | mean | std |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in records:
        if "error" in r:
            lines.append(f"| {r['backend']} | error: {r['error'][:80]} | | | | | | | |")
            continue
        setup = r["task_ms"].get(_SETUP, 0.0)
        work = sum(v for k, v in r["task_ms"].items() if k != _SETUP)
        count = sum(v for k, v in r["tasks"].items() if k != _SETUP)
        lines.append(
            f"| {r['backend']} | {r['total_ms']:.0f} | {r['gb_per_s']:.2f} | {r['compute_ms']:.0f} | "
            f"{r['total_ms'] - r['compute_ms']:.0f} | {setup:.0f} | {work:.0f} ({count}) | "
            f"{r['mean']:.7f} | {r['std']:.7f} |")
    return lines


if __name__ == "__main__":
    sys.exit(main())
