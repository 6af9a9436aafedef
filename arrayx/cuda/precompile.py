"""Fill the kernel disk cache ahead of time, and build the kernels shipped in the package.

    python -m arrayx warmup [--device cuda:N | --cc X.Y] [--jobs N] [--only NAME,...]
    python -m arrayx.cuda.precompile ...          (the same command)
    python -m arrayx.cuda.precompile --ship --cc 9.0,8.0
    python -m arrayx.cuda.precompile --ship-libraries [--device cuda:N]   (on a GPU)

Compiles the kernels each family lists in its ``precompile_specs()``: every elementwise kernel
the backend can launch for arrays under 2**31 elements (each function for every dtype it allows,
array or scalar operands, contiguous vectors, strided layouts and transposing tiles; casts,
fill, where, clip and the creation kernels), the sort and set kernels, the commonest
reductions, the common gather/scatter kernels, repeat's, the scans, flag scans, nonzero/mask
kernels, searchsorted, the row functions' (softmax, logsumexp, the norms) and linalg's own
(triangle copies, the LU determinant, integer matmul, pinv's scaling). Keys are the
run-time keys (``compiler.cache_key``), so a GPU machine given this cache folder compiles
nothing for these (64-bit strided variants, for larger arrays, and rarer reductions compile on
first use). Kernels already in the cache or shipped in the package are skipped; the rest are
compiled in parallel processes, the longest sources first so the slow ones do not end last.
On a GPU (no --cc) the CUB algorithms of sort, argsort, unique_values and isin are built into
the same folder afterwards (``warm_libraries``).

``--ship`` writes ``arrayx/cuda/prebuilt/sm_<cc>.zip`` instead: cubins of ``shipped_specs(cc)``
(for sm_90 every spec but the strided and pitched-row elementwise ones; for sm_80 those the
commonest first calls launch), which ``compiler.read_shipped`` finds at run time.
A change to any of their sources stales the archives (tests/test_warmup.py says so): rerun it.
``--ship-libraries`` writes ``arrayx/cuda/prebuilt/cccl-sm_<cc>.zip`` for the device's compute
capability: the CUB builds of ``warm_libraries`` (``libraries.cub`` loads them when the disk cache
has none). CUB builds only for the GPU it runs on, so each archive is made on a GPU of its kind;
the builds hold the installed cuda-cccl's version in their names: rerun it when the pin moves.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import re
import sys
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor, as_completed

from .engine import compiler
from .kernels import elementwise, gather_scatter, manipulation, mask, reduce, scan, search
from .kernels.sort import sets
from .kernels import random
from .kernels import rows
from .kernels.linalg import kernels as linalg_kernels

# every family whose kernels are compiled ahead of time (sets lists sort's kernels too)
FAMILIES = (elementwise, sets, reduce, gather_scatter, manipulation, scan, mask, search,
            random, rows)

_FLOAT_INT = "(float32|float64|int64)"
_FOUR = "(float32|float64|int64|bool)"
# The kernels shipped for every compute capability of SHIPPED_CCS (full matches of spec names):
# what a first x + x, x * 2, comparison, exp/log/sqrt, sum/mean/max/argmax, cumulative_sum,
# x[x > 0.5], sort and fft launch for float32, float64, int64 and bool contiguous arrays, plus
# the fills and casts among those dtypes that creation and promotion launch.
SHIPPED_PATTERNS = (
    rf"ew_(add|subtract|multiply|divide|greater|greater_equal|less|less_equal|equal|not_equal)"
    rf"_s?{_FLOAT_INT}_s?{_FLOAT_INT}_to_\w+_vec\d+x1",
    rf"ew_(exp|log|sqrt|abs|negative)_{_FLOAT_INT}_to_\w+_vec\d+x1",
    rf"ew_(cast|fill)_s?{_FOUR}_to_{_FOUR}_vec\d+x1",
    r"ew_cast_(float32|float64)_to_(complex64|complex128)_vec\d+x1",  # fft of real input
    rf"ew_radix_word_{_FOUR}_\w+_vec\d+x1",
    r"ew_(nan_canon|sort_row|sort_pos)_\w+_vec\d+x1",
    rf"red_(sum|mean|max|min|argmax|argmin|any|all)_{_FOUR}_to_\w+_contig_\w+",
    rf"scan_sum_{_FOUR}_to_\w+_vv32r_\w+",
    r"scan_flag_bool_to_int32_vv32r_\w+",
    r"scan_select_(uint8|uint32|uint64)_bool_to_int32_\w+",
    r"sort_block_\w+",  # short rows: the first sort of a small array
    r"rows_\w+",  # the row functions' (eager and arrayx.compile's) at every row length
)
SHIPPED_CCS = ((9, 0), (8, 0))
# Compute capabilities (the GPUs arrayx is tuned on) for which every precompile spec is shipped
# but the strided and pitched-row elementwise kernels (each cheap to compile, and 70% of the
# specs): every dtype's contiguous and tiled elementwise kernels, reductions, scans (the slowest
# to compile, 5-20 s each), gathers, sorts and sets, row functions and linalg's own. The strided
# fills are shipped all the same: a diagonal or a strided slice filled (eye, linalg.inv, x[::2] =
# 0) is a common first call, and they are few.
FULL_SHIP_CCS = ((9, 0),)
_NOT_SHIPPED = re.compile(r"ew_(?!fill_)\w+_(strided\d+d\d+|rows\d+x\d+d\d+)")


def specs(only=None):
    out = [spec for family in FAMILIES for spec in family.precompile_specs()]
    out += linalg_kernels.specs()  # linalg's own: triangle copies, LU determinant, integer matmul
    if only:
        out = [s for s in out if any(s.name.startswith((f"ew_{n}_", f"red_{n}_", f"{n}_"))
                                     for n in only)]
    return out


def shipped_specs(cc: tuple):
    """The precompile specs whose kernels the package ships for `cc`: all but the strided and
    pitched-row elementwise ones (fills excepted) for FULL_SHIP_CCS, SHIPPED_PATTERNS' for the other
    SHIPPED_CCS, none for the rest."""
    cc = tuple(cc)
    if cc in FULL_SHIP_CCS:
        return [s for s in specs() if not _NOT_SHIPPED.fullmatch(s.name)]
    if cc not in SHIPPED_CCS:
        return []
    patterns = [re.compile(p) for p in SHIPPED_PATTERNS]
    return [s for s in specs() if any(p.fullmatch(s.name) for p in patterns)]


def _compile(spec, cc):
    """Compile one spec into the disk cache: (name, "compiled" or "failed", seconds, error)."""
    start = time.perf_counter()
    try:
        compiler.build_binary(spec, cc)
    except Exception as e:  # one broken kernel must not stop the others: it is reported
        message = f"{type(e).__name__}: {e}".strip().splitlines()[0]
        return spec.name, "failed", time.perf_counter() - start, message
    return spec.name, "compiled", time.perf_counter() - start, ""


class _LineProgress:
    """A progress line on stderr when tqdm is not installed: rewritten in place on a terminal,
    a line each tenth of the way otherwise."""

    def __init__(self, total: int, desc: str):
        self.total, self.done, self.desc, self.postfix = total, 0, desc, ""
        self.tty = sys.stderr.isatty()
        self.start = time.perf_counter()
        self.shown = 0  # the tenth last shown

    def update(self, n: int = 1):
        self.done += n
        tenth = 10 * self.done // max(1, self.total)
        if self.tty or tenth != self.shown or self.done == self.total:
            self.shown = tenth
            elapsed = time.perf_counter() - self.start
            line = (f"{self.desc}: {self.done}/{self.total} kernels, {elapsed:.0f} s"
                    f"{', ' + self.postfix if self.postfix else ''}")
            sys.stderr.write(("\r" + line) if self.tty else line + "\n")
            sys.stderr.flush()

    def set_postfix_str(self, text: str):
        self.postfix = text

    def close(self):
        if self.tty:
            sys.stderr.write("\n")


def _progress(total: int, desc: str, quiet: bool):
    if quiet or total == 0:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return _LineProgress(total, desc)
    return tqdm(total=total, desc=desc, unit="kernel", smoothing=0.05, file=sys.stderr)


def _start_worker():
    """numba's import and first-compile set-up before the first task, so that no kernel's time
    includes them."""
    first = compiler.KernelSpec("warm", "def warm(p):\n    p[0] = 1.0\n", "warm", ("float32*",))
    compiler.compile_spec(first, (7, 5), debug=False)


def _pool(jobs: int):
    # spawned, not forked: the parent may have opened the CUDA driver to read the device's
    # compute capability, and a forked child must not inherit that
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker)


def warm(cc: tuple, chosen, jobs: int = 1, quiet: bool = False) -> dict:
    """Compile each of the `chosen` specs for `cc` that is neither in the disk cache nor
    shipped. Returns counts, seconds, failures and the slowest compiles."""
    start = time.perf_counter()
    todo, cached, shipped = [], 0, 0
    for spec in chosen:
        if compiler.is_cached(spec, cc):
            cached += 1
        elif not compiler.DEBUG and compiler.is_shipped(spec, cc):
            shipped += 1
        else:
            todo.append(spec)
    todo.sort(key=lambda s: -len(s.source))
    results = []
    bar = _progress(len(todo), f"compiling for sm_{cc[0]}{cc[1]}", quiet)
    if len(todo) == 1 or jobs <= 1:
        for spec in todo:
            results.append(_compile(spec, cc))
            if bar is not None:
                bar.update(1)
    elif todo:
        with _pool(min(jobs, len(todo))) as pool:
            futures = [pool.submit(_compile, spec, cc) for spec in todo]
            failed = 0
            for future in as_completed(futures):
                results.append(future.result())
                if bar is not None:
                    if results[-1][1] == "failed":
                        failed += 1
                        bar.set_postfix_str(f"{failed} failed")
                    bar.update(1)
    if bar is not None:
        bar.close()
    compiled = [r for r in results if r[1] == "compiled"]
    return {"cc": cc, "kernels": cached + shipped + len(todo), "compiled": len(compiled),
            "cached": cached, "shipped": shipped,
            "failed": [(name, error) for name, status, _, error in results if status == "failed"],
            "seconds": time.perf_counter() - start,
            "slowest": sorted(((seconds, name) for name, _, seconds, _ in compiled),
                              reverse=True)[:5]}


# the dtypes whose CUB algorithms (sort's radix sorts of their key words, with int32 or int64
# positions for argsort, and unique's and isin's) a warm-up on a GPU builds
LIBRARY_DTYPES = ("float32", "float64", "int32", "int64")


def warm_libraries(device: str) -> dict:
    """Build, or load from the cache folder, the CUB algorithms of sort, argsort, unique_values
    and isin for LIBRARY_DTYPES on a device ('cuda:N') by calling them on 4096 elements (one row
    longer than the block sort takes, so that they reach CUB): CUB compiles through NVRTC for
    the device, so only a run on the GPU can fill these (5-7 s each). Each result is copied to
    the host, so every call has finished."""
    import arrayx as xp
    from .libraries import cub
    folder = compiler.cache_dir()

    def builds():
        try:
            return sum(name.startswith("cccl-") for name in os.listdir(folder))
        except (OSError, TypeError):
            return 0

    start, before, seen = time.perf_counter(), builds(), len(cub.BUILD_SECONDS)
    calls = (("sort", xp.sort), ("sort descending", lambda a: xp.sort(a, descending=True)),
             ("argsort", xp.argsort), ("unique_values", xp.unique_values),
             ("isin", lambda a: xp.isin(a, a)))
    failed = []
    for name in LIBRARY_DTYPES:
        x = xp.asarray([i % 7 for i in range(4096)], dtype=getattr(xp, name), device=device)
        for label, call in calls:
            try:
                call(x).to_device("cpu")
            except Exception as e:  # reported with the kernels' failures
                failed.append((f"{label} {name}", f"{type(e).__name__}: {e}".splitlines()[0]))
    return {"algorithms": len(cub.BUILD_SECONDS) - seen, "built": builds() - before,
            "failed": failed, "seconds": time.perf_counter() - start}


def build_shipped_libraries(device: str) -> tuple:
    """Write ``cccl-sm_<cc>.zip`` into ``compiler.SHIPPED_DIR``: the CUB algorithms
    warm_libraries() builds or loads on `device` ('cuda:N'), serialised again (so the archive
    is the same whether they came from the cache or a build). Returns (path, builds, bytes)."""
    from .engine import runtime
    from .libraries import cub
    result = warm_libraries(device)
    if result["failed"]:
        raise RuntimeError(f"CUB builds failed on {device}: {result['failed'][:3]}")
    dev = runtime.get_device(int(device.split(":")[1]))
    cc = tuple(dev.compute_capability)
    compute = cub.compute()
    blobs = {cub.blob_name(cc, key[1:]): compute.serialize(algo)
             for key, algo in cub._algorithms.items() if key[0] == dev.index}
    path = cub.shipped_archive_path(cc)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with zipfile.ZipFile(tmp, "w") as archive:
        for name in sorted(blobs):
            archive.writestr(zipfile.ZipInfo(name, _ZIP_TIME), blobs[name], zipfile.ZIP_DEFLATED, 9)
    os.replace(tmp, path)
    return path, len(blobs), os.path.getsize(path)


def cache_size(folder: str | None) -> tuple:
    """(kernels, bytes) in a kernel cache folder: complete entries (their .json), and every
    file's size (CUB builds included)."""
    kernels = total = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_file():
                    total += entry.stat().st_size
                    kernels += entry.name.endswith(".json")
    except (OSError, TypeError):
        pass
    return kernels, total


