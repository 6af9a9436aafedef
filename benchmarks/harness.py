"""Benchmark harness shared by every kernel family.

* ``Harness.gpu_time(lib, fn)``: median milliseconds of `fn` timed with CUDA events of that
  library's stream, after warm-up (arrayx: its own events on its stream; CuPy and PyTorch: theirs).
* ``Harness.host_time(fn, sync, n)``: microseconds per call of `fn` issued `n` times in a row,
  then one sync (the host cost of an op when the GPU keeps up).
* ``Harness.compare(...)``: the same operation in arrayx, CuPy and PyTorch (those importable) and
  a device-to-device copy of the same bytes (the bandwidth ceiling), in one process.
* ``Harness.write(path)``: JSON with device name, date, versions and every record.

CuPy and PyTorch are imported here, in benchmarks only; arrayx never imports them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

DATE = os.environ.get("BENCH_DATE") or datetime.date.today().isoformat()


def _commit() -> str:
    """The commit measured: $COMMIT (the GPU machine's copy of the tree has no git history),
    else git's HEAD of the checkout this harness is in, else 'unknown'."""
    if os.environ.get("COMMIT"):
        return os.environ["COMMIT"]
    import subprocess
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=os.path.dirname(os.path.abspath(__file__)),
                              timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _try(name):
    try:
        return __import__(name)
    except Exception:
        return None


class Harness:
    def __init__(self, title: str, device: int | None = 0):
        """`device`: the CUDA device index, or None for a host-only run (arrayx on its CPU
        device, no CUDA runtime touched: `meta` names the host's processor instead)."""
        self.title = title
        self.device = device
        self.records = []
        self.cp = _try("cupy")
        self.torch = _try("torch")
        if self.torch is not None and not self.torch.cuda.is_available():
            self.torch = None
        if device is None:
            self.rt = self.dev = None
            return
        from arrayx.cuda.engine import runtime
        self.rt = runtime
        self.dev = runtime.get_device(device)

    # -- metadata -----------------------------------------------------------------------------
    def meta(self) -> dict:
        import numpy
        vers = {"python": platform.python_version(), "numpy": numpy.__version__}
        for mod in ("numba", "numba_cuda", "cupy", "torch"):
            m = sys.modules.get(mod) or _try(mod)
            if m is not None:
                vers[mod] = getattr(m, "__version__", "?")
        try:
            import cuda.bindings
            vers["cuda_bindings"] = cuda.bindings.__version__
        except Exception:
            pass
        if self.dev is None:
            cpu = f"cpu ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"
            return {"title": self.title, "date": DATE,
                    "run_at": datetime.datetime.now().isoformat(),
                    "device": cpu, "versions": vers, "host": platform.node(), "commit": _commit()}
        d = self.rt.driver()
        drv = self.rt.check(d.cuDriverGetVersion(), "cuDriverGetVersion")
        return {"title": self.title, "date": DATE, "run_at": datetime.datetime.now().isoformat(),
                "device": self.dev.name, "compute_capability": list(self.dev.compute_capability),
                "multiprocessors": self.dev.multiprocessor_count,
                "total_memory": self.dev.total_memory, "driver": drv, "versions": vers,
                "host": platform.node(), "commit": _commit()}

    # -- timing -------------------------------------------------------------------------------
    def gpu_time(self, lib: str, fn, warmup: int = 3, reps: int = 20, before=None) -> float:
        """Median ms of one call of `fn`, CUDA events around it on `lib`'s current stream
        (`before`: called ahead of each start event, untimed, e.g. to queue other work)."""
        if lib == "arrayx":
            Event = self.rt.Event
            stream = self.dev.stream

            def pair():
                return Event(self.device, timing=True), Event(self.device, timing=True)

            def rec(e):
                e.record(stream)

            def elapsed(s, e):
                e.synchronize()
                return s.elapsed_ms(e)
        elif lib == "cupy":
            cp = self.cp

            def pair():
                return cp.cuda.Event(), cp.cuda.Event()

            def rec(e):
                e.record()

            def elapsed(s, e):
                e.synchronize()
                return cp.cuda.get_elapsed_time(s, e)
        elif lib == "torch":
            torch = self.torch

            def pair():
                return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

            def rec(e):
                e.record()

            def elapsed(s, e):
                e.synchronize()
                return s.elapsed_time(e)
        else:
            raise ValueError(lib)
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(reps):
            if before is not None:
                before()
            s, e = pair()
            rec(s)
            fn()
            rec(e)
            times.append(elapsed(s, e))
        return statistics.median(times)

    @staticmethod
    def host_time(fn, sync, n: int = 10000, warmup: int = 200, repeats: int = 3) -> float:
        """Microseconds per call: `n` calls back to back then one `sync`; best of `repeats`."""
        for _ in range(warmup):
            fn()
        sync()
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            sync()
            best = min(best, (time.perf_counter() - t0) / n * 1e6)
        return best

    @staticmethod
    def wall_time(fn, sync, warmup: int = 2, reps: int = 20, min_reps: int = 3,
                  budget_s: float | None = None) -> dict:
        """Wall-clock milliseconds of one call of `fn` followed by `sync` (host work, launches,
        the GPU's work and the wait: what a program sees), after `warmup` calls: median, min and
        max of `reps` calls, fewer (not under `min_reps`) when the first timed call says `reps`
        of them would pass `budget_s` seconds."""
        for _ in range(warmup):
            fn()
            sync()
        times = []
        while len(times) < reps:
            t0 = time.perf_counter()
            fn()
            sync()
            times.append((time.perf_counter() - t0) * 1e3)
            if budget_s is not None and len(times) == 1:
                reps = max(min_reps, min(reps, int(budget_s * 1e3 / max(times[0], 1e-3))))
        return {"median": statistics.median(times), "min": min(times), "max": max(times),
                "reps": len(times)}

    def sync(self, lib):
        if lib == "arrayx":
            self.rt.synchronize()
        elif lib == "cupy":
            self.cp.cuda.Device().synchronize()
        elif lib == "torch":
            self.torch.cuda.synchronize()

    # -- records ------------------------------------------------------------------------------
    def record(self, name: str, lib: str, value: float, unit: str, **extra):
        rec = {"name": name, "lib": lib, "value": value, "unit": unit}
        rec.update(extra)
        self.records.append(rec)
        print(f"  {name:44s} {lib:10s} {value:12.4g} {unit}", flush=True)
        return rec

    def bandwidth(self, name, lib, ms, nbytes, **extra):
        """Record a GPU time and its bandwidth (bytes read + written over time)."""
        tbs = nbytes / (ms * 1e-3) / 1e12
        return self.record(name, lib, ms, "ms", bytes=nbytes, tb_per_s=round(tbs, 3), **extra)

    def copy_time(self, n: int, reps: int = 20, device="cuda:0") -> float:
        """CUDA-event ms of a device-to-device copy of n float32 elements through arrayx
        (cuMemcpyDtoD), not recorded."""
        import arrayx as xp
        from arrayx.cuda.engine import copies
        src = xp.ones(n, dtype=xp.float32, device=device)
        dst = xp.empty(n, dtype=xp.float32, device=device)
        return self.gpu_time("arrayx", lambda: copies.memcpy_d2d(self.dev, dst._data, src._data),
                             reps=reps)

    def copy_ceiling(self, n: int, reps: int = 20) -> dict:
        """Record and return the device-to-device copy of n float32 elements through arrayx
        (cuMemcpyDtoD): the bandwidth ceiling the kernel families are measured against (bytes
        read + written)."""
        ms = self.copy_time(n, reps)
        return self.bandwidth(f"device copy {n * 4 >> 20} MiB", "arrayx/cuMemcpyDtoD", ms, 8 * n)

    def compare(self, name: str, nbytes: int, fns: dict, warmup=3, reps=20, copy_bytes=None):
        """Time `fns` ({lib: fn}) and a device-to-device copy of `copy_bytes` (default nbytes/2
        copied: nbytes moved) in one process."""
        out = {}
        for lib, fn in fns.items():
            if fn is None:
                continue
            try:
                ms = self.gpu_time(lib, fn, warmup, reps)
            except Exception as e:  # a library that cannot run this: note and go on
                self.record(name, lib, float("nan"), "ms", error=repr(e))
                continue
            out[lib] = self.bandwidth(name, lib, ms, nbytes)
        return out

    def write(self, path: str, extra: dict | None = None):
        doc = {"meta": self.meta(), "records": self.records}
        if extra:
            doc.update(extra)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as f:
            json.dump(doc, f, indent=1, default=str)
        return doc


# ---- reports shared by the kernel-family benchmarks ---------------------------------------------

def comparison_table(rows, cell, target, target_header="target (arrayx)") -> list:
    """Markdown lines of one row per operation: arrayx, CuPy and PyTorch cells (`cell` formats a
    row's per-library value, None for '-') and the target column (`target(row)`)."""
    lines = [f"| operation | arrayx | CuPy | PyTorch | {target_header} |",
             "| --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['op']} | {cell(r.get('arrayx'))} | {cell(r.get('cupy'))} | "
                     f"{cell(r.get('torch'))} | {target(r)} |")
    return lines


def write_report(path, title, doc, description, table, notes=()):
    """A benchmark's markdown report: title and date, the device and versions, what was measured
    (`description`, a list of lines), the table, `notes`, the kernels compiled in the process."""
    m = doc["meta"]
    cc = m.get("compute_capability")  # absent in a host-only run
    device = (f"{m['device']} (sm_{cc[0]}{cc[1]}, {m['multiprocessors']} SMs), driver {m['driver']}"
              if cc else m["device"])
    lines = [f"# {title}, {m['date']}", "",
             f"Device: {device}, commit {m.get('commit', 'unknown')}. Versions: "
             f"{', '.join(f'{k} {v}' for k, v in m['versions'].items())}.",
             ""]
    lines += list(description) + [""] + list(table) + [""] + list(notes)
    lines += [f"Kernels numba compiled in the benchmark process: {doc['compiled']}.", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


# ---- the start and end every kernel-family benchmark shares ------------------------------------

def start_benchmark(title: str, log2n: int = 28, **sizes):
    """(arguments, Harness) of a kernel-family benchmark: --out (default benchmarks/results),
    --log2n, --reps and one int option per keyword of `sizes` (name -> default); host fallback
    is an error, so a primitive that left the GPU fails the run instead of timing NumPy."""
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "results"))
    p.add_argument("--log2n", type=int, default=log2n)
    p.add_argument("--reps", type=int, default=20)
    for name, default in sizes.items():
        p.add_argument(f"--{name}", type=int, default=default)
    args = p.parse_args()
    from arrayx._registry import set_host_fallback
    set_host_fallback("error")
    return args, Harness(title)


def finish_benchmark(H, out_dir: str, stem: str, fields: dict, heading: str, table: list,
                     notes=()) -> dict:
    """Record the kernels numba compiled in this process, write <out_dir>/<stem>-<date>.json
    (`fields` and that count) and print `heading`, `table` and `notes`; returns the json doc."""
    from arrayx.cuda.engine import compiler
    compiled = compiler.compile_count()
    H.record("kernels compiled in this process", "arrayx", compiled, "kernels")
    os.makedirs(out_dir, exist_ok=True)
    doc = H.write(os.path.join(out_dir, f"{stem}-{DATE}.json"), {**fields, "compiled": compiled})
    print(f"\n==== {heading} ({doc['meta']['device']}, {DATE})")
    for line in list(table) + list(notes):
        print(line)
    print(f"kernels compiled in this process: {compiled}")
    return doc
