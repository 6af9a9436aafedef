"""Where a kernel's compile time goes, without a GPU: numba's front end (typing and lowering to
NVVM IR), NVVM (IR -> PTX) and nvJitLink (PTX -> cubin), per precompile spec, beside the sizes
of its generated source, PTX and cubin.

    python benchmarks/probes/compile_phases.py [--cc 9.0] [--per-group 3] [--match REGEX]
        [--json FILE] [--compare EARLIER_JSON]

Picks up to --per-group specs of each group of ``precompile.specs()`` (a group: the kernel name
up to its first dtype word, e.g. ``scan_sum`` or ``ew_add``), spread over the group, among the
specs whose name matches --match (default: all); compiles each in this one process (numba
warmed up first, so the first spec does not pay numba's start-up), and prints the rows slowest
first and the totals per group. Nothing is written to the kernel cache.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

_DTYPE_WORD = re.compile(r"_s?(bool|u?int(8|16|32|64)|float(16|32|64)|complex(64|128))(_|$)")


def group_of(name: str) -> str:
    """A spec name up to its first dtype word: the kernel kind, over every dtype."""
    m = _DTYPE_WORD.search(name)
    return name[:m.start()] if m else name


_PROCESS_NAMES = re.compile(r"_ZN\w+|_cudapy_smem_\d+")


def ptx_digest(ptx: str) -> str:
    """The PTX's sha256 with what differs between two compiles of one source taken out."""
    body = "\n".join(line for line in ptx.splitlines() if not line.lstrip().startswith("//"))
    return hashlib.sha256(_PROCESS_NAMES.sub("N", body).encode()).hexdigest()[:16]


def pick(specs, per_group: int, match: str | None):
    if match:
        pattern = re.compile(match)
        specs = [s for s in specs if pattern.search(s.name)]
    groups: dict = {}
    for s in specs:
        groups.setdefault(group_of(s.name), []).append(s)
    chosen = []
    for members in groups.values():
        step = max(1, len(members) // per_group)
        chosen += members[::step][:per_group]
    return chosen


def timed_compile(spec, cc):
    """(front-end s, NVVM s, nvJitLink s, PTX, cubin bytes) of one spec."""
    from numba.cuda.cudadrv import nvvm

    from arrayx.cuda.engine import compiler
    spent = {"nvvm": 0.0}
    original = nvvm.compile_ir

    def timed_nvvm(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent["nvvm"] += time.perf_counter() - t0

    nvvm.compile_ir = timed_nvvm
    try:
        t0 = time.perf_counter()
        ptx = compiler.compile_spec(spec, cc, debug=False)
        total = time.perf_counter() - t0
    finally:
        nvvm.compile_ir = original
    t0 = time.perf_counter()
    cubin = compiler.link_cubin(ptx, cc)
    link = time.perf_counter() - t0
    return total - spent["nvvm"], spent["nvvm"], link, ptx, len(cubin or b"")


def _line(r) -> str:
    return (f"{r['front_s'] + r['nvvm_s'] + r['link_s']:7.2f} s  front {r['front_s']:6.2f}  "
            f"nvvm {r['nvvm_s']:6.2f}  link {r['link_s']:6.2f}  {r['name']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", default="9.0")
    ap.add_argument("--per-group", type=int, default=3)
    ap.add_argument("--match", default=None, help="only specs whose name this regex finds")
    ap.add_argument("--json", default=None, help="write the rows to this file")
    ap.add_argument("--compare", default=None,
                    help="an earlier run's --json: time ratios and PTX identity by spec name")
    a = ap.parse_args()
    cc = tuple(int(x) for x in a.cc.split("."))

    from arrayx.cuda import precompile
    from arrayx.cuda.engine import compiler
    warm = compiler.KernelSpec("warm", "def warm(p):\n    p[0] = 1.0\n", "warm", ("float32*",))
    compiler.link_cubin(compiler.compile_spec(warm, cc, debug=False), cc)

    rows = []
    for spec in pick(precompile.specs(), a.per_group, a.match):
        front, nvvm_s, link, ptx, cubin_bytes = timed_compile(spec, cc)
        rows.append({"name": spec.name, "group": group_of(spec.name),
                     "source_lines": spec.source.count("\n"), "front_s": front,
                     "nvvm_s": nvvm_s, "link_s": link, "ptx_bytes": len(ptx),
                     "cubin_bytes": cubin_bytes, "ptx_digest": ptx_digest(ptx)})
        print(_line(rows[-1]) + f"  src {rows[-1]['source_lines']:4d} l  ptx "
              f"{len(ptx) // 1024:5d} KiB", flush=True)
    rows.sort(key=lambda r: -(r["front_s"] + r["nvvm_s"] + r["link_s"]))
    print("\nslowest first:")
    for r in rows[:25]:
        print(_line(r))
    groups: dict = {}
    for r in rows:
        g = groups.setdefault(r["group"], [0, 0.0, 0.0, 0.0])
        g[0] += 1
        g[1] += r["front_s"]
        g[2] += r["nvvm_s"]
        g[3] += r["link_s"]
    print("\nmean per spec by group (n, front, nvvm, link, total):")
    for name, (n, f, v, k) in sorted(groups.items(), key=lambda kv: -sum(kv[1][1:]) / kv[1][0]):
        total = (f + v + k) / n
        print(f"  {name:40s} {n:3d}  {f / n:6.2f} {v / n:6.2f} {k / n:6.2f}  {total:6.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    if a.compare:
        compare(rows, a.compare)


def _total(r) -> float:
    return r["front_s"] + r["nvvm_s"] + r["link_s"]


def compare(rows, earlier_path: str):
    """Spec by spec against an earlier run: new / old compile time, and the PTX's identity."""
    with open(earlier_path) as f:
        earlier = {r["name"]: r for r in json.load(f)}
    both = [(earlier[r["name"]], r) for r in rows if r["name"] in earlier]
    print(f"\nagainst {earlier_path} ({len(both)} specs in both; new / old s, PTX):")
    for old, new in both:
        same = "same PTX" if old.get("ptx_digest") == new["ptx_digest"] else "PTX DIFFERS"
        print(f"  {_total(old):7.2f} -> {_total(new):7.2f} s  {_total(new) / _total(old):5.2f}  "
              f"{same:11s}  {new['name']}")
    if both:
        old_s, new_s = sum(_total(o) for o, _ in both), sum(_total(n) for _, n in both)
        differ = sum(o.get("ptx_digest") != n["ptx_digest"] for o, n in both)
        print(f"  in all {old_s:.1f} -> {new_s:.1f} s ({new_s / old_s:.2f}); "
              f"{differ} of {len(both)} PTX differ")


if __name__ == "__main__":
    main()