def summary_lines(result: dict, target: str, jobs: int, libraries: dict | None = None) -> list:
    """What warm() (and warm_libraries(), when it ran) did, for people."""
    cc = result["cc"]
    folder = compiler.cache_dir()
    kernels, nbytes = cache_size(folder)
    lines = [f"warmup for compute capability {cc[0]}.{cc[1]} ({target}): {result['kernels']} "
             f"kernels in {result['seconds']:.1f} s with {jobs} job(s)",
             f"  compiled        {result['compiled']}",
             f"  already cached  {result['cached']}",
             f"  shipped         {result['shipped']} (in the package: nothing to compile)",
             f"  failed          {len(result['failed'])}"]
    lines += [f"    {name}: {error}" for name, error in result["failed"][:10]]
    if len(result["failed"]) > 10:
        lines.append(f"    ... and {len(result['failed']) - 10} more")
    if result["slowest"]:
        lines.append("  slowest: " + ", ".join(f"{name} {seconds:.1f} s"
                                               for seconds, name in result["slowest"]))
    if libraries is not None:
        lines.append(f"  CUB algorithms  {libraries['algorithms']} ({libraries['built']} built, "
                     f"the rest already cached) in {libraries['seconds']:.1f} s, "
                     f"{len(libraries['failed'])} failed")
        lines += [f"    {name}: {error}" for name, error in libraries["failed"]]
    lines.append(f"cache folder {folder}: {kernels} kernels, {nbytes / 2**20:.1f} MiB")
    return lines


_ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed member timestamps: the same kernels, the same bytes


def write_shipped_archive(path: str, kernels) -> int:
    """Write a shipped-kernel archive: `kernels` are (shipped key, name, entry, image) of cubins,
    grouped into LZMA-compressed bundles (``compiler.shipped_bundle``), each led by the JSON
    line of its own index (sorted members and fixed timestamps: the same kernels give the same
    bytes). Returns its size."""
    bundles, indexes, sizes = {}, {}, {}
    for key, name, entry, image in sorted(kernels):
        bundle = compiler.shipped_bundle(name)
        bundles.setdefault(bundle, []).append(image)
        offset = sizes.get(bundle, 0)
        sizes[bundle] = offset + len(image)
        indexes.setdefault(bundle, {})[key] = [offset, len(image), entry]
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with zipfile.ZipFile(tmp, "w") as archive:
        for bundle in sorted(bundles):
            head = json.dumps(indexes[bundle], sort_keys=True, separators=(",", ":")).encode()
            archive.writestr(zipfile.ZipInfo(bundle, _ZIP_TIME),
                             head + b"\n" + b"".join(bundles[bundle]), zipfile.ZIP_LZMA)
    os.replace(tmp, path)
    return os.path.getsize(path)


def build_shipped(ccs, jobs: int = 1, quiet: bool = False) -> list:
    """Write ``sm_<cc>.zip`` into ``compiler.SHIPPED_DIR`` for each cc: the cubins of
    shipped_specs(cc), compiled through the disk cache (write_shipped_archive). Returns
    (path, kernels, bytes) per archive."""
    written = []
    for cc in ccs:
        chosen = shipped_specs(cc)
        result = warm(cc, chosen, jobs, quiet)
        if result["failed"]:
            raise RuntimeError(f"shipped kernels failed to compile for sm_{cc[0]}{cc[1]}: "
                               f"{result['failed'][:3]}")
        kernels = []
        for spec in chosen:
            _, (image, fmt, entry) = compiler.build_binary(spec, cc, False)
            if fmt != "cubin":
                raise RuntimeError("shipping kernels needs nvJitLink (cuda-bindings' nvjitlink): "
                                   f"{spec.name} was built as {fmt}")
            kernels.append((compiler.shipped_key(spec, cc), spec.name, entry, image))
        path = compiler.shipped_archive_path(cc)
        nbytes = write_shipped_archive(path, kernels)
        compiler._shipped.pop(cc, None)
        compiler._bundles.pop(cc, None)
        written.append((path, len(kernels), nbytes))
    return written


def _parse_ccs(text: str) -> list:
    """'9.0' or '9.0,8.0' -> [(9, 0), (8, 0)]; ValueError for anything else."""
    ccs = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", part)
        if not m:
            raise ValueError(f"a compute capability is MAJOR.MINOR, e.g. 9.0, not {part!r}")
        ccs.append((int(m.group(1)), int(m.group(2))))
    return ccs


def _device_cc(device: str | None) -> tuple:
    """(index, cc, description) of a CUDA device ('cuda:N'; None: the first, if a GPU is usable).
    SystemExit with the reason when there is none."""
    from .. import _devices
    if device is not None and not re.fullmatch(r"cuda:\d+", device):
        raise SystemExit(f"--device takes cuda:N (e.g. cuda:0), not {device!r}")
    index = 0 if device is None else int(device.split(":")[1])
    reason = _devices.cuda_unavailable_reason()
    count = _devices.cuda_device_count()
    if reason or index >= count:
        why = reason or f"{count} CUDA device(s) here"
        raise SystemExit(f"no usable GPU for {device or 'cuda:0'} ({why}): give the compute "
                         f"capability to compile for with --cc, e.g. --cc 9.0 for an H100/H200")
    from .engine import runtime
    dev = runtime.get_device(index)
    return index, tuple(dev.compute_capability), f"cuda:{index}, {dev.name}"


def build_parser(prog: str = "python -m arrayx warmup") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Compile arrayx's common CUDA kernels into the kernel disk cache ahead of "
                    "time (about 10000 kernels: every first call of those then loads instead of "
                    "compiling), for the local GPU or, with --cc, for any compute capability "
                    "without a GPU. The cache folder is ARRAYX_KERNEL_CACHE (default "
                    "~/.cache/arrayx/kernels); kernels already there, and those shipped in the "
                    "package, are skipped, so a second run compiles only what is new.",
        epilog="To fill a cache for another machine, run with --cc here and copy the folder "
               "(or point ARRAYX_KERNEL_CACHE at it) there.")
    p.add_argument("--device", default=None, metavar="cuda:N",
                   help="the GPU whose compute capability to compile for (default: cuda:0; "
                        "not needed with --cc)")
    p.add_argument("--cc", default=None, metavar="MAJOR.MINOR",
                   help="compile for this compute capability instead of the device's, e.g. 9.0 "
                        "for H100/H200, 8.0 for A100 (needs numba-cuda, not a GPU); with "
                        "--ship, a comma-separated list (default there: 9.0,8.0)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="compiler processes run in parallel (default: the CPU count, "
                        "%(default)s here)")
    p.add_argument("--only", default="", metavar="NAME,...",
                   help="comma-separated operation names (e.g. add,sum,scan): compile only "
                        "their kernels (elementwise ew_NAME_*, reductions red_NAME_*, others "
                        "NAME_*; default: all)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--kernels-only", action="store_true",
                   help="on a GPU, skip building the CUB algorithms of sort, argsort, unique and "
                        "isin (a minute or so; without a GPU, with --cc, they are skipped anyway)")
    p.add_argument("--ship", action="store_true",
                   help="for packaging arrayx: rewrite arrayx/cuda/prebuilt/sm_<cc>.zip, the "
                        "kernels shipped in the package (for sm_90 every kernel but the strided "
                        "and pitched-row elementwise ones, for sm_80 the commonest first "
                        "calls'), instead of filling the cache")
    p.add_argument("--ship-libraries", action="store_true",
                   help="for packaging arrayx, on a GPU: rewrite arrayx/cuda/prebuilt/"
                        "cccl-sm_<cc>.zip, the CUB builds (sort, argsort, unique, isin) shipped "
                        "for this GPU's compute capability")
    return p


def main(argv=None, prog: str = "python -m arrayx.cuda.precompile") -> int:
    parser = build_parser(prog)
    a = parser.parse_args(argv)
    if a.jobs < 1:
        parser.error("--jobs must be at least 1")
    try:
        ccs = _parse_ccs(a.cc) if a.cc is not None else None
    except ValueError as e:
        parser.error(f"--cc: {e}")
    if not a.ship and ccs is not None and len(ccs) != 1:
        parser.error("--cc takes one compute capability here (a list only with --ship)")
    only = [n for n in a.only.split(",") if n]
    chosen = specs(only)
    if only and not chosen:
        parser.error(f"--only {a.only}: no kernel of these names")
    # the arguments first: their errors need no GPU package
    if importlib.util.find_spec("numba_cuda") is None:
        parser.error("compiling kernels needs numba-cuda: pip install 'arrayx[cuda]'")
    if a.ship:
        for path, kernels, nbytes in build_shipped(ccs or SHIPPED_CCS, a.jobs, a.quiet):
            print(f"{path}: {kernels} kernels, {nbytes / 2**20:.2f} MiB")
        return 0
    if a.ship_libraries:
        if ccs is not None:
            parser.error("--ship-libraries builds for the GPU it runs on: give --device, not --cc")
        device = _device_cc(a.device)[0]
        path, builds, nbytes = build_shipped_libraries(f"cuda:{device}")
        print(f"{path}: {builds} CUB builds, {nbytes / 2**20:.2f} MiB")
        return 0
    if compiler.cache_dir() is None:
        parser.error("the kernel disk cache is off (ARRAYX_KERNEL_CACHE=off): nothing to fill")
    device = None
    if ccs is not None:
        cc, target = ccs[0], "--cc, no device needed"
    else:
        device, cc, target = _device_cc(a.device)
    result = warm(cc, chosen, a.jobs, a.quiet)
    libraries = None
    if device is not None and not a.kernels_only and not only:
        libraries = warm_libraries(f"cuda:{device}")
    print("\n".join(summary_lines(result, target, a.jobs, libraries)))
    return 1 if result["failed"] or (libraries and libraries["failed"]) else 0


if __name__ == "__main__":
    sys.exit(main())
